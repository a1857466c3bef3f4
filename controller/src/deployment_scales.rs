//! The Deployment watch cache behind `scale_from_cache`: each Deployment is
//! kept as the `/scale` it would serve, built once per watch event. A sync
//! then reads its target's scale with two hash lookups; rebuilding it from
//! the Deployment every sync (parsing and printing its selector, copying
//! its metadata) was about 3 % of a sync's CPU at 10,000 HPAs, and the
//! Deployments themselves are no longer held.
//!
//! A Deployment whose selector does not parse stays cached without one
//! (a sync then GETs `/scale`, which says why), so that the cache's
//! resourceVersions match a list of Deployments: the harness waits for
//! that before a sync on demand, as it waits for the HPA and pod caches.
//!
//! Each is kept as the parts of its scale that differ between Deployments
//! ([`CachedScale`]), a third of a whole `Scale`'s bytes, and becomes a
//! `Scale` again when read.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use foldhash::HashMap as FastMap;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec, ScaleStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::runtime::watcher;

use super::memory::{Footprint, Meter, table_bytes};
use super::watch_store::{Change, WatchStore};
use crate::consistency::WatchProgress;

/// namespace → name → scale.
type Scales = FastMap<String, FastMap<String, CachedScale>>;

/// What a Deployment's `/scale` holds besides its name and namespace: its
/// identity (the update's optimistic lock), replicas and selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedScale {
    uid: Option<Box<str>>,
    resource_version: Option<Box<str>>,
    creation_timestamp: Option<Time>,
    spec_replicas: i32,
    status_replicas: i32,
    /// `None` when the Deployment's selector does not parse.
    selector: Option<Box<str>>,
}

impl CachedScale {
    fn of(scale: Scale) -> Self {
        let meta = scale.metadata;
        Self {
            uid: meta.uid.map(String::into_boxed_str),
            resource_version: meta.resource_version.map(String::into_boxed_str),
            creation_timestamp: meta.creation_timestamp,
            spec_replicas: scale.spec.and_then(|s| s.replicas).unwrap_or(0),
            status_replicas: scale.status.as_ref().map_or(0, |s| s.replicas),
            selector: scale
                .status
                .and_then(|s| s.selector)
                .map(String::into_boxed_str),
        }
    }

    /// The `/scale` of the Deployment `namespace/name`.
    fn to_scale(&self, namespace: &str, name: &str) -> Scale {
        Scale {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                uid: self.uid.as_deref().map(str::to_owned),
                resource_version: self.resource_version.as_deref().map(str::to_owned),
                creation_timestamp: self.creation_timestamp.clone(),
                ..ObjectMeta::default()
            },
            spec: Some(ScaleSpec {
                replicas: Some(self.spec_replicas),
            }),
            status: Some(ScaleStatus {
                replicas: self.status_replicas,
                selector: self.selector.as_deref().map(str::to_owned),
            }),
        }
    }
}

/// The scales of the watched Deployments (see the module doc). No ready
/// signal: the harness waits for the cache's resourceVersions to match a
/// list instead.
#[derive(Debug, Clone, Default)]
pub struct DeploymentScales {
    state: Arc<Mutex<WatchStore<Scales>>>,
    progress: Arc<WatchProgress>,
}

impl DeploymentScales {
    fn lock(&self) -> MutexGuard<'_, WatchStore<Scales>> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The scale of the Deployment `namespace/name`; `None` when it is not
    /// cached or its selector does not parse (a GET of `/scale` then says
    /// why).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Scale> {
        let state = self.lock();
        let cached = state.live().get(namespace)?.get(name)?;
        cached
            .selector
            .is_some()
            .then(|| cached.to_scale(namespace, name))
    }

    /// The resourceVersion of every cached Deployment, by `namespace/name`.
    pub fn versions(&self) -> BTreeMap<String, String> {
        self.lock()
            .live()
            .iter()
            .flat_map(|(namespace, scales)| {
                scales.iter().map(move |(name, scale)| {
                    (
                        format!("{namespace}/{name}"),
                        scale
                            .resource_version
                            .as_deref()
                            .unwrap_or_default()
                            .to_owned(),
                    )
                })
            })
            .collect()
    }

    /// How far the Deployment watch has got.
    pub fn progress(&self) -> u64 {
        self.progress.get()
    }

    /// Follows one watch event; a relist replaces everything once done.
    pub fn apply(&self, event: watcher::Event<Deployment>) {
        if let watcher::Event::Apply(d) | watcher::Event::InitApply(d) | watcher::Event::Delete(d) =
            &event
        {
            self.progress
                .observe(d.metadata.resource_version.as_deref());
        }
        // No ready signal to set (see the type's doc).
        let _listed = self.lock().apply(&event, |scales, change| match change {
            Change::Apply(deployment) => set(scales, deployment),
            Change::Delete(deployment) => remove(scales, deployment),
        });
    }
}

