//! `hpa-harness load`: many HPAs synced by our controller on the simulated
//! cluster, and the figures platform teams size a controller with.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::load::report::{self, LoadReport};
use crate::load::{BackendKind, ControllerKind, LoadOptions, MetricProfile};
use crate::plot::load::{PlotAxis, write_plot};
use crate::testbed::options::TestbedArgs;
use hpa_controller::config::parse_go_duration;
use hpa_controller::flags::HpaFlags;

use super::CliResult;

/// `--controller` on `load`: what is measured of each.
const CONTROLLER_HELP: &str = "Whose HPA controller to measure: ours (run here), or the cluster's own (`upstream`, with --backend kubeconfig: not run here; set --sync-period to its period). Upstream's syncs and the intervals between them are read from the fake metrics server's request log (kube-controller-manager asks for each HPA's metric by its selector); for a controller that lists metrics for many HPAs at once (our hpa-controller), give --controller-metrics-url. Reconcile latency and agreement with the core cannot be seen from outside.";

/// Measure how many HPAs one controller keeps in time, and at what cost.
///
/// Creates N deployments with HPAs over a mix of metric types (CPU
/// utilization, memory, a pods custom metric, an external metric), scripts
/// their metrics in the fake metrics server, runs our controller in
/// periodic mode on the wall clock for DURATION, and prints syncs per
/// second, the interval between two syncs of an HPA, reconcile latency, API
/// requests per sync, memory, CPU and disagreements with the pure core.
/// Exits non-zero when an HPA was never synced or a decision disagrees.
/// With --controller upstream the report names what counted the syncs
/// (`syncs counted by`); where that cannot tell HPAs apart, HPAs never
/// synced are "unknown", not a failure.
///
/// Our controller takes `hpa-harness controller`'s flags, with upstream's
/// names; `--workers` and `--sync-period` are short for two of them.
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("workers", |a| a.visible_alias("workers")),
    mut_arg("sync_period", |a| a.visible_alias("sync-period")),
    // The cluster's controller's sync period is --sync-period here.
    mut_arg("upstream_sync_period", |a| a.hide(true)),
    mut_arg("controller", |a| a.help(CONTROLLER_HELP)),
)]
pub struct Args {
    /// Number of HPAs (each with its own Deployment).
    #[arg(long, default_value_t = 200)]
    pub hpas: usize,
    /// Pods per Deployment at the start.
    #[arg(long, default_value_t = 10)]
    pub pods_per_hpa: usize,
    /// How long the controller runs, after the load is built (Go duration: 60s, 2m).
    #[arg(long, default_value = "60s", value_parser = duration)]
    pub duration: Duration,
    /// Run the controller this long before measuring (Go duration): the
    /// first pass writes every status, so a warm-up of a sync period or two
    /// shows the steady state. Syncs before it still count for "never
    /// synced" and disagreements.
    #[arg(long, default_value = "0s", value_parser = duration)]
    pub warmup: Duration,
    /// Which cluster: the in-process simulated one, or a real one.
    #[arg(long, default_value = "sim", value_parser = BackendKind::parser(BackendKind::LOAD))]
    pub backend: BackendKind,
    /// With --controller upstream: the controller's Prometheus endpoint,
    /// e.g. http://127.0.0.1:10257/metrics (no credentials are sent). Where
    /// the server also serves /debug/syncs (hpa-controller), every HPA's
    /// syncs are counted from it; otherwise, when the request log shows
    /// shared metrics lists, the syncs are the reconciliations counter's
    /// (all the controller's HPAs, not per HPA: never-synced HPAs and
    /// intervals unknown).
    #[arg(long)]
    pub controller_metrics_url: Option<String>,
    /// How the metrics change over the run. Default: steady; with
    /// --agreement, spiky (the check compares decisions, so they must
    /// change).
    #[arg(long, value_enum)]
    pub metric_profile: Option<MetricProfile>,
    /// Turn off the request-saving caches (scale targets from a watch
    /// cache, one metrics list per namespace): upstream's requests.
    #[arg(long)]
    pub no_cache: bool,
    /// Run twice, with and without the request-saving caches, and report both.
    #[arg(long, conflicts_with = "no_cache")]
    pub compare: bool,
    /// The controller's client-side limit as `hpa-harness controller
    /// --kube-api-qps`: requests a second, per upstream clientset (0: none,
    /// the default here). Needs --backend sim-process or kubeconfig.
    #[arg(long = "kube-api-qps", default_value_t = 0.0)]
    pub kube_api_qps: f64,
    /// The controller's request burst per clientset (`--kube-api-burst`).
    #[arg(long = "kube-api-burst", default_value_t = 30)]
    pub kube_api_burst: u32,
    /// HPAs per namespace.
    #[arg(long, default_value_t = 100)]
    pub hpas_per_namespace: usize,
    /// The fake metrics server refuses External lists without a label
    /// selector (a 500), as KEDA's metrics adapter does: every External HPA
    /// then asks for its own series at each sync, and only they wait when
    /// the external metrics clientset's --kube-api-qps runs out.
    #[arg(long)]
    pub refuse_external_lists: bool,
    /// Run the matrix of --sweep-hpas x --sweep-workers (each run in its own
    /// process, so memory and CPU are per run) plus one run without caches.
    #[arg(long)]
    pub sweep: bool,
    /// HPA counts of the sweep.
    #[arg(long, value_delimiter = ',', default_values_t = [100, 1000, 10000])]
    pub sweep_hpas: Vec<usize>,
    /// Worker counts of the sweep.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 5, 20])]
    pub sweep_workers: Vec<usize>,
    /// Run nothing: read reports saved with --json (one run's or a
    /// sweep's; several files are joined in order) and print their table,
    /// and their CSV and plot with --csv and --plot. Exits non-zero, as a
    /// run would, when a report broke an invariant.
    #[arg(long, value_name = "JSON", num_args = 1.., conflicts_with_all = ["sweep", "compare"])]
    pub from_json: Vec<PathBuf>,
    /// Write the report(s) as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the report(s) as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Draw latency and sync interval against HPAs (or workers, when only
    /// one HPA count was run) as SVG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Memory under churn instead: CYCLES times, create the --hpas HPAs
    /// with their Deployments, wait until our controller has synced them
    /// all, delete them, wait until it has forgotten them, and sample its
    /// resident memory. Exits non-zero when memory after the last cycle
    /// exceeds the first's by more than 8 MiB plus a twentieth (see
    /// docs/load-report.md, "Memory under churn"). --duration is unused.
    #[arg(long, value_name = "CYCLES",
        conflicts_with_all = ["sweep", "compare", "from_json", "csv", "plot"])]
    pub churn: Option<usize>,
    /// With --churn: objects created, and later deleted, a second.
    #[arg(long, default_value_t = 200)]
    pub churn_rate: usize,
    /// Check the request-saving caches instead: build the load on the
    /// in-process simulated cluster on a virtual clock and sync it PERIODS
    /// sync periods, once as hpa-controller ships (caches on) and once with
    /// upstream's requests, and compare each HPA's sequence of core inputs
    /// (scale, pods, metrics) and decisions. Exits non-zero when any HPA's
    /// differ, or when nothing rescaled (decisions that never change prove
    /// nothing). Takes --hpas, --pods-per-hpa, --hpas-per-namespace,
    /// --metric-profile (spiky by default here) and the controller flags;
    /// no wall time passes.
    #[arg(long, value_name = "PERIODS",
        conflicts_with_all = ["sweep", "compare", "from_json", "csv", "plot", "churn"])]
    pub agreement: Option<usize>,
    /// Our controller's flags (shorten the sync period for short runs;
    /// with --controller upstream, give the cluster's controller's period).
    #[command(
        flatten,
        next_help_heading = "Controller flags (as `hpa-harness controller` takes them)"
    )]
    pub hpa: HpaFlags,
    /// The cluster of `--backend kubeconfig`, its fake metrics server, and
    /// whose controller is measured.
    #[command(flatten)]
    pub testbed: TestbedArgs,
}

