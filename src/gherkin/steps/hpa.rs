//! Steps that declare HorizontalPodAutoscalers: whole manifests, or an HPA
//! built up metric by metric.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Value, json};

use super::doc_string;
use crate::gherkin::kinds::KindRef;
use crate::gherkin::params::{Quantity, WorkloadKind};
use crate::gherkin::world::{HpaWorld, ObjKey, StepError, StepResult, hpa_resource, yaml};

#[given(expr = "the HPA:")]
async fn the_hpa(world: &mut HpaWorld, step: &Step) -> StepResult {
    let mut manifest = yaml(doc_string(step)?, "the HPA manifest")?;
    let version = match manifest.get("apiVersion").and_then(Value::as_str) {
        Some("autoscaling/v2") => "v2",
        Some("autoscaling/v1") => "v1",
        other => {
            return Err(StepError::Input(format!(
                "the HPA manifest: apiVersion {other:?} is not autoscaling/v2 or autoscaling/v1"
            )));
        }
    };
    let ns = manifest
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map_or_else(|| world.namespace.clone(), str::to_owned);
    manifest["metadata"]["namespace"] = json!(ns);
    world
        .create_dynamic(&ns, &hpa_resource(version), manifest)
        .await?;
    Ok(())
}

/// The API server refuses the HPA of the doc string (a 422 whose message
/// contains TEXT), as `kubectl apply` would show it.
#[then(expr = "the API server refuses the HPA saying {string}:")]
async fn refuses_the_hpa(world: &mut HpaWorld, step: &Step, text: String) -> StepResult {
    match the_hpa(world, step).await {
        Ok(()) => Err(StepError::Expectation(format!(
            "expected the API server to refuse the HPA saying {text:?}; it stored it"
        ))),
        // Not runnable here is not a refusal.
        Err(StepError::Env(e @ crate::testbed::env::EnvError::Unsupported(_))) => {
            Err(StepError::Env(e))
        }
        Err(StepError::Env(e)) => {
            let message = e.to_string();
            if message.contains(&text) {
                Ok(())
            } else {
                Err(StepError::Expectation(format!(
                    "the API server refused the HPA saying {message:?}, which does not contain {text:?}"
                )))
            }
        }
        Err(other) => Err(other),
    }
}

/// Reads the HPA through autoscaling/v1 and writes it back unchanged, as
/// every autoscaling/v1 client's update does (`kubectl edit
/// hpa.v1.autoscaling`, an older client library).
async fn written_back_through_v1(world: &mut HpaWorld, name: &str) -> StepResult {
    let (ns, n) = world.qualify(name);
    let env = world.env().await?;
    let api: Api<DynamicObject> =
        Api::namespaced_with(env.client.clone(), &ns, &hpa_resource("v1"));
    let read = api.get(&n).await.map_err(StepError::kube(format!(
        "reading HPA {ns}/{n} through autoscaling/v1"
    )))?;
    api.replace(&n, &PostParams::default(), &read)
        .await
        .map_err(StepError::kube(format!(
            "writing HPA {ns}/{n} back through autoscaling/v1"
        )))?;
    Ok(())
}

#[when(expr = "the HPA {string} is written back through the autoscaling v1 API")]
async fn v1_write_back(world: &mut HpaWorld, name: String) -> StepResult {
    written_back_through_v1(world, &name).await
}

/// The write-back of [`v1_write_back`] is refused with a message that
/// contains TEXT.
#[then(
    expr = "writing the HPA {string} back through the autoscaling v1 API is refused saying {string}"
)]
async fn v1_write_back_refused(world: &mut HpaWorld, name: String, text: String) -> StepResult {
    match written_back_through_v1(world, &name).await {
        Ok(()) => Err(StepError::Expectation(format!(
            "expected the API server to refuse the HPA {name} written back through autoscaling/v1 saying {text:?}; it stored it"
        ))),
        Err(StepError::Env(e)) if e.to_string().contains(&text) => Ok(()),
        Err(StepError::Env(e)) => Err(StepError::Expectation(format!(
            "the API server refused the HPA {name} saying {:?}, which does not contain {text:?}",
            e.to_string()
        ))),
        Err(other) => Err(other),
    }
}

