//! The HPA KEDA's controller generates for a ScaledObject
//! (`controllers/keda/hpa.go`: `newHPAForScaledObject`,
//! `getScaledObjectMetricSpecs`).

use serde_json::{Value, json};

use super::KEDA_VERSION;
use super::scaled_object::{
    OWNER_LABEL, PAUSED_SCALE_IN_ANNOTATION, PAUSED_SCALE_OUT_ANNOTATION, ScaledObject,
    ScaledObjectError, hpa_max_replicas, hpa_min_replicas,
};
use super::scalers::{Target, TriggerMetric, milli_quantity, trigger_metric_in};

/// The name of the one metric scalingModifiers put in the HPA.
pub const COMPOSITE_METRIC: &str = "composite-metric";

/// The generated HPA's name: `advanced.horizontalPodAutoscalerConfig.name`,
/// else `keda-hpa-NAME`.
pub fn hpa_name(so: &ScaledObject) -> String {
    so.spec
        .advanced
        .as_ref()
        .and_then(|a| a.horizontal_pod_autoscaler_config.as_ref())
        .and_then(|c| c.name.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("keda-hpa-{}", so.metadata.name))
}

/// The metrics of every trigger, in trigger order.
pub fn trigger_metrics(so: &ScaledObject) -> Result<Vec<TriggerMetric>, ScaledObjectError> {
    so.spec
        .triggers
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let ns = so.metadata.namespace.as_deref().unwrap_or("default");
            trigger_metric_in(i, t, ns, so.modifiers().is_some())
                .map_err(|e| so.invalid(e.to_string()))
        })
        .collect()
}

/// The HPA (autoscaling/v2, as JSON) KEDA creates for `so` in `namespace`.
pub fn generate(so: &ScaledObject, namespace: &str) -> Result<Value, ScaledObjectError> {
    so.validate()?;
    let name = hpa_name(so);
    let metrics = metric_specs(so)?;

    let mut behavior = so
        .spec
        .advanced
        .as_ref()
        .and_then(|a| a.horizontal_pod_autoscaler_config.as_ref())
        .and_then(|c| c.behavior.clone());
    for (annotation, side) in [
        (PAUSED_SCALE_IN_ANNOTATION, "scaleDown"),
        (PAUSED_SCALE_OUT_ANNOTATION, "scaleUp"),
    ] {
        if so.pauses_scale(annotation) {
            let b = behavior.get_or_insert_with(|| json!({}));
            b[side]["selectPolicy"] = json!("Disabled");
        }
    }

    let mut label_name: String = name.chars().take(63).collect();
    if name.len() > 63 {
        label_name = label_name
            .trim_end_matches(|c: char| !c.is_alphanumeric())
            .to_owned();
    }
    let mut labels = json!({
        "app.kubernetes.io/name": label_name,
        "app.kubernetes.io/version": KEDA_VERSION,
        "app.kubernetes.io/part-of": so.metadata.name,
        "app.kubernetes.io/managed-by": "keda-operator",
    });
    for (k, v) in &so.metadata.labels {
        labels[k] = json!(v);
    }

    let (mut min, mut max) = (hpa_min_replicas(&so.spec), hpa_max_replicas(&so.spec));
    if let Some(paused) = so.paused_replicas()? {
        // An HPA's minReplicas cannot be 0.
        min = if paused == 0 { 1 } else { paused };
        max = min;
    }

    let target = &so.spec.scale_target_ref;
    let mut hpa = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "scaleTargetRef": {"apiVersion": target.api_version(), "kind": target.kind(), "name": target.name},
            "minReplicas": min,
            "maxReplicas": max,
            "metrics": metrics,
        },
    });
    if !so.metadata.annotations.is_empty() {
        hpa["metadata"]["annotations"] = json!(so.metadata.annotations);
    }
    if let Some(b) = behavior {
        hpa["spec"]["behavior"] = b;
    }
    Ok(hpa)
}

