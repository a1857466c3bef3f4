//! Reads metrics through the API server's aggregated metrics APIs, as
//! upstream's `metrics/client.go` does: `metrics.k8s.io/v1beta1` for pod
//! resources, `custom.metrics.k8s.io` (v1beta2, else v1beta1, chosen by
//! discovery) for pod and object metrics, `external.metrics.k8s.io/v1beta1`
//! for external ones. Wire types are `hpa_metrics_api`, the one
//! definition shared with the fake server.
//!
//! Each fetch returns the core's [`Fetched`] value; errors become the text
//! upstream's client returns (`unable to fetch metrics from ... API: ...`),
//! because that text ends up in conditions and events.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use foldhash::HashMap as FastMap;
use hpa_core::calc::{ContainerUsage, PodCustomSample, PodResourceSample};
use hpa_core::decide::{ExternalSample, Fetched, MetricQuery, ObjectSample};
use hpa_core::{Quantity, Selector};
use hpa_metrics_api::{
    CUSTOM_GROUP, EXTERNAL_GROUP, ExternalMetricValue, ExternalMetricValueList, METRICS_GROUP,
    MetricValueList, MetricValueListV1Beta1, PodMetrics, PodMetricsList,
};
use http_body_util::BodyExt;
use jiff::SignedDuration;
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroup, Time};
use kube::core::GroupVersion;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::time::Instant;

use super::config::parse_go_duration;
use super::label_index::LabelIndex;
use super::list_scan::{self, RawPod};
use super::pod_index::{ListedPods, PodIndex};
use super::scale::parse_group_version;
pub use super::slim_metrics::CustomVersion;
use super::slim_metrics::{self, CustomList, CustomValue};

/// Reads the metrics APIs through a kube client.
#[derive(Clone)]
pub struct MetricsClient {
    client: kube::Client,
    /// The custom metrics version and when it was discovered; rediscovered
    /// after `rediscover_after` (upstream invalidates every sync period).
    custom_version: Arc<Mutex<Option<(CustomVersion, Instant)>>>,
    rediscover_after: Duration,
    /// Custom-metrics resource name per (group, kind) (`deployments.apps`).
    resources: Arc<Mutex<HashMap<(String, String), String>>>,
    /// Opt-in: namespace-wide pod metrics lists shared within a window.
    shared: Option<Arc<SharedLists>>,
    /// The controller's pod cache, to pick an HPA's pods out of a shared
    /// namespace-wide custom metrics answer (with `shared`).
    pod_cache: Option<PodIndex>,
}

/// One slot per key: its latest response and when it was fetched.
type Slot<T> = Arc<tokio::sync::Mutex<Option<(Instant, Arc<T>)>>>;

/// A namespace's `metrics.k8s.io` pod list, converted and indexed by label
/// once per window: each HPA takes its pods' samples without matching or
/// converting the whole list again.
#[derive(Debug)]
struct NamespaceResources {
    /// Each entry as the core reads it, or why it could not be read.
    samples: Vec<Result<PodResourceSample, String>>,
    /// The entries' labels (the pods' labels, which the metrics server copies).
    labels: Arc<LabelIndex>,
    /// What the next window's list may reuse; `None` when this one was
    /// decoded without keeping texts.
    memo: Option<ResourceMemo>,
}

/// The texts a list was decoded from, with what they decoded to. From one
/// window to the next a namespace's pods, labels and usage mostly stay the
/// same: a text seen in the previous window's list is not decoded again.
/// Decoding is a function of the text, so reusing its result changes
/// nothing.
#[derive(Debug, Default)]
struct ResourceMemo {
    /// Each entry's labels text (empty: none), each followed by a NUL
    /// (which JSON text never holds unescaped): the same sequence reuses
    /// the whole label index.
    label_texts: String,
    /// Each distinct `containers` text, converted.
    containers: FastMap<Box<str>, Result<Arc<[ContainerUsage]>, String>>,
}

impl NamespaceResources {
    /// The list in the response body `text` for `namespace`: the same
    /// entries, in the same order, with the same errors as
    /// [`resource_sample`] gives for the full decode. Parts whose text the
    /// `previous` window's list held are taken from it.
    fn decode(
        text: &str,
        namespace: &str,
        previous: Option<&Self>,
    ) -> Result<Self, serde_json::Error> {
        match Self::decode_reusing(text, namespace, previous) {
            Some(list) => Ok(list),
            // A text that does not decode: decoded again in one piece, for
            // the error a whole-body decode gives (its position included).
            None => Self::decode_whole(text, namespace),
        }
    }

    /// [`Self::decode`] keeping the texts for the next window; `None` when
    /// some part does not decode (or `labels` is given twice in an entry,
    /// where only the whole decode can tell whether the first is good).
    fn decode_reusing(text: &str, namespace: &str, previous: Option<&Self>) -> Option<Self> {
        // The scanner reads the usual shape; anything else, serde.
        let items = match list_scan::pod_metrics(text) {
            Some(items) => items,
            None => serde_json::from_str::<slim_metrics::RawPodMetricsList<'_>>(text)
                .ok()?
                .items
                .into_iter()
                .map(RawPod::from)
                .collect(),
        };
        let old = previous.and_then(|p| p.memo.as_ref());
        let mut memo = ResourceMemo {
            label_texts: String::with_capacity(old.map_or(0, |m| m.label_texts.len())),
            containers: FastMap::default(),
        };
        let mut label_texts = Vec::with_capacity(items.len());
        let mut samples = Vec::with_capacity(items.len());
        let mut reuse = Reuse {
            namespace: Arc::from(namespace),
            window: None,
        };
        let mut timestamp: Option<(&str, jiff::Timestamp)> = None;
        for (at, item) in items.into_iter().enumerate() {
            if item.labels_repeated {
                return None;
            }
            let labels = item.labels;
            memo.label_texts.push_str(labels.unwrap_or_default());
            memo.label_texts.push('\0');
            label_texts.push(labels);
            let stamp = match timestamp {
                Some((seen, parsed)) if seen == item.timestamp => parsed,
                _ => {
                    let parsed = serde_json::from_str::<Time>(item.timestamp).ok()?.0;
                    timestamp = Some((item.timestamp, parsed));
                    parsed
                }
            };
            let window = reuse.window(item.window);
            let containers = match item.containers {
                None => Ok(Arc::from([])),
                Some(raw) => memo.containers(raw, old)?,
            };
            let namespace = reuse.namespace(item.namespace);
            let name = item.name.as_deref().unwrap_or_default();
            let pod = match previous.and_then(|p| p.samples.get(at)) {
                Some(Ok(sample)) if *sample.pod == *name => Arc::clone(&sample.pod),
                _ => Arc::from(name),
            };
            samples.push(containers.map(|containers| PodResourceSample {
                pod,
                namespace,
                timestamp: stamp,
                window,
                containers,
            }));
        }
        let labels = match (previous, old) {
            (Some(previous), Some(old)) if old.label_texts == memo.label_texts => {
                Arc::clone(&previous.labels)
            }
            _ => Arc::new(LabelIndex::new(
                label_texts
                    .into_iter()
                    .map(|text| text.map(serde_json::from_str).transpose())
                    .collect::<Result<Vec<_>, _>>()
                    .ok()?,
            )),
        };
        Some(Self {
            samples,
            labels,
            memo: Some(memo),
        })
    }

