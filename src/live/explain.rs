//! What the core decides for a live HPA, next to what its status says, and
//! what the API cannot show: the controller keeps its recommendations
//! (stabilization windows) and scale events (scaling policies) in memory.
//!
//! The core runs twice on the same reads: as a controller that starts now
//! (no memory: its first sync seeds the window with the current count, as
//! upstream's does) and with an empty memory (the metrics' proposal, only
//! the policies' limits of a quiet past). The controller that has been
//! running decides between the current count and that proposal; the
//! status (`lastScaleTime`, `AbleToScale`, `ScalingLimited`,
//! `desiredReplicas`) narrows it, and the explanation says so as bounds,
//! never as a number it cannot know.

use std::fmt::Write as _;
use std::sync::Arc;

use hpa_controller::ControllerConfig;
use hpa_controller::decisions::DecisionRecord;
use hpa_core::decide::{Outcome, RescaleOutcome};
use hpa_core::grouping::{GroupRule, TimeStyle};
use hpa_core::normalize::{generate_scale_down_rules, generate_scale_up_rules};
use hpa_core::trace::MetricTrace;
use hpa_core::{CorePod, DecisionInput, DecisionTrace, HpaHistory};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, MetricStatus,
    MetricValueStatus,
};
use serde::Serialize;

use super::read::{Release, Snapshot};

/// One condition, as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

impl Condition {
    fn of(c: &HorizontalPodAutoscalerCondition) -> Self {
        Self {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone().unwrap_or_default(),
            message: c.message.clone().unwrap_or_default(),
        }
    }
}

/// One metric's current value, as a status holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricValue {
    /// `cpu`, `app/cpu` (a container's), or the metric's name.
    pub name: String,
    /// `averageUtilization`, percent.
    pub utilization: Option<i32>,
    /// `averageValue`.
    pub average_value: Option<String>,
    /// `value`.
    pub value: Option<String>,
}

impl MetricValue {
    fn of(m: &MetricStatus) -> Option<Self> {
        let (name, current): (String, &MetricValueStatus) = match m.type_.as_str() {
            "Resource" => m.resource.as_ref().map(|r| (r.name.clone(), &r.current))?,
            "ContainerResource" => m
                .container_resource
                .as_ref()
                .map(|r| (format!("{}/{}", r.container, r.name), &r.current))?,
            "Pods" => m
                .pods
                .as_ref()
                .map(|p| (p.metric.name.clone(), &p.current))?,
            "Object" => m
                .object
                .as_ref()
                .map(|o| (o.metric.name.clone(), &o.current))?,
            "External" => m
                .external
                .as_ref()
                .map(|e| (e.metric.name.clone(), &e.current))?,
            _ => return None,
        };
        Some(Self {
            name,
            utilization: current.average_utilization,
            average_value: current.average_value.as_ref().map(|q| q.0.clone()),
            value: current.value.as_ref().map(|q| q.0.clone()),
        })
    }

    fn same(&self, other: &Self) -> bool {
        let q = |a: &Option<String>, b: &Option<String>| match (a, b) {
            (Some(a), Some(b)) => {
                match (hpa_core::Quantity::parse(a), hpa_core::Quantity::parse(b)) {
                    (Ok(x), Ok(y)) => x == y,
                    _ => a == b,
                }
            }
            (None, None) => true,
            _ => false,
        };
        self.name == other.name
            && self.utilization == other.utilization
            && q(&self.average_value, &other.average_value)
            && q(&self.value, &other.value)
    }
}

impl std::fmt::Display for MetricValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(u) = self.utilization {
            parts.push(format!("{u}%"));
        }
        if let Some(v) = &self.average_value {
            parts.push(format!("average {v}"));
        }
        if let Some(v) = &self.value {
            parts.push(format!("value {v}"));
        }
        write!(f, "{} {}", self.name, parts.join(", "))
    }
}

/// One pod of a pod-based metric as upstream's `groupPods` groups it: its
/// group, the rule that put it there with its times, and all of it in
/// words.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodExplanation {
    /// The metric's index in `spec.metrics`.
    pub metric: usize,
    /// The pod's name.
    pub pod: String,
    /// `ready` (counted), `unready`, `missing` or `ignored`.
    pub group: &'static str,
    /// The rule (`rule`: `counted`, `sampleBeforeReady`, `notReady`,
    /// `neverReady`, `noSample`, `deleting`, ...) and its times.
    #[serde(flatten)]
    pub rule: GroupRule,
    /// When the pod counts, where its times say.
    pub counts_from: Option<Timestamp>,
    /// Its sample, in milli-units.
    pub sample: Option<i64>,
    /// What the controller took for it instead, in milli-units.
    pub assumed: Option<i64>,
    /// The rule and what the controller took, in words.
    pub reason: String,
}

/// What the HPA's status says (written by the cluster's controller at its
/// last sync).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    pub desired_replicas: Option<i32>,
    pub current_replicas: Option<i32>,
    pub last_scale_time: Option<Timestamp>,
    pub observed_generation: Option<i64>,
    pub generation: Option<i64>,
    pub conditions: Vec<Condition>,
    pub current_metrics: Vec<MetricValue>,
}

