//! Running the controller: reflectors for HPAs and pods, the work queue, N
//! workers, optional leader election, and the [`ControllerHandle`] through
//! which the CLI and the harness drive it.
//!
//! Two ways to trigger syncs ([`SyncMode`]):
//! - `Periodic` (wall clock): an HPA is queued when it appears or its spec
//!   changes, and again one sync period after each reconcile; failures are
//!   retried after a per-key backoff.
//! - `Manual` (virtual clock): nothing runs by itself; the harness moves the
//!   shared clock and calls [`ControllerHandle::sync_all_now`], so no real
//!   time passes and runs are reproducible.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt;
use hpa_core::clock::Clock;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, ListParams};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::config::ControllerConfig;
use super::consistency::WatchProgress;
use super::context::Context;
use super::decisions::DecisionRecord;
use super::deployment_scales::DeploymentScales;
use super::generations::Generations;
pub use super::generations::queued_at_once;
use super::history::{AgedRecommendation, AgedScaleEvent};
use super::hpa_cache::HpaCache;
use super::keys::key_of;
use super::leader::{LeaderElector, LeaseTiming};
use super::memory_report::{MemoryReport, MemorySource};
use super::metrics::ControllerMetrics;
use super::observe::Extensions;
use super::pod_index::PodIndex;
use super::queue::{Backoff, WorkQueue};
use super::ratelimit::WaitSignal;
use super::reconcile::{Reconciled, reconcile};
use super::server::ServerState;
use super::slim_pod::SlimPod;

/// Errors of running the controller.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Another replica took the Lease; upstream exits then, and so does `hpa-harness controller`.
    #[error("lost the leader lease {0}")]
    LostLeadership(String),
    /// The caches did not catch up with the API server in time.
    #[error("the controller's caches did not catch up with the API server within {0:?}")]
    CacheTimeout(Duration),
    /// Listing HPAs or pods for the cache barrier failed.
    #[error("cannot list {what} to check the caches")]
    List {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
    /// `sync_all_now` while another replica leads.
    #[error("this controller does not hold the leader lease")]
    NotLeader,
    /// A sync did not finish in time.
    #[error("HPAs {keys:?} were not reconciled within {timeout:?}")]
    SyncTimeout {
        keys: Vec<String>,
        timeout: Duration,
    },
    /// The controller task failed.
    #[error("the controller task ended abnormally")]
    Join(#[source] tokio::task::JoinError),
}

/// How syncs are triggered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// Wall clock: watch-driven and every sync period.
    Periodic,
    /// Virtual clock: only [`ControllerHandle::sync_all_now`].
    Manual,
}

/// Where and how to hold the leader Lease.
#[derive(Debug, Clone)]
pub struct LeaderElection {
    pub namespace: String,
    pub name: String,
    pub timing: LeaseTiming,
}

/// How to start a controller.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    pub config: ControllerConfig,
    pub clock: Arc<dyn Clock>,
    pub mode: SyncMode,
    /// Reporting instance of events and the Lease holder identity.
    pub identity: String,
    /// `None`: run without election (a single replica, or the harness).
    pub leader_election: Option<LeaderElection>,
    /// How long `sync_all_now` waits for caches and reconciles.
    pub sync_timeout: Duration,
    /// Watch and reconcile only this namespace (`None`: all). Scenarios
    /// running side by side on one real cluster each drive a controller of
    /// their own, which must leave the others' HPAs alone.
    pub namespace: Option<String>,
}

impl ControllerOptions {
    /// Options for the harness: manual syncs on `clock`, no election.
    pub fn manual(config: ControllerConfig, clock: Arc<dyn Clock>) -> Self {
        Self {
            config,
            clock,
            mode: SyncMode::Manual,
            identity: "hpa-harness".into(),
            leader_election: None,
            sync_timeout: Duration::from_secs(60),
            namespace: None,
        }
    }

    /// The same, watching and reconciling only `namespace`.
    #[must_use]
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// An API of kind `K` over the controller's namespace, or all.
    fn api<K>(&self, client: kube::Client) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        scoped_api(client, self.namespace.as_deref())
    }
}

/// An API of kind `K` over `namespace`, or over all namespaces.
fn scoped_api<K>(client: kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    }
}

/// Per-key run counters, so that `sync_all_now` can wait for a run that
/// started after its request.
#[derive(Debug, Default)]
struct Progress {
    runs: Mutex<HashMap<String, RunState>>,
    tick: Mutex<Option<watch::Sender<u64>>>,
}

#[derive(Debug, Default, Clone)]
struct RunState {
    started: u64,
    completed: u64,
    last_error: Option<String>,
}