fn duration(text: &str) -> Result<Duration, String> {
    parse_go_duration(text).map_err(|e| e.to_string())
}

impl Args {
    /// `--metric-profile`, or its default: spiky for --agreement (whose
    /// decisions must change to be compared), else steady.
    fn profile(&self) -> MetricProfile {
        self.metric_profile.unwrap_or(if self.agreement.is_some() {
            MetricProfile::Spiky
        } else {
            MetricProfile::Steady
        })
    }

    fn options(&self, optimize: bool) -> Result<LoadOptions, crate::load::LoadError> {
        // Without --kubernetes-version the gates are read under the
        // cluster's release, once the run has asked it.
        let deferred = self
            .hpa
            .kubernetes_version
            .is_none()
            .then(|| self.hpa.feature_gates.clone());
        let flags = match deferred {
            Some(_) => HpaFlags {
                feature_gates: String::new(),
                ..self.hpa.clone()
            },
            None => self.hpa.clone(),
        };
        let settings = flags
            .config()
            .map_err(|e| crate::load::LoadError::Invalid(format!("--feature-gates: {e}")))?;
        Ok(LoadOptions {
            gates_under_cluster_release: deferred,
            hpas: self.hpas,
            pods_per_hpa: self.pods_per_hpa,
            settings,
            duration: self.duration,
            warmup: self.warmup,
            backend: self.backend,
            testbed: self.testbed.options(),
            profile: self.profile(),
            optimize,
            hpas_per_namespace: self.hpas_per_namespace,
            progress: !self.quiet,
            kube_api_qps: self.kube_api_qps,
            kube_api_burst: self.kube_api_burst,
            controller_metrics_url: self.controller_metrics_url.clone(),
            refuse_external_lists: self.refuse_external_lists,
        })
    }

