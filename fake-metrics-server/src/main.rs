//! `fake-metrics-server`: serves a script as the Kubernetes metrics APIs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use fake_metrics_server::script::Script;
use fake_metrics_server::{AppState, ServerClock, Transport};

/// A scripted server for metrics.k8s.io, custom.metrics.k8s.io and
/// external.metrics.k8s.io, with a control API under /control/v1.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// Address to listen on. Loopback by default; use 0.0.0.0:PORT inside a
    /// cluster.
    #[arg(long, env = "FMS_LISTEN", default_value = "127.0.0.1:8443")]
    listen: SocketAddr,

    /// Script to serve from the start (YAML or JSON); see README.md.
    #[arg(long, env = "FMS_SCRIPT")]
    script: Option<PathBuf>,

    /// Serve plain HTTP instead of HTTPS.
    #[arg(long, env = "FMS_HTTP")]
    http: bool,

    /// PEM certificate chain; without it a self-signed certificate is made
    /// at start.
    #[arg(
        long,
        env = "FMS_TLS_CERT",
        requires = "tls_key",
        conflicts_with = "http"
    )]
    tls_cert: Option<PathBuf>,

    /// PEM private key for --tls-cert.
    #[arg(
        long,
        env = "FMS_TLS_KEY",
        requires = "tls_cert",
        conflicts_with = "http"
    )]
    tls_key: Option<PathBuf>,

    /// Extra DNS names or IPs for the self-signed certificate (repeatable).
    #[arg(long = "tls-name", env = "FMS_TLS_NAMES", value_delimiter = ',')]
    tls_names: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
enum MainError {
    #[error("reading script {path}: {source}")]
    ReadScript {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("script {path}: {source}")]
    Script {
        path: String,
        #[source]
        source: fake_metrics_server::script::ScriptError,
    },
    #[error("binding {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Server(#[from] fake_metrics_server::server::ServerError),
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    tracing::info!("shutting down");
}

async fn serve(cli: Cli) -> Result<(), MainError> {
    let script = match &cli.script {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| MainError::ReadScript {
                path: path.display().to_string(),
                source,
            })?;
            let content_type = path
                .extension()
                .is_some_and(|e| e == "json")
                .then_some("application/json");
            Script::parse(&text, content_type).map_err(|source| MainError::Script {
                path: path.display().to_string(),
                source,
            })?
        }
        None => Script::default(),
    };
    let transport = if cli.http {
        Transport::Plain
    } else if let (Some(cert), Some(key)) = (&cli.tls_cert, &cli.tls_key) {
        Transport::Tls(fake_metrics_server::tls_from_pem(cert, key)?)
    } else {
        let mut names = vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            cli.listen.ip().to_string(),
        ];
        names.extend(cli.tls_names.iter().cloned());
        names.sort();
        names.dedup();
        Transport::Tls(fake_metrics_server::self_signed_tls(&names)?)
    };
    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .map_err(|source| MainError::Bind {
            addr: cli.listen,
            source,
        })?;
    let scheme = if cli.http { "http" } else { "https" };
    tracing::info!(
        "serving on {scheme}://{} ({} pods scripted)",
        listener.local_addr().unwrap_or(cli.listen),
        script.pods.len()
    );
    let state = AppState::with_script(ServerClock::wall(), &script);
    fake_metrics_server::run(listener, state, transport, shutdown_signal()).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match serve(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fake-metrics-server: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
