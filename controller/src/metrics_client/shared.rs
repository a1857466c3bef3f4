//! Responses shared by the HPAs synced within a window, per namespace or
//! per request: one slot per key, fetched once while it is fresh; and what
//! checking a namespace-wide external list against the HPAs' own requests
//! found.
//!
//! Freshness is measured on the controller's clock, not on the host's: a
//! scenario's controller runs on a virtual clock, where two syncs a period
//! apart may be a millisecond apart on the host, and must not share. On
//! that clock, time stands still between two syncs on demand (a scenario
//! changes a metric, then syncs again at the same instant), so a response
//! is also only shared within one round: syncs on demand each start one
//! ([`SharedLists::next_round`]); a periodic controller stays in its first.

use foldhash::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use hpa_core::clock::Clock;
use hpa_metrics_api::ExternalMetricValueList;
use jiff::Timestamp;

use super::decode::{CustomValues, NamespaceResources, custom_values_footprint};
use crate::memory::{Footprint, Meter, table_bytes};
use crate::pod_index::ListedPods;

/// One slot per key: its latest response, and when (instant and round) it
/// was fetched.
type Slot<T> = Arc<tokio::sync::Mutex<Option<Held<T>>>>;

/// A response and when it was fetched.
#[derive(Debug)]
pub(super) struct Held<T> {
    at: Timestamp,
    round: u64,
    value: Arc<T>,
}

/// A namespace-wide custom metrics answer for `pods/*/METRIC` and its pod
/// names; `None` when that request failed (each HPA then asks with its
/// selector, as upstream).
pub(super) type NamespacePodValues = Option<(CustomValues, Arc<ListedPods>)>;

/// Responses reused by every HPA synced within `window` (concurrent fetches
/// of one key wait for one request):
/// - `metrics.k8s.io` pod lists per namespace, each HPA filtering by its
///   own selector, so it sees the pods a list by selector would return;
/// - `custom.metrics.k8s.io` `pods/*/METRIC` answers per namespace, metric
///   and metric selector, without the pod selector, each HPA picking its
///   pods with the pod cache ([`PodIndex::pick`](crate::pod_index::PodIndex::pick), which declines when in
///   doubt: the HPA then makes its own request);
/// - `custom.metrics.k8s.io` responses per exact request path (HPAs asking
///   the same thing: same namespace, metric and selectors);
/// - `external.metrics.k8s.io` responses per exact request path (same
///   namespace, metric and metric selector), or with `share_external` the
///   series per namespace and metric, each HPA filtering them by its
///   metric selector on the series' labels where that was found to give
///   what its own request gives ([`ExternalChecks`]).
#[derive(Debug)]
pub(super) struct SharedLists {
    /// The controller's clock.
    clock: Arc<dyn Clock>,
    /// The current round (see the module doc).
    round: AtomicU64,
    pub(super) window: Duration,
    pub(super) share_external: bool,
    /// Which external requests the namespace-wide lists answer.
    pub(super) external_checks: ExternalChecks,
    /// How long a slot no HPA asks for is kept: the window. A response
    /// kept longer would help decode the next window's (its texts are
    /// reused), but at 100,000 HPAs the lists of every namespace held for
    /// two periods were the controller's largest structure (130 MiB);
    /// decoding anew costs about a microsecond a pod.
    pub(super) retain: Duration,
    pub(super) pods: Mutex<Slots<NamespaceResources>>,
    pub(super) pod_values: Mutex<Slots<NamespacePodValues>>,
    pub(super) custom: Mutex<Slots<CustomValues>>,
    pub(super) external: Mutex<Slots<ExternalMetricValueList>>,
}

/// The fewest slots a sweep waits for.
const SLOTS_SWEPT_FROM: usize = 64;

/// The shortest time between two timed sweeps (a zero window would sweep
/// at every request).
const MIN_SWEEP_INTERVAL: Duration = Duration::from_millis(100);

/// Slots by request key, swept of stale ones each time their number has
/// doubled since the last sweep, and at most every `retain` of the clock
/// (amortized O(1) a request).
#[derive(Debug)]
pub(super) struct Slots<T> {
    by_key: HashMap<String, Slot<T>>,
    sweep_at: usize,
    swept_at: Option<Timestamp>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Self {
            by_key: HashMap::default(),
            sweep_at: SLOTS_SWEPT_FROM,
            swept_at: None,
        }
    }
}

