//! The metrics APIs and their discovery documents, answered from the model.
//!
//! Paths and shapes follow metrics-server (`metrics.k8s.io`) and
//! custom-metrics-apiserver (`custom.metrics.k8s.io`,
//! `external.metrics.k8s.io`), so that any Kubernetes client, and the
//! aggregator in front of it, cannot tell the difference.

use std::collections::BTreeMap;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, GroupVersionForDiscovery, ListMeta,
    ObjectMeta, Time,
};
use serde::Deserialize;

pub use crate::api_error::{ApiError, status_body};
use crate::labels::Filter;
use crate::script::{Labels, MetricSpec, SampleTime, format_go_duration};
use crate::state::{AppState, Model};
use crate::types::{
    CUSTOM_GROUP, ContainerMetrics, EXTERNAL_GROUP, ExternalMetricValue, ExternalMetricValueList,
    METRICS_GROUP, MetricIdentifier, MetricValue, MetricValueList, MetricValueListV1Beta1,
    MetricValueV1Beta1, NodeMetrics, NodeMetricsList, ObjectReference, PodMetrics, PodMetricsList,
};

/// Window of resource metrics when the script gives none.
const DEFAULT_RESOURCE_WINDOW: SignedDuration = SignedDuration::from_secs(30);

/// How many items a metrics list answered, for the request log: an empty
/// list is an answer a controller fails on ("no metrics returned").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemCount(pub u64);

/// `body` as JSON, its item count attached for the request log.
fn counted<T: serde::Serialize>(body: T, items: usize) -> Response {
    let mut response = Json(body).into_response();
    response
        .extensions_mut()
        .insert(ItemCount(u64::try_from(items).unwrap_or(u64::MAX)));
    response
}

/// Query parameters the metrics APIs accept.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    #[serde(default)]
    label_selector: Option<String>,
    #[serde(default)]
    metric_label_selector: Option<String>,
}

impl ListQuery {
    fn labels(&self) -> Result<Filter, ApiError> {
        Ok(Filter::parse(
            "labelSelector",
            self.label_selector.as_deref(),
        )?)
    }
    fn metric_labels(&self) -> Result<Filter, ApiError> {
        Ok(Filter::parse(
            "metricLabelSelector",
            self.metric_label_selector.as_deref(),
        )?)
    }
}

/// The header every answer carries: the server's instance
/// ([`AppState::instance`]).
pub const INSTANCE_HEADER: &str = "hpa-harness-instance";

/// Routes of the three metrics APIs, discovery and health checks.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(ok))
        .route("/readyz", get(ok))
        .route("/livez", get(ok))
        .route("/apis", get(api_group_list))
        .route("/apis/{group}", get(api_group))
        .route("/apis/{group}/{version}", get(api_resource_list))
        .route("/apis/metrics.k8s.io/v1beta1/pods", get(all_pod_metrics))
        .route(
            "/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods",
            get(namespace_pod_metrics),
        )
        .route(
            "/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods/{name}",
            get(one_pod_metrics),
        )
        .route("/apis/metrics.k8s.io/v1beta1/nodes", get(all_node_metrics))
        .route(
            "/apis/metrics.k8s.io/v1beta1/nodes/{name}",
            get(one_node_metrics),
        )
        .route(
            "/apis/custom.metrics.k8s.io/{version}/{*rest}",
            get(custom_metrics),
        )
        .route(
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/{ns}/{metric}",
            get(external_metrics),
        )
}

async fn ok() -> &'static str {
    "ok"
}

/// Versions served per group, preferred first.
const GROUPS: [(&str, &[&str]); 3] = [
    (METRICS_GROUP, &["v1beta1"]),
    (CUSTOM_GROUP, &["v1beta2", "v1beta1"]),
    (EXTERNAL_GROUP, &["v1beta1"]),
];

fn group_doc(name: &str, versions: &[&str]) -> APIGroup {
    let gv = |v: &&str| GroupVersionForDiscovery {
        group_version: format!("{name}/{v}"),
        version: (*v).to_owned(),
    };
    APIGroup {
        name: name.to_owned(),
        preferred_version: versions.first().map(gv),
        versions: versions.iter().map(gv).collect(),
        server_address_by_client_cidrs: None,
    }
}

