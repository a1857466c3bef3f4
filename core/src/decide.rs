//! One reconcile of one HPA, as pure functions around the IO the shell does.
//!
//! Upstream's `reconcileAutoscaler` (Kubernetes v1.36 `horizontal.go`) reads
//! the scale, lists pods, queries metrics APIs, maybe updates the scale and
//! writes the status. Here that is split in phases so the core stays pure:
//!
//! 1. [`plan`]: which metrics to fetch (or nothing, when a rule short-circuits);
//! 2. the shell fetches them and lists pods;
//! 3. [`decide`]: the proposals, stabilization and limits: whether to rescale;
//! 4. the shell updates the scale if asked;
//! 5. [`finish`]: the new status, events, monitor labels and history.
//!
//! [`get_scale_failed`] covers a failed scale read. Condition reasons,
//! messages and event texts are upstream's.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{
    ContainerResourceMetricStatus, CrossVersionObjectReference, ExternalMetricStatus,
    HPAScalingRules, HorizontalPodAutoscaler, HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerCondition, HorizontalPodAutoscalerStatus, MetricIdentifier, MetricSpec,
    MetricStatus, MetricValueStatus, ObjectMetricStatus, PodsMetricStatus, ResourceMetricStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use serde::Serialize;

use crate::calc::{
    self, CalcError, PodCustomSample, PodProposal, PodResourceSample, Readiness, Tolerances,
    ValueProposal,
};
use crate::config::ControllerConfig;
use crate::normalize::{self, HpaHistory, Recommendation};
use crate::pod::CorePod;
use crate::quantity::{Format, Quantity, build_quantity};
use crate::selector::Selector;
use crate::status::{find_condition, remove_condition, set_condition, status_changed};
use crate::trace::{DecisionTrace, MetricTrace};

/// What the shell read from the target's `/scale` subresource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScaleInfo {
    /// `spec.replicas`: upstream's "current replicas".
    pub spec_replicas: i32,
    /// `status.replicas`: feeds the AverageValue formulas of Object/External metrics.
    pub status_replicas: i32,
    /// `status.selector` (string form; empty = none).
    pub selector: String,
}

/// One metric fetch the shell must perform.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum MetricQuery {
    /// `metrics.k8s.io` PodMetrics list for `selector` (Resource and ContainerResource).
    PodResource {
        /// `cpu`, `memory`, ...
        resource: String,
        /// The container, for ContainerResource.
        container: Option<String>,
        /// Pod selector (the scale's).
        selector: Selector,
    },
    /// `custom.metrics.k8s.io` `pods/*/<metric>` for `selector`.
    PodsCustom {
        /// Metric name.
        metric: String,
        /// Pod selector (the scale's).
        selector: Selector,
        /// `metricLabelSelector`.
        metric_selector: Selector,
    },
    /// `custom.metrics.k8s.io` single-object metric.
    Object {
        /// The object described.
        described_object: CrossVersionObjectReference,
        /// Metric name.
        metric: String,
        /// `metricLabelSelector`.
        metric_selector: Selector,
    },
    /// `external.metrics.k8s.io` series.
    External {
        /// Metric name.
        metric: String,
        /// `labelSelector` for the series.
        metric_selector: Selector,
    },
}

/// What to fetch for a reconcile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Why no metric is needed (a rule short-circuits), if so.
    pub early: Option<EarlyReason>,
    /// One entry per `spec.metrics` entry, in order; `None` where nothing can
    /// be fetched (invalid metric spec, or when `early` is set).
    pub queries: Vec<Option<MetricQuery>>,
}

/// Rules that decide without metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EarlyReason {
    /// Target at 0 replicas while autoscaling from zero is not allowed.
    ScalingDisabled,
    /// Current replicas above `maxReplicas`.
    AboveMax,
    /// Current replicas below `minReplicas`.
    BelowMin,
    /// The scale has no selector.
    SelectorRequired,
    /// The scale's selector does not parse.
    InvalidSelector,
}

/// A fetched metric, in the shape the metrics APIs return it. `Err` holds the
/// metrics client's error text (e.g. `unable to fetch metrics from resource
/// metrics API: ...`); it ends up in conditions and events as upstream does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Fetched {
    /// PodMetrics items.
    PodResource(Result<Vec<PodResourceSample>, String>),
    /// Custom per-pod values.
    PodsCustom(Result<Vec<PodCustomSample>, String>),
    /// A single object's value.
    Object(Result<ObjectSample, String>),
    /// External series values.
    External(Result<ExternalSample, String>),
}

/// An object metric value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectSample {
    /// The value.
    pub value: Quantity,
    /// Its timestamp.
    pub timestamp: Timestamp,
}

/// External metric values (all series matching the selector).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExternalSample {
    /// One value per series (an empty list is an error upstream).
    pub values: Vec<Quantity>,
    /// The first item's timestamp.
    pub timestamp: Timestamp,
}

/// Another HPA's pod selector, for the ambiguous-selector check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherHpa {
    /// `namespace/name`.
    pub key: String,
    /// Its target's selector (shared: every reconcile in a namespace reads
    /// the same ones).
    pub selector: Arc<Selector>,
}

/// Everything [`decide`] needs besides history, config and time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionInput {
    /// The HPA as read (API-defaulted; `spec.behavior` is defaulted again here).
    pub hpa: HorizontalPodAutoscaler,
    /// The target's scale.
    pub scale: ScaleInfo,
    /// Pods of the HPA's namespace (filtered here by the scale selector),
    /// shared: a shell builds each once per pod change.
    pub pods: Vec<Arc<CorePod>>,
    /// Selectors of the other HPAs in the namespace.
    pub other_hpas: Vec<OtherHpa>,
    /// Fetch results aligned with `spec.metrics` (`None` = not fetched).
    pub metrics: Vec<Option<Fetched>>,
}

/// Event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

impl EventType {
    /// The Kubernetes string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

/// A Kubernetes event to record on the HPA (source `horizontal-pod-autoscaler`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// Normal or Warning.
    pub type_: EventType,
    /// Reason (`SuccessfulRescale`, `FailedGetResourceMetric`, ...).
    pub reason: String,
    /// Message.
    pub message: String,
}

/// Monitor `action` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionLabel {
    /// `scale_up`
    ScaleUp,
    /// `scale_down`
    ScaleDown,
    /// `none`
    None,
}

