//! The control-plane backend on genuine Kubernetes binaries (feature `e2e`):
//! etcd, kube-apiserver and kube-controller-manager from the folder of
//! `$KUBEBUILDER_ASSETS` (CI unpacks `../shared/k8s` there), started by
//! `hpa-harness` itself.
//!
//! Without the binaries these tests say so and pass, unless
//! `HPA_HARNESS_REQUIRE_CONTROL_PLANE=1` (CI sets it where it unpacked
//! them) makes a missing folder a failure.
#![cfg(feature = "e2e")]
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

mod support;
use support::{BIN, controller_binary, temp_dir, wait_for_announcement};

/// The binaries' folder, or `None` (and a note) when this machine has none.
fn binaries() -> Option<PathBuf> {
    let dir = std::env::var_os("KUBEBUILDER_ASSETS")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let required = std::env::var("HPA_HARNESS_REQUIRE_CONTROL_PLANE").is_ok_and(|v| v == "1");
    match dir {
        Some(dir) if dir.join("kube-apiserver").exists() => Some(dir),
        other => {
            let why = match other {
                Some(dir) => format!("{} holds no kube-apiserver", dir.display()),
                None => "KUBEBUILDER_ASSETS is not set".to_owned(),
            };
            assert!(!required, "HPA_HARNESS_REQUIRE_CONTROL_PLANE=1 but {why}");
            eprintln!("skipped: no genuine control plane here ({why})");
            None
        }
    }
}

/// `hpa-harness ARGS` with `TMPDIR` set to `tmp` (so that what a run
/// leaves is found there), stdout and stderr captured; its exit status and
/// output.
async fn harness(args: &[&str], tmp: &Path) -> (bool, String) {
    let output = Command::new(BIN)
        .args(args)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// The processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if stat.contains(") Z ") {
            continue;
        }
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            found.push(pid);
        }
    }
    found
}

/// What a control plane left in `tmp`: its directories, and processes
/// whose command line names `tmp`.
fn leftovers(tmp: &Path) -> (Vec<String>, Vec<u32>) {
    let dirs = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hpa-harness-control-plane-"))
        .collect();
    (dirs, processes_mentioning(&tmp.display().to_string()))
}

/// Waits (at most a minute) until nothing of a control plane is left in
/// `tmp`, else fails naming what is.
async fn nothing_left(tmp: &Path, when: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (dirs, pids) = leftovers(tmp);
        if dirs.is_empty() && pids.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{when}: left behind directories {dirs:?} and processes {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_scenario_runs_with_each_controller_and_nothing_is_left() {
    let Some(bin) = binaries() else { return };
    let tmp = temp_dir("cp-each");
    let bin = bin.display().to_string();
    let controller = controller_binary().display().to_string();
    let seed = format!("{}/features/seed.feature", env!("CARGO_MANIFEST_DIR"));
    for controller_args in [
        vec!["--controller-binary", controller.as_str()],
        vec!["--controller", "upstream"],
    ] {
        let mut args = vec![
            "test",
            "--backend",
            "control-plane",
            "--control-plane-bin",
            &bin,
            &seed,
        ];
        args.extend(&controller_args);
        let (ok, out) = harness(&args, tmp.path()).await;
        assert!(ok, "{controller_args:?}:\n{out}");
        // The header names the cluster's release, which the scenarios ran
        // under: 1.36's scenario passed, the others were not for it.
        assert!(out.contains("(Kubernetes v1.36"), "{out}");
        assert!(
            out.contains("the cluster runs Kubernetes 1.36 (its /version)"),
            "{out}"
        );
        assert!(
            out.contains("=== Kubernetes 1.36 ===") && out.contains("1 scenario (1 passed)"),
            "{out}"
        );
        nothing_left(tmp.path(), &format!("after a run with {controller_args:?}")).await;
    }
}

/// On the wall clock a `Then` step waits while the controller syncs on its
/// own time: ours, driven on demand, syncs every period of the wait too. No
/// step here syncs, so ours can only meet the expectation at a sync made
/// while the step waits (a new HPA is synced at once only from 1.37 on;
/// the cluster runs 1.36).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_then_step_waits_while_our_controller_syncs_every_period() {
    let Some(bin) = binaries() else { return };
    let tmp = temp_dir("cp-wait");
    let feature = tmp.path().join("waits.feature");
    std::fs::write(
        &feature,
        "Feature: the controller acts while a step waits\n\
         \x20 Scenario: a new HPA scales its deployment with no sync step\n\
         \x20   Given a deployment \"web\" with 2 pods\n\
         \x20   And an HPA \"web\" for deployment \"web\" with min 1 and max 10 replicas\n\
         \x20   And the HPA \"web\" scales on cpu utilization 50%\n\
         \x20   And the pods of \"web\" report \"cpu\" of 900m and 700m\n\
         \x20   Then the deployment \"web\" has 4 replicas\n",
    )
    .unwrap();
    let (bin, controller) = (
        bin.display().to_string(),
        controller_binary().display().to_string(),
    );
    let feature = feature.display().to_string();
    let args = [
        "test",
        "--backend",
        "control-plane",
        "--control-plane-bin",
        &bin,
        "--controller-binary",
        &controller,
        &feature,
    ];
    let (ok, out) = harness(&args, tmp.path()).await;
    assert!(ok, "{out}");
    assert!(out.contains("1 scenario (1 passed)"), "{out}");
    nothing_left(tmp.path(), "after the run").await;
}

/// What `hpa-harness control-plane` announced (`api-server`, `kubeconfig`,
/// `metrics-server`, `release`), once it says it runs.
async fn announced(child: &mut Child) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let running = wait_for_announcement(child, Duration::from_secs(120), |line| {
        if line.starts_with("control plane running") {
            return Some(());
        }
        if let Some((key, value)) = line.split_once(": ") {
            found.insert(key.to_owned(), value.trim().to_owned());
        }
        None
    })
    .await;
    if running.is_none() {
        panic!("the control plane stopped before it ran: {found:?}");
    }
    found
}

