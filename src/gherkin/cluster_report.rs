//! What the cluster shows when a `Then` step fails: every HPA of the
//! scenario namespace (status, conditions, current metrics), the
//! controller's latest decisions, the scale targets with their pods and
//! recent events.

use std::fmt::Write as _;

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams};
use serde_json::Value;

use super::world::{HpaWorld, ObjKey, workload_api};

/// What the cluster shows: every HPA of the scenario namespace (status,
/// conditions, current metrics), recent events, the scale targets and the
/// controller's latest decision traces.
pub async fn report(world: &mut HpaWorld) -> String {
    let mut out = String::new();
    let ns = world.namespace.clone();
    let Some(env) = world.cluster.env_if_started() else {
        return "(the cluster never started)".to_owned();
    };
    let client = env.client.clone();
    let now = env.now();
    let _ = writeln!(
        out,
        "--- what the cluster shows at {now} (namespace {ns}) ---"
    );
    hpa_lines(&mut out, world, &client, &ns).await;
    workload_lines(&mut out, world, &client, &ns).await;
    event_lines(&mut out, client, &ns).await;
    out
}

/// Each HPA of `ns`: its status, conditions and current metrics, and the
/// controller's latest decisions with the last one's trace.
async fn hpa_lines(out: &mut String, world: &HpaWorld, client: &kube::Client, ns: &str) {
    let hpas: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), ns);
    let list = hpas
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    for hpa in &list {
        let name = hpa.metadata.name.clone().unwrap_or_default();
        let _ = writeln!(out, "HPA {name}:");
        if let Some(s) = &hpa.status {
            let _ = writeln!(
                out,
                "  currentReplicas {}, desiredReplicas {}, lastScaleTime {}",
                s.current_replicas.unwrap_or_default(),
                s.desired_replicas,
                s.last_scale_time
                    .as_ref()
                    .map_or_else(|| "unset".to_owned(), |t| t.0.to_string())
            );
            for c in s.conditions.iter().flatten() {
                let _ = writeln!(
                    out,
                    "  condition {}={} {}: {}",
                    c.type_,
                    c.status,
                    c.reason.as_deref().unwrap_or_default(),
                    c.message.as_deref().unwrap_or_default()
                );
            }
            for m in s.current_metrics.iter().flatten() {
                let _ = writeln!(
                    out,
                    "  current {}",
                    serde_json::to_string(m).unwrap_or_default()
                );
            }
        } else {
            let _ = writeln!(out, "  no status");
        }
        if let Some(driver) = world.cluster.driver_if_started() {
            for d in driver.process_decisions(ns, &name, 3).await {
                process_decision_lines(out, &d);
            }
            let decisions = driver.decisions(ns, &name, 3);
            let last = decisions.len().saturating_sub(1);
            for (i, d) in decisions.into_iter().enumerate() {
                let _ = writeln!(
                    out,
                    "  decision at {}: current {:?} -> desired {:?}{}{}",
                    d.at,
                    d.current_replicas,
                    d.desired_replicas,
                    if d.rescaled { " (rescaled)" } else { "" },
                    d.error
                        .as_deref()
                        .map(|e| format!(", error: {e}"))
                        .unwrap_or_default()
                );
                if i == last
                    && let Some(trace) = &d.trace
                {
                    for l in trace.to_string().lines() {
                        let _ = writeln!(out, "    {l}");
                    }
                }
            }
        }
    }
}

/// Each scale target the scenario declared in `ns`, with its pods.
async fn workload_lines(out: &mut String, world: &mut HpaWorld, client: &kube::Client, ns: &str) {
    let workloads: Vec<_> = world
        .workloads
        .iter()
        .filter(|(key, _)| key.ns == ns)
        .map(|(key, w)| (key.name.clone(), w.kind))
        .collect();
    for (name, kind) in workloads {
        let api = workload_api(client, ns, kind);
        if let Ok(obj) = api.get(&name).await {
            let _ = writeln!(
                out,
                "{kind} {name}: spec.replicas {}, status.replicas {}",
                obj.data
                    .pointer("/spec/replicas")
                    .cloned()
                    .unwrap_or(Value::Null),
                obj.data
                    .pointer("/status/replicas")
                    .cloned()
                    .unwrap_or(Value::Null)
            );
        }
        // On a wall clock, when each pod started and turned ready decides
        // whether its samples count yet.
        for pod in world.pods_of(ns, &name).await.unwrap_or_default() {
            let real = pod.metadata.name.clone().unwrap_or_default();
            let step = world.pod_names.step_name(&ObjKey::new(ns, real));
            let _ = writeln!(out, "  {}", pod_line(&pod, &step));
        }
    }
}

/// The namespace's last ten events, oldest first.
async fn event_lines(out: &mut String, client: kube::Client, ns: &str) {
    let events: Api<Event> = Api::namespaced(client, ns);
    let mut evs = events
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    evs.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
    let start = evs.len().saturating_sub(10);
    let _ = writeln!(out, "recent events:");
    for e in &evs[start..] {
        let _ = writeln!(
            out,
            "  {} {} {}: {}",
            e.event_time
                .as_ref()
                .map(|t| t.0.to_string())
                .unwrap_or_default(),
            e.regarding
                .as_ref()
                .and_then(|r| r.name.clone())
                .unwrap_or_default(),
            e.reason.as_deref().unwrap_or_default(),
            e.note.as_deref().unwrap_or_default()
        );
    }
}

/// One decision of a controller process (its `/debug/decisions` entry):
/// when, what it saw and wanted, its error, and its trace.
fn process_decision_lines(out: &mut String, d: &Value) {
    let field = |f: &str| d.get(f).map_or_else(|| "-".to_owned(), ToString::to_string);
    let _ = writeln!(
        out,
        "  decision at {}: current {} -> desired {}, rescaled {}, error {}",
        field("at"),
        field("currentReplicas"),
        field("desiredReplicas"),
        field("rescaled"),
        field("error")
    );
    let trace = d
        .get("trace")
        .cloned()
        .and_then(|t| serde_json::from_value::<hpa_core::DecisionTrace>(t).ok());
    for l in trace
        .iter()
        .flat_map(|t| t.to_string().lines().map(str::to_owned).collect::<Vec<_>>())
    {
        let _ = writeln!(out, "    {l}");
    }
}

/// One pod: its name (and the steps' name for it), phase, start and
/// readiness with when it last changed.
fn pod_line(pod: &Pod, step: &str) -> String {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let alias = if step == name {
        String::new()
    } else {
        format!(" ({step})")
    };
    let status = pod.status.as_ref();
    let phase = status
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("no phase");
    let started = status
        .and_then(|s| s.start_time.as_ref())
        .map_or_else(|| "not started".to_owned(), |t| format!("started {}", t.0));
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .map_or_else(
            || "no Ready condition".to_owned(),
            |c| {
                format!(
                    "Ready={} since {}",
                    c.status,
                    c.last_transition_time
                        .as_ref()
                        .map_or_else(|| "?".to_owned(), |t| t.0.to_string())
                )
            },
        );
    format!("pod {name}{alias}: {phase}, {started}, {ready}")
}
