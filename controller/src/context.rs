//! Everything a reconcile needs, in one value shared by the workers.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hpa_core::Selector;
use hpa_core::clock::Clock;
use hpa_core::decide::OtherHpa;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::{ObjectRef, Store};

use super::config::ControllerConfig;
use super::decisions::DecisionLog;
use super::events::EventRecorder;
use super::history::HistoryStore;
use super::metrics::ControllerMetrics;
use super::metrics_client::MetricsClient;
use super::scale::ScaleResolver;
use super::slim_pod::SlimPod;

/// The pod selectors of the HPAs' targets, as last seen by their
/// reconciles: upstream's `hpaSelectors`, for the ambiguous-selector check.
/// Kept by namespace, because a reconcile asks for its own namespace's only
/// (scanning every HPA's key for a namespace prefix was a third of the
/// controller's CPU at 10,000 HPAs); selectors are shared, not copied.
#[derive(Debug, Clone, Default)]
pub struct SelectorStore {
    by_namespace: Arc<Mutex<SelectorsByNamespace>>,
}

/// namespace → `namespace/name` → selector.
type SelectorsByNamespace = HashMap<String, BTreeMap<String, Arc<Selector>>>;

impl SelectorStore {
    fn lock(&self) -> MutexGuard<'_, SelectorsByNamespace> {
        self.by_namespace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Remembers the selector of `key` (`namespace/name`).
    pub fn set(&self, key: &str, selector: Selector) {
        let namespace = split_key(key).map_or("", |(namespace, _)| namespace);
        let mut entries = self.lock();
        let selectors = entries.entry(namespace.to_string()).or_default();
        match selectors.get_mut(key) {
            Some(known) if **known == selector => {}
            Some(known) => *known = Arc::new(selector),
            None => {
                selectors.insert(key.to_string(), Arc::new(selector));
            }
        }
    }

    /// Forgets `key`.
    pub fn remove(&self, key: &str) {
        let namespace = split_key(key).map_or("", |(namespace, _)| namespace);
        let mut entries = self.lock();
        if let Some(selectors) = entries.get_mut(namespace) {
            selectors.remove(key);
            if selectors.is_empty() {
                entries.remove(namespace);
            }
        }
    }

    /// The selectors of the other HPAs in `namespace`, by key.
    pub fn others(&self, namespace: &str, key: &str) -> Vec<OtherHpa> {
        self.lock()
            .get(namespace)
            .map(|selectors| {
                selectors
                    .iter()
                    .filter(|(k, _)| k.as_str() != key)
                    .map(|(k, s)| OtherHpa {
                        key: k.clone(),
                        selector: Arc::clone(s),
                    })
                    .collect()
            })
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
    pub hpas: Store<HorizontalPodAutoscaler>,
    /// The pod watch cache, in the slim form (see [`super::slim_pod`]).
    pub pods: Store<SlimPod>,
    /// Opt-in: sees every reconcile's core inputs and decision (load runs).
    pub observer: Option<Arc<dyn super::observe::ReconcileObserver>>,
    /// Opt-in: Deployments from a watch cache, read instead of GET `/scale`.
    pub deployments: Option<Store<k8s_openapi::api::apps::v1::Deployment>>,
    /// The pod cache by namespace and label, fed by the pod watch beside
    /// `pods`, as upstream's informer indexes pods: a reconcile reads its
    /// target's pods, not the cluster's.
    pub pod_index: super::pod_index::PodIndex,
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
        hpas: Store<HorizontalPodAutoscaler>,
        pods: Store<SlimPod>,
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
            pods,
            config,
            observer: None,
            deployments: None,
            pod_index: super::pod_index::PodIndex::default(),
        }
    }

    /// A context on `client` and `clock` with the default configuration and
    /// empty caches (nothing watches them): for tests of single reconciles.
    pub fn for_tests(client: kube::Client, clock: Arc<dyn Clock>) -> Self {
        let (hpas, _) = kube::runtime::reflector::store();
        let (pods, _) = kube::runtime::reflector::store();
        Self::new(
            client,
            ControllerConfig::default(),
            clock,
            "test",
            hpas,
            pods,
            ControllerMetrics::new(),
        )
    }

    /// The decision core's configuration, from the flags.
    pub fn core_config(&self) -> hpa_core::ControllerConfig {
        let c = &self.config;
        let signed =
            |d: Duration| jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX);
        hpa_core::ControllerConfig {
            tolerance: c.tolerance,
            downscale_stabilization: signed(c.downscale_stabilization),
            cpu_initialization_period: signed(c.cpu_initialization_period),
            initial_readiness_delay: signed(c.initial_readiness_delay),
            feature_gates: c.feature_gates,
            ..hpa_core::ControllerConfig::default()
        }
    }

    /// The HPA `namespace/name` from the cache.
    pub fn cached_hpa(&self, key: &str) -> Option<Arc<HorizontalPodAutoscaler>> {
        let (namespace, name) = split_key(key)?;
        self.hpas.get(&ObjectRef::new(name).within(namespace))
    }

    /// The cached pods of `namespace` that `selector` selects (all of the
    /// namespace's when it is `None`, e.g. unparsable: the core reports that).
    pub fn cached_pods(&self, namespace: &str, selector: Option<&Selector>) -> Vec<Pod> {
        self.pod_index.pods(&self.pods, namespace, selector)
    }

    /// Drops every in-memory trace of a deleted HPA.
    pub fn forget(&self, key: &str) {
        self.history.remove(key);
        self.decisions.remove(key);
        self.selectors.remove(key);
        if let Some((namespace, name)) = split_key(key) {
            self.metrics
                .desired_replicas
                .remove(&super::metrics::HpaLabels {
                    namespace: namespace.to_string(),
                    hpa_name: name.to_string(),
                });
        }
    }
}

/// `namespace/name` → (namespace, name).
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once('/')
}

/// The key of an object.
pub fn key_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}
