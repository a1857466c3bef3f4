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
//! - [`cluster`]: clusters made for one run (kind and k3d with `duct`, k3s
//!   with `testcontainers`), the fake node and the host's metrics server;
//! - [`target`], [`env`](mod@env), [`shared`] and [`cleanup`]: where
//!   scenarios run, one scenario's running parts, what scenarios running
//!   side by side on a real cluster share, and clearing what runs left;
//! - [`controller_manager`]: the flags the cluster's own HPA controller
//!   runs with, where it shows them;
//! - [`workload`]: the workloads the harness creates, and their pods' place
//!   on the fake node.
//!
//! An embedded sim and a sim process are driven through the same
//! [`hpa_sim::admin::SimAdmin`] interface.

pub mod cleanup;
pub mod cluster;
pub mod connect;
pub mod controller;
pub mod controller_manager;
pub mod controller_process;
pub mod embedded;
pub mod env;
pub mod kind;
pub mod kubeconfig;
pub mod options;
pub mod process;
pub mod shared;
pub mod start;
pub mod target;
pub mod workload;

pub use kind::{BackendKind, ControllerKind};
pub use options::{TestbedArgs, TestbedOptions};
pub use start::{Purpose, Testbed, TestbedError};
