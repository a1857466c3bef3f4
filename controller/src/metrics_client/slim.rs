//! The shared namespace-wide metrics lists as the controller decodes them
//! (`metrics.k8s.io` pods, and `custom.metrics.k8s.io` `pods/*/METRIC`):
//! only what the core reads, borrowed from the response body where it is
//! not kept.
//!
//! At 10,000 HPAs the namespace lists (1,000 pods each, one per namespace
//! per window) were decoded into `hpa_metrics_api::PodMetricsList` and then
//! converted: every entry's `ObjectMeta` (creation timestamp parsed, every
//! string allocated), its quantities and window as owned strings, all
//! dropped right after the conversion. These types read the same JSON
//! straight into what the conversion needs: the pod's name, namespace and
//! labels, the timestamp, the window, and each container's name and usage.
//!
//! The fields read are decoded with the same types (or types with the same
//! error texts: a borrowed `Cow<str>` expects "a string" as `String` does)
//! and the same struct names as `hpa_metrics_api`'s, so a body that fails
//! in those fields fails with the same serde error. Fields the core never
//! reads (the entries' other metadata, the list's `metadata` excepted) are
//! skipped, not checked: a malformed value there (a creation timestamp
//! that is not a time, say) no longer fails the list, where the full decode
//! (and client-go's) would. The core's decisions read none of them.
//!
//! The custom metrics values likewise keep only the described object's
//! name, the timestamp, the window and the value; the described object's
//! other fields and the metric's name are decoded (borrowed) as strings,
//! the metric's `selector`, never read, is skipped.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Time};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::raw::{CustomValue, CustomVersion, QuantityText, RawPod};

/// `metrics.k8s.io/v1beta1` PodMetricsList (see the module documentation),
/// its entries decoded as `I`: [`PodMetrics`], or [`RawPodMetrics`] with
/// parts kept as text.
#[derive(Debug, Deserialize)]
#[serde(rename = "PodMetricsList", bound(deserialize = "I: Deserialize<'de>"))]
pub struct PodMetricsList<'a, I = PodMetrics<'a>> {
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "apiVersion")]
    _api_version: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "kind")]
    _kind: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it (once per list).
    #[serde(default, rename = "metadata")]
    _metadata: ListMeta,
    /// The pods.
    #[serde(default)]
    pub items: Vec<I>,
}

/// `metrics.k8s.io/v1beta1` PodMetrics, without the metadata the core
/// never reads.
#[derive(Debug, Deserialize)]
#[serde(rename = "PodMetrics")]
pub struct PodMetrics<'a> {
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "apiVersion")]
    _api_version: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "kind")]
    _kind: Cow<'a, str>,
    /// The pod's name, namespace and labels.
    #[serde(default, borrow)]
    pub metadata: Meta<'a>,
    /// End of the window the usage was averaged over.
    pub timestamp: Time,
    /// Length of that window, as a Go duration string.
    #[serde(borrow)]
    pub window: Cow<'a, str>,
    /// Per-container usage.
    #[serde(default, borrow)]
    pub containers: Vec<ContainerMetrics<'a>>,
}

/// Usage of one container.
#[derive(Debug, Deserialize)]
#[serde(rename = "ContainerMetrics")]
pub struct ContainerMetrics<'a> {
    /// Container name (kept by the core: owned).
    pub name: String,
    /// Usage by resource name (kept: owned), as the quantities' text.
    #[serde(default, borrow)]
    pub usage: BTreeMap<String, QuantityText<'a>>,
}

/// `metrics.k8s.io/v1beta1` PodMetricsList with each entry's labels,
/// timestamp and containers kept as their JSON text (checked to be JSON,
/// not decoded): the controller decodes a text only when the previous
/// window's list did not hold the same one.
pub type RawPodMetricsList<'a> = PodMetricsList<'a, RawPodMetrics<'a>>;

