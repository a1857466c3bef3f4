//! The load report: what one load run measured, and how it is written out
//! (a table for people, JSON and CSV for tools, an SVG plot for a sweep).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::stats::Summary;
use super::upstream::SyncSource;

/// What one load run measured. The JSON field names are a stable format:
/// users compare reports across versions and machines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// `ours` or `upstream`: whose controller was measured.
    pub controller: String,
    /// `sim` or `kubeconfig`.
    pub backend: String,
    /// `steady`, `ramp` or `spiky`.
    pub metric_profile: String,
    /// Number of HPAs (each with its own deployment).
    pub hpas: u64,
    /// Pods per deployment at the start.
    pub pods_per_hpa: u64,
    /// Concurrent sync workers.
    pub workers: u64,
    /// The controller's sync period.
    pub sync_period_seconds: f64,
    /// The Kubernetes release whose semantics our controller followed
    /// (`1.37`); empty in reports written before it was recorded, and with
    /// `--controller upstream` (the cluster's controller follows its own).
    #[serde(default)]
    pub kubernetes_version: String,
    /// How long the run lasted (virtual or wall seconds, see `clock`).
    pub duration_seconds: f64,
    /// `virtual` or `wall`.
    pub clock: String,
    /// HPA reconciles completed.
    pub syncs: u64,
    /// Reconciles per second of run time.
    pub syncs_per_second: f64,
    /// Time between two consecutive syncs of the same HPA.
    pub sync_interval_seconds: Summary,
    /// The same, by the metric of the HPA: `cpu`, `memory`, `pods`
    /// (custom) and `external`, so that one slow metrics API shows apart.
    /// Empty when the intervals are unknown, and in reports from before it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sync_interval_by_metric_seconds: BTreeMap<String, Summary>,
    /// Wall time of one reconcile, from dequeue to status written.
    pub reconcile_latency_seconds: Summary,
    /// API requests (cluster and metrics APIs) per reconcile, on average.
    pub api_requests_per_sync: f64,
    /// Requests per reconcile by `VERB resource`, e.g. `get deployments/scale`.
    pub api_requests_by_kind: BTreeMap<String, f64>,
    /// HPAs that were never reconciled during the run: must be 0. `null`
    /// when the source of the syncs (`syncs_counted_by`) does not tell
    /// HPAs apart: unknown, not none.
    #[serde(default)]
    pub hpas_never_synced: Option<u64>,
    /// Decisions that differ from the pure core given the same inputs: must be 0.
    pub disagreements: u64,
    /// Peak resident memory of the process running the controller: since
    /// the controller started when `peak_rss_since_controller_start`, else
    /// over the process's life (the load's build included).
    pub peak_rss_bytes: u64,
    /// Whether `peak_rss_bytes` counts from the controller's start (Linux
    /// lets a process reset its peak), not from the load's build, which
    /// peaks higher. False in reports from before it.
    #[serde(default)]
    pub peak_rss_since_controller_start: bool,
    /// CPU time (user + system) the process used.
    pub cpu_seconds: f64,
    /// The machine: cores, memory, OS.
    pub machine: String,
    /// Whether the request-saving extensions were on (scale targets from a
    /// watch cache, shared metrics lists); off: upstream's requests.
    #[serde(default)]
    pub optimized: bool,
    /// Resident memory once the cluster was built, before the controller
    /// started: `peak_rss_bytes` minus this bounds the controller's own.
    #[serde(default)]
    pub setup_rss_bytes: u64,
    /// Seconds the controller ran before the measurement started; syncs,
    /// intervals, latencies, requests and CPU count from then on.
    #[serde(default)]
    pub warmup_seconds: f64,
    /// HPAs without a sync in the measured window (after the warm-up);
    /// `null` when unknown, as `hpas_never_synced`.
    #[serde(default)]
    pub hpas_not_synced_after_warmup: Option<u64>,
    /// With the cluster in another process (`sim-process`): that process's
    /// peak resident memory, so `peak_rss_bytes` is the controller's own.
    /// 0 when the cluster runs in-process or elsewhere.
    #[serde(default)]
    pub cluster_peak_rss_bytes: u64,
    /// With the cluster in another process: its CPU time in the measured
    /// window (`cpu_seconds` is then the controller's own).
    #[serde(default)]
    pub cluster_cpu_seconds: f64,
    /// Whether `api_requests_per_sync` was counted (false on a cluster that
    /// is not our simulated one: nothing counts its requests).
    #[serde(default = "counted_default")]
    pub requests_counted: bool,
    /// CPU time of the harness's disagreement checker (its replay of the
    /// core for every sync) in the measured window: part of `cpu_seconds`,
    /// but the load harness's, not the controller's.
    #[serde(default)]
    pub checker_cpu_seconds: f64,
    /// Milliseconds of CPU per sync: `cpu_seconds` less
    /// `checker_cpu_seconds`, divided by `syncs`. With `sim-process` that is
    /// the controller's own (the cluster is apart); with `sim` the cluster
    /// and the fake metrics server are in it too. 0 when no controller of
    /// ours ran (`--controller upstream`).
    #[serde(default)]
    pub cpu_ms_per_sync: f64,
    /// What counted `syncs` (and the intervals and HPAs never synced):
    /// `observer` (ours, in this process), `request-log` (the fake metrics
    /// server's, one request naming its HPA per sync: kube-controller-
    /// manager), `decision-log` (the controller's `/debug/syncs`),
    /// `controller-metrics` (its reconciliation counter: all its HPAs, not
    /// per HPA) or `request-log-lower-bound` (the log, which showed shared
    /// metrics lists, so not every sync). Empty in reports from before it.
    #[serde(default)]
    pub syncs_counted_by: String,
    /// Syncs that failed (a metric not read, the scale not written): not
    /// in `syncs`. More than 1 % of all makes the run no measurement.
    #[serde(default)]
    pub failed_syncs: u64,
    /// Failed syncs by reason (`load-N` stands for any load namespace).
    #[serde(default)]
    pub failed_sync_reasons: BTreeMap<String, u64>,
    /// Where our controller's memory went at the end of the run: each of
    /// its structures' bytes and the allocator's totals
    /// (`hpa_controller::memory`). Absent with `--controller upstream` and
    /// in reports from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<hpa_controller::memory_report::MemoryReport>,
}

