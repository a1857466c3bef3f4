//! Workloads and their pods as the steps declare them: the pod table's
//! rows (`PodShape`), making a workload with such pods on the simulated
//! or a real cluster, and moving pods through their states (ready,
//! unready, failed, terminating), on a real cluster through the fake node.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::cells::{Table, age, per_container};
use super::params::WorkloadKind;
use super::world::{HpaWorld, ObjKey, StepError, StepResult, Workload, workload_resource};

/// How long before the scenario starts the pods of "with N pods" started.
pub(crate) const DEFAULT_AGE: SignedDuration = SignedDuration::from_secs(600);

/// One pod as a table row describes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PodShape {
    pub(crate) phase: String,
    /// `None`: no Ready condition ("none").
    pub(crate) ready: Option<bool>,
    pub(crate) started: When,
    pub(crate) ready_since: Option<When>,
    pub(crate) deleted: bool,
    /// Requests by container name.
    pub(crate) containers: BTreeMap<String, Resources>,
    pub(crate) pod_requests: BTreeMap<String, String>,
    /// `spec.overhead` (a RuntimeClass's, as admission sets it).
    pub(crate) pod_overhead: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Resources {
    pub(crate) cpu: Option<String>,
    pub(crate) memory: Option<String>,
    pub(crate) sidecar: bool,
}

/// A point in time a cell names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum When {
    Ago(SignedDuration),
    Never,
}

impl Default for PodShape {
    fn default() -> Self {
        let mut containers = BTreeMap::new();
        containers.insert(
            "app".to_owned(),
            Resources {
                cpu: Some("1".to_owned()),
                memory: Some("1Gi".to_owned()),
                sidecar: false,
            },
        );
        Self {
            phase: "Running".to_owned(),
            ready: Some(true),
            started: When::Ago(DEFAULT_AGE),
            ready_since: None,
            deleted: false,
            containers,
            pod_requests: BTreeMap::new(),
            pod_overhead: BTreeMap::new(),
        }
    }
}

pub(crate) fn when(text: &str, what: &str) -> Result<When, StepError> {
    match text {
        "never" => Ok(When::Never),
        "now" => Ok(When::Ago(SignedDuration::ZERO)),
        other => age(other, what).map(When::Ago),
    }
}

impl PodShape {
    pub(crate) fn from_row(table: &Table, row: &[String], pod: &str) -> Result<Self, StepError> {
        let mut shape = Self::default();
        let what = |col: &str| format!("pod {pod}, column {col}");
        if let Some(phase) = table.cell(row, "phase").filter(|c| !c.is_empty()) {
            if !matches!(phase, "Running" | "Pending" | "Succeeded" | "Failed") {
                return Err(StepError::Input(format!(
                    "{}: {phase:?} is not Running, Pending, Succeeded or Failed",
                    what("phase")
                )));
            }
            shape.phase = phase.to_owned();
            if phase != "Running" {
                shape.ready = Some(false);
            }
            if phase == "Pending" {
                shape.started = When::Never;
            }
        }
        if let Some(ready) = table.cell(row, "ready").filter(|c| !c.is_empty()) {
            shape.ready = match ready {
                "true" => Some(true),
                "false" => Some(false),
                "none" => None,
                other => {
                    return Err(StepError::Input(format!(
                        "{}: {other:?} is not true, false or none",
                        what("ready")
                    )));
                }
            };
        }
        if let Some(started) = table.cell(row, "started").filter(|c| !c.is_empty()) {
            shape.started = when(started, &what("started"))?;
        }
        if let Some(since) = table.cell(row, "ready since").filter(|c| !c.is_empty()) {
            shape.ready_since = Some(when(since, &what("ready since"))?);
        }
        if let Some(deleted) = table.cell(row, "deleted").filter(|c| !c.is_empty()) {
            shape.deleted = match deleted {
                "true" => true,
                "false" => false,
                other => {
                    return Err(StepError::Input(format!(
                        "{}: {other:?} is not true or false",
                        what("deleted")
                    )));
                }
            };
        }
        let cpu = table.cell(row, "cpu request");
        let memory = table.cell(row, "memory request");
        if cpu.is_some() || memory.is_some() {
            let cpu = cpu
                .map(|c| per_container(c, &what("cpu request")))
                .transpose()?;
            let memory = memory
                .map(|c| per_container(c, &what("memory request")))
                .transpose()?;
            let mut containers: BTreeMap<String, Resources> = BTreeMap::new();
            for (name, _, sidecar) in cpu.iter().flatten().chain(memory.iter().flatten()) {
                let entry = containers.entry(name.clone()).or_default();
                entry.sidecar |= *sidecar;
            }
            if containers.is_empty() {
                containers.insert("app".to_owned(), Resources::default());
            }
            for (name, res) in &mut containers {
                res.cpu = match &cpu {
                    Some(list) => list
                        .iter()
                        .find(|(n, _, _)| n == name)
                        .and_then(|(_, q, _)| q.clone()),
                    None => (name == "app").then(|| "1".to_owned()),
                };
                res.memory = match &memory {
                    Some(list) => list
                        .iter()
                        .find(|(n, _, _)| n == name)
                        .and_then(|(_, q, _)| q.clone()),
                    None => (name == "app").then(|| "1Gi".to_owned()),
                };
            }
            shape.containers = containers;
        }
        for (col, resource, overhead) in [
            ("pod cpu request", "cpu", false),
            ("pod memory request", "memory", false),
            ("pod cpu overhead", "cpu", true),
            ("pod memory overhead", "memory", true),
        ] {
            if let Some(q) = table.cell(row, col).filter(|c| !c.is_empty()) {
                crate::gherkin::params::parse_quantity(q)
                    .map_err(|e| StepError::Input(format!("{}: {e}", what(col))))?;
                let list = if overhead {
                    &mut shape.pod_overhead
                } else {
                    &mut shape.pod_requests
                };
                list.insert(resource.to_owned(), q.to_owned());
            }
        }
        Ok(shape)
    }

