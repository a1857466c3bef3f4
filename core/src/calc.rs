//! The replica calculator: one proposal per metric.
//!
//! A port of upstream `replica_calculator.go` and `metrics/utilization.go`
//! (Kubernetes v1.36 and v1.37), kept at the same granularity so each
//! function can be checked against upstream's unit-test vectors. Functions
//! whose arithmetic changed in 1.38 (int32 saturation, utilization clamping,
//! pod overhead, the per-pod average at zero replicas) take the release. Arithmetic follows Go exactly
//! where it matters: integer truncation of utilization, `ceil` of float ratios,
//! saturation at `MaxInt64` / `MaxInt32`, and which replica count (spec or
//! status) feeds which formula. Totals are summed in `i128` so large values
//! cannot overflow (the "overflow-hardened" upstream variant).

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

pub(crate) use crate::grouping::add;
use crate::grouping::{GroupRule, PodGroup, TimeStyle, group_pod};
pub use crate::grouping::{Readiness, go_zero_time};
use crate::pod::{CoreContainer, CorePod, CorePodSpec};
use crate::quantity::Quantity;
use crate::version::KubernetesVersion;

/// Why a replica proposal could not be computed. Messages are upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalcError {
    /// The pod list for the selector is empty.
    #[error("no pods returned by selector while calculating replica count")]
    NoPods,
    /// Counting ready pods for a value target failed (upstream wraps it).
    #[error("unable to calculate ready pods: {0}")]
    ReadyPods(Box<CalcError>),
    /// Every sample belonged to an ignored or unready pod.
    #[error("did not receive metrics for targeted pods (pods might be unready)")]
    NoReadyMetrics,
    /// No sample matched a pod with a request.
    #[error("no metrics returned matched known pods")]
    NoMatchingRequests,
    /// Utilization overflowed int32.
    #[error("utilization {utilization} does not fit in int32")]
    UtilizationOverflow {
        /// The exact utilization percentage.
        utilization: i128,
    },
    /// A container without a request for the resource.
    #[error("missing request for {resource} in container {container} of Pod {pod}")]
    MissingRequest {
        /// The resource name.
        resource: String,
        /// The container name.
        container: String,
        /// The pod name.
        pod: String,
    },
    /// Pod-level requests are set but lack the resource.
    #[error("missing pod-level request for {resource} in Pod {pod}")]
    MissingPodLevelRequest {
        /// The resource name.
        resource: String,
        /// The pod name.
        pod: String,
    },
    /// The named container does not exist in the pod spec.
    #[error("container {container} not found in Pod {pod}")]
    ContainerNotFound {
        /// The container name.
        container: String,
        /// The pod name.
        pod: String,
    },
    /// A request quantity that does not parse.
    #[error("invalid request {value:?} for {resource} in container {container} of Pod {pod}")]
    BadRequest {
        /// The resource name.
        resource: String,
        /// The container name (or `pod-level`).
        container: String,
        /// The pod name.
        pod: String,
        /// The unparsable text.
        value: String,
    },
    /// The metrics API returned an empty list.
    #[error("no metrics returned from {api}")]
    NoMetricsReturned {
        /// `resource metrics API`, `custom metrics API` or `external metrics API`.
        api: &'static str,
    },
    /// A named container is absent from a pod's metrics.
    #[error(
        "failed to get container metrics: container {container} not present in metrics for pod {namespace}/{pod}"
    )]
    ContainerNotInMetrics {
        /// The container name.
        container: String,
        /// Namespace of the pod.
        namespace: String,
        /// The pod name.
        pod: String,
    },
}

/// One pod's sample for a metric: milli-value, when it was taken and over
/// which window (upstream `PodMetric`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PodMetric {
    /// Milli-units (`MilliValue()`).
    pub value: i64,
    /// Sample timestamp.
    pub timestamp: Timestamp,
    /// Sample window.
    pub window: SignedDuration,
}

/// Samples by pod name (upstream `PodMetricsInfo`). The names are shared
/// (`Arc`) with the samples they come from, and on with the pod groups and
/// the trace: a sync of an HPA with 10 pods then copies no pod name.
pub type PodMetricsInfo = BTreeMap<Arc<str>, PodMetric>;

/// The tolerance band `[1 - scale_down, 1 + scale_up]` inside which nothing changes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerances {
    /// Fraction below 1.0 still tolerated.
    pub scale_down: f64,
    /// Fraction above 1.0 still tolerated.
    pub scale_up: f64,
}

impl Tolerances {
    /// Both directions at `t`.
    pub fn symmetric(t: f64) -> Self {
        Self {
            scale_down: t,
            scale_up: t,
        }
    }

    /// Whether both directions tolerate the same fraction.
    pub fn is_symmetric(&self) -> bool {
        self.scale_up == self.scale_down
    }

    /// Whether `ratio` is inside the band (inclusive).
    pub fn is_within(&self, ratio: f64) -> bool {
        (1.0 - self.scale_down) <= ratio && ratio <= (1.0 + self.scale_up)
    }
}

/// `±10%` when both directions agree, else `+5% / -10%` (up, then down).
impl std::fmt::Display for Tolerances {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let percent = |t: f64| format!("{}%", (t * 1000.0).round() / 10.0);
        if self.is_symmetric() {
            write!(f, "±{}", percent(self.scale_up))
        } else {
            write!(
                f,
                "+{} / -{}",
                percent(self.scale_up),
                percent(self.scale_down)
            )
        }
    }
}

/// How [`group_pods`] classified the pods; names are shared with the
/// samples' ([`PodMetricsInfo`]) where the pod has one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PodGroups {
    /// Pods whose sample counts as is.
    pub ready_pod_count: usize,
    /// Ready pods by name (for traces).
    pub ready: BTreeSet<Arc<str>>,
    /// Pending pods, and (CPU only) pods not yet trustworthy.
    pub unready: BTreeSet<Arc<str>>,
    /// Pods without a sample.
    pub missing: BTreeSet<Arc<str>>,
    /// Deleted or Failed pods.
    pub ignored: BTreeSet<Arc<str>>,
    /// Why each pod is in its group, where that is more than "counted as
    /// reported" ([`GroupRule::Counted`], which the map leaves out).
    pub rules: BTreeMap<Arc<str>, GroupRule>,
}

impl PodGroups {
    /// Whether `pod` is in a group (the scale's selector picked it).
    pub fn contains(&self, pod: &str) -> bool {
        self.ready.contains(pod)
            || self.unready.contains(pod)
            || self.missing.contains(pod)
            || self.ignored.contains(pod)
    }

    /// Why `pod` is in its group.
    pub fn rule(&self, pod: &str) -> GroupRule {
        self.rules.get(pod).copied().unwrap_or_default()
    }
}

pub(crate) fn pod_name(pod: &CorePod) -> &str {
    &pod.name
}

pub(crate) fn pod_phase(pod: &CorePod) -> &str {
    &pod.phase
}

/// Upstream `podutil.IsPodReady`.
pub(crate) fn is_pod_ready(pod: &CorePod) -> bool {
    pod.ready.as_ref().is_some_and(|c| c.status == "True")
}

