//! A pod's labels as the core keeps them: sorted by key, in one list.
//!
//! A `BTreeMap<String, String>` of a pod's few labels takes a whole B-tree
//! node (eleven slots, over 500 bytes) before any text; a controller
//! caching 100,000 one-pod workloads held 60 MB of them. [`Labels`] holds
//! the same pairs, sorted, in a list of their length, and answers the same
//! lookups. Selectors match anything that looks labels up by key
//! ([`LabelLookup`]): these, or a map.

use std::collections::BTreeMap;
use std::fmt;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// Looks a label up by key: what a selector matches against.
pub trait LabelLookup {
    /// The value of label `key`, if set.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelLookup for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// A pod's labels (see the module documentation). Equal, ordered, hashed,
/// printed and serialized as the map of the same pairs.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Labels(Box<[(Box<str>, Box<str>)]>);

impl Labels {
    /// No labels.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of label `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|at| &*self.0[at].1)
    }

    /// Whether label `key` is set.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The labels, by key.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    /// How many labels there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The heap bytes the list's slots take (its texts apart).
    pub fn slots_bytes(&self) -> usize {
        self.0.len() * std::mem::size_of::<(Box<str>, Box<str>)>()
    }
}

impl LabelLookup for Labels {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key)
    }
}

impl<L: LabelLookup + ?Sized> LabelLookup for &L {
    fn label(&self, key: &str) -> Option<&str> {
        (**self).label(key)
    }
}

impl<L: LabelLookup + ?Sized> LabelLookup for std::sync::Arc<L> {
    fn label(&self, key: &str) -> Option<&str> {
        (**self).label(key)
    }
}

impl From<&BTreeMap<String, String>> for Labels {
    fn from(map: &BTreeMap<String, String>) -> Self {
        // A map is sorted by key already.
        Self(
            map.iter()
                .map(|(k, v)| (Box::from(k.as_str()), Box::from(v.as_str())))
                .collect(),
        )
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Self {
        Self(
            map.into_iter()
                .map(|(k, v)| (k.into_boxed_str(), v.into_boxed_str()))
                .collect(),
        )
    }
}

/// As a map collects them: sorted by key, the last value of a key kept.
impl FromIterator<(String, String)> for Labels {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Self::from(pairs.into_iter().collect::<BTreeMap<_, _>>())
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Labels {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    /// Whatever way they are built, labels answer, print and serialize as
    /// the map of the same pairs does.
    #[test]
    fn labels_read_as_the_map_of_their_pairs() {
        let pairs = map(&[
            ("tier", "web"),
            ("app", "shop"),
            ("pod-template-hash", "7d9c"),
        ]);
        let built = [
            Labels::from(&pairs),
            Labels::from(pairs.clone()),
            pairs.clone().into_iter().collect::<Labels>(),
        ];
        for labels in &built {
            for key in ["app", "tier", "pod-template-hash", "missing", "", "zzz"] {
                assert_eq!(labels.get(key), pairs.get(key).map(String::as_str), "{key}");
                assert_eq!(labels.label(key), pairs.label(key), "{key}");
            }
            assert_eq!(
                labels.iter().collect::<Vec<_>>(),
                pairs
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect::<Vec<_>>()
            );
            assert_eq!(format!("{labels:?}"), format!("{pairs:?}"));
            assert_eq!(
                serde_json::to_string(labels).unwrap(),
                serde_json::to_string(&pairs).unwrap()
            );
            assert_eq!(labels, &built[0]);
        }
        assert!(Labels::new().is_empty() && Labels::new().get("app").is_none());
        let repeated: Labels = [("a", "1"), ("a", "2")]
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        assert_eq!(
            repeated.get("a"),
            Some("2"),
            "the last value wins, as in a map"
        );
        assert_eq!(repeated.len(), 1);
    }
}
