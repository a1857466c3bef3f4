//! The pod watch cache: every pod as the decision core reads it, indexed
//! by namespace and by label.
//!
//! A reconcile wants its target's pods: the pods of one namespace that one
//! selector selects. Scanning the namespace and matching every pod was a
//! large share of the controller's CPU at 10,000 HPAs (100 HPAs and 1,000
//! pods per namespace), so the index also keeps, per label `key=value`, the
//! pods that carry it ([`Postings`], the label index): a selector with an
//! equality or `in` clause then looks at the pods that clause admits and
//! matches only those.
//!
//! The index is the only copy of the pods: the pod watch feeds it directly
//! (no reflector store beside it), and each pod is kept as the core's
//! [`CorePod`], built once per change and shared (`Arc`) with every
//! reconcile that reads it. A reconcile clones pointers, not pods; and the
//! 100,000 pods of a large cluster are held once, without the metadata a
//! store keeps.

use std::collections::{BTreeMap, HashMap, HashSet};

use foldhash::HashMap as FastMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use hpa_core::pod::{CorePodSpec, Labels};
use hpa_core::{CorePod, Selector};
use kube::runtime::watcher;

use super::label_index::{Postings, Sorted};
use super::memory::{Footprint, Meter, table_bytes};
use super::slim_pod::SlimPod;
use super::watch_store::{Change, Ready, WatchStore};

/// See the module documentation. Cloning shares the index.
#[derive(Debug, Clone, Default)]
pub struct PodIndex {
    state: Arc<RwLock<IndexState>>,
    ready: Ready,
}

/// Each namespace's pods.
type Namespaces = FastMap<String, NamespacePods>;

#[derive(Debug, Default)]
struct IndexState {
    namespaces: WatchStore<Namespaces>,
    /// Counts the changes of any namespace's pods and labels (never reset,
    /// so a relisted namespace cannot repeat an earlier value).
    changes: u64,
}

/// The pods carrying one label `key=value`, by name (the order a
/// selection returns them in).
type Posting = Sorted<Arc<str>, Arc<CorePod>>;

/// One cached pod and the resource version it was seen at.
#[derive(Debug, Clone)]
struct Cached {
    pod: Arc<CorePod>,
    resource_version: Box<str>,
}

/// One namespace's pods by name, and their names by label.
#[derive(Debug, Default)]
struct NamespacePods {
    pods: BTreeMap<Arc<str>, Cached>,
    /// label key → label value → the pods carrying it, by name. The pods
    /// themselves, not their names: a reconcile reads its pods straight
    /// from here, without looking each up again in `pods` by name (that
    /// second lookup's string compares were most of a selection's CPU).
    postings: Postings<Posting>,
    /// `IndexState::changes` at this namespace's latest change of a pod's
    /// presence or labels: a check of the pods by name made at this value
    /// still holds.
    changed_at: u64,
    /// The distinct label sets of the namespace's pods, each held once and
    /// shared by the pods carrying it (the pods of one workload).
    label_sets: HashSet<Arc<Labels>>,
    /// The distinct specs, by their JSON, shared likewise (one template's pods).
    specs: HashMap<String, Arc<CorePodSpec>>,
}

impl NamespacePods {
    /// The pod as the core reads it, with labels and spec shared with the
    /// namespace's other pods holding the same.
    fn core_pod(&mut self, pod: &SlimPod) -> CorePod {
        let labels = pod
            .metadata
            .labels
            .as_ref()
            .map(Labels::from)
            .unwrap_or_default();
        let labels = match self.label_sets.get(&labels) {
            Some(shared) => Arc::clone(shared),
            None => {
                let labels = Arc::new(labels);
                self.label_sets.insert(Arc::clone(&labels));
                labels
            }
        };
        let spec = match serde_json::to_string(&pod.spec) {
            Ok(key) => Arc::clone(
                self.specs
                    .entry(key)
                    .or_insert_with(|| Arc::new(pod.core_spec())),
            ),
            Err(_) => Arc::new(pod.core_spec()),
        };
        pod.to_core_with(labels, spec)
    }

