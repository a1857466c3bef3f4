//! A fixed list's entries by label, so that a selector finds its entries
//! without matching every one.
//!
//! A namespace-wide `metrics.k8s.io` pod list is shared by the namespace's
//! HPAs (100 of them over 1,000 pods in the load mix): matching each HPA's
//! selector against every entry cost more than the rest of its reconcile.
//! Built once per list, the index gives a selector with an equality or `in`
//! clause the entries that clause admits, and matches only those.

use std::collections::{BTreeMap, HashMap};

use hpa_core::Selector;
use hpa_core::selector::Operator;

/// See the module documentation.
#[derive(Debug, Default, PartialEq)]
pub struct LabelIndex {
    labels: Vec<BTreeMap<String, String>>,
    /// label key → label value → positions of the entries carrying it, ascending.
    postings: HashMap<String, HashMap<String, Vec<usize>>>,
}

impl LabelIndex {
    /// The index of a list whose entries carry `labels`, in order (`None`:
    /// no labels).
    pub fn new(labels: impl IntoIterator<Item = Option<BTreeMap<String, String>>>) -> Self {
        let mut index = Self::default();
        for (at, labels) in labels.into_iter().enumerate() {
            let labels = labels.unwrap_or_default();
            for (key, value) in &labels {
                // Keys and values repeat across a list's entries: copied
                // once each, not once per entry.
                if !index.postings.contains_key(key) {
                    index.postings.insert(key.clone(), HashMap::new());
                }
                let Some(by_value) = index.postings.get_mut(key) else {
                    continue;
                };
                match by_value.get_mut(value) {
                    Some(positions) => positions.push(at),
                    None => {
                        by_value.insert(value.clone(), vec![at]);
                    }
                }
            }
            index.labels.push(labels);
        }
        index
    }

    /// The positions of the entries `selector` matches, ascending: what
    /// matching every entry in order would give.
    pub fn select(&self, selector: &Selector) -> Vec<usize> {
        if selector.is_nothing() {
            return Vec::new();
        }
        let admitted = |values: &[String], by_value: Option<&HashMap<String, Vec<usize>>>| {
            values
                .iter()
                .filter_map(|v| by_value.and_then(|m| m.get(v)))
                .map(Vec::len)
                .sum::<usize>()
        };
        let narrowest = selector
            .requirements()
            .iter()
            .filter(|r| {
                matches!(
                    r.operator,
                    Operator::Equals | Operator::DoubleEquals | Operator::In
                )
            })
            .min_by_key(|r| admitted(&r.values, self.postings.get(&r.key)));
        let matches = |at: &usize| self.labels.get(*at).is_some_and(|l| selector.matches(l));
        match narrowest {
            None => (0..self.labels.len()).filter(matches).collect(),
            Some(clause) => {
                let Some(by_value) = self.postings.get(&clause.key) else {
                    return Vec::new();
                };
                let mut candidates: Vec<usize> = clause
                    .values
                    .iter()
                    .filter_map(|v| by_value.get(v))
                    .flatten()
                    .copied()
                    .collect();
                candidates.sort_unstable();
                candidates.dedup();
                candidates.retain(matches);
                candidates
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of clause, with and without an equality clause to narrow
    /// the candidates, selects what matching every entry selects, in order.
    #[test]
    fn the_label_index_selects_what_matching_every_entry_selects() {
        let entries: Vec<Option<BTreeMap<String, String>>> = [
            vec![("app", "web"), ("tier", "front"), ("v", "3")],
            vec![("app", "db"), ("tier", "back")],
            vec![("app", "web"), ("tier", "back"), ("v", "7")],
            vec![("app", "web"), ("canary", "yes")],
            vec![],
        ]
        .iter()
        .map(|labels| {
            Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                    .collect(),
            )
        })
        .chain([None])
        .collect();
        let index = LabelIndex::new(entries.iter().cloned());
        for selector in [
            "app=web",
            "app==web,tier=back",
            "app in (web,db)",
            "app in (db,web),tier notin (front)",
            "app=web,!canary",
            "tier",
            "!tier",
            "app!=web",
            "v>4",
            "app=web,v<4",
            "app=nope",
            "nope in (x)",
            "",
        ] {
            let parsed = Selector::parse(selector).unwrap();
            let expected: Vec<usize> = entries
                .iter()
                .enumerate()
                .filter(|(_, labels)| parsed.matches_opt(labels.as_ref()))
                .map(|(at, _)| at)
                .collect();
            assert_eq!(index.select(&parsed), expected, "{selector}");
        }
        assert!(index.select(&Selector::nothing()).is_empty());
    }
}
