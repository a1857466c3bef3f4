//! The pods of a simulated workload: what they are named, how one is made
//! from its owner's template, and how it starts and becomes Ready on the
//! sim's clock. Both the workload controllers ([`crate::workloads`]) and
//! the rolling updaters ([`crate::updater`]) make and count pods through
//! it, so neither needs the other for that.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::resources::Storage;
use crate::revision::revision_label;
use crate::state::{PodDelays, PodPhase, State, Transition, k8s_time};
use crate::store::{Entry, EventType};

/// The annotation naming a workload's first pods (comma-separated, in
/// creation order): the harness gives the pods of a scenario the names its
/// table uses. Later pods continue as `NAME-k`.
pub const POD_NAMES_ANNOTATION: &str = "hpa-sim.io/pod-names";

/// The names the annotation gives, in order.
pub(crate) fn named_pods(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(POD_NAMES_ANNOTATION))
        .and_then(Value::as_str)
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn index_of(workload: &str, pod: &str) -> Option<u64> {
    pod.strip_prefix(workload)?.strip_prefix('-')?.parse().ok()
}

/// The creation index of pod `pod`: its place among the named pods, else
/// the `k` of `NAME-k`.
pub(crate) fn index_in(names: &[String], workload: &str, pod: &str) -> Option<u64> {
    match names.iter().position(|n| n == pod) {
        Some(i) => u64::try_from(i).ok(),
        None => index_of(workload, pod),
    }
}

/// The name of pod `k` of a workload: the annotation's, else `NAME-k`.
pub(crate) fn pod_name_at(names: &[String], workload: &str, k: u64) -> String {
    usize::try_from(k)
        .ok()
        .and_then(|k| names.get(k).cloned())
        .unwrap_or_else(|| format!("{workload}-{k}"))
}

/// The node whose kubelet the sim plays.
pub const SIM_NODE: &str = "sim-node-0";

/// The scheduler the sim plays: the one a pod without `schedulerName` has.
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// Whether the sim schedules and runs a pod of this spec on its node: it
/// has one, the pod is for `default-scheduler`, and it is bound to no
/// other node. Any other pod is left, Pending, to its own scheduler and
/// the kubelet of the node it is bound to.
pub(crate) fn runs_here(st: &State, spec: &Value) -> bool {
    let text = |k: &str| {
        spec.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    st.own_node
        && text("schedulerName").is_none_or(|s| s == DEFAULT_SCHEDULER)
        && text("nodeName").is_none_or(|n| n == SIM_NODE)
}

/// The delays of the pods of workload `ns/name`.
pub(crate) fn delays_of(st: &State, ns: &str, name: &str) -> PodDelays {
    st.delays
        .get(&(ns.to_owned(), name.to_owned()))
        .copied()
        .unwrap_or(st.default_delays)
}

/// A pod's phase.
pub(crate) fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether a pod is Ready.
pub(crate) fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type") == Some(&json!("Ready")) && c.get("status") == Some(&json!("True"))
            })
        })
}

/// Whether a pod is being deleted.
pub(crate) fn terminating(e: &Entry) -> bool {
    e.value()
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// How many of the owner's live pods run (have left Pending).
pub(crate) fn running_count(st: &State, ns: &str, owner_uid: &str) -> usize {
    st.store
        .owned_pods(owner_uid)
        .iter()
        .filter_map(|p| st.store.table(Storage::Pods).get(ns, p))
        .filter(|e| !terminating(e))
        .filter(|e| matches!(phase(&e.value()), "Running"))
        .count()
}

/// Whether the workload has room for one more running pod.
pub(crate) fn has_room(st: &State, ns: &str, owner_uid: &str, delays: PodDelays) -> bool {
    delays.max_running.is_none_or(|limit| {
        running_count(st, ns, owner_uid) < usize::try_from(limit).unwrap_or(usize::MAX)
    })
}

pub(crate) fn create_pod(
    st: &mut State,
    owner: &Value,
    owner_uid: &str,
    pod_name: &str,
    template_hash: Option<&str>,
    now: Timestamp,
    delays: PodDelays,
) {
    let ns = owner
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let template = owner
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    let mut meta = template
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let uid = st.next_uid();
    if let Some((key, value)) = revision_label(owner) {
        meta["labels"][key] = json!(value);
    }
    if let Some(m) = meta.as_object_mut() {
        m.insert("name".into(), json!(pod_name));
        m.insert("namespace".into(), json!(ns));
        m.insert("uid".into(), json!(uid));
        m.insert("creationTimestamp".into(), json!(k8s_time(now)));
        m.insert("generation".into(), json!(1));
        // A Deployment's pods already carry their revision's hash (the
        // rollout's); a generated name's hash labels the others.
        if let Some(hash) = template_hash {
            let labels = m.entry("labels").or_insert_with(|| json!({}));
            if let Some(l) = labels.as_object_mut() {
                l.entry(crate::pod_names::POD_TEMPLATE_HASH)
                    .or_insert_with(|| json!(hash));
            }
        }
        m.insert(
            "ownerReferences".into(),
            json!([{
                "apiVersion": owner.get("apiVersion").cloned().unwrap_or(Value::Null),
                "kind": owner.get("kind").cloned().unwrap_or(Value::Null),
                "name": owner.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
                "uid": owner_uid,
                "controller": true,
                "blockOwnerDeletion": true,
            }]),
        );
    }
    let mut spec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
    if !runs_here(st, &spec) {
        // Another scheduler's pod, or one for a node the sim does not
        // have: as the API server stores it, until others act on it.
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": spec,
            "status": {"phase": "Pending", "qosClass": "BestEffort"},
        });
        st.store.put(Storage::Pods, pod, EventType::Added);
        return;
    }
    if let Some(sp) = spec.as_object_mut() {
        sp.insert("nodeName".into(), json!(SIM_NODE));
    }
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {
            "phase": "Pending",
            "qosClass": "BestEffort",
            "conditions": [{"type": "PodScheduled", "status": "True",
                "lastTransitionTime": k8s_time(now)}],
        },
    });
    if delays.running.is_positive() {
        schedule(st, now + delays.running, ns, pod_name, PodPhase::Running);
    } else if has_room(st, ns, owner_uid, delays) {
        start(st, &mut pod, now, delays);
    } else {
        mark_unschedulable(&mut pod, now);
    }
    st.store.put(Storage::Pods, pod, EventType::Added);
}

