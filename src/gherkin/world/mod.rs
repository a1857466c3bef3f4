//! The scenario world: what one scenario declared and the steps' view of
//! its cluster, metrics server and HPA controller (the running parts are the
//! testbed's [`Env`]).
//!
//! Everything starts lazily, at the first step that needs it, so that
//! "the HPA controller runs with:" may come after workloads are declared but
//! before the controller is first asked to act.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use fake_metrics_server::script::{
    Api as MetricsApi, Change, ContainerSpec, Duration as ScriptDuration, MetricSeries, MetricSpec,
    PodSpec, SampleTime, Value as ScriptValue,
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::Value;

use super::target::{self, ControllerKind, Target};
use crate::testbed::controller::{Driver, Requests};
pub use crate::testbed::env::Env;
use hpa_controller::config::ControllerConfig;

mod cluster;
mod keda;
mod metrics;
mod rollouts;
mod time;

pub(crate) use metrics::set_value;
pub use rollouts::VERSION_ANNOTATION;

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

/// What the fake metrics server is told about one pod: usage per container,
/// custom metrics, and sample time. Kept here so that every change sends the
/// whole pod and nothing is lost between steps.
#[derive(Debug, Clone, Default)]
pub(crate) struct PodMetrics {
    pub labels: BTreeMap<String, String>,
    /// container -> (cpu, memory)
    pub containers: BTreeMap<String, (Option<String>, Option<String>)>,
    pub custom: BTreeMap<String, String>,
    pub timestamp: Option<SignedDuration>,
    pub window: Option<SignedDuration>,
    /// The pod has no values, and rules pass it by (a pod that was there
    /// before "the new pods of ... report" and was given nothing).
    pub missing: bool,
}

/// One scenario's state. A fresh one per scenario; nothing is shared.
#[derive(Debug, cucumber::World)]
#[world(init = Self::new)]
pub struct HpaWorld {
    /// Namespace of unqualified names.
    pub namespace: String,
    /// The controller's flags (settable until it starts).
    pub config: ControllerConfig,
    env: Option<Env>,
    driver: Option<Driver>,
    /// Declared scale targets by (namespace, name).
    pub workloads: HashMap<(String, String), Workload>,
    /// Metrics added by steps, per HPA (namespace, name).
    pub hpa_metrics: HashMap<(String, String), Vec<Value>>,
    /// What the metrics server knows about each pod.
    pub(crate) pods: BTreeMap<(String, String), PodMetrics>,
    /// External series per (namespace, metric, selector): how many are set.
    pub(crate) external_series: HashMap<(String, String, String), usize>,
    /// Time passed since the last sync (syncs happen every sync period).
    pub(crate) since_sync: SignedDuration,
    /// Stabilization history and scale events to seed into the controller.
    pub seeds: Vec<Seed>,
    /// Where this scenario runs.
    target: Target,
    /// Step pod names (`NAME-i`) to the cluster's pod names, by namespace.
    aliases: BTreeMap<(String, String), String>,
    /// The cluster's pod names to step names.
    alias_of: BTreeMap<(String, String), String>,
    /// Next step index per workload (`NAME-i` counts in creation order).
    next_index: HashMap<(String, String), u64>,
    /// The pod names a workload's pod table gave, by (namespace, workload).
    pod_names: HashMap<(String, String), Vec<String>>,
    /// The workload of each pod-table name, by (namespace, pod).
    pod_owner: HashMap<(String, String), String>,
    /// What the cluster serves, for the kinds steps name (refreshed when a
    /// name is not found: a CRD may have come since).
    served_kinds: Option<Vec<super::kinds::Served>>,
    /// The scenario is tagged `@real-node`: on a real cluster its pods run
    /// on a real node (a real kubelet, the pause image), not the fake one.
    pub real_node: bool,
    /// The namespace made for this scenario on a real cluster (deleted when
    /// it ends), so that nothing of an earlier scenario is seen.
    own_namespace: Option<String>,
    /// The scenario named its namespace (`Given a namespace`).
    pub namespace_named: bool,
    /// The folder of the feature file (manifest paths are relative to it).
    pub feature_dir: Option<std::path::PathBuf>,
    /// KEDA's ScaledObjects, run before every HPA sync.
    pub(crate) keda: keda::KedaScenario,
    /// Versions of each workload (old revisions, new pods' values), by
    /// (namespace, workload).
    pub(crate) versions: HashMap<(String, String), rollouts::Versions>,
    /// The pod delays steps gave, by (namespace, workload).
    pub(crate) pod_delays: HashMap<(String, String), hpa_sim::PodDelays>,
    /// On a real cluster: the scenario's turn beside the run's others.
    turn: Option<crate::testbed::shared::Turn>,
    /// On a real cluster: the namespace the scenario named, held until it
    /// ends.
    named_turn: Option<crate::testbed::shared::NamespaceTurn>,
    /// Which configuration of `hpa-controller` ours runs with.
    pub requests: crate::testbed::controller::Requests,
    /// The controller flags steps gave (`kubernetes-version` included), in
    /// order: what a controller process is started with.
    flags: Vec<(String, String)>,
    /// The metrics APIs the scenario made fail: on a cluster the run's
    /// scenarios share, the fault is the shared fake metrics server's, and
    /// it goes when the scenario ends.
    failing_apis: Vec<MetricsApi>,
    /// A step bent what the target's `/scale` subresource answers: the
    /// controller reads scales through it, whatever `requests` says (see
    /// [`HpaWorld::bend_scale`]).
    scale_bent: bool,
}

