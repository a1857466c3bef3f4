//! The metrics the scenario set, as the fake metrics server was told them:
//! each pod's values (kept whole, so that every change sends the whole
//! pod), the series of each external metric, the metrics steps added to
//! each HPA, and the metrics APIs made to fail.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use fake_metrics_server::client::ControlClient;
use fake_metrics_server::script::{
    Api as MetricsApi, Change, ContainerSpec, Duration as ScriptDuration, MetricSeries, MetricSpec,
    PodSpec, SampleTime, Value as ScriptValue,
};
use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde_json::Value;

use super::key::ObjKey;
use super::{StepError, StepResult};
use crate::gherkin::cells::per_container;

/// What the fake metrics server is told about one pod: usage per container,
/// custom metrics, and sample time.
#[derive(Debug, Clone, Default)]
pub(crate) struct PodMetrics {
    pub labels: BTreeMap<String, String>,
    /// container -> (cpu, memory)
    pub containers: BTreeMap<String, (Option<String>, Option<String>)>,
    pub custom: BTreeMap<String, String>,
    pub timestamp: Option<SignedDuration>,
    pub window: Option<SignedDuration>,
    /// The pod has no values, and rules pass it by (a pod that was there
    /// before "the new pods of ... report" and was given nothing).
    pub missing: bool,
}

/// One external metric's series with one selector, in a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SeriesKey {
    pub ns: String,
    pub metric: String,
    pub selector: String,
}

/// The scenario's mirror of the fake metrics server.
#[derive(Debug, Default)]
pub struct MetricsMirror {
    /// What the metrics server knows about each pod.
    pods: BTreeMap<ObjKey, PodMetrics>,
    /// How many series each external metric has (one per value given).
    external_series: HashMap<SeriesKey, usize>,
    /// The metrics steps added to each HPA, in order.
    hpa_metrics: HashMap<ObjKey, Vec<Value>>,
    /// The metrics APIs the scenario made fail, each with the namespace it
    /// fails in (none: everywhere): on a cluster the run's scenarios share,
    /// the fault is the shared fake metrics server's, and it goes when the
    /// scenario ends.
    failing_apis: Vec<FailingApi>,
}

/// A metrics API a scenario made fail, in one namespace or (`None`)
/// everywhere.
pub type FailingApi = (MetricsApi, Option<String>);

impl MetricsMirror {
    /// Whether any pod has a model.
    pub(crate) fn has_pods(&self) -> bool {
        !self.pods.is_empty()
    }

    /// Whether the pod has a model.
    pub(crate) fn has_pod(&self, pod: &ObjKey) -> bool {
        self.pods.contains_key(pod)
    }

    /// The pod's model, made with its labels on first use.
    pub(crate) fn pod_or_new(
        &mut self,
        pod: &ObjKey,
        labels: impl FnOnce() -> BTreeMap<String, String>,
    ) -> &mut PodMetrics {
        self.pods.entry(pod.clone()).or_insert_with(|| PodMetrics {
            labels: labels(),
            ..PodMetrics::default()
        })
    }

    /// Forgets a pod's values (a pod made anew under an old name starts
    /// without them).
    pub(crate) fn forget_pod(&mut self, pod: &ObjKey) {
        self.pods.remove(pod);
    }

    /// Declares a pod that reports nothing (rules pass it by); its entry
    /// for the metrics server.
    pub(crate) fn declare_without_values(
        &mut self,
        pod: &ObjKey,
        labels: BTreeMap<String, String>,
    ) -> Result<PodSpec, StepError> {
        let model = PodMetrics {
            labels,
            missing: true,
            ..PodMetrics::default()
        };
        let spec = pod_spec(&pod.ns, &pod.name, &model)?;
        self.pods.insert(pod.clone(), model);
        Ok(spec)
    }

    /// Sends one pod, whole, to the metrics server.
    pub(crate) async fn push(&self, client: &ControlClient, pod: &ObjKey) -> StepResult {
        let Some(model) = self.pods.get(pod) else {
            return Ok(());
        };
        let spec = pod_spec(&pod.ns, &pod.name, model)?;
        client
            .apply(&[Change::Pod(spec)])
            .await
            .map_err(StepError::metrics(format!(
                "setting the metrics of pod {pod}"
            )))?;
        Ok(())
    }

