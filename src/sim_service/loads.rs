//! Load for `hpa-harness sim --controller`: a workload's CPU (and memory)
//! demand, shared evenly among its running pods, as the clients of a real
//! service spread over its replicas (the HPA walkthrough's load generator).
//!
//! The loads are set through the built-in fake metrics server's control API
//! (`PUT /control/v1/loads/{namespace}/{workload}` with `{"cpu": "350m"}`);
//! the [`Mirror`] declares every running pod of the sim to the metrics
//! server with its share, so `kubectl top pods` and the controller see it,
//! and forgets pods that are gone. A workload without a load reports 0,
//! unless the metrics script gives its pods values (a rule that matches
//! them, or pods it names): those are the script's.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use bytes::Bytes;
use fake_metrics_server::AppState;
use fake_metrics_server::script::{self, Change, ContainerSpec, PodRef, PodSpec};
use hpa_core::quantity::Quantity;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

/// Failures of mirroring the sim's pods into the metrics server.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// Listing the sim's pods failed.
    #[error("cannot list the sim's pods")]
    List(#[source] kube::Error),
    /// The metrics server refused the pods.
    #[error("the metrics server refused the pods' usage")]
    Metrics(#[source] fake_metrics_server::state::StateError),
}

/// One workload's load (body of `PUT /control/v1/loads/{ns}/{name}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Load {
    /// Total CPU the workload's clients demand (e.g. `350m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Total memory (e.g. `512Mi`); none: pods report no memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// A [`Load`] with where it applies (the answer of `GET /control/v1/loads`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadLoad {
    /// Namespace of the workload.
    pub namespace: String,
    /// Name of the workload (Deployment, StatefulSet, ReplicaSet).
    pub name: String,
    /// Its load.
    #[serde(flatten)]
    pub load: Load,
}

/// A load checked: nano-units per resource.
#[derive(Debug, Clone, Copy, Default)]
struct Demand {
    cpu_nanos: i128,
    memory: Option<i128>,
}

fn parse_quantity(field: &str, text: &str) -> Result<i128, String> {
    Quantity::parse_non_negative(text)
        .map(|q| q.scaled_value_i128(-9))
        .map_err(|e| format!("field {field}: {text:?} is not a quantity like 350m or 512Mi: {e}"))
}

impl Load {
    fn demand(&self) -> Result<Demand, String> {
        Ok(Demand {
            cpu_nanos: self
                .cpu
                .as_deref()
                .map_or(Ok(0), |c| parse_quantity("cpu", c))?,
            memory: self
                .memory
                .as_deref()
                .map(|m| parse_quantity("memory", m))
                .transpose()?,
        })
    }
}

/// The loads, by workload, shared by the routes and the [`Mirror`].
#[derive(Debug, Clone, Default)]
pub struct Loads {
    by_workload: Arc<Mutex<BTreeMap<(String, String), Load>>>,
    changed: Arc<Notify>,
}

impl Loads {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<(String, String), Load>> {
        self.by_workload
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sets a workload's load.
    pub fn set(&self, namespace: &str, name: &str, load: Load) {
        self.lock()
            .insert((namespace.to_owned(), name.to_owned()), load);
        self.changed.notify_one();
    }

    /// Removes a workload's load (its pods then report 0).
    pub fn remove(&self, namespace: &str, name: &str) -> bool {
        let removed = self
            .lock()
            .remove(&(namespace.to_owned(), name.to_owned()))
            .is_some();
        self.changed.notify_one();
        removed
    }

    /// Every load.
    pub fn list(&self) -> Vec<WorkloadLoad> {
        self.lock()
            .iter()
            .map(|((namespace, name), load)| WorkloadLoad {
                namespace: namespace.clone(),
                name: name.clone(),
                load: load.clone(),
            })
            .collect()
    }

    /// Resolves when a load was set or removed since the last call.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }
}

fn error(code: StatusCode, message: String) -> Response {
    (
        code,
        axum::Json(fake_metrics_server::api::status_body(code, message)),
    )
        .into_response()
}

async fn list_loads(State(loads): State<Loads>) -> Response {
    axum::Json(loads.list()).into_response()
}

async fn put_load(
    State(loads): State<Loads>,
    Path((namespace, name)): Path<(String, String)>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let text = String::from_utf8_lossy(&body);
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let load: Load = match script::from_body(&text, content_type) {
        Ok(l) => l,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("load body: {e}")),
    };
    if let Err(e) = load.demand() {
        return error(StatusCode::BAD_REQUEST, format!("load body: {e}"));
    }
    loads.set(&namespace, &name, load.clone());
    axum::Json(WorkloadLoad {
        namespace,
        name,
        load,
    })
    .into_response()
}

