//! A simulated Kubernetes API server with a virtual clock.
//!
//! Scenarios and load runs need a cluster that answers in microseconds and
//! whose "wait five minutes" costs no wall time, while the controller still
//! runs its real kube-rs code. [`Sim`] is that cluster: an axum router that
//! speaks the Kubernetes REST API (discovery, namespaces, pods, events,
//! deployments, replicasets, statefulsets with `/scale`, HPAs v1 and v2,
//! leases, APIServices, and the aggregated metrics APIs proxied to a
//! backend), reachable over HTTP ([`serve`]) or in-process
//! ([`Sim::client`]). Every timestamp it writes comes from its clock.
//!
//! It is one Kubernetes release at a time ([`SimConfig::feature_gates`]:
//! 1.35, 1.36, 1.37 by default, or 1.38, with `--feature-gates` overrides), which
//! `/version` reports and which decides how HPAs are stored and validated.
//!
//! ```no_run
//! # async fn demo() {
//! let sim = hpa_sim::Sim::new(hpa_sim::SimConfig::default());
//! let client = sim.client();
//! let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::default_namespaced(client);
//! # let _ = pods;
//! sim.advance(jiff::SignedDuration::from_secs(300));
//! # }
//! ```

pub mod admin;
pub mod aggregation;
pub mod api;
mod backend;
pub mod convert;
pub mod crd;
pub mod error;
mod event_ttl;
pub mod faults;
pub mod hpa;
pub mod limits;
pub mod patch;
pub mod pod_names;
mod pods;
pub mod protobuf;
pub mod query;
pub mod resources;
mod revision;
mod rollout;
pub mod selector;
mod sim;
pub mod standalone;
mod state;
pub mod stats;
pub mod store;
pub mod table;
mod updater;
pub mod validate;
mod workloads;

pub use backend::Backend;
pub use error::ApiError;
pub use faults::{Faults, ScaleOverride};
pub use hpa_core::gates::FeatureGates;
pub use hpa_core::version::KubernetesVersion;
pub use pods::POD_NAMES_ANNOTATION;
pub use revision::{REVISION_LABEL, TEMPLATE_HASH_LABEL};
pub use sim::{DEFAULT_EVENT_TTL, Part, Sim, SimConfig};
pub use state::PodDelays;
pub use stats::RequestStats;

use std::future::Future;

impl Sim {
    /// The HTTP API as a router (a tower service; no socket needed): the
    /// Kubernetes API plus the harness's [`admin`] API under `/admin/v1/`.
    pub fn router(&self) -> axum::Router {
        admin::router(self.clone()).merge(api::router(self.clone()))
    }

    /// A kube client talking to this sim in-process, through the router as a
    /// tower service. Default namespace: `default`.
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.router(), "default")
    }
}

/// Serves the sim on `listener` until `shutdown` resolves. Open watches are
/// ended when it does, so the graceful shutdown does not wait for them; a
/// background task applies due pod transitions every 100 ms (for wall-clock
/// use, where no one calls [`Sim::advance`]).
pub async fn serve(
    sim: Sim,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = sim.router();
    serve_router(sim, router, listener, shutdown).await
}

/// [`serve`] with a router built from [`Sim::router`] by the caller (e.g.
/// with a layer that runs a controller when the admin API moves the clock).
pub async fn serve_router(
    sim: Sim,
    router: axum::Router,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let ticker_sim = sim.clone();
    let stop = tokio_util::sync::CancellationToken::new();
    let ticker_stop = stop.clone();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(100));
        loop {
            tokio::select! {
                _ = tick.tick() => ticker_sim.process_due(),
                () = ticker_stop.cancelled() => break,
            }
        }
    });
    let closing = sim.clone();
    let result = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            closing.close_watches();
        })
        .await;
    stop.cancel();
    let _ = ticker.await;
    result
}
