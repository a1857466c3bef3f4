//! Manifests on a cluster that names its pods as a real one does
//! (`hpa-harness sim --generated-pod-names` as a process, through the
//! kubeconfig backend, treated as a real cluster): a chart's Deployment
//! `web` gets pods `web-<hash>-<5>`, and `And the pods report: | web-0 |`
//! names them by the step names, as for `Given a deployment ... with pods:`;
//! with `--pod-creation-delay` the pods come late, as a real deployment
//! controller makes them, and the steps wait for them.
#![allow(clippy::unwrap_used)] // reason: test code; a panic is the failure report

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use hpa_harness::gherkin::target::ControllerKind;
use hpa_harness::gherkin::{BackendKind, RunOptions, Verdict, runner};
use hpa_harness::testbed::TestbedOptions;

mod support;

/// Runs `feature` (under `tests/real`) through the kubeconfig backend
/// against `hpa-harness sim --generated-pod-names SIM_ARGS`, treated as a
/// real cluster, and returns each scenario's verdict.
async fn run_on_generated_names(feature: &str, sim_args: &[&str]) -> Vec<(String, Verdict)> {
    let scratch = support::temp_dir("manifests-real");
    let (mut metrics, metrics_url) = support::spawn_metrics_server(&[], Stdio::null()).await;
    let (mut sim, kubeconfig, _) = support::Sim::new(scratch.path())
        .args(&["--generated-pod-names"])
        .args(sim_args)
        .metrics_url(&metrics_url)
        .spawn()
        .await;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let summary = tokio::time::timeout(
        Duration::from_secs(300),
        runner::run(&RunOptions {
            paths: vec![root.join("tests/real").join(feature)],
            backend: BackendKind::Kubeconfig,
            testbed: TestbedOptions {
                kubeconfig: Some(kubeconfig.clone()),
                metrics_url: Some(metrics_url.clone()),
                controller: ControllerKind::Ours,
                upstream_sync_period: Duration::from_secs(15),
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
    sim.kill().await.unwrap();
    metrics.kill().await.unwrap();
    summary
        .scenarios
        .into_iter()
        .map(|s| (s.scenario, s.verdict))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charts_pods_are_named_by_their_step_names_on_a_cluster_that_names_its_own() {
    let verdicts = run_on_generated_names("chart.feature", &[]).await;
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert_eq!(verdicts[0].1, Verdict::Passed, "{verdicts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_wait_for_a_charts_pods_that_the_cluster_creates_late() {
    let verdicts =
        run_on_generated_names("late-pods.feature", &["--pod-creation-delay", "700ms"]).await;
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert_eq!(verdicts[0].1, Verdict::Passed, "{verdicts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_the_cluster_never_makes_fails_the_step_naming_its_workload_and_counts() {
    let verdicts =
        run_on_generated_names("never-made.feature", &["--pod-creation-delay", "300ms"]).await;
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    let Verdict::Failed(message) = &verdicts[0].1 else {
        panic!("{verdicts:?}");
    };
    for part in ["deployment", "/cache", "cache-2", "3 pods", "has 2"] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
}
