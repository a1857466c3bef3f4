//! Bounds that keep one request from holding the cluster: how many pods a
//! workload creates while the lock is held, and how many it may have.
//!
//! The API server never creates pods itself: the ReplicaSet controller does,
//! at most `BurstReplicas` (500) per sync, so a write of `replicas: 2e9` costs
//! the server nothing. The sim creates pods as part of the write (scenarios
//! see them when the write returns), so it follows the same burst: a batch
//! per lock, the lock released between batches, the rest settled before the
//! write returns.

/// Pods a workload creates per batch under the lock (upstream's
/// `BurstReplicas`).
pub const POD_BURST: usize = 500;

/// Pods one workload may have in the sim by default ([`crate::SimConfig`]). Beyond it `spec.replicas` is
/// accepted (the API server accepts any int32) but no more pods are made,
/// as when a quota refuses them; `status.replicas` tells the truth.
pub const MAX_PODS_PER_WORKLOAD: usize = 100_000;
