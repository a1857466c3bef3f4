//! Where the scenarios of a run go: the embedded simulated cluster (one per
//! scenario, the default) or a cluster reached through a kubeconfig, with a
//! fake metrics server reached through its control URL.
//!
//! cucumber builds each scenario's world with no arguments, so the runner
//! scopes the target over the run ([`scope`]): cucumber runs scenarios as
//! futures inside the run's own task, where a task-local is visible.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::fake_node::FakeNode;

/// Whose HPA controller acts in the scenarios.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ControllerKind {
    /// Ours, run by the harness, synced when a step says so.
    #[default]
    Ours,
    /// kube-controller-manager's own, which syncs on its own schedule; the
    /// harness only waits and looks.
    Upstream,
}

impl ControllerKind {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ours => "ours",
            Self::Upstream => "upstream",
        }
    }
}

/// A cluster reached through a kubeconfig.
#[derive(Clone)]
pub struct RemoteTarget {
    /// The kubeconfig file; `None`: `$KUBECONFIG` or `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context; `None`: its current context.
    pub context: Option<String>,
    /// Base URL of the fake metrics server's control API (`/control/v1`),
    /// the one the cluster's metrics APIServices point at.
    pub metrics_control_url: String,
    /// Whose controller acts.
    pub controller: ControllerKind,
    /// The sync period of the cluster's own controller
    /// (`--horizontal-pod-autoscaler-sync-period`), for `--controller upstream`.
    pub upstream_sync_period: Duration,
    /// The harness's fake node, when scenario pods go to one (real clusters).
    pub fake_node: Option<Arc<FakeNode>>,
    /// Treat the cluster as real even if it is our simulated one.
    pub assume_real: bool,
}

impl std::fmt::Debug for RemoteTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTarget")
            .field("kubeconfig", &self.kubeconfig)
            .field("context", &self.context)
            .field("metrics_control_url", &self.metrics_control_url)
            .field("controller", &self.controller)
            .field("upstream_sync_period", &self.upstream_sync_period)
            .field("fake_node", &self.fake_node.as_ref().map(|n| n.name()))
            .field("assume_real", &self.assume_real)
            .finish()
    }
}

/// Where the scenarios of this process run.
#[derive(Debug, Clone, Default)]
pub enum Target {
    /// A fresh embedded simulated cluster per scenario.
    #[default]
    Embedded,
    /// One cluster for every scenario, one scenario at a time.
    Remote(RemoteTarget),
}

tokio::task_local! {
    static TARGET: Target;
}

/// Runs `run` with its scenarios going to `target`.
pub async fn scope<F: std::future::Future>(target: Target, run: F) -> F::Output {
    TARGET.scope(target, run).await
}

/// Where the scenarios of the current run go (embedded outside a scope).
pub fn current() -> Target {
    TARGET.try_with(Clone::clone).unwrap_or_default()
}
