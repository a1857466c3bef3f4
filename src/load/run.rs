//! One load run: N deployments with HPAs over a mix of metric types
//! (`load::workload`), their metrics scripted in the fake metrics server
//! (changing over time per the profile), our controller in periodic mode on
//! the wall clock (real time is what is measured) or the cluster's own,
//! stopping by itself after the duration. The cluster comes from the
//! testbed ([`super::cluster`]); our controller is measured from inside
//! (`load::collect`).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use fake_metrics_server::script::{
    Defaults, Duration as ScriptDuration, ExternalSpec, Fault, Faults, Script, Value,
};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, PostParams};

use super::cluster::LoadCluster;
use super::collect::{Collector, Tally};
use super::endpoint::{ControllerEndpoint, CounterWatch, SyncsWatch, syncs_poll};
use super::options::{LoadError, LoadOptions, MetricProfile};
use super::pod_wait::{PodProgress, PodWait};
use super::proc_stats;
use super::report::LoadReport;
use super::stats::Summary;
use super::upstream::{LogWatch, Seen, SyncSource};
use super::workload::{
    CREATE_CONCURRENCY, LoadPod, MetricKind, Target, deployment, external_metric, hpa, invalid,
    list_pods, metric_changes, pod_churn, pod_metrics, rule, setup, targets,
};
use crate::testbed::controller::{self, Role};
use crate::testbed::{BackendKind, ControllerKind};
use hpa_controller::{ControllerConfig, ControllerHandle, Extensions, ReconcileObserver};

/// Runs one load and returns its report. Disagreement examples (if any)
/// are logged as warnings.
pub async fn run(options: &LoadOptions) -> Result<LoadReport, LoadError> {
    if options.controller() == ControllerKind::Upstream
        && options.backend != BackendKind::Kubeconfig
    {
        return Err(LoadError::Unsupported(
            "--controller upstream measures the controller of the cluster given with --backend kubeconfig; the simulated cluster has none of its own".into(),
        ));
    }
    if options.controller_metrics_url.is_some() && options.controller() != ControllerKind::Upstream
    {
        return Err(LoadError::Unsupported(
            "--controller-metrics-url reads the external controller of --controller upstream; ours is observed in this process".into(),
        ));
    }
    options.validate()?;
    let targets = targets(options);
    let namespaces: Vec<String> = {
        let mut seen = HashSet::new();
        targets
            .iter()
            .filter(|t| seen.insert(t.namespace.clone()))
            .map(|t| t.namespace.clone())
            .collect()
    };
    let cluster = LoadCluster::start(options, &namespaces).await?;
    let options = &match under_cluster_release(options, &cluster).await {
        Ok(options) => options,
        Err(e) => {
            cluster.stop().await;
            return Err(e);
        }
    };
    let result = if cluster.outlives_the_run() {
        on_shared_cluster(options, &targets, &namespaces, &cluster).await
    } else {
        run_on(options, &targets, &namespaces, &cluster).await
    };
    cluster.stop().await;
    result
}

/// The options under the cluster's own release when no release was given:
/// its `/version` (a sim outside this process answers its own) decides the
/// gates' defaults, as it does for `hpa-harness controller`. The sim in
/// this process runs the newest stable release.
pub(super) async fn under_cluster_release(
    options: &LoadOptions,
    cluster: &LoadCluster,
) -> Result<LoadOptions, LoadError> {
    let mut options = options.clone();
    let Some(gates) = options.gates_under_cluster_release.take() else {
        return Ok(options);
    };
    let release = if cluster.is_in_process() {
        options.settings.decision.feature_gates.version()
    } else {
        crate::testbed::start::cluster_release(&cluster.client()).await
    };
    options.settings.decision.feature_gates = hpa_core::gates::FeatureGates::parse(release, &gates)
        .map_err(|e| {
            LoadError::Invalid(format!(
                "--feature-gates under the cluster's release {release}: {e}"
            ))
        })?;
    Ok(options)
}