#[given(expr = "an HPA {string} for {kind} {string} with min {int} and max {int} replicas")]
async fn an_hpa(
    world: &mut HpaWorld,
    name: String,
    kind: WorkloadKind,
    target: String,
    min: i32,
    max: i32,
) -> StepResult {
    let (ns, n) = world.qualify(&name);
    let manifest = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": n, "namespace": ns},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind.kind(), "name": target},
            "minReplicas": min,
            "maxReplicas": max,
        },
    });
    world
        .create_dynamic(&ns, &hpa_resource("v2"), manifest)
        .await?;
    world.metrics.new_hpa(ObjKey::new(ns, n));
    Ok(())
}

#[given(expr = "the HPA {string} scales on {word} utilization {int}%")]
async fn scales_on_utilization(
    world: &mut HpaWorld,
    name: String,
    resource: String,
    pct: i32,
) -> StepResult {
    let metric = json!({"type": "Resource", "resource": {"name": resource_name(&resource)?,
        "target": {"type": "Utilization", "averageUtilization": pct}}});
    add_metric(world, &name, metric).await
}

#[given(expr = "the HPA {string} scales on {word} average value {quantity}")]
async fn scales_on_average_value(
    world: &mut HpaWorld,
    name: String,
    resource: String,
    value: Quantity,
) -> StepResult {
    let metric = json!({"type": "Resource", "resource": {"name": resource_name(&resource)?,
        "target": {"type": "AverageValue", "averageValue": value.0}}});
    add_metric(world, &name, metric).await
}

#[given(expr = "the HPA {string} scales on container {string} {word} utilization {int}%")]
async fn scales_on_container(
    world: &mut HpaWorld,
    name: String,
    container: String,
    resource: String,
    pct: i32,
) -> StepResult {
    let metric = json!({"type": "ContainerResource", "containerResource": {"name": resource_name(&resource)?,
        "container": container, "target": {"type": "Utilization", "averageUtilization": pct}}});
    add_metric(world, &name, metric).await
}

#[given(expr = "the HPA {string} scales on pods metric {string} with average value {quantity}")]
async fn scales_on_pods_metric(
    world: &mut HpaWorld,
    name: String,
    metric: String,
    value: Quantity,
) -> StepResult {
    let spec = json!({"type": "Pods", "pods": {"metric": {"name": metric},
        "target": {"type": "AverageValue", "averageValue": value.0}}});
    add_metric(world, &name, spec).await
}

#[given(
    expr = "the HPA {string} scales on object metric {string} of {word} {string} with value {quantity}"
)]
async fn scales_on_object_value(
    world: &mut HpaWorld,
    name: String,
    metric: String,
    kind: String,
    object: String,
    value: Quantity,
) -> StepResult {
    let kind = world.resolve_kind(&kind).await?;
    let spec = object_metric(
        &metric,
        &kind,
        &object,
        json!({"type": "Value", "value": value.0}),
    );
    add_metric(world, &name, spec).await
}

#[given(
    expr = "the HPA {string} scales on object metric {string} of {word} {string} with average value {quantity}"
)]
async fn scales_on_object_average(
    world: &mut HpaWorld,
    name: String,
    metric: String,
    kind: String,
    object: String,
    value: Quantity,
) -> StepResult {
    let kind = world.resolve_kind(&kind).await?;
    let spec = object_metric(
        &metric,
        &kind,
        &object,
        json!({"type": "AverageValue", "averageValue": value.0}),
    );
    add_metric(world, &name, spec).await
}

#[given(
    expr = "the HPA {string} scales on external metric {string} with selector {string} and value {quantity}"
)]
async fn scales_on_external_value(
    world: &mut HpaWorld,
    name: String,
    metric: String,
    selector: String,
    value: Quantity,
) -> StepResult {
    let spec = external_metric(
        &metric,
        &selector,
        json!({"type": "Value", "value": value.0}),
    )?;
    add_metric(world, &name, spec).await
}

#[given(
    expr = "the HPA {string} scales on external metric {string} with selector {string} and average value {quantity}"
)]
async fn scales_on_external_average(
    world: &mut HpaWorld,
    name: String,
    metric: String,
    selector: String,
    value: Quantity,
) -> StepResult {
    let spec = external_metric(
        &metric,
        &selector,
        json!({"type": "AverageValue", "averageValue": value.0}),
    )?;
    add_metric(world, &name, spec).await
}