impl Progress {
    fn new() -> (Arc<Self>, watch::Receiver<u64>) {
        let (tx, rx) = watch::channel(0);
        let progress = Self {
            runs: Mutex::default(),
            tick: Mutex::new(Some(tx)),
        };
        (Arc::new(progress), rx)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, RunState>> {
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Updates the key's entry, allocating its key only the first time
    /// (every sync passes here twice).
    fn update<T>(&self, key: &str, f: impl FnOnce(&mut RunState) -> T) -> T {
        let mut runs = self.lock();
        if let Some(run) = runs.get_mut(key) {
            return f(run);
        }
        f(runs.entry(key.to_string()).or_default())
    }

    fn start(&self, key: &str) -> u64 {
        self.update(key, |run| {
            run.started += 1;
            run.started
        })
    }

    /// Records the end of run `seq` of `key`; a run that found its HPA
    /// deleted (`gone`) drops the key's entry instead, so deleted HPAs leave
    /// no counters behind (a waiter then sees the key as done, see
    /// [`Progress::pending`]).
    fn complete(&self, key: &str, seq: u64, error: Option<String>, gone: bool) {
        if gone {
            self.lock().remove(key);
        } else {
            self.update(key, |run| {
                run.completed = run.completed.max(seq);
                run.last_error = error;
            });
        }
        if let Some(tx) = self
            .tick
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
        {
            tx.send_modify(|n| *n += 1);
        }
    }

    fn started(&self, key: &str) -> u64 {
        self.lock().get(key).map_or(0, |r| r.started)
    }

    fn state(&self, key: &str) -> RunState {
        self.lock().get(key).cloned().unwrap_or_default()
    }

    /// Whether a run of `key` after run `mark` is still to complete. A key
    /// without an entry has not run yet unless its HPA is gone (`exists`
    /// false): a deleted HPA's entry is dropped by its last run.
    fn pending(&self, key: &str, mark: u64, exists: impl FnOnce() -> bool) -> bool {
        match self.lock().get(key) {
            Some(run) => run.completed <= mark,
            None => exists(),
        }
    }

    /// Keys with run counters.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// What one [`ControllerHandle::sync_all_now`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SyncReport {
    /// HPAs reconciled.
    pub reconciled: Vec<String>,
    /// HPAs whose reconcile returned an error, with it (as upstream, the
    /// error is also in the HPA's conditions and events).
    pub errors: Vec<(String, String)>,
}

/// A running controller.
pub struct ControllerHandle {
    ctx: Context,
    queue: WorkQueue<String>,
    mode: SyncMode,
    sync_timeout: Duration,
    progress: Arc<Progress>,
    ticks: watch::Receiver<u64>,
    ready: Arc<AtomicBool>,
    leading: watch::Receiver<bool>,
    shutdown: CancellationToken,
    main: Mutex<Option<JoinHandle<Result<(), RunError>>>>,
    reflectors: Vec<JoinHandle<()>>,
    hpa_progress: Arc<WatchProgress>,
    pod_progress: Arc<WatchProgress>,
    /// Each HPA as last queued: by the watch (periodic), or by a sync on
    /// demand, so that [`ControllerHandle::sync_queued_now`] knows the new
    /// and changed ones.
    generations: Arc<Mutex<Generations>>,
    /// The one namespace watched, if not all.
    namespace: Option<String>,
}

impl std::fmt::Debug for ControllerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerHandle")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl ControllerHandle {
    /// Starts the controller on `client`: reflectors at once, workers once
    /// this replica leads (at once without election).
    pub fn start(client: kube::Client, options: ControllerOptions) -> Self {
        Self::start_with(client, options, Extensions::default())
    }

    /// [`start`](Self::start) with opt-in extensions: an observer of every
    /// reconcile, and request-saving caches (see [`Extensions`]).
    pub fn start_with(
        client: kube::Client,
        options: ControllerOptions,
        extensions: Extensions,
    ) -> Self {
        Self::start_with_metrics(client, options, extensions, ControllerMetrics::new())
    }

    /// [`start_with`](Self::start_with) with the caller's metrics (built on
    /// a registry the caller owns, see [`ControllerMetrics::register`]).
    pub fn start_with_metrics(
        client: kube::Client,
        options: ControllerOptions,
        extensions: Extensions,
        metrics: ControllerMetrics,
    ) -> Self {
        let hpa_cache = HpaCache::default();
        let mut ctx = Context::new(
            client.clone(),
            options.config.clone(),
            Arc::clone(&options.clock),
            &options.identity,
            hpa_cache.clone(),
            metrics,
        );
        ctx.observer = extensions.observer.clone();
        let pod_index = ctx.pod_index.clone();
        if let Some(window) = extensions.metrics_cache {
            ctx.metrics_client = ctx
                .metrics_client
                .clone()
                .with_shared_lists(
                    window,
                    extensions.share_external,
                    Arc::clone(&options.clock),
                )
                .with_pod_cache(pod_index.clone());
        }
        let mut extra_tasks = Vec::new();
        if extensions.scale_from_cache {
            let scales = DeploymentScales::default();
            ctx.deployments = Some(scales.clone());
            extra_tasks.push(tokio::spawn(watch_deployments(
                options.api::<Deployment>(client.clone()),
                scales,
            )));
        }
        let sync_period = options.config.sync_period.max(Duration::from_millis(1));
        let queue = WorkQueue::new(
            // Upstream's HPA queue retries at the sync period (a fixed-interval limiter).
            Backoff {
                base: sync_period,
                max: sync_period,
            },
            ctx.metrics.queue.clone(),
        );
        let (progress, ticks) = Progress::new();
        let ready = Arc::new(AtomicBool::new(false));
        let shutdown = CancellationToken::new();

        let hpa_progress = ctx.consistency.watch();
        let pod_progress = Arc::new(WatchProgress::default());
        let generations = Arc::new(Mutex::new(Generations::default()));
        let hpa_task = tokio::spawn(watch_hpas(
            options.api(client.clone()),
            ctx.clone(),
            queue.clone(),
            options.mode,
            Arc::clone(&hpa_progress),
            Arc::clone(&generations),
        ));
        let pod_task = tokio::spawn(watch_pods(
            options.api::<SlimPod>(client),
            pod_index,
            Arc::clone(&pod_progress),
        ));
        let (caches_ready_tx, caches_ready) = watch::channel(false);
        let ready_task = tokio::spawn(announce_caches_ready(
            hpa_cache,
            ctx.pod_index.clone(),
            Arc::clone(&ready),
            caches_ready_tx,
        ));

        let (leading_tx, leading) = watch::channel(options.leader_election.is_none());
        let main = tokio::spawn(run_main(
            ctx.clone(),
            queue.clone(),
            options.clone(),
            Arc::clone(&progress),
            leading_tx,
            caches_ready,
            shutdown.clone(),
        ));
        Self {
            ctx,
            queue,
            mode: options.mode,
            sync_timeout: options.sync_timeout,
            progress,
            ticks,
            ready,
            leading,
            shutdown,
            main: Mutex::new(Some(main)),
            reflectors: [hpa_task, pod_task, ready_task]
                .into_iter()
                .chain(extra_tasks)
                .collect(),
            hpa_progress,
            pod_progress,
            generations,
            namespace: options.namespace.clone(),
        }
    }

    /// The shared context (client, clock, stores, metrics, history).
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// What the HTTP endpoints need.
    pub fn server_state(&self) -> ServerState {
        ServerState {
            metrics: self.ctx.metrics.clone(),
            decisions: self.ctx.decisions.clone(),
            ready: Arc::clone(&self.ready),
            memory: Some(MemorySource::new(self.ctx.clone(), self.queue.clone())),
        }
    }

    /// Where the controller's memory goes now: each structure's bytes and
    /// the allocator's totals ([`crate::memory`]); `None` where jemalloc is
    /// not the allocator. Measured on the calling thread.
    pub fn memory_report(&self) -> Option<MemoryReport> {
        MemorySource::new(self.ctx.clone(), self.queue.clone()).report()
    }

    /// Whether the caches have synced.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    /// Whether this replica leads (always true without election).
    pub fn is_leader(&self) -> bool {
        *self.leading.borrow()
    }

    /// Waits until this replica leads, up to `timeout`.
    pub async fn wait_until_leader(&self, timeout: Duration) -> bool {
        let mut leading = self.leading.clone();
        tokio::time::timeout(timeout, leading.wait_for(|l| *l))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// The controller's `/metrics` text.
    pub fn metrics_text(&self) -> String {
        self.ctx.metrics.encode()
    }

    /// The latest `n` decisions for the HPA `namespace/name`, oldest first.
    pub fn decisions(&self, namespace: &str, name: &str, n: usize) -> Vec<DecisionRecord> {
        self.ctx.decisions.latest(&format!("{namespace}/{name}"), n)
    }

    /// Seeds the stabilization history of an HPA (ages as of the clock's now).
    pub fn seed_recommendations(&self, namespace: &str, name: &str, seeds: &[AgedRecommendation]) {
        self.ctx.history.seed_recommendations(
            &format!("{namespace}/{name}"),
            self.ctx.clock.now(),
            seeds,
        );
    }

    /// The stabilization history of an HPA (ages as of now); `None` if it has none.
    pub fn recommendations(&self, namespace: &str, name: &str) -> Option<Vec<AgedRecommendation>> {
        self.ctx
            .history
            .recommendations(&format!("{namespace}/{name}"), self.ctx.clock.now())
    }

    /// Seeds the rate-limit history of an HPA.
    pub fn seed_scale_events(&self, namespace: &str, name: &str, seeds: &[AgedScaleEvent]) {
        self.ctx.history.seed_scale_events(
            &format!("{namespace}/{name}"),
            self.ctx.clock.now(),
            seeds,
        );
    }

    /// The rate-limit history of an HPA (ages as of now).
    pub fn scale_events(&self, namespace: &str, name: &str) -> Vec<AgedScaleEvent> {
        self.ctx
            .history
            .scale_events(&format!("{namespace}/{name}"), self.ctx.clock.now())
    }

    /// Waits until the HPA and pod caches (and the Deployment cache, when
    /// scale targets are read from it) hold exactly what the API server
    /// lists now, so that a reconcile sees every change made before.
    pub async fn wait_for_caches(&self) -> Result<(), RunError> {
        let hpas = scoped_api::<HorizontalPodAutoscaler>(
            self.ctx.client.clone(),
            self.namespace.as_deref(),
        )
        .list(&ListParams::default())
        .await
        .map_err(|source| RunError::List {
            what: "HPAs",
            source,
        })?;
        let pods = scoped_api::<SlimPod>(self.ctx.client.clone(), self.namespace.as_deref())
            .list(&ListParams::default())
            .await
            .map_err(|source| RunError::List {
                what: "pods",
                source,
            })?;
        let list_rv = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta| {
            meta.resource_version
                .as_deref()
                .and_then(|r| r.parse::<u64>().ok())
        };
        let deployments = match &self.ctx.deployments {
            Some(scales) => {
                let list =
                    scoped_api::<Deployment>(self.ctx.client.clone(), self.namespace.as_deref())
                        .list_metadata(&ListParams::default())
                        .await
                        .map_err(|source| RunError::List {
                            what: "Deployments",
                            source,
                        })?;
                let want = versions(list.items.iter().map(|d| &d.metadata));
                Some((scales, want, list_rv(&list.metadata)))
            }
            None => None,
        };
        let (hpas_rv, pods_rv) = (list_rv(&hpas.metadata), list_rv(&pods.metadata));
        let want_hpas = versions(hpas.items.iter().map(|h| &h.metadata));
        let want_pods = versions(pods.items.iter().map(|p| &p.metadata));
        let deadline = tokio::time::Instant::now() + self.sync_timeout;
        let mut pause = Duration::from_micros(200);
        loop {
            let have_hpas = self.ctx.hpas.versions();
            let have_pods = self.ctx.pod_index.versions();
            let deployments_caught_up = deployments.as_ref().is_none_or(|(scales, want, rv)| {
                caught_up(want, *rv, &scales.versions(), scales.progress())
            });
            if caught_up(&want_hpas, hpas_rv, &have_hpas, self.hpa_progress.get())
                && caught_up(&want_pods, pods_rv, &have_pods, self.pod_progress.get())
                && deployments_caught_up
            {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(RunError::CacheTimeout(self.sync_timeout));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// Reconciles every HPA once, now, and returns when all are done: how
    /// the harness syncs in virtual time (advance the clock by a sync
    /// period, then call this). Also usable in periodic mode.
    pub async fn sync_all_now(&self) -> Result<SyncReport, RunError> {
        if !self.is_leader() {
            return Err(RunError::NotLeader);
        }
        self.wait_for_caches().await?;
        let keys: BTreeSet<String> = self.ctx.hpas.keys();
        for stale in self
            .ctx
            .history
            .keys()
            .into_iter()
            .chain(self.ctx.decisions.keys())
        {
            if !keys.contains(&stale) {
                self.ctx.forget(&stale);
            }
        }
        self.ctx
            .metrics
            .num_hpas
            .set(i64::try_from(keys.len()).unwrap_or(i64::MAX));
        self.sync_keys(keys).await
    }

    /// Reconciles, now, the HPAs the release's controller would have queued
    /// at once since the last on-demand sync (new ones, and spec changes
    /// under `HPAGeneration`: [`queued_at_once`]); nothing through 1.36.
    /// The harness calls it as virtual time starts to pass.
    pub async fn sync_queued_now(&self) -> Result<SyncReport, RunError> {
        if !self.is_leader() {
            return Err(RunError::NotLeader);
        }
        self.wait_for_caches().await?;
        let gates = self.ctx.config.decision.feature_gates;
        let keys: BTreeSet<String> = {
            let mut generations = self.generations();
            self.ctx
                .hpas
                .entries()
                .into_iter()
                .filter_map(|(key, h)| {
                    let at_once =
                        generations.note(&gates, &key, h.uid().as_deref(), h.generation());
                    (at_once == Some(true)).then_some(key)
                })
                .collect()
        };
        if keys.is_empty() {
            return Ok(SyncReport::default());
        }
        self.sync_keys(keys).await
    }

    fn generations(&self) -> MutexGuard<'_, Generations> {
        self.generations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes each HPA of `keys` as queued now, as it is cached.
    fn note_synced(&self, keys: &BTreeSet<String>) {
        let gates = self.ctx.config.decision.feature_gates;
        let mut generations = self.generations();
        for key in keys {
            if let Some(h) = self.ctx.hpas.get(key) {
                generations.note(&gates, key, h.uid().as_deref(), h.generation());
            }
        }
    }

    /// Whether a run of `key` after run `mark` is still to complete.
    fn pending(&self, key: &str, mark: u64) -> bool {
        self.progress
            .pending(key, mark, || self.ctx.hpas.contains(key))
    }

    /// Reconciles `keys` once, now, and returns when all are done. They
    /// share metrics lists among themselves only (a new round).
    async fn sync_keys(&self, keys: BTreeSet<String>) -> Result<SyncReport, RunError> {
        self.note_synced(&keys);
        self.ctx.metrics_client.next_round();
        let marks: Vec<(String, u64)> = keys
            .iter()
            .map(|k| (k.clone(), self.progress.started(k)))
            .collect();
        for key in &keys {
            self.queue.add(key.clone());
        }
        let mut ticks = self.ticks.clone();
        let wait = async {
            let mut pending = marks.clone();
            loop {
                // Each completion ticks once: no need to look again before
                // as many ticks as keys are pending (keeps this linear).
                let seen = *ticks.borrow_and_update();
                pending.retain(|(k, mark)| self.pending(k, *mark));
                if pending.is_empty() {
                    return Ok(());
                }
                let due = seen + u64::try_from(pending.len()).unwrap_or(u64::MAX);
                if ticks.wait_for(|n| *n >= due).await.is_err() {
                    return Err(());
                }
            }
        };
        if !matches!(
            tokio::time::timeout(self.sync_timeout, wait).await,
            Ok(Ok(()))
        ) {
            let keys = marks
                .iter()
                .filter(|(k, mark)| self.pending(k, *mark))
                .map(|(k, _)| k.clone())
                .collect();
            return Err(RunError::SyncTimeout {
                keys,
                timeout: self.sync_timeout,
            });
        }
        let mut report = SyncReport::default();
        for (key, _) in marks {
            if let Some(err) = self.progress.state(&key).last_error {
                report.errors.push((key.clone(), err));
            }
            report.reconciled.push(key);
        }
        Ok(report)
    }

    /// Stops gracefully: no new reconcile starts, running ones finish, the
    /// Lease is released, the watches end.
    pub async fn shutdown(self) -> Result<(), RunError> {
        self.shutdown.cancel();
        let main = self
            .main
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let result = match main {
            Some(main) => main.await.map_err(RunError::Join)?,
            None => Ok(()),
        };
        for task in &self.reflectors {
            task.abort();
        }
        result
    }

    /// Waits until the controller stops by itself (lost leadership) or
    /// `stop` fires, then shuts down.
    pub async fn run_until(
        self,
        stop: impl std::future::Future<Output = ()>,
    ) -> Result<(), RunError> {
        let main = self
            .main
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(mut main) = main else {
            return self.shutdown().await;
        };
        tokio::select! {
            result = &mut main => {
                for task in &self.reflectors {
                    task.abort();
                }
                result.map_err(RunError::Join)?
            }
            () = stop => {
                self.shutdown.cancel();
                let result = main.await.map_err(RunError::Join)?;
                for task in &self.reflectors {
                    task.abort();
                }
                result
            }
        }
    }
}

fn versions<'a>(
    metas: impl Iterator<Item = &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>,
) -> BTreeMap<String, String> {
    metas
        .map(|m| (key_of(m), m.resource_version.clone().unwrap_or_default()))
        .collect()
}

/// Whether a cache (`have`) reflects at least a list (`want`, taken at
/// `list_rv`). Exact equality always counts. With numeric resourceVersions
/// later states count too: an object changed since the list, created since
/// (newer than the list), or gone while the watch has passed the list.
fn caught_up(
    want: &BTreeMap<String, String>,
    list_rv: Option<u64>,
    have: &BTreeMap<String, String>,
    progress: u64,
) -> bool {
    if want == have {
        return true;
    }
    let num = |rv: &str| rv.parse::<u64>().ok();
    let passed_list = list_rv.is_some_and(|l| progress > l);
    let listed_ok = want.iter().all(|(key, rv)| match have.get(key) {
        Some(h) if h == rv => true,
        Some(h) => num(h).zip(num(rv)).is_some_and(|(h, w)| h > w),
        None => passed_list,
    });
    let extra_ok = have
        .iter()
        .filter(|(key, _)| !want.contains_key(*key))
        .all(|(_, h)| num(h).zip(list_rv).is_some_and(|(h, l)| h > l));
    listed_ok && extra_ok
}

/// Watches Deployments into their scales (`--scale-from-cache`): each
/// Deployment becomes its scale as it arrives; none is kept whole, so none
/// needs trimming first.
async fn watch_deployments(api: Api<Deployment>, scales: DeploymentScales) {
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => scales.apply(event),
            Err(err) => tracing::warn!(error = %err, "deployment watch failed; retrying"),
        }
    }
}

/// Watches pods, trimmed, into the pod index only: it is the pod cache (no
/// reflector store beside it, see `pod_index`). Notes each event's
/// resourceVersion in `progress`.
async fn watch_pods(api: Api<SlimPod>, pod_index: PodIndex, progress: Arc<WatchProgress>) {
    let stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(SlimPod::trim);
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        if let Ok(event) = &event {
            pod_index.apply(event);
        }
        match event {
            Ok(
                watcher::Event::Apply(pod)
                | watcher::Event::InitApply(pod)
                | watcher::Event::Delete(pod),
            ) => progress.observe(pod.metadata.resource_version.as_deref()),
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "pod watch failed; retrying"),
        }
    }
}

