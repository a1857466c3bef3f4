//! What a replay tells its user: replicas over time, each rescale with its
//! reason, the time spent at the maximum and over target, as text and as
//! JSON (`--output json`).

use std::fmt::Write as _;

use serde::Serialize;

use super::keda::KedaRun;
use super::run::{Feed, ReplayRun, Spread};
use crate::plot::svg::duration_label;
use crate::plot::{Sample, Timeline};

/// Changes of the replicas the text lists before it says "and N more".
const MAX_CHANGES_SHOWN: usize = 24;

/// One rescale.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rescale {
    /// Seconds since the series' start.
    pub at_seconds: f64,
    pub from: Option<i32>,
    pub to: Option<i32>,
    pub reason: String,
}

/// Time one metric spent above its target.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverTarget {
    pub metric: String,
    /// The series column that fed it.
    pub column: String,
    pub seconds: f64,
}

/// A replay's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// What was replayed (the HPA manifest file).
    pub label: String,
    /// `namespace/name`.
    pub hpa: String,
    pub spread: Spread,
    pub sync_period_seconds: f64,
    pub syncs: usize,
    pub duration_seconds: f64,
    pub start_replicas: Option<i32>,
    pub end_replicas: Option<i32>,
    pub min_replicas_seen: Option<i32>,
    pub max_replicas_seen: Option<i32>,
    /// `spec.maxReplicas`.
    pub max_replicas: Option<i32>,
    /// Time with the workload at `spec.maxReplicas`.
    pub seconds_at_max: f64,
    pub over_target: Vec<OverTarget>,
    pub rescales: Vec<Rescale>,
    /// Syncs that ended in an error (the first one's text).
    pub errors: usize,
    pub first_error: Option<String>,
    /// Each sync: what the controller saw and decided.
    pub samples: Vec<Sample>,
    /// What KEDA did, when a ScaledObject was replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keda: Option<KedaSummary>,
}

/// KEDA's part of a ScaledObject's replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KedaSummary {
    #[serde(flatten)]
    pub run: KedaRun,
    /// Time with fallback in force.
    pub fallback_seconds: f64,
    /// `(from, to)` seconds of each stretch with fallback in force.
    pub fallback_spans: Vec<(f64, f64)>,
}

impl KedaSummary {
    fn of(run: &KedaRun, samples: &[Sample], end: f64) -> Self {
        let mut spans: Vec<(f64, f64)> = Vec::new();
        for (i, s) in samples.iter().enumerate() {
            if !run.fallback.get(i).copied().unwrap_or(false) {
                continue;
            }
            let next = samples.get(i + 1).map_or(end, |n| n.t);
            match spans.last_mut() {
                Some(last) if last.1 == s.t => last.1 = next,
                _ => spans.push((s.t, next)),
            }
        }
        Self {
            run: run.clone(),
            fallback_seconds: spans.iter().map(|(a, b)| b - a).sum(),
            fallback_spans: spans,
        }
    }
}

/// Sums the length of the sync intervals where `pick` holds.
fn time_where(samples: &[Sample], end: f64, pick: impl Fn(&Sample) -> bool) -> f64 {
    samples
        .iter()
        .enumerate()
        .filter(|(_, s)| pick(s))
        .map(|(i, s)| samples.get(i + 1).map_or(end, |n| n.t) - s.t)
        .fold(0.0, |a, b| a + b)
}

impl Summary {
    /// Sums up `run`, whose timeline is `timeline`.
    pub fn of(label: &str, run: &ReplayRun, timeline: &Timeline, spread: Spread) -> Self {
        let samples = &timeline.samples;
        let end = timeline.end;
        let max_replicas = samples.iter().rev().find_map(|s| s.max);
        let afters: Vec<i32> = samples.iter().filter_map(Sample::after).collect();
        let over_target = run
            .feeds
            .iter()
            .map(|f: &Feed| OverTarget {
                metric: timeline
                    .metrics
                    .get(f.index)
                    .map(|m| m.name.clone())
                    .unwrap_or_default(),
                column: f.column.clone(),
                seconds: time_where(samples, end, |s| {
                    s.ratios
                        .get(f.index)
                        .copied()
                        .flatten()
                        .is_some_and(|r| r > 1.0)
                }),
            })
            .collect();
        let errors: Vec<&str> = run
            .decisions
            .iter()
            .filter_map(|d| d.error.as_deref())
            .collect();
        Self {
            label: label.to_owned(),
            hpa: run.hpa.clone(),
            spread,
            sync_period_seconds: run.sync_period.as_secs_f64(),
            syncs: samples.len(),
            duration_seconds: end,
            start_replicas: samples.first().and_then(|s| s.current),
            end_replicas: samples.last().and_then(Sample::after),
            min_replicas_seen: afters.iter().copied().min(),
            max_replicas_seen: afters.iter().copied().max(),
            max_replicas,
            seconds_at_max: time_where(samples, end, |s| s.after().is_some() && s.after() == s.max),
            over_target,
            rescales: samples
                .iter()
                .filter(|s| s.rescale)
                .map(|s| Rescale {
                    at_seconds: s.t,
                    from: s.current,
                    to: s.desired,
                    reason: s.reason.clone(),
                })
                .collect(),
            errors: errors.len(),
            first_error: errors.first().map(|e| (*e).to_owned()),
            samples: samples.clone(),
            keda: run.keda.as_ref().map(|k| KedaSummary::of(k, samples, end)),
        }
    }

