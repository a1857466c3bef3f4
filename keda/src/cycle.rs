//! One turn of KEDA before an HPA sync, as scenarios and replays both run
//! it: the controller's reconcile, the scale loop's poll once
//! `pollingInterval` has passed (its 0 ↔ 1 steps), then the metrics
//! adapter's answers to the HPA's read. The instant, the trigger readings
//! and the target's replicas come in; what to change in the cluster goes
//! out, and the caller writes it.
//!
//! The answers are a second call ([`KedaLoop::answer`]) because the HPA
//! reads after KEDA's scale has landed, and fallback divides by the ready
//! pods the cluster shows then.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::Value;

use crate::adapter::{self, Answer, Reading, Replicas};
use crate::hpa::{hpa_name, trigger_metrics};
use crate::operator::{self, KedaEvent, Reconcile, Status};
use crate::scaled_object::ScaledObject;
use crate::scalers::TriggerMetric;

/// What a trigger with no reading reads: an unscripted trigger of a
/// scenario, a replay's column with no sample yet.
const UNREAD: Reading = Reading::Value(0.0);

/// What each trigger reads at one instant, by trigger index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Readings(BTreeMap<usize, Reading>);

impl Readings {
    /// Sets what trigger `index` (its place in `spec.triggers`) reads.
    pub fn set(&mut self, index: usize, reading: Reading) {
        self.0.insert(index, reading);
    }

    /// What trigger `t` reads; 0 when nothing was set for it.
    pub fn of(&self, t: &TriggerMetric) -> Reading {
        self.0.get(&t.index).copied().unwrap_or(UNREAD)
    }
}

impl FromIterator<(usize, Reading)> for Readings {
    fn from_iter<I: IntoIterator<Item = (usize, Reading)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

/// The HPA KEDA generated, to create or to update.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedHpa {
    pub name: String,
    /// autoscaling/v2, as JSON.
    pub object: Value,
}

/// A change of the target's replicas KEDA makes itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    pub to: i32,
    /// The `KEDAScaleTarget…` event of the poll that decided it; none for
    /// a paused-replicas count, or a return to the minimum KEDA records no
    /// event for.
    pub event: Option<KedaEvent>,
}

/// What one turn asks of the cluster, to be done in field order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Step {
    /// An HPA KEDA made and no longer wants (paused, or renamed).
    pub delete_hpa: Option<String>,
    /// The HPA as generated now.
    pub apply_hpa: Option<GeneratedHpa>,
    /// The target's new `spec.replicas`, when it differs from the current.
    pub scale: Option<Scale>,
}

/// KEDA's state for one ScaledObject: its status, its events, the HPA it
/// made.
#[derive(Debug, Clone)]
pub struct KedaLoop {
    so: ScaledObject,
    namespace: String,
    /// Empty when the triggers are invalid: reconcile then refuses the
    /// ScaledObject, so no poll reads them.
    triggers: Vec<TriggerMetric>,
    status: Status,
    events: Vec<KedaEvent>,
    /// The HPA KEDA made, while it exists.
    hpa: Option<String>,
}

impl KedaLoop {
    /// The ScaledObject `so` in `namespace`, not reconciled yet.
    pub fn new(so: ScaledObject, namespace: &str) -> Self {
        Self {
            triggers: trigger_metrics(&so).unwrap_or_default(),
            so,
            namespace: namespace.to_owned(),
            status: Status::default(),
            events: Vec::new(),
            hpa: None,
        }
    }

    pub fn scaled_object(&self) -> &ScaledObject {
        &self.so
    }

    /// The name of the workload it scales (`scaleTargetRef.name`).
    pub fn target(&self) -> &str {
        &self.so.spec.scale_target_ref.name
    }

    pub fn status(&self) -> &Status {
        &self.status
    }

    /// Every event KEDA recorded on the ScaledObject, oldest first.
    pub fn events(&self) -> &[KedaEvent] {
        &self.events
    }

    /// The name of the HPA KEDA made, while it exists.
    pub fn hpa(&self) -> Option<&str> {
        self.hpa.as_deref()
    }

    /// Whether fallback is in force (the `Fallback` condition).
    pub fn fallback_active(&self) -> bool {
        adapter::fallback_active(&self.so, &self.status.health)
    }

    /// The controller's reconcile alone, as when the ScaledObject is
    /// applied. `current` is the target's `spec.replicas`, `None` when it
    /// cannot be read.
    pub fn reconcile(&mut self, now: Timestamp, current: Option<i32>) -> Step {
        self.reconcile_hpa(now, current).0
    }

