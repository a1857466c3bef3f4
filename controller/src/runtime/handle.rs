//! The handle the CLI and the harness drive a running controller through:
//! starting it, catching the caches up, syncs on demand, and stopping.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::ListParams;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::progress::Progress;
use super::watches::{
    announce_caches_ready, caught_up, versions, watch_deployments, watch_hpas, watch_pods,
};
use super::workers::run_main;
use super::{ControllerOptions, RunError, SyncMode, scoped_api};
use crate::consistency::WatchProgress;
use crate::context::Context;
use crate::decisions::DecisionRecord;
use crate::deployment_scales::DeploymentScales;
use crate::generations::Generations;
use crate::history::{AgedRecommendation, AgedScaleEvent};
use crate::hpa_cache::HpaCache;
use crate::memory_report::{MemoryReport, MemorySource};
use crate::metrics::ControllerMetrics;
use crate::observe::Extensions;
use crate::queue::{Backoff, WorkQueue};
use crate::server::ServerState;
use crate::slim_pod::SlimPod;

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
    /// under `HPAGeneration`: [`queued_at_once`](super::queued_at_once)); nothing through 1.36.
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

    pub(super) fn generations(&self) -> MutexGuard<'_, Generations> {
        self.generations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes each HPA of `keys` as queued now, as it is cached.
    pub(super) fn note_synced(&self, keys: &BTreeSet<String>) {
        let gates = self.ctx.config.decision.feature_gates;
        let mut generations = self.generations();
        for key in keys {
            if let Some(h) = self.ctx.hpas.get(key) {
                generations.note(&gates, key, h.uid().as_deref(), h.generation());
            }
        }
    }

    /// Whether a run of `key` after run `mark` is still to complete.
    pub(super) fn pending(&self, key: &str, mark: u64) -> bool {
        self.progress
            .pending(key, mark, || self.ctx.hpas.contains(key))
    }

    /// Reconciles `keys` once, now, and returns when all are done. They
    /// share metrics lists among themselves only (a new round).
    pub(super) async fn sync_keys(&self, keys: BTreeSet<String>) -> Result<SyncReport, RunError> {
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