async fn delete_load(
    State(loads): State<Loads>,
    Path((namespace, name)): Path<(String, String)>,
) -> Response {
    if loads.remove(&namespace, &name) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        error(
            StatusCode::NOT_FOUND,
            format!("no load is set for {namespace}/{name}"),
        )
    }
}

/// `GET /control/v1/loads`, `PUT` and `DELETE /control/v1/loads/{ns}/{name}`,
/// to merge into the fake metrics server's router.
pub fn routes(loads: Loads) -> Router {
    Router::new()
        .route("/control/v1/loads", get(list_loads))
        .route(
            "/control/v1/loads/{namespace}/{name}",
            put(put_load).delete(delete_load),
        )
        .with_state(loads)
}

/// Keeps the metrics server's pods in step with the sim's running pods.
#[derive(Debug)]
pub struct Mirror {
    pods: Api<Pod>,
    metrics: AppState,
    loads: Loads,
    declared: tokio::sync::Mutex<BTreeSet<(String, String)>>,
}

/// The workload a pod belongs to: its controller owner, else itself.
fn workload_of(pod: &Pod) -> String {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| o.name.clone())
        .or_else(|| pod.metadata.name.clone())
        .unwrap_or_default()
}

fn running(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

/// `n` nano-units as a quantity (millis when whole, as metrics-server writes).
fn quantity_of(nanos: i128, cpu: bool) -> Result<script::Value, String> {
    let text = if cpu {
        format!("{}m", nanos / 1_000_000)
    } else {
        format!("{}", nanos / 1_000_000_000)
    };
    script::Value::parse(&text)
}

impl Mirror {
    /// A mirror from the sim (through `client`) into `metrics`.
    pub fn new(client: kube::Client, metrics: AppState, loads: Loads) -> Self {
        Self {
            pods: Api::all(client),
            metrics,
            loads,
            declared: tokio::sync::Mutex::default(),
        }
    }

    /// Declares every running pod with its share of its workload's load and
    /// removes the pods declared before that are gone.
    pub async fn sync(&self) -> Result<(), MirrorError> {
        let mut declared = self.declared.lock().await;
        let pods = self
            .pods
            .list(&ListParams::default())
            .await
            .map_err(MirrorError::List)?;
        let demands: BTreeMap<(String, String), Demand> = self
            .loads
            .list()
            .into_iter()
            .filter_map(|w| Some(((w.namespace, w.name), w.load.demand().ok()?)))
            .collect();
        let mut groups: BTreeMap<(String, String), Vec<&Pod>> = BTreeMap::new();
        for pod in pods.items.iter().filter(|p| running(p)) {
            let ns = pod.metadata.namespace.clone().unwrap_or_default();
            groups.entry((ns, workload_of(pod))).or_default().push(pod);
        }
        let mut changes = Vec::new();
        let mut now_declared = BTreeSet::new();
        for (key, members) in &groups {
            let demand = demands.get(key).copied();
            // A workload without a load is left to the script where the
            // script gives its pods values (a rule, or pods it names).
            let members: Vec<&Pod> = match demand {
                Some(_) => members.clone(),
                None => members
                    .iter()
                    .copied()
                    .filter(|pod| !self.scripted(pod, &declared))
                    .collect(),
            };
            let demand = demand.unwrap_or_default();
            let n = i128::try_from(members.len()).unwrap_or(1).max(1);
            for pod in members {
                let containers: Vec<String> = pod
                    .spec
                    .iter()
                    .flat_map(|s| s.containers.iter().map(|c| c.name.clone()))
                    .collect();
                let per = i128::try_from(containers.len()).unwrap_or(1).max(1);
                let share = |total: i128, cpu: bool| quantity_of(total / n / per, cpu).ok();
                let name = pod.metadata.name.clone().unwrap_or_default();
                now_declared.insert((key.0.clone(), name.clone()));
                changes.push(Change::Pod(PodSpec {
                    namespace: key.0.clone(),
                    name,
                    labels: pod.metadata.labels.clone().unwrap_or_default(),
                    containers: containers
                        .into_iter()
                        .map(|c| ContainerSpec {
                            name: c,
                            cpu: share(demand.cpu_nanos, true),
                            memory: demand.memory.and_then(|m| share(m, false)),
                        })
                        .collect(),
                    ..PodSpec::default()
                }));
            }
        }
        for (namespace, name) in declared.difference(&now_declared) {
            changes.push(Change::RemovePod(PodRef {
                namespace: namespace.clone(),
                name: name.clone(),
            }));
        }
        self.metrics.apply(&changes).map_err(MirrorError::Metrics)?;
        *declared = now_declared;
        Ok(())
    }

    /// Whether the metrics script gives `pod` its values (a rule matches
    /// it, or the script names it, not this mirror: `declared`).
    fn scripted(&self, pod: &Pod, declared: &BTreeSet<(String, String)>) -> bool {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        self.metrics.rule_matches(&namespace, &labels)
            || (!declared.contains(&(namespace.clone(), name.clone()))
                && self.metrics.declares(&namespace, &name))
    }

    /// Syncs every second of wall time and at once when a load changes,
    /// until `stop`.
    pub async fn run(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                () = self.loads.changed() => {}
                () = stop.cancelled() => return,
            }
            if let Err(err) = self.sync().await {
                tracing::warn!(error = %err, "mirroring the sim's pods into the metrics server failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_are_checked_quantities() {
        let load = Load {
            cpu: Some("350m".into()),
            memory: Some("1Gi".into()),
        };
        let d = load.demand().unwrap();
        assert_eq!(d.cpu_nanos, 350_000_000);
        assert_eq!(d.memory, Some(1_073_741_824_000_000_000));
        let bad = Load {
            cpu: Some("lots".into()),
            memory: None,
        };
        assert!(bad.demand().unwrap_err().contains("field cpu"));
    }

    #[test]
    fn shares_are_written_in_millicores() {
        assert_eq!(quantity_of(87_500_000, true).unwrap().0, "87m");
        assert_eq!(
            quantity_of(1_073_741_824_000_000_000, false).unwrap().0,
            "1073741824"
        );
    }

    /// A Deployment `app` of one pod in `default`.
    async fn deployment(client: &kube::Client, app: &str) {
        let d: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": app, "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": app}},
                "template": {"metadata": {"labels": {"app": app}},
                    "spec": {"containers": [{"name": "app", "image": "app",
                        "resources": {"requests": {"cpu": "100m"}}}]}}}
        }))
        .unwrap();
        Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(client.clone(), "default")
            .create(&kube::api::PostParams::default(), &d)
            .await
            .unwrap();
    }

    /// The name of the running pod of `app`, once there is one.
    async fn running_pod_of(pods: &Api<Pod>, app: &str) -> String {
        for _ in 0..200 {
            let listed = pods
                .list(&ListParams::default().labels(&format!("app={app}")))
                .await
                .unwrap();
            if let Some(pod) = listed.items.iter().find(|p| running(p)) {
                return pod.metadata.name.clone().unwrap();
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("no running pod of {app}");
    }

    fn cpu_of(metrics: &AppState, name: &str) -> Option<String> {
        metrics.read(|model, _| {
            let pod = model.pod("default", name)?;
            Some(pod.containers.first()?.cpu.as_ref()?.0.clone())
        })
    }

    /// A metrics script's rule gives the pods it matches their values; the
    /// mirror declares 0 only for pods nothing gives values, and a load
    /// set on a workload wins over the script.
    #[tokio::test]
    async fn the_mirror_leaves_pods_the_script_gives_values_to_the_script() {
        let sim = hpa_sim::Sim::new(hpa_sim::SimConfig::default());
        let pods = Api::<Pod>::namespaced(sim.client(), "default");
        for app in ["web", "batch", "named"] {
            deployment(&sim.client(), app).await;
        }
        let (web, batch, named) = (
            running_pod_of(&pods, "web").await,
            running_pod_of(&pods, "batch").await,
            running_pod_of(&pods, "named").await,
        );
        let script = script::Script::parse(
            &format!("pods:\n  - name: {named}\n    labels: {{app: named}}\n    containers: [{{name: app, cpu: 70m}}]\n\
             rules:\n  - name: web\n    selector: app=web\n    containers: [{{name: app, cpu: 180m}}]\n"),
            None,
        )
        .unwrap();
        let metrics = AppState::with_script(hpa_core::clock::ScenarioClock::wall(), &script);
        let watch = tokio::spawn(fake_metrics_server::watch::watch_pods(
            sim.client(),
            metrics.clone(),
            std::future::pending(),
        ));
        let loads = Loads::default();
        let mirror = Mirror::new(sim.client(), metrics.clone(), loads.clone());
        for _ in 0..100 {
            mirror.sync().await.unwrap();
            if cpu_of(&metrics, &web).is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(cpu_of(&metrics, &web).as_deref(), Some("180m"));
        assert_eq!(cpu_of(&metrics, &named).as_deref(), Some("70m"));
        assert_eq!(cpu_of(&metrics, &batch).as_deref(), Some("0m"));
        loads.set(
            "default",
            "web",
            Load {
                cpu: Some("300m".into()),
                memory: None,
            },
        );
        mirror.sync().await.unwrap();
        assert_eq!(cpu_of(&metrics, &web).as_deref(), Some("300m"));
        watch.abort();
    }
}