/// Where the running controller's desired count lies, given what the API
/// cannot show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bounds {
    pub low: i32,
    pub high: i32,
}

/// Whether our computation and the status agree, and if not, why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Agreement {
    pub agrees: bool,
    /// What differs, one line each.
    pub differences: Vec<String>,
    /// Likely causes, most likely first: why the HPA cannot scale (named
    /// pods and rules, the other HPAs, the APIService) and, when the status
    /// differs, why it may. Empty when they agree and nothing fails.
    pub likely_causes: Vec<String>,
}

/// The explanation of one live HPA.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// `namespace/name`.
    pub hpa: String,
    /// When it was read and decided.
    pub at: Timestamp,
    /// The release decided as.
    pub release: Release,
    /// `Deployment web (deployments.apps)`.
    pub target: String,
    /// The target's `spec.replicas`.
    pub current_replicas: i32,
    /// What a controller that started now would want.
    pub desired_replicas: i32,
    /// What the metrics propose, within min/max and the scaling policies
    /// of a quiet past, without a stabilization window's hold.
    pub proposal: i32,
    /// Where the running controller's desired count lies.
    pub bounds: Bounds,
    /// The core's error (failed metrics, invalid spec), if any.
    pub error: Option<String>,
    /// The core's decision trace.
    pub trace: DecisionTrace,
    /// The conditions our computation sets.
    pub conditions: Vec<Condition>,
    /// The current metrics our computation reports.
    pub current_metrics: Vec<MetricValue>,
    /// Every pod of each pod-based metric, as the computation grouped it.
    pub pods: Vec<PodExplanation>,
    /// Where the computation stops without a replica count (a metric or
    /// the selector fails: ScalingActive=False), its condition.
    pub stopped: Option<Condition>,
    /// The status as read.
    pub status: Observed,
    /// What cannot be read from outside, as the bounds the status implies.
    pub unknowns: Vec<String>,
    /// Our computation against the status.
    pub agreement: Agreement,
    /// The decision as `explain FEATURE` prints one.
    #[serde(skip)]
    pub record: DecisionRecord,
}

fn ago(now: Timestamp, then: Timestamp) -> String {
    let d = now.duration_since(then);
    let d = SignedDuration::from_secs(d.as_secs());
    if d.is_negative() {
        format!("in {}", hpa_core::go_duration::format(-d))
    } else {
        format!("{} ago", hpa_core::go_duration::format(d))
    }
}

fn secs(n: i32) -> String {
    hpa_core::go_duration::format(SignedDuration::from_secs(i64::from(n)))
}

/// The rules of one direction, defaulted as the API server and the
/// controller default them: (window, longest policy period, select policy).
fn rules_of(
    rules: &HPAScalingRules,
    default_window: SignedDuration,
) -> (SignedDuration, i32, String) {
    let window = rules
        .stabilization_window_seconds
        .map_or(default_window, |s| SignedDuration::from_secs(i64::from(s)));
    let period = rules
        .policies
        .iter()
        .flatten()
        .map(|p| p.period_seconds)
        .max()
        .unwrap_or(0);
    (
        window,
        period,
        rules
            .select_policy
            .clone()
            .unwrap_or_else(|| "Max".to_owned()),
    )
}

/// Explains `snapshot`, decided with `config` as `release`.
pub fn explain(snapshot: &Snapshot, config: &ControllerConfig, release: &Release) -> Explanation {
    let core = &config.decision;
    let now = snapshot.now;
    let input = decision_input(snapshot);
    let fresh = hpa_core::decide(&input, &HpaHistory::default(), core, now);
    let quiet = HpaHistory {
        recommendations: Some(Vec::new()),
        ..HpaHistory::default()
    };
    let unheld = hpa_core::decide(&input, &quiet, core, now);
    let current = snapshot.scale.spec_replicas;
    let proposal = unheld.trace.desired;
    let error = fresh.error().map(str::to_owned);
    let trace = fresh.trace.clone();
    let rescale = if fresh.scale_to.is_some() {
        RescaleOutcome::Succeeded
    } else {
        RescaleOutcome::NotNeeded
    };
    let outcome = hpa_core::finish(fresh, rescale, now);
    let desired = outcome.status.desired_replicas;
    let conditions: Vec<Condition> = outcome
        .status
        .conditions
        .iter()
        .flatten()
        .map(Condition::of)
        .collect();
    let current_metrics: Vec<MetricValue> = outcome
        .status
        .current_metrics
        .iter()
        .flatten()
        .filter_map(MetricValue::of)
        .collect();
    let observed = Observed::of(&snapshot.hpa);

    // Upstream's reconcile stops without a replica count where a metric
    // or the selector fails: ScalingActive=False and an error.
    let stopped = error.as_ref().and_then(|_| {
        conditions
            .iter()
            .find(|c| c.type_ == "ScalingActive" && c.status == "False")
            .cloned()
    });
    let pods = pod_explanations(&trace);
    let (bounds, unknowns) = bounds(
        snapshot,
        config,
        current,
        desired,
        proposal,
        &observed,
        stopped.as_ref(),
    );
    let agreement = agreement(
        snapshot,
        config,
        &Ours {
            current,
            bounds,
            metrics: &current_metrics,
            error: error.as_deref(),
            stopped: stopped.as_ref(),
            trace: &trace,
        },
        &observed,
    );
    let record = dry_run_record(snapshot, current, outcome, error.clone(), trace.clone());
    Explanation {
        hpa: snapshot.key.clone(),
        at: now,
        release: release.clone(),
        target: format!(
            "{} {} ({})",
            snapshot.target.kind, snapshot.target.name, snapshot.target_resource
        ),
        current_replicas: current,
        desired_replicas: desired,
        proposal,
        bounds,
        error,
        trace,
        conditions,
        current_metrics,
        pods,
        stopped,
        status: observed,
        unknowns,
        agreement,
        record,
    }
}

