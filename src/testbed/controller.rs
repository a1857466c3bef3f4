//! Our HPA controller on a testbed's cluster: one way to start it
//! ([`start`]) for each way the harness runs it ([`Role`]), and the
//! scenario's handle on it ([`Driver`]).
//!
//! Scenarios and replays sync it when a step says so, on their clock;
//! `hpa-harness sim --controller` runs it inside the sim, on the sim's
//! clock; a load run measures it on the wall clock, with its observer and
//! caches. The controller is the same ([`ControllerHandle`]) in each.

use std::sync::Arc;
use std::time::Duration;

use hpa_core::clock::Clock;

use hpa_controller::config::ControllerConfig;
use hpa_controller::decisions::DecisionRecord;
use hpa_controller::{
    AgedRecommendation, AgedScaleEvent, ControllerHandle, ControllerOptions, Extensions, RunError,
    SyncMode,
};

/// Which of `hpa-controller`'s two configurations our controller runs
/// with. Scenarios, replays and `hpa-harness sim --controller` drive the
/// shipped one unless told otherwise (`--upstream-requests`); the scenario
/// library runs under both (`tests/features.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Requests {
    /// `hpa-controller`'s defaults: scale targets from the Deployment
    /// watch, metrics lists shared within a window
    /// ([`Extensions::shipped`]).
    #[default]
    Shipped,
    /// `hpa-controller --upstream-requests`: upstream's requests exactly, a
    /// GET of `/scale` and one metrics list per HPA and metric.
    Upstream,
}

impl Requests {
    /// The controller's extensions for this configuration under `config`.
    pub fn extensions(self, config: &ControllerConfig) -> Extensions {
        match self {
            Self::Shipped => Extensions::shipped(config.sync_period, false),
            Self::Upstream => Extensions::default(),
        }
    }

    /// How reports name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shipped => "shipped",
            Self::Upstream => "upstream-requests",
        }
    }
}

impl std::fmt::Display for Requests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the harness runs our controller.
pub enum Role {
    /// A scenario's or a replay's: synced only when asked, on `clock`,
    /// watching `namespace` only when given (a real cluster's scenarios each
    /// keep to their own), with `extensions` (those of a [`Requests`]).
    Scenario {
        clock: Arc<dyn Clock>,
        namespace: Option<String>,
        extensions: Extensions,
    },
    /// `hpa-harness sim --controller`'s, on the sim's `clock`: every sync
    /// period by itself on the wall clock (`periodic`), or when the sim's
    /// clock is moved on a virtual one.
    InSim {
        clock: Arc<dyn Clock>,
        periodic: bool,
        requests: Requests,
    },
    /// A load run's: every sync period on the testbed's `clock` (the wall
    /// clock), observed and with the load's request-saving caches.
    Load {
        clock: Arc<dyn Clock>,
        extensions: Extensions,
    },
}

/// Starts our controller with `config` on `client`, run as `role` says.
pub fn start(client: kube::Client, config: ControllerConfig, role: Role) -> ControllerHandle {
    let (clock, mode, identity, namespace, extensions) = match role {
        Role::Scenario {
            clock,
            namespace,
            extensions,
        } => (
            clock,
            SyncMode::Manual,
            "hpa-harness",
            namespace,
            extensions,
        ),
        Role::InSim {
            clock,
            periodic,
            requests,
        } => (
            clock,
            if periodic {
                SyncMode::Periodic
            } else {
                SyncMode::Manual
            },
            "hpa-harness-sim",
            None,
            requests.extensions(&config),
        ),
        Role::Load { clock, extensions } => (
            clock,
            SyncMode::Periodic,
            "hpa-harness-load",
            None,
            extensions,
        ),
    };
    ControllerHandle::start_with(
        client,
        ControllerOptions {
            config,
            clock,
            mode,
            identity: identity.into(),
            leader_election: None,
            sync_timeout: Duration::from_secs(60),
            namespace,
        },
        extensions,
    )
}

