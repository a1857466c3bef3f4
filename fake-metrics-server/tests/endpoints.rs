//! Every endpoint of a running server, checked over HTTP with reqwest.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

mod support;

use fake_metrics_server::types::{
    ExternalMetricValueList, MetricValueList, MetricValueListV1Beta1, NodeMetrics, NodeMetricsList,
    PodMetrics, PodMetricsList,
};
use hpa_core::clock::Clock;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroup, APIGroupList, APIResourceList};
use support::{SCRIPT, names, start};

#[tokio::test]
async fn health_endpoints_answer_ok() {
    let s = start(SCRIPT).await;
    for path in ["/healthz", "/readyz", "/livez"] {
        let r = s.http.get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(r.text().await.unwrap(), "ok");
    }
    s.stop().await;
}

#[tokio::test]
async fn discovery_lists_the_three_groups_with_v1beta2_preferred_for_custom() {
    let s = start(SCRIPT).await;
    let list: APIGroupList = s.get_as("/apis").await;
    let groups: Vec<&str> = list.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(
        groups,
        [
            "metrics.k8s.io",
            "custom.metrics.k8s.io",
            "external.metrics.k8s.io"
        ]
    );
    let custom: APIGroup = s.get_as("/apis/custom.metrics.k8s.io").await;
    assert_eq!(
        custom.preferred_version.unwrap().group_version,
        "custom.metrics.k8s.io/v1beta2"
    );
    assert_eq!(custom.versions.len(), 2);
    let (status, _) = s.get("/apis/nope.k8s.io").await;
    assert_eq!(status, 404);
    s.stop().await;
}

#[tokio::test]
async fn discovery_resource_lists_follow_the_script() {
    let s = start(SCRIPT).await;
    let metrics: APIResourceList = s.get_as("/apis/metrics.k8s.io/v1beta1").await;
    let pods = metrics.resources.iter().find(|r| r.name == "pods").unwrap();
    assert_eq!(pods.kind, "PodMetrics");
    assert!(pods.namespaced);
    assert_eq!(pods.verbs, ["get", "list"]);
    let nodes = metrics
        .resources
        .iter()
        .find(|r| r.name == "nodes")
        .unwrap();
    assert!(!nodes.namespaced);

    for version in ["v1beta1", "v1beta2"] {
        let custom: APIResourceList = s
            .get_as(&format!("/apis/custom.metrics.k8s.io/{version}"))
            .await;
        let mut names: Vec<&str> = custom.resources.iter().map(|r| r.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "namespaces/quota-used",
                "nodes/temperature",
                "pods/pps",
                "services/messages"
            ]
        );
        assert!(custom.resources.iter().all(|r| r.kind == "MetricValueList"));
    }

    let external: APIResourceList = s.get_as("/apis/external.metrics.k8s.io/v1beta1").await;
    assert_eq!(external.resources.len(), 1);
    assert_eq!(external.resources[0].name, "queue_messages_ready");
    assert_eq!(external.resources[0].kind, "ExternalMetricValueList");

    // A metric added through the control API shows up in discovery.
    s.control
        .set_pod_metric("default", "db-0", "queries", Some("5"))
        .await
        .unwrap();
    let custom: APIResourceList = s.get_as("/apis/custom.metrics.k8s.io/v1beta2").await;
    assert!(custom.resources.iter().any(|r| r.name == "pods/queries"));
    s.stop().await;
}

#[tokio::test]
async fn discovery_is_never_empty_so_kubectl_discovery_does_not_fail() {
    let s = start("{}").await;
    for version in ["v1beta1", "v1beta2"] {
        let custom: APIResourceList = s
            .get_as(&format!("/apis/custom.metrics.k8s.io/{version}"))
            .await;
        let names: Vec<&str> = custom.resources.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["pods/*", "namespaces/*"]);
    }
    let external: APIResourceList = s.get_as("/apis/external.metrics.k8s.io/v1beta1").await;
    assert_eq!(external.resources.len(), 1);
    assert_eq!(external.resources[0].name, "externalmetrics");
    assert_eq!(external.resources[0].kind, "ExternalMetricValueList");
    s.stop().await;
}

#[tokio::test]
async fn pod_metrics_list_per_namespace_with_per_container_usage() {
    let s = start(SCRIPT).await;
    let (status, body) = s
        .get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["kind"], "PodMetricsList");
    assert_eq!(body["apiVersion"], "metrics.k8s.io/v1beta1");
    // web-2 is scripted as missing.
    assert_eq!(
        names(&body),
        ["default/db-0", "default/web-0", "default/web-1"]
    );
    let list: PodMetricsList = serde_json::from_value(body).unwrap();
    let web0 = &list.items[1];
    assert_eq!(web0.containers.len(), 2);
    assert_eq!(web0.containers[0].name, "app");
    assert_eq!(web0.containers[0].usage["cpu"].0, "250m");
    assert_eq!(web0.containers[0].usage["memory"].0, "64Mi");
    // The sidecar reports cpu only.
    assert_eq!(web0.containers[1].usage.len(), 1);
    assert_eq!(web0.window, "30s");
    assert_eq!(web0.metadata.labels.as_ref().unwrap()["track"], "stable");
    s.stop().await;
}