fn start_control_plane(bin: &Path, tmp: &Path, extra: &[&str]) -> Child {
    Command::new(BIN)
        .args(["control-plane", "--control-plane-bin"])
        .arg(bin)
        .args(extra)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harness_killed_or_stopped_mid_run_leaves_nothing() {
    let Some(bin) = binaries() else { return };
    let tmp = temp_dir("cp-kill");
    for signal in ["KILL", "TERM", "INT"] {
        let mut child = start_control_plane(&bin, tmp.path(), &[]);
        let kubeconfig = announced(&mut child).await["kubeconfig"].clone();
        assert!(
            kubeconfig.starts_with(&tmp.path().display().to_string()),
            "{kubeconfig}"
        );
        let (dirs, pids) = leftovers(tmp.path());
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        // etcd, kube-apiserver, kube-controller-manager and the guard.
        assert!(pids.len() >= 4, "{pids:?}");
        let pid = child.id().unwrap().to_string();
        let status = std::process::Command::new("kill")
            .args([format!("-{signal}"), pid])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = tokio::time::timeout(Duration::from_secs(60), child.wait())
            .await
            .unwrap()
            .unwrap();
        if signal != "KILL" {
            assert!(exit.success(), "SIG{signal}: {exit}");
        }
        nothing_left(tmp.path(), &format!("after SIG{signal}")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_beside_the_first_shares_nothing() {
    let Some(bin) = binaries() else { return };
    let tmp = temp_dir("cp-two");
    let mut first = start_control_plane(&bin, tmp.path(), &["--controller", "none"]);
    let mut second = start_control_plane(&bin, tmp.path(), &["--controller", "none"]);
    let a = announced(&mut first).await;
    let b = announced(&mut second).await;
    assert_ne!(a["api-server"], b["api-server"]);
    assert_ne!(a["metrics-server"], b["metrics-server"]);
    assert_eq!(a["release"], "1.36");
    let (dirs, _) = leftovers(tmp.path());
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    drop(first);
    drop(second);
    nothing_left(tmp.path(), "after two runs side by side").await;
}

/// A scenario that needs no pods: the run gets past its preflight and
/// does something on the cluster.
const NO_PODS: &str = "Feature: preflight
  Scenario: an HPA whose target does not exist cannot get its scale
    Given an HPA \"web\" for deployment \"nowhere\" with min 1 and max 3 replicas
    And the HPA \"web\" scales on cpu utilization 50%
    When the HPA controller syncs
    Then the HPA \"web\" has condition \"AbleToScale\" \"False\" with reason \"FailedGetScale\"
";

/// Points the four metrics APIServices at `kube-system/metrics-server`, an
/// ExternalName Service to the same server on loopback, as a user who
/// runs `hpa-harness metrics-server` in metrics-server's place does.
async fn serve_metrics_as_metrics_server(kubeconfig: &Path) {
    use k8s_openapi::api::core::v1::Service;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    use kube::api::{Api, Patch, PatchParams};
    let client = hpa_harness::testbed::kubeconfig::client(Some(kubeconfig), None)
        .await
        .unwrap();
    let apis: Api<APIService> = Api::all(client.clone());
    let port = apis
        .get("v1beta1.metrics.k8s.io")
        .await
        .unwrap()
        .spec
        .unwrap()
        .service
        .unwrap()
        .port
        .unwrap();
    let pp = PatchParams::apply("a-user").force();
    let service: Service = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "metrics-server", "namespace": "kube-system"},
        "spec": {"type": "ExternalName", "externalName": "localhost",
            "ports": [{"name": "https", "port": port}]},
    }))
    .unwrap();
    Api::<Service>::namespaced(client.clone(), "kube-system")
        .patch("metrics-server", &pp, &Patch::Apply(&service))
        .await
        .unwrap();
    for name in hpa_harness::testbed::cluster::preflight::METRICS_API_SERVICES {
        let patch = serde_json::json!({"spec": {"service": {
            "namespace": "kube-system", "name": "metrics-server", "port": port}}});
        apis.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }
    // The aggregator reaches the server through the new Service.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let request = http::Request::get("/apis/metrics.k8s.io/v1beta1")
            .body(Vec::new())
            .unwrap();
        if client.request_text(request).await.is_ok() {
            let found = apis.get("v1beta1.metrics.k8s.io").await.unwrap();
            let available = found.status.and_then(|s| s.conditions).is_some_and(|c| {
                c.iter()
                    .any(|c| c.type_ == "Available" && c.status == "True")
            });
            if available {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the aggregator never reached kube-system/metrics-server"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflight_knows_the_metrics_server_by_its_answer_not_by_a_service_name() {
    let Some(bin) = binaries() else { return };
    let tmp = temp_dir("cp-preflight");
    let mut plane = start_control_plane(&bin, tmp.path(), &["--controller", "none"]);
    let found = announced(&mut plane).await;
    let kubeconfig = PathBuf::from(&found["kubeconfig"]);
    serve_metrics_as_metrics_server(&kubeconfig).await;
    let feature = tmp.path().join("no-pods.feature");
    std::fs::write(&feature, NO_PODS).unwrap();
    let run = |url: String| {
        let kubeconfig = kubeconfig.clone();
        let feature = feature.clone();
        let tmp = tmp.path().to_path_buf();
        async move {
            harness(
                &[
                    "test",
                    "--backend",
                    "kubeconfig",
                    "--kubeconfig",
                    &kubeconfig.display().to_string(),
                    "--metrics-url",
                    &url,
                    &feature.display().to_string(),
                ],
                &tmp,
            )
            .await
        }
    };
    // The server behind kube-system/metrics-server is the one at
    // --metrics-url: the run goes on (it was refused, "served by
    // kube-system/metrics-server, not by fake-metrics-server").
    let (ok, out) = run(found["metrics-server"].clone()).await;
    assert!(ok, "{out}");
    assert!(!out.contains("not ready for hpa-harness"), "{out}");
    assert!(out.contains("1 scenario (1 passed)"), "{out}");
    // Another fake metrics server at --metrics-url: refused, naming why,
    // and no APIService is to be deleted.
    let (mut other, url) = support::spawn(
        &["metrics-server", "--listen", "127.0.0.1:0"],
        "listening:",
        Stdio::null(),
    )
    .await;
    let (ok, out) = run(url.clone()).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            "is not the fake metrics server at --metrics-url (another one answered, instance"
        ),
        "{out}"
    );
    assert!(!out.contains("kubectl delete apiservice"), "{out}");
    let _ = other.kill().await;
}

