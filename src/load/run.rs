//! One load run on the simulated cluster: N deployments with HPAs over a
//! mix of metric types, their metrics scripted in the fake metrics server
//! (changing over time per the profile), our controller in periodic mode on
//! the wall clock (real time is what is measured), everything in-process
//! (no sockets), stopping by itself after the duration.
//!
//! Every reconcile is observed through the controller's observer hook: its
//! start and duration give the sync intervals and latencies, and its core
//! inputs are replayed through the pure core to count disagreements.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use fake_metrics_server::script::{
    Change, ContainerSpec, Defaults, Duration as ScriptDuration, ExternalMetric, ExternalSpec,
    MetricSpec, PodRef, PodSpec, Script, Value,
};
use fake_metrics_server::{AppState, ServerClock};
use futures::{StreamExt, TryStreamExt};
use hpa_core::clock::SystemClock;
use hpa_sim::{Sim, SimClock, SimConfig};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams};

use super::agree::disagreement;
use super::remote::{Remote, RemoteError};
use super::report::{self, LoadReport};
use super::stats::Summary;
use crate::controller::{
    ControllerConfig, ControllerHandle, ControllerOptions, Extensions, ReconcileObservation,
    ReconcileObserver, RunError, SyncMode,
};

/// Which cluster the load runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The simulated cluster and fake metrics server in this process.
    Sim,
    /// `hpa-harness sim` in a child process: the load process's memory and
    /// CPU are then the controller's own.
    SimProcess,
    /// The cluster of `--kubeconfig` (our sim or a real one) with the fake
    /// metrics server at `--metrics-control-url`.
    Kubeconfig,
}

impl BackendKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Sim => "sim",
            Self::SimProcess => "sim-process",
            Self::Kubeconfig => "kubeconfig",
        }
    }
}

/// Whose controller is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ControllerKind {
    /// hpa-harness's controller.
    Ours,
    /// The cluster's own (kube-controller-manager's) HPA controller.
    Upstream,
}

impl ControllerKind {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ours => "ours",
            Self::Upstream => "upstream",
        }
    }
}

/// How the scripted metrics change over the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricProfile {
    /// Every metric stays at its target: no HPA scales.
    Steady,
    /// Every metric rises linearly to 1.6 times its target by the end.
    Ramp,
    /// Metrics jump to 1.8 times their target every other two sync periods.
    Spiky,
}

impl MetricProfile {
    fn as_str(self) -> &'static str {
        match self {
            Self::Steady => "steady",
            Self::Ramp => "ramp",
            Self::Spiky => "spiky",
        }
    }

    /// Load as a multiple of the target, `elapsed` into a run of `duration`.
    pub fn factor(self, elapsed: Duration, duration: Duration, sync_period: Duration) -> f64 {
        match self {
            Self::Steady => 1.0,
            Self::Ramp => {
                let t = elapsed.as_secs_f64() / duration.as_secs_f64().max(1e-9);
                // Quantised to tenths so that the metrics change a few times,
                // not at every tick.
                1.0 + (t.min(1.0) * 6.0).floor() / 10.0
            }
            Self::Spiky => {
                let phase = elapsed.as_secs_f64() / (2.0 * sync_period.as_secs_f64().max(1e-9));
                if (phase.floor() as u64) % 2 == 1 {
                    1.8
                } else {
                    1.0
                }
            }
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Number of HPAs, each with its own Deployment.
    pub hpas: usize,
    /// Pods per Deployment at the start.
    pub pods_per_hpa: usize,
    /// Controller workers.
    pub workers: usize,
    /// How long the controller is measured, after the warm-up.
    pub duration: Duration,
    /// How long the controller runs before the measurement starts: the
    /// first pass writes every HPA's status, later ones mostly do not, so a
    /// warm-up of a sync period or two shows the steady state.
    pub warmup: Duration,
    /// The controller's sync period.
    pub sync_period: Duration,
    /// Which cluster.
    pub backend: BackendKind,
    /// Whose controller.
    pub controller: ControllerKind,
    /// How metrics change.
    pub profile: MetricProfile,
    /// Scale targets from a watch cache and shared metrics lists
    /// ([`Extensions`]); off: upstream's requests.
    pub optimize: bool,
    /// HPAs per namespace (namespaces `load-0`, `load-1`, ...).
    pub hpas_per_namespace: usize,
    /// Draw a progress bar on stderr (when it is a terminal).
    pub progress: bool,
    /// With `--backend kubeconfig`: the cluster's kubeconfig.
    pub kubeconfig: Option<std::path::PathBuf>,
    /// With `--backend kubeconfig`: the fake metrics server's base URL
    /// (its `/control/v1` API), where the cluster's metrics APIs point.
    pub metrics_control_url: Option<String>,
    /// The controller's client-side limit, requests a second per clientset
    /// as `hpa-harness controller --kube-api-qps` (0: none). Needs a cluster
    /// outside this process.
    pub kube_api_qps: f64,
    /// The controller's request burst per clientset (`--kube-api-burst`).
    pub kube_api_burst: u32,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            hpas: 200,
            pods_per_hpa: 10,
            workers: 5,
            duration: Duration::from_secs(60),
            warmup: Duration::ZERO,
            sync_period: Duration::from_secs(15),
            backend: BackendKind::Sim,
            controller: ControllerKind::Ours,
            profile: MetricProfile::Steady,
            optimize: true,
            hpas_per_namespace: 100,
            progress: false,
            kubeconfig: None,
            metrics_control_url: None,
            kube_api_qps: 0.0,
            kube_api_burst: 30,
        }
    }
}

