//! The work queue that feeds the reconcile workers.
//!
//! It has the semantics of client-go's rate-limited work queue, which the
//! upstream HPA controller relies on:
//! - a key added while it is already waiting is not added twice (dedup);
//! - a key being processed is never handed to a second worker: if it is added
//!   meanwhile it is marked dirty and queued again when the first worker calls
//!   [`WorkQueue::done`];
//! - [`WorkQueue::add_after`] parks a key until a deadline; a key parked twice
//!   keeps the earlier deadline, so each key has at most one timer;
//! - [`WorkQueue::add_rate_limited`] parks a key for a per-key backoff that
//!   grows with each failure until [`WorkQueue::forget`].
//!
//! Timers use tokio's clock (real time): with a virtual clock the harness
//! drives syncs itself and no timer is used.

use std::collections::{BTreeSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

// Every key is looked up several times a sync: a fast hasher, seeded per
// process, as the caches' maps.
use foldhash::{HashMap, HashSet};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::metrics::QueueMetrics;

/// Per-key backoff: `base * 2^failures`, capped at `max`.
///
/// Upstream's HPA queue uses a fixed interval equal to the sync period
/// (`NewDefaultHPARateLimiter`); that is `base == max`.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    /// Delay after the first failure.
    pub base: Duration,
    /// Longest delay.
    pub max: Duration,
}

impl Backoff {
    /// The delay after `failures` earlier failures.
    pub fn delay(&self, failures: u32) -> Duration {
        let factor = 2u32.checked_pow(failures.min(31)).unwrap_or(u32::MAX);
        self.base
            .checked_mul(factor)
            .unwrap_or(self.max)
            .min(self.max)
    }
}

struct State<K> {
    queue: VecDeque<K>,
    /// Keys that must be processed (queued, or re-queued once done).
    dirty: HashSet<K>,
    processing: HashSet<K>,
    /// When each key became dirty, for the queue latency metric.
    added_at: HashMap<K, Instant>,
    /// Parked keys: deadline per key, and the same ordered by deadline.
    waiting: HashMap<K, (Instant, u64)>,
    timers: BTreeSet<(Instant, u64)>,
    timer_keys: HashMap<u64, K>,
    next_seq: u64,
    failures: HashMap<K, u32>,
    shut_down: bool,
}

struct Inner<K> {
    state: Mutex<State<K>>,
    /// Wakes workers when a key is queued or the queue shuts down.
    ready: Notify,
    /// Wakes the timer task when an earlier deadline arrives.
    timer_changed: Notify,
    backoff: Backoff,
    metrics: QueueMetrics,
}

/// A deduplicating, per-key exclusive work queue with delayed adds.
pub struct WorkQueue<K> {
    inner: Arc<Inner<K>>,
}

impl<K> Clone for WorkQueue<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K> std::fmt::Debug for WorkQueue<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkQueue").finish_non_exhaustive()
    }
}

