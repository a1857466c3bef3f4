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

use super::controller_process::{ControllerProcess, ProcessError};
use hpa_controller::config::ControllerConfig;
use hpa_controller::decisions::DecisionRecord;
use hpa_controller::on_demand::SeedRequest;
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
            Self::Shipped => Extensions::shipped(config.sync_period),
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
    /// The controller process failed.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// The controller was already stopped.
    #[error("the HPA controller has stopped")]
    Stopped,
}

/// The controller a [`Driver`] drives.
#[derive(Debug)]
enum Running {
    /// In this process.
    InProcess(Box<ControllerHandle>),
    /// The `hpa-controller` binary as a process of its own.
    Process(Box<ControllerProcess>),
}

/// A running controller for one scenario; stopped when dropped.
#[derive(Debug)]
pub struct Driver {
    running: Option<Running>,
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
            running: Some(Running::InProcess(Box::new(handle))),
        })
    }

    /// Drives the `hpa-controller` binary at `binary` instead, started with
    /// `flags` against the cluster of `kubeconfig` and `context`, synced on
    /// demand on `clock`.
    pub async fn start_process(
        binary: &std::path::Path,
        kubeconfig: Option<&std::path::Path>,
        context: Option<&str>,
        flags: &[String],
        clock: Arc<dyn Clock>,
    ) -> Result<Self, DriverError> {
        let process = ControllerProcess::start(binary, kubeconfig, context, flags, clock).await?;
        Ok(Self {
            running: Some(Running::Process(Box::new(process))),
        })
    }

    fn running(&self) -> Result<&Running, DriverError> {
        self.running.as_ref().ok_or(DriverError::Stopped)
    }

    /// Reconciles every HPA once, now. Errors of single HPAs are part of the
    /// scenario (they show in conditions and events), not of the step.
    pub async fn sync_all_now(&self) -> Result<(), DriverError> {
        match self.running()? {
            Running::InProcess(handle) => {
                handle.sync_all_now().await?;
            }
            Running::Process(process) => {
                process.sync(false).await?;
            }
        }
        Ok(())
    }

    /// Reconciles, now, the HPAs the release queues at once (new ones and
    /// spec changes, from 1.37); see `ControllerHandle::sync_queued_now`.
    /// Returns how many were reconciled.
    pub async fn sync_queued_now(&self) -> Result<usize, DriverError> {
        let report = match self.running()? {
            Running::InProcess(handle) => handle.sync_queued_now().await?,
            Running::Process(process) => process.sync(true).await?,
        };
        Ok(report.reconciled.len())
    }

    /// Hands seeded history to the controller.
    pub async fn seed(&self, seed: &Seed) -> Result<(), DriverError> {
        match (self.running()?, seed) {
            (
                Running::InProcess(handle),
                Seed::Recommendations {
                    namespace,
                    name,
                    entries,
                },
            ) => handle.seed_recommendations(namespace, name, entries),
            (
                Running::InProcess(handle),
                Seed::ScaleEvents {
                    namespace,
                    name,
                    events,
                },
            ) => handle.seed_scale_events(namespace, name, events),
            (Running::Process(process), seed) => {
                let (namespace, name, recommendations, scale_events) = match seed {
                    Seed::Recommendations {
                        namespace,
                        name,
                        entries,
                    } => (namespace, name, Some(entries.clone()), None),
                    Seed::ScaleEvents {
                        namespace,
                        name,
                        events,
                    } => (namespace, name, None, Some(events.clone())),
                };
                process
                    .seed(SeedRequest {
                        // The process puts its own clock's now here.
                        now: jiff::Timestamp::UNIX_EPOCH,
                        namespace: namespace.clone(),
                        name: name.clone(),
                        recommendations,
                        scale_events,
                    })
                    .await?;
            }
        }
        Ok(())
    }

    /// The stabilization history of an HPA, oldest first (`None`: none yet).
    pub async fn recommendations(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Vec<AgedRecommendation>>, DriverError> {
        Ok(match self.running()? {
            Running::InProcess(handle) => handle.recommendations(namespace, name),
            Running::Process(process) => process.history(namespace, name).await?.recommendations,
        })
    }

    /// The scale events of an HPA.
    pub async fn scale_events(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<AgedScaleEvent>, DriverError> {
        Ok(match self.running()? {
            Running::InProcess(handle) => handle.scale_events(namespace, name),
            Running::Process(process) => process.history(namespace, name).await?.scale_events,
        })
    }

    /// The latest `n` decisions of an HPA, oldest first. A controller
    /// process keeps its decisions to itself (its `/debug/decisions` is for
    /// people): none are read from it.
    pub fn decisions(&self, namespace: &str, name: &str, n: usize) -> Vec<DecisionRecord> {
        match &self.running {
            Some(Running::InProcess(h)) => h.decisions(namespace, name, n),
            _ => Vec::new(),
        }
    }

    /// The latest `n` decisions of an HPA as a controller process's
    /// `/debug/decisions` shows them (JSON, oldest first), for a failure
    /// report; none for a controller in this process or when it cannot say.
    pub async fn process_decisions(
        &self,
        namespace: &str,
        name: &str,
        n: usize,
    ) -> Vec<serde_json::Value> {
        let Some(Running::Process(process)) = &self.running else {
            return Vec::new();
        };
        let Ok(mut document) = process.decisions_document().await else {
            return Vec::new();
        };
        let key = format!("{namespace}/{name}");
        let Some(serde_json::Value::Array(hpas)) = document.get_mut("hpas").map(std::mem::take)
        else {
            return Vec::new();
        };
        let Some(mut hpa) = hpas
            .into_iter()
            .find(|h| h.get("key").and_then(serde_json::Value::as_str) == Some(key.as_str()))
        else {
            return Vec::new();
        };
        let Some(serde_json::Value::Array(decisions)) =
            hpa.get_mut("decisions").map(std::mem::take)
        else {
            return Vec::new();
        };
        let skip = decisions.len().saturating_sub(n);
        decisions.into_iter().skip(skip).collect()
    }

    /// Every HPA key (`namespace/name`) the controller decided about (none
    /// for a controller process, see [`Driver::decisions`]).
    pub fn keys(&self) -> Vec<String> {
        match &self.running {
            Some(Running::InProcess(h)) => h.context().decisions.keys(),
            _ => Vec::new(),
        }
    }

    /// The controller's `/metrics` text.
    pub async fn metrics_text(&self) -> Result<String, DriverError> {
        Ok(match self.running()? {
            Running::InProcess(handle) => handle.metrics_text(),
            Running::Process(process) => process.metrics_text().await?,
        })
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let Some(running) = self.running.take() else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            match running {
                Running::InProcess(handle) => {
                    if let Err(e) = handle.shutdown().await {
                        tracing::debug!(error = %e, "stopping a scenario's controller");
                    }
                }
                Running::Process(process) => process.stop().await,
            }
        });
    }
}
