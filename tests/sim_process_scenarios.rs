//! The scenario library on `--backend sim-process`: `hpa-harness sim` in a
//! child process on a virtual clock, driven through its admin API, runs the
//! same scenarios with the same outcomes as the embedded sim
//! (`tests/features.rs`).
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

mod support;

#[test]
fn every_scenario_passes_on_a_sim_process() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new(support::BIN)
        .current_dir(root)
        .args([
            "test",
            "--backend",
            "sim-process",
            "--tags",
            "not @known-bug",
            "features",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let summary = stdout
        .lines()
        .find(|l| l.contains(" scenarios ("))
        .unwrap_or("");
    assert!(
        summary.contains("passed") && !summary.contains("failed"),
        "{summary}"
    );
}
