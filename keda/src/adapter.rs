//! What KEDA's metrics adapter answers the HPA for each External metric of
//! the generated HPA, and how the operator sees trigger activity, from the
//! trigger readings a scenario scripts (`pkg/fallback/fallback.go`,
//! `pkg/scaling/modifiers/formula.go`, `pkg/scaling/scale_handler.go`).

use std::collections::BTreeMap;

use super::formula::Expr;
use super::hpa::COMPOSITE_METRIC;
use super::scaled_object::{FallbackBehavior, ScaledObject};
use super::scalers::{Target, TriggerMetric, metric_quantity};

/// One read of a trigger's event source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    Value(f64),
    /// The source could not be read (the scaler returned an error).
    Failed,
}

/// The adapter's answer for one metric: the value KEDA computed, or an
/// error the HPA sees as a failed read.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub metric: String,
    pub value: Result<f64, String>,
    /// The value is fallback's, not the source's.
    pub fallback: bool,
}

impl Answer {
    /// The quantity KEDA puts in the `ExternalMetricValue`
    /// ([`metric_quantity`]), if the read succeeded.
    pub fn quantity(&self) -> Option<String> {
        self.value.as_ref().ok().map(|v| metric_quantity(*v))
    }
}

/// The replica counts fallback may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Replicas {
    /// The target's `spec.replicas` (behaviors other than static).
    pub current: i32,
    /// Ready pods (metric type `Value` divides by them).
    pub ready: i32,
}

/// `status.health`: consecutive failed reads per metric name.
pub type Health = BTreeMap<String, i32>;

/// The adapter's answers to one HPA read of every External metric, updating
/// `health` as KEDA's `GetMetricsWithFallback` does.
pub fn answer(
    so: &ScaledObject,
    triggers: &[TriggerMetric],
    read: &dyn Fn(&TriggerMetric) -> Reading,
    health: &mut Health,
    replicas: Replicas,
) -> Vec<Answer> {
    let external: Vec<&TriggerMetric> = triggers.iter().filter(|t| !t.resource).collect();
    let per_trigger: Vec<(&TriggerMetric, Answer)> = external
        .iter()
        .map(|t| (*t, with_fallback(so, t, read(t), health, replicas)))
        .collect();
    let Some(modifiers) = so.modifiers() else {
        return per_trigger.into_iter().map(|(_, a)| a).collect();
    };
    let composite = |value| Answer {
        metric: COMPOSITE_METRIC.to_owned(),
        value,
        fallback: false,
    };
    // Under fallback the composite metric is the fallback value.
    if let Some((_, a)) = per_trigger.iter().find(|(_, a)| a.fallback) {
        return vec![Answer {
            metric: COMPOSITE_METRIC.to_owned(),
            value: a.value.clone(),
            fallback: true,
        }];
    }
    let mut env = BTreeMap::new();
    for (t, a) in &per_trigger {
        match &a.value {
            Ok(v) => {
                let name = t.trigger_name.clone().unwrap_or_else(|| t.metric.clone());
                env.insert(name, Some(*v));
            }
            Err(e) => return vec![composite(Err(e.clone()))],
        }
    }
    let value = Expr::parse(&modifiers.formula)
        .map_err(|e| e.to_string())
        .and_then(|f| f.value(&env).map_err(|e| e.to_string()));
    vec![composite(value)]
}

/// One metric through fallback.
fn with_fallback(
    so: &ScaledObject,
    t: &TriggerMetric,
    reading: Reading,
    health: &mut Health,
    replicas: Replicas,
) -> Answer {
    let fallback = so
        .spec
        .fallback
        .as_ref()
        .filter(|f| f.failure_threshold >= 0 && f.replicas >= 0);
    let answer = |value, fallback| Answer {
        metric: t.metric.clone(),
        value,
        fallback,
    };
    let error = format!("trigger {} ({}) failed to read its source", t.index, t.kind);
    match (reading, fallback) {
        (Reading::Value(v), _) => {
            if fallback.is_some() {
                health.insert(t.metric.clone(), 0);
            }
            answer(Ok(v), false)
        }
        (Reading::Failed, None) => answer(Err(error), false),
        (Reading::Failed, Some(f)) => {
            let failures = health.entry(t.metric.clone()).or_insert(0);
            *failures += 1;
            if *failures <= f.failure_threshold {
                return answer(Err(error), false);
            }
            let mut target_replicas = f64::from(match f.behavior {
                FallbackBehavior::Static => f.replicas,
                FallbackBehavior::CurrentReplicas => replicas.current,
                FallbackBehavior::CurrentReplicasIfHigher => replicas.current.max(f.replicas),
                FallbackBehavior::CurrentReplicasIfLower => replicas.current.min(f.replicas),
            });
            let (per, value_type) = match so.modifiers() {
                Some(m) => (
                    m.target.parse::<f64>().unwrap_or(0.0),
                    m.metric_type.as_deref() == Some("Value"),
                ),
                None => (t.target_value, matches!(t.target, Target::Value(_))),
            };
            if value_type {
                if replicas.ready == 0 {
                    return answer(
                        Err("readyReplicas is zero, cannot do fallback".to_owned()),
                        false,
                    );
                }
                target_replicas /= f64::from(replicas.ready);
            }
            answer(Ok(per * target_replicas), true)
        }
    }
}