pub use crate::testbed::controller::Seed;

impl HpaWorld {
    fn new() -> Self {
        Self {
            namespace: "default".to_owned(),
            config: ControllerConfig::default(),
            env: None,
            driver: None,
            workloads: HashMap::new(),
            hpa_metrics: HashMap::new(),
            pods: BTreeMap::new(),
            external_series: HashMap::new(),
            since_sync: SignedDuration::ZERO,
            seeds: Vec::new(),
            target: target::current(),
            aliases: BTreeMap::new(),
            alias_of: BTreeMap::new(),
            next_index: HashMap::new(),
            pod_names: HashMap::new(),
            pod_owner: HashMap::new(),
            served_kinds: None,
            real_node: false,
            own_namespace: None,
            namespace_named: false,
            feature_dir: None,
            keda: keda::KedaScenario::default(),
            versions: HashMap::new(),
            pod_delays: HashMap::new(),
            turn: None,
            named_turn: None,
            requests: crate::testbed::controller::Requests::default(),
            scale_bent: false,
            flags: Vec::new(),
            failing_apis: Vec::new(),
        }
    }

    /// What the run's scenarios share, on a real cluster.
    fn shared(&self) -> Option<Arc<crate::testbed::shared::RunShared>> {
        match &self.target {
            Target::Remote(r) if r.is_real() => Some(r.shared.clone()),
            _ => None,
        }
    }

    /// Before the scenario on a real cluster: waits for its turn beside the
    /// run's other scenarios, or for the whole cluster when it runs `alone`
    /// (it changes what every namespace sees).
    pub async fn take_turn(&mut self, alone: bool) {
        if let Some(shared) = self.shared() {
            self.turn = Some(shared.turn(alone).await);
        }
    }

