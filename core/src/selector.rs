//! Kubernetes label selectors: parse, match, print.
//!
//! One implementation for the workspace: the decision core uses it for the
//! scale's `status.selector` and the ambiguous-selector check, the fake
//! metrics server to filter pods and series, the simulated cluster to answer
//! `?labelSelector=` lists. The grammar is apimachinery `labels.Parse`
//! (`=`, `==`, `!=`, `in`, `notin`, exists, `!`, and `<`/`>` on integers);
//! [`Selector::from_label_selector`] is `metav1.LabelSelectorAsSelector`.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a selector was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// The text does not follow the selector grammar.
    #[error("unable to parse selector {input:?} at position {position}: {reason}")]
    Syntax {
        /// The whole selector text.
        input: String,
        /// Byte offset where parsing stopped.
        position: usize,
        /// What was expected.
        reason: String,
    },
    /// A label key is not a valid qualified name.
    #[error("invalid label key {key:?}: {reason}")]
    InvalidKey {
        /// The key.
        key: String,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// A label value is not valid.
    #[error("invalid label value {value:?} for key {key:?}: {reason}")]
    InvalidValue {
        /// The key it belongs to.
        key: String,
        /// The value.
        value: String,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// A `matchExpressions` entry is inconsistent.
    #[error("matchExpressions entry for key {key:?}: {reason}")]
    InvalidExpression {
        /// The key of the entry.
        key: String,
        /// What is wrong.
        reason: String,
    },
}

/// A selector operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Operator {
    /// `key=value`
    Equals,
    /// `key==value`
    DoubleEquals,
    /// `key!=value`
    NotEquals,
    /// `key in (a,b)`
    In,
    /// `key notin (a,b)`
    NotIn,
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
    /// `key>n`
    GreaterThan,
    /// `key<n`
    LessThan,
}

/// One `key op values` clause; all clauses of a selector must hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub operator: Operator,
    /// The values, sorted (empty for exists / does-not-exist).
    pub values: Vec<String>,
}

impl Requirement {
    /// Whether `labels` satisfy this clause.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In => {
                value.is_some_and(|v| self.values.iter().any(|x| x == v))
            }
            Operator::NotEquals | Operator::NotIn => {
                value.is_none_or(|v| !self.values.iter().any(|x| x == v))
            }
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(v), Some(bound)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|b| b.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.values.first().map(String::as_str).unwrap_or("");
        match self.operator {
            Operator::Equals => write!(f, "{}={first}", self.key),
            Operator::DoubleEquals => write!(f, "{}=={first}", self.key),
            Operator::NotEquals => write!(f, "{}!={first}", self.key),
            Operator::In => write!(f, "{} in ({})", self.key, self.values.join(",")),
            Operator::NotIn => write!(f, "{} notin ({})", self.key, self.values.join(",")),
            Operator::Exists => write!(f, "{}", self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::GreaterThan => write!(f, "{}>{first}", self.key),
            Operator::LessThan => write!(f, "{}<{first}", self.key),
        }
    }
}

