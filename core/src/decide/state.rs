//! What `decide` hands to `finish`: the shell's part (whether to rescale)
//! and the state carried over.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, MetricStatus,
};
use serde::Serialize;

use super::outcome::{Event, MetricComputation};
use crate::normalize::HpaHistory;
use crate::status::set_condition;
use crate::trace::DecisionTrace;

/// The decision of `decide`: whether to update the scale, and the state
/// `finish` needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// `Some(n)`: the shell must set the scale's `spec.replicas` to `n`.
    pub scale_to: Option<i32>,
    /// Why (`"cpu resource utilization (percentage of request) above target"`, ...).
    pub rescale_reason: String,
    /// Why the replica count is what it is, step by step.
    pub trace: DecisionTrace,
    pub(super) state: State,
}

/// Internal carry-over from decide to finish.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct State {
    /// The HPA as read, shared with the input; its status is the one the
    /// reconcile started from.
    pub(super) hpa: Arc<HorizontalPodAutoscaler>,
    pub(super) conditions: Vec<HorizontalPodAutoscalerCondition>,
    pub(super) current: i32,
    pub(super) desired: i32,
    pub(super) min: i32,
    pub(super) statuses: Option<Vec<MetricStatus>>,
    pub(super) events: Vec<Event>,
    pub(super) computations: Vec<MetricComputation>,
    pub(super) history: HpaHistory,
    /// Set when the reconcile stops after computing metrics (status still written).
    pub(super) failure: Option<String>,
    /// An error reported although scaling proceeds (some metrics failed).
    pub(super) soft_error: Option<String>,
    pub(super) has_object_or_external: bool,
    /// Rescales set the `ScaledToZero` condition (the gate, from 1.36).
    pub(super) keeps_scaled_to_zero: bool,
    /// What the new status and the conditions set record as
    /// `observedGeneration` ([`crate::status::observed_generation`]).
    pub(super) observed_generation: Option<i64>,
}

impl State {
    /// [`set_condition`] on this reconcile's conditions, stamped with its
    /// observed generation.
    pub(super) fn set_condition(
        &mut self,
        type_: &str,
        status: &str,
        reason: &str,
        message: impl Into<String>,
        now: Timestamp,
    ) {
        set_condition(
            &mut self.conditions,
            type_,
            status,
            reason,
            message,
            self.observed_generation,
            now,
        );
    }
}

impl Decision {
    /// Why the reconcile failed, if it did: no replica count could be
    /// computed, or some metrics could not be read (upstream's reconcile
    /// then returns an error too). Harnesses count such a sync as failed.
    pub fn error(&self) -> Option<&str> {
        self.state
            .failure
            .as_deref()
            .or(self.state.soft_error.as_deref())
    }
}