impl<T> Slots<T> {
    /// The slot of `key`, made if missing; first, the slots nobody holds
    /// whose response is older than `retain` at `now` may be swept away
    /// (when their number has doubled, or `retain` after the last sweep).
    fn slot(&mut self, key: &str, retain: Duration, now: Timestamp) -> Slot<T> {
        let due = self
            .swept_at
            .is_none_or(|at| !younger(at, now, retain.max(MIN_SWEEP_INTERVAL)));
        if due {
            self.swept_at = Some(now);
        }
        if let Some(slot) = self.by_key.get(key)
            && !due
        {
            return Arc::clone(slot);
        }
        if due || self.by_key.len() >= self.sweep_at {
            self.by_key.retain(|_, slot| {
                Arc::strong_count(slot) > 1
                    || slot.try_lock().map_or(true, |held| {
                        held.as_ref().is_some_and(|h| younger(h.at, now, retain))
                    })
            });
            self.sweep_at = SLOTS_SWEPT_FROM.max(2 * self.by_key.len());
        }
        Arc::clone(self.by_key.entry(key.to_owned()).or_default())
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_key.len()
    }
}

/// Whether a response fetched `at` is younger than `age` at `now`. One
/// from the future (a clock moved back) is not.
fn younger(at: Timestamp, now: Timestamp, age: Duration) -> bool {
    let elapsed = now.duration_since(at);
    !elapsed.is_negative() && elapsed.unsigned_abs() < age
}

/// How long what a check found holds: then the next sync of the request
/// checks again (a server upgraded, an adapter replaced), at the cost of one
/// extra request per HPA and External metric every so often.
pub(super) const RECHECK_AFTER: Duration = Duration::from_secs(600);

/// Where an HPA's external series come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ExternalRoute {
    /// Not known yet: ask both, answer with its own request, and compare.
    Unchecked,
    /// Its share of the namespace-wide list, which matched its own answer.
    Shared,
    /// Its own request: the server refuses the namespace-wide list of the
    /// metric (KEDA's adapter needs the selector to name a ScaledObject),
    /// or its share of that list differed from its own answer.
    Own,
}

/// What checking namespace-wide external lists against the HPAs' own
/// requests found, per metric (is the list refused while the HPAs' own
/// requests are answered?) and per request (does the HPA's share of the
/// list equal its own answer?), each for [`RECHECK_AFTER`].
#[derive(Debug, Default)]
pub(super) struct ExternalChecks {
    /// Namespace-wide list paths (namespace and metric) the server refused
    /// (and answered an HPA's own request since, or none asked yet).
    refused: Mutex<Expiring<()>>,
    /// Per HPA request path (namespace, metric, metric selector): whether
    /// its share of the list was what its own request returned.
    matched: Mutex<Expiring<bool>>,
}

impl ExternalChecks {
    /// Where the series of `own` (an HPA's request) come from, `list`
    /// being its metric's namespace-wide list.
    pub(super) fn route(&self, list: &str, own: &str) -> ExternalRoute {
        if self.list_refused(list) {
            return ExternalRoute::Own;
        }
        match lock(&self.matched).fresh(own) {
            None => ExternalRoute::Unchecked,
            Some(true) => ExternalRoute::Shared,
            Some(false) => ExternalRoute::Own,
        }
    }

    /// Whether the server was found to refuse `list`.
    pub(super) fn list_refused(&self, list: &str) -> bool {
        lock(&self.refused).fresh(list).is_some()
    }

    /// The server refused `list`.
    pub(super) fn refused(&self, list: &str) {
        lock(&self.refused).set(list, ());
    }

    /// Forgets that the server refused `list` (it refused an HPA's own
    /// request too: down, not refusing lists).
    pub(super) fn answered(&self, list: &str) {
        lock(&self.refused).by_key.remove(list);
    }

    /// Whether the share of the list of `own` was what `own` returned.
    pub(super) fn matched(&self, own: &str, matched: bool) {
        lock(&self.matched).set(own, matched);
    }

