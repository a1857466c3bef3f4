//! The script: what the fake server answers, declared in YAML or JSON.
//!
//! The format is documented in `fake-metrics-server/README.md`. Every field
//! is checked while deserializing (unknown fields, quantities, durations), so
//! a mistake is reported with its line and column; the checks that need the
//! whole document (duplicates, timeline references) run afterwards and name
//! the field path.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use jiff::{SignedDuration, Timestamp};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

pub use crate::rules::RuleSpec;

/// Errors from reading or checking a script or a change.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The YAML did not parse or did not match the format.
    #[error("script YAML, line {line} column {column}: {message}")]
    Yaml {
        /// The parser's message.
        message: String,
        /// 1-based line, 0 when unknown.
        line: u64,
        /// 1-based column, 0 when unknown.
        column: u64,
    },
    /// The JSON did not parse or did not match the format.
    #[error("script JSON, line {line} column {column}: {message}")]
    Json {
        /// The parser's message.
        message: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// The document parsed but a field is inconsistent with the rest.
    #[error("script field {field}: {message}")]
    Invalid {
        /// Path of the offending field, e.g. `pods[2].containers[0].name`.
        field: String,
        /// What is wrong.
        message: String,
    },
}

impl ScriptError {
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Reads a YAML document into `T`, mapping errors to [`ScriptError::Yaml`].
pub fn from_yaml<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, ScriptError> {
    serde_saphyr::from_str_with_options(text, crate::limits::yaml_options()).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        ScriptError::Yaml {
            message: e.to_string(),
            line,
            column,
        }
    })
}

/// Reads a JSON document into `T`, mapping errors to [`ScriptError::Json`].
pub fn from_json<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, ScriptError> {
    serde_json::from_str(text).map_err(|e| ScriptError::Json {
        message: e.to_string(),
        line: e.line(),
        column: e.column(),
    })
}

/// Reads YAML or JSON: JSON when the content type says so or the text starts
/// with `{` or `[`, YAML otherwise (JSON errors then point at the right place).
pub fn from_body<T: for<'de> Deserialize<'de>>(
    text: &str,
    content_type: Option<&str>,
) -> Result<T, ScriptError> {
    let json_type = content_type.is_some_and(|c| c.contains("json"));
    let looks_json = matches!(text.trim_start().chars().next(), Some('{' | '['));
    if json_type || (content_type.is_none() && looks_json) {
        from_json(text)
    } else {
        from_yaml(text)
    }
}

/// A non-negative Kubernetes quantity, checked with `hpa_core::quantity`
/// and kept as written so the server answers exactly what the script says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value(pub String);

