//! What a load run leaves behind: nothing. Everything it creates carries
//! [`LOAD_LABEL`]; its namespaces are deleted when the run ends, is
//! interrupted (SIGINT, SIGTERM) or fails, which takes their Deployments,
//! pods and HPAs along; namespaces of an earlier run that was killed
//! outright are found by the label and deleted before the next builds.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams};

use super::options::LoadError;

/// The label on every object a load run creates (declared beside the
/// scenarios' label, where the testbed's cleanup finds both).
pub use crate::testbed::cleanup::LOAD_LABEL;

/// How long the load waits for its deleted namespaces to make progress
/// before it gives up. A real cluster's namespace controller deletes their
/// content first, namespaces in parallel, and each pod goes only once its
/// kubelet (here the fake node) confirms it: on a genuine control plane
/// 3,000 pods in 30 namespaces take minutes, with no namespace gone for the
/// first of them. So the wait lasts as long as either namespaces or pods go.
const STALL: Duration = Duration::from_secs(180);

/// How often the load lists its namespaces while they go.
const POLL: Duration = Duration::from_secs(1);

/// A wait for deleted namespaces to go: it gives up only when neither a
/// namespace nor a pod went for [`STALL`].
#[derive(Debug, Clone)]
struct GoneWait {
    /// The fewest namespaces seen.
    namespaces: usize,
    /// The cluster's pods at the last look.
    pods: u64,
    last_progress: Instant,
}

impl GoneWait {
    fn new(namespaces: usize, now: Instant) -> Self {
        Self {
            namespaces,
            pods: u64::MAX,
            last_progress: now,
        }
    }

    /// Counts the `namespaces` left and the cluster's `pods` at `now`
    /// (`u64::MAX` when the cluster does not say): whether the wait has
    /// stalled.
    fn stalled(&mut self, namespaces: usize, pods: u64, now: Instant) -> bool {
        if namespaces < self.namespaces || pods < self.pods {
            self.last_progress = now;
        }
        self.namespaces = self.namespaces.min(namespaces);
        self.pods = pods;
        namespaces > 0 && now.saturating_duration_since(self.last_progress) >= STALL
    }
}

/// How many pods the cluster holds: one pod listed, and the count of the
/// rest the API server gives with it (it gives none for a list with a
/// selector, so the list is of every namespace's pods; the load's are most
/// of them). `u64::MAX` when the server does not count.
async fn cluster_pods(client: &kube::Client) -> u64 {
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::all(client.clone());
    match pods.list_metadata(&ListParams::default().limit(1)).await {
        Ok(list) => pods_counted(list.items.len(), list.metadata.remaining_item_count),
        Err(_) => u64::MAX,
    }
}

/// The pods a list of `listed` items and `remaining` more holds.
fn pods_counted(listed: usize, remaining: Option<i64>) -> u64 {
    match remaining {
        Some(rest) => listed as u64 + u64::try_from(rest).unwrap_or(0),
        // No count: a list that ended here holds what it listed.
        None if listed == 0 => 0,
        None => u64::MAX,
    }
}

/// The labels of the load's objects.
pub fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([(LOAD_LABEL.to_owned(), "true".to_owned())])
}

/// Whether a namespace was made by a load run.
pub fn is_load_namespace(ns: &Namespace) -> bool {
    ns.metadata
        .labels
        .as_ref()
        .is_some_and(|l| l.contains_key(LOAD_LABEL))
}

fn setup(action: String) -> impl FnOnce(kube::Error) -> LoadError {
    move |source| LoadError::Setup { action, source }
}

/// The namespaces an earlier load run left (it was killed before it could
/// clean up).
pub async fn leftovers(client: &kube::Client) -> Result<Vec<String>, LoadError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let list = api
        .list(&ListParams::default().labels(LOAD_LABEL))
        .await
        .map_err(setup("list the namespaces of earlier load runs".into()))?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect())
}

