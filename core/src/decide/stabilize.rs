//! Stabilization and scaling limits of the metrics' proposal, with the
//! AbleToScale and ScalingLimited conditions they set.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{HPAScalingRules, HorizontalPodAutoscaler};

use super::state::State;
use crate::config::DecisionConfig;
use crate::normalize;
use crate::trace::DecisionTrace;

#[allow(clippy::too_many_arguments, reason = "the normalization inputs")]
pub(super) fn normalize_desired(
    hpa: &HorizontalPodAutoscaler,
    config: &DecisionConfig,
    current: i32,
    prenormalized: i32,
    min: i32,
    max: i32,
    now: Timestamp,
    state: &mut State,
    trace: &mut DecisionTrace,
) -> i32 {
    let recs = state.history.recommendations.get_or_insert_with(Vec::new);
    let behavior = hpa.spec.behavior.as_ref();
    let (stabilized, stab_reason, stab_message, limited) = match behavior {
        None => {
            let s = normalize::stabilize_recommendation(
                recs,
                prenormalized,
                config.downscale_stabilization,
                now,
            );
            let l = normalize::convert_desired_replicas_with_rules(
                current,
                s,
                min,
                max,
                config.scale_up_limit_factor,
                config.scale_up_limit_minimum,
                config.version(),
            );
            (
                s,
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest recent recommendation",
                l,
            )
        }
        Some(b) => {
            let b = normalize::default_behavior(b);
            let up = b.scale_up.clone().unwrap_or_default();
            let mut down = b.scale_down.clone().unwrap_or_default();
            if down.stabilization_window_seconds.is_none() {
                down.stabilization_window_seconds = Some(
                    i32::try_from(config.downscale_stabilization.as_secs()).unwrap_or(i32::MAX),
                );
            }
            let window = |r: &HPAScalingRules| {
                SignedDuration::from_secs(i64::from(r.stabilization_window_seconds.unwrap_or(0)))
            };
            let s = normalize::stabilize_recommendation_with_behaviors(
                recs,
                current,
                prenormalized,
                window(&up),
                window(&down),
                now,
            );
            let l = normalize::convert_desired_replicas_with_behavior_rate(
                current,
                s.replicas,
                min,
                max,
                &up,
                &down,
                &state.history.scale_up_events,
                &state.history.scale_down_events,
                now,
                config.version(),
            );
            (s.replicas, s.reason, s.message, l)
        }
    };
    trace.stabilized = Some(stabilized);
    if stabilized != prenormalized {
        state.set_condition("AbleToScale", "True", stab_reason, stab_message, now);
        trace.stabilization = stab_reason.to_owned();
    } else {
        state.set_condition(
            "AbleToScale",
            "True",
            "ReadyForNewScale",
            "recommended size matches current size",
            now,
        );
        trace.stabilization = "ReadyForNewScale".to_owned();
    }
    let status = if limited.replicas == stabilized {
        "False"
    } else {
        "True"
    };
    state.set_condition(
        "ScalingLimited",
        status,
        limited.reason,
        limited.message,
        now,
    );
    trace.limited = Some(limited.replicas);
    trace.limit_reason = limited.reason.to_owned();
    limited.replicas
}