    /// The pod spec (containers, init containers, pod-level requests).
    pub(crate) fn spec(&self) -> Value {
        let container = |name: &str, r: &Resources| {
            let mut requests = serde_json::Map::new();
            if let Some(c) = &r.cpu {
                requests.insert("cpu".into(), json!(c));
            }
            if let Some(m) = &r.memory {
                requests.insert("memory".into(), json!(m));
            }
            let mut c = json!({"name": name, "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": requests}});
            if r.sidecar {
                c["restartPolicy"] = json!("Always");
            }
            c
        };
        let containers: Vec<Value> = self
            .containers
            .iter()
            .filter(|(_, r)| !r.sidecar)
            .map(|(n, r)| container(n, r))
            .collect();
        let init: Vec<Value> = self
            .containers
            .iter()
            .filter(|(_, r)| r.sidecar)
            .map(|(n, r)| container(n, r))
            .collect();
        let mut spec = json!({"containers": containers});
        if !init.is_empty() {
            spec["initContainers"] = json!(init);
        }
        if !self.pod_requests.is_empty() {
            spec["resources"] = json!({"requests": self.pod_requests});
        }
        if !self.pod_overhead.is_empty() {
            spec["overhead"] = json!(self.pod_overhead);
        }
        spec
    }

    /// Rewrites a pod status as this shape says, as of `now`.
    pub(crate) fn apply_status(&self, status: &mut Value, now: Timestamp) {
        status["phase"] = json!(self.phase);
        let started = match self.started {
            When::Ago(d) => Some(now - d),
            When::Never => None,
        };
        match started {
            Some(t) => status["startTime"] = json!(k8s_time(t)),
            None => {
                if let Some(m) = status.as_object_mut() {
                    m.remove("startTime");
                }
            }
        }
        let since = match self.ready_since.or(Some(self.started)) {
            Some(When::Ago(d)) => now - d,
            _ => now,
        };
        let ready = self.ready.map(|r| if r { "True" } else { "False" });
        set_condition(status, "Ready", ready, since);
        set_condition(status, "ContainersReady", ready, since);
    }
}

