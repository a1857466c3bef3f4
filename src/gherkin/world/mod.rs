//! The scenario world: what one scenario declared, and its rooms: the
//! testbed ([`ScenarioCluster`]), what the controller starts with
//! ([`ControllerSetup`]), pod names ([`PodNames`]), the metrics it set
//! ([`MetricsMirror`]), what it said of new pods ([`NewPods`]) and KEDA's
//! ScaledObjects ([`KedaScenario`]). Each room's file holds its behaviour;
//! the world's own files (`objects.rs`, `metrics_server.rs`, `rollouts.rs`,
//! `time.rs`) are what steps do across rooms.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use fake_metrics_server::script::Api as MetricsApi;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::Value;

use super::target::{self, ControllerKind, Target};
use crate::testbed::controller::Driver;
pub use crate::testbed::env::Env;

mod controller_setup;
mod keda;
mod key;
mod metrics_mirror;
mod metrics_server;
mod new_pods;
mod objects;
mod pod_names;
mod rollouts;
mod scenario_cluster;
mod time;

pub use controller_setup::ControllerSetup;
pub use keda::{KedaObject, KedaReach, KedaScenario};
pub use key::ObjKey;
pub use metrics_mirror::{MetricsMirror, SeriesKey};
pub(crate) use metrics_server::set_value;
pub use new_pods::NewPods;
pub use pod_names::{PodNames, pod_index};
pub use rollouts::VERSION_ANNOTATION;
pub use scenario_cluster::{Needs, ScenarioCluster};

pub use super::step_error::{StepError, StepResult, UNSUPPORTED_MARK};

/// A scale target the scenario declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    pub kind: super::params::WorkloadKind,
    /// `spec.replicas` when the scenario declared it ("not rescaled" compares
    /// with it).
    pub initial_replicas: i32,
    /// The label selector of its pods (`app=NAME` for workloads the steps
    /// make; a manifest's `spec.selector.matchLabels`).
    pub selector: String,
}

/// One scenario's state. A fresh one per scenario; nothing is shared.
///
/// It is made of rooms, each with one job: [`ScenarioCluster`] (the testbed
/// from the first step to the last), [`ControllerSetup`] (what the
/// controller starts with), [`PodNames`] (pod names as steps say them),
/// [`MetricsMirror`] (the metrics the scenario set), [`NewPods`] (what it
/// said of the pods workloads make from now on) and [`KedaScenario`]
/// (KEDA's ScaledObjects). The fields after them are what the scenario
/// declared.
#[derive(Debug, cucumber::World)]
#[world(init = Self::new)]
pub struct HpaWorld {
    /// The scenario's cluster, metrics server and controller.
    pub cluster: ScenarioCluster,
    /// What the controller starts with: its configuration, flags and seeds.
    pub setup: ControllerSetup,
    /// Pod names as steps say them, and as the cluster does.
    pub pod_names: PodNames,
    /// The metrics the scenario set, as the fake metrics server knows them.
    pub metrics: MetricsMirror,
    /// What the scenario said of the pods workloads make from now on.
    pub new_pods: NewPods,
    /// KEDA's ScaledObjects, run before every HPA sync.
    pub keda: KedaScenario,
    /// Namespace of unqualified names.
    pub namespace: String,
    /// The scenario named its namespace (`Given a namespace`).
    pub namespace_named: bool,
    /// Declared scale targets.
    pub workloads: HashMap<ObjKey, Workload>,
    /// Time passed since the last sync (syncs happen every sync period).
    pub(crate) since_sync: SignedDuration,
    /// The scenario is tagged `@real-node`: on a real cluster its pods run
    /// on a real node (a real kubelet, the pause image), not the fake one.
    pub real_node: bool,
    /// The folder of the feature file (manifest paths are relative to it).
    pub feature_dir: Option<std::path::PathBuf>,
}

pub use crate::testbed::controller::Seed;

impl HpaWorld {
    fn new() -> Self {
        Self {
            cluster: ScenarioCluster::new(target::current()),
            setup: ControllerSetup::default(),
            pod_names: PodNames::default(),
            metrics: MetricsMirror::default(),
            new_pods: NewPods::default(),
            keda: KedaScenario::default(),
            namespace: "default".to_owned(),
            namespace_named: false,
            workloads: HashMap::new(),
            since_sync: SignedDuration::ZERO,
            real_node: false,
            feature_dir: None,
        }
    }

