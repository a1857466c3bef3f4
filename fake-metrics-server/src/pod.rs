//! A pod and its containers' usage: declared by a script, or made by a
//! rule for a pod the script does not name.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::duration::{Duration, SampleTime};
use crate::labels::Labels;
use crate::metric::MetricSpec;
use crate::quantity::Value;

/// The namespace of an entry that names none.
pub(crate) fn default_namespace() -> String {
    "default".to_owned()
}

/// One pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodSpec {
    /// Namespace (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// Labels, matched by `labelSelector`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Labels,
    /// Containers and their usage. A container without `cpu` reports no cpu.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<ContainerSpec>,
    /// The pod exists but metrics.k8s.io leaves it out (a missing metric).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// Sample time of the resource metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<SampleTime>,
    /// Window of the resource metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Duration>,
    /// Custom metrics of this pod, by metric name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, MetricSpec>,
}

/// Usage of one container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerSpec {
    /// Container name.
    pub name: String,
    /// CPU usage (`250m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Value>,
    /// Memory usage (`64Mi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Value>,
}
