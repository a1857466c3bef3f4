//! Steps about new versions of a workload and pods that find no room: a
//! rollout (the Deployment's or StatefulSet's rolling update), the values
//! the new version's pods report, and pods that stay Pending.

use cucumber::{given, then, when};
use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use crate::gherkin::params::{Duration, Quantity, WorkloadKind};
use crate::gherkin::world::{HpaWorld, ObjKey, StepError, StepResult, workload_api};

#[given(expr = "the {kind} {string} rolls out a new version")]
#[when(expr = "the {kind} {string} rolls out a new version")]
async fn rolls_out(world: &mut HpaWorld, kind: WorkloadKind, name: String) -> StepResult {
    world.roll_out(kind, &name).await
}

#[when(
    expr = "the {kind} {string} rolls out a new version and new pods become ready after {duration}"
)]
async fn rolls_out_ready_after(
    world: &mut HpaWorld,
    kind: WorkloadKind,
    name: String,
    after: Duration,
) -> StepResult {
    world
        .change_pod_delays(&name, |d| {
            d.running = SignedDuration::ZERO;
            d.ready = after.0;
        })
        .await?;
    world.roll_out(kind, &name).await
}

/// A `maxSurge` or `maxUnavailable` as the API takes it: a count or a
/// percentage.
fn int_or_percent(field: &str, text: &str) -> Result<serde_json::Value, StepError> {
    let bad = || {
        StepError::Input(format!(
            "{field} {text:?}: expected a count (1) or a percentage (25%)"
        ))
    };
    match text.strip_suffix('%') {
        Some(p) => p.parse::<u32>().map(|_| json!(text)).map_err(|_| bad()),
        None => text.parse::<u32>().map(|n| json!(n)).map_err(|_| bad()),
    }
}

fn is_zero(v: &serde_json::Value) -> bool {
    v.as_u64() == Some(0) || v.as_str() == Some("0%")
}

#[given(expr = "the deployment {string} rolls out with maxSurge {word} and maxUnavailable {word}")]
async fn rolling_strategy(
    world: &mut HpaWorld,
    name: String,
    surge: String,
    unavailable: String,
) -> StepResult {
    let surge = int_or_percent("maxSurge", &surge)?;
    let unavailable = int_or_percent("maxUnavailable", &unavailable)?;
    if is_zero(&surge) && is_zero(&unavailable) {
        // The API server's own words for this Deployment.
        return Err(StepError::Input(
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0".to_owned(),
        ));
    }
    let (ns, n) = world.qualify(&name);
    let api = workload_api(&world.env().await?.client, &ns, WorkloadKind::Deployment);
    let patch = json!({"spec": {"strategy": {"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}}});
    api.patch(
        &n,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await
    .map_err(StepError::kube(format!(
        "setting the rolling update of deployment {ns}/{n}"
    )))?;
    Ok(())
}

#[given(expr = "the new pods of {string} report {string} of {quantity}")]
#[when(expr = "the new pods of {string} report {string} of {quantity}")]
async fn new_pods_report(
    world: &mut HpaWorld,
    workload: String,
    metric: String,
    value: Quantity,
) -> StepResult {
    world.new_pods_report(&workload, &metric, &value.0).await
}

#[given(expr = "new pods of {string} stay pending")]
async fn stay_pending(world: &mut HpaWorld, name: String) -> StepResult {
    world
        .change_pod_delays(&name, |d| d.max_running = Some(0))
        .await
}

#[given(expr = "new pods of {string} stay pending until {int} are running")]
async fn stay_pending_beyond(world: &mut HpaWorld, name: String, running: u32) -> StepResult {
    world
        .change_pod_delays(&name, |d| d.max_running = Some(running))
        .await
}

/// One line per live pod: name, old or new, phase, readiness.
fn describe(world: &HpaWorld, ns: &str, workload: &str, pods: &[Pod]) -> String {
    pods.iter()
        .map(|p| {
            let real = p.metadata.name.clone().unwrap_or_default();
            let status = p.status.clone().unwrap_or_default();
            let ready = status
                .conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            format!(
                "{} ({}, {}{})",
                world.pod_names.step_name(&ObjKey::new(ns, real.clone())),
                if world.is_new(ns, workload, p) {
                    "new"
                } else {
                    "old"
                },
                status.phase.unwrap_or_default(),
                if ready { ", ready" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

async fn live_pods(world: &mut HpaWorld, ns: &str, workload: &str) -> Result<Vec<Pod>, StepError> {
    Ok(world
        .pods_of(ns, workload)
        .await?
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect())
}

#[then(expr = "the {kind} {string} has {int} old and {int} new pod(s)")]
async fn old_and_new(
    world: &mut HpaWorld,
    kind: WorkloadKind,
    name: String,
    old: usize,
    new: usize,
) -> StepResult {
    let (ns, n) = world.qualify(&name);
    world
        .eventually(async |world: &mut HpaWorld| {
            let pods = live_pods(world, &ns, &n).await?;
            let fresh = pods.iter().filter(|p| world.is_new(&ns, &n, p)).count();
            if (pods.len() - fresh, fresh) == (old, new) {
                return Ok(());
            }
            Err(StepError::Expectation(format!(
                "expected {kind} {ns}/{n} to have {old} old and {new} new pods; it has {}",
                describe(world, &ns, &n, &pods)
            )))
        })
        .await
}

#[then(expr = "{int} pod(s) of {string} is/are pending")]
async fn pending_pods(world: &mut HpaWorld, want: usize, name: String) -> StepResult {
    let (ns, n) = world.qualify(&name);
    world
        .eventually(async |world: &mut HpaWorld| {
            let pods = live_pods(world, &ns, &n).await?;
            let pending = pods
                .iter()
                .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending"))
                .count();
            if pending == want {
                return Ok(());
            }
            Err(StepError::Expectation(format!(
                "expected {want} pending pods of {ns}/{n}; it has {}",
                describe(world, &ns, &n, &pods)
            )))
        })
        .await
}
