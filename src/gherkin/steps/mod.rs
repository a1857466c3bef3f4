//! Step definitions, grouped by domain. Each step is a few lines that parse
//! its captures and call [`super::world::HpaWorld`].

pub mod controller;
pub mod expect;
pub mod hpa;
pub mod keda;
pub mod manifests;
pub mod metrics;
pub mod rollouts;
pub mod time;
pub mod workloads;

pub(crate) use super::cells::{Table, age, count, doc_string};
