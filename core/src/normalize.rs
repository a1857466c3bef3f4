//! From a metric proposal to the replica count to apply: stabilization,
//! min/max clamping and rate limits, with or without `spec.behavior`.
//!
//! Ports upstream `horizontal.go` (Kubernetes v1.36): `stabilizeRecommendation`,
//! `convertDesiredReplicasWithRules` (legacy path), `stabilizeRecommendationWithBehaviors`,
//! `convertDesiredReplicasWithBehaviorRate`, the scale-limit helpers and
//! `storeScaleEvent`, including its reuse of outdated entries. Also the API
//! server's behavior defaulting (`pkg/apis/autoscaling/v2/defaults.go`), which
//! the simulated API server shares.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{
    HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscaler, HorizontalPodAutoscalerBehavior,
    MetricSpec, MetricTarget, ResourceMetricSource,
};
use serde::{Deserialize, Serialize};

use crate::calc::{add, ceil_to_int32, to_int32};
use crate::version::KubernetesVersion;

/// A recommendation the controller made, kept for stabilization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recommendation {
    /// Recommended replicas (before stabilization).
    pub replicas: i32,
    /// When it was made.
    pub timestamp: Timestamp,
}

/// A scale change the controller applied, kept for rate limits (behavior path only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScaleEvent {
    /// Replicas added (scale-up list) or removed (scale-down list); non-negative.
    pub replica_change: i32,
    /// When it happened.
    pub timestamp: Timestamp,
    /// Older than the longest policy period: free for reuse.
    pub outdated: bool,
}

/// The controller's per-HPA memory between reconciles. Upstream keeps it in
/// memory only (lost on restart, dropped when the HPA is deleted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaHistory {
    /// `None` = no entry yet for this HPA (the first reconcile seeds it with
    /// the current replicas); `Some(vec![])` = an entry that is empty.
    pub recommendations: Option<Vec<Recommendation>>,
    /// Scale-up events.
    pub scale_up_events: Vec<ScaleEvent>,
    /// Scale-down events.
    pub scale_down_events: Vec<ScaleEvent>,
}

/// `Max` unless set: what the API server defaults `selectPolicy` to.
fn select_policy(rules: &HPAScalingRules) -> &str {
    rules.select_policy.as_deref().unwrap_or("Max")
}

fn policies(rules: &HPAScalingRules) -> &[HPAScalingPolicy] {
    rules.policies.as_deref().unwrap_or(&[])
}

fn policy(type_: &str, value: i32, period_seconds: i32) -> HPAScalingPolicy {
    HPAScalingPolicy {
        type_: type_.to_owned(),
        value,
        period_seconds,
    }
}

/// Upstream `GenerateHPAScaleUpRules`: fills unset fields of scale-up rules with
/// the defaults (window 0, `Max`, Pods 4 / 15 s and Percent 100 / 15 s);
/// given policies replace the default list wholesale.
pub fn generate_scale_up_rules(rules: Option<&HPAScalingRules>) -> HPAScalingRules {
    let given = rules.cloned().unwrap_or_default();
    HPAScalingRules {
        stabilization_window_seconds: Some(given.stabilization_window_seconds.unwrap_or(0)),
        select_policy: Some(given.select_policy.unwrap_or_else(|| "Max".to_owned())),
        policies: Some(
            given
                .policies
                .unwrap_or_else(|| vec![policy("Pods", 4, 15), policy("Percent", 100, 15)]),
        ),
        tolerance: given.tolerance,
    }
}

/// Upstream `GenerateHPAScaleDownRules`: `Max`, Percent 100 / 15 s; the window
/// stays unset (the controller fills it from its downscale-stabilization flag).
pub fn generate_scale_down_rules(rules: Option<&HPAScalingRules>) -> HPAScalingRules {
    let given = rules.cloned().unwrap_or_default();
    HPAScalingRules {
        stabilization_window_seconds: given.stabilization_window_seconds,
        select_policy: Some(given.select_policy.unwrap_or_else(|| "Max".to_owned())),
        policies: Some(
            given
                .policies
                .unwrap_or_else(|| vec![policy("Percent", 100, 15)]),
        ),
        tolerance: given.tolerance,
    }
}