/// The HPA's metrics: one per trigger (External ones sorted before
/// Resource ones, as KEDA sorts by type), or the resource ones and the one
/// composite metric of scalingModifiers.
pub fn metric_specs(so: &ScaledObject) -> Result<Vec<Value>, ScaledObjectError> {
    let triggers = trigger_metrics(so)?;
    let mut seen = std::collections::BTreeSet::new();
    for m in triggers.iter().filter(|m| !m.resource) {
        if !seen.insert(m.metric.clone()) {
            return Err(so.invalid(format!(
                "metricName {} defined multiple times in ScaledObject {}",
                m.metric, so.metadata.name
            )));
        }
    }
    let selector = json!({"matchLabels": {OWNER_LABEL: so.metadata.name}});
    let spec = |m: &TriggerMetric| -> (&'static str, Value) {
        match (&m.container, m.resource) {
            (Some(c), true) => (
                "ContainerResource",
                json!({"type": "ContainerResource", "containerResource": {
                    "name": m.metric, "container": c, "target": target_json(&m.target)}}),
            ),
            (None, true) => (
                "Resource",
                json!({"type": "Resource", "resource": {"name": m.metric, "target": target_json(&m.target)}}),
            ),
            _ => (
                "External",
                json!({"type": "External", "external": {
                    "metric": {"name": m.metric, "selector": selector},
                    "target": target_json(&m.target)}}),
            ),
        }
    };
    let mut specs: Vec<(&str, Value)> = triggers.iter().map(spec).collect();
    // Go's sort.Slice by type ("ContainerResource" < "External" < "Resource").
    specs.sort_by_key(|(kind, _)| *kind);
    let Some(modifiers) = so.modifiers() else {
        return Ok(specs.into_iter().map(|(_, s)| s).collect());
    };
    let metric_type = modifiers.metric_type.as_deref().unwrap_or("AverageValue");
    let target: f64 = modifiers.target.parse().unwrap_or(0.0);
    let quantity = milli_quantity(target);
    let target = match metric_type {
        "AverageValue" => json!({"type": "AverageValue", "averageValue": quantity}),
        "Value" => json!({"type": "Value", "value": quantity}),
        other => {
            return Err(so.invalid(format!(
                "error metric target type is {other}, but it needs to be AverageValue or Value for external metrics"
            )));
        }
    };
    let mut out: Vec<Value> = specs
        .into_iter()
        .filter(|(kind, _)| *kind != "External")
        .map(|(_, s)| s)
        .collect();
    out.push(json!({"type": "External", "external": {
        "metric": {"name": COMPOSITE_METRIC, "selector": selector},
        "target": target}}));
    Ok(out)
}

