//! Responses shared by the HPAs synced within a window, per namespace or
//! per request: one slot per key, fetched once while it is fresh; and what
//! checking a namespace-wide external list against the HPAs' own requests
//! found.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpa_metrics_api::ExternalMetricValueList;
use tokio::time::Instant;

use super::decode::{CustomValues, NamespaceResources};
use crate::pod_index::ListedPods;

/// One slot per key: its latest response and when it was fetched.
type Slot<T> = Arc<tokio::sync::Mutex<Option<(Instant, Arc<T>)>>>;

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
    pub(super) window: Duration,
    pub(super) share_external: bool,
    /// Which external requests the namespace-wide lists answer.
    pub(super) external_checks: ExternalChecks,
    /// How long a slot no HPA asks for is kept (two sync periods): its
    /// response helps decode the next one, but a slot of a deleted HPA's
    /// request would otherwise stay for good.
    pub(super) retain: Duration,
    pub(super) pods: Mutex<Slots<NamespaceResources>>,
    pub(super) pod_values: Mutex<Slots<NamespacePodValues>>,
    pub(super) custom: Mutex<Slots<CustomValues>>,
    pub(super) external: Mutex<Slots<ExternalMetricValueList>>,
}

/// The fewest slots a sweep waits for.
const SLOTS_SWEPT_FROM: usize = 64;

/// Slots by request key, swept of stale ones each time their number has
/// doubled since the last sweep (amortized O(1) a request).
#[derive(Debug)]
pub(super) struct Slots<T> {
    by_key: HashMap<String, Slot<T>>,
    sweep_at: usize,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Self {
            by_key: HashMap::new(),
            sweep_at: SLOTS_SWEPT_FROM,
        }
    }
}

impl<T> Slots<T> {
    /// The slot of `key`, made if missing; a new one may first sweep away
    /// the slots nobody holds whose response is older than `retain`.
    fn slot(&mut self, key: &str, retain: Duration) -> Slot<T> {
        if let Some(slot) = self.by_key.get(key) {
            return Arc::clone(slot);
        }
        if self.by_key.len() >= self.sweep_at {
            self.by_key.retain(|_, slot| {
                Arc::strong_count(slot) > 1
                    || slot.try_lock().map_or(true, |held| {
                        held.as_ref().is_some_and(|(at, _)| at.elapsed() < retain)
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
            by_key: HashMap::new(),
            sweep_at: SLOTS_SWEPT_FROM,
        }
    }
}

impl<T> Expiring<T> {
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
    /// Empty lists, each response fresh for `window`, a slot nobody asks
    /// for kept for `retain`.
    pub(super) fn new(window: Duration, share_external: bool, retain: Duration) -> Self {
        Self {
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
            .slot(key, self.retain);
        let mut held = slot.lock().await;
        if let Some((at, value)) = held.as_ref()
            && at.elapsed() < self.window
        {
            return Ok(Arc::clone(value));
        }
        let previous = held.as_ref().map(|(_, value)| Arc::clone(value));
        let value = Arc::new(fetch(previous).await?);
        *held = Some((Instant::now(), Arc::clone(&value)));
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A churn of HPAs, each asking its own path: the slots of paths no
    /// HPA asked for within `retain` go, so the map holds about the
    /// requests of the last `retain`, not every path ever asked.
    #[tokio::test(start_paused = true)]
    async fn slots_of_requests_nobody_repeats_are_swept() {
        let mut slots = Slots::<u32>::default();
        let retain = Duration::from_secs(30);
        let key = |i: u32| format!("/namespaces/ns/queue?labelSelector=hpa%3D{i}");
        for i in 0..10_000 {
            let slot = slots.slot(&key(i), retain);
            *slot.lock().await = Some((Instant::now(), Arc::new(i)));
            drop(slot);
            tokio::time::advance(Duration::from_millis(100)).await;
            // 300 requests a retention, twice that before a sweep.
            assert!(slots.len() <= 2 * 301 + 1, "{i}: {}", slots.len());
        }
        // The recent ones are kept, with their responses.
        let recent = slots.slot(&key(9_999), retain);
        assert_eq!(recent.lock().await.as_ref().map(|(_, v)| **v), Some(9_999));
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
