//! The features on a cluster reached through a kubeconfig (feature `e2e`).
//!
//! Here, without Docker: `hpa-harness sim` as one process and the fake
//! metrics server (`hpa-harness metrics-server`) as another, both on a
//! virtual clock the scenarios move through their control APIs, run every
//! feature as `--backend kubeconfig` does; and on the wall clock, with our
//! controller binary standing in for the cluster's own, the seed feature
//! checks the `--controller upstream` path (the harness only waits and
//! looks).
//!
//! On real clusters (CI with Docker, `.github/workflows/e2e.yml`): the
//! ignored tests create a kind or k3d cluster, run the features there and
//! delete it.
#![cfg(feature = "e2e")]
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hpa_harness::gherkin::target::ControllerKind;
use hpa_harness::gherkin::{BackendKind, RunOptions, Verdict, runner};
use hpa_harness::testbed::TestbedOptions;
use tokio::process::{Child, Command};

mod support;
use support::{BIN, Sim, harness_controller, spawn_metrics_server, temp_dir};

const START: &str = "2026-01-01T00:00:00Z";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fake metrics server and the simulated cluster as two processes;
/// `virtual_clock` puts both on a virtual clock starting at [`START`].
struct Servers {
    _metrics: Child,
    _sim: Child,
    metrics_url: String,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl Servers {
    async fn start(name: &str, virtual_clock: bool) -> Self {
        Self::start_with(name, virtual_clock, &[]).await
    }

    /// [`Servers::start`] with more flags for `hpa-harness sim`.
    async fn start_with(name: &str, virtual_clock: bool, sim_flags: &[&str]) -> Self {
        let dir = temp_dir(name);
        let clock: &[&str] = if virtual_clock {
            &["--virtual-clock", START]
        } else {
            &[]
        };
        let (metrics, metrics_url) = spawn_metrics_server(clock, Stdio::inherit()).await;
        let (sim, kubeconfig, _) = Sim::new(dir.path())
            .metrics_url(&metrics_url)
            .args(clock)
            .args(sim_flags)
            .stderr(Stdio::inherit())
            .spawn()
            .await;
        Self {
            _metrics: metrics,
            _sim: sim,
            metrics_url,
            kubeconfig,
            _dir: dir,
        }
    }

    fn remote(&self, controller: ControllerKind, sync_period: Duration) -> TestbedOptions {
        TestbedOptions {
            kubeconfig: Some(self.kubeconfig.clone()),
            metrics_url: Some(self.metrics_url.clone()),
            controller,
            upstream_sync_period: sync_period,
            ..TestbedOptions::default()
        }
    }
}

/// Scenarios in the feature files under `dir`, each example row of an
/// outline counting as one (as cucumber runs them).
fn count_scenarios(dir: &Path) -> usize {
    use cucumber::gherkin::{Feature, GherkinEnv};
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            n += count_scenarios(&path);
        } else if path.extension().is_some_and(|e| e == "feature") {
            let feature = Feature::parse_path(&path, GherkinEnv::default()).unwrap();
            let scenarios = feature.scenarios.iter().map(|s| (s, &[][..])).chain(
                feature
                    .rules
                    .iter()
                    .flat_map(|r| r.scenarios.iter().map(|s| (s, &r.tags[..]))),
            );
            let known_bug =
                |tags: &[String]| tags.iter().any(|t| t == "known-bug" || t == "@known-bug");
            for (scenario, rule_tags) in scenarios {
                // Left out of the run (exclude_known_bugs), so not counted.
                if known_bug(&feature.tags) || known_bug(&scenario.tags) {
                    continue;
                }
                // Once per release it runs under in a run of the sim's
                // release (a scenario pinned to 1.35 and 1.36 runs twice).
                let tags = feature.tags.iter().chain(rule_tags).chain(&scenario.tags);
                let releases = hpa_harness::gherkin::versions::of_scenario(
                    tags.map(String::as_str),
                    &[hpa_core::KubernetesVersion::LATEST_STABLE],
                )
                .unwrap()
                .len();
                n += releases
                    * if scenario.examples.is_empty() {
                        1
                    } else {
                        scenario
                            .examples
                            .iter()
                            .map(|e| {
                                e.table
                                    .as_ref()
                                    .map_or(0, |t| t.rows.len().saturating_sub(1))
                            })
                            .sum()
                    };
            }
        }
    }
    n
}

