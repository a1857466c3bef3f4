//! The testbed: how a run gets a cluster, a fake metrics server and an HPA
//! controller, for Gherkin scenarios and load runs alike.
//!
//! - [`kind`]: which backend ([`BackendKind`]) and whose controller
//!   ([`ControllerKind`]);
//! - [`embedded`]: the simulated cluster and fake metrics server in this
//!   process, on one clock;
//! - [`process`]: `hpa-harness sim` as a child process;
//! - [`kubeconfig`] and [`connect`]: a cluster reached through a kubeconfig,
//!   our sim (driven through its admin API) or a real one (checked, with a
//!   fake node);
//! - [`target`], [`env`](mod@env) and [`cleanup`]: where scenarios run, one
//!   scenario's running parts, and clearing a shared cluster between
//!   scenarios.
//!
//! An embedded sim and a sim process are driven through the same
//! [`hpa_sim::admin::SimAdmin`] interface.

pub mod cleanup;
pub mod connect;
pub mod embedded;
pub mod env;
pub mod kind;
pub mod kubeconfig;
pub mod process;
pub mod target;

pub use kind::{BackendKind, ControllerKind};
