//! `hpa-harness replay`: "what will my HPA do when traffic looks like
//! this?" The HPA manifest (and its workload's) go to the embedded
//! simulated cluster; the series ([`series`]) is fed to the pods through
//! the fake metrics server, one sync period at a time on the virtual clock
//! ([`run`]); the decisions become a summary ([`summary`]) and a timeline
//! picture ([`crate::plot`]).

pub mod error;
pub mod keda;
pub mod manifest;
pub mod prometheus;
pub mod run;
pub mod series;
pub mod summary;

pub use error::ReplayError;
pub use run::{ReplayOptions, ReplayRun, Spread, replay};
pub use summary::Summary;
