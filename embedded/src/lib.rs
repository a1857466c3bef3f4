//! The simulated cluster and the fake metrics server in this process, on
//! one clock: the sim serves the metrics APIs from the fake server's router
//! (no socket), and both read the same virtual clock (or the wall clock).
//!
//! A crate of its own, above `hpa-sim` and `fake-metrics-server`, so that
//! the harness's testbed and the controller's integration tests (a
//! dev-dependency there) start both the same way.

use fake_metrics_server::AppState;
use hpa_core::clock::{ScenarioClock, VirtualClock};
use hpa_sim::{Backend, Sim, SimConfig};
use tokio_util::sync::{CancellationToken, DropGuard};

/// A simulated cluster and its fake metrics server.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// The cluster.
    pub sim: Sim,
    /// The fake metrics server's state, which scripts its data.
    pub metrics: AppState,
}

impl Embedded {
    /// Both on `clock` (`None`: the wall clock), the sim otherwise as
    /// `config` says.
    pub fn new(clock: Option<VirtualClock>, config: SimConfig) -> Self {
        let clock = clock.map_or_else(ScenarioClock::wall, ScenarioClock::Virtual);
        let metrics = AppState::new(clock.clone());
        let sim = Sim::new(SimConfig {
            clock,
            metrics: Some(Backend::Router(fake_metrics_server::app(metrics.clone()))),
            ..config
        });
        Self { sim, metrics }
    }

    /// Serves the fake metrics server's HTTP API (its control API included)
    /// on `127.0.0.1:0` until the guard drops; answers its base URL.
    pub async fn serve_metrics(&self) -> std::io::Result<(String, DropGuard)> {
        serve_metrics(self.metrics.clone()).await
    }
}

/// Serves a fake metrics server of this process over HTTP (its control API
/// included) on `127.0.0.1:0` until the guard drops; answers its base URL.
pub async fn serve_metrics(state: AppState) -> std::io::Result<(String, DropGuard)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move {
        let shutdown = async move { stopped.cancelled().await };
        if let Err(e) = fake_metrics_server::run(
            listener,
            state,
            fake_metrics_server::Transport::Plain,
            shutdown,
        )
        .await
        {
            tracing::warn!(error = %e, "the embedded metrics server stopped");
        }
    });
    Ok((format!("http://{addr}"), stop.drop_guard()))
}
