//! A Kubernetes client (kube-rs) reads the server over HTTPS with its
//! self-signed certificate, as it would read a real metrics server.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

mod support;

use fake_metrics_server::types::{
    ExternalMetricValueList, MetricValueList, NodeMetrics, PodMetrics,
};
use kube::Api;
use kube::api::ListParams;
use support::{Options, SCRIPT, start_with};

fn kube_client(base: &str) -> kube::Client {
    let mut config = kube::Config::new(base.parse().unwrap());
    config.accept_invalid_certs = true;
    kube::Client::try_from(config).unwrap()
}

#[tokio::test]
async fn kube_api_lists_and_gets_pod_and_node_metrics_over_tls() {
    let s = start_with(
        SCRIPT,
        Options {
            tls: true,
            ..Options::default()
        },
    )
    .await;
    assert!(s.base.starts_with("https://"));
    let client = kube_client(&s.base);

    let pods: Api<PodMetrics> = Api::namespaced(client.clone(), "default");
    let list = pods
        .list(&ListParams::default().labels("app=web,tier in (front,back)"))
        .await
        .unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["web-0", "web-1"]);
    let web0 = pods.get("web-0").await.unwrap();
    assert_eq!(web0.containers[0].usage["cpu"].0, "250m");

    let all: Api<PodMetrics> = Api::all(client.clone());
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        4
    );

    let missing = pods.get("web-2").await.unwrap_err();
    assert!(
        matches!(&missing, kube::Error::Api(status) if status.code == 404),
        "{missing}"
    );
    let bad = pods
        .list(&ListParams::default().labels("app in (web"))
        .await
        .unwrap_err();
    assert!(
        matches!(&bad, kube::Error::Api(status) if status.code == 400),
        "{bad}"
    );

    let nodes: Api<NodeMetrics> = Api::all(client.clone());
    assert_eq!(nodes.get("node-2").await.unwrap().usage["memory"].0, "1Gi");
    s.stop().await;
}

#[tokio::test]
async fn kube_client_discovers_groups_and_reads_custom_and_external_metrics() {
    let s = start_with(
        SCRIPT,
        Options {
            tls: true,
            ..Options::default()
        },
    )
    .await;
    let client = kube_client(&s.base);

    let groups = client.list_api_groups().await.unwrap();
    assert_eq!(groups.groups.len(), 3);
    let resources = client
        .list_api_group_resources("custom.metrics.k8s.io/v1beta2")
        .await
        .unwrap();
    assert!(resources.resources.iter().any(|r| r.name == "pods/pps"));

    let request = http::Request::get(
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps?labelSelector=app%3Dweb",
    )
    .body(Vec::new())
    .unwrap();
    let custom: MetricValueList = client.request(request).await.unwrap();
    assert_eq!(custom.items.len(), 2);

    let request = http::Request::get(
        "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready?labelSelector=queue%3Dbatch",
    )
    .body(Vec::new())
    .unwrap();
    let external: ExternalMetricValueList = client.request(request).await.unwrap();
    assert_eq!(external.items[0].value.0, "12");
    s.stop().await;
}

#[tokio::test]
async fn the_control_client_works_over_tls() {
    let s = start_with(
        SCRIPT,
        Options {
            tls: true,
            ..Options::default()
        },
    )
    .await;
    let control = fake_metrics_server::client::ControlClient::new(s.base.clone()).unwrap();
    control
        .set_container_usage("default", "web-0", "app", Some("2"), None)
        .await
        .unwrap();
    let client = kube_client(&s.base);
    let pods: Api<PodMetrics> = Api::namespaced(client, "default");
    assert_eq!(
        pods.get("web-0").await.unwrap().containers[0].usage["cpu"].0,
        "2"
    );
    s.stop().await;
}