    /// The summary as people read it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "replay of HPA {} ({}): {} syncs of {} over {}, pod metrics as {}",
            self.hpa,
            self.label,
            self.syncs,
            duration_label(self.sync_period_seconds),
            duration_label(self.duration_seconds),
            match self.spread {
                Spread::Total => "the total spread over ready pods",
                Spread::PerPod => "per-pod values",
            }
        );
        let _ = writeln!(
            out,
            "replicas: {} at the start, {} at the end, between {} and {}",
            show(self.start_replicas),
            show(self.end_replicas),
            show(self.min_replicas_seen),
            show(self.max_replicas_seen)
        );
        let _ = writeln!(
            out,
            "time at maxReplicas ({}): {} ({:.0}%)",
            show(self.max_replicas),
            duration_label(self.seconds_at_max),
            self.percent(self.seconds_at_max)
        );
        for o in &self.over_target {
            let _ = writeln!(
                out,
                "time over target, {} (column {:?}): {} ({:.0}%)",
                o.metric,
                o.column,
                duration_label(o.seconds),
                self.percent(o.seconds)
            );
        }
        self.write_replica_changes(&mut out);
        let _ = writeln!(out, "rescales: {}", self.rescales.len());
        for r in &self.rescales {
            let _ = writeln!(
                out,
                "  +{:<8} {:>3} -> {:<3} {}",
                duration_label(r.at_seconds),
                show(r.from),
                show(r.to),
                r.reason
            );
        }
        if let Some(k) = &self.keda {
            self.write_keda(&mut out, k);
        }
        if let Some(e) = &self.first_error {
            let _ = writeln!(out, "syncs with an error: {} (first: {e})", self.errors);
        }
        out
    }

    /// Percent of the replay's duration `seconds` is (0 for an empty one).
    fn percent(&self, seconds: f64) -> f64 {
        if self.duration_seconds > 0.0 {
            seconds / self.duration_seconds * 100.0
        } else {
            0.0
        }
    }

    /// `replicas over time:` each change of the count with its time, the
    /// first [`MAX_CHANGES_SHOWN`] of them.
    fn write_replica_changes(&self, out: &mut String) {
        let mut changes: Vec<String> = Vec::new();
        let mut last = None;
        for s in &self.samples {
            let now = s.after();
            if now != last {
                changes.push(format!("{} at +{}", show(now), duration_label(s.t)));
                last = now;
            }
        }
        let shown = changes.len().min(MAX_CHANGES_SHOWN);
        let _ = write!(out, "replicas over time: {}", changes[..shown].join(", "));
        if changes.len() > shown {
            let _ = write!(
                out,
                " ... and {} more changes (--output json has every sync)",
                changes.len() - shown
            );
        }
        let _ = writeln!(out);
    }

    /// The KEDA operator's part: its triggers' columns, each step it took,
    /// and the time its fallback was in force.
    fn write_keda(&self, out: &mut String, k: &KedaSummary) {
        let columns: Vec<String> = k
            .run
            .columns
            .iter()
            .map(|(m, c)| format!("{m} <- {c:?}"))
            .collect();
        let _ = writeln!(
            out,
            "KEDA (ScaledObject {}; triggers {}): {} operator steps",
            k.run.scaled_object,
            columns.join(", "),
            k.run.steps.len()
        );
        for s in &k.run.steps {
            let _ = writeln!(
                out,
                "  +{:<8} {:>3} -> {:<3} {}",
                duration_label(s.at_seconds),
                s.from,
                s.to,
                s.reason
            );
        }
        let spans: Vec<String> = k
            .fallback_spans
            .iter()
            .map(|(a, b)| format!("+{} to +{}", duration_label(*a), duration_label(*b)))
            .collect();
        let _ = writeln!(
            out,
            "fallback in force: {} ({:.0}%){}",
            duration_label(k.fallback_seconds),
            self.percent(k.fallback_seconds),
            if spans.is_empty() {
                String::new()
            } else {
                format!(", {}", spans.join(", "))
            }
        );
    }
}

/// A replica count, `-` where there is none.
fn show(replicas: Option<i32>) -> String {
    replicas.map_or_else(|| "-".to_owned(), |v| v.to_string())
}