/// Errors of a load run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The combination asked for is not available.
    #[error("{0}")]
    Unsupported(String),
    /// Building the load in the cluster failed.
    #[error("cannot {action}")]
    Setup {
        /// What was being created or read.
        action: String,
        #[source]
        source: kube::Error,
    },
    /// The fake metrics server refused the script.
    #[error("the fake metrics server refused the load's metrics")]
    Metrics(#[source] fake_metrics_server::state::StateError),
    /// The controller failed.
    #[error("the controller failed")]
    Controller(#[source] RunError),
    /// The options make no run.
    #[error("invalid load options: {0}")]
    Invalid(String),
    /// The cluster outside this process could not be reached or started.
    #[error(transparent)]
    Remote(#[from] RemoteError),
}

/// Where the cluster and the fake metrics server run.
enum Cluster {
    /// In this process, without sockets.
    InProcess { sim: Sim, metrics: AppState },
    /// Elsewhere (a child process or a kubeconfig's cluster).
    Remote(Box<Remote>),
}

impl Cluster {
    fn client(&self) -> kube::Client {
        match self {
            Self::InProcess { sim, .. } => sim.client(),
            Self::Remote(r) => r.client.clone(),
        }
    }

    async fn load_script(&self, script: &Script) -> Result<(), LoadError> {
        match self {
            Self::InProcess { metrics, .. } => metrics.load(script).map_err(LoadError::Metrics),
            Self::Remote(r) => Ok(r.load_script(script).await?),
        }
    }

    async fn apply(&self, changes: &[Change]) -> Result<(), LoadError> {
        match self {
            Self::InProcess { metrics, .. } => metrics
                .apply(changes)
                .map(|_| ())
                .map_err(LoadError::Metrics),
            Self::Remote(r) => Ok(r.apply(changes).await?),
        }
    }

    async fn reset_requests(&self) -> Result<(), LoadError> {
        match self {
            Self::InProcess { sim, metrics } => {
                sim.requests().reset();
                metrics.log().clear();
                Ok(())
            }
            Self::Remote(r) => Ok(r.reset_requests().await?),
        }
    }

    async fn request_counts(&self) -> Result<Option<BTreeMap<(String, String), u64>>, LoadError> {
        match self {
            Self::InProcess { sim, .. } => Ok(Some(sim.requests().snapshot())),
            Self::Remote(r) => Ok(r.request_counts().await?),
        }
    }

    fn tick(&self) {
        if let Self::InProcess { sim, .. } = self {
            sim.process_due();
        }
    }

    fn child_pid(&self) -> Option<u32> {
        match self {
            Self::InProcess { .. } => None,
            Self::Remote(r) => r.child_pid(),
        }
    }

    fn real(&self) -> bool {
        matches!(self, Self::Remote(r) if r.is_real())
    }

    async fn stop(self) {
        if let Self::Remote(r) = self {
            r.stop().await;
        }
    }
}

/// The metric kinds, assigned round-robin to the HPAs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MetricKind {
    Cpu,
    Memory,
    PodsCustom,
    External,
}

impl MetricKind {
    fn of(index: usize) -> Self {
        match index % 4 {
            0 => Self::Cpu,
            1 => Self::Memory,
            2 => Self::PodsCustom,
            _ => Self::External,
        }
    }

    fn spec(self, name: &str) -> serde_json::Value {
        use serde_json::json;
        match self {
            Self::Cpu => json!({"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}),
            Self::Memory => json!({"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "64Mi"}}}),
            Self::PodsCustom => json!({"type": "Pods", "pods": {
                "metric": {"name": "requests_per_second"},
                "target": {"type": "AverageValue", "averageValue": "10"}}}),
            Self::External => json!({"type": "External", "external": {
                "metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": name}}},
                "target": {"type": "AverageValue", "averageValue": "5"}}}),
        }
    }
}

/// One load HPA: namespace, name (also of its Deployment), metric kind.
#[derive(Debug, Clone)]
struct Target {
    namespace: String,
    name: String,
    kind: MetricKind,
}

fn targets(options: &LoadOptions) -> Vec<Target> {
    let per_ns = options.hpas_per_namespace.max(1);
    (0..options.hpas)
        .map(|i| Target {
            namespace: format!("load-{}", i / per_ns),
            name: format!("w{i}"),
            kind: MetricKind::of(i),
        })
        .collect()
}

/// The load's Deployment; on a real cluster (`fake_node`) its pods go on
/// the harness's fake node, which acts as their kubelet.
fn deployment(
    t: &Target,
    replicas: usize,
    fake_node: bool,
) -> Result<Deployment, serde_json::Error> {
    use crate::cluster::fake_node as node;
    let mut d: Deployment = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": t.name, "namespace": t.namespace},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": t.name}},
                 "template": {"metadata": {"labels": {"app": t.name}},
                              "spec": {"containers": [{"name": "app", "image": "app",
                                  "resources": {"requests": {"cpu": "200m", "memory": "128Mi"}}}]}}}
    }))?;
    if fake_node && let Some(spec) = d.spec.as_mut() {
        let template = &mut spec.template;
        template
            .metadata
            .get_or_insert_with(Default::default)
            .labels
            .get_or_insert_with(Default::default)
            .insert(node::MANAGED_POD_LABEL.to_string(), "true".to_string());
        if let Some(pod) = template.spec.as_mut() {
            pod.node_selector = Some(node::node_selector());
            pod.tolerations = Some(vec![node::toleration()]);
        }
    }
    Ok(d)
}