    /// Lets go of a replaced or removed pod's shares: a label set or spec
    /// no cached pod holds any more leaves the pools (those still held by a
    /// running reconcile leave at a later sweep, when the pools outgrow the
    /// pods).
    fn release(&mut self, old: Cached) {
        let Cached { pod, .. } = old;
        let (labels, spec) = (Arc::clone(&pod.labels), Arc::clone(&pod.spec));
        drop(pod);
        // Held by the pool and here only.
        if Arc::strong_count(&labels) == 2 {
            self.label_sets.remove(&labels);
        }
        if Arc::strong_count(&spec) == 2 {
            self.specs.retain(|_, s| !Arc::ptr_eq(s, &spec));
        }
        if self.label_sets.len() > self.pods.len() + 16 {
            self.label_sets.retain(|l| Arc::strong_count(l) > 1);
        }
        if self.specs.len() > self.pods.len() + 16 {
            self.specs.retain(|_, s| Arc::strong_count(s) > 1);
        }
    }

    /// Inserts or replaces a pod; whether its presence or labels changed.
    fn insert(&mut self, pod: Cached) -> bool {
        if let Some(cached) = self.pods.get_mut(pod.pod.name.as_str())
            && cached.pod.labels == pod.pod.labels
        {
            // Same postings; each holds the new pod in place of the old.
            for (key, value) in pod.pod.labels.iter() {
                if let Some(held) = self
                    .postings
                    .get_mut(key, value)
                    .and_then(|posting| posting.get_mut(pod.pod.name.as_str()))
                {
                    *held = Arc::clone(&pod.pod);
                }
            }
            let old = std::mem::replace(cached, pod);
            self.release(old);
            return false;
        }
        self.remove(&pod.pod.name);
        let name: Arc<str> = Arc::from(pod.pod.name.as_str());
        for (key, value) in pod.pod.labels.iter() {
            let (name, pod) = (Arc::clone(&name), Arc::clone(&pod.pod));
            match self.postings.get_mut(key, value) {
                Some(posting) => {
                    posting.insert(name, pod);
                }
                None => self.postings.insert(key, value, Sorted::One(name, pod)),
            }
        }
        self.pods.insert(name, pod);
        true
    }

    /// The bytes this namespace's pods hold (see [`PodIndex::footprint`]).
    fn footprint(&self, meter: &Meter) -> u64 {
        // The map's nodes and the versions it holds (names and pods are
        // shared: counted below, once).
        let mut bytes = meter.heap(&self.pods);
        for (name, cached) in &self.pods {
            bytes += meter.arc_str(name) + meter.arc(&*cached.pod);
        }
        bytes += self
            .postings
            .footprint(meter, |posting| meter.heap(posting));
        bytes += table_bytes(
            self.label_sets.capacity(),
            std::mem::size_of::<Arc<Labels>>(),
        ) + self
            .label_sets
            .iter()
            .map(|labels| meter.arc(&**labels))
            .sum::<u64>();
        bytes += table_bytes(
            self.specs.capacity(),
            std::mem::size_of::<(String, Arc<CorePodSpec>)>(),
        ) + self
            .specs
            .iter()
            .map(|(key, spec)| meter.block(key.capacity()) + meter.arc(&**spec))
            .sum::<u64>();
        bytes
    }

    /// Removes a pod; whether it was there.
    fn remove(&mut self, name: &str) -> bool {
        let Some(cached) = self.pods.remove(name) else {
            return false;
        };
        for (key, value) in cached.pod.labels.iter() {
            self.postings.remove_with(key, value, |names| {
                names.remove(name);
            });
        }
        self.release(cached);
        true
    }

