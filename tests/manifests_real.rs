//! Manifests on a cluster that names its pods as a real one does
//! (`hpa-harness sim --generated-pod-names` as a process, through the
//! kubeconfig backend, treated as a real cluster): a chart's Deployment
//! `web` gets pods `web-<hash>-<5>`, and `And the pods report: | web-0 |`
//! names them by the step names, as for `Given a deployment ... with pods:`.
#![allow(clippy::unwrap_used)] // reason: test code; a panic is the failure report

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use hpa_harness::gherkin::remote::RemoteOptions;
use hpa_harness::gherkin::target::ControllerKind;
use hpa_harness::gherkin::{BackendKind, RunOptions, Verdict, runner};

mod support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charts_pods_are_named_by_their_step_names_on_a_cluster_that_names_its_own() {
    let scratch = support::temp_dir("manifests-real");
    let kubeconfig = scratch.path().join("kubeconfig");
    let kubeconfig_arg = kubeconfig.display().to_string();
    let (mut metrics, metrics_url) = support::spawn(
        &["metrics-server", "--http", "--listen", "127.0.0.1:0"],
        "listening:",
        Stdio::null(),
    )
    .await;
    let (mut sim, _) = support::spawn(
        &[
            "sim",
            "--generated-pod-names",
            "--listen",
            "127.0.0.1:0",
            "--kubeconfig",
            &kubeconfig_arg,
            "--metrics-url",
            &metrics_url,
        ],
        "kubeconfig:",
        Stdio::null(),
    )
    .await;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let summary = tokio::time::timeout(
        Duration::from_secs(300),
        runner::run(&RunOptions {
            paths: vec![root.join("tests/real/chart.feature")],
            backend: BackendKind::Kubeconfig,
            remote: RemoteOptions {
                kubeconfig: Some(kubeconfig.clone()),
                metrics_url: Some(metrics_url.clone()),
                controller: ControllerKind::Ours,
                upstream_sync_period: Duration::from_secs(15),
                assume_real: true,
                skip_preflight: true,
                ..RemoteOptions::default()
            },
            ..RunOptions::default()
        }),
    )
    .await
    .unwrap()
    .unwrap();
    sim.kill().await.unwrap();
    metrics.kill().await.unwrap();
    let verdicts: Vec<(&str, &Verdict)> = summary
        .scenarios
        .iter()
        .map(|s| (s.scenario.as_str(), &s.verdict))
        .collect();
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert_eq!(*verdicts[0].1, Verdict::Passed, "{verdicts:?}");
}