#[given(expr = "the HPA {string} has behavior:")]
#[when(expr = "the HPA {string} has behavior:")]
async fn has_behavior(world: &mut HpaWorld, step: &Step, name: String) -> StepResult {
    let behavior = yaml(doc_string(step)?, &format!("behavior of HPA {name}"))?;
    update_spec(world, &name, |spec| spec["behavior"] = behavior.clone()).await
}

#[given(expr = "the HPA {string} has status:")]
async fn has_status(world: &mut HpaWorld, step: &Step, name: String) -> StepResult {
    let status = yaml(doc_string(step)?, &format!("status of HPA {name}"))?;
    let (ns, n) = world.qualify(&name);
    world
        .merge_patch(
            &ns,
            &hpa_resource("v2"),
            &n,
            json!({"status": status}),
            true,
        )
        .await
}

/// `cpu` or `memory`: the resources a Resource metric can name.
fn resource_name(word: &str) -> Result<&str, StepError> {
    match word {
        "cpu" | "memory" => Ok(word),
        other => Err(StepError::Input(format!(
            "resource {other:?}: a Resource metric scales on cpu or memory"
        ))),
    }
}

/// Adds a metric to the HPA's spec, after the metrics earlier steps added
/// (the API server's default cpu metric is replaced by the first one).
async fn add_metric(world: &mut HpaWorld, name: &str, metric: Value) -> StepResult {
    let (ns, n) = world.qualify(name);
    let metrics = world.metrics.add_hpa_metric(ObjKey::new(ns, n), metric);
    update_spec(world, name, |spec| spec["metrics"] = json!(metrics)).await
}

/// Reads the HPA (v2), changes its spec, writes it back. A controller
/// acting on its own (a real cluster's) may write the HPA's status in
/// between: on a conflict the HPA is read again and the change made again.
async fn update_spec(world: &mut HpaWorld, name: &str, change: impl Fn(&mut Value)) -> StepResult {
    const ATTEMPTS: usize = 5;
    let (ns, n) = world.qualify(name);
    let client = world.env().await?.client.clone();
    let api: Api<DynamicObject> = Api::namespaced_with(client, &ns, &hpa_resource("v2"));
    for attempt in 1..=ATTEMPTS {
        let mut hpa = api
            .get(&n)
            .await
            .map_err(StepError::kube(format!("reading HPA {ns}/{n}")))?;
        let spec = hpa
            .data
            .get_mut("spec")
            .ok_or_else(|| StepError::State(format!("HPA {ns}/{n} has no spec")))?;
        change(spec);
        match api.replace(&n, &PostParams::default(), &hpa).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 && attempt < ATTEMPTS => continue,
            Err(e) => return Err(StepError::kube(format!("updating HPA {ns}/{n}"))(e)),
        }
    }
    Ok(())
}

fn object_metric(metric: &str, kind: &KindRef, object: &str, target: Value) -> Value {
    json!({"type": "Object", "object": {
        "describedObject": {"apiVersion": kind.api_version, "kind": kind.kind, "name": object},
        "metric": {"name": metric},
        "target": target}})
}

fn external_metric(metric: &str, selector: &str, target: Value) -> Result<Value, StepError> {
    let mut id = json!({"name": metric});
    let labels = selector_labels(selector)?;
    if !labels.is_empty() {
        id["selector"] = json!({"matchLabels": labels});
    }
    Ok(json!({"type": "External", "external": {"metric": id, "target": target}}))
}

/// Parses an equality selector (`a=b,c=d`; `""` is none) into labels.
pub(crate) fn selector_labels(
    selector: &str,
) -> Result<std::collections::BTreeMap<String, String>, StepError> {
    selector
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| {
                    (
                        k.trim().to_owned(),
                        v.trim().trim_start_matches('=').to_owned(),
                    )
                })
                .ok_or_else(|| {
                    StepError::Input(format!("selector {selector:?}: {p:?} is not label=value"))
                })
        })
        .collect()
}
