//! The sim's rolling updaters. A Deployment whose pod template changes
//! rolls its pods over as kube-controller-manager's deployment controller
//! does: the new "ReplicaSet" (the pods with the new `pod-template-hash`)
//! surges up to `maxSurge`, old pods go within `maxUnavailable` as new ones
//! become Ready, and a scale in mid-rollout is shared among old and new
//! (the arithmetic is [`crate::rollout`]'s). A StatefulSet replaces one pod
//! at a time under its own name, highest ordinal first, each once every
//! pod runs and is Ready.
//!
//! Upstream's controllers react to each ReplicaSet and pod change within
//! milliseconds; the sim reacts at once, under the same lock, so between
//! two HPA syncs only readiness (the virtual clock) moves a rollout on.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::Value;

use crate::pods::{
    create_pod, delays_of, index_in, is_ready, named_pods, pod_name_at, terminating,
};
use crate::resources::Storage;
use crate::revision::{REVISION_LABEL, TEMPLATE_HASH_LABEL, revision_label, template_hash};
use crate::rollout::{self, IntOrPercent, Rolling, Rs};
use crate::state::State;

fn key(ns: &str, name: &str) -> (String, String) {
    (ns.to_owned(), name.to_owned())
}

/// A workload's pod template changed: its pods roll over from now on. A
/// Deployment keeps the old template for the old pods (their ReplicaSet's).
pub(crate) fn template_changed(st: &mut State, s: Storage, old: &Value, new: &Value) {
    let (Some(ns), Some(name)) = (
        new.pointer("/metadata/namespace").and_then(Value::as_str),
        new.pointer("/metadata/name").and_then(Value::as_str),
    ) else {
        return;
    };
    match s {
        Storage::Deployments => {
            if let Some(template) = old.pointer("/spec/template") {
                let hash = template_hash(template);
                st.old_templates
                    .entry((ns.to_owned(), name.to_owned(), hash))
                    .or_insert_with(|| template.clone());
            }
        }
        Storage::StatefulSets => {}
        _ => return,
    }
    st.rolling.insert((s, ns.to_owned(), name.to_owned()));
}

/// Forgets the rollout of a workload that went.
pub(crate) fn forget(st: &mut State, s: Storage, ns: &str, name: &str) {
    st.rolling.remove(&(s, ns.to_owned(), name.to_owned()));
    st.rollout_sizes.remove(&key(ns, name));
    st.old_templates
        .retain(|(n, w, _), _| !(n == ns && w == name));
}

/// One live pod of a workload, as the updaters see it.
#[derive(Debug, Clone)]
struct Member {
    name: Box<str>,
    index: Option<u64>,
    revision: Option<String>,
    running: bool,
    ready: bool,
}

/// The live pods of a workload.
fn members(st: &State, ns: &str, uid: &str, names: &[String], workload: &str) -> Vec<Member> {
    st.store
        .owned_pods(uid)
        .into_iter()
        .filter_map(|p| {
            let e = st.store.table(Storage::Pods).get(ns, &p)?;
            if terminating(e) {
                return None;
            }
            let v = e.value();
            let revision = v
                .pointer("/metadata/labels")
                .and_then(|l| l.get(TEMPLATE_HASH_LABEL).or_else(|| l.get(REVISION_LABEL)))
                .and_then(Value::as_str)
                .map(str::to_owned);
            Some(Member {
                index: index_in(names, workload, &p),
                name: p,
                revision,
                running: v.pointer("/status/phase").and_then(Value::as_str) == Some("Running"),
                ready: is_ready(&v),
            })
        })
        .collect()
}

/// The Deployment's pods by template hash (pods without one count as of
/// the current template), the old ReplicaSets oldest first.
fn census(members: Vec<Member>, current: &str) -> (Vec<Member>, Vec<(String, Vec<Member>)>) {
    let mut new = Vec::new();
    let mut old: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    for m in members {
        match m.revision.clone() {
            Some(r) if r != current => old.entry(r).or_default().push(m),
            _ => new.push(m),
        }
    }
    let mut old: Vec<(String, Vec<Member>)> = old.into_iter().collect();
    old.sort_by_key(|(_, ms)| ms.iter().filter_map(|m| m.index).min());
    (new, old)
}

