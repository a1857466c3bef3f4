//! Real clusters: ephemeral kind and k3d clusters driven with `duct`, k3s in
//! testcontainers (feature `e2e`), a genuine control plane from its
//! binaries, and the tools they need.

pub mod control_plane;
pub mod ephemeral;
pub mod fake_node;
pub mod host_metrics;
#[cfg(feature = "e2e")]
pub mod k3s;
pub mod preflight;
pub mod session;
pub mod tools;