    /// `Given a namespace`: on a real cluster, waits until no other scenario
    /// of the run uses it, then clears what an earlier scenario left there
    /// (objects and metrics); a namespace made here is the run's to delete.
    pub async fn name_namespace(&mut self, name: &str) -> StepResult {
        let client = self.env().await?.client.clone();
        let shared = self.shared();
        if let Some(shared) = &shared {
            if self.driver.is_some() {
                return Err(StepError::State(format!(
                    "namespace {name}: the HPA controller already watches namespace {}; name the namespace before the controller first syncs",
                    self.namespace
                )));
            }
            self.named_turn = Some(shared.namespace_turn(name).await);
            crate::testbed::cleanup::scenario_objects_in(&client, Some(name))
                .await
                .map_err(StepError::kube(format!(
                    "removing what earlier scenarios left in namespace {name}"
                )))?;
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
        if matches!(self.target, Target::Remote(_))
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
        if let Some(env) = &self.env {
            for api in std::mem::take(&mut self.failing_apis) {
                if let Err(e) = env.metrics.clear_fault(api).await {
                    tracing::warn!(%api, error = %e, "clearing the scenario's metrics API fault");
                }
            }
        }
        if let (Some(ns), Some(env)) = (self.own_namespace.take(), &self.env) {
            let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(env.client.clone());
            match api.delete(&ns, &Default::default()).await {
                Ok(_) => {
                    if let Some(shared) = self.shared() {
                        shared.untrack(&ns);
                    }
                }
                Err(e) => {
                    tracing::warn!(namespace = %ns, error = %e, "deleting the scenario's namespace");
                }
            }
            if let Err(e) = env.metrics.reset_namespace(&ns).await {
                tracing::warn!(namespace = %ns, error = %e, "clearing the scenario's metrics");
            }
        }
        self.forget_pod_delays();
        self.named_turn = None;
        self.turn = None;
    }

    /// Creates this scenario's own namespace on a real cluster, unless the
    /// scenario named one.
    async fn own_namespace(&mut self, env: &Env) -> StepResult {
        if !env.is_real() || self.namespace_named || self.own_namespace.is_some() {
            return Ok(());
        }
        let name = scenario_namespace();
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(env.client.clone());
        let ns = serde_json::from_value(serde_json::json!({"metadata": {"name": name,
            "labels": {crate::testbed::cleanup::SCENARIO_LABEL: "true"}}}))
        .map_err(|e| StepError::start(format!("namespace {name}: {e}")))?;
        // Tracked before it exists: a run interrupted meanwhile deletes it.
        let shared = self.shared();
        if let Some(shared) = &shared {
            shared.track(&name);
        }
        if let Err(e) = api.create(&PostParams::default(), &ns).await {
            if let Some(shared) = &shared {
                shared.untrack(&name);
            }
            return Err(StepError::kube(format!(
                "creating the scenario's namespace {name}"
            ))(e));
        }
        self.namespace = name.clone();
        self.own_namespace = Some(name);
        Ok(())
    }

    /// The running cluster, started on first use.
    pub async fn env(&mut self) -> Result<&Env, StepError> {
        if self.env.is_none() {
            let env = Env::start(&self.target).await?;
            // One cluster, one set of gates: the API server validates
            // `minReplicas: 0` only with HPAScaleToZero, as the controller decides.
            env.set_feature_gates(&self.config.decision.feature_gates)
                .await?;
            self.own_namespace(&env).await?;
            self.env = Some(env);
        }
        self.env
            .as_ref()
            .ok_or_else(|| StepError::start("the cluster did not start"))
    }

    /// The cluster if it started (for failure reports).
    pub fn env_if_started(&self) -> Option<&Env> {
        self.env.as_ref()
    }

    /// The controller, started on first use with the flags given so far;
    /// seeds given so far are handed over.
    pub async fn driver(&mut self) -> Result<&Driver, StepError> {
        if self.driver.is_none() {
            let namespace = self.namespace.clone();
            let (client, clock, scope) = {
                let env = self.env().await?;
                if env.controller_kind() == ControllerKind::Upstream {
                    return Err(StepError::unsupported(
                        "this step needs our controller (its flags, memory or metrics); the cluster's own HPA controller acts in this run".to_owned(),
                    ));
                }
                // On a real cluster other scenarios of the run have HPAs of
                // their own: this scenario's controller keeps to its namespace.
                let scope = env.is_real().then_some(namespace);
                (env.client.clone(), env.clock(), scope)
            };
            let binary = match &self.target {
                Target::Remote(r) => r.controller_binary.clone(),
                Target::Embedded => None,
            };
            let driver = match binary {
                Some(binary) => Driver::start_process(
                    &binary.path,
                    binary.kubeconfig.as_deref(),
                    binary.context.as_deref(),
                    &self.process_flags(),
                    clock,
                )
                .await
                .map_err(StepError::controller("starting the hpa-controller process"))?,
                None => {
                    let mut extensions = self.requests.extensions(&self.config);
                    if self.scale_bent {
                        extensions.scale_from_cache = false;
                    }
                    Driver::start(self.config.clone(), client, clock, scope, extensions)
                        .await
                        .map_err(StepError::controller("starting the HPA controller"))?
                }
            };
            self.driver = Some(driver);
        }
        let seeds = std::mem::take(&mut self.seeds);
        let driver = self
            .driver
            .as_ref()
            .ok_or_else(|| StepError::start("the controller did not start"))?;
        for seed in seeds {
            driver
                .seed(&seed)
                .await
                .map_err(StepError::controller("seeding the controller's history"))?;
        }
        Ok(driver)
    }

    /// Before a step bends what a scale target's `/scale` answers (its
    /// replicas, its selector, a failing GET): at its defaults
    /// `hpa-controller` reads a Deployment's scale from its Deployment
    /// watch, which a bent subresource does not reach, so the scenario's
    /// controller reads every scale through `/scale`, as upstream's does and
    /// as `--upstream-requests` does. The one documented difference between
    /// the two configurations (docs/steps.md).
    pub fn bend_scale(&mut self) -> StepResult {
        if self.driver.is_some() && !self.scale_bent && self.requests == Requests::Shipped {
            return Err(StepError::State(
                "the scale subresource can only be bent before the HPA controller first syncs: at its defaults it reads Deployments' scales from its watch, and then it reads them through /scale".to_owned(),
            ));
        }
        self.scale_bent = true;
        Ok(())
    }

    /// Seeds the controller's history now if it runs, else when it starts.
    pub async fn seed(&mut self, seed: Seed) -> StepResult {
        if self.target_controller() == ControllerKind::Upstream {
            return Err(StepError::unsupported(
                "seeding history needs our controller; the cluster's own HPA controller acts in this run".to_owned(),
            ));
        }
        match &self.driver {
            Some(driver) => driver
                .seed(&seed)
                .await
                .map_err(StepError::controller("seeding the controller's history")),
            None => {
                self.seeds.push(seed);
                Ok(())
            }
        }
    }

    /// The controller if it started (for failure reports).
    pub fn driver_if_started(&self) -> Option<&Driver> {
        self.driver.as_ref()
    }

    /// The release a run's pass gives the scenario (before its first step).
    pub fn set_release(&mut self, version: hpa_core::KubernetesVersion) {
        self.config.decision.feature_gates = hpa_core::FeatureGates::of(version);
    }

    /// `Given Kubernetes X.Y`: the scenario's release, with the gates set so
    /// far (refused where the release does not know or locks one); refused
    /// once the controller runs.
    pub async fn set_kubernetes_version(&mut self, version: &str) -> StepResult {
        self.set_flag("kubernetes-version", version).await
    }

    /// Sets one controller flag; refused once the controller runs.
    pub async fn set_flag(&mut self, flag: &str, value: &str) -> StepResult {
        if self.driver.is_some() {
            return Err(StepError::State(format!(
                "flag {flag}: the HPA controller already runs; give its flags before it first syncs"
            )));
        }
        self.config
            .set_flag(flag, value)
            .map_err(|source| StepError::Flag {
                flag: flag.to_owned(),
                source,
            })?;
        if self.target_controller() == ControllerKind::Upstream {
            let shown = match &self.target {
                Target::Remote(r) => crate::testbed::controller_manager::describe(&r.client).await,
                _ => "its flags are not visible here".to_owned(),
            };
            return Err(StepError::unsupported(format!(
                "flag {flag}: the cluster's own HPA controller acts in this run, with kube-controller-manager's flags; {shown}"
            )));
        }
        self.flags.push((flag.to_owned(), value.to_owned()));
        if let Some(env) = &self.env {
            env.set_feature_gates(&self.config.decision.feature_gates)
                .await?;
        }
        Ok(())
    }

    /// The command line of a controller process: the release, then the
    /// flags the steps gave (the last value of each), and upstream's
    /// requests when asked or when the scenario bends `/scale`.
    fn process_flags(&self) -> Vec<String> {
        let mut last: Vec<(String, String)> = Vec::new();
        for (flag, value) in &self.flags {
            last.retain(|(f, _)| f != flag);
            last.push((flag.clone(), value.clone()));
        }
        let mut args = Vec::new();
        if !last.iter().any(|(f, _)| f == "kubernetes-version") {
            args.push(format!(
                "--kubernetes-version={}",
                self.config.decision.feature_gates.version()
            ));
        }
        args.extend(last.iter().map(|(f, v)| format!("--{f}={v}")));
        if self.requests == Requests::Upstream || self.scale_bent {
            args.push("--upstream-requests".to_owned());
        }
        args
    }

    /// Whose controller acts in this scenario.
    pub fn target_controller(&self) -> ControllerKind {
        self.target.controller()
    }

    /// The fake node scenario pods go to, on a real cluster.
    pub fn fake_node(&self) -> Option<Arc<crate::testbed::cluster::fake_node::FakeNode>> {
        match &self.target {
            Target::Remote(r) if !self.real_node => r.fake_node.clone(),
            _ => None,
        }
    }

    /// Whether the scenario's pods run on a real node with a real kubelet.
    pub fn on_real_node(&self) -> bool {
        self.real_node && self.env.as_ref().is_some_and(Env::is_real)
    }

    /// How long `Then` steps wait for what they expect: not at all on a
    /// virtual clock (the controller has acted when the step runs); two sync
    /// periods on the wall clock, where the controller acts on its own time
    /// and a real cluster's controllers lag.
    pub fn patience(&self) -> Option<std::time::Duration> {
        let env = self.env.as_ref()?;
        if env.is_virtual() {
            return None;
        }
        Some(self.sync_period() * 2 + std::time::Duration::from_secs(2))
    }

    /// The sync period of the controller acting in the scenario.
    pub fn sync_period(&self) -> std::time::Duration {
        match &self.target {
            Target::Remote(r) if r.controller == ControllerKind::Upstream => r.upstream_sync_period,
            _ => self.config.sync_period,
        }
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
    pub async fn eventually<F>(&mut self, mut check: F) -> StepResult
    where
        F: AsyncFnMut(&mut HpaWorld) -> StepResult,
    {
        let Some(patience) = self.patience() else {
            return check(self).await;
        };
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            match check(self).await {
                Err(StepError::Expectation(_)) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
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
        let api: Api<Pod> = self.api(ns).await?;
        let selector = self
            .workloads
            .get(&(ns.to_owned(), workload.to_owned()))
            .map_or_else(|| format!("app={workload}"), |w| w.selector.clone());
        let list = api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(StepError::kube(format!(
                "listing the pods of {ns}/{workload}"
            )))?;
        let mut pods = list.items;
        pods.sort_by_key(|p| {
            let name = p.metadata.name.clone().unwrap_or_default();
            (
                self.step_index(ns, workload, &name),
                p.metadata.creation_timestamp.as_ref().map(|t| t.0),
                name,
            )
        });
        for p in &pods {
            let real = p.metadata.name.clone().unwrap_or_default();
            self.alias(ns, workload, &real);
        }
        pods.sort_by_key(|p| {
            let real = p.metadata.name.clone().unwrap_or_default();
            self.alias_of
                .get(&(ns.to_owned(), real))
                .map_or(u64::MAX, |a| self.step_index(ns, workload, a))
        });
        Ok(pods)
    }

    /// Names the first pods of a workload as its pod table does.
    pub fn declare_pod_names(&mut self, ns: &str, workload: &str, names: Vec<String>) {
        for n in &names {
            self.pod_owner
                .insert((ns.to_owned(), n.clone()), workload.to_owned());
        }
        self.pod_names
            .insert((ns.to_owned(), workload.to_owned()), names);
    }

    /// The kind a step names (`deployment`, `Ingress`, `ingresses`,
    /// `ingress.networking.k8s.io`, a custom resource's kind).
    pub async fn resolve_kind(&mut self, word: &str) -> Result<super::kinds::KindRef, StepError> {
        if let Some(served) = &self.served_kinds
            && let Ok(k) = super::kinds::resolve_in(word, served)
        {
            return Ok(k);
        }
        let client = self.env().await?.client.clone();
        let served = super::kinds::served(&client).await?;
        let found = super::kinds::resolve_in(word, &served);
        self.served_kinds = Some(served);
        found
    }

    /// Forgets what the cluster serves (a CRD came), so the next kind a
    /// step names is looked up again.
    pub fn forget_served_kinds(&mut self) {
        self.served_kinds = None;
    }

    /// The pod names a workload's pod table gave.
    pub fn pod_names_of(&self, ns: &str, workload: &str) -> Vec<String> {
        self.pod_names
            .get(&(ns.to_owned(), workload.to_owned()))
            .cloned()
            .unwrap_or_default()
    }

    /// `text` with the names of the pods of namespace `ns` that the cluster
    /// named itself (`web-7d4b9-xk2zq`) replaced by their step names
    /// (`web-2`), so that a condition's or an event's message reads as on
    /// the simulated cluster.
    pub fn in_step_names(&self, ns: &str, text: &str) -> String {
        let mut out = text.to_owned();
        for ((pod_ns, real), alias) in &self.alias_of {
            if pod_ns == ns && real != alias && out.contains(real.as_str()) {
                out = out.replace(real.as_str(), alias);
            }
        }
        out
    }

    /// The creation index a step name stands for: its row in the pod table,
    /// else the `i` of `NAME-i` (others sort last).
    fn step_index(&self, ns: &str, workload: &str, name: &str) -> u64 {
        self.pod_names
            .get(&(ns.to_owned(), workload.to_owned()))
            .and_then(|names| names.iter().position(|n| n == name))
            .and_then(|i| u64::try_from(i).ok())
            .unwrap_or_else(|| pod_index(name, workload))
    }

    /// Gives pod `real` of a workload its step name, once.
    fn alias(&mut self, ns: &str, workload: &str, real: &str) {
        let key = (ns.to_owned(), real.to_owned());
        if self.alias_of.contains_key(&key) {
            return;
        }
        let known = self.step_index(ns, workload, real);
        let next = self
            .next_index
            .entry((ns.to_owned(), workload.to_owned()))
            .or_insert(0);
        let (index, alias) = match known {
            u64::MAX => {
                let index = *next;
                let declared = self
                    .pod_names
                    .get(&(ns.to_owned(), workload.to_owned()))
                    .and_then(|names| names.get(usize::try_from(index).ok()?))
                    .cloned();
                (
                    index,
                    declared.unwrap_or_else(|| format!("{workload}-{index}")),
                )
            }
            i => (i, real.to_owned()),
        };
        *next = (*next).max(index + 1);
        self.aliases
            .insert((ns.to_owned(), alias.clone()), real.to_owned());
        self.alias_of.insert(key, alias);
    }

    /// The cluster's name of the pod a step calls `name` (`NAME-i`, a name
    /// of a pod table, or `ns/...`), with its namespace.
    pub async fn resolve_pod(&mut self, name: &str) -> Result<(String, String), StepError> {
        let (ns, pod) = self.qualify(name);
        if let Some(real) = self.aliases.get(&(ns.clone(), pod.clone())) {
            return Ok((ns, real.clone()));
        }
        let workload = self
            .pod_owner
            .get(&(ns.clone(), pod.clone()))
            .cloned()
            .or_else(|| {
                pod.rsplit_once('-')
                    .map(|(w, _)| w.to_owned())
                    .filter(|w| self.workloads.contains_key(&(ns.clone(), w.clone())))
            });
        if let Some(workload) = workload {
            // A real cluster's controllers create a workload's pods (under
            // names of their own) a moment after it: wait for the pod the
            // step names, within the scenario's patience.
            let mut real = None;
            let mut seen = 0;
            let found = self
                .eventually(async |w: &mut HpaWorld| {
                    seen = w.pods_of(&ns, &workload).await?.len();
                    real = w.aliases.get(&(ns.clone(), pod.clone())).cloned();
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
            .get(&(ns.to_owned(), workload.to_owned()))
            .map_or("workload", |w| w.kind.word());
        let waited = self.patience().map_or_else(
            || "now".to_owned(),
            |p| format!("after waiting {}s", p.as_secs()),
        );
        let needed = match self.step_index(ns, workload, pod) {
            u64::MAX => "a pod of that name".to_owned(),
            0 => "1 pod".to_owned(),
            i => format!("{} pods", i.saturating_add(1)),
        };
        StepError::Expectation(format!(
            "{kind} {ns}/{workload} has {seen} pod{} {waited}; step pod {pod} needs {needed}",
            if seen == 1 { "" } else { "s" }
        ))
    }

    /// The step name of a cluster pod (itself when it has none).
    pub fn step_name(&self, ns: &str, real: &str) -> String {
        self.alias_of
            .get(&(ns.to_owned(), real.to_owned()))
            .cloned()
            .unwrap_or_else(|| real.to_owned())
    }
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

/// A fresh namespace name for one scenario on a real cluster.
fn scenario_namespace() -> String {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() % 1_000_000_000)
        .unwrap_or(0);
    format!("hpa-scenario-{}-{millis}-{seq}", std::process::id())
}

/// The index of pod `NAME-i` of workload `NAME` (others sort last).
pub fn pod_index(pod: &str, workload: &str) -> u64 {
    pod.strip_prefix(workload)
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|i| i.parse().ok())
        .unwrap_or(u64::MAX)
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

fn value(text: &str) -> Result<ScriptValue, StepError> {
    ScriptValue::parse(text).map_err(StepError::Input)
}

/// The full pod entry for the metrics server.
fn pod_spec(ns: &str, pod: &str, m: &PodMetrics) -> Result<PodSpec, StepError> {
    let containers = m
        .containers
        .iter()
        .map(|(name, (cpu, memory))| {
            Ok(ContainerSpec {
                name: name.clone(),
                cpu: cpu.as_deref().map(value).transpose()?,
                memory: memory.as_deref().map(value).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, StepError>>()?;
    let metrics = m
        .custom
        .iter()
        .map(|(name, v)| {
            let spec = if m.timestamp.is_none() && m.window.is_none() {
                MetricSpec::Value(value(v)?)
            } else {
                MetricSpec::Series(MetricSeries {
                    value: value(v)?,
                    labels: BTreeMap::new(),
                    timestamp: m.timestamp.map(|d| SampleTime::Ago(ScriptDuration(d))),
                    window: m.window.map(ScriptDuration),
                })
            };
            Ok((name.clone(), spec))
        })
        .collect::<Result<BTreeMap<_, _>, StepError>>()?;
    Ok(PodSpec {
        namespace: ns.to_owned(),
        name: pod.to_owned(),
        labels: m.labels.clone(),
        containers,
        missing: m.missing,
        timestamp: m.timestamp.map(|d| SampleTime::Ago(ScriptDuration(d))),
        window: m.window.map(ScriptDuration),
        metrics,
    })
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
        world.config.sync_period = std::time::Duration::MAX;
        let err = world.signed_sync_period().unwrap_err().to_string();
        let named = hpa_controller::config::format_go_duration(std::time::Duration::MAX);
        assert!(err.contains(&format!("sync period {named}")), "{err}");
    }

    #[test]
    fn generated_pod_names_are_aliased_to_the_table_names_in_creation_order() {
        let mut world = HpaWorld::new();
        world.declare_pod_names(
            "default",
            "api",
            vec!["api-blue".to_owned(), "api-canary".to_owned()],
        );
        for real in ["api-7d4b9-xk2zq", "api-7d4b9-abcde", "api-7d4b9-later"] {
            world.alias("default", "api", real);
        }
        let step = |real: &str| world.step_name("default", real);
        assert_eq!(step("api-7d4b9-xk2zq"), "api-blue");
        assert_eq!(step("api-7d4b9-abcde"), "api-canary");
        // A pod the workload makes later continues the numbering.
        assert_eq!(step("api-7d4b9-later"), "api-2");
        assert_eq!(
            world
                .aliases
                .get(&("default".to_owned(), "api-canary".to_owned())),
            Some(&"api-7d4b9-abcde".to_owned())
        );
        // Pods the cluster named as the table does keep their names.
        let mut sim = HpaWorld::new();
        sim.declare_pod_names("default", "api", vec!["api-blue".to_owned()]);
        sim.alias("default", "api", "api-blue");
        sim.alias("default", "api", "api-1");
        assert_eq!(sim.step_name("default", "api-blue"), "api-blue");
        assert_eq!(sim.step_name("default", "api-1"), "api-1");
    }
}
