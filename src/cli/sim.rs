//! `hpa-harness sim`: the simulated API server on a socket with a
//! kubeconfig, plus a fake metrics server of its own (plain HTTP on
//! `--metrics-listen`, scriptable through its `/control/v1` API) unless
//! `--metrics-url` names one. The controller binary, kubectl or any client
//! can then use the kubeconfig.
//!
//! Prints, one per line on stdout: `api-server: URL`, `kubeconfig: PATH`,
//! `metrics-server: URL` so that scripts and tests can pick them up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use fake_metrics_server::script::{Script, from_yaml};
use fake_metrics_server::{AppState, ServerClock, Transport};
use hpa_sim::Sim;
use hpa_sim::standalone;
use tokio_util::sync::CancellationToken;

use super::CliResult;
use super::controller::shutdown_signal;

/// Errors of `hpa-harness sim`.
#[derive(Debug, thiserror::Error)]
pub enum SimCliError {
    #[error("cannot listen on --metrics-listen {addr}")]
    BindMetrics {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read --metrics-script {path}")]
    ReadScript {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid --metrics-script {path}")]
    Script {
        path: PathBuf,
        #[source]
        source: fake_metrics_server::script::ScriptError,
    },
}

/// Options of `hpa-harness sim`.
#[derive(Debug, clap::Args)]
#[group(id = "sim_command")]
pub struct Args {
    #[command(flatten)]
    pub sim: standalone::Args,

    /// Where the built-in fake metrics server listens (plain HTTP); unused
    /// with --metrics-url.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub metrics_listen: SocketAddr,

    /// Script (YAML or JSON) the built-in fake metrics server starts with.
    #[arg(long)]
    pub metrics_script: Option<PathBuf>,
}

fn load_script(path: &PathBuf) -> Result<Script, SimCliError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimCliError::ReadScript {
        path: path.clone(),
        source,
    })?;
    from_yaml(&text).map_err(|source| SimCliError::Script {
        path: path.clone(),
        source,
    })
}

/// Runs `hpa-harness sim`.
pub async fn run(args: Args) -> CliResult {
    let mut sim_args = args.sim.clone();
    let stop_metrics = CancellationToken::new();
    let mut metrics_server = None;
    let own_metrics = if sim_args.metrics_url.is_none() {
        let listener = tokio::net::TcpListener::bind(args.metrics_listen)
            .await
            .map_err(|source| SimCliError::BindMetrics {
                addr: args.metrics_listen,
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|source| SimCliError::BindMetrics {
                addr: args.metrics_listen,
                source,
            })?;
        let url = format!("http://{addr}");
        sim_args.metrics_url = Some(url.clone());
        Some((listener, url))
    } else {
        None
    };
    let sim = Sim::new(standalone::config_from_args(&sim_args));
    if let Some((listener, url)) = own_metrics {
        let clock = match sim.virtual_clock() {
            Some(clock) => ServerClock::Virtual(clock),
            None => ServerClock::wall(),
        };
        let script = match &args.metrics_script {
            Some(path) => load_script(path)?,
            None => Script::default(),
        };
        let state = AppState::with_script(clock, &script);
        let stop = stop_metrics.clone();
        metrics_server = Some(tokio::spawn(fake_metrics_server::run(
            listener,
            state,
            Transport::Plain,
            async move { stop.cancelled().await },
        )));
        println!("metrics-server: {url}");
    } else if let Some(url) = &sim_args.metrics_url {
        println!("metrics-server: {url}");
    }
    let kubeconfig = sim_args.kubeconfig.clone();
    let result = standalone::run(
        sim,
        &sim_args,
        |addr| {
            println!("api-server: http://{addr}");
            println!("kubeconfig: {}", kubeconfig.display());
        },
        shutdown_signal(),
    )
    .await;
    stop_metrics.cancel();
    if let Some(server) = metrics_server {
        match server.await {
            Ok(Err(err)) => tracing::warn!(error = %err, "the fake metrics server failed"),
            Err(err) => tracing::warn!(error = %err, "the fake metrics server task failed"),
            Ok(Ok(())) => {}
        }
    }
    result?;
    Ok(ExitCode::SUCCESS)
}
