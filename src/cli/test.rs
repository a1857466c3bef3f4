//! `hpa-harness test`: runs Gherkin scenarios.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CliResult;
use crate::gherkin::remote::RemoteOptions;
use crate::gherkin::target::ControllerKind;
use crate::gherkin::{BackendKind, RunOptions, runner};
use crate::report::{Recorder, html};
use crate::testbed::cluster::preflight::MetricsServerRef;

/// Options of `hpa-harness test`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Feature files or folders to run; `FILE.feature:LINE` runs the
    /// scenario at that line (a `Scenario Outline` line: all its examples;
    /// an examples row: that example).
    #[arg(required = true, value_name = "PATH[:LINE]")]
    pub paths: Vec<PathBuf>,
    /// Where the scenarios run: the embedded simulated cluster (`sim`,
    /// virtual time, no Docker) or a real cluster.
    #[arg(long, default_value = "sim", value_parser = BackendKind::parser(BackendKind::SCENARIOS))]
    pub backend: BackendKind,
    /// Run only scenarios whose tags match this expression, e.g.
    /// `@smoke and not @known-bug`.
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,
    /// Run only scenarios whose name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub name: Option<String>,
    /// Stop at the first failing scenario; the rest do not run.
    #[arg(long)]
    pub fail_fast: bool,
    /// Also write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write an HTML report to DIR/index.html: each scenario's result,
    /// its decision trace and its timeline, failures first.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// How many scenarios run at the same time: each in its own embedded
    /// cluster, or on a real cluster (`--backend kubeconfig`, kind, k3d,
    /// k3s) side by side in namespaces of their own (those that make a
    /// metrics API fail run alone). A simulated cluster reached through a
    /// kubeconfig or `--backend sim-process` takes one at a time: each
    /// scenario resets it and owns its virtual clock.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
    /// Pass when nothing runs (no feature file, no scenario, or a tag
    /// expression that selects none); by default such a run fails.
    #[arg(long)]
    pub allow_empty: bool,
    /// The Kubernetes releases whose HPA semantics the scenarios run under
    /// (controller and simulated API server): one, `1.36`, or several,
    /// `1.36,1.37`, each scenario then running under each and the scenarios
    /// whose verdicts differ listed at the end. A scenario tagged
    /// `@k8s-X.Y` runs under its tagged releases. Default: a real
    /// cluster's own release (its /version), else 1.37.
    #[arg(long, value_name = "X.Y[,X.Y]")]
    pub kubernetes_version: Option<super::VersionList>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// How to reach a cluster other than the embedded one.
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterArgs {
    /// The kubeconfig of `--backend kubeconfig` (default: $KUBECONFIG, then
    /// ~/.kube/config). `hpa-harness sim` writes one for the simulated
    /// cluster.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long)]
    pub context: Option<String>,
    /// Control URL of the fake metrics server that the cluster's metrics
    /// APIServices point at (`hpa-harness sim` prints it as `metrics-server:`).
    #[arg(long, value_name = "URL")]
    pub metrics_url: Option<String>,
    /// Whose HPA controller acts: ours (run and synced by the harness) or
    /// the cluster's own kube-controller-manager one (`upstream`: the
    /// harness only waits and looks, so the same scenarios check upstream).
    #[arg(long, value_enum, default_value_t = ControllerKind::Ours)]
    pub controller: ControllerKind,
    /// The cluster's `--horizontal-pod-autoscaler-sync-period`, for
    /// `--controller upstream` (Go duration).
    #[arg(long, default_value = "15s", value_parser = crate::cli::controller::duration)]
    pub upstream_sync_period: std::time::Duration,
    /// Namespace/name of fake-metrics-server's Service, which the metrics
    /// APIServices of a real cluster must point at.
    #[arg(
        long,
        default_value = "fake-metrics/fake-metrics-server",
        value_name = "NS/NAME"
    )]
    pub metrics_service: String,
    /// Skip the checks of a real cluster before running (APIServices,
    /// built-in HPA controller).
    #[arg(long)]
    pub skip_preflight: bool,
    /// Treat a simulated cluster (`hpa-harness sim` on its wall clock) as a
    /// real one: namespaces per scenario, concurrency, cleanup by label.
    /// For testing the real-cluster path without one.
    #[arg(long, hide = true)]
    pub assume_real: bool,
}

impl ClusterArgs {
    /// The runner's options for a remote cluster.
    pub fn remote_options(&self) -> RemoteOptions {
        let (namespace, service) = self
            .metrics_service
            .split_once('/')
            .unwrap_or(("fake-metrics", self.metrics_service.as_str()));
        RemoteOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            metrics_url: self.metrics_url.clone(),
            controller: self.controller,
            upstream_sync_period: self.upstream_sync_period,
            metrics_service: MetricsServerRef {
                namespace: namespace.to_owned(),
                service: service.to_owned(),
            },
            skip_preflight: self.skip_preflight,
            assume_real: self.assume_real,
        }
    }
}

/// Runs `hpa-harness test`: exit code 0 when every scenario passed.
pub async fn run(args: Args) -> CliResult {
    let options = RunOptions {
        paths: args.paths,
        backend: args.backend,
        tags: args.tags,
        exclude_known_bugs: false,
        junit: args.junit.clone(),
        concurrency: usize::from(args.concurrency),
        remote: args.cluster.remote_options(),
        allow_empty: args.allow_empty,
        record: args.report.as_ref().map(|_| Recorder::default()),
        versions: args.kubernetes_version.map(|l| l.0),
        name: args.name,
        fail_fast: args.fail_fast,
    };
    let summary = runner::run(&options).await?;
    if let (Some(dir), Some(recorder)) = (&args.report, &options.record) {
        let file = html::write(
            dir,
            &recorder.scenarios(),
            &options.paths,
            args.junit.as_deref(),
        )?;
        println!("HTML report: {}", file.display());
    }
    Ok(if summary.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