/// The one waiter on the caches' readiness: kube-runtime's
/// `wait_until_ready` wakes only the last of concurrent waiters, so others
/// (the workers' start) wait on `caches_ready` instead, and `ready` answers
/// the readiness probe.
async fn announce_caches_ready(
    hpa_cache: HpaCache,
    pod_index: PodIndex,
    ready: Arc<AtomicBool>,
    caches_ready: watch::Sender<bool>,
) {
    hpa_cache.wait_until_ready().await;
    pod_index.wait_until_ready().await;
    ready.store(true, Ordering::SeqCst);
    let _ = caches_ready.send(true);
}

/// Watches HPAs into the store; queues them on appearance and spec change
/// (periodic mode) and forgets deleted ones.
async fn watch_hpas(
    api: Api<HorizontalPodAutoscaler>,
    ctx: Context,
    queue: WorkQueue<String>,
    mode: SyncMode,
    progress: Arc<WatchProgress>,
    generations: Arc<Mutex<Generations>>,
) {
    let generations = || {
        generations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let gates = ctx.config.decision.feature_gates;
    let mut seen_in_init: BTreeSet<String> = BTreeSet::new();
    let mut queued_at_init_done: Vec<(String, bool)> = Vec::new();
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(event) => event,
            Err(err) => {
                tracing::warn!(error = %err, "HPA watch failed; retrying");
                continue;
            }
        };
        if let watcher::Event::Apply(hpa)
        | watcher::Event::InitApply(hpa)
        | watcher::Event::Delete(hpa) = &event
        {
            progress.observe(hpa.metadata.resource_version.as_deref());
        }
        ctx.hpas.apply(&event);
        // The cache holds a (re)list's objects only from
        // InitDone on: an HPA queued at its InitApply could be dequeued
        // before, look deleted, and never be requeued. Queue them at InitDone.
        let initial = matches!(event, watcher::Event::InitApply(_));
        match event {
            watcher::Event::Apply(hpa) | watcher::Event::InitApply(hpa) => {
                let key = key_of(&hpa.metadata);
                if initial {
                    seen_in_init.insert(key.clone());
                }
                // On demand, the syncs note what they queue.
                let changed = match mode {
                    SyncMode::Periodic => generations().note(
                        &gates,
                        &key,
                        hpa.metadata.uid.as_deref(),
                        hpa.metadata.generation,
                    ),
                    SyncMode::Manual => {
                        generations().saw(&key);
                        None
                    }
                };
                if let Some(at_once) = changed {
                    if initial {
                        queued_at_init_done.push((key, at_once));
                    } else if at_once {
                        queue.add(key);
                    } else {
                        queue.add_rate_limited(key);
                    }
                }
            }
            // Upstream's deleteHPA only forgets the key's rate limiting (and
            // its selector); the history goes when a later sync finds the
            // HPA gone, so a quick delete-and-recreate keeps it.
            watcher::Event::Delete(hpa) => {
                let key = key_of(&hpa.metadata);
                let meta = &hpa.metadata;
                if let (Some(namespace), Some(name), Some(uid)) = (
                    meta.namespace.as_deref(),
                    meta.name.as_deref(),
                    meta.uid.as_deref(),
                ) {
                    ctx.recorder.forget_uid(namespace, name, uid);
                }
                generations().forget(&key);
                forget_deleted(&ctx, &queue, &key, mode);
            }
            watcher::Event::Init => {
                seen_in_init.clear();
                queued_at_init_done.clear();
            }
            watcher::Event::InitDone => {
                for (key, at_once) in queued_at_init_done.drain(..) {
                    if at_once {
                        queue.add(key);
                    } else {
                        queue.add_rate_limited(key);
                    }
                }
                // Deletions missed while the watch was down.
                let gone: Vec<String> = generations()
                    .keys()
                    .filter(|k| !seen_in_init.contains(*k))
                    .cloned()
                    .collect();
                for key in gone {
                    generations().forget(&key);
                    forget_deleted(&ctx, &queue, &key, mode);
                }
                // Kept for this check only: a deleted HPA's key must not
                // stay here until the next relist.
                seen_in_init = BTreeSet::new();
                queued_at_init_done = Vec::new();
            }
        }
        ctx.metrics
            .num_hpas
            .set(i64::try_from(generations().len()).unwrap_or(i64::MAX));
    }
}