/// A run on a cluster that outlives it: what an earlier run left is
/// deleted first; what this one makes is deleted when it ends, fails or is
/// interrupted (SIGINT, SIGTERM), so the next run finds the cluster as
/// this one did.
async fn on_shared_cluster(
    options: &LoadOptions,
    targets: &[Target],
    namespaces: &[String],
    cluster: &LoadCluster,
) -> Result<LoadReport, LoadError> {
    let client = cluster.client();
    let left = super::cleanup::leftovers(&client).await?;
    if !left.is_empty() {
        tracing::warn!(namespaces = ?left, "deleting what an earlier load run left");
        super::cleanup::delete_namespaces(&client, &left).await?;
    }
    let result = tokio::select! {
        result = run_on(options, targets, namespaces, cluster) => result,
        () = hpa_shutdown::shutdown_signal() => Err(LoadError::Interrupted),
    };
    tracing::info!(namespaces = namespaces.len(), "deleting the load");
    let cleaned = super::cleanup::delete_namespaces(&client, namespaces).await;
    if let Err(e) = cluster.clear_script().await {
        tracing::warn!(error = %e, "emptying the fake metrics server's script");
    }
    match (result, cleaned) {
        (Ok(report), Ok(())) => Ok(report),
        // The measurement stands; the next run deletes what is left first.
        (Ok(report), Err(e)) => {
            tracing::error!(error = %e, "the load could not be deleted; the next run deletes what is left");
            Ok(report)
        }
        (Err(e), Ok(())) => Err(e),
        (Err(e), Err(cleanup)) => {
            tracing::error!(error = %cleanup, "the load could not be deleted");
            Err(e)
        }
    }
}

/// Builds the load on `cluster`, runs the controller and measures it.
async fn run_on(
    options: &LoadOptions,
    targets: &[Target],
    namespaces: &[String],
    cluster: &LoadCluster,
) -> Result<LoadReport, LoadError> {
    let built = build(options, targets, namespaces, cluster).await?;

    // The controller, measured from here; the build's peak is left behind.
    let setup = Setup {
        peak_reset: proc_stats::reset_peak_rss(),
        rss: proc_stats::current_rss_bytes(),
    };
    cluster.reset_requests().await?;
    let started = Instant::now();
    let measure_from = started + options.warmup;
    let (collector, checker, checker_task) = Collector::start(measure_from);
    let mut usage = Usage::now(cluster, checker_task);
    let controller = start_controller(options, targets, cluster, &collector).await?;

    drive(
        options, namespaces, cluster, built, &collector, started, &mut usage,
    )
    .await?;
    let run_seconds = measure_from.elapsed().as_secs_f64();
    let memory = controller.memory_report();
    let watched = controller.stop().await?;
    let usage = usage.since(cluster);
    collector.close();
    let mut tally = checker
        .join()
        .map_err(|_| LoadError::Invalid("the disagreement checker panicked".into()))?;
    let counted_by = match watched {
        Some((seen, source)) => {
            tally.syncs = seen.syncs;
            tally.failures = seen.failures;
            tally.intervals = seen.intervals;
            tally.intervals_by_metric = seen.intervals_by_metric;
            tally.synced = seen.synced;
            tally.synced_after_warmup = seen.synced_after_warmup;
            source
        }
        None => SyncSource::Observer,
    };
    for example in &tally.examples {
        tracing::warn!(%example, "decision disagrees with the pure core");
    }
    let counted = cluster.request_counts().await?;
    Ok(LoadReport {
        memory,
        ..load_report(
            options,
            &tally,
            counted_by,
            counted,
            run_seconds,
            usage,
            setup,
        )
    })
}

/// The load as built: the pods the metrics script knows and the external
/// series.
pub(super) struct Built {
    pods: Vec<LoadPod>,
    externals: Vec<Target>,
    /// The pods' metrics come from rules ([`LoadCluster::uses_rules`]).
    rules: bool,
}

