//! Clearing what scenarios leave on a shared real cluster: everything a
//! scenario creates carries [`SCENARIO_LABEL`]. A run starts by deleting
//! what earlier runs left in namespaces they did not make and waiting until
//! it is gone, so that names like `web` can be used again; a scenario that
//! names a namespace clears that namespace first; namespaces a run made go
//! when their scenario ends or the run is interrupted; and
//! `hpa-harness cleanup` removes what runs killed outright left
//! ([`leftovers`], [`remove`]).

use std::time::Duration;

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams};

/// The label on every object a scenario creates.
pub const SCENARIO_LABEL: &str = "hpa-harness.io/scenario";

/// The label on every object a load run creates.
pub const LOAD_LABEL: &str = "hpa-harness.io/load";

/// The finalizer that holds a scenario's terminating pods in place (a pod
/// the scenario says is being deleted stays, terminating, until the
/// scenario ends).
pub const HOLD_FINALIZER: &str = "hpa-harness.io/terminating";

/// Lets go of the pods [`HOLD_FINALIZER`] holds in `namespace` (`None`:
/// all), so that their deletion and their namespace's can finish; returns
/// how many it let go.
pub async fn release_held_pods(
    client: &kube::Client,
    namespace: Option<&str>,
) -> Result<usize, kube::Error> {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Patch, PatchParams};
    let pods: Api<Pod> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let mut released = 0;
    for pod in pods.list(&ListParams::default()).await?.items {
        let held = pod.metadata.finalizers.as_ref();
        if !held.is_some_and(|f| f.iter().any(|f| f == HOLD_FINALIZER)) {
            continue;
        }
        let (Some(ns), Some(name)) = (pod.metadata.namespace.clone(), pod.metadata.name.clone())
        else {
            continue;
        };
        let rest: Vec<&String> = held
            .into_iter()
            .flatten()
            .filter(|f| *f != HOLD_FINALIZER)
            .collect();
        let patch = serde_json::json!({"metadata": {
            "finalizers": rest,
            "resourceVersion": pod.metadata.resource_version,
        }});
        let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => released += 1,
            Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(released)
}

/// How long the objects of earlier scenarios may take to go.
const GONE_TIMEOUT: Duration = Duration::from_secs(120);

fn resources() -> [ApiResource; 4] {
    let apps = |kind: &str, plural: &str| ApiResource {
        group: "apps".into(),
        version: "v1".into(),
        api_version: "apps/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    };
    [
        ApiResource::erase::<HorizontalPodAutoscaler>(&()),
        apps("Deployment", "deployments"),
        apps("StatefulSet", "statefulsets"),
        apps("ReplicaSet", "replicasets"),
    ]
}

/// Deletes every object (in every namespace) an earlier scenario created,
/// with their pods, and waits until they are gone.
pub async fn scenario_objects(client: &kube::Client) -> Result<(), kube::Error> {
    scenario_objects_in(client, None).await.map(|_| ())
}

/// An API of `resource` in `namespace`, or in all.
fn api_in(
    client: &kube::Client,
    namespace: Option<&str>,
    resource: &ApiResource,
) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, resource),
        None => Api::all_with(client.clone(), resource),
    }
}

/// [`scenario_objects`] in one namespace (`None`: all); returns how many
/// HPAs it deleted.
pub async fn scenario_objects_in(
    client: &kube::Client,
    namespace: Option<&str>,
) -> Result<usize, kube::Error> {
    let selector = ListParams::default().labels(&format!("{SCENARIO_LABEL}=true"));
    let delete = DeleteParams::foreground();
    let mut hpas = 0;
    for resource in resources() {
        let api = api_in(client, namespace, &resource);
        for obj in api.list(&selector).await?.items {
            let (Some(ns), Some(name)) = (obj.metadata.namespace, obj.metadata.name) else {
                continue;
            };
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &resource);
            match api.delete(&name, &delete).await {
                Ok(_) => {
                    if resource.kind == "HorizontalPodAutoscaler" {
                        hpas += 1;
                    }
                }
                Err(kube::Error::Api(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }
    let deadline = tokio::time::Instant::now() + GONE_TIMEOUT;
    for resource in resources() {
        let api = api_in(client, namespace, &resource);
        while !api.list(&selector).await?.items.is_empty() && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    // In a namespace the next scenario uses too, the pods of what went must
    // be gone as well: a pod that lingers, terminating, still matches the
    // next workload of the same name and would take its first pod's name.
    if let Some(ns) = namespace {
        let _ = release_held_pods(client, Some(ns)).await;
        let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), ns);
        let managed = ListParams::default().labels(&format!(
            "{}=true",
            super::cluster::fake_node::MANAGED_POD_LABEL
        ));
        while !pods.list(&managed).await?.items.is_empty() && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    Ok(hpas)
}

/// Why `hpa-harness cleanup` or an interrupted run's cleanup failed.
#[derive(Debug, thiserror::Error)]
pub enum CleanupError {
    /// A list or delete request failed.
    #[error("{action}: {}", super::env::kube_error_text(source))]
    Kube { action: String, source: kube::Error },
    /// Deleted objects were still there when the wait ended.
    #[error("still there after {}s: {}", .waited.as_secs(), .left.join(", "))]
    NotGone { waited: Duration, left: Vec<String> },
}

fn kube_err(action: impl Into<String>) -> impl FnOnce(kube::Error) -> CleanupError {
    let action = action.into();
    move |source| CleanupError::Kube { action, source }
}

/// The labels that mark what the harness creates: scenarios' objects and
/// namespaces, and load runs' namespaces.
pub fn harness_labels() -> [&'static str; 2] {
    [SCENARIO_LABEL, LOAD_LABEL]
}

/// Something an earlier run left: a namespace (with all in it), or a
/// labelled object in a namespace the harness did not make.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Leftover {
    Namespace(String),
    Object {
        kind: String,
        namespace: String,
        name: String,
    },
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Namespace(name) => write!(f, "namespace {name}"),
            Self::Object {
                kind,
                namespace,
                name,
            } => write!(f, "{kind} {namespace}/{name}"),
        }
    }
}

