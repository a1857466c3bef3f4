//! hpa-harness: prove how Kubernetes HorizontalPodAutoscalers behave.
//!
//! The harness around the deployable controller (crate `hpa-controller`,
//! itself a shell around the pure decision core `hpa-core`) and the pure
//! model of KEDA (`hpa-keda`):
//!
//! - [`gherkin`]: the scenario runner (`hpa-harness test`, `explain`,
//!   `conformance`), the step language of `docs/steps.md` on cucumber;
//! - [`testbed`]: where a run's scenarios go (the embedded simulated
//!   cluster, `hpa-harness sim` as a process, a cluster reached through a
//!   kubeconfig) and the clusters made for a run (kind, k3d, k3s);
//! - [`load`]: load tests of many HPAs and their report;
//! - [`replay`]: an HPA or ScaledObject over a recorded series, no Gherkin;
//! - [`live`]: a live cluster, read-only: `explain NAMESPACE/NAME` and `capture`;
//! - [`plot`] and [`report`]: pictures and the HTML report of runs;
//! - [`sim_service`]: what `hpa-harness sim` serves beside the simulated
//!   cluster (workload loads, our controller in its process);
//! - [`cli`]: one subcommand per job.
//!
//! `docs/ARCHITECTURE.md` draws how these and the workspace's crates
//! depend on each other.

pub mod cli;
pub mod gherkin;
pub mod live;
pub mod load;
pub mod plot;
pub mod replay;
pub mod report;
pub mod sim_service;
pub mod testbed;
