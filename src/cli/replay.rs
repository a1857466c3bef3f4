//! `hpa-harness replay`: runs our controller over a recorded metric series
//! on the simulated cluster and says what the HPA would have done.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use jiff::SignedDuration;

use super::CliResult;
use crate::plot::timeline::{Note, NoteKind};
use crate::plot::{Layout, Timeline};
use crate::replay::prometheus::{Auth, PrometheusError, Query, Range, Server};
use crate::replay::series::SeriesArg;
use crate::replay::{ReplayOptions, Spread, Summary, manifest, series};
use hpa_controller::config::ControllerConfig;

/// Options of `hpa-harness replay`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:
  hpa-harness replay features/replay/hpa.yaml --series features/replay/traffic.csv --plot out.svg
  hpa-harness replay hpa.yaml --prometheus http://prometheus:9090 \\
    --query 'sum(rate(http_requests_total{app=\"web\"}[2m]))' --since 24h --step 15s")]
pub struct Args {
    /// The HPA manifest: a YAML file, possibly of many documents (`helm
    /// template` output); autoscaling/v2 or v1. Or a KEDA ScaledObject:
    /// the HPA KEDA generates is replayed, with KEDA's operator (its
    /// 0 <-> 1 steps) and metrics adapter (fallback) around it.
    #[arg(value_name = "HPA.yaml")]
    pub hpa: PathBuf,
    /// The metric series: a CSV (a `timestamp` column, then one column per
    /// metric, named as the HPA's metric: `cpu`, `memory`, or the custom or
    /// external metric's name) or a Prometheus `query_range` answer (JSON;
    /// `NAME=FILE` names its column, else its `__name__`; its series are
    /// summed). Repeat for several files. For a ScaledObject, one column
    /// per trigger (its name, metric name or type); an empty or `fail`
    /// cell is a failed read of that trigger.
    #[arg(
        long,
        required_unless_present = "prometheus",
        value_name = "[NAME=]FILE"
    )]
    pub series: Vec<SeriesArg>,
    /// Read the series from this Prometheus server's HTTP API
    /// (`query_range`), besides or instead of files: `http://prometheus:9090`.
    #[arg(long, value_name = "URL", requires = "queries")]
    pub prometheus: Option<String>,
    /// A PromQL query for --prometheus, one metric of the HPA each (repeat
    /// for several). Its series are summed at each step, so a per-pod query
    /// (a `pod` label) gives the workload's total; with `--pod-values
    /// per-pod` they are averaged, each pod's value.
    #[arg(long = "query", value_name = "PROMQL", requires = "prometheus")]
    pub queries: Vec<String>,
    /// The metric each --query feeds, in order (`cpu`, `memory`, or the
    /// custom or external metric's name). Not needed for one query and an
    /// HPA of one metric.
    #[arg(long = "query-name", value_name = "NAME")]
    pub query_names: Vec<String>,
    /// How far back --prometheus reads.
    #[arg(long, default_value = "24h", value_parser = crate::cli::controller::duration)]
    pub since: std::time::Duration,
    /// The query resolution of --prometheus.
    #[arg(long, default_value = "15s", value_parser = crate::cli::controller::duration)]
    pub step: std::time::Duration,
    /// The end of the range --prometheus reads (RFC 3339; default: now).
    #[arg(long, value_name = "TIME")]
    pub until: Option<jiff::Timestamp>,
    /// A file holding the bearer token for --prometheus (also
    /// `$PROMETHEUS_BEARER_TOKEN`).
    #[arg(long, value_name = "FILE", conflicts_with = "basic_auth_user")]
    pub bearer_token_file: Option<PathBuf>,
    /// The user of HTTP basic authentication to --prometheus; the password
    /// from --basic-auth-password-file or `$PROMETHEUS_PASSWORD`.
    #[arg(long, value_name = "USER")]
    pub basic_auth_user: Option<String>,
    /// A file holding the basic authentication password.
    #[arg(long, value_name = "FILE", requires = "basic_auth_user")]
    pub basic_auth_password_file: Option<PathBuf>,
    /// PEM certificates that sign --prometheus's TLS certificate (trusted
    /// instead of the system's).
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// Accept any TLS certificate from --prometheus.
    #[arg(long)]
    pub insecure_skip_verify: bool,
    /// Which HPA of the manifest file, when it holds several.
    #[arg(long, value_name = "NAME")]
    pub hpa_name: Option<String>,
    /// The scale target's manifest (replicas, containers and their
    /// requests). Default: the HPA's file if it holds it, else a workload
    /// of minReplicas pods with one container requesting cpu 1, memory 1Gi.
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    /// How a pod metric's value (cpu, memory, Pods metrics) reaches the
    /// pods: `total` spreads it evenly over the ready pods, `per-pod` gives
    /// it to each ready pod as it is. Object and External metrics are
    /// served as given.
    #[arg(long, value_enum, default_value_t = Spread::Total)]
    pub pod_values: Spread,
    /// A controller flag, as in scenarios' "the HPA controller runs with:"
    /// (`horizontal-pod-autoscaler-downscale-stabilization=1m`). Repeat.
    #[arg(long = "flag", value_name = "NAME=VALUE")]
    pub flags: Vec<String>,
    /// Feature gates over the release's defaults
    /// (`HPAScaleToZero=false,PodLevelResources=false`).
    #[arg(long, value_name = "GATES")]
    pub feature_gates: Option<String>,
    /// The Kubernetes release whose HPA semantics the replay follows: 1.35,
    /// 1.36, 1.37 (the default) or 1.38 (alpha).
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<hpa_core::KubernetesVersion>,
    /// "What changes when I upgrade?": also replay the same HPA, workload,
    /// series and flags under this release, print both summaries and the
    /// syncs where they differ, and draw both timelines on the same scales.
    #[arg(long, value_name = "X.Y", conflicts_with = "compare")]
    pub compare_version: Option<hpa_core::KubernetesVersion>,
    /// How long new pods take to become Ready (Go duration; default: at once).
    #[arg(long, value_name = "DURATION", value_parser = crate::cli::controller::duration)]
    pub pods_ready_after: Option<std::time::Duration>,
    /// Also replay this HPA manifest on the same series, workload and flags,
    /// and show both (the plot side by side).
    #[arg(long, value_name = "OTHER.yaml")]
    pub compare: Option<PathBuf>,
    /// Draw the timeline to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// `text` for people, `json` for machines.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// The format of the result on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Text,
    Json,
}

