//! Everything a reconcile needs, in one value shared by the workers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use foldhash::HashMap as FastMap;
use hpa_core::clock::Clock;
use hpa_core::decide::OtherHpa;
use hpa_core::pod::Labels;
use hpa_core::selector::{Operator, Requirement};
use hpa_core::{CorePod, Selector};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;

use super::config::ControllerConfig;
use super::decisions::DecisionLog;
use super::events::EventRecorder;
use super::history::HistoryStore;
use super::hpa_cache::HpaCache;
use super::keys::split_key;
use super::label_index::Sorted;
use super::memory::{Footprint, Meter, table_bytes};
use super::metrics::ControllerMetrics;
use super::metrics_client::MetricsClient;
use super::scale::ScaleResolver;

/// The pod selectors of the HPAs' targets, as last seen by their
/// reconciles: upstream's `hpaSelectors`, for the ambiguous-selector check.
/// Kept by namespace, because a reconcile asks for its own namespace's only
/// (scanning every HPA's key for a namespace prefix was a third of the
/// controller's CPU at 10,000 HPAs); selectors are shared, not copied.
/// Within a namespace they are indexed by the label `key=value` their first
/// equality (or `in`) clause needs, so a reconcile hands the core only the
/// selectors that may select one of its pods (matching its 10 pods against
/// the namespace's 100 selectors was the largest part of a sync's CPU).
#[derive(Debug, Clone, Default)]
pub struct SelectorStore {
    by_namespace: Arc<Mutex<SelectorsByNamespace>>,
}

/// namespace → its selectors. Maps read every sync use a fast hasher.
type SelectorsByNamespace = FastMap<String, NamespaceSelectors>;

/// HPAs' selectors by HPA key: the keys sort as the core's `other_hpas`
/// are ordered, and each entry is what the core is handed, so a candidate
/// needs no second lookup by key.
type SelectorsByKey = BTreeMap<Arc<str>, Arc<Selector>>;

/// label key → label value → the HPAs whose anchor clause admits it.
type AnchorIndex = FastMap<String, FastMap<String, Sorted<Arc<str>, Arc<Selector>>>>;

/// One namespace's selectors by HPA key, and the index of their anchors.
#[derive(Debug, Default)]
struct NamespaceSelectors {
    by_key: SelectorsByKey,
    /// The HPAs whose anchor clause admits each label value. (Most values
    /// admit one HPA: held without a map.)
    anchored: AnchorIndex,
    /// HPAs whose selector has no equality or `in` clause: any pod may match.
    unanchored: SelectorsByKey,
    /// The text each selector was parsed from, with that selector, when
    /// registered from its text ([`SelectorStore::register`]): an unchanged
    /// one is not parsed again, and is found with one hash lookup.
    texts: FastMap<Arc<str>, (Box<str>, Arc<Selector>)>,
}

/// The clause a pod must satisfy with one of its `key=value` labels for
/// `selector` to select it: the first equality or `in` clause.
fn anchor(selector: &Selector) -> Option<&Requirement> {
    selector.requirements().iter().find(|r| {
        matches!(
            r.operator,
            Operator::Equals | Operator::DoubleEquals | Operator::In
        )
    })
}

impl NamespaceSelectors {
    fn insert(&mut self, key: &str, selector: Arc<Selector>) {
        self.remove(key);
        let key: Arc<str> = Arc::from(key);
        // A match-nothing selector selects no pod: never a candidate.
        if !selector.is_nothing() {
            match anchor(&selector) {
                Some(clause) => {
                    for value in &clause.values {
                        self.anchored
                            .entry(clause.key.clone())
                            .or_default()
                            .entry(value.clone())
                            .or_default()
                            .insert(Arc::clone(&key), Arc::clone(&selector));
                    }
                }
                None => {
                    self.unanchored
                        .insert(Arc::clone(&key), Arc::clone(&selector));
                }
            }
        }
        self.by_key.insert(key, selector);
    }

    /// The selector of `key` if [`SelectorStore::register`] parsed it from
    /// `text`.
    fn parsed_from(&self, key: &str, text: &str) -> Option<Arc<Selector>> {
        self.texts
            .get(key)
            .filter(|(known, _)| **known == *text)
            .map(|(_, selector)| Arc::clone(selector))
    }