/// Deployments (the sim creates their pods at once), then the pods' names
/// for the metrics script, then the HPAs.
pub(super) async fn build(
    options: &LoadOptions,
    targets: &[Target],
    namespaces: &[String],
    cluster: &LoadCluster,
) -> Result<Built, LoadError> {
    cluster.create_namespaces(namespaces).await?;
    let client = cluster.client();
    let on_fake_node = cluster.is_real();
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
    let rules = cluster.uses_rules();
    let mut pods = if rules {
        Vec::new()
    } else {
        list_pods(&client, namespaces).await?
    };
    let externals: Vec<Target> = targets
        .iter()
        .filter(|t| t.kind == MetricKind::External)
        .cloned()
        .collect();
    let mut initial = script(options, &pods, &externals);
    if rules {
        initial.rules = namespaces.iter().map(|ns| rule(ns, 1.0)).collect();
    }
    cluster.load_script(&initial).await?;
    let pod_count = if rules {
        pods_with_metrics(
            cluster,
            options.hpas * options.pods_per_hpa,
            options.progress,
        )
        .await?
    } else {
        pods.len()
    };
    if on_fake_node {
        pods_running(&client, namespaces, options.hpas * options.pods_per_hpa).await?;
    }
    // The harness's own state should not be counted as the controller's
    // memory: a steady load never rescripts pods.
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
    Ok(Built {
        pods,
        externals,
        rules,
    })
}

