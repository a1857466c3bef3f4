//! Steps about KEDA ScaledObjects: declaring one, scripting what its
//! triggers read, and what KEDA reports (conditions, activity, events).
//! The generated HPA is an ordinary HPA for every other step.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};

use super::doc_string;
use crate::gherkin::world::{HpaWorld, ObjKey, StepError, StepResult, yaml};
use hpa_keda::adapter::Reading;

/// The key of ScaledObject `so` (`ns/name`, or a name in the scenario's
/// namespace).
fn so_key(world: &HpaWorld, so: &str) -> ObjKey {
    let (ns, name) = world.qualify(so);
    ObjKey::new(ns, name)
}

#[given(expr = "the ScaledObject:")]
async fn the_scaled_object(world: &mut HpaWorld, step: &Step) -> StepResult {
    let object = yaml(doc_string(step)?, "the ScaledObject")?;
    world.add_scaled_object(&object, "the ScaledObject").await
}

#[given(expr = "the trigger {string} of ScaledObject {string} reports {word}")]
#[when(expr = "the trigger {string} of ScaledObject {string} reports {word}")]
async fn trigger_reports(
    world: &mut HpaWorld,
    trigger: String,
    so: String,
    value: String,
) -> StepResult {
    let v: f64 = value.parse().map_err(|_| {
        StepError::Input(format!(
            "trigger {trigger:?} of ScaledObject {so:?}: {value:?} is not a number"
        ))
    })?;
    let key = so_key(world, &so);
    world
        .keda
        .set_trigger_reading(&key, &trigger, Reading::Value(v))
}

#[given(expr = "the trigger {string} of ScaledObject {string} fails")]
#[when(expr = "the trigger {string} of ScaledObject {string} fails")]
async fn trigger_fails(world: &mut HpaWorld, trigger: String, so: String) -> StepResult {
    let key = so_key(world, &so);
    world
        .keda
        .set_trigger_reading(&key, &trigger, Reading::Failed)
}

#[then(expr = "the ScaledObject {string} is active")]
async fn is_active(world: &mut HpaWorld, so: String) -> StepResult {
    check_condition(world, &so, "Active", "True", None).await
}

#[then(expr = "the ScaledObject {string} is not active")]
async fn is_not_active(world: &mut HpaWorld, so: String) -> StepResult {
    check_condition(world, &so, "Active", "False", None).await
}

#[then(expr = "the ScaledObject {string} has condition {string} {string}")]
async fn has_condition(
    world: &mut HpaWorld,
    so: String,
    kind: String,
    status: String,
) -> StepResult {
    check_condition(world, &so, &kind, &status, None).await
}

#[then(expr = "the ScaledObject {string} has condition {string} {string} with reason {string}")]
async fn has_condition_reason(
    world: &mut HpaWorld,
    so: String,
    kind: String,
    status: String,
    reason: String,
) -> StepResult {
    check_condition(world, &so, &kind, &status, Some(&reason)).await
}

#[then(expr = "an event {string} is recorded for the ScaledObject {string}")]
async fn event_recorded(world: &mut HpaWorld, reason: String, so: String) -> StepResult {
    let object = world.keda.object(&so_key(world, &so))?;
    let events = object.keda.events();
    if events.iter().any(|e| e.reason == reason) {
        return Ok(());
    }
    let seen: Vec<String> = events
        .iter()
        .map(|e| format!("{} ({})", e.reason, e.message))
        .collect();
    Err(StepError::Expectation(format!(
        "no event {reason} for ScaledObject {so}; KEDA recorded: [{}]",
        seen.join("; ")
    )))
}

/// Reads the condition from the ScaledObject the cluster serves, where
/// KEDA's status is written after every reconcile.
async fn check_condition(
    world: &mut HpaWorld,
    so: &str,
    kind: &str,
    status: &str,
    reason: Option<&str>,
) -> StepResult {
    if !matches!(kind, "Ready" | "Active" | "Fallback" | "Paused") {
        return Err(StepError::Input(format!(
            "condition {kind:?}: a ScaledObject has Ready, Active, Fallback and Paused"
        )));
    }
    let object = world
        .keda
        .served(&so_key(world, so), &world.cluster)
        .await?;
    let got = object
        .pointer("/status/conditions")
        .and_then(serde_json::Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind));
    let field = |c: &serde_json::Value, f: &str| c[f].as_str().unwrap_or_default().to_owned();
    let holds = got.is_some_and(|c| {
        field(c, "status") == status && reason.is_none_or(|r| field(c, "reason") == r)
    });
    if holds {
        return Ok(());
    }
    Err(StepError::Expectation(format!(
        "ScaledObject {so}: condition {kind} is {}, expected {status}{}",
        got.map_or_else(
            || "not set".to_owned(),
            |c| format!(
                "{} ({}: {})",
                field(c, "status"),
                field(c, "reason"),
                field(c, "message")
            )
        ),
        reason
            .map(|r| format!(" with reason {r}"))
            .unwrap_or_default()
    )))
}