/// A deleted HPA: its selector leaves the ambiguity check and its failures
/// are forgotten; its key stays queued (periodic mode) so that the next sync
/// finds it gone and drops its history (manual mode: the next
/// [`ControllerHandle::sync_all_now`] does).
fn forget_deleted(ctx: &Context, queue: &WorkQueue<String>, key: &str, mode: SyncMode) {
    ctx.selectors.remove(key);
    queue.forget(&key.to_string());
    if mode == SyncMode::Periodic && !queue.is_parked(&key.to_string()) {
        queue.add_rate_limited(key.to_string());
    }
}

/// Campaigns (if configured), runs the workers while leading, and stops
/// them on shutdown or lost leadership.
async fn run_main(
    ctx: Context,
    queue: WorkQueue<String>,
    options: ControllerOptions,
    progress: Arc<Progress>,
    leading_tx: watch::Sender<bool>,
    mut caches_ready: watch::Receiver<bool>,
    shutdown: CancellationToken,
) -> Result<(), RunError> {
    let election_stop = CancellationToken::new();
    let mut leading = leading_tx.subscribe();
    let elector = options.leader_election.as_ref().map(|le| {
        let elector = LeaderElector::new(
            ctx.client.clone(),
            &le.namespace,
            &le.name,
            &options.identity,
            le.timing,
            Arc::clone(&ctx.clock),
        );
        tokio::spawn(elector.run(leading_tx.clone(), election_stop.clone()))
    });
    let lease_name = options
        .leader_election
        .as_ref()
        .map(|le| format!("{}/{}", le.namespace, le.name))
        .unwrap_or_default();

    // Wait for the Lease (or stop).
    let became_leader = tokio::select! {
        () = shutdown.cancelled() => false,
        r = leading.wait_for(|l| *l) => r.is_ok(),
    };
    // Workers start once the HPA and pod caches hold their first list, as
    // upstream's Run waits for its informers: a sync before that would see
    // no pods and write a failed status (found by `hpa-harness load`).
    let caches_synced = became_leader
        && tokio::select! {
            () = shutdown.cancelled() => false,
            r = caches_ready.wait_for(|r| *r) => r.is_ok(),
        };
    let mut result = Ok(());
    if caches_synced {
        ctx.metrics.is_leader.set(1);
        let waiting = Waiting::default();
        let workers: Vec<JoinHandle<()>> = (0..options.config.workers.max(1))
            .map(|i| {
                tokio::spawn(worker(
                    i,
                    ctx.clone(),
                    queue.clone(),
                    options.mode,
                    Arc::clone(&progress),
                    waiting.clone(),
                ))
            })
            .collect();
        tokio::select! {
            () = shutdown.cancelled() => {}
            _ = leading.wait_for(|l| !*l) => {
                result = Err(RunError::LostLeadership(lease_name));
            }
        }
        queue.shut_down();
        for w in workers {
            match worker_exit(w.await) {
                WorkerExit::Finished => {}
                WorkerExit::Cancelled => {
                    tracing::debug!("a worker was cancelled (its runtime is shutting down)");
                }
                WorkerExit::Panicked(err) => tracing::error!(error = %err, "a worker panicked"),
            }
        }
        waiting.stop().await;
        ctx.metrics.is_leader.set(0);
    } else {
        queue.shut_down();
    }
    election_stop.cancel();
    if let Some(elector) = elector {
        let _ = elector.await;
    }
    result
}

