//! `hpa-harness explain NAMESPACE/NAME` and `hpa-harness capture` against a
//! live cluster: `hpa-harness sim --controller --virtual-clock` run as a
//! separate process (our controller in it, the fake metrics server behind
//! the aggregated metrics APIs), reached through its kubeconfig.
//!
//! Checked: the explanation's trace is the controller's own decision at the
//! same moment (its `/debug/decisions`); a captured scenario passes with
//! `hpa-harness test`; a verb RBAC denies is refused in one line naming the
//! verb and resource; and bad input (an HPA or target that does not exist,
//! a metrics API that is down) is one line and a non-zero exit.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

mod support;
use support::{BIN, temp_dir};

/// A running `hpa-harness sim --controller --virtual-clock`.
struct Sim {
    _child: Child,
    api: String,
    metrics: String,
    kubeconfig: PathBuf,
    http: reqwest::Client,
}

async fn start_sim(dir: &Path) -> Sim {
    let kubeconfig = dir.join("kubeconfig");
    // An hour back, so that the clock moves of a test stay in the past.
    let start = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let mut child = Command::new(BIN)
        .args([
            "sim",
            "--controller",
            "--virtual-clock",
            &start,
            "--kubeconfig",
        ])
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut api, mut metrics) = (None, None);
    tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(v) = line.strip_prefix("api-server: ") {
                api = Some(v.trim().to_owned());
            } else if let Some(v) = line.strip_prefix("metrics-server: ") {
                metrics = Some(v.trim().to_owned());
            } else if line.starts_with("kubeconfig: ") {
                return;
            }
        }
    })
    .await
    .expect("the sim announces its kubeconfig within 60 s");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    // Building a ControlClient installs the rustls provider reqwest needs.
    let _ = fake_metrics_server::client::ControlClient::new("http://127.0.0.1:1").unwrap();
    Sim {
        _child: child,
        api: api.unwrap(),
        metrics: metrics.unwrap(),
        kubeconfig,
        http: reqwest::Client::new(),
    }
}

impl Sim {
    async fn send(&self, method: reqwest::Method, url: String, body: Value) {
        let r = self
            .http
            .request(method, &url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = r.status();
        assert!(status.is_success(), "{url}: {}", r.text().await.unwrap());
    }

    async fn advance(&self, by: &str) {
        self.send(
            reqwest::Method::POST,
            format!("{}/admin/v1/clock", self.api),
            json!({"advance": by}),
        )
        .await;
    }

    /// The workload's load, shared among its running pods.
    async fn load(&self, workload: &str, cpu: &str) {
        self.send(
            reqwest::Method::PUT,
            format!("{}/control/v1/loads/default/{workload}", self.metrics),
            json!({"cpu": cpu}),
        )
        .await;
    }

    async fn fault(&self, fault: Value) {
        self.send(
            reqwest::Method::POST,
            format!("{}/admin/v1/faults", self.api),
            fault,
        )
        .await;
    }

    async fn clear_faults(&self) {
        let r = self
            .http
            .delete(format!("{}/admin/v1/faults", self.api))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }

    async fn client(&self) -> kube::Client {
        let kubeconfig = kube::config::Kubeconfig::read_from(&self.kubeconfig).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .unwrap();
        kube::Client::try_from(config).unwrap()
    }

    async fn create(&self, deployment: Value, hpa: Value) {
        let client = self.client().await;
        if !deployment.is_null() {
            let api: Api<Deployment> = Api::default_namespaced(client.clone());
            api.create(
                &PostParams::default(),
                &serde_json::from_value(deployment).unwrap(),
            )
            .await
            .unwrap();
        }
        let api: Api<HorizontalPodAutoscaler> = Api::default_namespaced(client);
        api.create(
            &PostParams::default(),
            &serde_json::from_value(hpa).unwrap(),
        )
        .await
        .unwrap();
    }

    /// `hpa-harness ARGS --kubeconfig K`: exit code, stdout, stderr.
    async fn harness(&self, args: &[&str]) -> (i32, String, String) {
        let out = tokio::time::timeout(
            Duration::from_secs(120),
            Command::new(BIN)
                .args(args)
                .arg("--kubeconfig")
                .arg(&self.kubeconfig)
                .stdin(Stdio::null())
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("hpa-harness finishes within 120 s")
        .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The controller's latest decision for `key`, from `/debug/decisions`.
    async fn latest_decision(&self, key: &str) -> Value {
        let report: Value = self
            .http
            .get(format!("{}/debug/decisions", self.api))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        report["hpas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["key"] == key)
            .and_then(|h| h["decisions"].as_array().unwrap().last().cloned())
            .unwrap_or_else(|| panic!("no decision for {key} in {report}"))
    }
}

fn deployment(name: &str, replicas: i32) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "200m"}}}]}
            }
        }
    })
}