async fn api_group_list() -> Json<APIGroupList> {
    Json(APIGroupList {
        groups: GROUPS.iter().map(|(n, v)| group_doc(n, v)).collect(),
    })
}

async fn api_group(Path(group): Path<String>) -> Result<Json<APIGroup>, ApiError> {
    GROUPS
        .iter()
        .find(|(n, _)| *n == group)
        .map(|(n, v)| Json(group_doc(n, v)))
        .ok_or_else(|| ApiError::NotFound(format!("the server could not find group {group}")))
}

fn resource(name: &str, kind: &str, namespaced: bool, verbs: &[&str]) -> APIResource {
    APIResource {
        name: name.to_owned(),
        singular_name: String::new(),
        namespaced,
        kind: kind.to_owned(),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..APIResource::default()
    }
}

async fn api_resource_list(
    State(state): State<AppState>,
    Path((group, version)): Path<(String, String)>,
) -> Result<Json<APIResourceList>, ApiError> {
    let served = GROUPS
        .iter()
        .any(|(n, vs)| *n == group && vs.contains(&version.as_str()));
    if !served {
        return Err(ApiError::NotFound(format!(
            "the server could not find {group}/{version}"
        )));
    }
    let resources = match group.as_str() {
        METRICS_GROUP => vec![
            resource("nodes", "NodeMetrics", false, &["get", "list"]),
            resource("pods", "PodMetrics", true, &["get", "list"]),
        ],
        CUSTOM_GROUP => state.read(|m, _| {
            let mut names = std::collections::BTreeSet::new();
            for pod in m.pods.values() {
                for metric in pod.metrics.keys() {
                    names.insert((format!("pods/{metric}"), true));
                }
            }
            for rule in &m.rules {
                for metric in rule.metrics.keys() {
                    names.insert((format!("pods/{metric}"), true));
                }
            }
            for o in m.objects.values() {
                for metric in o.metrics.keys() {
                    names.insert((format!("{}/{metric}", o.resource), o.namespace.is_some()));
                }
            }
            names
                .into_iter()
                .map(|(n, namespaced)| resource(&n, "MetricValueList", namespaced, &["get"]))
                .collect()
        }),
        _ => state.read(|m, _| {
            let names: std::collections::BTreeSet<&str> =
                m.external.iter().map(|e| e.metric.as_str()).collect();
            names
                .into_iter()
                .map(|n| resource(n, "ExternalMetricValueList", true, &["get"]))
                .collect()
        }),
    };
    let resources = if resources.is_empty() {
        unscripted_resources(&group)
    } else {
        resources
    };
    Ok(Json(APIResourceList {
        group_version: format!("{group}/{version}"),
        resources,
    }))
}

/// What the custom and external lists hold while the script declares no
/// metric: kubectl (`api-resources`, any discovery) fails on an empty
/// list ("received empty response"), so, as adapters do for metrics they
/// discover later (KEDA lists `externalmetrics`), a wildcard entry per
/// scope the server answers for.
fn unscripted_resources(group: &str) -> Vec<APIResource> {
    match group {
        CUSTOM_GROUP => vec![
            resource("pods/*", "MetricValueList", true, &["get"]),
            resource("namespaces/*", "MetricValueList", false, &["get"]),
        ],
        METRICS_GROUP => Vec::new(),
        _ => vec![resource(
            "externalmetrics",
            "ExternalMetricValueList",
            true,
            &["get"],
        )],
    }
}

fn window_of(model: &Model, own: Option<crate::script::Duration>) -> Option<SignedDuration> {
    own.or(model.defaults.window).map(|d| d.0)
}

fn time_of(model: &Model, own: Option<SampleTime>, now: Timestamp) -> Time {
    Time(
        own.or(model.defaults.timestamp)
            .map_or(now, |t| t.resolve(now)),
    )
}

