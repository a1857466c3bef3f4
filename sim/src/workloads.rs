//! Workload simulation: deployments, replicasets and statefulsets keep their
//! pods in line with `spec.replicas`, and new pods start and become Ready on
//! the sim's clock.
//!
//! Pods of workload NAME are `NAME-0`, `NAME-1`, ... in creation order
//! (with `SimConfig::generated_pod_names`, a Deployment's and a
//! ReplicaSet's are named as a real cluster names them instead:
//! [`crate::pod_names`]); the numbering continues and never reuses a number
//! while the workload exists (a StatefulSet's rolling update recreates a pod
//! under its own name). A
//! scale-down removes the highest-numbered pods first. The pods are owned
//! directly by the workload (no intermediate ReplicaSet objects): a
//! Deployment's pods carry `pod-template-hash`, a StatefulSet's
//! `controller-revision-hash`, and a change of the pod template rolls them
//! over ([`crate::updater`]). Reconciliation runs when `spec.replicas` or the
//! template changes, and on pod changes only while a rollout runs, so pod
//! edits made by the harness (failed, unready, terminating pods) stick.
//!
//! A workload may be given room for only so many running pods
//! ([`PodDelays::max_running`]): the others stay Pending and unschedulable,
//! without a start time, until a running one goes.

use std::sync::Arc;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::pods::{
    create_pod, delays_of, has_room, index_in, mark_unschedulable, named_pods, nanos, phase,
    running_count, runs_here, set_ready, start, terminating,
};
use crate::resources::Storage;
use crate::revision::revision_label;
use crate::selector::label_selector_string;
use crate::state::{PodDelays, PodPhase, State};
use crate::store::{Entry, EventType};
use crate::updater;

fn storage_of_kind(kind: &str) -> Option<Storage> {
    match kind {
        "Deployment" => Some(Storage::Deployments),
        "ReplicaSet" => Some(Storage::ReplicaSets),
        "StatefulSet" => Some(Storage::StatefulSets),
        _ => None,
    }
}

/// A workload under reconcile, and what its pods are named after.
struct Workload<'a> {
    s: Storage,
    ns: &'a str,
    name: &'a str,
    uid: &'a str,
    obj: &'a Value,
    /// The pod names the harness asked for, in order (empty when generated).
    names: &'a [String],
    /// Names come from [`crate::pod_names`], as a real cluster's.
    generate: bool,
}

impl Workload<'_> {
    /// The pod name for index `k`: the harness's name, else `NAME-k`.
    fn pod_name_at(&self, k: u64) -> String {
        usize::try_from(k)
            .ok()
            .and_then(|k| self.names.get(k).cloned())
            .unwrap_or_else(|| format!("{}-{k}", self.name))
    }
}

/// A workload's pod that is not terminating, with its index if it has one.
type ActivePod = (Option<u64>, Box<str>);

/// Brings the pods of workload `ns/name` to its `spec.replicas`, then
/// refreshes its status.
pub(crate) fn reconcile(st: &mut State, s: Storage, ns: &str, name: &str, now: Timestamp) {
    let Some(entry) = st.store.table(s).get(ns, name).cloned() else {
        return;
    };
    let obj = entry.value();
    let Some(uid) = obj.pointer("/metadata/uid").and_then(Value::as_str) else {
        return;
    };
    if s == Storage::Deployments && updater::roll_deployment(st, &obj, uid, now) {
        start_waiting(st, ns, name, uid, now);
        refresh_status(st, s, ns, name);
        return;
    }
    // Generated names: as a real cluster, whatever names the harness asks.
    let generate = st.generated_names && s != Storage::StatefulSets;
    let names = if generate {
        Vec::new()
    } else {
        named_pods(&obj)
    };
    let w = Workload {
        s,
        ns,
        name,
        uid,
        obj: &obj,
        names: &names,
        generate,
    };
    let want = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
        .max(0) as usize;
    let active = active_pods(st, &w);
    let key = (s, ns.to_owned(), name.to_owned());
    if active.len() >= want {
        // Nothing owed: a later scale-up waits anew.
        st.creation_due.remove(&key);
    } else if creation_waits(st, &key, now) {
        start_waiting(st, ns, name, uid, now);
        refresh_status(st, s, ns, name);
        return;
    }
    if active.len() < want {
        create_missing_pods(st, &w, &active, want, key, now);
    } else if active.len() > want {
        remove_extra_pods(st, ns, active, want);
    }
    if s == Storage::StatefulSets {
        updater::roll_statefulset(st, &obj, uid, now);
    }
    start_waiting(st, ns, name, uid, now);
    refresh_status(st, s, ns, name);
}