fn hpa(name: &str, target: &str) -> Value {
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1, "maxReplicas": 10,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]
        }
    })
}

/// Whether deploy/explain-rbac.yaml grants `verb` on `resource` as the
/// sim's request counters name it (`deployments.apps/scale`, `pods`; an
/// aggregated API by its group, `metrics.k8s.io`).
fn granted(verb: &str, resource: &str) -> bool {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/explain-rbac.yaml"
    ))
    .unwrap();
    let role: Value = serde_saphyr::from_str(&text).unwrap();
    let aggregated = [
        "metrics.k8s.io",
        "custom.metrics.k8s.io",
        "external.metrics.k8s.io",
    ];
    let (group, plural) = if aggregated.contains(&resource) {
        (resource.to_owned(), None)
    } else {
        let (name, sub) = resource
            .split_once('/')
            .map_or((resource, None), |(n, s)| (n, Some(s)));
        let (plural, group) = name.split_once('.').unwrap_or((name, ""));
        (
            group.to_owned(),
            Some(match sub {
                Some(sub) => format!("{plural}/{sub}"),
                None => plural.to_owned(),
            }),
        )
    };
    role["rules"].as_array().unwrap().iter().any(|rule| {
        let has = |key: &str, want: &str| {
            rule[key]
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v == want || v == "*" || (want.ends_with("/scale") && v == "*/scale"))
        };
        has("verbs", verb)
            && has("apiGroups", &group)
            && plural.as_deref().is_none_or(|p| has("resources", p))
    })
}