/// How a worker task ended. A runtime that shuts down (at the end of a
/// scenario or a test) cancels its tasks: no panic, and not logged as one.
#[derive(Debug, PartialEq, Eq)]
enum WorkerExit {
    Finished,
    Cancelled,
    Panicked(String),
}

fn worker_exit(result: Result<(), tokio::task::JoinError>) -> WorkerExit {
    match result {
        Ok(()) => WorkerExit::Finished,
        Err(err) if err.is_cancelled() => WorkerExit::Cancelled,
        Err(err) => WorkerExit::Panicked(err.to_string()),
    }
}

/// At most this many reconciles wait for a token in tasks of their own;
/// beyond, a worker waits with its reconcile, as upstream's do. A waiting
/// reconcile holds its HPA's inputs, so this bounds the memory one slow
/// API can take, whatever the number of HPAs.
const MAX_WAITING: usize = 1024;

/// The reconciles the workers left waiting for a token, and what stops
/// them.
#[derive(Clone)]
struct Waiting {
    tasks: TaskTracker,
    cancel: CancellationToken,
    room: Arc<Semaphore>,
}

impl Default for Waiting {
    fn default() -> Self {
        Self {
            tasks: TaskTracker::new(),
            cancel: CancellationToken::new(),
            room: Arc::new(Semaphore::new(MAX_WAITING)),
        }
    }
}

