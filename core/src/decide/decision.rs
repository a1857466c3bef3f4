//! Phase 3: the decision from fetched data: the early rules, the metrics'
//! proposal, then stabilization and limits.

use std::sync::Arc;

use jiff::Timestamp;

use super::plan::{EarlyReason, early_branch};
use super::replicas::compute_replicas_for_metrics;
use super::spec::{
    conditions_of, drops_scaled_to_zero, has_object_or_external, keeps_scaled_to_zero, min_max,
    tolerances_for, zero_state,
};
use super::stabilize::normalize_desired;
use super::state::{Decision, State};
use crate::config::DecisionConfig;
use crate::input::DecisionInput;
use crate::normalize::{HpaHistory, Recommendation};
use crate::status::{observed_generation, remove_condition, set_condition};
use crate::trace::DecisionTrace;

/// Decides one reconcile from fetched data.
pub fn decide(
    input: &DecisionInput,
    history: &HpaHistory,
    config: &DecisionConfig,
    now: Timestamp,
) -> Decision {
    let hpa = &input.hpa;
    let current = input.scale.spec_replicas;
    let (min, max) = min_max(hpa);
    let (scaled_to_zero, _) = zero_state(hpa, config);
    let tolerances = tolerances_for(hpa, config);
    let mut trace = DecisionTrace::new(hpa, &input.scale, min, max, tolerances, now);
    let mut state = starting_state(input, history, config, min, now);
    let mut reason = String::new();
    let rescale;
    match early_branch(hpa, current, config) {
        Some(EarlyReason::ScalingDisabled) => {
            state.set_condition(
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
                now,
            );
            trace.rule = "ScalingDisabled: the target has zero replicas".to_owned();
            rescale = false;
        }
        Some(EarlyReason::AboveMax) => {
            reason = "Current number of replicas above Spec.MaxReplicas".to_owned();
            state.desired = max;
            trace.rule = reason.clone();
            rescale = true;
        }
        Some(EarlyReason::BelowMin) => {
            reason = "Current number of replicas below Spec.MinReplicas".to_owned();
            state.desired = min;
            trace.rule = reason.clone();
            rescale = true;
        }
        _ => match compute_replicas_for_metrics(
            input, config, tolerances, now, &mut state, &mut trace,
        ) {
            Err(()) => {
                rescale = false;
            }
            Ok((metric_desired, metric_name)) => {
                let mut desired = 0;
                let mut rescale_metric = String::new();
                if metric_desired > desired {
                    desired = metric_desired;
                    rescale_metric = metric_name;
                }
                if desired > current {
                    reason = format!("{rescale_metric} above target");
                }
                if desired < current {
                    reason = "All metrics below target".to_owned();
                }
                trace.prenormalized = Some(desired);
                desired = normalize_desired(
                    hpa, config, current, desired, min, max, now, &mut state, &mut trace,
                );
                if current == 0 && min != 0 && scaled_to_zero && desired < min {
                    desired = min;
                    if reason.is_empty() {
                        reason = "Current number of replicas below Spec.MinReplicas".to_owned();
                    }
                }
                state.desired = desired;
                rescale = desired != current;
            }
        },
    }
    if !rescale {
        state.desired = current;
    }
    trace.desired = state.desired;
    trace.rescale = rescale && state.failure.is_none();
    trace.reason = reason.clone();
    Decision {
        scale_to: (rescale && state.failure.is_none()).then_some(state.desired),
        rescale_reason: reason,
        trace,
        state,
    }
}

/// The state a sync starts from, before any rule or metric: the HPA's
/// conditions with `AbleToScale` set (the scale was read), and the
/// recommendations seeded with the current count when there are none yet.
fn starting_state(
    input: &DecisionInput,
    history: &HpaHistory,
    config: &DecisionConfig,
    min: i32,
    now: Timestamp,
) -> State {
    let hpa = &input.hpa;
    let generation = observed_generation(hpa, &config.feature_gates);
    let mut conditions = conditions_of(hpa);
    if drops_scaled_to_zero(config) {
        remove_condition(&mut conditions, "ScaledToZero");
    }
    set_condition(
        &mut conditions,
        "AbleToScale",
        "True",
        "SucceededGetScale",
        "the HPA controller was able to get the target's current scale",
        generation,
        now,
    );
    let current = input.scale.spec_replicas;
    let mut history = history.clone();
    if history.recommendations.is_none() {
        history.recommendations = Some(vec![Recommendation {
            replicas: current,
            timestamp: now,
        }]);
    }
    State {
        hpa: Arc::clone(hpa),
        conditions,
        current,
        desired: 0,
        min,
        statuses: None,
        events: Vec::new(),
        computations: Vec::new(),
        history,
        failure: None,
        soft_error: None,
        has_object_or_external: has_object_or_external(hpa),
        keeps_scaled_to_zero: keeps_scaled_to_zero(config),
        observed_generation: generation,
    }
}
