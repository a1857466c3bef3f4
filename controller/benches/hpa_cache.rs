//! What the HPA cache costs a sync: each reconcile decodes its HPA from the
//! cache's compact text ([`hpa_controller::hpa_cache`]), where a cache of
//! decoded HPAs would hand out a shared one. Also what a watch event costs
//! (encoding), and, for scale, a copy of a decoded HPA. The HPA is one of
//! the load's, as the API server returns it with its status.
#![allow(clippy::unwrap_used, reason = "benchmark fixtures")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hpa_controller::hpa_cache::CachedHpa;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;

fn hpa() -> HorizontalPodAutoscaler {
    serde_json::from_str(r#"{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"hpa-harness.io/load":"true"},"name":"w0","namespace":"load-0","resourceVersion":"1611","uid":"00000000-0000-4000-8000-000000000008"},"spec":{"maxReplicas":2,"metrics":[{"resource":{"name":"cpu","target":{"averageUtilization":50,"type":"Utilization"}},"type":"Resource"}],"minReplicas":1,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"w0"}},"status":{"conditions":[{"lastTransitionTime":"2026-01-01T00:01:15Z","message":"recommended size matches current size","observedGeneration":1,"reason":"ReadyForNewScale","status":"True","type":"AbleToScale"},{"lastTransitionTime":"2026-01-01T00:01:15Z","message":"the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)","observedGeneration":1,"reason":"ValidMetricFound","status":"True","type":"ScalingActive"},{"lastTransitionTime":"2026-01-01T00:01:15Z","message":"the desired count is within the acceptable range","observedGeneration":1,"reason":"DesiredWithinRange","status":"False","type":"ScalingLimited"}],"currentMetrics":[{"resource":{"current":{"averageUtilization":50,"averageValue":"100m"},"name":"cpu"},"type":"Resource"}],"currentReplicas":1,"desiredReplicas":1,"observedGeneration":1}}"#).unwrap()
}

fn bench(c: &mut Criterion) {
    let hpa = hpa();
    let cached = CachedHpa::new(&hpa);
    assert_eq!(cached.hpa().unwrap(), hpa);
    let mut group = c.benchmark_group("hpa_cache");
    group.bench_function("read_per_sync", |b| {
        b.iter(|| black_box(black_box(&cached).hpa().unwrap()));
    });
    group.bench_function("write_per_watch_event", |b| {
        b.iter(|| black_box(CachedHpa::new(black_box(&hpa))));
    });
    group.bench_function("copy_of_a_decoded_hpa", |b| {
        b.iter(|| black_box(black_box(&hpa).clone()));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