#[tokio::test]
async fn pod_metrics_carry_the_scripted_timestamp_and_window() {
    let s = start(SCRIPT).await;
    let now = s.clock.as_ref().unwrap().now();
    let web1: PodMetrics = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-1")
        .await;
    assert_eq!(web1.window, "1m0s");
    assert_eq!(web1.timestamp.0, now - jiff::SignedDuration::from_secs(10));
    let web0: PodMetrics = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-0")
        .await;
    assert_eq!(web0.timestamp.0, now);
    s.stop().await;
}

#[tokio::test]
async fn pod_metrics_across_namespaces_and_one_pod() {
    let s = start(SCRIPT).await;
    let (_, all) = s
        .get("/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dweb")
        .await;
    assert_eq!(
        names(&all),
        ["default/web-0", "default/web-1", "other/web-0"]
    );
    let one: PodMetrics = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/other/pods/web-0")
        .await;
    assert_eq!(one.kind, "PodMetrics");
    assert_eq!(one.containers[0].usage["cpu"].0, "5m");
    // Missing and unknown pods are 404 with a Status body.
    for pod in ["web-2", "ghost"] {
        let (status, body) = s
            .get(&format!(
                "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/{pod}"
            ))
            .await;
        assert_eq!(status, 404);
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["reason"], "NotFound");
        assert!(body["message"].as_str().unwrap().contains(pod));
    }
    s.stop().await;
}

#[tokio::test]
async fn node_metrics_list_and_get() {
    let s = start(SCRIPT).await;
    let list: NodeMetricsList = s.get_as("/apis/metrics.k8s.io/v1beta1/nodes").await;
    assert_eq!(list.items.len(), 2);
    let list: NodeMetricsList = s
        .get_as("/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Db")
        .await;
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].usage["cpu"].0, "500m");
    let node: NodeMetrics = s.get_as("/apis/metrics.k8s.io/v1beta1/nodes/node-1").await;
    assert_eq!(node.kind, "NodeMetrics");
    assert_eq!(node.usage["memory"].0, "2Gi");
    let (status, _) = s.get("/apis/metrics.k8s.io/v1beta1/nodes/node-9").await;
    assert_eq!(status, 404);
    s.stop().await;
}

async fn pod_names(s: &support::Server, selector: &str) -> Vec<String> {
    let url = reqwest::Url::parse_with_params(
        &s.url("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"),
        &[("labelSelector", selector)],
    )
    .unwrap();
    let r = s.http.get(url).send().await.unwrap();
    assert_eq!(r.status(), 200, "selector {selector}");
    let list: PodMetricsList = r.json().await.unwrap();
    list.items
        .into_iter()
        .map(|p| p.metadata.name.unwrap())
        .collect()
}

#[tokio::test]
async fn every_label_selector_operator_filters_pod_metrics() {
    let s = start(SCRIPT).await;
    let cases: &[(&str, &[&str])] = &[
        ("", &["db-0", "web-0", "web-1"]),
        ("app=web", &["web-0", "web-1"]),
        ("app==web", &["web-0", "web-1"]),
        ("app!=web", &["db-0"]),
        ("tier in (front,back)", &["web-0", "web-1"]),
        ("tier notin (front)", &["db-0", "web-1"]),
        ("track", &["web-0", "web-1"]),
        ("!track", &["db-0"]),
        ("app=web,track=canary", &["web-1"]),
        ("app=nothing", &[]),
    ];
    for (selector, expected) in cases {
        assert_eq!(
            pod_names(&s, selector).await,
            *expected,
            "selector {selector:?}"
        );
    }
    s.stop().await;
}

#[tokio::test]
async fn a_bad_selector_is_a_clear_400() {
    let s = start(SCRIPT).await;
    for (path, param) in [
        (
            "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%20in%20(web",
            "labelSelector",
        ),
        (
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps?metricLabelSelector=%3D%3Dx",
            "metricLabelSelector",
        ),
        (
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready?labelSelector=a%20notin",
            "labelSelector",
        ),
    ] {
        let (status, body) = s.get(path).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["reason"], "BadRequest");
        assert!(body["message"].as_str().unwrap().contains(param), "{body}");
    }
    s.stop().await;
}

