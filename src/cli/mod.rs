//! The command line: one subcommand per job. Each subcommand lives in its own
//! module with an `Args` struct (clap derive; its `///` docs are the `--help`)
//! and an async `run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod capture;
pub mod cleanup;
pub mod conformance;
pub mod control_plane;
/// `hpa-harness controller`: the `hpa-controller` binary's command line, as
/// a subcommand (same flags, same behaviour).
pub mod controller {
    pub use hpa_controller::cli::*;
}
pub mod explain;
pub mod load;
pub mod metrics_server;
pub mod replay;
pub mod sim;
pub mod test;

/// A list of Kubernetes releases on the command line (`1.36,1.37`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionList(pub Vec<hpa_core::KubernetesVersion>);

impl std::str::FromStr for VersionList {
    type Err = hpa_core::version::VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        hpa_core::version::parse_list(s).map(VersionList)
    }
}

/// What a subcommand returns: an exit code, or an error printed with its causes.
pub type CliResult = Result<ExitCode, Box<dyn std::error::Error + Send + Sync>>;

/// Prove how Kubernetes HorizontalPodAutoscalers behave.
///
/// hpa-harness runs an HPA controller that decides exactly as the upstream
/// one in kube-controller-manager (Kubernetes 1.35, 1.36, 1.37 or 1.38-alpha;
/// `--kubernetes-version`, 1.37 by default), a fake metrics server
/// whose values you script, and Gherkin scenarios that say what your HPA must
/// do, against an embedded simulated cluster with a virtual clock (the
/// default: no Docker, milliseconds per scenario) or a real cluster.
#[derive(Debug, Parser)]
#[command(name = "hpa-harness", version, propagate_version = true)]
pub struct Cli {
    /// More log output (-v: debug, -vv: trace). RUST_LOG overrides it.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Log lines as text (coloured on a terminal only) or as JSON objects.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t,
        alias = "logging-format"
    )]
    pub log_format: hpa_controller::cli::LogFormat,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run Gherkin scenarios (feature files or folders) against a cluster.
    Test(test::Args),
    /// Run a scenario and print, for each sync, the controller's decision
    /// trace; or explain a live HPA (NAMESPACE/NAME) read through a kubeconfig.
    Explain(explain::Args),
    /// Write a live HPA (NAMESPACE/NAME) as a scenario that reproduces its
    /// decision on the simulated cluster.
    Capture(capture::Args),
    /// Replay a metric series (CSV, Prometheus JSON) against an HPA manifest
    /// and show what the HPA would do: a summary, JSON, a timeline picture.
    Replay(replay::Args),
    /// Run the HPA controller against a cluster (kubeconfig or in-cluster).
    Controller(controller::Args),
    /// Run the simulated Kubernetes API server standalone, with a fake metrics server.
    Sim(sim::Args),
    /// Run a genuine Kubernetes control plane (etcd, kube-apiserver,
    /// kube-controller-manager from their binaries) with a fake metrics
    /// server and a fake node, until Ctrl-C.
    ControlPlane(control_plane::Args),
    /// Measure how many HPAs the controller keeps in time, and at what cost.
    Load(load::Args),
    /// Run scenarios with the cluster's own HPA controller and with ours, side by side.
    Conformance(conformance::Args),
    /// Run the fake metrics server standalone (as the fake-metrics-server binary).
    MetricsServer(metrics_server::Args),
    /// Remove what earlier runs left on a cluster (namespaces and objects
    /// labelled hpa-harness.io/scenario or hpa-harness.io/load).
    Cleanup(cleanup::Args),
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Test(args) => test::run(args).await,
        Command::Explain(args) => explain::run(args).await,
        Command::Capture(args) => capture::run(args).await,
        Command::Replay(args) => replay::run(args).await,
        Command::Controller(args) => controller::run(args).await,
        Command::Sim(args) => sim::run(args).await,
        Command::ControlPlane(args) => control_plane::run(args).await,
        Command::Load(args) => load::run(args).await,
        Command::Conformance(args) => conformance::run(args).await,
        Command::MetricsServer(args) => metrics_server::run(args).await,
        Command::Cleanup(args) => cleanup::run(args).await,
    }
}

/// Logs to stderr; `RUST_LOG` wins over `-v`.
pub fn init_tracing(verbose: u8, format: hpa_controller::cli::LogFormat) {
    hpa_controller::cli::init_tracing_for(verbose, &["hpa_harness", "hpa_controller"], format);
}

/// [`init_tracing`] for `cli`: a live `explain`, `capture` and `replay
/// --prometheus` say what failed in one line of their own, so without `-v`
/// (or `RUST_LOG`) the clients' logs of the same failure are left out.
pub fn init_tracing_of(cli: &Cli) {
    let live = match &cli.command {
        Command::Capture(_) => true,
        Command::Explain(args) => args.is_live(),
        Command::Replay(args) => args.prometheus.is_some(),
        _ => false,
    };
    if live && cli.verbose == 0 && std::env::var_os("RUST_LOG").is_none() {
        let filter = tracing_subscriber::EnvFilter::new(
            "warn,kube_client=off,rustls_platform_verifier=off,hpa_harness=info,hpa_controller=info",
        );
        hpa_controller::cli::init_subscriber(filter, cli.log_format);
    } else {
        init_tracing(cli.verbose, cli.log_format);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
