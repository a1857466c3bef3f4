//! Steps about namespaces, workloads, their pods and the faults of the
//! simulated cluster.

use cucumber::gherkin::Step;
use cucumber::{given, when};
use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use super::Table;
use crate::gherkin::params::{Duration, WorkloadKind};
use crate::gherkin::world::{HpaWorld, ObjKey, StepError, StepResult, workload_api};
use hpa_sim::admin::{
    CountedFault, FaultAction, ReplicasOverride, SelectorOverride, ToggleFault, WatchLag,
};

use crate::gherkin::pods::*;

#[given(expr = "a namespace {string}")]
async fn a_namespace(world: &mut HpaWorld, name: String) -> StepResult {
    world.name_namespace(&name).await
}

#[given(expr = "a {kind} {string} with {int} pod(s)")]
async fn workload_with_pods(
    world: &mut HpaWorld,
    kind: WorkloadKind,
    name: String,
    n: i32,
) -> StepResult {
    let template = PodShape::default();
    let rows = (0..n).map(|_| PodShape::default()).collect::<Vec<_>>();
    create_workload(world, kind, &name, &template, &rows).await
}

#[given(expr = "a {kind} {string} with pods:")]
async fn workload_with_pod_table(
    world: &mut HpaWorld,
    step: &Step,
    kind: WorkloadKind,
    name: String,
) -> StepResult {
    let table = Table::of(step, &["pod"])?;
    let mut rows = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, row) in table.rows.iter().enumerate() {
        let pod = table.cell(row, "pod").unwrap_or_default();
        check_pod_name(pod).map_err(|reason| {
            StepError::Input(format!(
                "{kind} {name}: row {} names pod {pod:?}: {reason}",
                i + 1
            ))
        })?;
        if names.iter().any(|n| n == pod) {
            return Err(StepError::Input(format!(
                "{kind} {name}: pod {pod} is named twice"
            )));
        }
        names.push(pod.to_owned());
        rows.push(PodShape::from_row(&table, row, pod)?);
    }
    let (ns, n) = world.qualify(&name);
    world.pod_names.declare(&ObjKey::new(ns, n), names);
    let template = rows.first().cloned().unwrap_or_default();
    create_workload(world, kind, &name, &template, &rows).await
}

/// Why a pod-table name cannot be a pod's name (a DNS-1123 subdomain).
fn check_pod_name(pod: &str) -> Result<(), String> {
    let ok = !pod.is_empty()
        && pod.len() <= 253
        && pod
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && pod.starts_with(|c: char| c.is_ascii_alphanumeric())
        && pod.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err("a pod name is lower-case letters, digits, '-' and '.', starting and ending with a letter or digit".to_owned())
    }
}

#[given(expr = "the scale of {string} reports {int} spec replicas and {int} status replicas")]
async fn scale_reports_replicas(
    world: &mut HpaWorld,
    name: String,
    spec: i32,
    status: i32,
) -> StepResult {
    world.setup.bend_scale(&world.cluster)?;
    let (ns, n) = world.qualify(&name);
    world
        .env()
        .await?
        .fault(FaultAction::OverrideScaleReplicas(ReplicasOverride {
            namespace: ns,
            name: n,
            spec,
            status,
        }))
        .await?;
    Ok(())
}

#[given(expr = "the scale of {string} reports selector {string}")]
async fn scale_reports_selector(
    world: &mut HpaWorld,
    name: String,
    selector: String,
) -> StepResult {
    world.setup.bend_scale(&world.cluster)?;
    let (ns, n) = world.qualify(&name);
    world
        .env()
        .await?
        .fault(FaultAction::OverrideScaleSelector(SelectorOverride {
            namespace: ns,
            name: n,
            selector,
        }))
        .await?;
    Ok(())
}

#[given(expr = "reading the scale of {string} fails")]
async fn reading_scale_fails(world: &mut HpaWorld, name: String) -> StepResult {
    world.setup.bend_scale(&world.cluster)?;
    let (ns, n) = world.qualify(&name);
    world
        .env()
        .await?
        .fault(FaultAction::FailGetScale(ToggleFault {
            namespace: ns,
            name: n,
            fail: true,
        }))
        .await?;
    Ok(())
}

