//! Reaching a cluster through a kubeconfig: find out whether it is our
//! simulated cluster (it answers the sim's admin API) or a real one; on a
//! real one, check it first (preflight: the metrics APIServices are the
//! fake metrics server's, the built-in HPA controller is off unless it is
//! the one under test) and register the fake node its pods go to.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use fake_metrics_server::client::ControlClient;
use hpa_core::clock::SystemClock;
use hpa_sim::admin::{AdminClient, ClockState, SimAdmin};

use super::kind::ControllerKind;
use super::kubeconfig::{self, KubeconfigError};
use crate::testbed::cluster::fake_node::{self, FakeNode};
use crate::testbed::cluster::preflight::{self, MetricsServerRef};

/// How to reach a cluster and its fake metrics server.
#[derive(Debug, Clone, Copy)]
pub struct ConnectOptions<'a> {
    /// The kubeconfig file; `None`: `$KUBECONFIG` or `~/.kube/config`.
    pub kubeconfig: Option<&'a Path>,
    /// The kubeconfig context; `None`: its current one.
    pub context: Option<&'a str>,
    /// The fake metrics server's control URL.
    pub metrics_url: &'a str,
    /// Whose HPA controller acts.
    pub controller: ControllerKind,
    /// The sync period of the cluster's own HPA controller.
    pub upstream_sync_period: Duration,
    /// Check a real cluster first: its metrics APIServices point at this
    /// Service (`None`: no check).
    pub preflight: Option<&'a MetricsServerRef>,
    /// Treat the cluster as real even when it answers the sim's admin API:
    /// wall clock, fake node, cleanup by label, no fault injection. Lets the
    /// real-cluster path be tested against `hpa-harness sim`.
    pub assume_real: bool,
    /// Which pods the fake node of a real cluster runs: the harness's own,
    /// or every pod of a cluster with no scheduler nor kubelet of its own
    /// (a control plane the run started).
    pub pod_scope: fake_node::PodScope,
}

/// Why a cluster cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The kubeconfig cannot be read or used.
    #[error(transparent)]
    Kubeconfig(#[from] KubeconfigError),
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
    /// No control client for the fake metrics server.
    #[error("fake metrics server at {url}: {message}")]
    Metrics { url: String, message: String },
}

/// A cluster reached through a kubeconfig, with its fake metrics server.
pub struct Connected {
    /// A client of the cluster.
    pub client: kube::Client,
    /// The sim's admin API, when the cluster is our simulated one.
    pub admin: Option<AdminClient>,
    /// The sim's clock when it answered.
    pub clock: Option<ClockState>,
    /// On a real cluster: the harness's fake node, which acts as the
    /// kubelet of the pods placed on it.
    pub fake_node: Option<FakeNode>,
    /// The fake metrics server's control client.
    pub metrics: ControlClient,
}

impl std::fmt::Debug for Connected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connected")
            .field("admin", &self.admin)
            .field("fake_node", &self.fake_node.as_ref().map(FakeNode::name))
            .finish_non_exhaustive()
    }
}

impl Connected {
    /// Whether the cluster is a real one.
    pub fn is_real(&self) -> bool {
        self.admin.is_none()
    }

    /// Removes the fake node (its Node and Lease), if there is one.
    pub async fn remove_fake_node(node: Option<FakeNode>) {
        if let Some(node) = node
            && let Err(e) = node.remove().await
        {
            tracing::warn!(error = %e, "removing the fake node");
        }
    }

    /// The admin side of the simulated cluster, shared.
    pub fn shared_admin(&self) -> Option<Arc<dyn SimAdmin>> {
        self.admin.clone().map(|a| Arc::new(a) as Arc<dyn SimAdmin>)
    }
}

/// Connects to the cluster of `options` and prepares it.
pub async fn connect(options: ConnectOptions<'_>) -> Result<Connected, ConnectError> {
    let metrics = ControlClient::new(options.metrics_url).map_err(|e| ConnectError::Metrics {
        url: options.metrics_url.to_owned(),
        message: e.to_string(),
    })?;
    let config = kubeconfig::config(options.kubeconfig, options.context).await?;
    let url = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).map_err(|e| KubeconfigError {
        path: options.kubeconfig.map(Path::to_path_buf),
        reason: e.to_string(),
    })?;
    // The simulated cluster serves plain HTTP: an https API server is a real
    // one, and probing it without its CA would only log TLS errors.
    if !options.assume_real
        && !url.starts_with("https:")
        && let Ok(admin) = AdminClient::new(url.trim_end_matches('/'))
        && let Ok(clock) = admin.clock().await
    {
        if clock.is_virtual && options.controller == ControllerKind::Upstream {
            return Err(ConnectError::UpstreamOnVirtualClock);
        }
        return Ok(Connected {
            client,
            admin: Some(admin),
            clock: Some(clock),
            fake_node: None,
            metrics,
        });
    }
    if let Some(service) = options.preflight {
        let mut problems = preflight::api_services(&client, service, Some(&metrics)).await?;
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
    let node = FakeNode::start(
        client.clone(),
        options.pod_scope.node_name(),
        Arc::new(SystemClock),
        options.pod_scope,
    )
    .await?;
    Ok(Connected {
        client,
        admin: None,
        clock: None,
        fake_node: Some(node),
        metrics,
    })
}