fn hpa(t: &Target, pods: usize) -> Result<HorizontalPodAutoscaler, serde_json::Error> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": t.name, "namespace": t.namespace},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": t.name},
                 "minReplicas": 1, "maxReplicas": (pods * 2).max(2),
                 "metrics": [t.kind.spec(&t.name)]}
    }))
}

/// The fake metrics server's view of one pod at load `factor`.
fn pod_metrics(namespace: &str, name: &str, labels: &BTreeMap<String, String>, f: f64) -> PodSpec {
    PodSpec {
        namespace: namespace.to_string(),
        name: name.to_string(),
        labels: labels.clone(),
        containers: vec![ContainerSpec {
            name: "app".into(),
            cpu: Some(Value(format!("{}m", (100.0 * f).round() as i64))),
            memory: Some(Value(format!("{}Ki", (65536.0 * f).round() as i64))),
        }],
        metrics: BTreeMap::from([(
            "requests_per_second".to_string(),
            MetricSpec::Value(Value(format!("{}m", (10_000.0 * f).round() as i64))),
        )]),
        ..PodSpec::default()
    }
}

fn external_metric(t: &Target, pods: usize, f: f64) -> ExternalMetric {
    ExternalMetric {
        namespace: t.namespace.clone(),
        metric: "queue_depth".into(),
        labels: BTreeMap::from([("queue".to_string(), t.name.clone())]),
        value: Some(Value(format!(
            "{}m",
            (5_000.0 * pods as f64 * f).round() as i64
        ))),
        timestamp: None,
        window: None,
    }
}

/// The metrics of the load at `factor`, for every pod the cluster has and
/// every external series.
fn metric_changes(
    pods: &[(String, String, BTreeMap<String, String>)],
    externals: &[Target],
    pods_per_hpa: usize,
    factor: f64,
) -> Vec<Change> {
    pods.iter()
        .map(|(ns, name, labels)| Change::Pod(pod_metrics(ns, name, labels, factor)))
        .chain(
            externals
                .iter()
                .map(|t| Change::ExternalMetric(external_metric(t, pods_per_hpa, factor))),
        )
        .collect()
}

/// A pod of the load: namespace, name, labels.
type LoadPod = (String, String, BTreeMap<String, String>);