impl Value {
    /// Checks `text` as a non-negative quantity.
    pub fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        hpa_core::quantity::Quantity::parse_non_negative(trimmed)
            .map_err(|e| format!("bad quantity {text:?}: {e}"))?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The quantity for the wire.
    pub fn to_quantity(&self) -> k8s_openapi::apimachinery::pkg::api::resource::Quantity {
        k8s_openapi::apimachinery::pkg::api::resource::Quantity(self.0.clone())
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a quantity such as 250m, 64Mi or 100")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
                Value::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
                Value::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
                Value::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
                Value::parse(&v.to_string()).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration written the Go way (`30s`, `1m30s`, `500ms`, `0s`); a bare
/// number means seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Duration(pub SignedDuration);

impl Duration {
    /// Parses a Go-style duration. Negative durations are refused.
    pub fn parse(text: &str) -> Result<Self, String> {
        let d = parse_go_duration(text.trim())?;
        if d.is_negative() {
            return Err(format!("negative duration {text:?}"));
        }
        Ok(Self(d))
    }

    /// Whole seconds, rounded down.
    pub fn whole_seconds(self) -> i64 {
        self.0.as_secs()
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_go_duration(self.0))
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as 30s, 1m30s or 500ms")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
                Duration::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
                if v < 0 {
                    return Err(E::custom(format!("negative duration {v}")));
                }
                Ok(Duration(SignedDuration::from_secs(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
                let secs = i64::try_from(v).map_err(|_| E::custom("duration too large"))?;
                Ok(Duration(SignedDuration::from_secs(secs)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses Go's `time.ParseDuration` syntax (units ns, us, µs, ms, s, m, h);
/// the error is Go's message with a hint.
pub fn parse_go_duration(text: &str) -> Result<SignedDuration, String> {
    hpa_core::go_duration::parse(text).map_err(|e| format!("{e} (expected e.g. 30s, 1m30s, 500ms)"))
}

/// Formats a duration as Go's `Duration.String()` does (`30s`, `1m0s`,
/// `1h2m3s`, `500ms`), which is what `window` holds on the wire.
pub fn format_go_duration(d: SignedDuration) -> String {
    hpa_core::go_duration::format(d)
}

/// When a sample was taken: an instant, or a duration before "now" on the
/// server's clock (`0s` is now).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleTime {
    /// That long before the request.
    Ago(Duration),
    /// A fixed instant.
    At(Timestamp),
}

impl SampleTime {
    /// The instant this names, given the server's `now`.
    pub fn resolve(self, now: Timestamp) -> Timestamp {
        match self {
            Self::Ago(d) => now.checked_sub(d.0).unwrap_or(now),
            Self::At(t) => t,
        }
    }
}

impl Serialize for SampleTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Ago(d) => d.serialize(s),
            Self::At(t) => s.serialize_str(&t.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for SampleTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SampleTime;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration ago (10s) or an RFC 3339 instant")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SampleTime, E> {
                if let Ok(t) = v.trim().parse::<Timestamp>() {
                    return Ok(SampleTime::At(t));
                }
                Duration::parse(v).map(SampleTime::Ago).map_err(|_| {
                    E::custom(format!(
                        "bad timestamp {v:?} (expected a duration ago such as 10s, or an RFC 3339 instant)"
                    ))
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SampleTime, E> {
                let secs = i64::try_from(v).map_err(|_| E::custom("timestamp too large"))?;
                Ok(SampleTime::Ago(Duration(SignedDuration::from_secs(secs))))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SampleTime, E> {
                if v < 0 {
                    return Err(E::custom(format!("negative timestamp age {v}")));
                }
                Ok(SampleTime::Ago(Duration(SignedDuration::from_secs(v))))
            }
        }
        d.deserialize_any(V)
    }
}

/// Labels of a pod, node, object or series.
pub type Labels = BTreeMap<String, String>;

/// A whole script. Every section is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Script {
    /// Timestamp and window used where an entry gives none.
    #[serde(default, skip_serializing_if = "Defaults::is_empty")]
    pub defaults: Defaults,
    /// Pods: resource usage per container and custom metrics per pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<PodSpec>,
    /// Nodes for NodeMetrics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeSpec>,
    /// Objects other than pods that carry custom metrics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<ObjectSpec>,
    /// External metric series.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external: Vec<ExternalSpec>,
    /// Values for pods not declared by name, by namespace and label
    /// selector ([`crate::rules`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleSpec>,
    /// Faults per API.
    #[serde(default, skip_serializing_if = "Faults::is_empty")]
    pub faults: Faults,
    /// Changes applied at offsets from when the script was loaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineStep>,
}

/// Defaults for entries that give no timestamp or window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Defaults {
    /// Sample time (default: `0s`, i.e. now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<SampleTime>,
    /// Window for resource metrics (default `30s`); custom and external
    /// metrics carry a window only when one is given here or on the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Duration>,
}

impl Defaults {
    fn is_empty(&self) -> bool {
        self.timestamp.is_none() && self.window.is_none()
    }
}

fn default_namespace() -> String {
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

/// One node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeSpec {
    /// Node name.
    pub name: String,
    /// Labels, matched by `labelSelector`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Labels,
    /// CPU usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Value>,
    /// Memory usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Value>,
    /// Sample time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<SampleTime>,
    /// Window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Duration>,
}

/// A non-pod object carrying custom metrics (Object metric source).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectSpec {
    /// Plural resource as in the URL: `services`, `deployments.apps`,
    /// `namespaces`.
    pub resource: String,
    /// Namespace; leave out for a root-scoped object (e.g. a namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
    /// Kind for `describedObject` (default: guessed from `resource`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// API version for `describedObject` (default: guessed from `resource`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Labels, matched when the request names `*`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Labels,
    /// Metrics by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, MetricSpec>,
}

/// One external metric series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExternalSpec {
    /// Namespace the HPA asks in (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Metric name.
    pub metric: String,
    /// Labels of the series, matched by `labelSelector`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Labels,
    /// The value.
    pub value: Value,
    /// Sample time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<SampleTime>,
    /// Window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Duration>,
}

/// A custom metric value: either a bare quantity (`30`) or the long form
/// with labels, timestamp and window.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MetricSpec {
    /// Just the value.
    Value(Value),
    /// Value with details.
    Series(MetricSeries),
}

/// The long form of a [`MetricSpec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MetricSeries {
    /// The value.
    pub value: Value,
    /// Labels of the series, matched by `metricLabelSelector`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Labels,
    /// Sample time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<SampleTime>,
    /// Window (`windowSeconds` on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Duration>,
}

impl MetricSpec {
    /// The long form, with empty details for a bare value.
    pub fn series(&self) -> MetricSeries {
        match self {
            Self::Value(v) => MetricSeries {
                value: v.clone(),
                labels: Labels::new(),
                timestamp: None,
                window: None,
            },
            Self::Series(s) => s.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for MetricSpec {
    // Hand-written rather than `untagged` so that errors inside the long
    // form keep their message and position.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetricSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a quantity, or a map with value, labels, timestamp, window")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MetricSpec, E> {
                Value::parse(v).map(MetricSpec::Value).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MetricSpec, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MetricSpec, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<MetricSpec, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MetricSpec, A::Error> {
                MetricSeries::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(MetricSpec::Series)
            }
        }
        d.deserialize_any(V)
    }
}

/// Which API a fault applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Api {
    /// metrics.k8s.io
    Resource,
    /// custom.metrics.k8s.io
    Custom,
    /// external.metrics.k8s.io
    External,
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Resource => "resource",
            Self::Custom => "custom",
            Self::External => "external",
        })
    }
}