    /// `Given a namespace`: on a real cluster, waits until no other scenario
    /// of the run uses it, then clears what an earlier scenario left there
    /// (objects and metrics); a namespace made here is the run's to delete.
    pub async fn name_namespace(&mut self, name: &str) -> StepResult {
        let client = self.env().await?.client.clone();
        let shared = self.cluster.shared();
        if shared.is_some() {
            if self.cluster.driver_if_started().is_some() {
                return Err(StepError::State(format!(
                    "namespace {name}: the HPA controller already watches namespace {}; name the namespace before the controller first syncs",
                    self.namespace
                )));
            }
            self.cluster.hold_namespace(name).await;
            let hpas = crate::testbed::cleanup::scenario_objects_in(&client, Some(name))
                .await
                .map_err(StepError::kube(format!(
                    "removing what earlier scenarios left in namespace {name}"
                )))?;
            if hpas > 0 && self.cluster.controller() == ControllerKind::Upstream {
                // kube-controller-manager keeps an HPA's recommendations and
                // scale events by namespace/name until a sync finds it gone;
                // an HPA of the same name made before then would inherit
                // them (an earlier scenario's 6 holding a scale-down). Its
                // next sync of the key comes within a sync period.
                tokio::time::sleep(self.sync_period() + std::time::Duration::from_secs(2)).await;
            }
            let metrics = self.env().await?.metrics.clone();
            metrics
                .reset_namespace(name)
                .await
                .map_err(StepError::metrics(format!(
                    "clearing the metrics of namespace {name}"
                )))?;
        }
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
        if api
            .get_opt(name)
            .await
            .map_err(StepError::kube(format!("reading namespace {name}")))?
            .is_none()
        {
            let mut meta = serde_json::json!({"name": name});
            if shared.is_some() {
                meta["labels"] =
                    serde_json::json!({crate::testbed::cleanup::SCENARIO_LABEL: "true"});
            }
            let ns = serde_json::from_value(serde_json::json!({ "metadata": meta }))
                .map_err(|e| StepError::Input(format!("namespace {name}: {e}")))?;
            api.create(&PostParams::default(), &ns)
                .await
                .map_err(StepError::kube(format!("creating namespace {name}")))?;
            if let Some(shared) = &shared {
                shared.track(name);
            }
        }
        self.namespace = name.to_owned();
        self.namespace_named = true;
        Ok(())
    }

    /// Before the first step: a remote cluster is reached now, so that on a
    /// real one the scenario's own namespace exists before any name is
    /// qualified. A failure here is reported by the first step that needs
    /// the cluster.
    pub async fn prepare(&mut self) {
        if matches!(self.cluster.target(), Target::Remote(_))
            && let Err(e) = self.env().await
        {
            tracing::debug!(error = %e, "reaching the scenario's cluster");
        }
    }

    /// After the last step: the scenario's own namespace goes, with
    /// everything in it.
    /// Its metrics and the metrics APIs it made fail go from the shared fake
    /// metrics server, and its turn passes to the next scenario.
    pub async fn finish(&mut self) {
        let failing = self.metrics.take_failing();
        self.cluster.clean_up(failing).await;
        self.forget_pod_delays();
        self.cluster.pass_turn();
    }

    /// The running cluster, started on first use (on a real cluster, in a
    /// namespace of the scenario's own unless it named one).
    pub async fn env(&mut self) -> Result<&Env, StepError> {
        let gates = &self.setup.config.decision.feature_gates;
        if let Some(own) = self.cluster.start(gates, self.namespace_named).await? {
            self.namespace = own;
        }
        self.cluster.env()
    }

    /// The controller, started on first use as [`ControllerSetup`] says so
    /// far; seeds given so far are handed over.
    pub async fn driver(&mut self) -> Result<&Driver, StepError> {
        self.env().await?;
        self.cluster.driver(&mut self.setup, &self.namespace).await
    }

    /// How long `Then` steps wait for what they expect: not at all on a
    /// virtual clock (the controller has acted when the step runs); two sync
    /// periods on the wall clock, where the controller acts on its own time
    /// and a real cluster's controllers lag.
    pub fn patience(&self) -> Option<std::time::Duration> {
        if self.cluster.is_virtual()? {
            return None;
        }
        Some(self.sync_period() * 2 + std::time::Duration::from_secs(2))
    }

