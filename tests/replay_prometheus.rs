//! `hpa-harness replay --prometheus`: the series read from a real
//! Prometheus server's HTTP API give the same replay as the same series
//! exported to a CSV.
//!
//! The test starts Debian's `prometheus` (2.42) on a free 127.0.0.1 port
//! with a scratch storage directory holding an hour of history written by
//! `promtool tsdb create-blocks-from openmetrics`, served over TLS (a
//! certificate made here, trusted with --ca-file) behind basic
//! authentication, as Prometheus's `--web.config.file` sets them. Without
//! `prometheus` on PATH the test is skipped with a message, except in CI
//! (`CI=true`), where `.ci/run` installs it and its absence fails.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::process::{Child, Command};

mod support;
use support::{BIN, free_port, temp_dir};

const HPA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/features/replay/hpa.yaml");
const WORKLOAD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/features/replay/deployment.yaml"
);

/// The bcrypt hash of the password `test` (Prometheus's basic auth guide).
const PASSWORD_HASH: &str = "$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay";

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

/// The history: one hour of a workload's cpu every 15 s, as a total and per
/// pod (three pods, a third each), from `start` (Unix seconds).
fn history(start: i64) -> (String, Vec<(i64, f64)>) {
    let mut total = Vec::new();
    for i in 0..=240 {
        let t = start + i * 15;
        // Idle, a ramp up to 2.4 cores over 20 minutes, a plateau, a fall.
        let v = match i {
            0..=19 => 0.06,
            20..=99 => 0.06 + 0.03 * f64::from(i32::try_from(i - 19).unwrap()),
            100..=159 => 2.46,
            _ => 0.3,
        };
        total.push((t, (v * 1000.0_f64).round() / 1000.0));
    }
    let mut om = String::from("# TYPE web_cpu_cores gauge\n");
    for (t, v) in &total {
        om.push_str(&format!("web_cpu_cores{{app=\"web\"}} {v} {t}\n"));
    }
    om.push_str("# TYPE web_pod_cpu_cores gauge\n");
    for pod in 0..3 {
        for (t, v) in &total {
            om.push_str(&format!(
                "web_pod_cpu_cores{{app=\"web\",pod=\"web-{pod}\"}} {} {t}\n",
                v / 3.0
            ));
        }
    }
    om.push_str("# EOF\n");
    (om, total)
}

struct Prometheus {
    _child: Child,
    url: String,
    ca: PathBuf,
}

async fn start_prometheus(dir: &Path, prometheus: &Path, promtool: &Path, om: &str) -> Prometheus {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let om_file = dir.join("history.om");
    std::fs::write(&om_file, om).unwrap();
    let out = std::process::Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&om_file)
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "promtool: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let (cert, key, ca) = (dir.join("tls.crt"), dir.join("tls.key"), dir.join("ca.crt"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&ca, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let web = dir.join("web.yml");
    std::fs::write(
        &web,
        format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\nbasic_auth_users:\n  admin: '{PASSWORD_HASH}'\n",
            cert.display(),
            key.display()
        ),
    )
    .unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        "global:\n  scrape_interval: 1h\nscrape_configs: []\n",
    )
    .unwrap();
    let port = free_port();
    let child = Command::new(prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", data.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!("--web.config.file={}", web.display()))
        .arg("--storage.tsdb.retention.time=10y")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("https://127.0.0.1:{port}");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let ready = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let Ok(r) = http
                .get(format!("{url}/-/ready"))
                .basic_auth("admin", Some("test"))
                .send()
                .await
                && r.status().is_success()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(ready.is_ok(), "prometheus is ready within 60 s at {url}");
    Prometheus {
        _child: child,
        url,
        ca,
    }
}

/// `hpa-harness replay ARGS`: exit code, stdout, stderr.
async fn replay<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let out = Command::new(BIN)
        .arg("replay")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The replayed run of a JSON result, without the label naming its input.
fn run_of(stdout: &str) -> Value {
    let mut v: Value = serde_json::from_str(stdout).unwrap();
    let mut run = v["runs"][0].take();
    run.as_object_mut().unwrap().remove("label");
    run
}

