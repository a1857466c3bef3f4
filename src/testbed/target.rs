//! Where the scenarios of a run go: the embedded simulated cluster (one per
//! scenario, the default) or one cluster reached through a kubeconfig and
//! shared by every scenario: one at a time on a simulated one (each resets
//! it), side by side in namespaces of their own on a real one.

use std::sync::Arc;
use std::time::Duration;

use fake_metrics_server::client::ControlClient;
use hpa_sim::admin::SimAdmin;

use super::kind::ControllerKind;
use crate::testbed::cluster::fake_node::FakeNode;

/// A cluster reached through a kubeconfig, ready for scenarios.
#[derive(Clone)]
pub struct RemoteTarget {
    /// A client of the cluster.
    pub client: kube::Client,
    /// The simulated cluster's admin side; `None` on a real cluster (or one
    /// treated as real).
    pub admin: Option<Arc<dyn SimAdmin>>,
    /// The fake metrics server the cluster's metrics APIServices point at,
    /// through its control API (`/control/v1`).
    pub metrics: ControlClient,
    /// Whose controller acts.
    pub controller: ControllerKind,
    /// The sync period of the cluster's own controller
    /// (`--horizontal-pod-autoscaler-sync-period`), for `--controller upstream`.
    pub upstream_sync_period: Duration,
    /// The harness's fake node, when scenario pods go to one (real clusters).
    pub fake_node: Option<Arc<FakeNode>>,
    /// What the run's scenarios share on the cluster.
    pub shared: Arc<super::shared::RunShared>,
    /// Our controller as a binary of its own, when asked.
    pub controller_binary: Option<ControllerBinary>,
    /// A real cluster's release (its `/version`): its scenarios run under
    /// it, and one pinned to another release cannot run there.
    pub release: Option<hpa_core::KubernetesVersion>,
    /// The API server's feature gates, where the run knows them (a control
    /// plane it started): a scenario that needs another value of a gate
    /// the API server consults (HPAScaleToZero validates `minReplicas: 0`,
    /// HPAConfigurableTolerance keeps `tolerance`) cannot run there.
    pub server_gates: Option<hpa_core::FeatureGates>,
    /// The HPA flags of the cluster's kube-controller-manager, where the
    /// run knows them (a control plane it started).
    pub manager_flags: Option<Vec<String>>,
}

/// The `hpa-controller` binary each scenario runs as a process, and how it
/// reaches the cluster.
#[derive(Debug, Clone)]
pub struct ControllerBinary {
    pub path: std::path::PathBuf,
    pub kubeconfig: Option<std::path::PathBuf>,
    pub context: Option<String>,
}

impl std::fmt::Debug for RemoteTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTarget")
            .field("simulated", &self.admin.is_some())
            .field("metrics", &self.metrics.base_url())
            .field("controller", &self.controller)
            .field("upstream_sync_period", &self.upstream_sync_period)
            .field("fake_node", &self.fake_node.as_ref().map(|n| n.name()))
            .finish_non_exhaustive()
    }
}

/// Where the scenarios of this process run.
#[derive(Debug, Clone, Default)]
pub enum Target {
    /// A fresh embedded simulated cluster per scenario.
    #[default]
    Embedded,
    /// One cluster for every scenario.
    Remote(Box<RemoteTarget>),
}

impl RemoteTarget {
    /// Whether the cluster is a real one (or treated as one): scenarios
    /// keep to namespaces of their own and may run side by side.
    pub fn is_real(&self) -> bool {
        self.admin.is_none()
    }
}

impl Target {
    /// Whose controller acts.
    pub fn controller(&self) -> ControllerKind {
        match self {
            Self::Embedded => ControllerKind::Ours,
            Self::Remote(r) => r.controller,
        }
    }
}