/// Whether fallback is in force: a metric failed more than
/// `failureThreshold` times in a row (the `Fallback` condition).
pub fn fallback_active(so: &ScaledObject, health: &Health) -> bool {
    so.spec
        .fallback
        .as_ref()
        .is_some_and(|f| health.values().any(|n| *n > f.failure_threshold))
}

/// What the operator's poll sees: whether the ScaledObject is active,
/// whether a trigger failed, and the active triggers' names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Activity {
    pub active: bool,
    pub error: bool,
    pub active_triggers: Vec<String>,
}

/// Activity from the readings: a trigger is active when its value is above
/// its activation threshold; with scalingModifiers, when the composite
/// value is above `activationTarget` (and no trigger failed).
pub fn activity(
    so: &ScaledObject,
    triggers: &[TriggerMetric],
    read: &dyn Fn(&TriggerMetric) -> Reading,
) -> Activity {
    let mut out = Activity::default();
    let mut env = BTreeMap::new();
    for t in triggers.iter().filter(|t| !t.resource) {
        let name = t.trigger_name.clone().unwrap_or_else(|| t.metric.clone());
        match read(t) {
            Reading::Value(v) => {
                env.insert(name.clone(), Some(v));
                if v > t.activation {
                    out.active = true;
                    out.active_triggers.push(name);
                }
            }
            Reading::Failed => out.error = true,
        }
    }
    if let Some(m) = so.modifiers() {
        out.active = false;
        out.active_triggers.clear();
        if !out.error {
            let threshold = m.activation_target.parse::<f64>().unwrap_or(0.0);
            let value = Expr::parse(&m.formula)
                .ok()
                .and_then(|f| f.value(&env).ok());
            match value {
                Some(v) => out.active = v > threshold,
                None => out.error = true,
            }
        }
    }
    // `getScaledObjectState`: cpu/memory triggers alone could never scale
    // from 0, so a ScaledObject with only those is always active.
    if !out.error
        && triggers
            .iter()
            .all(|t| matches!(t.kind.as_str(), "cpu" | "memory"))
    {
        out.active = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hpa::trigger_metrics;

    fn so(extra: &str, triggers: &str) -> ScaledObject {
        ScaledObject::from_yaml(
            &format!("apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {{name: w}}\nspec:\n  scaleTargetRef: {{name: w}}\n{extra}  triggers:\n{triggers}"),
            "test",
        )
        .unwrap()
    }

    const QUEUE: &str = "  - {type: rabbitmq, name: queue, metadata: {queueName: orders, value: \"20\", activationValue: \"5\"}}\n";

    #[test]
    fn only_cpu_and_memory_triggers_are_always_active() {
        // keda.sh's cpu and memory scaler pages: such a ScaledObject cannot
        // scale to 0, as KEDA enforces activity.
        let s = so(
            "",
            "  - {type: cpu, metricType: Utilization, metadata: {value: \"50\"}}\n",
        );
        let triggers = trigger_metrics(&s).unwrap();
        let read = |_: &TriggerMetric| Reading::Value(0.0);
        assert!(activity(&s, &triggers, &read).active);
        let mixed = so(
            "",
            &format!(
                "  - {{type: cpu, metricType: Utilization, metadata: {{value: \"50\"}}}}\n{QUEUE}"
            ),
        );
        let triggers = trigger_metrics(&mixed).unwrap();
        assert!(
            !activity(&mixed, &triggers, &read).active,
            "the queue decides"
        );
    }

    fn answer_with(
        so: &ScaledObject,
        readings: &[Reading],
        health: &mut Health,
        replicas: Replicas,
    ) -> Vec<Answer> {
        let triggers = trigger_metrics(so).unwrap();
        let read = |t: &TriggerMetric| readings[t.index];
        answer(so, &triggers, &read, health, replicas)
    }

    #[test]
    fn values_pass_through_as_keda_s_quantities() {
        let s = so("", QUEUE);
        let a = answer_with(
            &s,
            &[Reading::Value(50.0)],
            &mut Health::new(),
            Replicas::default(),
        );
        assert_eq!(
            a,
            [Answer {
                metric: "s0-rabbitmq-orders".into(),
                value: Ok(50.0),
                fallback: false
            }]
        );
        assert_eq!(a[0].quantity().as_deref(), Some("50"));
        // Beyond int64 milli-units the value stays whole (KEDA 2.20).
        let a = answer_with(
            &s,
            &[Reading::Value(1e20)],
            &mut Health::new(),
            Replicas::default(),
        );
        assert_eq!(a[0].quantity().as_deref(), Some("100E"));
    }

    #[test]
    fn fallback_starts_after_more_than_failure_threshold_failures() {
        let cases = [
            // (behavior, current replicas, expected fallback replicas)
            ("static", 2, 6),
            ("currentReplicas", 2, 2),
            ("currentReplicasIfHigher", 9, 9),
            ("currentReplicasIfHigher", 2, 6),
            ("currentReplicasIfLower", 2, 2),
            ("currentReplicasIfLower", 9, 6),
        ];
        for (behavior, current, want) in cases {
            let s = so(
                &format!(
                    "  fallback: {{failureThreshold: 3, replicas: 6, behavior: {behavior}}}\n"
                ),
                QUEUE,
            );
            let mut health = Health::new();
            let replicas = Replicas {
                current,
                ready: current,
            };
            for n in 1..=3 {
                let a = answer_with(&s, &[Reading::Failed], &mut health, replicas);
                assert!(
                    a[0].value.is_err(),
                    "{behavior}: failure {n} is still an error"
                );
                assert!(!fallback_active(&s, &health));
            }
            let a = answer_with(&s, &[Reading::Failed], &mut health, replicas);
            assert_eq!(
                a[0].value,
                Ok(20.0 * f64::from(want)),
                "{behavior} with {current}"
            );
            assert!(a[0].fallback && fallback_active(&s, &health));
            // A good read resets the count.
            let a = answer_with(&s, &[Reading::Value(7.0)], &mut health, replicas);
            assert_eq!(a[0].value, Ok(7.0));
            assert!(!fallback_active(&s, &health));
        }
    }

    #[test]
    fn value_metrics_fall_back_per_ready_replica() {
        let s = so(
            "  fallback: {failureThreshold: 0, replicas: 6}\n",
            "  - {type: prometheus, metricType: Value, metadata: {threshold: \"10\"}}\n",
        );
        let a = answer_with(
            &s,
            &[Reading::Failed],
            &mut Health::new(),
            Replicas {
                current: 3,
                ready: 3,
            },
        );
        assert_eq!(a[0].value, Ok(20.0), "10 * 6 / 3 ready");
        let a = answer_with(
            &s,
            &[Reading::Failed],
            &mut Health::new(),
            Replicas {
                current: 3,
                ready: 0,
            },
        );
        assert!(a[0].value.is_err());
    }

    #[test]
    fn without_fallback_a_failure_is_an_error_and_health_is_not_kept() {
        let s = so("", QUEUE);
        let mut health = Health::new();
        assert!(
            answer_with(&s, &[Reading::Failed], &mut health, Replicas::default())[0]
                .value
                .is_err()
        );
        assert!(health.is_empty());
    }

    #[test]
    fn the_formula_makes_the_composite_metric_and_its_activity() {
        let s = so(
            "  advanced:\n    scalingModifiers: {formula: \"(queue + backlog) / 2\", target: \"10\", activationTarget: \"4\"}\n",
            "  - {type: rabbitmq, name: queue, metadata: {queueName: a, value: \"1\"}}\n  - {type: prometheus, name: backlog, metadata: {threshold: \"1\"}}\n",
        );
        let a = answer_with(
            &s,
            &[Reading::Value(30.0), Reading::Value(10.0)],
            &mut Health::new(),
            Replicas::default(),
        );
        assert_eq!(
            a,
            [Answer {
                metric: COMPOSITE_METRIC.into(),
                value: Ok(20.0),
                fallback: false
            }]
        );
        let triggers = trigger_metrics(&s).unwrap();
        let act = |q: f64, b: f64| {
            activity(&s, &triggers, &|t: &TriggerMetric| {
                Reading::Value(if t.index == 0 { q } else { b })
            })
        };
        assert!(act(30.0, 10.0).active);
        assert!(
            !act(4.0, 4.0).active,
            "4 is not above the activation target 4"
        );
        let failed = activity(&s, &triggers, &|_| Reading::Failed);
        assert!(failed.error && !failed.active);
    }

    #[test]
    fn a_trigger_is_active_above_its_activation_threshold() {
        let s = so("", QUEUE);
        let triggers = trigger_metrics(&s).unwrap();
        assert!(!activity(&s, &triggers, &|_| Reading::Value(5.0)).active);
        let a = activity(&s, &triggers, &|_| Reading::Value(6.0));
        assert_eq!(
            (a.active, a.active_triggers),
            (true, vec!["queue".to_owned()])
        );
    }
}
