//! KEDA's operator around the HPA: the controller's reconcile (Ready,
//! Paused, whether the HPA exists) and the scale loop's poll, which scales
//! between 0 (or `idleReplicaCount`) and the HPA's minimum and keeps the
//! Active condition (`controllers/keda/scaledobject_controller.go`,
//! `pkg/scaling/executor/scale_scaledobjects.go`). Decide, then do: these
//! return what to change; the caller writes it.

use jiff::{SignedDuration, Timestamp};

use super::adapter::{Activity, Health, fallback_active};
use super::scaled_object::ScaledObject;

/// Seconds between polls unless `pollingInterval` says otherwise.
pub const DEFAULT_POLLING_INTERVAL: i32 = 30;
/// Seconds of inactivity before scaling to idle/0 by default.
pub const DEFAULT_COOLDOWN_PERIOD: i32 = 300;

/// A ScaledObject condition (`status.conditions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// `True`, `False` or `Unknown`.
    pub status: &'static str,
    pub reason: String,
    pub message: String,
}

impl Condition {
    fn new(status: &'static str, reason: &str, message: &str) -> Self {
        Self {
            status,
            reason: reason.to_owned(),
            message: message.to_owned(),
        }
    }
}

/// An event KEDA records on the ScaledObject (reasons from `pkg/eventreason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KedaEvent {
    /// `Normal` or `Warning`.
    pub kind: &'static str,
    pub reason: &'static str,
    pub message: String,
}

/// What KEDA keeps in a ScaledObject's status, and the operator's memory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    pub ready: Option<Condition>,
    pub active: Option<Condition>,
    pub fallback: Option<Condition>,
    pub paused: Option<Condition>,
    pub last_active_time: Option<Timestamp>,
    pub health: Health,
    pub paused_replica_count: Option<i32>,
    /// When the ScaledObject was first seen (`initialCooldownPeriod`).
    pub created: Option<Timestamp>,
    /// When the scale loop last polled.
    pub last_poll: Option<Timestamp>,
}

impl Status {
    /// A condition by type (`Ready`, `Active`, `Fallback`, `Paused`).
    pub fn condition(&self, kind: &str) -> Option<&Condition> {
        match kind {
            "Ready" => self.ready.as_ref(),
            "Active" => self.active.as_ref(),
            "Fallback" => self.fallback.as_ref(),
            "Paused" => self.paused.as_ref(),
            _ => None,
        }
    }

    /// Updates the Fallback condition from the health counts, as
    /// `pkg/fallback` does after each read when fallback is configured.
    pub fn refresh_fallback(&mut self, so: &ScaledObject) {
        if so.spec.fallback.is_none() {
            return;
        }
        self.fallback = Some(if fallback_active(so, &self.health) {
            Condition::new(
                "True",
                "FallbackExists",
                "At least one trigger is falling back on this scaled object",
            )
        } else {
            Condition::new(
                "False",
                "NoFallbackFound",
                "No fallbacks are active on this scaled object",
            )
        });
    }
}

/// What the controller's reconcile decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Reconcile {
    /// The HPA should exist as generated.
    Hpa(serde_json::Value),
    /// Paused: no HPA, no scale loop; the target goes to the paused count
    /// if one is given.
    Paused { replicas: Option<i32> },
    /// The ScaledObject is refused (Ready=False); nothing else happens.
    Refused,
}

/// The controller's reconcile: validation, pausing, the HPA.
pub fn reconcile(
    so: &ScaledObject,
    namespace: &str,
    status: &mut Status,
    now: Timestamp,
    events: &mut Vec<KedaEvent>,
) -> Reconcile {
    status.created.get_or_insert(now);
    let paused_replicas = match so.paused_replicas() {
        Ok(p) => p,
        Err(e) => return refuse(status, events, &e.to_string()),
    };
    if so.paused() || paused_replicas.is_some() {
        status.paused_replica_count = paused_replicas;
        status.paused = Some(Condition::new(
            "True",
            "ScaledObjectPaused",
            "ScaledObject is paused",
        ));
        set_ready(status);
        return Reconcile::Paused {
            replicas: paused_replicas,
        };
    }
    status.paused_replica_count = None;
    if status.paused.as_ref().is_some_and(|c| c.status == "True") {
        status.paused = Some(Condition::new(
            "False",
            "ScaledObjectUnpaused",
            "pause annotation removed for ScaledObject",
        ));
    }
    match super::hpa::generate(so, namespace) {
        Ok(hpa) => {
            if status.ready.as_ref().is_none_or(|c| c.status != "True") {
                events.push(KedaEvent {
                    kind: "Normal",
                    reason: "ScaledObjectReady",
                    message: "ScaledObject is ready for scaling".to_owned(),
                });
            }
            set_ready(status);
            Reconcile::Hpa(hpa)
        }
        Err(e) => refuse(status, events, &e.to_string()),
    }
}

