//! `hpa-harness metrics-server`: the fake metrics server on its own, the
//! same server and flags as the `fake-metrics-server` binary
//! ([`fake_metrics_server::cli`]), so one hpa-harness binary can start the
//! separate processes a scenario run against a kubeconfig needs.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CliResult;

/// Options of `hpa-harness metrics-server`.
#[derive(Debug, clap::Args)]
#[group(id = "metrics_server_command")]
#[command(after_long_help = "\
Serves metrics.k8s.io, custom.metrics.k8s.io and external.metrics.k8s.io from a
script, plus the control API under /control/v1 that the Gherkin runner uses to
change values, inject faults and move the clock. Once bound it prints
`listening: URL` on stdout (useful with --listen 127.0.0.1:0).

Beside `hpa-harness sim --virtual-clock T --metrics-url URL`, start it with
`--http --virtual-clock T` so both clocks begin at the same instant; the
runner then advances both. See fake-metrics-server/README.md for scripts.")]
pub struct Args {
    #[command(flatten)]
    pub server: fake_metrics_server::cli::Args,
    /// The kubeconfig of the cluster whose pods --watch-pods learns
    /// (default: $KUBECONFIG or ~/.kube/config, else the in-cluster
    /// service account).
    #[arg(long, value_name = "FILE", requires = "watch_pods")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current one).
    #[arg(long, value_name = "NAME", requires = "watch_pods")]
    pub context: Option<String>,
}

/// Runs `hpa-harness metrics-server` until SIGINT or SIGTERM.
pub async fn run(args: Args) -> CliResult {
    let cluster = if args.kubeconfig.is_some() || args.context.is_some() {
        Some(
            crate::testbed::kubeconfig::client(args.kubeconfig.as_deref(), args.context.as_deref())
                .await?,
        )
    } else {
        None
    };
    fake_metrics_server::cli::run_with(args.server, cluster).await?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn flags_are_those_of_the_fake_metrics_server() {
        Cli::command().debug_assert();
        let cli = Cli::parse_from([
            "metrics-server",
            "--http",
            "--listen",
            "127.0.0.1:0",
            "--virtual-clock",
            "2026-01-01T00:00:00Z",
        ]);
        assert!(cli.args.server.http);
        assert!(cli.args.server.clock().is_virtual());
    }

    /// `--watch-pods` needs a cluster: `--kubeconfig` and `--context` name
    /// it as other commands take them; without `--watch-pods` they are
    /// refused, as nothing would read them.
    #[test]
    fn the_cluster_of_watch_pods_is_named_with_kubeconfig_and_context() {
        let cli = Cli::try_parse_from([
            "metrics-server",
            "--watch-pods",
            "--kubeconfig",
            "/tmp/k.yaml",
            "--context",
            "kind-kind",
        ])
        .unwrap();
        assert_eq!(cli.args.kubeconfig, Some(PathBuf::from("/tmp/k.yaml")));
        assert_eq!(cli.args.context.as_deref(), Some("kind-kind"));
        let err = Cli::try_parse_from(["metrics-server", "--kubeconfig", "/tmp/k.yaml"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--watch-pods"), "{err}");
    }

    /// A kubeconfig that cannot be read is one error naming it.
    #[tokio::test]
    async fn an_unreadable_kubeconfig_is_named() {
        let cli = Cli::try_parse_from([
            "metrics-server",
            "--http",
            "--listen",
            "127.0.0.1:0",
            "--watch-pods",
            "--kubeconfig",
            "/nonexistent/hpa-harness-kubeconfig",
        ])
        .unwrap();
        let err = run(cli.args).await.unwrap_err().to_string();
        assert!(err.contains("/nonexistent/hpa-harness-kubeconfig"), "{err}");
    }
}