/// The workload's pods that are not terminating: those that count toward
/// `spec.replicas`.
fn active_pods(st: &State, w: &Workload<'_>) -> Vec<ActivePod> {
    st.store
        .owned_pods(w.uid)
        .into_iter()
        .filter(|p| {
            st.store
                .table(Storage::Pods)
                .get(w.ns, p)
                .is_some_and(|e| !terminating(e))
        })
        .map(|p| (index_in(w.names, w.name, &p), p))
        .collect()
}

/// Creates the pods a scale-up owes, at most a burst at a time (the rest
/// come back through `unsettled`), numbering on from the highest used.
fn create_missing_pods(
    st: &mut State,
    w: &Workload<'_>,
    active: &[ActivePod],
    want: usize,
    key: (Storage, String, String),
    now: Timestamp,
) {
    let (s, ns, name) = (w.s, w.ns, w.name);
    let highest = active.iter().filter_map(|(i, _)| *i).max();
    let mut next = st
        .next_index
        .get(&key)
        .copied()
        .unwrap_or(0)
        .max(highest.map_or(0, |h| h + 1));
    let delays = st
        .delays
        .get(&(ns.to_owned(), name.to_owned()))
        .copied()
        .unwrap_or(st.default_delays);
    let capped = want.min(st.max_pods);
    if capped < want {
        tracing::warn!(
            namespace = ns,
            workload = name,
            replicas = want,
            cap = st.max_pods,
            "the sim creates no more pods for this workload"
        );
    }
    let batch = capped
        .saturating_sub(active.len())
        .min(crate::limits::POD_BURST);
    if active.len() + batch < capped {
        // The rest come in later batches, each under the lock anew
        // (without a further delay: one reaction, several batches).
        st.unsettled.insert((s, ns.to_owned(), name.to_owned()));
        if !st.creation_delay.is_zero() {
            st.creation_due.insert(key.clone(), now);
        }
    }
    let kind = w
        .obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let template = w
        .obj
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    for _ in 0..batch {
        let (pod_name, hash) = free_pod_name(st, w, &mut next, kind, &template);
        next += 1;
        create_pod(st, w.obj, w.uid, &pod_name, hash.as_deref(), now, delays);
    }
    st.next_index.insert(key, next);
}

/// The first name from index `next` on that no pod has, with its template
/// hash when generated; `next` is left at that name's index.
fn free_pod_name(
    st: &mut State,
    w: &Workload<'_>,
    next: &mut u64,
    kind: &str,
    template: &Value,
) -> (String, Option<String>) {
    let mut hash = None;
    let mut pod_name = w.pod_name_at(*next);
    loop {
        if w.generate {
            st.name_seq += 1;
            if let Some((n, h)) = crate::pod_names::generated(kind, w.name, template, st.name_seq) {
                pod_name = n;
                hash = h;
            }
        }
        if st.store.table(Storage::Pods).get(w.ns, &pod_name).is_none() {
            return (pod_name, hash);
        }
        *next += 1;
        pod_name = w.pod_name_at(*next);
    }
}

/// Removes the pods a scale-down sheds. Pending first, as the ReplicaSet
/// controller ranks them, then the highest-numbered; pods not named NAME-k
/// go before numbered ones, the last by name first.
fn remove_extra_pods(st: &mut State, ns: &str, mut active: Vec<ActivePod>, want: usize) {
    let state = |p: &str| {
        st.store
            .table(Storage::Pods)
            .get(ns, p)
            .is_some_and(|e| phase(&e.value()) != "Pending")
    };
    active.sort_by(|a, b| {
        let (sa, sb) = (state(&a.1), state(&b.1));
        sa.cmp(&sb).then_with(|| match (a.0, b.0) {
            (Some(x), Some(y)) => y.cmp(&x),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (None, None) => b.1.cmp(&a.1),
        })
    });
    let extra = active.len() - want;
    for (_, p) in active.into_iter().take(extra) {
        st.store.remove(Storage::Pods, ns, &p);
    }
}

