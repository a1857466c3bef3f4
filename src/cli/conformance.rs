//! `hpa-harness conformance`: the same scenarios with the cluster's own HPA
//! controller and with ours, as a table of scenario | upstream | ours.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CliResult;
use crate::gherkin::conformance;
use crate::gherkin::outcome::RunSummary;
use crate::gherkin::{BackendKind, RunOptions, runner};
use crate::testbed::ControllerKind;
use crate::testbed::options::{TestbedArgs, TestbedOptions};

/// Run scenarios with kube-controller-manager's HPA controller and with
/// ours, and print which pass with each.
///
/// The upstream run goes to the cluster of --kubeconfig, whose
/// kube-controller-manager runs its HPA controller (kind: create the cluster
/// from clusters/kind.yaml without the `controllers` line), with the fake
/// metrics server of --metrics-url owning the metrics APIs; or, with
/// `--backend control-plane`, to a genuine control plane started for it.
/// Ours runs on the cluster of --ours-kubeconfig; with `--backend
/// control-plane`, on a second control plane whose controller manager's
/// HPA controller is off (with --controller-binary, as the shipped
/// binary); else on the embedded simulated cluster. Scenarios that need our
/// controller's internals (seeded history, its metrics, its flags) are n/a
/// upstream.
#[derive(Debug, clap::Args)]
// The cluster options' --controller does not apply: the upstream run is
// upstream's and the other ours, always.
#[command(mut_arg("controller", |a| a.hide(true)))]
pub struct Args {
    /// Feature files or folders to run.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Run only scenarios whose tags match this expression.
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,
    /// Where upstream's controller acts: the cluster of --kubeconfig, or a
    /// genuine control plane started for the run (and one more for ours).
    #[arg(
        long,
        default_value = "kubeconfig",
        value_parser = BackendKind::parser(&[BackendKind::Kubeconfig, BackendKind::ControlPlane]),
    )]
    pub backend: BackendKind,
    /// Scenarios run side by side on a real cluster, each in a namespace of
    /// its own (on the wall clock, a scenario that waits minutes holds
    /// one place meanwhile).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub concurrency: u32,
    /// Write the upstream run's JUnit report here (and ours beside it,
    /// `.ours` before the extension).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The cluster where upstream's controller acts.
    #[command(flatten)]
    pub testbed: TestbedArgs,
    /// Run ours on this cluster instead of the embedded simulated one.
    #[arg(long, value_name = "FILE", requires = "ours_metrics_url")]
    pub ours_kubeconfig: Option<PathBuf>,
    /// The fake metrics server control URL of --ours-kubeconfig's cluster.
    #[arg(long, value_name = "URL")]
    pub ours_metrics_url: Option<String>,
    /// Exit non-zero when a scenario passes with one controller and fails
    /// with the other.
    #[arg(long)]
    pub fail_on_difference: bool,
    /// The Kubernetes release whose semantics our controller follows.
    /// Default: the release of upstream's cluster (its /version), so both
    /// controllers answer for the same release.
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<hpa_core::KubernetesVersion>,
}

/// Runs `hpa-harness conformance`.
pub async fn run(args: Args) -> CliResult {
    let mut upstream_remote = args.testbed.options();
    upstream_remote.controller = ControllerKind::Upstream;
    upstream_remote.controller_binary = None;
    let concurrency = args.concurrency as usize;
    let upstream_options = RunOptions {
        paths: args.paths.clone(),
        backend: args.backend,
        tags: args.tags.clone(),
        concurrency,
        testbed: upstream_remote,
        versions: args.kubernetes_version.map(|v| vec![v]),
        junit: args.junit.clone(),
        ..RunOptions::default()
    };
    let ours_junit = args
        .junit
        .as_deref()
        .map(|path| path.with_extension("ours.xml"));
    if args.backend == BackendKind::ControlPlane && args.ours_kubeconfig.is_none() {
        // Two control planes of the same binaries (so the same release, as
        // their /version says): the two runs wait on the wall clock side by
        // side, their output interleaving feature by feature.
        let ours_options = RunOptions {
            testbed: TestbedOptions {
                controller: ControllerKind::Ours,
                ..args.testbed.options()
            },
            junit: ours_junit,
            ..upstream_options.clone()
        };
        println!("upstream's run and ours go side by side, on a control plane each");
        let (upstream, ours) =
            tokio::join!(runner::run(&upstream_options), runner::run(&ours_options));
        return Ok(verdict(&args, &upstream?, &ours?));
    }
    let upstream = runner::run(&upstream_options).await?;
    // Ours answers for the release upstream's run found on its cluster.
    let release = args
        .kubernetes_version
        .or_else(|| upstream.scenarios.first().map(|o| o.kubernetes_version));
    let versions = release.map(|v| vec![v]);
    let ours_options = match &args.ours_kubeconfig {
        Some(kubeconfig) => RunOptions {
            paths: args.paths.clone(),
            backend: BackendKind::Kubeconfig,
            tags: args.tags.clone(),
            testbed: TestbedOptions {
                kubeconfig: Some(kubeconfig.clone()),
                metrics_url: args.ours_metrics_url.clone(),
                ..TestbedOptions::default()
            },
            versions: versions.clone(),
            junit: ours_junit,
            ..RunOptions::default()
        },
        None => RunOptions {
            paths: args.paths.clone(),
            tags: args.tags.clone(),
            versions,
            junit: ours_junit,
            ..RunOptions::default()
        },
    };
    let ours = runner::run(&ours_options).await?;
    Ok(verdict(&args, &upstream, &ours))
}

/// Prints the table of both runs; fails with `--fail-on-difference` when a
/// scenario passes with one controller and fails with the other.
fn verdict(args: &Args, upstream: &RunSummary, ours: &RunSummary) -> ExitCode {
    let rows = conformance::rows(&upstream.scenarios, &ours.scenarios);
    println!("\n{}", conformance::render(&rows));
    if args.fail_on_difference && rows.iter().any(conformance::Row::disagrees) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
