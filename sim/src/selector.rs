//! Label and field selectors as the API server parses them from query strings.
//!
//! A private, minimal version: `hpa_core` may later offer a shared parser.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// A malformed selector.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SelectorError {
    /// The string could not be parsed.
    #[error("unable to parse requirement {requirement:?}: {reason}")]
    Parse {
        /// The failing requirement text.
        requirement: String,
        /// Why.
        reason: &'static str,
    },
    /// A label selector object with an unknown operator.
    #[error("{operator:?} is not a valid label selector operator (key {key:?})")]
    Operator {
        /// The key of the expression.
        key: String,
        /// The bad operator.
        operator: String,
    },
}

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// `k=v`, `k==v`.
    Eq(String, String),
    /// `k!=v`.
    NotEq(String, String),
    /// `k in (a,b)`.
    In(String, Vec<String>),
    /// `k notin (a,b)`.
    NotIn(String, Vec<String>),
    /// `k`.
    Exists(String),
    /// `!k`.
    DoesNotExist(String),
}

impl Requirement {
    fn matches(&self, get: &dyn Fn(&str) -> Option<String>) -> bool {
        match self {
            Self::Eq(k, v) => get(k).as_deref() == Some(v.as_str()),
            Self::NotEq(k, v) => get(k).as_deref() != Some(v.as_str()),
            Self::In(k, vs) => get(k).is_some_and(|x| vs.contains(&x)),
            Self::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(&x)),
            Self::Exists(k) => get(k).is_some(),
            Self::DoesNotExist(k) => get(k).is_none(),
        }
    }
}

/// A conjunction of requirements; empty selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(pub Vec<Requirement>);

impl Selector {
    /// Parses `a=b,c in (d,e),!f`.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for part in split_top(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_requirement(part)?);
        }
        Ok(Self(reqs))
    }

    /// Whether no requirement restricts anything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a label set (or field set) satisfies all requirements.
    pub fn matches(&self, get: &dyn Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|r| r.matches(get))
    }

    /// Matches a sorted `(key, value)` list.
    pub fn matches_pairs<K: AsRef<str>, V: AsRef<str>>(&self, pairs: &[(K, V)]) -> bool {
        self.matches(&|k| {
            pairs
                .iter()
                .find(|(pk, _)| pk.as_ref() == k)
                .map(|(_, v)| v.as_ref().to_owned())
        })
    }

    /// Converts a `LabelSelector` object (matchLabels + matchExpressions).
    pub fn from_label_selector(sel: &LabelSelector) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for (k, v) in sel.match_labels.iter().flatten() {
            reqs.push(Requirement::Eq(k.clone(), v.clone()));
        }
        for e in sel.match_expressions.iter().flatten() {
            let vals = e.values.clone().unwrap_or_default();
            reqs.push(match e.operator.as_str() {
                "In" => Requirement::In(e.key.clone(), vals),
                "NotIn" => Requirement::NotIn(e.key.clone(), vals),
                "Exists" => Requirement::Exists(e.key.clone()),
                "DoesNotExist" => Requirement::DoesNotExist(e.key.clone()),
                other => {
                    return Err(SelectorError::Operator {
                        key: e.key.clone(),
                        operator: other.to_owned(),
                    });
                }
            });
        }
        Ok(Self(reqs))
    }
}

impl std::fmt::Display for Selector {
    /// The canonical string form (as `metav1.FormatLabelSelector` writes it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self
            .0
            .iter()
            .map(|r| match r {
                Requirement::Eq(k, v) => format!("{k}={v}"),
                Requirement::NotEq(k, v) => format!("{k}!={v}"),
                Requirement::In(k, vs) => format!("{k} in ({})", sorted(vs).join(",")),
                Requirement::NotIn(k, vs) => format!("{k} notin ({})", sorted(vs).join(",")),
                Requirement::Exists(k) => k.clone(),
                Requirement::DoesNotExist(k) => format!("!{k}"),
            })
            .collect();
        parts.sort();
        f.write_str(&parts.join(","))
    }
}

