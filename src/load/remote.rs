//! The cluster side of a load run when it is not in this process: a
//! kubeconfig's cluster (our `hpa-harness sim` or a real one) plus a fake
//! metrics server reached through its control API.
//!
//! Running the simulated cluster in a child process (`sim-process`) keeps
//! its memory and CPU out of the load process, so what the report gives for
//! the load process is the controller's own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use fake_metrics_server::client::ControlClient;
use fake_metrics_server::script::{Change, Script};
use hpa_sim::admin::AdminClient;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::cluster::fake_node::{DEFAULT_NODE_NAME, FakeNode};

/// Errors reaching or starting the remote cluster side.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// `hpa-harness sim` could not be started or did not announce itself.
    #[error("cannot start the simulated cluster process: {0}")]
    Spawn(String),
    /// The kubeconfig could not be read or used.
    #[error("cannot use the kubeconfig {path}: {message}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// A real cluster needs the fake metrics server's control URL.
    #[error(
        "--backend kubeconfig needs --metrics-control-url (the fake metrics server the cluster's metrics APIs point at) unless the cluster is hpa-harness sim"
    )]
    NoMetricsUrl,
    /// The fake metrics server's control API failed.
    #[error("fake metrics server at {url}: {message}")]
    Metrics {
        /// Its control URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// Creating a namespace or the fake node failed.
    #[error("cannot {action}: {message}")]
    Setup {
        /// What was being done.
        action: String,
        /// What failed.
        message: String,
    },
}

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

/// Changes per control request: well under the server's body limit.
const CHANGES_PER_REQUEST: usize = 2_000;

/// How long `hpa-harness sim` may take to announce itself.
const SPAWN_TIMEOUT: Duration = Duration::from_secs(30);

/// The cluster and metrics server of a load run, outside this process.
pub struct Remote {
    /// A client of the cluster.
    pub client: kube::Client,
    control: ControlClient,
    /// Present when the cluster is our sim: counts its requests.
    admin: Option<AdminClient>,
    /// The `hpa-harness sim` child, killed on drop.
    child: Option<tokio::process::Child>,
    /// On a real cluster: the node the load's pods are placed on.
    fake_node: Option<FakeNode>,
    /// The child's kubeconfig lives here.
    dir: Option<PathBuf>,
    /// The kubeconfig the clients come from.
    kubeconfig: PathBuf,
}

impl Remote {
    /// A client for the controller under test, built as `hpa-harness
    /// controller` builds its own: no retries, bounded requests, and a
    /// `--kube-api-qps` / `--kube-api-burst` bucket per upstream clientset.
    pub async fn controller_client(
        &self,
        qps: f64,
        burst: u32,
    ) -> Result<kube::Client, RemoteError> {
        let bad = |message: String| RemoteError::Kubeconfig {
            path: self.kubeconfig.clone(),
            message,
        };
        let kubeconfig = kube::config::Kubeconfig::read_from(&self.kubeconfig)
            .map_err(|e| bad(e.to_string()))?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .map_err(|e| bad(e.to_string()))?;
        crate::controller::client::controller_client(
            config,
            qps,
            burst,
            crate::controller::client::REQUEST_TIMEOUT,
        )
        .map_err(|e| bad(e.to_string()))
    }

    /// The fake metrics server's control client.
    pub fn control(&self) -> &ControlClient {
        &self.control
    }
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("sim", &self.admin.is_some())
            .field("child", &self.child_pid())
            .finish_non_exhaustive()
    }
}

