//! Kubernetes label selectors: parse, match, print.
//!
//! One implementation for the workspace: the decision core uses it for the
//! scale's `status.selector` and the ambiguous-selector check, the fake
//! metrics server to filter pods and series, the simulated cluster to answer
//! `?labelSelector=` lists. The grammar is apimachinery `labels.Parse`
//! (`=`, `==`, `!=`, `in`, `notin`, exists, `!`, and `<`/`>` on integers);
//! [`Selector::from_label_selector`] is `metav1.LabelSelectorAsSelector`.

mod label_parse;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::labels::LabelLookup;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a selector was refused. The messages are apimachinery's, word for
/// word, because the controller shows them in its `InvalidSelector` event
/// and condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// `labels.Parse` refused the text.
    #[error("{message}")]
    Syntax {
        /// The whole selector text.
        input: String,
        /// Go's error text.
        message: String,
    },
    /// `metav1.LabelSelectorAsSelector` refused a selector object.
    #[error("{0}")]
    Invalid(String),
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
    pub fn matches<L: LabelLookup + ?Sized>(&self, labels: &L) -> bool {
        let value = labels.label(&self.key);
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
        let requirements = label_parse::parse(input).map_err(|message| SelectorError::Syntax {
            input: input.to_owned(),
            message,
        })?;
        Ok(Self {
            requirements,
            nothing: false,
        })
    }

    /// `metav1.LabelSelectorAsSelector`: `None` selects nothing, an empty
    /// selector selects everything.
    pub fn from_label_selector(selector: Option<&LabelSelector>) -> Result<Self, SelectorError> {
        let Some(selector) = selector else {
            return Ok(Self::nothing());
        };
        let mut requirements = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            requirements.push(
                label_parse::new_requirement(key, Operator::Equals, vec![value.clone()])
                    .map_err(SelectorError::Invalid)?,
            );
        }
        for expr in selector.match_expressions.iter().flatten() {
            let operator = match expr.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(SelectorError::Invalid(format!(
                        "{} is not a valid label selector operator",
                        label_parse::go_quote(other)
                    )));
                }
            };
            requirements.push(
                label_parse::new_requirement(
                    &expr.key,
                    operator,
                    expr.values.clone().unwrap_or_default(),
                )
                .map_err(SelectorError::Invalid)?,
            );
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

    /// Whether `labels` (a map, or a pod's [`Labels`](crate::pod::Labels))
    /// satisfy every clause.
    pub fn matches<L: LabelLookup + ?Sized>(&self, labels: &L) -> bool {
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
    fn unparsable_selectors_keep_the_input_and_go_s_message() {
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
            match Selector::parse(s).unwrap_err() {
                SelectorError::Syntax { input, message } => {
                    assert_eq!(input, s);
                    assert!(
                        message.starts_with("found")
                            || message.starts_with("unable to parse requirement: "),
                        "{message}"
                    );
                }
                other => panic!("{other:?}"),
            }
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
        assert_eq!(
            Selector::from_label_selector(Some(&bad))
                .unwrap_err()
                .to_string(),
            "\"Near\" is not a valid label selector operator"
        );
    }
}
