//! The scenario's handle on the HPA controller: the real controller
//! ([`ControllerHandle`]) in manual sync mode on the scenario's cluster and
//! clock. Syncing, seeding and reading its in-memory history, decision
//! traces and Prometheus text all go through it.

use std::sync::Arc;

use hpa_core::clock::Clock;

use hpa_controller::config::ControllerConfig;
use hpa_controller::decisions::DecisionRecord;
use hpa_controller::{
    AgedRecommendation, AgedScaleEvent, ControllerHandle, ControllerOptions, RunError,
};

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
    /// `clock`, in `namespace` only when given; it syncs only when asked.
    pub async fn start(
        config: ControllerConfig,
        client: kube::Client,
        clock: Arc<dyn Clock>,
        namespace: Option<String>,
    ) -> Result<Self, DriverError> {
        let options = ControllerOptions::manual(config, clock);
        let options = match namespace {
            Some(ns) => options.in_namespace(ns),
            None => options,
        };
        let handle = ControllerHandle::start(client, options);
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
