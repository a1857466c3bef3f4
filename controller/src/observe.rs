//! Extensions of a controller run: an observer that sees every reconcile's
//! core inputs and decision (a load run records decisions through it), and
//! two request-saving caches.
//!
//! Two configurations matter. `hpa-controller` runs by default with the
//! caches on ([`Extensions::shipped`]); `--upstream-requests` turns them
//! off and makes upstream's requests exactly (`Extensions::default()`, also
//! what [`ControllerHandle::start`] uses). The harness drives the shipped
//! one unless told otherwise, and its scenario library runs under both.
//!
//! [`ControllerHandle::start`]: super::ControllerHandle::start

use std::sync::Arc;
use std::time::{Duration, Instant};

use hpa_core::decide::{Decision, RescaleOutcome};
use hpa_core::{DecisionInput, HpaHistory};
use jiff::Timestamp;

/// Everything one reconcile gave the core and got back, so the core can be
/// replayed on exactly the same inputs. Of `finish`'s outcome only a
/// summary is kept: it is a pure function of the decision kept whole, and
/// copying it too was about 4 % of a sync's CPU in a load run.
#[derive(Debug, Clone)]
pub struct ReconcileObservation {
    /// `namespace/name` of the HPA.
    pub key: String,
    /// The inputs of `hpa_core::decide`.
    pub input: DecisionInput,
    /// The history `decide` was given.
    pub history: HpaHistory,
    /// The core configuration `decide` was given.
    pub config: hpa_core::DecisionConfig,
    /// `now` of `decide`.
    pub now: Timestamp,
    /// What `decide` returned.
    pub decision: Decision,
    /// What the shell reported to `finish` about the scale write.
    pub rescale: RescaleOutcome,
    /// `now` of `finish`.
    pub finished_at: Timestamp,
    /// The desired replica count of the status `finish` returned.
    pub desired_replicas: i32,
    /// Whether `finish` found the status changed (the shell then writes it,
    /// unless in dry run).
    pub status_changed: bool,
    /// Wall-clock instant the reconcile started (dequeue).
    pub started: Instant,
    /// Wall time of the whole reconcile, status write and events included.
    pub duration: Duration,
}

/// Receives one observation per reconcile that reached the core's decision.
/// Called on the worker after the reconcile finished: keep it cheap (e.g.
/// send to a channel).
pub trait ReconcileObserver: Send + Sync {
    /// One reconcile's inputs, decision and timing.
    fn observe(&self, observation: ReconcileObservation);
}

/// Opt-in extensions of a controller run.
#[derive(Clone, Default)]
pub struct Extensions {
    /// Called after each reconcile that reached the core's decision.
    pub observer: Option<Arc<dyn ReconcileObserver>>,
    /// Read `apps/v1` Deployment scale targets from a Deployment watch cache
    /// instead of a GET of `/scale` per sync (falls back to the GET when the
    /// Deployment is not cached or its selector has expressions).
    pub scale_from_cache: bool,
    /// Share one namespace-wide `metrics.k8s.io` pod list among the HPAs of
    /// a namespace synced within this window, each filtering it by its own
    /// selector; `None`: one list per HPA and metric, as upstream.
    pub metrics_cache: Option<Duration>,
    /// With `metrics_cache`: also list external metric series once per
    /// namespace and metric and filter them by their labels, for each HPA
    /// whose share of that list was found equal to its own request's
    /// answer (a server that refuses the list, as KEDA's adapter does, or
    /// answers it differently, leaves each HPA its own request).
    pub share_external: bool,
}

impl Extensions {
    /// What `hpa-controller` runs with when no flag says otherwise: scale
    /// targets from the Deployment watch, and the metrics lists shared
    /// within [`shared_list_window`] of `sync_period`, external series
    /// lists too wherever the server answers them as it answers each HPA's
    /// own request (KEDA's adapter refuses them: its HPAs keep their own).
    /// One definition, so that the binary, the scenarios and the loads all
    /// drive the configuration users deploy.
    pub fn shipped(sync_period: Duration) -> Self {
        Self {
            observer: None,
            scale_from_cache: true,
            metrics_cache: Some(shared_list_window(sync_period)),
            share_external: true,
        }
    }

    /// Whether any request-saving cache is on (else: upstream's requests).
    pub fn caches_on(&self) -> bool {
        self.scale_from_cache || self.metrics_cache.is_some()
    }
}

/// How long one namespace-wide metrics list serves the HPAs synced after
/// it: a tenth of the sync period, at most a second, far below any metrics
/// pipeline's resolution (metrics-server scrapes every 15 s or more).
pub fn shared_list_window(sync_period: Duration) -> Duration {
    (sync_period / 10).min(Duration::from_secs(1))
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("observer", &self.observer.is_some())
            .field("scale_from_cache", &self.scale_from_cache)
            .field("metrics_cache", &self.metrics_cache)
            .field("share_external", &self.share_external)
            .finish()
    }
}
