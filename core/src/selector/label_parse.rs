//! apimachinery's `labels.Parse` and `labels.NewRequirement`, ported with
//! their error texts word for word.
//!
//! The HPA controller puts the parser's error into its `InvalidSelector`
//! event and condition ("couldn't convert selector into a corresponding
//! internal selector object: unable to parse requirement: `<nil>`: Invalid
//! value: ..."), so the lexer, the parser's decisions and the
//! `field.Error` / aggregate formatting follow the Go code
//! (`k8s.io/apimachinery/pkg/labels/selector.go`,
//! `pkg/util/validation`, `pkg/util/validation/field`), including its
//! oddities: the key is validated against a nil field path (`<nil>`), the
//! `>`/`<` operators are listed as `gt`, `lt`.

use super::{Operator, Requirement};

/// Lexer tokens (`labels.Token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &[u8]) -> Option<Tok> {
    Some(match s {
        b")" => Tok::ClosedPar,
        b"," => Tok::Comma,
        b"!" => Tok::DoesNotExist,
        b"==" => Tok::DoubleEquals,
        b"=" => Tok::Equals,
        b">" => Tok::GreaterThan,
        b"in" => Tok::In,
        b"<" => Tok::LessThan,
        b"!=" => Tok::NotEquals,
        b"notin" => Tok::NotIn,
        b"(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// `labels.Lexer`: bytes, with a 0 byte read as the end (as Go's `read`).
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn text(buf: &[u8]) -> String {
        String::from_utf8_lossy(buf).into_owned()
    }

    fn lex(&mut self) -> (Tok, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Tok::End, String::new());
        }
        self.unread();
        if is_special(ch) {
            self.scan_special()
        } else {
            self.scan_id_or_keyword()
        }
    }

    fn scan_id_or_keyword(&mut self) -> (Tok, String) {
        let start = self.pos;
        let end = loop {
            let before = self.pos;
            let ch = self.read();
            // A 0 byte ends the identifier (Go's `read` returns 0 at the
            // end too, and does not unread it).
            if ch == 0 {
                break before;
            }
            if is_special(ch) || is_whitespace(ch) {
                self.unread();
                break before;
            }
        };
        let buf = &self.s[start..end];
        match keyword(buf) {
            Some(tok) => (tok, Self::text(buf)),
            None => (Tok::Identifier, Self::text(buf)),
        }
    }

    fn scan_special(&mut self) -> (Tok, String) {
        let start = self.pos;
        let mut last: Option<(Tok, usize)> = None;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if !is_special(ch) {
                self.unread();
                break;
            }
            let buf = &self.s[start..self.pos];
            match keyword(buf) {
                Some(tok) => last = Some((tok, self.pos)),
                None if last.is_some() => {
                    self.unread();
                    break;
                }
                None => {}
            }
        }
        match last {
            Some((tok, end)) => (tok, Self::text(&self.s[start..end])),
            // Unreachable with today's symbol set (every special symbol is a
            // token on its own), kept as Go's ErrorToken.
            None => (
                Tok::Identifier,
                format!(
                    "error expected: keyword found '{}'",
                    Self::text(&self.s[start..self.pos])
                ),
            ),
        }
    }
}

/// Whether a token is read as a value (`in`, `notin` are identifiers there).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Tok, String)>,
    position: usize,
}

fn in_context(tok: Tok, context: Context) -> Tok {
    match (context, tok) {
        (Context::Values, Tok::In | Tok::NotIn) => Tok::Identifier,
        _ => tok,
    }
}

impl Parser {
    fn lookahead(&self, context: Context) -> (Tok, String) {
        let (tok, lit) = self
            .items
            .get(self.position)
            .cloned()
            .unwrap_or((Tok::End, String::new()));
        (in_context(tok, context), lit)
    }

