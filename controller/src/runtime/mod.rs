//! Running the controller: reflectors for HPAs and pods, the work queue, N
//! workers, optional leader election, and the [`ControllerHandle`] through
//! which the CLI and the harness drive it.
//!
//! Two ways to trigger syncs ([`SyncMode`]):
//! - `Periodic` (wall clock): an HPA is queued when it appears or its spec
//!   changes, and again one sync period after each reconcile; failures are
//!   retried after a per-key backoff.
//! - `Manual` (virtual clock): nothing runs by itself; the harness moves the
//!   shared clock and calls [`ControllerHandle::sync_all_now`], so no real
//!   time passes and runs are reproducible.
//!
//! This file owns the options and errors; the rest is split by job:
//! `handle` (starting, catching the caches up, syncs on demand, stopping),
//! `watches` (the watch tasks that keep the caches, and the catch-up
//! check), `workers` (the main loop under the lease and the workers) and
//! `progress` (the per-key run counters a sync on demand waits on).

use std::sync::Arc;
use std::time::Duration;

use hpa_core::clock::Clock;
use kube::api::Api;

use super::config::ControllerConfig;
pub use super::generations::queued_at_once;
use super::leader::LeaseTiming;

mod handle;
mod progress;
mod watches;
mod workers;

pub use handle::{ControllerHandle, SyncReport};

/// Errors of running the controller.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Another replica took the Lease; upstream exits then, and so does `hpa-harness controller`.
    #[error("lost the leader lease {0}")]
    LostLeadership(String),
    /// The caches did not catch up with the API server in time.
    #[error("the controller's caches did not catch up with the API server within {0:?}")]
    CacheTimeout(Duration),
    /// Listing HPAs or pods for the cache barrier failed.
    #[error("cannot list {what} to check the caches")]
    List {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
    /// `sync_all_now` while another replica leads.
    #[error("this controller does not hold the leader lease")]
    NotLeader,
    /// A sync did not finish in time.
    #[error("HPAs {keys:?} were not reconciled within {timeout:?}")]
    SyncTimeout {
        keys: Vec<String>,
        timeout: Duration,
    },
    /// The controller task failed.
    #[error("the controller task ended abnormally")]
    Join(#[source] tokio::task::JoinError),
}

/// How syncs are triggered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// Wall clock: watch-driven and every sync period.
    Periodic,
    /// Virtual clock: only [`ControllerHandle::sync_all_now`].
    Manual,
}

/// Where and how to hold the leader Lease.
#[derive(Debug, Clone)]
pub struct LeaderElection {
    pub namespace: String,
    pub name: String,
    pub timing: LeaseTiming,
}

/// How to start a controller.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    pub config: ControllerConfig,
    pub clock: Arc<dyn Clock>,
    pub mode: SyncMode,
    /// Reporting instance of events and the Lease holder identity.
    pub identity: String,
    /// `None`: run without election (a single replica, or the harness).
    pub leader_election: Option<LeaderElection>,
    /// How long `sync_all_now` waits for caches and reconciles.
    pub sync_timeout: Duration,
    /// Watch and reconcile only this namespace (`None`: all). Scenarios
    /// running side by side on one real cluster each drive a controller of
    /// their own, which must leave the others' HPAs alone.
    pub namespace: Option<String>,
}

impl ControllerOptions {
    /// Options for the harness: manual syncs on `clock`, no election.
    pub fn manual(config: ControllerConfig, clock: Arc<dyn Clock>) -> Self {
        Self {
            config,
            clock,
            mode: SyncMode::Manual,
            identity: "hpa-harness".into(),
            leader_election: None,
            sync_timeout: Duration::from_secs(60),
            namespace: None,
        }
    }

    /// The same, watching and reconciling only `namespace`.
    #[must_use]
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// An API of kind `K` over the controller's namespace, or all.
    fn api<K>(&self, client: kube::Client) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        scoped_api(client, self.namespace.as_deref())
    }
}

/// An API of kind `K` over `namespace`, or over all namespaces.
fn scoped_api<K>(client: kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    }
}