fn set_ready(status: &mut Status) {
    status.ready = Some(Condition::new(
        "True",
        "ScaledObjectReady",
        "ScaledObject is defined correctly and is ready for scaling",
    ));
}

fn refuse(status: &mut Status, events: &mut Vec<KedaEvent>, message: &str) -> Reconcile {
    status.ready = Some(Condition::new("False", "ScaledObjectCheckFailed", message));
    events.push(KedaEvent {
        kind: "Warning",
        reason: "ScaledObjectCheckFailed",
        message: message.to_owned(),
    });
    Reconcile::Refused
}

/// Whether the scale loop polls now (every `pollingInterval`).
pub fn poll_due(so: &ScaledObject, status: &Status, now: Timestamp) -> bool {
    let interval = SignedDuration::from_secs(i64::from(
        so.spec.polling_interval.unwrap_or(DEFAULT_POLLING_INTERVAL),
    ));
    status
        .last_poll
        .is_none_or(|last| now.duration_since(last) >= interval)
}

/// One poll of the scale loop (`RequestScale`): the replica count to set on
/// the target, if any. `current` is the target's `spec.replicas`.
pub fn poll(
    so: &ScaledObject,
    status: &mut Status,
    activity: &Activity,
    current: i32,
    now: Timestamp,
    events: &mut Vec<KedaEvent>,
) -> Option<i32> {
    status.last_poll = Some(now);
    let spec = &so.spec;
    let min = spec.min_replica_count.unwrap_or(0);
    let target = format!(
        "{} {}",
        spec.scale_target_ref.kind(),
        spec.scale_target_ref.name
    );
    let mut scale_to = None;
    if activity.error {
        events.push(KedaEvent {
            kind: "Warning",
            reason: "KEDAScalerFailed",
            message: "a trigger failed to read its source".to_owned(),
        });
    }
    if activity.active {
        if (spec.idle_replica_count.is_some() && current < min) || current == 0 {
            if !so.pauses_scale(super::scaled_object::PAUSED_SCALE_OUT_ANNOTATION) {
                let to = min.max(1);
                events.push(KedaEvent {
                    kind: "Normal",
                    reason: "KEDAScaleTargetActivated",
                    message: format!(
                        "Scaled {target} from {current} to {to}, triggered by {}",
                        activity.active_triggers.join(";")
                    ),
                });
                scale_to = Some(to);
                status.last_active_time = Some(now);
            }
        } else if activity.error {
            set_ready_unknown(status);
        } else {
            status.last_active_time = Some(now);
        }
    } else {
        let fallback_replicas = spec.fallback.as_ref().is_some_and(|f| f.replicas != 0);
        if activity.error && fallback_replicas {
            // Fallback will take over through the HPA after the threshold.
        } else if activity.error && spec.fallback.is_none() {
            status.ready = Some(Condition::new(
                "False",
                "TriggerError",
                "Triggers defined in ScaledObject are not working correctly",
            ));
        } else if spec.idle_replica_count.is_some_and(|idle| current > idle)
            || (current > 0 && min == 0)
        {
            scale_to = scale_to_idle(so, status, current, now, events);
        } else if current < min && spec.idle_replica_count.is_none() {
            scale_to = Some(min);
        }
    }
    let active = activity.active;
    let cooling = status
        .active
        .as_ref()
        .is_some_and(|c| c.reason == "ScalerCooldown");
    if status
        .active
        .as_ref()
        .is_none_or(|c| (c.status == "True") != active)
        && (active || !cooling)
    {
        status.active = Some(if active {
            Condition::new(
                "True",
                "ScalerActive",
                "Scaling is performed because triggers are active",
            )
        } else {
            Condition::new(
                "False",
                "ScalerNotActive",
                "Scaling is not performed because triggers are not active",
            )
        });
    }
    status.refresh_fallback(so);
    scale_to
}

fn set_ready_unknown(status: &mut Status) {
    status.ready = Some(Condition::new(
        "Unknown",
        "PartialTriggerError",
        "Some triggers defined in ScaledObject are not working correctly",
    ));
}