/// The feature library on two genuine control planes side by side: with
/// kube-controller-manager's HPA controller, and with ours as the shipped
/// `hpa-controller` binary (its defaults, one process per scenario). Every
/// scenario runs or is listed in docs/steps.md with why it does not (and a
/// listed one that runs fails the test too), every scenario ours runs
/// passes, and no scenario passes with one controller and fails with the
/// other.
///
/// Named to sort first: the test harness starts tests in the order of
/// their names, two at a time on two cores, and this one lasts longest (as
/// long as the longest scenario's waits), so it must not wait for others.
///
/// On a runtime with two workers, as the `hpa-harness` binary runs: the two
/// fake metrics servers, the fake nodes and 32 scenarios share it, and on
/// one thread a busy stretch of steps delays the metrics servers' answers
/// to the API servers and the fake nodes' pod updates, which the
/// wall-clock scenarios then see as a controller acting late.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feature_library_run_on_the_genuine_control_plane_agrees_with_kube_controller_manager() {
    use hpa_harness::gherkin::{
        BackendKind, RunOptions, Verdict, conformance, not_runnable, runner,
    };
    use hpa_harness::testbed::{ControllerKind, TestbedOptions};
    let Some(bin) = binaries() else { return };
    let root = env!("CARGO_MANIFEST_DIR");
    let testbed = TestbedOptions {
        control_plane_bin: Some(bin),
        ..TestbedOptions::default()
    };
    let run = |controller: ControllerKind| RunOptions {
        paths: vec![PathBuf::from(root).join("features")],
        backend: BackendKind::ControlPlane,
        // On the wall clock most of a scenario is waiting: many side by side.
        concurrency: 16,
        testbed: TestbedOptions {
            controller,
            controller_binary: (controller == ControllerKind::Ours).then(controller_binary),
            ..testbed.clone()
        },
        ..RunOptions::default()
    };
    let (ours, upstream) = (run(ControllerKind::Ours), run(ControllerKind::Upstream));
    let (ours, upstream) = tokio::join!(runner::run(&ours), runner::run(&upstream));
    let (ours, upstream) = (ours.unwrap(), upstream.unwrap());
    // cucumber catches the steps' panics with a hook of its own, which
    // would swallow this test's own failure messages: back to the default.
    drop(std::panic::take_hook());

    let failed: Vec<String> = ours
        .scenarios
        .iter()
        .filter(|o| matches!(o.verdict, Verdict::Failed(_)))
        .map(|o| format!("{} ({}): {:?}", o.scenario, o.location, o.verdict))
        .collect();
    let rows = conformance::rows(&upstream.scenarios, &ours.scenarios);
    let differ: Vec<String> = rows
        .iter()
        .filter(|r| r.disagrees())
        .map(|r| {
            format!(
                "{} ({}): upstream {:?}, ours {:?}",
                r.scenario, r.location, r.upstream, r.ours
            )
        })
        .collect();
    let found = not_runnable::of_runs(root, &ours.scenarios, &upstream.scenarios)
        .unwrap_or_else(|unknown| panic!("reasons no category covers:\n{}", unknown.join("\n")));
    let doc = std::fs::read_to_string(PathBuf::from(root).join("docs/steps.md")).unwrap();
    let listed = not_runnable::parse(&doc).unwrap();
    let ran = ours.scenarios.len() + upstream.scenarios.len();
    let counts = not_runnable::counts(&found);
    println!(
        "\n{ran} scenario runs; ours: {} passed, {} failed; not runnable (ours, upstream): {counts:?}; {} differ",
        ours.scenarios
            .iter()
            .filter(|o| o.verdict == Verdict::Passed)
            .count(),
        failed.len(),
        differ.len()
    );
    // This run's list, for docs/steps.md when the library changes.
    let written = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("not-runnable.md");
    std::fs::write(
        &written,
        format!(
            "{}\n<!-- not-runnable:begin -->\n{}<!-- not-runnable:end -->\n",
            not_runnable::render_counts(&found),
            not_runnable::render(&found)
        ),
    )
    .unwrap();
    eprintln!("this run's list: {}", written.display());
    let count_table = not_runnable::render_counts(&found);
    assert!(
        doc.contains(&count_table),
        "docs/steps.md's counts are not this run's; this run's:\n{count_table}"
    );
    assert!(
        listed == found,
        "docs/steps.md's list of scenarios that do not run on a real cluster is not this run's; this run's:\n{}",
        not_runnable::render(&found)
    );
    // The whole error of each failure (the cluster report with the HPA's
    // status, events and pods), printed last so a log's tail shows it.
    for o in ours.scenarios.iter().chain(&upstream.scenarios) {
        if let (Verdict::Failed(_), Some(failure)) = (&o.verdict, &o.failure) {
            eprintln!("\n--- {} ({}):\n{failure}", o.scenario, o.location);
        }
    }
    assert!(
        failed.is_empty(),
        "scenarios failed with ours:\n{}",
        failed.join("\n")
    );
    assert!(
        differ.is_empty(),
        "upstream's controller and ours differ:\n{}",
        differ.join("\n")
    );
}