/// Why the command line cannot be used as given.
#[derive(Debug, thiserror::Error)]
pub enum ReplayArgError {
    /// A `--flag` is not `NAME=VALUE` or is refused.
    #[error("--flag {arg:?}: {reason}")]
    Flag { arg: String, reason: String },
    /// The JSON result cannot be written.
    #[error("writing the JSON result")]
    Json(#[from] serde_json::Error),
    /// --query-name does not name each --query.
    #[error("{queries} --query but {names} --query-name: give one name per query, in order")]
    QueryCount { queries: usize, names: usize },
}

/// Writes to stdout; a reader that went away (`| head`) is no error.
pub(crate) fn print_out(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The controller configuration of the flags.
pub fn config(args: &Args) -> Result<ControllerConfig, ReplayArgError> {
    config_for(args, args.kubernetes_version.unwrap_or_default())
}

/// The controller configuration of the flags under `version`.
pub fn config_for(
    args: &Args,
    version: hpa_core::KubernetesVersion,
) -> Result<ControllerConfig, ReplayArgError> {
    let mut config = ControllerConfig::default();
    config
        .set_flag("kubernetes-version", version.as_str())
        .map_err(|e| ReplayArgError::Flag {
            arg: format!("kubernetes-version={version}"),
            reason: e.to_string(),
        })?;
    for arg in &args.flags {
        let (name, value) = arg.split_once('=').ok_or_else(|| ReplayArgError::Flag {
            arg: arg.clone(),
            reason: "expected NAME=VALUE".to_owned(),
        })?;
        config
            .set_flag(name, value)
            .map_err(|e| ReplayArgError::Flag {
                arg: arg.clone(),
                reason: e.to_string(),
            })?;
    }
    if let Some(gates) = &args.feature_gates {
        config
            .set_flag("feature-gates", gates)
            .map_err(|e| ReplayArgError::Flag {
                arg: format!("feature-gates={gates}"),
                reason: e.to_string(),
            })?;
    }
    Ok(config)
}

/// The syncs where two replays of the same series decided differently, as
/// lines for people (`at 2m15s: 1.36 kept 4, 1.37 scaled 4 -> 6`).
pub fn differing_syncs(a: &Replayed, b: &Replayed, a_name: &str, b_name: &str) -> Vec<String> {
    let describe = |s: &crate::plot::Sample| {
        let show = |v: Option<i32>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
        if s.rescale {
            format!("scaled {} -> {}", show(s.current), show(s.desired))
        } else if s.reason.is_empty() || s.desired == s.current {
            format!("kept {}", show(s.current))
        } else {
            format!("kept {} ({})", show(s.current), s.reason)
        }
    };
    let mut lines = Vec::new();
    for (x, y) in a.timeline.samples.iter().zip(&b.timeline.samples) {
        if x.current != y.current || x.after() != y.after() || x.rescale != y.rescale {
            lines.push(format!(
                "at {}: {a_name} {}, {b_name} {}",
                crate::plot::svg::duration_label(x.t),
                describe(x),
                describe(y)
            ));
        }
    }
    let (n, m) = (a.timeline.samples.len(), b.timeline.samples.len());
    if n != m {
        lines.push(format!("{a_name} synced {n} times, {b_name} {m} times"));
    }
    lines
}

/// One replayed configuration: its summary and its timeline.
pub struct Replayed {
    pub summary: Summary,
    pub timeline: Timeline,
}

/// Replays the HPA of `file` (the one named `name`) with `args`' series,
/// workload and options.
pub async fn replay_file(
    file: &Path,
    name: Option<&str>,
    args: &Args,
    series: &series::Series,
    options: &ReplayOptions,
) -> Result<Replayed, Box<dyn std::error::Error + Send + Sync>> {
    let hpa = manifest::hpa(file, name)?;
    let workload = manifest::workload(&hpa, args.workload.as_deref())?;
    let run = crate::replay::replay(&hpa, &workload, series, options).await?;
    let label = file.display().to_string();
    let title = match &run.keda {
        Some(k) => format!(
            "ScaledObject {} (HPA {}, {label})",
            k.scaled_object, run.hpa
        ),
        None => format!("HPA {} ({label})", run.hpa),
    };
    let mut timeline = Timeline::from_decisions(title, run.start, &run.decisions, Some(&run.ready));
    let summary = Summary::of(&label, &run, &timeline, options.spread);
    if let Some(k) = &summary.keda {
        timeline.notes = keda_notes(k);
    }
    Ok(Replayed { summary, timeline })
}

/// KEDA's operator steps and fallback as marks on the timeline.
fn keda_notes(k: &crate::replay::summary::KedaSummary) -> Vec<Note> {
    let steps = k.run.steps.iter().map(|s| Note {
        from: s.at_seconds,
        to: s.at_seconds,
        replicas: Some(s.to),
        kind: NoteKind::OperatorStep,
        label: format!("{} -> {} ({})", s.from, s.to, s.reason),
    });
    let spans = k.fallback_spans.iter().map(|(a, b)| Note {
        from: *a,
        to: *b,
        replicas: None,
        kind: NoteKind::Fallback,
        label: "fallback".to_owned(),
    });
    steps.chain(spans).collect()
}

/// A secret from a file (trailing newline dropped) or the environment.
fn secret(
    file: Option<&Path>,
    what: &'static str,
    env: &str,
) -> Result<Option<String>, PrometheusError> {
    match file {
        Some(path) => std::fs::read_to_string(path)
            .map(|t| Some(t.trim_end_matches(['\n', '\r']).to_owned()))
            .map_err(|e| PrometheusError::File {
                what,
                path: path.to_path_buf(),
                detail: e.to_string(),
            }),
        None => Ok(std::env::var(env).ok().filter(|v| !v.is_empty())),
    }
}

/// The series `args` name: the files, and the answers of --prometheus.
pub async fn load_series(
    args: &Args,
) -> Result<series::Series, Box<dyn std::error::Error + Send + Sync>> {
    let combine = match args.pod_values {
        Spread::PerPod => series::Combine::MeanPerPod,
        Spread::Total => series::Combine::Sum,
    };
    let Some(url) = &args.prometheus else {
        return Ok(series::load_with(&args.series, &[], combine)?);
    };
    // One query for an HPA of one metric needs no name: the replay feeds
    // the one column to the one metric.
    let names: Vec<Option<String>> = if args.query_names.is_empty() && args.queries.len() == 1 {
        vec![None]
    } else if args.query_names.len() == args.queries.len() {
        args.query_names.iter().cloned().map(Some).collect()
    } else {
        return Err(ReplayArgError::QueryCount {
            queries: args.queries.len(),
            names: args.query_names.len(),
        }
        .into());
    };
    let auth = if let Some(user) = &args.basic_auth_user {
        let password = secret(
            args.basic_auth_password_file.as_deref(),
            "--basic-auth-password-file",
            "PROMETHEUS_PASSWORD",
        )?
        .unwrap_or_default();
        Auth::Basic {
            user: user.clone(),
            password,
        }
    } else {
        match secret(
            args.bearer_token_file.as_deref(),
            "--bearer-token-file",
            "PROMETHEUS_BEARER_TOKEN",
        )? {
            Some(token) => Auth::Bearer(token),
            None => Auth::None,
        }
    };
    let server = Server {
        url: url.clone(),
        auth,
        ca_file: args.ca_file.clone(),
        insecure_skip_verify: args.insecure_skip_verify,
    };
    let queries: Vec<Query> = args
        .queries
        .iter()
        .zip(names)
        .map(|(q, name)| Query {
            promql: q.clone(),
            name,
        })
        .collect();
    let range = Range {
        end: args.until.unwrap_or_else(jiff::Timestamp::now),
        since: args.since,
        step: args.step,
    };
    let answers = server.query_range(&queries, range).await?;
    Ok(series::load_with(&args.series, &answers, combine)?)
}

/// Runs `hpa-harness replay`.
pub async fn run(args: Args) -> CliResult {
    let config = config(&args)?;
    let series = load_series(&args).await?;
    let options = ReplayOptions {
        config,
        spread: args.pod_values,
        pod_delays: hpa_sim::PodDelays {
            running: SignedDuration::ZERO,
            ready: args
                .pods_ready_after
                .and_then(|d| SignedDuration::try_from(d).ok())
                .unwrap_or(SignedDuration::ZERO),
            max_running: None,
        },
    };
    let mut runs = vec![
        replay_file(
            &args.hpa,
            args.hpa_name.as_deref(),
            &args,
            &series,
            &options,
        )
        .await?,
    ];
    if let Some(other) = &args.compare {
        runs.push(replay_file(other, args.hpa_name.as_deref(), &args, &series, &options).await?);
    }
    let base_version = options.config.decision.feature_gates.version();
    let mut differences = None;
    if let Some(other) = args.compare_version {
        let other_options = ReplayOptions {
            config: config_for(&args, other)?,
            ..options.clone()
        };
        let mut base = runs.remove(0);
        let mut then = replay_file(
            &args.hpa,
            args.hpa_name.as_deref(),
            &args,
            &series,
            &other_options,
        )
        .await?;
        for (run, version) in [(&mut base, base_version), (&mut then, other)] {
            run.summary.label = format!("{}, Kubernetes {version}", run.summary.label);
            run.timeline.title = format!("{} under Kubernetes {version}", run.timeline.title);
        }
        differences = Some(differing_syncs(
            &base,
            &then,
            base_version.as_str(),
            other.as_str(),
        ));
        runs = vec![base, then];
    }
    let text = match args.output {
        Output::Text => {
            let mut text = runs
                .iter()
                .map(|r| r.summary.text())
                .collect::<Vec<_>>()
                .join("\n");
            if let (Some(lines), Some(other)) = (&differences, args.compare_version) {
                if lines.is_empty() {
                    text.push_str(&format!(
                        "\nKubernetes {base_version} and {other} decide the same at every sync\n"
                    ));
                } else {
                    text.push_str(&format!(
                        "\nsyncs where Kubernetes {base_version} and {other} differ ({}):\n",
                        lines.len()
                    ));
                    for line in lines {
                        text.push_str(&format!("  {line}\n"));
                    }
                }
            }
            text
        }
        Output::Json => {
            let summaries: Vec<&Summary> = runs.iter().map(|r| &r.summary).collect();
            let mut body = serde_json::json!({ "runs": summaries });
            if let Some(lines) = &differences {
                body["differences"] = serde_json::json!(lines);
            }
            let json = serde_json::to_string_pretty(&body).map_err(ReplayArgError::Json)?;
            format!("{json}\n")
        }
    };
    print_out(&text)?;
    if let Some(path) = &args.plot {
        let timelines: Vec<Timeline> = runs.iter().map(|r| r.timeline.clone()).collect();
        let layout = if timelines.len() > 1 {
            Layout::SideBySide
        } else {
            Layout::Stacked
        };
        crate::plot::write(path, &timelines, layout)?;
        if args.output == Output::Text {
            print_out(&format!("timeline drawn to {}\n", path.display()))?;
        }
    }
    // Sync errors are part of the answer (the summary counts them), not a
    // failure of the replay.
    Ok(ExitCode::SUCCESS)
}