/// Whether workload `key` must wait before creating the pods it owes: a
/// real cluster's controller creates them a moment after the change that
/// calls for them (`SimConfig::pod_creation_delay`). The first call starts
/// the wait; [`release_due_creations`] ends it.
fn creation_waits(st: &mut State, key: &(Storage, String, String), now: Timestamp) -> bool {
    if st.creation_delay.is_zero() || key.0 == Storage::StatefulSets {
        return false;
    }
    match st.creation_due.get(key) {
        Some(due) if *due <= now => {
            st.creation_due.remove(key);
            false
        }
        Some(_) => true,
        None => {
            let due = now.checked_add(st.creation_delay).unwrap_or(now);
            st.creation_due.insert(key.clone(), due);
            true
        }
    }
}

/// Queues the workloads whose pod creation fell due by `now` for
/// reconciling.
pub(crate) fn release_due_creations(st: &mut State, now: Timestamp) {
    let due: Vec<_> = st
        .creation_due
        .iter()
        .filter(|(_, at)| **at <= now)
        .map(|(k, _)| k.clone())
        .collect();
    for key in due {
        if st.store.table(key.0).get(&key.1, &key.2).is_some() {
            st.unsettled.insert(key);
        } else {
            // The workload went while it waited.
            st.creation_due.remove(&key);
        }
    }
}

/// Starts the unschedulable pods of a workload the room now allows,
/// oldest first (the scheduler's queue).
pub(crate) fn start_waiting(st: &mut State, ns: &str, name: &str, owner_uid: &str, now: Timestamp) {
    let delays = delays_of(st, ns, name);
    let Some(limit) = delays.max_running else {
        return;
    };
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut running = running_count(st, ns, owner_uid);
    let mut waiting: Vec<(i128, Box<str>)> = st
        .store
        .owned_pods(owner_uid)
        .into_iter()
        .filter_map(|p| {
            let e = st.store.table(Storage::Pods).get(ns, &p)?;
            let v = e.value();
            // Pods of another scheduler wait for that one, whatever their
            // status says.
            let ours = runs_here(st, v.get("spec").unwrap_or(&Value::Null));
            (ours && !terminating(e) && unschedulable(&v)).then(|| (created_at(&v), p))
        })
        .collect();
    waiting.sort();
    for (_, p) in waiting {
        if running >= limit {
            break;
        }
        let Some(e) = st.store.table(Storage::Pods).get(ns, &p).cloned() else {
            continue;
        };
        let mut pod = e.value();
        start(st, &mut pod, now, delays);
        st.store.put(Storage::Pods, pod, EventType::Modified);
        running += 1;
    }
}

/// A pod the scheduler found no room for.
fn unschedulable(pod: &Value) -> bool {
    phase(pod) == "Pending"
        && pod
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.get("type") == Some(&json!("PodScheduled"))
                        && c.get("reason") == Some(&json!("Unschedulable"))
                })
            })
}

fn created_at(pod: &Value) -> i128 {
    pod.pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map_or(0, nanos)
}

/// Applies the transitions due by `now`, in due order.
pub(crate) fn process_due(st: &mut State, now: Timestamp) {
    let limit = nanos(now);
    while let Some(entry) = st.pending.first_entry() {
        if entry.key().0 > limit {
            break;
        }
        let ((due, _), tr) = entry.remove_entry();
        let at = Timestamp::from_nanosecond(due).unwrap_or(now);
        let Some(e) = st.store.table(Storage::Pods).get(&tr.ns, &tr.pod).cloned() else {
            continue;
        };
        let mut pod = e.value();
        if pod
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null())
        {
            continue;
        }
        let changed = match tr.to {
            PodPhase::Running => {
                if pod.pointer("/status/phase") != Some(&json!("Pending")) {
                    continue;
                }
                let delays = owner_delays(st, &e);
                match e.owner.as_deref() {
                    Some(owner) if !has_room(st, &tr.ns, owner, delays) => {
                        mark_unschedulable(&mut pod, at)
                    }
                    _ => start(st, &mut pod, at, delays),
                }
                true
            }
            PodPhase::Ready => {
                pod.pointer("/status/phase") == Some(&json!("Running")) && set_ready(&mut pod, at)
            }
        };
        if changed {
            let new = st.store.put(Storage::Pods, pod, EventType::Modified);
            refresh_owner(st, &new, at);
        }
    }
}