fn pod_metrics(model: &Model, pod: &crate::script::PodSpec, now: Timestamp) -> PodMetrics {
    PodMetrics {
        api_version: "metrics.k8s.io/v1beta1".to_owned(),
        kind: "PodMetrics".to_owned(),
        metadata: ObjectMeta {
            name: Some(pod.name.clone()),
            namespace: Some(pod.namespace.clone()),
            labels: (!pod.labels.is_empty()).then(|| pod.labels.clone()),
            creation_timestamp: Some(Time(now)),
            ..ObjectMeta::default()
        },
        timestamp: time_of(model, pod.timestamp, now),
        window: format_go_duration(window_of(model, pod.window).unwrap_or(DEFAULT_RESOURCE_WINDOW)),
        containers: pod
            .containers
            .iter()
            .map(|c| {
                let mut usage = BTreeMap::new();
                if let Some(cpu) = &c.cpu {
                    usage.insert("cpu".to_owned(), cpu.to_quantity());
                }
                if let Some(memory) = &c.memory {
                    usage.insert("memory".to_owned(), memory.to_quantity());
                }
                ContainerMetrics {
                    name: c.name.clone(),
                    usage,
                }
            })
            .collect(),
    }
}

fn pod_metrics_list(
    state: &AppState,
    namespace: Option<&str>,
    query: &ListQuery,
) -> Result<Response, ApiError> {
    let selector = query.labels()?;
    let items: Vec<PodMetrics> = state.read(|m, now| {
        let pods: Box<dyn Iterator<Item = &crate::script::PodSpec>> = match namespace {
            Some(ns) => Box::new(m.pods_in(ns).into_iter()),
            None => Box::new(m.all_pods()),
        };
        pods.filter(|p| !p.missing && selector.matches(&p.labels))
            .map(|p| pod_metrics(m, p, now))
            .collect()
    });
    let n = items.len();
    Ok(counted(
        PodMetricsList {
            api_version: "metrics.k8s.io/v1beta1".to_owned(),
            kind: "PodMetricsList".to_owned(),
            metadata: ListMeta::default(),
            items,
        },
        n,
    ))
}

async fn all_pod_metrics(
    State(state): State<AppState>,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    pod_metrics_list(&state, None, &query)
}

async fn namespace_pod_metrics(
    State(state): State<AppState>,
    Path(ns): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    pod_metrics_list(&state, Some(&ns), &query)
}

async fn one_pod_metrics(
    State(state): State<AppState>,
    Path((ns, name)): Path<(String, String)>,
) -> Result<Json<PodMetrics>, ApiError> {
    state
        .read(|m, now| {
            m.pod(&ns, &name)
                .filter(|p| !p.missing)
                .map(|p| pod_metrics(m, p, now))
        })
        .map(Json)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "podmetrics.metrics.k8s.io \"{ns}/{name}\" not found"
            ))
        })
}

fn node_metrics(model: &Model, node: &crate::script::NodeSpec, now: Timestamp) -> NodeMetrics {
    let mut usage = BTreeMap::new();
    if let Some(cpu) = &node.cpu {
        usage.insert("cpu".to_owned(), cpu.to_quantity());
    }
    if let Some(memory) = &node.memory {
        usage.insert("memory".to_owned(), memory.to_quantity());
    }
    NodeMetrics {
        api_version: "metrics.k8s.io/v1beta1".to_owned(),
        kind: "NodeMetrics".to_owned(),
        metadata: ObjectMeta {
            name: Some(node.name.clone()),
            labels: (!node.labels.is_empty()).then(|| node.labels.clone()),
            creation_timestamp: Some(Time(now)),
            ..ObjectMeta::default()
        },
        timestamp: time_of(model, node.timestamp, now),
        window: format_go_duration(
            window_of(model, node.window).unwrap_or(DEFAULT_RESOURCE_WINDOW),
        ),
        usage,
    }
}

async fn all_node_metrics(
    State(state): State<AppState>,
    Query(query): Query<ListQuery>,
) -> Result<Json<NodeMetricsList>, ApiError> {
    let selector = query.labels()?;
    let items = state.read(|m, now| {
        m.nodes
            .values()
            .filter(|n| selector.matches(&n.labels))
            .map(|n| node_metrics(m, n, now))
            .collect()
    });
    Ok(Json(NodeMetricsList {
        api_version: "metrics.k8s.io/v1beta1".to_owned(),
        kind: "NodeMetricsList".to_owned(),
        metadata: ListMeta::default(),
        items,
    }))
}

