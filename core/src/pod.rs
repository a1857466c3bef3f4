//! The decision core's pod: only what upstream's replica calculator reads.
//!
//! A k8s-openapi `Pod` is about a kilobyte of mostly empty fields; a shell
//! that reconciles thousands of HPAs a second would build ten of them per
//! reconcile. [`CorePod`] holds name, namespace, labels, deletion timestamp,
//! phase, start time, the Ready condition, the containers' and sidecars'
//! requests, pod-level requests and overhead, and nothing else, so a shell
//! can build it once per pod change and share it (`Arc`) between
//! reconciles. Callers holding a `Pod` convert it with `From<&Pod>`.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde::Serialize;

/// A resource list (`requests`, `overhead`); an absent list is empty.
pub type ResourceList = BTreeMap<String, Quantity>;

/// A pod's labels.
pub type Labels = BTreeMap<String, String>;

/// See the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CorePod {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.labels` (empty when unset: a selector matches both alike);
    /// shared, as pods of one workload usually carry the same.
    pub labels: Arc<Labels>,
    /// `metadata.deletionTimestamp`: a pod being deleted is ignored.
    pub deletion_timestamp: Option<Timestamp>,
    /// `status.phase` (`""` when unset).
    pub phase: String,
    /// `status.startTime`.
    pub start_time: Option<Timestamp>,
    /// The first `Ready` condition of `status.conditions`.
    pub ready: Option<ReadyCondition>,
    /// The requests of `spec`; shared, as the pods of one template have the
    /// same.
    pub spec: Arc<CorePodSpec>,
}

/// The parts of a pod's `spec` the replica calculator reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CorePodSpec {
    /// `spec.containers`.
    pub containers: Vec<CoreContainer>,
    /// `spec.initContainers` (sidecars are those restarting `Always`).
    pub init_containers: Vec<CoreContainer>,
    /// `spec.resources.requests` (pod-level requests, KEP-2837).
    pub requests: ResourceList,
    /// `spec.overhead`.
    pub overhead: ResourceList,
}

/// A pod's `Ready` condition: its status and last transition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadyCondition {
    /// `"True"`, `"False"` or `"Unknown"`.
    pub status: String,
    /// `lastTransitionTime`.
    pub last_transition_time: Option<Timestamp>,
}

/// A container's name, requests and restart policy (`Always` makes an
/// init container a sidecar).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CoreContainer {
    /// `name`.
    pub name: String,
    /// `resources.requests`.
    pub requests: ResourceList,
    /// `restartPolicy`.
    pub restart_policy: Option<String>,
}

impl CoreContainer {
    /// Whether an init container is a sidecar (`restartPolicy: Always`).
    pub fn is_sidecar(&self) -> bool {
        self.restart_policy.as_deref() == Some("Always")
    }
}

impl From<&Container> for CoreContainer {
    fn from(c: &Container) -> Self {
        Self {
            name: c.name.clone(),
            requests: c
                .resources
                .as_ref()
                .and_then(|r| r.requests.clone())
                .unwrap_or_default(),
            restart_policy: c.restart_policy.clone(),
        }
    }
}

impl From<&Pod> for CorePod {
    fn from(pod: &Pod) -> Self {
        let meta = &pod.metadata;
        let spec = pod.spec.as_ref();
        let status = pod.status.as_ref();
        let containers = |list: Option<&Vec<Container>>| {
            list.map(|l| l.iter().map(CoreContainer::from).collect())
                .unwrap_or_default()
        };
        Self {
            name: meta.name.clone().unwrap_or_default(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            labels: Arc::new(meta.labels.clone().unwrap_or_default()),
            deletion_timestamp: meta.deletion_timestamp.as_ref().map(|t| t.0),
            phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
            start_time: status.and_then(|s| s.start_time.as_ref()).map(|t| t.0),
            ready: status
                .and_then(|s| s.conditions.as_ref())
                .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
                .map(|c| ReadyCondition {
                    status: c.status.clone(),
                    last_transition_time: c.last_transition_time.as_ref().map(|t| t.0),
                }),
            spec: Arc::new(CorePodSpec {
                containers: containers(spec.map(|s| &s.containers)),
                init_containers: containers(spec.and_then(|s| s.init_containers.as_ref())),
                requests: spec
                    .and_then(|s| s.resources.as_ref())
                    .and_then(|r| r.requests.clone())
                    .unwrap_or_default(),
                overhead: spec.and_then(|s| s.overhead.clone()).unwrap_or_default(),
            }),
        }
    }
}

impl From<Pod> for CorePod {
    fn from(pod: Pod) -> Self {
        Self::from(&pod)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_pod_keeps_what_the_replica_calculator_reads() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "ns", "labels": {"app": "web"},
                         "annotations": {"a": "b"},
                         "deletionTimestamp": "2026-01-01T00:00:09Z"},
            "spec": {
                "resources": {"requests": {"cpu": "1"}},
                "overhead": {"cpu": "250m"},
                "containers": [{"name": "app", "image": "nginx",
                                "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "1"}}}],
                "initContainers": [{"name": "proxy", "restartPolicy": "Always",
                                    "resources": {"requests": {"cpu": "50m"}}},
                                   {"name": "migrate"}]
            },
            "status": {
                "phase": "Running",
                "startTime": "2026-01-01T00:00:00Z",
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Ready", "status": "False",
                     "lastTransitionTime": "2026-01-01T00:00:05Z"},
                    {"type": "Ready", "status": "True"}
                ]
            }
        }))
        .unwrap();
        let core = CorePod::from(&pod);
        let ts = |s: &str| s.parse::<Timestamp>().unwrap();
        assert_eq!(core.name, "web-1");
        assert_eq!(core.namespace, "ns");
        assert_eq!(core.labels["app"], "web");
        assert_eq!(core.deletion_timestamp, Some(ts("2026-01-01T00:00:09Z")));
        assert_eq!(core.phase, "Running");
        assert_eq!(core.start_time, Some(ts("2026-01-01T00:00:00Z")));
        // The first Ready condition, as upstream's lookup finds it.
        assert_eq!(
            core.ready,
            Some(ReadyCondition {
                status: "False".into(),
                last_transition_time: Some(ts("2026-01-01T00:00:05Z")),
            })
        );
        let spec = &core.spec;
        assert_eq!(spec.containers[0].name, "app");
        assert_eq!(spec.containers[0].requests["cpu"].0, "200m");
        assert!(spec.init_containers[0].is_sidecar());
        assert!(!spec.init_containers[1].is_sidecar());
        assert_eq!(spec.requests["cpu"].0, "1");
        assert_eq!(spec.overhead["cpu"].0, "250m");
    }

    #[test]
    fn an_empty_pod_converts_to_empty_fields() {
        let core = CorePod::from(&Pod::default());
        assert_eq!(core, CorePod::default());
    }
}