/// Exactly one line on stderr, `error: ` and what went wrong.
fn one_line_error(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr:\n{stderr}");
    lines[0]
        .strip_prefix("error: ")
        .unwrap_or_else(|| panic!("an error line: {stderr}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_explanation_is_the_controllers_decision_and_a_capture_reproduces_it() {
    let dir = temp_dir("live");
    let sim = start_sim(dir.path()).await;
    sim.create(deployment("web", 2), hpa("web", "web")).await;
    // 300m over 2 pods requesting 200m: 75% of a 50% target, 3 replicas;
    // then 100m each, and six minutes so the scale-down window holds 3s only.
    sim.load("web", "300m").await;
    sim.advance("6m").await;

    let r = sim
        .http
        .delete(format!("{}/admin/v1/requests", sim.api))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    let (code, out, err) = sim
        .harness(&["explain", "default/web", "--output", "json"])
        .await;
    assert_eq!(code, 0, "{err}");
    let ours: Value = serde_json::from_str(out.trim()).unwrap();
    // Every request it made is one deploy/explain-rbac.yaml grants.
    let counted: Value = sim
        .http
        .get(format!("{}/admin/v1/requests", sim.api))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let requests = counted["requests"].as_array().unwrap();
    assert!(requests.len() >= 4, "{counted}");
    for r in requests {
        let (verb, resource) = (r["verb"].as_str().unwrap(), r["resource"].as_str().unwrap());
        assert!(
            granted(verb, resource),
            "explain made {verb} {resource}, which deploy/explain-rbac.yaml does not grant"
        );
    }
    let theirs = sim.latest_decision("default/web").await;
    assert_eq!(theirs["desiredReplicas"], 3, "{theirs}");
    // The whole trace: every metric's value, ratio and proposal, every
    // pod's share, the normalization steps, at the same moment.
    assert_eq!(ours["trace"], theirs["trace"]);
    assert_eq!(ours["desiredReplicas"], 3);
    assert_eq!(ours["agreement"]["agrees"], true, "{}", ours["agreement"]);
    assert_eq!(ours["release"]["version"], "1.37");

    // The text names the same decision, and says the status agrees.
    let (code, text, err) = sim.harness(&["explain", "web"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("── HPA default/web at "), "{text}");
    assert!(
        text.contains("default/web │ 3       │ 3       │ unchanged"),
        "{text}"
    );
    assert!(text.contains("what the API cannot show:"), "{text}");
    assert!(
        text.contains("verdict: our computation agrees with the status (desired 3)."),
        "{text}"
    );

    // The load doubles: the status (the last sync's) lags what is read now.
    sim.load("web", "600m").await;
    let (code, text, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("verdict: our computation and the status disagree:"),
        "{text}"
    );
    assert!(
        text.contains("desired replicas: the status says 3, we compute 6"),
        "{text}"
    );
    assert!(
        text.contains("1. The metrics moved since the controller's last sync"),
        "{text}"
    );

    // Captured now, the scenario expects what the computation gives (6),
    // and passes on the simulated cluster.
    let feature = dir.path().join("web.feature");
    let (code, out, err) = sim
        .harness(&["capture", "default/web", "-o", feature.to_str().unwrap()])
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("the scenario expects 6"), "{out}");
    let text = std::fs::read_to_string(&feature).unwrap();
    assert!(
        text.contains("Then the deployment \"web\" has 6 replicas"),
        "{text}"
    );
    assert!(
        text.contains("And a deployment \"web\" with pods:"),
        "{text}"
    );
    assert!(text.contains("And the pods report:"), "{text}");
    assert!(
        !text.contains("managedFields") && !text.contains("status:"),
        "{text}"
    );
    let run = Command::new(BIN)
        .args(["test"])
        .arg(&feature)
        .output()
        .await
        .unwrap();
    assert!(
        run.status.success(),
        "the captured scenario passes:\n{text}\n{}",
        String::from_utf8_lossy(&run.stdout)
    );

    // --watch explains again at every sync period (a second, here), until
    // stopped; one JSON document a line.
    let mut watch = Command::new(BIN)
        .args([
            "explain",
            "default/web",
            "--watch",
            "--output",
            "json",
            "--flag",
            "horizontal-pod-autoscaler-sync-period=1s",
            "--kubeconfig",
        ])
        .arg(&sim.kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(watch.stdout.take().unwrap()).lines();
        let started = std::time::Instant::now();
        for _ in 0..3 {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("--watch explains every period")
                .unwrap()
                .unwrap();
            let doc: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(doc["hpa"], "default/web");
        }
        assert!(
            started.elapsed() >= Duration::from_secs(2),
            "three explanations a period apart take two periods"
        );
    }
    watch.kill().await.unwrap();

    // With --series, the metrics sampled over time, and what replays them.
    let (code, out, err) = sim
        .harness(&[
            "capture",
            "default/web",
            "-o",
            feature.to_str().unwrap(),
            "--series",
            "--interval",
            "200ms",
            "--duration",
            "600ms",
        ])
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("hpa-harness replay"), "{out}");
    let csv = std::fs::read_to_string(dir.path().join("web.series.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "timestamp,cpu");
    assert_eq!(rows[1], "0s,0.6", "the total over the pods: {csv}");
    assert_eq!(rows.len(), 5, "{csv}");
    let replay = Command::new(BIN)
        .args(["replay"])
        .arg(dir.path().join("web.replay.yaml"))
        .arg("--series")
        .arg(dir.path().join("web.series.csv"))
        .output()
        .await
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_and_bad_input_are_one_line_errors_with_a_failing_exit() {
    let dir = temp_dir("live-errors");
    let sim = start_sim(dir.path()).await;
    sim.create(deployment("web", 2), hpa("web", "web")).await;
    sim.create(Value::Null, hpa("ghost", "ghost")).await;
    sim.load("web", "200m").await;
    sim.advance("30s").await;

    // RBAC denies reading the HPA.
    sim.fault(
        json!({"forbid": {"verb": "get", "resource": "horizontalpodautoscalers.autoscaling"}}),
    )
    .await;
    let (code, _, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 1);
    let line = one_line_error(&err);
    assert!(
        line.starts_with(
            "RBAC denies get on horizontalpodautoscalers.autoscaling in namespace default: "
        ),
        "{line}"
    );
    assert!(line.contains("deploy/explain-rbac.yaml"), "{line}");
    sim.clear_faults().await;

    // RBAC denies the scale subresource, and the metrics API: named too.
    sim.fault(json!({"forbid": {"verb": "get", "resource": "deployments.apps/scale"}}))
        .await;
    let (code, _, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 1);
    assert!(
        one_line_error(&err)
            .starts_with("RBAC denies get on deployments.apps/scale in namespace default"),
        "{err}"
    );
    sim.clear_faults().await;
    sim.fault(json!({"forbid": {"verb": "list", "resource": "pods.metrics.k8s.io"}}))
        .await;
    let (code, _, err) = sim
        .harness(&["capture", "default/web", "-o", "/dev/null"])
        .await;
    assert_eq!(code, 1);
    assert!(
        one_line_error(&err)
            .starts_with("RBAC denies list on pods.metrics.k8s.io in namespace default"),
        "{err}"
    );
    sim.clear_faults().await;

    // An HPA that does not exist; a target that does not exist.
    let (code, _, err) = sim.harness(&["explain", "default/nope"]).await;
    assert_eq!(
        (code, one_line_error(&err)),
        (1, "HPA default/nope not found")
    );
    let (code, _, err) = sim.harness(&["explain", "default/ghost"]).await;
    assert_eq!(code, 1);
    assert_eq!(
        one_line_error(&err),
        "HPA default/ghost: its scale target Deployment ghost does not exist (deployments.apps \"ghost\" not found)"
    );
    // Every HPA of the namespace: the good one explained, the bad one
    // named, and the exit fails.
    let (code, out, err) = sim.harness(&["explain", "-A"]).await;
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("── HPA default/web at "), "{out}");
    assert!(
        one_line_error(&err).starts_with("HPA default/ghost: "),
        "{err}"
    );

    // The resource metrics API down.
    sim.send(
        reqwest::Method::PUT,
        format!("{}/control/v1/faults/resource", sim.metrics),
        json!({"status": 503}),
    )
    .await;
    let (code, _, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 1);
    let line = one_line_error(&err);
    assert!(
        line.starts_with("HPA default/web: the metrics APIs did not answer: unable to fetch metrics from resource metrics API: "),
        "{line}"
    );
}

/// On a cluster that shows its kube-controller-manager as a static pod in
/// `kube-system` (kubeadm, kind), `explain` decides with that controller's
/// HPA flags, says so, lets `--flag` override them, and `capture` writes
/// them into the scenario.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_decides_with_the_flags_of_the_clusters_controller_manager() {
    let dir = temp_dir("live-flags");
    let sim = start_sim(dir.path()).await;
    sim.create(deployment("web", 2), hpa("web", "web")).await;
    sim.load("web", "220m").await;
    sim.advance("1m").await;
    let client = sim.client().await;
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    if namespaces.get_opt("kube-system").await.unwrap().is_none() {
        namespaces
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": "kube-system"}})).unwrap(),
            )
            .await
            .unwrap();
    }
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), "kube-system");
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "metadata": {"name": "kube-controller-manager-cp",
                "labels": {"component": "kube-controller-manager", "tier": "control-plane"}},
            "spec": {"containers": [{"name": "kube-controller-manager",
                "image": "registry.k8s.io/kube-controller-manager:v1.37.0",
                "command": ["kube-controller-manager", "--leader-elect=true",
                    "--horizontal-pod-autoscaler-tolerance=0.5", "--kube-api-qps=50"]}]}
        }))
        .unwrap(),
    )
    .await
    .unwrap();

    // 110m of 200m: 55% of a 50% target, ratio 1.1: outside the default
    // 10% tolerance, inside the cluster's 50%.
    let (code, text, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("controller flags: horizontal-pod-autoscaler-tolerance=0.5 (read from kube-controller-manager's pod kube-system/kube-controller-manager-cp"),
        "{err}"
    );
    assert!(text.contains("tolerance: ±50%"), "{text}");
    let (code, text, err) = sim
        .harness(&[
            "explain",
            "default/web",
            "--flag",
            "horizontal-pod-autoscaler-tolerance=0.05",
        ])
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("tolerance: ±5%"), "{text}");

    let feature = dir.path().join("web.feature");
    let (code, _, err) = sim
        .harness(&["capture", "default/web", "-o", feature.to_str().unwrap()])
        .await;
    assert_eq!(code, 0, "{err}");
    let scenario = std::fs::read_to_string(&feature).unwrap();
    assert!(
        scenario.contains("And the HPA controller runs with:")
            && scenario.contains("| horizontal-pod-autoscaler-tolerance | 0.5   |"),
        "{scenario}"
    );
}

