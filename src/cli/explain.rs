//! `hpa-harness explain`: two modes, told apart by the argument.
//!
//! - `explain FILE.feature` runs the scenarios of a feature file and prints,
//!   for every sync, the controller's decision for each HPA as a table;
//!   `FILE.feature:LINE` and `--name` pick scenarios as `test` does.
//! - `explain NAMESPACE/NAME` (or `--all-namespaces`, `--selector`) reads a
//!   live HPA through a kubeconfig, read-only, and prints the same decision
//!   trace for what the cluster shows now (`crate::live`), with what the
//!   API cannot show as bounds and the status compared.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::CliResult;
use crate::gherkin::{RunOptions, runner, world};
use crate::live::read::{Scope, parse_name};
use crate::live::{LiveError, Reader, ReaderOptions};
use crate::report::Recorder;

/// Options of `hpa-harness explain`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  hpa-harness explain features/walkthrough/php_apache.feature
  hpa-harness explain features/metrics/cpu_readiness.feature:12
  hpa-harness explain --kubeconfig ~/.kube/config shop/web
  hpa-harness explain -A --selector team=checkout --output json
  hpa-harness explain shop/web --watch")]
pub struct Args {
    /// A feature file to run and explain (`FILE.feature:LINE`: the
    /// scenario at that line, as `test` takes it), or the HPA of a live
    /// cluster to explain: `NAMESPACE/NAME`, or `NAME` in the kubeconfig
    /// context's namespace. A path ending in `.feature` (or an existing
    /// file or folder, or one with `:LINE`) is a feature file; anything
    /// else names an HPA.
    #[arg(value_name = "FILE.feature[:LINE] | NAMESPACE/NAME")]
    pub target: Option<String>,
    /// Run only scenarios whose tags match this expression (feature files).
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,
    /// Run only scenarios whose name matches this regular expression
    /// (feature files).
    #[arg(long, value_name = "REGEX")]
    pub name: Option<String>,
    /// Also draw each scenario's timeline (one per HPA, one under the
    /// other) to this SVG file (feature files).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// The Kubernetes releases to explain the scenarios under (`1.36`, or
    /// `1.36,1.37` to see the decisions of each). Default: 1.37; scenarios
    /// tagged `@k8s-X.Y` run under their tagged releases. For a live HPA,
    /// one release to decide as instead of the cluster's own (`/version`).
    #[arg(long, value_name = "X.Y[,X.Y]")]
    pub kubernetes_version: Option<super::VersionList>,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// The options of a live HPA (`explain NAMESPACE/NAME`, and `capture`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LiveArgs {
    /// The kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current one).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Explain every HPA of every namespace (with --selector: those matching).
    #[arg(short = 'A', long, conflicts_with = "target")]
    pub all_namespaces: bool,
    /// Only HPAs with these labels (`team=checkout`); without a NAME, those
    /// of the context's namespace (or of every one, with -A).
    #[arg(short = 'l', long, value_name = "SELECTOR", conflicts_with = "target")]
    pub selector: Option<String>,
    /// Explain again at every sync period until interrupted.
    #[arg(long)]
    pub watch: bool,
    /// `text` for people, `json` for scripts (one document per HPA and
    /// read, one per line).
    #[arg(long, value_enum)]
    pub output: Option<super::replay::Output>,
    /// A flag of the cluster's controller, when not upstream's default (it
    /// cannot be read from outside): `horizontal-pod-autoscaler-tolerance=0.05`,
    /// `feature-gates=HPAScaleToZero=false`. Repeat.
    #[arg(long = "flag", value_name = "NAME=VALUE")]
    pub flags: Vec<String>,
}

impl LiveArgs {
    /// Whether any option of a live HPA was given.
    fn any(&self) -> bool {
        self.kubeconfig.is_some()
            || self.context.is_some()
            || self.all_namespaces
            || self.selector.is_some()
            || self.watch
            || self.output.is_some()
            || !self.flags.is_empty()
    }
}

/// Why the command line cannot be used as given.
#[derive(Debug, thiserror::Error)]
pub enum ExplainArgError {
    #[error(
        "explain FILE.feature runs scenarios; --kubeconfig, --context, -A, --selector, --watch, --output and --flag are for a live HPA (NAMESPACE/NAME)"
    )]
    LiveOptionsOnFeature,
    #[error(
        "explain needs a feature file, NAMESPACE/NAME of an HPA, --all-namespaces or --selector"
    )]
    Nothing,
    #[error("--tags, --name and --plot are for feature files, not a live HPA")]
    FeatureOptionsOnLive,
    #[error("a live HPA is decided as one release: give one --kubernetes-version")]
    Releases,
}

