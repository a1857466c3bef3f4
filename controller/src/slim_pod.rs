//! The pod cache's object: the parts of a Pod the HPA controller reads, and
//! nothing else.
//!
//! A k8s-openapi `Pod` is a few kilobytes of mostly empty fields before any
//! of them is set; at 100,000 pods the watch cache of full pods was the
//! largest part of the controller's memory. The watch decodes straight into
//! [`SlimPod`] (unknown fields are skipped, never allocated), and the pod
//! cache turns each into the decision core's `CorePod` once per change. What is kept is what upstream's replica calculator reads:
//! name, namespace, labels, deletion timestamp; phase, start time, the Ready
//! condition; the containers' (and sidecars') names and requests, and the
//! pod-level requests.

use std::borrow::Cow;
use std::collections::BTreeMap;

use std::sync::Arc;

use hpa_core::pod::{CorePod, CorePodSpec, Labels};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Resource;
use serde::{Deserialize, Serialize};

/// A Pod as the HPA controller caches it. See the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SlimPod {
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<SlimSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SlimStatus>,
}

/// `spec`: containers, sidecars and pod-level requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlimSpec {
    #[serde(default)]
    pub containers: Vec<SlimContainer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<SlimContainer>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<SlimResources>,
    /// `spec.overhead`: added to pod-level requests (upstream `PodRequests`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<BTreeMap<String, Quantity>>,
}

/// A container's name, requests and (for init containers) restart policy,
/// which makes it a sidecar when `Always`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainer {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<SlimResources>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
}

/// Requests only: the HPA never reads limits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SlimResources {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<BTreeMap<String, Quantity>>,
}

/// `status`: phase, start time and the conditions' type, status and last
/// transition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlimStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<SlimCondition>>,
}

/// A pod condition as the readiness checks read it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlimCondition {
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

/// A Pod's API identity (`v1`, `pods`, namespaced): the watch and the list
/// go to the pods endpoint and decode into the slim form.
impl Resource for SlimPod {
    type DynamicType = ();
    type Scope = <Pod as Resource>::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        Pod::kind(dt)
    }
    fn group(dt: &()) -> Cow<'_, str> {
        Pod::group(dt)
    }
    fn version(dt: &()) -> Cow<'_, str> {
        Pod::version(dt)
    }
    fn plural(dt: &()) -> Cow<'_, str> {
        Pod::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

// The parts the core reads, converted by the core's one conversion
// (`CorePod::from_source`), which also converts a full `Pod`: the
// accessors are the core's, for the same field layout.
hpa_core::impl_pod_source!(SlimPod, SlimContainer);

impl SlimPod {
    /// Drops what the decision never reads and the slim form would still
    /// keep: managed fields, annotations, owner references, and the
    /// metadata the core never looks at (uid, generate name, creation time,
    /// finalizers), which every reconcile would otherwise copy 10 times.
    /// Kept: name, namespace, labels, deletion timestamp and resource
    /// version (the watch's progress).
    pub fn trim(&mut self) {
        let meta = &mut self.metadata;
        meta.managed_fields = None;
        meta.annotations = None;
        meta.owner_references = None;
        meta.uid = None;
        meta.generate_name = None;
        meta.creation_timestamp = None;
        meta.finalizers = None;
        meta.generation = None;
    }

    /// The pod the decision core reads, with everything it reads (as
    /// `CorePod::from(&Pod)` would build it from the full pod).
    pub fn to_core(&self) -> CorePod {
        self.to_core_with(
            Arc::new(
                self.metadata
                    .labels
                    .as_ref()
                    .map(Labels::from)
                    .unwrap_or_default(),
            ),
            Arc::new(self.core_spec()),
        )
    }

    /// The spec part of [`to_core`](Self::to_core).
    pub fn core_spec(&self) -> CorePodSpec {
        CorePodSpec::from_source(self)
    }

    /// [`to_core`](Self::to_core) with labels and spec already built (and
    /// shared with other pods holding the same).
    pub fn to_core_with(&self, labels: Arc<Labels>, spec: Arc<CorePodSpec>) -> CorePod {
        CorePod::from_source(self, labels, spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_pod() -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web-1", "namespace": "ns", "labels": {"app": "web"},
                "annotations": {"a": "b"}, "resourceVersion": "12", "uid": "u-1",
                "generateName": "web-", "creationTimestamp": "2026-01-01T00:00:00Z",
                "deletionTimestamp": "2026-01-01T00:00:09Z",
                "managedFields": [{"manager": "kubectl", "operation": "Update"}]
            },
            "spec": {
                "nodeName": "n1",
                "resources": {"requests": {"cpu": "1"}},
                "overhead": {"cpu": "250m"},
                "containers": [{
                    "name": "app", "image": "nginx",
                    "env": [{"name": "A", "value": "1"}],
                    "resources": {"requests": {"cpu": "200m", "memory": "64Mi"},
                                  "limits": {"cpu": "1"}}
                }],
                "initContainers": [{
                    "name": "proxy", "image": "envoy", "restartPolicy": "Always",
                    "resources": {"requests": {"cpu": "50m"}}
                }]
            },
            "status": {
                "phase": "Running",
                "startTime": "2026-01-01T00:00:00Z",
                "podIP": "10.0.0.1",
                "conditions": [
                    {"type": "Ready", "status": "True",
                     "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "x"},
                    {"type": "PodScheduled", "status": "True"}
                ],
                "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                                       "image": "nginx", "imageID": "sha"}]
            }
        })
    }

    /// The slim form keeps every field the decision core reads, so the
    /// decision is the same whether it reads the full pod or the slim one.
    #[test]
    fn a_slim_pod_keeps_every_field_the_core_reads() {
        let full: Pod = serde_json::from_value(full_pod()).unwrap();
        let mut slim: SlimPod = serde_json::from_value(full_pod()).unwrap();
        slim.trim();
        assert_eq!(slim.metadata.resource_version.as_deref(), Some("12"));
        assert_eq!(slim.metadata.managed_fields, None);
        assert_eq!(slim.metadata.uid, None);
        let core = slim.to_core();
        assert_eq!(core, CorePod::from(&full));
        // Every field the core reads is set in this pod, so the comparison
        // above covers each of them.
        assert!(core.deletion_timestamp.is_some() && core.start_time.is_some());
        assert!(core.ready.is_some() && !core.labels.is_empty());
        assert!(!core.spec.requests.is_empty() && !core.spec.overhead.is_empty());
        assert!(core.spec.init_containers[0].is_sidecar());
        assert!(!core.spec.containers[0].requests.is_empty());
    }

    #[test]
    fn a_slim_pod_goes_to_the_pods_endpoint() {
        assert_eq!(SlimPod::kind(&()), "Pod");
        assert_eq!(SlimPod::plural(&()), "pods");
        assert_eq!(SlimPod::api_version(&()), "v1");
    }
}
