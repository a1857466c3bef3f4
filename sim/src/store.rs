//! Object storage: compact entries, one global resourceVersion, bounded watch
//! history.
//!
//! Objects are kept as serialized JSON (`Bytes`, shared with the watch
//! history and list responses without copying) plus the few fields that lists
//! filter on (labels, field-selector values, controller owner). One counter
//! stamps every write, like etcd's revision, so a resourceVersion orders
//! events across resources. Each storage keeps its last `history_limit`
//! events; a watch from before that window gets 410 Gone. Each event also
//! carries the time it was written, so that a lagging watch cache (a fault
//! the harness plays) can hold it back ([`Store::as_of`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use jiff::Timestamp;
use serde_json::Value;
use tokio::sync::watch;

use crate::resources::{ResourceDef, Storage};

/// A stored object.
#[derive(Debug)]
pub struct Entry {
    /// Namespace (`""` when cluster-scoped).
    pub ns: Box<str>,
    /// Name.
    pub name: Box<str>,
    /// resourceVersion of the write that produced this entry.
    pub rv: u64,
    /// The object in its storage version, `metadata.resourceVersion` included.
    pub json: Bytes,
    /// Sorted labels.
    pub labels: Vec<(Box<str>, Box<str>)>,
    /// Field-selector values (only those the resource supports and the object sets).
    pub fields: Vec<(&'static str, Box<str>)>,
    /// UID of the controller owner, if any.
    pub owner: Option<Box<str>>,
}

impl Entry {
    /// The object as a JSON value.
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// A field-selector value.
    pub fn field(&self, label: &str) -> Option<&str> {
        match label {
            "metadata.name" => Some(&self.name),
            "metadata.namespace" => Some(&self.ns),
            _ => self
                .fields
                .iter()
                .find(|(k, _)| *k == label)
                .map(|(_, v)| &**v),
        }
    }
}

/// An entry's field-selector values, as a field selector reads them.
pub struct FieldValues<'a>(pub &'a Entry);

impl crate::selector::LabelLookup for FieldValues<'_> {
    fn label(&self, key: &str) -> Option<&str> {
        self.0.field(key)
    }
}

/// Watch event types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Removed.
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One change, kept for watches.
#[derive(Debug, Clone)]
pub struct HistEvent {
    /// The resourceVersion of the change.
    pub rv: u64,
    /// What happened.
    pub ty: EventType,
    /// The object after the change (for DELETED: its last state, at `rv`).
    pub new: Arc<Entry>,
    /// The object before (MODIFIED only), so a filtered watch can turn a
    /// change into ADDED or DELETED when it enters or leaves the selection.
    pub old: Option<Arc<Entry>>,
    /// When it was written (the sim's clock).
    pub at: Timestamp,
}

/// A storage's objects as a lagging watch cache holds them.
pub type Objects = BTreeMap<(Box<str>, Box<str>), Arc<Entry>>;

/// The objects of one storage.
#[derive(Debug)]
pub struct Table {
    /// Objects by (namespace, name).
    pub objects: Objects,
    /// Recent changes, oldest first.
    pub history: VecDeque<HistEvent>,
    /// Every change after this resourceVersion is still in `history`.
    pub floor: u64,
    /// Latest resourceVersion written here; watchers wait on it.
    pub tx: watch::Sender<u64>,
}

impl Table {
    fn new() -> Self {
        Self {
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            floor: 0,
            tx: watch::Sender::new(0),
        }
    }

    /// Objects of one namespace (or all, for `None`), in name order.
    pub fn range<'a>(
        &'a self,
        ns: Option<&'a str>,
    ) -> Box<dyn Iterator<Item = &'a Arc<Entry>> + 'a> {
        match ns {
            None => Box::new(self.objects.values()),
            Some(ns) => {
                let start: (Box<str>, Box<str>) = (ns.into(), "".into());
                Box::new(
                    self.objects
                        .range(start..)
                        .take_while(move |((n, _), _)| &**n == ns)
                        .map(|(_, e)| e),
                )
            }
        }
    }

    /// One object.
    pub fn get(&self, ns: &str, name: &str) -> Option<&Arc<Entry>> {
        self.objects.get(&(Box::from(ns), Box::from(name)))
    }
}

/// All storages plus the revision counter.
#[derive(Debug)]
pub struct Store {
    tables: Vec<Table>,
    rv: u64,
    history_limit: usize,
    /// Pods by the UID of their controller owner (workload simulation looks
    /// a workload's pods up here instead of scanning a namespace).
    owned: HashMap<Box<str>, BTreeSet<Box<str>>>,
    /// The time writes are stamped with ([`Store::set_now`]).
    now: Timestamp,
}