    /// The pods `selector` selects (all when `None`), by name.
    fn select(&self, selector: Option<&Selector>) -> Vec<&Arc<CorePod>> {
        let Some(selector) = selector else {
            return self.pods.values().map(|cached| &cached.pod).collect();
        };
        if selector.is_nothing() {
            return Vec::new();
        }
        let mut matching = Matching::new(selector);
        // The narrowest equality clause gives the candidates; the whole
        // selector is then matched against those only.
        let Some(mut postings) = self.postings.narrowest(selector) else {
            return self
                .pods
                .values()
                .map(|cached| &cached.pod)
                .filter(|pod| matching.matches(pod))
                .collect();
        };
        match (postings.next(), postings.next()) {
            (None, _) => Vec::new(),
            // One posting (an equality clause): already by name.
            (Some(only), None) => only.values().filter(|pod| matching.matches(pod)).collect(),
            (Some(first), Some(second)) => {
                // Several values of one key: a pod carries one value per
                // key, so the postings are disjoint; merged by name.
                let mut selected: Vec<(&Arc<str>, &Arc<CorePod>)> = first
                    .iter()
                    .chain(second)
                    .chain(postings.flatten())
                    .filter(|(_, pod)| matching.matches(pod))
                    .collect();
                selected.sort_unstable_by(|a, b| a.0.cmp(b.0));
                selected.dedup_by(|a, b| a.0 == b.0);
                selected.into_iter().map(|(_, pod)| pod).collect()
            }
        }
    }
}

/// Whether a selector selects pods, matched once per distinct label set:
/// the pods of one workload share theirs (`NamespacePods::label_sets`), so
/// a run of them is matched once.
struct Matching<'a> {
    selector: &'a Selector,
    /// The label set last matched (compared by address only, while the
    /// index's read lock keeps it alive), and whether it matched.
    last: Option<(*const Labels, bool)>,
}

impl<'a> Matching<'a> {
    fn new(selector: &'a Selector) -> Self {
        Self {
            selector,
            last: None,
        }
    }

    fn matches(&mut self, pod: &CorePod) -> bool {
        let labels = Arc::as_ptr(&pod.labels);
        if let Some((last, matched)) = self.last
            && std::ptr::eq(last, labels)
        {
            return matched;
        }
        let matched = self.selector.matches(&pod.labels);
        self.last = Some((labels, matched));
        matched
    }
}

fn insert(map: &mut Namespaces, changes: &mut u64, pod: &SlimPod) {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let pods = match map.get_mut(namespace) {
        Some(pods) => pods,
        None => map.entry(namespace.to_string()).or_default(),
    };
    let cached = Cached {
        pod: Arc::new(pods.core_pod(pod)),
        resource_version: pod
            .metadata
            .resource_version
            .as_deref()
            .unwrap_or_default()
            .into(),
    };
    if pods.insert(cached) {
        *changes += 1;
        pods.changed_at = *changes;
    }
}

/// Removes `pod` from its namespace, and the namespace once empty.
fn remove(map: &mut Namespaces, changes: &mut u64, pod: &SlimPod) {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    if let Some(pods) = map.get_mut(namespace) {
        if pods.remove(name) {
            *changes += 1;
            pods.changed_at = *changes;
        }
        if pods.pods.is_empty() {
            map.remove(namespace);
        }
    }
}

/// The pod names of a namespace-wide metrics answer (custom metrics
/// `pods/*/METRIC` without a label selector), so [`PodIndex::pick`] can
/// find one selector's share of it.
#[derive(Debug, Default)]
pub struct ListedPods {
    /// Pod name (the answer's own, shared) → its entries' positions in the
    /// answer (looked up for every pod of every HPA picking its share: a
    /// fast hasher).
    positions: FastMap<Arc<str>, Positions>,
    /// The answer's names in its order, when that order is sorted by name
    /// (as metrics servers list): then [`PodIndex::pick`] checks them
    /// against the cache, sorted too, in one walk of both, not a lookup
    /// per name (in the steady-sync benchmark, `pick` made a quarter of
    /// the string compares).
    sorted: Option<Box<[Arc<str>]>>,
    /// The namespace's `changed_at` when every listed pod was last found in
    /// the cache; 0: not yet.
    known_at: AtomicU64,
}

/// One name's positions in an answer: almost always one.
#[derive(Debug)]
enum Positions {
    One(usize),
    Many(Vec<usize>),
}

impl Positions {
    fn as_slice(&self) -> &[usize] {
        match self {
            Self::One(at) => std::slice::from_ref(at),
            Self::Many(all) => all,
        }
    }

    fn push(&mut self, at: usize) {
        match self {
            Self::One(first) => *self = Self::Many(vec![*first, at]),
            Self::Many(all) => all.push(at),
        }
    }
}

