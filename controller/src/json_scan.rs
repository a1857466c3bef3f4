//! A cursor over JSON text for the fast paths that read it without
//! `serde_json` (the shared metrics lists, the cached HPAs): strict by
//! design, it gives up (`None`) on what it does not read, so each caller
//! falls back to `serde_json` and never reads a different meaning.
//!
//! What it gives up on: a string with an escape (`\`) or an unescaped
//! control character (which `serde_json` rejects), a malformed token, and
//! nesting deeper than [`MAX_DEPTH`]. Skipped values are still checked to
//! be JSON, as `serde_json` checks what it skips. Strings are scanned
//! sixteen bytes at a time; `serde_json`'s cost is per token (a key's
//! visitor, an `Option`'s), about 20 instructions per byte.

use wide::u8x16;

/// Nesting beyond which the scanner gives up (`serde_json` fails at 128).
pub const MAX_DEPTH: u32 = 64;

/// The bytes of `chunk` that are a quote, a backslash or a control
/// character (below 0x20), one bit each, the first byte the lowest bit.
/// Sixteen bytes in a handful of vector instructions: most strings of a
/// list (keys, names, quantities, times) end within one chunk.
fn special_bytes(chunk: [u8; 16]) -> u32 {
    let v = u8x16::new(chunk);
    let quote = v.simd_eq(u8x16::splat(b'"'));
    let backslash = v.simd_eq(u8x16::splat(b'\\'));
    let control = v.simd_lt(u8x16::splat(0x20));
    (quote | backslash | control).to_bitmask()
}

/// A cursor over the body's bytes.
pub struct Scan<'a> {
    text: &'a str,
    at: usize,
    depth: u32,
}