/// The pods of the load's namespaces.
async fn list_pods(
    client: &kube::Client,
    namespaces: &[String],
) -> Result<Vec<LoadPod>, LoadError> {
    let mut pods = Vec::new();
    for ns in namespaces {
        let list = Api::<Pod>::namespaced(client.clone(), ns)
            .list(&ListParams::default())
            .await
            .map_err(setup(format!("list the pods of {ns}")))?;
        pods.extend(list.items.into_iter().map(|p| {
            (
                ns.clone(),
                p.metadata.name.unwrap_or_default(),
                p.metadata.labels.unwrap_or_default(),
            )
        }));
    }
    Ok(pods)
}

/// Script changes for pods that appeared (metrics at `factor`) or went
/// away (removed) between two lists.
fn pod_churn(before: &[LoadPod], now: &[LoadPod], factor: f64) -> Vec<Change> {
    let key = |p: &LoadPod| (p.0.clone(), p.1.clone());
    let had: HashSet<(String, String)> = before.iter().map(key).collect();
    let has: HashSet<(String, String)> = now.iter().map(key).collect();
    now.iter()
        .filter(|p| !had.contains(&key(p)))
        .map(|(ns, name, labels)| Change::Pod(pod_metrics(ns, name, labels, factor)))
        .chain(
            before
                .iter()
                .filter(|p| !has.contains(&key(p)))
                .map(|(ns, name, _)| {
                    Change::RemovePod(PodRef {
                        namespace: ns.clone(),
                        name: name.clone(),
                    })
                }),
        )
        .collect()
}

/// What the observer gathered. Syncs, intervals and latencies count from
/// the end of the warm-up; synced HPAs and disagreements over the whole run.
#[derive(Debug, Default)]
struct Tally {
    syncs: u64,
    intervals: Vec<f64>,
    latencies: Vec<f64>,
    synced: HashSet<String>,
    synced_after_warmup: HashSet<String>,
    disagreements: u64,
    examples: Vec<String>,
}

/// Forwards observations to a checker thread, so replaying the core does
/// not hold up the workers.
struct Collector {
    tx: Mutex<Option<mpsc::Sender<ReconcileObservation>>>,
    seen: AtomicU64,
}

impl ReconcileObserver for Collector {
    fn observe(&self, observation: ReconcileObservation) {
        self.seen.fetch_add(1, Ordering::Relaxed);
        if let Some(tx) = self
            .tx
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
        {
            let _ = tx.send(observation);
        }
    }
}

impl Collector {
    /// Starts the checker; reconciles that start before `measure_from` are
    /// the warm-up: checked against the core, not measured. Also returns the
    /// checker thread's `/proc` task path (`PID/task/TID`), so its CPU (the
    /// harness's, not the controller's) can be told apart.
    fn start(measure_from: Instant) -> (Arc<Self>, std::thread::JoinHandle<Tally>, Option<String>) {
        let (tx, rx) = mpsc::channel::<ReconcileObservation>();
        let (task_tx, task_rx) = mpsc::channel::<Option<String>>();
        let checker = std::thread::spawn(move || {
            let task = std::fs::read_link("/proc/thread-self")
                .ok()
                .map(|p| p.to_string_lossy().into_owned());
            let _ = task_tx.send(task);
            let mut tally = Tally::default();
            let mut last: HashMap<String, Instant> = HashMap::new();
            for o in rx {
                let measured = o.started >= measure_from;
                let prev = last.insert(o.key.clone(), o.started);
                if measured {
                    tally.syncs += 1;
                    tally.latencies.push(o.duration.as_secs_f64());
                    if let Some(prev) = prev {
                        tally
                            .intervals
                            .push(o.started.saturating_duration_since(prev).as_secs_f64());
                    }
                    if !tally.synced_after_warmup.contains(&o.key) {
                        tally.synced_after_warmup.insert(o.key.clone());
                    }
                }
                if let Some(what) = disagreement(&o) {
                    tally.disagreements += 1;
                    if tally.examples.len() < 5 {
                        tally.examples.push(what);
                    }
                }
                tally.synced.insert(o.key);
            }
            tally
        });
        let collector = Arc::new(Self {
            tx: Mutex::new(Some(tx)),
            seen: AtomicU64::new(0),
        });
        let task = task_rx.recv().ok().flatten();
        (collector, checker, task)
    }

    /// Stops forwarding; the checker ends once it has drained the channel.
    fn close(&self) {
        self.tx
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
    }
}