impl Store {
    /// An empty store keeping `history_limit` events per storage.
    pub fn new(history_limit: usize) -> Self {
        Self {
            tables: Storage::every().map(|_| Table::new()).collect(),
            rv: 1,
            history_limit: history_limit.max(1),
            owned: HashMap::new(),
            now: Timestamp::UNIX_EPOCH,
        }
    }

    /// The time the next writes happened at.
    pub fn set_now(&mut self, now: Timestamp) {
        self.now = now;
    }

    /// Wakes the watchers of `s` without a write, so that they look again
    /// (events a lagging watch held may have fallen due).
    pub fn wake(&self, s: Storage) {
        self.tables[s.index()].tx.send_modify(|_| {});
    }

    /// The objects of `s` as a watch cache holding back the changes `held`
    /// says has them, and the resourceVersion they are consistent with;
    /// `None` when nothing is held back (or the history no longer reaches
    /// back far enough to tell). Once `held` holds a change it must hold
    /// every later one (a lag holds a suffix of the history).
    pub fn as_of(&self, s: Storage, held: impl Fn(&HistEvent) -> bool) -> Option<(Objects, u64)> {
        let table = &self.tables[s.index()];
        let first_held = table.history.partition_point(|e| !held(e));
        let held = table.history.get(first_held)?;
        let mut objects = table.objects.clone();
        for ev in table.history.range(first_held..).rev() {
            let key = (ev.new.ns.clone(), ev.new.name.clone());
            match (ev.ty, &ev.old) {
                (EventType::Added, _) => {
                    objects.remove(&key);
                }
                (EventType::Modified, Some(old)) => {
                    objects.insert(key, old.clone());
                }
                (EventType::Modified, None) => {}
                (EventType::Deleted, _) => {
                    objects.insert(key, ev.new.clone());
                }
            }
        }
        Some((objects, held.rv - 1))
    }

    /// The current global resourceVersion.
    pub fn rv(&self) -> u64 {
        self.rv
    }

    /// One storage's table.
    pub fn table(&self, s: Storage) -> &Table {
        &self.tables[s.index()]
    }

    /// A receiver that changes whenever `s` is written.
    pub fn subscribe(&self, s: Storage) -> watch::Receiver<u64> {
        self.tables[s.index()].tx.subscribe()
    }

    /// Writes `obj` (storage version) as a create or update, stamping a new
    /// resourceVersion into it. Returns the new entry.
    pub fn put(&mut self, s: Storage, mut obj: Value, ty: EventType) -> Arc<Entry> {
        self.rv += 1;
        let rv = self.rv;
        set_rv(&mut obj, rv);
        let entry = Arc::new(make_entry(s.def(), &obj, rv));
        let table = &mut self.tables[s.index()];
        let key = (entry.ns.clone(), entry.name.clone());
        let old = table.objects.insert(key, entry.clone());
        if s == Storage::Pods {
            self.index_owner(old.as_deref(), Some(&entry));
        }
        let ty = if old.is_none() { EventType::Added } else { ty };
        let old = if ty == EventType::Modified { old } else { None };
        self.record(
            s,
            HistEvent {
                rv,
                ty,
                new: entry.clone(),
                old,
                at: self.now,
            },
        );
        entry
    }

    /// Removes an object; the DELETED event carries a new resourceVersion.
    pub fn remove(&mut self, s: Storage, ns: &str, name: &str) -> Option<Arc<Entry>> {
        let table = &mut self.tables[s.index()];
        let old = table.objects.remove(&(Box::from(ns), Box::from(name)))?;
        if s == Storage::Pods {
            self.index_owner(Some(&old), None);
        }
        self.rv += 1;
        let rv = self.rv;
        let mut obj = old.value();
        set_rv(&mut obj, rv);
        let entry = Arc::new(make_entry(s.def(), &obj, rv));
        self.record(
            s,
            HistEvent {
                rv,
                ty: EventType::Deleted,
                new: entry.clone(),
                old: None,
                at: self.now,
            },
        );
        Some(entry)
    }

    fn index_owner(&mut self, old: Option<&Entry>, new: Option<&Entry>) {
        if let Some(o) = old
            && let Some(uid) = &o.owner
            && let Some(set) = self.owned.get_mut(uid)
        {
            set.remove(&o.name);
            if set.is_empty() {
                self.owned.remove(uid);
            }
        }
        if let Some(n) = new
            && let Some(uid) = &n.owner
        {
            self.owned
                .entry(uid.clone())
                .or_default()
                .insert(n.name.clone());
        }
    }