/// Kubernetes time (whole seconds, RFC 3339).
pub(crate) fn k8s_time(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

/// Sets (or with `None` removes) a pod condition.
pub(crate) fn set_condition(status: &mut Value, type_: &str, value: Option<&str>, at: Timestamp) {
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let Some(conds) = status.get_mut("conditions").and_then(Value::as_array_mut) else {
        return;
    };
    conds.retain(|c| c.get("type").and_then(Value::as_str) != Some(type_));
    if let Some(v) = value {
        conds.push(json!({"type": type_, "status": v, "lastTransitionTime": k8s_time(at)}));
    }
}

pub(crate) async fn update_pod_status(
    world: &mut HpaWorld,
    ns: &str,
    name: &str,
    change: impl FnOnce(&mut Value),
) -> StepResult {
    let api: Api<Pod> = world.api(ns).await?;
    let pod = api
        .get(name)
        .await
        .map_err(StepError::kube(format!("reading pod {ns}/{name}")))?;
    let mut value = serde_json::to_value(&pod)
        .map_err(|e| StepError::State(format!("pod {ns}/{name}: {e}")))?;
    let mut status = value.get("status").cloned().unwrap_or_else(|| json!({}));
    change(&mut status);
    if let Some(node) = world.cluster.fake_node(world.real_node) {
        // The fake kubelet owns the status of its pods and keeps the state
        // it was last given: hand it over, and it writes it in turn with
        // its own writes.
        return node
            .set_pod_state(ns, name, pod_state(&status))
            .await
            .map_err(StepError::fake_node(format!(
                "giving pod {ns}/{name} its state"
            )));
    }
    value["status"] = status;
    let pod: Pod = serde_json::from_value(value)
        .map_err(|e| StepError::State(format!("pod {ns}/{name}: {e}")))?;
    api.replace_status(name, &PostParams::default(), &pod)
        .await
        .map_err(StepError::kube(format!(
            "updating the status of pod {ns}/{name}"
        )))?;
    Ok(())
}

pub(crate) async fn set_pod_ready(world: &mut HpaWorld, pod: &str, ready: bool) -> StepResult {
    let (ns, n) = world.resolve_pod(pod).await?;
    let now = world.now().await?;
    let flag = if ready { "True" } else { "False" };
    update_pod_status(world, &ns, &n, |status| {
        set_condition(status, "Ready", Some(flag), now);
        set_condition(status, "ContainersReady", Some(flag), now);
    })
    .await
}

/// Creates the workload with `rows.len()` replicas from `template`, then
/// shapes each pod the sim created as its row says.
pub(crate) async fn create_workload(
    world: &mut HpaWorld,
    kind: WorkloadKind,
    name: &str,
    template: &PodShape,
    rows: &[PodShape],
) -> StepResult {
    let (ns, n) = world.qualify(name);
    let replicas = i32::try_from(rows.len())
        .map_err(|_| StepError::Input(format!("{kind} {n}: too many pods")))?;
    let mut obj = crate::testbed::workload::workload(
        kind.kind(),
        &ns,
        &n,
        i64::from(replicas),
        template.spec(),
    );
    let names = world
        .pod_names
        .declared(&ObjKey::new(ns.clone(), n.clone()))
        .to_vec();
    if !names.is_empty() {
        // The simulated cluster names the pods so; a real one ignores it
        // (the names are then aliases, in creation order).
        obj["metadata"]["annotations"][hpa_sim::POD_NAMES_ANNOTATION] = json!(names.join(","));
    }
    if world.cluster.fake_node(world.real_node).is_some() {
        crate::testbed::workload::place_on_fake_node(&mut obj);
    }
    world
        .create_dynamic(&ns, &workload_resource(kind), obj)
        .await?;
    world.workloads.insert(
        ObjKey::new(ns.clone(), n.clone()),
        Workload {
            kind,
            initial_replicas: replicas,
            selector: format!("app={n}"),
        },
    );
    let now = world.now().await?;
    // A real cluster's controllers create the pods a moment later.
    let mut pods = Vec::new();
    world
        .eventually(async |w: &mut HpaWorld| {
            pods = w.pods_of(&ns, &n).await?;
            if pods.len() == rows.len() {
                Ok(())
            } else {
                Err(StepError::Expectation(format!(
                    "{kind} {ns}/{n} should have {} pods but the cluster made {}",
                    rows.len(),
                    pods.len()
                )))
            }
        })
        .await
        .map_err(|e| StepError::State(e.to_string()))?;
    if world.real_node && world.cluster.is_real() {
        // A real kubelet runs these pods: they get the states it gives them.
        if rows.iter().any(|r| *r != PodShape::default()) {
            return Err(StepError::unsupported(format!(
                "{kind} {ns}/{n}: pods on a real node cannot be given states or requests of their own"
            )));
        }
        return wait_running_and_ready(world, &ns, &n, rows.len()).await;
    }
    let api: Api<Pod> = world.api(&ns).await?;
    for (pod, shape) in pods.into_iter().zip(rows) {
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        if shape.spec() != template.spec() && world.env().await?.is_real() {
            return Err(StepError::unsupported(format!(
                "{kind} {ns}/{n}: pod {pod_name} with requests of its own needs the simulated cluster; a real API server does not change a pod's requests"
            )));
        }
        if shape.spec() != template.spec() {
            let mut value = serde_json::to_value(&pod)
                .map_err(|e| StepError::State(format!("pod {ns}/{pod_name}: {e}")))?;
            let node = value.pointer("/spec/nodeName").cloned();
            value["spec"] = shape.spec();
            if let Some(node) = node {
                value["spec"]["nodeName"] = node;
            }
            let updated: Pod = serde_json::from_value(value)
                .map_err(|e| StepError::State(format!("pod {ns}/{pod_name}: {e}")))?;
            api.replace(&pod_name, &PostParams::default(), &updated)
                .await
                .map_err(StepError::kube(format!(
                    "setting the requests of pod {ns}/{pod_name}"
                )))?;
        }
        update_pod_status(world, &ns, &pod_name, |status| {
            shape.apply_status(status, now)
        })
        .await?;
        if shape.deleted {
            mark_terminating(world, &ns, &pod_name).await?;
        }
    }
    if world.env().await?.is_real() {
        workload_status_settled(world, kind, &ns, &n).await?;
    }
    Ok(())
}

/// On a real cluster: waits until the workload's status counts the pods
/// the scenario gave it (its controller observed the spec, and its
/// `replicas` and `readyReplicas` are those of its pods), as the simulated
/// cluster's status does at once. Before that, `/scale` says `status.replicas:
/// 0`, and a controller syncing then divides by zero pods.
pub(crate) async fn workload_status_settled(
    world: &mut HpaWorld,
    kind: WorkloadKind,
    ns: &str,
    name: &str,
) -> StepResult {
    let resource = workload_resource(kind);
    let api: Api<DynamicObject> =
        Api::namespaced_with(world.env().await?.client.clone(), ns, &resource);
    let deadline = tokio::time::Instant::now() + REAL_START_TIMEOUT;
    loop {
        let pods = world.pods_of(ns, name).await?;
        // The pods a ReplicaSet counts: not terminating, not finished.
        let live: Vec<&Pod> = pods
            .iter()
            .filter(|p| {
                let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
                p.metadata.deletion_timestamp.is_none()
                    && !matches!(phase, Some("Failed" | "Succeeded"))
            })
            .collect();
        let ready = live.iter().filter(|p| is_ready(p)).count();
        let object = api.get(name).await.map_err(StepError::kube(format!(
            "reading {} {ns}/{name}",
            kind.word()
        )))?;
        let status = settled_status(&object.data, live.len(), ready);
        match status {
            Ok(()) => return Ok(()),
            Err(why) if tokio::time::Instant::now() >= deadline => {
                return Err(StepError::State(format!(
                    "{} {ns}/{name}: its status did not count its pods within {REAL_START_TIMEOUT:?}: {why}",
                    kind.word()
                )));
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
        }
    }
}

/// Whether a workload object (as JSON) has a status that counts `replicas`
/// pods, `ready` of them ready, for its latest spec; else what is behind.
fn settled_status(object: &Value, replicas: usize, ready: usize) -> Result<(), String> {
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64);
    let observed = object
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    let count = |field: &str| {
        object
            .pointer(&format!("/status/{field}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    if generation.is_some() && observed < generation {
        return Err(format!(
            "observedGeneration {observed:?} behind generation {generation:?}"
        ));
    }
    let (have, have_ready) = (count("replicas"), count("readyReplicas"));
    if have != replicas as u64 || have_ready != ready as u64 {
        return Err(format!(
            "status.replicas {have} (pods: {replicas}), status.readyReplicas {have_ready} (ready pods: {ready})"
        ));
    }
    Ok(())
}

/// Whether a pod is on its way out, deleted by the cluster (a scale-down,
/// a rollout) rather than held terminating by the scenario.
pub(crate) fn leaving(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
        && !pod
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == TERMINATING_FINALIZER)
}

/// Whether a pod's Ready condition is True.
fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The finalizer that holds a scenario's terminating pods in place.
pub(crate) const TERMINATING_FINALIZER: &str = crate::testbed::cleanup::HOLD_FINALIZER;

/// Gives a pod a deletion timestamp (a terminating pod that still exists): a
/// finalizer of ours keeps it, then a delete marks it, as the API server does
/// for any object with finalizers.
pub(crate) async fn mark_terminating(world: &mut HpaWorld, ns: &str, pod: &str) -> StepResult {
    let api: Api<Pod> = world.api(ns).await?;
    let patch = json!({"metadata": {"finalizers": [TERMINATING_FINALIZER]}});
    api.patch(pod, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(StepError::kube(format!(
            "holding pod {ns}/{pod} with a finalizer"
        )))?;
    api.delete(pod, &Default::default())
        .await
        .map_err(StepError::kube(format!(
            "marking pod {ns}/{pod} as terminating"
        )))?;
    Ok(())
}

/// The fake kubelet's view of a pod status the steps wrote.
pub(crate) fn pod_state(status: &Value) -> crate::testbed::cluster::fake_node::PodState {
    let time = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok())
    };
    let ready = status
        .get("conditions")
        .and_then(Value::as_array)
        .and_then(|c| {
            c.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
        });
    crate::testbed::cluster::fake_node::PodState {
        phase: status
            .get("phase")
            .and_then(Value::as_str)
            .unwrap_or("Running")
            .to_owned(),
        ready: ready.and_then(|c| match c.get("status").and_then(Value::as_str) {
            Some("True") => Some(true),
            Some("False") => Some(false),
            _ => None,
        }),
        started: time(status.get("startTime")),
        ready_since: time(ready.and_then(|c| c.get("lastTransitionTime"))),
    }
}

/// How long real pods may take to pull the pause image and start.
pub(crate) const REAL_START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(180);

/// Waits until `count` pods of the workload run and are Ready.
pub(crate) async fn wait_running_and_ready(
    world: &mut HpaWorld,
    ns: &str,
    workload: &str,
    count: usize,
) -> StepResult {
    let deadline = tokio::time::Instant::now() + REAL_START_TIMEOUT;
    loop {
        let pods = world.pods_of(ns, workload).await?;
        let ready = pods
            .iter()
            .filter(|p| {
                let status = p.status.as_ref();
                status.and_then(|s| s.phase.as_deref()) == Some("Running")
                    && status
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
            })
            .count();
        if ready >= count {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(StepError::State(format!(
                "{ns}/{workload}: {ready} of {count} pods running and ready on a real node after {REAL_START_TIMEOUT:?}"
            )));
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(generation: i64, status: Value) -> Value {
        json!({"metadata": {"generation": generation}, "status": status})
    }

    #[test]
    fn a_status_counts_its_pods_only_for_the_latest_spec() {
        let fresh = deployment(1, json!({}));
        let why = settled_status(&fresh, 1, 1).unwrap_err();
        assert!(why.contains("observedGeneration None behind"), "{why}");
        // The spec observed, but no pod counted yet: what /scale then says
        // (spec 1, status 0) is what made a sync divide by zero pods.
        let seen = deployment(1, json!({"observedGeneration": 1}));
        let why = settled_status(&seen, 1, 1).unwrap_err();
        assert!(why.contains("status.replicas 0 (pods: 1)"), "{why}");
        let unready = deployment(1, json!({"observedGeneration": 1, "replicas": 1}));
        assert!(settled_status(&unready, 1, 1).is_err());
        assert!(settled_status(&unready, 1, 0).is_ok());
        let done = deployment(
            2,
            json!({"observedGeneration": 2, "replicas": 2, "readyReplicas": 1}),
        );
        assert!(settled_status(&done, 2, 1).is_ok());
        assert!(settled_status(&done, 3, 1).is_err());
    }
}