impl std::str::FromStr for Api {
    type Err = String;

    /// Reads `resource`, `custom` or `external` (the words the Gherkin
    /// steps use).
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "resource" => Ok(Self::Resource),
            "custom" => Ok(Self::Custom),
            "external" => Ok(Self::External),
            other => Err(format!(
                "unknown API {other:?} (expected resource, custom or external)"
            )),
        }
    }
}

/// Faults per API.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Faults {
    /// Fault of metrics.k8s.io.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<Fault>,
    /// Fault of custom.metrics.k8s.io.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<Fault>,
    /// Fault of external.metrics.k8s.io.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<Fault>,
}

impl Faults {
    /// No fault anywhere.
    pub fn is_empty(&self) -> bool {
        self.resource.is_none() && self.custom.is_none() && self.external.is_none()
    }

    /// The fault of one API.
    pub fn get(&self, api: Api) -> Option<&Fault> {
        match api {
            Api::Resource => self.resource.as_ref(),
            Api::Custom => self.custom.as_ref(),
            Api::External => self.external.as_ref(),
        }
    }

    /// Sets or clears the fault of one API.
    pub fn set(&mut self, api: Api, fault: Option<Fault>) {
        match api {
            Api::Resource => self.resource = fault,
            Api::Custom => self.custom = fault,
            Api::External => self.external = fault,
        }
    }
}

/// What a faulty API does: wait `latency`, then answer `status` (if set)
/// instead of the data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fault {
    /// HTTP status to answer, 400..=599 (e.g. 500, 503, 404).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Added latency (wall time), before answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Duration>,
    /// Message of the error Status body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Changes applied together when the clock passes `at` after loading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimelineStep {
    /// Offset from when the script was loaded, on the server's clock.
    pub at: Duration,
    /// The changes, applied in order.
    pub changes: Vec<Change>,
}