async fn one_node_metrics(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<NodeMetrics>, ApiError> {
    state
        .read(|m, now| m.nodes.get(&name).map(|n| node_metrics(m, n, now)))
        .map(Json)
        .ok_or_else(|| {
            ApiError::NotFound(format!("nodemetrics.metrics.k8s.io \"{name}\" not found"))
        })
}

/// Kind and API version for `describedObject`, guessed from the plural
/// resource when the script gives none.
fn guess_kind(resource: &str) -> (String, String) {
    let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
    let known = match plural {
        "pods" => Some(("Pod", "/v1")),
        "services" => Some(("Service", "/v1")),
        "namespaces" => Some(("Namespace", "/v1")),
        "nodes" => Some(("Node", "/v1")),
        "deployments" => Some(("Deployment", "apps/v1")),
        "statefulsets" => Some(("StatefulSet", "apps/v1")),
        "replicasets" => Some(("ReplicaSet", "apps/v1")),
        "ingresses" => Some(("Ingress", "networking.k8s.io/v1")),
        "jobs" => Some(("Job", "batch/v1")),
        _ => None,
    };
    if let Some((kind, version)) = known {
        return (kind.to_owned(), version.to_owned());
    }
    let singular = plural.strip_suffix('s').unwrap_or(plural);
    let mut chars = singular.chars();
    let kind = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    let version = if group.is_empty() {
        "/v1".to_owned()
    } else {
        format!("{group}/v1")
    };
    (kind, version)
}

/// One custom metric value before it is shaped for a version.
struct Found {
    object: ObjectReference,
    metric: String,
    spec: MetricSpec,
}

enum CustomTarget<'a> {
    /// `namespaces/NS/RESOURCE/NAME/METRIC`
    Namespaced {
        ns: &'a str,
        resource: &'a str,
        name: &'a str,
        metric: &'a str,
    },
    /// `RESOURCE/NAME/METRIC`, including `namespaces/NS/METRIC` and
    /// `namespaces/NS/metrics/METRIC` (metrics about the namespace itself).
    Root {
        resource: &'a str,
        name: &'a str,
        metric: &'a str,
    },
}

fn parse_custom_path(rest: &str) -> Option<CustomTarget<'_>> {
    let s: Vec<&str> = rest.split('/').collect();
    match s.as_slice() {
        ["namespaces", ns, "metrics", metric] => Some(CustomTarget::Root {
            resource: "namespaces",
            name: ns,
            metric,
        }),
        ["namespaces", ns, resource, name, metric] => Some(CustomTarget::Namespaced {
            ns,
            resource,
            name,
            metric,
        }),
        [resource, name, metric] => Some(CustomTarget::Root {
            resource,
            name,
            metric,
        }),
        _ => None,
    }
}

fn find_custom(
    m: &Model,
    target: &CustomTarget<'_>,
    labels: &Filter,
    metric_labels: &Filter,
) -> Result<Vec<Found>, ApiError> {
    let (ns, resource, name, metric) = match target {
        CustomTarget::Namespaced {
            ns,
            resource,
            name,
            metric,
        } => (Some(*ns), *resource, *name, *metric),
        CustomTarget::Root {
            resource,
            name,
            metric,
        } => (None, *resource, *name, *metric),
    };
    let wanted = |n: &str, l: &Labels| {
        if name == "*" {
            labels.matches(l)
        } else {
            n == name
        }
    };
    let series_ok = |spec: &MetricSpec| metric_labels.matches(&spec.series().labels);
    let mut found = Vec::new();
    let mut any_metric = false;
    if resource == "pods" {
        let Some(ns) = ns else {
            return Err(ApiError::NotFound(format!(
                "pods are namespaced: use namespaces/NS/pods/{name}/{metric}"
            )));
        };
        let pods: Vec<&crate::script::PodSpec> = if name == "*" {
            m.pods_in(ns)
        } else {
            m.pod(ns, name).into_iter().collect()
        };
        for pod in pods {
            if let Some(spec) = pod.metrics.get(metric) {
                any_metric = true;
                if wanted(&pod.name, &pod.labels) && series_ok(spec) {
                    found.push(Found {
                        object: ObjectReference {
                            kind: "Pod".to_owned(),
                            namespace: pod.namespace.clone(),
                            name: pod.name.clone(),
                            api_version: "/v1".to_owned(),
                        },
                        metric: metric.to_owned(),
                        spec: spec.clone(),
                    });
                }
            }
        }
    } else {
        for o in m
            .objects
            .values()
            .filter(|o| o.resource == resource && o.namespace.as_deref() == ns)
        {
            if let Some(spec) = o.metrics.get(metric) {
                any_metric = true;
                if wanted(&o.name, &o.labels) && series_ok(spec) {
                    let (kind, api_version) = guess_kind(&o.resource);
                    found.push(Found {
                        object: ObjectReference {
                            kind: o.kind.clone().unwrap_or(kind),
                            namespace: o.namespace.clone().unwrap_or_default(),
                            name: o.name.clone(),
                            api_version: o.api_version.clone().unwrap_or(api_version),
                        },
                        metric: metric.to_owned(),
                        spec: spec.clone(),
                    });
                }
            }
        }
    }
    if found.is_empty() && (name != "*" || !any_metric) {
        let place = ns.map(|n| format!(" in namespace {n}")).unwrap_or_default();
        return Err(ApiError::NotFound(format!(
            "the server could not find the metric {metric} for {resource} {name}{place}"
        )));
    }
    Ok(found)
}

