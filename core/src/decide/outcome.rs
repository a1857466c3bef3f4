//! What a reconcile ends with: events, monitor labels, the new status, and
//! what the shell reports back about the scale.

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus;
use serde::Serialize;

use crate::normalize::HpaHistory;
use crate::trace::DecisionTrace;

/// Event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

impl EventType {
    /// The Kubernetes string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

/// A Kubernetes event to record on the HPA (source `horizontal-pod-autoscaler`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// Normal or Warning.
    pub type_: EventType,
    /// Reason (`SuccessfulRescale`, `FailedGetResourceMetric`, ...).
    pub reason: String,
    /// Message.
    pub message: String,
}

/// Monitor `action` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionLabel {
    /// `scale_up`
    ScaleUp,
    /// `scale_down`
    ScaleDown,
    /// `none`
    None,
}

/// Monitor `error` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorLabel {
    /// `spec`: an invalid spec (bad apiVersion, unknown metric type).
    Spec,
    /// `internal`: any other failure.
    Internal,
    /// `none`
    None,
}

impl ActionLabel {
    /// The Prometheus label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ScaleUp => "scale_up",
            Self::ScaleDown => "scale_down",
            Self::None => "none",
        }
    }
}

impl ErrorLabel {
    /// The Prometheus label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Spec => "spec",
            Self::Internal => "internal",
            Self::None => "none",
        }
    }
}

/// Labels of one `metric_computation_total` observation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetricComputation {
    /// `metric_type` label (`Resource`, `Pods`, ...; as written in the spec).
    pub metric_type: String,
    /// Proposal vs the HPA's last reported current replicas.
    pub action: ActionLabel,
    /// Error class.
    pub error: ErrorLabel,
}

/// Monitor observations of one reconcile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Monitor {
    /// `reconciliations_total` labels: action.
    pub action: ActionLabel,
    /// `reconciliations_total` labels: error.
    pub error: ErrorLabel,
    /// One entry per metric computed, in spec order.
    pub metric_computations: Vec<MetricComputation>,
}

/// What the shell reports back about the scale update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum RescaleOutcome {
    /// No update was requested.
    NotNeeded,
    /// The update succeeded.
    Succeeded,
    /// The update failed with this error text.
    Failed(String),
}

/// The end of a reconcile: what to write and record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The new status.
    pub status: HorizontalPodAutoscalerStatus,
    /// Whether it differs semantically from the one read (write only then).
    pub status_changed: bool,
    /// Events to record, in order.
    pub events: Vec<Event>,
    /// Monitor labels.
    pub monitor: Monitor,
    /// The history to keep for the next reconcile.
    pub history: HpaHistory,
    /// The reconcile's error, as upstream returns it (logged; retried by the queue).
    pub error: Option<String>,
    /// The decision trace (when metrics were considered).
    pub trace: Option<DecisionTrace>,
}

/// How reading the scale failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum ScaleReadError {
    /// `scaleTargetRef.apiVersion` does not parse (a spec error).
    InvalidApiVersion(String),
    /// No REST mapping for the target kind.
    NoMapping(String),
    /// The GET of `/scale` failed.
    Failed(String),
}