fn sorted(vs: &[String]) -> Vec<String> {
    let mut v = vs.to_vec();
    v.sort();
    v
}

/// Splits on commas outside parentheses.
fn split_top(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

fn parse_requirement(part: &str) -> Result<Requirement, SelectorError> {
    let err = |reason| SelectorError::Parse {
        requirement: part.to_owned(),
        reason,
    };
    if let Some(key) = part.strip_prefix('!') {
        let key = key.trim();
        check_key(key).map_err(err)?;
        return Ok(Requirement::DoesNotExist(key.to_owned()));
    }
    if let Some((k, v)) = part.split_once("!=") {
        check_key(k.trim()).map_err(err)?;
        return Ok(Requirement::NotEq(k.trim().into(), v.trim().into()));
    }
    if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
        check_key(k.trim()).map_err(err)?;
        return Ok(Requirement::Eq(k.trim().into(), v.trim().into()));
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    if words.len() == 2 {
        let key = words[0].trim();
        let rest = words[1].trim();
        let (neg, list) = if let Some(l) = rest.strip_prefix("notin") {
            (true, l)
        } else if let Some(l) = rest.strip_prefix("in") {
            (false, l)
        } else {
            return Err(err("expected one of: in, notin, =, ==, !="));
        };
        check_key(key).map_err(err)?;
        let list = list.trim();
        let inner = list
            .strip_prefix('(')
            .and_then(|l| l.strip_suffix(')'))
            .ok_or_else(|| err("expected a parenthesised value list"))?;
        let vals: Vec<String> = inner
            .split(',')
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect();
        return Ok(if neg {
            Requirement::NotIn(key.into(), vals)
        } else {
            Requirement::In(key.into(), vals)
        });
    }
    check_key(part).map_err(err)?;
    Ok(Requirement::Exists(part.to_owned()))
}

fn check_key(key: &str) -> Result<(), &'static str> {
    if key.is_empty() {
        return Err("key must not be empty");
    }
    if key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
    {
        Ok(())
    } else {
        Err("invalid character in key")
    }
}

/// Labels of an object as a sorted list of pairs (compact to store).
pub fn labels_of(obj: &serde_json::Value) -> Vec<(Box<str>, Box<str>)> {
    let mut v: Vec<(Box<str>, Box<str>)> = obj
        .pointer("/metadata/labels")
        .and_then(|l| l.as_object())
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or_default().into()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Parses a `LabelSelector` JSON value into its canonical string.
pub fn label_selector_string(sel: &serde_json::Value) -> Result<String, SelectorError> {
    let parsed: LabelSelector =
        serde_json::from_value(sel.clone()).map_err(|_| SelectorError::Parse {
            requirement: sel.to_string(),
            reason: "not a LabelSelector object",
        })?;
    Ok(Selector::from_label_selector(&parsed)?.to_string())
}

/// A map view for tests and callers that hold `BTreeMap` labels.
pub fn matches_map(sel: &Selector, labels: &BTreeMap<String, String>) -> bool {
    sel.matches(&|k| labels.get(k).cloned())
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
    fn set_based_and_equality_requirements_combine_with_and() {
        let sel = Selector::parse("app=web, tier in (a,b),!canary,env!=prod").unwrap();
        assert!(matches_map(&sel, &labels(&[("app", "web"), ("tier", "a")])));
        assert!(!matches_map(
            &sel,
            &labels(&[("app", "web"), ("tier", "c")])
        ));
        assert!(!matches_map(
            &sel,
            &labels(&[("app", "web"), ("tier", "a"), ("canary", "1")])
        ));
        assert!(!matches_map(
            &sel,
            &labels(&[("app", "web"), ("tier", "a"), ("env", "prod")])
        ));
    }

    #[test]
    fn label_selector_objects_format_canonically() {
        let v = serde_json::json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}]});
        assert_eq!(label_selector_string(&v).unwrap(), "a=1,b=2,c in (x,y)");
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(Selector::parse("a b c").is_err());
        assert!(Selector::parse("=x").is_err());
    }
}
