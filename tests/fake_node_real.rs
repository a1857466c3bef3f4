//! The pod-lifecycle steps on a real cluster, through the harness's fake
//! node: `hpa-harness sim --without-node --generated-pod-names
//! --pod-creation-delay 500ms` as a process, on its wall clock, reached
//! through the kubeconfig backend and treated as a real cluster. Like the
//! API server with kube-controller-manager alone on which users run
//! `hpa-harness conformance`, it creates the pods of workloads but has no
//! node, scheduler or kubelet: the fake node must schedule and run them,
//! with the delays and the room the steps give, and a chart's pods as the
//! harness's own. Each run is checked with our controller in the harness
//! and with a controller process standing in for the cluster's own
//! (`--controller upstream`).
#![allow(clippy::unwrap_used)] // reason: test code; a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hpa_harness::gherkin::target::ControllerKind;
use hpa_harness::gherkin::{BackendKind, RunOptions, Verdict, runner};
use hpa_harness::testbed::TestbedOptions;

mod support;

/// The fake metrics server and the node-less sim as processes: the
/// children (killed on drop), the kubeconfig and the metrics server's
/// control URL.
struct Cluster {
    _metrics: tokio::process::Child,
    _sim: tokio::process::Child,
    kubeconfig: PathBuf,
    metrics_url: String,
    _dir: tempfile::TempDir,
}

impl Cluster {
    async fn start(name: &str) -> Self {
        let dir = support::temp_dir(name);
        let (metrics, metrics_url) = support::spawn_metrics_server(&[], Stdio::null()).await;
        let (sim, kubeconfig, _) = support::Sim::new(dir.path())
            .args(&[
                "--without-node",
                "--generated-pod-names",
                "--pod-creation-delay",
                "500ms",
            ])
            .metrics_url(&metrics_url)
            .spawn()
            .await;
        Self {
            _metrics: metrics,
            _sim: sim,
            kubeconfig,
            metrics_url,
            _dir: dir,
        }
    }

    /// Runs `feature` (under `tests/real`) on the cluster, as a real one,
    /// with `controller` acting; each scenario's name and verdict.
    async fn run(
        &self,
        feature: &str,
        controller: ControllerKind,
        upstream_sync_period: Duration,
    ) -> Vec<(String, Verdict)> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let summary = tokio::time::timeout(
            Duration::from_secs(300),
            runner::run(&RunOptions {
                paths: vec![root.join("tests/real").join(feature)],
                backend: BackendKind::Kubeconfig,
                testbed: TestbedOptions {
                    kubeconfig: Some(self.kubeconfig.clone()),
                    metrics_url: Some(self.metrics_url.clone()),
                    controller,
                    upstream_sync_period,
                    assume_real: true,
                    skip_preflight: true,
                    ..TestbedOptions::default()
                },
                ..RunOptions::default()
            }),
        )
        .await
        .unwrap()
        .unwrap();
        summary
            .scenarios
            .into_iter()
            .map(|s| (s.scenario, s.verdict))
            .collect()
    }
}

/// Our controller binary as the cluster's own, syncing every second.
fn cluster_controller(kubeconfig: &Path) -> tokio::process::Child {
    support::harness_controller(kubeconfig)
        .sync_period("1s")
        .without_leader_election()
        .spawn()
}

/// Every scenario of the feature ran and passed.
fn all_passed(verdicts: &[(String, Verdict)], scenarios: usize) {
    assert_eq!(verdicts.len(), scenarios, "{verdicts:#?}");
    let failed: Vec<_> = verdicts
        .iter()
        .filter(|(_, v)| *v != Verdict::Passed)
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

const SCENARIOS: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_node_runs_delays_pending_pods_and_a_charts_pods_with_our_controller() {
    let cluster = Cluster::start("fake-node-ours").await;
    let verdicts = cluster
        .run(
            "pod-lifecycle.feature",
            ControllerKind::Ours,
            Duration::from_secs(15),
        )
        .await;
    all_passed(&verdicts, SCENARIOS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_node_runs_delays_pending_pods_and_a_charts_pods_with_the_clusters_controller() {
    let cluster = Cluster::start("fake-node-upstream").await;
    let mut controller = cluster_controller(&cluster.kubeconfig);
    let verdicts = cluster
        .run(
            "pod-lifecycle.feature",
            ControllerKind::Upstream,
            Duration::from_secs(5),
        )
        .await;
    controller.kill().await.unwrap();
    all_passed(&verdicts, SCENARIOS);
}