/// [`PodMetrics`] with its labels, timestamp and containers as JSON text:
/// decoding each text as the matching field of [`PodMetrics`] gives what
/// [`PodMetrics`] holds (but see [`Meta::labels_repeated`]).
#[derive(Debug, Deserialize)]
#[serde(rename = "PodMetrics")]
pub struct RawPodMetrics<'a> {
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "apiVersion")]
    _api_version: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "kind")]
    _kind: Cow<'a, str>,
    /// The pod's name and namespace, and its labels' text.
    #[serde(default, borrow)]
    pub metadata: Meta<'a, &'a RawValue>,
    /// The text of `timestamp`.
    #[serde(borrow)]
    pub timestamp: &'a RawValue,
    /// Length of that window, as a Go duration string.
    #[serde(borrow)]
    pub window: Cow<'a, str>,
    /// The text of `containers`, `null` included (which fails to decode,
    /// as it fails [`PodMetrics`]); `None` when absent.
    #[serde(default, borrow, deserialize_with = "present")]
    pub containers: Option<&'a RawValue>,
}

impl<'a> From<RawPodMetrics<'a>> for RawPod<'a> {
    fn from(item: RawPodMetrics<'a>) -> Self {
        Self {
            name: item.metadata.name,
            namespace: item.metadata.namespace,
            labels: item.metadata.labels.map(RawValue::get),
            labels_repeated: item.metadata.labels_repeated,
            timestamp: item.timestamp.get(),
            window: item.window,
            containers: item.containers.map(RawValue::get),
        }
    }
}

/// A pod metrics list body read whole by serde, as the scanner
/// ([`super::scan::pod_metrics`]) gives it: the decode of the shapes the
/// scanner leaves, and its oracle in tests and fuzzing.
pub fn raw_pods(text: &str) -> Result<Vec<RawPod<'_>>, serde_json::Error> {
    let list: RawPodMetricsList<'_> = serde_json::from_str(text)?;
    Ok(list.items.into_iter().map(RawPod::from).collect())
}

/// A custom metrics list body of `version` read whole by serde, its
/// timestamps as text, as the scanner ([`super::scan::custom_values`])
/// gives it: the scanner's oracle in tests and fuzzing.
pub fn raw_custom_values(
    text: &str,
    version: CustomVersion,
) -> Result<Vec<CustomValue<'_, &str>>, serde_json::Error> {
    let values: Vec<CustomValue<'_, &RawValue>> = match version {
        CustomVersion::V1Beta2 => serde_json::from_str::<MetricValueList<'_, &RawValue>>(text)?
            .into_values()
            .collect(),
        CustomVersion::V1Beta1 => {
            serde_json::from_str::<MetricValueListV1Beta1<'_, &RawValue>>(text)?
                .into_values()
                .collect()
        }
    };
    Ok(values.into_iter().map(CustomValue::raw_text).collect())
}

/// A field's JSON text, whatever it holds: `null` is text too, not `None`.
fn present<'de: 'a, 'a, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue>::deserialize(deserializer).map(Some)
}

/// A JSON string, borrowed from the body unless it holds escapes. A type
/// of its own because a `Cow<str>` decoded as an `Option`'s content (or a
/// map's value) is always owned: only a field marked `borrow` borrows.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct Text<'a>(#[serde(borrow)] pub Cow<'a, str>);

/// The parts of an entry's `ObjectMeta` the core reads. Decoded as
/// k8s-openapi decodes `ObjectMeta` (a map, expecting "ObjectMeta"; a field
/// given twice: the last one), every other field skipped. The labels are
/// `L`: decoded (kept by the label index: owned), or their JSON text.
#[derive(Debug)]
pub struct Meta<'a, L = BTreeMap<String, String>> {
    /// `metadata.name`.
    pub name: Option<Cow<'a, str>>,
    /// `metadata.namespace`.
    pub namespace: Option<Cow<'a, str>>,
    /// `metadata.labels`.
    pub labels: Option<L>,
    /// `labels` was given more than once. Decoded, the last one is kept
    /// but a malformed earlier one fails; kept as text, only the last one
    /// is ever decoded, so a caller reading the text must not trust it.
    pub labels_repeated: bool,
}

