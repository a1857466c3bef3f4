//! Label and field selectors as the API server parses them from query strings.
//!
//! Parsing and matching are `hpa_core::selector` (one grammar and one
//! `Requirement::matches` for the controller and the sim); the selector reads
//! the compact label pairs the store keeps, so a list over 100,000 pods builds
//! no maps.

use std::collections::BTreeMap;

pub use hpa_core::labels::LabelLookup;
use hpa_core::selector::{self as core_sel};
pub use hpa_core::selector::{Operator, Requirement};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// A malformed selector.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SelectorError {
    /// The string or object could not be parsed.
    #[error("{0}")]
    Parse(String),
}

/// A conjunction of requirements (the core's selector); empty selects
/// everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(core_sel::Selector);

impl Selector {
    /// Parses `a=b,c in (d,e),!f`.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        core_sel::Selector::parse(text)
            .map(Self)
            .map_err(|e| SelectorError::Parse(e.to_string()))
    }

    /// Whether no requirement restricts anything.
    pub fn is_empty(&self) -> bool {
        self.0.requirements().is_empty()
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        self.0.requirements()
    }

    /// Whether a label set (or field set) satisfies all requirements.
    pub fn matches<L: LabelLookup + ?Sized>(&self, labels: &L) -> bool {
        self.0.matches(labels)
    }

    /// Matches a `(key, value)` list.
    pub fn matches_pairs<K: AsRef<str>, V: AsRef<str>>(&self, pairs: &[(K, V)]) -> bool {
        self.matches(&Pairs(pairs))
    }
}

/// A `(key, value)` list as a selector reads it.
struct Pairs<'a, K, V>(&'a [(K, V)]);

impl<K: AsRef<str>, V: AsRef<str>> LabelLookup for Pairs<'_, K, V> {
    fn label(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.as_ref() == key)
            .map(|(_, v)| v.as_ref())
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
    sel.matches(labels)
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