    /// Names of the pods whose controller owner has `uid`.
    pub fn owned_pods(&self, uid: &str) -> Vec<Box<str>> {
        self.owned
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn record(&mut self, s: Storage, ev: HistEvent) {
        let limit = self.history_limit;
        let table = &mut self.tables[s.index()];
        let rv = ev.rv;
        table.history.push_back(ev);
        while table.history.len() > limit {
            if let Some(gone) = table.history.pop_front() {
                table.floor = gone.rv;
            }
        }
        table.tx.send_replace(rv);
    }

    /// Events of `s` after `since`, or `Err(floor)` if some were dropped.
    pub fn events_since(&self, s: Storage, since: u64) -> Result<Vec<HistEvent>, u64> {
        let table = &self.tables[s.index()];
        if since < table.floor {
            return Err(table.floor);
        }
        let start = table.history.partition_point(|e| e.rv <= since);
        Ok(table.history.range(start..).cloned().collect())
    }

    /// The oldest resourceVersion a watch on `s` may resume from.
    pub fn floor(&self, s: Storage) -> u64 {
        self.tables[s.index()].floor
    }
}

fn set_rv(obj: &mut Value, rv: u64) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
}

fn make_entry(def: &ResourceDef, obj: &Value, rv: u64) -> Entry {
    let meta = obj.get("metadata");
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let ns = text(meta.and_then(|m| m.get("namespace")));
    let name = text(meta.and_then(|m| m.get("name")));
    let owner = meta
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .and_then(|refs| {
            refs.iter()
                .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        })
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
        .map(Box::from);
    let mut fields = Vec::new();
    for label in def.field_labels() {
        if matches!(*label, "metadata.name" | "metadata.namespace") {
            continue;
        }
        if let Some(v) = field_value(obj, label) {
            fields.push((*label, v.into_boxed_str()));
        }
    }
    Entry {
        ns: ns.into(),
        name: name.into(),
        rv,
        json: Bytes::from(serde_json::to_vec(obj).unwrap_or_default()),
        labels: crate::selector::labels_of(obj),
        fields,
        owner,
    }
}

/// The value of a field label; events are stored in core/v1 shape, so the
/// events.k8s.io names map onto their core/v1 fields.
fn field_value(obj: &Value, label: &str) -> Option<String> {
    let path = match label {
        l if l.starts_with("regarding.") => l.replacen("regarding.", "involvedObject.", 1),
        "reportingController" => "reportingComponent".to_owned(),
        "source" => "source.component".to_owned(),
        l => l.to_owned(),
    };
    let mut cur = obj;
    for part in path.split('.') {
        cur = cur.get(part)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "status": {"phase": "Running"}})
    }

    #[test]
    fn every_write_gets_a_new_global_resource_version() {
        let mut s = Store::new(10);
        let a = s.put(Storage::Pods, pod("a"), EventType::Added);
        let b = s.put(
            Storage::Deployments,
            json!({"metadata": {"name": "d", "namespace": "default"}}),
            EventType::Added,
        );
        assert!(b.rv > a.rv);
        assert_eq!(a.field("status.phase"), Some("Running"));
        assert_eq!(
            a.value()["metadata"]["resourceVersion"],
            json!(a.rv.to_string())
        );
    }

    #[test]
    fn a_lagging_view_reverts_what_was_written_after_its_cutoff() {
        let mut s = Store::new(10);
        let t = |secs| Timestamp::UNIX_EPOCH + jiff::SignedDuration::from_secs(secs);
        s.set_now(t(0));
        let a0 = s.put(Storage::Pods, pod("a"), EventType::Added);
        s.put(Storage::Pods, pod("b"), EventType::Added);
        s.set_now(t(10));
        let mut changed = pod("a");
        changed["status"]["phase"] = serde_json::json!("Failed");
        s.put(Storage::Pods, changed, EventType::Modified);
        s.remove(Storage::Pods, "default", "b");
        s.put(Storage::Pods, pod("c"), EventType::Added);
        assert!(
            s.as_of(Storage::Pods, |e| e.at > t(10)).is_none(),
            "nothing held"
        );
        let (objects, rv) = s.as_of(Storage::Pods, |e| e.at > t(5)).unwrap();
        let names: Vec<&str> = objects.keys().map(|(_, n)| &**n).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(objects.values().next().unwrap().rv, a0.rv);
        assert_eq!(rv, a0.rv + 1, "the last write at or before the cutoff");
    }

    #[test]
    fn history_beyond_the_limit_is_dropped_and_reported() {
        let mut s = Store::new(2);
        let first = s.put(Storage::Pods, pod("a"), EventType::Added).rv;
        s.put(Storage::Pods, pod("b"), EventType::Added);
        s.put(Storage::Pods, pod("c"), EventType::Added);
        assert!(s.events_since(Storage::Pods, first - 1).is_err());
        assert_eq!(s.events_since(Storage::Pods, first).unwrap().len(), 2);
    }
}
