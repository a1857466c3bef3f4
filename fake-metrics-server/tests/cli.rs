#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! The binary as a process: `--listen 127.0.0.1:0` announces its URL on
//! stdout, and `--virtual-clock` starts a clock that only the control API
//! moves.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fake_metrics_server::client::ControlClient;
use jiff::{SignedDuration, Timestamp};

/// Kills the child when the test ends, passed or failed.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawns the binary and returns it with the URL of its `listening:` line.
fn spawn(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-metrics-server"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let running = Running(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening: ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("a listening: line within 20s");
    (running, url)
}

#[tokio::test]
async fn the_binary_runs_on_a_virtual_clock_that_only_the_control_api_moves() {
    let (_server, url) = spawn(&[
        "--http",
        "--listen",
        "127.0.0.1:0",
        "--virtual-clock",
        "2026-01-01T00:00:00Z",
    ]);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(!url.ends_with(":0"), "the bound port is printed: {url}");
    let control = ControlClient::new(url).unwrap();
    let start: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let clock = control.clock().await.unwrap();
    assert!(clock.is_virtual);
    assert_eq!(clock.now, start);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        control.clock().await.unwrap().now,
        start,
        "wall time does not move it"
    );
    let moved = control
        .advance_clock(SignedDuration::from_secs(90))
        .await
        .unwrap();
    assert_eq!(moved.now, start + SignedDuration::from_secs(90));
}

#[tokio::test]
async fn without_virtual_clock_the_binary_serves_https_on_the_wall_clock() {
    let (_server, url) = spawn(&["--listen", "127.0.0.1:0"]);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let clock = ControlClient::new(url).unwrap().clock().await.unwrap();
    assert!(!clock.is_virtual);
    let drift = Timestamp::now().duration_since(clock.now).abs();
    assert!(drift < SignedDuration::from_secs(5), "{drift}");
}
