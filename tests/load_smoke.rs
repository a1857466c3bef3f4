//! A short load run through the library (200 HPAs, a 2 s sync period, 15 s):
//! checks the report's invariants (every HPA synced, no disagreement with
//! the pure core), not its speed, so it holds on any machine and in debug
//! builds.
#![allow(clippy::unwrap_used)] // reason: test code; a panic is the failure report

use std::time::Duration;

use hpa_controller::ControllerConfig;
use hpa_harness::load::{BackendKind, ControllerKind, LoadOptions, MetricProfile, run};
use hpa_harness::testbed::TestbedOptions;

mod support;

/// The runs share two cores: one at a time, so that each has the machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn smoke(hpas: usize, seconds: u64, optimize: bool, profile: MetricProfile) -> LoadOptions {
    LoadOptions {
        hpas,
        pods_per_hpa: 3,
        duration: Duration::from_secs(seconds),
        settings: ControllerConfig {
            sync_period: Duration::from_secs(2),
            ..ControllerConfig::default()
        },
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
    // The peak is the run's, from the controller's start, not the build's.
    if cfg!(target_os = "linux") {
        assert!(report.peak_rss_since_controller_start);
    }
    assert!(report.peak_rss_bytes > 0 && report.setup_rss_bytes > 0);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_release_the_load_follows_the_cluster_s_own() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-smoke-release");
    let dir = scratch.path().to_path_buf();
    let (mut child, kubeconfig, metrics_url) =
        support::spawn_sim(&dir, &["--kubernetes-version", "1.36"]).await;
    let on_the_sim = |gates: Option<&str>| LoadOptions {
        backend: BackendKind::Kubeconfig,
        testbed: TestbedOptions {
            kubeconfig: Some(kubeconfig.clone()),
            metrics_url: Some(metrics_url.clone()),
            ..TestbedOptions::default()
        },
        gates_under_cluster_release: gates.map(str::to_owned),
        ..smoke(10, 5, true, MetricProfile::Steady)
    };
    // No --kubernetes-version: the cluster's /version decides, and the
    // gates are its release's (HPAConfigurableTolerance is locked on from
    // 1.37, off is fine in 1.36).
    let followed = run(&on_the_sim(Some("HPAConfigurableTolerance=false")))
        .await
        .unwrap();
    assert_eq!(followed.kubernetes_version, "1.36");
    assert!(
        hpa_harness::load::report::to_table(std::slice::from_ref(&followed))
            .contains("our controller followed Kubernetes 1.36"),
    );
    // A release given stands (the settings' own, 1.37).
    let given = run(&on_the_sim(None)).await.unwrap();
    assert_eq!(given.kubernetes_version, "1.37");
    // A gate 1.36 does not register is refused under the cluster's release.
    let err = run(&on_the_sim(Some("HPAGeneration=true")))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("--feature-gates under the cluster's release 1.36"),
        "{err}"
    );
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubeconfig_backend_loads_a_sim_process_and_counts_its_requests() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-smoke-kubeconfig");
    let dir = scratch.path().to_path_buf();
    let (mut child, kubeconfig, metrics_url) = support::spawn_sim(&dir, &[]).await;
    let report = run(&LoadOptions {
        backend: BackendKind::Kubeconfig,
        testbed: TestbedOptions {
            kubeconfig: Some(kubeconfig),
            metrics_url: Some(metrics_url),
            ..TestbedOptions::default()
        },
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
    assert_eq!(report.hpas_not_synced_after_warmup, Some(0));
}

/// Our controller binary as the "cluster's own" controller: the load run
/// neither starts nor observes it. 2 s sync period, its endpoints on `port`.
fn cluster_controller(kubeconfig: &std::path::Path, port: u16) -> support::ControllerProcess {
    support::harness_controller(kubeconfig)
        .sync_period("2s")
        .without_leader_election()
        .port(port)
}

fn upstream(kubeconfig: std::path::PathBuf, metrics_url: String) -> LoadOptions {
    LoadOptions {
        backend: BackendKind::Kubeconfig,
        testbed: TestbedOptions {
            kubeconfig: Some(kubeconfig),
            metrics_url: Some(metrics_url),
            controller: ControllerKind::Upstream,
            ..TestbedOptions::default()
        },
        warmup: Duration::from_secs(3),
        ..smoke(20, 8, true, MetricProfile::Steady)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_mode_measures_a_controller_it_does_not_run() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-smoke-upstream");
    let dir = scratch.path().to_path_buf();
    let (mut sim, kubeconfig, metrics_url) = support::spawn_sim(&dir, &[]).await;
    // The run sees the controller's syncs only in the fake metrics server's
    // request log, so it makes upstream's requests (one metrics list per
    // HPA) with --upstream-requests.
    let mut controller = cluster_controller(&kubeconfig, support::free_port())
        .args(["--upstream-requests"])
        .spawn();
    let report = run(&upstream(kubeconfig, metrics_url)).await.unwrap();
    controller.kill().await.unwrap();
    sim.kill().await.unwrap();
    assert_eq!(report.controller, "upstream");
    assert_eq!(report.syncs_counted_by, "request-log", "{report:?}");
    assert_eq!(report.hpas_never_synced, Some(0), "{report:?}");
    assert_eq!(report.hpas_not_synced_after_warmup, Some(0), "{report:?}");
    // Several syncs per HPA in the window, with intervals between them.
    assert!(report.syncs >= 40, "{report:?}");
    assert!(report.sync_interval_seconds.count > 0, "{report:?}");
    assert!(report.sync_interval_seconds.p50 > 0.5, "{report:?}");
}

/// Issue 16: our controller at its defaults lists metrics per namespace,
/// so the request log names few of its syncs. Given its metrics URL, the
/// run counts every HPA's syncs from its /debug/syncs instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_sharing_lists_is_counted_from_its_own_endpoint() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-smoke-upstream-endpoint");
    let dir = scratch.path().to_path_buf();
    let (mut sim, kubeconfig, metrics_url) = support::spawn_sim(&dir, &[]).await;
    let port = support::free_port();
    let mut controller = cluster_controller(&kubeconfig, port).spawn_serving().await;
    let report = run(&LoadOptions {
        controller_metrics_url: Some(format!("http://127.0.0.1:{port}/metrics")),
        ..upstream(kubeconfig, metrics_url)
    })
    .await
    .unwrap();
    controller.kill().await.unwrap();
    sim.kill().await.unwrap();
    assert_eq!(report.syncs_counted_by, "decision-log", "{report:?}");
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
    assert_eq!(report.hpas_never_synced, Some(0), "{report:?}");
    assert_eq!(report.hpas_not_synced_after_warmup, Some(0), "{report:?}");
    // 20 HPAs every 2 s for 8 s: about 80 syncs; 40 leaves room for a slow
    // machine, and is more than the request log alone could name (the
    // external-metric quarter of the HPAs).
    assert!(report.syncs >= 40, "{report:?}");
    assert!(report.sync_interval_seconds.count > 0, "{report:?}");
    assert!(
        report.sync_interval_seconds.p50 > 1.5 && report.sync_interval_seconds.p50 < 3.0,
        "{report:?}"
    );
}

/// The same controller without its metrics URL: the log shows shared
/// lists, so the run says it cannot tell which HPAs synced, and does not
/// fail them as never synced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_its_endpoint_a_sharing_controller_s_coverage_is_unknown() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-smoke-upstream-shared");
    let dir = scratch.path().to_path_buf();
    let (mut sim, kubeconfig, metrics_url) = support::spawn_sim(&dir, &[]).await;
    let mut controller = cluster_controller(&kubeconfig, support::free_port()).spawn();
    let report = run(&upstream(kubeconfig, metrics_url)).await.unwrap();
    controller.kill().await.unwrap();
    sim.kill().await.unwrap();
    assert_eq!(
        report.syncs_counted_by, "request-log-lower-bound",
        "{report:?}"
    );
    assert_eq!(report.hpas_never_synced, None, "{report:?}");
    assert_eq!(report.hpas_not_synced_after_warmup, None, "{report:?}");
    assert_eq!(report.sync_interval_seconds.count, 0, "{report:?}");
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
}

