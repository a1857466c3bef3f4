//! Label and field selectors as the API server parses them from query strings.
//!
//! Parsing is `hpa_core::selector` (one grammar for the controller and the
//! sim); matching here works on the compact label pairs the store keeps, so a
//! list over 100,000 pods builds no maps.

use std::collections::BTreeMap;

use hpa_core::selector::{self as core_sel, Operator};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// A malformed selector.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SelectorError {
    /// The string or object could not be parsed.
    #[error("{0}")]
    Parse(String),
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
    /// `k>n` (integer comparison).
    Gt(String, i64),
    /// `k<n`.
    Lt(String, i64),
}

impl Requirement {
    fn matches(&self, get: &dyn Fn(&str) -> Option<String>) -> bool {
        let num = |k: &str| get(k).and_then(|v| v.parse::<i64>().ok());
        match self {
            Self::Eq(k, v) => get(k).as_deref() == Some(v.as_str()),
            Self::NotEq(k, v) => get(k).as_deref() != Some(v.as_str()),
            Self::In(k, vs) => get(k).is_some_and(|x| vs.contains(&x)),
            Self::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(&x)),
            Self::Exists(k) => get(k).is_some(),
            Self::DoesNotExist(k) => get(k).is_none(),
            Self::Gt(k, n) => num(k).is_some_and(|x| x > *n),
            Self::Lt(k, n) => num(k).is_some_and(|x| x < *n),
        }
    }

    fn from_core(r: &core_sel::Requirement) -> Result<Self, SelectorError> {
        let key = r.key.clone();
        let first = r.values.first().cloned().unwrap_or_default();
        let int = |v: &str| {
            v.parse::<i64>()
                .map_err(|_| SelectorError::Parse(format!("{key}: {v:?} is not an integer")))
        };
        Ok(match r.operator {
            Operator::Equals | Operator::DoubleEquals => Self::Eq(key, first),
            Operator::NotEquals => Self::NotEq(key, first),
            Operator::In => Self::In(key, r.values.clone()),
            Operator::NotIn => Self::NotIn(key, r.values.clone()),
            Operator::Exists => Self::Exists(key),
            Operator::DoesNotExist => Self::DoesNotExist(key),
            Operator::GreaterThan => Self::Gt(key.clone(), int(&first)?),
            Operator::LessThan => Self::Lt(key.clone(), int(&first)?),
        })
    }
}

/// A conjunction of requirements; empty selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(pub Vec<Requirement>);

impl Selector {
    /// Parses `a=b,c in (d,e),!f`.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let parsed =
            core_sel::Selector::parse(text).map_err(|e| SelectorError::Parse(e.to_string()))?;
        Self::from_core(&parsed)
    }

    fn from_core(sel: &core_sel::Selector) -> Result<Self, SelectorError> {
        sel.requirements()
            .iter()
            .map(Requirement::from_core)
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
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

/// The string form of a `LabelSelector` JSON value, as the scale
/// subresource reports it (formatted by `hpa_core::selector`, which the
/// controller parses it back with).
pub fn label_selector_string(sel: &serde_json::Value) -> Result<String, SelectorError> {
    let parsed: LabelSelector = serde_json::from_value(sel.clone())
        .map_err(|e| SelectorError::Parse(format!("not a LabelSelector object: {e}")))?;
    core_sel::Selector::from_label_selector(Some(&parsed))
        .map(|s| s.to_string())
        .map_err(|e| SelectorError::Parse(e.to_string()))
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
        let text = label_selector_string(&v).unwrap();
        let back = Selector::parse(&text).unwrap();
        assert!(matches_map(
            &back,
            &labels(&[("a", "1"), ("b", "2"), ("c", "x")])
        ));
        assert!(!matches_map(
            &back,
            &labels(&[("a", "1"), ("b", "2"), ("c", "z")])
        ));
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(Selector::parse("a b c").is_err());
        assert!(Selector::parse("=x").is_err());
    }
}
