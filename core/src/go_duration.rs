//! Go's duration syntax: a port of `time.ParseDuration` and
//! `time.Duration.String()` (Go's `src/time/format.go` and `time.go`).
//!
//! Kubernetes flags, the metrics API's `window`, scripts and scenario steps
//! all write durations this way (`15s`, `1m30s`, `-1.5h`, `300ms`), so every
//! part of the workspace parses and prints them here, with Go's results and
//! Go's error texts. Values are Go's: whole nanoseconds in an `i64`
//! (fractions are truncated, not rounded, as Go does). Callers add their own
//! policy (no negatives, `std::time::Duration`) and context.

use jiff::SignedDuration;

/// Why a duration does not parse; the message is Go's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoDurationError {
    /// Malformed or out of the `i64` nanosecond range.
    #[error("time: invalid duration {}", quote(.input))]
    Invalid {
        /// The text as given.
        input: String,
    },
    /// A number without a unit (`5`).
    #[error("time: missing unit in duration {}", quote(.input))]
    MissingUnit {
        /// The text as given.
        input: String,
    },
    /// A unit other than `ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`.
    #[error("time: unknown unit {} in duration {}", quote(.unit), quote(.input))]
    UnknownUnit {
        /// The unit found.
        unit: String,
        /// The text as given.
        input: String,
    },
}

/// Nanoseconds per unit (Go's `unitMap`).
fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

const LIMIT: u64 = 1 << 63;

/// Go's `leadingInt`: the leading `[0-9]*` of `s`, `None` on overflow.
fn leading_int(s: &str) -> Option<(u64, &str)> {
    let end = s
        .bytes()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    let mut x: u64 = 0;
    for c in s[..end].bytes() {
        if x > LIMIT / 10 {
            return None;
        }
        x = x * 10 + u64::from(c - b'0');
        if x > LIMIT {
            return None;
        }
    }
    Some((x, &s[end..]))
}

/// Go's `leadingFraction`: the leading `[0-9]*` of `s` as `x / scale`; on
/// overflow it stops accumulating precision instead of failing.
fn leading_fraction(s: &str) -> (u64, f64, &str) {
    let end = s
        .bytes()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    let (mut x, mut scale, mut overflow) = (0u64, 1f64, false);
    for c in s[..end].bytes() {
        if overflow {
            continue;
        }
        if x > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > LIMIT {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, &s[end..])
}

/// Parses a duration as Go's `time.ParseDuration` does: a possibly signed
/// sequence of decimal numbers, each with an optional fraction and a unit
/// (`300ms`, `-1.5h`, `2h45m`); `0` alone needs no unit.
pub fn parse(input: &str) -> Result<SignedDuration, GoDurationError> {
    let invalid = || GoDurationError::Invalid {
        input: input.to_owned(),
    };
    let mut s = input;
    let mut neg = false;
    if let Some(c) = s.bytes().next()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == "0" {
        return Ok(SignedDuration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut d: u64 = 0;
    while let Some(first) = s.bytes().next() {
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        let before = s.len();
        let (mut v, rest) = leading_int(s).ok_or_else(invalid)?;
        s = rest;
        let pre = before != s.len();
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let before = rest.len();
            (f, scale, s) = leading_fraction(rest);
            post = before != s.len();
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .bytes()
            .position(|c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(GoDurationError::MissingUnit {
                input: input.to_owned(),
            });
        }
        let (u, rest) = s.split_at(unit_len);
        s = rest;
        let unit = unit_nanos(u).ok_or_else(|| GoDurationError::UnknownUnit {
            unit: u.to_owned(),
            input: input.to_owned(),
        })?;
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            // As Go: float64 is exact enough for fractions of an hour, and
            // the conversion truncates.
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "Go's uint64(float64(f) * (float64(unit) / scale)); at most 3.6e12"
            )]
            let frac = (f as f64 * (unit as f64 / scale)) as u64;
            v += frac;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        // Go's uint64 addition wraps: two components of 2^63 ns each sum
        // to 0 and pass the check below, so Go parses
        // "9223372036854775808ns9223372036854775808ns" as 0. Reproduced.
        d = d.wrapping_add(v);
        if d > LIMIT {
            return Err(invalid());
        }
    }
    let nanos = if neg {
        // d <= 2^63: -d fits in i64.
        0i64.wrapping_sub_unsigned(d)
    } else {
        i64::try_from(d).map_err(|_| invalid())?
    };
    Ok(SignedDuration::from_nanos(nanos))
}

/// Prints a duration as Go's `Duration.String()` does: `0s`, `1.5µs`,
/// `300ms`, `1m30s`, `-2h0m0.5s`. Spans beyond Go's `i64` nanoseconds print
/// the same way, with more hours.
pub fn format(d: SignedDuration) -> String {
    format_nanos(d.is_negative(), d.as_nanos().unsigned_abs())
}

/// [`format`](fn@format) for an unsigned `std::time::Duration` (flags and settings).
pub fn format_std(d: std::time::Duration) -> String {
    format_nanos(false, d.as_nanos())
}

/// Serde of a `SignedDuration` as its Go text (`30s`, `1m30.5s`), for
/// `#[serde(with = "go_duration::serde_format")]`.
pub mod serde_format {
    use jiff::SignedDuration;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the duration as [`super::format`] prints it.
    pub fn serialize<S: Serializer>(d: &SignedDuration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::format(*d))
    }

    /// Reads it back with [`super::parse`], Go's error text on failure.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<SignedDuration, D::Error> {
        let text = String::deserialize(deserializer)?;
        super::parse(&text).map_err(serde::de::Error::custom)
    }
}