impl Sim {
    /// The names of the pods of `app`, sorted.
    async fn pods_of(&self, app: &str) -> Vec<String> {
        let pods: Api<k8s_openapi::api::core::v1::Pod> =
            Api::default_namespaced(self.client().await);
        let mut names: Vec<String> = pods
            .list(&kube::api::ListParams::default().labels(&format!("app={app}")))
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect();
        names.sort();
        names
    }

    /// `kubectl patch pod NAME --subresource=status` with a merge patch.
    async fn patch_pod_status(&self, name: &str, status: Value) {
        let pods: Api<k8s_openapi::api::core::v1::Pod> =
            Api::default_namespaced(self.client().await);
        pods.patch_status(
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": status})),
        )
        .await
        .unwrap();
    }

    /// The sim's clock now.
    async fn now(&self) -> jiff::Timestamp {
        let clock: Value = self
            .http
            .get(format!("{}/admin/v1/clock", self.api))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        clock["now"].as_str().unwrap().parse().unwrap()
    }
}

/// Issue 47: two pods that turned Ready 10s before the controller's sync,
/// with metrics-server's 30s samples: upstream's groupPods counts neither
/// (a sample counts in the cpu initialization period only when its window
/// began after readiness), so the metric fails with "did not receive
/// metrics for targeted pods (pods might be unready)". `explain` names both
/// pods, the rule, the readiness time, the samples' time and window and
/// when they count, in the text, in JSON (a field per pod) and with
/// --watch; and at that moment they do count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_names_young_pods_whose_samples_began_before_readiness_and_when_they_count() {
    let dir = temp_dir("live-young");
    let sim = start_sim(dir.path()).await;
    let t0 = sim.now().await;
    sim.create(deployment("web", 2), hpa("web", "web")).await;
    sim.load("web", "300m").await;
    // The controller syncs at 15s: both pods Ready since t0, samples taken
    // at 15s over 30s began 15s before that.
    sim.advance("15s").await;
    let pods = sim.pods_of("web").await;
    assert_eq!(pods.len(), 2, "{pods:?}");
    let at = |secs: i64| (t0 + jiff::SignedDuration::from_secs(secs)).to_string();

    let (code, text, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 0, "{err}");
    for pod in &pods {
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with(pod.as_str()))
            .unwrap_or_else(|| panic!("a row for {pod}:\n{text}"));
        assert!(
            row.contains("unready")
                && row.contains(
                    "Ready since 15s ago, within the cpu initialization period, but its sample (30s window, taken now) began 15s before it turned Ready; a sample taken in 15s or later counts"
                ),
            "{row}"
        );
    }
    assert!(
        text.contains(
            "verdict: the HPA does not scale, as its status says (ScalingActive=False FailedGetResourceMetric): the controller keeps 2 replicas."
        ),
        "{text}"
    );
    let first = text
        .lines()
        .find(|l| l.starts_with("  1. "))
        .unwrap_or_else(|| panic!("a first cause:\n{text}"));
    assert!(
        first.contains(&format!(
            "{} and {} turned Ready at {} (15s ago), within the cpu initialization period, but their 30s cpu samples (taken at {} (now)) began 15s before that, so they are unready",
            pods[0],
            pods[1],
            at(0),
            at(15)
        )),
        "{first}"
    );
    assert!(
        first.contains(&format!(
            "a sample taken at {} (in 15s) or later counts",
            at(30)
        )),
        "{first}"
    );
    assert!(
        first.contains("did not receive metrics for targeted pods (pods might be unready)")
            && first.contains("only from a sample whose window began after the pod turned Ready"),
        "{first}"
    );

    // JSON: a field per pod, with the rule and its times.
    let (code, out, err) = sim
        .harness(&["explain", "default/web", "--output", "json"])
        .await;
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(out.trim()).unwrap();
    let explained = doc["pods"].as_array().unwrap();
    assert_eq!(explained.len(), 2, "{doc}");
    for (p, name) in explained.iter().zip(&pods) {
        assert_eq!(p["pod"], name.as_str());
        assert_eq!(p["metric"], 0);
        assert_eq!(p["group"], "unready");
        assert_eq!(p["rule"], "sampleBeforeReady");
        assert_eq!(p["readySince"], at(0));
        assert_eq!(p["sampleTime"], at(15));
        assert_eq!(p["sample"], 150);
        assert_eq!(p["window"], "30s");
        assert_eq!(p["countsFrom"], at(30));
    }
    assert_eq!(doc["stopped"]["reason"], "FailedGetResourceMetric");
    assert!(
        doc["agreement"]["likelyCauses"][0]
            .as_str()
            .unwrap()
            .starts_with("No pod's sample of metric #0 (cpu) counts"),
        "{doc}"
    );

    // --watch: the same, explained again.
    let mut watch = Command::new(BIN)
        .args(["explain", "default/web", "--watch", "--output", "json"])
        .args(["--flag", "horizontal-pod-autoscaler-sync-period=1s"])
        .arg("--kubeconfig")
        .arg(&sim.kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(watch.stdout.take().unwrap()).lines();
        for _ in 0..2 {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("--watch explains every period")
                .unwrap()
                .unwrap();
            let doc: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(doc["pods"][0]["rule"], "sampleBeforeReady", "{doc}");
            assert_eq!(doc["pods"][0]["countsFrom"], at(30), "{doc}");
        }
    }
    watch.kill().await.unwrap();

    // At the time it named, a sample counts: both pods are counted and the
    // controller scales (300m over 2 pods requesting 200m: 75%, 3 replicas).
    sim.advance("15s").await;
    let (code, out, err) = sim
        .harness(&["explain", "default/web", "--output", "json"])
        .await;
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(out.trim()).unwrap();
    assert!(doc["stopped"].is_null(), "{doc}");
    let groups: Vec<&Value> = doc["pods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| pods.iter().any(|n| p["pod"] == n.as_str()))
        .map(|p| &p["group"])
        .collect();
    assert_eq!(groups, [&json!("ready"), &json!("ready")], "{doc}");
    assert_eq!(
        sim.latest_decision("default/web").await["desiredReplicas"],
        3
    );
}

