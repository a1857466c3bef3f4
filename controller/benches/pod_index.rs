//! A reconcile's reads of the controller's caches, in one namespace of the
//! 10,000-HPA load mix (100 HPAs, 1,000 pods, 10 per HPA): the target's
//! pods from the pod index, an HPA's share of a namespace-wide custom
//! metrics answer, and the other HPAs' selectors for the ambiguity check.
#![allow(clippy::unwrap_used, reason = "benchmark fixtures")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hpa_controller::context::SelectorStore;
use hpa_controller::pod_index::{ListedPods, PodIndex};
use hpa_controller::slim_pod::SlimPod;
use hpa_core::Selector;
use kube::runtime::watcher;

const APPS: usize = 100;
const PODS_PER_APP: usize = 10;

fn pod(app: usize, i: usize) -> SlimPod {
    serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": format!("app-{app}-{i}"), "namespace": "load-7",
            "labels": {"app": format!("app-{app}"), "pod-template-hash": format!("h{app}")},
            "resourceVersion": "1"
        },
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Running",
                   "conditions": [{"type": "Ready", "status": "True"}]}
    }))
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let index = PodIndex::default();
    for app in 0..APPS {
        for i in 0..PODS_PER_APP {
            index.apply(&watcher::Event::Apply(pod(app, i)));
        }
    }
    let selectors: Vec<Selector> = (0..APPS)
        .map(|app| Selector::parse(&format!("app=app-{app}")).unwrap())
        .collect();
    let listed = ListedPods::new(
        (0..APPS)
            .flat_map(|app| (0..PODS_PER_APP).map(move |i| format!("app-{app}-{i}").into()))
            .collect::<Vec<std::sync::Arc<str>>>()
            .iter(),
    );
    let store = SelectorStore::default();
    for (app, selector) in selectors.iter().enumerate() {
        store.set(&format!("load-7/hpa-{app}"), selector);
    }
    let keys: Vec<String> = (0..APPS).map(|app| format!("load-7/hpa-{app}")).collect();

    let mut group = c.benchmark_group("reconcile_reads_100_hpas");
    group.bench_function("pods", |b| {
        b.iter(|| {
            for selector in &selectors {
                black_box(index.pods("load-7", Some(black_box(selector))));
            }
        });
    });
    group.bench_function("pick", |b| {
        b.iter(|| {
            for selector in &selectors {
                black_box(index.pick("load-7", black_box(selector), &listed));
            }
        });
    });
    let pods: Vec<_> = selectors
        .iter()
        .map(|s| index.pods("load-7", Some(s)))
        .collect();
    group.bench_function("selectors_set", |b| {
        b.iter(|| {
            for (key, selector) in keys.iter().zip(&selectors) {
                store.set(black_box(key), selector);
            }
        });
    });
    group.bench_function("selectors_others", |b| {
        b.iter(|| {
            for (key, pods) in keys.iter().zip(&pods) {
                black_box(store.others("load-7", black_box(key), pods));
            }
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
