//! Wire types of the three Kubernetes metrics APIs.
//!
//! One definition for both sides: the fake server serializes these and the
//! controller deserializes them when it reads a real metrics server, so a
//! field name wrong here would show up in both places at once. Field names
//! follow the Go JSON tags of `k8s.io/metrics` exactly. A crate of their
//! own (not `hpa-core`, which decides, and not the fake server, which the
//! shipped controller must not link): serde types, nothing else.
//!
//! [`PodMetrics`] and [`NodeMetrics`] implement `k8s_openapi::Resource` and
//! `Metadata`, so kube's `Api<PodMetrics>` can get and list them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ListMeta, ObjectMeta, Time};
use serde::{Deserialize, Serialize};

/// Group of the resource metrics API.
pub const METRICS_GROUP: &str = "metrics.k8s.io";
/// Group of the custom metrics API.
pub const CUSTOM_GROUP: &str = "custom.metrics.k8s.io";
/// Group of the external metrics API.
pub const EXTERNAL_GROUP: &str = "external.metrics.k8s.io";

/// Resource usage of one container (`cpu`, `memory`, ...), as quantities.
pub type ResourceList = BTreeMap<String, Quantity>;

/// `metrics.k8s.io/v1beta1` PodMetrics: the usage of every container of a pod.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodMetrics {
    /// Always `metrics.k8s.io/v1beta1` when serialized by the server.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// Always `PodMetrics` when serialized by the server.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Name, namespace, labels and creation time of the pod.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// End of the window the usage was averaged over.
    pub timestamp: Time,
    /// Length of that window, as a Go duration string (`30s`, `1m0s`).
    pub window: String,
    /// Per-container usage.
    #[serde(default)]
    pub containers: Vec<ContainerMetrics>,
}

/// Usage of one container of a [`PodMetrics`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContainerMetrics {
    /// Container name.
    pub name: String,
    /// Usage by resource name.
    #[serde(default)]
    pub usage: ResourceList,
}

/// `metrics.k8s.io/v1beta1` PodMetricsList.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodMetricsList {
    /// `metrics.k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `PodMetricsList`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// List metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The pods.
    #[serde(default)]
    pub items: Vec<PodMetrics>,
}

/// `metrics.k8s.io/v1beta1` NodeMetrics: the usage of a node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeMetrics {
    /// `metrics.k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `NodeMetrics`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Name and labels of the node.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// End of the sampling window.
    pub timestamp: Time,
    /// Length of the window, as a Go duration string.
    pub window: String,
    /// Usage by resource name.
    #[serde(default)]
    pub usage: ResourceList,
}

/// `metrics.k8s.io/v1beta1` NodeMetricsList.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeMetricsList {
    /// `metrics.k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `NodeMetricsList`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// List metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The nodes.
    #[serde(default)]
    pub items: Vec<NodeMetrics>,
}

/// The object a custom metric describes (`describedObject`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// Kind, e.g. `Pod`, `Service`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Namespace; empty for root-scoped objects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// API version of the object, e.g. `/v1` or `apps/v1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
}

/// Identifies a custom metric series in v1beta2 (`metric`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricIdentifier {
    /// Metric name.
    pub name: String,
    /// The `metricLabelSelector` the series was selected with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// `custom.metrics.k8s.io/v1beta2` MetricValue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricValue {
    /// The object described.
    pub described_object: ObjectReference,
    /// The metric and the selector it was fetched with.
    pub metric: MetricIdentifier,
    /// End of the sampling window.
    pub timestamp: Time,
    /// Length of the window in seconds; absent means "unknown" (the HPA
    /// assumes one minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_seconds: Option<i64>,
    /// The value.
    pub value: Quantity,
}

/// `custom.metrics.k8s.io/v1beta2` MetricValueList.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricValueList {
    /// `custom.metrics.k8s.io/v1beta2`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `MetricValueList`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// List metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The values.
    #[serde(default)]
    pub items: Vec<MetricValue>,
}

