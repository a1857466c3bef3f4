//! The load itself: N Deployments with HPAs over a mix of metric types
//! (round-robin), spread over namespaces, and their metrics as the fake
//! metrics server's script at a load factor.

use std::collections::{BTreeMap, HashSet};

use fake_metrics_server::script::{
    Change, ContainerSpec, ExternalMetric, MetricSpec, PodRef, PodSpec, RuleSpec, Value,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

use super::cleanup::LOAD_LABEL;
use super::options::{LoadError, LoadOptions};

pub(super) use super::metric_kind::MetricKind;

/// One load HPA: namespace, name (also of its Deployment), metric kind.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) kind: MetricKind,
}

pub(super) fn targets(options: &LoadOptions) -> Vec<Target> {
    let per_ns = options.hpas_per_namespace.max(1);
    (0..options.hpas)
        .map(|i| Target {
            namespace: format!("load-{}", i / per_ns),
            name: format!("w{i}"),
            kind: MetricKind::of(i),
        })
        .collect()
}

/// The load's Deployment; on a real cluster (`fake_node`) its pods go on
/// the harness's fake node, which acts as their kubelet.
pub(super) fn deployment(
    t: &Target,
    replicas: usize,
    fake_node: bool,
) -> Result<Deployment, serde_json::Error> {
    use crate::testbed::workload;
    let mut object = workload::workload(
        "Deployment",
        &t.namespace,
        &t.name,
        i64::try_from(replicas).unwrap_or(i64::MAX),
        serde_json::json!({"containers": [{"name": "app", "image": "app",
            "resources": {"requests": {"cpu": "200m", "memory": "128Mi"}}}]}),
    );
    object["metadata"]["labels"] = load_labels();
    object["spec"]["template"]["metadata"]["labels"][LOAD_LABEL] = serde_json::json!("true");
    if fake_node {
        workload::place_on_fake_node(&mut object);
    }
    let d: Deployment = serde_json::from_value(object)?;
    Ok(d)
}

pub(super) fn hpa(t: &Target, pods: usize) -> Result<HorizontalPodAutoscaler, serde_json::Error> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": t.name, "namespace": t.namespace, "labels": load_labels()},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": t.name},
                 "minReplicas": 1, "maxReplicas": (pods * 2).max(2),
                 "metrics": [t.kind.spec(&t.name)]}
    }))
}

/// The usage of a load pod's container at load `f`.
fn containers(f: f64) -> Vec<ContainerSpec> {
    vec![ContainerSpec {
        name: "app".into(),
        cpu: Some(Value(format!("{}m", (100.0 * f).round() as i64))),
        memory: Some(Value(format!("{}Ki", (65536.0 * f).round() as i64))),
    }]
}

/// The custom metrics of a load pod at load `f`.
fn pod_custom_metrics(f: f64) -> BTreeMap<String, MetricSpec> {
    BTreeMap::from([(
        "requests_per_second".to_string(),
        MetricSpec::Value(Value(format!("{}m", (10_000.0 * f).round() as i64))),
    )])
}

/// The fake metrics server's view of one pod at load `factor`.
pub(super) fn pod_metrics(
    namespace: &str,
    name: &str,
    labels: &BTreeMap<String, String>,
    f: f64,
) -> PodSpec {
    PodSpec {
        namespace: namespace.to_string(),
        name: name.to_string(),
        labels: labels.clone(),
        containers: containers(f),
        metrics: pod_custom_metrics(f),
        ..PodSpec::default()
    }
}

/// The fake metrics server's rule for every load pod of `namespace` at load
/// `f`: pods the cluster names itself (a Deployment's `w0-7d9c5b-abcde`),
/// created at any time, get their values without being named.
pub(super) fn rule(namespace: &str, f: f64) -> RuleSpec {
    RuleSpec {
        name: format!("hpa-harness-{namespace}"),
        namespace: namespace.to_owned(),
        selector: format!("{LOAD_LABEL}=true"),
        containers: containers(f),
        metrics: pod_custom_metrics(f),
        ..RuleSpec::default()
    }
}

fn load_labels() -> serde_json::Value {
    serde_json::json!({ LOAD_LABEL: "true" })
}

pub(super) fn external_metric(t: &Target, pods: usize, f: f64) -> ExternalMetric {
    ExternalMetric {
        namespace: t.namespace.clone(),
        metric: "queue_depth".into(),
        labels: BTreeMap::from([("queue".to_string(), t.name.clone())]),
        value: Some(Value(format!(
            "{}m",
            (5_000.0 * pods as f64 * f).round() as i64
        ))),
        timestamp: None,
        window: None,
    }
}

/// The metrics of the load at `factor`, for every pod the cluster has and
/// every external series.
pub(super) fn metric_changes(
    pods: &[(String, String, BTreeMap<String, String>)],
    externals: &[Target],
    pods_per_hpa: usize,
    factor: f64,
) -> Vec<Change> {
    pods.iter()
        .map(|(ns, name, labels)| Change::Pod(pod_metrics(ns, name, labels, factor)))
        .chain(
            externals
                .iter()
                .map(|t| Change::ExternalMetric(external_metric(t, pods_per_hpa, factor))),
        )
        .collect()
}

/// A pod of the load: namespace, name, labels.
pub(super) type LoadPod = (String, String, BTreeMap<String, String>);