    fn remove(&mut self, key: &str) {
        self.texts.remove(key);
        let Some(old) = self.by_key.remove(key) else {
            return;
        };
        self.unanchored.remove(key);
        let Some(clause) = anchor(&old) else {
            return;
        };
        let Some(values) = self.anchored.get_mut(&clause.key) else {
            return;
        };
        for value in &clause.values {
            if let Some(keys) = values.get_mut(value) {
                keys.remove(key);
                if keys.is_empty() {
                    values.remove(value);
                }
            }
        }
        if values.is_empty() {
            self.anchored.remove(&clause.key);
        }
    }

    /// Every selector but `key`'s that may select one of `pods`: a superset
    /// of those that do (a selector selects a pod only if the pod has a
    /// label its anchor admits), so the core's check decides the same.
    fn candidates(&self, key: &str, pods: &[Arc<CorePod>]) -> Vec<OtherHpa> {
        let mut found: Vec<(&Arc<str>, &Arc<Selector>)> = self.unanchored.iter().collect();
        // The pods of one workload share one label set (the pod index pools
        // them): its labels are looked up once, not once per pod.
        let mut seen: Vec<*const Labels> = Vec::new();
        for labels in pods.iter().map(|p| &p.labels) {
            let at = Arc::as_ptr(labels);
            if seen.contains(&at) {
                continue;
            }
            seen.push(at);
            for (label, value) in labels.iter() {
                if let Some(admitted) = self.anchored.get(label).and_then(|v| v.get(value)) {
                    found.extend(admitted);
                }
            }
        }
        // By key, each once (an `in` anchor is found under several values).
        found.sort_unstable_by(|a, b| a.0.cmp(b.0));
        found.dedup_by(|a, b| a.0 == b.0);
        found
            .into_iter()
            .filter(|(k, _)| &***k != key)
            .map(|(k, selector)| OtherHpa {
                key: k.to_string(),
                selector: Arc::clone(selector),
            })
            .collect()
    }
}

impl SelectorStore {
    fn lock(&self) -> MutexGuard<'_, SelectorsByNamespace> {
        self.by_namespace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Remembers the selector of `key` (`namespace/name`); copied only when
    /// it changed (a reconcile sets the same one each sync).
    pub fn set(&self, key: &str, selector: &Selector) {
        let namespace = split_key(key).map_or("", |(namespace, _)| namespace);
        let mut entries = self.lock();
        let selectors = match entries.get_mut(namespace) {
            Some(selectors) => selectors,
            None => entries.entry(namespace.to_string()).or_default(),
        };
        if selectors
            .by_key
            .get(key)
            .is_some_and(|known| **known == *selector)
        {
            return;
        }
        selectors.insert(key, Arc::new(selector.clone()));
    }

    /// The selector of `key` (`namespace/name`) parsed from `text`, the
    /// scale's selector, and remembered as [`SelectorStore::set`] does:
    /// `None` when the text is empty or does not parse (what was remembered
    /// stays, as when `set` is not called). A reconcile registers the same
    /// text each sync: it is then handed the selector parsed before, not
    /// parsed again.
    pub fn register(&self, key: &str, text: &str) -> Option<Arc<Selector>> {
        let namespace = split_key(key).map_or("", |(namespace, _)| namespace);
        let mut entries = self.lock();
        if let Some(known) = entries
            .get(namespace)
            .and_then(|s| s.parsed_from(key, text))
        {
            return Some(known);
        }
        let parsed = Selector::parse(text).ok().filter(|_| !text.is_empty())?;
        let selectors = entries.entry(namespace.to_string()).or_default();
        let selector = match selectors.by_key.get(key) {
            Some(known) if **known == parsed => Arc::clone(known),
            _ => {
                let selector = Arc::new(parsed);
                selectors.insert(key, Arc::clone(&selector));
                selector
            }
        };
        // The key as the selectors hold it, shared.
        let shared = match selectors.by_key.get_key_value(key) {
            Some((held, _)) => Arc::clone(held),
            None => Arc::from(key),
        };
        selectors
            .texts
            .insert(shared, (text.into(), Arc::clone(&selector)));
        Some(selector)
    }