/// Each group of upstream's groupPods, named with its rule: a pod counted,
/// one not Ready since within the initial readiness delay (past the cpu
/// initialization period), one Failed, one without a sample; and what the
/// controller took for each on this scale-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_names_each_pods_group_with_its_rule() {
    let dir = temp_dir("live-groups");
    let sim = start_sim(dir.path()).await;
    let t0 = sim.now().await;
    // Metrics from a script, as a user scripts the fake metrics server:
    // 120m for every pod of app=web (60% of 200m), none for web-3.
    sim.send(
        reqwest::Method::PATCH,
        format!("{}/control/v1/script", sim.metrics),
        json!({
            "pods": [{"namespace": "default", "name": "web-3", "missing": true}],
            "rules": [{"name": "web", "namespace": "default", "selector": "app=web",
                "containers": [{"name": "app", "cpu": "120m"}]}]
        }),
    )
    .await;
    sim.create(deployment("web", 4), hpa("web", "web")).await;
    let pods = sim.pods_of("web").await;
    assert_eq!(pods, ["web-0", "web-1", "web-2", "web-3"]);
    sim.advance("6m").await;
    let at = |secs: i64| (t0 + jiff::SignedDuration::from_secs(secs)).to_string();
    sim.patch_pod_status(
        "web-1",
        json!({"conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": at(5)}]}),
    )
    .await;
    sim.patch_pod_status("web-2", json!({"phase": "Failed"}))
        .await;

    let (code, out, err) = sim
        .harness(&["explain", "default/web", "--output", "json"])
        .await;
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(out.trim()).unwrap();
    let pod = |name: &str| {
        doc["pods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pod"] == name)
            .unwrap_or_else(|| panic!("{name} in {doc}"))
            .clone()
    };
    let web0 = pod("web-0");
    assert_eq!(
        (&web0["group"], &web0["rule"]),
        (&json!("ready"), &json!("counted"))
    );
    let web1 = pod("web-1");
    assert_eq!(
        (&web1["group"], &web1["rule"]),
        (&json!("unready"), &json!("neverReady"))
    );
    assert_eq!(web1["since"], at(5));
    assert_eq!(web1["started"], at(0));
    assert_eq!(web1["delayEnds"], at(30));
    assert_eq!(web1["assumed"], 0);
    assert!(
        web1["reason"]
            .as_str()
            .unwrap()
            .ends_with("taken as 0 on this scale-up"),
        "{web1}"
    );
    let web2 = pod("web-2");
    assert_eq!(
        (&web2["group"], &web2["rule"], &web2["reason"]),
        (
            &json!("ignored"),
            &json!("failed"),
            &json!("phase Failed; left out")
        )
    );
    let web3 = pod("web-3");
    assert_eq!(
        (&web3["group"], &web3["rule"], &web3["reason"]),
        (
            &json!("missing"),
            &json!("noSample"),
            &json!("no sample from the metrics API; taken as 0 on this scale-up")
        )
    );
    // The text's table says the same.
    let (code, text, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 0, "{err}");
    let row = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("a row for {name}:\n{text}"))
            .to_owned()
    };
    assert!(
        row("web-1").contains("taken for a pod that never became ready"),
        "{text}"
    );
    assert!(
        row("web-2").contains("ignored") && row("web-2").contains("phase Failed"),
        "{text}"
    );
    assert!(
        row("web-3").contains("missing") && row("web-3").contains("no sample from the metrics API"),
        "{text}"
    );
}

