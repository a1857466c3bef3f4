//! The decision core's pod: only what upstream's replica calculator reads.
//!
//! A k8s-openapi `Pod` is about a kilobyte of mostly empty fields; a shell
//! that reconciles thousands of HPAs a second would build ten of them per
//! reconcile. [`CorePod`] holds name, namespace, labels, deletion timestamp,
//! phase, start time, the Ready condition, the containers' and sidecars'
//! requests, pod-level requests and overhead, and nothing else, so a shell
//! can build it once per pod change and share it (`Arc`) between
//! reconciles. Callers holding a `Pod` convert it with `From<&Pod>`; a
//! type of their own holding its parts converts through [`PodSource`].

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::Serialize;

/// A resource list (`requests`, `overhead`); an absent list is empty.
pub type ResourceList = BTreeMap<String, Quantity>;

/// A pod's labels, compact ([`crate::labels`]).
pub use crate::labels::Labels;

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

/// A pod as some type holds it, with the parts [`CorePod`] is built from:
/// k8s-openapi's [`Pod`], or a shell's slimmer decode of it (the
/// controller's pod watch reads only these fields). [`CorePod::from_source`]
/// is the one conversion of both, so the two cannot drift apart.
pub trait PodSource {
    /// The containers' type.
    type Container: ContainerSource;
    /// `metadata` (name, namespace, labels, deletion timestamp).
    fn metadata(&self) -> &ObjectMeta;
    /// `status.phase`.
    fn phase(&self) -> Option<&String>;
    /// `status.startTime`.
    fn start_time(&self) -> Option<&Time>;
    /// `status.conditions` as (type, status, last transition), in order.
    fn conditions(&self) -> impl Iterator<Item = (&str, &String, Option<&Time>)>;
    /// `spec.containers`.
    fn containers(&self) -> &[Self::Container];
    /// `spec.initContainers`.
    fn init_containers(&self) -> &[Self::Container];
    /// `spec.resources.requests`.
    fn requests(&self) -> Option<&ResourceList>;
    /// `spec.overhead`.
    fn overhead(&self) -> Option<&ResourceList>;
}

/// A container as some type holds it (see [`PodSource`]).
pub trait ContainerSource {
    /// `name`.
    fn name(&self) -> &String;
    /// `resources.requests`.
    fn requests(&self) -> Option<&ResourceList>;
    /// `restartPolicy`.
    fn restart_policy(&self) -> Option<&String>;
}

impl CoreContainer {
    /// The container as the core reads it.
    pub fn from_source(c: &impl ContainerSource) -> Self {
        Self {
            name: c.name().clone(),
            requests: c.requests().cloned().unwrap_or_default(),
            restart_policy: c.restart_policy().cloned(),
        }
    }
}

impl CorePodSpec {
    /// The spec part of [`CorePod::from_source`].
    pub fn from_source(pod: &impl PodSource) -> Self {
        let containers = |list: &[_]| list.iter().map(CoreContainer::from_source).collect();
        Self {
            containers: containers(pod.containers()),
            init_containers: containers(pod.init_containers()),
            requests: pod.requests().cloned().unwrap_or_default(),
            overhead: pod.overhead().cloned().unwrap_or_default(),
        }
    }
}

impl CorePod {
    /// The pod as the core reads it, with its labels and spec already
    /// built (shared with other pods holding the same).
    pub fn from_source(pod: &impl PodSource, labels: Arc<Labels>, spec: Arc<CorePodSpec>) -> Self {
        let meta = pod.metadata();
        Self {
            name: meta.name.clone().unwrap_or_default(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            labels,
            deletion_timestamp: meta.deletion_timestamp.as_ref().map(|t| t.0),
            phase: pod.phase().cloned().unwrap_or_default(),
            start_time: pod.start_time().map(|t| t.0),
            ready: pod.conditions().find(|(type_, ..)| *type_ == "Ready").map(
                |(_, status, last_transition_time)| ReadyCondition {
                    status: status.clone(),
                    last_transition_time: last_transition_time.map(|t| t.0),
                },
            ),
            spec,
        }
    }
}

/// Implements [`PodSource`] and [`ContainerSource`] for a pod type and its
/// container type laid out as k8s-openapi's `Pod` and `Container` are (the
/// same field names and nesting, with any subset of their fields): the one
/// definition of the accessors, for the full `Pod` here and for a shell's
/// slimmer decode of it (the controller's `SlimPod`).
#[macro_export]
macro_rules! impl_pod_source {
    ($pod:ty, $container:ty) => {
        impl $crate::pod::ContainerSource for $container {
            fn name(&self) -> &String {
                &self.name
            }
            fn requests(&self) -> Option<&$crate::pod::ResourceList> {
                self.resources.as_ref().and_then(|r| r.requests.as_ref())
            }
            fn restart_policy(&self) -> Option<&String> {
                self.restart_policy.as_ref()
            }
        }

        impl $crate::pod::PodSource for $pod {
            type Container = $container;
            fn metadata(&self) -> &$crate::pod::meta::ObjectMeta {
                &self.metadata
            }
            fn phase(&self) -> Option<&String> {
                self.status.as_ref().and_then(|s| s.phase.as_ref())
            }
            fn start_time(&self) -> Option<&$crate::pod::meta::Time> {
                self.status.as_ref().and_then(|s| s.start_time.as_ref())
            }
            fn conditions(
                &self,
            ) -> impl Iterator<Item = (&str, &String, Option<&$crate::pod::meta::Time>)> {
                self.status
                    .iter()
                    .filter_map(|s| s.conditions.as_ref())
                    .flatten()
                    .map(|c| (c.type_.as_str(), &c.status, c.last_transition_time.as_ref()))
            }
            fn containers(&self) -> &[$container] {
                self.spec.as_ref().map_or(&[], |s| &s.containers)
            }
            fn init_containers(&self) -> &[$container] {
                self.spec
                    .as_ref()
                    .and_then(|s| s.init_containers.as_deref())
                    .unwrap_or_default()
            }
            fn requests(&self) -> Option<&$crate::pod::ResourceList> {
                self.spec
                    .as_ref()
                    .and_then(|s| s.resources.as_ref())
                    .and_then(|r| r.requests.as_ref())
            }
            fn overhead(&self) -> Option<&$crate::pod::ResourceList> {
                self.spec.as_ref().and_then(|s| s.overhead.as_ref())
            }
        }
    };
}

/// The metadata types [`impl_pod_source`] names, so that a crate using it
/// needs no path of its own to them.
#[doc(hidden)]
pub mod meta {
    pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
}

impl_pod_source!(Pod, Container);

impl From<&Container> for CoreContainer {
    fn from(c: &Container) -> Self {
        Self::from_source(c)
    }
}

impl From<&Pod> for CorePod {
    fn from(pod: &Pod) -> Self {
        let labels = Arc::new(
            pod.metadata
                .labels
                .as_ref()
                .map(Labels::from)
                .unwrap_or_default(),
        );
        Self::from_source(pod, labels, Arc::new(CorePodSpec::from_source(pod)))
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
        assert_eq!(core.labels.get("app"), Some("web"));
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