    /// The sync period of the controller acting in the scenario.
    pub fn sync_period(&self) -> std::time::Duration {
        self.cluster.sync_period(&self.setup.config)
    }

    /// The sync period as the scenario clock counts; one it cannot count
    /// in is an error naming it.
    fn signed_sync_period(&self) -> Result<SignedDuration, StepError> {
        let period = self.sync_period();
        SignedDuration::try_from(period).map_err(|e| {
            StepError::Input(format!(
                "sync period {}: {e}",
                hpa_controller::config::format_go_duration(period)
            ))
        })
    }

    /// Runs `check` until it holds or [`Self::patience`] runs out; only
    /// unmet expectations are retried, other errors end the step at once.
    /// The wait is wall-clock time: the controller keeps syncing every
    /// sync period meanwhile (`waited`), as it does deployed.
    pub async fn eventually<F>(&mut self, mut check: F) -> StepResult
    where
        F: AsyncFnMut(&mut HpaWorld) -> StepResult,
    {
        let Some(patience) = self.patience() else {
            return check(self).await;
        };
        let deadline = tokio::time::Instant::now() + patience;
        let mut since = tokio::time::Instant::now();
        loop {
            match check(self).await {
                Err(StepError::Expectation(_)) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    self.waited(since.elapsed()).await?;
                    since = tokio::time::Instant::now();
                }
                other => return other,
            }
        }
    }

    /// Splits `ns/name` or qualifies `name` with the scenario namespace.
    pub fn qualify(&self, name: &str) -> (String, String) {
        match name.split_once('/') {
            Some((ns, n)) => (ns.to_owned(), n.to_owned()),
            None => (self.namespace.clone(), name.to_owned()),
        }
    }

    /// The controller's key of an HPA.
    pub fn hpa_key(&self, name: &str) -> String {
        let (ns, n) = self.qualify(name);
        format!("{ns}/{n}")
    }

    /// Now on the scenario clock (starting the cluster if needed).
    pub async fn now(&mut self) -> Result<Timestamp, StepError> {
        Ok(self.env().await?.now())
    }

    /// A typed API in a namespace.
    pub async fn api<K>(&mut self, ns: &str) -> Result<Api<K>, StepError>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Ok(Api::namespaced(self.env().await?.client.clone(), ns))
    }

    /// The pods of a workload in step-name order (the names its pod table
    /// gave, then `NAME-i`), including pods of every phase. Pods the cluster
    /// named as the steps do (the simulated cluster, statefulsets) keep their
    /// names; others (a real ReplicaSet's `NAME-7d4b9-xk2zq`) get the next
    /// step name in creation order the first time they are seen.
    pub async fn pods_of(&mut self, ns: &str, workload: &str) -> Result<Vec<Pod>, StepError> {
        self.env().await?;
        let key = ObjKey::new(ns, workload);
        let selector = pod_selector(&self.workloads, &key);
        let mut pods = self.cluster.pods(ns, workload, &selector).await?;
        self.pod_names.arrange(&key, &mut pods);
        Ok(pods)
    }

    /// The kind a step names (`deployment`, `Ingress`, `ingresses`,
    /// `ingress.networking.k8s.io`, a custom resource's kind).
    pub async fn resolve_kind(&mut self, word: &str) -> Result<super::kinds::KindRef, StepError> {
        self.env().await?;
        self.cluster.resolve_kind(word).await
    }

    /// The cluster's name of the pod a step calls `name` (`NAME-i`, a name
    /// of a pod table, or `ns/...`), with its namespace.
    pub async fn resolve_pod(&mut self, name: &str) -> Result<(String, String), StepError> {
        let (ns, pod) = self.qualify(name);
        let step = ObjKey::new(ns.clone(), pod.clone());
        if let Some(real) = self.pod_names.real_name(&step) {
            return Ok((ns, real.to_owned()));
        }
        let workload = self
            .pod_names
            .workload_of(&step, |w| self.workloads.contains_key(w));
        if let Some(workload) = workload {
            // A real cluster's controllers create a workload's pods (under
            // names of their own) a moment after it: wait for the pod the
            // step names, within the scenario's patience.
            let mut real = None;
            let mut seen = 0;
            let found = self
                .eventually(async |w: &mut HpaWorld| {
                    seen = w.pods_of(&ns, &workload).await?.len();
                    real = w.pod_names.real_name(&step).map(str::to_owned);
                    match real {
                        Some(_) => Ok(()),
                        None => Err(StepError::Expectation(format!(
                            "{ns}/{workload} has no pod {pod} yet"
                        ))),
                    }
                })
                .await;
            return match (found, real) {
                (_, Some(real)) => Ok((ns, real)),
                (Err(StepError::Expectation(_)) | Ok(()), None) => {
                    Err(self.pod_not_made(&ns, &workload, &pod, seen))
                }
                (Err(e), None) => Err(e),
            };
        }
        Ok((ns, pod))
    }

    /// Why a step's pod of a workload is not there after waiting: the
    /// workload, the pods it has and the pods the step's name needs.
    fn pod_not_made(&self, ns: &str, workload: &str, pod: &str, seen: usize) -> StepError {
        let kind = self
            .workloads
            .get(&ObjKey::new(ns, workload))
            .map_or("workload", |w| w.kind.word());
        let waited = self.patience().map_or_else(
            || "now".to_owned(),
            |p| format!("after waiting {}s", p.as_secs()),
        );
        let needed = match self.pod_names.step_index(&ObjKey::new(ns, workload), pod) {
            u64::MAX => "a pod of that name".to_owned(),
            0 => "1 pod".to_owned(),
            i => format!("{} pods", i.saturating_add(1)),
        };
        StepError::Expectation(format!(
            "{kind} {ns}/{workload} has {seen} pod{} {waited}; step pod {pod} needs {needed}",
            if seen == 1 { "" } else { "s" }
        ))
    }
}