/// A metrics API kept down by its APIService: one that is not Available is
/// named with its condition and message, and none at all is named as
/// missing, each with what serves that API in common setups.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_names_the_api_service_that_keeps_the_metrics_api_down() {
    let dir = temp_dir("live-apiservice");
    let sim = start_sim(dir.path()).await;
    sim.create(deployment("web", 2), hpa("web", "web")).await;
    sim.load("web", "200m").await;
    sim.advance("1m").await;
    let client = sim.client().await;
    let services: Api<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService> =
        Api::all(client);
    services
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "v1beta1.metrics.k8s.io"},
                "spec": {"group": "metrics.k8s.io", "version": "v1beta1",
                    "groupPriorityMinimum": 100, "versionPriority": 100, "insecureSkipTLSVerify": true,
                    "service": {"namespace": "kube-system", "name": "metrics-server"}}
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    services
        .patch_status(
            "v1beta1.metrics.k8s.io",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": {"conditions": [{
                "type": "Available", "status": "False", "reason": "FailedDiscoveryCheck",
                "message": "failing or missing response from https://10.96.0.10:443/apis/metrics.k8s.io/v1beta1: dial tcp 10.96.0.10:443: connect: connection refused"}]}})),
        )
        .await
        .unwrap();
    let (code, _, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 1);
    let line = one_line_error(&err);
    assert!(
        line.starts_with("HPA default/web: the metrics APIs did not answer: unable to fetch metrics from resource metrics API: "),
        "{line}"
    );
    assert!(
        line.contains("; APIService v1beta1.metrics.k8s.io (service kube-system/metrics-server) is not available (Available=False FailedDiscoveryCheck: failing or missing response from https://10.96.0.10:443/apis/metrics.k8s.io/v1beta1: dial tcp 10.96.0.10:443: connect: connection refused), so the API server cannot reach what serves metrics.k8s.io: metrics-server serves it in most clusters"),
        "{line}"
    );

    // No APIService: the API server does not serve the group (404).
    services
        .delete("v1beta1.metrics.k8s.io", &Default::default())
        .await
        .unwrap();
    sim.send(
        reqwest::Method::PUT,
        format!("{}/control/v1/faults/resource", sim.metrics),
        json!({"status": 404, "message": "the server could not find the requested resource"}),
    )
    .await;
    let (code, _, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 1);
    let line = one_line_error(&err);
    assert!(
        line.contains("; no APIService registers metrics.k8s.io (kubectl get apiservices), so the API server answers 404 for it: nothing is installed to serve it; metrics-server serves it in most clusters"),
        "{line}"
    );
}