/// Classifies pods as ready, unready, missing or ignored (upstream
/// `groupPods`), each by [`group_pod`], which also says why.
///
/// `now` plays the part of Go's `time.Now()`; comparisons are strict as upstream's.
/// A pod without a Ready condition has, for the transition time, Go's zero time.
pub fn group_pods<P: Borrow<CorePod>>(
    pods: &[P],
    metrics: &PodMetricsInfo,
    resource: &str,
    readiness: Readiness,
    now: Timestamp,
) -> PodGroups {
    let mut groups = PodGroups::default();
    for pod in pods {
        let pod = pod.borrow();
        // The sample's name when there is one (shared, not copied).
        let (name, metric) = match metrics.get_key_value(pod_name(pod)) {
            Some((name, metric)) => (Arc::clone(name), Some(metric)),
            None => (Arc::from(pod_name(pod)), None),
        };
        let rule = group_pod(
            pod,
            metric.map(|m| (m.timestamp, m.window)),
            resource,
            readiness,
            now,
        );
        if !rule.is_counted() {
            groups.rules.insert(Arc::clone(&name), rule);
        }
        match rule.group() {
            PodGroup::Ready => {
                groups.ready_pod_count += 1;
                groups.ready.insert(name);
            }
            PodGroup::Unready => {
                groups.unready.insert(name);
            }
            PodGroup::Missing => {
                groups.missing.insert(name);
            }
            PodGroup::Ignored => {
                groups.ignored.insert(name);
            }
        }
    }
    groups
}

fn milli(
    q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    resource: &str,
    container: &str,
    pod: &str,
) -> Result<i64, CalcError> {
    Quantity::parse(&q.0)
        .map(|q| q.milli_value())
        .map_err(|_| CalcError::BadRequest {
            resource: resource.to_owned(),
            container: container.to_owned(),
            pod: pod.to_owned(),
            value: q.0.clone(),
        })
}

/// Sums a pod's requests over its containers and restartable (sidecar) init
/// containers, or takes only `container` when named (upstream
/// `calculatePodRequestsFromContainers`).
pub fn pod_requests_from_containers(
    pod: &CorePod,
    container: &str,
    resource: &str,
) -> Result<i64, CalcError> {
    let name = pod_name(pod);
    let sidecars = pod.spec.init_containers.iter().filter(|c| c.is_sidecar());
    let mut request: i64 = 0;
    for c in pod.spec.containers.iter().chain(sidecars) {
        if container.is_empty() || container == c.name {
            let q = c
                .requests
                .get(resource)
                .ok_or_else(|| CalcError::MissingRequest {
                    resource: resource.to_owned(),
                    container: c.name.clone(),
                    pod: name.to_owned(),
                })?;
            request = request.saturating_add(milli(q, resource, &c.name, name)?);
        }
        if container == c.name {
            return Ok(request);
        }
    }
    if !container.is_empty() {
        return Err(CalcError::ContainerNotFound {
            container: container.to_owned(),
            pod: name.to_owned(),
        });
    }
    Ok(request)
}

/// Whether pod-level `spec.resources.requests` name a supported resource
/// (component-helpers `IsPodLevelRequestsSet`, KEP-2837).
fn pod_level_requests_set(pod: &CorePod) -> bool {
    pod.spec
        .requests
        .keys()
        .any(|k| supported_pod_level_resource(k))
}

/// component-helpers `IsSupportedPodLevelResource`.
fn supported_pod_level_resource(name: &str) -> bool {
    name == "cpu" || name == "memory" || name.starts_with("hugepages-")
}

/// One resource of a `ResourceList` in nano units; `None` when absent.
fn nano_of(
    list: &crate::pod::ResourceList,
    resource: &str,
    container: &str,
    pod: &str,
) -> Result<Option<i128>, CalcError> {
    let Some(q) = list.get(resource) else {
        return Ok(None);
    };
    Quantity::parse(&q.0)
        .map(|q| Some(q.scaled_value_i128(-9)))
        .map_err(|_| CalcError::BadRequest {
            resource: resource.to_owned(),
            container: container.to_owned(),
            pod: pod.to_owned(),
            value: q.0.clone(),
        })
}

/// `addResourceList` for one resource: absent plus absent stays absent.
fn add_request(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (a, b) => a.or(b),
    }
}

/// `maxResourceList` for one resource.
fn max_request(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// One resource of component-helpers `PodRequests(pod, opts)`, in nano units
/// (`None`: the resulting list lacks it): the containers' sum, raised to the
/// largest init phase (an init container plus the sidecars started before
/// it; sidecars also add to the sum), replaced by the pod-level request when
/// pod-level requests are set, plus `spec.overhead` through 1.37 (the HPA
/// passes empty options) and without it from 1.38
/// ([`KubernetesVersion::pod_level_requests_exclude_overhead`]).
pub fn pod_requests_nano(
    pod: &CorePod,
    resource: &str,
    version: KubernetesVersion,
) -> Result<Option<i128>, CalcError> {
    let name = pod_name(pod);
    let requests_of = |c: &CoreContainer| nano_of(&c.requests, resource, &c.name, name);
    let mut total = None;
    for c in &pod.spec.containers {
        total = add_request(total, requests_of(c)?);
    }
    let mut sidecars = None;
    let mut init_max = None;
    for c in &pod.spec.init_containers {
        let own = requests_of(c)?;
        let phase = if c.is_sidecar() {
            total = add_request(total, own);
            sidecars = add_request(sidecars, own);
            sidecars
        } else {
            add_request(own, sidecars)
        };
        init_max = max_request(init_max, phase);
    }
    total = max_request(total, init_max);
    if pod_level_requests_set(pod)
        && supported_pod_level_resource(resource)
        && let Some(level) = nano_of(&pod.spec.requests, resource, "pod-level", name)?
    {
        total = Some(level);
    }
    if version.pod_level_requests_exclude_overhead() {
        return Ok(total);
    }
    let overhead = nano_of(&pod.spec.overhead, resource, "overhead", name)?;
    Ok(add_request(total, overhead))
}

/// Request per pod, in milli-units (upstream `calculateRequests`): with the
/// `PodLevelResources` gate on, pod-level requests set and no container
/// named, `PodRequests` (containers, init phases, pod-level override and,
/// through 1.37, overhead; a missing resource is an error naming the pod);
/// otherwise the sum over containers and sidecars, or the named container
/// (never overhead).
pub fn calculate_requests<P: Borrow<CorePod>>(
    pods: &[P],
    container: &str,
    resource: &str,
    pod_level_resources: bool,
    version: KubernetesVersion,
) -> Result<BTreeMap<String, i64>, CalcError> {
    Ok(
        requests_by_pod(pods, container, resource, pod_level_resources, version)?
            .into_iter()
            .map(|(pod, request)| (pod.to_owned(), request))
            .collect(),
    )
}

/// [`calculate_requests`] keyed by the pods' own names (borrowed, not
/// copied: what a sync uses).
fn requests_by_pod<'p, P: Borrow<CorePod>>(
    pods: &'p [P],
    container: &str,
    resource: &str,
    pod_level_resources: bool,
    version: KubernetesVersion,
) -> Result<BTreeMap<&'p str, i64>, CalcError> {
    let mut requests = BTreeMap::new();
    // A request is a function of the pod's spec alone (its name only names
    // it in errors), and the pods of one template share their spec: it is
    // summed (and its quantities parsed) once per run of pods sharing it.
    let mut last: Option<(*const CorePodSpec, i64)> = None;
    for pod in pods {
        let pod = pod.borrow();
        let spec = Arc::as_ptr(&pod.spec);
        if let Some((seen, request)) = last
            && seen == spec
        {
            requests.insert(pod_name(pod), request);
            continue;
        }
        let request = if pod_level_resources && pod_level_requests_set(pod) && container.is_empty()
        {
            let nano = pod_requests_nano(pod, resource, version)?.ok_or_else(|| {
                CalcError::MissingPodLevelRequest {
                    resource: resource.to_owned(),
                    pod: pod_name(pod).to_owned(),
                }
            })?;
            // resource.Quantity.MilliValue rounds up.
            i64::try_from(nano.div_euclid(1_000_000) + i128::from(nano.rem_euclid(1_000_000) != 0))
                .unwrap_or(i64::MAX)
        } else {
            pod_requests_from_containers(pod, container, resource)?
        };
        last = Some((spec, request));
        requests.insert(pod_name(pod), request);
    }
    Ok(requests)
}

