//! One steady sync at 10 pods: what a reconcile of the load's mix costs the
//! controller once the load is steady (no status write, no event, the
//! metrics lists shared by the namespace's HPAs), counted in instructions
//! so that two builds compare on a shared machine where CPU seconds move by
//! a fifth from one day to the next.
//!
//! One namespace of `hpa-harness load` (100 HPAs, 10 pods each: CPU,
//! memory, Pods and External metrics in turn, every pod at its target),
//! as at 10,000 HPAs × 10 pods, where each namespace's lists are as long.
//! The simulated cluster and the fake metrics server run on a thread of
//! their own and serve on a socket; the controller, at `hpa-controller`'s
//! defaults, runs alone on the main thread (a current-thread runtime) on
//! the cluster's virtual clock. It is settled first (21 syncs of each HPA
//! 15 s apart: a full scale-down stabilization window); then `measured`
//! reconciles each HPA once per round, 15 s of virtual time apart, each
//! round a new round of shared lists, as a sync period does.
//!
//! Natively it prints the main thread's CPU per sync. Under callgrind,
//! `--zero-before`/`--dump-after` on `measured` and one profile per thread
//! give the instructions of the measured syncs alone, on the controller's
//! thread (docs/load/steady-sync.sh divides them by the syncs):
//!
//! ```sh
//! cargo bench -p hpa-controller --bench steady_sync            # CPU per sync
//! docs/load/steady-sync.sh                                      # instructions per sync
//! ```
//!
//! `STEADY_SYNC_ROUNDS` (default 20) sets the measured rounds;
//! `STEADY_SYNC_OBSERVER=1` adds an observer that clones each reconcile's
//! inputs and decision, as `hpa-harness load` does (its checker aside).
#![allow(clippy::unwrap_used, reason = "benchmark fixtures")]

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use fake_metrics_server::AppState;
use hpa_controller::cli::Args;
use hpa_controller::{
    ControllerHandle, ControllerOptions, ReconcileObservation, ReconcileObserver,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use serde_json::json;

#[path = "../tests/support/cluster_thread.rs"]
mod cluster_thread;
use cluster_thread::Ask;

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// One namespace of the load.
const HPAS: usize = 100;
const PODS: usize = 10;
const NAMESPACE: &str = "load-0";
const LOAD_LABEL: &str = "hpa-harness.io/load";
/// Syncs 15 s apart that fill a 300 s stabilization window.
const SETTLE: usize = 21;
const PERIOD: jiff::SignedDuration = jiff::SignedDuration::from_secs(15);

/// The cluster's thread, asked to build the one namespace of the load.
type Cluster = cluster_thread::Cluster<()>;

/// Starts the cluster's thread, which builds the namespace (its objects
/// and their metrics) when asked.
fn start_cluster() -> Cluster {
    Cluster::start(async |client: &kube::Client, metrics: &AppState, (): ()| {
        build(client).await;
        metrics
            .load(&fake_metrics_server::script::from_yaml(&script()).unwrap())
            .unwrap();
    })
}

/// HPA `i`'s metric: the load's kinds in turn.
fn metric(i: usize) -> serde_json::Value {
    match i % 4 {
        0 => json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}),
        1 => json!({"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "AverageValue", "averageValue": "64Mi"}}}),
        2 => json!({"type": "Pods", "pods": {"metric": {"name": "requests_per_second"},
            "target": {"type": "AverageValue", "averageValue": "10"}}}),
        _ => json!({"type": "External", "external": {
            "metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": format!("w{i}")}}},
            "target": {"type": "AverageValue", "averageValue": "5"}}}),
    }
}

/// The load's namespace, Deployments and HPAs, as `hpa-harness load`
/// writes them.
async fn build(client: &kube::Client) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": NAMESPACE}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    for i in 0..HPAS {
        let name = format!("w{i}");
        let deployment: Deployment = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LOAD_LABEL: "true"}},
            "spec": {"replicas": PODS, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name, LOAD_LABEL: "true"}},
                                  "spec": {"containers": [{"name": "app", "image": "app",
                                    "resources": {"requests": {"cpu": "200m", "memory": "128Mi"}}}]}}}
        }))
        .unwrap();
        Api::<Deployment>::namespaced(client.clone(), NAMESPACE)
            .create(&PostParams::default(), &deployment)
            .await
            .unwrap();
        let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LOAD_LABEL: "true"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                     "minReplicas": 1, "maxReplicas": 2 * PODS, "metrics": [metric(i)]}
        }))
        .unwrap();
        Api::<HorizontalPodAutoscaler>::namespaced(client.clone(), NAMESPACE)
            .create(&PostParams::default(), &hpa)
            .await
            .unwrap();
    }
}