    /// Forgets, in the metrics server too, pods that no longer exist in the
    /// cluster: a deleted pod's values go with it.
    pub(crate) async fn prune(
        &mut self,
        cluster: &kube::Client,
        client: &ControlClient,
    ) -> StepResult {
        if self.pods.is_empty() {
            return Ok(());
        }
        let known: Vec<ObjKey> = self.pods.keys().cloned().collect();
        let namespaces: BTreeSet<&String> = known.iter().map(|k| &k.ns).collect();
        let mut existing = BTreeSet::new();
        for ns in namespaces {
            let api: Api<Pod> = Api::namespaced(cluster.clone(), ns);
            let list = api
                .list(&ListParams::default())
                .await
                .map_err(StepError::kube(format!(
                    "listing the pods of namespace {ns}"
                )))?;
            for p in list.items {
                existing.insert(ObjKey::new(ns.clone(), p.metadata.name.unwrap_or_default()));
            }
        }
        for key in known {
            if !existing.contains(&key) {
                self.pods.remove(&key);
                client
                    .remove_pod(&key.ns, &key.name)
                    .await
                    .map_err(StepError::metrics(format!(
                        "removing the metrics of deleted pod {key}"
                    )))?;
            }
        }
        Ok(())
    }

    /// How many series an external metric has (those beyond the values a
    /// step gives are to be removed).
    pub fn series(&self, series: &SeriesKey) -> usize {
        self.external_series.get(series).copied().unwrap_or(0)
    }

    /// Records that an external metric now has `count` series.
    pub fn set_series(&mut self, series: SeriesKey, count: usize) {
        self.external_series.insert(series, count);
    }

    /// A new HPA: it has no metrics added by steps yet.
    pub fn new_hpa(&mut self, hpa: ObjKey) {
        self.hpa_metrics.insert(hpa, Vec::new());
    }

    /// Adds a metric to an HPA's; all its metrics, in order.
    pub fn add_hpa_metric(&mut self, hpa: ObjKey, metric: Value) -> Vec<Value> {
        let list = self.hpa_metrics.entry(hpa).or_default();
        list.push(metric);
        list.clone()
    }

    /// A metrics API is about to be made to fail (recorded before the
    /// request: a fault set by a request that timed out is still cleared
    /// when the scenario ends).
    pub fn note_failing(&mut self, failing: FailingApi) {
        if !self.failing_apis.contains(&failing) {
            self.failing_apis.push(failing);
        }
    }

    /// A metrics API answers again.
    pub fn note_recovered(&mut self, recovered: &FailingApi) {
        self.failing_apis.retain(|a| a != recovered);
    }

    /// The metrics APIs still failing, forgotten here (the scenario ends).
    pub fn take_failing(&mut self) -> Vec<FailingApi> {
        std::mem::take(&mut self.failing_apis)
    }
}

fn value(text: &str) -> Result<ScriptValue, StepError> {
    ScriptValue::parse(text).map_err(StepError::Input)
}