/// The API server's defaulting of `spec.behavior`: both sides filled.
pub fn default_behavior(
    behavior: &HorizontalPodAutoscalerBehavior,
) -> HorizontalPodAutoscalerBehavior {
    HorizontalPodAutoscalerBehavior {
        scale_up: Some(generate_scale_up_rules(behavior.scale_up.as_ref())),
        scale_down: Some(generate_scale_down_rules(behavior.scale_down.as_ref())),
    }
}

/// The API server's defaulting of an autoscaling/v2 HPA (what the simulated
/// API server applies on create/update): `minReplicas` 1, CPU at 80 %
/// utilization when no metric is given, behavior rules filled.
pub fn default_hpa(hpa: &mut HorizontalPodAutoscaler) {
    let spec = &mut hpa.spec;
    if spec.min_replicas.is_none() {
        spec.min_replicas = Some(1);
    }
    if spec.metrics.as_ref().is_none_or(Vec::is_empty) {
        spec.metrics = Some(vec![MetricSpec {
            type_: "Resource".to_owned(),
            resource: Some(ResourceMetricSource {
                name: "cpu".to_owned(),
                target: MetricTarget {
                    type_: "Utilization".to_owned(),
                    average_utilization: Some(80),
                    ..Default::default()
                },
            }),
            ..Default::default()
        }]);
    }
    if let Some(b) = spec.behavior.as_ref() {
        spec.behavior = Some(default_behavior(b));
    }
}

/// Legacy stabilization (upstream `stabilizeRecommendation`): the maximum of the
/// proposal and every recommendation not older than `window`; records the
/// proposal, overwriting the last outdated entry if any.
pub fn stabilize_recommendation(
    recommendations: &mut Vec<Recommendation>,
    prenormalized: i32,
    window: SignedDuration,
    now: Timestamp,
) -> i32 {
    let cutoff = add(now, -window);
    let mut max = prenormalized;
    let mut old = None;
    for (i, rec) in recommendations.iter().enumerate() {
        if rec.timestamp < cutoff {
            old = Some(i);
        } else if rec.replicas > max {
            max = rec.replicas;
        }
    }
    let entry = Recommendation {
        replicas: prenormalized,
        timestamp: now,
    };
    match old {
        Some(i) => recommendations[i] = entry,
        None => recommendations.push(entry),
    }
    max
}

/// A normalization step's outcome: replicas, condition reason and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Limited {
    /// The resulting replica count.
    pub replicas: i32,
    /// Condition reason (`DesiredWithinRange`, `ScaleUpLimit`, ...).
    pub reason: &'static str,
    /// Condition message (upstream's text).
    pub message: &'static str,
}

const WITHIN: (&str, &str) = (
    "DesiredWithinRange",
    "the desired count is within the acceptable range",
);
const TOO_FEW: (&str, &str) = (
    "TooFewReplicas",
    "the desired replica count is less than the minimum replica count",
);
const TOO_MANY: (&str, &str) = (
    "TooManyReplicas",
    "the desired replica count is more than the maximum replica count",
);
const UP_LIMIT: (&str, &str) = (
    "ScaleUpLimit",
    "the desired replica count is increasing faster than the maximum scale rate",
);
const DOWN_LIMIT: (&str, &str) = (
    "ScaleDownLimit",
    "the desired replica count is decreasing faster than the maximum scale rate",
);

fn limited(replicas: i32, (reason, message): (&'static str, &'static str)) -> Limited {
    Limited {
        replicas,
        reason,
        message,
    }
}

/// Legacy clamp (upstream `convertDesiredReplicasWithRules`): into
/// `[min, min(max, max(factor × current, minimum))]`. The float-to-int32
/// conversions here and in the policy limits follow `version`
/// ([`crate::calc::to_int32`]).
pub fn convert_desired_replicas_with_rules(
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    scale_up_limit_factor: f64,
    scale_up_limit_minimum: f64,
    version: KubernetesVersion,
) -> Limited {
    let scale_up_limit = to_int32(
        (scale_up_limit_factor * f64::from(current)).max(scale_up_limit_minimum),
        version,
    );
    let (maximum, why) = if max > scale_up_limit {
        (scale_up_limit, UP_LIMIT)
    } else {
        (max, TOO_MANY)
    };
    if desired < min {
        limited(min, TOO_FEW)
    } else if desired > maximum {
        limited(maximum, why)
    } else {
        limited(desired, WITHIN)
    }
}