async fn client_from(path: &Path) -> Result<kube::Client, RemoteError> {
    let bad = |message: String| RemoteError::Kubeconfig {
        path: path.to_path_buf(),
        message,
    };
    let kubeconfig = kube::config::Kubeconfig::read_from(path).map_err(|e| bad(e.to_string()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|e| bad(e.to_string()))?;
    kube::Client::try_from(config).map_err(|e| bad(e.to_string()))
}

fn control(url: &str) -> Result<ControlClient, RemoteError> {
    ControlClient::new(url).map_err(|e| RemoteError::Metrics {
        url: url.to_string(),
        message: e.to_string(),
    })
}

impl Remote {
    /// Starts `hpa-harness sim` (this program) as a child with its own fake
    /// metrics server, and connects to both.
    pub async fn spawn_sim() -> Result<Self, RemoteError> {
        let exe = std::env::current_exe()
            .map_err(|e| RemoteError::Spawn(format!("cannot find this program: {e}")))?;
        let dir = std::env::temp_dir().join(format!("hpa-load-sim-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| RemoteError::Spawn(format!("cannot create {}: {e}", dir.display())))?;
        let mut child = tokio::process::Command::new(exe)
            .arg("sim")
            .args(["--listen", "127.0.0.1:0"])
            .arg("--kubeconfig")
            .arg(dir.join("kubeconfig"))
            // A watch started after the load is built lists first; the
            // history only serves resumption.
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| RemoteError::Spawn(e.to_string()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| RemoteError::Spawn("no stdout".into()))?;
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
            .map_err(|_| RemoteError::Spawn(format!("no URLs within {SPAWN_TIMEOUT:?}")))?
            .map_err(RemoteError::Spawn)?;
        // Keep reading (and dropping) its stdout so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (Some(api), Some(kubeconfig), Some(metrics)) = (
            announced.api_server,
            announced.kubeconfig,
            announced.metrics_server,
        ) else {
            return Err(RemoteError::Spawn("incomplete announcement".into()));
        };
        let client = client_from(&kubeconfig).await?;
        let admin = AdminClient::new(api).map_err(|e| RemoteError::Spawn(e.to_string()))?;
        Ok(Self {
            client,
            control: control(&metrics)?,
            admin: Some(admin),
            child: Some(child),
            fake_node: None,
            dir: Some(dir),
            kubeconfig,
        })
    }

    /// Connects to the cluster of `kubeconfig`. When it is our sim (its
    /// admin API answers), its requests are counted and, without
    /// `metrics_url`, nothing else is needed but the metrics server's URL;
    /// on a real cluster the harness's fake node is registered and the
    /// load's pods are placed on it.
    pub async fn connect(
        kubeconfig: &Path,
        metrics_url: Option<&str>,
    ) -> Result<Self, RemoteError> {
        let client = client_from(kubeconfig).await?;
        let server = kube::config::Kubeconfig::read_from(kubeconfig)
            .ok()
            .and_then(|k| k.clusters.into_iter().next())
            .and_then(|c| c.cluster)
            .and_then(|c| c.server);
        let admin = match server {
            Some(url) => match AdminClient::new(url) {
                Ok(admin) if admin.requests().await.is_ok() => Some(admin),
                _ => None,
            },
            None => None,
        };
        let metrics_url = metrics_url.ok_or(RemoteError::NoMetricsUrl)?;
        let fake_node = if admin.is_none() {
            let node = FakeNode::start(
                client.clone(),
                DEFAULT_NODE_NAME,
                std::sync::Arc::new(hpa_core::clock::SystemClock),
            )
            .await
            .map_err(|e| RemoteError::Setup {
                action: "register the fake node".into(),
                message: e.to_string(),
            })?;
            Some(node)
        } else {
            None
        };
        Ok(Self {
            client,
            control: control(metrics_url)?,
            admin,
            child: None,
            fake_node,
            dir: None,
            kubeconfig: kubeconfig.to_path_buf(),
        })
    }

    /// Whether the cluster is a real one (pods go on the fake node).
    pub fn is_real(&self) -> bool {
        self.fake_node.is_some()
    }

    /// The child process's id, when the sim runs as one.
    pub fn child_pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(tokio::process::Child::id)
    }

    /// Creates the namespaces (existing ones are fine).
    pub async fn create_namespaces(&self, names: &[String]) -> Result<(), RemoteError> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        for name in names {
            let ns = Namespace {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.clone()),
                    ..Default::default()
                },
                ..Default::default()
            };
            match api.create(&PostParams::default(), &ns).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(e) => {
                    return Err(RemoteError::Setup {
                        action: format!("create namespace {name}"),
                        message: e.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    fn metrics_error(&self, e: impl std::fmt::Display) -> RemoteError {
        RemoteError::Metrics {
            url: self.control.base_url().to_string(),
            message: e.to_string(),
        }
    }

    /// Replaces the fake metrics server's script: everything but the pods
    /// at once, then the pods in chunks (the control API takes bodies of a
    /// few MiB; 100,000 pods are more).
    pub async fn load_script(&self, script: &Script) -> Result<(), RemoteError> {
        let without_pods = Script {
            pods: Vec::new(),
            ..script.clone()
        };
        self.control
            .put_script(&without_pods)
            .await
            .map_err(|e| self.metrics_error(e))?;
        let pods: Vec<Change> = script.pods.iter().cloned().map(Change::Pod).collect();
        self.apply(&pods).await
    }

    /// Applies changes to the fake metrics server's script, in chunks.
    pub async fn apply(&self, changes: &[Change]) -> Result<(), RemoteError> {
        for chunk in changes.chunks(CHANGES_PER_REQUEST) {
            self.control
                .apply(chunk)
                .await
                .map_err(|e| self.metrics_error(e))?;
        }
        Ok(())
    }

    /// Zeroes the sim's request counters (nothing on a real cluster).
    pub async fn reset_requests(&self) -> Result<(), RemoteError> {
        if let Some(admin) = &self.admin {
            admin
                .reset_requests()
                .await
                .map_err(|e| RemoteError::Setup {
                    action: "reset the sim's request counters".into(),
                    message: e.to_string(),
                })?;
        }
        Ok(())
    }

    /// The sim's request counters by (verb, resource); `None` on a real
    /// cluster, where nothing counts them.
    pub async fn request_counts(
        &self,
    ) -> Result<Option<BTreeMap<(String, String), u64>>, RemoteError> {
        let Some(admin) = &self.admin else {
            return Ok(None);
        };
        let counts = admin.requests().await.map_err(|e| RemoteError::Setup {
            action: "read the sim's request counters".into(),
            message: e.to_string(),
        })?;
        Ok(Some(
            counts
                .requests
                .into_iter()
                .map(|c| ((c.verb, c.resource), c.count))
                .collect(),
        ))
    }

    /// Stops the child (if any), removes the fake node (if any).
    pub async fn stop(mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
        if let Some(node) = self.fake_node.take()
            && let Err(e) = node.remove().await
        {
            tracing::warn!(error = %e, "cannot remove the fake node");
        }
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