#[given(expr = "updating the scale of {string} fails")]
async fn updating_scale_fails(world: &mut HpaWorld, name: String) -> StepResult {
    let (ns, n) = world.qualify(&name);
    world
        .env()
        .await?
        .fault(FaultAction::FailUpdateScale(ToggleFault {
            namespace: ns,
            name: n,
            fail: true,
        }))
        .await?;
    Ok(())
}

#[given(expr = "updating the status of HPA {string} conflicts {int} times")]
async fn hpa_status_conflicts(world: &mut HpaWorld, name: String, times: u32) -> StepResult {
    let (ns, n) = world.qualify(&name);
    world
        .env()
        .await?
        .fault(FaultAction::ConflictHpaStatus(CountedFault {
            namespace: ns,
            name: n,
            times,
        }))
        .await?;
    Ok(())
}

#[given(expr = "updating the scale of {string} conflicts {int} times")]
async fn scale_conflicts(world: &mut HpaWorld, name: String, times: u32) -> StepResult {
    let (ns, n) = world.qualify(&name);
    world
        .env()
        .await?
        .fault(FaultAction::ConflictUpdateScale(CountedFault {
            namespace: ns,
            name: n,
            times,
        }))
        .await?;
    Ok(())
}

/// HPA changes reach watchers (the controller's informer) DURATION after
/// they are written, and lists of HPAs answer as of then, as from a watch
/// cache that far behind; `0s` catches up.
#[given(expr = "the HPA watch lags {duration}")]
#[when(expr = "the HPA watch lags {duration}")]
async fn hpa_watch_lags(world: &mut HpaWorld, lag: Duration) -> StepResult {
    world
        .env()
        .await?
        .fault(FaultAction::LagHpaWatch(WatchLag {
            lag: hpa_core::go_duration::format(lag.0),
        }))
        .await?;
    Ok(())
}

#[given(expr = "new pods of {string} become ready after {duration}")]
async fn new_pods_ready_after(world: &mut HpaWorld, name: String, after: Duration) -> StepResult {
    world
        .change_pod_delays(&name, |d| {
            d.running = SignedDuration::ZERO;
            d.ready = after.0;
        })
        .await
}

#[given(expr = "pod {string} becomes ready")]
#[when(expr = "pod {string} becomes ready")]
async fn pod_becomes_ready(world: &mut HpaWorld, pod: String) -> StepResult {
    set_pod_ready(world, &pod, true).await
}

#[given(expr = "pod {string} becomes unready")]
#[when(expr = "pod {string} becomes unready")]
async fn pod_becomes_unready(world: &mut HpaWorld, pod: String) -> StepResult {
    set_pod_ready(world, &pod, false).await
}

#[given(expr = "pod {string} fails")]
#[when(expr = "pod {string} fails")]
async fn pod_fails(world: &mut HpaWorld, pod: String) -> StepResult {
    let (ns, n) = world.resolve_pod(&pod).await?;
    let now = world.now().await?;
    update_pod_status(world, &ns, &n, |status| {
        status["phase"] = json!("Failed");
        set_condition(status, "Ready", Some("False"), now);
        set_condition(status, "ContainersReady", Some("False"), now);
    })
    .await
}

#[given(expr = "pod {string} is deleted")]
#[when(expr = "pod {string} is deleted")]
async fn pod_is_deleted(world: &mut HpaWorld, pod: String) -> StepResult {
    let (ns, n) = world.resolve_pod(&pod).await?;
    let api: Api<Pod> = world.api(&ns).await?;
    api.delete(&n, &Default::default())
        .await
        .map_err(StepError::kube(format!("deleting pod {ns}/{n}")))?;
    world.prune_pods().await
}

#[given(expr = "the {kind} {string} is scaled to {int} replica(s)")]
#[when(expr = "the {kind} {string} is scaled to {int} replica(s)")]
async fn scaled_by_a_user(
    world: &mut HpaWorld,
    kind: WorkloadKind,
    name: String,
    replicas: i32,
) -> StepResult {
    let (ns, n) = world.qualify(&name);
    let api = workload_api(&world.env().await?.client, &ns, kind);
    api.patch_scale(
        &n,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": replicas}})),
    )
    .await
    .map_err(StepError::kube(format!(
        "scaling {kind} {ns}/{n} to {replicas}"
    )))?;
    world.prune_pods().await
}