impl DeploymentScales {
    /// What the scale cache holds ([`crate::memory`]).
    pub fn footprint(&self, meter: &Meter) -> Footprint {
        let state = self.lock();
        let mut footprint = Footprint::new("scale cache (Deployments)");
        for scales in state.maps() {
            footprint.bytes += table_bytes(
                scales.capacity(),
                std::mem::size_of::<(String, FastMap<String, CachedScale>)>(),
            );
            for (namespace, by_name) in scales {
                footprint.entries += by_name.len();
                footprint.bytes += meter.block(namespace.capacity())
                    + table_bytes(
                        by_name.capacity(),
                        std::mem::size_of::<(String, CachedScale)>(),
                    )
                    + by_name
                        .iter()
                        .map(|(name, scale)| meter.block(name.capacity()) + meter.heap(scale))
                        .sum::<u64>();
            }
        }
        footprint
    }
}

fn names(deployment: &Deployment) -> (&str, &str) {
    (
        deployment.metadata.namespace.as_deref().unwrap_or_default(),
        deployment.metadata.name.as_deref().unwrap_or_default(),
    )
}

/// Records the scale of `deployment`.
fn set(scales: &mut Scales, deployment: &Deployment) {
    let (namespace, name) = names(deployment);
    let in_namespace = match scales.get_mut(namespace) {
        Some(found) => found,
        None => scales.entry(namespace.to_owned()).or_default(),
    };
    in_namespace.insert(
        name.to_owned(),
        CachedScale::of(scale_of_deployment(deployment)),
    );
}

/// Forgets the scale of `deployment`, and its namespace once empty.
fn remove(scales: &mut Scales, deployment: &Deployment) {
    let (namespace, name) = names(deployment);
    if let Some(by_name) = scales.get_mut(namespace) {
        by_name.remove(name);
        if by_name.is_empty() {
            scales.remove(namespace);
        }
    }
}

/// The `/scale` a Deployment would serve, from the Deployment itself: spec
/// and status replicas and its selector in the API's string form; no
/// selector when it does not parse (the GET then reports the error).
pub fn scale_of_deployment(deployment: &Deployment) -> Scale {
    let spec = &deployment.spec;
    let selector = hpa_core::Selector::from_label_selector(Some(&spec.selector))
        .ok()
        .map(|s| s.to_string());
    Scale {
        metadata: ObjectMeta {
            name: deployment.metadata.name.clone(),
            namespace: deployment.metadata.namespace.clone(),
            uid: deployment.metadata.uid.clone(),
            resource_version: deployment.metadata.resource_version.clone(),
            creation_timestamp: deployment.metadata.creation_timestamp.clone(),
            ..ObjectMeta::default()
        },
        spec: Some(ScaleSpec {
            replicas: Some(spec.replicas.unwrap_or(1)),
        }),
        status: Some(ScaleStatus {
            replicas: deployment
                .status
                .as_ref()
                .and_then(|s| s.replicas)
                .unwrap_or(0),
            selector,
        }),
    }
}