impl<L> Default for Meta<'_, L> {
    fn default() -> Self {
        Self {
            name: None,
            namespace: None,
            labels: None,
            labels_repeated: false,
        }
    }
}

impl<'de: 'a, 'a, L: Deserialize<'de>> Deserialize<'de> for Meta<'a, L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// A metadata key: one the core reads, or another.
        enum Field {
            Name,
            Namespace,
            Labels,
            Other,
        }

        impl<'de> Deserialize<'de> for Field {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct FieldVisitor;

                impl Visitor<'_> for FieldVisitor {
                    type Value = Field;

                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("field identifier")
                    }

                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Field, E> {
                        Ok(match v {
                            "name" => Field::Name,
                            "namespace" => Field::Namespace,
                            "labels" => Field::Labels,
                            _ => Field::Other,
                        })
                    }
                }

                deserializer.deserialize_identifier(FieldVisitor)
            }
        }

        struct MetaVisitor<'a, L>(PhantomData<Meta<'a, L>>);

        impl<'de: 'a, 'a, L: Deserialize<'de>> Visitor<'de> for MetaVisitor<'a, L> {
            type Value = Meta<'a, L>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("ObjectMeta")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Meta<'a, L>, A::Error> {
                let mut labels_seen = false;
                let mut meta = Meta::default();
                while let Some(key) = map.next_key::<Field>()? {
                    match key {
                        Field::Name => {
                            meta.name = map.next_value::<Option<Text<'a>>>()?.map(|t| t.0);
                        }
                        Field::Namespace => {
                            meta.namespace = map.next_value::<Option<Text<'a>>>()?.map(|t| t.0);
                        }
                        Field::Labels => {
                            meta.labels_repeated |= labels_seen;
                            labels_seen = true;
                            meta.labels = map.next_value()?;
                        }
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(meta)
            }
        }

        deserializer.deserialize_struct(
            "ObjectMeta",
            &["name", "namespace", "labels"],
            MetaVisitor(PhantomData),
        )
    }
}

/// `custom.metrics.k8s.io/v1beta2` MetricValueList (see the module
/// documentation). Its values' timestamps are `S`: decoded, or their JSON
/// text.
#[derive(Debug, Deserialize)]
#[serde(rename = "MetricValueList", bound(deserialize = "S: Deserialize<'de>"))]
pub struct MetricValueList<'a, S = Time> {
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "apiVersion")]
    _api_version: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "kind")]
    _kind: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it (once per list).
    #[serde(default, rename = "metadata")]
    _metadata: ListMeta,
    /// The values.
    #[serde(default, borrow)]
    pub items: Vec<MetricValue<'a, S>>,
}

/// `custom.metrics.k8s.io/v1beta2` MetricValue.
#[derive(Debug, Deserialize)]
#[serde(rename = "MetricValue", rename_all = "camelCase")]
pub struct MetricValue<'a, S = Time> {
    /// The object described.
    #[serde(borrow)]
    pub described_object: ObjectReference<'a>,
    /// The metric (its name; its selector skipped).
    #[serde(borrow, rename = "metric")]
    _metric: MetricIdentifier<'a>,
    /// End of the sampling window.
    pub timestamp: S,
    /// Length of the window in seconds.
    #[serde(default)]
    pub window_seconds: Option<i64>,
    /// The value.
    #[serde(borrow)]
    pub value: QuantityText<'a>,
}

