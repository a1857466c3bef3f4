//! What `hpa-harness sim` serves beside the simulated API server: the
//! workloads' loads, set over the built-in fake metrics server's control API
//! and mirrored into it as the pods' usage (`loads`), and our HPA controller
//! in the sim process on the sim's clock (`sim --controller`: `controller`).
//! The command line (`cli::sim`) starts them.

pub mod controller;
pub mod loads;
