//! hpa-harness: prove how Kubernetes HorizontalPodAutoscalers behave.
//!
//! The binary's shell: the HPA controller ([`controller`], crate
//! `hpa-controller`) around the pure decision core (`hpa-core`), the
//! Gherkin runner ([`gherkin`]) and the command line ([`cli`]). See `docs/ARCHITECTURE.md`.

pub mod cli;
pub mod cluster;
/// The HPA controller (crate `hpa-controller`), under its former path.
pub use hpa_controller as controller;
pub mod gherkin;
pub mod keda;
pub mod load;
pub mod plot;
pub mod replay;
pub mod report;
pub mod testbed;