/// The full pod entry for the metrics server.
pub(crate) fn pod_spec(ns: &str, pod: &str, m: &PodMetrics) -> Result<PodSpec, StepError> {
    let containers = m
        .containers
        .iter()
        .map(|(name, (cpu, memory))| {
            Ok(ContainerSpec {
                name: name.clone(),
                cpu: cpu.as_deref().map(value).transpose()?,
                memory: memory.as_deref().map(value).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, StepError>>()?;
    let metrics = m
        .custom
        .iter()
        .map(|(name, v)| {
            let spec = if m.timestamp.is_none() && m.window.is_none() {
                MetricSpec::Value(value(v)?)
            } else {
                MetricSpec::Series(MetricSeries {
                    value: value(v)?,
                    labels: BTreeMap::new(),
                    timestamp: m.timestamp.map(|d| SampleTime::Ago(ScriptDuration(d))),
                    window: m.window.map(ScriptDuration),
                })
            };
            Ok((name.clone(), spec))
        })
        .collect::<Result<BTreeMap<_, _>, StepError>>()?;
    Ok(PodSpec {
        namespace: ns.to_owned(),
        name: pod.to_owned(),
        labels: m.labels.clone(),
        containers,
        missing: m.missing,
        timestamp: m.timestamp.map(|d| SampleTime::Ago(ScriptDuration(d))),
        window: m.window.map(ScriptDuration),
        metrics,
    })
}

impl PodMetrics {
    /// Sets (or, with `None`, clears) one metric. `cpu` and `memory` cells
    /// may be per container (`app=250m, sidecar=50m`): every container
    /// loses that resource, then the named ones get it.
    pub(crate) fn set(&mut self, pod: &str, metric: &str, value: Option<&str>) -> StepResult {
        let parts = value_parts(pod, metric, value)?;
        self.apply(metric, parts);
        Ok(())
    }

    /// Sets one metric to `parts` (none: no value).
    fn apply(&mut self, metric: &str, parts: Vec<(String, String)>) {
        self.missing = false;
        if matches!(metric, "cpu" | "memory") {
            for usage in self.containers.values_mut() {
                if metric == "cpu" {
                    usage.0 = None;
                } else {
                    usage.1 = None;
                }
            }
            for (container, q) in parts {
                let usage = self.containers.entry(container).or_default();
                if metric == "cpu" {
                    usage.0 = Some(q);
                } else {
                    usage.1 = Some(q);
                }
            }
            self.containers
                .retain(|_, (cpu, memory)| cpu.is_some() || memory.is_some());
        } else {
            match parts.into_iter().next() {
                Some((_, q)) => {
                    self.custom.insert(metric.to_owned(), q);
                }
                None => {
                    self.custom.remove(metric);
                }
            }
        }
    }
}

/// A cell's value as (container, quantity) parts: per container for `cpu`
/// and `memory`, one unnamed part for a pods metric, none for `None`.
fn value_parts(
    pod: &str,
    metric: &str,
    value: Option<&str>,
) -> Result<Vec<(String, String)>, StepError> {
    let resource = matches!(metric, "cpu" | "memory");
    Ok(match value {
        Some(v) if resource => per_container(v, &format!("pod {pod}, {metric}"))?
            .into_iter()
            .filter_map(|(container, q, _)| Some((container, q?)))
            .collect(),
        Some(v) => {
            crate::gherkin::params::parse_quantity(v)
                .map_err(|e| StepError::Input(format!("pod {pod}, {metric}: {e}")))?;
            vec![(String::new(), v.to_owned())]
        }
        None => Vec::new(),
    })
}

/// The model of a pod whose metrics are `values` (by metric name): what a
/// fake-metrics-server rule gives every pod it matches.
pub(crate) fn model_of(
    what: &str,
    values: &BTreeMap<String, String>,
) -> Result<PodMetrics, StepError> {
    let mut model = PodMetrics::default();
    for (metric, value) in values {
        model.set(what, metric, Some(value))?;
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series() -> SeriesKey {
        SeriesKey {
            ns: "default".to_owned(),
            metric: "queue_depth".to_owned(),
            selector: "queue=jobs".to_owned(),
        }
    }

    #[test]
    fn a_resource_given_per_container_replaces_that_resource_in_every_container() {
        let mut m = PodMetrics::default();
        m.set("web-0", "cpu", Some("app=250m, sidecar=50m"))
            .unwrap();
        m.set("web-0", "memory", Some("sidecar=64Mi")).unwrap();
        m.set("web-0", "cpu", Some("app=300m")).unwrap();
        let app = m.containers.get("app").cloned();
        assert_eq!(app, Some((Some("300m".to_owned()), None)));
        let sidecar = m.containers.get("sidecar").cloned();
        assert_eq!(sidecar, Some((None, Some("64Mi".to_owned()))));
        // A container left with no resource goes.
        m.set("web-0", "memory", None).unwrap();
        assert_eq!(m.containers.keys().collect::<Vec<_>>(), ["app"]);
    }

    #[test]
    fn a_pods_metric_is_set_and_cleared_by_name() {
        let mut m = PodMetrics {
            missing: true,
            ..PodMetrics::default()
        };
        m.set("web-0", "requests_per_second", Some("12")).unwrap();
        assert!(!m.missing);
        assert_eq!(
            m.custom.get("requests_per_second").map(String::as_str),
            Some("12")
        );
        m.set("web-0", "requests_per_second", None).unwrap();
        assert!(m.custom.is_empty());
    }

    #[test]
    fn a_value_that_is_no_quantity_is_an_error_naming_pod_and_metric() {
        let mut m = PodMetrics::default();
        let err = m
            .set("web-0", "requests_per_second", Some("lots"))
            .unwrap_err();
        assert!(
            err.to_string().contains("pod web-0, requests_per_second"),
            "{err}"
        );
    }

    #[test]
    fn a_pod_with_a_sample_time_reports_its_metrics_as_series() {
        let mut m = PodMetrics::default();
        m.set("web-0", "rps", Some("5")).unwrap();
        let plain = pod_spec("default", "web-0", &m).unwrap();
        assert!(matches!(
            plain.metrics.get("rps"),
            Some(MetricSpec::Value(_))
        ));
        m.timestamp = Some(SignedDuration::from_secs(30));
        let timed = pod_spec("default", "web-0", &m).unwrap();
        assert!(matches!(
            timed.metrics.get("rps"),
            Some(MetricSpec::Series(_))
        ));
    }

    #[test]
    fn an_external_metric_has_series_per_selector() {
        let mut mirror = MetricsMirror::default();
        assert_eq!(mirror.series(&series()), 0);
        mirror.set_series(series(), 3);
        let other = SeriesKey {
            selector: "queue=mail".to_owned(),
            ..series()
        };
        mirror.set_series(other.clone(), 2);
        mirror.set_series(series(), 1);
        assert_eq!(mirror.series(&series()), 1);
        assert_eq!(mirror.series(&other), 2);
    }

    #[test]
    fn an_hpa_s_metrics_accumulate_until_it_is_made_anew() {
        let mut mirror = MetricsMirror::default();
        let hpa = ObjKey::new("default", "web");
        mirror.add_hpa_metric(hpa.clone(), Value::from(1));
        let all = mirror.add_hpa_metric(hpa.clone(), Value::from(2));
        assert_eq!(all, [Value::from(1), Value::from(2)]);
        mirror.new_hpa(hpa.clone());
        assert_eq!(mirror.add_hpa_metric(hpa, Value::from(3)), [Value::from(3)]);
    }

    #[test]
    fn a_failing_api_is_remembered_once_until_it_recovers() {
        let mut mirror = MetricsMirror::default();
        let shop = Some("shop".to_owned());
        mirror.note_failing((MetricsApi::Resource, None));
        mirror.note_failing((MetricsApi::Resource, None));
        mirror.note_failing((MetricsApi::Resource, shop.clone()));
        mirror.note_failing((MetricsApi::External, None));
        mirror.note_recovered(&(MetricsApi::External, None));
        assert_eq!(
            mirror.take_failing(),
            [(MetricsApi::Resource, None), (MetricsApi::Resource, shop)]
        );
        assert!(mirror.take_failing().is_empty());
    }

    #[test]
    fn a_pod_declared_without_values_is_passed_by_and_keeps_its_labels() {
        let mut mirror = MetricsMirror::default();
        let pod = ObjKey::new("default", "web-0");
        let labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
        let spec = mirror.declare_without_values(&pod, labels.clone()).unwrap();
        assert!(spec.missing);
        assert_eq!(spec.labels, labels);
        assert!(mirror.has_pod(&pod));
        // Values given later make it report.
        let model = mirror.pod_or_new(&pod, BTreeMap::new);
        model.set("web-0", "cpu", Some("100m")).unwrap();
        assert!(!model.missing);
        assert_eq!(model.labels, labels);
    }
}