/// The core's input from what was read.
fn decision_input(snapshot: &Snapshot) -> DecisionInput {
    DecisionInput {
        hpa: Arc::clone(&snapshot.hpa),
        scale: snapshot.scale.clone(),
        pods: snapshot
            .pods
            .iter()
            .map(|p| Arc::new(CorePod::from(p)))
            .collect(),
        other_hpas: snapshot.others.clone(),
        metrics: snapshot.metrics.clone(),
    }
}

impl Observed {
    /// The status of `hpa` as read, with the generation it was written for.
    fn of(hpa: &HorizontalPodAutoscaler) -> Self {
        let status = hpa.status.as_ref();
        Self {
            desired_replicas: status.map(|s| s.desired_replicas),
            current_replicas: status.and_then(|s| s.current_replicas),
            last_scale_time: status.and_then(|s| s.last_scale_time.as_ref().map(|t| t.0)),
            observed_generation: status.and_then(|s| s.observed_generation),
            generation: hpa.metadata.generation,
            conditions: status
                .and_then(|s| s.conditions.as_ref())
                .into_iter()
                .flatten()
                .map(Condition::of)
                .collect(),
            current_metrics: status
                .and_then(|s| s.current_metrics.as_ref())
                .into_iter()
                .flatten()
                .filter_map(MetricValue::of)
                .collect(),
        }
    }
}

/// The decision as a dry-run controller records it, for `explain FEATURE`'s
/// printing: nothing rescaled, no status written.
fn dry_run_record(
    snapshot: &Snapshot,
    current: i32,
    outcome: Outcome,
    error: Option<String>,
    trace: DecisionTrace,
) -> DecisionRecord {
    DecisionRecord {
        at: snapshot.now,
        current_replicas: Some(current),
        desired_replicas: Some(outcome.status.desired_replicas),
        rescaled: false,
        status_written: false,
        dry_run: true,
        observed: Some(Arc::new(hpa_controller::hpa_cache::CachedHpa::new(
            &snapshot.hpa,
        ))),
        computed_status: Some(outcome.status),
        events: outcome.events,
        error,
        trace: Some(trace),
    }
}

/// Every pod of each pod-based metric of `trace`, in words.
fn pod_explanations(trace: &DecisionTrace) -> Vec<PodExplanation> {
    trace
        .metrics
        .iter()
        .flat_map(|m| {
            m.pods.iter().map(move |share| PodExplanation {
                metric: m.index,
                pod: share.pod.to_string(),
                group: share.class,
                rule: share.why,
                counts_from: share.why.counts_from(),
                sample: share.sample,
                assumed: share.assumed,
                reason: share.words(m.ratio, trace.now, TimeStyle::Absolute),
            })
        })
        .collect()
}

/// Where the running controller's count lies, and why, in words.
fn bounds(
    snapshot: &Snapshot,
    config: &ControllerConfig,
    current: i32,
    desired: i32,
    proposal: i32,
    observed: &Observed,
    stopped: Option<&Condition>,
) -> (Bounds, Vec<String>) {
    let behavior = snapshot.hpa.spec.behavior.as_ref();
    let up = generate_scale_up_rules(behavior.and_then(|b| b.scale_up.as_ref()));
    let down = generate_scale_down_rules(behavior.and_then(|b| b.scale_down.as_ref()));
    let (up_window, up_period, up_select) = rules_of(&up, SignedDuration::ZERO);
    let (down_window, down_period, down_select) =
        rules_of(&down, config.decision.downscale_stabilization);
    let mut notes = vec![memory_note(
        up_window,
        down_window,
        desired,
        stopped.is_some(),
    )];
    if let Some(c) = stopped {
        // What the running controller does is known: nothing moves.
        notes.push(format!(
            "The controller cannot compute a replica count now ({}={} {}): it keeps {current} replicas and leaves desiredReplicas as it was ({desired}).",
            c.type_, c.status, c.reason
        ));
        return (exactly(current), notes);
    }
    if snapshot.early.is_some() || proposal == current {
        let why = if snapshot.early.is_some() {
            "a rule decides without metrics"
        } else {
            "the metrics propose the current count"
        };
        notes.push(format!(
            "Here {why}: no window or policy can move it, so the controller wants {proposal}."
        ));
        return (exactly(proposal), notes);
    }
    let (going, window, period, select) = if proposal < current {
        ("down", down_window, down_period, down_select)
    } else {
        ("up", up_window, up_period, up_select)
    };
    if select == "Disabled" {
        notes.push(format!(
            "Scaling {going} is disabled (selectPolicy Disabled): the controller keeps {current}."
        ));
        return (exactly(current), notes);
    }
    let window_holds = window_note(&mut notes, going, window, proposal, current);
    let events_count = policy_note(
        &mut notes,
        going,
        period,
        observed.last_scale_time,
        snapshot.now,
    );
    last_sync_notes(&mut notes, observed);
    let bounds = match (window_holds || events_count, proposal < current) {
        (false, _) => exactly(proposal),
        (true, true) => Bounds {
            low: proposal,
            high: current,
        },
        (true, false) => Bounds {
            low: current,
            high: proposal,
        },
    };
    if bounds.low != bounds.high {
        notes.push(format!(
            "So the running controller wants between {} and {} now.",
            bounds.low, bounds.high
        ));
    }
    (bounds, notes)
}

