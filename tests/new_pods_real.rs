//! Workload-wide metric values on a cluster whose controllers act between
//! steps: `hpa-harness sim --generated-pod-names` as a process, through the
//! kubeconfig backend, treated as a real cluster, with our controller
//! binary as the cluster's own HPA controller (`--controller upstream`:
//! the harness neither starts nor syncs it). "The new pods of W report"
//! becomes a fake-metrics-server rule, so the pods a scale-up creates have
//! their values at the controller's next sync.
#![allow(clippy::unwrap_used)] // reason: test code; a panic is the failure report

use std::path::PathBuf;
use std::time::Duration;

use hpa_harness::gherkin::target::ControllerKind;
use hpa_harness::gherkin::{BackendKind, RunOptions, Verdict, runner};
use hpa_harness::testbed::TestbedOptions;

mod support;

/// Our controller binary as the cluster's own, syncing every second.
fn cluster_controller(kubeconfig: &std::path::Path) -> tokio::process::Child {
    support::harness_controller(kubeconfig)
        .sync_period("1s")
        .without_leader_election()
        .args(["--upstream-requests"])
        .spawn()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scale_ups_new_pods_report_at_the_clusters_next_sync() {
    run_alone("scale-up.feature", "new-pods-real").await;
}

/// Issue 47: a pod table said after "the new pods of ... report", naming
/// some of those pods with sample times, wins for them at every later sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_pod_table_wins_over_the_new_pods_rule() {
    run_alone("later-table.feature", "later-table-real").await;
}

/// Runs `tests/real/FEATURE` (one scenario) on a simulated cluster treated
/// as a real one, with our controller binary as the cluster's own; it passes.
async fn run_alone(feature: &str, scratch: &str) {
    let scratch = support::temp_dir(scratch);
    let (mut sim, kubeconfig, metrics_url) = support::spawn_generated_sim(scratch.path()).await;
    let mut controller = cluster_controller(&kubeconfig);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let summary = tokio::time::timeout(
        Duration::from_secs(120),
        runner::run(&RunOptions {
            paths: vec![root.join("tests/real").join(feature)],
            backend: BackendKind::Kubeconfig,
            testbed: TestbedOptions {
                kubeconfig: Some(kubeconfig.clone()),
                metrics_url: Some(metrics_url),
                controller: ControllerKind::Upstream,
                // The harness's steps come this often; the controller
                // syncs every second between them.
                upstream_sync_period: Duration::from_secs(5),
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
    controller.kill().await.unwrap();
    sim.kill().await.unwrap();
    let verdicts: Vec<(&str, &Verdict)> = summary
        .scenarios
        .iter()
        .map(|s| (s.scenario.as_str(), &s.verdict))
        .collect();
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert_eq!(*verdicts[0].1, Verdict::Passed, "{verdicts:?}");
}
