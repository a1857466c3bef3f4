//! What the integration tests that start `hpa-harness` as a separate
//! process share: the binary, scratch directories that remove themselves,
//! and spawning with the wait for the line the process announces itself by.
#![allow(dead_code)] // reason: each test binary uses some of these
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The `hpa-harness` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_hpa-harness");

/// A fresh scratch directory, removed with everything in it when the
/// returned guard drops.
pub fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("hpa-harness-{name}-"))
        .tempdir()
        .unwrap()
}

/// Spawns `hpa-harness ARGS` and returns it with the rest of the first
/// stdout line starting with `prefix` (trimmed). The process is killed when
/// the returned `Child` drops, and its stdout is drained so it never blocks
/// on a full pipe. Its stderr goes to the test's (`inherit`) or nowhere.
pub async fn spawn(args: &[&str], prefix: &str, stderr: Stdio) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let value = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(v) = line.strip_prefix(prefix) {
                return Some(v.trim().to_owned());
            }
        }
        None
    })
    .await
    .unwrap()
    .unwrap_or_else(|| panic!("hpa-harness {args:?} printed no {prefix:?} line"));
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, value)
}

/// A port on 127.0.0.1 that was free a moment ago, for a process that
/// takes its listen address as a flag.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `hpa-harness sim` with `extra` arguments and its own fake metrics server
/// (which learns the sim's pods by watch): the child, its kubeconfig and
/// the metrics server's URL, once the sim has announced them.
pub async fn spawn_sim(
    dir: &std::path::Path,
    extra: &[&str],
) -> (tokio::process::Child, std::path::PathBuf, String) {
    let mut child = tokio::process::Command::new(BIN)
        .args(["sim", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(dir.join("kubeconfig"))
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut announced = hpa_harness::testbed::process::Announced::default();
    tokio::time::timeout(Duration::from_secs(30), async {
        while announced.api_server.is_none()
            || announced.kubeconfig.is_none()
            || announced.metrics_server.is_none()
        {
            let line = lines.next_line().await.unwrap().unwrap();
            announced.read_line(&line);
        }
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (
        child,
        announced.kubeconfig.unwrap(),
        announced.metrics_server.unwrap(),
    )
}

/// `hpa-harness sim --generated-pod-names` (see [`spawn_sim`]).
pub async fn spawn_generated_sim(
    dir: &std::path::Path,
) -> (tokio::process::Child, std::path::PathBuf, String) {
    spawn_sim(dir, &["--generated-pod-names"]).await
}

/// The `hpa-controller` binary users deploy, built now from this checkout
/// (beside [`BIN`], in the same target directory and profile) so that a
/// test never drives a stale one.
pub fn controller_binary() -> std::path::PathBuf {
    let bin = std::path::Path::new(BIN);
    let dir = bin.parent().unwrap();
    if let Ok(cargo) = std::env::var("CARGO") {
        let profile = dir.file_name().and_then(|p| p.to_str()).unwrap_or("debug");
        let target = dir.parent().unwrap();
        let mut build = std::process::Command::new(cargo);
        build
            .args([
                "build",
                "--quiet",
                "-p",
                "hpa-controller",
                "--bin",
                "hpa-controller",
            ])
            .arg("--target-dir")
            .arg(target)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if profile == "release" {
            build.arg("--release");
        }
        let status = build.status().unwrap();
        assert!(status.success(), "building hpa-controller failed: {status}");
    }
    let path = dir.join(format!("hpa-controller{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "no hpa-controller binary at {}",
        path.display()
    );
    path
}
