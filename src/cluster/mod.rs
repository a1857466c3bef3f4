//! Real clusters: ephemeral kind and k3d clusters driven with `duct`, k3s in
//! testcontainers (feature `e2e`), and the tools they need.

pub mod ephemeral;
pub mod fake_node;
#[cfg(feature = "e2e")]
pub mod k3s;
pub mod preflight;
pub mod tools;