/// The fields of two runs that differ (empty when they are the same).
fn differing(a: &Value, b: &Value) -> Vec<String> {
    let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "{k}: {:?} vs {:?}",
                a.get(k)
                    .map(|v| v.to_string().chars().take(300).collect::<String>()),
                b.get(k)
                    .map(|v| v.to_string().chars().take(300).collect::<String>())
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_from_prometheus_decides_as_the_same_series_from_csv() {
    let (Some(prometheus), Some(promtool)) = (on_path("prometheus"), on_path("promtool")) else {
        let why =
            "prometheus or promtool is not on PATH (apt-get install prometheus, as .ci/run does)";
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(!in_ci, "CI needs them: {why}");
        eprintln!("SKIPPED the replay from a real Prometheus: {why}");
        return;
    };
    let dir = temp_dir("prometheus");
    // Two hours back, on a 15 s step, so the whole hour is in the past.
    let now = jiff::Timestamp::now().as_second();
    let start = (now - 2 * 3600) / 15 * 15;
    let (om, total) = history(start);
    let end = total.last().unwrap().0;
    let server = start_prometheus(dir.path(), &prometheus, &promtool, &om).await;

    // The same series as a CSV (Unix seconds), total and per pod.
    let csv = dir.path().join("cpu.csv");
    let per_pod_csv = dir.path().join("cpu-per-pod.csv");
    let mut text = String::from("timestamp,cpu\n");
    let mut per_pod = String::from("timestamp,cpu\n");
    for (t, v) in &total {
        text.push_str(&format!("{t},{v}\n"));
        per_pod.push_str(&format!("{t},{}\n", v / 3.0));
    }
    std::fs::write(&csv, text).unwrap();
    std::fs::write(&per_pod_csv, per_pod).unwrap();
    let password = dir.path().join("password");
    std::fs::write(&password, "test\n").unwrap();

    let until = jiff::Timestamp::from_second(end).unwrap().to_string();
    let (ca, pw) = (
        server.ca.display().to_string(),
        password.display().to_string(),
    );
    let prom = |query: &'static str| -> Vec<String> {
        [
            HPA,
            "--workload",
            WORKLOAD,
            "--prometheus",
            &server.url,
            "--query",
            query,
            "--query-name",
            "cpu",
            "--since",
            "1h",
            "--step",
            "15s",
            "--until",
            &until,
            "--ca-file",
            &ca,
            "--basic-auth-user",
            "admin",
            "--basic-auth-password-file",
            &pw,
            "--output",
            "json",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    };

    let (code, from_csv, err) = replay(
        &[
            HPA,
            "--workload",
            WORKLOAD,
            "--series",
            csv.to_str().unwrap(),
            "--output",
            "json",
        ],
        &[],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let expected = run_of(&from_csv);
    assert!(
        expected["maxReplicasSeen"].as_i64().unwrap() >= 4,
        "the history scales the workload: {expected}"
    );

    // The total, as one series.
    let args = prom("web_cpu_cores{app=\"web\"}");
    let (code, out, err) = replay(&args, &[]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        differing(&run_of(&out), &expected),
        Vec::<String>::new(),
        "Prometheus and CSV replay the same"
    );
    // One query for an HPA of one metric needs no name: the same syncs.
    let mut args = prom("web_cpu_cores{app=\"web\"}");
    let at = args.iter().position(|a| a == "--query-name").unwrap();
    args.drain(at..at + 2);
    let (code, out, err) = replay(&args, &[]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(run_of(&out)["samples"], expected["samples"]);

    // Per pod (a `pod` label): summed into the total.
    let args = prom("web_pod_cpu_cores{app=\"web\"}");
    let (code, out, err) = replay(&args, &[]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        differing(&run_of(&out), &expected),
        Vec::<String>::new(),
        "per-pod series add up to the total"
    );

    // Per pod, each pod's value as it is: the mean of the pods.
    let (code, per_pod_csv_out, err) = replay(
        &[
            HPA,
            "--workload",
            WORKLOAD,
            "--series",
            per_pod_csv.to_str().unwrap(),
            "--pod-values",
            "per-pod",
            "--output",
            "json",
        ],
        &[],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let mut args = prom("web_pod_cpu_cores{app=\"web\"}");
    args.extend(["--pod-values".to_owned(), "per-pod".to_owned()]);
    let (code, out, err) = replay(&args, &[]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        differing(&run_of(&out), &run_of(&per_pod_csv_out)),
        Vec::<String>::new(),
        "per pod, each pod's value is the pods' mean"
    );

    // A query that matches nothing: one line, a failing exit.
    let args = prom("no_such_metric");
    let (code, _, err) = replay(&args, &[]).await;
    assert_eq!(code, 1);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("error: the query \"no_such_metric\" returned no samples from Prometheus at https://127.0.0.1:"),
        "{err}"
    );

    // The server refuses: a query that does not parse, and no credentials.
    let args = prom("sum(");
    let (code, _, err) = replay(&args, &[]).await;
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: Prometheus at https://127.0.0.1:")
            && err.contains("refused the query \"sum(\": HTTP 400: "),
        "{err}"
    );
    let mut args = prom("web_cpu_cores");
    let at = args.iter().position(|a| a == "--basic-auth-user").unwrap();
    args.drain(at..at + 4);
    let (code, _, err) = replay(&args, &[]).await;
    assert_eq!(code, 1);
    assert!(err.contains("HTTP 401"), "{err}");

    // The password from the environment, and verification skipped instead
    // of the CA: the same replay.
    let mut args = prom("web_cpu_cores{app=\"web\"}");
    let at = args.iter().position(|a| a == "--ca-file").unwrap();
    args.splice(at..at + 2, ["--insecure-skip-verify".to_owned()]);
    let at = args
        .iter()
        .position(|a| a == "--basic-auth-password-file")
        .unwrap();
    args.drain(at..at + 2);
    let (code, out, err) = replay(&args, &[("PROMETHEUS_PASSWORD", "test")]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(differing(&run_of(&out), &expected), Vec::<String>::new());

    // Without the CA, the certificate is not trusted: a clear refusal.
    let mut args = prom("web_cpu_cores");
    let at = args.iter().position(|a| a == "--ca-file").unwrap();
    args.drain(at..at + 2);
    let (code, _, err) = replay(&args, &[]).await;
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: Prometheus at https://127.0.0.1:")
            && err.contains("did not answer"),
        "{err}"
    );
}
