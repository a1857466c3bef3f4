//! What the controller's integration tests share (its bench includes
//! [`cluster_thread`] too, and the workspace's tests [`controller_process`]).
#![allow(dead_code)] // reason: each test binary uses some of these

pub mod cluster_thread;
pub mod controller_process;