impl Waiting {
    /// Runs `sync` in a task of its own until it ends or [`Self::stop`];
    /// gives it back when [`MAX_WAITING`] already wait.
    fn spawn<F>(&self, sync: F) -> Result<(), F>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let Ok(permit) = Arc::clone(&self.room).try_acquire_owned() else {
            return Err(sync);
        };
        let sync = async move {
            sync.await;
            drop(permit);
        };
        self.tasks
            .spawn(self.cancel.clone().run_until_cancelled_owned(sync));
        Ok(())
    }

    /// Drops the reconciles still running, and waits until they are gone:
    /// upstream's end their waits with their context, and fail.
    async fn stop(&self) {
        self.cancel.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }
}

/// Takes HPAs off the queue and reconciles them, one at a time. A
/// reconcile whose read (its scale, a metric) has to wait for its
/// clientset's bucket is left to wait in a task of its own (in `waiting`,
/// up to [`MAX_WAITING`] of them), and the worker takes the next HPA: one
/// rate-limited API (an External metrics server asked once per HPA, say)
/// holds up no HPA that does not use it. Upstream's workers wait instead;
/// the HPA's key stays taken either way, so no decision changes, only when
/// the others are made.
async fn worker(
    index: usize,
    ctx: Context,
    queue: WorkQueue<String>,
    mode: SyncMode,
    progress: Arc<Progress>,
    waiting: Waiting,
) {
    let ctx = Arc::new(ctx);
    while let Some(key) = queue.get().await {
        let signal = WaitSignal::default();
        let mut sync = Box::pin(signal.around(sync_key(
            index,
            key,
            Arc::clone(&ctx),
            queue.clone(),
            mode,
            Arc::clone(&progress),
        )));
        tokio::select! {
            biased;
            () = &mut sync => {}
            () = signal.waited() => {
                if let Err(sync) = waiting.spawn(sync) {
                    sync.await;
                }
            }
        }
    }
}

