//! The pod watch cache indexed by namespace and by label, kept by the pod
//! watch beside the reflector's store (same events).
//!
//! A reconcile wants its target's pods: the pods of one namespace that one
//! selector selects. Scanning the namespace and matching every pod was a
//! large share of the controller's CPU at 10,000 HPAs (100 HPAs and 1,000
//! pods per namespace), so the index also keeps, per label `key=value`, the
//! pods that carry it: a selector with an equality or `in` clause then looks
//! at the pods that clause admits and matches only those.
//!
//! The index holds names and labels, not pods: the pods are read from the
//! store, so they are not held twice (at 100,000 pods a second copy costs
//! more memory than the rest of the controller).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use hpa_core::Selector;
use hpa_core::selector::Operator;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

use super::slim_pod::SlimPod;

/// See the module documentation. Cloning shares the index.
#[derive(Debug, Clone, Default)]
pub struct PodIndex {
    state: Arc<RwLock<IndexState>>,
}

type Labels = BTreeMap<String, String>;

#[derive(Debug, Default)]
struct IndexState {
    live: HashMap<String, NamespacePods>,
    /// A relist in progress: replaces `live` when it is done.
    relisting: Option<HashMap<String, NamespacePods>>,
}

/// One namespace's pods: their labels by name, and their names by label.
#[derive(Debug, Default)]
struct NamespacePods {
    labels: BTreeMap<Arc<str>, Labels>,
    /// label key → label value → names of the pods carrying it.
    postings: HashMap<String, HashMap<String, BTreeSet<Arc<str>>>>,
}

impl NamespacePods {
    fn insert(&mut self, name: &str, labels: Labels) {
        self.remove(name);
        let name: Arc<str> = Arc::from(name);
        for (key, value) in &labels {
            self.postings
                .entry(key.clone())
                .or_default()
                .entry(value.clone())
                .or_default()
                .insert(Arc::clone(&name));
        }
        self.labels.insert(name, labels);
    }

    fn remove(&mut self, name: &str) {
        let Some(labels) = self.labels.remove(name) else {
            return;
        };
        for (key, value) in &labels {
            let Some(values) = self.postings.get_mut(key) else {
                continue;
            };
            if let Some(names) = values.get_mut(value) {
                names.remove(name);
                if names.is_empty() {
                    values.remove(value);
                }
            }
            if values.is_empty() {
                self.postings.remove(key);
            }
        }
    }

    /// The pods a clause `key in values` admits, or `None` when the clause
    /// is not of that kind.
    fn admitted_by(&self, key: &str, operator: Operator, values: &[String]) -> Option<usize> {
        matches!(
            operator,
            Operator::Equals | Operator::DoubleEquals | Operator::In
        )
        .then(|| {
            let by_value = self.postings.get(key);
            values
                .iter()
                .filter_map(|v| by_value.and_then(|m| m.get(v)))
                .map(BTreeSet::len)
                .sum()
        })
    }

    /// The names of the pods `selector` selects (all when `None`), by name.
    fn select(&self, selector: Option<&Selector>) -> Vec<Arc<str>> {
        let Some(selector) = selector else {
            return self.labels.keys().cloned().collect();
        };
        if selector.is_nothing() {
            return Vec::new();
        }
        // The narrowest equality clause gives the candidates; the whole
        // selector is then matched against those only.
        let narrowest = selector
            .requirements()
            .iter()
            .filter_map(|r| {
                self.admitted_by(&r.key, r.operator, &r.values)
                    .map(|n| (n, r))
            })
            .min_by_key(|(n, _)| *n);
        let matches = |name: &Arc<str>| {
            self.labels
                .get(name)
                .is_some_and(|labels| selector.matches(labels))
        };
        match narrowest {
            None => self
                .labels
                .iter()
                .filter(|(_, labels)| selector.matches(labels))
                .map(|(name, _)| Arc::clone(name))
                .collect(),
            Some((_, clause)) => {
                let Some(by_value) = self.postings.get(&clause.key) else {
                    return Vec::new();
                };
                let candidates: BTreeSet<&Arc<str>> = clause
                    .values
                    .iter()
                    .filter_map(|v| by_value.get(v))
                    .flatten()
                    .collect();
                candidates
                    .into_iter()
                    .filter(|name| matches(name))
                    .cloned()
                    .collect()
            }
        }
    }
}

fn insert(map: &mut HashMap<String, NamespacePods>, pod: &SlimPod) {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    map.entry(namespace)
        .or_default()
        .insert(name, pod.metadata.labels.clone().unwrap_or_default());
}

impl PodIndex {
    /// Applies one watch event, as the reflector's store does.
    pub fn apply(&self, event: &watcher::Event<SlimPod>) {
        let mut state = self
            .state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match event {
            watcher::Event::Apply(pod) => insert(&mut state.live, pod),
            watcher::Event::Delete(pod) => {
                let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
                let name = pod.metadata.name.as_deref().unwrap_or_default();
                if let Some(pods) = state.live.get_mut(namespace) {
                    pods.remove(name);
                    if pods.labels.is_empty() {
                        state.live.remove(namespace);
                    }
                }
            }
            watcher::Event::Init => state.relisting = Some(HashMap::new()),
            watcher::Event::InitApply(pod) => match state.relisting.as_mut() {
                Some(relisting) => insert(relisting, pod),
                None => insert(&mut state.live, pod),
            },
            watcher::Event::InitDone => {
                if let Some(relisted) = state.relisting.take() {
                    state.live = relisted;
                }
            }
        }
    }

    /// The pods of `namespace` that `selector` selects (all when `None`),
    /// by name, read from `store`; a pod the store no longer holds is
    /// skipped.
    pub fn pods(
        &self,
        store: &Store<SlimPod>,
        namespace: &str,
        selector: Option<&Selector>,
    ) -> Vec<Pod> {
        let names = {
            let state = self
                .state
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state
                .live
                .get(namespace)
                .map(|pods| pods.select(selector))
                .unwrap_or_default()
        };
        names
            .into_iter()
            .filter_map(|name| store.get(&ObjectRef::new(&name).within(namespace)))
            .map(|p| p.to_pod())
            .collect()
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

    fn names(pods: Vec<Pod>) -> Vec<String> {
        pods.into_iter()
            .map(|p| p.metadata.name.unwrap_or_default())
            .collect()
    }

    /// A store and an index fed the same events, as the pod watch feeds them.
    struct Fed {
        index: PodIndex,
        store: Store<SlimPod>,
        writer: kube::runtime::reflector::store::Writer<SlimPod>,
    }

    impl Fed {
        fn new() -> Self {
            let (store, writer) = kube::runtime::reflector::store::<SlimPod>();
            Self {
                index: PodIndex::default(),
                store,
                writer,
            }
        }

        fn apply(&mut self, event: watcher::Event<SlimPod>) {
            self.writer.apply_watcher_event(&event);
            self.index.apply(&event);
        }

        fn select(&self, namespace: &str, selector: Option<&str>) -> Vec<String> {
            let selector = selector.map(|s| Selector::parse(s).unwrap());
            names(self.index.pods(&self.store, namespace, selector.as_ref()))
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
                            .collect(),
                    )
                })
                .map(|(name, _)| *name)
                .collect();
            assert_eq!(fed.select("ns", Some(selector)), expected, "{selector}");
        }
        assert!(fed.select("other", Some("app=web")).is_empty());
    }
}