/// A parsed label selector.
///
/// `Nothing` exists because apimachinery turns an absent `LabelSelector`
/// into a selector that matches no object; an empty one matches every object.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Selector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl Selector {
    /// Matches every label set.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Matches no label set.
    pub fn nothing() -> Self {
        Self {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Parses the string form (`app=web,tier in (a,b),!canary`).
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        Parser::new(input).parse()
    }

    /// `metav1.LabelSelectorAsSelector`: `None` selects nothing, an empty
    /// selector selects everything.
    pub fn from_label_selector(selector: Option<&LabelSelector>) -> Result<Self, SelectorError> {
        let Some(selector) = selector else {
            return Ok(Self::nothing());
        };
        let mut requirements = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            validate_key(key)?;
            validate_value(key, value)?;
            requirements.push(Requirement {
                key: key.clone(),
                operator: Operator::Equals,
                values: vec![value.clone()],
            });
        }
        for expr in selector.match_expressions.iter().flatten() {
            validate_key(&expr.key)?;
            let values = expr.values.clone().unwrap_or_default();
            let invalid = |reason: &str| SelectorError::InvalidExpression {
                key: expr.key.clone(),
                reason: reason.to_owned(),
            };
            let operator = match expr.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(invalid(&format!(
                        "{other:?} is not a valid label selector operator"
                    )));
                }
            };
            match operator {
                Operator::In | Operator::NotIn if values.is_empty() => {
                    return Err(invalid(
                        "for 'in', 'notin' operators, values set can't be empty",
                    ));
                }
                Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                    return Err(invalid(
                        "values set must be empty for exists and does not exist",
                    ));
                }
                _ => {}
            }
            for v in &values {
                validate_value(&expr.key, v)?;
            }
            let mut values = values;
            values.sort();
            values.dedup();
            requirements.push(Requirement {
                key: expr.key.clone(),
                operator,
                values,
            });
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self {
            requirements,
            nothing: false,
        })
    }

    /// True when no requirement restricts the selection (and not `Nothing`).
    pub fn is_everything(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// True for the match-nothing selector.
    pub fn is_nothing(&self) -> bool {
        self.nothing
    }

    /// The clauses, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether `labels` satisfy every clause.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Like [`Selector::matches`], for an optional label map (absent = empty).
    pub fn matches_opt(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        match labels {
            Some(l) => self.matches(l),
            None => self.matches(&BTreeMap::new()),
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.requirements.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

impl FromStr for Selector {
    type Err = SelectorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for Selector {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Selector {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'
}

fn check_name(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        return Err("name part must be non-empty");
    }
    if s.len() > 63 {
        return Err("name part must be no more than 63 characters");
    }
    let first_last_ok = s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
    if !first_last_ok || !s.chars().all(is_name_char) {
        return Err(
            "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        );
    }
    Ok(())
}

fn validate_key(key: &str) -> Result<(), SelectorError> {
    let invalid = |reason| SelectorError::InvalidKey {
        key: key.to_owned(),
        reason,
    };
    let name = match key.split_once('/') {
        Some((prefix, name)) => {
            let prefix_ok = !prefix.is_empty()
                && prefix.len() <= 253
                && prefix.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                });
            if !prefix_ok {
                return Err(invalid("prefix part must be a lowercase DNS subdomain"));
            }
            name
        }
        None => key,
    };
    check_name(name).map_err(invalid)
}

fn validate_value(key: &str, value: &str) -> Result<(), SelectorError> {
    if value.is_empty() {
        return Ok(());
    }
    check_name(value).map_err(|reason| SelectorError::InvalidValue {
        key: key.to_owned(),
        value: value.to_owned(),
        reason,
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Comma,
    OpenParen,
    CloseParen,
    Equals,
    DoubleEquals,
    NotEquals,
    Bang,
    Greater,
    Less,
    End,
}

struct Parser<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Self { input, pos: 0 }
    }

    fn error(&self, reason: impl Into<String>) -> SelectorError {
        SelectorError::Syntax {
            input: self.input.to_owned(),
            position: self.pos,
            reason: reason.into(),
        }
    }

    fn skip_ws(&mut self) {
        let rest = &self.input[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn next(&mut self) -> Token {
        self.skip_ws();
        let rest = &self.input[self.pos..];
        let Some(c) = rest.chars().next() else {
            return Token::End;
        };
        let (token, len) = match c {
            ',' => (Token::Comma, 1),
            '(' => (Token::OpenParen, 1),
            ')' => (Token::CloseParen, 1),
            '>' => (Token::Greater, 1),
            '<' => (Token::Less, 1),
            '=' if rest.starts_with("==") => (Token::DoubleEquals, 2),
            '=' => (Token::Equals, 1),
            '!' if rest.starts_with("!=") => (Token::NotEquals, 2),
            '!' => (Token::Bang, 1),
            _ => {
                let len = rest
                    .find(|ch: char| ch.is_whitespace() || ",()=!<>".contains(ch))
                    .unwrap_or(rest.len());
                (Token::Ident(rest[..len].to_owned()), len)
            }
        };
        self.pos += len;
        token
    }

    fn peek(&mut self) -> Token {
        let save = self.pos;
        let t = self.next();
        self.pos = save;
        t
    }

    fn parse(mut self) -> Result<Selector, SelectorError> {
        let mut requirements = Vec::new();
        if self.peek() == Token::End {
            return Ok(Selector::everything());
        }
        loop {
            requirements.push(self.requirement()?);
            match self.next() {
                Token::End => break,
                Token::Comma => {
                    if self.peek() == Token::End {
                        return Err(self.error("found end of input, expected a requirement"));
                    }
                }
                other => return Err(self.error(format!("found {other:?}, expected ','"))),
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector {
            requirements,
            nothing: false,
        })
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        let negated = if self.peek() == Token::Bang {
            self.next();
            true
        } else {
            false
        };
        let key = match self.next() {
            Token::Ident(k) => k,
            other => return Err(self.error(format!("found {other:?}, expected a key"))),
        };
        validate_key(&key)?;
        if negated {
            return Ok(Requirement {
                key,
                operator: Operator::DoesNotExist,
                values: Vec::new(),
            });
        }
        let operator = match self.peek() {
            Token::End | Token::Comma => {
                return Ok(Requirement {
                    key,
                    operator: Operator::Exists,
                    values: Vec::new(),
                });
            }
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::NotEquals => Operator::NotEquals,
            Token::Greater => Operator::GreaterThan,
            Token::Less => Operator::LessThan,
            Token::Ident(word) if word == "in" => Operator::In,
            Token::Ident(word) if word == "notin" => Operator::NotIn,
            other => {
                return Err(self.error(format!(
                    "found {other:?}, expected one of '=', '==', '!=', 'in', 'notin', '<', '>'"
                )));
            }
        };
        self.next();
        let values = match operator {
            Operator::In | Operator::NotIn => self.value_set(&key)?,
            _ => {
                let value = match self.peek() {
                    Token::Ident(v) => {
                        self.next();
                        v
                    }
                    // `key=` selects an empty value.
                    Token::End | Token::Comma => String::new(),
                    other => return Err(self.error(format!("found {other:?}, expected a value"))),
                };
                if matches!(operator, Operator::GreaterThan | Operator::LessThan)
                    && value.parse::<i64>().is_err()
                {
                    return Err(self.error(format!(
                        "for '<', '>' operators, the value must be an integer, got {value:?}"
                    )));
                }
                validate_value(&key, &value)?;
                vec![value]
            }
        };
        Ok(Requirement {
            key,
            operator,
            values,
        })
    }

    fn value_set(&mut self, key: &str) -> Result<Vec<String>, SelectorError> {
        if self.next() != Token::OpenParen {
            return Err(self.error("expected '('"));
        }
        let mut values = Vec::new();
        loop {
            match self.next() {
                Token::Ident(v) => {
                    validate_value(key, &v)?;
                    values.push(v);
                    match self.next() {
                        Token::Comma => {}
                        Token::CloseParen => break,
                        other => {
                            return Err(self.error(format!("found {other:?}, expected ',' or ')'")));
                        }
                    }
                }
                // `in (a,)` and `in ()` carry an empty value, as upstream allows.
                Token::Comma => values.push(String::new()),
                Token::CloseParen => {
                    values.push(String::new());
                    break;
                }
                other => return Err(self.error(format!("found {other:?}, expected a value"))),
            }
        }
        values.sort();
        values.dedup();
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn every_operator_matches_as_apimachinery_does() {
        let l = labels(&[("app", "web"), ("tier", "front"), ("n", "5")]);
        let yes = [
            "app=web",
            "app==web",
            "app!=db",
            "missing!=x",
            "tier in (front,back)",
            "tier notin (back)",
            "missing notin (x)",
            "app",
            "!missing",
            "n>4",
            "n<6",
            "app=web, tier in (front)",
            "",
        ];
        for s in yes {
            assert!(Selector::parse(s).unwrap().matches(&l), "{s}");
        }
        let no = [
            "app=db",
            "app!=web",
            "tier in (back)",
            "tier notin (front)",
            "missing",
            "!app",
            "n>5",
            "missing in (x)",
        ];
        for s in no {
            assert!(!Selector::parse(s).unwrap().matches(&l), "{s}");
        }
    }

    #[test]
    fn unparsable_selectors_are_errors_naming_the_input() {
        for s in [
            "cheddar cheese",
            "a=b,",
            "a in b",
            "a in (b",
            "=b",
            "a=b c",
            "a>x",
            "Bad Key=1",
        ] {
            let err = Selector::parse(s).unwrap_err();
            assert!(
                err.to_string().contains(s) || matches!(err, SelectorError::InvalidKey { .. }),
                "{err}"
            );
        }
    }

    #[test]
    fn prints_canonically_with_sorted_keys() {
        let s = Selector::parse("z=1,a in (c,b),!m").unwrap();
        assert_eq!(s.to_string(), "a in (b,c),!m,z=1");
        assert_eq!(Selector::parse(&s.to_string()).unwrap(), s);
    }

    #[test]
    fn label_selector_objects_convert_like_label_selector_as_selector() {
        assert!(Selector::from_label_selector(None).unwrap().is_nothing());
        let empty = LabelSelector::default();
        assert!(
            Selector::from_label_selector(Some(&empty))
                .unwrap()
                .is_everything()
        );
        let ls = LabelSelector {
            match_labels: Some([("name".to_owned(), "test-pod".to_owned())].into()),
            match_expressions: Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                    key: "env".into(),
                    operator: "NotIn".into(),
                    values: Some(vec!["prod".into()]),
                },
            ]),
        };
        let s = Selector::from_label_selector(Some(&ls)).unwrap();
        assert_eq!(s.to_string(), "env notin (prod),name=test-pod");
        assert!(s.matches(&labels(&[("name", "test-pod")])));
        let bad = LabelSelector {
            match_expressions: Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                    key: "env".into(),
                    operator: "Near".into(),
                    values: None,
                },
            ]),
            ..Default::default()
        };
        assert!(Selector::from_label_selector(Some(&bad)).is_err());
    }
}
