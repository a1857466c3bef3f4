//! HPA status bookkeeping: conditions with upstream `setCondition` semantics
//! and the semantic "did the status change?" test behind `updateStatusIfNeeded`.

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscalerCondition, HorizontalPodAutoscalerStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::Value;

use crate::quantity::Quantity;

/// Sets (or appends) the condition of `type_`. `lastTransitionTime` moves to
/// `now` only when the status value changes, as upstream's `setConditionInList`.
///
/// `observed_generation` is the HPA's `metadata.generation` when the
/// `HPAGeneration` gate is on (see [`observed_generation`]), stamped on the
/// condition; `None` leaves the condition's field as it was. Upstream added
/// the field in 1.37 (k/k #138653, "conditions allow optionally including
/// the `observedGeneration`"); the controller code that fills it was not
/// seen, so stamping every condition the controller sets follows issue 28's
/// reading of that PR, not verified Go.
pub fn set_condition(
    conditions: &mut Vec<HorizontalPodAutoscalerCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: impl Into<String>,
    observed_generation: Option<i64>,
    now: Timestamp,
) {
    let idx = match conditions.iter().position(|c| c.type_ == type_) {
        Some(i) => i,
        None => {
            conditions.push(HorizontalPodAutoscalerCondition {
                type_: type_.to_owned(),
                ..Default::default()
            });
            conditions.len() - 1
        }
    };
    let c = &mut conditions[idx];
    if c.status != status {
        c.last_transition_time = Some(Time(now));
    }
    c.status = status.to_owned();
    c.reason = Some(reason.to_owned());
    c.message = Some(message.into());
    if observed_generation.is_some() {
        c.observed_generation = observed_generation;
    }
}

/// What a rebuilt status (and every condition set) records as
/// `observedGeneration`: the HPA's `metadata.generation` under the
/// `HPAGeneration` gate (on in 1.37, locked on in 1.38, absent in 1.36), as
/// upstream's `setStatus` does (k/k #138228); none otherwise. An HPA without
/// a generation records 0, as Go's `&hpa.Generation` of an unset field.
pub fn observed_generation(
    hpa: &k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler,
    gates: &crate::gates::FeatureGates,
) -> Option<i64> {
    gates
        .generation()
        .then(|| hpa.metadata.generation.unwrap_or(0))
}

/// Drops the condition of `type_`, if present.
pub fn remove_condition(conditions: &mut Vec<HorizontalPodAutoscalerCondition>, type_: &str) {
    conditions.retain(|c| c.type_ != type_);
}

/// The condition of `type_`, if present.
pub fn find_condition<'a>(
    conditions: &'a [HorizontalPodAutoscalerCondition],
    type_: &str,
) -> Option<&'a HorizontalPodAutoscalerCondition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Canonical JSON for semantic comparison: nulls and empty lists/maps dropped
/// (apimachinery's semantic equality treats nil and empty alike), quantities
/// compared by value, times as written on the wire (second precision).
fn canonical(v: Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Array(a) => {
            let a: Vec<Value> = a
                .into_iter()
                .map(|x| canonical(x).unwrap_or(Value::Null))
                .collect();
            (!a.is_empty()).then_some(Value::Array(a))
        }
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let v = match (k.as_str(), v) {
                    ("value" | "averageValue", Value::String(s)) => Value::String(
                        Quantity::parse(&s)
                            .map(|q| q.to_canonical_string())
                            .unwrap_or(s),
                    ),
                    (_, v) => match canonical(v) {
                        Some(v) => v,
                        None => continue,
                    },
                };
                out.insert(k, v);
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        other => Some(other),
    }
}

/// Whether two statuses differ in a way the API would store (upstream uses
/// `apiequality.Semantic.DeepEqual` before writing).
pub fn status_changed(
    old: &HorizontalPodAutoscalerStatus,
    new: &HorizontalPodAutoscalerStatus,
) -> bool {
    // Equal values are semantically equal: the usual case in a steady
    // state, decided without building two JSON documents.
    if old == new {
        return false;
    }
    let a = serde_json::to_value(wire(old)).ok().and_then(canonical);
    let b = serde_json::to_value(wire(new)).ok().and_then(canonical);
    a != b
}