/// Every pod at its target (the load's steady profile), each named as the
/// simulated cluster names a Deployment's pods; one External series per
/// HPA.
fn script() -> String {
    let mut script = String::from("defaults: {window: 30s}\npods:\n");
    for i in 0..HPAS {
        for k in 0..PODS {
            script.push_str(&format!(
                "  - {{namespace: {NAMESPACE}, name: w{i}-{k}, labels: {{app: w{i}, {LOAD_LABEL}: \"true\"}}, \
                 containers: [{{name: app, cpu: 100m, memory: 65536Ki}}], \
                 metrics: {{requests_per_second: 10000m}}}}\n"
            ));
        }
    }
    script.push_str("external:\n");
    for i in (0..HPAS).filter(|i| i % 4 == 3) {
        script.push_str(&format!(
            "  - {{namespace: {NAMESPACE}, metric: queue_depth, labels: {{queue: w{i}}}, value: {}m}}\n",
            5_000 * PODS
        ));
    }
    script
}

/// `hpa-controller`'s command line with no flags.
#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: Args,
}

/// Clones what `hpa-harness load`'s observer receives, and drops it.
struct Dropping;

impl ReconcileObserver for Dropping {
    fn observe(&self, observation: ReconcileObservation) {
        std::hint::black_box(observation);
    }
}

/// The CPU time of the calling thread, in nanoseconds (`/proc`'s
/// schedstat: its first field).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The measured syncs: `rounds` rounds of every HPA's reconcile, 15 s of
/// virtual time apart, each a new round of shared lists. Its own function,
/// not inlined, so that callgrind can zero its counters on entry and dump
/// them on exit.
#[inline(never)]
fn measured(
    runtime: &tokio::runtime::Runtime,
    cluster: &Cluster,
    controller: &ControllerHandle,
    keys: &[String],
    rounds: usize,
) -> usize {
    runtime.block_on(async {
        let ctx = controller.context();
        let mut synced = 0;
        for _ in 0..rounds {
            cluster.ask(Ask::Advance(PERIOD)).await;
            ctx.metrics_client.next_round();
            for key in keys {
                let done = hpa_controller::reconcile::reconcile(key, ctx).await;
                assert!(
                    matches!(
                        done,
                        Ok(hpa_controller::reconcile::Reconciled::Synced {
                            rescaled: false,
                            ..
                        })
                    ),
                    "{key}: {done:?}"
                );
                synced += 1;
            }
        }
        synced
    })
}

fn main() {
    // `cargo bench` passes `--bench`; nothing here takes options.
    let rounds: usize = std::env::var("STEADY_SYNC_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    let observer = std::env::var("STEADY_SYNC_OBSERVER").is_ok_and(|v| v == "1");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cluster = start_cluster();
    let (controller, keys) = runtime.block_on(async {
        cluster.ask(Ask::Build(())).await;
        // Pods ready for longer than a metrics window before the first sync.
        cluster
            .ask(Ask::Advance(jiff::SignedDuration::from_secs(60)))
            .await;
        let cli = Cli::parse_from(["hpa-controller"]);
        let config = cli.args.config().unwrap();
        let client = cluster.client();
        let mut extensions = cli.args.extensions();
        if observer {
            extensions.observer = Some(Arc::new(Dropping));
        }
        let controller = ControllerHandle::start_with(
            client,
            ControllerOptions::manual(config, Arc::new(cluster.clock.clone())),
            extensions,
        );
        for _ in 0..SETTLE {
            cluster.ask(Ask::Advance(PERIOD)).await;
            let report = controller.sync_all_now().await.unwrap();
            assert_eq!(report.reconciled.len(), HPAS);
            assert!(report.errors.is_empty(), "{:?}", report.errors.first());
        }
        let keys: Vec<String> = controller.context().hpas.keys().into_iter().collect();
        (controller, keys)
    });
    let (cpu, wall) = (thread_cpu_ns(), Instant::now());
    let syncs = measured(&runtime, &cluster, &controller, &keys, rounds);
    let (cpu, wall) = (thread_cpu_ns() - cpu, wall.elapsed());
    // Steady: no sync wrote a status (a write would cost a request and a
    // watch event, and this measures the sync that has none).
    for key in &keys {
        let (namespace, name) = key.split_once('/').unwrap();
        let last = controller.decisions(namespace, name, 1);
        assert!(
            last.iter().all(|d| !d.status_written),
            "{key} wrote its status"
        );
    }
    if std::env::var("STEADY_SYNC_DUMP").is_ok() {
        for key in keys.iter().take(4) {
            let (namespace, name) = key.split_once('/').unwrap();
            let last = controller.decisions(namespace, name, 1);
            let t = serde_json::to_string(&last[0].trace).unwrap();
            let c = hpa_controller::compact_text::CompactText::new(&t);
            println!("{} {} {}", t.len(), c.len(), t);
        }
    }
    println!(
        "steady sync, {PODS} pods: {syncs} syncs, {:.1} µs CPU per sync on the controller's thread, \
         {:.1} µs wall (observer: {observer})",
        cpu as f64 / syncs as f64 / 1_000.0,
        wall.as_secs_f64() * 1e6 / syncs as f64,
    );
    runtime.block_on(controller.shutdown()).unwrap();
}