/// One change to the data being served. Used by the timeline and by the
/// control API (`POST /control/v1/changes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Change {
    /// Adds a pod or replaces the pod with the same namespace and name.
    Pod(PodSpec),
    /// Removes a pod (its metrics go with it).
    RemovePod(PodRef),
    /// Sets usage of one container of an existing pod (added if absent).
    /// `cpu` or `memory` left out keep their value; `null` removes it.
    PodUsage(PodUsage),
    /// Marks an existing pod as missing from metrics.k8s.io, or not.
    PodMissing(PodMissing),
    /// Sets (or, with `value: null`, removes) a custom metric of an
    /// existing pod.
    PodMetric(PodMetric),
    /// Adds a node or replaces the node with the same name.
    Node(NodeSpec),
    /// Sets (or removes) a metric of an object, adding the object if absent.
    ObjectMetric(ObjectMetric),
    /// Sets (or removes) an external series, keyed by namespace, metric
    /// name and labels.
    ExternalMetric(ExternalMetric),
    /// Sets the fault of one API.
    SetFault(SetFault),
    /// Clears the fault of one API.
    ClearFault(ClearFault),
}

/// Names a pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodRef {
    /// Namespace (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Pod name.
    pub name: String,
}

/// See [`Change::PodUsage`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodUsage {
    /// Namespace (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Pod name.
    pub pod: String,
    /// Container name.
    pub container: String,
    /// New cpu usage; absent keeps, `null` removes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_or_null"
    )]
    pub cpu: Option<Option<Value>>,
    /// New memory usage; absent keeps, `null` removes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_or_null"
    )]
    pub memory: Option<Option<Value>>,
}

fn some_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Value>>, D::Error> {
    Option::<Value>::deserialize(d).map(Some)
}

/// See [`Change::PodMissing`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodMissing {
    /// Namespace (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Pod name.
    pub pod: String,
    /// Whether metrics.k8s.io leaves the pod out.
    pub missing: bool,
}

/// See [`Change::PodMetric`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodMetric {
    /// Namespace (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Pod name.
    pub pod: String,
    /// Metric name.
    pub metric: String,
    /// The value; `null` removes the metric from the pod.
    pub value: Option<MetricSpec>,
}

/// See [`Change::ObjectMetric`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectMetric {
    /// Plural resource (`services`).
    pub resource: String,
    /// Namespace; absent for a root-scoped object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
    /// Metric name.
    pub metric: String,
    /// The value; `null` removes the metric.
    pub value: Option<MetricSpec>,
}

/// See [`Change::ExternalMetric`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExternalMetric {
    /// Namespace (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Metric name.
    pub metric: String,
    /// Labels identifying the series.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Labels,
    /// The value; `null` removes the series.
    pub value: Option<Value>,
    /// Sample time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<SampleTime>,
    /// Window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Duration>,
}

/// See [`Change::SetFault`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetFault {
    /// The API.
    pub api: Api,
    /// HTTP status to answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Added latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Duration>,
    /// Message of the error body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// See [`Change::ClearFault`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClearFault {
    /// The API.
    pub api: Api,
}

/// A `PATCH /control/v1/script` body: entries upserted by key, removals,
/// optional new faults and defaults, timeline steps appended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptPatch {
    /// Replaces the defaults when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<Defaults>,
    /// Upserted by namespace and name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<PodSpec>,
    /// Upserted by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeSpec>,
    /// Upserted by resource, namespace and name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<ObjectSpec>,
    /// Upserted by namespace, metric and labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external: Vec<ExternalSpec>,
    /// Upserted by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleSpec>,
    /// Names of rules to remove.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_rules: Vec<String>,
    /// Replaces the faults when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<Faults>,
    /// Pods to remove.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_pods: Vec<PodRef>,
    /// Timeline steps appended (offsets still count from the original load).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineStep>,
}

