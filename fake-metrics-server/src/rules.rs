//! Rules: values for pods the script does not name.
//!
//! A cluster's controllers name their pods (`web-7d9c5b-xk2zq`), so a
//! script cannot know the names in advance. A rule gives every pod of a
//! namespace that matches a label selector the same usage and custom
//! metrics, resolved against the pods that exist ([`Inventory`]): learned
//! from the API server (`crate::watch`), as metrics-server learns them from
//! the kubelets. A pod the script declares by name keeps its own values;
//! of several matching rules the first in the script wins.

use std::collections::{BTreeMap, BTreeSet};

use hpa_core::selector::Selector;
use serde::{Deserialize, Serialize};

use crate::document::{ScriptError, check_name};
use crate::duration::{Duration, SampleTime};
use crate::labels::Labels;
use crate::metric::MetricSpec;
use crate::pod::{ContainerSpec, PodSpec, default_namespace};

/// One rule: the values of the pods of `namespace` that match `selector`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleSpec {
    /// Key of the rule (a patch replaces the rule of the same name).
    pub name: String,
    /// Namespace of the pods (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Label selector of the pods (`app=web`, `tier in (a,b)`); empty or
    /// absent: every pod of the namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub selector: String,
    /// Usage per container, as for a declared pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<ContainerSpec>,
    /// Custom metrics (Pods metrics) of each pod, by metric name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, MetricSpec>,
    /// Sample time of the resource metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<SampleTime>,
    /// Window of the resource metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Duration>,
}

/// Checks rules: names, unique keys, selectors that parse, containers named
/// once. `field` is the path of the list (`rules`).
pub fn check(field: &str, rules: &[RuleSpec]) -> Result<(), ScriptError> {
    let mut seen = BTreeSet::new();
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("{field}[{i}]");
        check_name(&format!("{at}.name"), &rule.name)?;
        check_name(&format!("{at}.namespace"), &rule.namespace)?;
        if !seen.insert(&rule.name) {
            return Err(ScriptError::invalid(
                format!("{at}.name"),
                format!("rule {} is declared twice", rule.name),
            ));
        }
        Selector::parse(&rule.selector).map_err(|e| {
            ScriptError::invalid(
                format!("{at}.selector"),
                format!("{:?} is not a label selector: {e}", rule.selector),
            )
        })?;
        let mut containers = BTreeSet::new();
        for (j, c) in rule.containers.iter().enumerate() {
            check_name(&format!("{at}.containers[{j}].name"), &c.name)?;
            if !containers.insert(&c.name) {
                return Err(ScriptError::invalid(
                    format!("{at}.containers[{j}]"),
                    format!("container {} is declared twice", c.name),
                ));
            }
        }
        if rule.containers.is_empty() && rule.metrics.is_empty() {
            return Err(ScriptError::invalid(
                at,
                "a rule gives containers or metrics (or both); this one gives neither",
            ));
        }
    }
    Ok(())
}

/// Checked rules with their selectors parsed once.
#[derive(Clone, Debug, Default)]
pub struct Compiled {
    rules: Vec<(RuleSpec, Selector)>,
}

