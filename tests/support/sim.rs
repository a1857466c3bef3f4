//! `hpa-harness sim` and `hpa-harness metrics-server` as processes, started
//! as the tests start them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hpa_harness::testbed::process::Announced;
use tokio::process::{Child, Command};

use super::{BIN, spawn, wait_for_announcement};

/// How a test starts `hpa-harness sim`: on a free port of 127.0.0.1, its
/// kubeconfig in the test's scratch directory, its log discarded unless
/// told.
pub struct Sim {
    kubeconfig: PathBuf,
    args: Vec<String>,
    stderr: Option<Stdio>,
}

impl Sim {
    /// The sim writing its kubeconfig into `dir`, with its own fake
    /// metrics server.
    pub fn new(dir: &Path) -> Self {
        Self {
            kubeconfig: dir.join("kubeconfig"),
            args: Vec::new(),
            stderr: None,
        }
    }

    /// Its metrics APIs from the fake metrics server at `url` rather than
    /// its own.
    pub fn metrics_url(self, url: &str) -> Self {
        self.args(&["--metrics-url", url])
    }

    /// More flags.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// Its log to `stderr` rather than nowhere.
    pub fn stderr(mut self, stderr: Stdio) -> Self {
        self.stderr = Some(stderr);
        self
    }

    /// Starts it and waits until it has announced its URLs: the child
    /// (killed on drop), its kubeconfig and its metrics server's URL.
    pub async fn spawn(self) -> (Child, PathBuf, String) {
        let mut child = Command::new(BIN)
            .args(["sim", "--listen", "127.0.0.1:0", "--kubeconfig"])
            .arg(&self.kubeconfig)
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(self.stderr.unwrap_or_else(Stdio::null))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut announced = Announced::default();
        wait_for_announcement(&mut child, Duration::from_secs(30), |line| {
            announced.read_line(line);
            let Announced {
                api_server,
                kubeconfig,
                metrics_server,
            } = &announced;
            (api_server.is_some() && kubeconfig.is_some() && metrics_server.is_some()).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("hpa-harness sim {:?} did not announce itself", self.args));
        (
            child,
            announced.kubeconfig.unwrap(),
            announced.metrics_server.unwrap(),
        )
    }
}

/// `hpa-harness sim EXTRA` with its own fake metrics server (which learns
/// the sim's pods by watch); see [`Sim::spawn`].
pub async fn spawn_sim(dir: &Path, extra: &[&str]) -> (Child, PathBuf, String) {
    Sim::new(dir).args(extra).spawn().await
}

/// `hpa-harness sim --generated-pod-names` (see [`spawn_sim`]).
pub async fn spawn_generated_sim(dir: &Path) -> (Child, PathBuf, String) {
    spawn_sim(dir, &["--generated-pod-names"]).await
}

/// `hpa-harness metrics-server --http EXTRA` on a free port of 127.0.0.1:
/// the child (killed on drop) and its URL, once it listens.
pub async fn spawn_metrics_server(extra: &[&str], stderr: Stdio) -> (Child, String) {
    let mut args = vec!["metrics-server", "--http", "--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    spawn(&args, "listening:", stderr).await
}