/// Waits until the fake metrics server's rules give values to `want` pods
/// (it learns them from the cluster as its Deployments create them), as
/// long as they keep coming ([`pod_wait`](super::pod_wait)), and answers
/// how many they are. A progress bar shows them come; a server that learns
/// no pods (started without `--watch-pods`) is named as the cause.
async fn pods_with_metrics(
    cluster: &LoadCluster,
    want: usize,
    progress: bool,
) -> Result<usize, LoadError> {
    let bar = pods_bar(progress, want);
    let mut wait = PodWait::new(want, Instant::now());
    loop {
        let summary = cluster.metrics_summary().await?.unwrap_or_default();
        let now = Instant::now();
        bar.set_position(summary.pods_from_rules.min(want) as u64);
        match wait.observe(summary.pods_from_rules, now) {
            PodProgress::Done => {
                bar.finish_and_clear();
                if let Some(rate) = wait.rate() {
                    tracing::info!(
                        pods = want,
                        per_second = rate,
                        "the cluster created the load's pods"
                    );
                }
                return Ok(summary.pods_from_rules);
            }
            PodProgress::Stalled => {
                bar.abandon();
                return Err(LoadError::MetricsNotReady(
                    wait.stalled(now, summary.known_pods),
                ));
            }
            PodProgress::Waiting => {}
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// How long the fake node may take to run the load's pods.
const PODS_RUNNING_TIMEOUT: Duration = Duration::from_secs(300);

/// On a real cluster: waits until the fake node runs `want` of the load's
/// pods (it binds and starts them one after another), so that the first
/// syncs do not find them Pending.
async fn pods_running(
    client: &kube::Client,
    namespaces: &[String],
    want: usize,
) -> Result<(), LoadError> {
    use k8s_openapi::api::core::v1::Pod;
    let deadline = Instant::now() + PODS_RUNNING_TIMEOUT;
    let managed = format!(
        "{}=true",
        crate::testbed::cluster::fake_node::MANAGED_POD_LABEL
    );
    loop {
        let mut running = 0;
        for ns in namespaces {
            let list = Api::<Pod>::namespaced(client.clone(), ns)
                .list(&kube::api::ListParams::default().labels(&managed))
                .await
                .map_err(setup(format!("list the pods of {ns}")))?;
            running += list
                .items
                .iter()
                .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
                .count();
        }
        if running >= want {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(LoadError::Cluster {
                action: "run the load's pods on the fake node".to_owned(),
                message: format!(
                    "after {}s {running} of the load's {want} pods run",
                    PODS_RUNNING_TIMEOUT.as_secs()
                ),
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The bar of the pods that have metrics (hidden unless `progress`).
fn pods_bar(progress: bool, want: usize) -> indicatif::ProgressBar {
    if !progress {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(want as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} pods with metrics, {per_sec}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// What KEDA's metrics adapter answers an External list whose selector
/// names no ScaledObject (its `pkg/provider`), a 500 through the API server.
const KEDA_REFUSAL: &str = "scaledObject name is not specified";

/// The fake metrics server's script of the load at its start.
fn script(options: &LoadOptions, pods: &[LoadPod], externals: &[Target]) -> Script {
    Script {
        faults: Faults {
            external: options.refuse_external_lists.then(|| Fault {
                status: Some(500),
                message: Some(KEDA_REFUSAL.into()),
                unselected: true,
                ..Fault::default()
            }),
            ..Faults::default()
        },
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
        // A 1 s window (metrics-server's is 15 s to 30 s): CPU samples of
        // pods count once they have been Ready for a window (upstream's
        // rule; before that all of an HPA's pods are unready and its sync
        // fails), so an HPA's first sync, a sync period after it appears,
        // finds valid samples even with the tests' 2 s period.
        defaults: Defaults {
            timestamp: None,
            window: Some(ScriptDuration(
                jiff::SignedDuration::try_from(METRICS_WINDOW)
                    .unwrap_or(jiff::SignedDuration::ZERO),
            )),
        },
        ..Script::default()
    }
}

/// The metrics window of the load's pod samples (metrics-server's is 15 s
/// to 30 s; short here so that short runs measure).
const METRICS_WINDOW: Duration = Duration::from_secs(1);

/// CPU seconds of this process, of its disagreement checker thread and of
/// the cluster's process, from a starting point.
struct Usage {
    cpu_before: f64,
    checker_task: Option<String>,
    checker_cpu_before: f64,
    cluster_cpu_before: f64,
}

/// What [`Usage::since`] measured.
struct Used {
    cpu_seconds: f64,
    checker_cpu_seconds: f64,
    cluster_cpu_seconds: f64,
    cluster_peak_rss_bytes: u64,
}

impl Usage {
    fn cluster_cpu(cluster: &LoadCluster) -> f64 {
        cluster.child_pid().map_or(0.0, proc_stats::cpu_seconds_of)
    }

    fn checker_cpu(task: Option<&str>) -> f64 {
        task.map_or(0.0, proc_stats::thread_cpu_seconds)
    }

    /// Counting from now.
    fn now(cluster: &LoadCluster, checker_task: Option<String>) -> Self {
        Self {
            cpu_before: proc_stats::cpu_seconds(),
            checker_cpu_before: Self::checker_cpu(checker_task.as_deref()),
            checker_task,
            cluster_cpu_before: Self::cluster_cpu(cluster),
        }
    }

    /// Counting from now again, with the same checker thread.
    fn restart(&mut self, cluster: &LoadCluster) {
        *self = Self::now(cluster, self.checker_task.take());
    }

    fn since(&self, cluster: &LoadCluster) -> Used {
        Used {
            cpu_seconds: proc_stats::cpu_seconds() - self.cpu_before,
            checker_cpu_seconds: Self::checker_cpu(self.checker_task.as_deref())
                - self.checker_cpu_before,
            cluster_cpu_seconds: Self::cluster_cpu(cluster) - self.cluster_cpu_before,
            cluster_peak_rss_bytes: cluster.child_pid().map_or(0, proc_stats::peak_rss_bytes_of),
        }
    }
}

/// The controller under test: ours, run here, or the cluster's own,
/// watched from outside.
enum Measured {
    Ours(Box<ControllerHandle>),
    Upstream(Box<UpstreamWatch>),
}

impl Measured {
    /// Where our controller's memory goes now (`None`: not ours, or not
    /// measurable). Measured on this thread, after the measured window.
    fn memory_report(&self) -> Option<hpa_controller::memory_report::MemoryReport> {
        match self {
            Self::Ours(controller) => controller.memory_report(),
            Self::Upstream(_) => None,
        }
    }

    /// Stops ours, or stops watching and answers what was seen and which
    /// source counted it.
    async fn stop(self) -> Result<Option<(Seen, SyncSource)>, LoadError> {
        match self {
            Self::Ours(controller) => {
                controller.shutdown().await.map_err(LoadError::Controller)?;
                Ok(None)
            }
            Self::Upstream(watch) => Ok(Some(watch.finish().await)),
        }
    }
}

/// What watches a controller run elsewhere: the fake metrics server's
/// request log always; with `--controller-metrics-url`, the controller's
/// reconciliation counter and, when it serves one, its `/debug/syncs`.
struct UpstreamWatch {
    log: LogWatch,
    counter: Option<CounterWatch>,
    syncs: Option<SyncsWatch>,
}

impl UpstreamWatch {
    async fn start(
        options: &LoadOptions,
        targets: &[Target],
        control: fake_metrics_server::client::ControlClient,
    ) -> Result<Self, LoadError> {
        let measure_from = jiff::Timestamp::now()
            + jiff::SignedDuration::try_from(options.warmup).unwrap_or_default();
        let log = LogWatch::start(control, measure_from);
        let Some(url) = &options.controller_metrics_url else {
            return Ok(Self {
                log,
                counter: None,
                syncs: None,
            });
        };
        let endpoint = ControllerEndpoint::new(url)?;
        // A wrong URL fails the run here, not after it.
        let counter = CounterWatch::start(endpoint.clone(), options.warmup).await?;
        let syncs = match endpoint
            .sync_times(Some(jiff::Timestamp::now()), None)
            .await
        {
            Ok(_) => {
                let hpas = targets
                    .iter()
                    .map(|t| format!("{}/{}", t.namespace, t.name))
                    .collect();
                Some(SyncsWatch::start(
                    endpoint,
                    hpas,
                    measure_from,
                    syncs_poll(options.settings.sync_period),
                ))
            }
            Err(e) => {
                tracing::info!(
                    error = %e,
                    "the controller serves no /debug/syncs (not hpa-controller): per-HPA syncs only from the request log"
                );
                None
            }
        };
        Ok(Self {
            log,
            counter: Some(counter),
            syncs,
        })
    }

    /// Stops watching; the syncs from the best source that saw them all
    /// ([`SyncSource`]): `/debug/syncs`; else the request log when every
    /// request named its HPA (kube-controller-manager's); else the
    /// reconciliation counter, in aggregate; else the log, as a lower bound.
    async fn finish(self) -> (Seen, SyncSource) {
        let log = self.log.finish().await;
        if log.dropped > 0 {
            tracing::warn!(
                dropped = log.dropped,
                "the fake metrics server's request log overflowed: syncs seen there are undercounted"
            );
        }
        let counter = match self.counter {
            Some(counter) => counter.finish().await,
            None => None,
        };
        let decisions = match self.syncs {
            Some(syncs) => Some(syncs.finish().await),
            None => None,
        };
        if let Some(seen) = &decisions {
            tracing::info!(
                load_syncs = seen.syncs,
                all_reconciliations = counter,
                "syncs counted from the controller's /debug/syncs; its /metrics counts every HPA it syncs"
            );
        } else if log.shared_lists > 0 {
            tracing::warn!(
                shared_lists = log.shared_lists,
                "the controller listed metrics for many HPAs at once: the request log does not see every sync, and cannot say which HPAs synced"
            );
        }
        choose_source(log, decisions, counter)
    }
}

/// The syncs of the best source that saw them all (see
/// [`UpstreamWatch::finish`]): `decisions` from `/debug/syncs`, the request
/// `log`, the reconciliation `counter` of the measured window.
fn choose_source(
    mut log: Seen,
    decisions: Option<Seen>,
    counter: Option<u64>,
) -> (Seen, SyncSource) {
    // The server's failed answers are failed syncs whoever counts the rest.
    let failures = std::mem::take(&mut log.failures);
    let (mut seen, source) = if let Some(seen) = decisions {
        (seen, SyncSource::DecisionLog)
    } else if log.shared_lists == 0 {
        (log, SyncSource::RequestLog)
    } else {
        match counter {
            Some(syncs) => (Seen::counted(syncs), SyncSource::ControllerMetrics),
            None => {
                // The intervals between the syncs it did see are too long.
                log.intervals.clear();
                log.intervals_by_metric.clear();
                (log, SyncSource::RequestLogLowerBound)
            }
        }
    };
    seen.failures = failures;
    (seen, source)
}

async fn start_controller(
    options: &LoadOptions,
    targets: &[Target],
    cluster: &LoadCluster,
    collector: &Arc<Collector>,
) -> Result<Measured, LoadError> {
    if options.controller() == ControllerKind::Upstream {
        let Some(control) = cluster.control() else {
            return Err(LoadError::Unsupported(
                "--controller upstream needs --backend kubeconfig".into(),
            ));
        };
        return Ok(Measured::Upstream(Box::new(
            UpstreamWatch::start(options, targets, control.clone()).await?,
        )));
    }
    // From 1.37 a new HPA is synced at once (k/k #138294), and so is every
    // HPA of the controller's first list: the load's newest pods must have
    // been Ready for a metrics window by then, or the first sync of each CPU
    // HPA fails for want of valid samples, as it would upstream.
    if options.settings.decision.feature_gates.version() >= hpa_core::KubernetesVersion::V1_37 {
        tokio::time::sleep(METRICS_WINDOW + Duration::from_millis(500)).await;
    }
    let config = ControllerConfig {
        workers: options.settings.workers.max(1),
        // One decision kept per HPA: the load harness reads none, and ten
        // per HPA would be most of the controller's memory at 10,000 HPAs.
        decisions_kept: 1,
        ..options.settings.clone()
    };
    let extensions = Extensions {
        observer: Some(Arc::clone(collector) as Arc<dyn ReconcileObserver>),
        ..if options.optimize {
            // The fake metrics server returns every series of a metric.
            Extensions::shipped(options.settings.sync_period)
        } else {
            Extensions::default()
        }
    };
    let controller_client = if options.kube_api_qps > 0.0 {
        cluster
            .controller_client(options.kube_api_qps, options.kube_api_burst)
            .await?
    } else {
        cluster.client()
    };
    Ok(Measured::Ours(Box::new(controller::start(
        controller_client,
        config,
        Role::Load {
            clock: cluster.clock(),
            extensions,
        },
    ))))
}

/// Drives the metrics profile and the progress bar until the end; at the
/// end of the warm-up, the request counters and `usage` start again.
async fn drive(
    options: &LoadOptions,
    namespaces: &[String],
    cluster: &LoadCluster,
    built: Built,
    collector: &Collector,
    started: Instant,
    usage: &mut Usage,
) -> Result<(), LoadError> {
    let Built {
        mut pods,
        externals,
        rules,
    } = built;
    let client = cluster.client();
    let total = options.warmup + options.duration;
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
            usage.restart(cluster);
        }
        cluster.tick();
        let want = options
            .profile
            .factor(elapsed, total, options.settings.sync_period);
        // Changing 100,000 pods' metrics takes a moment: at most every
        // half sync period.
        if want != factor && last_change.elapsed() >= options.settings.sync_period / 2 {
            factor = want;
            last_change = Instant::now();
            let changes = metric_changes(&pods, &externals, options.pods_per_hpa, factor);
            cluster.apply(&changes).await?;
            if rules {
                cluster
                    .set_rules(namespaces.iter().map(|ns| rule(ns, factor)).collect())
                    .await?;
            }
        }
        // Scale-ups create pods and scale-downs delete them: script the new
        // ones at the current load and drop the gone ones, every half sync
        // period (not needed when the load is steady: nothing scales).
        if options.profile != MetricProfile::Steady
            && !rules
            && last_rescript.elapsed() >= options.settings.sync_period / 2
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
    bar.finish_and_clear();
    Ok(())
}

/// This process when the load was built and the controller about to start.
struct Setup {
    /// Resident memory then: the load's own state (and, with `sim`, the
    /// cluster's).
    rss: u64,
    /// Whether the peak was reset then, so the report's peak is the run's.
    peak_reset: bool,
}

/// The report of a finished run.
fn load_report(
    options: &LoadOptions,
    tally: &Tally,
    counted_by: SyncSource,
    counted: Option<BTreeMap<(String, String), u64>>,
    run_seconds: f64,
    used: Used,
    setup: Setup,
) -> LoadReport {
    let requests_counted = counted.is_some();
    let requests = counted.unwrap_or_default();
    let syncs = tally.syncs.max(1) as f64;
    let by_kind: BTreeMap<String, f64> = requests
        .iter()
        .map(|((verb, resource), n)| (format!("{verb} {resource}"), *n as f64 / syncs))
        .collect();
    let total: u64 = requests.values().sum();
    LoadReport {
        controller: options.controller().name().into(),
        backend: options.backend.name().into(),
        metric_profile: options.profile.as_str().into(),
        hpas: options.hpas as u64,
        pods_per_hpa: options.pods_per_hpa as u64,
        workers: options.settings.workers as u64,
        sync_period_seconds: options.settings.sync_period.as_secs_f64(),
        kubernetes_version: if options.controller() == ControllerKind::Ours {
            options
                .settings
                .decision
                .feature_gates
                .version()
                .to_string()
        } else {
            String::new()
        },
        duration_seconds: run_seconds,
        clock: "wall".into(),
        syncs: tally.syncs,
        syncs_per_second: tally.syncs as f64 / run_seconds.max(1e-9),
        sync_interval_seconds: Summary::of(&tally.intervals),
        sync_interval_by_metric_seconds: tally
            .intervals_by_metric
            .iter()
            .map(|(metric, intervals)| ((*metric).to_owned(), Summary::of(intervals)))
            .collect(),
        reconcile_latency_seconds: Summary::of(&tally.latencies),
        api_requests_per_sync: total as f64 / syncs,
        api_requests_by_kind: by_kind,
        // Counted only from a source that tells every HPA's syncs apart.
        hpas_never_synced: counted_by
            .per_hpa()
            .then(|| (options.hpas as u64).saturating_sub(tally.synced.len() as u64)),
        hpas_not_synced_after_warmup: counted_by
            .per_hpa()
            .then(|| (options.hpas as u64).saturating_sub(tally.synced_after_warmup.len() as u64)),
        syncs_counted_by: counted_by.name().into(),
        failed_syncs: tally.failures.total,
        failed_sync_reasons: tally.failures.by_reason.clone(),
        memory: None,
        warmup_seconds: options.warmup.as_secs_f64(),
        cluster_peak_rss_bytes: used.cluster_peak_rss_bytes,
        cluster_cpu_seconds: used.cluster_cpu_seconds,
        requests_counted,
        disagreements: tally.disagreements,
        peak_rss_bytes: proc_stats::peak_rss_bytes(),
        cpu_seconds: used.cpu_seconds,
        machine: proc_stats::machine_description(),
        optimized: options.optimize,
        setup_rss_bytes: setup.rss,
        peak_rss_since_controller_start: setup.peak_reset,
        checker_cpu_seconds: used.checker_cpu_seconds,
        cpu_ms_per_sync: if options.controller() == ControllerKind::Upstream {
            0.0
        } else {
            LoadReport::cpu_ms_per_sync_of(used.cpu_seconds, used.checker_cpu_seconds, tally.syncs)
        },
    }
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
    fn options_that_make_no_measurement_are_refused_before_anything_is_built() {
        assert!(LoadOptions::default().validate().is_ok());
        let refused = |change: &dyn Fn(&mut LoadOptions), named: &str| {
            let mut options = LoadOptions::default();
            change(&mut options);
            let message = options.validate().unwrap_err().to_string();
            assert!(message.contains(named), "{named}: {message}");
        };
        refused(&|o| o.hpas = 0, "--hpas");
        refused(&|o| o.pods_per_hpa = 0, "--pods-per-hpa");
        refused(&|o| o.settings.workers = 0, "--workers must be at least 1");
        refused(&|o| o.hpas_per_namespace = 0, "--hpas-per-namespace");
        refused(
            &|o| o.settings.sync_period = Duration::ZERO,
            "--sync-period must be positive",
        );
        refused(&|o| o.kube_api_qps = f64::NAN, "--kube-api-qps");
        refused(
            &|o| o.kube_api_qps = 20.0,
            "--backend sim-process or kubeconfig",
        );
        refused(
            &|o| o.duration = Duration::from_secs(10),
            "--warmup plus --duration (10s) must be longer than --sync-period (15s)",
        );
        refused(
            &|o| {
                o.warmup = Duration::from_secs(5);
                o.duration = Duration::from_secs(10);
            },
            "(15s)",
        );
        let mut short_period = LoadOptions {
            duration: Duration::from_secs(3),
            settings: ControllerConfig {
                sync_period: Duration::from_millis(1500),
                ..ControllerConfig::default()
            },
            ..LoadOptions::default()
        };
        assert!(short_period.validate().is_ok());
        short_period.kube_api_qps = 20.0;
        short_period.backend = BackendKind::SimProcess;
        assert!(short_period.validate().is_ok());
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
    fn the_source_that_saw_every_sync_counts_them() {
        let at = |s: i64| jiff::Timestamp::from_second(1_800_000_000 + s).unwrap();
        let seen = |shared_lists: u64| {
            let mut seen = Seen::default();
            for s in [0, 15, 30] {
                seen.record_sync("load-0/w1".into(), at(s), at(0));
            }
            seen.shared_lists = shared_lists;
            seen
        };
        // kube-controller-manager: every request names its HPA.
        let (log, source) = choose_source(seen(0), None, Some(99));
        assert_eq!(source, SyncSource::RequestLog);
        assert_eq!((log.syncs, log.intervals.len()), (3, 2));
        // Our controller with /debug/syncs: its decisions, whatever the log.
        let mut decisions = Seen::default();
        decisions.record_sync("load-0/w2".into(), at(1), at(0));
        let (counted, source) = choose_source(seen(4), Some(decisions), Some(99));
        assert_eq!(source, SyncSource::DecisionLog);
        assert_eq!(counted.syncs, 1);
        assert!(counted.synced.contains("load-0/w2"));
        // Shared lists and only /metrics: the counter, no HPA named.
        let (counted, source) = choose_source(seen(4), None, Some(99));
        assert_eq!(source, SyncSource::ControllerMetrics);
        assert_eq!(counted.syncs, 99);
        assert!(counted.synced.is_empty() && counted.intervals.is_empty());
        // Shared lists and nothing else: the log, as a lower bound, without
        // the intervals its missing syncs stretch.
        let (counted, source) = choose_source(seen(4), None, None);
        assert_eq!(source, SyncSource::RequestLogLowerBound);
        assert_eq!(counted.syncs, 3);
        assert!(counted.intervals.is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_controller_metrics_url_is_for_an_external_controller() {
        let err = run(&LoadOptions {
            controller_metrics_url: Some("http://127.0.0.1:1/metrics".into()),
            ..LoadOptions::default()
        })
        .await
        .unwrap_err();
        assert!(matches!(err, LoadError::Unsupported(_)), "{err}");
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
}