/// `custom.metrics.k8s.io/v1beta1` MetricValue: the older shape, with the
/// metric name, window and selector flat on the item.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricValueV1Beta1 {
    /// The object described.
    pub described_object: ObjectReference,
    /// Metric name.
    pub metric_name: String,
    /// End of the sampling window.
    pub timestamp: Time,
    /// Length of the window in seconds.
    #[serde(default, rename = "window", skip_serializing_if = "Option::is_none")]
    pub window_seconds: Option<i64>,
    /// The value.
    pub value: Quantity,
    /// The `metricLabelSelector` the series was selected with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// `custom.metrics.k8s.io/v1beta1` MetricValueList.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricValueListV1Beta1 {
    /// `custom.metrics.k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `MetricValueList`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// List metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The values.
    #[serde(default)]
    pub items: Vec<MetricValueV1Beta1>,
}

/// `external.metrics.k8s.io/v1beta1` ExternalMetricValue: one series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalMetricValue {
    /// Metric name.
    pub metric_name: String,
    /// Labels of the series.
    #[serde(default)]
    pub metric_labels: BTreeMap<String, String>,
    /// End of the sampling window.
    pub timestamp: Time,
    /// Length of the window in seconds.
    #[serde(default, rename = "window", skip_serializing_if = "Option::is_none")]
    pub window_seconds: Option<i64>,
    /// The value.
    pub value: Quantity,
}

/// `external.metrics.k8s.io/v1beta1` ExternalMetricValueList.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalMetricValueList {
    /// `external.metrics.k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ExternalMetricValueList`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// List metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The series.
    #[serde(default)]
    pub items: Vec<ExternalMetricValue>,
}

impl k8s_openapi::Resource for PodMetrics {
    const API_VERSION: &'static str = "metrics.k8s.io/v1beta1";
    const GROUP: &'static str = METRICS_GROUP;
    const KIND: &'static str = "PodMetrics";
    const VERSION: &'static str = "v1beta1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::ListableResource for PodMetrics {
    const LIST_KIND: &'static str = "PodMetricsList";
}

impl k8s_openapi::Metadata for PodMetrics {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl k8s_openapi::Resource for NodeMetrics {
    const API_VERSION: &'static str = "metrics.k8s.io/v1beta1";
    const GROUP: &'static str = METRICS_GROUP;
    const KIND: &'static str = "NodeMetrics";
    const VERSION: &'static str = "v1beta1";
    const URL_PATH_SEGMENT: &'static str = "nodes";
    type Scope = k8s_openapi::ClusterResourceScope;
}

impl k8s_openapi::ListableResource for NodeMetrics {
    const LIST_KIND: &'static str = "NodeMetricsList";
}

impl k8s_openapi::Metadata for NodeMetrics {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_metrics_reads_a_metrics_server_body() {
        let body = r#"{"kind":"PodMetrics","apiVersion":"metrics.k8s.io/v1beta1",
            "metadata":{"name":"web-0","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},
            "timestamp":"2026-01-01T00:00:00Z","window":"15.011s",
            "containers":[{"name":"app","usage":{"cpu":"123456n","memory":"65536Ki"}}]}"#;
        let pm: PodMetrics = serde_json::from_str(body).unwrap();
        assert_eq!(pm.containers[0].usage["cpu"].0, "123456n");
        assert_eq!(pm.window, "15.011s");
    }

    #[test]
    fn v1beta2_metric_value_uses_described_object_and_metric() {
        let v = MetricValue {
            described_object: ObjectReference {
                kind: "Pod".into(),
                namespace: "default".into(),
                name: "web-0".into(),
                api_version: "/v1".into(),
            },
            metric: MetricIdentifier {
                name: "pps".into(),
                selector: None,
            },
            timestamp: Time(jiff::Timestamp::UNIX_EPOCH),
            window_seconds: Some(60),
            value: Quantity("100".into()),
        };
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["describedObject"]["apiVersion"], "/v1");
        assert_eq!(json["metric"]["name"], "pps");
        assert_eq!(json["windowSeconds"], 60);
    }

    #[test]
    fn v1beta1_metric_value_uses_flat_metric_name_and_window() {
        let body = r#"{"describedObject":{"kind":"Pod","name":"a"},"metricName":"pps",
            "timestamp":"2026-01-01T00:00:00Z","window":60,"value":"5"}"#;
        let v: MetricValueV1Beta1 = serde_json::from_str(body).unwrap();
        assert_eq!(v.metric_name, "pps");
        assert_eq!(v.window_seconds, Some(60));
    }
}