fn counted_default() -> bool {
    true
}

impl LoadReport {
    /// Milliseconds of process CPU per sync, the checker's replay left out
    /// (see [`LoadReport::cpu_ms_per_sync`]).
    pub fn cpu_ms_per_sync_of(cpu_seconds: f64, checker_cpu_seconds: f64, syncs: u64) -> f64 {
        if syncs == 0 {
            return 0.0;
        }
        (cpu_seconds - checker_cpu_seconds).max(0.0) * 1000.0 / syncs as f64
    }

    /// What counted the syncs, when the report names a source this
    /// version knows.
    pub fn sync_source(&self) -> Option<SyncSource> {
        SyncSource::from_name(&self.syncs_counted_by)
    }

    /// The invariants every run must hold whatever the machine's speed:
    /// every HPA synced (where known), and synced within a measured window
    /// of [`WINDOW_PERIODS`] sync periods or more, no disagreement with the
    /// core, some sync (unless only a lower bound was counted). Returns the
    /// broken ones.
    pub fn invariant_violations(&self) -> Vec<String> {
        let mut broken = Vec::new();
        if let Some(never) = self.hpas_never_synced.filter(|n| *n > 0) {
            broken.push(format!("{never} of {} HPAs were never synced", self.hpas));
        }
        if let Some(idle) = self.hpas_not_synced_after_warmup.filter(|n| *n > 0)
            && self.duration_seconds >= WINDOW_PERIODS * self.sync_period_seconds
        {
            broken.push(format!(
                "{idle} of {} HPAs had no sync in the measured {:.0} s ({WINDOW_PERIODS} sync periods or more): the controller did not keep up, and the intervals describe only the HPAs it reached",
                self.hpas, self.duration_seconds
            ));
        }
        if self.disagreements > 0 {
            broken.push(format!(
                "{} decisions disagree with the pure core",
                self.disagreements
            ));
        }
        let lower_bound = self.sync_source().is_some_and(|s| !s.counts_every_sync());
        if self.syncs == 0 && !lower_bound {
            broken.push("no sync completed".to_string());
        }
        if let Some(why) =
            super::failures::refusal(self.syncs, self.failed_syncs, &self.failed_sync_reasons)
        {
            broken.push(why);
        }
        broken
    }
}