/// A controller serving /metrics but no /debug/syncs (as
/// kube-controller-manager would): our controller behind a proxy that
/// passes /metrics only. The log shows shared lists, so the syncs are the
/// reconciliation counter's, and which HPAs synced is unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharing_controller_with_metrics_only_is_counted_in_aggregate() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-smoke-upstream-counter");
    let dir = scratch.path().to_path_buf();
    let (mut sim, kubeconfig, metrics_url) = support::spawn_sim(&dir, &[]).await;
    let port = support::free_port();
    let mut controller = cluster_controller(&kubeconfig, port).spawn_serving().await;
    let upstream_metrics = format!("http://127.0.0.1:{port}/metrics");
    // reqwest is built without a default crypto provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let proxy = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let url = upstream_metrics.clone();
            async move { reqwest::get(&url).await.unwrap().text().await.unwrap() }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_addr = listener.local_addr().unwrap();
    let proxy = tokio::spawn(async move { axum::serve(listener, proxy).await });
    let report = run(&LoadOptions {
        controller_metrics_url: Some(format!("http://{proxy_addr}/metrics")),
        ..upstream(kubeconfig, metrics_url)
    })
    .await
    .unwrap();
    proxy.abort();
    controller.kill().await.unwrap();
    sim.kill().await.unwrap();
    assert_eq!(report.syncs_counted_by, "controller-metrics", "{report:?}");
    assert_eq!(report.hpas_never_synced, None, "{report:?}");
    assert_eq!(report.sync_interval_seconds.count, 0, "{report:?}");
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
    // 20 HPAs every 2 s over the 8 s measured: about 80.
    assert!(
        (40..=120).contains(&report.syncs),
        "{} syncs: {report:?}",
        report.syncs
    );
}
