//! The ScaledObject as KEDA keeps it in the cluster: its CustomResourceDefinition
//! (`keda.sh/v1alpha1`, a faithful subset of `config/crd/bases/keda.sh_scaledobjects.yaml`)
//! and the `status` KEDA writes through `/status` (`ScaledObjectStatus` in
//! `apis/keda/v1alpha1/scaledobject_types.go`). Kept apart from
//! [`super::operator`] so that what the model decides and what a
//! `kubectl get so -o yaml` shows have one translation.

use serde_json::{Map, Value, json};

use super::hpa::trigger_metrics;
use super::operator::{Condition, Status};
use super::scaled_object::ScaledObject;

/// The group of KEDA's resources.
pub const GROUP: &str = "keda.sh";
/// The served version of the ScaledObject.
pub const VERSION: &str = "v1alpha1";
/// The resource name of ScaledObjects.
pub const PLURAL: &str = "scaledobjects";
/// The CRD's name (`PLURAL.GROUP`).
pub const CRD_NAME: &str = "scaledobjects.keda.sh";

/// KEDA's ScaledObject CRD: names, scope, `status` subresource and
/// printer columns as KEDA's kubebuilder markers make them. The schema is
/// left open (`x-kubernetes-preserve-unknown-fields`): the model validates
/// the spec itself and reports refusals as `Ready=False`, as KEDA's
/// controller does for what its schema lets through.
pub fn crd() -> Value {
    let column =
        |name: &str, kind: &str, path: &str| json!({"name": name, "type": kind, "jsonPath": path});
    let condition = |t: &str| format!(".status.conditions[?(@.type==\"{t}\")].status");
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": CRD_NAME,
            "labels": {"app.kubernetes.io/part-of": "keda-operator"},
        },
        "spec": {
            "group": GROUP,
            "names": {
                "kind": "ScaledObject",
                "listKind": "ScaledObjectList",
                "plural": PLURAL,
                "singular": "scaledobject",
                "shortNames": ["so"],
            },
            "scope": "Namespaced",
            "versions": [{
                "name": VERSION,
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    column("ScaleTargetKind", "string", ".status.scaleTargetKind"),
                    column("ScaleTargetName", "string", ".spec.scaleTargetRef.name"),
                    column("Min", "integer", ".spec.minReplicaCount"),
                    column("Max", "integer", ".spec.maxReplicaCount"),
                    column("Triggers", "string", ".spec.triggers[*].type"),
                    column("Authentication", "string", ".spec.triggers[*].authenticationRef.name"),
                    column("Ready", "string", &condition("Ready")),
                    column("Active", "string", &condition("Active")),
                    column("Fallback", "string", &condition("Fallback")),
                    column("Paused", "string", &condition("Paused")),
                    column("Age", "date", ".metadata.creationTimestamp"),
                ],
                "schema": {"openAPIV3Schema": {
                    "description": "ScaledObject is a specification for a ScaledObject resource",
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                }},
            }],
        },
    })
}

/// What KEDA knows of the scale target, for the status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetFacts {
    /// The target's `spec.replicas` when KEDA first saw it.
    pub original_replicas: Option<i32>,
    /// The HPA KEDA made, while it exists.
    pub hpa: Option<String>,
}