/// The result of behavior stabilization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stabilized {
    /// Stabilized replicas.
    pub replicas: i32,
    /// Lowest recommendation in the scale-up window (incl. the proposal).
    pub up_recommendation: i32,
    /// Highest recommendation in the scale-down window (incl. the proposal).
    pub down_recommendation: i32,
    /// `ScaleUpStabilized` or `ScaleDownStabilized` (used only if it changed the value).
    pub reason: &'static str,
    /// Upstream's message for `reason`.
    pub message: &'static str,
}

/// Behavior stabilization (upstream `stabilizeRecommendationWithBehaviors`):
/// current replicas clamped into [min in up-window, max in down-window];
/// records the proposal, overwriting the last entry older than both windows.
pub fn stabilize_recommendation_with_behaviors(
    recommendations: &mut Vec<Recommendation>,
    current: i32,
    desired: i32,
    up_window: SignedDuration,
    down_window: SignedDuration,
    now: Timestamp,
) -> Stabilized {
    let up_cutoff = add(now, -up_window);
    let down_cutoff = add(now, -down_window);
    let mut up = desired;
    let mut down = desired;
    let mut old = None;
    for (i, rec) in recommendations.iter().enumerate() {
        if rec.timestamp > up_cutoff {
            up = up.min(rec.replicas);
        }
        if rec.timestamp > down_cutoff {
            down = down.max(rec.replicas);
        }
        if rec.timestamp < up_cutoff && rec.timestamp < down_cutoff {
            old = Some(i);
        }
    }
    let mut replicas = current;
    if replicas < up {
        replicas = up;
    }
    if replicas > down {
        replicas = down;
    }
    let entry = Recommendation {
        replicas: desired,
        timestamp: now,
    };
    match old {
        Some(i) => recommendations[i] = entry,
        None => recommendations.push(entry),
    }
    let (reason, message) = if desired >= current {
        (
            "ScaleUpStabilized",
            "recent recommendations were lower than current one, applying the lowest recent recommendation",
        )
    } else {
        (
            "ScaleDownStabilized",
            "recent recommendations were higher than current one, applying the highest recent recommendation",
        )
    };
    Stabilized {
        replicas,
        up_recommendation: up,
        down_recommendation: down,
        reason,
        message,
    }
}

/// Replicas changed by events newer than `period_seconds` ago (upstream `getReplicasChangePerPeriod`).
pub fn replicas_change_per_period(
    period_seconds: i32,
    events: &[ScaleEvent],
    now: Timestamp,
) -> i32 {
    let cutoff = add(now, -SignedDuration::from_secs(i64::from(period_seconds)));
    events
        .iter()
        .filter(|e| e.timestamp > cutoff)
        .fold(0i32, |acc, e| acc.saturating_add(e.replica_change))
}

/// The highest replica count the scale-up rules allow now (upstream
/// `calculateScaleUpLimitWithScalingRules`).
pub fn scale_up_limit(
    current: i32,
    up_events: &[ScaleEvent],
    down_events: &[ScaleEvent],
    rules: &HPAScalingRules,
    now: Timestamp,
    version: KubernetesVersion,
) -> i32 {
    let select = select_policy(rules);
    if select == "Disabled" {
        return current;
    }
    let use_min = select == "Min";
    let mut result = if use_min { i32::MAX } else { i32::MIN };
    for p in policies(rules) {
        let added = replicas_change_per_period(p.period_seconds, up_events, now);
        let removed = replicas_change_per_period(p.period_seconds, down_events, now);
        let start = current.saturating_sub(added).saturating_add(removed);
        let proposed = match p.type_.as_str() {
            "Pods" => start.saturating_add(p.value),
            "Percent" => ceil_to_int32(
                f64::from(start) * (1.0 + f64::from(p.value) / 100.0),
                version,
            ),
            _ => continue,
        };
        result = if use_min {
            result.min(proposed)
        } else {
            result.max(proposed)
        };
    }
    result
}