fn owner_delays(st: &State, pod: &Entry) -> PodDelays {
    let v = pod.value();
    let owner = v
        .pointer("/metadata/ownerReferences/0/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    st.delays
        .get(&(pod.ns.to_string(), owner.to_owned()))
        .copied()
        .unwrap_or(st.default_delays)
}

/// Refreshes the status of the workload that owns `pod` (after a pod write).
pub(crate) fn refresh_owner(st: &mut State, pod: &Arc<Entry>, now: Timestamp) {
    if pod.owner.is_none() {
        return;
    }
    let v = pod.value();
    let Some(refs) = v
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
    else {
        return;
    };
    for r in refs {
        if r.get("controller").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let kind = r.get("kind").and_then(Value::as_str).unwrap_or_default();
        let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some(s) = storage_of_kind(kind) else {
            continue;
        };
        if st
            .rolling
            .contains(&(s, pod.ns.to_string(), name.to_owned()))
        {
            // A pod became ready or went: the rollout may move on.
            reconcile(st, s, &pod.ns, name, now);
            continue;
        }
        if let Some(uid) = r.get("uid").and_then(Value::as_str) {
            start_waiting(st, &pod.ns, name, uid, now);
        }
        refresh_status(st, s, &pod.ns, name);
    }
}

/// Recomputes `status` of a workload from its pods; writes only on change.
pub(crate) fn refresh_status(st: &mut State, s: Storage, ns: &str, name: &str) {
    let Some(entry) = st.store.table(s).get(ns, name).cloned() else {
        return;
    };
    let mut obj = entry.value();
    let Some(uid) = obj.pointer("/metadata/uid").and_then(Value::as_str) else {
        return;
    };
    let mut replicas = 0i64;
    let mut ready = 0i64;
    // In mid-rollout only pods of the current template are up to date.
    let current = st
        .rolling
        .contains(&(s, ns.to_owned(), name.to_owned()))
        .then(|| revision_label(&obj))
        .flatten();
    let mut updated = 0i64;
    for p in st.store.owned_pods(uid) {
        let Some(e) = st.store.table(Storage::Pods).get(ns, &p) else {
            continue;
        };
        let pv = e.value();
        if pv
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null())
        {
            continue;
        }
        replicas += 1;
        if current.as_ref().is_none_or(|(k, v)| {
            pv.pointer("/metadata/labels").and_then(|l| l.get(*k)) == Some(&json!(v))
        }) {
            updated += 1;
        }
        let is_ready = pv
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.get("type") == Some(&json!("Ready"))
                        && c.get("status") == Some(&json!("True"))
                })
            });
        if is_ready {
            ready += 1;
        }
    }
    let generation = obj
        .pointer("/metadata/generation")
        .cloned()
        .unwrap_or(json!(1));
    let mut status = serde_json::Map::new();
    status.insert("observedGeneration".into(), generation);
    if replicas > 0 || s != Storage::Deployments {
        status.insert("replicas".into(), json!(replicas));
    }
    for (k, v) in [
        ("readyReplicas", ready),
        ("availableReplicas", ready),
        ("updatedReplicas", updated),
    ] {
        if v > 0 {
            status.insert(k.into(), json!(v));
        }
    }
    if s == Storage::ReplicaSets && replicas > 0 {
        status.insert("fullyLabeledReplicas".into(), json!(replicas));
    }
    if s == Storage::StatefulSets && replicas > 0 {
        status.insert("currentReplicas".into(), json!(replicas));
    }
    let status = Value::Object(status);
    if obj.get("status") == Some(&status) {
        return;
    }
    obj["status"] = status;
    st.store.put(s, obj, EventType::Modified);
}

/// The autoscaling/v1 `Scale` of a workload object.
pub(crate) fn scale_of(obj: &Value) -> Value {
    let m = |k: &str| {
        obj.pointer(&format!("/metadata/{k}"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let selector = obj
        .pointer("/spec/selector")
        .and_then(|s| label_selector_string(s).ok())
        .unwrap_or_default();
    let mut status = json!({
        "replicas": obj.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0),
    });
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": m("name"), "namespace": m("namespace"), "uid": m("uid"),
            "resourceVersion": m("resourceVersion"), "creationTimestamp": m("creationTimestamp")},
        "spec": {"replicas": obj.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0)},
        "status": status,
    })
}
