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
use std::sync::Arc;

use foldhash::HashMap as FastMap;
use hpa_core::Selector;
use hpa_core::pod::Labels;
use hpa_core::selector::Operator;

use super::memory::{Meter, table_bytes};

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

impl<K: Ord, V> Posting for Sorted<K, V> {
    fn len(&self) -> usize {
        Sorted::len(self)
    }
}

/// Entries by key, in key order: one held in place, more in a B-tree.
/// Most postings of a workload's labels hold one entry (each label of a
/// one-pod workload; an HPA's anchor value), and a B-tree's first node
/// has room for eleven entries: a few hundred bytes for one.
#[derive(Debug, Clone, PartialEq)]
pub enum Sorted<K, V> {
    /// One entry.
    One(K, V),
    /// None, or more than one.
    Many(BTreeMap<K, V>),
}

impl<K, V> Default for Sorted<K, V> {
    fn default() -> Self {
        Self::Many(BTreeMap::new())
    }
}

impl<K: Ord, V> Sorted<K, V> {
    /// The entries.
    pub fn len(&self) -> usize {
        match self {
            Self::One(..) => 1,
            Self::Many(map) => map.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `key`, to change.
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match self {
            Self::One(k, v) => (k.borrow() == key).then_some(v),
            Self::Many(map) => map.get_mut(key),
        }
    }

    /// Sets the value of `key`.
    pub fn insert(&mut self, key: K, value: V) {
        match self {
            Self::One(k, v) if *k == key => *v = value,
            Self::Many(map) if map.is_empty() => *self = Self::One(key, value),
            Self::Many(map) => {
                map.insert(key, value);
            }
            Self::One(..) => {
                let Self::One(k, v) = std::mem::take(self) else {
                    return;
                };
                *self = Self::Many(BTreeMap::from([(k, v), (key, value)]));
            }
        }
    }

    /// Removes `key`; whether it was there.
    pub fn remove<Q>(&mut self, key: &Q) -> bool
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match self {
            Self::One(k, _) if (*k).borrow() == key => {
                *self = Self::default();
                true
            }
            Self::One(..) => false,
            Self::Many(map) => {
                let removed = map.remove(key).is_some();
                if map.len() == 1
                    && let Some((k, v)) = map.pop_first()
                {
                    *self = Self::One(k, v);
                }
                removed
            }
        }
    }

    /// The entries, in key order.
    pub fn iter(&self) -> SortedIter<'_, K, V> {
        match self {
            Self::One(k, v) => SortedIter::One(Some((k, v))),
            Self::Many(map) => SortedIter::Many(map.iter()),
        }
    }

    /// The values, in key order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.iter().map(|(_, v)| v)
    }
}

/// The entries of a [`Sorted`], in key order.
#[derive(Debug)]
pub enum SortedIter<'a, K, V> {
    One(Option<(&'a K, &'a V)>),
    Many(std::collections::btree_map::Iter<'a, K, V>),
}

impl<'a, K, V> Iterator for SortedIter<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::One(one) => one.take(),
            Self::Many(iter) => iter.next(),
        }
    }
}

impl<'a, K: Ord, V> IntoIterator for &'a Sorted<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = SortedIter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
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

impl<P> Postings<P> {
    /// The bytes the index holds ([`crate::memory`]): its tables, keys and
    /// values, and each posting as `posting` counts it.
    pub fn footprint(&self, meter: &Meter, posting: impl Fn(&P) -> u64) -> u64 {
        let outer = table_bytes(
            self.by_key.capacity(),
            std::mem::size_of::<(String, FastMap<String, P>)>(),
        );
        outer
            + self
                .by_key
                .iter()
                .map(|(key, by_value)| {
                    meter.block(key.capacity())
                        + table_bytes(by_value.capacity(), std::mem::size_of::<(String, P)>())
                        + by_value
                            .iter()
                            .map(|(value, p)| meter.block(value.capacity()) + posting(p))
                            .sum::<u64>()
                })
                .sum::<u64>()
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
    /// Each entry's labels, compact: a list holds hundreds of entries. The
    /// pods of one workload carry the same labels: one set, shared, when
    /// built from their texts ([`Self::from_texts`]).
    labels: Vec<Arc<Labels>>,
    /// Positions of the entries carrying each label, ascending.
    postings: Postings<Vec<usize>>,
}

impl LabelIndex {
    /// The index of a list whose entries carry `labels`, in order (`None`:
    /// no labels).
    pub fn new(labels: impl IntoIterator<Item = Option<BTreeMap<String, String>>>) -> Self {
        let mut index = Self::default();
        for labels in labels {
            index.push(Arc::new(labels.map(Labels::from).unwrap_or_default()));
        }
        index
    }

    /// The index of a list whose entries carry labels given as their JSON
    /// texts (`None`: no labels), each distinct text parsed once: the pods
    /// of a workload share theirs (parsing every pod's was a tenth of a
    /// steady sync's instructions at 10 pods an HPA).
    pub fn from_texts<'a>(
        texts: impl IntoIterator<Item = Option<&'a str>>,
    ) -> Result<Self, serde_json::Error> {
        let mut index = Self::default();
        let mut parsed: FastMap<&str, Arc<Labels>> = FastMap::default();
        let none = Arc::new(Labels::default());
        // The entries of a workload come one after another (a list is
        // sorted by name): a run of one text is looked up once and
        // indexed as one range.
        let mut previous: Option<(Option<&str>, Arc<Labels>)> = None;
        let mut run_start = 0;
        for text in texts {
            let labels = match &previous {
                Some((last, labels)) if *last == text => Arc::clone(labels),
                _ => {
                    let labels = match text {
                        None => Arc::clone(&none),
                        Some(text) => match parsed.get(text) {
                            Some(labels) => Arc::clone(labels),
                            None => {
                                let map: BTreeMap<String, String> = serde_json::from_str(text)?;
                                let labels = Arc::new(Labels::from(map));
                                parsed.insert(text, Arc::clone(&labels));
                                labels
                            }
                        },
                    };
                    if let Some((_, last)) = previous.take() {
                        index.index_run(&last, run_start);
                    }
                    run_start = index.labels.len();
                    previous = Some((text, Arc::clone(&labels)));
                    labels
                }
            };
            index.labels.push(labels);
        }
        if let Some((_, last)) = previous {
            index.index_run(&last, run_start);
        }
        Ok(index)
    }