/// Utilization of `metrics` against `requests` (upstream `GetResourceUtilizationRatio`):
/// returns `(ratio, utilization %, raw average milli-value)`. Only pods with
/// both a sample and a request count; utilization is truncated to an integer
/// before the ratio is taken. `requests` are by pod name, owned (as
/// [`calculate_requests`] returns them) or borrowed from the pods (as a sync
/// uses them, copying no name).
///
/// Totals are exact (the "overflow-hardened" upstream variant). A
/// utilization beyond int32 fails the metric through 1.37 and is clamped to
/// int32's bounds from 1.38
/// ([`KubernetesVersion::saturating_utilization`]), the ratio taken from the
/// clamped value as k/k #142192 does.
pub fn resource_utilization_ratio<K: Borrow<str> + Ord>(
    metrics: &PodMetricsInfo,
    requests: &BTreeMap<K, i64>,
    target_utilization: i32,
    version: KubernetesVersion,
) -> Result<(f64, i32, i64), CalcError> {
    let mut metrics_total: i128 = 0;
    let mut requests_total: i128 = 0;
    let mut count: i128 = 0;
    for (pod, metric) in metrics {
        if let Some(request) = requests.get::<str>(pod) {
            metrics_total += i128::from(metric.value);
            requests_total += i128::from(*request);
            count += 1;
        }
    }
    if requests_total == 0 {
        return Err(CalcError::NoMatchingRequests);
    }
    let exact = metrics_total.saturating_mul(100) / requests_total;
    let utilization = if version.saturating_utilization() {
        i32::try_from(exact.clamp(i128::from(i32::MIN), i128::from(i32::MAX))).unwrap_or(i32::MAX)
    } else {
        i32::try_from(exact).map_err(|_| CalcError::UtilizationOverflow { utilization: exact })?
    };
    let raw = i64::try_from(metrics_total / count).unwrap_or(if metrics_total < 0 {
        i64::MIN
    } else {
        i64::MAX
    });
    Ok((
        f64::from(utilization) / f64::from(target_utilization),
        utilization,
        raw,
    ))
}

/// Average of plain samples against a target (upstream `GetMetricUsageRatio`):
/// `(ratio, average milli-value)`.
pub fn metric_usage_ratio(metrics: &PodMetricsInfo, target_usage: i64) -> (f64, i64) {
    let count = metrics.len() as i128;
    if count == 0 {
        return (0.0, 0);
    }
    let total: i128 = metrics.values().map(|m| i128::from(m.value)).sum();
    let avg = i64::try_from(total / count).unwrap_or(if total < 0 { i64::MIN } else { i64::MAX });
    (as_f64(avg) / as_f64(target_usage), avg)
}

/// `total + value` if it fits in `i64` (upstream `addMetricTotal`).
pub fn add_metric_total(total: i64, value: i64) -> Option<i64> {
    total.checked_add(value)
}

#[allow(
    clippy::cast_precision_loss,
    reason = "Go converts int64 to float64 the same way"
)]
fn as_f64(v: i64) -> f64 {
    v as f64
}

/// Go's `int32(math.Ceil(x))` as `version` computes it: through 1.37 as Go
/// on amd64 ([`go_int32`]: out of range or NaN gives `MinInt32`); from 1.38
/// through upstream's one saturating helper (k/k #141397,
/// [`KubernetesVersion::saturating_int32`]).
pub fn ceil_to_int32(x: f64, version: KubernetesVersion) -> i32 {
    to_int32(x.ceil(), version)
}

/// Go's `int32(x)` as `version` computes it (see [`ceil_to_int32`]). From
/// 1.38 the result saturates at `MaxInt32`, which the PR states. Below
/// `MinInt32` it saturates too and NaN gives 0, as Go on arm64 does: the PR
/// text on NaN is cut off where it was read and the helper's code was not
/// seen, so both are assumptions. No replica count reaches either in
/// practice: the ratios are non-negative, and NaN needs 0/0.
#[allow(
    clippy::cast_possible_truncation,
    reason = "Rust's float-to-int `as` saturates and maps NaN to 0, the 1.38 rule"
)]
pub fn to_int32(x: f64, version: KubernetesVersion) -> i32 {
    if version.saturating_int32() {
        x as i32
    } else {
        go_int32(x)
    }
}

/// Go's `int32(x)` for a float64 as kube-controller-manager runs it on
/// amd64 (CVTTSD2SL): truncation toward zero, and for NaN or a value out of
/// int32's range the "integer indefinite" 0x80000000, i.e. `i32::MIN`, not
/// Rust's saturation. So an overflowing proposal becomes -2147483648 there
/// (docs/fidelity.md).
#[allow(
    clippy::cast_possible_truncation,
    reason = "in range: plain truncation, as Go"
)]
pub fn go_int32(x: f64) -> i32 {
    if !(-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        i32::MIN
    } else {
        x as i32
    }
}

/// Go's `int64(x)` for a float64 on amd64 (CVTTSD2SQ): `i64::MIN` for NaN
/// or out of range.
#[allow(
    clippy::cast_possible_truncation,
    reason = "in range: plain truncation, as Go"
)]
pub fn go_int64(x: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// A pod's share in a pod-based proposal, for the decision trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodShare {
    /// Pod name.
    pub pod: Arc<str>,
    /// `ready`, `unready`, `missing` or `ignored`.
    pub class: &'static str,
    /// The sample (milli), if one was reported.
    pub sample: Option<i64>,
    /// The value used in the second pass (missing/unready substitution), if any.
    pub assumed: Option<i64>,
    /// Why the pod is in its class, with the times that decided it (left
    /// out when it was simply counted as reported).
    #[serde(skip_serializing_if = "GroupRule::is_counted")]
    pub why: GroupRule,
}

/// The classes of [`PodShare::class`].
pub const POD_CLASSES: [&str; 4] = ["ready", "unready", "missing", "ignored"];

/// A share read back: its class one of [`POD_CLASSES`].
impl<'de> Deserialize<'de> for PodShare {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            pod: Arc<str>,
            class: String,
            sample: Option<i64>,
            assumed: Option<i64>,
            #[serde(default)]
            why: GroupRule,
        }
        let wire = Wire::deserialize(deserializer)?;
        let class = POD_CLASSES
            .into_iter()
            .find(|class| *class == wire.class)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("unknown pod class {:?}", wire.class))
            })?;
        Ok(Self {
            pod: wire.pod,
            class,
            sample: wire.sample,
            assumed: wire.assumed,
            why: wire.why,
        })
    }
}

impl PodShare {
    /// What the controller took for the pod, in words, where it did not
    /// count its sample as reported; `ratio` is its metric's first-pass
    /// ratio (which side of the target decides what a missing pod is
    /// taken as).
    pub fn taken(&self, ratio: Option<f64>) -> Option<String> {
        Some(match (self.class, self.assumed) {
            ("missing", Some(0)) | ("unready", Some(_)) => "taken as 0 on this scale-up".to_owned(),
            ("missing", Some(v)) => format!(
                "taken as {v}m on this scale-down (the target; for a utilization target at least the pod's request)"
            ),
            ("missing", None) if ratio == Some(1.0) => {
                "nothing taken: the others are exactly at the target".to_owned()
            }
            ("missing" | "unready" | "ignored", None) => "left out".to_owned(),
            _ => return None,
        })
    }

    /// Why the pod counted as it did and what the controller took for it,
    /// in a user's words.
    pub fn words(&self, ratio: Option<f64>, now: Timestamp, style: TimeStyle) -> String {
        let rule = self.why.words(now, style);
        match self.taken(ratio) {
            Some(taken) => format!("{rule}; {taken}"),
            None => rule,
        }
    }
}