impl Args {
    /// Whether these arguments explain a live HPA (not a feature file).
    pub fn is_live(&self) -> bool {
        match &self.target {
            Some(target) => !is_feature_file(target),
            None => true,
        }
    }
}

/// Whether `target` names a feature file (or a folder of them, or a file
/// narrowed to a line) rather than an HPA.
fn is_feature_file(target: &str) -> bool {
    let path = Path::new(target);
    target.ends_with(".feature")
        || path.is_file()
        || path.is_dir()
        || crate::gherkin::line_filter::is_file_with_line(path)
}

/// Runs `hpa-harness explain`.
pub async fn run(args: Args) -> CliResult {
    match &args.target {
        Some(target) if is_feature_file(target) => {
            if args.live.any() {
                return Err(ExplainArgError::LiveOptionsOnFeature.into());
            }
            let file = PathBuf::from(target);
            explain_feature(file, args).await
        }
        None if !args.live.all_namespaces && args.live.selector.is_none() => {
            Err(ExplainArgError::Nothing.into())
        }
        _ => {
            if args.tags.is_some() || args.name.is_some() || args.plot.is_some() {
                return Err(ExplainArgError::FeatureOptionsOnLive.into());
            }
            let version = match args.kubernetes_version.as_ref().map(|l| l.0.as_slice()) {
                None => None,
                Some([one]) => Some(*one),
                Some(_) => return Err(ExplainArgError::Releases.into()),
            };
            Ok(explain_live(args.target.as_deref(), &args.live, version).await)
        }
    }
}

/// The reader options of the live arguments.
pub fn reader_options(
    live: &LiveArgs,
    version: Option<hpa_core::KubernetesVersion>,
) -> ReaderOptions {
    ReaderOptions {
        kubeconfig: live.kubeconfig.clone(),
        context: live.context.clone(),
        kubernetes_version: version,
        flags: live.flags.clone(),
    }
}

/// The scope of the live arguments.
pub fn scope(
    target: Option<&str>,
    live: &LiveArgs,
    default_namespace: &str,
) -> Result<Scope, LiveError> {
    Ok(match target {
        Some(t) => {
            let (namespace, name) = parse_name(t, default_namespace)?;
            Scope::One { namespace, name }
        }
        None if live.all_namespaces => Scope::All {
            selector: live.selector.clone(),
        },
        None => Scope::Namespace {
            namespace: default_namespace.to_owned(),
            selector: live.selector.clone(),
        },
    })
}

