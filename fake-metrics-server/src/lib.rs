//! A scripted server for the three Kubernetes metrics APIs.
//!
//! Scenario authors declare pods, their usage, custom, object and external
//! metrics, a timeline and faults in a script ([`script`]); the server
//! answers exactly that over HTTP(S) to any Kubernetes client, either as an
//! aggregated APIService of a real cluster or beside the simulated one.
//! [`types`] re-exports the metrics API wire types (crate `hpa-metrics-api`),
//! which the controller also uses to read real metrics servers.
//!
//! - [`app`] builds the router (metrics APIs, discovery, health, control);
//! - [`run`] serves it on a listener, plain or TLS, until shutdown;
//! - [`client::ControlClient`] scripts a running server;
//! - [`cli`] is the command line, shared by the binary and
//!   `hpa-harness metrics-server`.

pub mod api;
mod api_error;
pub mod auth;
pub mod cli;
pub mod client;
pub mod control;
mod document;
mod duration;
pub mod labels;
pub mod limits;
pub mod log;
mod metric;
mod pod;
mod quantity;
pub mod rules;
pub mod script;
pub mod server;
pub mod state;
pub mod watch;
/// The metrics API wire types, shared with the controller.
pub use hpa_metrics_api as types;

pub use server::{
    Transport, app, app_with_token, run, run_with_token, self_signed_tls, tls_from_pem,
};
pub use state::AppState;