/// A measured window this many sync periods long must see every HPA
/// synced: one that waited longer was not kept by the controller at all,
/// and the figures would describe only the HPAs it reached.
pub const WINDOW_PERIODS: f64 = 2.0;

/// Errors writing a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A report file could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// JSON serialisation failed.
    #[error("cannot encode the report as JSON")]
    Json(#[from] serde_json::Error),
    /// A saved report could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A saved report is not a load report (or a sweep's array of them).
    #[error("{path}: not a load report: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What serde_json said, with the line and column.
        message: String,
    },
    /// The plot could not be drawn.
    #[error("cannot draw the plot {path}: {message}")]
    Plot {
        /// The file.
        path: PathBuf,
        /// What plotters said.
        message: String,
    },
}

fn write_file(path: &Path, contents: &str) -> Result<(), ReportError> {
    std::fs::write(path, contents).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes one report, or a sweep's reports, as pretty JSON: a single object
/// for one run, an array for a sweep.
pub fn write_json(path: &Path, reports: &[LoadReport]) -> Result<(), ReportError> {
    let text = match reports {
        [one] => serde_json::to_string_pretty(one)?,
        many => serde_json::to_string_pretty(many)?,
    };
    write_file(path, &(text + "\n"))
}

/// Reads what [`write_json`] wrote: one run's report or a sweep's array.
pub fn read_json(path: &Path) -> Result<Vec<LoadReport>, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let parse_error = |e: serde_json::Error| ReportError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    // A sweep's file is an array, one run's an object.
    if text.trim_start().starts_with('[') {
        serde_json::from_str(&text).map_err(parse_error)
    } else {
        serde_json::from_str(&text)
            .map(|one| vec![one])
            .map_err(parse_error)
    }
}

/// The CSV columns, in order.
const CSV_HEADER: &str = "controller,optimized,backend,metric_profile,hpas,pods_per_hpa,workers,sync_period_seconds,duration_seconds,syncs,syncs_per_second,sync_interval_p50,sync_interval_p99,sync_interval_max,reconcile_p50,reconcile_p99,reconcile_max,api_requests_per_sync,hpas_never_synced,disagreements,peak_rss_bytes,setup_rss_bytes,cpu_seconds,warmup_seconds,hpas_not_synced_after_warmup,cluster_peak_rss_bytes,cluster_cpu_seconds,checker_cpu_seconds,cpu_ms_per_sync,syncs_counted_by,peak_rss_since_controller_start,failed_syncs";

/// Renders reports as CSV, one row per run.
pub fn to_csv(reports: &[LoadReport]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in reports {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{:.3},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.4},{},{},{},{},{:.3},{:.3},{},{},{:.3},{:.3},{:.4},{},{},{}",
            r.controller,
            r.optimized,
            r.backend,
            r.metric_profile,
            r.hpas,
            r.pods_per_hpa,
            r.workers,
            r.sync_period_seconds,
            r.duration_seconds,
            r.syncs,
            r.syncs_per_second,
            r.sync_interval_seconds.p50,
            r.sync_interval_seconds.p99,
            r.sync_interval_seconds.max,
            r.reconcile_latency_seconds.p50,
            r.reconcile_latency_seconds.p99,
            r.reconcile_latency_seconds.max,
            r.api_requests_per_sync,
            known(r.hpas_never_synced, ""),
            r.disagreements,
            r.peak_rss_bytes,
            r.setup_rss_bytes,
            r.cpu_seconds,
            r.warmup_seconds,
            known(r.hpas_not_synced_after_warmup, ""),
            r.cluster_peak_rss_bytes,
            r.cluster_cpu_seconds,
            r.checker_cpu_seconds,
            r.cpu_ms_per_sync,
            r.syncs_counted_by,
            r.peak_rss_since_controller_start,
            r.failed_syncs,
        );
    }
    out
}