/// Explains the live HPAs once, or at every sync period with --watch.
/// Each failure is one line on stderr; the exit code is 1 if any read
/// failed.
async fn explain_live(
    target: Option<&str>,
    live: &LiveArgs,
    version: Option<hpa_core::KubernetesVersion>,
) -> ExitCode {
    let fail = |e: LiveError| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    };
    let reader = match Reader::connect(&reader_options(live, version)).await {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if let Some(w) = &reader.release.warning {
        eprintln!("warning: {w}");
    }
    if let Some(pod) = &reader.flags_from {
        eprintln!(
            "controller flags: {} (read from kube-controller-manager's pod {pod}; --flag overrides)",
            reader.flags.join(" ")
        );
    }
    let scope = match scope(target, live, &reader.default_namespace) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let json = live.output == Some(super::replay::Output::Json);
    let period = reader.config.sync_period;
    let shutdown = super::controller::shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let mut failed = false;
        match reader.hpas(&scope).await {
            Ok(keys) => {
                for (namespace, name) in keys {
                    match reader.read(&namespace, &name).await {
                        Ok(snapshot) => {
                            let e = crate::live::explain::explain(
                                &snapshot,
                                &reader.config,
                                &reader.release,
                            );
                            let text = if json {
                                match serde_json::to_string(&e) {
                                    Ok(j) => format!("{j}\n"),
                                    Err(err) => {
                                        eprintln!("error: HPA {}: {err}", e.hpa);
                                        failed = true;
                                        continue;
                                    }
                                }
                            } else {
                                e.text()
                            };
                            if super::replay::print_out(&text).is_err() {
                                return ExitCode::FAILURE;
                            }
                        }
                        Err(e) => {
                            eprintln!("error: {e}");
                            failed = true;
                        }
                    }
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
        if !live.watch {
            return if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
        tokio::select! {
            () = tokio::time::sleep(period) => {}
            () = &mut shutdown => return ExitCode::SUCCESS,
        }
    }
}

/// Runs the scenarios of a feature file one at a time, so that the tables
/// of one scenario stay together.
async fn explain_feature(file: PathBuf, args: Args) -> CliResult {
    world::set_explain(true);
    let options = RunOptions {
        paths: vec![file],
        tags: args.tags,
        concurrency: 1,
        record: args.plot.as_ref().map(|_| Recorder::default()),
        versions: args.kubernetes_version.map(|l| l.0),
        name: args.name,
        ..RunOptions::default()
    };
    let summary = runner::run(&options).await?;
    if let (Some(path), Some(recorder)) = (&args.plot, &options.record) {
        let timelines: Vec<_> = recorder
            .scenarios()
            .into_iter()
            .flat_map(|s| s.hpas.into_iter().map(|h| h.timeline))
            .collect();
        crate::plot::write(path, &timelines, crate::plot::Layout::Stacked)?;
        println!("timeline drawn to {}", path.display());
    }
    Ok(if summary.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn explain_plot_draws_the_timeline_of_each_hpa() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("out.svg");
        let feature = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("features/walkthrough/php_apache.feature");
        let code = run(Args {
            target: Some(feature.display().to_string()),
            tags: None,
            name: None,
            plot: Some(svg.clone()),
            kubernetes_version: None,
            live: LiveArgs::default(),
        })
        .await
        .unwrap();
        world::set_explain(false);
        assert_eq!(code, ExitCode::SUCCESS);
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(
            text.contains("HPA default/php-apache"),
            "the title names the HPA"
        );
        assert!(
            text.contains("scale down (rescale event)"),
            "the rescales are marked"
        );
    }

    /// `explain FILE.feature:LINE` and `--name` pick scenarios as `test`
    /// does: of a file with a passing and a failing scenario, each picks
    /// the passing one (the run passes), and the whole file fails.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_line_or_a_name_picks_the_scenarios_to_explain() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("two.feature");
        std::fs::write(
            &file,
            "Feature: two\n\n  Scenario: passes\n    Given a deployment \"web\" with 2 pods\n    Then the deployment \"web\" has 2 replicas\n\n  Scenario: fails\n    Given a deployment \"web\" with 2 pods\n    Then the deployment \"web\" has 3 replicas\n",
        )
        .unwrap();
        let file = file.display().to_string();
        let with_line = format!("{file}:3");
        assert!(is_feature_file(&with_line), "{with_line}");
        assert!(!is_feature_file("shop/web") && !is_feature_file("web"));
        let args = |target: &str, name: Option<&str>| Args {
            target: Some(target.to_owned()),
            tags: None,
            name: name.map(str::to_owned),
            plot: None,
            kubernetes_version: None,
            live: LiveArgs::default(),
        };
        assert!(!args(&with_line, None).is_live());
        let by_line = run(args(&with_line, None)).await.unwrap();
        let by_name = run(args(&file, Some("^passes$"))).await.unwrap();
        let whole = run(args(&file, None)).await.unwrap();
        world::set_explain(false);
        assert_eq!(by_line, ExitCode::SUCCESS);
        assert_eq!(by_name, ExitCode::SUCCESS);
        assert_eq!(whole, ExitCode::FAILURE);
        // --name is for feature files.
        let live = run(args("shop/web", Some("x"))).await.unwrap_err();
        assert!(live.to_string().contains("--name"), "{live}");
    }

    /// Issue 29: from zero replicas an AverageValue ratio is infinite, and
    /// drawing it spun forever. The run goes on a thread of its own so that
    /// a regression fails here instead of hanging the suite.
    #[test]
    fn explain_plot_draws_a_scale_up_from_zero_replicas() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("out.svg");
        let feature = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("features/scaling/zero_plot.feature");
        let args = Args {
            target: Some(feature.display().to_string()),
            tags: None,
            name: None,
            plot: Some(svg.clone()),
            kubernetes_version: None,
            live: LiveArgs::default(),
        };
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let code = runtime.block_on(run(args)).unwrap();
            world::set_explain(false);
            done.send(code).unwrap();
        });
        let code = finished
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("explain --plot finishes");
        assert_eq!(code, ExitCode::SUCCESS);
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(
            text.contains("HPA default/batch"),
            "the title names the HPA"
        );
        assert!(
            text.contains("scale up (rescale event)"),
            "the scale up from zero is marked"
        );
        assert!(
            text.contains("are drawn at the top"),
            "the infinite ratio is said to be off the scale"
        );
        assert!(
            !text.contains("NaN") && !text.contains("inf"),
            "no non-finite number"
        );
    }
}
