//! Labels, and label selectors from query parameters, on top of
//! `hpa_core::selector`.
//!
//! A thin layer: it names the query parameter in errors (so a bad selector
//! gets a clear 400) and converts a parsed selector back into the
//! `LabelSelector` that custom metrics echo in `metric.selector`.

use std::collections::BTreeMap;

use hpa_core::selector::{Operator, Selector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

/// Labels of a pod, node, object or series.
pub type Labels = BTreeMap<String, String>;

/// A selector in a query parameter did not parse.
#[derive(Debug, thiserror::Error)]
#[error("invalid {param} {text:?}: {source}")]
pub struct SelectorError {
    /// The query parameter (`labelSelector`, `metricLabelSelector`).
    pub param: String,
    /// Its value.
    pub text: String,
    /// The parser's explanation.
    #[source]
    pub source: hpa_core::selector::SelectorError,
}

/// A parsed selector; an absent or empty parameter selects everything.
#[derive(Debug, Clone)]
pub struct Filter {
    selector: Selector,
}

impl Filter {
    /// Parses the value of query parameter `param`.
    pub fn parse(param: &str, text: Option<&str>) -> Result<Self, SelectorError> {
        let text = text.unwrap_or("");
        let selector = Selector::parse(text).map_err(|source| SelectorError {
            param: param.to_owned(),
            text: text.to_owned(),
            source,
        })?;
        Ok(Self { selector })
    }

    /// Whether `labels` match.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.selector.matches(labels)
    }

    /// The selector as a `LabelSelector` (equalities as `matchLabels`, the
    /// rest as `matchExpressions`). `<` and `>` have no `LabelSelector`
    /// form and are written as `Gt`/`Lt` expressions, as apimachinery does
    /// for node selectors.
    pub fn to_label_selector(&self) -> LabelSelector {
        let mut out = LabelSelector::default();
        for r in self.selector.requirements() {
            let (op, values) = match r.operator {
                Operator::Equals | Operator::DoubleEquals => {
                    if let Some(v) = r.values.first() {
                        out.match_labels
                            .get_or_insert_with(Default::default)
                            .insert(r.key.clone(), v.clone());
                    }
                    continue;
                }
                Operator::NotEquals | Operator::NotIn => ("NotIn", Some(r.values.clone())),
                Operator::In => ("In", Some(r.values.clone())),
                Operator::Exists => ("Exists", None),
                Operator::DoesNotExist => ("DoesNotExist", None),
                Operator::GreaterThan => ("Gt", Some(r.values.clone())),
                Operator::LessThan => ("Lt", Some(r.values.clone())),
            };
            out.match_expressions
                .get_or_insert_with(Default::default)
                .push(LabelSelectorRequirement {
                    key: r.key.clone(),
                    operator: op.to_owned(),
                    values,
                });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn an_absent_selector_selects_everything() {
        let f = Filter::parse("labelSelector", None).unwrap();
        assert!(f.matches(&labels(&[])));
    }

    #[test]
    fn a_bad_selector_names_the_parameter() {
        let err = Filter::parse("metricLabelSelector", Some("app in (a")).unwrap_err();
        assert!(err.to_string().contains("metricLabelSelector"), "{err}");
    }

    #[test]
    fn selectors_convert_to_label_selectors() {
        let f = Filter::parse("s", Some("app=web,tier in (a,b),!canary")).unwrap();
        let ls = f.to_label_selector();
        assert_eq!(ls.match_labels.unwrap()["app"], "web");
        let ex = ls.match_expressions.unwrap();
        assert!(ex.iter().any(|e| e.operator == "In" && e.key == "tier"));
        assert!(
            ex.iter()
                .any(|e| e.operator == "DoesNotExist" && e.key == "canary")
        );
    }
}
