//! Request accounting by verb and resource, so load runs can report API
//! requests per sync.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Counts of requests served, keyed by (verb, resource). Verbs are the
/// Kubernetes audit verbs (`get`, `list`, `watch`, `create`, `update`,
/// `patch`, `delete`, `deletecollection`); resources are `plural[/sub]` with
/// the group for non-core ones (`deployments.apps/scale`).
#[derive(Debug, Default)]
pub struct RequestStats {
    counts: Mutex<BTreeMap<(&'static str, String), u64>>,
}

impl RequestStats {
    pub(crate) fn record(&self, verb: &'static str, resource: &str) {
        let mut c = self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = c.get_mut(&(verb, resource.to_owned())) {
            *n += 1;
        } else {
            c.insert((verb, resource.to_owned()), 1);
        }
    }

    /// A snapshot of all counts.
    pub fn snapshot(&self) -> BTreeMap<(String, String), u64> {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|((v, r), n)| (((*v).to_owned(), r.clone()), *n))
            .collect()
    }

    /// The total over all verbs and resources.
    pub fn total(&self) -> u64 {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .sum()
    }

    /// Sets every count back to zero.
    pub fn reset(&self) {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}
