//! Responses shared by the HPAs synced within a window, per namespace or
//! per request: one slot per key, fetched once while it is fresh.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpa_metrics_api::ExternalMetricValueList;
use tokio::time::Instant;

use super::decode::{CustomValues, NamespaceResources, custom_values_footprint};
use crate::memory::{Footprint, Meter, table_bytes};
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
///   metric selector on the series' labels.
#[derive(Debug)]
pub(super) struct SharedLists {
    pub(super) window: Duration,
    pub(super) share_external: bool,
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

impl SharedLists {
    /// Empty lists, each response fresh for `window`, a slot nobody asks
    /// for kept for `retain`.
    pub(super) fn new(window: Duration, share_external: bool, retain: Duration) -> Self {
        Self {
            window,
            share_external,
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

impl<T> Slots<T> {
    /// The bytes the slots hold ([`crate::memory`]), each response as
    /// `value` counts it: a response is skipped while a fetch holds its
    /// slot.
    fn footprint(&self, meter: &Meter, value: impl Fn(&T) -> u64) -> u64 {
        // A slot: two counters, the lock and its response's time and `Arc`.
        let slot = 2 * std::mem::size_of::<usize>()
            + std::mem::size_of::<tokio::sync::Mutex<Option<(Instant, Arc<T>)>>>();
        table_bytes(
            self.by_key.capacity(),
            std::mem::size_of::<(String, Slot<T>)>(),
        ) + self
            .by_key
            .iter()
            .map(|(key, held)| {
                let response = held.try_lock().ok().and_then(|held| {
                    held.as_ref().map(|(_, response)| {
                        meter.block(2 * std::mem::size_of::<usize>() + std::mem::size_of::<T>())
                            + value(response)
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
}