    /// What the findings hold ([`crate::memory`]): one per request path
    /// (an External HPA's, kept [`RECHECK_AFTER`] after its HPA is gone:
    /// HPAs of the same namespace, metric and selector share it) and per
    /// refused list.
    pub(super) fn footprint(&self, meter: &Meter) -> Footprint {
        let (matched, refused) = (lock(&self.matched), lock(&self.refused));
        Footprint {
            structure: std::borrow::Cow::Borrowed("external list checks (10 min each)"),
            entries: matched.by_key.len() + refused.by_key.len(),
            bytes: matched.footprint(meter) + refused.footprint(meter),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Findings by key, each holding for [`RECHECK_AFTER`]; stale ones are
/// swept each time their number has doubled (a deleted HPA's request
/// leaves nothing for good).
#[derive(Debug)]
struct Expiring<T> {
    by_key: HashMap<String, (Instant, T)>,
    sweep_at: usize,
}

impl<T> Default for Expiring<T> {
    fn default() -> Self {
        Self {
            by_key: HashMap::default(),
            sweep_at: SLOTS_SWEPT_FROM,
        }
    }
}

impl<T> Expiring<T> {
    /// The bytes the findings hold: the table and each key.
    fn footprint(&self, meter: &Meter) -> u64 {
        table_bytes(
            self.by_key.capacity(),
            std::mem::size_of::<(String, (Instant, T))>(),
        ) + self
            .by_key
            .keys()
            .map(|key| meter.block(key.capacity()))
            .sum::<u64>()
    }

    /// What was found for `key`, unless it is older than [`RECHECK_AFTER`].
    fn fresh(&self, key: &str) -> Option<&T> {
        self.by_key
            .get(key)
            .filter(|(at, _)| at.elapsed() < RECHECK_AFTER)
            .map(|(_, found)| found)
    }

    fn set(&mut self, key: &str, found: T) {
        if let Some(entry) = self.by_key.get_mut(key) {
            *entry = (Instant::now(), found);
            return;
        }
        if self.by_key.len() >= self.sweep_at {
            self.by_key
                .retain(|_, (at, _)| at.elapsed() < RECHECK_AFTER);
            self.sweep_at = SLOTS_SWEPT_FROM.max(2 * self.by_key.len());
        }
        self.by_key.insert(key.to_owned(), (Instant::now(), found));
    }
}

impl SharedLists {
    /// Empty lists, each response fresh for `window` of `clock`, a slot
    /// nobody asks for kept for `retain`.
    pub(super) fn new(
        window: Duration,
        share_external: bool,
        retain: Duration,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            clock,
            round: AtomicU64::new(0),
            window,
            share_external,
            external_checks: ExternalChecks::default(),
            retain,
            pods: Mutex::default(),
            pod_values: Mutex::default(),
            custom: Mutex::default(),
            external: Mutex::default(),
        }
    }

    /// The response for `key`, fetched by `fetch` unless one younger than
    /// the window is held.
    pub(super) async fn get<T, F>(
        &self,
        slots: &Mutex<Slots<T>>,
        key: &str,
        fetch: F,
    ) -> Result<Arc<T>, kube::Error>
    where
        F: Future<Output = Result<T, kube::Error>>,
    {
        self.get_after(slots, key, |_| fetch).await
    }

    /// [`Self::get`], `fetch` given the response held before (older than
    /// the window), if any, to reuse what it can.
    pub(super) async fn get_after<T, F>(
        &self,
        slots: &Mutex<Slots<T>>,
        key: &str,
        fetch: impl FnOnce(Option<Arc<T>>) -> F,
    ) -> Result<Arc<T>, kube::Error>
    where
        F: Future<Output = Result<T, kube::Error>>,
    {
        let slot = slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .slot(key, self.retain, self.clock.now());
        let mut held = slot.lock().await;
        let round = self.round.load(Ordering::SeqCst);
        if let Some(h) = held.as_ref()
            && h.round == round
            && younger(h.at, self.clock.now(), self.window)
        {
            return Ok(Arc::clone(&h.value));
        }
        let previous = held.as_ref().map(|h| Arc::clone(&h.value));
        let value = Arc::new(fetch(previous).await?);
        *held = Some(Held {
            at: self.clock.now(),
            round,
            value: Arc::clone(&value),
        });
        Ok(value)
    }

    /// Starts a new round: nothing fetched before is shared after.
    pub(super) fn next_round(&self) {
        self.round.fetch_add(1, Ordering::SeqCst);
    }
}

impl<T> Slots<T> {
    /// The bytes the slots hold ([`crate::memory`]), each response as
    /// `value` counts it: a response is skipped while a fetch holds its
    /// slot.
    fn footprint(&self, meter: &Meter, value: impl Fn(&T) -> u64) -> u64 {
        // A slot: two counters, the lock and its response's time and `Arc`.
        let slot = 2 * std::mem::size_of::<usize>()
            + std::mem::size_of::<tokio::sync::Mutex<Option<Held<T>>>>();
        table_bytes(
            self.by_key.capacity(),
            std::mem::size_of::<(String, Slot<T>)>(),
        ) + self
            .by_key
            .iter()
            .map(|(key, held)| {
                let response = held.try_lock().ok().and_then(|held| {
                    held.as_ref().map(|held| {
                        meter.block(2 * std::mem::size_of::<usize>() + std::mem::size_of::<T>())
                            + value(&held.value)
                    })
                });
                meter.block(key.capacity()) + meter.block(slot) + response.unwrap_or(0)
            })
            .sum::<u64>()
    }
}

impl SharedLists {
    /// What the shared lists hold ([`crate::memory`]).
    pub(super) fn footprint(&self, meter: &Meter) -> Footprint {
        fn locked<T>(slots: &Mutex<Slots<T>>) -> std::sync::MutexGuard<'_, Slots<T>> {
            slots
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
        let pods = locked(&self.pods).footprint(meter, |list| list.footprint(meter));
        let pod_values = locked(&self.pod_values).footprint(meter, |values| {
            values.as_ref().map_or(0, |(values, listed)| {
                custom_values_footprint(values, meter)
                    + meter
                        .block(2 * std::mem::size_of::<usize>() + std::mem::size_of::<ListedPods>())
                    + listed.footprint(meter)
            })
        });
        let custom =
            locked(&self.custom).footprint(meter, |values| custom_values_footprint(values, meter));
        let external = locked(&self.external).footprint(meter, |list| meter.heap(list));
        Footprint {
            structure: std::borrow::Cow::Borrowed("shared metrics lists"),
            entries: locked(&self.pods).by_key.len(),
            bytes: pods + pod_values + custom + external,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpa_core::clock::VirtualClock;

    fn fetch(n: u32) -> impl Future<Output = Result<u32, kube::Error>> {
        std::future::ready(Ok(n))
    }

    /// Two syncs a sync period apart on a virtual clock are a moment apart
    /// on the host: the second must fetch again. Within the window, on the
    /// controller's clock, it shares.
    #[tokio::test]
    async fn freshness_is_measured_on_the_controller_s_clock() {
        let clock = VirtualClock::new(Timestamp::UNIX_EPOCH);
        let lists = SharedLists::new(
            Duration::from_secs(1),
            false,
            Duration::from_secs(30),
            Arc::new(clock.clone()),
        );
        let slots = Mutex::new(Slots::<u32>::default());
        assert_eq!(*lists.get(&slots, "ns", fetch(1)).await.unwrap(), 1);
        clock.advance(jiff::SignedDuration::from_millis(999));
        assert_eq!(
            *lists.get(&slots, "ns", fetch(2)).await.unwrap(),
            1,
            "shared within the window"
        );
        clock.advance(jiff::SignedDuration::from_secs(15));
        assert_eq!(
            *lists.get(&slots, "ns", fetch(3)).await.unwrap(),
            3,
            "a sync period later on the controller's clock: fetched again"
        );
    }

    /// A scenario changes a metric and syncs again at the same instant of
    /// its virtual clock: the sync on demand starts a round, and fetches.
    #[tokio::test]
    async fn a_new_round_fetches_again_at_the_same_instant() {
        let clock = VirtualClock::new(Timestamp::UNIX_EPOCH);
        let lists = SharedLists::new(
            Duration::from_secs(1),
            false,
            Duration::from_secs(30),
            Arc::new(clock),
        );
        let slots = Mutex::new(Slots::<u32>::default());
        assert_eq!(*lists.get(&slots, "ns", fetch(1)).await.unwrap(), 1);
        assert_eq!(*lists.get(&slots, "ns", fetch(2)).await.unwrap(), 1);
        lists.next_round();
        assert_eq!(*lists.get(&slots, "ns", fetch(3)).await.unwrap(), 3);
        assert_eq!(*lists.get(&slots, "ns", fetch(4)).await.unwrap(), 3);
    }

    /// A churn of HPAs, each asking its own path: the slots of paths no
    /// HPA asked for within `retain` go, so the map holds about the
    /// requests of the last `retain`, not every path ever asked.
    #[tokio::test]
    async fn slots_of_requests_nobody_repeats_are_swept() {
        let clock = VirtualClock::new(Timestamp::UNIX_EPOCH);
        let mut slots = Slots::<u32>::default();
        let retain = Duration::from_secs(30);
        let key = |i: u32| format!("/namespaces/ns/queue?labelSelector=hpa%3D{i}");
        for i in 0..10_000 {
            let slot = slots.slot(&key(i), retain, clock.now());
            *slot.lock().await = Some(Held {
                at: clock.now(),
                round: 0,
                value: Arc::new(i),
            });
            drop(slot);
            clock.advance(jiff::SignedDuration::from_millis(100));
            // 300 requests a retention, twice that before a sweep.
            assert!(slots.len() <= 2 * 301 + 1, "{i}: {}", slots.len());
        }
        // The recent ones are kept, with their responses.
        let recent = slots.slot(&key(9_999), retain, clock.now());
        assert_eq!(recent.lock().await.as_ref().map(|h| *h.value), Some(9_999));
    }

    /// A fixed set of namespaces, all listed at once (a first pass), then
    /// each once a sync period: no new key comes to trigger a sweep, yet
    /// only the lists of the last `retain` stay (at 100,000 HPAs, every
    /// namespace's list held for good was the controller's largest
    /// structure).
    #[tokio::test]
    async fn a_list_nobody_asks_for_within_the_window_is_let_go() {
        let clock = VirtualClock::new(Timestamp::UNIX_EPOCH);
        let mut slots = Slots::<u32>::default();
        let retain = Duration::from_secs(1);
        let ask = |slots: &mut Slots<u32>, i: u32, now: Timestamp| {
            let slot = slots.slot(&format!("ns-{}", i % 1_000), retain, now);
            let mut held = slot.try_lock().unwrap();
            *held = Some(Held {
                at: now,
                round: 0,
                value: Arc::new(i),
            });
        };
        for i in 0..1_000u32 {
            ask(&mut slots, i, clock.now());
        }
        assert_eq!(slots.len(), 1_000);
        // Then one namespace every 15 ms: 1,000 over a 15 s period.
        for i in 0..3_000u32 {
            clock.advance(jiff::SignedDuration::from_millis(15));
            ask(&mut slots, i, clock.now());
            if i >= 140 {
                // The lists of the last second, and those of the second
                // before until the next timed sweep.
                assert!(slots.len() <= 2 * 67 + 1, "{i}: {}", slots.len());
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_finding_holds_until_it_is_checked_again() {
        let checks = ExternalChecks::default();
        let (list, own) = ("/ns/queue", "/ns/queue?labelSelector=q%3Da");
        assert_eq!(checks.route(list, own), ExternalRoute::Unchecked);
        checks.matched(own, true);
        assert_eq!(checks.route(list, own), ExternalRoute::Shared);
        assert_eq!(
            checks.route(list, "/ns/queue?labelSelector=q%3Db"),
            ExternalRoute::Unchecked,
            "each request is checked on its own"
        );
        checks.refused(list);
        assert_eq!(
            checks.route(list, own),
            ExternalRoute::Own,
            "a refused list wins over an earlier match"
        );
        tokio::time::advance(RECHECK_AFTER).await;
        assert_eq!(checks.route(list, own), ExternalRoute::Unchecked);
        checks.matched(own, false);
        assert_eq!(checks.route(list, own), ExternalRoute::Own);
    }

    /// A churn of HPAs each checked once: the findings nobody renewed
    /// within [`RECHECK_AFTER`] go.
    #[tokio::test(start_paused = true)]
    async fn findings_of_requests_nobody_repeats_are_swept() {
        let mut found = Expiring::<bool>::default();
        for i in 0..10_000 {
            found.set(&format!("/ns/queue?labelSelector=hpa%3D{i}"), true);
            tokio::time::advance(Duration::from_millis(600)).await;
            // 1,000 findings a recheck period, twice that before a sweep.
            assert!(
                found.by_key.len() <= 2 * 1_001 + 1,
                "{i}: {}",
                found.by_key.len()
            );
        }
        assert_eq!(
            found.fresh("/ns/queue?labelSelector=hpa%3D9999"),
            Some(&true)
        );
        assert_eq!(found.fresh("/ns/queue?labelSelector=hpa%3D0"), None);
    }
}