/// `explain` on the genuine control plane, with objects made as kubectl
/// makes them: two pods that turned Ready a moment ago, whose 30 s cpu
/// samples began before that, are named unready with the rule and when
/// they count; once that time has passed they count, and
/// kube-controller-manager scales as explain said it would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_names_young_pods_on_the_genuine_control_plane() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, ListParams, PostParams};
    let Some(bin) = binaries() else { return };
    let tmp = temp_dir("cp-explain");
    let mut plane = start_control_plane(&bin, tmp.path(), &[]);
    let found = announced(&mut plane).await;
    let kubeconfig = found["kubeconfig"].clone();
    let client = hpa_harness::testbed::kubeconfig::client(Some(Path::new(&kubeconfig)), None)
        .await
        .unwrap();
    // The fake metrics server gives every pod of app=web 150m, sampled now
    // over 30 s.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let script = "rules:\n  - name: web\n    selector: app=web\n    containers: [{name: app, cpu: 150m}]\n    window: 30s\n";
    let patched = http
        .patch(format!("{}/control/v1/script", found["metrics-server"]))
        .header("content-type", "application/yaml")
        .body(script)
        .send()
        .await
        .unwrap();
    assert!(patched.status().is_success(), "{:?}", patched.text().await);
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "200m"}}}]}}}
    }))
    .unwrap();
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let hpa: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]}
    }))
    .unwrap();
    Api::<HorizontalPodAutoscaler>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &hpa)
        .await
        .unwrap();
    // Both pods Ready (the fake node runs what the cluster schedules).
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let deadline = Instant::now() + Duration::from_secs(60);
    let ready_since = loop {
        let listed = pods
            .list(&ListParams::default().labels("app=web"))
            .await
            .unwrap();
        let since: Vec<String> = listed
            .items
            .iter()
            .filter_map(|p| {
                let c = p.status.as_ref()?.conditions.as_ref()?;
                let ready = c
                    .iter()
                    .find(|c| c.type_ == "Ready" && c.status == "True")?;
                Some(ready.last_transition_time.as_ref()?.0.to_string())
            })
            .collect();
        if since.len() == 2 {
            break since;
        }
        assert!(Instant::now() < deadline, "the pods never turned Ready");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let explain = || async {
        let (ok, out) = harness(
            &[
                "explain",
                "--kubeconfig",
                &kubeconfig,
                "default/web",
                "--output",
                "json",
            ],
            tmp.path(),
        )
        .await;
        assert!(ok, "{out}");
        let json = out
            .lines()
            .find(|l| l.starts_with('{'))
            .unwrap_or_default()
            .to_owned();
        serde_json::from_str::<serde_json::Value>(&json).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let doc = explain().await;
    let explained = doc["pods"].as_array().unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(explained.len(), 2, "{doc}");
    let young: Vec<serde_json::Value> = explained.iter().map(|p| p["pod"].clone()).collect();
    for p in explained {
        assert_eq!(p["group"], "unready", "{doc}");
        assert_eq!(p["rule"], "sampleBeforeReady", "{doc}");
        let since: jiff::Timestamp = p["readySince"].as_str().unwrap().parse().unwrap();
        assert!(ready_since.contains(&since.to_string()), "{doc}");
        let counts_from: jiff::Timestamp = p["countsFrom"].as_str().unwrap().parse().unwrap();
        assert_eq!(
            counts_from,
            since + jiff::SignedDuration::from_secs(30),
            "{doc}"
        );
    }
    // Past that time the samples count: 150m of 200m is 75% against 50%,
    // and kube-controller-manager scales the two pods to 3.
    tokio::time::sleep(Duration::from_secs(31)).await;
    // (The controller may have scaled already: its new pod is young now.)
    let doc = explain().await;
    let counted = doc["pods"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| young.contains(&p["pod"]) && p["group"] == "ready")
        .count();
    assert_eq!(counted, 2, "{doc}");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let replicas = deployments.get("web").await.unwrap().spec.replicas;
        if replicas == Some(3) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "kube-controller-manager did not scale to 3: {replicas:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    drop(plane);
    nothing_left(tmp.path(), "after explain").await;
}
