//! Opt-in extensions for load testing and large fleets: an observer that
//! sees every reconcile's core inputs and decision (so a load run can replay
//! the pure core and count disagreements), and two request-saving caches.
//!
//! All are off by default ([`ControllerHandle::start`] uses
//! `Extensions::default()`), so the controller's upstream behaviour and API
//! traffic are unchanged unless a caller asks
//! ([`ControllerHandle::start_with`]).
//!
//! [`ControllerHandle::start`]: super::ControllerHandle::start
//! [`ControllerHandle::start_with`]: super::ControllerHandle::start_with

use std::sync::Arc;
use std::time::{Duration, Instant};

use hpa_core::decide::{Decision, RescaleOutcome};
use hpa_core::{DecisionInput, HpaHistory, Outcome};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec, ScaleStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Everything one reconcile gave the core and got back, so the core can be
/// replayed on exactly the same inputs.
#[derive(Debug, Clone)]
pub struct ReconcileObservation {
    /// `namespace/name` of the HPA.
    pub key: String,
    /// The inputs of `hpa_core::decide`.
    pub input: DecisionInput,
    /// The history `decide` was given.
    pub history: HpaHistory,
    /// The core configuration `decide` was given.
    pub config: hpa_core::ControllerConfig,
    /// `now` of `decide`.
    pub now: Timestamp,
    /// What `decide` returned.
    pub decision: Decision,
    /// What the shell reported to `finish` about the scale write.
    pub rescale: RescaleOutcome,
    /// `now` of `finish`.
    pub finished_at: Timestamp,
    /// What `finish` returned.
    pub outcome: Outcome,
    /// Wall-clock instant the reconcile started (dequeue).
    pub started: Instant,
    /// Wall time of the whole reconcile, status write and events included.
    pub duration: Duration,
}

/// Receives one observation per reconcile that reached the core's decision.
/// Called on the worker after the reconcile finished: keep it cheap (e.g.
/// send to a channel).
pub trait ReconcileObserver: Send + Sync {
    /// One reconcile's inputs, decision and timing.
    fn observe(&self, observation: ReconcileObservation);
}

/// Opt-in extensions of a controller run.
#[derive(Clone, Default)]
pub struct Extensions {
    /// Called after each reconcile that reached the core's decision.
    pub observer: Option<Arc<dyn ReconcileObserver>>,
    /// Read `apps/v1` Deployment scale targets from a Deployment watch cache
    /// instead of a GET of `/scale` per sync (falls back to the GET when the
    /// Deployment is not cached or its selector has expressions).
    pub scale_from_cache: bool,
    /// Share one namespace-wide `metrics.k8s.io` pod list among the HPAs of
    /// a namespace synced within this window, each filtering it by its own
    /// selector; `None`: one list per HPA and metric, as upstream.
    pub metrics_cache: Option<Duration>,
    /// With `metrics_cache`: also list external metric series once per
    /// namespace and metric and filter them by their labels (for servers
    /// that return every series without a selector; not KEDA).
    pub share_external: bool,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("observer", &self.observer.is_some())
            .field("scale_from_cache", &self.scale_from_cache)
            .field("metrics_cache", &self.metrics_cache)
            .field("share_external", &self.share_external)
            .finish()
    }
}

/// The `/scale` a Deployment would serve, from the Deployment itself: spec
/// and status replicas and its selector in the API's string form. `None`
/// when the selector does not parse (the GET then reports the error).
pub fn scale_of_deployment(deployment: &Deployment) -> Option<Scale> {
    let spec = deployment.spec.as_ref()?;
    let selector = hpa_core::Selector::from_label_selector(Some(&spec.selector)).ok()?;
    Some(Scale {
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
            selector: Some(selector.to_string()),
        }),
    })
}

/// The scale of `target` from the Deployment watch cache, when that cache
/// is on and the target is a cached `apps` Deployment.
pub(crate) fn cached_scale(
    ctx: &super::Context,
    target: &super::scale::ScaleTarget,
) -> Option<Scale> {
    let store = ctx.deployments.as_ref()?;
    if target.resource.group != "apps" || target.resource.kind != "Deployment" {
        return None;
    }
    let deployment = store
        .get(&kube::runtime::reflector::ObjectRef::new(&target.name).within(&target.namespace))?;
    scale_of_deployment(&deployment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_scale_carries_replicas_and_its_selector() {
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "ns", "resourceVersion": "7"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"b": "2", "a": "1"}},
                     "template": {}},
            "status": {"replicas": 2}
        }))
        .unwrap();
        let scale = scale_of_deployment(&d).unwrap();
        assert_eq!(scale.spec.unwrap().replicas, Some(3));
        let status = scale.status.unwrap();
        assert_eq!(status.replicas, 2);
        assert_eq!(status.selector.as_deref(), Some("a=1,b=2"));
        assert_eq!(scale.metadata.resource_version.as_deref(), Some("7"));
    }
}