/// Every scenario of `features/` ran (none skipped by a filter or lost)
/// and passed; `how` completes the failure's "scenarios not passing".
fn every_feature_passed(summary: &hpa_harness::gherkin::outcome::RunSummary, how: &str) {
    let failed: Vec<String> = summary
        .scenarios
        .iter()
        .filter(|s| s.verdict != Verdict::Passed)
        .map(|s| format!("{} ({}): {:?}", s.scenario, s.location, s.verdict))
        .collect();
    assert!(
        failed.is_empty(),
        "scenarios not passing{how}:\n{}",
        failed.join("\n")
    );
    assert!(!summary.failed(), "{summary:?}");
    assert_eq!(
        summary.scenarios.len(),
        count_scenarios(&root().join("features"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_feature_passes_against_a_sim_process_and_a_metrics_server_process() {
    let servers = Servers::start("features", true).await;
    let summary = runner::run(&RunOptions {
        paths: vec![root().join("features")],
        backend: BackendKind::Kubeconfig,
        exclude_known_bugs: true,
        testbed: servers.remote(ControllerKind::Ours, Duration::from_secs(15)),
        ..RunOptions::default()
    })
    .await
    .unwrap();
    every_feature_passed(&summary, "");
}

/// The library through the controller users deploy: each scenario starts
/// the `hpa-controller` binary as a process of its own, at its defaults
/// (caches, client budget, leader election) with the scenario's flags, and
/// syncs it on demand on the scenario's clock, against `hpa-harness sim`
/// naming its pods as kube-controller-manager does. Without a pod creation
/// delay: on the sim's virtual clock a delayed pod appears only when a step
/// moves the clock, so a scenario's first sync would find none; pods that
/// come late on the wall clock are `tests/fake_node_real.rs`'s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_feature_passes_through_the_hpa_controller_binary_as_a_process() {
    let binary = support::controller_binary();
    let servers = Servers::start_with("binary", true, &["--generated-pod-names"]).await;
    let summary = runner::run(&RunOptions {
        paths: vec![root().join("features")],
        backend: BackendKind::Kubeconfig,
        exclude_known_bugs: true,
        testbed: TestbedOptions {
            controller_binary: Some(binary),
            ..servers.remote(ControllerKind::Ours, Duration::from_secs(15))
        },
        ..RunOptions::default()
    })
    .await
    .unwrap();
    every_feature_passed(&summary, " through the binary");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_path_waits_for_a_controller_it_does_not_drive() {
    let servers = Servers::start("upstream", false).await;
    // Our controller binary plays the cluster's own HPA controller: the
    // harness neither starts nor syncs it, only waits for its syncs.
    let mut controller = stand_in_controller(&servers);
    let summary = runner::run(&RunOptions {
        paths: vec![root().join("tests/e2e/upstream.feature")],
        backend: BackendKind::Kubeconfig,
        testbed: servers.remote(ControllerKind::Upstream, Duration::from_secs(1)),
        ..RunOptions::default()
    })
    .await
    .unwrap();
    assert_eq!(summary.scenarios.len(), 1, "{summary:?}");
    assert_eq!(summary.scenarios[0].verdict, Verdict::Passed, "{summary:?}");
    controller.kill().await.unwrap();
}

/// Our controller binary, started as the cluster's own would be: the
/// harness does not drive it.
fn stand_in_controller(servers: &Servers) -> Child {
    harness_controller(&servers.kubeconfig)
        .sync_period("1s")
        .without_leader_election()
        // A stand-in for upstream's controller makes upstream's requests.
        .args(["--upstream-requests"])
        .spawn()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_prints_upstream_and_ours_side_by_side() {
    let servers = Servers::start("conformance", false).await;
    let _controller = stand_in_controller(&servers);
    let kubeconfig = servers.kubeconfig.display().to_string();
    let feature = root().join("tests/e2e/upstream.feature");
    let out = Command::new(BIN)
        .args(["conformance", "--kubeconfig", &kubeconfig, "--metrics-url"])
        .arg(&servers.metrics_url)
        .args(["--upstream-sync-period", "1s", "--fail-on-difference"])
        .arg(&feature)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("Two pods at 50 and 100"))
        .unwrap_or_else(|| panic!("no row for the scenario:\n{stdout}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(cells[1..], ["pass", "pass"], "{stdout}");
    assert!(
        stdout.contains(
            "1 scenarios; upstream: 1 pass, 0 fail, 0 n/a; ours: 1 pass, 0 fail, 0 n/a; 0 differ"
        ),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_cluster_path_runs_the_seed_scenario_on_a_fake_node() {
    // The sim on its wall clock, treated as a real cluster: no admin API,
    // cleanup by label, pods on the harness's fake node whose kubelet loop
    // writes their status, Then steps that wait.
    let servers = Servers::start("real-path", false).await;
    let mut remote = servers.remote(ControllerKind::Ours, Duration::from_secs(15));
    remote.assume_real = true;
    remote.skip_preflight = true;
    let summary = runner::run(&RunOptions {
        paths: vec![
            root().join("features/seed.feature"),
            root().join("features/scaling/target_faults.feature"),
        ],
        backend: BackendKind::Kubeconfig,
        testbed: remote.clone(),
        ..RunOptions::default()
    })
    .await
    .unwrap();
    let verdicts: Vec<(&str, &Verdict)> = summary
        .scenarios
        .iter()
        .map(|s| (s.scenario.as_str(), &s.verdict))
        .collect();
    let seed = verdicts
        .iter()
        .find(|(name, _)| name.starts_with("Two pods at 50 and 100"))
        .unwrap();
    assert_eq!(*seed.1, Verdict::Passed, "{verdicts:?}");
    // Fault injection needs the simulated API server: unsupported, not failed.
    let faults: Vec<_> = summary
        .scenarios
        .iter()
        .filter(|s| s.location.contains("target_faults.feature"))
        .map(|s| (s.scenario.as_str(), &s.verdict))
        .collect();
    assert!(!faults.is_empty());
    assert!(
        faults
            .iter()
            .all(|(_, v)| matches!(v, Verdict::Unsupported(_))),
        "{verdicts:?}"
    );
    // A second run finds the first one's objects and removes them first.
    let again = runner::run(&RunOptions {
        paths: vec![root().join("features/seed.feature")],
        backend: BackendKind::Kubeconfig,
        testbed: remote,
        ..RunOptions::default()
    })
    .await
    .unwrap();
    let seed = again
        .scenarios
        .iter()
        .find(|s| s.scenario.starts_with("Two pods at 50 and 100"))
        .unwrap();
    assert_eq!(seed.verdict, Verdict::Passed, "{again:?}");
    // The scenario pinned to another release than the cluster's own is
    // not runnable there, and says why.
    let pinned = again
        .scenarios
        .iter()
        .find(|s| s.scenario.starts_with("Under Kubernetes 1.36"))
        .unwrap();
    assert!(
        matches!(&pinned.verdict, Verdict::Unsupported(why) if why.contains("this cluster runs 1.37")),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_on_a_real_cluster_are_isolated_by_namespace_and_event_ownership() {
    let servers = Servers::start("isolation", false).await;
    let mut remote = servers.remote(ControllerKind::Ours, Duration::from_secs(15));
    remote.assume_real = true;
    remote.skip_preflight = true;
    let summary = runner::run(&RunOptions {
        paths: vec![root().join("tests/e2e/isolation.feature")],
        backend: BackendKind::Kubeconfig,
        testbed: remote,
        ..RunOptions::default()
    })
    .await
    .unwrap();
    let verdicts: Vec<(&str, &Verdict)> = summary
        .scenarios
        .iter()
        .map(|s| (s.scenario.as_str(), &s.verdict))
        .collect();
    assert_eq!(verdicts.len(), 3, "{verdicts:?}");
    assert!(
        verdicts.iter().all(|(_, v)| **v == Verdict::Passed),
        "{verdicts:?}"
    );
    // The namespaces made for scenarios are gone with them.
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&servers.kubeconfig).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    let left: Vec<String> = namespaces
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .filter(|n| n.starts_with("hpa-scenario-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A client of the servers' simulated cluster.
async fn client_of(servers: &Servers) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&servers.kubeconfig).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// The namespaces whose name starts with `prefix`.
async fn namespaces_named(client: &kube::Client, prefix: &str) -> Vec<String> {
    let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client.clone());
    api.list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .filter(|n| n.starts_with(prefix))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_on_a_real_cluster_run_side_by_side_each_in_its_own_namespace() {
    // The sim on its wall clock, treated as a real cluster: six scenarios
    // rescale a deployment of the same name to six different counts.
    let servers = Servers::start("concurrent", false).await;
    let mut remote = servers.remote(ControllerKind::Ours, Duration::from_secs(15));
    remote.assume_real = true;
    remote.skip_preflight = true;
    let client = client_of(&servers).await;
    let mut took = Vec::new();
    for concurrency in [1, 4] {
        // The most scenario namespaces seen at once while the run goes on.
        let most = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let watching = tokio::spawn({
            let (client, most) = (client.clone(), most.clone());
            async move {
                loop {
                    let now = namespaces_named(&client, "hpa-scenario-").await.len();
                    most.fetch_max(now, std::sync::atomic::Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        });
        let started = std::time::Instant::now();
        let summary = runner::run(&RunOptions {
            paths: vec![root().join("tests/e2e/concurrent.feature")],
            backend: BackendKind::Kubeconfig,
            testbed: remote.clone(),
            concurrency,
            ..RunOptions::default()
        })
        .await
        .unwrap();
        took.push((concurrency, started.elapsed()));
        let verdicts: Vec<(&str, &Verdict)> = summary
            .scenarios
            .iter()
            .map(|s| (s.scenario.as_str(), &s.verdict))
            .collect();
        assert_eq!(verdicts.len(), 6, "{verdicts:?}");
        assert!(
            verdicts.iter().all(|(_, v)| **v == Verdict::Passed),
            "at concurrency {concurrency}: {verdicts:?}"
        );
        watching.abort();
        if concurrency > 1 {
            let most = most.load(std::sync::atomic::Ordering::Relaxed);
            assert!(
                most >= 2,
                "scenarios ran one at a time ({most} namespace at most)"
            );
        }
    }
    // Wall time, for the record (the test asserts no timing).
    eprintln!("wall time of six scenarios by concurrency: {took:?}");
    let left = namespaces_named(&client, "hpa-scenario-").await;
    assert!(left.is_empty(), "{left:?}");
}

/// A scenario that makes a metrics API fail runs alone, and its fault goes
/// with it: the scenarios of another file, run after it in the same run
/// with concurrency on, read that API again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metrics_api_fault_ends_with_its_scenario_across_feature_files() {
    let servers = Servers::start("fault-leak", false).await;
    let mut remote = servers.remote(ControllerKind::Ours, Duration::from_secs(15));
    remote.assume_real = true;
    remote.skip_preflight = true;
    let dir = root().join("tests/e2e/fault_leak");
    let summary = runner::run(&RunOptions {
        paths: vec![
            dir.join("1_custom_metrics_down.feature"),
            dir.join("2_after_it.feature"),
        ],
        backend: BackendKind::Kubeconfig,
        testbed: remote,
        concurrency: 8,
        ..RunOptions::default()
    })
    .await
    .unwrap();
    let verdicts: Vec<(&str, &Verdict)> = summary
        .scenarios
        .iter()
        .map(|s| (s.scenario.as_str(), &s.verdict))
        .collect();
    assert_eq!(verdicts.len(), 3, "{verdicts:?}");
    assert!(
        verdicts.iter().all(|(_, v)| **v == Verdict::Passed),
        "{verdicts:?}"
    );
    // And nothing is left failing for the next run.
    let faults = fake_metrics_server::client::ControlClient::new(&servers.metrics_url)
        .unwrap()
        .faults()
        .await
        .unwrap();
    assert_eq!(faults, Default::default(), "{faults:?}");
}

/// `hpa-harness test` on the servers' cluster treated as real, as a process.
fn test_process(servers: &Servers, feature: &str) -> Child {
    let kubeconfig = servers.kubeconfig.display().to_string();
    Command::new(BIN)
        .args([
            "test",
            "--backend",
            "kubeconfig",
            "--assume-real",
            "--skip-preflight",
        ])
        .args([
            "--kubeconfig",
            &kubeconfig,
            "--metrics-url",
            &servers.metrics_url,
        ])
        .arg(root().join(feature))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_by_sigterm_deletes_its_scenario_namespaces() {
    let servers = Servers::start("sigterm", false).await;
    let client = client_of(&servers).await;
    let run = test_process(&servers, "tests/e2e/concurrent.feature");
    // Mid-run: once scenarios have made their namespaces.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while namespaces_named(&client, "hpa-scenario-").await.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no scenario started"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pid = run.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = tokio::time::timeout(Duration::from_secs(90), run.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(
        stderr.contains("deleting the run's namespaces: hpa-scenario-"),
        "{stderr}"
    );
    let left = namespaces_named(&client, "hpa-scenario-").await;
    assert!(left.is_empty(), "{left:?}\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_removes_what_earlier_runs_left_by_their_labels() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Api, PostParams};
    let servers = Servers::start("cleanup", false).await;
    let client = client_of(&servers).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for (name, label) in [
        ("hpa-scenario-left", "hpa-harness.io/scenario"),
        ("hpa-load-left", "hpa-harness.io/load"),
        ("keep-me", "someone-else"),
    ] {
        let ns = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {label: "true"}}
        }))
        .unwrap();
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
    }
    let deployment = |name: &str, labelled: bool| -> Deployment {
        let mut d = serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "app", "image": "app"}]}
                }
            }
        });
        if labelled {
            d["metadata"]["labels"] = serde_json::json!({"hpa-harness.io/scenario": "true"});
        }
        serde_json::from_value(d).unwrap()
    };
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    for (name, labelled) in [("web", true), ("theirs", false)] {
        deployments
            .create(&PostParams::default(), &deployment(name, labelled))
            .await
            .unwrap();
    }
    let kubeconfig = servers.kubeconfig.display().to_string();
    let cleanup = || {
        Command::new(BIN)
            .args(["cleanup", "--kubeconfig", &kubeconfig, "--timeout", "60s"])
            .output()
    };
    let out = cleanup().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("deleting "))
        .collect();
    assert_eq!(
        listed,
        [
            "deleting namespace hpa-load-left",
            "deleting namespace hpa-scenario-left",
            "deleting Deployment default/web",
        ],
        "{stdout}"
    );
    assert!(stdout.contains("removed 3 (all gone)"), "{stdout}");
    let names = namespaces_named(&client, "").await;
    assert!(names.contains(&"keep-me".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("-left")), "{names:?}");
    assert!(deployments.get_opt("web").await.unwrap().is_none());
    assert!(deployments.get_opt("theirs").await.unwrap().is_some());
    let again = cleanup().await.unwrap();
    assert!(
        String::from_utf8_lossy(&again.stdout).starts_with("nothing to clean up"),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_mode_refuses_a_virtual_clock_nobody_else_moves() {
    let servers = Servers::start("upstream-virtual", true).await;
    let err = runner::run(&RunOptions {
        paths: vec![root().join("features/seed.feature")],
        backend: BackendKind::Kubeconfig,
        testbed: servers.remote(ControllerKind::Upstream, Duration::from_secs(1)),
        ..RunOptions::default()
    })
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("--controller upstream needs a controller that syncs on its own"),
        "{err}"
    );
}

#[tokio::test]
async fn the_kubeconfig_backend_names_a_missing_metrics_url() {
    let err = runner::run(&RunOptions {
        paths: vec![root().join("features/seed.feature")],
        backend: BackendKind::Kubeconfig,
        ..RunOptions::default()
    })
    .await
    .unwrap_err();
    assert!(err.to_string().contains("--metrics-url is needed"), "{err}");
}

/// Runs `paths` on a cluster made for the run and deleted after it; every
/// scenario must pass or say it cannot run there (fault injection needs the
/// simulated API server).
async fn on_new_cluster(backend: BackendKind, controller: ControllerKind, paths: &[&str]) {
    let summary = runner::run(&RunOptions {
        paths: paths.iter().map(|p| root().join(p)).collect(),
        backend,
        testbed: TestbedOptions {
            controller,
            upstream_sync_period: Duration::from_secs(5),
            ..TestbedOptions::default()
        },
        ..RunOptions::default()
    })
    .await
    .unwrap();
    let failed: Vec<String> = summary
        .scenarios
        .iter()
        .filter(|s| matches!(s.verdict, Verdict::Failed(_)))
        .map(|s| format!("{} ({}): {:?}", s.scenario, s.location, s.verdict))
        .collect();
    assert!(failed.is_empty(), "failed:\n{}", failed.join("\n"));
    assert!(
        summary
            .scenarios
            .iter()
            .any(|s| s.verdict == Verdict::Passed),
        "{summary:?}"
    );
}

const REAL_CLUSTER_FEATURES: [&str; 4] = [
    "features/workloads/real_node.feature",
    "features/seed.feature",
    "features/metrics/pods.feature",
    "features/metrics/external.feature",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Docker and kind (.github/workflows/e2e.yml runs it)"]
async fn features_pass_on_a_kind_cluster_with_our_controller() {
    on_new_cluster(
        BackendKind::Kind,
        ControllerKind::Ours,
        &REAL_CLUSTER_FEATURES,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Docker and kind (.github/workflows/e2e.yml runs it)"]
async fn the_upstream_scenario_passes_on_a_kind_cluster_with_upstreams_controller() {
    on_new_cluster(
        BackendKind::Kind,
        ControllerKind::Upstream,
        &["tests/e2e/upstream.feature"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Docker and k3d"]
async fn features_pass_on_a_k3d_cluster_with_our_controller() {
    on_new_cluster(
        BackendKind::K3d,
        ControllerKind::Ours,
        &REAL_CLUSTER_FEATURES,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Docker engine (k3s in testcontainers)"]
async fn features_pass_on_k3s_in_a_container_with_our_controller() {
    on_new_cluster(
        BackendKind::K3s,
        ControllerKind::Ours,
        &REAL_CLUSTER_FEATURES,
    )
    .await;
}