/// A pod-based proposal (Resource, ContainerResource, Pods).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodProposal {
    /// Proposed replicas.
    pub replicas: i32,
    /// Utilization in percent, for utilization targets.
    pub utilization: Option<i32>,
    /// Raw average (milli).
    pub raw_value: i64,
    /// First sample's timestamp.
    pub timestamp: Timestamp,
    /// First-pass ratio.
    pub ratio: f64,
    /// Second-pass ratio, when missing or unready pods were substituted.
    pub new_ratio: Option<f64>,
    /// How each pod counted.
    pub pods: Vec<PodShare>,
}

/// A pod-based proposal that failed, with the pods as they were grouped
/// by then (none when there were no pods to group): the trace shows them
/// beside the error, so "pods might be unready" names the pods and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct PodFailure {
    /// Upstream's error (boxed: an error path should not widen every
    /// proposal's `Result`).
    pub error: Box<CalcError>,
    /// How each pod counted.
    pub pods: Vec<PodShare>,
}

impl From<CalcError> for PodFailure {
    fn from(error: CalcError) -> Self {
        Self {
            error: Box::new(error),
            pods: Vec::new(),
        }
    }
}

impl PodFailure {
    fn grouped(
        error: CalcError,
        groups: &PodGroups,
        samples: &PodMetricsInfo,
        unselected_count: bool,
    ) -> Self {
        Self {
            error: Box::new(error),
            pods: shares(groups, samples, &PodMetricsInfo::new(), unselected_count),
        }
    }
}

/// Each pod's share: the grouped pods, then the samples of pods the
/// selector did not pick ([`GroupRule::NotSelected`]; `unselected_count`:
/// whether the target averages them in, as a plain value target does).
fn shares(
    groups: &PodGroups,
    samples: &PodMetricsInfo,
    assumed: &PodMetricsInfo,
    unselected_count: bool,
) -> Vec<PodShare> {
    // Room for the grouped pods (every sample's, but for unselected pods').
    let mut out = Vec::with_capacity(
        groups.ready.len() + groups.unready.len() + groups.missing.len() + groups.ignored.len(),
    );
    let mut push = |set: &BTreeSet<Arc<str>>, class| {
        for p in set {
            out.push(PodShare {
                pod: Arc::clone(p),
                class,
                sample: samples.get(p).map(|m| m.value),
                assumed: assumed.get(p).map(|m| m.value),
                why: groups.rule(p),
            });
        }
    };
    push(&groups.ready, "ready");
    push(&groups.unready, "unready");
    push(&groups.missing, "missing");
    push(&groups.ignored, "ignored");
    let why = GroupRule::NotSelected {
        counted: unselected_count,
    };
    out.extend(
        samples
            .iter()
            .filter(|(p, _)| !groups.contains(p))
            .map(|(p, m)| PodShare {
                pod: Arc::clone(p),
                class: why.group().as_str(),
                sample: Some(m.value),
                assumed: None,
                why,
            }),
    );
    out
}

/// What differs between the utilization and the plain-value pod algorithms.
enum PodTarget<'a> {
    Utilization {
        target: i32,
        requests: &'a BTreeMap<&'a str, i64>,
    },
    Plain {
        target: i64,
    },
}

impl PodTarget<'_> {
    fn ratio(
        &self,
        metrics: &PodMetricsInfo,
        version: KubernetesVersion,
    ) -> Result<(f64, Option<i32>, i64), CalcError> {
        match self {
            Self::Utilization { target, requests } => {
                let (r, u, raw) = resource_utilization_ratio(metrics, requests, *target, version)?;
                Ok((r, Some(u), raw))
            }
            Self::Plain { target } => {
                let (r, avg) = metric_usage_ratio(metrics, *target);
                Ok((r, None, avg))
            }
        }
    }

    /// What a missing pod is assumed to use on scale-down.
    fn missing_on_scale_down(&self, pod: &str) -> i64 {
        match self {
            Self::Utilization { target, requests } => {
                let fallback = i128::from((*target).max(100));
                let req = i128::from(requests.get(pod).copied().unwrap_or(0));
                i64::try_from(req * fallback / 100).unwrap_or(i64::MAX)
            }
            Self::Plain { target } => *target,
        }
    }
}

/// The shared two-pass algorithm of `GetResourceReplicas` and `calcPlainMetricReplicas`.
fn pod_replicas(
    current_replicas: i32,
    target: PodTarget<'_>,
    tolerances: Tolerances,
    samples: &PodMetricsInfo,
    groups: PodGroups,
    timestamp: Timestamp,
    version: KubernetesVersion,
) -> Result<PodProposal, PodFailure> {
    // A plain value target averages every sample, a selected pod's or not.
    let unselected_count = matches!(target, PodTarget::Plain { .. });
    // Every sample counts when no pod is left out: the samples themselves,
    // not a copy (the common case, a sync of ready pods).
    let filtered: PodMetricsInfo;
    let metrics = if groups.ignored.is_empty() && groups.unready.is_empty() {
        samples
    } else {
        filtered = samples
            .iter()
            .filter(|(p, _)| !groups.ignored.contains(*p) && !groups.unready.contains(*p))
            .map(|(p, m)| (Arc::clone(p), *m))
            .collect();
        &filtered
    };
    if metrics.is_empty() {
        return Err(PodFailure::grouped(
            CalcError::NoReadyMetrics,
            &groups,
            samples,
            unselected_count,
        ));
    }
    let (ratio, utilization, raw_value) = target
        .ratio(metrics, version)
        .map_err(|e| PodFailure::grouped(e, &groups, samples, unselected_count))?;
    let mut proposal = PodProposal {
        replicas: current_replicas,
        utilization,
        raw_value,
        timestamp,
        ratio,
        new_ratio: None,
        pods: Vec::new(),
    };
    let scale_up_with_unready = !groups.unready.is_empty() && ratio > 1.0;
    if !scale_up_with_unready && groups.missing.is_empty() {
        proposal.pods = shares(&groups, samples, &PodMetricsInfo::new(), unselected_count);
        if !tolerances.is_within(ratio) {
            proposal.replicas = ceil_to_int32(ratio * groups.ready_pod_count as f64, version);
        }
        return Ok(proposal);
    }
    let mut assumed = PodMetricsInfo::new();
    let zero = |v| PodMetric {
        value: v,
        timestamp,
        window: SignedDuration::ZERO,
    };
    if !groups.missing.is_empty() {
        if ratio < 1.0 {
            for p in &groups.missing {
                assumed.insert(Arc::clone(p), zero(target.missing_on_scale_down(p)));
            }
        } else if ratio > 1.0 {
            for p in &groups.missing {
                assumed.insert(Arc::clone(p), zero(0));
            }
        }
    }
    if scale_up_with_unready {
        for p in &groups.unready {
            assumed.insert(Arc::clone(p), zero(0));
        }
    }
    let mut metrics = metrics.clone();
    metrics.extend(assumed.iter().map(|(p, m)| (Arc::clone(p), *m)));
    proposal.pods = shares(&groups, samples, &assumed, unselected_count);
    let (new_ratio, _, _) = target
        .ratio(&metrics, version)
        .map_err(|e| PodFailure::grouped(e, &groups, samples, unselected_count))?;
    proposal.new_ratio = Some(new_ratio);
    if tolerances.is_within(new_ratio)
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return Ok(proposal);
    }
    let new_replicas = ceil_to_int32(new_ratio * metrics.len() as f64, version);
    if (new_ratio < 1.0 && new_replicas > current_replicas)
        || (new_ratio > 1.0 && new_replicas < current_replicas)
    {
        return Ok(proposal);
    }
    proposal.replicas = new_replicas;
    Ok(proposal)
}