/// The pods of the load's namespaces.
pub(super) async fn list_pods(
    client: &kube::Client,
    namespaces: &[String],
) -> Result<Vec<LoadPod>, LoadError> {
    let mut pods = Vec::new();
    for ns in namespaces {
        let list = Api::<Pod>::namespaced(client.clone(), ns)
            .list(&ListParams::default())
            .await
            .map_err(setup(format!("list the pods of {ns}")))?;
        pods.extend(list.items.into_iter().map(|p| {
            (
                ns.clone(),
                p.metadata.name.unwrap_or_default(),
                p.metadata.labels.unwrap_or_default(),
            )
        }));
    }
    Ok(pods)
}

/// Script changes for pods that appeared (metrics at `factor`) or went
/// away (removed) between two lists.
pub(super) fn pod_churn(before: &[LoadPod], now: &[LoadPod], factor: f64) -> Vec<Change> {
    let key = |p: &LoadPod| (p.0.clone(), p.1.clone());
    let had: HashSet<(String, String)> = before.iter().map(key).collect();
    let has: HashSet<(String, String)> = now.iter().map(key).collect();
    now.iter()
        .filter(|p| !had.contains(&key(p)))
        .map(|(ns, name, labels)| Change::Pod(pod_metrics(ns, name, labels, factor)))
        .chain(
            before
                .iter()
                .filter(|p| !has.contains(&key(p)))
                .map(|(ns, name, _)| {
                    Change::RemovePod(PodRef {
                        namespace: ns.clone(),
                        name: name.clone(),
                    })
                }),
        )
        .collect()
}

pub(super) fn setup(action: impl Into<String>) -> impl FnOnce(kube::Error) -> LoadError {
    let action = action.into();
    move |source| LoadError::Setup { action, source }
}

pub(super) fn invalid(e: serde_json::Error) -> LoadError {
    LoadError::Invalid(format!("cannot build a load object: {e}"))
}

/// Concurrent creations while building the load.
pub(super) const CREATE_CONCURRENCY: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hpas_are_spread_over_namespaces() {
        let t = targets(&LoadOptions {
            hpas: 250,
            hpas_per_namespace: 100,
            ..LoadOptions::default()
        });
        assert_eq!(t[99].namespace, "load-0");
        assert_eq!(t[100].namespace, "load-1");
        assert_eq!(t[249].namespace, "load-2");
    }

    #[test]
    fn the_cluster_side_objects_are_valid() {
        let t = &targets(&LoadOptions::default())[3];
        let h = hpa(t, 10).unwrap();
        assert_eq!(h.spec.max_replicas, 20);
        assert_eq!(h.spec.metrics.unwrap()[0].type_, "External");
        let d = deployment(t, 10, false).unwrap();
        assert_eq!(d.spec.replicas, Some(10));
    }

    #[test]
    fn new_pods_get_metrics_and_gone_pods_are_removed() {
        let pod = |name: &str| ("ns".to_string(), name.to_string(), BTreeMap::new());
        let changes = pod_churn(&[pod("a"), pod("b")], &[pod("b"), pod("c")], 1.5);
        assert_eq!(changes.len(), 2);
        let Change::Pod(added) = &changes[0] else {
            panic!("not a pod: {:?}", changes[0]);
        };
        assert_eq!(added.name, "c");
        assert_eq!(added.containers[0].cpu, Some(Value("150m".into())));
        assert!(matches!(&changes[1], Change::RemovePod(r) if r.name == "a"));
        assert!(pod_churn(&[pod("a")], &[pod("a")], 1.0).is_empty());
    }

    #[test]
    fn everything_the_load_creates_is_labelled_and_its_rule_selects_its_pods() {
        let t = &targets(&LoadOptions::default())[0];
        let d = deployment(t, 2, false).unwrap();
        let h = hpa(t, 2).unwrap();
        for labels in [
            d.metadata.labels.clone(),
            h.metadata.labels.clone(),
            d.spec.template.metadata.clone().and_then(|m| m.labels),
        ] {
            assert_eq!(labels.unwrap()[LOAD_LABEL], "true");
        }
        let r = rule(&t.namespace, 1.0);
        let pod_labels = d.spec.template.metadata.unwrap().labels.unwrap();
        let selector = hpa_core::selector::Selector::parse(&r.selector).unwrap();
        assert!(selector.matches(&pod_labels));
        assert_eq!(r.namespace, t.namespace);
        let named = pod_metrics(&t.namespace, "p", &pod_labels, 1.5);
        assert_eq!((r.containers.len(), named.containers.len()), (1, 1));
        assert_eq!(rule(&t.namespace, 1.5).containers, named.containers);
        assert_eq!(rule(&t.namespace, 1.5).metrics, named.metrics);
    }

    #[test]
    fn on_a_real_cluster_load_pods_go_on_the_fake_node() {
        let t = &targets(&LoadOptions::default())[0];
        let d = deployment(t, 2, true).unwrap();
        let template = d.spec.template;
        let pod = template.spec.unwrap();
        assert_eq!(
            pod.node_selector,
            Some(crate::testbed::cluster::fake_node::node_selector())
        );
        assert_eq!(pod.tolerations.map(|t| t.len()), Some(1));
        let labels = template.metadata.unwrap().labels.unwrap();
        assert!(labels.contains_key(crate::testbed::cluster::fake_node::MANAGED_POD_LABEL));
        let plain = deployment(t, 2, false).unwrap().spec.template;
        assert!(plain.spec.unwrap().node_selector.is_none());
    }
}