    /// The selector [`Self::register`] last parsed for `key`, if it was
    /// parsed from `text`; registers nothing.
    pub fn known(&self, key: &str, text: &str) -> Option<Arc<Selector>> {
        let namespace = split_key(key).map_or("", |(namespace, _)| namespace);
        self.lock().get(namespace)?.parsed_from(key, text)
    }

    /// Forgets `key`.
    pub fn remove(&self, key: &str) {
        let namespace = split_key(key).map_or("", |(namespace, _)| namespace);
        let mut entries = self.lock();
        if let Some(selectors) = entries.get_mut(namespace) {
            selectors.remove(key);
            if selectors.by_key.is_empty() {
                entries.remove(namespace);
            }
        }
    }

    /// What the selector store holds ([`crate::memory`]): each selector
    /// and key once, the anchor index, the texts, the tables.
    pub fn footprint(&self, meter: &Meter) -> Footprint {
        let entries = self.lock();
        let mut footprint = Footprint::new("selectors (ambiguity check)");
        footprint.bytes = table_bytes(
            entries.capacity(),
            std::mem::size_of::<(String, NamespaceSelectors)>(),
        );
        for (namespace, selectors) in entries.iter() {
            footprint.entries += selectors.by_key.len();
            footprint.bytes += meter.block(namespace.capacity())
                + meter.heap(&selectors.by_key)
                + meter.heap(&selectors.unanchored)
                + meter.heap(&selectors.anchored)
                + meter.heap(&selectors.texts)
                + selectors
                    .by_key
                    .iter()
                    .map(|(key, selector)| meter.arc_str(key) + meter.arc(&**selector))
                    .sum::<u64>()
                + selectors
                    .texts
                    .keys()
                    .filter(|key| {
                        !selectors
                            .by_key
                            .get_key_value(&***key)
                            .is_some_and(|(held, _)| Arc::ptr_eq(held, key))
                    })
                    .map(|key| meter.arc_str(key))
                    .sum::<u64>();
        }
        footprint
    }

    /// The selectors of the other HPAs in `namespace` that may select one
    /// of `pods` (every one that does), by key.
    pub fn others(&self, namespace: &str, key: &str, pods: &[Arc<CorePod>]) -> Vec<OtherHpa> {
        self.lock()
            .get(namespace)
            .map(|selectors| selectors.candidates(key, pods))
            .unwrap_or_default()
    }
}

/// The shared state of the controller.
#[derive(Clone)]
pub struct Context {
    pub client: kube::Client,
    pub config: ControllerConfig,
    pub clock: Arc<dyn Clock>,
    pub metrics: ControllerMetrics,
    pub recorder: EventRecorder,
    pub scales: ScaleResolver,
    pub metrics_client: MetricsClient,
    pub history: HistoryStore,
    pub decisions: DecisionLog,
    pub selectors: SelectorStore,
    /// The HPA watch cache.
    pub hpas: HpaCache,
    /// Opt-in: sees every reconcile's core inputs and decision (load runs).
    pub observer: Option<Arc<dyn super::observe::ReconcileObserver>>,
    /// Opt-in: Deployments' scales from a watch cache, read instead of GET
    /// `/scale`.
    pub deployments: Option<super::deployment_scales::DeploymentScales>,
    /// The pod watch cache, by namespace and label, as upstream's informer
    /// indexes pods: a reconcile reads its target's pods, not the cluster's.
    pub pod_index: super::pod_index::PodIndex,
    /// Status writes the HPA watch has not confirmed yet
    /// (`StaleControllerConsistencyHPA`).
    pub consistency: Arc<super::consistency::ConsistencyStore>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// A context around `client`, reading objects from the given stores.
    pub fn new(
        client: kube::Client,
        config: ControllerConfig,
        clock: Arc<dyn Clock>,
        identity: &str,
        hpas: HpaCache,
        metrics: ControllerMetrics,
    ) -> Self {
        let decisions = DecisionLog::new(config.decisions_kept);
        Self {
            recorder: EventRecorder::new(client.clone(), Arc::clone(&clock), identity),
            metrics_client: MetricsClient::new(client.clone(), config.sync_period),
            client,
            clock,
            metrics,
            scales: ScaleResolver::default(),
            history: HistoryStore::default(),
            decisions,
            selectors: SelectorStore::default(),
            hpas,
            config,
            observer: None,
            deployments: None,
            pod_index: super::pod_index::PodIndex::default(),
            consistency: Arc::default(),
        }
    }