impl Compiled {
    /// Compiles rules; a selector that does not parse (rules are checked
    /// before they get here) matches nothing.
    pub fn new(rules: &[RuleSpec]) -> Self {
        Self {
            rules: rules
                .iter()
                .filter_map(|r| Some((r.clone(), Selector::parse(&r.selector).ok()?)))
                .collect(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The pod the first matching rule makes of pod `namespace/name` with
    /// `labels`, if any rule matches.
    pub fn resolve(&self, namespace: &str, name: &str, labels: &Labels) -> Option<PodSpec> {
        let (rule, _) = self
            .rules
            .iter()
            .find(|(r, s)| r.namespace == namespace && s.matches(labels))?;
        Some(PodSpec {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            labels: labels.clone(),
            containers: rule.containers.clone(),
            missing: false,
            timestamp: rule.timestamp,
            window: rule.window,
            metrics: rule.metrics.clone(),
        })
    }

    /// Every pod of `inventory` some rule matches.
    pub fn resolve_all(&self, inventory: &Inventory) -> BTreeMap<(String, String), PodSpec> {
        if self.is_empty() {
            return BTreeMap::new();
        }
        inventory
            .pods
            .iter()
            .filter_map(|((ns, name), labels)| {
                Some(((ns.clone(), name.clone()), self.resolve(ns, name, labels)?))
            })
            .collect()
    }
}

/// The pods that exist, with their labels: what rules resolve against.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inventory {
    /// Labels by (namespace, name).
    pub pods: BTreeMap<(String, String), Labels>,
    /// Whether a source (a pod watch) has filled it at least once.
    pub synced: bool,
}

/// What a pod source reports.
#[derive(Clone, Debug, PartialEq)]
pub enum PodEvent {
    /// The pod exists with these labels (added or changed).
    Applied {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Labels.
        labels: Labels,
    },
    /// The pod is gone.
    Deleted {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// These are all the pods there are (a list, or a watch that restarted).
    Replaced(Vec<(String, String, Labels)>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Value;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn rule(name: &str, namespace: &str, selector: &str, cpu: &str) -> RuleSpec {
        RuleSpec {
            name: name.into(),
            namespace: namespace.into(),
            selector: selector.into(),
            containers: vec![ContainerSpec {
                name: "app".into(),
                cpu: Some(Value(cpu.into())),
                memory: None,
            }],
            ..RuleSpec::default()
        }
    }

    #[test]
    fn the_first_rule_that_matches_a_pods_namespace_and_labels_gives_its_values() {
        let compiled = Compiled::new(&[
            rule("web", "shop", "app=web", "100m"),
            rule("rest", "shop", "", "5m"),
            rule("other", "bank", "", "7m"),
        ]);
        let cpu = |ns: &str, l: &[(&str, &str)]| {
            compiled
                .resolve(ns, "p-7d9c5b-abcde", &labels(l))
                .and_then(|p| p.containers[0].cpu.clone())
                .map(|v| v.0)
        };
        // (namespace, pod labels, the cpu its rule gives)
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], Option<&'a str>);
        let table: [Case; 5] = [
            ("shop", &[("app", "web")], Some("100m")),
            ("shop", &[("app", "db")], Some("5m")),
            ("shop", &[], Some("5m")),
            ("bank", &[("app", "web")], Some("7m")),
            ("nowhere", &[("app", "web")], None),
        ];
        for (ns, l, want) in table {
            assert_eq!(cpu(ns, l).as_deref(), want, "{ns} {l:?}");
        }
        let pod = compiled
            .resolve("shop", "web-1", &labels(&[("app", "web")]))
            .unwrap();
        assert_eq!(
            pod.labels,
            labels(&[("app", "web")]),
            "the pod's own labels"
        );
    }

    #[test]
    fn bad_rules_name_their_field() {
        let table: [(Vec<RuleSpec>, &str); 5] = [
            (vec![rule("a", "ns", "app in (", "1m")], "rules[0].selector"),
            (
                vec![rule("a", "ns", "", "1m"), rule("a", "ns", "", "2m")],
                "rules[1].name",
            ),
            (vec![rule("", "ns", "", "1m")], "rules[0].name"),
            (vec![rule("a", "n s", "", "1m")], "rules[0].namespace"),
            (
                vec![RuleSpec {
                    name: "a".into(),
                    namespace: "ns".into(),
                    ..RuleSpec::default()
                }],
                "rules[0]",
            ),
        ];
        for (rules, field) in table {
            let err = check("rules", &rules).unwrap_err();
            assert!(
                err.to_string().contains(&format!("field {field}:")),
                "{field}: {err}"
            );
        }
        assert!(check("rules", &[rule("a", "ns", "app=web", "1m")]).is_ok());
    }

    #[test]
    fn every_pod_of_the_inventory_a_rule_matches_is_resolved() {
        let mut inventory = Inventory::default();
        for (ns, name, app) in [("a", "w-1", "w"), ("a", "x-1", "x"), ("b", "w-1", "w")] {
            inventory
                .pods
                .insert((ns.into(), name.into()), labels(&[("app", app)]));
        }
        let resolved = Compiled::new(&[rule("w", "a", "app=w", "1m")]).resolve_all(&inventory);
        assert_eq!(
            resolved.keys().cloned().collect::<Vec<_>>(),
            [("a".to_owned(), "w-1".to_owned())]
        );
        assert!(Compiled::default().resolve_all(&inventory).is_empty());
    }
}