impl ListedPods {
    /// The bytes it holds ([`crate::memory`]); the names are the answer's.
    pub fn footprint(&self, meter: &Meter) -> u64 {
        table_bytes(
            self.positions.capacity(),
            std::mem::size_of::<(Arc<str>, Positions)>(),
        ) + self
            .positions
            .values()
            .map(|at| match at {
                Positions::One(_) => 0,
                Positions::Many(all) => meter.buffer::<usize>(all.capacity()),
            })
            .sum::<u64>()
            + self
                .sorted
                .as_ref()
                .map_or(0, |names| meter.buffer::<Arc<str>>(names.len()))
    }

    /// The names of an answer's entries, in its order.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a Arc<str>>) -> Self {
        let names = names.into_iter();
        // Room for every name (an answer names each pod once).
        let listed = names.size_hint().0;
        let mut positions: FastMap<Arc<str>, Positions> =
            FastMap::with_capacity_and_hasher(listed, Default::default());
        let mut in_order: Vec<Arc<str>> = Vec::with_capacity(listed);
        let mut sorted = true;
        for (at, name) in names.enumerate() {
            sorted &= in_order.last().is_none_or(|last| **last <= **name);
            if sorted {
                in_order.push(Arc::clone(name));
            }
            positions
                .entry(Arc::clone(name))
                .and_modify(|known| known.push(at))
                .or_insert(Positions::One(at));
        }
        Self {
            positions,
            sorted: sorted.then(|| in_order.into_boxed_slice()),
            known_at: AtomicU64::new(0),
        }
    }

    /// Whether the cache's namespace holds every listed pod.
    fn all_cached(&self, pods: &NamespacePods) -> bool {
        let Some(names) = &self.sorted else {
            return self
                .positions
                .keys()
                .all(|name| pods.pods.contains_key(&**name));
        };
        // Both sorted by name: one walk, the cache's side never moved back.
        let mut cached = pods.pods.keys().peekable();
        names.iter().all(|name| {
            while cached.next_if(|key| ***key < **name).is_some() {}
            cached.peek().is_some_and(|key| ***key == **name)
        })
    }
}

impl PodIndex {
    /// Applies one watch event, as kube's reflector store would: `Init`
    /// starts a relist kept aside, `InitApply` fills it, `InitDone`
    /// replaces the cache with it (pods gone during a watch outage leave
    /// then) and marks the cache ready.
    pub fn apply(&self, event: &watcher::Event<SlimPod>) {
        let mut state = self
            .state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let IndexState {
            namespaces,
            changes,
        } = &mut *state;
        let listed = namespaces.apply(event, |map, change| match change {
            Change::Apply(pod) => insert(map, changes, pod),
            Change::Delete(pod) => remove(map, changes, pod),
        });
        drop(state);
        if listed {
            self.ready.set();
        }
    }

    /// Waits until the first list is in the cache.
    pub async fn wait_until_ready(&self) {
        self.ready.wait().await;
    }

    /// Every cached pod's resource version by `namespace/name`.
    pub fn versions(&self) -> BTreeMap<String, String> {
        let state = self
            .state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state
            .namespaces
            .live()
            .iter()
            .flat_map(|(namespace, pods)| {
                pods.pods.iter().map(move |(name, cached)| {
                    (
                        format!("{namespace}/{name}"),
                        cached.resource_version.to_string(),
                    )
                })
            })
            .collect()
    }

    /// The positions of the entries of a namespace-wide metrics answer
    /// (`listed`, from `namespace`) that a request with `selector` would
    /// have been answered with: the entries of the pods the cache says
    /// `selector` selects, in the answer's order. `None` when the cache
    /// cannot tell, so that the caller asks with the selector instead: the
    /// answer names a pod the cache does not hold (its labels are unknown),
    /// a pod the selector selects has no entry (the answer may be partial),
    /// or the selector selects no listed pod.
    pub fn pick(
        &self,
        namespace: &str,
        selector: &Selector,
        listed: &ListedPods,
    ) -> Option<Vec<usize>> {
        let state = self
            .state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let pods = state.namespaces.live().get(namespace)?;
        // Whether every listed pod is cached is checked once per change of
        // the namespace's pods, not once per HPA.
        if listed.known_at.load(Ordering::Relaxed) != pods.changed_at {
            if !listed.all_cached(pods) {
                return None;
            }
            listed.known_at.store(pods.changed_at, Ordering::Relaxed);
        }
        let mut picked = Vec::new();
        for pod in pods.select(Some(selector)) {
            picked.extend_from_slice(listed.positions.get(pod.name.as_str())?.as_slice());
        }
        if picked.is_empty() {
            return None;
        }
        picked.sort_unstable();
        Some(picked)
    }

