//! A real cluster made for one run: created (kind, k3d, k3s in a
//! container, or a genuine control plane from its binaries on this host),
//! given the fake metrics server (on the host, registered as the metrics
//! APIs), and deleted at the end (also on failure or Ctrl-C, unless
//! `HPA_HARNESS_KEEP_CLUSTER=1` keeps a kind or k3d cluster).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::control_plane::{ControlPlane, ControlPlaneError, ControlPlaneOptions};
use super::ephemeral::{ClusterError, EphemeralCluster, Provider};
use super::host_metrics::{self, HostMetricsError, HostMetricsServer, Route};
use super::preflight::MetricsServerRef;

/// How long the metrics APIServices may take to become Available.
const AVAILABLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Which kind of cluster to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Kind,
    K3d,
    /// k3s through testcontainers (feature `e2e`).
    K3s,
}

/// Why the run's cluster could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Metrics(#[from] HostMetricsError),
    #[error(transparent)]
    ControlPlane(#[from] ControlPlaneError),
    /// The kubeconfig of the new cluster does not work.
    #[error("the new cluster's kubeconfig {path}: {reason}")]
    Client { path: PathBuf, reason: String },
    /// This build has no k3s (feature `e2e`).
    #[error("k3s needs a build with `--features e2e`")]
    NoK3s,
    /// A blocking task failed.
    #[error("creating the cluster: {0}")]
    Task(String),
}

enum Handle {
    Ephemeral(EphemeralCluster),
    ControlPlane(Box<ControlPlane>),
    #[cfg(feature = "e2e")]
    K3s(Box<super::k3s::K3sCluster>),
}

/// A cluster ready for scenarios: its kubeconfig and the fake metrics
/// server's control URL.
pub struct ClusterSession {
    handle: Option<Handle>,
    kubeconfig: PathBuf,
    /// `None` only while it starts.
    metrics: Option<HostMetricsServer>,
}

impl std::fmt::Debug for ClusterSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSession")
            .field("kubeconfig", &self.kubeconfig)
            .field("metrics", &self.metrics)
            .finish_non_exhaustive()
    }
}

/// The cluster config a flavor uses, relative to the project root: the
/// built-in HPA controller off, or on for `--controller upstream`.
pub fn config_file(flavor: Flavor, upstream: bool) -> &'static str {
    match (flavor, upstream) {
        (Flavor::Kind, false) => "clusters/kind.yaml",
        (Flavor::Kind, true) => "clusters/kind-upstream.yaml",
        (Flavor::K3d, false) => "clusters/k3d.yaml",
        (Flavor::K3d, true) => "clusters/k3d-upstream.yaml",
        (Flavor::K3s, _) => "",
    }
}

