//! Load testing: thousands of HPAs synced by concurrent workers, and the
//! figures users compare (`hpa-harness load`).

pub mod agree;
pub mod remote;
pub mod report;
pub mod run;
pub mod stats;
pub mod upstream;

pub use run::{BackendKind, ControllerKind, LoadError, LoadOptions, MetricProfile, run};