    /// Refuses what would fail only after a long run: options that make no
    /// measurement (at every sweep point) and reports with nowhere to go.
    fn check(&self) -> Result<(), crate::load::LoadError> {
        // With --from-json nothing runs: only the outputs below matter.
        if self.from_json.is_empty() {
            self.check_runs()?;
        }
        for (flag, path) in [
            ("--json", &self.json),
            ("--csv", &self.csv),
            ("--plot", &self.plot),
        ] {
            let Some(path) = path else { continue };
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => std::path::Path::new("."),
            };
            if !parent.is_dir() {
                return Err(crate::load::LoadError::Invalid(format!(
                    "{flag} {}: the folder {} does not exist",
                    path.display(),
                    parent.display()
                )));
            }
        }
        Ok(())
    }

    /// The options of the run, or of every point of the sweep.
    fn check_runs(&self) -> Result<(), crate::load::LoadError> {
        if self.sweep {
            if self.sweep_hpas.is_empty() || self.sweep_workers.is_empty() {
                return Err(crate::load::LoadError::Invalid(
                    "--sweep needs at least one of --sweep-hpas and of --sweep-workers".into(),
                ));
            }
            let base = self.options(true)?;
            for &hpas in &self.sweep_hpas {
                for &workers in &self.sweep_workers {
                    let mut point = LoadOptions {
                        hpas,
                        ..base.clone()
                    };
                    point.settings.workers = workers;
                    point.validate().map_err(|e| match e {
                        crate::load::LoadError::Invalid(m) => crate::load::LoadError::Invalid(
                            format!("{m} (the sweep's point --hpas {hpas} --workers {workers})"),
                        ),
                        other => other,
                    })?;
                }
            }
        } else {
            self.options(!self.no_cache)?.validate()?;
        }
        Ok(())
    }
}