fn rs_of(members: &[Member]) -> Rs {
    Rs {
        replicas: members.len() as i64,
        available: members.iter().filter(|m| m.ready).count() as i64,
    }
}

/// What a rolling Deployment's spec says.
fn rolling_of(obj: &Value) -> Rolling {
    let replicas = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
        .max(0);
    let field = |f: &str| {
        obj.pointer(&format!("/spec/strategy/rollingUpdate/{f}"))
            .and_then(IntOrPercent::parse)
            .unwrap_or(IntOrPercent::DEFAULT)
    };
    Rolling::resolve(replicas, field("maxSurge"), field("maxUnavailable"))
}

/// The sizing work of one Deployment reconcile.
struct Resizer<'a> {
    obj: &'a Value,
    uid: &'a str,
    ns: String,
    name: String,
    names: Vec<String>,
    now: Timestamp,
}

impl Resizer<'_> {
    /// Brings the pods of one revision to `target`: new ones from its
    /// template; going ones Pending first, then unready, then the
    /// highest-numbered (the ReplicaSet controller's order), and among
    /// generated names, which carry no number, the last by name (as a
    /// scale-down in `workloads` does, and as the harness numbers them).
    fn resize(&self, st: &mut State, revision: &str, mut pods: Vec<Member>, target: usize) {
        if pods.len() > target {
            pods.sort_by(|a, b| {
                (
                    a.running,
                    a.ready,
                    std::cmp::Reverse(a.index),
                    std::cmp::Reverse(&a.name),
                )
                    .cmp(&(
                        b.running,
                        b.ready,
                        std::cmp::Reverse(b.index),
                        std::cmp::Reverse(&b.name),
                    ))
            });
            for m in pods.iter().take(pods.len() - target) {
                st.store.remove(Storage::Pods, &self.ns, &m.name);
            }
            return;
        }
        let current = self
            .obj
            .pointer("/spec/template")
            .map(template_hash)
            .unwrap_or_default();
        let owner = if revision == current {
            self.obj.clone()
        } else {
            let Some(template) =
                st.old_templates
                    .get(&(self.ns.clone(), self.name.clone(), revision.to_owned()))
            else {
                return;
            };
            let mut owner = self.obj.clone();
            owner["spec"]["template"] = template.clone();
            owner
        };
        let delays = delays_of(st, &self.ns, &self.name);
        let index_key = (Storage::Deployments, self.ns.clone(), self.name.clone());
        let highest = members(st, &self.ns, self.uid, &self.names, &self.name)
            .iter()
            .filter_map(|m| m.index)
            .max();
        let mut next = st
            .next_index
            .get(&index_key)
            .copied()
            .unwrap_or(0)
            .max(highest.map_or(0, |h| h + 1));
        for _ in pods.len()..target {
            let mut pod = pod_name_at(&self.names, &self.name, next);
            while st.store.table(Storage::Pods).get(&self.ns, &pod).is_some() {
                next += 1;
                pod = pod_name_at(&self.names, &self.name, next);
            }
            next += 1;
            create_pod(st, &owner, self.uid, &pod, None, self.now, delays);
        }
        st.next_index.insert(index_key, next);
    }
}

