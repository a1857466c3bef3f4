//! Disagreements with the pure core: each observed reconcile is replayed
//! through `hpa_core::decide` and `hpa_core::finish` on the very inputs the
//! controller gave them, and the results are compared: the decision whole
//! (scale, reason, trace, and the carried status, events and history), and
//! the summary the observation keeps of `finish`'s outcome (desired
//! replicas, whether the status changed). The controller's shell must not
//! change a decision; any difference is counted.

use hpa_controller::ReconcileObservation;

/// What differs between an observed reconcile and its replay, if anything:
/// the first differing part, named for the report.
pub fn disagreement(observation: &ReconcileObservation) -> Option<String> {
    let replayed = hpa_core::decide(
        &observation.input,
        &observation.history,
        &observation.config,
        observation.now,
    );
    if replayed.scale_to != observation.decision.scale_to {
        return Some(format!(
            "{}: scale to {:?}, the core says {:?}",
            observation.key, observation.decision.scale_to, replayed.scale_to
        ));
    }
    if replayed != observation.decision {
        return Some(format!(
            "{}: the decision differs from the core's (reason or trace)",
            observation.key
        ));
    }
    // The outcome is a pure function of the decision, equal above: its
    // summary is compared, not the whole (the observation keeps no more).
    let outcome = hpa_core::finish(
        replayed,
        observation.rescale.clone(),
        observation.finished_at,
    );
    if outcome.status.desired_replicas != observation.desired_replicas {
        return Some(format!(
            "{}: desired replicas {}, the core says {}",
            observation.key, observation.desired_replicas, outcome.status.desired_replicas
        ));
    }
    if outcome.status_changed != observation.status_changed {
        return Some(format!(
            "{}: the status was {}written, the core says it {}",
            observation.key,
            if observation.status_changed {
                ""
            } else {
                "not "
            },
            if outcome.status_changed {
                "changed"
            } else {
                "did not change"
            },
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpa_core::decide::{Fetched, RescaleOutcome, ScaleInfo};
    use hpa_core::{DecisionInput, HpaHistory};
    use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
    use std::time::{Duration, Instant};

    /// An HPA on an external metric whose average per replica is twice its
    /// target (40 over 2 replicas against 10; AverageValue needs no pods):
    /// the core wants ceil(40 / 10) = 4 replicas.
    fn observation() -> ReconcileObservation {
        let hpa: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 1, "maxReplicas": 10,
                     "metrics": [{"type": "External", "external": {
                         "metric": {"name": "queue"},
                         "target": {"type": "AverageValue", "averageValue": "10"}}}]}
        }))
        .unwrap();
        let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        let external: Fetched = Fetched::External(Ok(hpa_core::decide::ExternalSample {
            values: vec![hpa_core::Quantity::parse("40").unwrap()],
            timestamp: now,
        }));
        let input = DecisionInput {
            hpa: hpa.into(),
            scale: ScaleInfo::new(2, 2, "app=web"),
            pods: Vec::new(),
            other_hpas: Vec::new(),
            metrics: vec![Some(external)],
        };
        let history = HpaHistory::default();
        let config = hpa_core::DecisionConfig::default();
        let decision = hpa_core::decide(&input, &history, &config, now);
        let rescale = if decision.scale_to.is_some() {
            RescaleOutcome::Succeeded
        } else {
            RescaleOutcome::NotNeeded
        };
        let outcome = hpa_core::finish(decision.clone(), rescale.clone(), now);
        assert!(outcome.status_changed, "the fixture's status must change");
        ReconcileObservation {
            key: "ns/web".into(),
            input,
            history,
            config,
            now,
            decision,
            rescale,
            finished_at: now,
            desired_replicas: outcome.status.desired_replicas,
            status_changed: outcome.status_changed,
            started: Instant::now(),
            duration: Duration::from_millis(1),
        }
    }

    #[test]
    fn a_faithful_reconcile_agrees_with_the_core() {
        let o = observation();
        assert_eq!(o.decision.scale_to, Some(4), "the fixture must rescale");
        assert_eq!(disagreement(&o), None);
    }

    #[test]
    fn a_different_scale_decision_is_caught() {
        let mut o = observation();
        o.decision.scale_to = Some(5);
        let found = disagreement(&o).unwrap();
        assert!(found.contains("scale to Some(5)"), "{found}");
    }

    #[test]
    fn a_different_reason_is_caught() {
        let mut o = observation();
        o.decision.rescale_reason.push_str(" (edited)");
        let found = disagreement(&o).unwrap();
        assert!(found.contains("the decision differs"), "{found}");
    }

    #[test]
    fn a_different_desired_replica_count_in_the_status_is_caught() {
        let mut o = observation();
        o.desired_replicas += 1;
        let found = disagreement(&o).unwrap();
        assert!(found.contains("desired replicas 5"), "{found}");
    }

    #[test]
    fn a_status_left_unwritten_that_the_core_changed_is_caught() {
        let mut o = observation();
        o.status_changed = false;
        let found = disagreement(&o).unwrap();
        assert!(found.contains("not written"), "{found}");
    }
}