/// Deletes the load namespaces among `names` (those with [`LOAD_LABEL`];
/// absent ones are fine) and waits until they are gone.
pub async fn delete_namespaces(client: &kube::Client, names: &[String]) -> Result<(), LoadError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let mut deleting = Vec::new();
    for name in names {
        match api.get_opt(name).await {
            Ok(Some(ns)) if is_load_namespace(&ns) => {}
            Ok(_) => continue,
            Err(e) => return Err(setup(format!("read namespace {name}"))(e)),
        }
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => deleting.push(name.clone()),
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(setup(format!("delete namespace {name}"))(e)),
        }
    }
    let mut wait = GoneWait::new(deleting.len(), Instant::now());
    while !deleting.is_empty() {
        // One list of the load's namespaces a poll, not a read of each.
        let present: std::collections::HashSet<String> = api
            .list(&ListParams::default().labels(LOAD_LABEL))
            .await
            .map_err(setup("list the load's namespaces".into()))?
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect();
        deleting.retain(|name| present.contains(name));
        if deleting.is_empty() {
            break;
        }
        let pods = cluster_pods(client).await;
        if wait.stalled(deleting.len(), pods, Instant::now()) {
            return Err(LoadError::Invalid(format!(
                "the load's namespaces {} were deleted but are still there, none of them and none of the cluster's pods gone for {}s",
                deleting.join(", "),
                STALL.as_secs()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
    Ok(())
}

/// Why a namespace the load wants to create cannot be its own: it exists
/// without [`LOAD_LABEL`] (someone else's, or an older harness's).
pub fn foreign_namespace(name: &str) -> String {
    format!(
        "namespace {name} exists but was not made by a load run (no label {LOAD_LABEL}): the load does not build in, or delete, a namespace it did not make; delete it (kubectl delete namespace {name}) or run on another cluster"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_labelled_namespaces_are_the_loads() {
        let mut ns = Namespace::default();
        assert!(!is_load_namespace(&ns));
        ns.metadata.labels = Some(labels());
        assert!(is_load_namespace(&ns));
        assert!(foreign_namespace("load-0").contains("kubectl delete namespace load-0"));
    }

    #[test]
    fn the_wait_for_deleted_namespaces_lasts_while_namespaces_or_pods_go() {
        let start = Instant::now();
        let secs = |n: u64| start + Duration::from_secs(n);
        // Ten minutes of namespaces going, one every 20 s: never stalled (a
        // fixed deadline of STALL gave up after 180 s).
        let mut wait = GoneWait::new(30, start);
        for i in 1..=30 {
            assert!(!wait.stalled(30 - i as usize, 0, secs(20 * i)), "at {i}");
        }
        // Five minutes with every namespace still there but their pods
        // going (deleted in parallel): never stalled.
        let mut wait = GoneWait::new(30, start);
        for i in 1..=30 {
            assert!(!wait.stalled(30, 3_000 - 100 * i, secs(10 * i)), "at {i}");
        }
        // Pods not counted at first, then counted and going.
        let mut wait = GoneWait::new(30, start);
        assert!(!wait.stalled(30, u64::MAX, secs(1)));
        assert!(!wait.stalled(30, 3_000, secs(100)));
        assert!(!wait.stalled(30, 2_900, secs(150)));
        assert!(!wait.stalled(30, 2_900, secs(150) + STALL - Duration::from_secs(1)));
        assert!(wait.stalled(30, 2_900, secs(150) + STALL));
        // Neither: stalled STALL after the last progress, not before.
        let mut wait = GoneWait::new(30, start);
        assert!(!wait.stalled(29, 500, secs(10)));
        let last = secs(10) + STALL;
        assert!(!wait.stalled(29, 500, last - Duration::from_secs(1)));
        assert!(wait.stalled(29, 500, last));
        // Nothing left: done, however long it took.
        assert!(!wait.stalled(0, 0, start + 10 * STALL));
    }

    #[test]
    fn the_clusters_pods_are_those_listed_and_those_counted_after() {
        assert_eq!(pods_counted(1, Some(2_116)), 2_117);
        assert_eq!(pods_counted(0, None), 0);
        // The server did not count: unknown, never progress.
        assert_eq!(pods_counted(1, None), u64::MAX);
    }
}
