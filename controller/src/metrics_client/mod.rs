//! Reads metrics through the API server's aggregated metrics APIs, as
//! upstream's `metrics/client.go` does: `metrics.k8s.io/v1beta1` for pod
//! resources, `custom.metrics.k8s.io` (v1beta2, else v1beta1, chosen by
//! discovery) for pod and object metrics, `external.metrics.k8s.io/v1beta1`
//! for external ones.
//!
//! Each fetch returns the core's [`Fetched`](hpa_core::decide::Fetched)
//! value; errors become the text upstream's client returns (`unable to
//! fetch metrics from ... API: ...`), because that text ends up in
//! conditions and events.
//!
//! How the pieces relate:
//! - [`MetricsClient`] (`client`) makes the requests, and with shared
//!   lists on, takes them from the window's cache (`shared`);
//! - `decode` turns a pod or custom metrics list body into the core's
//!   samples. The shared lists go through one decoder: [`scan`] (the usual
//!   shape, fast) or the slim serde types of [`slim`] (anything else, and
//!   the errors), both giving the texts of [`raw`]. The per-HPA requests,
//!   upstream's own, keep `hpa_metrics_api`'s owned types (the one
//!   definition shared with the fake server), which check every field as
//!   upstream does; they are also the slim decode's test oracle, and decode
//!   the external metrics lists.

mod client;
mod decode;
pub mod raw;
pub mod scan;
mod shared;
pub mod slim;

pub use client::MetricsClient;
pub use raw::CustomVersion;