/// Monitor `error` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorLabel {
    /// `spec`: an invalid spec (bad apiVersion, unknown metric type).
    Spec,
    /// `internal`: any other failure.
    Internal,
    /// `none`
    None,
}

impl ActionLabel {
    /// The Prometheus label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ScaleUp => "scale_up",
            Self::ScaleDown => "scale_down",
            Self::None => "none",
        }
    }
}

impl ErrorLabel {
    /// The Prometheus label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Spec => "spec",
            Self::Internal => "internal",
            Self::None => "none",
        }
    }
}

/// Labels of one `metric_computation_total` observation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetricComputation {
    /// `metric_type` label (`Resource`, `Pods`, ...; as written in the spec).
    pub metric_type: String,
    /// Proposal vs the HPA's last reported current replicas.
    pub action: ActionLabel,
    /// Error class.
    pub error: ErrorLabel,
}

/// Monitor observations of one reconcile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Monitor {
    /// `reconciliations_total` labels: action.
    pub action: ActionLabel,
    /// `reconciliations_total` labels: error.
    pub error: ErrorLabel,
    /// One entry per metric computed, in spec order.
    pub metric_computations: Vec<MetricComputation>,
}

/// The decision of [`decide`]: whether to update the scale, and the state
/// [`finish`] needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// `Some(n)`: the shell must set the scale's `spec.replicas` to `n`.
    pub scale_to: Option<i32>,
    /// Why (`"cpu resource utilization (percentage of request) above target"`, ...).
    pub rescale_reason: String,
    /// Why the replica count is what it is, step by step.
    pub trace: DecisionTrace,
    state: State,
}

/// Internal carry-over from decide to finish.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct State {
    hpa: HorizontalPodAutoscaler,
    original: HorizontalPodAutoscalerStatus,
    conditions: Vec<HorizontalPodAutoscalerCondition>,
    current: i32,
    desired: i32,
    min: i32,
    statuses: Option<Vec<MetricStatus>>,
    events: Vec<Event>,
    computations: Vec<MetricComputation>,
    history: HpaHistory,
    /// Set when the reconcile stops after computing metrics (status still written).
    failure: Option<String>,
    /// An error reported although scaling proceeds (some metrics failed).
    soft_error: Option<String>,
    has_object_or_external: bool,
    scale_to_zero_gate: bool,
}

/// What the shell reports back about the scale update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum RescaleOutcome {
    /// No update was requested.
    NotNeeded,
    /// The update succeeded.
    Succeeded,
    /// The update failed with this error text.
    Failed(String),
}

/// The end of a reconcile: what to write and record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The new status.
    pub status: HorizontalPodAutoscalerStatus,
    /// Whether it differs semantically from the one read (write only then).
    pub status_changed: bool,
    /// Events to record, in order.
    pub events: Vec<Event>,
    /// Monitor labels.
    pub monitor: Monitor,
    /// The history to keep for the next reconcile.
    pub history: HpaHistory,
    /// The reconcile's error, as upstream returns it (logged; retried by the queue).
    pub error: Option<String>,
    /// The decision trace (when metrics were considered).
    pub trace: Option<DecisionTrace>,
}

/// How reading the scale failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum ScaleReadError {
    /// `scaleTargetRef.apiVersion` does not parse (a spec error).
    InvalidApiVersion(String),
    /// No REST mapping for the target kind.
    NoMapping(String),
    /// The GET of `/scale` failed.
    Failed(String),
}

fn reference(hpa: &HorizontalPodAutoscaler) -> String {
    let (kind, name) = (
        hpa.spec.scale_target_ref.kind.as_str(),
        hpa.spec.scale_target_ref.name.as_str(),
    );
    format!(
        "{kind}/{}/{name}",
        hpa.metadata.namespace.as_deref().unwrap_or("")
    )
}

fn spec_metrics(hpa: &HorizontalPodAutoscaler) -> &[MetricSpec] {
    hpa.spec.metrics.as_deref().unwrap_or(&[])
}

fn has_object_or_external(hpa: &HorizontalPodAutoscaler) -> bool {
    spec_metrics(hpa)
        .iter()
        .any(|m| m.type_ == "Object" || m.type_ == "External")
}

fn conditions_of(hpa: &HorizontalPodAutoscaler) -> Vec<HorizontalPodAutoscalerCondition> {
    hpa.status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
}

/// Scale-to-zero state: (ScaledToZero=True under the gate, can scale from zero).
fn zero_state(hpa: &HorizontalPodAutoscaler, config: &ControllerConfig) -> (bool, bool) {
    let gate = config.feature_gates.hpa_scale_to_zero;
    let conditions = conditions_of(hpa);
    let scaled_to_zero =
        gate && find_condition(&conditions, "ScaledToZero").is_some_and(|c| c.status == "True");
    (
        scaled_to_zero,
        scaled_to_zero && has_object_or_external(hpa),
    )
}

fn min_max(hpa: &HorizontalPodAutoscaler) -> (i32, i32) {
    (hpa.spec.min_replicas.unwrap_or(1), hpa.spec.max_replicas)
}

/// Which rule applies before any metric (None = compute metrics).
fn early_branch(
    hpa: &HorizontalPodAutoscaler,
    current: i32,
    config: &ControllerConfig,
) -> Option<EarlyReason> {
    let (min, max) = min_max(hpa);
    let (scaled_to_zero, can_from_zero) = zero_state(hpa, config);
    if current == 0 {
        if (min != 0 && scaled_to_zero) || can_from_zero {
            None
        } else {
            Some(EarlyReason::ScalingDisabled)
        }
    } else if current > max {
        Some(EarlyReason::AboveMax)
    } else if current < min {
        Some(EarlyReason::BelowMin)
    } else {
        None
    }
}

fn metric_selector(sel: Option<&LabelSelector>) -> Result<Selector, String> {
    Selector::from_label_selector(sel).map_err(|e| e.to_string())
}

