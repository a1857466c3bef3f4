//! Load testing: thousands of HPAs synced by concurrent workers, and the
//! figures users compare (`hpa-harness load`).

pub mod agree;
pub mod agreement;
pub mod churn;
pub mod cleanup;
pub mod cluster;
mod collect;
pub mod endpoint;
pub mod failures;
mod metric_kind;
pub mod options;
pub mod pod_wait;
pub mod proc_stats;
pub mod report;
pub mod run;
pub mod stats;
pub mod upstream;
mod workload;

pub use crate::testbed::{BackendKind, ControllerKind};
pub use options::{LoadError, LoadOptions, MetricProfile};
pub use run::run;
