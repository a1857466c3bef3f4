//! [`MetricsClient`]: the requests of upstream's `metrics/client.go`, and
//! the text of their errors.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpa_core::Selector;
use hpa_core::calc::{PodCustomSample, PodResourceSample};
use hpa_core::decide::{ExternalSample, Fetched, MetricQuery, ObjectSample};
use hpa_metrics_api::{
    CUSTOM_GROUP, EXTERNAL_GROUP, ExternalMetricValue, ExternalMetricValueList, METRICS_GROUP,
    MetricValueList, PodMetricsList,
};
use http_body_util::BodyExt;
use jiff::SignedDuration;
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroup;
use kube::core::GroupVersion;
use tokio::time::Instant;

use super::decode::{self, CustomValues, NamespaceResources, decode_failed, quantity};
use super::raw::CustomVersion;
use super::shared::{ExternalRoute, NamespacePodValues, SharedLists};
use crate::pod_index::{ListedPods, PodIndex};
use crate::scale::parse_group_version;

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

impl MetricsClient {
    /// What the shared lists hold, and what checking external lists
    /// found ([`crate::memory`]); nothing without them.
    pub fn footprint(&self, meter: &crate::memory::Meter) -> Vec<crate::memory::Footprint> {
        self.shared.as_ref().map_or_else(Vec::new, |shared| {
            vec![
                shared.footprint(meter),
                shared.external_checks.footprint(meter),
            ]
        })
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
    /// HPAs of a namespace synced within `window` (see [`crate::observe::Extensions`]).
    /// With `share_external`, external series are also listed once per
    /// namespace and metric and filtered by their labels, for each request
    /// where that was found to give what the request itself gives (see
    /// [`Self::external`]).
    /// The window is measured on `clock`, the controller's.
    #[must_use]
    pub fn with_shared_lists(
        mut self,
        window: Duration,
        share_external: bool,
        clock: Arc<dyn hpa_core::clock::Clock>,
    ) -> Self {
        let retain = window;
        self.shared = Some(Arc::new(SharedLists::new(
            window,
            share_external,
            retain,
            clock,
        )));
        self
    }

    /// Starts a new round of shared lists (freshness is per round too): the HPAs
    /// synced on demand together share, those of the next call do not.
    pub fn next_round(&self) {
        if let Some(shared) = &self.shared {
            shared.next_round();
        }
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
            self.get_text(&path, |text| {
                NamespaceResources::decode(text, namespace, previous.as_deref())
                    .map_err(|e| decode_failed(text, e))
            })
            .await
        };
        shared.get_after(&shared.pods, namespace, fetch).await
    }

    /// A GET decoded as `T`. Its future is boxed, as is
    /// [`Self::get_text`]'s: the client's request future takes kilobytes,
    /// and every HPA's metric fetch would otherwise carry (and move) that
    /// much for a request it makes once a window, if at all.
    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, kube::Error> {
        let request = http::Request::get(path)
            .body(Vec::new())
            .map_err(kube::Error::HttpError)?;
        Box::pin(self.client.request::<T>(request)).await
    }