/// History to hand to the controller once it exists (ages as of the step,
/// which is also when the controller gets it: time only moves once the
/// controller runs).
#[derive(Debug, Clone)]
pub enum Seed {
    Recommendations {
        namespace: String,
        name: String,
        entries: Vec<hpa_controller::AgedRecommendation>,
    },
    ScaleEvents {
        namespace: String,
        name: String,
        events: Vec<hpa_controller::AgedScaleEvent>,
    },
}

/// Why the controller could not be driven.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// A sync did not complete.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The controller was already stopped.
    #[error("the HPA controller has stopped")]
    Stopped,
}

/// A running controller for one scenario; stopped when dropped.
#[derive(Debug)]
pub struct Driver {
    handle: Option<ControllerHandle>,
}

impl Driver {
    /// Starts the controller with `config` on `client`, reading time from
    /// `clock`, in `namespace` only when given, with `extensions` (those of
    /// a [`Requests`]); it syncs only when asked.
    pub async fn start(
        config: ControllerConfig,
        client: kube::Client,
        clock: Arc<dyn Clock>,
        namespace: Option<String>,
        extensions: Extensions,
    ) -> Result<Self, DriverError> {
        let handle = start(
            client,
            config,
            Role::Scenario {
                clock,
                namespace,
                extensions,
            },
        );
        Ok(Self {
            handle: Some(handle),
        })
    }

    fn handle(&self) -> Result<&ControllerHandle, DriverError> {
        self.handle.as_ref().ok_or(DriverError::Stopped)
    }

    /// Reconciles every HPA once, now. Errors of single HPAs are part of the
    /// scenario (they show in conditions and events), not of the step.
    pub async fn sync_all_now(&self) -> Result<(), DriverError> {
        self.handle()?.sync_all_now().await?;
        Ok(())
    }

    /// Reconciles, now, the HPAs the release queues at once (new ones and
    /// spec changes, from 1.37); see `ControllerHandle::sync_queued_now`.
    /// Returns how many were reconciled.
    pub async fn sync_queued_now(&self) -> Result<usize, DriverError> {
        Ok(self.handle()?.sync_queued_now().await?.reconciled.len())
    }

    /// Hands seeded history to the controller.
    pub fn seed(&self, seed: &Seed) -> Result<(), DriverError> {
        let handle = self.handle()?;
        match seed {
            Seed::Recommendations {
                namespace,
                name,
                entries,
            } => {
                handle.seed_recommendations(namespace, name, entries);
            }
            Seed::ScaleEvents {
                namespace,
                name,
                events,
            } => {
                handle.seed_scale_events(namespace, name, events);
            }
        }
        Ok(())
    }

    /// The stabilization history of an HPA, oldest first (`None`: none yet).
    pub fn recommendations(&self, namespace: &str, name: &str) -> Option<Vec<AgedRecommendation>> {
        self.handle.as_ref()?.recommendations(namespace, name)
    }

    /// The scale events of an HPA.
    pub fn scale_events(&self, namespace: &str, name: &str) -> Vec<AgedScaleEvent> {
        self.handle
            .as_ref()
            .map(|h| h.scale_events(namespace, name))
            .unwrap_or_default()
    }

    /// The latest `n` decisions of an HPA, oldest first.
    pub fn decisions(&self, namespace: &str, name: &str, n: usize) -> Vec<DecisionRecord> {
        self.handle
            .as_ref()
            .map(|h| h.decisions(namespace, name, n))
            .unwrap_or_default()
    }

    /// Every HPA key (`namespace/name`) the controller decided about.
    pub fn keys(&self) -> Vec<String> {
        self.handle
            .as_ref()
            .map(|h| h.context().decisions.keys())
            .unwrap_or_default()
    }

    /// The controller's `/metrics` text.
    pub fn metrics_text(&self) -> String {
        self.handle
            .as_ref()
            .map(ControllerHandle::metrics_text)
            .unwrap_or_default()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move {
                if let Err(e) = handle.shutdown().await {
                    tracing::debug!(error = %e, "stopping a scenario's controller");
                }
            });
        }
    }
}
