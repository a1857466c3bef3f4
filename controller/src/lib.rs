//! The HPA controller: a kube-rs shell around the pure decision core
//! (`hpa-core`), meant to replace kube-controller-manager's HPA controller
//! with the same flags and observable behaviour, or to shadow it (`--dry-run`).
//! The deployable product, in a crate of its own so that its binary
//! (`hpa-controller`, the image's entry point) links neither the test
//! harness nor the simulated cluster nor the fake metrics server.
//!
//! - [`cli`]: the command line (flags, kubeconfig, `run`), shared with
//!   `hpa-harness controller`;
//! - [`runtime`]: reflectors, work queue, workers, leader election, and the
//!   [`ControllerHandle`] that the CLI and the harness drive;
//! - [`reconcile`]: one HPA once: gather, let the core decide, apply;
//! - [`context`]: the shared [`Context`];
//! - [`client`]: the kube client without hidden retries, with a bounded request time;
//! - [`kubeconfig`]: the one kubeconfig loader (the harness's testbed uses it too);
//! - [`config`]: upstream flags and defaults;
//! - [`queue`]: the deduplicating, per-key exclusive work queue;
//! - [`scale`]: scale targets by discovery and the `/scale` subresource;
//! - [`slim_pod`]: the pod watch's object, only what the HPA reads;
//! - [`hpa_cache`]: the HPA watch cache, each HPA as its text;
//! - [`compact_text`]: that text, shortened by a dictionary of common fragments;
//! - [`pod_index`]: the pod cache (the core's pods) by namespace and label, read by reconciles;
//! - [`metrics_client`]: the aggregated metrics APIs: the client, the window's
//!   shared lists, and the one decoder of their bodies;
//! - [`label_index`]: entries by label, for the pod cache and a shared metrics list;
//! - [`watch_store`]: the live map, relist and ready signal behind the three watch caches;
//! - [`events`]: Kubernetes events on the injected clock;
//! - [`event_correlator`]: client-go's event aggregation, dedup and spam filter;
//! - [`history`]: per-HPA recommendations and scale events;
//! - [`decisions`]: the decision log behind `/debug/decisions` and
//!   `/debug/syncs`; [`packed_trace`]: its traces, packed as bytes;
//! - [`metrics`]: Prometheus metrics with upstream's names;
//! - [`memory`]: how a structure measures the bytes it holds (a leaf);
//!   [`memory_report`]: where the memory goes (`/debug/memory`);
//! - [`keys`]: the queue's `namespace/name` keys (a leaf);
//! - [`server`]: `/metrics`, `/healthz`, `/readyz`, `/debug/decisions`,
//!   `/debug/syncs`, `/debug/memory`;
//! - [`leader`]: Lease-based leader election;
//! - [`observe`]: opt-in reconcile observer and request-saving caches (load runs).

pub mod cli;
pub mod client;
pub mod compact_text;
pub mod config;
pub mod consistency;
pub mod context;
pub mod decisions;
pub mod deployment_scales;
pub mod event_correlator;
pub mod events;
pub mod flags;
pub mod generations;
pub mod history;
pub mod hpa_cache;
pub mod hpa_decode;
pub mod json_scan;
pub mod keys;
pub mod kubeconfig;
pub mod label_index;
pub mod leader;
pub mod memory;
pub mod memory_report;
pub mod metrics;
pub mod metrics_client;
pub mod observe;
pub mod on_demand;
pub mod packed_trace;
pub mod pod_index;
pub mod queue;
pub mod ratelimit;
pub mod reconcile;
pub mod release;
pub mod runtime;
pub mod scale;
pub mod server;
pub mod slim_pod;
pub mod watch_store;

pub use config::ControllerConfig;
pub use context::Context;
pub use history::{AgedRecommendation, AgedScaleEvent, Direction};
pub use observe::{Extensions, ReconcileObservation, ReconcileObserver};
pub use runtime::{
    ControllerHandle, ControllerOptions, LeaderElection, RunError, SyncMode, SyncReport,
};
