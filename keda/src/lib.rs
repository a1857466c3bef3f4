//! KEDA ScaledObjects as inputs: what KEDA (pinned: v2.20.1, see
//! `docs/keda.md`) makes of a ScaledObject, reproduced without IO.
//!
//! KEDA turns a ScaledObject into an HPA ([`hpa`]) whose External metrics
//! its metrics adapter answers ([`adapter`]), and scales the target itself
//! between 0 and the HPA's minimum ([`operator`]). [`KedaLoop`] runs these
//! in order, one turn before each HPA sync; the harness's scenarios and
//! replays drive it next to the HPA controller. Each module here is pure:
//! time and the trigger readings are arguments.

pub mod adapter;
pub mod cycle;
pub mod formula;
pub mod hpa;
pub mod operator;
pub mod scaled_object;
pub mod scalers;
pub mod status;

pub use cycle::{GeneratedHpa, KedaLoop, Readings, Scale, Step};
pub use scaled_object::{ScaledObject, ScaledObjectError};

/// The KEDA release whose behaviour this crate reproduces (the generated
/// HPA's `app.kubernetes.io/version` label).
pub const KEDA_VERSION: &str = "2.20.1";