fn schedule(st: &mut State, at: Timestamp, ns: &str, pod: &str, to: PodPhase) {
    st.pending_seq += 1;
    st.pending.insert(
        (nanos(at), st.pending_seq),
        Transition {
            ns: ns.to_owned(),
            pod: pod.to_owned(),
            to,
        },
    );
}

/// Binds and starts a pod now (Running; Ready now or after its delay).
pub(crate) fn start(st: &mut State, pod: &mut Value, now: Timestamp, delays: PodDelays) {
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("nodeName".into(), json!(SIM_NODE));
    }
    if let Some(c) = pod
        .pointer_mut("/status/conditions/0")
        .filter(|c| c.get("type") == Some(&json!("PodScheduled")))
    {
        *c = json!({"type": "PodScheduled", "status": "True", "lastTransitionTime": k8s_time(now)});
    }
    st.ip_seq += 1;
    set_running(pod, now, !delays.ready.is_positive(), st.ip_seq);
    if delays.ready.is_positive() {
        let ns = pod
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let name = pod
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        schedule(st, now + delays.ready, &ns, &name, PodPhase::Ready);
    }
}

/// Marks a Pending pod unschedulable, as the scheduler does when no node
/// has room.
pub(crate) fn mark_unschedulable(pod: &mut Value, at: Timestamp) {
    pod["status"] = json!({
        "phase": "Pending",
        "qosClass": "BestEffort",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/1 nodes are available: 1 Insufficient cpu.",
            "lastTransitionTime": k8s_time(at)}],
    });
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("nodeName");
    }
}

fn containers(pod: &Value) -> Vec<(String, String)> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let s = |k: &str| {
                        c.get(k)
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned()
                    };
                    (s("name"), s("image"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn set_running(pod: &mut Value, at: Timestamp, ready: bool, ip: u64) {
    let t = k8s_time(at);
    let scheduled = pod
        .pointer("/status/conditions/0/lastTransitionTime")
        .cloned()
        .unwrap_or_else(|| json!(t));
    let flag = if ready { "True" } else { "False" };
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let statuses: Vec<Value> = containers(pod)
        .into_iter()
        .map(|(c, image)| {
            json!({"name": c, "image": image, "imageID": "", "containerID": format!("sim://{name}/{c}"),
                "ready": ready, "started": true, "restartCount": 0,
                "state": {"running": {"startedAt": t}}})
        })
        .collect();
    let pod_ip = format!(
        "10.{}.{}.{}",
        64 + (ip >> 16) % 64,
        (ip >> 8) % 256,
        ip % 256
    );
    pod["status"] = json!({
        "phase": "Running",
        "qosClass": "BestEffort",
        "hostIP": "10.0.0.1",
        "hostIPs": [{"ip": "10.0.0.1"}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": t,
        "conditions": [
            {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": t},
            {"type": "Initialized", "status": "True", "lastTransitionTime": t},
            {"type": "Ready", "status": flag, "lastTransitionTime": t},
            {"type": "ContainersReady", "status": flag, "lastTransitionTime": t},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": scheduled},
        ],
        "containerStatuses": statuses,
    });
}

pub(crate) fn set_ready(pod: &mut Value, at: Timestamp) -> bool {
    let t = k8s_time(at);
    let Some(conds) = pod
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let mut changed = false;
    for c in conds.iter_mut() {
        let ty = c.get("type").and_then(Value::as_str).unwrap_or_default();
        if matches!(ty, "Ready" | "ContainersReady") && c.get("status") != Some(&json!("True")) {
            c["status"] = json!("True");
            c["lastTransitionTime"] = json!(t);
            changed = true;
        }
    }
    if let Some(cs) = pod
        .pointer_mut("/status/containerStatuses")
        .and_then(Value::as_array_mut)
    {
        for c in cs {
            c["ready"] = json!(true);
        }
    }
    changed
}

pub(crate) fn nanos(t: Timestamp) -> i128 {
    t.as_nanosecond()
}
