//! The one decoder of the `metrics.k8s.io` pod lists and the
//! `custom.metrics.k8s.io` value lists: [`scan`](super::scan) reads their
//! usual shape, the slim serde types ([`slim`](super::slim)) anything else,
//! both into the texts of [`raw`](super::raw), converted here into what the
//! core reads. A list decoded for a shared window may reuse what the
//! previous window's list decoded from the same text.
//!
//! The owned `hpa_metrics_api` types decode the per-HPA requests, as
//! upstream's client does (a malformed field the core never reads fails
//! them, as it fails upstream's), and are the slim decode's test oracle:
//! for every body, the samples, label index and errors are those the owned
//! decode and its conversion give (module tests).

use std::borrow::Cow;
use std::sync::Arc;

use foldhash::HashMap as FastMap;
use hpa_core::calc::{ContainerUsage, PodResourceSample};
use hpa_core::{Quantity, Selector};
use hpa_metrics_api::{MetricValueList, MetricValueListV1Beta1, PodMetrics};
use jiff::SignedDuration;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::raw::{CustomValue, CustomVersion};
use super::scan;
use super::slim::{self, CustomList};
use crate::config::parse_go_duration;
use crate::label_index::LabelIndex;
use crate::memory::{Meter, table_bytes};

/// A custom metrics response: (object name, value, timestamp, window). The
/// name is shared (`Arc`): a namespace-wide answer's entries are cloned for
/// every HPA picking its pods' share.
pub(super) type CustomValues = Vec<(Arc<str>, Quantity, jiff::Timestamp, Option<i64>)>;

/// The bytes a custom metrics answer holds ([`crate::memory`]).
pub(super) fn custom_values_footprint(values: &CustomValues, meter: &Meter) -> u64 {
    meter.buffer::<(Arc<str>, Quantity, jiff::Timestamp, Option<i64>)>(values.capacity())
        + values
            .iter()
            .map(|(name, value, ..)| meter.arc_str(name) + meter.heap(value))
            .sum::<u64>()
}

/// A namespace's `metrics.k8s.io` pod list, converted and indexed by label
/// once per window: each HPA takes its pods' samples without matching or
/// converting the whole list again.
#[derive(Debug)]
pub(super) struct NamespaceResources {
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
    /// the owned decode gives (the tests' oracle). Parts whose text the
    /// `previous` window's list held are taken from it.
    pub(super) fn decode(
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
        let items = match scan::pod_metrics(text) {
            Some(items) => items,
            None => slim::raw_pods(text).ok()?,
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
            _ => Arc::new(LabelIndex::from_texts(label_texts).ok()?),
        };
        Some(Self {
            samples,
            labels,
            memo: Some(memo),
        })
    }

