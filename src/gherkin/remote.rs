//! Preparing a cluster reached through a kubeconfig for a run: find out
//! whether it is our simulated cluster (it answers the sim's admin API) or a
//! real one; on a real one, check it first (preflight: the metrics
//! APIServices are the fake metrics server's, the built-in HPA controller is
//! off unless it is the one under test) and register the fake node the
//! scenario pods go to.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hpa_core::clock::SystemClock;
use hpa_sim::admin::AdminClient;

use super::target::{ControllerKind, RemoteTarget};
use crate::cluster::fake_node::{self, FakeNode};
use crate::cluster::preflight::{self, MetricsServerRef};

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
    /// The kubeconfig cannot be read or used.
    #[error("kubeconfig {what}: {reason}")]
    Kubeconfig { what: String, reason: String },
    /// Preflight found problems or could not look.
    #[error(transparent)]
    Preflight(#[from] preflight::PreflightError),
    /// The fake node could not be registered.
    #[error(transparent)]
    FakeNode(#[from] fake_node::FakeNodeError),
    /// Our simulated cluster runs on a virtual clock, which the cluster's own
    /// controller would not follow.
    #[error(
        "--controller upstream needs a controller that syncs on its own; this simulated cluster runs on a virtual clock (start `hpa-harness sim` without --virtual-clock and run an HPA controller against it)"
    )]
    UpstreamOnVirtualClock,
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
        if let Some(node) = self.target.fake_node
            && let Ok(node) = Arc::try_unwrap(node)
            && let Err(e) = node.remove().await
        {
            tracing::warn!(error = %e, "removing the fake node");
        }
    }
}

/// Connects to the cluster of `options` and prepares it.
pub async fn connect(options: &RemoteOptions) -> Result<RemoteSession, RemoteError> {
    let metrics_url = options
        .metrics_url
        .clone()
        .ok_or(RemoteError::NoMetricsUrl)?;
    let what = options
        .kubeconfig
        .as_ref()
        .map_or_else(|| "(default)".to_owned(), |p| p.display().to_string());
    let kube_err = |reason: String| RemoteError::Kubeconfig {
        what: what.clone(),
        reason,
    };
    let kubeconfig = match &options.kubeconfig {
        Some(path) => kube::config::Kubeconfig::read_from(path),
        None => kube::config::Kubeconfig::read(),
    }
    .map_err(|e| kube_err(e.to_string()))?;
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions {
            context: options.context.clone(),
            ..Default::default()
        },
    )
    .await
    .map_err(|e| kube_err(e.to_string()))?;
    let url = config.cluster_url.to_string();
    let admin = AdminClient::new(url.trim_end_matches('/')).map_err(|e| kube_err(e.to_string()))?;
    let mut target = RemoteTarget {
        kubeconfig: options.kubeconfig.clone(),
        context: options.context.clone(),
        metrics_control_url: metrics_url,
        controller: options.controller,
        upstream_sync_period: options.upstream_sync_period,
        fake_node: None,
        assume_real: options.assume_real,
    };
    if !options.assume_real
        && let Ok(clock) = admin.clock().await
    {
        if clock.is_virtual && options.controller == ControllerKind::Upstream {
            return Err(RemoteError::UpstreamOnVirtualClock);
        }
        return Ok(RemoteSession {
            target,
            simulated: true,
        });
    }
    let client = kube::Client::try_from(config).map_err(|e| kube_err(e.to_string()))?;
    if !options.skip_preflight {
        let mut problems = preflight::api_services(&client, &options.metrics_service).await?;
        problems.extend(
            preflight::builtin_hpa_controller(
                &client,
                options.controller == ControllerKind::Upstream,
                options.upstream_sync_period + Duration::from_secs(5),
            )
            .await?,
        );
        preflight::verdict(problems)?;
    }
    let node = FakeNode::start(client, fake_node::DEFAULT_NODE_NAME, Arc::new(SystemClock)).await?;
    target.fake_node = Some(Arc::new(node));
    Ok(RemoteSession {
        target,
        simulated: false,
    })
}