/// The label selector of a workload's pods: the one it declared, else
/// `app=NAME` (what the steps' workloads carry).
pub(crate) fn pod_selector(workloads: &HashMap<ObjKey, Workload>, workload: &ObjKey) -> String {
    workloads
        .get(workload)
        .map_or_else(|| format!("app={}", workload.name), |w| w.selector.clone())
}

/// A check run after each sync while time passes.
pub trait AsyncCheck {
    /// Fails the step when the expectation no longer holds.
    fn check(&mut self, world: &mut HpaWorld) -> impl std::future::Future<Output = StepResult>;
}

/// No check.
pub struct NoCheck;

impl AsyncCheck for NoCheck {
    async fn check(&mut self, _world: &mut HpaWorld) -> StepResult {
        Ok(())
    }
}

/// The API resource of a workload kind.
pub fn workload_resource(kind: super::params::WorkloadKind) -> ApiResource {
    use super::params::WorkloadKind as K;
    let plural = match kind {
        K::Deployment => "deployments",
        K::StatefulSet => "statefulsets",
        K::ReplicaSet => "replicasets",
    };
    ApiResource {
        group: "apps".into(),
        version: "v1".into(),
        api_version: "apps/v1".into(),
        kind: kind.kind().into(),
        plural: plural.into(),
    }
}

/// A dynamic API for a workload kind in a namespace.
pub fn workload_api(
    client: &kube::Client,
    ns: &str,
    kind: super::params::WorkloadKind,
) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &workload_resource(kind))
}

/// The API resource of HPAs in `version` (`v1` or `v2`).
pub fn hpa_resource(version: &str) -> ApiResource {
    ApiResource {
        group: "autoscaling".into(),
        version: version.into(),
        api_version: format!("autoscaling/{version}"),
        kind: "HorizontalPodAutoscaler".into(),
        plural: "horizontalpodautoscalers".into(),
    }
}

/// Parses a YAML doc string into JSON.
pub fn yaml(text: &str, what: &str) -> Result<Value, StepError> {
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| StepError::Input(format!("{what}: the YAML does not parse: {e}")))
}

/// Whether syncs print the controller's decisions (`hpa-harness explain`).
static EXPLAIN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every sync print the controller's decisions as a table.
pub fn set_explain(on: bool) {
    EXPLAIN.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `explain` output is on.
pub fn explaining() -> bool {
    EXPLAIN.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_period_the_clock_cannot_count_is_an_error_naming_it() {
        let mut world = HpaWorld::new();
        world.setup.config.sync_period = std::time::Duration::MAX;
        let err = world.signed_sync_period().unwrap_err().to_string();
        let named = hpa_controller::config::format_go_duration(std::time::Duration::MAX);
        assert!(err.contains(&format!("sync period {named}")), "{err}");
    }
}