/// `custom.metrics.k8s.io/v1beta1` MetricValueList.
#[derive(Debug, Deserialize)]
#[serde(
    rename = "MetricValueListV1Beta1",
    bound(deserialize = "S: Deserialize<'de>")
)]
pub struct MetricValueListV1Beta1<'a, S = Time> {
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "apiVersion")]
    _api_version: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "kind")]
    _kind: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it (once per list).
    #[serde(default, rename = "metadata")]
    _metadata: ListMeta,
    /// The values.
    #[serde(default, borrow)]
    pub items: Vec<MetricValueV1Beta1<'a, S>>,
}

/// `custom.metrics.k8s.io/v1beta1` MetricValue (selector skipped).
#[derive(Debug, Deserialize)]
#[serde(rename = "MetricValueV1Beta1", rename_all = "camelCase")]
pub struct MetricValueV1Beta1<'a, S = Time> {
    /// The object described.
    #[serde(borrow)]
    pub described_object: ObjectReference<'a>,
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(borrow, rename = "metricName")]
    _metric_name: Cow<'a, str>,
    /// End of the sampling window.
    pub timestamp: S,
    /// Length of the window in seconds.
    #[serde(default, rename = "window")]
    pub window_seconds: Option<i64>,
    /// The value.
    #[serde(borrow)]
    pub value: QuantityText<'a>,
}

/// A custom metrics list of either version, as its values.
pub trait CustomList<'a, S> {
    /// The list's values, in order.
    fn into_values(self) -> impl Iterator<Item = CustomValue<'a, S>>;
}

impl<'a, S> CustomList<'a, S> for MetricValueList<'a, S> {
    fn into_values(self) -> impl Iterator<Item = CustomValue<'a, S>> {
        self.items.into_iter().map(|v| CustomValue {
            name: v.described_object.name,
            value: v.value,
            timestamp: v.timestamp,
            window_seconds: v.window_seconds,
        })
    }
}

impl<'a, S> CustomList<'a, S> for MetricValueListV1Beta1<'a, S> {
    fn into_values(self) -> impl Iterator<Item = CustomValue<'a, S>> {
        self.items.into_iter().map(|v| CustomValue {
            name: v.described_object.name,
            value: v.value,
            timestamp: v.timestamp,
            window_seconds: v.window_seconds,
        })
    }
}

/// The object a custom metric describes: its name is read.
#[derive(Debug, Deserialize)]
#[serde(rename = "ObjectReference")]
pub struct ObjectReference<'a> {
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "kind")]
    _kind: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "namespace")]
    _namespace: Cow<'a, str>,
    /// Name.
    #[serde(default, borrow)]
    pub name: Cow<'a, str>,
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(default, borrow, rename = "apiVersion")]
    _api_version: Cow<'a, str>,
}

/// A v1beta2 metric's identifier: its name, decoded and not read.
#[derive(Debug, Deserialize)]
#[serde(rename = "MetricIdentifier")]
struct MetricIdentifier<'a> {
    /// Not read; decoded as `hpa_metrics_api` decodes it.
    #[serde(borrow, rename = "name")]
    _name: Cow<'a, str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The point of these types: what is not kept is not copied. A string
    /// without escapes is borrowed from the body; one with escapes cannot
    /// be, and is decoded owned.
    #[test]
    fn strings_without_escapes_are_borrowed_from_the_body() {
        let body = r#"{"metadata": {"name": "web-0", "namespace": "n\u0073"},
            "timestamp": "2026-01-01T00:00:00Z", "window": "15s",
            "containers": [{"name": "app", "usage": {"cpu": "250m", "memory": 5}}]}"#;
        let item: PodMetrics<'_> = serde_json::from_str(body).unwrap();
        assert!(matches!(item.metadata.name, Some(Cow::Borrowed("web-0"))));
        assert!(matches!(&item.metadata.namespace, Some(Cow::Owned(ns)) if ns == "ns"));
        assert!(matches!(item.window, Cow::Borrowed("15s")));
        let usage = &item.containers[0].usage;
        assert!(matches!(usage["cpu"].0, Cow::Borrowed("250m")));
        assert!(matches!(&usage["memory"].0, Cow::Owned(q) if q == "5"));
    }
}
