//! A live cluster, read-only: `hpa-harness explain NAMESPACE/NAME` and
//! `hpa-harness capture`.
//!
//! [`read`] makes the requests upstream's controller makes for one sync
//! (the HPA, its target's `/scale`, the pods its selector picks, the
//! aggregated metrics APIs), through the controller crate's own scale
//! resolver and metrics client, and nothing that writes. [`explain`] runs
//! the pure core on what was read, as the cluster's release decides, and
//! says what the API cannot show (the controller's memory) as bounds the
//! status implies. [`capture`] writes what was read as a scenario of the
//! stable step language, and a replay series. [`client`] builds the
//! read-only client and tells an RBAC refusal apart from other failures.

pub mod api_service;
pub mod capture;
pub mod client;
pub mod error;
pub mod explain;
pub mod read;

pub use error::LiveError;
pub use explain::Explanation;
pub use read::{Reader, ReaderOptions, Snapshot};
