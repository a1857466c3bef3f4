//! One reconcile of one HPA, as pure functions around the IO the shell does.
//!
//! Upstream's `reconcileAutoscaler` (Kubernetes v1.36 `horizontal.go`) reads
//! the scale, lists pods, queries metrics APIs, maybe updates the scale and
//! writes the status. Here that is split in phases so the core stays pure:
//!
//! 1. [`plan`]: which metrics to fetch (or nothing, when a rule short-circuits);
//! 2. the shell fetches them and lists pods;
//! 3. [`decide`]: the proposals, stabilization and limits: whether to rescale;
//! 4. the shell updates the scale if asked;
//! 5. [`finish`]: the new status, events, monitor labels and history.
//!
//! [`get_scale_failed`] covers a failed scale read. Condition reasons,
//! messages and event texts are upstream's.

mod decision;
mod finish;
mod outcome;
mod plan;
mod pod_selection;
mod replicas;
mod scale_failed;
mod sources;
mod spec;
mod stabilize;
mod state;

pub use crate::input::{DecisionInput, ExternalSample, Fetched, ObjectSample, OtherHpa, ScaleInfo};
pub use decision::decide;
pub use finish::finish;
pub use outcome::{
    ActionLabel, ErrorLabel, Event, EventType, MetricComputation, Monitor, Outcome, RescaleOutcome,
    ScaleReadError,
};
pub use plan::{EarlyReason, MetricQuery, Plan, plan};
pub use scale_failed::get_scale_failed;
pub use spec::{go_label_selector_string, tolerances_for};
pub use state::Decision;