    /// Adds the next entry, carrying `labels`.
    fn push(&mut self, labels: Arc<Labels>) {
        let at = self.labels.len();
        self.labels.push(Arc::clone(&labels));
        self.index_run(&labels, at);
    }

    /// Indexes the entries from `start` to the last, all carrying `labels`.
    fn index_run(&mut self, labels: &Labels, start: usize) {
        let run = start..self.labels.len();
        for (key, value) in labels.iter() {
            match self.postings.get_mut(key, value) {
                Some(positions) => positions.extend(run.clone()),
                None => self.postings.insert(key, value, run.clone().collect()),
            }
        }
    }

    /// The bytes the index holds ([`crate::memory`]), each shared label
    /// set once.
    pub fn footprint(&self, meter: &Meter) -> u64 {
        let mut counted: foldhash::HashSet<*const Labels> = foldhash::HashSet::default();
        meter.buffer::<Arc<Labels>>(self.labels.capacity())
            + self
                .labels
                .iter()
                .filter(|labels| counted.insert(Arc::as_ptr(labels)))
                .map(|labels| {
                    meter.block(2 * std::mem::size_of::<usize>() + std::mem::size_of::<Labels>())
                        + meter.block(labels.slots_bytes())
                        + labels
                            .iter()
                            .map(|(k, v)| meter.block(k.len()) + meter.block(v.len()))
                            .sum::<u64>()
                })
                .sum::<u64>()
            + self.postings.footprint(meter, |positions| {
                meter.buffer::<usize>(positions.capacity())
            })
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

    /// One entry, then more, then fewer: always what a B-tree map of the
    /// same entries holds, in its order, one entry held in place.
    #[test]
    fn sorted_entries_hold_what_a_map_holds() {
        let mut sorted: Sorted<String, u32> = Sorted::default();
        let mut map: BTreeMap<String, u32> = BTreeMap::new();
        let steps: [(&str, Option<u32>); 9] = [
            ("b", Some(1)),
            ("b", Some(2)),
            ("a", Some(3)),
            ("c", Some(4)),
            ("a", None),
            ("c", None),
            ("x", None),
            ("b", None),
            ("d", Some(5)),
        ];
        for (key, value) in steps {
            match value {
                Some(v) => {
                    sorted.insert(key.to_string(), v);
                    map.insert(key.to_string(), v);
                }
                None => assert_eq!(sorted.remove(key), map.remove(key).is_some(), "{key}"),
            }
            let got: Vec<(&String, &u32)> = sorted.iter().collect();
            let want: Vec<(&String, &u32)> = map.iter().collect();
            assert_eq!(got, want, "after {key}");
            assert_eq!(sorted.len(), map.len());
            assert_eq!(
                matches!(sorted, Sorted::One(..)),
                map.len() == 1,
                "after {key}"
            );
        }
        *sorted.get_mut("d").unwrap() = 6;
        assert_eq!(sorted.values().collect::<Vec<_>>(), [&6]);
        assert!(sorted.get_mut("z").is_none());
    }

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

    /// Built from the entries' label texts, the index is the one built
    /// from the parsed labels; equal texts share one parsed set; a text
    /// that is not a label map is an error.
    #[test]
    fn an_index_from_texts_parses_each_distinct_text_once() {
        let texts = [
            Some(r#"{"app":"web","tier":"front"}"#),
            None,
            Some(r#"{"app":"web","tier":"front"}"#),
            Some(r#"{"app":"db"}"#),
            Some("{}"),
        ];
        let index = LabelIndex::from_texts(texts).unwrap();
        let parsed = texts.map(|t| t.map(|t| serde_json::from_str(t).unwrap()));
        assert_eq!(index, LabelIndex::new(parsed));
        assert!(Arc::ptr_eq(&index.labels[0], &index.labels[2]));
        assert!(!Arc::ptr_eq(&index.labels[0], &index.labels[3]));
        assert_eq!(index.select(&Selector::parse("app=web").unwrap()), [0, 2]);
        // Runs of one text (a workload's pods, listed together), at the
        // start, between others and at the end, indexed as each entry.
        let web = Some(r#"{"app":"web","tier":"front"}"#);
        let db = Some(r#"{"app":"db","tier":"back"}"#);
        let runs = [web, web, None, None, web, db, db, Some("{}"), db, db, db];
        let index = LabelIndex::from_texts(runs).unwrap();
        let parsed = runs.map(|t| t.map(|t| serde_json::from_str(t).unwrap()));
        assert_eq!(index, LabelIndex::new(parsed));
        assert_eq!(
            index.select(&Selector::parse("app=web").unwrap()),
            [0, 1, 4]
        );
        assert_eq!(
            index.select(&Selector::parse("tier=back").unwrap()),
            [5, 6, 8, 9, 10]
        );
        assert_eq!(index.select(&Selector::parse("!app").unwrap()), [2, 3, 7]);
        assert!(LabelIndex::from_texts([Some(r#"{"app":1}"#)]).is_err());
    }
}
