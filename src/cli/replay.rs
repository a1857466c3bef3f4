//! `hpa-harness replay`: runs our controller over a recorded metric series
//! on the simulated cluster and says what the HPA would have done.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use jiff::SignedDuration;

use super::CliResult;
use crate::controller::config::ControllerConfig;
use crate::plot::{Layout, Timeline};
use crate::replay::series::SeriesArg;
use crate::replay::{ReplayOptions, Spread, Summary, manifest, series};

/// Options of `hpa-harness replay`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:
  hpa-harness replay features/replay/hpa.yaml --series features/replay/traffic.csv --plot out.svg")]
pub struct Args {
    /// The HPA manifest: a YAML file, possibly of many documents (`helm
    /// template` output); autoscaling/v2 or v1.
    #[arg(value_name = "HPA.yaml")]
    pub hpa: PathBuf,
    /// The metric series: a CSV (a `timestamp` column, then one column per
    /// metric, named as the HPA's metric: `cpu`, `memory`, or the custom or
    /// external metric's name) or a Prometheus `query_range` answer (JSON;
    /// `NAME=FILE` names its column, else its `__name__`; its series are
    /// summed). Repeat for several files.
    #[arg(long, required = true, value_name = "[NAME=]FILE")]
    pub series: Vec<SeriesArg>,
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
    /// Feature gates (`HPAScaleToZero=true,HPAConfigurableTolerance=false`).
    #[arg(long, value_name = "GATES")]
    pub feature_gates: Option<String>,
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
}

/// Writes to stdout; a reader that went away (`| head`) is no error.
fn print_out(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The controller configuration of the flags.
pub fn config(args: &Args) -> Result<ControllerConfig, ReplayArgError> {
    let mut config = ControllerConfig::default();
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
    let timeline = Timeline::from_decisions(
        format!("HPA {} ({label})", run.hpa),
        run.start,
        &run.decisions,
        Some(&run.ready),
        options.config.tolerance,
    );
    let summary = Summary::of(&label, &run, &timeline, options.spread);
    Ok(Replayed { summary, timeline })
}

/// Runs `hpa-harness replay`.
pub async fn run(args: Args) -> CliResult {
    let config = config(&args)?;
    let series = series::load(&args.series)?;
    let options = ReplayOptions {
        config,
        spread: args.pod_values,
        pod_delays: hpa_sim::PodDelays {
            running: SignedDuration::ZERO,
            ready: args
                .pods_ready_after
                .and_then(|d| SignedDuration::try_from(d).ok())
                .unwrap_or(SignedDuration::ZERO),
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
    let text = match args.output {
        Output::Text => runs
            .iter()
            .map(|r| r.summary.text())
            .collect::<Vec<_>>()
            .join("\n"),
        Output::Json => {
            let summaries: Vec<&Summary> = runs.iter().map(|r| &r.summary).collect();
            let json = serde_json::to_string_pretty(&serde_json::json!({ "runs": summaries }))
                .map_err(ReplayArgError::Json)?;
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