/// Writes reports as CSV.
pub fn write_csv(path: &Path, reports: &[LoadReport]) -> Result<(), ReportError> {
    write_file(path, &to_csv(reports))
}

/// Renders reports as an aligned text table for the terminal.
pub fn to_table(reports: &[LoadReport]) -> String {
    let header = [
        "controller",
        "optimized",
        "HPAs",
        "pods/HPA",
        "workers",
        "syncs/s",
        "failed",
        "interval p50",
        "interval p99",
        "interval max",
        "reconcile p50",
        "reconcile p99",
        "reconcile max",
        "API req/sync",
        "never synced",
        "disagree",
        "peak RSS",
        "CPU",
        "CPU/sync",
    ];
    let rows: Vec<Vec<String>> = reports
        .iter()
        .map(|r| {
            vec![
                r.controller.clone(),
                if r.optimized { "yes" } else { "no" }.to_string(),
                r.hpas.to_string(),
                r.pods_per_hpa.to_string(),
                r.workers.to_string(),
                format!("{:.1}", r.syncs_per_second),
                r.failed_syncs.to_string(),
                summary_cell(&r.sync_interval_seconds, |s| s.p50),
                summary_cell(&r.sync_interval_seconds, |s| s.p99),
                summary_cell(&r.sync_interval_seconds, |s| s.max),
                summary_cell(&r.reconcile_latency_seconds, |s| s.p50),
                summary_cell(&r.reconcile_latency_seconds, |s| s.p99),
                summary_cell(&r.reconcile_latency_seconds, |s| s.max),
                format!("{:.2}", r.api_requests_per_sync),
                known(r.hpas_never_synced, "unknown"),
                r.disagreements.to_string(),
                bytes(r.peak_rss_bytes),
                format!("{:.1}s", r.cpu_seconds),
                if r.cpu_ms_per_sync > 0.0 {
                    format!("{:.3}ms", r.cpu_ms_per_sync)
                } else {
                    "-".to_string()
                },
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let mut first = true;
        for (cell, w) in cells.zip(&widths) {
            if !first {
                out.push_str("  ");
            }
            first = false;
            let _ = write!(out, "{cell:>w$}");
        }
        out.push('\n');
    };
    line(&mut out, &mut header.iter().copied());
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&mut out, &mut rule.iter().map(String::as_str));
    for row in &rows {
        line(&mut out, &mut row.iter().map(String::as_str));
    }
    notes(reports, &mut out);
    out
}

/// The lines under the table: what the first report's figures mean (the
/// requests by kind, the release, the warm-up, where the cluster ran, what
/// the memory and CPU cover, what counted the syncs).
fn notes(reports: &[LoadReport], out: &mut String) {
    if let Some(first) = reports.first() {
        let by_kind: Vec<String> = first
            .api_requests_by_kind
            .iter()
            .map(|(k, v)| format!("{k}: {v:.2}"))
            .collect();
        if !by_kind.is_empty() && reports.len() == 1 {
            let _ = writeln!(
                out,
                "\nAPI requests per sync by kind: {}",
                by_kind.join(", ")
            );
        }
        if reports.len() == 1 && !first.sync_interval_by_metric_seconds.is_empty() {
            let by_metric: Vec<String> = first
                .sync_interval_by_metric_seconds
                .iter()
                .map(|(metric, s)| format!("{metric} {} / {}", seconds(s.p50), seconds(s.p99)))
                .collect();
            let _ = writeln!(
                out,
                "sync interval p50 / p99 by metric: {}",
                by_metric.join(", ")
            );
        }
        if reports.len() == 1 && first.failed_syncs > 0 {
            let _ = writeln!(
                out,
                "\nfailed syncs (not counted as syncs) by reason: {}",
                super::failures::first_reasons(&first.failed_sync_reasons, usize::MAX)
            );
        }
        if first.warmup_seconds > 0.0 && reports.len() == 1 {
            let _ = writeln!(
                out,
                "measured after a {:.0}s warm-up; HPAs not synced after it: {}",
                first.warmup_seconds,
                known(first.hpas_not_synced_after_warmup, "unknown")
            );
        }
        if !first.kubernetes_version.is_empty() && reports.len() == 1 {
            let _ = writeln!(
                out,
                "our controller followed Kubernetes {}",
                first.kubernetes_version
            );
        }
        if first.cluster_peak_rss_bytes > 0 && reports.len() == 1 {
            let _ = writeln!(
                out,
                "the cluster ran in its own process (peak RSS {}, CPU {:.1}s)",
                bytes(first.cluster_peak_rss_bytes),
                first.cluster_cpu_seconds,
            );
        }
        // With --controller upstream this process runs no controller.
        if reports.len() == 1 && first.setup_rss_bytes > 0 && first.controller != "upstream" {
            if first.peak_rss_since_controller_start {
                let _ = writeln!(
                    out,
                    "peak RSS is this process's since the controller started: the controller{} and the load's own state ({} then), so the controller's own is about {}",
                    if first.backend == "sim" {
                        ", the simulated cluster"
                    } else {
                        ""
                    },
                    bytes(first.setup_rss_bytes),
                    bytes(first.peak_rss_bytes.saturating_sub(first.setup_rss_bytes))
                );
            } else {
                let _ = writeln!(
                    out,
                    "peak RSS is this process's over its life, the load's build included: it bounds the controller's from above"
                );
            }
        }
        if let (Some(memory), 1) = (&first.memory, reports.len()) {
            let _ = writeln!(
                out,
                "where the controller's memory went at the end of the run:\n{}",
                memory.table()
            );
        }
        if first.checker_cpu_seconds > 0.0 && reports.len() == 1 {
            let _ = writeln!(
                out,
                "CPU/sync leaves out the disagreement checker's replay of the core ({:.1}s of the CPU above)",
                first.checker_cpu_seconds
            );
        }
        let sources: std::collections::BTreeSet<&str> = reports
            .iter()
            .map(|r| r.syncs_counted_by.as_str())
            .filter(|s| !s.is_empty() && *s != SyncSource::Observer.name())
            .collect();
        for name in sources {
            let what = SyncSource::from_name(name).map_or("", SyncSource::description);
            let _ = writeln!(out, "syncs counted by {name}: {what}");
        }
        if !first.requests_counted && reports.len() == 1 {
            let _ = writeln!(
                out,
                "API requests were not counted (not our simulated cluster)"
            );
        }
        let _ = writeln!(out, "machine: {}", first.machine);
    }
}

/// A count, or `unknown` when the source could not tell.
fn known(n: Option<u64>, unknown: &str) -> String {
    n.map_or_else(|| unknown.to_string(), |n| n.to_string())
}

/// One figure of a summary, `-` when it is over no samples (nothing was
/// measured, e.g. reconcile latency of a controller run elsewhere).
fn summary_cell(s: &Summary, pick: fn(&Summary) -> f64) -> String {
    if s.count == 0 {
        "-".to_string()
    } else {
        seconds(pick(s))
    }
}

fn seconds(s: f64) -> String {
    // Syncs served from the shared lists take tens of microseconds.
    if s < 0.001 {
        format!("{:.2}ms", s * 1000.0)
    } else if s < 1.0 {
        format!("{:.1}ms", s * 1000.0)
    } else {
        format!("{s:.2}s")
    }
}

fn bytes(b: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    format!("{:.0}MiB", b as f64 / MIB)
}

/// A report with every figure set, for tests of what reads reports.
#[cfg(test)]
pub(crate) fn sample(hpas: u64, workers: u64) -> LoadReport {
    LoadReport {
        controller: "ours".into(),
        backend: "sim".into(),
        metric_profile: "steady".into(),
        hpas,
        pods_per_hpa: 10,
        workers,
        sync_period_seconds: 15.0,
        kubernetes_version: "1.37".into(),
        duration_seconds: 60.0,
        clock: "virtual".into(),
        syncs: hpas * 4,
        syncs_per_second: hpas as f64 / 15.0,
        sync_interval_seconds: Summary {
            p50: 15.0,
            p99: 15.2,
            max: 15.5,
            count: hpas * 3,
        },
        sync_interval_by_metric_seconds: BTreeMap::new(),
        reconcile_latency_seconds: Summary {
            p50: 0.001,
            p99: 0.004,
            max: 0.02,
            count: hpas * 4,
        },
        api_requests_per_sync: 0.5,
        api_requests_by_kind: BTreeMap::from([("list metrics.k8s.io/pods".into(), 0.5)]),
        hpas_never_synced: Some(0),
        disagreements: 0,
        peak_rss_bytes: 64 * 1024 * 1024,
        peak_rss_since_controller_start: true,
        cpu_seconds: 3.5,
        machine: "test machine".into(),
        optimized: true,
        setup_rss_bytes: 32 * 1024 * 1024,
        warmup_seconds: 15.0,
        hpas_not_synced_after_warmup: Some(0),
        cluster_peak_rss_bytes: 0,
        cluster_cpu_seconds: 0.0,
        requests_counted: true,
        checker_cpu_seconds: 0.5,
        cpu_ms_per_sync: 0.3,
        syncs_counted_by: "observer".into(),
        failed_syncs: 0,
        failed_sync_reasons: BTreeMap::new(),
        memory: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::sample as report;

    #[test]
    fn failed_syncs_are_listed_by_reason_and_over_one_percent_refuse_the_run() {
        let mut r = report(100, 1);
        assert!(r.invariant_violations().is_empty());
        r.syncs = 184;
        r.failed_syncs = 546;
        r.failed_sync_reasons = BTreeMap::from([
            ("no metrics returned from resource metrics API".into(), 400),
            ("the server could not find the metric".into(), 146),
        ]);
        let table = to_table(std::slice::from_ref(&r));
        assert!(
            table.contains("failed syncs (not counted as syncs) by reason: 400x \"no metrics returned from resource metrics API\"; 146x"),
            "{table}"
        );
        let broken = r.invariant_violations();
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(
            broken[0].contains("546 of 730 syncs failed"),
            "{}",
            broken[0]
        );
        assert!(broken[0].contains("no metrics returned"), "{}", broken[0]);
        r.failed_syncs = 1;
        assert!(
            r.invariant_violations().is_empty(),
            "1 of 185 is under 1 %: no"
        );
    }

    #[test]
    fn json_holds_the_documented_fields() {
        let value = serde_json::to_value(report(100, 5)).unwrap();
        for key in [
            "hpas",
            "workers",
            "duration_seconds",
            "syncs_per_second",
            "sync_interval_seconds",
            "reconcile_latency_seconds",
            "api_requests_per_sync",
            "hpas_never_synced",
            "disagreements",
            "peak_rss_bytes",
        ] {
            assert!(value.get(key).is_some(), "missing {key}");
        }
        for key in ["p50", "p99", "max"] {
            assert!(value["sync_interval_seconds"].get(key).is_some());
            assert!(value["reconcile_latency_seconds"].get(key).is_some());
        }
    }

    #[test]
    fn csv_has_one_row_per_run_and_as_many_cells_as_the_header() {
        let csv = to_csv(&[report(100, 1), report(1000, 5)]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        let columns = lines[0].split(',').count();
        assert!(lines[1..].iter().all(|l| l.split(',').count() == columns));
        assert!(lines[2].starts_with("ours,true,sim,steady,1000,10,5,"));
    }

    #[test]
    fn table_lists_every_run_with_units() {
        let table = to_table(&[report(100, 1)]);
        assert!(table.contains("reconcile p99"));
        assert!(table.contains("4.0ms"));
        assert!(table.contains("64MiB"));
        assert!(table.contains("machine: test machine"));
        assert!(!table.contains("its own process"));
        assert!(
            table.contains("the controller, the simulated cluster and the load's own state"),
            "{table}"
        );
    }

    #[test]
    fn intervals_by_metric_are_listed_under_the_table_and_kept_in_json() {
        let mut r = report(100, 1);
        assert!(!to_table(&[r.clone()]).contains("by metric"));
        let at = |p50, p99| Summary {
            p50,
            p99,
            max: p99,
            count: 10,
        };
        r.sync_interval_by_metric_seconds = BTreeMap::from([
            ("cpu".into(), at(15.0, 15.02)),
            ("external".into(), at(37.3, 41.0)),
        ]);
        let table = to_table(&[r.clone()]);
        assert!(
            table.contains(
                "sync interval p50 / p99 by metric: cpu 15.00s / 15.02s, external 37.30s / 41.00s"
            ),
            "{table}"
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json["sync_interval_by_metric_seconds"]["external"]["p50"],
            37.3
        );
    }

    #[test]
    fn with_upstream_s_controller_no_memory_is_called_the_controller_s() {
        let mut r = report(100, 1);
        r.controller = "upstream".into();
        let table = to_table(&[r]);
        assert!(!table.contains("controller's own"), "{table}");
        assert!(!table.contains("peak RSS is this process's"), "{table}");
    }

    #[test]
    fn a_peak_that_could_not_be_reset_is_called_a_bound() {
        let mut r = report(100, 1);
        r.peak_rss_since_controller_start = false;
        let table = to_table(&[r]);
        assert!(
            table.contains("over its life, the load's build included"),
            "{table}"
        );
        assert!(!table.contains("controller's own is about"), "{table}");
    }

    #[test]
    fn saved_reports_read_back_as_written_and_bad_ones_are_named() {
        let dir = std::env::temp_dir().join(format!("hpa-read-json-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = dir.join("one.json");
        let many = dir.join("many.json");
        write_json(&one, &[report(100, 1)]).unwrap();
        write_json(&many, &[report(100, 1), report(1000, 5)]).unwrap();
        let read = read_json(&one).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(to_csv(&read), to_csv(&[report(100, 1)]));
        let read = read_json(&many).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[1].hpas, 1000);
        assert_eq!(read[1].workers, 5);

        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{\n  \"hpas\": \"many\"\n}\n").unwrap();
        let message = read_json(&bad).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("{}: not a load report", bad.display())),
            "{message}"
        );
        assert!(message.contains("line 2"), "{message}");
        let missing = read_json(&dir.join("absent.json")).unwrap_err().to_string();
        assert!(missing.contains("absent.json"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sub_millisecond_latencies_keep_two_decimals() {
        assert_eq!(seconds(0.000_04), "0.04ms");
        assert_eq!(seconds(0.0033), "3.3ms");
        assert_eq!(seconds(15.012), "15.01s");
    }

    #[test]
    fn with_the_cluster_apart_the_controller_s_memory_is_the_peak_less_the_load_s_state() {
        let mut r = report(100, 1);
        r.cluster_peak_rss_bytes = 500 * 1024 * 1024;
        r.backend = "sim-process".into();
        let table = to_table(std::slice::from_ref(&r));
        assert!(table.contains("peak RSS 500MiB"), "{table}");
        assert!(
            table.contains("since the controller started: the controller and"),
            "{table}"
        );
        assert!(table.contains("load's own state (32MiB then)"), "{table}");
        assert!(
            table.contains("the controller's own is about 32MiB"),
            "{table}"
        );
    }

    #[test]
    fn cpu_per_sync_leaves_out_the_checker() {
        assert!((LoadReport::cpu_ms_per_sync_of(3.0, 1.0, 4000) - 0.5).abs() < 1e-12);
        assert_eq!(LoadReport::cpu_ms_per_sync_of(3.0, 1.0, 0), 0.0);
        let table = to_table(&[report(100, 1)]);
        assert!(table.contains("CPU/sync"));
        assert!(table.contains("0.300ms"));
        assert!(table.contains("disagreement checker"));
        let csv = to_csv(&[report(100, 1)]);
        assert!(
            csv.lines()
                .next()
                .unwrap()
                .contains(",checker_cpu_seconds,cpu_ms_per_sync,")
        );
    }

    #[test]
    fn broken_invariants_are_named() {
        let mut r = report(10, 1);
        assert!(r.invariant_violations().is_empty());
        r.hpas_never_synced = Some(2);
        r.disagreements = 1;
        let broken = r.invariant_violations();
        assert_eq!(broken.len(), 2);
        assert!(broken[0].contains("2 of 10 HPAs"));
    }

    /// An HPA without a sync in a window of two periods breaks the run;
    /// in a shorter window it may just not have come round yet.
    #[test]
    fn hpas_left_unsynced_for_two_periods_break_the_run() {
        let mut r = report(10, 1);
        r.sync_period_seconds = 15.0;
        r.duration_seconds = 30.0;
        r.hpas_not_synced_after_warmup = Some(3);
        let broken = r.invariant_violations();
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].starts_with("3 of 10 HPAs had no sync in the measured 30 s"));
        r.duration_seconds = 29.0;
        assert!(r.invariant_violations().is_empty());
        r.duration_seconds = 60.0;
        r.hpas_not_synced_after_warmup = Some(0);
        assert!(r.invariant_violations().is_empty());
    }

    #[test]
    fn a_source_that_cannot_tell_hpas_apart_reports_them_unknown_not_unsynced() {
        let mut r = report(100, 1);
        r.controller = "upstream".into();
        r.syncs_counted_by = "controller-metrics".into();
        r.hpas_never_synced = None;
        r.hpas_not_synced_after_warmup = None;
        r.sync_interval_seconds = Summary::default();
        r.reconcile_latency_seconds = Summary::default();
        assert!(r.invariant_violations().is_empty(), "unknown is no failure");
        let value = serde_json::to_value(&r).unwrap();
        assert!(value["hpas_never_synced"].is_null());
        assert_eq!(value["syncs_counted_by"], "controller-metrics");
        let table = to_table(std::slice::from_ref(&r));
        assert!(table.contains("unknown"), "{table}");
        assert!(
            table.contains("HPAs not synced after it: unknown"),
            "{table}"
        );
        assert!(
            table.contains(
                "syncs counted by controller-metrics: the controller's reconciliations counter"
            ),
            "{table}"
        );
        assert!(
            !table.contains("0.0ms"),
            "nothing measured shows as -: {table}"
        );
        let csv = to_csv(std::slice::from_ref(&r));
        let (header, row) = csv.split_once('\n').unwrap();
        let cells: std::collections::HashMap<&str, &str> =
            header.split(',').zip(row.trim_end().split(',')).collect();
        assert_eq!(cells["hpas_never_synced"], "");
        assert_eq!(cells["hpas_not_synced_after_warmup"], "");
        assert_eq!(cells["syncs_counted_by"], "controller-metrics");
        // A lower bound of zero syncs is no proof that none happened.
        r.syncs_counted_by = "request-log-lower-bound".into();
        r.syncs = 0;
        assert!(r.invariant_violations().is_empty());
        r.syncs_counted_by = "decision-log".into();
        assert_eq!(r.invariant_violations(), ["no sync completed"]);
    }

    #[test]
    fn reports_from_before_the_source_was_named_still_read() {
        let mut value = serde_json::to_value(report(100, 1)).unwrap();
        let object = value.as_object_mut().unwrap();
        object.remove("syncs_counted_by");
        object.insert("hpas_never_synced".into(), 3.into());
        let r: LoadReport = serde_json::from_value(value).unwrap();
        assert_eq!(r.hpas_never_synced, Some(3));
        assert_eq!(r.syncs_counted_by, "");
        assert_eq!(r.sync_source(), None);
    }
}
