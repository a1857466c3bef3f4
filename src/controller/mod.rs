//! The HPA controller: a kube-rs shell around the pure decision core
//! (`hpa-core`).
//!
//! Pieces: [`config`] (upstream flags), [`queue`] (the work queue),
//! [`metrics`] (Prometheus), [`leader`] (Lease election), [`scale`] (scale
//! targets by discovery), [`events`] (Kubernetes events).

pub mod config;
pub mod decisions;
pub mod events;
pub mod leader;
pub mod metrics;
pub mod queue;
pub mod scale;
pub mod server;