/// The lowest replica count the scale-down rules allow now (upstream
/// `calculateScaleDownLimitWithBehaviors`).
pub fn scale_down_limit(
    current: i32,
    up_events: &[ScaleEvent],
    down_events: &[ScaleEvent],
    rules: &HPAScalingRules,
    now: Timestamp,
    version: KubernetesVersion,
) -> i32 {
    let select = select_policy(rules);
    if select == "Disabled" {
        return current;
    }
    let use_min = select == "Min";
    let mut result = if use_min { i32::MIN } else { i32::MAX };
    for p in policies(rules) {
        let added = replicas_change_per_period(p.period_seconds, up_events, now);
        let removed = replicas_change_per_period(p.period_seconds, down_events, now);
        let start = current.saturating_sub(added).saturating_add(removed);
        let proposed = match p.type_.as_str() {
            "Pods" => start.saturating_sub(p.value),
            // Truncation, not ceil, as upstream; whether k/k #141397's
            // helper also took this one over was not seen (the product is
            // below `start` here, so only the sign of a >100% policy differs).
            "Percent" => to_int32(
                f64::from(start) * (1.0 - f64::from(p.value) / 100.0),
                version,
            ),
            _ => continue,
        };
        result = if use_min {
            result.max(proposed)
        } else {
            result.min(proposed)
        };
    }
    result
}

/// Rate limits and min/max with behavior (upstream `convertDesiredReplicasWithBehaviorRate`).
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors upstream's NormalizationArg"
)]
pub fn convert_desired_replicas_with_behavior_rate(
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    up_rules: &HPAScalingRules,
    down_rules: &HPAScalingRules,
    up_events: &[ScaleEvent],
    down_events: &[ScaleEvent],
    now: Timestamp,
    version: KubernetesVersion,
) -> Limited {
    if desired > current {
        let limit =
            scale_up_limit(current, up_events, down_events, up_rules, now, version).max(current);
        let (maximum, why) = if max > limit {
            (limit, UP_LIMIT)
        } else {
            (max, TOO_MANY)
        };
        if desired > maximum {
            return limited(maximum, why);
        }
    } else if desired < current {
        let limit = scale_down_limit(current, up_events, down_events, down_rules, now, version)
            .min(current);
        let (minimum, why) = if min < limit {
            (limit, DOWN_LIMIT)
        } else {
            (min, TOO_FEW)
        };
        if desired < minimum {
            return limited(minimum, why);
        }
    }
    limited(desired, WITHIN)
}

fn longest_policy_period(rules: Option<&HPAScalingRules>) -> i32 {
    rules
        .map(policies)
        .unwrap_or(&[])
        .iter()
        .map(|p| p.period_seconds)
        .fold(0, i32::max)
}