/// Two HPAs on one workload: upstream refuses both (AmbiguousSelector);
/// `explain` names the other HPA and the selector they share.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_names_the_other_hpa_of_an_ambiguous_selector() {
    let dir = temp_dir("live-ambiguous");
    let sim = start_sim(dir.path()).await;
    sim.create(deployment("web", 2), hpa("web", "web")).await;
    sim.create(Value::Null, hpa("web-copy", "web")).await;
    sim.load("web", "200m").await;
    sim.advance("30s").await;
    let (code, text, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains(
            "verdict: the HPA does not scale, as its status says (ScalingActive=False AmbiguousSelector): the controller keeps 2 replicas."
        ),
        "{text}"
    );
    let first = text
        .lines()
        .find(|l| l.starts_with("  1. "))
        .unwrap_or_else(|| panic!("a first cause:\n{text}"));
    assert!(
        first.starts_with("  1. HPA default/web-copy (its target's selector app=web) also selects the pods of Deployment web (selector app=web): upstream's controller refuses to scale pods that more than one HPA selects (AmbiguousSelector)"),
        "{first}"
    );
}

/// A sample of a pod the scale's selector no longer picks (a metrics
/// source that still reports a relabeled or deleted pod) is in none of
/// upstream's groups: `explain` names it as ignored, with the rule, and
/// the decision is the selected pods' alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_names_a_sample_of_a_pod_no_longer_selected_as_ignored() {
    let dir = temp_dir("live-unselected");
    let sim = start_sim(dir.path()).await;
    // 100m for every pod of app=web (50% of 200m: on target), and 400m for
    // web-old, which the metrics source still files under app=web.
    sim.send(
        reqwest::Method::PATCH,
        format!("{}/control/v1/script", sim.metrics),
        json!({
            "pods": [{"namespace": "default", "name": "web-old", "labels": {"app": "web"},
                "containers": [{"name": "app", "cpu": "400m"}]}],
            "rules": [{"name": "web", "namespace": "default", "selector": "app=web",
                "containers": [{"name": "app", "cpu": "100m"}]}]
        }),
    )
    .await;
    sim.create(deployment("web", 2), hpa("web", "web")).await;
    assert_eq!(sim.pods_of("web").await, ["web-0", "web-1"]);
    sim.advance("6m").await;

    let (code, out, err) = sim
        .harness(&["explain", "default/web", "--output", "json"])
        .await;
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(out.trim()).unwrap();
    let pods = doc["pods"].as_array().unwrap();
    let old = pods
        .iter()
        .find(|p| p["pod"] == "web-old")
        .unwrap_or_else(|| panic!("web-old in {doc}"));
    assert_eq!(
        (&old["group"], &old["rule"], &old["counted"], &old["sample"]),
        (
            &json!("ignored"),
            &json!("notSelected"),
            &json!(false),
            &json!(400)
        )
    );
    assert!(
        old["reason"]
            .as_str()
            .unwrap()
            .contains("no longer matching"),
        "{old}"
    );
    for name in ["web-0", "web-1"] {
        let p = pods.iter().find(|p| p["pod"] == name).unwrap();
        assert_eq!(
            (&p["group"], &p["rule"]),
            (&json!("ready"), &json!("counted"))
        );
    }
    // 50% from the selected pods alone: no rescale (with web-old's 400m
    // the average would be 100%, and the HPA would double).
    assert_eq!(doc["desiredReplicas"], 2, "{doc}");
    let (code, text, err) = sim.harness(&["explain", "default/web"]).await;
    assert_eq!(code, 0, "{err}");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("web-old "))
        .unwrap_or_else(|| panic!("a row for web-old:\n{text}"));
    assert!(
        row.contains("ignored") && row.contains("not picked by the selector"),
        "{text}"
    );
}
