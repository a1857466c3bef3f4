//! A run on one cluster reached through a kubeconfig.
//!
//! On a simulated cluster every scenario resets the whole cluster (and its
//! virtual clock belongs to the scenario), so scenarios run one at a time.
//! On a real cluster (or one treated as real) each scenario has a namespace
//! of its own, its own controller watching only that namespace and its own
//! metrics in the shared fake metrics server (a metrics API one makes fail
//! fails in its namespace alone), so `--concurrency` of them run side by
//! side. The run clears what earlier runs left once, before
//! the first scenario, and deletes the namespaces it made when it ends or is
//! interrupted (SIGINT, SIGTERM).

use std::time::Duration;

use super::target::RemoteTarget;
use crate::testbed::cleanup::{self, Leftover};
use crate::testbed::start::TestbedError;

/// How long the run's namespaces may take to go at its end.
const GONE_TIMEOUT: Duration = Duration::from_secs(60);

/// What earlier runs left outside namespaces of their own (in namespaces
/// scenarios named) and in the fake metrics server.
pub(super) async fn clear_earlier_runs(target: &RemoteTarget) -> Result<(), TestbedError> {
    let failed = |reason: String| TestbedError::Cluster {
        backend: crate::testbed::BackendKind::Kubeconfig,
        reason,
    };
    cleanup::scenario_objects(&target.client)
        .await
        .map_err(|e| failed(format!("removing the objects of earlier scenarios: {e}")))?;
    target.metrics.reset().await.map_err(|e| {
        failed(format!(
            "resetting the fake metrics server at {}: {e}",
            target.metrics.base_url()
        ))
    })
}

/// Deletes the namespaces the run made and its scenarios did not (those
/// they named, and every one when the run was cut short), waiting a while
/// until they are gone.
pub(super) async fn delete_run_namespaces(target: &RemoteTarget, say: bool) {
    let names = target.shared.namespaces();
    if names.is_empty() {
        return;
    }
    if say {
        eprintln!("deleting the run's namespaces: {}", names.join(", "));
    }
    let items: Vec<Leftover> = names.into_iter().map(Leftover::Namespace).collect();
    if let Err(e) = cleanup::remove(&target.client, &items, GONE_TIMEOUT).await {
        eprintln!("warning: the run's namespaces: {e}; `hpa-harness cleanup` removes them later");
    }
}
