//! The script: what the fake server answers, declared in YAML or JSON.
//!
//! The format is documented in `fake-metrics-server/README.md`. Every field
//! is checked while deserializing (unknown fields, quantities, durations), so
//! a mistake is reported with its line and column; the checks that need the
//! whole document (duplicates, timeline references) run afterwards and name
//! the field path.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

// The value types a script is built from live in modules of their own, so
// that `rules` can use them without depending on the script; users of the
// crate keep finding them here.
use crate::document::check_name;
pub use crate::document::{ScriptError, from_body, from_json, from_yaml};
pub use crate::duration::{Duration, SampleTime, format_go_duration, parse_go_duration};
pub use crate::labels::Labels;
pub use crate::metric::{MetricSeries, MetricSpec};
use crate::pod::default_namespace;
pub use crate::pod::{ContainerSpec, PodSpec};
pub use crate::quantity::Value;
pub use crate::rules::RuleSpec;

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
    /// Faults of one namespace's requests, ahead of the faults above: where
    /// several users share one server (scenarios side by side on a real
    /// cluster, each in a namespace of its own), one can fail an API for
    /// itself alone. A namespace's entry has no `namespaces` of its own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub namespaces: BTreeMap<String, Faults>,
}

impl Faults {
    /// No fault anywhere.
    pub fn is_empty(&self) -> bool {
        self.resource.is_none()
            && self.custom.is_none()
            && self.external.is_none()
            && self.namespaces.values().all(Faults::is_empty)
    }

    /// The fault a request of `api` in `namespace` (if it names one) gets:
    /// its namespace's, else the API's.
    pub fn hitting(&self, api: Api, namespace: Option<&str>) -> Option<&Fault> {
        namespace
            .and_then(|ns| self.namespaces.get(ns))
            .and_then(|faults| faults.get(api))
            .or_else(|| self.get(api))
    }

    /// Sets or clears the fault of one API, for every request or only for
    /// those in `namespace`. A namespace left without faults is forgotten.
    pub fn set_in(&mut self, namespace: Option<&str>, api: Api, fault: Option<Fault>) {
        let Some(ns) = namespace else {
            self.set(api, fault);
            return;
        };
        let faults = self.namespaces.entry(ns.to_owned()).or_default();
        faults.set(api, fault);
        if faults.is_empty() {
            self.namespaces.remove(ns);
        }
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
    /// Only requests without a `labelSelector` (namespace-wide lists) get
    /// the fault. KEDA's metrics adapter is such a server for External
    /// metrics: a list whose selector names no ScaledObject gets a 500
    /// (`scaledObject name is not specified`), the HPAs' own requests
    /// their series.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unselected: bool,
}

impl Fault {
    /// Whether the fault hits a request with this query string.
    pub fn hits(&self, query: Option<&str>) -> bool {
        !self.unselected || !has_label_selector(query)
    }
}

/// Whether a query string carries a non-empty `labelSelector`.
fn has_label_selector(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&').any(|kv| {
            kv.strip_prefix("labelSelector=")
                .is_some_and(|v| !v.is_empty())
        })
    })
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
    /// Only requests without a `labelSelector` (see [`Fault::unselected`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unselected: bool,
    /// Only requests in this namespace (see [`Faults::namespaces`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// See [`Change::ClearFault`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClearFault {
    /// The API.
    pub api: Api,
    /// The fault of this namespace's requests (see [`Faults::namespaces`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
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
        check_faults("faults", faults)?;
    }
    Ok(())
}

/// Checks every fault's status, and that namespaces' faults are one level
/// deep and named as namespaces are.
pub fn check_faults(path: &str, faults: &Faults) -> Result<(), ScriptError> {
    for api in [Api::Resource, Api::Custom, Api::External] {
        if let Some(f) = faults.get(api) {
            check_fault(&format!("{path}.{api}.status"), f.status)?;
        }
    }
    for (ns, inner) in &faults.namespaces {
        let at = format!("{path}.namespaces.{ns}");
        check_name(&at, ns)?;
        if !inner.namespaces.is_empty() {
            return Err(ScriptError::invalid(
                format!("{at}.namespaces"),
                "a namespace's faults cannot name namespaces",
            ));
        }
        check_faults(&at, inner)?;
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
        Change::SetFault(f) => {
            if let Some(ns) = &f.namespace {
                check_name(&format!("{path}.setFault.namespace"), ns)?;
            }
            check_fault(&format!("{path}.setFault.status"), f.status)
        }
        Change::ClearFault(ClearFault {
            namespace: Some(ns),
            ..
        }) => check_name(&format!("{path}.clearFault.namespace"), ns),
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
