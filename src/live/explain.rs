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
use hpa_core::decide::RescaleOutcome;
use hpa_core::normalize::{generate_scale_down_rules, generate_scale_up_rules};
use hpa_core::{CorePod, DecisionInput, DecisionTrace, HpaHistory};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscalerCondition, MetricStatus, MetricValueStatus,
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
    /// Likely causes, most likely first (empty when they agree).
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
    let input = DecisionInput {
        hpa: Arc::clone(&snapshot.hpa),
        scale: snapshot.scale.clone(),
        pods: snapshot
            .pods
            .iter()
            .map(|p| Arc::new(CorePod::from(p)))
            .collect(),
        other_hpas: snapshot.others.clone(),
        metrics: snapshot.metrics.clone(),
    };
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

    let hpa = &snapshot.hpa;
    let status = hpa.status.as_ref();
    let observed = Observed {
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
    };

    let (bounds, unknowns) = bounds(snapshot, config, current, desired, proposal, &observed);
    let agreement = agreement(
        snapshot,
        config,
        current,
        bounds,
        &current_metrics,
        &observed,
        error.as_deref(),
    );
    let record = DecisionRecord {
        at: now,
        current_replicas: Some(current),
        desired_replicas: Some(desired),
        rescaled: false,
        status_written: false,
        dry_run: true,
        observed: Some(Arc::new(hpa_controller::hpa_cache::CachedHpa::new(
            &snapshot.hpa,
        ))),
        computed_status: Some(outcome.status),
        events: outcome.events,
        error: error.clone(),
        trace: Some(trace.clone()),
    };
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
        status: observed,
        unknowns,
        agreement,
        record,
    }
}

/// Where the running controller's count lies, and why, in words.
fn bounds(
    snapshot: &Snapshot,
    config: &ControllerConfig,
    current: i32,
    desired: i32,
    proposal: i32,
    observed: &Observed,
) -> (Bounds, Vec<String>) {
    let now = snapshot.now;
    let behavior = snapshot.hpa.spec.behavior.as_ref();
    let up = generate_scale_up_rules(behavior.and_then(|b| b.scale_up.as_ref()));
    let down = generate_scale_down_rules(behavior.and_then(|b| b.scale_down.as_ref()));
    let (up_window, up_period, up_select) = rules_of(&up, SignedDuration::ZERO);
    let (down_window, down_period, down_select) =
        rules_of(&down, config.decision.downscale_stabilization);
    let mut notes = vec![format!(
        "The controller keeps its recommendations (stabilization windows: scale-up {}, scale-down {}) and its scale events (which the scaling policies count) in memory, not in the API: the trace above is what a controller that started now would decide ({desired}).",
        hpa_core::go_duration::format(up_window),
        hpa_core::go_duration::format(down_window),
    )];
    let condition = |type_: &str| observed.conditions.iter().find(|c| c.type_ == type_);
    let last_scale = observed.last_scale_time;
    if snapshot.early.is_some() || proposal == current {
        let why = if snapshot.early.is_some() {
            "a rule decides without metrics"
        } else {
            "the metrics propose the current count"
        };
        notes.push(format!(
            "Here {why}: no window or policy can move it, so the controller wants {proposal}."
        ));
        return (
            Bounds {
                low: proposal,
                high: proposal,
            },
            notes,
        );
    }
    let (going, window, period, select) = if proposal < current {
        ("down", down_window, down_period, down_select)
    } else {
        ("up", up_window, up_period, up_select)
    };
    let mut held = false;
    if select == "Disabled" {
        notes.push(format!(
            "Scaling {going} is disabled (selectPolicy Disabled): the controller keeps {current}."
        ));
        return (
            Bounds {
                low: current,
                high: current,
            },
            notes,
        );
    }
    if window.is_positive() {
        held = true;
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
    } else {
        notes.push(format!(
            "The scale-{going} stabilization window is 0s: nothing holds the proposal of {proposal}."
        ));
    }
    let period_d = SignedDuration::from_secs(i64::from(period));
    match last_scale {
        Some(at) if now.duration_since(at) < period_d => {
            held = true;
            notes.push(format!(
                "The last scale was {} (lastScaleTime), within the longest scale-{going} policy period ({}): the scale events the policies count may limit the change below the proposal.",
                ago(now, at),
                secs(period)
            ));
        }
        Some(at) => notes.push(format!(
            "The last scale was {} (lastScaleTime), longer ago than the longest scale-{going} policy period ({}): no scale event counts, so the policies limit exactly as computed.",
            ago(now, at),
            secs(period)
        )),
        None => notes.push(format!(
            "The status has no lastScaleTime: the controller has not scaled this HPA's target, so no scale event counts against the scale-{going} policies ({})."
            ,secs(period)
        )),
    }
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
    let bounds = match (held, proposal < current) {
        (false, _) => Bounds {
            low: proposal,
            high: proposal,
        },
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

/// Our computation against the status.
fn agreement(
    snapshot: &Snapshot,
    config: &ControllerConfig,
    current: i32,
    bounds: Bounds,
    metrics: &[MetricValue],
    observed: &Observed,
    error: Option<&str>,
) -> Agreement {
    let mut differences = Vec::new();
    let range = if bounds.low == bounds.high {
        bounds.low.to_string()
    } else {
        format!("{} to {}", bounds.low, bounds.high)
    };
    match observed.desired_replicas {
        Some(d) if d < bounds.low || d > bounds.high => differences.push(format!(
            "desired replicas: the status says {d}, we compute {range}"
        )),
        Some(_) => {}
        None => {
            differences.push("the HPA has no status yet: no controller has synced it".to_owned())
        }
    }
    let mut moved = Vec::new();
    for ours in metrics {
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
    differences.extend(moved.iter().map(|m| format!("current metrics: {m}")));
    if differences.is_empty() {
        return Agreement {
            agrees: true,
            differences,
            likely_causes: Vec::new(),
        };
    }
    let mut causes = Vec::new();
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
    if !moved.is_empty() {
        causes.push(format!(
            "The metrics moved since the controller's last sync (it syncs every {}); run again, or with --watch.",
            hpa_core::go_duration::format_std(config.sync_period)
        ));
    }
    if let Some(e) = error {
        causes.push(format!("Our read of the metrics failed in part: {e}."));
    }
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
    Agreement {
        agrees: false,
        differences,
        likely_causes: causes,
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
        if self.agreement.agrees {
            let _ = writeln!(
                out,
                "verdict: our computation agrees with the status (desired {}).",
                show(s.desired_replicas)
            );
        } else {
            let _ = writeln!(out, "verdict: our computation and the status disagree:");
            for d in &self.agreement.differences {
                let _ = writeln!(out, "  - {d}");
            }
            let _ = writeln!(out, "likely causes, most likely first:");
            for (i, c) in self.agreement.likely_causes.iter().enumerate() {
                let _ = writeln!(out, "  {}. {c}", i + 1);
            }
        }
        out
    }
}
