//! Real clusters: ephemeral kind and k3d clusters driven with `duct`, k3s in
//! testcontainers (feature `e2e`), and the tools they need.

pub mod ephemeral;
pub mod tools;
