//! A measured load: many HPAs on the simulated cluster, synced in virtual
//! time. Ignored by default (it prints figures); run with
//! `cargo test -p hpa-controller --release --test load -- --ignored --nocapture`.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::sync::Arc;
use std::time::Instant;

use fake_metrics_server::script::{Script, from_yaml};
use hpa_controller::{ControllerConfig, ControllerHandle, ControllerOptions};
use hpa_core::clock::VirtualClock;
use hpa_embedded::Embedded;
use hpa_sim::SimConfig;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, PostParams};

const HPAS: usize = 200;
const PODS: usize = 5;
const SYNCS: usize = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load figures; run explicitly"]
async fn many_hpas_sync_in_virtual_time() {
    let clock = VirtualClock::default();
    let Embedded { sim, metrics } = Embedded::new(Some(clock.clone()), SimConfig::default());
    let client = sim.client();
    let mut yaml = String::from("pods:\n");
    for h in 0..HPAS {
        let name = format!("app{h}");
        let deployment: Deployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": PODS, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "app"}]}}}
        }))
        .unwrap();
        Api::<Deployment>::namespaced(client.clone(), "default")
            .create(&PostParams::default(), &deployment)
            .await
            .unwrap();
        let hpa: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                     "minReplicas": 1, "maxReplicas": 100,
                     "metrics": [{"type": "Pods", "pods": {"metric": {"name": "http_requests"},
                                  "target": {"type": "AverageValue", "averageValue": "60"}}}]}
        }))
        .unwrap();
        Api::<HorizontalPodAutoscaler>::namespaced(client.clone(), "default")
            .create(&PostParams::default(), &hpa)
            .await
            .unwrap();
        for p in 0..PODS {
            yaml.push_str(&format!(
                "  - name: {name}-{p}\n    labels: {{app: {name}}}\n    containers: [{{name: app, cpu: 100m}}]\n    metrics: {{http_requests: 60}}\n"
            ));
        }
    }
    metrics.load(&from_yaml::<Script>(&yaml).unwrap()).unwrap();
    let ctl = ControllerHandle::start(
        client,
        ControllerOptions::manual(ControllerConfig::default(), Arc::new(clock.clone())),
    );
    let mut times = Vec::new();
    for _ in 0..SYNCS {
        let start = Instant::now();
        let report = ctl.sync_all_now().await.unwrap();
        times.push(start.elapsed());
        assert_eq!(report.reconciled.len(), HPAS);
        assert!(report.errors.is_empty(), "{:?}", report.errors.first());
        sim.advance(jiff::SignedDuration::from_secs(15));
    }
    let best = times.iter().min().unwrap();
    println!(
        "{HPAS} HPAs x {PODS} pods: sync_all_now {:?} (best {best:?}, {:.0} reconciles/s); all: {times:?}",
        times.last().unwrap(),
        HPAS as f64 / best.as_secs_f64()
    );
    ctl.shutdown().await.unwrap();
}