/// What to fetch for this reconcile.
pub fn plan(hpa: &HorizontalPodAutoscaler, scale: &ScaleInfo, config: &ControllerConfig) -> Plan {
    let metrics = spec_metrics(hpa);
    let none = |early| Plan {
        early: Some(early),
        queries: vec![None; metrics.len()],
    };
    if let Some(early) = early_branch(hpa, scale.spec_replicas, config) {
        return none(early);
    }
    if scale.selector.is_empty() {
        return none(EarlyReason::SelectorRequired);
    }
    let Ok(selector) = Selector::parse(&scale.selector) else {
        return none(EarlyReason::InvalidSelector);
    };
    let queries = metrics
        .iter()
        .map(|m| match m.type_.as_str() {
            "Resource" => m.resource.as_ref().map(|r| MetricQuery::PodResource {
                resource: r.name.clone(),
                container: None,
                selector: selector.clone(),
            }),
            "ContainerResource" => {
                m.container_resource
                    .as_ref()
                    .map(|r| MetricQuery::PodResource {
                        resource: r.name.clone(),
                        container: Some(r.container.clone()),
                        selector: selector.clone(),
                    })
            }
            "Pods" => m.pods.as_ref().and_then(|p| {
                Some(MetricQuery::PodsCustom {
                    metric: p.metric.name.clone(),
                    selector: selector.clone(),
                    metric_selector: metric_selector(p.metric.selector.as_ref()).ok()?,
                })
            }),
            "Object" => m.object.as_ref().and_then(|o| {
                Some(MetricQuery::Object {
                    described_object: o.described_object.clone(),
                    metric: o.metric.name.clone(),
                    metric_selector: metric_selector(o.metric.selector.as_ref()).ok()?,
                })
            }),
            "External" => m.external.as_ref().and_then(|e| {
                Some(MetricQuery::External {
                    metric: e.metric.name.clone(),
                    metric_selector: metric_selector(e.metric.selector.as_ref()).ok()?,
                })
            }),
            _ => None,
        })
        .collect();
    Plan {
        early: None,
        queries,
    }
}

/// Go's `%+v` of a `*metav1.LabelSelector` (its generated `String()`), which
/// upstream embeds in external-metric names and errors.
pub fn go_label_selector_string(sel: Option<&LabelSelector>) -> String {
    let Some(sel) = sel else {
        return "nil".to_owned();
    };
    let labels: String = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let exprs: String = sel
        .match_expressions
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e.key,
                e.operator,
                e.values.clone().unwrap_or_default().join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}

/// One metric's computed proposal.
struct Proposal {
    replicas: i32,
    name: String,
    status: MetricStatus,
}

/// One metric's failure: condition reason, condition/event error text, the
/// error propagated upward, and whether it is a spec error.
struct Failure {
    reason: &'static str,
    event_error: String,
    error: String,
    spec: bool,
}

fn fail(reason: &'static str, event_error: String, error: String) -> Failure {
    Failure {
        reason,
        event_error,
        error,
        spec: false,
    }
}

struct Ctx<'a> {
    input: &'a DecisionInput,
    config: &'a ControllerConfig,
    now: Timestamp,
    pods: Cow<'a, [Arc<CorePod>]>,
    tolerances: Tolerances,
}

impl Ctx<'_> {
    fn readiness(&self) -> Readiness {
        Readiness {
            cpu_initialization_period: self.config.cpu_initialization_period,
            initial_readiness_delay: self.config.initial_readiness_delay,
        }
    }

    fn namespace(&self) -> &str {
        self.input.hpa.metadata.namespace.as_deref().unwrap_or("")
    }

    fn fetched(&self, i: usize) -> Option<&Fetched> {
        self.input.metrics.get(i).and_then(Option::as_ref)
    }
}

fn quantity_milli(
    q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
) -> Option<i64> {
    q.and_then(|q| Quantity::parse(&q.0).ok())
        .map(|q| q.milli_value())
}

fn milli_quantity(v: i64) -> k8s_openapi::apimachinery::pkg::api::resource::Quantity {
    Quantity::from_milli(v, Format::DecimalSI).into()
}

