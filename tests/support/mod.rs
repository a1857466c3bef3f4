//! What the integration tests that start `hpa-harness` as a separate
//! process share: the binary, scratch directories that remove themselves,
//! spawning with the wait for the lines the process announces itself by,
//! the simulated cluster and the controller as processes.
#![allow(dead_code)] // reason: each test binary uses some of these
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::path::Path;

mod announce;
#[path = "../../controller/tests/support/controller_process.rs"]
mod controller_process;
mod sim;

#[allow(unused_imports)] // reason: each test binary uses some of these
pub use {
    announce::{spawn, wait_for_announcement},
    controller_process::{ControllerProcess, free_port},
    sim::{Sim, spawn_generated_sim, spawn_metrics_server, spawn_sim},
};

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

/// `hpa-harness controller` (what the `hpa-controller` image runs) against
/// the cluster of `kubeconfig`.
pub fn harness_controller(kubeconfig: &Path) -> ControllerProcess {
    ControllerProcess::new(BIN, &["controller"], kubeconfig)
}
