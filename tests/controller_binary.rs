//! The controller binary against `hpa-harness sim` started as a separate
//! process, through the kubeconfig the sim writes: it scales a deployment,
//! serves its endpoints, and stops cleanly on SIGTERM.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, PostParams};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

mod support;
use support::{Sim, free_port, harness_controller, temp_dir};

const SCRIPT: &str = "pods:
  - name: web-0
    labels: {app: web}
    containers: [{name: app, cpu: 100m}]
    metrics: {http_requests: 50}
  - name: web-1
    labels: {app: web}
    containers: [{name: app, cpu: 100m}]
    metrics: {http_requests: 100}
";

/// Starts `hpa-harness sim` and waits for its kubeconfig line.
async fn start_sim(dir: &Path) -> (Child, PathBuf) {
    let script = dir.join("metrics.yaml");
    std::fs::write(&script, SCRIPT).unwrap();
    let script_arg = script.display().to_string();
    let (child, kubeconfig, _) = Sim::new(dir)
        .args(&["--metrics-script", &script_arg])
        .spawn()
        .await;
    (child, kubeconfig)
}

async fn client(kubeconfig: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

async fn http_get(port: u16, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test]
async fn the_controller_binary_scales_a_deployment_of_a_separate_sim_process() {
    let dir = temp_dir("binary");
    let (_sim, kubeconfig) = start_sim(dir.path()).await;
    let client = client(&kubeconfig).await;

    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "app", "image": "app"}]}}
        }
    }))
    .unwrap();
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let hpa: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 10,
            "metrics": [{"type": "Pods", "pods": {
                "metric": {"name": "http_requests"},
                "target": {"type": "AverageValue", "averageValue": "60"}}}]
        }
    }))
    .unwrap();
    Api::<HorizontalPodAutoscaler>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &hpa)
        .await
        .unwrap();

    let port = free_port();
    let mut controller = harness_controller(&kubeconfig)
        .sync_period("1s")
        .args([
            "--leader-elect-lease-duration=2s",
            "--leader-elect-renew-deadline=1s",
            "--leader-elect-retry-period=200ms",
            "--leader-elect-resource-namespace=default",
        ])
        .port(port)
        .spawn();

    let deployments = Api::<Deployment>::namespaced(client.clone(), "default");
    let scaled = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let replicas = deployments.get("web").await.unwrap().spec.replicas;
            if replicas == Some(3) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(scaled.is_ok(), "the deployment was not scaled to 3");
    // As upstream, the scale is written before the status: a fast sync can
    // be caught between the two writes.
    let hpas = Api::<HorizontalPodAutoscaler>::namespaced(client.clone(), "default");
    let mut desired = None;
    for _ in 0..100 {
        desired = hpas
            .get("web")
            .await
            .unwrap()
            .status
            .map(|status| status.desired_replicas);
        if desired == Some(3) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        desired,
        Some(3),
        "the status does not show 3 desired replicas"
    );

    // The reconcile counts itself once it is over, which may be a moment
    // after the scale and the status it wrote are visible.
    let scaled_up = "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"scale_up\",error=\"none\"} 1";
    let mut metrics = String::new();
    for _ in 0..100 {
        metrics = http_get(port, "/metrics").await;
        if metrics.contains(scaled_up) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(metrics.contains(scaled_up), "{metrics}");
    assert!(metrics.contains("hpa_harness_leader 1"), "{metrics}");
    let ready = http_get(port, "/readyz").await;
    assert!(ready.starts_with("HTTP/1.1 200"), "{ready}");
    let decisions = http_get(port, "/debug/decisions").await;
    assert!(decisions.contains("\"key\":\"default/web\""), "{decisions}");

    // SIGTERM: a graceful stop with exit code 0, and the Lease released.
    let pid = controller.id().unwrap();
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .await
        .unwrap();
    assert!(killed.success());
    let exit = tokio::time::timeout(Duration::from_secs(20), controller.wait())
        .await
        .expect("the controller did not stop on SIGTERM")
        .unwrap();
    assert!(exit.success(), "exit status {exit:?}");
    let lease = Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(client, "default")
        .get("hpa-harness-controller")
        .await
        .unwrap();
    assert_eq!(
        lease.spec.unwrap().holder_identity,
        None,
        "the lease was not released"
    );
}
