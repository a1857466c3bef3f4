//! What the scenarios of one run share on a real cluster, where several run
//! at the same time (`--concurrency`), each in a namespace of its own:
//!
//! - `RunNamespaces`: the namespaces the run made and has not deleted
//!   yet, so that a run stopped by SIGINT or SIGTERM deletes them (a
//!   scenario's own `finish` does not run then);
//! - turns: scenarios that name the same namespace (`Given a namespace
//!   "shop"`) take it one after another.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// The run's shared state on one cluster.
#[derive(Debug, Default)]
pub struct RunShared {
    namespaces: Mutex<BTreeSet<String>>,
    named: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
}

/// A scenario's hold on a namespace it named.
pub type NamespaceTurn = OwnedMutexGuard<()>;

impl RunShared {
    /// Notes a namespace the run made.
    pub fn track(&self, namespace: &str) {
        self.with_namespaces(|n| n.insert(namespace.to_owned()));
    }

    /// Forgets a namespace the run deleted.
    pub fn untrack(&self, namespace: &str) {
        self.with_namespaces(|n| n.remove(namespace));
    }

    /// The namespaces the run made and has not deleted.
    pub fn namespaces(&self) -> Vec<String> {
        self.with_namespaces(|n| n.iter().cloned().collect())
    }

    fn with_namespaces<R>(&self, f: impl FnOnce(&mut BTreeSet<String>) -> R) -> R {
        let mut guard = self.namespaces.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    /// Waits until no other scenario of the run uses `namespace`.
    pub async fn namespace_turn(&self, namespace: &str) -> NamespaceTurn {
        let lock = {
            let mut named = self.named.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(named.entry(namespace.to_owned()).or_default())
        };
        lock.lock_owned().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn scenarios_naming_one_namespace_take_it_in_turn() {
        let shared = RunShared::default();
        let shop = shared.namespace_turn("shop").await;
        let _other = shared.namespace_turn("other").await;
        let again = tokio::time::timeout(Duration::from_millis(50), shared.namespace_turn("shop"));
        assert!(again.await.is_err());
        drop(shop);
        let _ = shared.namespace_turn("shop").await;
    }

    #[test]
    fn tracked_namespaces_are_listed_until_untracked() {
        let shared = RunShared::default();
        shared.track("hpa-scenario-b");
        shared.track("hpa-scenario-a");
        shared.untrack("hpa-scenario-b");
        assert_eq!(shared.namespaces(), ["hpa-scenario-a"]);
    }
}
