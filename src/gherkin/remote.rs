//! Preparing a cluster reached through a kubeconfig for a run of
//! scenarios: the testbed connects ([`crate::testbed::connect`]); here the
//! command-line options become its options and the connection the
//! scenarios' target.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::target::{ControllerKind, RemoteTarget};
use crate::testbed::cluster::preflight::MetricsServerRef;
use crate::testbed::connect::{self, ConnectError, ConnectOptions};

/// How to reach a cluster and its fake metrics server.
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    /// The kubeconfig file; `None`: `$KUBECONFIG` or `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context; `None`: its current one.
    pub context: Option<String>,
    /// The fake metrics server's control URL.
    pub metrics_url: Option<String>,
    /// Whose HPA controller acts.
    pub controller: ControllerKind,
    /// The sync period of the cluster's own HPA controller.
    pub upstream_sync_period: Duration,
    /// Where fake-metrics-server's Service is, for the APIService check.
    pub metrics_service: MetricsServerRef,
    /// Skip the preflight checks of a real cluster.
    pub skip_preflight: bool,
    /// Treat the cluster as real even when it answers the sim's admin API:
    /// wall clock, fake node, cleanup by label, no fault injection. Lets the
    /// real-cluster path be tested against `hpa-harness sim` (on its wall
    /// clock) where no real cluster is at hand.
    pub assume_real: bool,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        Self {
            kubeconfig: None,
            context: None,
            metrics_url: None,
            controller: ControllerKind::Ours,
            upstream_sync_period: Duration::from_secs(15),
            metrics_service: MetricsServerRef::default(),
            skip_preflight: false,
            assume_real: false,
        }
    }
}

/// Why a cluster cannot take the run.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// No control URL for the fake metrics server.
    #[error(
        "--metrics-url is needed: the control URL (http://HOST:PORT) of the fake metrics server the cluster's metrics APIServices point at"
    )]
    NoMetricsUrl,
    /// The cluster or its metrics server cannot be used.
    #[error(transparent)]
    Connect(#[from] ConnectError),
}

/// A prepared cluster: the scenarios' target, and the fake node to remove
/// at the end.
#[derive(Debug)]
pub struct RemoteSession {
    pub target: RemoteTarget,
    /// Whether the cluster is our simulated one.
    pub simulated: bool,
}

impl RemoteSession {
    /// Removes the fake node (its Node and Lease), if there is one.
    pub async fn finish(self) {
        if let Some(node) = self.target.fake_node {
            connect::Connected::remove_fake_node(Arc::try_unwrap(node).ok()).await;
        }
    }
}

/// Connects to the cluster of `options` and prepares it.
pub async fn connect(options: &RemoteOptions) -> Result<RemoteSession, RemoteError> {
    let metrics_url = options
        .metrics_url
        .as_deref()
        .ok_or(RemoteError::NoMetricsUrl)?;
    let connected = connect::connect(ConnectOptions {
        kubeconfig: options.kubeconfig.as_deref(),
        context: options.context.as_deref(),
        metrics_url,
        controller: options.controller,
        upstream_sync_period: options.upstream_sync_period,
        preflight: (!options.skip_preflight).then_some(&options.metrics_service),
        assume_real: options.assume_real,
    })
    .await?;
    let simulated = !connected.is_real();
    let admin = connected.shared_admin();
    Ok(RemoteSession {
        target: RemoteTarget {
            client: connected.client,
            admin,
            metrics_control_url: metrics_url.to_owned(),
            controller: options.controller,
            upstream_sync_period: options.upstream_sync_period,
            fake_node: connected.fake_node.map(Arc::new),
            shared: Arc::default(),
        },
        simulated,
    })
}