/// The status as the API server stores it: `currentReplicas` is an
/// `omitempty` int32, so 0 is not written and reads back absent.
fn wire(status: &HorizontalPodAutoscalerStatus) -> HorizontalPodAutoscalerStatus {
    let mut status = status.clone();
    if status.current_replicas == Some(0) {
        status.current_replicas = None;
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_when_the_status_value_changes() {
        let t0 = Timestamp::from_second(1_000).unwrap();
        let t1 = Timestamp::from_second(2_000).unwrap();
        let mut c = Vec::new();
        set_condition(
            &mut c,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "m1",
            None,
            t0,
        );
        set_condition(
            &mut c,
            "AbleToScale",
            "True",
            "ReadyForNewScale",
            "m2",
            None,
            t1,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].last_transition_time, Some(Time(t0)));
        assert_eq!(c[0].reason.as_deref(), Some("ReadyForNewScale"));
        set_condition(
            &mut c,
            "AbleToScale",
            "False",
            "FailedGetScale",
            "m3",
            None,
            t1,
        );
        assert_eq!(c[0].last_transition_time, Some(Time(t1)));
        set_condition(
            &mut c,
            "ScalingActive",
            "True",
            "ValidMetricFound",
            "m",
            None,
            t1,
        );
        assert_eq!(c[1].type_, "ScalingActive");
    }

    #[test]
    fn a_condition_set_under_hpa_generation_records_the_generation_and_keeps_it_otherwise() {
        let t0 = Timestamp::from_second(1_000).unwrap();
        let mut c = Vec::new();
        set_condition(&mut c, "AbleToScale", "True", "r", "m", Some(4), t0);
        assert_eq!(c[0].observed_generation, Some(4));
        set_condition(&mut c, "AbleToScale", "True", "r", "m", Some(5), t0);
        assert_eq!(c[0].observed_generation, Some(5));
        set_condition(&mut c, "AbleToScale", "True", "r", "m", None, t0);
        assert_eq!(c[0].observed_generation, Some(5));
    }

    /// A moved generation is a change worth writing, at either level.
    #[test]
    fn observed_generations_take_part_in_the_status_comparison() {
        let status = |top: Option<i64>, condition: Option<i64>| HorizontalPodAutoscalerStatus {
            desired_replicas: 2,
            observed_generation: top,
            conditions: Some(vec![HorizontalPodAutoscalerCondition {
                type_: "AbleToScale".into(),
                status: "True".into(),
                observed_generation: condition,
                ..Default::default()
            }]),
            ..Default::default()
        };
        assert!(!status_changed(
            &status(Some(1), Some(1)),
            &status(Some(1), Some(1))
        ));
        assert!(status_changed(
            &status(Some(1), Some(1)),
            &status(Some(2), Some(1))
        ));
        assert!(status_changed(
            &status(Some(1), Some(1)),
            &status(Some(1), Some(2))
        ));
        assert!(status_changed(&status(None, None), &status(Some(0), None)));
    }

    /// The fast path for equal values gives what the JSON comparison gives.
    #[test]
    fn an_equal_status_is_unchanged_and_a_different_one_changed() {
        let status = serde_json::from_value::<HorizontalPodAutoscalerStatus>(serde_json::json!({
            "currentReplicas": 2, "desiredReplicas": 2,
            "conditions": [{"type": "AbleToScale", "status": "True", "reason": "r",
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "currentMetrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"},
                                "current": {"averageValue": "100m"}}}]
        }))
        .unwrap();
        assert!(!status_changed(&status, &status.clone()));
        let mut other = status.clone();
        if let Some(c) = other.conditions.as_mut() {
            c[0].status = "False".into();
        }
        assert!(status_changed(&status, &other));
    }

    #[test]
    fn status_comparison_ignores_spelling_of_quantities_and_empty_lists() {
        let mut a = HorizontalPodAutoscalerStatus {
            current_replicas: Some(2),
            desired_replicas: 2,
            conditions: Some(vec![]),
            ..Default::default()
        };
        let b = HorizontalPodAutoscalerStatus {
            current_replicas: Some(2),
            desired_replicas: 2,
            ..Default::default()
        };
        assert!(!status_changed(&a, &b));
        a.desired_replicas = 3;
        assert!(status_changed(&a, &b));
        let with_value = |v: &str| {
            serde_json::from_value::<HorizontalPodAutoscalerStatus>(serde_json::json!({
                "desiredReplicas": 1,
                "currentMetrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": v}}}]
            }))
            .unwrap()
        };
        assert!(!status_changed(&with_value("1.5"), &with_value("1500m")));
        assert!(status_changed(&with_value("1.5"), &with_value("1501m")));
    }

    #[test]
    fn zero_current_replicas_equal_the_omitted_field_the_server_returns() {
        let stored = HorizontalPodAutoscalerStatus {
            current_replicas: None,
            desired_replicas: 0,
            ..Default::default()
        };
        let computed = HorizontalPodAutoscalerStatus {
            current_replicas: Some(0),
            desired_replicas: 0,
            ..Default::default()
        };
        assert!(!status_changed(&stored, &computed));
        let one = HorizontalPodAutoscalerStatus {
            current_replicas: Some(1),
            ..computed
        };
        assert!(status_changed(&stored, &one));
    }
}
