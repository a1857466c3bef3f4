//! The deployed binary's log, as a pod's log or a file receives it: plain
//! text without terminal colour codes, or one JSON object per line with
//! `--log-format json`.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::process::Stdio;
use std::time::Duration;

mod support;
use support::controller_process::{ControllerProcess, free_port};

/// Runs `hpa-controller ARGS` against an API server that refuses every
/// connection, for long enough to log its start, and returns its stderr.
fn log_of(args: &[&str]) -> String {
    let kubeconfig = std::env::temp_dir().join(format!(
        "hpa-controller-logs-{}-{}.kubeconfig",
        std::process::id(),
        args.join("_").replace(['-', '='], "")
    ));
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"http://127.0.0.1:1\"}}]\n\
         users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    )
    .unwrap();
    let mut child = ControllerProcess::new(env!("CARGO_BIN_EXE_hpa-controller"), args, &kubeconfig)
        .without_leader_election()
        .port(free_port())
        .stderr(Stdio::piped())
        .command()
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    std::fs::remove_file(&kubeconfig).ok();
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_log_that_is_not_a_terminal_gets_no_colour_codes() {
    let log = log_of(&[]);
    assert!(log.contains("starting the HPA controller"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "ANSI escape codes in a piped log:\n{log:?}"
    );
}

#[test]
fn the_json_log_format_writes_one_object_per_line() {
    let log = log_of(&["--log-format", "json"]);
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let start = lines
        .iter()
        .find(|l| l["message"] == "starting the HPA controller")
        .unwrap_or_else(|| panic!("no start line in {log}"));
    assert_eq!(start["level"], "INFO");
    assert_eq!(start["sync_period"], "15s");
    assert!(start["timestamp"].is_string());
    // Kubernetes components' name for the flag is accepted too.
    assert!(log_of(&["--logging-format=json"]).starts_with('{'));
}