fn target_json(t: &Target) -> Value {
    match t {
        Target::AverageValue(q) => json!({"type": "AverageValue", "averageValue": q}),
        Target::Value(q) => json!({"type": "Value", "value": q}),
        Target::Utilization(p) => json!({"type": "Utilization", "averageUtilization": p}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn so(spec: &str) -> ScaledObject {
        ScaledObject::from_yaml(
            &format!("apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\n{spec}"),
            "test",
        )
        .unwrap()
    }

    const CRON: &str = "type: cron\n    metadata: {timezone: UTC, start: 0 * * * *, end: 1 * * * *, desiredReplicas: \"1\"}";

    /// ScaledObject -> HPA pairs from KEDA's own tests
    /// (`controllers/keda/scaledobject_controller_test.go`, `hpa_test.go`)
    /// and its documented defaults.
    #[test]
    fn generated_hpas_match_keda_s_tests() {
        // "cleans up a deleted trigger from the HPA": two cron triggers.
        let h = generate(&so(&format!(
            "metadata: {{name: clean-up-test}}\nspec:\n  scaleTargetRef: {{name: clean-up}}\n  triggers:\n  - {CRON}\n  - type: cron\n    metadata: {{timezone: UTC, start: 2 * * * *, end: 3 * * * *, desiredReplicas: \"2\"}}\n"
        )), "default").unwrap();
        assert_eq!(h["metadata"]["name"], "keda-hpa-clean-up-test");
        assert_eq!(
            h["spec"]["metrics"][0]["external"]["metric"]["name"],
            "s0-cron-UTC-0xxxx-1xxxx"
        );
        assert_eq!(
            h["spec"]["metrics"][1]["external"]["metric"]["name"],
            "s1-cron-UTC-2xxxx-3xxxx"
        );
        assert_eq!(
            h["spec"]["metrics"][0]["external"]["metric"]["selector"]["matchLabels"][OWNER_LABEL],
            "clean-up-test"
        );
        assert_eq!(h["spec"]["minReplicas"], 1);
        assert_eq!(h["spec"]["maxReplicas"], 100);
        assert_eq!(
            h["spec"]["scaleTargetRef"],
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "clean-up"})
        );

        // "cleans up old hpa when hpa name is updated": the configured name.
        let h = generate(&so(&format!(
            "metadata: {{name: so-changing-name}}\nspec:\n  scaleTargetRef: {{name: changing-name}}\n  advanced:\n    horizontalPodAutoscalerConfig: {{name: new-so-changing-name}}\n  triggers:\n  - {CRON}\n"
        )), "default").unwrap();
        assert_eq!(h["metadata"]["name"], "new-so-changing-name");
        assert_eq!(
            h["metadata"]["labels"]["app.kubernetes.io/name"],
            "new-so-changing-name"
        );

        // "sets scale down select policy to Disabled" with paused-scale-in,
        // over a behavior that had Min.
        let h = generate(&so(&format!(
            "metadata: {{name: so-x, annotations: {{autoscaling.keda.sh/paused-scale-in: \"true\"}}}}\nspec:\n  scaleTargetRef: {{name: x}}\n  minReplicaCount: 1\n  maxReplicaCount: 10\n  advanced:\n    horizontalPodAutoscalerConfig:\n      behavior: {{scaleDown: {{selectPolicy: Min}}}}\n  triggers:\n  - {CRON}\n"
        )), "default").unwrap();
        assert_eq!(
            h["spec"]["behavior"]["scaleDown"]["selectPolicy"],
            "Disabled"
        );
        assert_eq!(h["spec"]["maxReplicas"], 10);
        assert_eq!(
            h["metadata"]["annotations"]["autoscaling.keda.sh/paused-scale-in"],
            "true"
        );

        // "ready condition" test: a cpu Utilization trigger and an external
        // one make 2 metrics, External sorted first.
        let h = generate(&so(
            "metadata: {name: so-conditionchange}\nspec:\n  scaleTargetRef: {name: conditionchange}\n  minReplicaCount: 1\n  maxReplicaCount: 5\n  triggers:\n  - {type: cpu, metricType: Utilization, metadata: {value: \"50\"}}\n  - {type: prometheus, metadata: {threshold: \"10\"}}\n"
        ), "default").unwrap();
        let metrics = h["spec"]["metrics"].as_array().unwrap();
        assert_eq!(metrics.len(), 2);
        assert_eq!(metrics[0]["type"], "External");
        assert_eq!(
            metrics[1],
            json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}})
        );

        // "doesn't allow MinReplicaCount > MaxReplicaCount" and the idle checks.
        for bounds in [
            "minReplicaCount: 10\n  maxReplicaCount: 5",
            "idleReplicaCount: 10\n  minReplicaCount: 5",
            "idleReplicaCount: 10\n  maxReplicaCount: 5",
        ] {
            let s = so(&format!(
                "metadata: {{name: so-minmax}}\nspec:\n  scaleTargetRef: {{name: minmax}}\n  {bounds}\n  triggers:\n  - {CRON}\n"
            ));
            assert!(generate(&s, "default").is_err(), "{bounds}");
        }

        // "Metric Names / With Duplicate Values": the same metric twice.
        let s = so(
            "metadata: {name: dup}\nspec:\n  scaleTargetRef: {name: d}\n  triggers:\n  - {type: prometheus, metadata: {threshold: \"100\", query: up}}\n  - {type: prometheus, metadata: {threshold: \"100\", query: up}}\n",
        );
        // Different indexes make s0-prometheus and s1-prometheus: unique.
        assert!(generate(&s, "default").is_ok());
    }

    #[test]
    fn a_cpu_trigger_with_a_container_name_is_a_container_resource_metric_sorted_first() {
        // keda.sh's cpu scaler page, the container example.
        let h = generate(&so(
            "metadata: {name: cpu-scaledobject}\nspec:\n  scaleTargetRef: {name: my-deployment}\n  triggers:\n  - {type: prometheus, metadata: {threshold: \"10\"}}\n  - {type: cpu, metricType: Utilization, metadata: {value: \"50\", containerName: foo}}\n"
        ), "default").unwrap();
        let metrics = h["spec"]["metrics"].as_array().unwrap();
        assert_eq!(
            metrics[0],
            json!({"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "foo",
                "target": {"type": "Utilization", "averageUtilization": 50}}})
        );
        assert_eq!(metrics[1]["type"], "External");
    }

    #[test]
    fn min_replicas_follow_min_replica_count_and_pauses() {
        let base = |extra: &str| {
            so(&format!(
                "metadata: {{name: w}}\nspec:\n  scaleTargetRef: {{name: w}}\n{extra}  triggers:\n  - {{type: rabbitmq, metadata: {{queueName: orders, value: \"20\"}}}}\n"
            ))
        };
        let min = |s: &ScaledObject| generate(s, "ns").unwrap()["spec"]["minReplicas"].clone();
        assert_eq!(min(&base("")), 1);
        assert_eq!(
            min(&base("  minReplicaCount: 0\n")),
            1,
            "0 gives an HPA minimum of 1"
        );
        assert_eq!(min(&base("  minReplicaCount: 3\n")), 3);
        let mut paused = base("  minReplicaCount: 2\n  maxReplicaCount: 9\n");
        paused
            .metadata
            .annotations
            .insert("autoscaling.keda.sh/paused-replicas".into(), "4".into());
        let h = generate(&paused, "ns").unwrap();
        assert_eq!(
            (
                h["spec"]["minReplicas"].clone(),
                h["spec"]["maxReplicas"].clone()
            ),
            (json!(4), json!(4))
        );
        paused
            .metadata
            .annotations
            .insert("autoscaling.keda.sh/paused-replicas".into(), "0".into());
        let h = generate(&paused, "ns").unwrap();
        assert_eq!(
            (
                h["spec"]["minReplicas"].clone(),
                h["spec"]["maxReplicas"].clone()
            ),
            (json!(1), json!(1))
        );
    }

    #[test]
    fn rabbitmq_queue_makes_the_documented_metric() {
        let h = generate(&so(
            "metadata: {name: orders, labels: {team: shop}}\nspec:\n  scaleTargetRef: {name: worker}\n  triggers:\n  - {type: rabbitmq, metadata: {queueName: orders, mode: QueueLength, value: \"20\"}}\n"
        ), "shop").unwrap();
        assert_eq!(
            h["spec"]["metrics"],
            json!([{"type": "External", "external": {
            "metric": {"name": "s0-rabbitmq-orders", "selector": {"matchLabels": {"scaledobject.keda.sh/name": "orders"}}},
            "target": {"type": "AverageValue", "averageValue": "20"}}}])
        );
        assert_eq!(
            h["metadata"]["labels"],
            json!({
            "app.kubernetes.io/name": "keda-hpa-orders", "app.kubernetes.io/version": KEDA_VERSION,
            "app.kubernetes.io/part-of": "orders", "app.kubernetes.io/managed-by": "keda-operator", "team": "shop"})
        );
        assert_eq!(h["metadata"]["namespace"], "shop");
    }

    #[test]
    fn scaling_modifiers_make_one_composite_metric() {
        let h = generate(&so(
            "metadata: {name: mix}\nspec:\n  scaleTargetRef: {name: w}\n  advanced:\n    scalingModifiers: {formula: \"(queue + backlog) / 2\", target: \"5\", metricType: Value}\n  triggers:\n  - {type: rabbitmq, name: queue, metadata: {queueName: a, value: \"1\"}}\n  - {type: prometheus, name: backlog, metadata: {threshold: \"1\"}}\n  - {type: memory, name: mem, metricType: AverageValue, metadata: {value: 200Mi}}\n"
        ), "ns").unwrap();
        let metrics = h["spec"]["metrics"].as_array().unwrap();
        assert_eq!(metrics.len(), 2, "{metrics:?}");
        assert_eq!(metrics[0]["type"], "Resource");
        assert_eq!(metrics[1]["external"]["metric"]["name"], COMPOSITE_METRIC);
        assert_eq!(
            metrics[1]["external"]["target"],
            json!({"type": "Value", "value": "5"})
        );
        let bad = so(
            "metadata: {name: mix}\nspec:\n  scaleTargetRef: {name: w}\n  advanced:\n    scalingModifiers: {formula: \"a\", target: \"5\", metricType: Utilization}\n  triggers:\n  - {type: prometheus, name: a, metadata: {threshold: \"1\"}}\n",
        );
        assert!(
            generate(&bad, "ns")
                .unwrap_err()
                .to_string()
                .contains("AverageValue or Value")
        );
    }
}
