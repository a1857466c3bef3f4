//! Read-your-writes for HPA status (`StaleControllerConsistencyHPA`, beta
//! and on from Kubernetes 1.37; k/k #139025 and #139443).
//!
//! After writing an HPA's status the controller remembers the
//! resourceVersion the API server gave the write. Its next sync of that HPA
//! waits until the HPA watch has reached that version: a sync on an older
//! cache would compute from the status before the write (its conditions,
//! its `lastScaleTime`) and could write an older status back. Upstream's
//! consistency store (`pkg/controller/util/consistency`) compares with the
//! informer's last synced resourceVersion; ours with the largest
//! resourceVersion the HPA watch has delivered, the same quantity.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// How far a watch has got: the largest resourceVersion among its events
/// (deletions included), when resourceVersions are numbers (etcd's are).
#[derive(Debug, Default)]
pub struct WatchProgress(AtomicU64);

impl WatchProgress {
    /// Records an event's resourceVersion (non-numeric ones are ignored).
    pub fn observe(&self, resource_version: Option<&str>) {
        if let Some(rv) = resource_version.and_then(|r| r.parse::<u64>().ok()) {
            self.0.fetch_max(rv, Ordering::SeqCst);
        }
    }

    /// The largest resourceVersion seen (0: none yet).
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A sync that would read a cache older than the controller's own write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "read version: {read} is not as new as written version: {wrote} for group resource horizontalpodautoscalers.autoscaling"
)]
pub struct NotReady {
    /// What the watch has reached.
    pub read: u64,
    /// What the last status write returned.
    pub wrote: u64,
}

/// The last status write per HPA key, by object UID.
#[derive(Debug, Default)]
pub struct ConsistencyStore {
    written: Mutex<HashMap<String, (String, u64)>>,
    watch: Arc<WatchProgress>,
}

impl ConsistencyStore {
    /// The HPA watch's progress, which the runtime feeds.
    pub fn watch(&self) -> Arc<WatchProgress> {
        Arc::clone(&self.watch)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, (String, u64)>> {
        self.written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What the store holds ([`crate::memory`]).
    pub fn footprint(&self, meter: &super::memory::Meter) -> super::memory::Footprint {
        let written = self.lock();
        super::memory::Footprint {
            structure: std::borrow::Cow::Borrowed("status writes awaiting the watch"),
            entries: written.len(),
            bytes: meter.heap(&*written),
        }
    }

    /// Remembers that the status of `key` (object `uid`) was written at
    /// `resource_version` (ignored unless a number). A later write of the
    /// same object keeps the larger version; a new object replaces the record.
    pub fn wrote_at(&self, key: &str, uid: &str, resource_version: Option<&str>) {
        let Some(rv) = resource_version.and_then(|r| r.parse::<u64>().ok()) else {
            return;
        };
        let mut written = self.lock();
        match written.get_mut(key) {
            Some((known, wrote)) if known == uid => *wrote = (*wrote).max(rv),
            _ => {
                written.insert(key.to_owned(), (uid.to_owned(), rv));
            }
        }
    }

    /// Whether `key` may sync now: yes when nothing was written, when the
    /// watch has reached the write (the record is then dropped), or when the
    /// watch has not reported any version; no otherwise.
    pub fn ensure_ready(&self, key: &str) -> Result<(), NotReady> {
        let mut written = self.lock();
        let Some(&(_, wrote)) = written.get(key) else {
            return Ok(());
        };
        let read = self.watch.get();
        if read == 0 || read >= wrote {
            written.remove(key);
            // Every HPA writes its first status at once: the table grown
            // for them all is given back once they are confirmed.
            if written.capacity() > 64 && written.len() < written.capacity() / 8 {
                written.shrink_to_fit();
            }
            return Ok(());
        }
        Err(NotReady { read, wrote })
    }

    /// Forgets a deleted HPA.
    pub fn clear(&self, key: &str) {
        self.lock().remove(key);
    }

    /// How many HPAs have a write the watch has not confirmed yet.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no write waits for the watch.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_waits_until_the_watch_has_seen_the_status_write() {
        let store = ConsistencyStore::default();
        assert_eq!(store.ensure_ready("ns/web"), Ok(()), "nothing written");
        store.watch().observe(Some("10"));
        store.wrote_at("ns/web", "uid-1", Some("12"));
        assert_eq!(
            store.ensure_ready("ns/web"),
            Err(NotReady {
                read: 10,
                wrote: 12
            })
        );
        assert_eq!(
            NotReady {
                read: 10,
                wrote: 12
            }
            .to_string(),
            "read version: 10 is not as new as written version: 12 for group resource horizontalpodautoscalers.autoscaling"
        );
        store.watch().observe(Some("12"));
        assert_eq!(store.ensure_ready("ns/web"), Ok(()));
        assert!(store.is_empty(), "a confirmed write is forgotten");
    }

    #[test]
    fn writes_of_one_object_keep_the_newest_and_a_new_object_replaces_them() {
        let store = ConsistencyStore::default();
        store.watch().observe(Some("5"));
        store.wrote_at("ns/web", "uid-1", Some("9"));
        store.wrote_at("ns/web", "uid-1", Some("7"));
        assert_eq!(
            store.ensure_ready("ns/web"),
            Err(NotReady { read: 5, wrote: 9 })
        );
        store.wrote_at("ns/web", "uid-2", Some("6"));
        assert_eq!(
            store.ensure_ready("ns/web"),
            Err(NotReady { read: 5, wrote: 6 })
        );
        store.clear("ns/web");
        assert_eq!(store.ensure_ready("ns/web"), Ok(()));
    }

    #[test]
    fn unknown_versions_never_block() {
        let store = ConsistencyStore::default();
        store.wrote_at("ns/web", "uid-1", Some("not-a-number"));
        assert_eq!(store.ensure_ready("ns/web"), Ok(()));
        store.wrote_at("ns/web", "uid-1", Some("3"));
        // The watch has reported nothing numeric: as upstream, do not block.
        assert_eq!(store.ensure_ready("ns/web"), Ok(()));
    }
}