/// Checks what deserialization cannot: unique keys, fault statuses,
/// timeline references to pods. `known_pods` are pods that exist before
/// the script or patch applies.
fn check_entries(
    pods: &[PodSpec],
    nodes: &[NodeSpec],
    objects: &[ObjectSpec],
    external: &[ExternalSpec],
    faults: Option<&Faults>,
) -> Result<(), ScriptError> {
    let mut seen = BTreeSet::new();
    for (i, pod) in pods.iter().enumerate() {
        check_pod(&format!("pods[{i}]"), pod)?;
        if !seen.insert((&pod.namespace, &pod.name)) {
            return Err(ScriptError::invalid(
                format!("pods[{i}]"),
                format!("pod {}/{} is declared twice", pod.namespace, pod.name),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, node) in nodes.iter().enumerate() {
        check_name(&format!("nodes[{i}].name"), &node.name)?;
        if !seen.insert(&node.name) {
            return Err(ScriptError::invalid(
                format!("nodes[{i}]"),
                format!("node {} is declared twice", node.name),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, o) in objects.iter().enumerate() {
        check_name(&format!("objects[{i}].resource"), &o.resource)?;
        check_name(&format!("objects[{i}].name"), &o.name)?;
        if o.resource == "pods" {
            return Err(ScriptError::invalid(
                format!("objects[{i}].resource"),
                "pods carry their custom metrics under pods[].metrics",
            ));
        }
        if !seen.insert((&o.resource, &o.namespace, &o.name)) {
            return Err(ScriptError::invalid(
                format!("objects[{i}]"),
                format!("object {} {} is declared twice", o.resource, o.name),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, e) in external.iter().enumerate() {
        check_name(&format!("external[{i}].metric"), &e.metric)?;
        if !seen.insert((&e.namespace, &e.metric, &e.labels)) {
            return Err(ScriptError::invalid(
                format!("external[{i}]"),
                format!(
                    "external series {} in {} with these labels is declared twice",
                    e.metric, e.namespace
                ),
            ));
        }
    }
    if let Some(faults) = faults {
        for api in [Api::Resource, Api::Custom, Api::External] {
            if let Some(f) = faults.get(api) {
                check_fault(&format!("faults.{api}.status"), f.status)?;
            }
        }
    }
    Ok(())
}

fn check_pod(path: &str, pod: &PodSpec) -> Result<(), ScriptError> {
    check_name(&format!("{path}.name"), &pod.name)?;
    check_name(&format!("{path}.namespace"), &pod.namespace)?;
    let mut seen = BTreeSet::new();
    for (j, c) in pod.containers.iter().enumerate() {
        check_name(&format!("{path}.containers[{j}].name"), &c.name)?;
        if !seen.insert(&c.name) {
            return Err(ScriptError::invalid(
                format!("{path}.containers[{j}]"),
                format!("container {} is declared twice", c.name),
            ));
        }
    }
    Ok(())
}

pub(crate) fn check_name(field: &str, name: &str) -> Result<(), ScriptError> {
    if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
        return Err(ScriptError::invalid(
            field,
            format!("{name:?} is not a valid name (empty, or has '/' or spaces)"),
        ));
    }
    Ok(())
}

/// Checks a fault status is an error status.
pub fn check_fault(field: &str, status: Option<u16>) -> Result<(), ScriptError> {
    match status {
        Some(s) if !(400..=599).contains(&s) => Err(ScriptError::invalid(
            field,
            format!("status {s} is not an error status (400..=599)"),
        )),
        _ => Ok(()),
    }
}

/// Checks one change in isolation (the model checks references).
pub fn check_change(path: &str, change: &Change) -> Result<(), ScriptError> {
    match change {
        Change::Pod(p) => check_pod(&format!("{path}.pod"), p),
        Change::Node(n) => check_name(&format!("{path}.node.name"), &n.name),
        Change::ObjectMetric(o) if o.resource == "pods" => Err(ScriptError::invalid(
            format!("{path}.objectMetric.resource"),
            "use podMetric for pods",
        )),
        Change::SetFault(f) => check_fault(&format!("{path}.setFault.status"), f.status),
        _ => Ok(()),
    }
}

impl Script {
    /// Reads and checks a script from YAML or JSON.
    pub fn parse(text: &str, content_type: Option<&str>) -> Result<Self, ScriptError> {
        let script: Self = from_body(text, content_type)?;
        script.check()?;
        Ok(script)
    }

    /// Checks what deserialization cannot: unique keys, fault statuses,
    /// timeline references to declared pods.
    pub fn check(&self) -> Result<(), ScriptError> {
        check_entries(
            &self.pods,
            &self.nodes,
            &self.objects,
            &self.external,
            Some(&self.faults),
        )?;
        crate::rules::check("rules", &self.rules)?;
        let pods: BTreeSet<(String, String)> = self
            .pods
            .iter()
            .map(|p| (p.namespace.clone(), p.name.clone()))
            .collect();
        check_timeline(&self.timeline, pods, "timeline")
    }
}

/// Checks timeline steps in order, tracking which pods exist at each step
/// so that a change naming an unknown pod is refused at load time.
pub fn check_timeline(
    steps: &[TimelineStep],
    mut pods: BTreeSet<(String, String)>,
    field: &str,
) -> Result<(), ScriptError> {
    let mut order: Vec<usize> = (0..steps.len()).collect();
    order.sort_by_key(|&i| steps[i].at);
    for i in order {
        let step = &steps[i];
        for (j, change) in step.changes.iter().enumerate() {
            let path = format!("{field}[{i}].changes[{j}]");
            check_change(&path, change)?;
            let missing_pod = |ns: &str, name: &str| {
                ScriptError::invalid(
                    path.clone(),
                    format!("pod {ns}/{name} is not declared before this change"),
                )
            };
            match change {
                Change::Pod(p) => {
                    pods.insert((p.namespace.clone(), p.name.clone()));
                }
                Change::RemovePod(r) => {
                    pods.remove(&(r.namespace.clone(), r.name.clone()));
                }
                Change::PodUsage(PodUsage { namespace, pod, .. })
                | Change::PodMissing(PodMissing { namespace, pod, .. })
                | Change::PodMetric(PodMetric { namespace, pod, .. })
                    if !pods.contains(&(namespace.clone(), pod.clone())) =>
                {
                    return Err(missing_pod(namespace, pod));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

impl ScriptPatch {
    /// Reads and checks a patch from YAML or JSON.
    pub fn parse(text: &str, content_type: Option<&str>) -> Result<Self, ScriptError> {
        let patch: Self = from_body(text, content_type)?;
        check_entries(
            &patch.pods,
            &patch.nodes,
            &patch.objects,
            &patch.external,
            patch.faults.as_ref(),
        )?;
        crate::rules::check("rules", &patch.rules)?;
        Ok(patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_durations_name_gos_error_and_refuse_negatives() {
        assert_eq!(
            parse_go_duration("5").unwrap_err(),
            r#"time: missing unit in duration "5" (expected e.g. 30s, 1m30s, 500ms)"#
        );
        assert_eq!(parse_go_duration("-1m"), Ok(SignedDuration::from_secs(-60)));
        assert_eq!(
            Duration::parse("-1m").unwrap_err(),
            r#"negative duration "-1m""#
        );
        assert_eq!(Duration::parse(" 0 "), Ok(Duration(SignedDuration::ZERO)));
    }

    #[test]
    fn go_durations_parse_and_format_like_go() {
        assert_eq!(
            parse_go_duration("1m30s").unwrap(),
            SignedDuration::from_secs(90)
        );
        assert_eq!(
            parse_go_duration("500ms").unwrap(),
            SignedDuration::from_millis(500)
        );
        assert_eq!(
            parse_go_duration("1.5h").unwrap(),
            SignedDuration::from_secs(5400)
        );
        assert!(parse_go_duration("5").is_err());
        assert!(parse_go_duration("5 parsecs").is_err());
        assert_eq!(format_go_duration(SignedDuration::from_secs(30)), "30s");
        assert_eq!(format_go_duration(SignedDuration::from_secs(60)), "1m0s");
        assert_eq!(
            format_go_duration(SignedDuration::from_secs(3723)),
            "1h2m3s"
        );
        assert_eq!(
            format_go_duration(SignedDuration::from_millis(15_011)),
            "15.011s"
        );
        assert_eq!(
            format_go_duration(SignedDuration::from_millis(500)),
            "500ms"
        );
        assert_eq!(format_go_duration(SignedDuration::ZERO), "0s");
    }

    #[test]
    fn a_full_script_parses_from_yaml() {
        let text = r#"
defaults: {window: 30s}
pods:
  - name: web-0
    labels: {app: web}
    containers: [{name: app, cpu: 250m, memory: 64Mi}]
    metrics: {packets-per-second: 100}
  - name: web-1
    labels: {app: web}
    missing: true
    timestamp: 10s
    metrics:
      packets-per-second: {value: "1.5", labels: {verb: GET}, window: 1m}
objects:
  - {resource: services, namespace: default, name: queue, metrics: {messages: 30}}
external:
  - {metric: queue_messages_ready, labels: {queue: worker}, value: 30}
faults:
  custom: {status: 500}
timeline:
  - at: 1m
    changes:
      - podUsage: {pod: web-0, container: app, cpu: 500m}
"#;
        let s = Script::parse(text, None).unwrap();
        assert_eq!(s.pods.len(), 2);
        assert_eq!(s.pods[0].namespace, "default");
        assert_eq!(
            s.pods[1].metrics["packets-per-second"].series().labels["verb"],
            "GET"
        );
        assert_eq!(s.faults.custom.as_ref().unwrap().status, Some(500));
        assert_eq!(s.timeline[0].at.whole_seconds(), 60);
    }

    #[test]
    fn unknown_fields_are_refused_with_line_and_column() {
        let err = Script::parse("pods:\n  - name: a\n    colour: red\n", None).unwrap_err();
        match err {
            ScriptError::Yaml { line, message, .. } => {
                assert_eq!(line, 3, "{message}");
                assert!(message.contains("colour"), "{message}");
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn negative_and_unparsable_quantities_are_refused_where_they_are() {
        let err = Script::parse(
            "pods:\n  - name: a\n    containers:\n      - {name: app, cpu: -5}\n",
            None,
        )
        .unwrap_err();
        assert!(matches!(err, ScriptError::Yaml { line: 4, .. }), "{err}");
        let err = Script::parse(
            "pods:\n  - name: a\n    containers:\n      - {name: app, cpu: lots}\n",
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("lots"), "{err}");
    }

    #[test]
    fn json_scripts_report_line_and_column() {
        let err = Script::parse("{\"pods\": [{\"name\": \"a\", \"x\": 1}]}", None).unwrap_err();
        assert!(matches!(err, ScriptError::Json { line: 1, .. }), "{err}");
    }

    #[test]
    fn duplicate_pods_and_timeline_references_to_unknown_pods_are_refused() {
        let err = Script::parse("pods: [{name: a}, {name: a}]", None).unwrap_err();
        assert!(err.to_string().contains("pods[1]"), "{err}");
        let err = Script::parse(
            "timeline:\n  - at: 1s\n    changes: [{podMissing: {pod: ghost, missing: true}}]\n",
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("timeline[0].changes[0]"), "{err}");
        assert!(err.to_string().contains("ghost"), "{err}");
    }

    #[test]
    fn api_names_read_as_the_steps_write_them() {
        assert_eq!("resource".parse::<Api>().unwrap(), Api::Resource);
        assert_eq!("external".parse::<Api>().unwrap().to_string(), "external");
        assert!("metrics".parse::<Api>().is_err());
    }

    #[test]
    fn fault_status_must_be_an_error_status() {
        let err = Script::parse("faults: {resource: {status: 200}}", None).unwrap_err();
        assert!(err.to_string().contains("faults.resource.status"), "{err}");
    }
}
