//! `hpa-harness capture`: a live HPA as a scenario. What `explain
//! NAMESPACE/NAME` reads, written with the stable step language so that
//! `hpa-harness test FILE.feature` reproduces the decision on the
//! simulated cluster; with `--series`, also the metrics sampled over time
//! as a replay series and the manifests to replay it on.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use jiff::SignedDuration;

use super::CliResult;
use super::explain::{LiveArgs, reader_options};
use crate::live::capture::{replay_manifests, scenario, series_header, series_row};
use crate::live::read::parse_name;
use crate::live::{LiveError, Reader};

/// Options of `hpa-harness capture`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:
  hpa-harness capture --kubeconfig ~/.kube/config shop/web -o web.feature
  hpa-harness test web.feature")]
pub struct Args {
    /// The HPA: `NAMESPACE/NAME`, or `NAME` in the context's namespace.
    #[arg(value_name = "NAMESPACE/NAME")]
    pub target: String,
    /// The feature file to write.
    #[arg(short = 'o', long, value_name = "FILE.feature")]
    pub output: PathBuf,
    /// The kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current one).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Decide as this release instead of the cluster's own (`/version`).
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<hpa_core::KubernetesVersion>,
    /// A flag of the cluster's controller, when not upstream's default; the
    /// scenario runs its controller with it too. Repeat.
    #[arg(long = "flag", value_name = "NAME=VALUE")]
    pub flags: Vec<String>,
    /// Also sample the metrics every --interval for --duration into a
    /// replay series (`FILE.series.csv`, its manifests in
    /// `FILE.replay.yaml`).
    #[arg(long)]
    pub series: bool,
    /// How often --series samples.
    #[arg(long, default_value = "15s", value_parser = crate::cli::controller::duration)]
    pub interval: Duration,
    /// How long --series samples.
    #[arg(long, default_value = "5m", value_parser = crate::cli::controller::duration)]
    pub duration: Duration,
}

fn write(path: &Path, text: &str) -> Result<(), LiveError> {
    std::fs::write(path, text).map_err(|e| LiveError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    })
}

/// `web.feature` -> `web.series.csv`.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".to_owned());
    path.with_file_name(format!("{stem}{suffix}"))
}

/// Runs `hpa-harness capture`; a failure is one line on stderr.
pub async fn run(args: Args) -> CliResult {
    Ok(match capture(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    })
}

async fn capture(args: &Args) -> Result<(), LiveError> {
    let live = LiveArgs {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        flags: args.flags.clone(),
        ..LiveArgs::default()
    };
    let reader = Reader::connect(&reader_options(&live, args.kubernetes_version)).await?;
    let (namespace, name) = parse_name(&args.target, &reader.default_namespace)?;
    let snapshot = reader.read(&namespace, &name).await?;
    let explanation = crate::live::explain::explain(&snapshot, &reader.config, &reader.release);
    let feature = scenario(&snapshot, &explanation, &reader.flags)?;
    write(&args.output, &feature)?;
    println!(
        "wrote {} (HPA {}: {} replicas now, the scenario expects {})",
        args.output.display(),
        snapshot.key,
        explanation.current_replicas,
        explanation.desired_replicas
    );
    if !args.series {
        return Ok(());
    }
    let header = series_header(&snapshot.hpa);
    let mut csv = format!("{}\n", header.join(","));
    csv.push_str(&format!(
        "{}\n",
        series_row(&snapshot, &header, SignedDuration::ZERO).join(",")
    ));
    let samples = u64::try_from(args.duration.as_nanos() / args.interval.as_nanos().max(1))
        .unwrap_or(u64::MAX);
    let start = tokio::time::Instant::now();
    for i in 1..=samples {
        let at = args
            .interval
            .saturating_mul(u32::try_from(i).unwrap_or(u32::MAX));
        tokio::time::sleep_until(start + at).await;
        let offset = SignedDuration::try_from(at).unwrap_or(SignedDuration::ZERO);
        match reader.read(&namespace, &name).await {
            Ok(s) => csv.push_str(&format!("{}\n", series_row(&s, &header, offset).join(","))),
            Err(e) => {
                eprintln!(
                    "warning: sample at +{}: {e}",
                    hpa_core::go_duration::format(offset)
                );
                let mut row = vec![hpa_core::go_duration::format(offset)];
                row.extend(header.iter().skip(1).map(|_| String::new()));
                csv.push_str(&format!("{}\n", row.join(",")));
            }
        }
    }
    let series = beside(&args.output, ".series.csv");
    let manifests = beside(&args.output, ".replay.yaml");
    write(&series, &csv)?;
    write(&manifests, &replay_manifests(&snapshot))?;
    println!(
        "wrote {} ({} samples every {}) and {}; replay them with:\n  hpa-harness replay {} --series {}",
        series.display(),
        samples + 1,
        hpa_core::go_duration::format_std(args.interval),
        manifests.display(),
        manifests.display(),
        series.display()
    );
    Ok(())
}
