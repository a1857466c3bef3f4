//! The HPA watch cache: each HPA kept as the JSON text of what the API
//! server sent (less its managed fields), decoded when a sync reads it.
//!
//! A decoded k8s-openapi HPA takes about 4 KB for one metric: its types
//! are large in place (a `MetricSpec` is 808 bytes, a `MetricStatus` 688,
//! a label map's first node over 500), most of it empty. Its text is about
//! 1.3 KB, most of it the field names and condition messages every HPA
//! repeats, which [`CompactText`] writes as two bytes each: about 350
//! bytes are kept. Decoding (by [`crate::hpa_decode`]'s fast path) costs
//! a sync a few microseconds (see docs/load-report.md, "Where the bytes
//! go"). At 100,000 HPAs that is the difference between 400 and 50 MiB.
//! kube-controller-manager's informers drop managed fields too; nothing
//! the controller reads or writes uses them, and a status update without
//! them leaves the server's as they are.
//! Labels and annotations stay: a status update writes back the object it
//! read, and the HPA's status strategy keeps what the request carries.
//!
//! Each entry also keeps what the runtime compares without decoding: its
//! resourceVersion and generation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use foldhash::HashMap as FastMap;
use k8s_openapi::api::autoscaling::v2::{HorizontalPodAutoscaler, HorizontalPodAutoscalerStatus};
use kube::runtime::watcher;

use super::compact_text::CompactText;
use super::memory::{Footprint, Meter, table_bytes};
use super::watch_store::{Change, Ready, WatchStore};

/// One cached HPA (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedHpa {
    /// The HPA as JSON, shortened.
    text: CompactText,
    resource_version: Option<Box<str>>,
    generation: Option<i64>,
}

/// A cached HPA's text that does not decode (it was encoded from a decoded
/// HPA, so this means a bug, not bad input).
#[derive(Debug, thiserror::Error)]
#[error("the cached HPA does not decode")]
pub struct DecodeError(#[source] serde_json::Error);

impl CachedHpa {
    /// `hpa` as the cache keeps it.
    pub fn new(hpa: &HorizontalPodAutoscaler) -> Self {
        let text = if hpa.metadata.managed_fields.is_some() {
            let mut trimmed = hpa.clone();
            trimmed.metadata.managed_fields = None;
            serde_json::to_string(&trimmed)
        } else {
            serde_json::to_string(hpa)
        };
        let meta = &hpa.metadata;
        Self {
            // Serializing a decoded HPA cannot fail (string keys only).
            text: CompactText::new(&text.unwrap_or_default()),
            resource_version: meta.resource_version.as_deref().map(Box::from),
            generation: meta.generation,
        }
    }

    /// The HPA, decoded: by [`crate::hpa_decode`], else (a text it gives
    /// up on) by `serde_json`.
    pub fn hpa(&self) -> Result<HorizontalPodAutoscaler, DecodeError> {
        let text = self.text.text();
        match super::hpa_decode::hpa(&text) {
            Some(hpa) => Ok(hpa),
            None => serde_json::from_str(&text).map_err(DecodeError),
        }
    }

    /// Its status alone, decoded (`None`: it has none).
    pub fn status(&self) -> Result<Option<HorizontalPodAutoscalerStatus>, DecodeError> {
        #[derive(serde::Deserialize)]
        struct StatusOnly {
            status: Option<HorizontalPodAutoscalerStatus>,
        }
        serde_json::from_str::<StatusOnly>(&self.text.text())
            .map(|only| only.status)
            .map_err(DecodeError)
    }

    /// `metadata.uid` (decoded: for the harness's on-demand syncs).
    pub fn uid(&self) -> Option<String> {
        self.hpa().ok().and_then(|hpa| hpa.metadata.uid)
    }

    /// `metadata.resourceVersion`.
    pub fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }

    /// `metadata.generation`.
    pub fn generation(&self) -> Option<i64> {
        self.generation
    }

    /// The bytes it holds, its `Arc` included ([`crate::memory`]).
    pub fn footprint(&self, meter: &Meter) -> u64 {
        meter.block(2 * std::mem::size_of::<usize>() + std::mem::size_of::<Self>())
            + meter.block(self.text.len())
            + self
                .resource_version
                .as_ref()
                .map_or(0, |r| meter.block(r.len()))
    }
}

/// HPAs by key (`namespace/name`).
type Entries = FastMap<Box<str>, Arc<CachedHpa>>;

/// The HPA watch cache (see the module documentation). Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct HpaCache {
    state: Arc<RwLock<WatchStore<Entries>>>,
    ready: Ready,
}

fn key_of(hpa: &HorizontalPodAutoscaler) -> Box<str> {
    super::keys::key_of(&hpa.metadata).into_boxed_str()
}

impl HpaCache {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, WatchStore<Entries>> {
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Applies one watch event as kube's reflector store would: a relist
    /// (`Init` .. `InitDone`) replaces the cache when done, and the first
    /// marks it ready.
    pub fn apply(&self, event: &watcher::Event<HorizontalPodAutoscaler>) {
        let mut state = self
            .state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let listed = state.apply(event, |entries, change| match change {
            Change::Apply(hpa) => {
                entries.insert(key_of(hpa), Arc::new(CachedHpa::new(hpa)));
            }
            Change::Delete(hpa) => {
                entries.remove(&key_of(hpa));
            }
        });
        drop(state);
        if listed {
            self.ready.set();
        }
    }

    /// Waits until the first list is in the cache.
    pub async fn wait_until_ready(&self) {
        self.ready.wait().await;
    }