    /// The body of a GET, for the slim decodes, read by `read`: the request
    /// and its errors are those of [`Self::get`] (kube's `request_text`),
    /// which decodes the same text. Read where the client left it (a
    /// namespace list is ~300 KB): kube's `request_text` copies a whole
    /// body once more, and so did a `String` made of it.
    async fn get_text<T>(
        &self,
        path: &str,
        read: impl FnOnce(&str) -> Result<T, kube::Error>,
    ) -> Result<T, kube::Error> {
        Box::pin(async {
            let request = http::Request::get(path)
                .body(kube::client::Body::empty())
                .map_err(kube::Error::HttpError)?;
            let response = self.client.send(request).await?;
            let status = response.status();
            let body = response.into_body().collect().await?.to_bytes();
            let finish = |text: &str| {
                if status.is_client_error() || status.is_server_error() {
                    return Err(api_error(text, status));
                }
                read(text)
            };
            match std::str::from_utf8(&body) {
                Ok(text) => finish(text),
                // kube's error holds a `String`'s: made on this path only.
                Err(_) => String::from_utf8(body.to_vec())
                    .map_or_else(|e| Err(kube::Error::FromUtf8(e)), |text| finish(&text)),
            }
        })
        .await
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
                .map(|item| decode::resource_sample(item, namespace))
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

    /// The values of a custom metrics path: with `slim`, decoded with the
    /// slim wire types (what the owned decode gives for the fields read),
    /// for the namespace-wide list shared by many HPAs, sharing names with
    /// the previous window's values `slim` holds; without, with the owned
    /// types, as upstream (see [`decode`]).
    async fn fetch_custom_values(
        &self,
        tail: &str,
        slim: Option<Option<&CustomValues>>,
    ) -> Result<CustomValues, kube::Error> {
        let version = self.custom_version().await;
        if version == CustomVersion::V1Beta2 {
            let path = format!("/apis/{CUSTOM_GROUP}/{}/{tail}", version.as_str());
            let values = if let Some(previous) = slim {
                self.get_text(&path, |text| {
                    decode::slim_custom_values_v1beta2(text, previous)
                })
                .await
            } else {
                self.get::<MetricValueList>(&path)
                    .await
                    .and_then(decode::custom_values_v1beta2)
            };
            match values {
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                other => return other,
            }
        }
        let path = format!("/apis/{CUSTOM_GROUP}/v1beta1/{tail}");
        if let Some(previous) = slim {
            self.get_text(&path, |text| {
                decode::slim_custom_values_v1beta1(text, previous)
            })
            .await
        } else {
            decode::custom_values_v1beta1(self.get(&path).await?)
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
                        _ => Arc::new(ListedPods::new(values.iter().map(|(pod, ..)| pod))),
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
        match &self.shared {
            Some(shared) if shared.share_external => {
                self.external_from_list(shared, all, metric_selector).await
            }
            // The same request (namespace, metric, metric selector) within
            // the window: one answer, read in place, never copied.
            Some(shared) => {
                let path = with_selectors(all, Some(metric_selector), None);
                let list = self
                    .shared_external(shared, &path)
                    .await
                    .map_err(external_failed)?;
                external_sample(list.items.iter())
            }
            None => {
                let path = with_selectors(all, Some(metric_selector), None);
                let list = self
                    .get::<ExternalMetricValueList>(&path)
                    .await
                    .map_err(external_failed)?;
                external_sample(list.items.iter())
            }
        }
    }

    /// The answer to the external request `path`, shared within the window.
    async fn shared_external(
        &self,
        shared: &SharedLists,
        path: &str,
    ) -> Result<Arc<ExternalMetricValueList>, kube::Error> {
        shared
            .get(
                &shared.external,
                path,
                self.get::<ExternalMetricValueList>(path),
            )
            .await
    }

    /// The namespace-wide external list `list`, shared within the window,
    /// unless the server refuses it: the error (the refusal is then
    /// remembered at once, before another HPA waiting for this request
    /// sends its own: the first syncs of a metric's HPAs send one refused
    /// list, not one each), or `None` when such a refusal was found while
    /// this waited. A caller whose own request fails too forgets the
    /// refusal ([`ExternalChecks::answered`]): an API down tells nothing of
    /// the list.
    async fn namespace_list(
        &self,
        shared: &SharedLists,
        list: &str,
    ) -> Result<Arc<ExternalMetricValueList>, Option<kube::Error>> {
        let checks = &shared.external_checks;
        let mut refused_before = false;
        let fetch = async {
            if checks.list_refused(list) {
                refused_before = true;
                return Err(kube::Error::Service("refused before".into()));
            }
            let answer = self.get::<ExternalMetricValueList>(list).await;
            if let Err(err) = &answer {
                tracing::debug!(list, error = %error_text(err), "the external metrics server refuses a namespace-wide list");
                checks.refused(list);
            }
            answer
        };
        let answer = shared.get(&shared.external, list, fetch).await;
        answer.map_err(|err| (!refused_before).then_some(err))
    }

    /// An HPA's external series, from its metric's namespace-wide list
    /// (`list`) filtered by `metric_selector` on the series' labels where
    /// that gives what the HPA's own request gives, else from its own
    /// request. Servers differ: the fake metrics server and
    /// prometheus-adapter's external rules answer the list with every
    /// series and its labels; KEDA's adapter refuses it (the selector names
    /// the ScaledObject); another may answer it with series its own
    /// requests would not return. So each request is checked once
    /// ([`ExternalRoute::Unchecked`]: both are asked and the HPA gets its
    /// own answer), and what was found holds per metric (the list refused)
    /// and per request (the share equal to the own answer, or not).
    async fn external_from_list(
        &self,
        shared: &SharedLists,
        list: String,
        metric_selector: &Selector,
    ) -> Result<ExternalSample, String> {
        let own = with_selectors(list.clone(), Some(metric_selector), None);
        let share = |every: &ExternalMetricValueList| {
            external_sample(
                every
                    .items
                    .iter()
                    .filter(|v| metric_selector.matches(&v.metric_labels)),
            )
        };
        let checks = &shared.external_checks;
        if own == list {
            // Its own request is the list.
            return share(
                &*self
                    .shared_external(shared, &list)
                    .await
                    .map_err(external_failed)?,
            );
        }
        match checks.route(&list, &own) {
            ExternalRoute::Shared => match self.namespace_list(shared, &list).await {
                Ok(every) => share(&every),
                Err(_) => {
                    // Answered before, refused now: the HPA asks on its own.
                    let answer = self.shared_external(shared, &own).await.map_err(|e| {
                        checks.answered(&list);
                        external_failed(e)
                    })?;
                    external_sample(answer.items.iter())
                }
            },
            ExternalRoute::Own => {
                let answer = self
                    .shared_external(shared, &own)
                    .await
                    .map_err(external_failed)?;
                external_sample(answer.items.iter())
            }
            ExternalRoute::Unchecked => {
                let (every, answer) = tokio::join!(
                    self.namespace_list(shared, &list),
                    self.shared_external(shared, &own)
                );
                // Upstream's answer, whatever the list says; a failed own
                // request tells nothing of the list.
                let answer = answer.map_err(|e| {
                    if matches!(every, Err(Some(_))) {
                        checks.answered(&list);
                    }
                    external_failed(e)
                })?;
                let mine = external_sample(answer.items.iter());
                match every {
                    Err(_) => {}
                    Ok(every) => {
                        let same = matches!((share(&every), &mine), (Ok(a), Ok(b)) if a.values == b.values);
                        if !same {
                            tracing::debug!(
                                request = own,
                                "an HPA's share of the namespace-wide external list differs from its own answer; it asks on its own"
                            );
                        }
                        checks.matched(&own, same);
                    }
                }
                mine
            }
        }
    }
}

/// The error text of a failed external metrics request, upstream's.
fn external_failed(e: kube::Error) -> String {
    format!(
        "unable to fetch metrics from external metrics API: {}",
        error_text(&e)
    )
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

/// A failed response as kube's client reports it: its `Status`, or one
/// made of the body's text and the response's code.
fn api_error(text: &str, code: http::StatusCode) -> kube::Error {
    let status = serde_json::from_str::<kube::core::Status>(text).unwrap_or_else(|_| {
        kube::core::Status::failure(text.trim(), "Failed to parse error data")
            .with_code(code.as_u16())
    });
    kube::Error::Api(status.boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A metric fetch's future is what every HPA's sync carries, and moves,
    /// whether or not it sends a request: the client's request futures
    /// (kilobytes) are boxed behind it. Unboxed it took 8,392 bytes.
    #[tokio::test]
    async fn a_metric_fetch_does_not_carry_the_request_future_inline() {
        let service = tower::service_fn(|_: http::Request<kube::client::Body>| async {
            Ok::<_, std::convert::Infallible>(http::Response::new(kube::client::Body::empty()))
        });
        let client = MetricsClient::new(
            kube::Client::new(service, "default"),
            Duration::from_secs(15),
        );
        let query = MetricQuery::PodResource {
            resource: "cpu".into(),
            container: None,
            selector: Selector::parse("app=web").unwrap(),
        };
        let fetch = client.fetch("default", &query);
        let bytes = std::mem::size_of_val(&fetch);
        assert!(bytes <= 3 * 1024, "{bytes} bytes");
    }
}