/// Moves a Deployment's rollout as far as readiness allows. Returns false
/// when all its pods are of the current template (no rollout: the plain
/// scaling applies).
pub(crate) fn roll_deployment(st: &mut State, obj: &Value, uid: &str, now: Timestamp) -> bool {
    let (Some(ns), Some(name)) = (
        obj.pointer("/metadata/namespace").and_then(Value::as_str),
        obj.pointer("/metadata/name").and_then(Value::as_str),
    ) else {
        return false;
    };
    let Some(current) = obj.pointer("/spec/template").map(template_hash) else {
        return false;
    };
    let r = Resizer {
        obj,
        uid,
        ns: ns.to_owned(),
        name: name.to_owned(),
        names: named_pods(obj),
        now,
    };
    let look = |st: &State| census(members(st, ns, uid, &r.names, name), &current);
    let (_, old) = look(st);
    if old.is_empty() {
        forget(st, Storage::Deployments, ns, name);
        return false;
    }
    st.rolling
        .insert((Storage::Deployments, ns.to_owned(), name.to_owned()));
    if obj.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("Recreate") {
        // Every old pod goes before a new one comes.
        for (revision, pods) in old {
            r.resize(st, &revision, pods, 0);
        }
        forget(st, Storage::Deployments, ns, name);
        return false;
    }
    let d = rolling_of(obj);
    if let Some(&(before, surge)) = st.rollout_sizes.get(&key(ns, name))
        && before != d.replicas
    {
        // A scaling event (the HPA) in mid-rollout.
        let (new, old) = look(st);
        let mut sizes: Vec<i64> = old.iter().map(|(_, ms)| ms.len() as i64).collect();
        sizes.push(new.len() as i64);
        let target = rollout::proportional(d, before + surge, &sizes);
        for ((revision, pods), size) in old.into_iter().zip(&target) {
            r.resize(st, &revision, pods, usize::try_from(*size).unwrap_or(0));
        }
        let new_size = target.last().copied().unwrap_or(0);
        r.resize(st, &current, new, usize::try_from(new_size).unwrap_or(0));
    }
    // Each pass is one sync of upstream's controller; bounded, as each
    // changes some pods and readiness does not move within it.
    let bound = 4 * (d.replicas + d.max_surge) + 8;
    for _ in 0..bound {
        let (new, old) = look(st);
        let new_rs = rs_of(&new);
        let all = new_rs.replicas + old.iter().map(|(_, ms)| ms.len() as i64).sum::<i64>();
        let want_new = if new_rs.replicas > d.replicas {
            d.replicas
        } else {
            rollout::new_rs_replicas(d, all, new_rs)
        };
        if want_new != new_rs.replicas {
            r.resize(st, &current, new, usize::try_from(want_new).unwrap_or(0));
            continue;
        }
        let old_rs: Vec<Rs> = old.iter().map(|(_, ms)| rs_of(ms)).collect();
        let want_old = rollout::old_rs_replicas(d, new_rs, &old_rs);
        if want_old == old_rs.iter().map(|r| r.replicas).collect::<Vec<_>>() {
            break;
        }
        for ((revision, pods), size) in old.into_iter().zip(want_old) {
            if size != pods.len() as i64 {
                r.resize(st, &revision, pods, usize::try_from(size).unwrap_or(0));
            }
        }
    }
    st.rollout_sizes
        .insert(key(ns, name), (d.replicas, d.max_surge));
    if look(st).1.is_empty() {
        forget(st, Storage::Deployments, ns, name);
    }
    true
}

/// Moves a StatefulSet's rolling update on: while every pod runs and is
/// Ready, the highest ordinal still of an old revision (at or above the
/// partition) is deleted and made anew from the current template.
pub(crate) fn roll_statefulset(st: &mut State, obj: &Value, uid: &str, now: Timestamp) {
    let (Some(ns), Some(name)) = (
        obj.pointer("/metadata/namespace").and_then(Value::as_str),
        obj.pointer("/metadata/name").and_then(Value::as_str),
    ) else {
        return;
    };
    let rolling_key = (Storage::StatefulSets, ns.to_owned(), name.to_owned());
    if !st.rolling.contains(&rolling_key) {
        return;
    }
    if obj
        .pointer("/spec/updateStrategy/type")
        .and_then(Value::as_str)
        == Some("OnDelete")
    {
        st.rolling.remove(&rolling_key);
        return;
    }
    let Some((_, current)) = revision_label(obj) else {
        return;
    };
    let partition = obj
        .pointer("/spec/updateStrategy/rollingUpdate/partition")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let names = named_pods(obj);
    let delays = delays_of(st, ns, name);
    let pods = members(st, ns, uid, &names, name).len();
    for _ in 0..=pods {
        let members = members(st, ns, uid, &names, name);
        let outdated = members
            .iter()
            .filter(|m| m.revision.as_deref() != Some(current.as_str()))
            .filter(|m| m.index.is_some_and(|i| i >= partition))
            .max_by_key(|m| m.index);
        let Some(victim) = outdated else {
            st.rolling.remove(&rolling_key);
            return;
        };
        if members.iter().any(|m| !(m.running && m.ready)) {
            return;
        }
        let pod = victim.name.to_string();
        st.store.remove(Storage::Pods, ns, &pod);
        create_pod(st, obj, uid, &pod, None, now, delays);
    }
}