/// `scaleToZeroOrIdle`: after the cooldown, to `idleReplicaCount` or the
/// minimum (0); before it, the Active condition says it cools down.
fn scale_to_idle(
    so: &ScaledObject,
    status: &mut Status,
    current: i32,
    now: Timestamp,
    events: &mut Vec<KedaEvent>,
) -> Option<i32> {
    if so.pauses_scale(super::scaled_object::PAUSED_SCALE_IN_ANNOTATION) {
        return None;
    }
    let secs = |s: Option<i32>, d: i32| SignedDuration::from_secs(i64::from(s.unwrap_or(d)));
    let cooldown = secs(so.spec.cooldown_period, DEFAULT_COOLDOWN_PERIOD);
    let initial = secs(so.spec.initial_cooldown_period, 0);
    // Go's time.Before: strictly after the end of the period. Never active:
    // KEDA compares with the creationTimestamp, which the API server
    // truncates to the second and the scale loop's first poll always
    // follows, so a poll at the creation instant of the virtual clock is
    // already past it.
    let due = match status.last_active_time {
        None => status.created.is_none_or(|c| now >= c + initial),
        Some(last) => now > last + cooldown,
    };
    if !due {
        status.active = Some(Condition::new(
            "False",
            "ScalerCooldown",
            "Scaler cooling down because triggers are not active",
        ));
        return None;
    }
    let to = so
        .spec
        .idle_replica_count
        .unwrap_or_else(|| so.spec.min_replica_count.unwrap_or(0));
    let spec = &so.spec.scale_target_ref;
    events.push(KedaEvent {
        kind: "Normal",
        reason: "KEDAScaleTargetDeactivated",
        message: format!(
            "Deactivated {} {} from {current} to {to}",
            spec.kind(),
            spec.name
        ),
    });
    status.active = Some(Condition::new(
        "False",
        "ScalerNotActive",
        "Scaling is not performed because triggers are not active",
    ));
    Some(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn so(extra: &str) -> ScaledObject {
        ScaledObject::from_yaml(
            &format!("apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {{name: w}}\nspec:\n  scaleTargetRef: {{name: w}}\n{extra}  triggers:\n  - {{type: rabbitmq, name: queue, metadata: {{queueName: q, value: \"20\"}}}}\n"),
            "test",
        )
        .unwrap()
    }

    fn t(secs: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_secs(secs)
    }

    fn active(on: bool) -> Activity {
        Activity {
            active: on,
            error: false,
            active_triggers: if on { vec!["queue".into()] } else { vec![] },
        }
    }

    /// (minReplicaCount/idle, current replicas, active, seconds since last
    /// activity, expected scale).
    #[test]
    fn the_scale_loop_moves_between_zero_and_the_minimum() {
        type Case = (&'static str, i32, bool, Option<i64>, Option<i32>);
        let cases: &[Case] = &[
            ("  minReplicaCount: 0\n", 0, true, None, Some(1)),
            ("  minReplicaCount: 3\n", 0, true, None, Some(3)),
            ("  minReplicaCount: 0\n", 2, true, Some(0), None),
            // Inactive: cooldown (300s by default) must pass first, strictly.
            ("  minReplicaCount: 0\n", 2, false, Some(300), None),
            ("  minReplicaCount: 0\n", 2, false, Some(301), Some(0)),
            (
                "  minReplicaCount: 0\n  cooldownPeriod: 30\n",
                2,
                false,
                Some(31),
                Some(0),
            ),
            // Never active: scaled down at once (no initial cooldown).
            ("  minReplicaCount: 0\n", 2, false, None, Some(0)),
            // The HPA handles everything above a minimum above 0.
            ("  minReplicaCount: 1\n", 4, false, Some(1000), None),
            // Below the minimum, inactive: back to the minimum.
            ("  minReplicaCount: 2\n", 1, false, None, Some(2)),
            // Idle replicas: down to idle, up to the minimum on activity.
            (
                "  idleReplicaCount: 0\n  minReplicaCount: 2\n",
                3,
                false,
                Some(301),
                Some(0),
            ),
            (
                "  idleReplicaCount: 0\n  minReplicaCount: 2\n",
                0,
                true,
                None,
                Some(2),
            ),
        ];
        for (extra, current, on, since, want) in cases {
            let s = so(extra);
            let mut status = Status {
                created: Some(t(0)),
                ..Status::default()
            };
            let now = t(10_000);
            status.last_active_time = since.map(|d| now - SignedDuration::from_secs(d));
            let got = poll(
                &s,
                &mut status,
                &active(*on),
                *current,
                now,
                &mut Vec::new(),
            );
            assert_eq!(
                got, *want,
                "{extra} current {current} active {on} since {since:?}"
            );
        }
    }

    #[test]
    fn a_never_active_scaled_object_goes_idle_at_its_first_poll() {
        // keda.sh's idleReplicaCount example: idle 0, min 10. The first poll
        // comes at the creation instant of the virtual clock.
        let s = so("  idleReplicaCount: 0\n  minReplicaCount: 10\n");
        let mut status = Status {
            created: Some(t(0)),
            ..Status::default()
        };
        let mut events = Vec::new();
        let got = poll(&s, &mut status, &active(false), 10, t(0), &mut events);
        assert_eq!(got, Some(0));
        assert_eq!(events[0].reason, "KEDAScaleTargetDeactivated");
        // With an initial cooldown, not before it has passed.
        let s = so("  minReplicaCount: 0\n  initialCooldownPeriod: 120\n");
        let mut status = Status {
            created: Some(t(0)),
            ..Status::default()
        };
        assert_eq!(
            poll(&s, &mut status, &active(false), 2, t(119), &mut Vec::new()),
            None
        );
        assert_eq!(
            poll(&s, &mut status, &active(false), 2, t(120), &mut Vec::new()),
            Some(0)
        );
    }

    #[test]
    fn activation_and_deactivation_record_keda_s_events_and_conditions() {
        let s = so("  minReplicaCount: 0\n  cooldownPeriod: 60\n");
        let mut status = Status {
            created: Some(t(0)),
            ..Status::default()
        };
        let mut events = Vec::new();
        assert_eq!(
            poll(&s, &mut status, &active(true), 0, t(10), &mut events),
            Some(1)
        );
        assert_eq!(events[0].reason, "KEDAScaleTargetActivated");
        assert_eq!(
            events[0].message,
            "Scaled Deployment w from 0 to 1, triggered by queue"
        );
        assert_eq!(status.condition("Active").unwrap().status, "True");
        assert_eq!(
            poll(&s, &mut status, &active(false), 1, t(40), &mut events),
            None
        );
        assert_eq!(status.condition("Active").unwrap().reason, "ScalerCooldown");
        assert_eq!(
            poll(&s, &mut status, &active(false), 1, t(71), &mut events),
            Some(0)
        );
        assert_eq!(events.last().unwrap().reason, "KEDAScaleTargetDeactivated");
        assert_eq!(
            status.condition("Active").unwrap().reason,
            "ScalerNotActive"
        );
    }

    #[test]
    fn paused_scaled_objects_get_no_hpa() {
        let mut s = so("");
        let mut status = Status::default();
        s.metadata
            .annotations
            .insert("autoscaling.keda.sh/paused".into(), "true".into());
        assert_eq!(
            reconcile(&s, "ns", &mut status, t(0), &mut Vec::new()),
            Reconcile::Paused { replicas: None }
        );
        assert_eq!(status.condition("Paused").unwrap().status, "True");
        s.metadata.annotations.clear();
        assert!(matches!(
            reconcile(&s, "ns", &mut status, t(1), &mut Vec::new()),
            Reconcile::Hpa(_)
        ));
        assert_eq!(
            status.condition("Paused").unwrap().reason,
            "ScaledObjectUnpaused"
        );
        s.metadata
            .annotations
            .insert("autoscaling.keda.sh/paused-replicas".into(), "2".into());
        assert_eq!(
            reconcile(&s, "ns", &mut status, t(2), &mut Vec::new()),
            Reconcile::Paused { replicas: Some(2) }
        );
    }

    #[test]
    fn a_refused_scaled_object_is_not_ready() {
        let s = so("  minReplicaCount: 5\n  maxReplicaCount: 2\n");
        let mut status = Status::default();
        let mut events = Vec::new();
        assert_eq!(
            reconcile(&s, "ns", &mut status, t(0), &mut events),
            Reconcile::Refused
        );
        let ready = status.condition("Ready").unwrap();
        assert_eq!(
            (ready.status, ready.reason.as_str()),
            ("False", "ScaledObjectCheckFailed")
        );
        assert_eq!(events[0].reason, "ScaledObjectCheckFailed");
    }

    #[test]
    fn polls_follow_the_polling_interval() {
        let s = so("  pollingInterval: 30\n");
        let mut status = Status::default();
        assert!(poll_due(&s, &status, t(0)));
        status.last_poll = Some(t(0));
        assert!(!poll_due(&s, &status, t(15)));
        assert!(poll_due(&s, &status, t(30)));
    }
}