/// Bounds of one count.
fn exactly(replicas: i32) -> Bounds {
    Bounds {
        low: replicas,
        high: replicas,
    }
}

/// What the API cannot show (the controller's windows and scale events),
/// and whether it matters: not where the computation stops.
fn memory_note(
    up_window: SignedDuration,
    down_window: SignedDuration,
    desired: i32,
    stopped: bool,
) -> String {
    if stopped {
        format!(
            "The controller keeps its recommendations (stabilization windows: scale-up {}, scale-down {}) and its scale events in memory, not in the API; none of it matters here.",
            hpa_core::go_duration::format(up_window),
            hpa_core::go_duration::format(down_window),
        )
    } else {
        format!(
            "The controller keeps its recommendations (stabilization windows: scale-up {}, scale-down {}) and its scale events (which the scaling policies count) in memory, not in the API: the trace above is what a controller that started now would decide ({desired}).",
            hpa_core::go_duration::format(up_window),
            hpa_core::go_duration::format(down_window),
        )
    }
}

/// What the stabilization window of the direction `going` may hold, in
/// words; whether it may hold anything.
fn window_note(
    notes: &mut Vec<String>,
    going: &str,
    window: SignedDuration,
    proposal: i32,
    current: i32,
) -> bool {
    if !window.is_positive() {
        notes.push(format!(
            "The scale-{going} stabilization window is 0s: nothing holds the proposal of {proposal}."
        ));
        return false;
    }
    let (from, to) = if proposal < current {
        (proposal + 1, current)
    } else {
        (current, proposal - 1)
    };
    let range = if from == to {
        format!("{from}")
    } else {
        format!("any count from {from} to {to}")
    };
    notes.push(format!(
        "The metrics propose {proposal} ({going} from {current}): a scale {going} follows only the {} recommendation of the last {} (the scale-{going} stabilization window), so the stabilization window may be holding {range}.",
        if proposal < current { "highest" } else { "lowest" },
        hpa_core::go_duration::format(window),
    ));
    true
}

/// Whether scale events may count against the policies of the direction
/// `going`, as the status's `lastScaleTime` tells, in words; whether they
/// may.
fn policy_note(
    notes: &mut Vec<String>,
    going: &str,
    period: i32,
    last_scale: Option<Timestamp>,
    now: Timestamp,
) -> bool {
    let period_d = SignedDuration::from_secs(i64::from(period));
    match last_scale {
        Some(at) if now.duration_since(at) < period_d => {
            notes.push(format!(
                "The last scale was {} (lastScaleTime), within the longest scale-{going} policy period ({}): the scale events the policies count may limit the change below the proposal.",
                ago(now, at),
                secs(period)
            ));
            true
        }
        Some(at) => {
            notes.push(format!(
                "The last scale was {} (lastScaleTime), longer ago than the longest scale-{going} policy period ({}): no scale event counts, so the policies limit exactly as computed.",
                ago(now, at),
                secs(period)
            ));
            false
        }
        None => {
            notes.push(format!(
                "The status has no lastScaleTime: the controller has not scaled this HPA's target, so no scale event counts against the scale-{going} policies ({}).",
                secs(period)
            ));
            false
        }
    }
}

/// What the status's conditions say the controller did at its last sync:
/// a window holding, a limit applied.
fn last_sync_notes(notes: &mut Vec<String>, observed: &Observed) {
    let condition = |type_: &str| observed.conditions.iter().find(|c| c.type_ == type_);
    if let Some(c) = condition("AbleToScale")
        && matches!(
            c.reason.as_str(),
            "ScaleDownStabilized" | "ScaleUpStabilized"
        )
    {
        notes.push(format!(
            "At its last sync the controller's window was holding (AbleToScale {}: {}), with desiredReplicas {}.",
            c.reason,
            c.message,
            observed
                .desired_replicas
                .map_or_else(|| "-".to_owned(), |d| d.to_string())
        ));
    }
    if let Some(c) = condition("ScalingLimited")
        && c.status == "True"
    {
        notes.push(format!(
            "At its last sync the controller was limited: ScalingLimited {} ({}).",
            c.reason, c.message
        ));
    }
}

