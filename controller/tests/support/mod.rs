//! What the controller's integration tests share: the simulated cluster
//! and the fake metrics server in this process, on one clock (the harness's
//! `testbed::embedded`, of which these tests need only the start).

use fake_metrics_server::AppState;
use hpa_core::clock::{ScenarioClock, VirtualClock};
use hpa_sim::{Backend, Sim, SimConfig};

/// A simulated cluster and its fake metrics server: the sim serves the
/// metrics APIs from the fake server's router (no socket), and both read
/// the same clock.
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
}
