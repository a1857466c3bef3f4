//! Scratch: what reading a cached HPA costs per sync, kept whole or as text.
#![allow(clippy::unwrap_used, reason = "benchmark fixtures")]
use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use std::hint::black_box;
use std::sync::Arc;

fn hpa() -> HorizontalPodAutoscaler {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "w123", "namespace": "load-1", "labels": {"hpa-harness.io/load": "true"},
            "uid": "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "resourceVersion": "123456", "generation": 1,
            "creationTimestamp": "2026-11-28T01:39:42Z"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "w123"},
            "minReplicas": 1, "maxReplicas": 2,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
              "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max", "policies": [
                {"type": "Percent", "value": 100, "periodSeconds": 15}]}}},
        "status": {"observedGeneration": 1, "currentReplicas": 1, "desiredReplicas": 1,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "100m", "averageUtilization": 50}}}],
            "conditions": [
              {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-11-28T01:40:12Z", "reason": "ReadyForNewScale", "message": "recommended size matches current size"},
              {"type": "ScalingActive", "status": "True", "lastTransitionTime": "2026-11-28T01:40:12Z", "reason": "ValidMetricFound", "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"},
              {"type": "ScalingLimited", "status": "False", "lastTransitionTime": "2026-11-28T01:40:12Z", "reason": "DesiredWithinRange", "message": "the desired count is within the acceptable range"}]}
    })).unwrap()
}

fn bench(c: &mut Criterion) {
    let h = hpa();
    let json = serde_json::to_vec(&h).unwrap();
    println!("json {} bytes", json.len());
    c.bench_function("decode_hpa_json", |b| {
        b.iter(|| {
            black_box(Arc::new(
                serde_json::from_slice::<HorizontalPodAutoscaler>(black_box(&json)).unwrap(),
            ))
        })
    });
    c.bench_function("clone_hpa", |b| {
        b.iter(|| black_box(Arc::new(black_box(&h).clone())))
    });
    c.bench_function("encode_hpa_json", |b| {
        b.iter(|| black_box(serde_json::to_vec(black_box(&h)).unwrap()))
    });
}
criterion_group!(benches, bench);
criterion_main!(benches);
