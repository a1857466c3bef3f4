//! Entries by label, so that a selector finds its entries without matching
//! every one: the one label index of the controller, in two uses.
//!
//! - The pod cache ([`crate::pod_index`]) keeps, per namespace, the pods
//!   carrying each label `key=value`, updated per watch event; reconciles
//!   read their target's pods through it (matching each selector against
//!   every pod of a namespace was a large share of the controller's CPU at
//!   10,000 HPAs: 100 HPAs and 1,000 pods per namespace).
//! - A namespace-wide `metrics.k8s.io` pod list is shared by the
//!   namespace's HPAs: [`LabelIndex`], built once per list, gives each
//!   HPA's selector its entries.
//!
//! Both are [`Postings`]: label key → label value → the entries carrying
//! it, with a fast hasher; a selector with an equality or `in` clause takes
//! the entries of its narrowest such clause ([`Postings::narrowest`]) and
//! matches only those. What a posting holds is each use's own, as reading
//! it needs: the pod cache's hold the pods themselves, by name (the order a
//! selection returns them in, without a second lookup per pod); a list's
//! hold positions, ascending (the list's order).

use std::collections::BTreeMap;

use foldhash::HashMap as FastMap;
use hpa_core::Selector;
use hpa_core::selector::Operator;

/// The entries carrying one label: how many there are.
pub trait Posting {
    /// The number of entries.
    fn len(&self) -> usize;

    /// Whether there are none (an empty posting leaves the index).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Posting for Vec<usize> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
}

impl<K, V> Posting for BTreeMap<K, V> {
    fn len(&self) -> usize {
        BTreeMap::len(self)
    }
}

/// Label key → label value → the posting of the entries carrying it.
#[derive(Debug, PartialEq)]
pub struct Postings<P> {
    by_key: FastMap<String, FastMap<String, P>>,
}

impl<P> Default for Postings<P> {
    fn default() -> Self {
        Self {
            by_key: FastMap::default(),
        }
    }
}

impl<P: Posting> Postings<P> {
    /// The posting of `key=value`, if any entry carries it.
    pub fn get_mut(&mut self, key: &str, value: &str) -> Option<&mut P> {
        self.by_key.get_mut(key)?.get_mut(value)
    }

    /// Adds the posting of `key=value`, which no entry carried yet (keys
    /// and values repeat across entries: copied once each, not once per
    /// entry).
    pub fn insert(&mut self, key: &str, value: &str, posting: P) {
        let by_value = match self.by_key.get_mut(key) {
            Some(by_value) => by_value,
            None => self.by_key.entry(key.to_owned()).or_default(),
        };
        by_value.insert(value.to_owned(), posting);
    }

    /// Takes an entry out of the posting of `key=value` with `remove`; a
    /// posting left empty leaves the index.
    pub fn remove_with(&mut self, key: &str, value: &str, remove: impl FnOnce(&mut P)) {
        let Some(by_value) = self.by_key.get_mut(key) else {
            return;
        };
        if let Some(posting) = by_value.get_mut(value) {
            remove(posting);
            if posting.is_empty() {
                by_value.remove(value);
            }
        }
        if by_value.is_empty() {
            self.by_key.remove(key);
        }
    }

    /// The postings of the narrowest equality or `in` clause of `selector`
    /// (the one admitting the fewest entries; the first of equals), one per
    /// value of the clause that some entry carries; `None` when `selector`
    /// has no such clause. Every entry `selector` matches is in them.
    pub fn narrowest<'s>(&'s self, selector: &Selector) -> Option<impl Iterator<Item = &'s P>> {
        let clause = selector
            .requirements()
            .iter()
            .filter(|r| {
                matches!(
                    r.operator,
                    Operator::Equals | Operator::DoubleEquals | Operator::In
                )
            })
            .min_by_key(|r| {
                let by_value = self.by_key.get(&r.key);
                r.values
                    .iter()
                    .filter_map(|v| by_value.and_then(|m| m.get(v)))
                    .map(P::len)
                    .sum::<usize>()
            })?;
        let by_value = self.by_key.get(&clause.key);
        Some(
            clause
                .values
                .iter()
                .filter_map(move |v| by_value.and_then(|m| m.get(v))),
        )
    }
}

/// A fixed list's entries by label (see the module documentation).
#[derive(Debug, Default, PartialEq)]
pub struct LabelIndex {
    labels: Vec<BTreeMap<String, String>>,
    /// Positions of the entries carrying each label, ascending.
    postings: Postings<Vec<usize>>,
}

impl LabelIndex {
    /// The index of a list whose entries carry `labels`, in order (`None`:
    /// no labels).
    pub fn new(labels: impl IntoIterator<Item = Option<BTreeMap<String, String>>>) -> Self {
        let mut index = Self::default();
        for (at, labels) in labels.into_iter().enumerate() {
            let labels = labels.unwrap_or_default();
            for (key, value) in &labels {
                match index.postings.get_mut(key, value) {
                    Some(positions) => positions.push(at),
                    None => index.postings.insert(key, value, vec![at]),
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
        let matches = |at: &usize| self.labels.get(*at).is_some_and(|l| selector.matches(l));
        match self.postings.narrowest(selector) {
            None => (0..self.labels.len()).filter(matches).collect(),
            Some(postings) => {
                let mut candidates: Vec<usize> = postings.flatten().copied().collect();
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