    /// What the pod cache holds ([`crate::memory`]): each pod once, its
    /// name, the shared label sets and specs once each, the label index
    /// and the tables (a relist in progress included).
    pub fn footprint(&self, meter: &Meter) -> Footprint {
        let state = self
            .state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut footprint = Footprint::new("pod cache");
        for map in state.namespaces.maps() {
            footprint.bytes += table_bytes(
                map.capacity(),
                std::mem::size_of::<(String, NamespacePods)>(),
            );
            for (namespace, pods) in map {
                footprint.entries += pods.pods.len();
                footprint.bytes += meter.block(namespace.capacity()) + pods.footprint(meter);
            }
        }
        footprint
    }

    /// The pods of `namespace` that `selector` selects (all when `None`),
    /// by name: shared with the cache, not copied.
    pub fn pods(&self, namespace: &str, selector: Option<&Selector>) -> Vec<Arc<CorePod>> {
        let state = self
            .state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(pods) = state.namespaces.live().get(namespace) else {
            return Vec::new();
        };
        pods.select(selector).into_iter().map(Arc::clone).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(namespace: &str, name: &str, labels: &[(&str, &str)]) -> SlimPod {
        let labels: BTreeMap<&str, &str> = labels.iter().copied().collect();
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": namespace, "labels": labels}
        }))
        .unwrap()
    }

    fn names(pods: Vec<Arc<CorePod>>) -> Vec<String> {
        pods.iter().map(|p| p.name.clone()).collect()
    }

    /// An index fed events as the pod watch feeds it.
    struct Fed {
        index: PodIndex,
    }

    impl Fed {
        fn new() -> Self {
            Self {
                index: PodIndex::default(),
            }
        }

        fn apply(&mut self, event: watcher::Event<SlimPod>) {
            self.index.apply(&event);
        }

        fn select(&self, namespace: &str, selector: Option<&str>) -> Vec<String> {
            let selector = selector.map(|s| Selector::parse(s).unwrap());
            names(self.index.pods(namespace, selector.as_ref()))
        }
    }

    #[test]
    fn the_pod_index_follows_watch_events_and_relists() {
        let mut fed = Fed::new();
        fed.apply(watcher::Event::Apply(pod("a", "web-1", &[("app", "web")])));
        fed.apply(watcher::Event::Apply(pod("a", "db-1", &[("app", "db")])));
        fed.apply(watcher::Event::Apply(pod("b", "web-2", &[("app", "web")])));
        assert_eq!(fed.select("a", Some("app=web")), ["web-1"]);
        assert_eq!(fed.select("a", None), ["db-1", "web-1"]);
        fed.apply(watcher::Event::Delete(pod("a", "web-1", &[("app", "web")])));
        assert!(fed.select("a", Some("app=web")).is_empty());
        // A relist replaces everything once done, not before.
        fed.apply(watcher::Event::Init);
        fed.apply(watcher::Event::InitApply(pod("c", "x", &[("app", "web")])));
        assert_eq!(fed.select("b", None), ["web-2"]);
        fed.apply(watcher::Event::InitDone);
        assert!(fed.select("b", None).is_empty());
        assert_eq!(fed.select("c", Some("app=web")), ["x"]);
    }

    /// A pod with a phase and a resource version, as the watch delivers it.
    fn pod_at(name: &str, phase: &str, version: &str) -> SlimPod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"},
                         "resourceVersion": version},
            "status": {"phase": phase}
        }))
        .unwrap()
    }

    /// An update that keeps the labels (a pod becoming Running) still
    /// reaches the next reconcile: the cached pod is replaced, not kept.
    #[test]
    fn a_status_change_reaches_the_pods_a_reconcile_reads() {
        let mut fed = Fed::new();
        fed.apply(watcher::Event::Apply(pod_at("web-1", "Pending", "5")));
        let before = fed.index.pods("ns", None);
        fed.apply(watcher::Event::Apply(pod_at("web-1", "Running", "6")));
        let after = fed.index.pods("ns", None);
        assert_eq!(before[0].phase, "Pending");
        assert_eq!(after[0].phase, "Running");
        assert_eq!(fed.index.versions()["ns/web-1"], "6");
        // Read through the label index too (the pod held by its postings).
        let selected = fed
            .index
            .pods("ns", Some(&Selector::parse("app=web").unwrap()));
        assert_eq!(selected[0].phase, "Running");
        assert!(Arc::ptr_eq(&selected[0], &after[0]));
    }

    /// The cache is ready once the first list is in (as a reflector store
    /// is), and holds each pod's latest resource version for the harness's
    /// cache check.
    #[tokio::test]
    async fn the_cache_is_ready_after_the_first_list() {
        let mut fed = Fed::new();
        fed.apply(watcher::Event::Init);
        fed.apply(watcher::Event::InitApply(pod_at("web-1", "Running", "3")));
        assert!(!fed.index.ready.is_set());
        fed.apply(watcher::Event::InitDone);
        fed.index.wait_until_ready().await;
        assert_eq!(
            fed.index.versions(),
            BTreeMap::from([("ns/web-1".to_string(), "3".to_string())])
        );
        fed.apply(watcher::Event::Delete(pod_at("web-1", "Running", "4")));
        assert!(fed.index.versions().is_empty());
    }

    /// Pods of one template hold one copy of their labels and spec, which
    /// leaves the cache with the last pod holding it.
    #[test]
    fn pods_with_the_same_labels_and_spec_share_them() {
        let mut fed = Fed::new();
        fed.apply(watcher::Event::Apply(pod_at("web-1", "Running", "1")));
        fed.apply(watcher::Event::Apply(pod_at("web-2", "Pending", "2")));
        fed.apply(watcher::Event::Apply(pod("ns", "db-1", &[("app", "db")])));
        let pods = fed
            .index
            .pods("ns", Some(&Selector::parse("app=web").unwrap()));
        assert!(Arc::ptr_eq(&pods[0].labels, &pods[1].labels));
        assert!(Arc::ptr_eq(&pods[0].spec, &pods[1].spec));
        assert_eq!(pods[1].phase, "Pending");
        let pools = |fed: &Fed| {
            let state = fed.index.state.read().unwrap();
            state
                .namespaces
                .live()
                .get("ns")
                .map(|ns| (ns.label_sets.len(), ns.specs.len()))
        };
        assert_eq!(pools(&fed), Some((2, 1)));
        drop(pods);
        fed.apply(watcher::Event::Delete(pod_at("web-1", "Running", "3")));
        assert_eq!(pools(&fed), Some((2, 1)));
        fed.apply(watcher::Event::Delete(pod_at("web-2", "Running", "4")));
        assert_eq!(pools(&fed), Some((1, 1)));
    }

    #[test]
    fn a_relabelled_pod_leaves_its_old_label_and_joins_the_new_one() {
        let mut fed = Fed::new();
        fed.apply(watcher::Event::Apply(pod("a", "p", &[("app", "web")])));
        fed.apply(watcher::Event::Apply(pod("a", "p", &[("app", "db")])));
        assert!(fed.select("a", Some("app=web")).is_empty());
        assert_eq!(fed.select("a", Some("app=db")), ["p"]);
    }

    /// Every kind of clause, with and without an equality clause to narrow
    /// the candidates, selects what matching every pod selects.
    #[test]
    fn the_label_index_selects_what_matching_every_pod_selects() {
        let mut fed = Fed::new();
        let pods = [
            ("p1", vec![("app", "web"), ("tier", "front"), ("v", "3")]),
            ("p2", vec![("app", "web"), ("tier", "back"), ("v", "7")]),
            ("p3", vec![("app", "db"), ("tier", "back")]),
            ("p4", vec![("app", "web"), ("canary", "yes")]),
            ("p5", vec![]),
        ];
        for (name, labels) in &pods {
            fed.apply(watcher::Event::Apply(pod("ns", name, labels)));
        }
        for selector in [
            "app=web",
            "app==web,tier=back",
            "app in (web,db)",
            "app in (web,db),tier notin (front)",
            "app=web,!canary",
            "tier",
            "!tier",
            "app!=web",
            "v>4",
            "app=web,v<4",
            "app=nope",
            "nope in (x)",
            "",
        ] {
            let parsed = Selector::parse(selector).unwrap();
            let expected: Vec<&str> = pods
                .iter()
                .filter(|(_, labels)| {
                    parsed.matches(
                        &labels
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect::<BTreeMap<_, _>>(),
                    )
                })
                .map(|(name, _)| *name)
                .collect();
            assert_eq!(fed.select("ns", Some(selector)), expected, "{selector}");
        }
        assert!(fed.select("other", Some("app=web")).is_empty());
    }

    /// Pods whose names interleave across the values of an `in` clause,
    /// some sharing a label set and some not: every selector returns the
    /// pods matching every pod would, in the same order (by name), whether
    /// one posting, several merged, or no clause narrows the candidates.
    #[test]
    fn selections_keep_the_order_of_matching_every_pod() {
        let mut fed = Fed::new();
        let mut pods: Vec<(String, Vec<(&str, &str)>)> = Vec::new();
        for i in 0..30 {
            let app = ["web", "db", "api"][i % 3];
            let mut labels = vec![("app", app)];
            if i % 4 == 0 {
                labels.push(("tier", "front"));
            }
            if i % 7 == 0 {
                labels.push(("canary", "yes"));
            }
            // Names out of insertion order, and not in numeric order.
            pods.push((format!("p-{}", (i * 11) % 30), labels));
        }
        for (name, labels) in &pods {
            fed.apply(watcher::Event::Apply(pod("ns", name, labels)));
        }
        // A relabel after the first inserts.
        fed.apply(watcher::Event::Apply(pod("ns", "p-3", &[("app", "api")])));
        pods.retain(|(name, _)| name != "p-3");
        pods.push(("p-3".to_string(), vec![("app", "api")]));
        for selector in [
            "app=web",
            "app in (web,db)",
            "app in (api,db,web)",
            "app in (db,nope,web),tier=front",
            "app in (web,api),!canary",
            "app in (web,db),tier notin (front)",
            "tier",
            "!canary",
            "app!=db",
            "",
        ] {
            let parsed = Selector::parse(selector).unwrap();
            let mut expected: Vec<&str> = pods
                .iter()
                .filter(|(_, labels)| {
                    parsed.matches(
                        &labels
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect::<BTreeMap<_, _>>(),
                    )
                })
                .map(|(name, _)| name.as_str())
                .collect();
            expected.sort_unstable();
            assert!(!expected.is_empty(), "{selector}");
            assert_eq!(fed.select("ns", Some(selector)), expected, "{selector}");
        }
    }

    /// A namespace-wide answer naming `names`, in that order.
    fn listed(names: &[&str]) -> ListedPods {
        let names: Vec<Arc<str>> = names.iter().map(|&name| Arc::from(name)).collect();
        ListedPods::new(&names)
    }

    fn pick(fed: &Fed, selector: &str, listed: &ListedPods) -> Option<Vec<usize>> {
        fed.index
            .pick("ns", &Selector::parse(selector).unwrap(), listed)
    }

    /// Three pods of two apps in `ns`, one of another namespace.
    fn two_apps() -> Fed {
        let mut fed = Fed::new();
        fed.apply(watcher::Event::Apply(pod("ns", "web-1", &[("app", "web")])));
        fed.apply(watcher::Event::Apply(pod("ns", "db-1", &[("app", "db")])));
        fed.apply(watcher::Event::Apply(pod("ns", "web-2", &[("app", "web")])));
        fed.apply(watcher::Event::Apply(pod("other", "x", &[("app", "web")])));
        fed
    }

    #[test]
    fn a_selector_picks_its_pods_entries_in_the_answers_order() {
        let fed = two_apps();
        // Answer order, not name order; a pod listed twice keeps both.
        let answer = listed(&["web-2", "db-1", "web-1", "web-2"]);
        assert_eq!(pick(&fed, "app=web", &answer), Some(vec![0, 2, 3]));
        assert_eq!(pick(&fed, "app=db", &answer), Some(vec![1]));
        assert_eq!(pick(&fed, "app!=db", &answer), Some(vec![0, 2, 3]));
    }

    #[test]
    fn a_pick_declines_when_the_answer_names_a_pod_the_cache_does_not_hold() {
        let mut fed = two_apps();
        // "new-1" may carry app=web on the server: only its request can tell.
        let answer = listed(&["web-1", "web-2", "db-1", "new-1"]);
        assert_eq!(pick(&fed, "app=web", &answer), None);
        assert_eq!(pick(&fed, "app=db", &answer), None);
        // Once the cache holds it, its labels decide.
        fed.apply(watcher::Event::Apply(pod("ns", "new-1", &[("app", "db")])));
        assert_eq!(pick(&fed, "app=web", &answer), Some(vec![0, 1]));
        assert_eq!(pick(&fed, "app=db", &answer), Some(vec![2, 3]));
    }

    #[test]
    fn a_sorted_answer_is_checked_against_the_cache_in_one_walk() {
        let fed = two_apps();
        let state = fed.index.state.read().unwrap();
        let pods = &state.namespaces.live()["ns"];
        for (names, all) in [
            (vec!["db-1", "web-1", "web-2"], true),
            (vec!["db-1", "web-2"], true),
            (vec!["web-1", "web-1", "web-2"], true),
            (vec!["a-0", "db-1"], false),
            (vec!["db-1", "db-2", "web-1"], false),
            (vec!["db-1", "web-2", "zz"], false),
        ] {
            let answer = listed(&names);
            assert!(answer.sorted.is_some(), "{names:?}");
            assert_eq!(answer.all_cached(pods), all, "{names:?}");
            // A lookup per name agrees.
            let looked_up = answer
                .positions
                .keys()
                .all(|name| pods.pods.contains_key(&**name));
            assert_eq!(looked_up, all, "{names:?}");
        }
        assert!(listed(&["web-1", "db-1"]).sorted.is_none());
    }

    #[test]
    fn a_pick_declines_when_a_selected_pod_has_no_entry() {
        let fed = two_apps();
        // web-2 is selected but absent: the answer may be partial.
        let answer = listed(&["web-1", "db-1"]);
        assert_eq!(pick(&fed, "app=web", &answer), None);
        assert_eq!(pick(&fed, "app=db", &answer), Some(vec![1]));
        // Nothing selected: the HPA's own request gives the server's answer.
        assert_eq!(pick(&fed, "app=none", &answer), None);
        assert_eq!(
            fed.index
                .pick("empty", &Selector::parse("app=web").unwrap(), &answer),
            None
        );
    }

    #[test]
    fn a_pick_checks_the_listed_pods_again_after_the_cache_changed() {
        let mut fed = two_apps();
        let answer = listed(&["web-1", "db-1", "web-2"]);
        assert_eq!(pick(&fed, "app=db", &answer), Some(vec![1]));
        // web-1 leaves the cache: the answer now names a pod it does not hold.
        fed.apply(watcher::Event::Delete(pod(
            "ns",
            "web-1",
            &[("app", "web")],
        )));
        assert_eq!(pick(&fed, "app=db", &answer), None);
        // A relabel moves a pod from one selector's share to another's.
        fed.apply(watcher::Event::Apply(pod("ns", "web-1", &[("app", "db")])));
        assert_eq!(pick(&fed, "app=db", &answer), Some(vec![0, 1]));
        assert_eq!(pick(&fed, "app=web", &answer), Some(vec![2]));
    }

    #[test]
    fn an_update_that_keeps_the_labels_is_no_change() {
        let mut fed = two_apps();
        let before = fed.index.state.read().unwrap().namespaces.live()["ns"].changed_at;
        fed.apply(watcher::Event::Apply(pod("ns", "web-1", &[("app", "web")])));
        assert_eq!(
            fed.index.state.read().unwrap().namespaces.live()["ns"].changed_at,
            before
        );
        fed.apply(watcher::Event::Apply(pod("ns", "web-1", &[("app", "x")])));
        assert!(fed.index.state.read().unwrap().namespaces.live()["ns"].changed_at > before);
    }
}
