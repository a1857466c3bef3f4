//! One HPA's decisions over time, as the picture needs them: built from the
//! controller's decision records, so that `replay`, `explain` and the HTML
//! report draw the same thing.

use hpa_core::calc::Tolerances;
use jiff::Timestamp;
use serde::Serialize;

use hpa_controller::decisions::DecisionRecord;

/// One metric of the HPA, for the legend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricLabel {
    /// `cpu`, `http_requests`, ...
    pub name: String,
    /// The target as the decision trace writes it (`50% utilization`).
    pub target: String,
}

/// What the controller saw and decided at one sync.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// Seconds since the start.
    pub t: f64,
    /// `spec.replicas` of the target when deciding.
    pub current: Option<i32>,
    /// Ready pods when deciding, where known (replays).
    pub ready: Option<i32>,
    /// The decision.
    pub desired: Option<i32>,
    /// The largest metric proposal, before stabilization.
    pub recommendation: Option<i32>,
    /// After the stabilization window.
    pub stabilized: Option<i32>,
    pub min: Option<i32>,
    pub max: Option<i32>,
    /// Per metric, usage over target (the first pass's ratio).
    pub ratios: Vec<Option<f64>>,
    /// Whether the scale was written.
    pub rescale: bool,
    /// Why (the rescale reason, or the error).
    pub reason: String,
}

impl Sample {
    /// Replicas once the decision is applied.
    pub fn after(&self) -> Option<i32> {
        if self.rescale {
            self.desired
        } else {
            self.current
        }
    }

    /// The replicas serving: ready pods where known, else the scale's.
    pub fn actual(&self) -> Option<i32> {
        self.ready.or(self.current)
    }
}

/// An HPA's timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// What the picture is titled (the HPA, the configuration).
    pub title: String,
    pub metrics: Vec<MetricLabel>,
    /// One per sync, in time order.
    pub samples: Vec<Sample>,
    /// The time the picture runs to (seconds): the last sync plus one
    /// period, so that the last decision shows.
    pub end: f64,
    /// The tolerance band around the target, as the last decision held the
    /// ratios against it (the HPA's own scale-up and scale-down tolerances
    /// where its release honours them, else the controller's flag); none
    /// (zero) when no decision computed metrics.
    pub tolerance: Tolerances,
    /// What happened beside the HPA's decisions (KEDA's operator steps,
    /// fallback), drawn over the replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
}

/// A mark on the replicas chart for something the HPA did not decide.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Note {
    /// Seconds since the start; a span when `to` is after `from`.
    pub from: f64,
    pub to: f64,
    /// The replicas it set, for a point.
    pub replicas: Option<i32>,
    pub kind: NoteKind,
    pub label: String,
}

/// How a note is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum NoteKind {
    /// KEDA's operator set the replicas (a point).
    OperatorStep,
    /// KEDA's fallback answered for the triggers (a span).
    Fallback,
}

impl Timeline {
    /// The same timeline with time counted in units of `seconds` (for the
    /// time axis).
    pub fn in_unit(&self, seconds: f64) -> Self {
        let mut scaled = self.clone();
        for s in &mut scaled.samples {
            s.t /= seconds;
        }
        for n in &mut scaled.notes {
            n.from /= seconds;
            n.to /= seconds;
        }
        scaled.end /= seconds;
        scaled
    }

