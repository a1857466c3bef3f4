//! `hpa-harness metrics-server`: the fake metrics server on its own, the
//! same server and flags as the `fake-metrics-server` binary
//! ([`fake_metrics_server::cli`]), so one hpa-harness binary can start the
//! separate processes a scenario run against a kubeconfig needs.

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
}

/// Runs `hpa-harness metrics-server` until SIGINT or SIGTERM.
pub async fn run(args: Args) -> CliResult {
    fake_metrics_server::cli::run(args.server).await?;
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
}
