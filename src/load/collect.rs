//! Measuring the controller from inside: every reconcile is observed
//! through the controller's observer hook; its start and duration give the
//! sync intervals and latencies, and its core inputs are replayed through
//! the pure core (on a thread of its own) to count disagreements.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use hpa_core::decide::RescaleOutcome;

use super::agree::disagreement;
use super::failures::Failures;
use super::metric_kind::MetricKind;
use hpa_controller::{ReconcileObservation, ReconcileObserver};

/// Why a reconcile failed, if it did: a metric not read (the core's
/// error), or the scale not written.
pub(super) fn failure_of(o: &ReconcileObservation) -> Option<String> {
    if let Some(e) = o.decision.error() {
        return Some(e.to_owned());
    }
    match &o.rescale {
        RescaleOutcome::Failed(e) => Some(format!("failed to rescale: {e}")),
        _ => None,
    }
}

/// What the observer gathered. Syncs (successful ones only; failures
/// apart), intervals and latencies count from the end of the warm-up;
/// synced HPAs and disagreements over the whole run.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) syncs: u64,
    pub(super) failures: Failures,
    pub(super) intervals: Vec<f64>,
    /// The same, by the metric of their HPA (`cpu`, `external`, ...).
    pub(super) intervals_by_metric: BTreeMap<&'static str, Vec<f64>>,
    pub(super) latencies: Vec<f64>,
    pub(super) synced: HashSet<String>,
    pub(super) synced_after_warmup: HashSet<String>,
    pub(super) disagreements: u64,
    pub(super) examples: Vec<String>,
}

impl Tally {
    /// Counts one observation and replays it through the core; reconciles
    /// that start before `measure_from` are checked, not measured.
    fn check(&mut self, o: ReconcileObservation, measure_from: Instant, seen: &mut Seen) {
        let measured = o.started >= measure_from;
        if let Some(what) = disagreement(&o) {
            self.disagreements += 1;
            if self.examples.len() < 5 {
                self.examples.push(what);
            }
        }
        // A failed sync kept no HPA at its target: counted apart, and the
        // HPA is not called synced by it.
        if let Some(reason) = failure_of(&o) {
            if measured {
                self.failures.record(&reason);
            }
            return;
        }
        let metric = MetricKind::name_of_key(&o.key);
        let (prev, after_warmup) = match seen.entry(o.key.into_boxed_str()) {
            Entry::Occupied(held) => {
                let last = held.into_mut();
                (Some(std::mem::replace(&mut last.0, o.started)), &mut last.1)
            }
            Entry::Vacant(new) => (None, &mut new.insert((o.started, false)).1),
        };
        if measured {
            self.syncs += 1;
            self.latencies.push(o.duration.as_secs_f64());
            if let Some(prev) = prev {
                let interval = o.started.saturating_duration_since(prev).as_secs_f64();
                self.intervals.push(interval);
                if let Some(metric) = metric {
                    self.intervals_by_metric
                        .entry(metric)
                        .or_default()
                        .push(interval);
                }
            }
            *after_warmup = true;
        }
    }

    /// The HPAs synced, and those synced after the warm-up, from what the
    /// checker kept per HPA.
    fn close(&mut self, seen: Seen) {
        for (key, (_, after_warmup)) in seen {
            if after_warmup {
                self.synced_after_warmup.insert(key.to_string());
            }
            self.synced.insert(key.into_string());
        }
    }
}

/// Per HPA synced: its last sync's start and whether one was measured
/// (after the warm-up). One key per HPA for the whole run: the load's own
/// memory counts against the controller's (see docs/load-report.md).
type Seen = HashMap<Box<str>, (Instant, bool)>;

/// How often the checker thread drains the observations sent to it.
const DRAIN_EVERY: Duration = Duration::from_millis(20);

/// Forwards observations to a checker thread, so replaying the core does
/// not hold up the workers. Boxed: an observation is a few kilobytes, and
/// the channel's blocks of 31 of them were large allocations, paid on the
/// workers.
pub(super) struct Collector {
    tx: Mutex<Option<mpsc::Sender<Box<ReconcileObservation>>>>,
    pub(super) seen: AtomicU64,
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
            let _ = tx.send(Box::new(observation));
        }
    }
}

impl Collector {
    /// Starts the checker; reconciles that start before `measure_from` are
    /// the warm-up: checked against the core, not measured. Also returns the
    /// checker thread's `/proc` task path (`PID/task/TID`), so its CPU (the
    /// harness's, not the controller's) can be told apart.
    pub(super) fn start(
        measure_from: Instant,
    ) -> (Arc<Self>, std::thread::JoinHandle<Tally>, Option<String>) {
        let (tx, rx) = mpsc::channel::<Box<ReconcileObservation>>();
        let (task_tx, task_rx) = mpsc::channel::<Option<String>>();
        let checker = std::thread::spawn(move || {
            let task = std::fs::read_link("/proc/thread-self")
                .ok()
                .map(|p| p.to_string_lossy().into_owned());
            let _ = task_tx.send(task);
            let mut tally = Tally::default();
            let mut seen = Seen::new();
            // Drained on a timer rather than woken per observation: a
            // blocked receiver costs every send a futex wake-up on the
            // controller's worker, which the controller's CPU would count.
            loop {
                let closed = loop {
                    match rx.try_recv() {
                        Ok(o) => tally.check(*o, measure_from, &mut seen),
                        Err(mpsc::TryRecvError::Empty) => break false,
                        Err(mpsc::TryRecvError::Disconnected) => break true,
                    }
                };
                if closed {
                    break;
                }
                std::thread::sleep(DRAIN_EVERY);
            }
            tally.close(seen);
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
    pub(super) fn close(&self) {
        self.tx
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
    }
}
