//! The end of a reconcile whose scale read failed.

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;

use super::outcome::{ActionLabel, ErrorLabel, Event, EventType, Monitor, Outcome, ScaleReadError};
use super::spec::{conditions_of, reference};
use crate::config::DecisionConfig;
use crate::normalize::HpaHistory;
use crate::status::{observed_generation, remove_condition, set_condition, status_changed};

/// The outcome when the scale could not be read: condition AbleToScale=False
/// `FailedGetScale`, a Warning event, the rest of the status unchanged.
/// Upstream returns before `setStatus` here, so `status.observedGeneration`
/// keeps its stored value; only the condition gets the generation (under
/// `HPAGeneration`).
pub fn get_scale_failed(
    hpa: &HorizontalPodAutoscaler,
    error: &ScaleReadError,
    history: &HpaHistory,
    config: &DecisionConfig,
    now: Timestamp,
) -> Outcome {
    let original = hpa.status.clone().unwrap_or_default();
    let mut conditions = conditions_of(hpa);
    if super::spec::drops_scaled_to_zero(config) {
        remove_condition(&mut conditions, "ScaledToZero");
    }
    let (err, label, returned) = match error {
        ScaleReadError::InvalidApiVersion(e) => (
            e,
            ErrorLabel::Spec,
            format!("invalid API version in scale target reference: {e}"),
        ),
        ScaleReadError::NoMapping(e) => (
            e,
            ErrorLabel::Internal,
            format!("unable to determine resource for scale target reference: {e}"),
        ),
        ScaleReadError::Failed(e) => (
            e,
            ErrorLabel::Internal,
            format!(
                "failed to query scale subresource for {}: {e}",
                reference(hpa)
            ),
        ),
    };
    set_condition(
        &mut conditions,
        "AbleToScale",
        "False",
        "FailedGetScale",
        format!("the HPA controller was unable to get the target's current scale: {err}"),
        observed_generation(hpa, &config.feature_gates),
        now,
    );
    let mut status = original.clone();
    status.conditions = Some(conditions);
    Outcome {
        status_changed: status_changed(&original, &status),
        status,
        events: vec![Event {
            type_: EventType::Warning,
            reason: "FailedGetScale".to_owned(),
            message: err.clone(),
        }],
        monitor: Monitor {
            action: ActionLabel::None,
            error: label,
            metric_computations: Vec::new(),
        },
        history: history.clone(),
        error: Some(returned),
        trace: None,
    }
}