fn setup(action: impl Into<String>) -> impl FnOnce(kube::Error) -> LoadError {
    let action = action.into();
    move |source| LoadError::Setup { action, source }
}

fn invalid(e: serde_json::Error) -> LoadError {
    LoadError::Invalid(format!("cannot build a load object: {e}"))
}

/// Concurrent creations while building the load.
const CREATE_CONCURRENCY: usize = 32;

/// Runs one load and returns its report. Disagreement examples (if any)
/// are logged as warnings.
pub async fn run(options: &LoadOptions) -> Result<LoadReport, LoadError> {
    if options.controller == ControllerKind::Upstream && options.backend != BackendKind::Kubeconfig
    {
        return Err(LoadError::Unsupported(
            "--controller upstream measures the controller of the cluster given with --backend kubeconfig; the simulated cluster has none of its own".into(),
        ));
    }
    if options.hpas == 0 || options.pods_per_hpa == 0 || options.duration.is_zero() {
        return Err(LoadError::Invalid(
            "--hpas, --pods-per-hpa and --duration must be positive".into(),
        ));
    }
    let targets = targets(options);
    let namespaces: Vec<String> = {
        let mut seen = HashSet::new();
        targets
            .iter()
            .filter(|t| seen.insert(t.namespace.clone()))
            .map(|t| t.namespace.clone())
            .collect()
    };
    let cluster = match options.backend {
        BackendKind::Sim => {
            let metrics = AppState::new(ServerClock::wall());
            let sim = Sim::new(SimConfig {
                clock: SimClock::Wall,
                metrics: Some(hpa_sim::Backend::Router(fake_metrics_server::app(
                    metrics.clone(),
                ))),
                namespaces: ["default", "kube-system"]
                    .into_iter()
                    .map(String::from)
                    .chain(namespaces.iter().cloned())
                    .collect(),
                ..SimConfig::default()
            });
            Cluster::InProcess { sim, metrics }
        }
        BackendKind::SimProcess => Cluster::Remote(Box::new(Remote::spawn_sim().await?)),
        BackendKind::Kubeconfig => {
            let path = options.kubeconfig.as_deref().ok_or_else(|| {
                LoadError::Invalid("--backend kubeconfig needs --kubeconfig".into())
            })?;
            Cluster::Remote(Box::new(
                Remote::connect(path, options.metrics_control_url.as_deref()).await?,
            ))
        }
    };
    let result = run_on(options, &targets, &namespaces, &cluster).await;
    cluster.stop().await;
    result
}

