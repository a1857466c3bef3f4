//! Load runs on a cluster that names its pods as a real one does:
//! `hpa-harness sim --generated-pod-names` as a separate process, through
//! the kubeconfig backend. Its Deployments' pods are `w0-<hash>-<5>`, which
//! the load cannot name in advance: the fake metrics server's rules give
//! them values. The runs must report only successful syncs, refuse a run
//! whose syncs failed, and leave the cluster as they found it.
#![allow(clippy::unwrap_used)] // reason: test code; a panic is the failure report

use std::process::Stdio;
use std::time::Duration;

use fake_metrics_server::client::ControlClient;
use fake_metrics_server::script::Api as MetricsApi;
use hpa_controller::ControllerConfig;
use hpa_harness::load::cleanup::LOAD_LABEL;
use hpa_harness::load::{BackendKind, ControllerKind, LoadOptions, MetricProfile, run};
use hpa_harness::testbed::TestbedOptions;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, ListParams};

mod support;

/// The runs share two cores: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn options(kubeconfig: &std::path::Path, metrics_url: &str, profile: MetricProfile) -> LoadOptions {
    LoadOptions {
        hpas: 40,
        pods_per_hpa: 2,
        warmup: Duration::from_secs(3),
        duration: Duration::from_secs(8),
        settings: ControllerConfig {
            sync_period: Duration::from_secs(2),
            ..ControllerConfig::default()
        },
        profile,
        hpas_per_namespace: 20,
        backend: BackendKind::Kubeconfig,
        testbed: TestbedOptions {
            kubeconfig: Some(kubeconfig.to_path_buf()),
            metrics_url: Some(metrics_url.to_owned()),
            ..TestbedOptions::default()
        },
        ..LoadOptions::default()
    }
}

async fn client(kubeconfig: &std::path::Path) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(kubeconfig).unwrap(),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// What the load left on the cluster: namespaces carrying its label.
async fn load_namespaces(client: &kube::Client) -> Vec<String> {
    Api::<Namespace>::all(client.clone())
        .list(&ListParams::default().labels(LOAD_LABEL))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_with_generated_names_get_metrics_no_sync_fails_and_a_second_run_works() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-real");
    let (mut sim, kubeconfig, metrics_url) = support::spawn_generated_sim(scratch.path()).await;
    let client = client(&kubeconfig).await;
    // A ramp: the HPAs scale up, so the cluster creates pods during the run.
    let first = run(&options(&kubeconfig, &metrics_url, MetricProfile::Ramp))
        .await
        .unwrap();
    eprintln!(
        "{}",
        hpa_harness::load::report::to_table(std::slice::from_ref(&first))
    );
    assert_eq!(first.failed_syncs, 0, "{:?}", first.failed_sync_reasons);
    assert!(
        first.invariant_violations().is_empty(),
        "{:?}",
        first.invariant_violations()
    );
    assert_eq!(first.hpas_not_synced_after_warmup, Some(0));
    assert!(
        load_namespaces(&client).await.is_empty(),
        "the run deleted its load"
    );
    let left: Vec<Pod> = Api::<Pod>::all(client.clone())
        .list(&ListParams::default().labels(LOAD_LABEL))
        .await
        .unwrap()
        .items;
    assert!(left.is_empty(), "{} pods left", left.len());

    // The same cluster again: nothing in the way.
    let second = run(&options(&kubeconfig, &metrics_url, MetricProfile::Steady))
        .await
        .unwrap();
    assert_eq!(second.failed_syncs, 0, "{:?}", second.failed_sync_reasons);
    assert!(second.invariant_violations().is_empty());
    sim.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_syncs_fail_is_refused_naming_the_reason() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-real-failing");
    let (mut sim, kubeconfig, metrics_url) = support::spawn_generated_sim(scratch.path()).await;
    // Once the load is built, the custom metrics API answers 404: a
    // quarter of the HPAs (Pods metrics) cannot sync.
    let control = ControlClient::new(metrics_url.clone()).unwrap();
    let faults = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        control.fail(MetricsApi::Custom, 404).await.unwrap();
    });
    let report = run(&options(&kubeconfig, &metrics_url, MetricProfile::Steady))
        .await
        .unwrap();
    faults.await.unwrap();
    sim.kill().await.unwrap();
    assert!(report.failed_syncs > 0, "{report:?}");
    let broken = report.invariant_violations();
    assert!(
        broken
            .iter()
            .any(|b| b.contains("syncs failed") && b.contains("not a measurement")),
        "{broken:?}"
    );
    assert!(
        report
            .failed_sync_reasons
            .keys()
            .any(|r| r.contains("requests_per_second")),
        "{:?}",
        report.failed_sync_reasons
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstreams_syncs_are_checked_by_the_servers_answers() {
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-real-upstream");
    let (mut sim, kubeconfig, metrics_url) = support::spawn_generated_sim(scratch.path()).await;
    // Our controller binary plays the cluster's own, with upstream's
    // requests (one metrics request naming its HPA per sync).
    let mut controller = support::harness_controller(&kubeconfig)
        .sync_period("2s")
        .without_leader_election()
        .args(["--upstream-requests"])
        .port(support::free_port())
        .spawn();
    let upstream = |profile| {
        let mut options = options(&kubeconfig, &metrics_url, profile);
        options.testbed.controller = ControllerKind::Upstream;
        options
    };
    let healthy = run(&upstream(MetricProfile::Steady)).await.unwrap();
    assert_eq!(healthy.syncs_counted_by, "request-log");
    assert_eq!(healthy.failed_syncs, 0, "{:?}", healthy.failed_sync_reasons);
    assert!(
        healthy.invariant_violations().is_empty(),
        "{:?}",
        healthy.invariant_violations()
    );

    let control = ControlClient::new(metrics_url.clone()).unwrap();
    let faults = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        control.fail(MetricsApi::External, 404).await.unwrap();
    });
    let failing = run(&upstream(MetricProfile::Steady)).await.unwrap();
    faults.await.unwrap();
    controller.kill().await.unwrap();
    sim.kill().await.unwrap();
    assert!(failing.failed_syncs > 0, "{failing:?}");
    assert!(
        failing
            .failed_sync_reasons
            .contains_key("the external metrics API answered 404"),
        "{:?}",
        failing.failed_sync_reasons
    );
    assert!(
        failing
            .invariant_violations()
            .iter()
            .any(|b| b.contains("not a measurement")),
        "{:?}",
        failing.invariant_violations()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_deletes_its_load_and_exits_non_zero() {
    use tokio::io::AsyncBufReadExt;
    let _one = ONE_AT_A_TIME.lock().await;
    let scratch = support::temp_dir("load-real-sigint");
    let (mut sim, kubeconfig, metrics_url) = support::spawn_generated_sim(scratch.path()).await;
    let client = client(&kubeconfig).await;
    let mut load = tokio::process::Command::new(support::BIN)
        .args(["load", "--backend", "kubeconfig", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(["--metrics-control-url", &metrics_url])
        .args(["--hpas", "20", "--pods-per-hpa", "2", "--sync-period", "2s"])
        .args(["--duration", "60s"])
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(load.stderr.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("load built") {
                return;
            }
        }
        panic!("the load never said it was built");
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    assert!(!load_namespaces(&client).await.is_empty());
    let pid = load.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = tokio::time::timeout(Duration::from_secs(60), load.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(!status.success(), "an interrupted run is no measurement");
    assert!(
        load_namespaces(&client).await.is_empty(),
        "the load was deleted"
    );
    sim.kill().await.unwrap();
}