    /// The list decoded in one piece with the slim wire types
    /// ([`slim_metrics`]) straight into the samples and the label index.
    fn decode_whole(text: &str, namespace: &str) -> Result<Self, serde_json::Error> {
        let list: slim_metrics::PodMetricsList<'_> = serde_json::from_str(text)?;
        let mut labels = Vec::with_capacity(list.items.len());
        let mut samples = Vec::with_capacity(list.items.len());
        let mut reuse = Reuse {
            namespace: Arc::from(namespace),
            window: None,
        };
        for mut item in list.items {
            labels.push(item.metadata.labels.take());
            samples.push(slim_resource_sample(item, &mut reuse));
        }
        Ok(Self {
            samples,
            labels: Arc::new(LabelIndex::new(labels)),
            memo: None,
        })
    }

    /// The samples of the entries `selector` selects, in the list's order,
    /// as a request with `selector` would return them.
    fn select(&self, selector: &Selector) -> Result<Vec<PodResourceSample>, String> {
        self.labels
            .select(selector)
            .into_iter()
            .filter_map(|at| self.samples.get(at))
            .cloned()
            .collect()
    }
}

impl ResourceMemo {
    /// The containers of the text `raw`: converted earlier in this list, in
    /// the `old` window's list, or now; `None` when it does not decode.
    fn containers(
        &mut self,
        raw: &str,
        old: Option<&Self>,
    ) -> Option<Result<Arc<[ContainerUsage]>, String>> {
        if let Some(done) = self.containers.get(raw) {
            return Some(done.clone());
        }
        let done = match old.and_then(|old| old.containers.get(raw)) {
            Some(done) => done.clone(),
            None => {
                let decoded: Vec<slim_metrics::ContainerMetrics<'_>> =
                    serde_json::from_str(raw).ok()?;
                slim_containers(decoded)
            }
        };
        self.containers.insert(Box::from(raw), done.clone());
        Some(done)
    }
}

/// A `metrics.k8s.io` window as the core reads it: a Go duration, zero
/// when it is not one.
fn window(text: &str) -> SignedDuration {
    parse_go_duration(text)
        .ok()
        .and_then(|d| SignedDuration::try_from(d).ok())
        .unwrap_or(SignedDuration::ZERO)
}

/// One `metrics.k8s.io` entry as the core reads it.
fn resource_sample(item: PodMetrics, namespace: &str) -> Result<PodResourceSample, String> {
    let window = window(&item.window);
    let containers = item
        .containers
        .into_iter()
        .map(|c| {
            let usage = c
                .usage
                .iter()
                .map(|(name, q)| Ok((name.clone(), quantity(q)?)))
                .collect::<Result<_, String>>()?;
            Ok(ContainerUsage {
                name: c.name,
                usage,
            })
        })
        .collect::<Result<Arc<[_]>, String>>()?;
    Ok(PodResourceSample {
        pod: item.metadata.name.unwrap_or_default().into(),
        namespace: item
            .metadata
            .namespace
            .map_or_else(|| namespace.into(), Arc::from),
        timestamp: item.timestamp.0,
        window,
        containers,
    })
}

/// What consecutive entries of one list usually share, converted once:
/// the namespace (the list's own, or an entry's equal to it) and the
/// window text with its duration.
struct Reuse<'a> {
    namespace: Arc<str>,
    window: Option<(Cow<'a, str>, SignedDuration)>,
}

impl<'a> Reuse<'a> {
    /// The duration of the window `text`.
    fn window(&mut self, text: Cow<'a, str>) -> SignedDuration {
        match &self.window {
            Some((seen, parsed)) if *seen == text => *parsed,
            _ => {
                let parsed = window(&text);
                self.window = Some((text, parsed));
                parsed
            }
        }
    }

    /// An entry's namespace: the list's own when it gives none.
    fn namespace(&self, given: Option<Cow<'_, str>>) -> Arc<str> {
        match given {
            None => Arc::clone(&self.namespace),
            Some(ns) if *ns == *self.namespace => Arc::clone(&self.namespace),
            Some(ns) => Arc::from(ns),
        }
    }
}

/// One entry of the slim decode as the core reads it: what
/// [`resource_sample`] gives for the same entry of the full decode.
fn slim_resource_sample<'a>(
    item: slim_metrics::PodMetrics<'a>,
    reuse: &mut Reuse<'a>,
) -> Result<PodResourceSample, String> {
    let window = reuse.window(item.window);
    let containers = slim_containers(item.containers)?;
    Ok(PodResourceSample {
        pod: item.metadata.name.as_deref().unwrap_or_default().into(),
        namespace: reuse.namespace(item.metadata.namespace),
        timestamp: item.timestamp.0,
        window,
        containers,
    })
}

/// An entry's containers as the core reads them.
fn slim_containers(
    containers: Vec<slim_metrics::ContainerMetrics<'_>>,
) -> Result<Arc<[ContainerUsage]>, String> {
    containers
        .into_iter()
        .map(|c| {
            let usage = c
                .usage
                .into_iter()
                .map(|(name, q)| Ok((name, quantity_text(&q.0)?)))
                .collect::<Result<_, String>>()?;
            Ok(ContainerUsage {
                name: c.name,
                usage,
            })
        })
        .collect()
}

/// A custom metrics response: (object name, value, timestamp, window). The
/// name is shared (`Arc`): a namespace-wide answer's entries are cloned for
/// every HPA picking its pods' share.
type CustomValues = Vec<(Arc<str>, Quantity, jiff::Timestamp, Option<i64>)>;

/// A namespace-wide custom metrics answer for `pods/*/METRIC` and its pod
/// names; `None` when that request failed (each HPA then asks with its
/// selector, as upstream).
type NamespacePodValues = Option<(CustomValues, Arc<ListedPods>)>;

/// Responses reused by every HPA synced within `window` (concurrent fetches
/// of one key wait for one request):
/// - `metrics.k8s.io` pod lists per namespace, each HPA filtering by its
///   own selector, so it sees the pods a list by selector would return;
/// - `custom.metrics.k8s.io` `pods/*/METRIC` answers per namespace, metric
///   and metric selector, without the pod selector, each HPA picking its
///   pods with the pod cache ([`PodIndex::pick`], which declines when in
///   doubt: the HPA then makes its own request);
/// - `custom.metrics.k8s.io` responses per exact request path (HPAs asking
///   the same thing: same namespace, metric and selectors);
/// - `external.metrics.k8s.io` responses per exact request path (same
///   namespace, metric and metric selector), or with `share_external` the
///   series per namespace and metric, each HPA filtering them by its
///   metric selector on the series' labels.
#[derive(Debug)]
struct SharedLists {
    window: Duration,
    share_external: bool,
    /// How long a slot no HPA asks for is kept (two sync periods): its
    /// response helps decode the next one, but a slot of a deleted HPA's
    /// request would otherwise stay for good.
    retain: Duration,
    pods: Mutex<Slots<NamespaceResources>>,
    pod_values: Mutex<Slots<NamespacePodValues>>,
    custom: Mutex<Slots<CustomValues>>,
    external: Mutex<Slots<ExternalMetricValueList>>,
}