impl<'a> Scan<'a> {
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            depth: 0,
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips JSON whitespace and returns the next byte.
    pub fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        // Every JSON token starts above the space, all whitespace is at
        // or below it: compact bodies take this one comparison.
        match bytes.get(self.at) {
            Some(&b) if b > b' ' => return Some(b),
            _ => {}
        }
        while let Some(&b) = bytes.get(self.at) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.at += 1;
            } else {
                return Some(b);
            }
        }
        None
    }

    /// Consumes `b` (after whitespace).
    pub fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// `null` (`None`), or what `read` reads.
    pub fn null_or<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.peek()? == b'n' {
            self.literal("null")?;
            Some(None)
        } else {
            read(self).map(Some)
        }
    }

    /// An object: `member` reads each member's value, given its key.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        self.enter()?;
        if self.peek()? == b'}' {
            self.at += 1;
            self.depth -= 1;
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            member(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    self.depth -= 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array: `element` reads each element.
    pub fn array(&mut self, element: &mut impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        self.enter()?;
        if self.peek()? == b']' {
            self.at += 1;
            self.depth -= 1;
            return Some(());
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    self.depth -= 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// A string without escapes or control characters: its content.
    #[inline]
    pub fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let bytes = self.bytes();
        // Sixteen bytes at a time, jumping to the first special byte of a
        // chunk; the last few bytes of the body one by one.
        let mut end = start;
        loop {
            match bytes
                .get(end..end + 16)
                .and_then(|c| <[u8; 16]>::try_from(c).ok())
            {
                Some(chunk) => {
                    let hits = special_bytes(chunk);
                    if hits == 0 {
                        end += 16;
                        continue;
                    }
                    end += hits.trailing_zeros() as usize;
                }
                None => {
                    while bytes
                        .get(end)
                        .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
                    {
                        end += 1;
                    }
                }
            }
            break;
        }
        if *bytes.get(end)? != b'"' {
            return None;
        }
        self.at = end + 1;
        // Both ends are ASCII quotes: char boundaries.
        self.text.get(start..end)
    }

    /// An integer that fits an `i64` (no fraction, no exponent). Not
    /// `-0`: `serde_json` reads it as a float, which no integer field takes.
    pub fn integer(&mut self) -> Option<i64> {
        let text = self.number()?;
        if text.contains(['.', 'e', 'E']) || text == "-0" {
            return None;
        }
        text.parse().ok()
    }

    /// A JSON number: its text.
    pub fn number(&mut self) -> Option<&'a str> {
        self.peek()?;
        let bytes = self.bytes();
        let start = self.at;
        let mut at = start;
        let digits = |at: &mut usize| {
            let from = *at;
            while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at > from
        };
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        match bytes.get(at)? {
            b'0' => at += 1,
            b'1'..=b'9' => {
                digits(&mut at);
            }
            _ => return None,
        }
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            digits(&mut at).then_some(())?;
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            digits(&mut at).then_some(())?;
        }
        self.at = at;
        self.text.get(start..at)
    }

    /// `true` or `false`.
    pub fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal("true").map(|()| true),
            b'f' => self.literal("false").map(|()| false),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes().get(self.at..end)? == word.as_bytes()).then(|| self.at = end)
    }

    /// An object or an array (at its opening bracket), skipped and
    /// checked as [`Self::value`] checks it, in one loop: the open brackets
    /// are bits of a word (set: an object), not frames of a recursion with
    /// a closure per member. Skipped values (labels, containers) are half
    /// of the scanner's instructions; the loop takes 4 % off them, the
    /// rest is their strings' scan.
    fn skip_nested(&mut self) -> Option<()> {
        // Bit `i`: the bracket open at level `i` is an object's.
        let mut objects: u64 = 0;
        let mut open: u32 = 0;
        let mut expect_value = true;
        loop {
            if expect_value {
                match self.peek()? {
                    b @ (b'{' | b'[') => {
                        self.at += 1;
                        if self.depth + open + 1 > MAX_DEPTH {
                            return None;
                        }
                        let object = b == b'{';
                        objects = (objects & !(1 << open)) | (u64::from(object) << open);
                        open += 1;
                        let close = if object { b'}' } else { b']' };
                        if self.peek()? == close {
                            self.at += 1;
                            open -= 1;
                            expect_value = false;
                        } else if object {
                            self.string()?;
                            self.eat(b':')?;
                        }
                    }
                    b'"' => {
                        self.string()?;
                        expect_value = false;
                    }
                    b't' => {
                        self.literal("true")?;
                        expect_value = false;
                    }
                    b'f' => {
                        self.literal("false")?;
                        expect_value = false;
                    }
                    b'n' => {
                        self.literal("null")?;
                        expect_value = false;
                    }
                    b'-' | b'0'..=b'9' => {
                        self.number()?;
                        expect_value = false;
                    }
                    _ => return None,
                }
            } else {
                if open == 0 {
                    return Some(());
                }
                let object = objects & (1 << (open - 1)) != 0;
                match self.peek()? {
                    b',' => {
                        self.at += 1;
                        if object {
                            self.string()?;
                            self.eat(b':')?;
                        }
                        expect_value = true;
                    }
                    b'}' if object => {
                        self.at += 1;
                        open -= 1;
                    }
                    b']' if !object => {
                        self.at += 1;
                        open -= 1;
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Any JSON value, checked as `serde_json` checks what it skips: its
    /// text.
    pub fn value(&mut self) -> Option<&'a str> {
        let start = match self.peek()? {
            b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => self.at,
            _ => return None,
        };
        match self.bytes().get(start)? {
            b'{' | b'[' => self.skip_nested()?,
            b'"' => {
                self.string()?;
            }
            b't' => self.literal("true")?,
            b'f' => self.literal("false")?,
            b'n' => self.literal("null")?,
            _ => {
                self.number()?;
            }
        }
        self.text.get(start..self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings of every length up to three chunks, and a special byte at
    /// every position of them: the cursor reads what `serde_json` reads,
    /// or gives up where an escape or a control character is.
    #[test]
    fn strings_read_as_serde_reads_them_at_every_length_and_position() {
        for len in 0..48 {
            let plain: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            let text = format!("\"{plain}\",1");
            let mut scan = Scan::new(&text);
            assert_eq!(scan.string(), Some(plain.as_str()), "{text}");
            assert_eq!(scan.peek(), Some(b','), "{text}");
            for at in 0..=len {
                for special in ["\\n", "\\\"", "\\u0041", "\n", "\u{1f}", "\u{e9}", "\u{7f}"] {
                    let text = format!("\"{}{special}{}\"", &plain[..at], &plain[at..]);
                    let read = Scan::new(&text).string().map(str::to_owned);
                    let by_serde = serde_json::from_str::<String>(&text).ok();
                    if special.starts_with('\\') || special.chars().all(|c| c < ' ') {
                        assert_eq!(read, None, "{text:?}");
                    } else {
                        assert_eq!(read, by_serde, "{text:?}");
                    }
                }
            }
        }
        // The body's end within a chunk: an unterminated string.
        for len in 0..40 {
            let text = format!("\"{}", "a".repeat(len));
            assert_eq!(Scan::new(&text).string(), None, "{text}");
        }
    }

    #[test]
    fn special_bytes_are_found_in_any_position() {
        for at in 0..16 {
            for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                // Special and plain bytes after the first hit.
                let mut chunk = *b"\x01!#]\x5d#\x01\x00\"\\ab\x1f\x20\x7f\xff";
                chunk[..at].copy_from_slice(&b"abcdefghijklmnop"[..at]);
                chunk[at] = special;
                let hits = special_bytes(chunk);
                assert_eq!(hits.trailing_zeros(), at as u32, "{chunk:?}");
            }
        }
        for plain in [
            *b"abcdefghijklmnop",
            *b"2026-11-30T16:02",
            *b"\x20\x7f\x80\xff!#[]\x21\x5b\x5d\xc3\xa9\xe2\x82\xac",
        ] {
            assert_eq!(special_bytes(plain), 0, "{plain:?}");
        }
    }
}