/// The `status` KEDA writes for `so`: conditions in KEDA's order (Ready,
/// Active, Fallback, Paused; `Unknown` until set), the target's kind and
/// GVKR, the metric names, per-metric health and the HPA's name.
pub fn status(so: &ScaledObject, model: &Status, facts: &TargetFacts) -> Value {
    let condition = |kind: &str, c: Option<&Condition>| match c {
        Some(c) => {
            json!({"type": kind, "status": c.status, "reason": c.reason, "message": c.message})
        }
        None => json!({"type": kind, "status": "Unknown"}),
    };
    let mut out = Map::new();
    let target = &so.spec.scale_target_ref;
    let (group, version) = match target.api_version().split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", target.api_version()),
    };
    if model.ready.as_ref().is_some_and(|c| c.status == "True") {
        // KEDA resolves the target (and records it) once the spec passed its checks.
        out.insert(
            "scaleTargetKind".into(),
            json!(format!("{group}/{version}.{}", target.kind())),
        );
        out.insert(
            "scaleTargetGVKR".into(),
            json!({
                "group": group,
                "version": version,
                "kind": target.kind(),
                // The REST mapper's plural for the built-in workloads.
                "resource": format!("{}s", target.kind().to_lowercase()),
            }),
        );
        if let Some(r) = facts.original_replicas {
            out.insert("originalReplicaCount".into(), json!(r));
        }
    }
    if let Some(t) = model.last_active_time {
        out.insert(
            "lastActiveTime".into(),
            json!(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
        );
    }
    if let Ok(metrics) = trigger_metrics(so) {
        let (resource, external): (Vec<_>, Vec<_>) = metrics.iter().partition(|m| m.resource);
        let names = |ms: &[&super::scalers::TriggerMetric]| -> Vec<String> {
            ms.iter().map(|m| m.metric.clone()).collect()
        };
        if !external.is_empty() {
            out.insert("externalMetricNames".into(), json!(names(&external)));
        }
        if !resource.is_empty() {
            out.insert("resourceMetricNames".into(), json!(names(&resource)));
        }
    }
    if so.modifiers().is_some() {
        out.insert("compositeScalerName".into(), json!("composite-metric"));
    }
    out.insert(
        "conditions".into(),
        json!([
            condition("Ready", model.ready.as_ref()),
            condition("Active", model.active.as_ref()),
            condition("Fallback", model.fallback.as_ref()),
            condition("Paused", model.paused.as_ref()),
        ]),
    );
    if !model.health.is_empty() {
        let health: Map<String, Value> = model
            .health
            .iter()
            .map(|(metric, failures)| {
                let state = if *failures > 0 { "Failing" } else { "Happy" };
                (
                    metric.clone(),
                    json!({"numberOfFailures": failures, "status": state}),
                )
            })
            .collect();
        out.insert("health".into(), Value::Object(health));
    }
    if let Some(p) = model.paused_replica_count {
        out.insert("pausedReplicaCount".into(), json!(p));
    }
    if let Some(h) = &facts.hpa {
        out.insert("hpaName".into(), json!(h));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{self, Reconcile};

    fn so(yaml: &str) -> ScaledObject {
        ScaledObject::from_yaml(yaml, "test").unwrap()
    }

    const WORKER: &str = "
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker}
spec:
  scaleTargetRef: {name: worker}
  triggers:
    - type: rabbitmq
      metadata: {queueName: orders, value: '20'}
";

    #[test]
    fn a_ready_scaled_object_shows_its_target_hpa_and_conditions_in_keda_s_order() {
        let so = so(WORKER);
        let mut model = Status::default();
        let now = jiff::Timestamp::UNIX_EPOCH;
        let decision = operator::reconcile(&so, "default", &mut model, now, &mut Vec::new());
        assert!(matches!(decision, Reconcile::Hpa(_)));
        let facts = TargetFacts {
            original_replicas: Some(2),
            hpa: Some("keda-hpa-worker".to_owned()),
        };
        let got = status(&so, &model, &facts);
        assert_eq!(got["scaleTargetKind"], "apps/v1.Deployment");
        assert_eq!(
            got["scaleTargetGVKR"],
            json!({"group": "apps", "version": "v1", "kind": "Deployment", "resource": "deployments"})
        );
        assert_eq!(got["originalReplicaCount"], 2);
        assert_eq!(got["hpaName"], "keda-hpa-worker");
        assert_eq!(got["externalMetricNames"], json!(["s0-rabbitmq-orders"]));
        let kinds: Vec<&str> = got["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["Ready", "Active", "Fallback", "Paused"]);
        assert_eq!(got["conditions"][0]["reason"], "ScaledObjectReady");
        assert_eq!(
            got["conditions"][1],
            json!({"type": "Active", "status": "Unknown"})
        );
    }

    #[test]
    fn failing_reads_show_as_failing_health() {
        let so = so(WORKER);
        let mut model = Status::default();
        model.health.insert("s0-rabbitmq-orders".to_owned(), 3);
        let got = status(&so, &model, &TargetFacts::default());
        assert_eq!(
            got["health"]["s0-rabbitmq-orders"],
            json!({"numberOfFailures": 3, "status": "Failing"})
        );
        assert!(
            got.get("scaleTargetKind").is_none(),
            "not resolved before Ready"
        );
    }

    #[test]
    fn the_crd_serves_scaled_objects_with_status_as_keda_s_does() {
        let crd = crd();
        assert_eq!(crd["metadata"]["name"], CRD_NAME);
        assert_eq!(crd["spec"]["names"]["shortNames"], json!(["so"]));
        let version = &crd["spec"]["versions"][0];
        assert_eq!(version["subresources"], json!({"status": {}}));
        let columns: Vec<&str> = version["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            columns,
            [
                "ScaleTargetKind",
                "ScaleTargetName",
                "Min",
                "Max",
                "Triggers",
                "Authentication",
                "Ready",
                "Active",
                "Fallback",
                "Paused",
                "Age"
            ]
        );
    }
}
