//! Phase 5: the new status, events, monitor labels and history once the shell
//! has (or has not) updated the scale.

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscalerBehavior, HorizontalPodAutoscalerStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::outcome::{ActionLabel, ErrorLabel, Event, EventType, Monitor, Outcome, RescaleOutcome};
use super::spec::reference;
use super::state::{Decision, State};
use crate::normalize;
use crate::status::status_changed;

/// The new status; takes the metric statuses and conditions out of `state`
/// (built once, at the end of a reconcile).
fn build_status(
    state: &mut State,
    desired: i32,
    last_scale_time: Option<Time>,
) -> HorizontalPodAutoscalerStatus {
    HorizontalPodAutoscalerStatus {
        current_replicas: Some(state.current),
        desired_replicas: desired,
        last_scale_time,
        current_metrics: state.statuses.take(),
        conditions: Some(std::mem::take(&mut state.conditions)),
        // setStatus builds a fresh status: under HPAGeneration (1.37+, k/k
        // #138228) it records the HPA's generation; without the gate (1.36)
        // a stored value is dropped.
        observed_generation: state.observed_generation,
    }
}

/// Finishes a reconcile once the shell has (or has not) updated the scale.
pub fn finish(decision: Decision, outcome: RescaleOutcome, now: Timestamp) -> Outcome {
    let Decision {
        scale_to,
        rescale_reason,
        trace,
        mut state,
    } = decision;
    let reference = reference(&state.hpa);
    let hpa = std::sync::Arc::clone(&state.hpa);
    let unset = HorizontalPodAutoscalerStatus::default();
    let original = hpa.status.as_ref().unwrap_or(&unset);
    let old_desired = original.desired_replicas;
    let old_scale_time = original.last_scale_time.clone();
    let mut monitor = Monitor {
        action: ActionLabel::None,
        error: ErrorLabel::None,
        metric_computations: std::mem::take(&mut state.computations),
    };
    let mut error = None;
    let status = if let Some(failure) = state.failure.clone() {
        state.events.push(Event {
            type_: EventType::Warning,
            reason: "FailedComputeMetricsReplicas".to_owned(),
            message: failure.clone(),
        });
        error = Some(format!(
            "failed to compute desired number of replicas based on listed metrics for {reference}: {failure}"
        ));
        build_status(&mut state, old_desired, old_scale_time)
    } else {
        match (scale_to, outcome) {
            (Some(desired), RescaleOutcome::Succeeded) => {
                monitor.action = record_rescale(&mut state, desired, &rescale_reason, now);
                build_status(&mut state, desired, Some(Time(now)))
            }
            (Some(desired), RescaleOutcome::Failed(err)) => {
                state.events.push(Event {
                    type_: EventType::Warning,
                    reason: "FailedRescale".to_owned(),
                    message: format!("New size: {desired}; reason: {rescale_reason}; error: {err}"),
                });
                state.set_condition(
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    format!("the HPA controller was unable to update the target scale: {err}"),
                    now,
                );
                error = Some(format!("failed to rescale {reference}: {err}"));
                build_status(&mut state, old_desired, old_scale_time)
            }
            // No update requested (or the shell skipped it): nothing changes in scale.
            _ => {
                let current = state.current;
                build_status(&mut state, current, old_scale_time)
            }
        }
    };
    if error.is_none() {
        error = state.soft_error.clone();
    }
    if error.is_some() {
        monitor.error = ErrorLabel::Internal;
    }
    let changed = status_changed(original, &status);
    Outcome {
        status,
        status_changed: changed,
        events: state.events,
        monitor,
        history: state.history,
        error,
        trace: Some(trace),
    }
}

/// A successful rescale: AbleToScale=True `SucceededRescale`, the Normal
/// event, the scale event kept for the behavior policies and, under the
/// scale-to-zero gate, the ScaledToZero condition. Returns the monitor action.
fn record_rescale(
    state: &mut State,
    desired: i32,
    rescale_reason: &str,
    now: Timestamp,
) -> ActionLabel {
    state.set_condition(
        "AbleToScale",
        "True",
        "SucceededRescale",
        format!("the HPA controller was able to update the target scale to {desired}"),
        now,
    );
    state.events.push(Event {
        type_: EventType::Normal,
        reason: "SuccessfulRescale".to_owned(),
        message: format!("New size: {desired}; reason: {rescale_reason}"),
    });
    let behavior: Option<HorizontalPodAutoscalerBehavior> = state
        .hpa
        .spec
        .behavior
        .as_ref()
        .map(normalize::default_behavior);
    normalize::store_scale_event(
        behavior.as_ref(),
        &mut state.history,
        state.current,
        desired,
        now,
    );
    if state.keeps_scaled_to_zero {
        if state.current > 0 && desired == 0 && state.min == 0 && state.has_object_or_external {
            state.set_condition(
                "ScaledToZero",
                "True",
                "ScaledToZero",
                "the HPA controller scaled the workload to zero",
                now,
            );
        } else {
            // Every other successful rescale, the condition
            // added when missing (upstream's else branch).
            state.set_condition(
                "ScaledToZero",
                "False",
                "NotScaledToZero",
                "the HPA controller did not scale the workload to zero",
                now,
            );
        }
    }
    if desired > state.current {
        ActionLabel::ScaleUp
    } else {
        ActionLabel::ScaleDown
    }
}