/// Builds the load on `cluster`, runs the controller and measures it.
async fn run_on(
    options: &LoadOptions,
    targets: &[Target],
    namespaces: &[String],
    cluster: &Cluster,
) -> Result<LoadReport, LoadError> {
    if let Cluster::Remote(r) = cluster {
        r.create_namespaces(namespaces).await?;
    }
    let client = cluster.client();
    let on_fake_node = cluster.real();

    // Deployments (the sim creates their pods at once), then the pods'
    // names for the metrics script, then the HPAs.
    let building = Instant::now();
    futures::stream::iter(targets.iter().map(|t| {
        let client = client.clone();
        async move {
            let d = deployment(t, options.pods_per_hpa, on_fake_node).map_err(invalid)?;
            Api::<Deployment>::namespaced(client, &t.namespace)
                .create(&PostParams::default(), &d)
                .await
                .map_err(setup(format!(
                    "create deployment {}/{}",
                    t.namespace, t.name
                )))?;
            Ok::<(), LoadError>(())
        }
    }))
    .buffer_unordered(CREATE_CONCURRENCY)
    .try_collect::<()>()
    .await?;
    let mut pods = list_pods(&client, namespaces).await?;
    let externals: Vec<Target> = targets
        .iter()
        .filter(|t| t.kind == MetricKind::External)
        .cloned()
        .collect();
    let script = Script {
        pods: pods
            .iter()
            .map(|(ns, name, labels)| pod_metrics(ns, name, labels, 1.0))
            .collect(),
        external: externals
            .iter()
            .map(|t| {
                let m = external_metric(t, options.pods_per_hpa, 1.0);
                ExternalSpec {
                    namespace: m.namespace,
                    metric: m.metric,
                    labels: m.labels,
                    value: m.value.unwrap_or(Value("0".into())),
                    timestamp: None,
                    window: None,
                }
            })
            .collect(),
        // A 5 s window (metrics-server's is 15 s to 30 s): CPU samples of
        // new pods count once they have been Ready for a window, so a run
        // needs no warm-up of half a minute.
        defaults: Defaults {
            timestamp: None,
            window: Some(ScriptDuration(jiff::SignedDuration::from_secs(5))),
        },
        ..Script::default()
    };
    cluster.load_script(&script).await?;
    let pod_count = pods.len();
    // The harness's own state should not be counted as the controller's
    // memory: the script is loaded, and a steady load never rescripts pods.
    drop(script);
    if options.profile == MetricProfile::Steady {
        pods = Vec::new();
    }
    futures::stream::iter(targets.iter().map(|t| {
        let client = client.clone();
        async move {
            let h = hpa(t, options.pods_per_hpa).map_err(invalid)?;
            Api::<HorizontalPodAutoscaler>::namespaced(client, &t.namespace)
                .create(&PostParams::default(), &h)
                .await
                .map_err(setup(format!("create HPA {}/{}", t.namespace, t.name)))?;
            Ok::<(), LoadError>(())
        }
    }))
    .buffer_unordered(CREATE_CONCURRENCY)
    .try_collect::<()>()
    .await?;
    tracing::info!(
        hpas = options.hpas,
        pods = pod_count,
        seconds = building.elapsed().as_secs_f64(),
        "load built"
    );

    // The controller, measured from here.
    let setup_rss = report::current_rss_bytes();
    let mut cpu_before = report::cpu_seconds();
    cluster.reset_requests().await?;
    let cluster_cpu = |pid: Option<u32>| pid.map_or(0.0, report::cpu_seconds_of);
    let mut cluster_cpu_before = cluster_cpu(cluster.child_pid());
    let started = Instant::now();
    let measure_from = started + options.warmup;
    let total = options.warmup + options.duration;
    let (collector, checker, checker_task) = Collector::start(measure_from);
    let checker_cpu = || {
        checker_task
            .as_deref()
            .map_or(0.0, report::thread_cpu_seconds)
    };
    let mut checker_cpu_before = checker_cpu();
    let config = ControllerConfig {
        sync_period: options.sync_period,
        workers: options.workers.max(1),
        // One decision kept per HPA: the load harness reads none, and ten
        // per HPA would be most of the controller's memory at 10,000 HPAs.
        decisions_kept: 1,
        ..ControllerConfig::default()
    };
    let extensions = Extensions {
        observer: Some(Arc::clone(&collector) as Arc<dyn ReconcileObserver>),
        scale_from_cache: options.optimize,
        metrics_cache: options
            .optimize
            .then(|| (options.sync_period / 10).min(Duration::from_secs(1))),
        // The fake metrics server returns every series of a metric.
        share_external: options.optimize,
    };
    let upstream = options.controller == ControllerKind::Upstream;
    let (controller, watch) = if upstream {
        let Cluster::Remote(remote) = cluster else {
            return Err(LoadError::Unsupported(
                "--controller upstream needs --backend kubeconfig".into(),
            ));
        };
        let measure_from_ts = jiff::Timestamp::now()
            + jiff::SignedDuration::try_from(options.warmup).unwrap_or_default();
        (
            None,
            Some(super::upstream::LogWatch::start(
                remote.control().clone(),
                measure_from_ts,
            )),
        )
    } else {
        let controller_client = if options.kube_api_qps > 0.0 {
            let Cluster::Remote(remote) = cluster else {
                return Err(LoadError::Unsupported(
                    "--kube-api-qps needs a cluster in its own process (--backend sim-process or kubeconfig)".into(),
                ));
            };
            remote
                .controller_client(options.kube_api_qps, options.kube_api_burst)
                .await?
        } else {
            client.clone()
        };
        (
            Some(ControllerHandle::start_with(
                controller_client,
                ControllerOptions {
                    config,
                    clock: Arc::new(SystemClock),
                    mode: SyncMode::Periodic,
                    identity: "hpa-harness-load".into(),
                    leader_election: None,
                    sync_timeout: Duration::from_secs(60),
                },
                extensions,
            )),
            None,
        )
    };

    // Drive the metrics profile and the progress bar until the end.
    let bar = progress_bar(options);
    let tick = Duration::from_millis(250);
    let mut factor = 1.0;
    let mut last_change = Instant::now();
    let mut warming = !options.warmup.is_zero();
    let mut last_rescript = Instant::now();
    loop {
        let elapsed = started.elapsed();
        if elapsed >= total {
            break;
        }
        if warming && elapsed >= options.warmup {
            // The measured window starts: requests and CPU from here.
            warming = false;
            cluster.reset_requests().await?;
            cpu_before = report::cpu_seconds();
            checker_cpu_before = checker_cpu();
            cluster_cpu_before = cluster_cpu(cluster.child_pid());
        }
        cluster.tick();
        let want = options.profile.factor(elapsed, total, options.sync_period);
        // Changing 100,000 pods' metrics takes a moment: at most every
        // half sync period.
        if want != factor && last_change.elapsed() >= options.sync_period / 2 {
            factor = want;
            last_change = Instant::now();
            let changes = metric_changes(&pods, &externals, options.pods_per_hpa, factor);
            cluster.apply(&changes).await?;
        }
        // Scale-ups create pods and scale-downs delete them: script the new
        // ones at the current load and drop the gone ones, every half sync
        // period (not needed when the load is steady: nothing scales).
        if options.profile != MetricProfile::Steady
            && last_rescript.elapsed() >= options.sync_period / 2
        {
            last_rescript = Instant::now();
            let now_pods = list_pods(&client, namespaces).await?;
            let changes = pod_churn(&pods, &now_pods, factor);
            if !changes.is_empty() {
                cluster.apply(&changes).await?;
            }
            pods = now_pods;
        }
        bar.set_position(elapsed.as_millis() as u64);
        bar.set_message(format!(
            "{}{} syncs, load x{factor:.1}",
            if warming { "warm-up: " } else { "" },
            collector.seen.load(Ordering::Relaxed)
        ));
        let next_edge = if warming { options.warmup } else { total };
        tokio::time::sleep(tick.min(next_edge.saturating_sub(elapsed))).await;
    }
    let run_seconds = measure_from.elapsed().as_secs_f64();
    if let Some(controller) = controller {
        controller.shutdown().await.map_err(LoadError::Controller)?;
    }
    let watched = match watch {
        Some(w) => Some(w.finish().await),
        None => None,
    };
    bar.finish_and_clear();
    let cpu = report::cpu_seconds() - cpu_before;
    let checker_cpu_seconds = checker_cpu() - checker_cpu_before;
    let cluster_cpu_seconds = cluster_cpu(cluster.child_pid()) - cluster_cpu_before;
    let cluster_peak_rss_bytes = cluster.child_pid().map_or(0, report::peak_rss_bytes_of);
    collector.close();
    let mut tally = checker
        .join()
        .map_err(|_| LoadError::Invalid("the disagreement checker panicked".into()))?;
    if let Some(seen) = watched {
        if seen.dropped > 0 {
            tracing::warn!(
                dropped = seen.dropped,
                "the fake metrics server's request log overflowed: syncs are undercounted"
            );
        }
        tally.syncs = seen.syncs;
        tally.intervals = seen.intervals;
        tally.synced = seen.synced;
        tally.synced_after_warmup = seen.synced_after_warmup;
    }
    for example in &tally.examples {
        tracing::warn!(%example, "decision disagrees with the pure core");
    }

    let counted = cluster.request_counts().await?;
    let requests_counted = counted.is_some();
    let requests = counted.unwrap_or_default();
    let syncs = tally.syncs.max(1) as f64;
    let by_kind: BTreeMap<String, f64> = requests
        .iter()
        .map(|((verb, resource), n)| (format!("{verb} {resource}"), *n as f64 / syncs))
        .collect();
    let total: u64 = requests.values().sum();
    Ok(LoadReport {
        controller: options.controller.as_str().into(),
        backend: options.backend.as_str().into(),
        metric_profile: options.profile.as_str().into(),
        hpas: options.hpas as u64,
        pods_per_hpa: options.pods_per_hpa as u64,
        workers: options.workers as u64,
        sync_period_seconds: options.sync_period.as_secs_f64(),
        duration_seconds: run_seconds,
        clock: "wall".into(),
        syncs: tally.syncs,
        syncs_per_second: tally.syncs as f64 / run_seconds.max(1e-9),
        sync_interval_seconds: Summary::of(&tally.intervals),
        reconcile_latency_seconds: Summary::of(&tally.latencies),
        api_requests_per_sync: total as f64 / syncs,
        api_requests_by_kind: by_kind,
        hpas_never_synced: (options.hpas as u64).saturating_sub(tally.synced.len() as u64),
        hpas_not_synced_after_warmup: (options.hpas as u64)
            .saturating_sub(tally.synced_after_warmup.len() as u64),
        warmup_seconds: options.warmup.as_secs_f64(),
        cluster_peak_rss_bytes,
        cluster_cpu_seconds,
        requests_counted,
        disagreements: tally.disagreements,
        peak_rss_bytes: report::peak_rss_bytes(),
        cpu_seconds: cpu,
        machine: report::machine_description(),
        optimized: options.optimize,
        setup_rss_bytes: setup_rss,
        checker_cpu_seconds,
        cpu_ms_per_sync: if upstream {
            0.0
        } else {
            LoadReport::cpu_ms_per_sync_of(cpu, checker_cpu_seconds, tally.syncs)
        },
    })
}

