//! Reading a kubeconfig into a client configuration for every place of the
//! harness that reaches a cluster through one; the reading itself is the
//! controller's (`hpa_controller::kubeconfig`), so `hpa-controller
//! --kubeconfig` and the harness read a kubeconfig the same way.

use std::path::{Path, PathBuf};

/// Why a kubeconfig gives no usable client.
#[derive(Debug, thiserror::Error)]
#[error("kubeconfig {}: {reason}", .path.as_ref().map_or_else(|| "(default)".to_owned(), |p| p.display().to_string()))]
pub struct KubeconfigError {
    /// The file; `None`: `$KUBECONFIG` or `~/.kube/config`.
    pub path: Option<PathBuf>,
    /// What failed.
    pub reason: String,
}

impl KubeconfigError {
    fn new(path: Option<&Path>, reason: impl std::fmt::Display) -> Self {
        Self {
            path: path.map(Path::to_path_buf),
            reason: reason.to_string(),
        }
    }
}

/// The client configuration of `path` (`None`: `$KUBECONFIG` or
/// `~/.kube/config`) and `context` (`None`: its current one).
pub async fn config(
    path: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Config, KubeconfigError> {
    hpa_controller::kubeconfig::load(path, context)
        .await
        .map_err(|e| KubeconfigError::new(path, e.kube_error()))
}

/// A client of the cluster of `path` and `context`.
pub async fn client(
    path: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Client, KubeconfigError> {
    let config = config(path, context).await?;
    kube::Client::try_from(config).map_err(|e| KubeconfigError::new(path, e))
}

/// A client for the controller under test, built as `hpa-harness
/// controller` builds its own: no retries, bounded requests, and a
/// `--kube-api-qps` / `--kube-api-burst` bucket per upstream clientset.
pub async fn controller_client(
    path: Option<&Path>,
    context: Option<&str>,
    qps: f64,
    burst: u32,
) -> Result<kube::Client, KubeconfigError> {
    let config = config(path, context).await?;
    hpa_controller::client::controller_client(
        config,
        qps,
        burst,
        hpa_controller::client::REQUEST_TIMEOUT,
    )
    .map_err(|e| KubeconfigError::new(path, e))
}