/// What our computation gives, for [`agreement`].
struct Ours<'a> {
    current: i32,
    bounds: Bounds,
    metrics: &'a [MetricValue],
    error: Option<&'a str>,
    stopped: Option<&'a Condition>,
    trace: &'a DecisionTrace,
}

/// Our computation against the status.
fn agreement(
    snapshot: &Snapshot,
    config: &ControllerConfig,
    ours: &Ours<'_>,
    observed: &Observed,
) -> Agreement {
    let mut differences: Vec<String> = replicas_difference(ours, observed).into_iter().collect();
    let moved = moved_metrics(ours.metrics, observed);
    differences.extend(moved.iter().map(|m| format!("current metrics: {m}")));
    // Why the HPA cannot scale, or holds pods back: named first, whether
    // or not the status agrees.
    let mut causes = diagnoses(snapshot, config, ours.trace);
    if differences.is_empty() {
        return Agreement {
            agrees: true,
            differences,
            likely_causes: if ours.error.is_some() {
                causes
            } else {
                Vec::new()
            },
        };
    }
    since_last_sync_causes(&mut causes, config, ours, observed, !moved.is_empty());
    assumed_causes(&mut causes, snapshot, config);
    Agreement {
        agrees: false,
        differences,
        likely_causes: causes,
    }
}

/// Where the status's desired count (or, where the computation stops, its
/// ScalingActive condition) differs from ours, in words.
fn replicas_difference(ours: &Ours<'_>, observed: &Observed) -> Option<String> {
    let bounds = ours.bounds;
    let no_status = || "the HPA has no status yet: no controller has synced it".to_owned();
    match (ours.stopped, observed.desired_replicas) {
        // A reconcile that stops leaves desiredReplicas as it was: its
        // ScalingActive condition is what to compare.
        (Some(_), _) if observed.conditions.is_empty() => Some(no_status()),
        (Some(c), _) => {
            let theirs = observed
                .conditions
                .iter()
                .find(|t| t.type_ == "ScalingActive");
            (!theirs.is_some_and(|t| t.status == c.status && t.reason == c.reason)).then(|| {
                format!(
                    "the status says {}, our computation fails: ScalingActive=False {} ({})",
                    theirs.map_or_else(
                        || "no ScalingActive condition".to_owned(),
                        |t| format!("ScalingActive={} {}", t.status, t.reason)
                    ),
                    c.reason,
                    c.message
                )
            })
        }
        (None, Some(d)) if d < bounds.low || d > bounds.high => {
            let range = if bounds.low == bounds.high {
                bounds.low.to_string()
            } else {
                format!("{} to {}", bounds.low, bounds.high)
            };
            Some(format!(
                "desired replicas: the status says {d}, we compute {range}"
            ))
        }
        (None, Some(_)) => None,
        (None, None) => Some(no_status()),
    }
}

/// Each current metric of ours the status has otherwise, or not at all.
fn moved_metrics(ours: &[MetricValue], observed: &Observed) -> Vec<String> {
    let mut moved = Vec::new();
    for ours in ours {
        match observed
            .current_metrics
            .iter()
            .find(|m| m.name == ours.name)
        {
            Some(theirs) if !theirs.same(ours) => {
                moved.push(format!("the status says {theirs}, we read {ours}"));
            }
            Some(_) => {}
            None => moved.push(format!("the status has no {}, we read {ours}", ours.name)),
        }
    }
    moved
}

/// Why the status may differ, as what it and our read show: a spec the
/// controller has not synced, its last sync failing, a rescale, metrics
/// that moved, our own read failing.
fn since_last_sync_causes(
    causes: &mut Vec<String>,
    config: &ControllerConfig,
    ours: &Ours<'_>,
    observed: &Observed,
    moved: bool,
) {
    let current = ours.current;
    if let (Some(g), Some(o)) = (observed.generation, observed.observed_generation)
        && o < g
    {
        causes.push(format!(
            "The controller has not synced the HPA since its spec changed (generation {g}, observed generation {o}): it may be down, not the leader, or failing to write the status."
        ));
    }
    for type_ in ["ScalingActive", "AbleToScale"] {
        if let Some(c) = observed
            .conditions
            .iter()
            .find(|c| c.type_ == type_ && c.status == "False")
        {
            causes.push(format!(
                "The controller's last sync failed: {} {} ({}).",
                c.type_, c.reason, c.message
            ));
        }
    }
    if let Some(seen) = observed.current_replicas
        && seen != current
    {
        causes.push(format!(
            "The target was rescaled since the controller's last sync (the status counted {seen} replicas, the scale has {current} now)."
        ));
    }
    if moved || (ours.stopped.is_some() && !observed.conditions.is_empty()) {
        causes.push(format!(
            "The metrics moved since the controller's last sync (it syncs every {}); run again, or with --watch.",
            hpa_core::go_duration::format_std(config.sync_period)
        ));
    }
    if let Some(e) = ours.error
        && ours.stopped.is_none()
    {
        causes.push(format!("Our read of the metrics failed in part: {e}."));
    }
}