/// What the harness's labels find on the cluster: namespaces first, then
/// objects outside them.
pub async fn leftovers(client: &kube::Client) -> Result<Vec<Leftover>, CleanupError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut found = std::collections::BTreeSet::new();
    for label in harness_labels() {
        let list = namespaces
            .list(&ListParams::default().labels(label))
            .await
            .map_err(kube_err(format!("listing the namespaces labelled {label}")))?;
        found.extend(list.items.into_iter().filter_map(|n| n.metadata.name));
    }
    let mut out: Vec<Leftover> = found.iter().cloned().map(Leftover::Namespace).collect();
    for resource in resources() {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        for label in harness_labels() {
            let list = api
                .list(&ListParams::default().labels(label))
                .await
                .map_err(kube_err(format!(
                    "listing the {} labelled {label}",
                    resource.plural
                )))?;
            for obj in list.items {
                let (Some(namespace), Some(name)) = (obj.metadata.namespace, obj.metadata.name)
                else {
                    continue;
                };
                if !found.contains(&namespace) {
                    out.push(Leftover::Object {
                        kind: resource.kind.clone(),
                        namespace,
                        name,
                    });
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Deletes `items` (objects with their pods) and waits until they are gone,
/// up to `timeout`.
pub async fn remove(
    client: &kube::Client,
    items: &[Leftover],
    timeout: Duration,
) -> Result<(), CleanupError> {
    for item in items {
        let done = match locate(client, item) {
            Located::Namespace(api, name) => {
                // Pods a scenario held terminating would hold the
                // namespace forever.
                if let Err(e) = release_held_pods(client, Some(&name)).await {
                    tracing::debug!(namespace = %name, error = %e, "letting go of held pods");
                }
                api.delete(&name, &DeleteParams::background())
                    .await
                    .map(|_| ())
            }
            Located::Object(api, name) => api
                .delete(&name, &DeleteParams::foreground())
                .await
                .map(|_| ()),
        };
        match done {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(kube_err(format!("deleting {item}"))(e)),
        }
    }
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let mut left = Vec::new();
        for item in items {
            let there = match locate(client, item) {
                Located::Namespace(api, name) => api.get_opt(&name).await.map(|o| o.is_some()),
                Located::Object(api, name) => api.get_opt(&name).await.map(|o| o.is_some()),
            }
            .map_err(kube_err(format!("reading {item}")))?;
            if there {
                left.push(item.to_string());
            }
        }
        if left.is_empty() {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(CleanupError::NotGone {
                waited: timeout,
                left,
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Where a leftover is deleted and read.
enum Located {
    Namespace(Api<Namespace>, String),
    Object(Api<DynamicObject>, String),
}

fn locate(client: &kube::Client, item: &Leftover) -> Located {
    match item {
        Leftover::Namespace(name) => Located::Namespace(Api::all(client.clone()), name.clone()),
        Leftover::Object {
            kind,
            namespace,
            name,
        } => {
            let resource = resources()
                .into_iter()
                .find(|r| &r.kind == kind)
                .unwrap_or_else(|| resources()[0].clone());
            Located::Object(
                Api::namespaced_with(client.clone(), namespace, &resource),
                name.clone(),
            )
        }
    }
}