/// The scale of `target` from the Deployment cache `scales` (the
/// context's, `None` when that cache is off), when the target is a cached
/// `apps` Deployment.
pub(crate) fn cached_scale(
    scales: Option<&DeploymentScales>,
    target: &super::scale::ScaleTarget,
) -> Option<Arc<Scale>> {
    let scales = scales?;
    if target.resource.group != "apps" || target.resource.kind != "Deployment" {
        return None;
    }
    scales.get(&target.namespace, &target.name).map(Arc::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(name: &str, selector: serde_json::Value, replicas: i32) -> Deployment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": "7"},
            "spec": {"replicas": replicas, "selector": selector, "template": {}},
            "status": {"replicas": 2}
        }))
        .unwrap()
    }

    #[test]
    fn a_deployment_scale_carries_replicas_and_its_selector() {
        let d = deployment(
            "web",
            serde_json::json!({"matchLabels": {"b": "2", "a": "1"}}),
            3,
        );
        let scale = scale_of_deployment(&d);
        assert_eq!(scale.spec.unwrap().replicas, Some(3));
        let status = scale.status.unwrap();
        assert_eq!(status.replicas, 2);
        assert_eq!(status.selector.as_deref(), Some("a=1,b=2"));
        assert_eq!(scale.metadata.resource_version.as_deref(), Some("7"));
    }

    /// The cache gives back the scale the Deployment would serve, whole.
    #[test]
    fn a_cached_scale_reads_back_as_the_deployment_s_scale() {
        let mut d = deployment("web", serde_json::json!({"matchLabels": {"app": "web"}}), 3);
        d.metadata.uid = Some("u-1".into());
        let scales = DeploymentScales::default();
        scales.apply(watcher::Event::Apply(d.clone()));
        assert_eq!(scales.get("ns", "web"), Some(scale_of_deployment(&d)));
    }

    /// A Deployment whose selector stops parsing gives no scale (a GET
    /// says why) but stays known, so that the cache matches a list; a
    /// deleted one leaves, and its namespace with it once empty.
    #[test]
    fn deployments_that_leave_leave_no_empty_namespace() {
        let scales = DeploymentScales::default();
        let app = serde_json::json!({"matchLabels": {"app": "web"}});
        let bad = serde_json::json!({"matchExpressions": [{"key": "app", "operator": "Bogus"}]});
        scales.apply(watcher::Event::Apply(deployment("web", app.clone(), 3)));
        scales.apply(watcher::Event::Apply(deployment("web", bad.clone(), 3)));
        assert_eq!(replicas(&scales, "web"), None);
        assert_eq!(scales.versions().keys().collect::<Vec<_>>(), ["ns/web"]);
        scales.apply(watcher::Event::Delete(deployment("web", bad, 3)));
        assert!(scales.lock().live().is_empty());
        scales.apply(watcher::Event::Apply(deployment("db", app.clone(), 1)));
        scales.apply(watcher::Event::Delete(deployment("db", app, 1)));
        assert!(scales.lock().live().is_empty());
    }

    fn replicas(scales: &DeploymentScales, name: &str) -> Option<i32> {
        scales.get("ns", name)?.spec.as_ref()?.replicas
    }

    #[test]
    fn the_cache_follows_watch_events_and_relists() {
        let scales = DeploymentScales::default();
        let app = serde_json::json!({"matchLabels": {"app": "web"}});
        scales.apply(watcher::Event::Apply(deployment("web", app.clone(), 3)));
        scales.apply(watcher::Event::Apply(deployment("db", app.clone(), 1)));
        assert_eq!(replicas(&scales, "web"), Some(3));
        scales.apply(watcher::Event::Apply(deployment("web", app.clone(), 5)));
        assert_eq!(replicas(&scales, "web"), Some(5));
        scales.apply(watcher::Event::Delete(deployment("db", app.clone(), 1)));
        assert_eq!(replicas(&scales, "db"), None);
        assert_eq!(scales.get("other", "web"), None);
        // A relist replaces everything once done, not before.
        scales.apply(watcher::Event::Init);
        scales.apply(watcher::Event::InitApply(deployment("api", app.clone(), 2)));
        assert_eq!(replicas(&scales, "web"), Some(5));
        assert_eq!(replicas(&scales, "api"), None);
        scales.apply(watcher::Event::InitDone);
        assert_eq!(replicas(&scales, "web"), None);
        assert_eq!(replicas(&scales, "api"), Some(2));
    }

    #[test]
    fn a_selector_that_does_not_parse_is_left_to_the_get() {
        let scales = DeploymentScales::default();
        let good = serde_json::json!({"matchLabels": {"app": "web"}});
        let bad = serde_json::json!({"matchExpressions": [
            {"key": "app", "operator": "Sometimes", "values": ["web"]}]});
        scales.apply(watcher::Event::Apply(deployment("web", good, 3)));
        assert_eq!(replicas(&scales, "web"), Some(3));
        scales.apply(watcher::Event::Apply(deployment("web", bad, 4)));
        assert_eq!(scales.get("ns", "web"), None, "no stale scale left behind");
    }
}