fn progress_bar(options: &LoadOptions) -> indicatif::ProgressBar {
    if !options.progress {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some((options.warmup + options.duration).as_millis() as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {percent}% {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_kinds_are_mixed_round_robin() {
        let kinds: Vec<MetricKind> = (0..8).map(MetricKind::of).collect();
        assert_eq!(kinds[0], MetricKind::Cpu);
        assert_eq!(kinds[3], MetricKind::External);
        assert_eq!(kinds[4], MetricKind::Cpu);
    }

    #[test]
    fn hpas_are_spread_over_namespaces() {
        let t = targets(&LoadOptions {
            hpas: 250,
            hpas_per_namespace: 100,
            ..LoadOptions::default()
        });
        assert_eq!(t[99].namespace, "load-0");
        assert_eq!(t[100].namespace, "load-1");
        assert_eq!(t[249].namespace, "load-2");
    }

    #[test]
    fn profiles_shape_the_load() {
        let d = Duration::from_secs(100);
        let p = Duration::from_secs(15);
        assert_eq!(
            MetricProfile::Steady.factor(Duration::from_secs(90), d, p),
            1.0
        );
        assert_eq!(MetricProfile::Ramp.factor(Duration::ZERO, d, p), 1.0);
        assert!((MetricProfile::Ramp.factor(d, d, p) - 1.6).abs() < 1e-9);
        assert_eq!(
            MetricProfile::Spiky.factor(Duration::from_secs(10), d, p),
            1.0
        );
        assert_eq!(
            MetricProfile::Spiky.factor(Duration::from_secs(40), d, p),
            1.8
        );
    }

    #[test]
    fn the_cluster_side_objects_are_valid() {
        let t = &targets(&LoadOptions::default())[3];
        let h = hpa(t, 10).unwrap();
        assert_eq!(h.spec.max_replicas, 20);
        assert_eq!(h.spec.metrics.unwrap()[0].type_, "External");
        let d = deployment(t, 10, false).unwrap();
        assert_eq!(d.spec.unwrap().replicas, Some(10));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_kubeconfig_backend_needs_a_kubeconfig() {
        let err = run(&LoadOptions {
            backend: BackendKind::Kubeconfig,
            ..LoadOptions::default()
        })
        .await
        .unwrap_err();
        assert!(matches!(err, LoadError::Invalid(_)), "{err}");
    }

    #[test]
    fn new_pods_get_metrics_and_gone_pods_are_removed() {
        let pod = |name: &str| ("ns".to_string(), name.to_string(), BTreeMap::new());
        let changes = pod_churn(&[pod("a"), pod("b")], &[pod("b"), pod("c")], 1.5);
        assert_eq!(changes.len(), 2);
        let Change::Pod(added) = &changes[0] else {
            panic!("not a pod: {:?}", changes[0]);
        };
        assert_eq!(added.name, "c");
        assert_eq!(added.containers[0].cpu, Some(Value("150m".into())));
        assert!(matches!(&changes[1], Change::RemovePod(r) if r.name == "a"));
        assert!(pod_churn(&[pod("a")], &[pod("a")], 1.0).is_empty());
    }

    #[test]
    fn on_a_real_cluster_load_pods_go_on_the_fake_node() {
        let t = &targets(&LoadOptions::default())[0];
        let d = deployment(t, 2, true).unwrap();
        let template = d.spec.unwrap().template;
        let pod = template.spec.unwrap();
        assert_eq!(
            pod.node_selector,
            Some(crate::cluster::fake_node::node_selector())
        );
        assert_eq!(pod.tolerations.map(|t| t.len()), Some(1));
        let labels = template.metadata.unwrap().labels.unwrap();
        assert!(labels.contains_key(crate::cluster::fake_node::MANAGED_POD_LABEL));
        let plain = deployment(t, 2, false).unwrap().spec.unwrap().template;
        assert!(plain.spec.unwrap().node_selector.is_none());
    }
}