#[tokio::test]
async fn custom_pod_metrics_by_label_selector_in_v1beta2_shape() {
    let s = start(SCRIPT).await;
    let list: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps?labelSelector=app%3Dweb")
        .await;
    assert_eq!(list.kind, "MetricValueList");
    assert_eq!(list.items.len(), 2);
    let web0 = &list.items[0];
    assert_eq!(web0.described_object.kind, "Pod");
    assert_eq!(web0.described_object.name, "web-0");
    assert_eq!(web0.described_object.namespace, "default");
    assert_eq!(web0.described_object.api_version, "/v1");
    assert_eq!(web0.metric.name, "pps");
    assert_eq!(web0.value.0, "100");
    // The defaults give a 30 s window; web-1's series has its own.
    assert_eq!(web0.window_seconds, Some(30));
    assert_eq!(list.items[1].window_seconds, Some(60));
    assert_eq!(list.items[1].value.0, "200");
    s.stop().await;
}

#[tokio::test]
async fn custom_metric_label_selector_filters_series_and_is_echoed() {
    let s = start(SCRIPT).await;
    let list: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps?labelSelector=app%3Dweb&metricLabelSelector=verb%3DGET")
        .await;
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].described_object.name, "web-1");
    let selector = list.items[0].metric.selector.as_ref().unwrap();
    assert_eq!(selector.match_labels.as_ref().unwrap()["verb"], "GET");
    s.stop().await;
}

#[tokio::test]
async fn custom_metrics_in_v1beta1_shape() {
    let s = start(SCRIPT).await;
    let (_, raw) = s
        .get("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/web-0/pps")
        .await;
    assert_eq!(raw["apiVersion"], "custom.metrics.k8s.io/v1beta1");
    assert_eq!(raw["items"][0]["metricName"], "pps");
    assert_eq!(raw["items"][0]["window"], 30);
    assert!(raw["items"][0].get("metric").is_none());
    let list: MetricValueListV1Beta1 = serde_json::from_value(raw).unwrap();
    assert_eq!(list.items[0].value.0, "100");
    s.stop().await;
}

#[tokio::test]
async fn object_metrics_namespaced_root_scoped_and_namespace() {
    let s = start(SCRIPT).await;
    let svc: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/services/queue/messages")
        .await;
    assert_eq!(svc.items.len(), 1);
    assert_eq!(svc.items[0].described_object.kind, "Service");
    assert_eq!(svc.items[0].described_object.name, "queue");
    assert_eq!(svc.items[0].value.0, "30");

    let node: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/nodes/node-1/temperature")
        .await;
    assert_eq!(node.items[0].described_object.kind, "Node");
    assert_eq!(node.items[0].described_object.namespace, "");
    assert_eq!(node.items[0].value.0, "45");

    // Metrics about a namespace: both routes the client libraries use.
    for path in [
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/metrics/quota-used",
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/quota-used",
    ] {
        let ns: MetricValueList = s.get_as(path).await;
        assert_eq!(ns.items[0].described_object.kind, "Namespace", "{path}");
        assert_eq!(ns.items[0].value.0, "7");
    }

    // Wildcard with a selector over objects.
    let by_label: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/services/*/messages?labelSelector=app%3Dqueue")
        .await;
    assert_eq!(by_label.items.len(), 1);
    s.stop().await;
}

#[tokio::test]
async fn unknown_custom_metrics_and_objects_are_404() {
    let s = start(SCRIPT).await;
    for path in [
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/services/queue/nope",
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/services/ghost/messages",
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/nope",
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/web-2/pps",
        "/apis/custom.metrics.k8s.io/v1beta3/namespaces/default/pods/*/pps",
    ] {
        let (status, body) = s.get(path).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(body["kind"], "Status", "{path}");
    }
    // A known metric whose pods do not match the selector is an empty list.
    let empty: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps?labelSelector=app%3Ddb")
        .await;
    assert!(empty.items.is_empty());
    s.stop().await;
}

#[tokio::test]
async fn external_metrics_by_label_selector() {
    let s = start(SCRIPT).await;
    let all: ExternalMetricValueList = s
        .get_as("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready")
        .await;
    assert_eq!(all.kind, "ExternalMetricValueList");
    assert_eq!(all.items.len(), 2);
    let worker: ExternalMetricValueList = s
        .get_as("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready?labelSelector=queue%3Dworker")
        .await;
    assert_eq!(worker.items.len(), 1);
    assert_eq!(worker.items[0].metric_name, "queue_messages_ready");
    assert_eq!(worker.items[0].metric_labels["queue"], "worker");
    assert_eq!(worker.items[0].value.0, "30");
    assert_eq!(worker.items[0].window_seconds, Some(30));
    let none: ExternalMetricValueList = s
        .get_as("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready?labelSelector=queue%3Dother")
        .await;
    assert!(none.items.is_empty());
    let (status, _) = s
        .get("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/unknown_metric")
        .await;
    assert_eq!(status, 404);
    s.stop().await;
}

#[tokio::test]
async fn unknown_paths_are_404_status() {
    let s = start(SCRIPT).await;
    let (status, body) = s.get("/api/v1/pods").await;
    assert_eq!(status, 404);
    assert_eq!(body["kind"], "Status");
    s.stop().await;
}
