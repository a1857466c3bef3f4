//! `hpa-harness sim`: the sim on a loopback socket with a kubeconfig, so
//! kubectl, the controller binary or any client can use it.
//!
//! The root crate's subcommand flattens [`Args`], starts a fake metrics server
//! beside it unless `--metrics-url` names one, and calls [`run`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use jiff::{SignedDuration, Timestamp};

use crate::aggregation::Backend;
use crate::sim::{PodDelays, Sim, SimClock, SimConfig};

/// Failures of the standalone server.
#[derive(Debug, thiserror::Error)]
pub enum StandaloneError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The kubeconfig could not be written.
    #[error("cannot write the kubeconfig {path}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The server failed.
    #[error("the sim server failed")]
    Serve(#[source] std::io::Error),
}

/// Options of `hpa-harness sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Address to listen on (loopback; port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:0", env = "HPA_SIM_LISTEN")]
    pub listen: SocketAddr,
    /// Where to write a kubeconfig pointing at the sim.
    #[arg(long, default_value = "hpa-sim.kubeconfig", env = "HPA_SIM_KUBECONFIG")]
    pub kubeconfig: PathBuf,
    /// Base URL of the metrics APIs backend (metrics.k8s.io, custom and
    /// external metrics). Without it, the caller starts its own. An https
    /// backend's certificate is not verified, as for an APIService with
    /// `insecureSkipTLSVerify` (the fake metrics server's is self-signed).
    #[arg(long, env = "HPA_SIM_METRICS_URL")]
    pub metrics_url: Option<String>,
    /// Run on a virtual clock starting at this instant (RFC 3339) instead of
    /// the wall clock. The clock then only moves when the harness advances it.
    #[arg(long)]
    pub virtual_clock: Option<Timestamp>,
    /// How long new workload pods stay Pending before Running (e.g. `2s`).
    #[arg(long, default_value = "0s")]
    pub pod_start_delay: SignedDuration,
    /// How long new workload pods stay unready after starting (e.g. `30s`).
    #[arg(long, default_value = "0s")]
    pub pod_ready_delay: SignedDuration,
    /// Watch events kept per resource for resumption (older: 410 Gone).
    #[arg(long, default_value_t = 10_000)]
    pub watch_history: usize,
}

/// The sim configuration `args` describe (metrics backend from
/// `--metrics-url`, if given).
pub fn config_from_args(args: &Args) -> SimConfig {
    SimConfig {
        clock: match args.virtual_clock {
            Some(start) => SimClock::Virtual(hpa_core::clock::VirtualClock::new(start)),
            None => SimClock::Wall,
        },
        watch_history: args.watch_history,
        pod_delays: PodDelays {
            running: args.pod_start_delay,
            ready: args.pod_ready_delay,
        },
        metrics: args.metrics_url.clone().map(Backend::Url),
        ..SimConfig::default()
    }
}

/// A kubeconfig for a plain-HTTP server at `server` (`http://host:port`).
pub fn kubeconfig_yaml(server: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: hpa-sim
  cluster:
    server: {server}
contexts:
- name: hpa-sim
  context:
    cluster: hpa-sim
    user: hpa-sim
    namespace: default
current-context: hpa-sim
users:
- name: hpa-sim
  user: {{}}
"
    )
}

/// Writes the kubeconfig for `server` to `path`.
pub fn write_kubeconfig(path: &Path, server: &str) -> Result<(), StandaloneError> {
    std::fs::write(path, kubeconfig_yaml(server)).map_err(|source| StandaloneError::Kubeconfig {
        path: path.to_owned(),
        source,
    })
}

/// Binds `args.listen`, writes the kubeconfig and serves `sim` until
/// `shutdown`. `on_ready` gets the bound address (useful with port 0).
pub async fn run(
    sim: Sim,
    args: &Args,
    on_ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), StandaloneError> {
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|source| StandaloneError::Bind {
            addr: args.listen,
            source,
        })?;
    let addr = listener
        .local_addr()
        .map_err(|source| StandaloneError::Bind {
            addr: args.listen,
            source,
        })?;
    write_kubeconfig(&args.kubeconfig, &format!("http://{addr}"))?;
    tracing::info!(%addr, kubeconfig = %args.kubeconfig.display(), "hpa-sim listening");
    on_ready(addr);
    crate::serve(sim, listener, shutdown)
        .await
        .map_err(StandaloneError::Serve)
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
    fn arguments_parse_and_the_command_is_well_formed() {
        Cli::command().debug_assert();
        let cli = Cli::parse_from([
            "sim",
            "--listen",
            "127.0.0.1:8080",
            "--pod-ready-delay",
            "30s",
            "--virtual-clock",
            "2026-01-01T00:00:00Z",
        ]);
        let config = config_from_args(&cli.args);
        assert_eq!(config.pod_delays.ready, SignedDuration::from_secs(30));
        assert!(matches!(config.clock, SimClock::Virtual(_)));
    }
}
