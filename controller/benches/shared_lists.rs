//! Decoding one namespace's shared `metrics.k8s.io` pod list (1,000 pods,
//! as in the 10,000-HPA load mix): the full wire types against the slim
//! ones the shared path uses, the scanner that reads their usual shape,
//! and the label index built from it.
#![allow(clippy::unwrap_used, reason = "benchmark fixtures")]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use hpa_controller::label_index::LabelIndex;
use hpa_controller::metrics_client::slim;

/// A list as the fake metrics server writes it: 1,000 pods of 100
/// deployments, one container each.
fn body() -> String {
    let items: Vec<serde_json::Value> = (0..1000)
        .map(|i| {
            serde_json::json!({
                "kind": "PodMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
                "metadata": {
                    "name": format!("app-{}-{i}", i / 10), "namespace": "load-7",
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                    "labels": {"app": format!("app-{}", i / 10)}
                },
                "timestamp": "2026-01-01T00:00:00Z", "window": "15s",
                "containers": [{"name": "app", "usage": {"cpu": format!("{}m", 100 + i % 400), "memory": "65536Ki"}}]
            })
        })
        .collect();
    serde_json::json!({
        "kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {}, "items": items
    })
    .to_string()
}

fn bench(c: &mut Criterion) {
    let text = body();
    let mut group = c.benchmark_group("namespace_pod_list");
    group.bench_function("full_decode", |b| {
        b.iter(|| {
            serde_json::from_str::<hpa_metrics_api::PodMetricsList>(black_box(&text)).unwrap()
        });
    });
    group.bench_function("skip_only", |b| {
        b.iter(|| serde_json::from_str::<serde::de::IgnoredAny>(black_box(&text)).unwrap());
    });
    group.bench_function("raw_decode", |b| {
        b.iter(|| serde_json::from_str::<slim::RawPodMetricsList<'_>>(black_box(&text)).unwrap());
    });
    group.bench_function("scan", |b| {
        b.iter(|| hpa_controller::metrics_client::scan::pod_metrics(black_box(&text)).unwrap());
    });
    group.bench_function("slim_decode", |b| {
        b.iter(|| serde_json::from_str::<slim::PodMetricsList<'_>>(black_box(&text)).unwrap());
    });
    let labels: Vec<_> = serde_json::from_str::<hpa_metrics_api::PodMetricsList>(&text)
        .unwrap()
        .items
        .into_iter()
        .map(|item| item.metadata.labels)
        .collect();
    group.bench_function("label_index", |b| {
        b.iter_batched(
            || labels.clone(),
            |labels| LabelIndex::new(black_box(labels)),
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