impl<K> WorkQueue<K>
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// A queue, and a task that moves parked keys into it when due. The task
    /// ends when the queue shuts down. Must be called inside a tokio runtime.
    pub fn new(backoff: Backoff, metrics: QueueMetrics) -> Self {
        let queue = Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    dirty: HashSet::default(),
                    processing: HashSet::default(),
                    added_at: HashMap::default(),
                    waiting: HashMap::default(),
                    timers: BTreeSet::new(),
                    timer_keys: HashMap::default(),
                    next_seq: 0,
                    failures: HashMap::default(),
                    shut_down: false,
                }),
                ready: Notify::new(),
                timer_changed: Notify::new(),
                backoff,
                metrics,
            }),
        };
        tokio::spawn(queue.clone().run_timers());
        queue
    }

    fn state(&self) -> MutexGuard<'_, State<K>> {
        // A poisoned lock only means another thread panicked mid-update; the
        // sets stay structurally valid, so keep going.
        self.inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `key` now, unless it is already queued.
    pub fn add(&self, key: K) {
        let mut state = self.state();
        if state.shut_down {
            return;
        }
        self.inner.metrics.adds.inc();
        Self::unpark(&mut state, &key);
        if !state.dirty.insert(key.clone()) {
            return;
        }
        state.added_at.insert(key.clone(), Instant::now());
        if !state.processing.contains(&key) {
            state.queue.push_back(key);
            self.inner.metrics.depth.set(gauge(state.queue.len()));
            drop(state);
            self.inner.ready.notify_one();
        }
    }

    /// Queues `key` once `delay` has passed; if it is already parked, the
    /// earlier deadline wins.
    pub fn add_after(&self, key: K, delay: Duration) {
        if delay.is_zero() {
            self.add(key);
            return;
        }
        let deadline = Instant::now() + delay;
        let mut state = self.state();
        if state.shut_down {
            return;
        }
        if let Some(&(existing, _)) = state.waiting.get(&key)
            && existing <= deadline
        {
            return;
        }
        Self::unpark(&mut state, &key);
        // The timer task sleeps until the earliest deadline it saw; it need
        // waking only when this one comes before every other (a periodic
        // requeue, one sync period out, almost never does).
        let earliest = state
            .timers
            .first()
            .is_none_or(|&(first, _)| deadline < first);
        let seq = state.next_seq;
        state.next_seq += 1;
        state.waiting.insert(key.clone(), (deadline, seq));
        state.timers.insert((deadline, seq));
        state.timer_keys.insert(seq, key);
        drop(state);
        if earliest {
            self.inner.timer_changed.notify_one();
        }
    }

    /// Parks `key` for its backoff and counts one more failure for it.
    pub fn add_rate_limited(&self, key: K) {
        let delay = {
            let mut state = self.state();
            let failures = state.failures.entry(key.clone()).or_insert(0);
            let delay = self.inner.backoff.delay(*failures);
            *failures = failures.saturating_add(1);
            delay
        };
        self.inner.metrics.retries.inc();
        self.add_after(key, delay);
    }

    /// Resets the failure count of `key` (after a success).
    pub fn forget(&self, key: &K) {
        self.state().failures.remove(key);
    }

    /// Drops every trace of `key`: parked timer, failures and a queued entry
    /// that no worker holds yet. Used when the object is deleted.
    pub fn remove(&self, key: &K) {
        let mut state = self.state();
        Self::unpark(&mut state, key);
        state.failures.remove(key);
        if !state.processing.contains(key) && state.dirty.remove(key) {
            state.queue.retain(|k| k != key);
            state.added_at.remove(key);
            self.inner.metrics.depth.set(gauge(state.queue.len()));
        }
    }

    fn unpark(state: &mut State<K>, key: &K) {
        if let Some((deadline, seq)) = state.waiting.remove(key) {
            state.timers.remove(&(deadline, seq));
            state.timer_keys.remove(&seq);
        }
    }

    /// The next key to process, waiting for one; `None` once shut down. The
    /// caller must call [`WorkQueue::done`] with the key afterwards.
    pub async fn get(&self) -> Option<K> {
        loop {
            let notified = self.inner.ready.notified();
            {
                let mut state = self.state();
                if state.shut_down {
                    return None;
                }
                if let Some(key) = state.queue.pop_front() {
                    state.dirty.remove(&key);
                    state.processing.insert(key.clone());
                    self.inner.metrics.depth.set(gauge(state.queue.len()));
                    if let Some(added) = state.added_at.remove(&key) {
                        self.inner
                            .metrics
                            .queue_duration
                            .observe(added.elapsed().as_secs_f64());
                    }
                    // Another worker may be waiting and more keys queued.
                    if !state.queue.is_empty() {
                        self.inner.ready.notify_one();
                    }
                    return Some(key);
                }
            }
            notified.await;
        }
    }

    /// Marks `key` as processed; if it was added meanwhile it is queued again.
    pub fn done(&self, key: &K) {
        let mut state = self.state();
        state.processing.remove(key);
        if state.dirty.contains(key) && !state.shut_down {
            state.queue.push_back(key.clone());
            self.inner.metrics.depth.set(gauge(state.queue.len()));
            drop(state);
            self.inner.ready.notify_one();
        }
    }

    /// Keys queued and not yet handed out.
    pub fn len(&self) -> usize {
        self.state().queue.len()
    }

    /// Whether no key is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` waits on a timer.
    pub fn is_parked(&self, key: &K) -> bool {
        self.state().waiting.contains_key(key)
    }

    /// What the queue holds ([`crate::memory`]): its sets, maps and timers,
    /// each key's copies included.
    pub fn footprint(&self, meter: &super::memory::Meter) -> super::memory::Footprint {
        let state = self.state();
        let mut footprint = super::memory::Footprint::new("work queue");
        footprint.entries = state.waiting.len() + state.dirty.len() + state.processing.len();
        footprint.bytes = meter.heap(&state.queue)
            + meter.heap(&state.dirty)
            + meter.heap(&state.processing)
            + meter.heap(&state.added_at)
            + meter.heap(&state.waiting)
            + meter.heap(&state.timers)
            + meter.heap(&state.timer_keys)
            + meter.heap(&state.failures);
        footprint
    }

    /// Stops the queue: [`WorkQueue::get`] returns `None` from now on.
    pub fn shut_down(&self) {
        self.state().shut_down = true;
        self.inner.ready.notify_waiters();
        self.inner.timer_changed.notify_one();
    }

    async fn run_timers(self) {
        loop {
            let changed = self.inner.timer_changed.notified();
            let next = {
                let mut state = self.state();
                if state.shut_down {
                    return;
                }
                let now = Instant::now();
                let mut due = Vec::new();
                while let Some(&(deadline, seq)) = state.timers.first() {
                    if deadline > now {
                        break;
                    }
                    state.timers.remove(&(deadline, seq));
                    if let Some(key) = state.timer_keys.remove(&seq) {
                        state.waiting.remove(&key);
                        due.push(key);
                    }
                }
                let next = state.timers.first().map(|&(deadline, _)| deadline);
                drop(state);
                for key in due {
                    self.add(key);
                }
                next
            };
            match next {
                Some(deadline) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(deadline) => {}
                        () = changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

fn gauge(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> WorkQueue<String> {
        WorkQueue::new(
            Backoff {
                base: Duration::from_millis(10),
                max: Duration::from_secs(1),
            },
            QueueMetrics::default(),
        )
    }

    #[tokio::test]
    async fn a_key_added_twice_is_queued_once() {
        let q = queue();
        q.add("a".to_string());
        q.add("a".to_string());
        q.add("b".to_string());
        assert_eq!(q.len(), 2);
        assert_eq!(q.get().await.as_deref(), Some("a"));
        assert_eq!(q.get().await.as_deref(), Some("b"));
    }

    #[tokio::test]
    async fn a_key_being_processed_is_not_handed_out_again_until_done() {
        let q = queue();
        q.add("a".to_string());
        let key = q.get().await.unwrap();
        q.add("a".to_string());
        assert!(q.is_empty(), "re-added key must wait for done");
        let second = tokio::time::timeout(Duration::from_millis(20), q.get()).await;
        assert!(second.is_err(), "no worker may get a key in flight");
        q.done(&key);
        assert_eq!(q.len(), 1);
        assert_eq!(q.get().await.as_deref(), Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_parked_key_arrives_after_its_delay_and_keeps_the_earlier_deadline() {
        let q = queue();
        q.add_after("a".to_string(), Duration::from_secs(10));
        q.add_after("a".to_string(), Duration::from_secs(5));
        q.add_after("a".to_string(), Duration::from_secs(30));
        assert!(q.is_parked(&"a".to_string()));
        tokio::time::sleep(Duration::from_millis(4_900)).await;
        assert!(q.is_empty());
        tokio::time::sleep(Duration::from_millis(200)).await;
        tokio::task::yield_now().await;
        assert_eq!(q.len(), 1);
        assert!(!q.is_parked(&"a".to_string()));
    }

    #[tokio::test]
    async fn an_immediate_add_cancels_the_timer() {
        let q = queue();
        q.add_after("a".to_string(), Duration::from_secs(60));
        q.add("a".to_string());
        assert!(!q.is_parked(&"a".to_string()));
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let b = Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        assert_eq!(b.delay(0), Duration::from_millis(100));
        assert_eq!(b.delay(1), Duration::from_millis(200));
        assert_eq!(b.delay(3), Duration::from_millis(800));
        assert_eq!(b.delay(4), Duration::from_secs(1));
        assert_eq!(b.delay(40), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn failures_back_off_until_forgotten() {
        let q = queue();
        let key = "a".to_string();
        q.add_rate_limited(key.clone());
        q.add_rate_limited(key.clone()); // parked, the earlier deadline (10ms) stays
        tokio::time::sleep(Duration::from_millis(15)).await;
        tokio::task::yield_now().await;
        assert_eq!(q.len(), 1);
        let k = q.get().await.unwrap();
        q.done(&k);
        q.add_rate_limited(key.clone()); // third failure: 40ms
        tokio::time::sleep(Duration::from_millis(30)).await;
        tokio::task::yield_now().await;
        assert!(q.is_empty());
        tokio::time::sleep(Duration::from_millis(15)).await;
        tokio::task::yield_now().await;
        assert_eq!(q.len(), 1);
        q.forget(&key);
        let k = q.get().await.unwrap();
        q.done(&k);
        q.add_rate_limited(key.clone());
        tokio::time::sleep(Duration::from_millis(11)).await;
        tokio::task::yield_now().await;
        assert_eq!(q.len(), 1);
    }

    #[tokio::test]
    async fn shut_down_releases_waiting_workers() {
        let q = queue();
        let worker = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::task::yield_now().await;
        q.shut_down();
        assert_eq!(worker.await.unwrap(), None);
    }
}
