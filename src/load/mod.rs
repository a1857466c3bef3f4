//! Load testing: thousands of HPAs synced by concurrent workers, and the
//! figures users compare (`hpa-harness load`).

pub mod report;
pub mod stats;