/// Resource / ContainerResource with a Utilization target (upstream `GetResourceReplicas`).
/// `metrics` are per-pod samples already reduced by [`pod_resource_metrics`];
/// `current_replicas` is the scale's spec replicas.
#[allow(clippy::too_many_arguments, reason = "mirrors upstream's signature")]
pub fn resource_replicas<P: Borrow<CorePod>>(
    current_replicas: i32,
    target_utilization: i32,
    resource: &str,
    container: &str,
    tolerances: Tolerances,
    pods: &[P],
    metrics: &PodMetricsInfo,
    timestamp: Timestamp,
    readiness: Readiness,
    pod_level_resources: bool,
    now: Timestamp,
    version: KubernetesVersion,
) -> Result<PodProposal, PodFailure> {
    if pods.is_empty() {
        return Err(CalcError::NoPods.into());
    }
    let groups = group_pods(pods, metrics, resource, readiness, now);
    if metrics
        .keys()
        .all(|p| groups.ignored.contains(p) || groups.unready.contains(p))
    {
        return Err(PodFailure::grouped(
            CalcError::NoReadyMetrics,
            &groups,
            metrics,
            false,
        ));
    }
    let requests = requests_by_pod(pods, container, resource, pod_level_resources, version)
        .map_err(|e| PodFailure::grouped(e, &groups, metrics, false))?;
    pod_replicas(
        current_replicas,
        PodTarget::Utilization {
            target: target_utilization,
            requests: &requests,
        },
        tolerances,
        metrics,
        groups,
        timestamp,
        version,
    )
}

/// Resource / ContainerResource AverageValue and Pods metrics (upstream
/// `GetRawResourceReplicas`, `GetMetricReplicas` → `calcPlainMetricReplicas`).
/// `resource` is the resource name, or `""` for custom Pods metrics (no CPU
/// readiness rules then).
#[allow(clippy::too_many_arguments, reason = "mirrors upstream's signature")]
pub fn plain_metric_replicas<P: Borrow<CorePod>>(
    current_replicas: i32,
    target_usage: i64,
    resource: &str,
    tolerances: Tolerances,
    pods: &[P],
    metrics: &PodMetricsInfo,
    timestamp: Timestamp,
    readiness: Readiness,
    now: Timestamp,
    version: KubernetesVersion,
) -> Result<PodProposal, PodFailure> {
    if pods.is_empty() {
        return Err(CalcError::NoPods.into());
    }
    let groups = group_pods(pods, metrics, resource, readiness, now);
    pod_replicas(
        current_replicas,
        PodTarget::Plain {
            target: target_usage,
        },
        tolerances,
        metrics,
        groups,
        timestamp,
        version,
    )
}

/// A proposal from a single value (Object, External).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueProposal {
    /// Proposed replicas.
    pub replicas: i32,
    /// The value reported in status (milli): the value, the sum, or the per-pod average.
    pub usage: i64,
    /// The ratio that drove the decision.
    pub ratio: f64,
    /// Ready, running pods used (Value targets with current replicas > 0).
    pub ready_pods: Option<usize>,
}

/// Running and Ready pods (upstream `getReadyPodsCount`).
fn ready_pods_count<P: Borrow<CorePod>>(pods: &[P]) -> Result<usize, CalcError> {
    if pods.is_empty() {
        return Err(CalcError::NoPods);
    }
    Ok(pods
        .iter()
        .map(Borrow::borrow)
        .filter(|p| pod_phase(p) == "Running" && is_pod_ready(p))
        .count())
}

/// Upstream `getUsageRatioReplicaCount`: with replicas, tolerance then
/// `ceil(ratio × ready pods)` capped at MaxInt32; from zero, `ceil(ratio)`.
fn usage_ratio_replica_count<P: Borrow<CorePod>>(
    current_replicas: i32,
    ratio: f64,
    tolerances: Tolerances,
    pods: &[P],
    version: KubernetesVersion,
) -> Result<(i32, Option<usize>), CalcError> {
    if current_replicas == 0 {
        return Ok((ceil_to_int32(ratio, version), None));
    }
    if tolerances.is_within(ratio) {
        return Ok((current_replicas, None));
    }
    let ready = ready_pods_count(pods).map_err(|e| CalcError::ReadyPods(Box::new(e)))?;
    let want = ratio * ready as f64;
    let replicas = if want > f64::from(i32::MAX) {
        i32::MAX
    } else {
        ceil_to_int32(want, version)
    };
    Ok((replicas, Some(ready)))
}

/// Object metric with a Value target (upstream `GetObjectMetricReplicas`);
/// `current_replicas` is the scale's spec replicas.
pub fn object_metric_replicas<P: Borrow<CorePod>>(
    current_replicas: i32,
    target_usage: i64,
    usage: i64,
    tolerances: Tolerances,
    pods: &[P],
    version: KubernetesVersion,
) -> Result<ValueProposal, CalcError> {
    let ratio = as_f64(usage) / as_f64(target_usage);
    let (replicas, ready_pods) =
        usage_ratio_replica_count(current_replicas, ratio, tolerances, pods, version)?;
    Ok(ValueProposal {
        replicas,
        usage,
        ratio,
        ready_pods,
    })
}

/// Object metric with an AverageValue target (upstream
/// `GetObjectPerPodMetricReplicas`); `status_replicas` is the scale's status replicas.
pub fn object_per_pod_metric_replicas(
    status_replicas: i32,
    target_average_usage: i64,
    usage: i64,
    tolerances: Tolerances,
    version: KubernetesVersion,
) -> ValueProposal {
    let mut replicas = status_replicas;
    let ratio = as_f64(usage) / (as_f64(target_average_usage) * f64::from(status_replicas));
    if !tolerances.is_within(ratio) {
        replicas = ceil_to_int32(as_f64(usage) / as_f64(target_average_usage), version);
    }
    ValueProposal {
        replicas,
        usage: per_pod_average(usage, status_replicas, version),
        ratio,
        ready_pods: None,
    }
}

/// The per-pod average an AverageValue Object or External metric reports:
/// `int64(math.Ceil(usage / statusReplicas))`. At 0 replicas that is Go's
/// `int64(±Inf or NaN)`, `MinInt64` on amd64 (the `-9223372036854775808m`
/// of k/k #140956) through 1.37; from 1.38 the raw total
/// ([`KubernetesVersion::per_pod_average_at_zero_replicas_is_the_total`]).
fn per_pod_average(usage: i64, status_replicas: i32, version: KubernetesVersion) -> i64 {
    if status_replicas == 0 && version.per_pod_average_at_zero_replicas_is_the_total() {
        return usage;
    }
    ceil_i64(as_f64(usage) / f64::from(status_replicas))
}

/// Go's `int64(math.Ceil(x))`.
fn ceil_i64(x: f64) -> i64 {
    go_int64(x.ceil())
}

/// External metric with a Value target (upstream `GetExternalMetricReplicas`):
/// the sum of all series, saturating at MaxInt64.
pub fn external_metric_replicas<P: Borrow<CorePod>>(
    current_replicas: i32,
    target_usage: i64,
    values: &[i64],
    tolerances: Tolerances,
    pods: &[P],
    version: KubernetesVersion,
) -> Result<ValueProposal, CalcError> {
    let mut usage: i64 = 0;
    for &v in values {
        if v > 0 && usage > i64::MAX - v {
            usage = i64::MAX;
            break;
        }
        usage = usage.wrapping_add(v);
    }
    object_metric_replicas(
        current_replicas,
        target_usage,
        usage,
        tolerances,
        pods,
        version,
    )
}

