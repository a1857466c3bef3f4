//! `hpa-harness test`: runs Gherkin scenarios.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CliResult;
use crate::gherkin::{BackendKind, RunOptions, runner};
use crate::report::{Recorder, html};
use crate::testbed::controller::Requests;
use crate::testbed::options::TestbedArgs;

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
    /// k3s) side by side in namespaces of their own (a metrics API one
    /// makes fail fails in its namespace alone), the longest waits first.
    /// A simulated cluster reached through a
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
    /// Run our controller as `hpa-controller --upstream-requests` does
    /// (a GET of `/scale` and one metrics list per HPA and metric) rather
    /// than at the binary's defaults (scale targets from a Deployment
    /// watch, metrics lists shared within a window).
    #[arg(long)]
    pub upstream_requests: bool,
    /// How to reach a cluster other than the embedded one.
    #[command(flatten)]
    pub testbed: TestbedArgs,
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
        testbed: args.testbed.options(),
        allow_empty: args.allow_empty,
        record: args.report.as_ref().map(|_| Recorder::default()),
        versions: args.kubernetes_version.map(|l| l.0),
        name: args.name,
        fail_fast: args.fail_fast,
        requests: if args.upstream_requests {
            Requests::Upstream
        } else {
            Requests::Shipped
        },
    };
    let summary = runner::run(&options).await?;
    let not_runnable: Vec<_> = summary.not_runnable().collect();
    if !not_runnable.is_empty() {
        println!(
            "\n{} scenario run(s) not possible on this backend (not failures):",
            not_runnable.len()
        );
        for (o, why) in not_runnable {
            println!(
                "  {} ({}, Kubernetes {}): {why}",
                o.scenario, o.location, o.kubernetes_version
            );
        }
    }
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
