//! The Gherkin runner: the step language of `docs/steps.md` on the
//! simulated cluster.
//!
//! Each scenario gets a fresh [`world::HpaWorld`] that owns its own
//! [`hpa_sim::Sim`], fake metrics server (on `127.0.0.1:0`, scripted only
//! through its HTTP control API) and HPA controller, all sharing one
//! [`hpa_core::clock::VirtualClock`]: "When 5m pass" costs no wall time.
//! Steps live in [`steps`], grouped by domain; [`runner::run`] runs feature
//! files or folders for `hpa-harness test`, `hpa-harness explain` and
//! `tests/features.rs`.

pub mod cells;
pub mod cluster_report;
pub mod conformance;
pub mod explain;
pub mod feature_files;
pub mod kinds;
pub mod line_filter;
mod longest_first;
pub mod not_runnable;
pub mod outcome;
pub mod params;
pub mod pods;
pub mod record;
pub mod runner;
pub mod selection;
mod shared_cluster;
pub mod step_error;
pub mod steps;
pub mod target;
pub mod versions;
pub mod world;

pub use outcome::{RunSummary, ScenarioOutcome, Verdict};
pub use runner::{BackendKind, RunError, RunOptions, run};
pub use world::HpaWorld;