    fn consume(&mut self, context: Context) -> (Tok, String) {
        let item = self.lookahead(context);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Tok::End => return Ok(requirements),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, unary) = self.key_and_inferred_operator()?;
        if let Some(op) = unary {
            return new_requirement(&key, op, Vec::new());
        }
        let op = self.operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.values()?,
            _ => self.exact_value()?,
        };
        new_requirement(&key, op, values)
    }

    /// `parseKeyAndInferOperator`: the key, and `Exists`/`DoesNotExist`
    /// when no binary operator follows.
    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut op = None;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Tok::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        if let Some(e) = validate_label_key(&lit, "<nil>") {
            return Err(e);
        }
        let (next, _) = self.lookahead(Context::Values);
        if (next == Tok::End || next == Tok::Comma) && op.is_none() {
            op = Some(Operator::Exists);
        }
        Ok((lit, op))
    }

    fn operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Tok::In => Operator::In,
            Tok::Equals => Operator::Equals,
            Tok::DoubleEquals => Operator::DoubleEquals,
            Tok::GreaterThan => Operator::GreaterThan,
            Tok::LessThan => Operator::LessThan,
            Tok::NotIn => Operator::NotIn,
            Tok::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    /// `parseValues`: `(a,b)`, as a sorted set.
    fn values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let set = self.identifiers()?;
                if self.consume(Context::Values).0 != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(set)
            }
            Tok::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// `parseIdentifiersList`: comma-separated, possibly empty, values.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut set = std::collections::BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Tok::Identifier => {
                    set.insert(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Tok::Comma => {}
                        Tok::ClosedPar => return Ok(set.into_iter().collect()),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Tok::ClosedPar {
                        set.insert(String::new());
                        return Ok(set.into_iter().collect());
                    }
                    if tok2 == Tok::Comma {
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    /// `parseExactValue`: one value, empty before `,` or the end.
    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Tok::End || tok == Tok::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Tok::Identifier {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// `labels.Parse`, requirements sorted by key; the error is Go's text.
pub(crate) fn parse(input: &str) -> Result<Vec<Requirement>, String> {
    let mut lexer = Lexer {
        s: input.as_bytes(),
        pos: 0,
    };
    let mut items = Vec::new();
    loop {
        let item = lexer.lex();
        let end = item.0 == Tok::End;
        items.push(item);
        if end {
            break;
        }
    }
    let mut requirements = Parser { items, position: 0 }.parse()?;
    requirements.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(requirements)
}

/// `labels.NewRequirement`: the errors aggregated as `utilerrors.Aggregate`
/// prints them.
pub(crate) fn new_requirement(
    key: &str,
    operator: Operator,
    mut values: Vec<String>,
) -> Result<Requirement, String> {
    let mut errs: Vec<String> = Vec::new();
    // The parser validated the key against the nil path already (`<nil>`);
    // here it is checked under `key`, which a selector object can fail.
    if let Some(e) = validate_label_key(key, "key") {
        errs.push(e);
    }
    match operator {
        Operator::In | Operator::NotIn if values.is_empty() => errs.push(invalid(
            "values",
            &go_string_slice(&values),
            "for 'in', 'notin' operators, values set can't be empty",
        )),
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals if values.len() != 1 => {
            errs.push(invalid(
                "values",
                &go_string_slice(&values),
                "exact-match compatibility requires one single value",
            ));
        }
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => errs.push(invalid(
            "values",
            &go_string_slice(&values),
            "values set must be empty for exists and does not exist",
        )),
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errs.push(invalid(
                    "values",
                    &go_string_slice(&values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(invalid(
                        &format!("values[{i}]"),
                        &go_quote(v),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let reasons = label_value_errors(v);
        if !reasons.is_empty() {
            errs.push(invalid(
                &format!("values[{i}][{key}]"),
                &go_quote(v),
                &reasons.join("; "),
            ));
        }
    }
    if !errs.is_empty() {
        return Err(aggregate(errs));
    }
    values.sort();
    values.dedup();
    Ok(Requirement {
        key: key.to_owned(),
        operator,
        values,
    })
}

/// `utilerrors.NewAggregate(...).Error()`: one message alone, several
/// (duplicates dropped) in brackets.
fn aggregate(errs: Vec<String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    if seen.len() == 1 {
        seen.remove(0)
    } else {
        format!("[{}]", seen.join(", "))
    }
}

/// A `field.Invalid(path, value, detail).Error()`.
fn invalid(field: &str, value: &str, detail: &str) -> String {
    format!("{field}: Invalid value: {value}: {detail}")
}

/// `validateLabelKey`: `IsQualifiedName`'s reasons under `field`.
fn validate_label_key(key: &str, field: &str) -> Option<String> {
    let reasons = qualified_name_errors(key);
    (!reasons.is_empty()).then(|| invalid(field, &go_quote(key), &reasons.join("; ")))
}

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// `validation.RegexError`, including its doubled spaces.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            match (b.first(), b.last()) {
                (Some(f), Some(l)) => {
                    (f.is_ascii_lowercase() || f.is_ascii_digit())
                        && (l.is_ascii_lowercase() || l.is_ascii_digit())
                        && b.iter()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                }
                _ => false,
            }
        })
}

/// `validation.IsQualifiedName`.
fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 characters".to_owned());
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(
                            DNS1123_SUBDOMAIN_MSG,
                            DNS1123_SUBDOMAIN_FMT,
                            &["example.com"]
                        )
                    ));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_owned());
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `validation.IsValidLabelValue`.
fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Go's `%q` of a string (`strconv.Quote`), for the characters a selector
/// can carry.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%#v` of a `[]string`.
fn go_string_slice(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

    fn err(s: &str) -> String {
        parse(s).unwrap_err()
    }

    #[test]
    fn a_bad_key_is_reported_against_the_nil_path_as_apimachinery_does() {
        // The texts kube-apiserver answers for `kubectl get pods -l ...`.
        assert_eq!(
            err("app:monolith"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"app:monolith\": name part {NAME_RULE}"
            )
        );
        assert_eq!(
            err("*bar"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"*bar\": name part {NAME_RULE}"
            )
        );
        assert_eq!(
            err("app.kubernetes_io/name=x"),
            "unable to parse requirement: <nil>: Invalid value: \"app.kubernetes_io/name\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
        assert!(err("a/b/c=d").starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of"
        ));
    }

    #[test]
    fn grammar_errors_name_the_token_found_as_go_does() {
        let cases = [
            (
                "cheddar cheese",
                "unable to parse requirement: found 'cheese', expected: in, notin, =, ==, !=, gt, lt",
            ),
            ("a=b,", "found '', expected: identifier after ','"),
            (
                "=b",
                "found '=', expected: !, identifier, or 'end of string'",
            ),
            (
                "a in b",
                "unable to parse requirement: found 'b' expected: '('",
            ),
            (
                "a in (b",
                "unable to parse requirement: found '', expected: ',' or ')'",
            ),
            (
                "a in (b,=)",
                "unable to parse requirement: found '=', expected: ',', or identifier",
            ),
            (
                "a in =",
                "unable to parse requirement: found '=' expected: '('",
            ),
            (
                "a in (=)",
                "unable to parse requirement: found '=', expected: ',', ')' or identifier",
            ),
            ("a=b c", "found 'c', expected: ',' or 'end of string'"),
            (
                "a=(",
                "unable to parse requirement: found '(', expected: identifier",
            ),
            (
                "a (",
                "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "!=a",
                "found '!=', expected: !, identifier, or 'end of string'",
            ),
            (
                "!,a",
                "unable to parse requirement: found ',', expected: identifier",
            ),
            ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ];
        for (input, want) in cases {
            assert_eq!(err(input), want, "{input}");
        }
    }

    #[test]
    fn requirement_errors_are_field_errors_aggregated_as_go_prints_them() {
        assert_eq!(
            err("x>abc"),
            "unable to parse requirement: values[0]: Invalid value: \"abc\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            err("x<-y"),
            "unable to parse requirement: [values[0]: Invalid value: \"-y\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: \"-y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]"
        );
        assert_eq!(
            err("app in (ok,-bad)"),
            "unable to parse requirement: values[0][app]: Invalid value: \"-bad\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
    }

    #[test]
    fn odd_but_valid_forms_parse_as_go_does() {
        let ok = |s: &str| parse(s).unwrap();
        assert_eq!(ok("").len(), 0);
        assert_eq!(ok("x in (a,,b)")[0].values, ["", "a", "b"]);
        assert_eq!(ok("x in ()")[0].values, [""]);
        assert_eq!(ok("x in (,)")[0].values, [""]);
        assert_eq!(ok("x=")[0].values, [""]);
        assert_eq!(ok("in=notin")[0].values, ["notin"]);
        assert_eq!(ok("x in (in,notin)")[0].values, ["in", "notin"]);
        assert_eq!(ok("a==b")[0].operator, Operator::DoubleEquals);
        assert_eq!(ok(" a != b ")[0].operator, Operator::NotEquals);
        let r = ok("z,!y,x>1");
        let keys: Vec<&str> = r.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["x", "y", "z"]);
    }

    #[test]
    fn selector_objects_validate_under_key_and_values() {
        assert_eq!(
            new_requirement("-k", Operator::Equals, vec!["v".into()]).unwrap_err(),
            format!("key: Invalid value: \"-k\": name part {NAME_RULE}")
        );
        assert_eq!(
            new_requirement("k", Operator::In, vec![]).unwrap_err(),
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
        );
        assert_eq!(
            new_requirement("k", Operator::Exists, vec!["a".into()]).unwrap_err(),
            "values: Invalid value: []string{\"a\"}: values set must be empty for exists and does not exist"
        );
    }

    #[test]
    fn quoting_follows_go() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\x01\"");
        assert_eq!(go_quote("é"), "\"é\"");
    }
}
