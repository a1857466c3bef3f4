//! `hpa-harness sim` (this program) as a child process: it keeps the
//! cluster's memory and CPU out of this process, so what a load report gives
//! for this process is the controller's own. Load runs give it its own fake
//! metrics server on the wall clock ([`SimProcess::spawn`]); scenarios run
//! it on a virtual clock against a fake metrics server of theirs
//! ([`SimProcess::spawn_for_scenarios`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

/// How long `hpa-harness sim` may take to announce itself.
const SPAWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the child could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the simulated cluster process: {0}")]
pub struct SpawnError(pub String);

/// The lines `hpa-harness sim` prints once it serves.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Announced {
    /// `api-server: URL`.
    pub api_server: Option<String>,
    /// `kubeconfig: PATH`.
    pub kubeconfig: Option<PathBuf>,
    /// `metrics-server: URL`.
    pub metrics_server: Option<String>,
}

impl Announced {
    /// Takes one stdout line into account.
    pub fn read_line(&mut self, line: &str) {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("api-server:") {
            self.api_server = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("kubeconfig:") {
            self.kubeconfig = Some(PathBuf::from(v.trim()));
        } else if let Some(v) = line.strip_prefix("metrics-server:") {
            self.metrics_server = Some(v.trim().to_string());
        }
    }

    fn complete(&self) -> bool {
        self.api_server.is_some() && self.kubeconfig.is_some() && self.metrics_server.is_some()
    }
}

/// A running `hpa-harness sim` child; killed (and its directory removed)
/// by [`Self::stop`], or killed on drop.
#[derive(Debug)]
pub struct SimProcess {
    child: tokio::process::Child,
    dir: PathBuf,
    /// Its kubeconfig.
    pub kubeconfig: PathBuf,
    /// Its fake metrics server's base URL.
    pub metrics_url: String,
}

impl SimProcess {
    /// Starts the child on the wall clock with its own fake metrics server
    /// and waits until it announces its URLs; with `gates`, the child is
    /// that release with those `--feature-gates` (else its default).
    pub async fn spawn(gates: Option<&hpa_sim::FeatureGates>) -> Result<Self, SpawnError> {
        Self::spawn_with(gates.map_or_else(Vec::new, release_args)).await
    }

    /// Starts the child on a virtual clock standing at `start`, its metrics
    /// APIs served by the fake metrics server at `metrics_url` (whose clock
    /// the scenarios move with the sim's), and waits until it serves.
    pub async fn spawn_for_scenarios(
        start: jiff::Timestamp,
        metrics_url: &str,
    ) -> Result<Self, SpawnError> {
        Self::spawn_with(vec![
            "--virtual-clock".into(),
            start.to_string().into(),
            "--metrics-url".into(),
            metrics_url.into(),
        ])
        .await
    }

    async fn spawn_with(args: Vec<OsString>) -> Result<Self, SpawnError> {
        let exe = std::env::current_exe()
            .map_err(|e| SpawnError(format!("cannot find this program: {e}")))?;
        let dir = std::env::temp_dir().join(format!("hpa-load-sim-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| SpawnError(format!("cannot create {}: {e}", dir.display())))?;
        let mut child = tokio::process::Command::new(exe)
            .arg("sim")
            .args(["--listen", "127.0.0.1:0"])
            .arg("--kubeconfig")
            .arg(dir.join("kubeconfig"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| SpawnError(e.to_string()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| SpawnError("no stdout".into()))?;
        let mut lines = BufReader::new(stdout).lines();
        let mut announced = Announced::default();
        let read = async {
            while !announced.complete() {
                match lines.next_line().await {
                    Ok(Some(line)) => announced.read_line(&line),
                    Ok(None) => return Err("it exited before announcing its URLs".to_string()),
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(())
        };
        tokio::time::timeout(SPAWN_TIMEOUT, read)
            .await
            .map_err(|_| SpawnError(format!("no URLs within {SPAWN_TIMEOUT:?}")))?
            .map_err(SpawnError)?;
        // Keep reading (and dropping) its stdout so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (Some(_), Some(kubeconfig), Some(metrics_url)) = (
            announced.api_server,
            announced.kubeconfig,
            announced.metrics_server,
        ) else {
            return Err(SpawnError("incomplete announcement".into()));
        };
        Ok(Self {
            child,
            dir,
            kubeconfig,
            metrics_url,
        })
    }

    /// The child's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Kills the child and removes its directory.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `hpa-harness sim` flags that make the child `gates`' release with
/// their overrides.
fn release_args(gates: &hpa_sim::FeatureGates) -> Vec<OsString> {
    vec![
        format!("--kubernetes-version={}", gates.version()).into(),
        format!("--feature-gates={gates}").into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_sim_for_a_named_release_gets_the_release_and_its_gates() {
        let gates =
            hpa_sim::FeatureGates::parse(hpa_sim::KubernetesVersion::V1_36, "HPAScaleToZero=true")
                .unwrap();
        assert_eq!(
            release_args(&gates),
            [
                "--kubernetes-version=1.36",
                "--feature-gates=HPAScaleToZero=true"
            ]
        );
    }

    #[test]
    fn the_sim_s_announcement_is_read_line_by_line() {
        let mut a = Announced::default();
        a.read_line("metrics-server: http://127.0.0.1:1");
        a.read_line("some log line");
        a.read_line("api-server: http://127.0.0.1:2");
        assert!(!a.complete());
        a.read_line("kubeconfig: /tmp/k");
        assert!(a.complete());
        assert_eq!(a.api_server.as_deref(), Some("http://127.0.0.1:2"));
        assert_eq!(a.kubeconfig, Some(PathBuf::from("/tmp/k")));
    }
}