    /// One turn: the reconcile, then the scale loop's poll when it is due
    /// and the target's replicas are known (the poll waits for them).
    pub fn step(&mut self, now: Timestamp, readings: &Readings, current: Option<i32>) -> Step {
        let seen = self.events.len();
        let (mut step, hpa) = self.reconcile_hpa(now, current);
        let Some(current) = current else {
            return step;
        };
        if !hpa || !operator::poll_due(&self.so, &self.status, now) {
            return step;
        }
        let activity = adapter::activity(&self.so, &self.triggers, &|t| readings.of(t));
        let to = operator::poll(
            &self.so,
            &mut self.status,
            &activity,
            current,
            now,
            &mut self.events,
        );
        step.scale = to.filter(|to| *to != current).map(|to| Scale {
            to,
            event: self.events[seen..]
                .iter()
                .rev()
                .find(|e| e.reason.starts_with("KEDAScaleTarget"))
                .cloned(),
        });
        step
    }

    /// The adapter's answers to the HPA's read of its External metrics,
    /// counting failed reads toward fallback. `replicas` is the target as
    /// the HPA's read finds it, after the turn's scale.
    pub fn answer(&mut self, readings: &Readings, replicas: Replicas) -> Vec<Answer> {
        let answers = adapter::answer(
            &self.so,
            &self.triggers,
            &|t| readings.of(t),
            &mut self.status.health,
            replicas,
        );
        self.status.refresh_fallback(&self.so);
        answers
    }