/// Why the status may differ that no read shows: what this computation
/// assumes of the cluster's controller (its flags, its release, that it is
/// the one writing) and pods changing between its read and ours.
fn assumed_causes(causes: &mut Vec<String>, snapshot: &Snapshot, config: &ControllerConfig) {
    causes.push(format!(
        "The cluster's controller runs with other flags than assumed here (tolerance {}, cpu initialization period {}, initial readiness delay {}, downscale stabilization {}): give them with --flag NAME=VALUE.",
        config.decision.tolerance,
        hpa_core::go_duration::format(config.decision.cpu_initialization_period),
        hpa_core::go_duration::format(config.decision.initial_readiness_delay),
        hpa_core::go_duration::format(config.decision.downscale_stabilization),
    ));
    causes.push(format!(
        "Pods started, stopped or changed readiness between the controller's read and ours ({} pods selected now).",
        snapshot.pods.len()
    ));
    causes.push(
        "The cluster's controller follows another release or other feature gates than its /version says (managed control planes patch kube-controller-manager): give --kubernetes-version or --flag feature-gates=...".to_owned(),
    );
    causes.push(
        "Another autoscaler writes this HPA's status (a shadowing or replacement controller), not kube-controller-manager's.".to_owned(),
    );
}

/// Why the HPA cannot scale, or scales on fewer pods than it selects, in a
/// user's words, most telling first: another HPA selecting the same pods,
/// pods whose samples do not count (named, with the rule and when they
/// count), an APIService that keeps a metrics API from answering.
fn diagnoses(snapshot: &Snapshot, config: &ControllerConfig, trace: &DecisionTrace) -> Vec<String> {
    let mut out = Vec::new();
    if trace.rule == "AmbiguousSelector" {
        out.push(ambiguity(snapshot));
    }
    // A metric that fails for want of countable pods first, then those
    // that counted some pods out.
    let failing = |m: &&MetricTrace| m.error.is_some();
    for m in trace.metrics.iter().filter(failing) {
        out.extend(pods_held_back(m, trace.now, config, true));
    }
    out.extend(snapshot.metrics_apis.iter().map(|p| {
        let mut text = p.text.clone();
        if let Some(first) = text.get(..1) {
            text.replace_range(..1, &first.to_uppercase());
        }
        format!("{text}.")
    }));
    for m in trace.metrics.iter().filter(|m| m.error.is_none()) {
        out.extend(pods_held_back(m, trace.now, config, false));
    }
    out
}

/// The other HPAs whose selectors pick this HPA's pods, named.
fn ambiguity(snapshot: &Snapshot) -> String {
    let pods: Vec<CorePod> = snapshot.pods.iter().map(CorePod::from).collect();
    let own = hpa_core::Selector::parse(&snapshot.scale.selector).ok();
    let mine: Vec<&CorePod> = pods
        .iter()
        .filter(|p| own.as_ref().is_none_or(|s| s.matches(&p.labels)))
        .collect();
    let others: Vec<String> = snapshot
        .others
        .iter()
        .filter(|o| mine.iter().any(|p| o.selector.matches(&p.labels)))
        .map(|o| format!("HPA {} (its target's selector {})", o.key, o.selector))
        .collect();
    let (who, verb) = match others.as_slice() {
        [] => ("another HPA".to_owned(), "selects"),
        [one] => (one.clone(), "selects"),
        many => (many.join(" and "), "select"),
    };
    format!(
        "{who} also {verb} the pods of {} {} (selector {}): upstream's controller refuses to scale pods that more than one HPA selects (AmbiguousSelector), so none of them scales until only one HPA selects those pods: delete or retarget the others, or give the workloads selectors that do not overlap.",
        snapshot.target.kind, snapshot.target.name, snapshot.scale.selector
    )
}

/// The pods of one metric that did not count as reported, in sentences:
/// pods with the same rule, times and share together, then what upstream's
/// rule is. `failed`: the metric failed, so none of its samples counted.
fn pods_held_back(
    m: &MetricTrace,
    now: Timestamp,
    config: &ControllerConfig,
    failed: bool,
) -> Option<String> {
    // A pod the selector no longer picks is named even where its sample
    // counts: its count is upstream's quirk, not the user's intent.
    let unselected = |p: &&hpa_core::calc::PodShare| matches!(p.why, GroupRule::NotSelected { .. });
    let held: Vec<_> = m
        .pods
        .iter()
        .filter(|p| p.class != "ready" || unselected(p))
        .collect();
    if held.is_empty() {
        return None;
    }
    let selected = m.pods.iter().filter(|p| !unselected(p)).count();
    let selected_held = held.iter().filter(|p| !unselected(p)).count();
    let name = if m.name.is_empty() {
        format!("#{}", m.index)
    } else {
        format!("#{} ({})", m.index, m.name)
    };
    let lead = if failed
        && m.error
            .as_deref()
            .is_some_and(|e| e.contains("did not receive metrics for targeted pods"))
    {
        format!(
            "No pod's sample of metric {name} counts, so the metric fails with upstream's \"did not receive metrics for targeted pods (pods might be unready)\": "
        )
    } else {
        format!(
            "Metric {name} counts {} of its {selected} pods as reported: ",
            selected - selected_held,
        )
    };
    // Pods with the same rule, times and share go together.
    let mut groups: Vec<(Vec<&str>, GroupRule, Option<String>)> = Vec::new();
    for share in &held {
        let taken = share.taken(m.ratio);
        match groups
            .iter_mut()
            .find(|(_, rule, t)| *rule == share.why && *t == taken)
        {
            Some((names, _, _)) => names.push(&share.pod),
            None => groups.push((vec![&share.pod], share.why, taken)),
        }
    }
    let mut sentences: Vec<String> = groups
        .iter()
        .map(|(names, rule, taken)| sentence(rule, names, taken.as_deref(), now))
        .collect();
    let mut rules: Vec<&'static str> = Vec::new();
    for (_, rule, _) in &groups {
        let text = rule_text(rule);
        if !text.is_empty() && !rules.contains(&text) {
            rules.push(text);
        }
    }
    let period = hpa_core::go_duration::format(config.decision.cpu_initialization_period);
    let delay = hpa_core::go_duration::format(config.decision.initial_readiness_delay);
    sentences.extend(
        rules
            .iter()
            .map(|r| r.replace("{period}", &period).replace("{delay}", &delay)),
    );
    Some(format!("{lead}{}.", sentences.join(". ")))
}