fn format_nanos(neg: bool, mut u: u128) -> String {
    const SECOND: u128 = 1_000_000_000;
    let mut out = String::new();
    if u < SECOND {
        let (prec, unit) = match u {
            0 => return "0s".to_owned(),
            1..1_000 => (0, "ns"),
            1_000..1_000_000 => (3, "µs"),
            _ => (6, "ms"),
        };
        let frac = fraction(&mut u, prec);
        out.push_str(&format!("{u}{frac}{unit}"));
    } else {
        let frac = fraction(&mut u, 9);
        let secs = u % 60;
        u /= 60;
        if u > 0 {
            let mins = u % 60;
            u /= 60;
            if u > 0 {
                out.push_str(&format!("{u}h"));
            }
            out.push_str(&format!("{mins}m"));
        }
        out.push_str(&format!("{secs}{frac}s"));
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// Go's `fmtFrac`: the last `prec` digits of `v` as `.ddd` without trailing
/// zeros (empty when they are all zero); `v` keeps the rest.
fn fraction(v: &mut u128, prec: u32) -> String {
    let digits = *v % 10u128.pow(prec);
    *v /= 10u128.pow(prec);
    if digits == 0 {
        return String::new();
    }
    let text = format!("{digits:0width$}", width = prec as usize);
    format!(".{}", text.trim_end_matches('0'))
}

/// Go's `time.quote`: double quotes, `"` and `\` escaped, bytes of non-ASCII
/// and control characters as `\xNN`.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if !(' '..'\u{80}').contains(&c) {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: i64 = 1;
    const US: i64 = 1_000;
    const MS: i64 = 1_000_000;
    const S: i64 = 1_000_000_000;
    const M: i64 = 60 * S;
    const H: i64 = 60 * M;

    /// Go's `parseDurationTests` (time_test.go).
    #[test]
    fn parses_gos_test_vectors() {
        let cases: &[(&str, i64)] = &[
            // simple
            ("0", 0),
            ("5s", 5 * S),
            ("30s", 30 * S),
            ("1478s", 1478 * S),
            // sign
            ("-5s", -5 * S),
            ("+5s", 5 * S),
            ("-0", 0),
            ("+0", 0),
            // decimal
            ("5.0s", 5 * S),
            ("5.6s", 5 * S + 600 * MS),
            ("5.s", 5 * S),
            (".5s", 500 * MS),
            ("1.0s", S),
            ("1.00s", S),
            ("1.004s", S + 4 * MS),
            ("1.0040s", S + 4 * MS),
            ("100.00100s", 100 * S + MS),
            // different units
            ("10ns", 10 * NS),
            ("11us", 11 * US),
            ("12µs", 12 * US),
            ("12μs", 12 * US),
            ("13ms", 13 * MS),
            ("14s", 14 * S),
            ("15m", 15 * M),
            ("16h", 16 * H),
            // composite durations
            ("3h30m", 3 * H + 30 * M),
            ("10.5s4m", 4 * M + 10 * S + 500 * MS),
            ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
            (
                "1h2m3s4ms5us6ns",
                H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS,
            ),
            ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
            // large value
            ("52763797000ns", 52_763_797_000 * NS),
            // more than 9 digits after the point (golang.org/issue/6617)
            ("0.3333333333333333333h", 20 * M),
            // 2^53 + 1, not exact in a float64
            ("9007199254740993ns", (1 << 53) + 1),
            // the largest duration
            ("9223372036854775807ns", i64::MAX),
            ("9223372036854775.807us", i64::MAX),
            ("9223372036s854ms775us807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("-9223372036854775.808us", i64::MIN),
            ("-9223372036s854ms775us808ns", i64::MIN),
            // largest negative round trip (golang.org/issue/48629)
            ("-2562047h47m16.854775808s", i64::MIN),
            // huge string (golang.org/issue/15011)
            ("0.100000000000000000000h", 6 * M),
            // the first overflow check of leadingFraction
            (
                "0.830103483285477580700h",
                49 * M + 48 * S + 372_539_827 * NS,
            ),
        ];
        for &(text, nanos) in cases {
            assert_eq!(
                parse(text),
                Ok(SignedDuration::from_nanos(nanos)),
                "{text:?}"
            );
        }
    }

    /// Go's uint64 sum wraps when two components of 2^63 ns meet (found by
    /// the `go_duration` fuzz target as an overflow panic): Go's result, 0,
    /// not a panic.
    #[test]
    fn a_sum_that_wraps_in_go_parses_as_go_does() {
        assert_eq!(
            parse("9223372036854775808ns9223372036854775808ns"),
            Ok(SignedDuration::ZERO)
        );
        assert_eq!(
            parse("9223372036854775808ns9223372036854775808ns1ns"),
            Ok(SignedDuration::from_nanos(1))
        );
        assert!(parse("9223372036854775808ns1ns").is_err());
    }

    /// Go's `parseDurationErrorTests`, with the whole message. (Go's cases
    /// with invalid UTF-8 cannot be a `&str`.)
    #[test]
    fn rejects_as_go_does_with_gos_messages() {
        let cases: &[(&str, &str)] = &[
            ("", r#"time: invalid duration """#),
            ("3", r#"time: missing unit in duration "3""#),
            ("-", r#"time: invalid duration "-""#),
            ("s", r#"time: invalid duration "s""#),
            (".", r#"time: invalid duration ".""#),
            ("-.", r#"time: invalid duration "-.""#),
            (".s", r#"time: invalid duration ".s""#),
            ("+.s", r#"time: invalid duration "+.s""#),
            ("1d", r#"time: unknown unit "d" in duration "1d""#),
            ("\u{FFFD}", r#"time: invalid duration "\xef\xbf\xbd""#),
            (
                "\u{FFFD} hello \u{FFFD} world",
                r#"time: invalid duration "\xef\xbf\xbd hello \xef\xbf\xbd world""#,
            ),
            // overflow
            (
                "9223372036854775810ns",
                r#"time: invalid duration "9223372036854775810ns""#,
            ),
            (
                "9223372036854775808ns",
                r#"time: invalid duration "9223372036854775808ns""#,
            ),
            (
                "-9223372036854775809ns",
                r#"time: invalid duration "-9223372036854775809ns""#,
            ),
            (
                "9223372036854776us",
                r#"time: invalid duration "9223372036854776us""#,
            ),
            ("3000000h", r#"time: invalid duration "3000000h""#),
            (
                "9223372036854775.808us",
                r#"time: invalid duration "9223372036854775.808us""#,
            ),
            (
                "9223372036854ms775us808ns",
                r#"time: invalid duration "9223372036854ms775us808ns""#,
            ),
            // more of what the callers met
            ("1..5s", r#"time: missing unit in duration "1..5s""#),
            (
                "5 parsecs",
                r#"time: unknown unit " parsecs" in duration "5 parsecs""#,
            ),
            (
                "1µx",
                r#"time: unknown unit "\xc2\xb5x" in duration "1\xc2\xb5x""#,
            ),
            (" 1s", r#"time: invalid duration " 1s""#),
            ("1\"s", r#"time: unknown unit "\"s" in duration "1\"s""#),
        ];
        for &(text, message) in cases {
            let err = parse(text).expect_err(text);
            assert_eq!(err.to_string(), message, "{text:?}");
        }
    }

    /// Go's `durationTests` (time_test.go) for `Duration.String()`.
    #[test]
    fn formats_gos_test_vectors() {
        let cases: &[(i64, &str)] = &[
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1µs"),
            (2_200 * US, "2.2ms"),
            (3_300 * MS, "3.3s"),
            (4 * M + 5 * S, "4m5s"),
            (4 * M + 5001 * MS, "4m5.001s"),
            (5 * H + 6 * M + 7001 * MS, "5h6m7.001s"),
            (8 * M + 1, "8m0.000000001s"),
            (i64::MAX, "2562047h47m16.854775807s"),
            (i64::MIN, "-2562047h47m16.854775808s"),
            // and the callers' examples
            (-1_500 * MS, "-1.5s"),
            (H, "1h0m0s"),
            (500 * MS, "500ms"),
        ];
        for &(nanos, text) in cases {
            assert_eq!(format(SignedDuration::from_nanos(nanos)), text, "{nanos}");
        }
        assert_eq!(format_std(std::time::Duration::from_millis(1500)), "1.5s");
        assert_eq!(
            format_std(std::time::Duration::MAX),
            "5124095576030431h0m15.999999999s"
        );
    }

    /// Go's `TestParseDurationRoundTrip`: the extremes, and millisecond
    /// spans, print as text that parses back to the same value.
    #[test]
    fn printed_durations_parse_back() {
        for nanos in [i64::MAX, i64::MIN, 0, 1, -1, 999, 1_000, 59 * S + 999 * MS] {
            let d = SignedDuration::from_nanos(nanos);
            assert_eq!(parse(&format(d)), Ok(d), "{nanos}");
        }
        let mut ms: i64 = 1;
        while ms < i64::from(i32::MAX) {
            let d = SignedDuration::from_millis(ms);
            assert_eq!(parse(&format(d)), Ok(d), "{ms}ms");
            ms = ms * 7 + 3;
        }
    }
}
