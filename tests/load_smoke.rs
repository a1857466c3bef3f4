//! A short load run through the library (200 HPAs, a 2 s sync period, 15 s):
//! checks the report's invariants (every HPA synced, no disagreement with
//! the pure core), not its speed, so it holds on any machine and in debug
//! builds.
#![allow(clippy::unwrap_used)] // reason: test code; a panic is the failure report

use std::time::Duration;

use hpa_harness::load::{BackendKind, ControllerKind, LoadOptions, MetricProfile, run};

mod support;

/// The runs share two cores: one at a time, so that each has the machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn smoke(hpas: usize, seconds: u64, optimize: bool, profile: MetricProfile) -> LoadOptions {
    LoadOptions {
        hpas,
        pods_per_hpa: 3,
        workers: 5,
        duration: Duration::from_secs(seconds),
        sync_period: Duration::from_secs(2),
        profile,
        optimize,
        hpas_per_namespace: 50,
        ..LoadOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_ramp_syncs_every_hpa_and_agrees_with_the_core() {
    let _one = ONE_AT_A_TIME.lock().await;
    let report = run(&smoke(200, 15, true, MetricProfile::Ramp))
        .await
        .unwrap();
    eprintln!(
        "{}",
        hpa_harness::load::report::to_table(std::slice::from_ref(&report))
    );
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
    assert!(report.syncs >= 200, "only {} syncs", report.syncs);
    assert_eq!(report.hpas, 200);
    assert!(
        report.sync_interval_seconds.count > 0,
        "no HPA synced twice"
    );
    assert!(report.api_requests_per_sync > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_caches_every_sync_reads_the_scale() {
    let _one = ONE_AT_A_TIME.lock().await;
    let report = run(&smoke(50, 6, false, MetricProfile::Steady))
        .await
        .unwrap();
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
    // Upstream's requests: one GET of /scale per sync.
    let scale_gets = report
        .api_requests_by_kind
        .get("get deployments.apps/scale")
        .copied()
        .unwrap_or(0.0);
    assert!(scale_gets >= 0.99, "{:?}", report.api_requests_by_kind);
}

/// With the caches, the Pods-metric HPAs of a namespace share one custom
/// metrics list per window (each picks its pods with the pod cache) instead
/// of one list each (0.25 per sync in the mix). 200 HPAs in one namespace,
/// a 0.2 s window: at most 5 lists a second against 50 Pods-metric syncs a
/// period, so even spread evenly they stay under half of one per sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_caches_pods_metrics_are_listed_per_namespace() {
    let _one = ONE_AT_A_TIME.lock().await;
    let options = LoadOptions {
        hpas_per_namespace: 200,
        ..smoke(200, 6, true, MetricProfile::Steady)
    };
    let report = run(&options).await.unwrap();
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
    let custom = report
        .api_requests_by_kind
        .get("list custom.metrics.k8s.io")
        .copied()
        .unwrap_or(0.0);
    assert!(
        custom > 0.0 && custom <= 0.125,
        "{:?}",
        report.api_requests_by_kind
    );
}

/// `hpa-harness sim` as a separate process, as a user would start it; its
/// `api-server:`, `kubeconfig:` and `metrics-server:` lines, read from stdout.
async fn spawn_sim(dir: &std::path::Path) -> (tokio::process::Child, std::path::PathBuf, String) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(support::BIN)
        .args(["sim", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(dir.join("kubeconfig"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut announced = hpa_harness::testbed::process::Announced::default();
    tokio::time::timeout(Duration::from_secs(30), async {
        while announced.api_server.is_none()
            || announced.kubeconfig.is_none()
            || announced.metrics_server.is_none()
        {
            let line = lines.next_line().await.unwrap().unwrap();
            announced.read_line(&line);
        }
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (
        child,
        announced.kubeconfig.unwrap(),
        announced.metrics_server.unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubeconfig_backend_loads_a_sim_process_and_counts_its_requests() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-smoke-kubeconfig");
    let dir = scratch.path().to_path_buf();
    let (mut child, kubeconfig, metrics_url) = spawn_sim(&dir).await;
    let report = run(&LoadOptions {
        backend: BackendKind::Kubeconfig,
        kubeconfig: Some(kubeconfig),
        metrics_control_url: Some(metrics_url),
        warmup: Duration::from_secs(3),
        ..smoke(50, 8, true, MetricProfile::Steady)
    })
    .await
    .unwrap();
    child.kill().await.unwrap();
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
    assert_eq!(report.backend, "kubeconfig");
    // The sim answered its admin API, so requests were counted there.
    assert!(report.requests_counted);
    assert!(report.api_requests_per_sync > 0.0, "{report:?}");
    assert_eq!(report.hpas_not_synced_after_warmup, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_mode_measures_a_controller_it_does_not_run() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-smoke-upstream");
    let dir = scratch.path().to_path_buf();
    let (mut sim, kubeconfig, metrics_url) = spawn_sim(&dir).await;
    // Our controller binary stands in for the cluster's own: the load run
    // neither starts nor observes it, and sees its syncs only in the fake
    // metrics server's request log, so it makes upstream's requests (one
    // metrics list per HPA) with --upstream-requests.
    let mut controller = tokio::process::Command::new(env!("CARGO_BIN_EXE_hpa-harness"))
        .args(["controller", "--kubeconfig"])
        .arg(&kubeconfig)
        .args([
            "--horizontal-pod-autoscaler-sync-period",
            "2s",
            "--bind-address",
            "127.0.0.1:0",
            "--leader-elect=false",
            "--upstream-requests",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let report = run(&LoadOptions {
        backend: BackendKind::Kubeconfig,
        controller: ControllerKind::Upstream,
        kubeconfig: Some(kubeconfig),
        metrics_control_url: Some(metrics_url),
        warmup: Duration::from_secs(3),
        ..smoke(20, 8, true, MetricProfile::Steady)
    })
    .await
    .unwrap();
    controller.kill().await.unwrap();
    sim.kill().await.unwrap();
    assert_eq!(report.controller, "upstream");
    assert_eq!(report.hpas_never_synced, 0, "{report:?}");
    assert_eq!(report.hpas_not_synced_after_warmup, 0, "{report:?}");
    // Several syncs per HPA in the window, with intervals between them.
    assert!(report.syncs >= 40, "{report:?}");
    assert!(report.sync_interval_seconds.count > 0, "{report:?}");
    assert!(report.sync_interval_seconds.p50 > 0.5, "{report:?}");
}