    /// Builds the timeline of `records` (oldest first), counting time from
    /// `start`; `ready` gives the ready pods at each record, when known. The
    /// tolerance band is the one the decisions recorded.
    pub fn from_decisions(
        title: impl Into<String>,
        start: Timestamp,
        records: &[DecisionRecord],
        ready: Option<&[i32]>,
    ) -> Self {
        let mut metrics: Vec<MetricLabel> = Vec::new();
        let samples: Vec<Sample> = records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let t = r.at.duration_since(start).as_secs_f64();
                let trace = r.trace.as_ref();
                let mut ratios = Vec::new();
                for m in trace.map(|t| t.metrics.as_slice()).unwrap_or_default() {
                    if metrics.len() <= m.index {
                        metrics.resize(
                            m.index + 1,
                            MetricLabel {
                                name: String::new(),
                                target: String::new(),
                            },
                        );
                    }
                    let label = &mut metrics[m.index];
                    if label.name.is_empty() {
                        label.name = if m.name.is_empty() {
                            m.type_.clone()
                        } else {
                            readable_metric_name(&m.name)
                        };
                    }
                    if label.target.is_empty() {
                        label.target.clone_from(&m.target);
                    }
                    if ratios.len() <= m.index {
                        ratios.resize(m.index + 1, None);
                    }
                    ratios[m.index] = m.ratio;
                }
                // Upstream gives no reason when the metrics proposed the
                // current replicas and only normalization moved them.
                let reason = match (&r.error, trace) {
                    (Some(e), _) => e.clone(),
                    (None, Some(t)) if !t.reason.is_empty() => t.reason.clone(),
                    (None, Some(t)) if r.rescaled => format!(
                        "(no reason given upstream; {}, {})",
                        t.stabilization, t.limit_reason
                    ),
                    _ => String::new(),
                };
                Sample {
                    t,
                    current: r.current_replicas,
                    ready: ready.and_then(|rs| rs.get(i).copied()),
                    desired: r.desired_replicas,
                    recommendation: trace.and_then(|t| t.prenormalized),
                    stabilized: trace.and_then(|t| t.stabilized),
                    min: trace.map(|t| t.min_replicas),
                    max: trace.map(|t| t.max_replicas),
                    ratios,
                    rescale: r.rescaled,
                    reason,
                }
            })
            .collect();
        let period = match samples.as_slice() {
            [.., a, b] => (b.t - a.t).max(1.0),
            _ => 15.0,
        };
        let end = samples.last().map_or(period, |s| s.t + period);
        let tolerance = records
            .iter()
            .rev()
            .find_map(|r| r.trace.as_ref().map(|t| t.tolerances))
            .unwrap_or(Tolerances::symmetric(0.0));
        Self {
            title: title.into(),
            metrics,
            samples,
            end,
            tolerance,
            notes: Vec::new(),
        }
    }
}

/// A metric's name for people. Upstream describes external metrics with
/// Go's formatting of their selector (`external metric queue(nil)`,
/// `...(&LabelSelector{MatchLabels:map[string]string{queue: orders,},...})`),
/// which conditions and events keep; legends and summaries say
/// `external metric queue` and `external metric queue{queue=orders}`.
pub fn readable_metric_name(name: &str) -> String {
    if let Some(bare) = name.strip_suffix("(nil)") {
        return bare.to_owned();
    }
    let Some((bare, selector)) = name.split_once("(&LabelSelector{") else {
        return name.to_owned();
    };
    let labels = selector
        .split_once("MatchLabels:map[string]string{")
        .and_then(|(_, rest)| rest.split_once('}'))
        .map(|(labels, _)| labels)
        .unwrap_or_default();
    let mut pairs: Vec<String> = labels
        .split(',')
        .filter_map(|kv| kv.split_once(": "))
        .map(|(k, v)| format!("{}={}", k.trim(), v.trim()))
        .collect();
    if selector.contains("LabelSelectorRequirement{Key:") {
        pairs.push("...".to_owned());
    }
    if pairs.is_empty() {
        bare.to_owned()
    } else {
        format!("{bare}{{{}}}", pairs.join(","))
    }
}

#[cfg(test)]
mod readable_tests {
    use super::*;

    #[test]
    fn metric_names_drop_gos_selector_formatting() {
        assert_eq!(
            readable_metric_name("external metric queue(nil)"),
            "external metric queue"
        );
        assert_eq!(
            readable_metric_name(
                "external metric queue(&LabelSelector{MatchLabels:map[string]string{queue: orders,},MatchExpressions:[]LabelSelectorRequirement{},})"
            ),
            "external metric queue{queue=orders}"
        );
        assert_eq!(
            readable_metric_name("pods metric http_requests"),
            "pods metric http_requests"
        );
    }
}
