//! The main loop and the workers: campaigning for the lease, taking keys
//! off the queue, reconciling them, and requeueing them.

use std::sync::Arc;

use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::progress::Progress;
use super::{ControllerOptions, RunError, SyncMode};
use crate::context::Context;
use crate::leader::LeaderElector;
use crate::queue::WorkQueue;
use crate::ratelimit::WaitSignal;
use crate::reconcile::{Reconciled, reconcile};

/// Campaigns (if configured), runs the workers while leading, and stops
/// them on shutdown or lost leadership.
pub(super) async fn run_main(
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
pub(super) enum WorkerExit {
    Finished,
    Cancelled,
    Panicked(String),
}

pub(super) fn worker_exit(result: Result<(), tokio::task::JoinError>) -> WorkerExit {
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
pub(super) const MAX_WAITING: usize = 1024;

/// The reconciles the workers left waiting for a token, and what stops
/// them.
#[derive(Clone)]
pub(super) struct Waiting {
    pub(super) tasks: TaskTracker,
    pub(super) cancel: CancellationToken,
    pub(super) room: Arc<Semaphore>,
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
    pub(super) fn spawn<F>(&self, sync: F) -> Result<(), F>
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
    pub(super) async fn stop(&self) {
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
pub(super) async fn worker(
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
pub(super) async fn sync_key(
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
    use std::time::Duration;

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