/// External metric with an AverageValue target (upstream
/// `GetExternalPerPodMetricReplicas`); `status_replicas` is the scale's status replicas.
pub fn external_per_pod_metric_replicas(
    status_replicas: i32,
    target_usage_per_pod: i64,
    values: &[i64],
    tolerances: Tolerances,
    version: KubernetesVersion,
) -> ValueProposal {
    let mut usage: i64 = 0;
    for &v in values {
        usage = usage.wrapping_add(v);
        if usage < 0 {
            // Upstream's overflow detection.
            usage = i64::MAX;
            break;
        }
    }
    let mut replicas = status_replicas;
    let ratio = as_f64(usage) / (as_f64(target_usage_per_pod) * f64::from(status_replicas));
    if !tolerances.is_within(ratio) {
        let want = (as_f64(usage) / as_f64(target_usage_per_pod)).ceil();
        replicas = if want > f64::from(i32::MAX) {
            i32::MAX
        } else {
            ceil_to_int32(want, version)
        };
    }
    let reported = if as_f64(usage) >= as_f64(i64::MAX) {
        i64::MAX
    } else {
        per_pod_average(usage, status_replicas, version)
    };
    ValueProposal {
        replicas,
        usage: reported,
        ratio,
        ready_pods: None,
    }
}

/// One pod's entry from `metrics.k8s.io` (PodMetrics), as the shell fetched it.
///
/// Names and containers are shared (`Arc`): a shell that lists a
/// namespace's pod metrics once and hands each HPA its pods' entries
/// clones a sample per HPA, and a clone should cost reference counts, not
/// copies of every container's usage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodResourceSample {
    /// Pod name.
    pub pod: Arc<str>,
    /// Pod namespace (for error messages).
    pub namespace: Arc<str>,
    /// Sample timestamp.
    pub timestamp: Timestamp,
    /// Sample window.
    pub window: SignedDuration,
    /// Per-container usage.
    pub containers: Arc<[ContainerUsage]>,
}

/// One container's usage by resource name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContainerUsage {
    /// Container name.
    pub name: String,
    /// Usage by resource (`cpu`, `memory`, ...).
    pub usage: BTreeMap<String, Quantity>,
}

/// Reduces PodMetrics to one sample per pod (upstream metrics client
/// `GetResourceMetric`): with no container named, a pod counts only when every
/// container reports the resource; a named container is read where present
/// (see the note inside on pods lacking it). Returns the samples and the
/// first item's timestamp.
pub fn pod_resource_metrics(
    samples: &[PodResourceSample],
    resource: &str,
    container: &str,
) -> Result<(PodMetricsInfo, Timestamp), CalcError> {
    let first = samples.first().ok_or(CalcError::NoMetricsReturned {
        api: "resource metrics API",
    })?;
    let mut out = PodMetricsInfo::new();
    for s in samples {
        if container.is_empty() {
            let mut sum: i64 = 0;
            let mut missing = s.containers.is_empty();
            for c in s.containers.iter() {
                match c.usage.get(resource) {
                    Some(q) => sum = sum.saturating_add(q.milli_value()),
                    None => {
                        missing = true;
                        break;
                    }
                }
            }
            if !missing {
                out.insert(
                    Arc::clone(&s.pod),
                    PodMetric {
                        value: sum,
                        timestamp: s.timestamp,
                        window: s.window,
                    },
                );
            }
        } else {
            // A pod lacking the container has no sample (it counts as missing,
            // or is ignored if it failed), as upstream's newest unit test
            // "failed pods ignored with missing container metric" requires;
            // only when no pod reports the container is it an error.
            let Some(c) = s.containers.iter().find(|c| c.name == container) else {
                continue;
            };
            if let Some(q) = c.usage.get(resource) {
                out.insert(
                    Arc::clone(&s.pod),
                    PodMetric {
                        value: q.milli_value(),
                        timestamp: s.timestamp,
                        window: s.window,
                    },
                );
            }
        }
    }
    if !container.is_empty()
        && !samples
            .iter()
            .any(|s| s.containers.iter().any(|c| c.name == container))
    {
        return Err(CalcError::ContainerNotInMetrics {
            container: container.to_owned(),
            namespace: first.namespace.to_string(),
            pod: first.pod.to_string(),
        });
    }
    Ok((out, first.timestamp))
}

/// One pod's value from `custom.metrics.k8s.io` (a MetricValue whose described object is a pod).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodCustomSample {
    /// The pod (`describedObject.name`); shared, as with
    /// [`PodResourceSample`]: a namespace-wide answer's entries are cloned
    /// for every HPA picking them.
    pub pod: Arc<str>,
    /// The value.
    pub value: Quantity,
    /// Sample timestamp.
    pub timestamp: Timestamp,
    /// `windowSeconds`, if reported (upstream assumes one minute otherwise).
    pub window: Option<SignedDuration>,
}