    /// A context on `client` and `clock` with the default configuration and
    /// empty caches (nothing watches them): for tests of single reconciles.
    pub fn for_tests(client: kube::Client, clock: Arc<dyn Clock>) -> Self {
        Self::new(
            client,
            ControllerConfig::default(),
            clock,
            "test",
            HpaCache::default(),
            ControllerMetrics::new(),
        )
    }

    /// The HPA `namespace/name` from the cache, decoded (`None` when it is
    /// not cached).
    pub fn cached_hpa(&self, key: &str) -> Option<Arc<HorizontalPodAutoscaler>> {
        self.hpas.get(key)?.hpa().ok().map(Arc::new)
    }

    /// The cached pods of `namespace` that `selector` selects (all of the
    /// namespace's when it is `None`, e.g. unparsable: the core reports that).
    pub fn cached_pods(&self, namespace: &str, selector: Option<&Selector>) -> Vec<Arc<CorePod>> {
        self.pod_index.pods(namespace, selector)
    }

    /// Drops every in-memory trace of a deleted HPA.
    pub fn forget(&self, key: &str) {
        self.consistency.clear(key);
        self.history.remove(key);
        self.decisions.remove(key);
        self.selectors.remove(key);
        if let Some((namespace, name)) = split_key(key) {
            self.recorder.forget(namespace, name);
            self.metrics
                .desired_replicas
                .remove(&super::metrics::HpaLabels {
                    namespace: namespace.to_string(),
                    hpa_name: name.to_string(),
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(labels: &[(&str, &str)]) -> Arc<CorePod> {
        Arc::new(CorePod {
            labels: Arc::new(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                    .collect(),
            ),
            ..CorePod::default()
        })
    }

    fn keys(others: &[OtherHpa]) -> Vec<&str> {
        others.iter().map(|o| o.key.as_str()).collect()
    }

    fn store(selectors: &[(&str, &str)]) -> SelectorStore {
        let store = SelectorStore::default();
        for (key, selector) in selectors {
            store.set(key, &Selector::parse(selector).unwrap());
        }
        store
    }

    /// Every selector that selects one of the pods is handed to the core,
    /// whatever its clauses; those that cannot are left out.
    #[test]
    fn others_are_the_selectors_that_may_select_the_pods() {
        let store = store(&[
            ("ns/own", "app=web"),
            ("ns/same", "app=web,tier in (a,b)"),
            ("ns/other-app", "app=db"),
            ("ns/by-set", "tier in (b,c)"),
            ("ns/exists", "tier"),
            ("ns/not", "app!=db"),
            ("ns/everything", ""),
            ("other/web", "app=web"),
        ]);
        let pods = [pod(&[("app", "web"), ("tier", "b")])];
        let others = store.others("ns", "ns/own", &pods);
        assert_eq!(
            keys(&others),
            [
                "ns/by-set",
                "ns/everything",
                "ns/exists",
                "ns/not",
                "ns/same"
            ]
        );
        for other in &others {
            assert!(other.selector.matches(&pods[0].labels));
        }
        assert_eq!(
            keys(&store.others("ns", "ns/own", &[pod(&[("app", "api")])])),
            ["ns/everything", "ns/exists", "ns/not"]
        );
    }

    /// Pods with different label sets reaching one `in` selector through
    /// different values, and pods sharing one label set, hand the core each
    /// candidate once, by key, as one pod per label set does.
    #[test]
    fn each_candidate_is_handed_once_by_key() {
        let store = store(&[
            ("ns/own", "app=web"),
            ("ns/z-tiers", "tier in (a,b)"),
            ("ns/a-tier-b", "tier=b"),
            ("ns/m-exists", "tier"),
        ]);
        let a = pod(&[("app", "web"), ("tier", "a")]);
        let b = pod(&[("app", "web"), ("tier", "b")]);
        let pods = [
            Arc::clone(&a),
            Arc::clone(&b),
            Arc::clone(&a),
            Arc::clone(&b),
        ];
        let want = ["ns/a-tier-b", "ns/m-exists", "ns/z-tiers"];
        assert_eq!(keys(&store.others("ns", "ns/own", &pods)), want);
        // Distinct but equal label sets (not shared) decide the same.
        let unshared = [
            pod(&[("app", "web"), ("tier", "a")]),
            pod(&[("app", "web"), ("tier", "b")]),
            pod(&[("app", "web"), ("tier", "b")]),
        ];
        assert_eq!(keys(&store.others("ns", "ns/own", &unshared)), want);
        assert_eq!(
            keys(&store.others("ns", "ns/own", &[a])),
            ["ns/m-exists", "ns/z-tiers"]
        );
    }

    /// A registered text gives what parsing it gives; the same text again
    /// gives the selector parsed before; a changed one is parsed and
    /// re-indexed; an empty or unparsable one gives nothing and leaves what
    /// was registered, as `set` not being called does.
    #[test]
    fn a_registered_selector_is_parsed_once_per_text() {
        let store = SelectorStore::default();
        let web = [pod(&[("app", "web")])];
        let first = store.register("ns/a", "app=web").unwrap();
        assert_eq!(*first, Selector::parse("app=web").unwrap());
        assert!(Arc::ptr_eq(
            &first,
            &store.register("ns/a", "app=web").unwrap()
        ));
        assert_eq!(keys(&store.others("ns", "ns/b", &web)), ["ns/a"]);
        // Known for that text only, and registering nothing.
        assert!(Arc::ptr_eq(
            &first,
            &store.known("ns/a", "app=web").unwrap()
        ));
        assert!(store.known("ns/a", "app=db").is_none());
        assert!(store.known("ns/c", "app=web").is_none());
        assert_eq!(keys(&store.others("ns", "ns/b", &web)), ["ns/a"]);
        // Another text of the same selector keeps it.
        let spaced = store.register("ns/a", "app = web").unwrap();
        assert!(Arc::ptr_eq(&first, &spaced));
        let db = store.register("ns/a", "app in (db)").unwrap();
        assert_eq!(*db, Selector::parse("app in (db)").unwrap());
        assert!(store.others("ns", "ns/b", &web).is_empty());
        assert!(store.register("ns/a", "").is_none());
        assert!(store.register("ns/a", "app in (").is_none());
        assert_eq!(
            keys(&store.others("ns", "ns/b", &[pod(&[("app", "db")])])),
            ["ns/a"]
        );
        // A selector set from elsewhere is not mistaken for the text's.
        store.set("ns/a", &Selector::parse("app=web").unwrap());
        assert!(store.known("ns/a", "app in (db)").is_none());
        assert_eq!(*store.register("ns/a", "app in (db)").unwrap(), *db);
        store.remove("ns/a");
        assert!(store.others("ns", "ns/b", &web).is_empty());
        assert!(Arc::ptr_eq(
            &store.register("ns/a", "app in (db)").unwrap(),
            &store.register("ns/a", "app in (db)").unwrap()
        ));
    }

    #[test]
    fn a_changed_or_removed_selector_leaves_the_index() {
        let store = store(&[("ns/a", "app=web"), ("ns/b", "app=web")]);
        let web = [pod(&[("app", "web")])];
        assert_eq!(keys(&store.others("ns", "ns/a", &web)), ["ns/b"]);
        store.set("ns/b", &Selector::parse("app=db").unwrap());
        assert!(store.others("ns", "ns/a", &web).is_empty());
        assert_eq!(
            keys(&store.others("ns", "ns/a", &[pod(&[("app", "db")])])),
            ["ns/b"]
        );
        store.remove("ns/b");
        assert!(
            store
                .others("ns", "ns/a", &[pod(&[("app", "db")])])
                .is_empty()
        );
        store.set("ns/c", &Selector::nothing());
        assert!(store.others("ns", "ns/a", &web).is_empty());
    }
}