fn resource_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let (name, container, target, reason, outer) =
        match (spec.resource.as_ref(), spec.container_resource.as_ref()) {
            (Some(r), _) if spec.type_ == "Resource" => (
                r.name.as_str(),
                "",
                &r.target,
                "FailedGetResourceMetric",
                format!("failed to get {} resource metric value", r.name),
            ),
            (_, Some(c)) if spec.type_ == "ContainerResource" => (
                c.name.as_str(),
                c.container.as_str(),
                &c.target,
                "FailedGetContainerResourceMetric",
                format!("failed to get {} container metric value", c.container),
            ),
            _ => {
                let e = format!(
                    "invalid {} metric source: the {} field is not set",
                    spec.type_, spec.type_
                );
                return Err(fail("FailedGetResourceMetric", e.clone(), e));
            }
        };
    let wrap = |inner: String| {
        let e = inner;
        fail(reason, e.clone(), format!("{outer}: {e}"))
    };
    let current = ctx.input.scale.spec_replicas;
    let samples = match ctx.fetched(i) {
        Some(Fetched::PodResource(Ok(s))) => {
            calc::pod_resource_metrics(s, name, container).map_err(|e| e.to_string())
        }
        Some(Fetched::PodResource(Err(e))) => Err(e.clone()),
        _ => Err("metric was not fetched".to_owned()),
    };
    let fetch_err = |e: String| format!("unable to get metrics for resource {name}: {e}");
    if let Some(avg) = target.average_value.as_ref() {
        let target_m = quantity_milli(Some(avg)).unwrap_or(0);
        trace.target = format!("{} (average value)", avg.0);
        let p = samples
            .map_err(fetch_err)
            .and_then(|(m, ts)| {
                calc::plain_metric_replicas(
                    current,
                    target_m,
                    name,
                    ctx.tolerances,
                    &ctx.pods,
                    &m,
                    ts,
                    ctx.readiness(),
                    ctx.now,
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|e| wrap(format!("failed to get {name} usage: {e}")))?;
        trace_pods(trace, &p);
        let value = build_quantity(name, p.raw_value);
        trace.current = value.to_string();
        return Ok(Proposal {
            replicas: p.replicas,
            name: format!("{name} resource"),
            status: resource_status(
                spec,
                container,
                name,
                MetricValueStatus {
                    average_value: Some(value.into()),
                    ..Default::default()
                },
            ),
        });
    }
    let Some(target_util) = target.average_utilization else {
        return Err(wrap(
            "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set"
                .to_owned(),
        ));
    };
    trace.target = format!("{target_util}% utilization");
    let p = samples
        .map_err(fetch_err)
        .and_then(|(m, ts)| {
            calc::resource_replicas(
                current,
                target_util,
                name,
                container,
                ctx.tolerances,
                &ctx.pods,
                &m,
                ts,
                ctx.readiness(),
                ctx.config.feature_gates.pod_level_resources,
                ctx.now,
            )
            .map_err(|e: CalcError| e.to_string())
        })
        .map_err(|e| wrap(format!("failed to get {name} utilization: {e}")))?;
    trace_pods(trace, &p);
    let value = build_quantity(name, p.raw_value);
    trace.current = format!("{}% ({value})", p.utilization.unwrap_or(0));
    let metric_name = if spec.type_ == "ContainerResource" {
        format!("{name} container resource utilization (percentage of request)")
    } else {
        format!("{name} resource utilization (percentage of request)")
    };
    Ok(Proposal {
        replicas: p.replicas,
        name: metric_name,
        status: resource_status(
            spec,
            container,
            name,
            MetricValueStatus {
                average_utilization: p.utilization,
                average_value: Some(value.into()),
                ..Default::default()
            },
        ),
    })
}

fn resource_status(
    spec: &MetricSpec,
    container: &str,
    name: &str,
    current: MetricValueStatus,
) -> MetricStatus {
    if spec.type_ == "ContainerResource" {
        MetricStatus {
            type_: "ContainerResource".to_owned(),
            container_resource: Some(ContainerResourceMetricStatus {
                name: name.to_owned(),
                container: container.to_owned(),
                current,
            }),
            ..Default::default()
        }
    } else {
        MetricStatus {
            type_: "Resource".to_owned(),
            resource: Some(ResourceMetricStatus {
                name: name.to_owned(),
                current,
            }),
            ..Default::default()
        }
    }
}

fn trace_pods(trace: &mut MetricTrace, p: &PodProposal) {
    trace.ratio = Some(p.ratio);
    trace.new_ratio = p.new_ratio;
    trace.pods = p.pods.clone();
}

fn pods_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let outer = "failed to get pods metric value";
    let reason = "FailedGetPodsMetric";
    let Some(src) = spec.pods.as_ref() else {
        let e = "invalid pods metric source: the pods field is not set".to_owned();
        return Err(fail(reason, e.clone(), format!("{outer}: {e}")));
    };
    if let Err(e) = metric_selector(src.metric.selector.as_ref()) {
        return Err(fail(reason, e.clone(), format!("{outer}: {e}")));
    }
    let wrap = |e: String| fail(reason, e.clone(), format!("{outer}: {e}"));
    let Some(target_m) = quantity_milli(src.target.average_value.as_ref()) else {
        return Err(wrap(
            "invalid pods metric source: no average value target was set".to_owned(),
        ));
    };
    trace.target = format!("{}m average", target_m);
    let metric = &src.metric.name;
    let samples = match ctx.fetched(i) {
        Some(Fetched::PodsCustom(Ok(s))) => calc::pod_custom_metrics(s).map_err(|e| e.to_string()),
        Some(Fetched::PodsCustom(Err(e))) => Err(e.clone()),
        _ => Err("metric was not fetched".to_owned()),
    };
    let p = samples
        .map_err(|e| format!("unable to get metric {metric}: {e}"))
        .and_then(|(m, ts)| {
            calc::plain_metric_replicas(
                ctx.input.scale.spec_replicas,
                target_m,
                "",
                ctx.tolerances,
                &ctx.pods,
                &m,
                ts,
                ctx.readiness(),
                ctx.now,
            )
            .map_err(|e| e.to_string())
        })
        .map_err(wrap)?;
    trace_pods(trace, &p);
    trace.current = Quantity::from_milli(p.raw_value, Format::DecimalSI).to_string();
    Ok(Proposal {
        replicas: p.replicas,
        name: format!("pods metric {metric}"),
        status: MetricStatus {
            type_: "Pods".to_owned(),
            pods: Some(PodsMetricStatus {
                metric: MetricIdentifier {
                    name: metric.clone(),
                    selector: src.metric.selector.clone(),
                },
                current: MetricValueStatus {
                    average_value: Some(milli_quantity(p.raw_value)),
                    ..Default::default()
                },
            }),
            ..Default::default()
        },
    })
}

fn value_trace(trace: &mut MetricTrace, v: &ValueProposal) {
    trace.ratio = Some(v.ratio);
    trace.ready_pods = v.ready_pods;
}