/// The fewest slots a sweep waits for.
const SLOTS_SWEPT_FROM: usize = 64;

/// Slots by request key, swept of stale ones each time their number has
/// doubled since the last sweep (amortized O(1) a request).
#[derive(Debug)]
struct Slots<T> {
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
    /// The response for `key`, fetched by `fetch` unless one younger than
    /// the window is held.
    async fn get<T, F>(
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
    async fn get_after<T, F>(
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

impl std::fmt::Debug for MetricsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsClient").finish_non_exhaustive()
    }
}

/// Percent-encodes a query value (selectors hold `=`, `,`, `!`, spaces, parentheses).
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b));
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn with_selectors(path: String, selector: Option<&Selector>, metric: Option<&Selector>) -> String {
    let mut query = Vec::new();
    if let Some(s) = selector.filter(|s| !s.is_everything()) {
        query.push(format!("labelSelector={}", encode(&s.to_string())));
    }
    if let Some(s) = metric.filter(|s| !s.is_everything()) {
        query.push(format!("metricLabelSelector={}", encode(&s.to_string())));
    }
    if query.is_empty() {
        path
    } else {
        format!("{path}?{}", query.join("&"))
    }
}

/// The error text of a failed request, as client-go would print it.
fn error_text(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

fn quantity(
    q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
) -> Result<Quantity, String> {
    quantity_text(&q.0)
}

fn quantity_text(text: &str) -> Result<Quantity, String> {
    Quantity::parse(text).map_err(|e| format!("invalid quantity {text:?}: {e}"))
}

impl MetricsClient {
    /// A client; the custom metrics version is rediscovered every
    /// `rediscover_after`.
    pub fn new(client: kube::Client, rediscover_after: Duration) -> Self {
        Self {
            client,
            custom_version: Arc::default(),
            rediscover_after,
            resources: Arc::default(),
            shared: None,
            pod_cache: None,
        }
    }

    /// This client, sharing one namespace-wide pod metrics list among the
    /// HPAs of a namespace synced within `window` (see [`super::observe::Extensions`]).
    /// With `share_external`, external series are also listed once per
    /// namespace and metric and filtered by their labels: right for servers
    /// that return every series of a metric without a selector (the fake
    /// metrics server, prometheus-adapter's external rules), wrong for
    /// those that need the selector to answer (KEDA).
    #[must_use]
    pub fn with_shared_lists(mut self, window: Duration, share_external: bool) -> Self {
        self.shared = Some(Arc::new(SharedLists {
            window,
            share_external,
            retain: self.rediscover_after.saturating_mul(2).max(window),
            pods: Mutex::default(),
            pod_values: Mutex::default(),
            custom: Mutex::default(),
            external: Mutex::default(),
        }));
        self
    }

    /// This client, with shared lists, answering Pods metrics from one
    /// namespace-wide custom metrics list per window, each HPA's pods
    /// picked by `pods` (the controller's pod cache).
    #[must_use]
    pub fn with_pod_cache(mut self, pods: PodIndex) -> Self {
        self.pod_cache = Some(pods);
        self
    }

    /// The namespace's pod metrics list, fetched at most once per window.
    async fn shared_pod_list(
        &self,
        shared: &SharedLists,
        namespace: &str,
    ) -> Result<Arc<NamespaceResources>, kube::Error> {
        let path = format!("/apis/{METRICS_GROUP}/v1beta1/namespaces/{namespace}/pods");
        let fetch = |previous: Option<Arc<NamespaceResources>>| async move {
            let text = self.get_text(&path).await?;
            NamespaceResources::decode(&text, namespace, previous.as_deref())
                .map_err(|e| decode_failed(&text, e))
        };
        shared.get_after(&shared.pods, namespace, fetch).await
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, kube::Error> {
        let request = http::Request::get(path)
            .body(Vec::new())
            .map_err(kube::Error::HttpError)?;
        self.client.request::<T>(request).await
    }

    /// The body of a GET, for the slim decodes: the request and its errors
    /// are those of [`Self::get`] (kube's `request_text`), which decodes the
    /// same text. Collected here rather than by `request_text`, which
    /// copies a whole body once more (a namespace list is ~300 KB).
    async fn get_text(&self, path: &str) -> Result<String, kube::Error> {
        let request = http::Request::get(path)
            .body(kube::client::Body::empty())
            .map_err(kube::Error::HttpError)?;
        let response = self.client.send(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        let text = String::from_utf8(Vec::from(body)).map_err(kube::Error::FromUtf8)?;
        if status.is_client_error() || status.is_server_error() {
            return Err(api_error(&text, status));
        }
        Ok(text)
    }

    /// Performs one query of the core's plan for an HPA in `namespace`.
    pub async fn fetch(&self, namespace: &str, query: &MetricQuery) -> Fetched {
        match query {
            MetricQuery::PodResource { selector, .. } => {
                Fetched::PodResource(self.pod_resources(namespace, selector).await)
            }
            MetricQuery::PodsCustom {
                metric,
                selector,
                metric_selector,
            } => Fetched::PodsCustom(
                self.pods_custom(namespace, metric, selector, metric_selector)
                    .await,
            ),
            MetricQuery::Object {
                described_object,
                metric,
                metric_selector,
            } => Fetched::Object(
                self.object(namespace, described_object, metric, metric_selector)
                    .await,
            ),
            MetricQuery::External {
                metric,
                metric_selector,
            } => Fetched::External(self.external(namespace, metric, metric_selector).await),
        }
    }

    /// `metrics.k8s.io` PodMetrics of the pods matching `selector`.
    pub async fn pod_resources(
        &self,
        namespace: &str,
        selector: &Selector,
    ) -> Result<Vec<PodResourceSample>, String> {
        let failed = |e: kube::Error| {
            format!(
                "unable to fetch metrics from resource metrics API: {}",
                error_text(&e)
            )
        };
        match &self.shared {
            Some(shared) => self
                .shared_pod_list(shared, namespace)
                .await
                .map_err(failed)?
                .select(selector),
            None => self
                .get::<PodMetricsList>(&with_selectors(
                    format!("/apis/{METRICS_GROUP}/v1beta1/namespaces/{namespace}/pods"),
                    Some(selector),
                    None,
                ))
                .await
                .map_err(failed)?
                .items
                .into_iter()
                .map(|item| resource_sample(item, namespace))
                .collect(),
        }
    }

    async fn custom_version(&self) -> CustomVersion {
        let cached = *self
            .custom_version
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((version, at)) = cached
            && at.elapsed() < self.rediscover_after
        {
            return version;
        }
        let discovered = self
            .get::<APIGroup>(&format!("/apis/{CUSTOM_GROUP}"))
            .await
            .ok()
            .and_then(|group| {
                let served: Vec<String> =
                    group.versions.iter().map(|v| v.version.clone()).collect();
                let preferred = group.preferred_version.map(|p| p.version);
                let pick = |v: &str| match v {
                    "v1beta2" => Some(CustomVersion::V1Beta2),
                    "v1beta1" => Some(CustomVersion::V1Beta1),
                    _ => None,
                };
                preferred
                    .as_deref()
                    .and_then(pick)
                    .or_else(|| served.iter().find_map(|v| pick(v)))
            });
        let version = discovered.unwrap_or(CustomVersion::V1Beta2);
        *self
            .custom_version
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((version, Instant::now()));
        version
    }

    /// GET a custom metrics path in the preferred version; a 404 on v1beta2
    /// retries v1beta1 (servers that only speak the old version).
    async fn custom_values(&self, tail: &str) -> Result<CustomValues, kube::Error> {
        match &self.shared {
            Some(shared) => {
                let values = shared
                    .get(&shared.custom, tail, self.fetch_custom_values(tail, None))
                    .await?;
                Ok((*values).clone())
            }
            None => self.fetch_custom_values(tail, None).await,
        }
    }

    /// The values of a custom metrics path; with `slim`, decoded with the
    /// slim wire types ([`slim_metrics`]: what the full decode gives for
    /// the fields read), for the namespace-wide list shared by many HPAs,
    /// sharing names with the previous window's values `slim` holds.
    async fn fetch_custom_values(
        &self,
        tail: &str,
        slim: Option<Option<&CustomValues>>,
    ) -> Result<CustomValues, kube::Error> {
        let version = self.custom_version().await;
        if version == CustomVersion::V1Beta2 {
            let path = format!("/apis/{CUSTOM_GROUP}/{}/{tail}", version.as_str());
            let values = if let Some(previous) = slim {
                self.get_text(&path)
                    .await
                    .and_then(|text| slim_custom_values_v1beta2(&text, previous))
            } else {
                self.get::<MetricValueList>(&path)
                    .await
                    .and_then(custom_values_v1beta2)
            };
            match values {
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                other => return other,
            }
        }
        let path = format!("/apis/{CUSTOM_GROUP}/v1beta1/{tail}");
        if let Some(previous) = slim {
            let text = self.get_text(&path).await?;
            slim_custom_values_v1beta1(&text, previous)
        } else {
            custom_values_v1beta1(self.get(&path).await?)
        }
    }

    /// `custom.metrics.k8s.io` `pods/*/<metric>` for the pods matching `selector`.
    pub async fn pods_custom(
        &self,
        namespace: &str,
        metric: &str,
        selector: &Selector,
        metric_selector: &Selector,
    ) -> Result<Vec<PodCustomSample>, String> {
        let values = match self
            .shared_pod_values(namespace, metric, selector, metric_selector)
            .await
        {
            Some(values) => values,
            None => {
                let tail = with_selectors(
                    format!("namespaces/{namespace}/pods/*/{metric}"),
                    Some(selector),
                    Some(metric_selector),
                );
                self.custom_values(&tail).await.map_err(|e| {
                    format!(
                        "unable to fetch metrics from custom metrics API: {}",
                        error_text(&e)
                    )
                })?
            }
        };
        Ok(values
            .into_iter()
            .map(|(pod, value, timestamp, window)| PodCustomSample {
                pod,
                value,
                timestamp,
                window: window.map(SignedDuration::from_secs),
            })
            .collect())
    }

    /// The share of `selector` in the namespace's `pods/*/METRIC` answer
    /// (listed once per window without a pod selector), picked with the pod
    /// cache; `None` when sharing is off, the selector selects everything
    /// (the per-HPA request is then that same request), the namespace-wide
    /// request failed, or the pod cache cannot tell which entries the
    /// selector's request would return.
    async fn shared_pod_values(
        &self,
        namespace: &str,
        metric: &str,
        selector: &Selector,
        metric_selector: &Selector,
    ) -> Option<CustomValues> {
        let (shared, pods) = (self.shared.as_ref()?, self.pod_cache.as_ref()?);
        if selector.is_everything() {
            return None;
        }
        let tail = with_selectors(
            format!("namespaces/{namespace}/pods/*/{metric}"),
            None,
            Some(metric_selector),
        );
        let path = &tail;
        let fetch = |previous: Option<Arc<NamespacePodValues>>| async move {
            let previous = previous.as_deref().and_then(Option::as_ref);
            Ok(self
                .fetch_custom_values(path, Some(previous.map(|(values, _)| values)))
                .await
                .ok()
                .map(|values| {
                    let listed = match previous {
                        // The same pods, in the same order: the same names.
                        Some((old, listed))
                            if old.len() == values.len()
                                && old
                                    .iter()
                                    .zip(&values)
                                    .all(|(a, b)| Arc::ptr_eq(&a.0, &b.0)) =>
                        {
                            Arc::clone(listed)
                        }
                        _ => Arc::new(ListedPods::new(values.iter().map(|(pod, ..)| &**pod))),
                    };
                    (values, listed)
                }))
        };
        let answer = shared
            .get_after(&shared.pod_values, &tail, fetch)
            .await
            .ok()?;
        let (values, listed) = answer.as_ref().as_ref()?;
        let picked = pods.pick(namespace, selector, listed)?;
        picked
            .into_iter()
            .map(|at| values.get(at).cloned())
            .collect()
    }

    /// The custom metrics resource name of a kind: `pods`, `deployments.apps`.
    async fn resource_of(&self, object: &CrossVersionObjectReference) -> Result<String, String> {
        let api_version = object.api_version.clone().unwrap_or_default();
        let mut gv = parse_group_version(&api_version).map_err(|e| e.to_string())?;
        if gv.version.is_empty() {
            // No apiVersion: the core group, as upstream's RESTMapper finds it.
            gv = GroupVersion::gv(&gv.group, "v1");
        }
        let key = (gv.group.clone(), object.kind.clone());
        if let Some(found) = self
            .resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
        {
            return Ok(found.clone());
        }
        let gvk = kube::core::GroupVersionKind::gvk(&gv.group, &gv.version, &object.kind);
        let (resource, _) = kube::discovery::pinned_kind(&self.client, &gvk)
            .await
            .map_err(|e| {
                format!(
                    "no matches for kind {:?} in group {:?}: {e}",
                    object.kind, gv.group
                )
            })?;
        let name = if resource.group.is_empty() {
            resource.plural
        } else {
            format!("{}.{}", resource.plural, resource.group)
        };
        self.resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, name.clone());
        Ok(name)
    }

    /// `custom.metrics.k8s.io` metric of one object; a `Namespace` uses the
    /// root-scoped `namespaces/{ns}/metrics/{metric}` route, and as upstream
    /// always the HPA's own namespace.
    pub async fn object(
        &self,
        namespace: &str,
        object: &CrossVersionObjectReference,
        metric: &str,
        metric_selector: &Selector,
    ) -> Result<ObjectSample, String> {
        let is_namespace = object.kind == "Namespace"
            && object
                .api_version
                .as_deref()
                .is_none_or(|v| v == "v1" || v.is_empty());
        let tail = if is_namespace {
            format!("namespaces/{namespace}/metrics/{metric}")
        } else {
            let resource = self
                .resource_of(object)
                .await
                .map_err(|e| format!("unable to fetch metrics from custom metrics API: {e}"))?;
            format!("namespaces/{namespace}/{resource}/{}/{metric}", object.name)
        };
        let tail = with_selectors(tail, None, Some(metric_selector));
        let values = self.custom_values(&tail).await.map_err(|e| {
            format!(
                "unable to fetch metrics from custom metrics API: {}",
                error_text(&e)
            )
        })?;
        // k8s.io/metrics' GetForObject: anything but exactly one value fails.
        match values.as_slice() {
            [(_, value, timestamp, _)] => Ok(ObjectSample {
                value: *value,
                timestamp: *timestamp,
            }),
            other => Err(format!(
                "unable to fetch metrics from custom metrics API: the custom metrics API server returned {} results when we asked for exactly one",
                other.len()
            )),
        }
    }

    /// `external.metrics.k8s.io/v1beta1` series of `metric` matching `metric_selector`.
    pub async fn external(
        &self,
        namespace: &str,
        metric: &str,
        metric_selector: &Selector,
    ) -> Result<ExternalSample, String> {
        let all = format!("/apis/{EXTERNAL_GROUP}/v1beta1/namespaces/{namespace}/{metric}");
        let failed = |e: kube::Error| {
            format!(
                "unable to fetch metrics from external metrics API: {}",
                error_text(&e)
            )
        };
        // Shared answers are read in place, never copied.
        let list: Arc<ExternalMetricValueList> = match &self.shared {
            Some(shared) if shared.share_external => {
                let every = shared
                    .get(
                        &shared.external,
                        &all,
                        self.get::<ExternalMetricValueList>(&all),
                    )
                    .await
                    .map_err(failed)?;
                return external_sample(
                    every
                        .items
                        .iter()
                        .filter(|v| metric_selector.matches(&v.metric_labels)),
                );
            }
            Some(shared) => {
                // The same request (namespace, metric, metric selector)
                // within the window: one answer.
                let path = with_selectors(all, Some(metric_selector), None);
                shared
                    .get(
                        &shared.external,
                        &path,
                        self.get::<ExternalMetricValueList>(&path),
                    )
                    .await
                    .map_err(failed)?
            }
            None => {
                let path = with_selectors(all, Some(metric_selector), None);
                Arc::new(
                    self.get::<ExternalMetricValueList>(&path)
                        .await
                        .map_err(failed)?,
                )
            }
        };
        external_sample(list.items.iter())
    }
}

/// The core's external sample of the series `items`: their values, and the
/// first one's timestamp.
fn external_sample<'a>(
    items: impl Iterator<Item = &'a ExternalMetricValue>,
) -> Result<ExternalSample, String> {
    let mut timestamp = None;
    let values = items
        .map(|v| {
            timestamp.get_or_insert(v.timestamp.0);
            quantity(&v.value)
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(ExternalSample {
        values,
        timestamp: timestamp.unwrap_or(jiff::Timestamp::UNIX_EPOCH),
    })
}

/// The values of a v1beta2 list.
fn custom_values_v1beta2(list: MetricValueList) -> Result<CustomValues, kube::Error> {
    list.items
        .into_iter()
        .map(|v| {
            let q = quantity(&v.value).map_err(bad_value)?;
            Ok((
                v.described_object.name.into(),
                q,
                v.timestamp.0,
                v.window_seconds,
            ))
        })
        .collect()
}

/// The values of a v1beta1 list.
fn custom_values_v1beta1(list: MetricValueListV1Beta1) -> Result<CustomValues, kube::Error> {
    list.items
        .into_iter()
        .map(|v| {
            let q = quantity(&v.value).map_err(bad_value)?;
            Ok((
                v.described_object.name.into(),
                q,
                v.timestamp.0,
                v.window_seconds,
            ))
        })
        .collect()
}

/// The values of a v1beta2 list body, decoded slim: what
/// [`custom_values_v1beta2`] gives for the full decode. Names the
/// `previous` window's values hold are shared with them.
fn slim_custom_values_v1beta2(
    text: &str,
    previous: Option<&CustomValues>,
) -> Result<CustomValues, kube::Error> {
    slim_custom_values::<
        slim_metrics::MetricValueList<'_>,
        slim_metrics::MetricValueList<'_, &RawValue>,
    >(text, previous, CustomVersion::V1Beta2)
}

/// The values of a v1beta1 list body, decoded slim: what
/// [`custom_values_v1beta1`] gives for the full decode.
fn slim_custom_values_v1beta1(
    text: &str,
    previous: Option<&CustomValues>,
) -> Result<CustomValues, kube::Error> {
    slim_custom_values::<
        slim_metrics::MetricValueListV1Beta1<'_>,
        slim_metrics::MetricValueListV1Beta1<'_, &RawValue>,
    >(text, previous, CustomVersion::V1Beta1)
}

/// The values of a custom metrics list body, decoded as `R` (timestamps
/// kept as text: consecutive values mostly share one, parsed once), or,
/// when some part does not decode, as `L` for the whole decode's error.
fn slim_custom_values<'a, L, R>(
    text: &'a str,
    previous: Option<&CustomValues>,
    version: CustomVersion,
) -> Result<CustomValues, kube::Error>
where
    L: Deserialize<'a> + CustomList<'a, Time>,
    R: Deserialize<'a> + CustomList<'a, &'a RawValue>,
{
    if let Some(values) = custom_values_reusing::<R>(text, previous, version) {
        return Ok(values);
    }
    let list: L = serde_json::from_str(text).map_err(|e| decode_failed(text, e))?;
    list.into_values()
        .map(|v| {
            let q = quantity_text(&v.value.0).map_err(bad_value)?;
            Ok((Arc::from(&*v.name), q, v.timestamp.0, v.window_seconds))
        })
        .collect()
}

/// [`slim_custom_values`]' values, parsing a timestamp or a value only when
/// it differs from the one before, and sharing a name with the `previous`
/// window's value at the same position; `None` when some part does not
/// decode.
fn custom_values_reusing<'a, R>(
    text: &'a str,
    previous: Option<&CustomValues>,
    version: CustomVersion,
) -> Option<CustomValues>
where
    R: Deserialize<'a> + CustomList<'a, &'a RawValue>,
{
    // The scanner reads the usual shape; anything else, serde.
    let items: Vec<CustomValue<'a, &'a str>> = match list_scan::custom_values(text, version) {
        Some(items) => items,
        None => serde_json::from_str::<R>(text)
            .ok()?
            .into_values()
            .map(CustomValue::raw_text)
            .collect(),
    };
    let mut values = Vec::with_capacity(previous.map_or(0, Vec::len));
    let mut stamp: Option<(&str, jiff::Timestamp)> = None;
    let mut last: Option<(Cow<'a, str>, Quantity)> = None;
    for (at, v) in items.into_iter().enumerate() {
        let timestamp = match stamp {
            Some((seen, parsed)) if seen == v.timestamp => parsed,
            _ => {
                let parsed = serde_json::from_str::<Time>(v.timestamp).ok()?.0;
                stamp = Some((v.timestamp, parsed));
                parsed
            }
        };
        let value = match &last {
            Some((seen, parsed)) if *seen == v.value.0 => *parsed,
            _ => {
                let parsed = quantity_text(&v.value.0).ok()?;
                last = Some((v.value.0, parsed));
                parsed
            }
        };
        let name = match previous.and_then(|p| p.get(at)) {
            Some((name, ..)) if **name == *v.name => Arc::clone(name),
            _ => Arc::from(&*v.name),
        };
        values.push((name, value, timestamp, v.window_seconds));
    }
    Some(values)
}

/// A failed response as kube's client reports it: its `Status`, or one
/// made of the body's text and the response's code.
fn api_error(text: &str, code: http::StatusCode) -> kube::Error {
    let status = serde_json::from_str::<kube::core::Status>(text).unwrap_or_else(|_| {
        kube::core::Status::failure(text.trim(), "Failed to parse error data")
            .with_code(code.as_u16())
    });
    kube::Error::Api(status.boxed())
}

fn decode_failed(text: &str, err: serde_json::Error) -> kube::Error {
    tracing::warn!("{}, {:?}", text, err);
    kube::Error::SerdeError(err)
}

fn bad_value(text: String) -> kube::Error {
    kube::Error::Service(text.into())
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

    #[test]
    fn selectors_are_percent_encoded_in_the_query() {
        let sel = Selector::parse("app=web,tier!=db").unwrap();
        let path = with_selectors("/x".into(), Some(&sel), None);
        assert_eq!(path, "/x?labelSelector=app%3Dweb%2Ctier%21%3Ddb");
        assert_eq!(
            with_selectors(
                "/x".into(),
                Some(&Selector::everything()),
                Some(&Selector::everything())
            ),
            "/x"
        );
    }

    /// A metrics-server-like list with the odd entries a server may send:
    /// no namespace, another namespace, an escaped one, no name, a name
    /// given twice and escaped, no or null labels, repeated, unparsable and
    /// negative windows, quantities as numbers, bad quantities (two in one
    /// container: the first by resource name is reported), no containers,
    /// a resource given twice, and metadata and fields the core never reads.
    fn representative_list() -> String {
        // Raw text, not `json!`: a map built by `json!` keeps one of two
        // equal keys and re-escapes strings its own way.
        r#"{
            "kind": "PodMetricsList",
            "apiVersion": "metrics.k8s.io/v1beta1",
            "metadata": {"resourceVersion": "17"},
            "items": [
                {
                    "metadata": {
                        "name": "web-0", "namespace": "ns",
                        "creationTimestamp": "2026-01-01T00:00:00Z",
                        "labels": {"app": "web", "tier": "front"},
                        "annotations": {"a": "b"},
                        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": "u"}]
                    },
                    "timestamp": "2026-01-01T00:00:10Z", "window": "15.011s",
                    "containers": [
                        {"name": "app", "usage": {"memory": "65536Ki", "cpu": "123456n"}},
                        {"name": "sidecar", "usage": {"cpu": "5m", "cpu": "7m"}}
                    ],
                    "extra": {"ignored": [1, 2, 3]}
                },
                {
                    "metadata": {"name": "web-1", "labels": {"app": "web", "tier": "back"}},
                    "timestamp": "2026-01-01T00:00:11Z", "window": "15.011s",
                    "containers": [
                        {"name": "app", "usage": {"cpu": "250m"}},
                        {"name": "n", "usage": {"cpu": 2, "memory": 1.5}}
                    ]
                },
                {
                    "metadata": {"name": "web-2", "namespace": "elsewhere", "labels": null},
                    "timestamp": "2026-01-01T00:00:12.5Z", "window": "30s",
                    "containers": [{"name": "app", "usage": {"cpu": "1.5"}}]
                },
                {
                    "metadata": {"name": "web-\u0033", "name": "web-\"3", "namespace": "n\u0073",
                        "labels": {"app": "w\"eb"}},
                    "timestamp": "2026-01-01T00:00:13Z", "window": "bogus",
                    "containers": [{"name": "app", "usage": {"memory": "1Zi", "cpu": "1Qx"}}]
                },
                {
                    "metadata": {"namespace": "ns"},
                    "timestamp": "2026-01-01T00:00:14Z", "window": "-5s",
                    "containers": []
                },
                {
                    "timestamp": "2026-01-01T00:00:15Z", "window": "1m0s",
                    "containers": [{"name": "app", "usage": {"cpu": "not-a-quantity"}}]
                },
                {
                    "metadata": {"name": "web-6", "namespace": "", "labels": {}},
                    "timestamp": "2026-01-01T00:00:16Z", "window": "1m0s",
                    "containers": [{"name": "app", "usage": {}}, {"name": "b"}]
                }
            ]
        }"#
        .to_owned()
    }

    /// The full decode's samples and label index of a list body.
    fn full_decode(body: &str) -> (Vec<Result<PodResourceSample, String>>, LabelIndex) {
        let full: PodMetricsList = serde_json::from_str(body).unwrap();
        let labels: Vec<_> = full
            .items
            .iter()
            .map(|item| item.metadata.labels.clone())
            .collect();
        let samples = full
            .items
            .into_iter()
            .map(|item| resource_sample(item, "ns"))
            .collect();
        (samples, LabelIndex::new(labels))
    }

    #[test]
    fn the_slim_decode_gives_the_full_decodes_samples_labels_and_order() {
        let body = representative_list();
        let (samples, labels) = full_decode(&body);
        let slim = NamespaceResources::decode(&body, "ns", None).unwrap();
        assert_eq!(slim.samples, samples);
        assert_eq!(*slim.labels, labels);
        assert!(slim.memo.is_some(), "decoded by parts");
        let whole = NamespaceResources::decode_whole(&body, "ns").unwrap();
        assert_eq!(
            (whole.samples, whole.labels),
            (slim.samples.clone(), slim.labels.clone())
        );
        // The odd entries are there, as the full decode reads them.
        assert_eq!(slim.samples.len(), 7);
        let ok = |at: usize| slim.samples[at].as_ref().unwrap();
        let failed = |at: usize| slim.samples[at].as_ref().unwrap_err();
        assert_eq!(&*ok(1).namespace, "ns", "no namespace: the list's");
        assert_eq!(&*ok(2).namespace, "elsewhere");
        assert_eq!(&*ok(4).pod, "", "no name: empty");
        assert_eq!(ok(4).window, SignedDuration::ZERO, "negative window: zero");
        assert_eq!(&*ok(6).namespace, "", "an empty namespace is kept");
        assert_eq!(ok(6).window, SignedDuration::from_mins(1));
        assert_eq!(ok(0).window, SignedDuration::from_millis(15_011));
        assert_eq!(ok(1).window, ok(0).window);
        assert_eq!(
            ok(0).containers[1].usage["cpu"],
            Quantity::parse("7m").unwrap()
        );
        assert_eq!(
            ok(1).containers[1].usage["memory"],
            Quantity::parse("1.5").unwrap()
        );
        assert!(
            failed(3).starts_with(r#"invalid quantity "1Qx": "#),
            "{}",
            failed(3)
        );
        assert!(failed(5).starts_with(r#"invalid quantity "not-a-quantity": "#));
        // And each HPA's share is what the full decode's entries give.
        let app_web = Selector::parse("app=web").unwrap();
        assert_eq!(
            slim.select(&app_web),
            Ok(vec![
                samples[0].clone().unwrap(),
                samples[1].clone().unwrap()
            ])
        );
    }

    /// Bodies that do not decode fail the slim decode with the full
    /// decode's serde error, in the fields the core reads.
    #[test]
    fn a_body_that_does_not_decode_fails_with_the_full_decodes_error() {
        for body in [
            "",
            "not json",
            r#"{"items": {}}"#,
            r#"{"items": [{"window": "1s"}]}"#,
            r#"{"items": [{"timestamp": "2026-01-01T00:00:00Z"}]}"#,
            r#"{"items": [{"timestamp": "yesterday", "window": "1s"}]}"#,
            r#"{"items": [{"timestamp": "2026-01-01T00:00:00Z", "window": 15}]}"#,
            r#"{"items": [{"metadata": "x", "timestamp": "2026-01-01T00:00:00Z", "window": "1s"}]}"#,
            r#"{"items": [{"metadata": {"name": 5}, "timestamp": "2026-01-01T00:00:00Z", "window": "1s"}]}"#,
            r#"{"items": [{"metadata": {"labels": ["a"]}, "timestamp": "2026-01-01T00:00:00Z", "window": "1s"}]}"#,
            r#"{"items": [{"timestamp": "2026-01-01T00:00:00Z", "window": "1s", "containers": [{"usage": {}}]}]}"#,
            r#"{"items": [{"timestamp": "2026-01-01T00:00:00Z", "window": "1s", "containers": [{"name": "a", "usage": {"cpu": true}}]}]}"#,
            r#"{"items": [{"timestamp": "2026-01-01T00:00:00Z", "window": "1s", "containers": [{"name": "a", "usage": null}]}]}"#,
            r#"{"items": [{"timestamp": "2026-01-01T00:00:00Z", "window": "1s", "containers": null}]}"#,
            r#"{"kind": 3, "items": []}"#,
            r#"{"metadata": {"resourceVersion": 3}, "items": []}"#,
            r#"{"items": [{"timestamp": "2026-01-01T00:00:00Z", "window": "1s"}], "#,
        ] {
            let full = serde_json::from_str::<PodMetricsList>(body).unwrap_err();
            let slim = NamespaceResources::decode(body, "ns", None).unwrap_err();
            assert_eq!(slim.to_string(), full.to_string(), "{body}");
            // A previous window's list changes nothing.
            let previous = NamespaceResources::decode(&representative_list(), "ns", None).unwrap();
            let after = NamespaceResources::decode(body, "ns", Some(&previous)).unwrap_err();
            assert_eq!(after.to_string(), full.to_string(), "{body}");
        }
    }

    /// The bodies of two windows, the second changing some of the first's
    /// entries (names, labels, usage, timestamps) and keeping others: the
    /// second decoded after the first gives what the full decode gives, and
    /// takes what did not change from the first.
    #[test]
    fn a_list_decoded_after_the_previous_windows_gives_the_full_decode() {
        let entry = |name: &str, labels: &str, cpu: &str, at: &str| {
            format!(
                r#"{{"metadata": {{"name": "{name}", "namespace": "ns", "labels": {labels}}},
                "timestamp": "2026-01-01T00:00:{at}Z", "window": "15s",
                "containers": [{{"name": "app", "usage": {{"cpu": "{cpu}"}}}}]}}"#
            )
        };
        let list = |entries: &[String]| format!(r#"{{"items": [{}]}}"#, entries.join(","));
        let first = list(&[
            entry("a", r#"{"app": "web"}"#, "100m", "00"),
            entry("b", r#"{"app": "web"}"#, "200m", "00"),
            entry("c", r#"{"app": "db"}"#, "100m", "00"),
        ]);
        let same_labels = list(&[
            entry("a", r#"{"app": "web"}"#, "300m", "15"),
            entry("b", r#"{"app": "web"}"#, "1Qx", "15"),
            entry("c", r#"{"app": "db"}"#, "100m", "16"),
        ]);
        let relabelled = list(&[
            entry("a", r#"{"app": "db"}"#, "100m", "30"),
            entry("d", "null", "200m", "30"),
            entry("c", r#"{"app": "web", "tier": "x"}"#, "100m", "30"),
            entry("e", r#"{"app": "web"}"#, "100m", "30"),
        ]);
        let web = Selector::parse("app=web").unwrap();
        let mut previous: Option<NamespaceResources> = None;
        for body in [&first, &same_labels, &same_labels, &relabelled, &first] {
            let (samples, labels) = full_decode(body);
            let list = NamespaceResources::decode(body, "ns", previous.as_ref()).unwrap();
            assert_eq!(list.samples, samples, "{body}");
            assert_eq!(*list.labels, labels, "{body}");
            let selected: Result<Vec<_>, String> = labels
                .select(&web)
                .into_iter()
                .map(|at| samples[at].clone())
                .collect();
            assert_eq!(list.select(&web), selected, "{body}");
            previous = Some(list);
        }
        // What was taken from the previous window rather than decoded again.
        let one = NamespaceResources::decode(&first, "ns", None).unwrap();
        let two = NamespaceResources::decode(&same_labels, "ns", Some(&one)).unwrap();
        assert!(
            Arc::ptr_eq(&one.labels, &two.labels),
            "same labels: same index"
        );
        let ok = |list: &NamespaceResources, at: usize| list.samples[at].clone().unwrap();
        assert!(Arc::ptr_eq(&ok(&one, 2).pod, &ok(&two, 2).pod), "same name");
        assert!(
            Arc::ptr_eq(&ok(&one, 2).containers, &ok(&two, 2).containers),
            "same containers text"
        );
        assert!(
            Arc::ptr_eq(&ok(&one, 0).containers, &ok(&one, 2).containers),
            "the same text twice in one list: converted once"
        );
        let three = NamespaceResources::decode(&relabelled, "ns", Some(&two)).unwrap();
        assert!(
            !Arc::ptr_eq(&two.labels, &three.labels),
            "new labels: new index"
        );
    }

    /// `labels` given twice in an entry: the full decode fails on a
    /// malformed first one although the second is good; so does this one.
    #[test]
    fn labels_given_twice_decode_as_the_full_decode_does() {
        for body in [
            r#"{"items": [{"metadata": {"labels": 5, "labels": {"a": "b"}}, "timestamp": "2026-01-01T00:00:00Z", "window": "1s"}]}"#,
            r#"{"items": [{"metadata": {"labels": {"a": 1}, "labels": {"a": "b"}}, "timestamp": "2026-01-01T00:00:00Z", "window": "1s"}]}"#,
        ] {
            let full = serde_json::from_str::<PodMetricsList>(body).unwrap_err();
            let slim = NamespaceResources::decode(body, "ns", None).unwrap_err();
            assert_eq!(slim.to_string(), full.to_string(), "{body}");
        }
        let good = r#"{"items": [{"metadata": {"labels": {"a": "c"}, "labels": {"a": "b"}}, "timestamp": "2026-01-01T00:00:00Z", "window": "1s"}]}"#;
        let (samples, labels) = full_decode(good);
        let slim = NamespaceResources::decode(good, "ns", None).unwrap();
        assert_eq!((slim.samples, &*slim.labels), (samples, &labels));
    }

    /// The slim and the full decode of a custom metrics list body, as
    /// their values or their errors' text.
    /// The slim decode is also checked to give the same after a previous
    /// window's values.
    fn both_custom_decodes(body: &str, v1beta2: bool) -> [Result<CustomValues, String>; 2] {
        let text = |e: kube::Error| e.to_string();
        let value = |name: &str| {
            let q = Quantity::parse("1").unwrap();
            (Arc::from(name), q, jiff::Timestamp::UNIX_EPOCH, None)
        };
        let previous = vec![value("web-0"), value("a"), value("")];
        let slim = if v1beta2 {
            slim_custom_values_v1beta2
        } else {
            slim_custom_values_v1beta1
        };
        assert_eq!(
            slim(body, Some(&previous)).map_err(text),
            slim(body, None).map_err(text),
            "{body}"
        );
        if v1beta2 {
            [
                slim_custom_values_v1beta2(body, None).map_err(text),
                serde_json::from_str(body)
                    .map_err(kube::Error::SerdeError)
                    .and_then(custom_values_v1beta2)
                    .map_err(text),
            ]
        } else {
            [
                slim_custom_values_v1beta1(body, None).map_err(text),
                serde_json::from_str(body)
                    .map_err(kube::Error::SerdeError)
                    .and_then(custom_values_v1beta1)
                    .map_err(text),
            ]
        }
    }

    /// A name the previous window's value at the same position holds is
    /// shared with it; timestamps and values are read as they are.
    #[test]
    fn the_slim_custom_decode_shares_the_previous_windows_names() {
        let body = |a: &str, b: &str, v: &str, at: &str| {
            format!(
                r#"{{"items": [
                {{"describedObject": {{"name": "{a}"}}, "metric": {{"name": "m"}}, "timestamp": "2026-01-01T00:00:{at}Z", "value": "{v}"}},
                {{"describedObject": {{"name": "{b}"}}, "metric": {{"name": "m"}}, "timestamp": "2026-01-01T00:00:00Z", "value": "{v}"}}]}}"#
            )
        };
        let one = slim_custom_values_v1beta2(&body("a", "b", "1", "00"), None).unwrap();
        let two = slim_custom_values_v1beta2(&body("a", "c", "2", "15"), Some(&one)).unwrap();
        assert!(Arc::ptr_eq(&one[0].0, &two[0].0), "same name, same place");
        assert_eq!(&*two[1].0, "c");
        assert_eq!(two[0].1, Quantity::parse("2").unwrap());
        assert_eq!(two[1].1, two[0].1);
        assert_eq!(two[0].2, "2026-01-01T00:00:15Z".parse().unwrap());
        assert_eq!(two[1].2, "2026-01-01T00:00:00Z".parse().unwrap());
    }

    #[test]
    fn the_slim_custom_decode_gives_the_full_decodes_values_and_errors() {
        let v1beta2 = r#"{"kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta2",
            "metadata": {},
            "items": [
                {"describedObject": {"kind": "Pod", "namespace": "ns", "name": "web-0", "apiVersion": "/v1"},
                 "metric": {"name": "rps", "selector": {"matchLabels": {"a": "b"}}},
                 "timestamp": "2026-01-01T00:00:00Z", "windowSeconds": 30, "value": "1500m"},
                {"describedObject": {"name": "web-\"\u0031"},
                 "metric": {"name": "rps"},
                 "timestamp": "2026-01-01T00:00:01Z", "value": 7, "extra": [1]},
                {"describedObject": {"kind": "Pod"},
                 "metric": {"name": "rps", "selector": null},
                 "timestamp": "2026-01-01T00:00:02Z", "windowSeconds": null, "value": 2.5}
            ]}"#;
        let [slim, full] = both_custom_decodes(v1beta2, true);
        assert_eq!(slim, full);
        let values = slim.unwrap();
        assert_eq!(values.len(), 3);
        assert_eq!(&*values[1].0, "web-\"1", "an escaped name");
        assert_eq!(&*values[2].0, "", "no name: empty");
        let v1beta1 = r#"{"items": [
                {"describedObject": {"kind": "Pod", "name": "web-0"}, "metricName": "rps",
                 "timestamp": "2026-01-01T00:00:00Z", "window": 60, "value": "5",
                 "selector": {"matchLabels": {"a": "b"}}},
                {"describedObject": {"name": "web-1"}, "metricName": "rps",
                 "timestamp": "2026-01-01T00:00:00Z", "value": "6"}
            ]}"#;
        let [slim, full] = both_custom_decodes(v1beta1, false);
        assert_eq!(slim, full);
        assert_eq!(slim.unwrap().len(), 2);
        let item = |rest: &str| {
            format!(
                r#"{{"items": [{{"describedObject": {{"name": "a"}}, "metric": {{"name": "m"}}, "metricName": "m", "timestamp": "2026-01-01T00:00:00Z", {rest}}}]}}"#
            )
        };
        for (body, v1beta2) in [
            (item(r#""value": "not-a-quantity""#), true),
            (item(r#""value": "not-a-quantity""#), false),
            (item(r#""value": true"#), true),
            (item(r#""window": "60", "value": "1""#), false),
            (item(r#""windowSeconds": "60", "value": "1""#), true),
            (item(r#""x": 1"#), true),
            (
                r#"{"items": [{"describedObject": {}, "timestamp": "2026-01-01T00:00:00Z", "value": "1"}]}"#
                    .to_owned(),
                true,
            ),
            (
                r#"{"items": [{"describedObject": {}, "timestamp": "2026-01-01T00:00:00Z", "value": "1"}]}"#
                    .to_owned(),
                false,
            ),
            (
                r#"{"items": [{"describedObject": {"name": 1}, "metric": {"name": "m"}, "timestamp": "2026-01-01T00:00:00Z", "value": "1"}]}"#
                    .to_owned(),
                true,
            ),
            (
                r#"{"items": [{"describedObject": {"name": "a", "name": "b"}, "metric": {"name": "m"}, "timestamp": "2026-01-01T00:00:00Z", "value": "1"}]}"#
                    .to_owned(),
                true,
            ),
            ("{".to_owned(), true),
        ] {
            let [slim, full] = both_custom_decodes(&body, v1beta2);
            assert!(full.is_err(), "{body}");
            assert_eq!(slim, full, "{body}");
        }
    }
}