    /// The list decoded in one piece with the slim wire types
    /// ([`slim`](super::slim)) straight into the samples and the label index.
    fn decode_whole(text: &str, namespace: &str) -> Result<Self, serde_json::Error> {
        let list: slim::PodMetricsList<'_> = serde_json::from_str(text)?;
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

    /// The bytes the list holds ([`crate::memory`]): its samples, their
    /// names and containers, the label index and what the next window may
    /// reuse. Containers shared by the memo are counted there, once.
    pub(super) fn footprint(&self, meter: &Meter) -> u64 {
        let mut bytes = meter.buffer::<Result<PodResourceSample, String>>(self.samples.capacity());
        for sample in &self.samples {
            bytes += match sample {
                Ok(sample) => meter.arc_str(&sample.pod),
                Err(message) => meter.block(message.capacity()),
            };
        }
        bytes += self.labels.footprint(meter);
        if let Some(memo) = &self.memo {
            bytes += meter.block(memo.label_texts.capacity())
                + table_bytes(
                    memo.containers.capacity(),
                    std::mem::size_of::<(Box<str>, Result<Arc<[ContainerUsage]>, String>)>(),
                );
            for (text, containers) in &memo.containers {
                bytes += meter.block(text.len())
                    + match containers {
                        Ok(containers) => {
                            meter.block(
                                2 * std::mem::size_of::<usize>()
                                    + std::mem::size_of_val(&**containers),
                            ) + containers
                                .iter()
                                .map(|c| meter.heap(&c.name) + meter.heap(&c.usage))
                                .sum::<u64>()
                        }
                        Err(message) => meter.block(message.capacity()),
                    };
            }
        } else {
            // Without a memo the containers are the samples' own.
            for sample in self.samples.iter().flatten() {
                bytes += meter.block(
                    2 * std::mem::size_of::<usize>() + std::mem::size_of_val(&*sample.containers),
                ) + sample
                    .containers
                    .iter()
                    .map(|c| meter.heap(&c.name) + meter.heap(&c.usage))
                    .sum::<u64>();
            }
        }
        bytes
    }

    /// The samples of the entries `selector` selects, in the list's order,
    /// as a request with `selector` would return them.
    pub(super) fn select(&self, selector: &Selector) -> Result<Vec<PodResourceSample>, String> {
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
                let decoded: Vec<slim::ContainerMetrics<'_>> = serde_json::from_str(raw).ok()?;
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
/// the owned decode gives for the same entry (the tests' oracle).
fn slim_resource_sample<'a>(
    item: slim::PodMetrics<'a>,
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
    containers: Vec<slim::ContainerMetrics<'_>>,
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

/// The values of a v1beta2 list body: what the owned decode of
/// `hpa_metrics_api::MetricValueList` gives (the tests' oracle). Names the
/// `previous` window's values hold are shared with them.
pub(super) fn slim_custom_values_v1beta2(
    text: &str,
    previous: Option<&CustomValues>,
) -> Result<CustomValues, kube::Error> {
    slim_custom_values::<slim::MetricValueList<'_>, slim::MetricValueList<'_, &RawValue>>(
        text,
        previous,
        CustomVersion::V1Beta2,
    )
}

/// The values of a v1beta1 list body: what the owned decode of
/// `hpa_metrics_api::MetricValueListV1Beta1` gives (the tests' oracle).
pub(super) fn slim_custom_values_v1beta1(
    text: &str,
    previous: Option<&CustomValues>,
) -> Result<CustomValues, kube::Error> {
    slim_custom_values::<
        slim::MetricValueListV1Beta1<'_>,
        slim::MetricValueListV1Beta1<'_, &RawValue>,
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
    let items: Vec<CustomValue<'a, &'a str>> = match scan::custom_values(text, version) {
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

pub(super) fn quantity_text(text: &str) -> Result<Quantity, String> {
    Quantity::parse(text).map_err(|e| format!("invalid quantity {text:?}: {e}"))
}

pub(super) fn decode_failed(text: &str, err: serde_json::Error) -> kube::Error {
    tracing::warn!("{}, {:?}", text, err);
    kube::Error::SerdeError(err)
}

fn bad_value(text: String) -> kube::Error {
    kube::Error::Service(text.into())
}

// The owned decode: `hpa_metrics_api`'s wire types, which check every
// field as upstream's client does. The per-HPA requests, upstream's own,
// keep it so that a malformed field the core never reads fails them as it
// fails upstream (docs/fidelity.md); and it is the oracle the slim decode
// is tested against.

/// One `metrics.k8s.io` entry as the core reads it.
pub(super) fn resource_sample(
    item: PodMetrics,
    namespace: &str,
) -> Result<PodResourceSample, String> {
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

/// The values of a v1beta2 list.
pub(super) fn custom_values_v1beta2(list: MetricValueList) -> Result<CustomValues, kube::Error> {
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
pub(super) fn custom_values_v1beta1(
    list: MetricValueListV1Beta1,
) -> Result<CustomValues, kube::Error> {
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

/// A quantity of the owned wire types as the core reads it.
pub(super) fn quantity(
    q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
) -> Result<Quantity, String> {
    quantity_text(&q.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpa_metrics_api::PodMetricsList;

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