fn object_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let outer = "failed to get object metric value";
    let reason = "FailedGetObjectMetric";
    let Some(src) = spec.object.as_ref() else {
        let e = "invalid object metric source: the object field is not set".to_owned();
        return Err(fail(reason, e.clone(), format!("{outer}: {e}")));
    };
    if let Err(e) = metric_selector(src.metric.selector.as_ref()) {
        return Err(fail(reason, e.clone(), format!("{outer}: {e}")));
    }
    let obj = &src.described_object;
    let metric = &src.metric.name;
    let fetched = match ctx.fetched(i) {
        Some(Fetched::Object(Ok(s))) => Ok(s.value.milli_value()),
        Some(Fetched::Object(Err(e))) => Err(e.clone()),
        _ => Err("metric was not fetched".to_owned()),
    }
    .map_err(|e| {
        format!(
            "unable to get metric {metric}: {} on {} {}/{e}",
            obj.kind,
            ctx.namespace(),
            obj.name
        )
    });
    let target = &src.target;
    if target.type_ == "Value"
        && let Some(target_m) = quantity_milli(target.value.as_ref())
    {
        trace.target = format!("{target_m}m value");
        let v = fetched
            .and_then(|usage| {
                calc::object_metric_replicas(
                    ctx.input.scale.spec_replicas,
                    target_m,
                    usage,
                    ctx.tolerances,
                    &ctx.pods,
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|e| fail(reason, e.clone(), format!("{outer}: {e}")))?;
        value_trace(trace, &v);
        trace.current = Quantity::from_milli(v.usage, Format::DecimalSI).to_string();
        return Ok(Proposal {
            replicas: v.replicas,
            name: format!("{} metric {metric}", obj.kind),
            status: MetricStatus {
                type_: "Object".to_owned(),
                object: Some(ObjectMetricStatus {
                    described_object: obj.clone(),
                    metric: src.metric.clone(),
                    current: MetricValueStatus {
                        value: Some(milli_quantity(v.usage)),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
        });
    }
    if target.type_ == "AverageValue"
        && let Some(target_m) = quantity_milli(target.average_value.as_ref())
    {
        trace.target = format!("{target_m}m average value");
        let v = fetched
            .map(|usage| {
                calc::object_per_pod_metric_replicas(
                    ctx.input.scale.status_replicas,
                    target_m,
                    usage,
                    ctx.tolerances,
                )
            })
            .map_err(|e| {
                fail(
                    reason,
                    e.clone(),
                    format!("{outer}: failed to get {metric} object metric: {e}"),
                )
            })?;
        value_trace(trace, &v);
        trace.current = Quantity::from_milli(v.usage, Format::DecimalSI).to_string();
        // Upstream leaves describedObject out of this status and names the
        // metric "external metric ..."; reproduced faithfully.
        return Ok(Proposal {
            replicas: v.replicas,
            name: format!(
                "external metric {metric}({})",
                go_label_selector_string(src.metric.selector.as_ref())
            ),
            status: MetricStatus {
                type_: "Object".to_owned(),
                object: Some(ObjectMetricStatus {
                    described_object: CrossVersionObjectReference::default(),
                    metric: src.metric.clone(),
                    current: MetricValueStatus {
                        average_value: Some(milli_quantity(v.usage)),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
        });
    }
    let e =
        "invalid object metric source: neither a value target nor an average value target was set"
            .to_owned();
    Err(fail(reason, e.clone(), format!("{outer}: {e}")))
}

fn external_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let reason = "FailedGetExternalMetric";
    let Some(src) = spec.external.as_ref() else {
        let e = "invalid external metric source: the external field is not set".to_owned();
        return Err(fail(reason, e.clone(), e));
    };
    let metric = &src.metric.name;
    let outer = format!("failed to get {metric} external metric value");
    let sel_text = go_label_selector_string(src.metric.selector.as_ref());
    let values = match metric_selector(src.metric.selector.as_ref()) {
        Err(e) => Err(e),
        Ok(_) => match ctx.fetched(i) {
            Some(Fetched::External(Ok(s))) if s.values.is_empty() => {
                Err("no metrics returned from external metrics API".to_owned())
            }
            Some(Fetched::External(Ok(s))) => Ok(s
                .values
                .iter()
                .map(Quantity::milli_value)
                .collect::<Vec<_>>()),
            Some(Fetched::External(Err(e))) => Err(e.clone()),
            _ => Err("metric was not fetched".to_owned()),
        }
        .map_err(|e| {
            format!(
                "unable to get external metric {}/{metric}/{sel_text}: {e}",
                ctx.namespace()
            )
        }),
    };
    let name = format!("external metric {metric}({sel_text})");
    let identifier = MetricIdentifier {
        name: metric.clone(),
        selector: src.metric.selector.clone(),
    };
    if let Some(target_m) = quantity_milli(src.target.average_value.as_ref()) {
        trace.target = format!("{target_m}m average value");
        let v = values
            .map(|vals| {
                calc::external_per_pod_metric_replicas(
                    ctx.input.scale.status_replicas,
                    target_m,
                    &vals,
                    ctx.tolerances,
                )
            })
            .map_err(|e| {
                fail(
                    reason,
                    e.clone(),
                    format!("{outer}: failed to get {metric} external metric: {e}"),
                )
            })?;
        value_trace(trace, &v);
        trace.current = Quantity::from_milli(v.usage, Format::DecimalSI).to_string();
        return Ok(Proposal {
            replicas: v.replicas,
            name,
            status: MetricStatus {
                type_: "External".to_owned(),
                external: Some(ExternalMetricStatus {
                    metric: identifier,
                    current: MetricValueStatus {
                        average_value: Some(milli_quantity(v.usage)),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
        });
    }
    if let Some(target_m) = quantity_milli(src.target.value.as_ref()) {
        trace.target = format!("{target_m}m value");
        let v = values
            .and_then(|vals| {
                calc::external_metric_replicas(
                    ctx.input.scale.spec_replicas,
                    target_m,
                    &vals,
                    ctx.tolerances,
                    &ctx.pods,
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|e| {
                fail(
                    reason,
                    e.clone(),
                    format!("{outer}: failed to get external metric {metric}: {e}"),
                )
            })?;
        value_trace(trace, &v);
        trace.current = Quantity::from_milli(v.usage, Format::DecimalSI).to_string();
        return Ok(Proposal {
            replicas: v.replicas,
            name,
            status: MetricStatus {
                type_: "External".to_owned(),
                external: Some(ExternalMetricStatus {
                    metric: identifier,
                    current: MetricValueStatus {
                        value: Some(milli_quantity(v.usage)),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
        });
    }
    let e = "invalid external metric source: neither a value target nor an average value target was set".to_owned();
    Err(fail(reason, e.clone(), format!("{outer}: {e}")))
}

fn compute_metric(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    match spec.type_.as_str() {
        "Resource" | "ContainerResource" => resource_proposal(ctx, i, spec, trace),
        "Pods" => pods_proposal(ctx, i, spec, trace),
        "Object" => object_proposal(ctx, i, spec, trace),
        "External" => external_proposal(ctx, i, spec, trace),
        other => {
            let e = format!("unknown metric source type {other:?}");
            Err(Failure {
                reason: "InvalidMetricSourceType",
                event_error: e.clone(),
                error: e,
                spec: true,
            })
        }
    }
}

/// Tolerances for this HPA: the flag, or per-HPA values when the gate is on.
pub fn tolerances_for(hpa: &HorizontalPodAutoscaler, config: &ControllerConfig) -> Tolerances {
    let mut t = Tolerances::symmetric(config.tolerance);
    if config.feature_gates.hpa_configurable_tolerance
        && let Some(b) = hpa.spec.behavior.as_ref()
    {
        let get = |r: Option<&HPAScalingRules>| {
            r.and_then(|r| r.tolerance.as_ref())
                .and_then(|q| Quantity::parse(&q.0).ok())
                .map(|q| q.as_f64())
        };
        if let Some(up) = get(b.scale_up.as_ref()) {
            t.scale_up = up;
        }
        if let Some(down) = get(b.scale_down.as_ref()) {
            t.scale_down = down;
        }
    }
    t
}

/// Decides one reconcile from fetched data.
pub fn decide(
    input: &DecisionInput,
    history: &HpaHistory,
    config: &ControllerConfig,
    now: Timestamp,
) -> Decision {
    let hpa = &input.hpa;
    let original = hpa.status.clone().unwrap_or_default();
    let mut conditions = conditions_of(hpa);
    let gate = config.feature_gates.hpa_scale_to_zero;
    if !gate {
        remove_condition(&mut conditions, "ScaledToZero");
    }
    set_condition(
        &mut conditions,
        "AbleToScale",
        "True",
        "SucceededGetScale",
        "the HPA controller was able to get the target's current scale",
        now,
    );
    let current = input.scale.spec_replicas;
    let mut history = history.clone();
    if history.recommendations.is_none() {
        history.recommendations = Some(vec![Recommendation {
            replicas: current,
            timestamp: now,
        }]);
    }
    let (min, max) = min_max(hpa);
    let (scaled_to_zero, _) = zero_state(hpa, config);
    let mut trace = DecisionTrace::new(hpa, &input.scale, min, max, now);
    let mut state = State {
        hpa: hpa.clone(),
        original,
        conditions,
        current,
        desired: 0,
        min,
        statuses: None,
        events: Vec::new(),
        computations: Vec::new(),
        history,
        failure: None,
        soft_error: None,
        has_object_or_external: has_object_or_external(hpa),
        scale_to_zero_gate: gate,
    };
    let mut reason = String::new();
    let rescale;
    match early_branch(hpa, current, config) {
        Some(EarlyReason::ScalingDisabled) => {
            set_condition(
                &mut state.conditions,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
                now,
            );
            trace.rule = "ScalingDisabled: the target has zero replicas".to_owned();
            rescale = false;
        }
        Some(EarlyReason::AboveMax) => {
            reason = "Current number of replicas above Spec.MaxReplicas".to_owned();
            state.desired = max;
            trace.rule = reason.clone();
            rescale = true;
        }
        Some(EarlyReason::BelowMin) => {
            reason = "Current number of replicas below Spec.MinReplicas".to_owned();
            state.desired = min;
            trace.rule = reason.clone();
            rescale = true;
        }
        _ => match compute_replicas_for_metrics(input, config, now, &mut state, &mut trace) {
            Err(()) => {
                rescale = false;
            }
            Ok((metric_desired, metric_name)) => {
                let mut desired = 0;
                let mut rescale_metric = String::new();
                if metric_desired > desired {
                    desired = metric_desired;
                    rescale_metric = metric_name;
                }
                if desired > current {
                    reason = format!("{rescale_metric} above target");
                }
                if desired < current {
                    reason = "All metrics below target".to_owned();
                }
                trace.prenormalized = Some(desired);
                desired = normalize_desired(
                    hpa, config, current, desired, min, max, now, &mut state, &mut trace,
                );
                if current == 0 && min != 0 && scaled_to_zero && desired < min {
                    desired = min;
                    if reason.is_empty() {
                        reason = "Current number of replicas below Spec.MinReplicas".to_owned();
                    }
                }
                state.desired = desired;
                rescale = desired != current;
            }
        },
    }
    if !rescale {
        state.desired = current;
    }
    trace.desired = state.desired;
    trace.rescale = rescale && state.failure.is_none();
    trace.reason = reason.clone();
    Decision {
        scale_to: (rescale && state.failure.is_none()).then_some(state.desired),
        rescale_reason: reason,
        trace,
        state,
    }
}

#[allow(clippy::too_many_arguments, reason = "the normalization inputs")]
fn normalize_desired(
    hpa: &HorizontalPodAutoscaler,
    config: &ControllerConfig,
    current: i32,
    prenormalized: i32,
    min: i32,
    max: i32,
    now: Timestamp,
    state: &mut State,
    trace: &mut DecisionTrace,
) -> i32 {
    let recs = state.history.recommendations.get_or_insert_with(Vec::new);
    let behavior = hpa.spec.behavior.as_ref();
    let (stabilized, stab_reason, stab_message, limited) = match behavior {
        None => {
            let s = normalize::stabilize_recommendation(
                recs,
                prenormalized,
                config.downscale_stabilization,
                now,
            );
            let l = normalize::convert_desired_replicas_with_rules(
                current,
                s,
                min,
                max,
                config.scale_up_limit_factor,
                config.scale_up_limit_minimum,
            );
            (
                s,
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest recent recommendation",
                l,
            )
        }
        Some(b) => {
            let b = normalize::default_behavior(b);
            let up = b.scale_up.clone().unwrap_or_default();
            let mut down = b.scale_down.clone().unwrap_or_default();
            if down.stabilization_window_seconds.is_none() {
                down.stabilization_window_seconds = Some(
                    i32::try_from(config.downscale_stabilization.as_secs()).unwrap_or(i32::MAX),
                );
            }
            let window = |r: &HPAScalingRules| {
                SignedDuration::from_secs(i64::from(r.stabilization_window_seconds.unwrap_or(0)))
            };
            let s = normalize::stabilize_recommendation_with_behaviors(
                recs,
                current,
                prenormalized,
                window(&up),
                window(&down),
                now,
            );
            let l = normalize::convert_desired_replicas_with_behavior_rate(
                current,
                s.replicas,
                min,
                max,
                &up,
                &down,
                &state.history.scale_up_events,
                &state.history.scale_down_events,
                now,
            );
            (s.replicas, s.reason, s.message, l)
        }
    };
    trace.stabilized = Some(stabilized);
    if stabilized != prenormalized {
        set_condition(
            &mut state.conditions,
            "AbleToScale",
            "True",
            stab_reason,
            stab_message,
            now,
        );
        trace.stabilization = stab_reason.to_owned();
    } else {
        set_condition(
            &mut state.conditions,
            "AbleToScale",
            "True",
            "ReadyForNewScale",
            "recommended size matches current size",
            now,
        );
        trace.stabilization = "ReadyForNewScale".to_owned();
    }
    let status = if limited.replicas == stabilized {
        "False"
    } else {
        "True"
    };
    set_condition(
        &mut state.conditions,
        "ScalingLimited",
        status,
        limited.reason,
        limited.message,
        now,
    );
    trace.limited = Some(limited.replicas);
    trace.limit_reason = limited.reason.to_owned();
    limited.replicas
}

/// Upstream `computeReplicasForMetrics` with `validateAndParseSelector`.
/// `Err(())` = the reconcile stops (failure recorded in `state`).
fn compute_replicas_for_metrics(
    input: &DecisionInput,
    config: &ControllerConfig,
    now: Timestamp,
    state: &mut State,
    trace: &mut DecisionTrace,
) -> Result<(i32, String), ()> {
    let hpa = &input.hpa;
    let selector_text = &input.scale.selector;
    let selector_failure =
        |state: &mut State, event_reason: &str, cond_reason: &str, event: String, cond: String| {
            state.events.push(Event {
                type_: EventType::Warning,
                reason: event_reason.to_owned(),
                message: event.clone(),
            });
            set_condition(
                &mut state.conditions,
                "ScalingActive",
                "False",
                cond_reason,
                cond,
                now,
            );
            state.failure = Some(event);
        };
    if selector_text.is_empty() {
        selector_failure(
            state,
            "SelectorRequired",
            "InvalidSelector",
            "selector is required".to_owned(),
            "the HPA target's scale is missing a selector".to_owned(),
        );
        trace.rule = "SelectorRequired".to_owned();
        return Err(());
    }
    let selector = match Selector::parse(selector_text) {
        Ok(s) => s,
        Err(e) => {
            let msg = format!(
                "couldn't convert selector into a corresponding internal selector object: {e}"
            );
            selector_failure(
                state,
                "InvalidSelector",
                "InvalidSelector",
                msg.clone(),
                msg,
            );
            trace.rule = "InvalidSelector".to_owned();
            return Err(());
        }
    };
    // Usually every listed pod matches; borrow instead of cloning them then.
    let pods: Cow<'_, [Arc<CorePod>]> = if input.pods.iter().all(|p| selector.matches(&p.labels)) {
        Cow::Borrowed(&input.pods)
    } else {
        Cow::Owned(
            input
                .pods
                .iter()
                .filter(|p| selector.matches(&p.labels))
                .cloned()
                .collect(),
        )
    };
    let own_key = format!(
        "{}/{}",
        hpa.metadata.namespace.as_deref().unwrap_or(""),
        hpa.metadata.name.as_deref().unwrap_or("")
    );
    let mut controlling = BTreeSet::new();
    if !pods.is_empty() {
        controlling.insert(own_key.clone());
    }
    for other in input.other_hpas.iter().filter(|o| o.key != own_key) {
        if pods.iter().any(|p| other.selector.matches(&p.labels)) {
            controlling.insert(other.key.clone());
        }
    }
    if controlling.len() > 1 {
        let list: Vec<&str> = controlling.iter().map(String::as_str).collect();
        let msg = format!(
            "pods by selector {selector_text} are controlled by multiple HPAs: [{}]",
            list.join(" ")
        );
        selector_failure(
            state,
            "AmbiguousSelector",
            "AmbiguousSelector",
            msg.clone(),
            msg,
        );
        trace.rule = "AmbiguousSelector".to_owned();
        return Err(());
    }

    let ctx = Ctx {
        input,
        config,
        now,
        pods,
        tolerances: tolerances_for(hpa, config),
    };
    let specs = spec_metrics(hpa);
    let spec_replicas = input.scale.spec_replicas;
    let last_current = hpa
        .status
        .as_ref()
        .and_then(|s| s.current_replicas)
        .unwrap_or(0);
    let mut statuses = vec![MetricStatus::default(); specs.len()];
    let mut replicas = 0;
    let mut metric = String::new();
    let mut invalid = 0usize;
    let mut first_failure: Option<Failure> = None;
    for (i, spec) in specs.iter().enumerate() {
        let mut mt = MetricTrace::new(i, spec);
        let result = compute_metric(&ctx, i, spec, &mut mt);
        let (action, error) = match &result {
            Ok(p) => (
                match p.replicas.cmp(&last_current) {
                    std::cmp::Ordering::Greater => ActionLabel::ScaleUp,
                    std::cmp::Ordering::Less => ActionLabel::ScaleDown,
                    std::cmp::Ordering::Equal => ActionLabel::None,
                },
                ErrorLabel::None,
            ),
            Err(f) if f.spec => (ActionLabel::None, ErrorLabel::Spec),
            Err(_) => (ActionLabel::None, ErrorLabel::Internal),
        };
        state.computations.push(MetricComputation {
            metric_type: spec.type_.clone(),
            action,
            error,
        });
        match result {
            Ok(p) => {
                mt.proposal = Some(p.replicas);
                mt.name = p.name.clone();
                statuses[i] = p.status;
                if replicas == 0 || p.replicas > replicas {
                    replicas = p.replicas;
                    metric = p.name;
                }
            }
            Err(f) => {
                state.events.push(Event {
                    type_: EventType::Warning,
                    reason: f.reason.to_owned(),
                    message: f.event_error.clone(),
                });
                mt.error = Some(f.error.clone());
                invalid += 1;
                if first_failure.is_none() {
                    first_failure = Some(f);
                }
            }
        }
        trace.metrics.push(mt);
    }
    trace.chosen_metric = metric.clone();
    state.statuses = Some(statuses);
    let error = first_failure.as_ref().map(|f| {
        format!(
            "invalid metrics ({invalid} invalid out of {}), first error is: {}",
            specs.len(),
            f.error
        )
    });
    if invalid >= specs.len() || (invalid > 0 && replicas < spec_replicas) {
        if let Some(f) = &first_failure {
            set_condition(
                &mut state.conditions,
                "ScalingActive",
                "False",
                f.reason,
                format!(
                    "the HPA was unable to compute the replica count: {}",
                    f.event_error
                ),
                now,
            );
        }
        // With no metric at all upstream has no first error either; keep a text.
        state.failure =
            Some(error.unwrap_or_else(|| "invalid metrics (0 invalid out of 0)".to_owned()));
        trace.rule = "metrics failed".to_owned();
        return Err(());
    }
    set_condition(
        &mut state.conditions,
        "ScalingActive",
        "True",
        "ValidMetricFound",
        format!("the HPA was able to successfully calculate a replica count from {metric}"),
        now,
    );
    state.soft_error = error;
    Ok((replicas, metric))
}

fn build_status(
    state: &State,
    desired: i32,
    last_scale_time: Option<Time>,
) -> HorizontalPodAutoscalerStatus {
    HorizontalPodAutoscalerStatus {
        current_replicas: Some(state.current),
        desired_replicas: desired,
        last_scale_time,
        current_metrics: state.statuses.clone(),
        conditions: Some(state.conditions.clone()),
        // v1.36's setStatus builds a fresh status without it (setting it is
        // newer, k/k #138228), so a stored value is dropped.
        observed_generation: None,
    }
}

/// Finishes a reconcile once the shell has (or has not) updated the scale.
pub fn finish(decision: Decision, outcome: RescaleOutcome, now: Timestamp) -> Outcome {
    let Decision {
        scale_to,
        rescale_reason,
        trace,
        mut state,
    } = decision;
    let reference = reference(&state.hpa);
    let old_desired = state.original.desired_replicas;
    let old_scale_time = state.original.last_scale_time.clone();
    let mut monitor = Monitor {
        action: ActionLabel::None,
        error: ErrorLabel::None,
        metric_computations: std::mem::take(&mut state.computations),
    };
    let mut error = None;
    let status = if let Some(failure) = state.failure.clone() {
        state.events.push(Event {
            type_: EventType::Warning,
            reason: "FailedComputeMetricsReplicas".to_owned(),
            message: failure.clone(),
        });
        error = Some(format!(
            "failed to compute desired number of replicas based on listed metrics for {reference}: {failure}"
        ));
        build_status(&state, old_desired, old_scale_time)
    } else {
        match (scale_to, outcome) {
            (Some(desired), RescaleOutcome::Succeeded) => {
                set_condition(
                    &mut state.conditions,
                    "AbleToScale",
                    "True",
                    "SucceededRescale",
                    format!("the HPA controller was able to update the target scale to {desired}"),
                    now,
                );
                state.events.push(Event {
                    type_: EventType::Normal,
                    reason: "SuccessfulRescale".to_owned(),
                    message: format!("New size: {desired}; reason: {rescale_reason}"),
                });
                let behavior: Option<HorizontalPodAutoscalerBehavior> = state
                    .hpa
                    .spec
                    .behavior
                    .as_ref()
                    .map(normalize::default_behavior);
                normalize::store_scale_event(
                    behavior.as_ref(),
                    &mut state.history,
                    state.current,
                    desired,
                    now,
                );
                if state.scale_to_zero_gate {
                    if state.current > 0
                        && desired == 0
                        && state.min == 0
                        && state.has_object_or_external
                    {
                        set_condition(
                            &mut state.conditions,
                            "ScaledToZero",
                            "True",
                            "ScaledToZero",
                            "the HPA controller scaled the workload to zero",
                            now,
                        );
                    } else {
                        // Every other successful rescale, the condition
                        // added when missing (upstream's else branch).
                        set_condition(
                            &mut state.conditions,
                            "ScaledToZero",
                            "False",
                            "NotScaledToZero",
                            "the HPA controller did not scale the workload to zero",
                            now,
                        );
                    }
                }
                monitor.action = if desired > state.current {
                    ActionLabel::ScaleUp
                } else {
                    ActionLabel::ScaleDown
                };
                build_status(&state, desired, Some(Time(now)))
            }
            (Some(desired), RescaleOutcome::Failed(err)) => {
                state.events.push(Event {
                    type_: EventType::Warning,
                    reason: "FailedRescale".to_owned(),
                    message: format!("New size: {desired}; reason: {rescale_reason}; error: {err}"),
                });
                set_condition(
                    &mut state.conditions,
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    format!("the HPA controller was unable to update the target scale: {err}"),
                    now,
                );
                error = Some(format!("failed to rescale {reference}: {err}"));
                build_status(&state, old_desired, old_scale_time)
            }
            // No update requested (or the shell skipped it): nothing changes in scale.
            _ => build_status(&state, state.current, old_scale_time),
        }
    };
    if error.is_none() {
        error = state.soft_error.clone();
    }
    if error.is_some() {
        monitor.error = ErrorLabel::Internal;
    }
    let changed = status_changed(&state.original, &status);
    Outcome {
        status,
        status_changed: changed,
        events: state.events,
        monitor,
        history: state.history,
        error,
        trace: Some(trace),
    }
}

/// The outcome when the scale could not be read: condition AbleToScale=False
/// `FailedGetScale`, a Warning event, the rest of the status unchanged.
pub fn get_scale_failed(
    hpa: &HorizontalPodAutoscaler,
    error: &ScaleReadError,
    history: &HpaHistory,
    config: &ControllerConfig,
    now: Timestamp,
) -> Outcome {
    let original = hpa.status.clone().unwrap_or_default();
    let mut conditions = conditions_of(hpa);
    if !config.feature_gates.hpa_scale_to_zero {
        remove_condition(&mut conditions, "ScaledToZero");
    }
    let (err, label, returned) = match error {
        ScaleReadError::InvalidApiVersion(e) => (
            e,
            ErrorLabel::Spec,
            format!("invalid API version in scale target reference: {e}"),
        ),
        ScaleReadError::NoMapping(e) => (
            e,
            ErrorLabel::Internal,
            format!("unable to determine resource for scale target reference: {e}"),
        ),
        ScaleReadError::Failed(e) => (
            e,
            ErrorLabel::Internal,
            format!(
                "failed to query scale subresource for {}: {e}",
                reference(hpa)
            ),
        ),
    };
    set_condition(
        &mut conditions,
        "AbleToScale",
        "False",
        "FailedGetScale",
        format!("the HPA controller was unable to get the target's current scale: {err}"),
        now,
    );
    let mut status = original.clone();
    status.conditions = Some(conditions);
    Outcome {
        status_changed: status_changed(&original, &status),
        status,
        events: vec![Event {
            type_: EventType::Warning,
            reason: "FailedGetScale".to_owned(),
            message: err.clone(),
        }],
        monitor: Monitor {
            action: ActionLabel::None,
            error: label,
            metric_computations: Vec::new(),
        },
        history: history.clone(),
        error: Some(returned),
        trace: None,
    }
}