/// Records a successful rescale (upstream `storeScaleEvent`): only with a
/// behavior; entries older than the longest policy period of that direction
/// are marked outdated and the last outdated one is reused.
pub fn store_scale_event(
    behavior: Option<&HorizontalPodAutoscalerBehavior>,
    history: &mut HpaHistory,
    prev: i32,
    new: i32,
    now: Timestamp,
) {
    let Some(behavior) = behavior else {
        return;
    };
    let (events, rules, change) = if new > prev {
        (
            &mut history.scale_up_events,
            behavior.scale_up.as_ref(),
            new.saturating_sub(prev),
        )
    } else {
        (
            &mut history.scale_down_events,
            behavior.scale_down.as_ref(),
            prev.saturating_sub(new),
        )
    };
    let period = SignedDuration::from_secs(i64::from(longest_policy_period(rules)));
    let cutoff = add(now, -period);
    let mut old = None;
    for (i, e) in events.iter_mut().enumerate() {
        if e.timestamp < cutoff {
            e.outdated = true;
        }
        if e.outdated {
            old = Some(i);
        }
    }
    let entry = ScaleEvent {
        replica_change: change,
        timestamp: now,
        outdated: false,
    };
    match old {
        Some(i) => events[i] = entry,
        None => events.push(entry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        Timestamp::constant(1_767_225_600, 0)
    }

    fn secs(s: i64) -> SignedDuration {
        SignedDuration::from_secs(s)
    }

    /// Upstream's `generateScalingRules(pods, podsPeriod, percent, percentPeriod, window)`:
    /// `Max`, the Pods policy first, each only when its value is non-zero.
    fn rules(pods: i32, pods_period: i32, percent: i32, percent_period: i32) -> HPAScalingRules {
        let mut policies = Vec::new();
        if pods != 0 {
            policies.push(policy("Pods", pods, pods_period));
        }
        if percent != 0 {
            policies.push(policy("Percent", percent, percent_period));
        }
        HPAScalingRules {
            stabilization_window_seconds: Some(0),
            select_policy: Some("Max".to_owned()),
            policies: Some(policies),
            tolerance: None,
        }
    }

    fn event(change: i32, ago: i64) -> ScaleEvent {
        ScaleEvent {
            replica_change: change,
            timestamp: now() - secs(ago),
            outdated: false,
        }
    }

    /// Upstream's `TestStoreScaleEvents` (`horizontal_test.go`), each case in
    /// both directions: the change in the last 60 s before storing, then
    /// (change, outdated) of every event after storing a change of 5.
    #[test]
    fn storing_a_scale_event_marks_old_ones_outdated_keeps_them_and_reuses_the_last_outdated_slot()
    {
        type Case = (
            &'static str,
            Vec<ScaleEvent>,
            Option<HPAScalingRules>,
            i32,
            Vec<(i32, bool)>,
        );
        let cases: Vec<Case> = vec![
            (
                "empty entries with default behavior",
                vec![],
                None,
                0,
                vec![],
            ),
            (
                "empty entries with two-policy-behavior",
                vec![],
                Some(rules(10, 60, 100, 60)),
                0,
                vec![(5, false)],
            ),
            (
                "one outdated entry to be kept untouched without behavior",
                vec![event(7, 61)],
                None,
                0,
                vec![(7, false)],
            ),
            (
                "one outdated entry to be replaced with behavior",
                vec![event(7, 61)],
                Some(rules(10, 60, 100, 60)),
                0,
                vec![(5, false)],
            ),
            (
                "one actual entry to be not touched with behavior",
                vec![event(7, 58)],
                Some(rules(10, 60, 100, 60)),
                7,
                vec![(7, false), (5, false)],
            ),
            (
                "two entries, one of them to be replaced",
                vec![event(7, 61), event(6, 59)],
                Some(rules(10, 60, 0, 0)),
                6,
                vec![(5, false), (6, false)],
            ),
            (
                "replace one entry, use policies with different periods",
                vec![event(8, 29), event(6, 59), event(7, 61), event(9, 61)],
                Some(rules(10, 60, 100, 30)),
                14,
                vec![(8, false), (6, false), (7, true), (5, false)],
            ),
            (
                "two entries, both actual",
                vec![event(7, 58), event(6, 59)],
                Some(rules(10, 120, 100, 30)),
                13,
                vec![(7, false), (6, false), (5, false)],
            ),
        ];
        for (case, previous, rules, want_change, want) in cases {
            assert_eq!(
                replicas_change_per_period(60, &previous, now()),
                want_change,
                "{case}"
            );
            for up in [true, false] {
                let behavior = rules.as_ref().map(|r| HorizontalPodAutoscalerBehavior {
                    scale_up: up.then(|| r.clone()),
                    scale_down: (!up).then(|| r.clone()),
                });
                let mut history = HpaHistory::default();
                let to = if up {
                    history.scale_up_events = previous.clone();
                    15
                } else {
                    history.scale_down_events = previous.clone();
                    5
                };
                store_scale_event(behavior.as_ref(), &mut history, 10, to, now());
                let events = if up {
                    &history.scale_up_events
                } else {
                    &history.scale_down_events
                };
                let got: Vec<(i32, bool)> = events
                    .iter()
                    .map(|e| (e.replica_change, e.outdated))
                    .collect();
                assert_eq!(
                    got,
                    want,
                    "{case} (scale {})",
                    if up { "up" } else { "down" }
                );
            }
        }
    }

    /// The limits count events by timestamp alone, as upstream's
    /// `getReplicasChangePerPeriod`: an event marked outdated under a short
    /// policy still counts once the period is lengthened, until its slot is
    /// reused by the next store, which reuses it although it is within the
    /// new period (upstream never clears the flag).
    #[test]
    fn an_outdated_event_still_counts_by_its_timestamp_until_its_slot_is_reused() {
        let short = HorizontalPodAutoscalerBehavior {
            scale_up: Some(rules(4, 30, 0, 0)),
            scale_down: None,
        };
        let mut history = HpaHistory {
            scale_up_events: vec![event(3, 45)],
            ..HpaHistory::default()
        };
        store_scale_event(Some(&short), &mut history, 10, 12, now() - secs(5));
        let flags: Vec<(i32, bool)> = history
            .scale_up_events
            .iter()
            .map(|e| (e.replica_change, e.outdated))
            .collect();
        // Marked outdated, then reused at once: it was the only outdated slot.
        assert_eq!(flags, vec![(2, false)]);

        let mut history = HpaHistory {
            scale_up_events: vec![event(3, 45), event(1, 50)],
            ..HpaHistory::default()
        };
        store_scale_event(Some(&short), &mut history, 10, 12, now());
        // Both older than 30 s: both marked, the last reused, the first kept.
        assert_eq!(history.scale_up_events[0].replica_change, 3);
        assert!(history.scale_up_events[0].outdated);
        assert_eq!(history.scale_up_events[1].replica_change, 2);
        // A 60 s period now: the outdated event at -45 s still counts.
        assert_eq!(
            replicas_change_per_period(60, &history.scale_up_events, now()),
            5
        );
        let long = HorizontalPodAutoscalerBehavior {
            scale_up: Some(rules(4, 60, 0, 0)),
            scale_down: None,
        };
        store_scale_event(Some(&long), &mut history, 12, 13, now());
        let flags: Vec<(i32, bool)> = history
            .scale_up_events
            .iter()
            .map(|e| (e.replica_change, e.outdated))
            .collect();
        assert_eq!(flags, vec![(1, false), (2, false)]);
    }

    /// Equal replica counts take the scale-down branch (upstream's `else`),
    /// recording a change of 0.
    #[test]
    fn an_unchanged_count_is_stored_as_a_zero_scale_down() {
        let behavior = default_behavior(&HorizontalPodAutoscalerBehavior::default());
        let mut history = HpaHistory::default();
        store_scale_event(Some(&behavior), &mut history, 4, 4, now());
        assert!(history.scale_up_events.is_empty());
        assert_eq!(history.scale_down_events.len(), 1);
        assert_eq!(history.scale_down_events[0].replica_change, 0);
    }

    /// A Percent policy whose limit overflows int32 wraps to MinInt32 on
    /// amd64 through 1.37, which freezes scale-up (the limit is then raised
    /// to the current count); from 1.38 it saturates and allows MaxInt32.
    #[test]
    fn an_overflowing_percent_limit_freezes_scale_up_through_v1_37_and_saturates_from_v1_38() {
        use KubernetesVersion::*;
        let up = rules(0, 0, 100, 60);
        let down = generate_scale_down_rules(None);
        for (v, limit, replicas) in [
            (V1_36, i32::MIN, 2_000_000_000),
            (V1_37, i32::MIN, 2_000_000_000),
            (V1_38, i32::MAX, 2_100_000_000),
        ] {
            assert_eq!(
                scale_up_limit(2_000_000_000, &[], &[], &up, now(), v),
                limit,
                "{v}"
            );
            let l = convert_desired_replicas_with_behavior_rate(
                2_000_000_000,
                2_100_000_000,
                1,
                i32::MAX,
                &up,
                &down,
                &[],
                &[],
                now(),
                v,
            );
            assert_eq!(l.replicas, replicas, "{v}");
        }
        // The legacy cap: factor × current beyond int32 wraps to a negative
        // cap through 1.37, which upstream returns as is.
        for (v, replicas, reason) in [
            (V1_37, i32::MIN, "ScaleUpLimit"),
            (V1_38, 2_100_000_000, "DesiredWithinRange"),
        ] {
            let l = convert_desired_replicas_with_rules(
                2_000_000_000,
                2_100_000_000,
                1,
                i32::MAX,
                2.0,
                4.0,
                v,
            );
            assert_eq!((l.replicas, l.reason), (replicas, reason), "{v}");
        }
    }
}
