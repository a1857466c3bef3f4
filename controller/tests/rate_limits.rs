//! The controller under a client-side rate limit: an HPA whose request
//! waits for its clientset's token holds up no HPA of another clientset.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::sync::Arc;
use std::time::Duration;

use fake_metrics_server::script::{Script, from_yaml};
use hpa_controller::ratelimit::{Clientset, PerClientsetLayer};
use hpa_controller::{ControllerConfig, ControllerHandle, ControllerOptions, SyncMode};
use hpa_core::clock::SystemClock;
use hpa_embedded::Embedded;
use hpa_sim::SimConfig;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, PostParams};
use tower::Layer;

/// `client` behind a bucket per clientset: none limited but the external
/// metrics one, which gives one token and then one every 100 s.
fn with_a_slow_external_api(client: kube::Client) -> kube::Client {
    let send = tower::service_fn(move |request| {
        let client = client.clone();
        async move { client.send(request).await }
    });
    let layer = PerClientsetLayer::with_rates(|clientset| match clientset {
        Clientset::ExternalMetrics => (0.01, 1),
        _ => (0.0, 1),
    });
    kube::Client::new(layer.layer(send), "default")
}

async fn create(client: &kube::Client, name: &str, metric: serde_json::Value) {
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "app"}]}
            }
        }
    }))
    .unwrap();
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let hpa: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [metric]
        }
    }))
    .unwrap();
    Api::<HorizontalPodAutoscaler>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &hpa)
        .await
        .unwrap();
}

/// One worker, two External HPAs (one gets the external bucket's only
/// token, the other waits 100 s for the next) and one Pods HPA: the Pods
/// HPA keeps its 100 ms period. A worker waiting with the External HPA
/// would have synced it at most once in that time.
#[tokio::test]
async fn an_hpa_waiting_for_its_token_holds_up_no_hpa_of_another_api() {
    let Embedded { sim, metrics } = Embedded::new(None, SimConfig::default());
    let script: Script = from_yaml(
        "pods:
  - {name: web-0, labels: {app: web}, containers: [{name: app, cpu: 100m}], metrics: {rps: 60}}
  - {name: web-1, labels: {app: web}, containers: [{name: app, cpu: 100m}], metrics: {rps: 60}}
external:
  - {metric: queue_depth, labels: {queue: a}, value: 10}
  - {metric: queue_depth, labels: {queue: b}, value: 10}
",
    )
    .unwrap();
    metrics.load(&script).unwrap();
    let client = sim.client();
    let external = |queue: &str| {
        serde_json::json!({"type": "External", "external": {
            "metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": queue}}},
            "target": {"type": "AverageValue", "averageValue": "5"}
        }})
    };
    create(&client, "a", external("a")).await;
    create(&client, "b", external("b")).await;
    let pods = serde_json::json!({"type": "Pods", "pods": {
        "metric": {"name": "rps"},
        "target": {"type": "AverageValue", "averageValue": "60"}
    }});
    create(&client, "web", pods).await;

    let ctl = ControllerHandle::start(
        with_a_slow_external_api(client),
        ControllerOptions {
            mode: SyncMode::Periodic,
            ..ControllerOptions::manual(
                ControllerConfig {
                    sync_period: Duration::from_millis(100),
                    workers: 1,
                    ..ControllerConfig::default()
                },
                Arc::new(SystemClock),
            )
        },
    );
    let synced = tokio::time::timeout(Duration::from_secs(30), async {
        while ctl.decisions("default", "web", 10).len() < 10 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let external_syncs =
        ctl.decisions("default", "a", 10).len() + ctl.decisions("default", "b", 10).len();
    assert!(
        synced.is_ok(),
        "web synced {} times in 30 s",
        ctl.decisions("default", "web", 10).len()
    );
    assert_eq!(
        external_syncs, 1,
        "one External HPA still waits for its token"
    );
    // Shutting down drops the reconcile still waiting.
    tokio::time::timeout(Duration::from_secs(10), ctl.shutdown())
        .await
        .unwrap()
        .unwrap();
}