/// One HPA's reconcile and what follows it: the metrics, its next turn in
/// the queue (periodic mode), and its progress.
async fn sync_key(
    index: usize,
    key: String,
    ctx: Arc<Context>,
    queue: WorkQueue<String>,
    mode: SyncMode,
    progress: Arc<Progress>,
) {
    let seq = progress.start(&key);
    let started = std::time::Instant::now();
    let span = tracing::debug_span!("reconcile", hpa = %key, worker = index);
    let result = reconcile(&key, &ctx).instrument(span).await;
    ctx.metrics
        .queue
        .work_duration
        .observe(started.elapsed().as_secs_f64());
    let gone = matches!(result, Ok(Reconciled::Deleted));
    let error = match &result {
        Ok(_) => None,
        Err(err) => {
            tracing::warn!(hpa = %key, error = %err, "reconcile failed");
            Some(err.to_string())
        }
    };
    if mode == SyncMode::Periodic {
        match result {
            Ok(Reconciled::Deleted) => queue.remove(&key),
            Ok(Reconciled::Synced { .. }) => {
                queue.forget(&key);
                queue.add_after(key.clone(), ctx.config.sync_period);
            }
            Err(_) => queue.add_rate_limited(key.clone()),
        }
    }
    queue.done(&key);
    progress.complete(&key, seq, error, gone);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn a_cache_equal_to_the_list_has_caught_up() {
        let list = map(&[("ns/a", "5"), ("ns/b", "x")]);
        assert!(caught_up(&list, None, &list.clone(), 0));
    }

    #[test]
    fn a_cache_behind_the_list_has_not_caught_up() {
        let list = map(&[("ns/a", "7")]);
        assert!(!caught_up(&list, Some(9), &map(&[("ns/a", "5")]), 5));
        assert!(
            !caught_up(&list, Some(9), &map(&[]), 5),
            "a listed object is missing"
        );
        assert!(
            !caught_up(&list, Some(9), &map(&[("ns/a", "7"), ("ns/gone", "3")]), 7),
            "an object deleted before the list is still cached"
        );
    }

    #[test]
    fn a_cache_ahead_of_the_list_has_caught_up() {
        let list = map(&[("ns/a", "7"), ("ns/b", "8")]);
        // a changed, b deleted, c created: all after the list at 9.
        let cache = map(&[("ns/a", "12"), ("ns/c", "11")]);
        assert!(caught_up(&list, Some(9), &cache, 13));
        assert!(
            !caught_up(&list, Some(9), &cache, 9),
            "b's deletion is not seen yet"
        );
    }

    /// Churn: HPAs synced then found deleted leave no run counters, and a
    /// waiter on a deleted HPA's run is not left waiting.
    #[test]
    fn deleted_hpas_leave_no_run_counters() {
        let (progress, _ticks) = Progress::new();
        for cycle in 0..10 {
            for i in 0..100 {
                let key = format!("ns/hpa-{cycle}-{i}");
                let seq = progress.start(&key);
                progress.complete(&key, seq, None, false);
                let seq = progress.start(&key);
                progress.complete(&key, seq, None, true);
            }
            assert_eq!(progress.len(), 0, "cycle {cycle}");
        }
        let seq = progress.start("ns/web");
        assert!(progress.pending("ns/web", 0, || true), "running");
        progress.complete("ns/web", seq, Some("boom".into()), false);
        assert!(!progress.pending("ns/web", 0, || true));
        assert!(progress.pending("ns/web", seq, || true), "a later run");
        progress.complete("ns/web", progress.start("ns/web"), None, true);
        assert!(!progress.pending("ns/web", seq, || false), "deleted");
        assert!(progress.pending("ns/new", 0, || true), "not run yet");
    }

    #[tokio::test]
    async fn reconciles_left_waiting_are_bounded_and_dropped_at_the_stop() {
        let waiting = Waiting::default();
        let (tx, rx) = tokio::sync::watch::channel(0);
        for _ in 0..MAX_WAITING {
            let mut rx = rx.clone();
            let left = waiting.spawn(async move {
                let _ = rx.wait_for(|n| *n > 0).await;
            });
            assert!(left.is_ok());
        }
        assert!(
            waiting.spawn(std::future::pending()).is_err(),
            "one more is given back to its worker"
        );
        tokio::time::timeout(Duration::from_secs(10), waiting.stop())
            .await
            .unwrap();
        drop(tx);
    }

    #[tokio::test]
    async fn a_cancelled_worker_is_told_apart_from_a_panicked_one() {
        let pending = tokio::spawn(std::future::pending::<()>());
        pending.abort();
        assert_eq!(worker_exit(pending.await), WorkerExit::Cancelled);

        let panicking = tokio::spawn(async { panic!("boom") });
        match worker_exit(panicking.await) {
            WorkerExit::Panicked(msg) => assert!(msg.contains("boom"), "{msg}"),
            other => panic!("{other:?}"),
        }

        assert_eq!(
            worker_exit(tokio::spawn(async {}).await),
            WorkerExit::Finished
        );
    }
}
