//! Our controller as the `hpa-controller` binary users deploy, one process
//! per scenario (`hpa-harness test --controller-binary PATH`): at its
//! defaults and with the scenario's flags, reaching the cluster through the
//! run's kubeconfig, synced on demand on the scenario's clock through its
//! debug server (`--sync-on-demand`, `hpa_controller::on_demand`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use hpa_controller::on_demand::{History, SeedRequest, SyncRequest};
use hpa_controller::runtime::SyncReport;
use hpa_core::clock::Clock;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long the process may take to start serving.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a sync may wait for the process to hold its Lease.
const LEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// A sync's own bound (the controller bounds its reconciles too).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Why the controller process could not be started or driven.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot start the controller binary {path}")]
    Spawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the controller binary {path} exited before serving: {detail}")]
    Exited { path: PathBuf, detail: String },
    #[error("the controller binary {path} printed no `debug-server:` line within {timeout:?}")]
    NoAddress { path: PathBuf, timeout: Duration },
    #[error("the controller process at {url}: {reason}")]
    Request { url: String, reason: String },
}

/// One `hpa-controller --sync-on-demand` process; killed when dropped.
#[derive(Debug)]
pub struct ControllerProcess {
    child: Child,
    url: String,
    http: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl ControllerProcess {
    /// Starts `binary` against the cluster of `kubeconfig` (and `context`)
    /// with `flags` (`--name=value` each), on `clock`.
    pub async fn start(
        binary: &Path,
        kubeconfig: Option<&Path>,
        context: Option<&str>,
        flags: &[String],
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ProcessError> {
        let mut command = Command::new(binary);
        if let Some(path) = kubeconfig {
            command.arg("--kubeconfig").arg(path);
        }
        if let Some(context) = context {
            command.args(["--context", context]);
        }
        command
            .args(["--sync-on-demand", "--bind-address", "127.0.0.1:0"])
            .arg(format!("--clock-start={}", clock.now()))
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|source| ProcessError::Spawn {
            path: binary.to_owned(),
            source,
        })?;
        let url = match tokio::time::timeout(START_TIMEOUT, address(&mut child)).await {
            Ok(Some(url)) => url,
            Ok(None) => {
                let detail = exit_detail(&mut child).await;
                return Err(ProcessError::Exited {
                    path: binary.to_owned(),
                    detail,
                });
            }
            Err(_) => {
                return Err(ProcessError::NoAddress {
                    path: binary.to_owned(),
                    timeout: START_TIMEOUT,
                });
            }
        };
        // Its log is read so that a full pipe never blocks it.
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(target: "hpa_controller_process", "{line}");
                }
            });
        }
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| ProcessError::Request {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            child,
            url,
            http,
            clock,
        })
    }

    fn failed(&self, reason: impl std::fmt::Display) -> ProcessError {
        ProcessError::Request {
            url: self.url.clone(),
            reason: reason.to_string(),
        }
    }

    /// Reconciles every HPA once (`queued_only`: those the release queues
    /// at once), now on the scenario's clock. While the process has not
    /// yet taken its Lease, the sync waits for it.
    pub async fn sync(&self, queued_only: bool) -> Result<SyncReport, ProcessError> {
        let deadline = tokio::time::Instant::now() + LEADER_TIMEOUT;
        loop {
            let request = SyncRequest {
                now: self.clock.now(),
                queued_only,
            };
            let response = self
                .http
                .post(format!("{}/debug/sync", self.url))
                .json(&request)
                .send()
                .await
                .map_err(|e| self.failed(e))?;
            let status = response.status();
            if status.is_success() {
                return response.json().await.map_err(|e| self.failed(e));
            }
            let text = response.text().await.unwrap_or_default();
            let waiting = text.contains("leader lease");
            if waiting && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            return Err(self.failed(format!("{status}: {text}")));
        }
    }

    /// Hands history to the controller.
    pub async fn seed(&self, request: SeedRequest) -> Result<(), ProcessError> {
        let response = self
            .http
            .post(format!("{}/debug/seed", self.url))
            .json(&SeedRequest {
                now: self.clock.now(),
                ..request
            })
            .send()
            .await
            .map_err(|e| self.failed(e))?;
        if response.status().is_success() {
            Ok(())
        } else {
            let status = response.status();
            Err(self.failed(format!(
                "{status}: {}",
                response.text().await.unwrap_or_default()
            )))
        }
    }

    /// What the controller keeps of an HPA, ages as of now.
    pub async fn history(&self, namespace: &str, name: &str) -> Result<History, ProcessError> {
        let now = self.clock.now().to_string();
        let url = reqwest::Url::parse_with_params(
            &format!("{}/debug/history", self.url),
            [
                ("namespace", namespace),
                ("name", name),
                ("now", now.as_str()),
            ],
        )
        .map_err(|e| self.failed(e))?;
        let response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| self.failed(e))?;
        if !response.status().is_success() {
            let status = response.status();
            return Err(self.failed(format!(
                "{status}: {}",
                response.text().await.unwrap_or_default()
            )));
        }
        response.json().await.map_err(|e| self.failed(e))
    }

    /// Its `/metrics` text.
    pub async fn metrics_text(&self) -> Result<String, ProcessError> {
        self.http
            .get(format!("{}/metrics", self.url))
            .send()
            .await
            .map_err(|e| self.failed(e))?
            .text()
            .await
            .map_err(|e| self.failed(e))
    }

    /// The process's `/debug/decisions` document, for a failure report.
    pub async fn decisions_document(&self) -> Result<serde_json::Value, ProcessError> {
        self.http
            .get(format!("{}/debug/decisions", self.url))
            .send()
            .await
            .map_err(|e| self.failed(e))?
            .json()
            .await
            .map_err(|e| self.failed(e))
    }

    /// Stops the process.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// The URL of the process's `debug-server:` line; `None` when its stdout
/// ends first.
async fn address(child: &mut Child) -> Option<String> {
    let stdout = child.stdout.take()?;
    let mut lines = BufReader::new(stdout).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(url) = line.strip_prefix("debug-server: ") {
            let url = url.trim().to_owned();
            // The rest of its stdout is drained, so that it never blocks.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Some(url);
        }
    }
    None
}

/// What a process that exited early said last.
async fn exit_detail(child: &mut Child) -> String {
    let status = child
        .wait()
        .await
        .map(|s| s.to_string())
        .unwrap_or_default();
    let mut said = String::new();
    if let Some(stderr) = child.stderr.take() {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            said = line;
        }
    }
    format!("{status}; last said: {said}")
}