async fn custom_metrics(
    State(state): State<AppState>,
    Path((version, rest)): Path<(String, String)>,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    if version != "v1beta1" && version != "v1beta2" {
        return Err(ApiError::NotFound(format!(
            "the server could not find {CUSTOM_GROUP}/{version}"
        )));
    }
    let target = parse_custom_path(&rest).ok_or_else(|| {
        ApiError::NotFound(format!(
            "no custom metrics route matches {rest:?} (expected namespaces/NS/RESOURCE/NAME/METRIC, RESOURCE/NAME/METRIC or namespaces/NS/metrics/METRIC)"
        ))
    })?;
    let labels = query.labels()?;
    let metric_labels = query.metric_labels()?;
    let selector = query
        .metric_label_selector
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(|_| metric_labels.to_label_selector());
    let items = state.read(|m, now| -> Result<Vec<MetricValue>, ApiError> {
        Ok(find_custom(m, &target, &labels, &metric_labels)?
            .into_iter()
            .map(|f| {
                let series = f.spec.series();
                MetricValue {
                    described_object: f.object,
                    metric: MetricIdentifier {
                        name: f.metric,
                        selector: selector.clone(),
                    },
                    timestamp: time_of(m, series.timestamp, now),
                    window_seconds: window_of(m, series.window).map(|w| w.as_secs()),
                    value: series.value.to_quantity(),
                }
            })
            .collect())
    })?;
    let api_version = format!("{CUSTOM_GROUP}/{version}");
    let n = items.len();
    if version == "v1beta2" {
        return Ok(counted(
            MetricValueList {
                api_version,
                kind: "MetricValueList".to_owned(),
                metadata: ListMeta::default(),
                items,
            },
            n,
        ));
    }
    Ok(counted(
        MetricValueListV1Beta1 {
            api_version,
            kind: "MetricValueList".to_owned(),
            metadata: ListMeta::default(),
            items: items
                .into_iter()
                .map(|v| MetricValueV1Beta1 {
                    described_object: v.described_object,
                    metric_name: v.metric.name,
                    timestamp: v.timestamp,
                    window_seconds: v.window_seconds,
                    value: v.value,
                    selector: v.metric.selector,
                })
                .collect(),
        },
        n,
    ))
}

async fn external_metrics(
    State(state): State<AppState>,
    Path((ns, metric)): Path<(String, String)>,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    let selector = query.labels()?;
    let items: Vec<ExternalMetricValue> = state.read(|m, now| {
        let series: Vec<_> = m
            .external
            .iter()
            .filter(|e| e.namespace == ns && e.metric == metric)
            .collect();
        if series.is_empty() {
            return Err(ApiError::NotFound(format!(
                "the server could not find the external metric {metric} in namespace {ns}"
            )));
        }
        Ok(series
            .into_iter()
            .filter(|e| selector.matches(&e.labels))
            .map(|e| ExternalMetricValue {
                metric_name: e.metric.clone(),
                metric_labels: e.labels.clone(),
                timestamp: time_of(m, e.timestamp, now),
                window_seconds: window_of(m, e.window).map(|w| w.as_secs()),
                value: e.value.to_quantity(),
            })
            .collect())
    })?;
    let n = items.len();
    Ok(counted(
        ExternalMetricValueList {
            api_version: format!("{EXTERNAL_GROUP}/v1beta1"),
            kind: "ExternalMetricValueList".to_owned(),
            metadata: ListMeta::default(),
            items,
        },
        n,
    ))
}