/// Pods held back by one rule, named as the subject of a sentence that
/// gives the rule's times and what the controller took for them.
fn sentence(rule: &GroupRule, names: &[&str], taken: Option<&str>, now: Timestamp) -> String {
    let one = names.len() == 1;
    let pick = |singular: &'static str, plural: &'static str| if one { singular } else { plural };
    let (they, their, are, have) = (
        pick("it", "they"),
        pick("its", "their"),
        pick("is", "are"),
        pick("has", "have"),
    );
    let who = join_names(names);
    let at = |t: Timestamp| hpa_core::grouping::when(t, now, TimeStyle::Absolute);
    let taken = taken.map_or_else(String::new, |t| format!(" ({t})"));
    match *rule {
        GroupRule::SampleBeforeReady {
            ready_since,
            sample_time,
            window,
            initialization_ends,
        } => {
            let after_ready = hpa_core::grouping::add(ready_since, window);
            let counts = if after_ready <= initialization_ends {
                format!("a sample taken at {} or later counts", at(after_ready))
            } else {
                format!(
                    "{they} count{} from {}, when the cpu initialization period ends",
                    pick("s", ""),
                    at(initialization_ends)
                )
            };
            format!(
                "{who} turned Ready at {}, within the cpu initialization period, but {their} {} cpu sample{} (taken at {}) began {} before that, so {they} {are} unready{taken}; {counts}",
                at(ready_since),
                hpa_core::go_duration::format(window),
                pick("", "s"),
                at(sample_time),
                hpa_core::go_duration::format(
                    ready_since.duration_since(hpa_core::grouping::add(sample_time, -window))
                ),
            )
        }
        GroupRule::NotReady {
            since,
            initialization_ends,
            ..
        } => {
            let mut text = format!(
                "{who} {are} not Ready{}, within the cpu initialization period (it ends at {}), so {they} {are} unready{taken}",
                since.map_or_else(String::new, |t| format!(" since {}", at(t))),
                at(initialization_ends)
            );
            if let Some(t) = rule.counts_from() {
                text.push_str(&format!(
                    "; {they} count{} from {} even if still not Ready, as {they} turned unready after the initial readiness delay",
                    pick("s", ""),
                    at(t)
                ));
            }
            text
        }
        GroupRule::NeverReady { since, started, .. } => format!(
            "{who} {have} not been Ready{} since soon after {they} started at {}, so {they} {are} unready{taken} until {they} turn{} Ready",
            since.map_or_else(String::new, |t| format!(" (since {})", at(t))),
            at(started),
            pick("s", "")
        ),
        GroupRule::Pending => format!("{who} {are} Pending, so {they} {are} unready{taken}"),
        GroupRule::NoReadyCondition => {
            format!("{who} {have} no Ready condition, so {they} {are} unready{taken}")
        }
        GroupRule::NoStartTime => {
            format!("{who} {have} no start time, so {they} {are} unready{taken}")
        }
        GroupRule::NoSample => {
            format!("the metrics API has no sample of {who}, so {they} {are} missing{taken}")
        }
        GroupRule::Deleting { since } => format!(
            "{who} {are} being deleted (since {}), so {they} {are} ignored",
            at(since)
        ),
        GroupRule::Failed => format!("{who} {have} failed, so {they} {are} ignored"),
        GroupRule::NotSelected { counted } => format!(
            "the metrics API returned a sample of {who}, which the scale's selector no longer picks ({their} labels no longer match, or {they} {are} gone), so {} {}",
            pick("its sample", "their samples"),
            match (counted, one) {
                (false, true) => "is ignored",
                (false, false) => "are ignored",
                (true, true) => "still counts in the average",
                (true, false) => "still count in the average",
            }
        ),
        GroupRule::Counted | GroupRule::TurnedUnready { .. } => format!("{who} {are} counted"),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join_names(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Upstream's rule behind a group, in a user's words (`{period}`, `{delay}`:
/// the controller's flags).
fn rule_text(rule: &GroupRule) -> &'static str {
    match rule {
        GroupRule::SampleBeforeReady { .. } => {
            "Upstream counts the cpu of a pod in its first {period} (the cpu initialization period, from its start) only from a sample whose window began after the pod turned Ready: a starting pod's cpu says little of its load"
        }
        GroupRule::NotReady { .. } => {
            "Upstream leaves out the cpu of a pod that is not Ready within its first {period} (the cpu initialization period)"
        }
        GroupRule::NeverReady { .. } => {
            "Past the cpu initialization period upstream still leaves out a pod not Ready since the first {delay} after its start (the initial readiness delay): it takes it for one that never became ready"
        }
        GroupRule::NoReadyCondition | GroupRule::NoStartTime => {
            "Upstream leaves out the cpu of a pod without a Ready condition or a start time"
        }
        GroupRule::Pending => "Upstream leaves out Pending pods, and takes them as 0 on a scale-up",
        GroupRule::NoSample => {
            "Upstream takes a pod without a sample as 0 on a scale-up and as the target on a scale-down, so a pod the metrics API does not know holds the HPA back both ways"
        }
        GroupRule::Deleting { .. } | GroupRule::Failed => {
            "Upstream leaves out pods being deleted and Failed pods"
        }
        GroupRule::NotSelected { counted: false } => {
            "Upstream groups only the pods the scale's selector picks: a utilization target finds no request for another pod's sample and leaves it out"
        }
        GroupRule::NotSelected { counted: true } => {
            "Upstream groups only the pods the scale's selector picks, yet an average value target averages every sample the metrics API returns, one of a pod no longer selected included: relabel a pod out of a workload and its metrics source must forget it too"
        }
        GroupRule::Counted | GroupRule::TurnedUnready { .. } => "",
    }
}

impl Explanation {
    /// The explanation for people: the scenario explanation's table and
    /// trace, the status, what cannot be read, and the verdict.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "── HPA {} at {} (Kubernetes {}, from {}) ──",
            self.hpa, self.at, self.release.version, self.release.source
        );
        if let Some(w) = &self.release.warning {
            let _ = writeln!(out, "warning: {w}");
        }
        let _ = writeln!(out, "target: {}", self.target);
        out.push_str(&crate::gherkin::explain::rows(&[(
            self.hpa.clone(),
            self.record.clone(),
        )]));
        let s = &self.status;
        let show = |v: Option<i32>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
        let _ = writeln!(
            out,
            "status (written by the cluster's controller at its last sync):"
        );
        let _ = writeln!(
            out,
            "  desired {}, current {}, last scaled {}",
            show(s.desired_replicas),
            show(s.current_replicas),
            s.last_scale_time.map_or_else(
                || "never".to_owned(),
                |t| format!("{} ({t})", ago(self.at, t))
            )
        );
        if !s.conditions.is_empty() {
            let _ = writeln!(out, "  conditions:");
            for c in &s.conditions {
                let _ = writeln!(
                    out,
                    "    {}={} {}: {}",
                    c.type_, c.status, c.reason, c.message
                );
            }
        }
        for m in &s.current_metrics {
            let _ = writeln!(out, "  metric {m}");
        }
        let _ = writeln!(out, "what the API cannot show:");
        for u in &self.unknowns {
            let _ = writeln!(out, "  - {u}");
        }
        match (&self.stopped, self.agreement.agrees) {
            (Some(c), true) => {
                let _ = writeln!(
                    out,
                    "verdict: the HPA does not scale, as its status says (ScalingActive=False {}): the controller keeps {} replicas.",
                    c.reason, self.current_replicas
                );
            }
            (None, true) => {
                let _ = writeln!(
                    out,
                    "verdict: our computation agrees with the status (desired {}).",
                    show(s.desired_replicas)
                );
            }
            (_, false) => {
                let _ = writeln!(out, "verdict: our computation and the status disagree:");
                for d in &self.agreement.differences {
                    let _ = writeln!(out, "  - {d}");
                }
            }
        }
        if !self.agreement.likely_causes.is_empty() {
            let _ = writeln!(
                out,
                "{}, most likely first:",
                if self.agreement.agrees {
                    "why"
                } else {
                    "likely causes"
                }
            );
            for (i, c) in self.agreement.likely_causes.iter().enumerate() {
                let _ = writeln!(out, "  {}. {c}", i + 1);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    #[test]
    fn a_rule_is_said_of_one_pod_or_of_several() {
        let rule = GroupRule::NotReady {
            since: Some(t(60)),
            delay_ends: t(30),
            initialization_ends: t(300),
        };
        let one = sentence(&rule, &["web-1"], Some("left out"), t(100));
        assert_eq!(
            one,
            format!(
                "web-1 is not Ready since {} (40s ago), within the cpu initialization period (it ends at {} (in 3m20s)), so it is unready (left out); it counts from {} (in 3m20s) even if still not Ready, as it turned unready after the initial readiness delay",
                t(60),
                t(300),
                t(300)
            )
        );
        let two = sentence(
            &GroupRule::NoSample,
            &["web-1", "web-2", "web-3"],
            None,
            t(0),
        );
        assert_eq!(
            two,
            "the metrics API has no sample of web-1, web-2 and web-3, so they are missing"
        );
    }
}
