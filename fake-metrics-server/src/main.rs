//! `fake-metrics-server`: serves a script as the Kubernetes metrics APIs.
//! The command line lives in [`fake_metrics_server::cli`], shared with
//! `hpa-harness metrics-server`.

use std::process::ExitCode;

use clap::Parser;

/// A scripted server for metrics.k8s.io, custom.metrics.k8s.io and
/// external.metrics.k8s.io, with a control API under /control/v1.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    args: fake_metrics_server::cli::Args,
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match fake_metrics_server::cli::run(Cli::parse().args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut message = format!("fake-metrics-server: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}