    /// The reconcile's step, and whether the HPA is wanted (the scale loop
    /// runs only then).
    fn reconcile_hpa(&mut self, now: Timestamp, current: Option<i32>) -> (Step, bool) {
        let decision = operator::reconcile(
            &self.so,
            &self.namespace,
            &mut self.status,
            now,
            &mut self.events,
        );
        match decision {
            Reconcile::Hpa(object) => {
                let name = hpa_name(&self.so);
                let previous = self.hpa.replace(name.clone());
                let step = Step {
                    delete_hpa: previous.filter(|p| *p != name),
                    apply_hpa: Some(GeneratedHpa { name, object }),
                    scale: None,
                };
                (step, true)
            }
            Reconcile::Paused { replicas } => {
                let step = Step {
                    delete_hpa: self.hpa.take(),
                    apply_hpa: None,
                    scale: replicas
                        .filter(|r| Some(*r) != current)
                        .map(|to| Scale { to, event: None }),
                };
                (step, false)
            }
            Reconcile::Refused => (Step::default(), false),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

    use jiff::SignedDuration;

    use super::*;

    /// A ScaledObject of one rabbitmq trigger (`queue`, 20 per pod,
    /// active above 5), with `meta` added to its metadata and `spec` to
    /// its spec.
    fn so(meta: &str, spec: &str) -> ScaledObject {
        ScaledObject::from_yaml(
            &format!(
                "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {{name: w, namespace: ns{meta}}}\nspec:\n  scaleTargetRef: {{name: w}}\n{spec}  triggers:\n  - {{type: rabbitmq, name: queue, metadata: {{queueName: q, value: \"20\", activationValue: \"5\"}}}}\n"
            ),
            "test",
        )
        .unwrap()
    }

    fn at(secs: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_secs(secs)
    }

    fn queue(reading: Option<Reading>) -> Readings {
        reading.into_iter().map(|r| (0, r)).collect()
    }

    /// One turn: seconds on the clock, what the queue reads (`None`:
    /// unread), the target's replicas (`None`: unreadable), the scale
    /// expected and the event behind it.
    type Turn = (
        i64,
        Option<Reading>,
        Option<i32>,
        Option<i32>,
        Option<&'static str>,
    );

    #[test]
    fn each_turn_scales_between_zero_and_one_as_the_poll_decides() {
        let v = |x: f64| Some(Reading::Value(x));
        let activated = Some("KEDAScaleTargetActivated");
        let deactivated = Some("KEDAScaleTargetDeactivated");
        let cases: &[(&str, &str, &[Turn])] = &[
            (
                "an unread trigger reads 0: never active, to 0 at once",
                "",
                &[(0, None, Some(2), Some(0), deactivated)],
            ),
            (
                "above the activation value: 0 to 1",
                "",
                &[(0, v(6.0), Some(0), Some(1), activated)],
            ),
            (
                "at the activation value: not active, stays at 0",
                "",
                &[(0, v(5.0), Some(0), None, None)],
            ),
            (
                "a message before pollingInterval passes waits for the next poll",
                "",
                &[
                    (0, None, Some(0), None, None),
                    (29, v(50.0), Some(0), None, None),
                    (30, v(50.0), Some(0), Some(1), activated),
                ],
            ),
            (
                "active then idle: the cooldown (300 s) passes before 1 to 0",
                "",
                &[
                    (0, v(50.0), Some(1), None, None),
                    (300, None, Some(1), None, None),
                    (330, None, Some(1), Some(0), deactivated),
                ],
            ),
            (
                "the target's replicas unread: the poll waits for them",
                "",
                &[
                    (0, v(50.0), None, None, None),
                    (1, v(50.0), Some(0), Some(1), activated),
                ],
            ),
            (
                "a failed read is not activity",
                "",
                &[(0, Some(Reading::Failed), Some(0), None, None)],
            ),
            (
                "paused-replicas: to the count, then kept there without a poll",
                ", annotations: {autoscaling.keda.sh/paused-replicas: '3'}",
                &[
                    (0, v(50.0), Some(0), Some(3), None),
                    (30, None, Some(3), None, None),
                ],
            ),
            (
                "paused: no poll, whatever the triggers read",
                ", annotations: {autoscaling.keda.sh/paused: 'true'}",
                &[(0, v(50.0), Some(0), None, None)],
            ),
        ];
        for (name, extra, turns) in cases {
            let mut keda = KedaLoop::new(so(extra, ""), "ns");
            for (k, (secs, reading, current, to, event)) in turns.iter().enumerate() {
                let step = keda.step(at(*secs), &queue(*reading), *current);
                let got = step
                    .scale
                    .as_ref()
                    .map(|s| (s.to, s.event.as_ref().map(|e| e.reason)));
                assert_eq!(got, to.map(|t| (t, *event)), "{name}, turn {k}");
            }
        }
    }

    #[test]
    fn the_reconcile_applies_the_hpa_each_turn_and_a_pause_makes_none() {
        let mut keda = KedaLoop::new(so("", ""), "ns");
        let first = keda.reconcile(at(0), Some(1));
        let hpa = first.apply_hpa.unwrap();
        assert_eq!(hpa.name, "keda-hpa-w");
        assert_eq!(hpa.object["metadata"]["name"], "keda-hpa-w");
        assert_eq!((first.delete_hpa, first.scale), (None, None));
        let next = keda.step(at(15), &Readings::default(), Some(1));
        assert_eq!(
            next.apply_hpa.map(|h| h.name).as_deref(),
            Some("keda-hpa-w")
        );
        assert_eq!(next.delete_hpa, None, "the same HPA is kept, not replaced");
        assert_eq!(keda.hpa(), Some("keda-hpa-w"));

        let mut paused = KedaLoop::new(
            so(", annotations: {autoscaling.keda.sh/paused: 'true'}", ""),
            "ns",
        );
        let step = paused.step(at(0), &Readings::default(), Some(1));
        assert_eq!(step, Step::default());
        assert_eq!(paused.hpa(), None);
    }

    #[test]
    fn a_refused_scaled_object_gets_no_hpa_and_no_poll() {
        let refused = so("", "  minReplicaCount: 5\n  maxReplicaCount: 2\n");
        let mut keda = KedaLoop::new(refused, "ns");
        let step = keda.step(at(0), &queue(Some(Reading::Value(50.0))), Some(0));
        assert_eq!(step, Step::default());
        let ready = keda.status().ready.as_ref().unwrap();
        assert_eq!(
            (ready.status, ready.reason.as_str()),
            ("False", "ScaledObjectCheckFailed")
        );
        assert_eq!(keda.status().last_poll, None, "no poll");
        assert_eq!(keda.hpa(), None);
    }

    #[test]
    fn the_adapter_answers_0_for_an_unread_trigger_and_falls_back_after_the_threshold() {
        let spec = "  fallback: {failureThreshold: 1, replicas: 4}\n";
        let mut keda = KedaLoop::new(so("", spec), "ns");
        let replicas = Replicas {
            current: 2,
            ready: 2,
        };
        let failed = queue(Some(Reading::Failed));
        let values =
            |keda: &mut KedaLoop, readings: &Readings| -> Vec<(Result<f64, String>, bool)> {
                keda.answer(readings, replicas)
                    .into_iter()
                    .map(|a| (a.value, a.fallback))
                    .collect()
            };
        assert_eq!(values(&mut keda, &Readings::default()), [(Ok(0.0), false)]);
        let first = values(&mut keda, &failed);
        assert!(first[0].0.is_err() && !first[0].1, "{first:?}");
        assert!(
            !keda.fallback_active(),
            "one failure is within the threshold"
        );
        // Past failureThreshold: fallback.replicas (4) times the target (20).
        assert_eq!(values(&mut keda, &failed), [(Ok(80.0), true)]);
        assert!(keda.fallback_active());
        let fallback = keda.status().fallback.as_ref().unwrap();
        assert_eq!(fallback.status, "True");
        assert_eq!(
            values(&mut keda, &queue(Some(Reading::Value(30.0)))),
            [(Ok(30.0), false)]
        );
        assert!(!keda.fallback_active(), "a good read clears the count");
    }
}