    /// The HPA `key` (`namespace/name`).
    pub fn get(&self, key: &str) -> Option<Arc<CachedHpa>> {
        self.read().live().get(key).cloned()
    }

    /// Whether `key` is cached.
    pub fn contains(&self, key: &str) -> bool {
        self.read().live().contains_key(key)
    }

    /// Every cached HPA's key, sorted.
    pub fn keys(&self) -> BTreeSet<String> {
        self.read().live().keys().map(|k| k.to_string()).collect()
    }

    /// Every cached HPA with its key.
    pub fn entries(&self) -> Vec<(String, Arc<CachedHpa>)> {
        self.read()
            .live()
            .iter()
            .map(|(k, v)| (k.to_string(), Arc::clone(v)))
            .collect()
    }

    /// Every cached HPA's resourceVersion by key.
    pub fn versions(&self) -> BTreeMap<String, String> {
        self.read()
            .live()
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    v.resource_version().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// The number of cached HPAs.
    pub fn len(&self) -> usize {
        self.read().live().len()
    }

    /// Whether no HPA is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the cache holds ([`crate::memory`]): each HPA's text and
    /// identity, the keys, the tables (a relist in progress included).
    pub fn footprint(&self, meter: &Meter) -> Footprint {
        let state = self.read();
        let mut footprint = Footprint::new("HPA cache");
        for entries in state.maps() {
            footprint.entries += entries.len();
            footprint.bytes += table_bytes(
                entries.capacity(),
                std::mem::size_of::<(Box<str>, Arc<CachedHpa>)>(),
            ) + entries
                .iter()
                .map(|(key, hpa)| meter.block(key.len()) + hpa.footprint(meter))
                .sum::<u64>();
        }
        footprint
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hpa(name: &str, rv: &str) -> HorizontalPodAutoscaler {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "labels": {"app": name},
                         "annotations": {"note": "kept"}, "resourceVersion": rv,
                         "uid": format!("u-{name}"), "generation": 2,
                         "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                "minReplicas": 1, "maxReplicas": 10,
                "metrics": [{"type": "External", "external": {
                    "metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}},
                    "target": {"type": "AverageValue", "averageValue": "5"}}}],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300,
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}
            },
            "status": {
                "currentReplicas": 2, "desiredReplicas": 3,
                "currentMetrics": [{"type": "External", "external": {
                    "metric": {"name": "queue"}, "current": {"averageValue": "7"}}}],
                "conditions": [{"type": "AbleToScale", "status": "True",
                    "reason": "SucceededRescale", "message": "m",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]
            }
        }))
        .unwrap()
    }

    /// A cached HPA decodes to the one received but for its managed
    /// fields: every field the controller reads or writes back is kept.
    #[test]
    fn a_cached_hpa_is_the_received_one_without_managed_fields() {
        let received = hpa("web", "7");
        let cached = CachedHpa::new(&received);
        let mut want = received.clone();
        want.metadata.managed_fields = None;
        assert_eq!(cached.hpa().unwrap(), want);
        // The text the cache keeps is one the fast path reads.
        assert_eq!(crate::hpa_decode::hpa(&cached.text.text()), Some(want));
        assert_eq!(cached.status().unwrap(), received.status);
        assert_eq!(
            (cached.uid(), cached.resource_version(), cached.generation()),
            (Some("u-web".to_string()), Some("7"), Some(2))
        );
        let bare = HorizontalPodAutoscaler::default();
        assert_eq!(CachedHpa::new(&bare).hpa().unwrap(), bare);
        assert_eq!(CachedHpa::new(&bare).status().unwrap(), None);
    }

    /// A text the fast path gives up on (an escaped quote and newline in
    /// an annotation) still decodes, by `serde_json`, to the same HPA.
    #[test]
    fn a_cached_hpa_the_fast_path_gives_up_on_decodes_all_the_same() {
        let mut received = hpa("web", "7");
        received.metadata.managed_fields = None;
        received
            .metadata
            .annotations
            .get_or_insert_default()
            .insert("note".into(), "say \"hi\"\n".into());
        let cached = CachedHpa::new(&received);
        assert_eq!(crate::hpa_decode::hpa(&cached.text.text()), None);
        assert_eq!(cached.hpa().unwrap(), received);
    }

    #[test]
    fn the_cache_follows_watch_events_and_relists() {
        let cache = HpaCache::default();
        cache.apply(&watcher::Event::Apply(hpa("web", "1")));
        cache.apply(&watcher::Event::Apply(hpa("db", "2")));
        cache.apply(&watcher::Event::Apply(hpa("web", "3")));
        assert_eq!(cache.get("ns/web").unwrap().resource_version(), Some("3"));
        cache.apply(&watcher::Event::Delete(hpa("db", "4")));
        assert!(!cache.contains("ns/db"));
        // A relist replaces everything once done, not before.
        cache.apply(&watcher::Event::Init);
        cache.apply(&watcher::Event::InitApply(hpa("api", "5")));
        assert!(cache.contains("ns/web") && !cache.contains("ns/api"));
        cache.apply(&watcher::Event::InitDone);
        assert_eq!(cache.keys().into_iter().collect::<Vec<_>>(), ["ns/api"]);
        assert_eq!(
            cache.versions(),
            BTreeMap::from([("ns/api".to_string(), "5".to_string())])
        );
        assert_eq!(cache.len(), 1);
    }

    #[tokio::test]
    async fn the_cache_is_ready_once_its_first_list_is_in() {
        let cache = HpaCache::default();
        cache.apply(&watcher::Event::Init);
        let waiting = tokio::spawn({
            let cache = cache.clone();
            async move { cache.wait_until_ready().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        cache.apply(&watcher::Event::InitDone);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
    }
}