/// Reduces custom pod metrics to samples (upstream `GetRawMetric`).
pub fn pod_custom_metrics(
    samples: &[PodCustomSample],
) -> Result<(PodMetricsInfo, Timestamp), CalcError> {
    let first = samples.first().ok_or(CalcError::NoMetricsReturned {
        api: "custom metrics API",
    })?;
    let out = samples
        .iter()
        .map(|s| {
            (
                Arc::clone(&s.pod),
                PodMetric {
                    value: s.value.milli_value(),
                    timestamp: s.timestamp,
                    window: s.window.unwrap_or(SignedDuration::from_secs(60)),
                },
            )
        })
        .collect();
    Ok((out, first.timestamp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(spec: serde_json::Value) -> CorePod {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(
            serde_json::json!({"metadata": {"name": "web-0"}, "spec": spec}),
        )
        .unwrap();
        CorePod::from(&pod)
    }

    fn cpu(m: &str) -> serde_json::Value {
        serde_json::json!({"requests": {"cpu": m}})
    }

    /// A sync copies no pod name: the samples' names are the ones the
    /// groups and the trace hold; a pod without a sample gets its own.
    #[test]
    fn pod_names_are_shared_from_the_samples_to_the_groups_and_shares() {
        let name: Arc<str> = Arc::from("web-0");
        let sample = PodResourceSample {
            pod: Arc::clone(&name),
            namespace: Arc::from("ns"),
            timestamp: Timestamp::UNIX_EPOCH,
            window: SignedDuration::from_secs(30),
            containers: Arc::new([ContainerUsage {
                name: "app".into(),
                usage: BTreeMap::from([(
                    "memory".into(),
                    Quantity::from_milli(5, crate::quantity::Format::DecimalSI),
                )]),
            }]),
        };
        let (metrics, _) = pod_resource_metrics(&[sample], "memory", "").unwrap();
        let running = |name: &str| CorePod {
            name: name.into(),
            phase: "Running".into(),
            ..CorePod::default()
        };
        let pods = [running("web-0"), running("web-1")];
        let readiness = Readiness {
            cpu_initialization_period: SignedDuration::ZERO,
            initial_readiness_delay: SignedDuration::ZERO,
        };
        let groups = group_pods(&pods, &metrics, "memory", readiness, Timestamp::UNIX_EPOCH);
        let ready = groups.ready.first().unwrap();
        assert!(Arc::ptr_eq(ready, &name));
        assert_eq!(&**groups.missing.first().unwrap(), "web-1");
        let shares = shares(&groups, &metrics, &PodMetricsInfo::new(), false);
        assert!(Arc::ptr_eq(&shares[0].pod, &name));
    }

    #[test]
    fn a_container_no_pod_reports_is_named_as_upstream_names_it() {
        let err = CalcError::ContainerNotInMetrics {
            container: "app".into(),
            namespace: "ns".into(),
            pod: "web-0".into(),
        };
        assert_eq!(
            err.to_string(),
            "failed to get container metrics: container app not present in metrics for pod ns/web-0"
        );
    }

    #[test]
    fn float_to_int_conversions_follow_go_on_amd64() {
        let cases = [
            (5.0, 5),
            (5.9, 5),
            (-0.5, 0),
            (2_147_483_647.0, i32::MAX),
            (2_147_483_648.0, i32::MIN),
            (3e9, i32::MIN),
            (-3e9, i32::MIN),
            (f64::NAN, i32::MIN),
            (f64::INFINITY, i32::MIN),
        ];
        for (x, want) in cases {
            assert_eq!(go_int32(x), want, "int32({x})");
        }
        assert_eq!(
            ceil_to_int32(2_147_483_646.5, KubernetesVersion::V1_36),
            i32::MAX
        );
        assert_eq!(go_int64(1e19), i64::MIN);
        assert_eq!(go_int64(-7.9), -7);
    }

    #[test]
    fn requests_follow_pod_requests_when_pod_level_requests_are_set() {
        let app = |m: &str| serde_json::json!({"name": "app", "resources": cpu(m)});
        let init = |name: &str, m: &str| serde_json::json!({"name": name, "resources": cpu(m)});
        let sidecar = |name: &str, m: &str| serde_json::json!({"name": name, "resources": cpu(m), "restartPolicy": "Always"});
        // (case, spec, gate, want milli-cpu or the error text)
        let cases: Vec<(&str, serde_json::Value, bool, Result<i64, &str>)> = vec![
            (
                "pod-level cpu plus overhead",
                serde_json::json!({"resources": cpu("1"), "overhead": {"cpu": "250m"},
                                   "containers": [app("500m")]}),
                true,
                Ok(1250),
            ),
            (
                "gate off: the container sum, no overhead",
                serde_json::json!({"resources": cpu("1"), "overhead": {"cpu": "250m"},
                                   "containers": [app("500m")]}),
                false,
                Ok(500),
            ),
            (
                "pod-level memory only: containers raised to the largest init phase, plus overhead",
                serde_json::json!({"resources": {"requests": {"memory": "1Gi"}},
                                   "overhead": {"cpu": "100m"},
                                   "initContainers": [sidecar("proxy", "200m"), init("migrate", "900m")],
                                   "containers": [app("500m")]}),
                true,
                // containers 500 + sidecar 200 = 700; init phase 900 + 200 = 1100; + 100.
                Ok(1200),
            ),
            (
                "pod-level memory only and no cpu anywhere",
                serde_json::json!({"resources": {"requests": {"memory": "1Gi"}},
                                   "containers": [{"name": "app"}]}),
                true,
                Err("missing pod-level request for cpu in Pod web-0"),
            ),
            (
                "no pod-level requests: containers and sidecars, init containers ignored",
                serde_json::json!({"overhead": {"cpu": "100m"},
                                   "initContainers": [sidecar("proxy", "200m"), init("migrate", "900m")],
                                   "containers": [app("500m")]}),
                true,
                Ok(700),
            ),
        ];
        for (case, spec, gate, want) in cases {
            let got = calculate_requests(&[pod(spec)], "", "cpu", gate, KubernetesVersion::V1_37)
                .map(|r| r["web-0"])
                .map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{case}");
        }
    }

    /// Pods sharing one spec (one template) are summed once; each pod
    /// still gets its own spec's request, whatever the order, and an error
    /// names the first pod whose spec fails.
    #[test]
    fn pods_sharing_a_spec_get_its_request_and_others_their_own() {
        let named = |name: &str, spec: &Arc<CorePodSpec>| CorePod {
            name: name.to_owned(),
            spec: Arc::clone(spec),
            ..pod(serde_json::json!({}))
        };
        let small =
            pod(serde_json::json!({"containers": [{"name": "a", "resources": cpu("100m")}]})).spec;
        let large =
            pod(serde_json::json!({"containers": [{"name": "a", "resources": cpu("2")}]})).spec;
        let none = pod(serde_json::json!({"containers": [{"name": "a"}]})).spec;
        let pods = [
            named("a", &small),
            named("b", &small),
            named("c", &large),
            named("d", &small),
            named("e", &large),
        ];
        let got = calculate_requests(&pods, "", "cpu", false, KubernetesVersion::V1_37).unwrap();
        let want: BTreeMap<String, i64> =
            [("a", 100), ("b", 100), ("c", 2000), ("d", 100), ("e", 2000)]
                .into_iter()
                .map(|(p, r)| (p.to_owned(), r))
                .collect();
        assert_eq!(got, want);
        let failing = [named("a", &small), named("x", &none), named("y", &none)];
        let err =
            calculate_requests(&failing, "", "cpu", false, KubernetesVersion::V1_37).unwrap_err();
        assert_eq!(
            err.to_string(),
            "missing request for cpu in container a of Pod x"
        );
    }

    const V1_36: KubernetesVersion = KubernetesVersion::V1_36;
    const V1_37: KubernetesVersion = KubernetesVersion::V1_37;
    const V1_38: KubernetesVersion = KubernetesVersion::V1_38;

    #[test]
    fn float_to_int32_wraps_as_go_on_amd64_through_v1_37_and_saturates_from_v1_38() {
        // (x, through 1.37, from 1.38) for Go's int32(math.Ceil(x)).
        let cases = [
            (5.2, 6, 6),
            (2_147_483_646.5, i32::MAX, i32::MAX),
            (3e9, i32::MIN, i32::MAX),
            (f64::INFINITY, i32::MIN, i32::MAX),
            (-3e9, i32::MIN, i32::MIN),
            (f64::NAN, i32::MIN, 0),
        ];
        for (x, old, new) in cases {
            for v in [V1_36, V1_37] {
                assert_eq!(ceil_to_int32(x, v), old, "{v}: ceil({x})");
            }
            assert_eq!(ceil_to_int32(x, V1_38), new, "1.38: ceil({x})");
        }
        assert_eq!(to_int32(5.9, V1_38), 5, "truncation stays truncation");
    }

    fn running_ready(name: &str) -> CorePod {
        CorePod {
            name: name.into(),
            phase: "Running".into(),
            ready: Some(crate::pod::ReadyCondition {
                status: "True".into(),
                last_transition_time: None,
            }),
            ..CorePod::default()
        }
    }

    /// A sample of a pod the selector does not pick (relabeled, or gone
    /// before the metrics source noticed) is in no group: a utilization
    /// target leaves it out (no request), a plain value target averages it
    /// in, as upstream's `GetResourceUtilizationRatio` and
    /// `GetMetricUsageRatio` do; the shares name it either way.
    #[test]
    fn a_sample_of_an_unselected_pod_is_named_and_counts_only_in_a_plain_average() {
        let tol = Tolerances::symmetric(0.1);
        let mut web0 = running_ready("web-0");
        web0.spec = Arc::new(crate::pod::CorePodSpec {
            containers: vec![crate::pod::CoreContainer {
                name: "app".into(),
                requests: BTreeMap::from([(
                    "memory".into(),
                    k8s_openapi::apimachinery::pkg::api::resource::Quantity("100m".into()),
                )]),
                ..Default::default()
            }],
            ..Default::default()
        });
        let pods = [web0];
        let sample = |value| PodMetric {
            value,
            timestamp: Timestamp::UNIX_EPOCH,
            window: SignedDuration::from_secs(60),
        };
        let metrics = PodMetricsInfo::from([
            (Arc::from("web-0"), sample(100)),
            (Arc::from("relabeled"), sample(500)),
        ]);
        let readiness = Readiness {
            cpu_initialization_period: SignedDuration::ZERO,
            initial_readiness_delay: SignedDuration::ZERO,
        };
        let at = Timestamp::UNIX_EPOCH;
        // 100 of a 100 request at a 100 % target: within tolerance, 1.
        let p = resource_replicas(
            1, 100, "memory", "", tol, &pods, &metrics, at, readiness, false, at, V1_37,
        )
        .unwrap();
        assert_eq!((p.replicas, p.utilization), (1, Some(100)));
        let unselected = p.pods.iter().find(|s| &*s.pod == "relabeled").unwrap();
        assert_eq!(
            (unselected.class, unselected.why, unselected.sample),
            (
                "ignored",
                GroupRule::NotSelected { counted: false },
                Some(500)
            )
        );
        // An average of 100: (100 + 500) / 2 = 300, three times the target.
        let p = plain_metric_replicas(1, 100, "", tol, &pods, &metrics, at, readiness, at, V1_37)
            .unwrap();
        assert_eq!((p.raw_value, p.replicas), (300, 3));
        let unselected = p.pods.iter().find(|s| &*s.pod == "relabeled").unwrap();
        assert_eq!(
            (unselected.class, unselected.why),
            ("ready", GroupRule::NotSelected { counted: true })
        );
        assert_eq!(p.pods.len(), 2);
    }

    /// Every proposal that overflows int32 is -2147483648 through 1.37 (the
    /// workload then goes to minReplicas) and MaxInt32 from 1.38; the
    /// already-capped count of a Value target with replicas is MaxInt32 in all.
    #[test]
    fn an_overflowing_proposal_is_min_int32_through_v1_37_and_max_int32_from_v1_38() {
        let tol = Tolerances::symmetric(0.1);
        let pods = [running_ready("web-0")];
        for (v, want) in [(V1_36, i32::MIN), (V1_37, i32::MIN), (V1_38, i32::MAX)] {
            // From zero: ceil(ratio), unguarded upstream until #141397.
            let p = object_metric_replicas(0, 1, 3_000_000_000_000, tol, &pods, v).unwrap();
            assert_eq!(p.replicas, want, "{v}: object value from zero");
            let p = object_per_pod_metric_replicas(1, 1, 3_000_000_000_000, tol, v);
            assert_eq!(p.replicas, want, "{v}: object average value");
            // Pods metric: ceil(ratio × ready pods).
            let sample = PodMetric {
                value: 3_000_000_000_000,
                timestamp: Timestamp::UNIX_EPOCH,
                window: SignedDuration::from_secs(60),
            };
            let metrics = PodMetricsInfo::from([(Arc::from("web-0"), sample)]);
            let readiness = Readiness {
                cpu_initialization_period: SignedDuration::ZERO,
                initial_readiness_delay: SignedDuration::ZERO,
            };
            let p = plain_metric_replicas(
                1,
                1,
                "",
                tol,
                &pods,
                &metrics,
                Timestamp::UNIX_EPOCH,
                readiness,
                Timestamp::UNIX_EPOCH,
                v,
            )
            .unwrap();
            assert_eq!(p.replicas, want, "{v}: pods metric");
            let p = object_metric_replicas(1, 1, 3_000_000_000_000, tol, &pods, v).unwrap();
            assert_eq!(
                p.replicas,
                i32::MAX,
                "{v}: capped upstream since 1.35 (k/k #126979)"
            );
        }
    }

    #[test]
    fn an_unrepresentable_utilization_fails_through_v1_37_and_is_clamped_from_v1_38() {
        let sample = |value| PodMetric {
            value,
            timestamp: Timestamp::UNIX_EPOCH,
            window: SignedDuration::from_secs(60),
        };
        let one = |value| PodMetricsInfo::from([(Arc::from("p"), sample(value))]);
        let requests = BTreeMap::from([("p".to_owned(), 1_i64)]);
        for v in [V1_36, V1_37] {
            let err = resource_utilization_ratio(&one(i64::MAX), &requests, 50, v).unwrap_err();
            assert!(err.to_string().contains("int32"), "{v}: {err}");
        }
        let (ratio, utilization, raw) =
            resource_utilization_ratio(&one(i64::MAX), &requests, 50, V1_38).unwrap();
        assert_eq!((utilization, raw), (i32::MAX, i64::MAX));
        assert_eq!(ratio, f64::from(i32::MAX) / 50.0);
        let (_, utilization, _) =
            resource_utilization_ratio(&one(i64::MIN), &requests, 50, V1_38).unwrap();
        assert_eq!(utilization, i32::MIN);
        // In range, every release agrees.
        for v in [V1_36, V1_37, V1_38] {
            let requests = BTreeMap::from([("p".to_owned(), 200_i64)]);
            let got = resource_utilization_ratio(&one(150), &requests, 50, v).unwrap();
            assert_eq!(got, (1.5, 75, 150), "{v}");
        }
    }

    #[test]
    fn pod_level_requests_include_overhead_through_v1_37_and_exclude_it_from_v1_38() {
        let app = |m: &str| serde_json::json!({"name": "app", "resources": cpu(m)});
        let spec = serde_json::json!({"resources": cpu("1"), "overhead": {"cpu": "250m"},
                                      "containers": [app("500m")]});
        let only_overhead = serde_json::json!({"resources": {"requests": {"memory": "1Gi"}},
                                               "overhead": {"cpu": "250m"},
                                               "containers": [{"name": "app"}]});
        // (release, pod-level path, container path, cpu only in overhead)
        let cases: [(KubernetesVersion, i64, i64, Result<i64, &str>); 3] = [
            (V1_36, 1250, 500, Ok(250)),
            (V1_37, 1250, 500, Ok(250)),
            (
                V1_38,
                1000,
                500,
                Err("missing pod-level request for cpu in Pod web-0"),
            ),
        ];
        for (v, pod_level, containers, overhead_only) in cases {
            let request = |spec: &serde_json::Value, gate| {
                calculate_requests(&[pod(spec.clone())], "", "cpu", gate, v)
                    .map(|r| r["web-0"])
                    .map_err(|e| e.to_string())
            };
            assert_eq!(request(&spec, true), Ok(pod_level), "{v}: pod-level");
            assert_eq!(request(&spec, false), Ok(containers), "{v}: containers");
            assert_eq!(
                request(&only_overhead, true),
                overhead_only.map_err(str::to_owned),
                "{v}: cpu only in overhead"
            );
        }
    }

    #[test]
    fn an_average_value_at_zero_replicas_underflows_through_v1_37_and_reports_the_total_from_v1_38()
    {
        let tol = Tolerances::symmetric(0.1);
        // (release, reported average for a total of 500m, for a total of 0)
        for (v, busy, idle) in [
            (V1_36, i64::MIN, i64::MIN),
            (V1_37, i64::MIN, i64::MIN),
            (V1_38, 500, 0),
        ] {
            let p = object_per_pod_metric_replicas(0, 100, 500, tol, v);
            assert_eq!((p.replicas, p.usage), (5, busy), "{v}: object");
            let p = external_per_pod_metric_replicas(0, 100, &[300, 200], tol, v);
            assert_eq!((p.replicas, p.usage), (5, busy), "{v}: external");
            let p = object_per_pod_metric_replicas(0, 100, 0, tol, v);
            assert_eq!((p.replicas, p.usage), (0, idle), "{v}: object, idle");
            let p = external_per_pod_metric_replicas(0, 100, &[0], tol, v);
            assert_eq!((p.replicas, p.usage), (0, idle), "{v}: external, idle");
            // With replicas, the average is the same in every release.
            let p = external_per_pod_metric_replicas(2, 100, &[300, 200], tol, v);
            assert_eq!((p.replicas, p.usage), (5, 250), "{v}: two replicas");
        }
    }
}