impl ClusterSession {
    /// Creates the cluster (configs under `root`), starts the fake metrics
    /// server on the host and registers it, and waits until the metrics
    /// APIs are Available.
    pub async fn start(
        flavor: Flavor,
        upstream: bool,
        root: &Path,
        workdir: &Path,
    ) -> Result<Self, SessionError> {
        super::ephemeral::delete_on_interrupt();
        let (handle, kubeconfig, network) = match flavor {
            Flavor::Kind | Flavor::K3d => {
                let provider = if flavor == Flavor::Kind {
                    Provider::Kind
                } else {
                    Provider::K3d
                };
                let config = root.join(config_file(flavor, upstream));
                let workdir = workdir.to_path_buf();
                let cluster = tokio::task::spawn_blocking(move || {
                    EphemeralCluster::create(provider, &config, &workdir)
                })
                .await
                .map_err(|e| SessionError::Task(e.to_string()))??;
                let network = match flavor {
                    Flavor::Kind => "kind".to_owned(),
                    _ => format!("k3d-{}", cluster.name()),
                };
                let kubeconfig = cluster.kubeconfig().to_path_buf();
                (Handle::Ephemeral(cluster), kubeconfig, network)
            }
            #[cfg(feature = "e2e")]
            Flavor::K3s => {
                let cluster = super::k3s::K3sCluster::start(workdir, upstream).await?;
                let kubeconfig = cluster.kubeconfig().to_path_buf();
                (
                    Handle::K3s(Box::new(cluster)),
                    kubeconfig,
                    "bridge".to_owned(),
                )
            }
            #[cfg(not(feature = "e2e"))]
            Flavor::K3s => return Err(SessionError::NoK3s),
        };
        let host_ip = host_metrics::docker_gateway(&network)?;
        let all_interfaces = std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);
        Self::with_metrics(handle, kubeconfig, all_interfaces, Route::Endpoint(host_ip)).await
    }

    /// Starts a genuine control plane from its binaries, with the fake
    /// metrics server on loopback, and waits until the metrics APIs are
    /// Available.
    pub async fn control_plane(options: &ControlPlaneOptions) -> Result<Self, SessionError> {
        let plane = ControlPlane::start(options).await?;
        let kubeconfig = plane.kubeconfig().to_path_buf();
        let loopback = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
        let handle = Handle::ControlPlane(Box::new(plane));
        Self::with_metrics(
            handle,
            kubeconfig,
            loopback,
            Route::ExternalName("localhost".to_owned()),
        )
        .await
    }

    /// Gives the cluster of `handle` the fake metrics server, listening on
    /// `bind` and reached by `route`; takes the cluster down if that fails.
    async fn with_metrics(
        handle: Handle,
        kubeconfig: PathBuf,
        bind: std::net::IpAddr,
        route: Route,
    ) -> Result<Self, SessionError> {
        let mut session = Self {
            handle: Some(handle),
            kubeconfig,
            metrics: None,
        };
        match session.start_metrics(bind, &route).await {
            Ok(metrics) => {
                session.metrics = Some(metrics);
                Ok(session)
            }
            Err(e) => {
                if let Err(stop) = session.finish().await {
                    tracing::warn!(error = %stop, "taking down the run's cluster");
                }
                Err(e)
            }
        }
    }

    async fn start_metrics(
        &self,
        bind: std::net::IpAddr,
        route: &Route,
    ) -> Result<HostMetricsServer, SessionError> {
        let client = client(&self.kubeconfig).await?;
        let host = match route {
            Route::Endpoint(ip) => *ip,
            Route::ExternalName(_) => bind,
        };
        let metrics = HostMetricsServer::start(bind, host, client.clone()).await?;
        host_metrics::register(
            &client,
            &MetricsServerRef::default(),
            route,
            metrics.port,
            AVAILABLE_TIMEOUT,
        )
        .await?;
        Ok(metrics)
    }

    /// The control plane, when the session is one.
    pub fn control_plane_handle(&self) -> Option<&ControlPlane> {
        match &self.handle {
            Some(Handle::ControlPlane(plane)) => Some(plane),
            _ => None,
        }
    }

    /// The cluster's kubeconfig.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The fake metrics server's control URL.
    pub fn metrics_url(&self) -> &str {
        self.metrics.as_ref().map_or("", |m| m.control_url.as_str())
    }

    /// Deletes the cluster now (unless kept); a control plane stops.
    pub async fn finish(mut self) -> Result<(), SessionError> {
        // The metrics server's pod watch goes before the cluster does.
        self.metrics = None;
        match self.handle.take() {
            Some(Handle::ControlPlane(plane)) => plane.stop().await,
            Some(Handle::Ephemeral(cluster)) => {
                tokio::task::spawn_blocking(move || cluster.delete())
                    .await
                    .map_err(|e| SessionError::Task(e.to_string()))??;
            }
            #[cfg(feature = "e2e")]
            Some(Handle::K3s(cluster)) => cluster.delete().await?,
            None => {}
        }
        Ok(())
    }
}

async fn client(kubeconfig: &Path) -> Result<kube::Client, SessionError> {
    crate::testbed::kubeconfig::client(Some(kubeconfig), None)
        .await
        .map_err(|e| SessionError::Client {
            path: kubeconfig.to_path_buf(),
            reason: e.reason,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_file_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for flavor in [Flavor::Kind, Flavor::K3d] {
            for upstream in [false, true] {
                let file = root.join(config_file(flavor, upstream));
                let text = std::fs::read_to_string(&file).unwrap();
                assert_eq!(
                    text.contains("-horizontal-pod-autoscaler-controller"),
                    !upstream,
                    "{}: the built-in HPA controller must be off exactly when ours runs",
                    file.display()
                );
            }
        }
    }
}