/// Runs `hpa-harness load`.
pub async fn run(args: Args) -> CliResult {
    args.check()?;
    if let Some(cycles) = args.churn {
        return churn(&args, cycles).await;
    }
    if let Some(periods) = args.agreement {
        let report = crate::load::agreement::check(&args.options(true)?, periods).await?;
        println!("{report}");
        if report.compared_no_rescale() {
            eprintln!(
                "error: no HPA rescaled in {periods} sync periods of the {} metric profile: the check compared decisions that never changed; give --metric-profile spiky or ramp, or more periods",
                report.profile.as_str()
            );
            return Ok(ExitCode::FAILURE);
        }
        return Ok(if report.agrees() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let reports = if !args.from_json.is_empty() {
        let mut reports = Vec::new();
        for path in &args.from_json {
            reports.extend(report::read_json(path)?);
        }
        if reports.is_empty() {
            return Err(crate::load::LoadError::Invalid(
                "--from-json: the files hold no report".into(),
            )
            .into());
        }
        reports
    } else if args.sweep {
        sweep(&args).await?
    } else if args.compare {
        vec![
            crate::load::run(&args.options(true)?).await?,
            crate::load::run(&args.options(false)?).await?,
        ]
    } else {
        vec![crate::load::run(&args.options(!args.no_cache)?).await?]
    };
    print!("{}", report::to_table(&reports));
    if let Some(path) = &args.json {
        report::write_json(path, &reports)?;
    }
    if let Some(path) = &args.csv {
        report::write_csv(path, &reports)?;
    }
    if let Some(path) = &args.plot {
        let plotted: Vec<LoadReport> = reports.iter().filter(|r| r.optimized).cloned().collect();
        let plotted = if plotted.is_empty() {
            reports.clone()
        } else {
            plotted
        };
        let hpa_counts: std::collections::BTreeSet<u64> = plotted.iter().map(|r| r.hpas).collect();
        let axis = if hpa_counts.len() > 1 {
            PlotAxis::Hpas
        } else {
            PlotAxis::Workers
        };
        write_plot(path, &plotted, axis)?;
    }
    let mut ok = true;
    for r in &reports {
        for broken in r.invariant_violations() {
            ok = false;
            eprintln!("FAILED ({} HPAs, {} workers): {broken}", r.hpas, r.workers);
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `hpa-harness load --churn CYCLES`.
async fn churn(args: &Args, cycles: usize) -> CliResult {
    let churn = crate::load::churn::ChurnOptions {
        cycles,
        rate: args.churn_rate,
    };
    let report = crate::load::churn::run(&args.options(!args.no_cache)?, churn).await?;
    print!("{}", report.to_table());
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| crate::load::LoadError::Invalid(format!("the report as JSON: {e}")))?;
        std::fs::write(path, text).map_err(|e| {
            crate::load::LoadError::Invalid(format!("cannot write {}: {e}", path.display()))
        })?;
    }
    Ok(if report.flat() {
        ExitCode::SUCCESS
    } else {
        eprintln!("FAILED: memory grows under churn");
        ExitCode::FAILURE
    })
}

/// Errors of a sweep's child runs.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The child process could not be started or read.
    #[error("sweep run with {hpas} HPAs and {workers} workers: {message}")]
    Run {
        /// HPAs of the run.
        hpas: usize,
        /// Workers of the run.
        workers: usize,
        /// What went wrong.
        message: String,
    },
}

/// Runs each point of the sweep as `hpa-harness load` in a child process
/// (peak memory and CPU time are per process), then one run without the
/// caches at the middle size for the request comparison.
async fn sweep(args: &Args) -> Result<Vec<LoadReport>, SweepError> {
    let exe = std::env::current_exe().map_err(|e| SweepError::Run {
        hpas: 0,
        workers: 0,
        message: format!("cannot find this program: {e}"),
    })?;
    let dir = std::env::temp_dir().join(format!("hpa-load-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| SweepError::Run {
        hpas: 0,
        workers: 0,
        message: format!("cannot create {}: {e}", dir.display()),
    })?;
    let mut points: Vec<(usize, usize, bool)> = Vec::new();
    for &hpas in &args.sweep_hpas {
        for &workers in &args.sweep_workers {
            points.push((hpas, workers, true));
        }
    }
    let middle = args.sweep_hpas.get(args.sweep_hpas.len() / 2).copied();
    let middle_workers = args
        .sweep_workers
        .get(args.sweep_workers.len() / 2)
        .copied();
    if let (Some(h), Some(w)) = (middle, middle_workers) {
        points.push((h, w, false));
    }
    let mut reports = Vec::new();
    for (i, (hpas, workers, optimize)) in points.into_iter().enumerate() {
        let fail = |message: String| SweepError::Run {
            hpas,
            workers,
            message,
        };
        let json = dir.join(format!("run-{i}.json"));
        eprintln!(
            "sweep {}: {hpas} HPAs, {workers} workers{}",
            i + 1,
            if optimize { "" } else { ", no caches" }
        );
        let mut cmd = tokio::process::Command::new(&exe);
        // Our controller's flags as given, then the point's workers.
        cmd.arg("load").args(hpa_flag_args(&args.hpa));
        cmd.args(["--hpas", &hpas.to_string()])
            .args([
                "--concurrent-horizontal-pod-autoscaler-syncs",
                &workers.to_string(),
            ])
            .args(["--pods-per-hpa", &args.pods_per_hpa.to_string()])
            .args(["--duration", &format!("{}ms", args.duration.as_millis())])
            .args(["--warmup", &format!("{}ms", args.warmup.as_millis())])
            .args(["--hpas-per-namespace", &args.hpas_per_namespace.to_string()])
            .args(["--metric-profile", profile_name(args.profile())])
            .args(["--backend", args.backend.name()])
            .args(["--kube-api-qps", &args.kube_api_qps.to_string()])
            .args(["--kube-api-burst", &args.kube_api_burst.to_string()])
            .arg("--json")
            .arg(&json);
        if !optimize {
            cmd.arg("--no-cache");
        }
        if args.refuse_external_lists {
            cmd.arg("--refuse-external-lists");
        }
        if let Some(url) = &args.testbed.metrics_url {
            cmd.args(["--metrics-url", url]);
        }
        if let Some(context) = &args.testbed.context {
            cmd.args(["--context", context]);
        }
        if args.testbed.skip_preflight {
            cmd.arg("--skip-preflight");
        }
        cmd.args(["--metrics-service", &args.testbed.metrics_service]);
        if args.testbed.controller == ControllerKind::Upstream {
            cmd.args(["--controller", "upstream"]);
        }
        if let Some(url) = &args.controller_metrics_url {
            cmd.args(["--controller-metrics-url", url]);
        }
        if let Some(path) = &args.testbed.kubeconfig {
            cmd.arg("--kubeconfig").arg(path);
        }
        if args.quiet {
            cmd.arg("--quiet");
        }
        let status = cmd
            .status()
            .await
            .map_err(|e| fail(format!("cannot start: {e}")))?;
        let text = std::fs::read_to_string(&json)
            .map_err(|e| fail(format!("no report ({status}): {e}")))?;
        let report: LoadReport =
            serde_json::from_str(&text).map_err(|e| fail(format!("unreadable report: {e}")))?;
        reports.push(report);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(reports)
}

/// `flags` as a command line (all but the workers, which a sweep's point
/// sets): the sweep's child runs take the controller's flags as given.
fn hpa_flag_args(flags: &HpaFlags) -> Vec<String> {
    let go = |d: Duration| format!("{}ms", d.as_millis());
    let mut args = vec![
        format!(
            "--horizontal-pod-autoscaler-sync-period={}",
            go(flags.sync_period)
        ),
        format!("--horizontal-pod-autoscaler-tolerance={}", flags.tolerance),
        format!(
            "--horizontal-pod-autoscaler-downscale-stabilization={}",
            go(flags.downscale_stabilization)
        ),
        format!(
            "--horizontal-pod-autoscaler-cpu-initialization-period={}",
            go(flags.cpu_initialization_period)
        ),
        format!(
            "--horizontal-pod-autoscaler-initial-readiness-delay={}",
            go(flags.initial_readiness_delay)
        ),
        format!("--feature-gates={}", flags.feature_gates),
    ];
    if let Some(version) = flags.kubernetes_version {
        args.push(format!("--kubernetes-version={version}"));
    }
    args
}

fn profile_name(p: MetricProfile) -> &'static str {
    match p {
        MetricProfile::Steady => "steady",
        MetricProfile::Ramp => "ramp",
        MetricProfile::Spiky => "spiky",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_issue_s_command_line_parses() {
        let cli = crate::cli::Cli::try_parse_from([
            "hpa-harness",
            "load",
            "--hpas",
            "200",
            "--pods-per-hpa",
            "10",
            "--workers",
            "5",
            "--duration",
            "20s",
            "--backend",
            "sim",
            "--metric-profile",
            "spiky",
            "--json",
            "r.json",
        ])
        .unwrap();
        let crate::cli::Command::Load(args) = cli.command else {
            panic!("not the load command");
        };
        assert_eq!(args.duration, Duration::from_secs(20));
        assert_eq!(args.hpa.sync_period, Duration::from_secs(15));
        assert_eq!(args.metric_profile, Some(MetricProfile::Spiky));
        assert_eq!(args.profile(), MetricProfile::Spiky);
        assert_eq!(args.sweep_hpas, vec![100, 1000, 10000]);
        assert!(args.options(!args.no_cache).unwrap().optimize);
        assert!(args.check().is_ok());
    }

    #[test]
    fn the_controller_s_flags_are_load_s_and_the_old_names_still_work() {
        let args = load_args(&[
            "--sync-period",
            "2s",
            "--workers",
            "3",
            "--horizontal-pod-autoscaler-tolerance",
            "0.05",
            "--kubernetes-version",
            "1.36",
        ]);
        let options = args.options(true).unwrap();
        assert_eq!(options.settings.sync_period, Duration::from_secs(2));
        assert_eq!(options.settings.workers, 3);
        assert_eq!(options.settings.decision.tolerance, 0.05);
        assert_eq!(
            options.settings.decision.feature_gates.version(),
            hpa_core::KubernetesVersion::V1_36
        );
        let upstream = load_args(&[
            "--horizontal-pod-autoscaler-sync-period",
            "2s",
            "--concurrent-horizontal-pod-autoscaler-syncs",
            "3",
        ]);
        assert_eq!(upstream.hpa.sync_period, Duration::from_secs(2));
        assert_eq!(upstream.hpa.workers, 3);
        // A sweep's child runs get the flags as given.
        let child = hpa_flag_args(&args.hpa);
        assert!(child.contains(&"--horizontal-pod-autoscaler-tolerance=0.05".to_owned()));
        assert!(child.contains(&"--kubernetes-version=1.36".to_owned()));
        let reparsed = load_args(&child.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(reparsed.hpa.sync_period, Duration::from_secs(2));
        assert_eq!(reparsed.hpa.tolerance, 0.05);
    }

    fn load_args(extra: &[&str]) -> Args {
        let cli =
            crate::cli::Cli::try_parse_from(["hpa-harness", "load"].iter().chain(extra)).unwrap();
        let crate::cli::Command::Load(args) = cli.command else {
            panic!("not the load command");
        };
        args
    }

    /// `--agreement` compares decisions: by default under a profile whose
    /// decisions change (spiky), not the steady one of a load run.
    #[test]
    fn agreement_defaults_to_a_profile_that_rescales() {
        assert_eq!(
            load_args(&["--agreement", "20"]).profile(),
            MetricProfile::Spiky
        );
        assert_eq!(load_args(&[]).profile(), MetricProfile::Steady);
        assert_eq!(
            load_args(&["--agreement", "20", "--metric-profile", "ramp"]).profile(),
            MetricProfile::Ramp
        );
    }

    #[test]
    fn what_would_fail_after_the_run_is_refused_before_it() {
        // Refused when parsed (the controller's flags check their values)
        // or by the check.
        let refused = |extra: &[&str], named: &str| {
            let message = match crate::cli::Cli::try_parse_from(
                ["hpa-harness", "load"].iter().chain(extra),
            ) {
                Err(e) => e.to_string(),
                Ok(_) => load_args(extra).check().unwrap_err().to_string(),
            };
            assert!(message.contains(named), "{extra:?}: {message}");
        };
        refused(
            &["--duration", "10s"],
            "must be longer than --sync-period (15s)",
        );
        refused(
            &["--workers", "0"],
            "--concurrent-horizontal-pod-autoscaler-syncs",
        );
        refused(
            &["--sweep", "--sweep-hpas", "100,0"],
            "(the sweep's point --hpas 0 --workers 1)",
        );
        refused(&["--sweep", "--sweep-workers", "0"], "--workers");
        refused(
            &["--sweep", "--kube-api-qps", "20"],
            "--backend sim-process",
        );
        refused(
            &["--json", "/nonexistent-hpa-harness/r.json"],
            "--json /nonexistent-hpa-harness/r.json: the folder /nonexistent-hpa-harness does not exist",
        );
        refused(&["--plot", "/nonexistent-hpa-harness/p.svg"], "--plot");
        assert!(
            load_args(&["--sweep", "--sweep-hpas", "100"])
                .check()
                .is_ok()
        );
        assert!(load_args(&["--csv", "r.csv"]).check().is_ok());
        // Re-rendering runs nothing, so the run's options do not matter.
        assert!(
            load_args(&["--from-json", "a.json", "--duration", "1s"])
                .check()
                .is_ok()
        );
        assert!(
            crate::cli::Cli::try_parse_from([
                "hpa-harness",
                "load",
                "--from-json",
                "a.json",
                "--sweep"
            ])
            .is_err()
        );
    }
}
