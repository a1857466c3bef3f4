//! Time of one decision (`decide` + `finish`) for 10, 100 and 1,000 pods with
//! a CPU utilization metric and a custom Pods metric.
#![allow(clippy::unwrap_used, reason = "benchmark fixtures")]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use hpa_core::calc::{ContainerUsage, PodCustomSample, PodResourceSample};
use hpa_core::config::DecisionConfig;
use hpa_core::decide::{DecisionInput, Fetched, RescaleOutcome, ScaleInfo};
use hpa_core::normalize::HpaHistory;
use hpa_core::quantity::{Format, Quantity};
use hpa_core::{decide, finish};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

fn world(n: usize) -> DecisionInput {
    let now = Timestamp::from_second(1_767_225_600).unwrap();
    let long_ago = (now - SignedDuration::from_hours(1)).to_string();
    let hpa: k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "bench"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5000,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
                {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "100"}}}
            ]
        }
    }))
    .unwrap();
    let pods: Vec<Pod> = (0..n)
        .map(|i| {
            serde_json::from_value(json!({
                "metadata": {"name": format!("web-{i}"), "namespace": "bench", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}]},
                "status": {"phase": "Running", "startTime": long_ago,
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": long_ago}]}
            }))
            .unwrap()
        })
        .collect();
    let cpu = (0..n)
        .filter(|i| i % 10 != 0)
        .map(|i| PodResourceSample {
            pod: format!("web-{i}").into(),
            namespace: "bench".into(),
            timestamp: now - SignedDuration::from_secs(20),
            window: SignedDuration::from_secs(30),
            containers: vec![ContainerUsage {
                name: "app".to_owned(),
                usage: [(
                    "cpu".to_owned(),
                    Quantity::from_milli(300 + (i as i64 % 200), Format::DecimalSI),
                )]
                .into(),
            }]
            .into(),
        })
        .collect();
    let qps = (0..n)
        .map(|i| PodCustomSample {
            pod: format!("web-{i}").into(),
            value: Quantity::from_int(80 + (i as i64 % 50), Format::DecimalSI),
            timestamp: now,
            window: None,
        })
        .collect();
    DecisionInput {
        hpa: hpa.into(),
        scale: ScaleInfo::new(
            i32::try_from(n).unwrap(),
            i32::try_from(n).unwrap(),
            "app=web",
        ),
        pods: pods
            .iter()
            .map(|p| std::sync::Arc::new(hpa_core::CorePod::from(p)))
            .collect(),
        other_hpas: Vec::new(),
        metrics: vec![
            Some(Fetched::PodResource(Ok(cpu))),
            Some(Fetched::PodsCustom(Ok(qps))),
        ],
    }
}

fn bench(c: &mut Criterion) {
    let now = Timestamp::from_second(1_767_225_600).unwrap();
    let config = DecisionConfig::default();
    let history = HpaHistory::default();
    let mut group = c.benchmark_group("decide");
    for n in [10usize, 100, 1000] {
        let input = world(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &input, |b, input| {
            b.iter(|| {
                let d = decide(black_box(input), &history, &config, now);
                let outcome = if d.scale_to.is_some() {
                    RescaleOutcome::Succeeded
                } else {
                    RescaleOutcome::NotNeeded
                };
                black_box(finish(d, outcome, now))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
