//! The simulated cluster and the fake metrics server in this process, on
//! one clock: the `hpa-embedded` crate, which the controller's integration
//! tests start too.

pub use hpa_embedded::{Embedded, serve_metrics};
