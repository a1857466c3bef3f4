//! `Given the manifests in {string}`: a YAML file or a folder of them, as
//! `helm template` or kustomize render a chart, applied as written.

use std::path::{Path, PathBuf};

use cucumber::given;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::gherkin::kinds::KindRef;
use crate::gherkin::params::WorkloadKind;
use crate::gherkin::world::{HpaWorld, ObjKey, StepError, StepResult, Workload};

/// One document of a manifest file.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `file#n` (1-based), for messages.
    pub origin: String,
    pub object: Value,
}

#[given(expr = "the manifests in {string}")]
async fn the_manifests_in(world: &mut HpaWorld, path: String) -> StepResult {
    let base = world.feature_dir.clone().unwrap_or_default();
    let manifests = read_manifests(&base.join(&path))?;
    if manifests.is_empty() {
        return Err(StepError::Input(format!(
            "the manifests in {path:?}: no Kubernetes object found"
        )));
    }
    let mut workloads = Vec::new();
    for m in in_apply_order(manifests) {
        workloads.extend(apply(world, &m).await?);
    }
    if world.cluster.fake_node(world.real_node).is_some() {
        for (ns, name, kind) in workloads {
            wait_placed(world, &ns, &name, kind).await?;
        }
    }
    Ok(())
}

/// On a real cluster: waits until the cluster made a workload's pods and
/// the fake node placed each (a `PodScheduled` condition, true, or false
/// for a pod without room), so that the next steps, and the HPA
/// controller, see them as the scenario set them up.
async fn wait_placed(world: &mut HpaWorld, ns: &str, name: &str, kind: WorkloadKind) -> StepResult {
    let api = crate::gherkin::world::workload_api(&world.env().await?.client, ns, kind);
    // Setting up, not expecting: as long as a busy cluster's controllers
    // and the fake node take, within the bound of a real start.
    let deadline = tokio::time::Instant::now() + crate::gherkin::pods::REAL_START_TIMEOUT;
    loop {
        let placed = async |w: &mut HpaWorld| -> StepResult {
            let replicas = api
                .get(name)
                .await
                .map_err(StepError::kube(format!("reading {kind} {ns}/{name}")))?
                .data
                .pointer("/spec/replicas")
                .and_then(Value::as_u64)
                .unwrap_or(1);
            let pods = w.pods_of(ns, name).await?;
            let live: Vec<_> = pods
                .iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .collect();
            let placed = live
                .iter()
                .filter(|p| {
                    p.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| c.iter().any(|c| c.type_ == "PodScheduled"))
                })
                .count();
            if u64::try_from(live.len()) == Ok(replicas) && placed == live.len() {
                return Ok(());
            }
            Err(StepError::Expectation(format!(
                "{kind} {ns}/{name} should have {replicas} pods on the fake node; the cluster made {}, {placed} placed",
                live.len()
            )))
        };
        match placed(world).await {
            Err(StepError::Expectation(why)) if tokio::time::Instant::now() < deadline => {
                let _ = why;
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            Err(StepError::Expectation(why)) => return Err(StepError::State(why)),
            other => return other,
        }
    }
}

/// The documents of a YAML file, or of every `.yaml`/`.yml` file under a
/// folder (in path order). Empty documents (a chart's `---` lines between
/// `# Source:` comments) are left out.
pub fn read_manifests(path: &Path) -> Result<Vec<Manifest>, StepError> {
    let files = if path.is_dir() {
        let mut files = Vec::new();
        yaml_files(path, &mut files)?;
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| StepError::Input(format!("the manifests in {}: {e}", file.display())))?;
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).map_err(|e| {
            StepError::Input(format!(
                "the manifests in {}: the YAML does not parse: {e}",
                file.display()
            ))
        })?;
        for (i, doc) in docs.into_iter().enumerate() {
            if doc.is_null() || doc.as_object().is_some_and(serde_json::Map::is_empty) {
                continue;
            }
            let origin = format!("{} (document {})", file.display(), i + 1);
            if doc.get("kind").and_then(Value::as_str) == Some("List") {
                for item in doc
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    out.push(Manifest {
                        origin: origin.clone(),
                        object: item.clone(),
                    });
                }
            } else {
                out.push(Manifest {
                    origin,
                    object: doc,
                });
            }
        }
    }
    Ok(out)
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), StepError> {
    crate::gherkin::feature_files::files_under(dir, &["yaml", "yml"], out)
        .map_err(|(_, e)| StepError::Input(format!("the manifests in {}: {e}", dir.display())))
}

/// CRDs and namespaces first (what the rest needs), HPAs last (after their
/// targets); otherwise the order of the files.
pub fn in_apply_order(mut manifests: Vec<Manifest>) -> Vec<Manifest> {
    let rank = |m: &Manifest| match m.object.get("kind").and_then(Value::as_str) {
        Some("CustomResourceDefinition") => 0,
        Some("Namespace") => 1,
        Some("HorizontalPodAutoscaler") => 3,
        _ => 2,
    };
    manifests.sort_by_key(rank);
    manifests
}

/// How long a new CRD's kind may take to be served (a real API server
/// establishes it a moment after the create).
const ESTABLISH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Applies one object; a workload's namespace, name and kind.
async fn apply(
    world: &mut HpaWorld,
    m: &Manifest,
) -> Result<Option<(String, String, WorkloadKind)>, StepError> {
    let text = |k: &str| m.object.get(k).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if api_version.is_empty() || kind.is_empty() {
        return Err(StepError::Input(format!(
            "{}: an object needs apiVersion and kind",
            m.origin
        )));
    }
    if (api_version, kind) == ("keda.sh/v1alpha1", "ScaledObject") {
        // KEDA runs in the scenario itself (`world/keda.rs`).
        world.add_scaled_object(&m.object, &m.origin).await?;
        return Ok(None);
    }
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let described = served_kind(world, group, kind, &m.origin).await?;
    let resource = ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        plural: described.plural.clone(),
    };
    let name = m
        .object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut obj = m.object.clone();
    let ns = if described.namespaced {
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map_or_else(|| world.namespace.clone(), str::to_owned);
        obj["metadata"]["namespace"] = json!(ns);
        Some(ns)
    } else {
        None
    };
    let status = obj.get("status").cloned();
    if ns.is_some() && world.cluster.fake_node(world.real_node).is_some() {
        // On a real cluster the chart's pods go where the harness's own do:
        // else they wait, Pending, for a node with room.
        crate::testbed::workload::place_manifest_on_fake_node(&mut obj);
    }
    match &ns {
        Some(ns) => {
            world.create_dynamic(ns, &resource, obj.clone()).await?;
        }
        None => create_cluster_wide(world, &resource, &mut obj, &name, &m.origin).await?,
    }
    if kind == "CustomResourceDefinition" {
        // Its kind is served from now on: look again when asked.
        world.cluster.forget_served_kinds();
    }
    let ns_name = ns.clone().unwrap_or_default();
    let workload = workload_kind(group, kind);
    if let Some(workload) = workload {
        world.workloads.insert(
            ObjKey::new(ns_name.clone(), name.clone()),
            Workload {
                kind: workload,
                initial_replicas: obj
                    .pointer("/spec/replicas")
                    .and_then(Value::as_i64)
                    .and_then(|r| i32::try_from(r).ok())
                    .unwrap_or(1),
                selector: match_labels(&obj),
            },
        );
    } else if let Some(status) = status.filter(|_| !is_builtin(group)) {
        // A custom resource's status is its operator's to write; a
        // scenario stands in for the operator.
        write_status(world, ns.as_deref(), &resource, &name, status, &m.origin).await?;
    }
    Ok(workload.map(|w| (ns_name, name, w)))
}

/// The kind `kind` of `group` as the cluster serves it; on a wall clock,
/// waited for up to [`ESTABLISH_TIMEOUT`] (a CRD applied just before).
async fn served_kind(
    world: &mut HpaWorld,
    group: &str,
    kind: &str,
    origin: &str,
) -> Result<KindRef, StepError> {
    let word = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
    loop {
        match world.resolve_kind(&word).await {
            Ok(k) => return Ok(k),
            Err(e) => {
                let wall_clock = world.env().await?.is_real() || !world.env().await?.is_virtual();
                if !wall_clock || tokio::time::Instant::now() >= deadline {
                    return Err(StepError::Input(format!("{origin}: {e}")));
                }
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
        }
    }
}

/// Creates a cluster-wide object, marked as the scenario's; on a real
/// cluster one that exists already (another scenario's) is applied over.
async fn create_cluster_wide(
    world: &mut HpaWorld,
    resource: &ApiResource,
    obj: &mut Value,
    name: &str,
    origin: &str,
) -> StepResult {
    let kind = &resource.kind;
    obj["metadata"]["labels"][crate::testbed::cleanup::SCENARIO_LABEL] = json!("true");
    let client = world.env().await?.client.clone();
    let api: Api<DynamicObject> = Api::all_with(client, resource);
    let dynamic: DynamicObject = serde_json::from_value(obj.clone())
        .map_err(|e| StepError::Input(format!("{origin}: {e}")))?;
    let created = api.create(&PostParams::default(), &dynamic).await;
    let real = world.env().await?.is_real();
    match created {
        // On a real cluster scenarios side by side share what is
        // cluster-wide (a chart's CRD): the second applies it over
        // the first, as `kubectl apply` would.
        Err(kube::Error::Api(e)) if e.code == 409 && real => {
            api.patch(
                name,
                &PatchParams::apply("hpa-harness").force(),
                &Patch::Apply(&dynamic),
            )
            .await
            .map_err(StepError::kube(format!("{origin}: applying {kind} {name}")))?;
        }
        other => {
            other.map_err(StepError::kube(format!("{origin}: creating {kind} {name}")))?;
        }
    }
    Ok(())
}

/// Writes a custom resource's `status` as its operator would, through
/// `/status` where the CRD has it (on create the API server drops it);
/// without that subresource, nothing.
async fn write_status(
    world: &mut HpaWorld,
    ns: Option<&str>,
    resource: &ApiResource,
    name: &str,
    status: Value,
    origin: &str,
) -> StepResult {
    let client = world.env().await?.client.clone();
    let api: Api<DynamicObject> = match ns {
        Some(ns) => Api::namespaced_with(client, ns, resource),
        None => Api::all_with(client, resource),
    };
    match api
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": status})),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if matches!(s.code, 404 | 405) => Ok(()),
        Err(e) => Err(StepError::kube(format!(
            "{origin}: writing the status of {} {name}",
            resource.kind
        ))(e)),
    }
}

fn workload_kind(group: &str, kind: &str) -> Option<WorkloadKind> {
    match (group, kind) {
        ("apps", "Deployment") => Some(WorkloadKind::Deployment),
        ("apps", "StatefulSet") => Some(WorkloadKind::StatefulSet),
        ("apps", "ReplicaSet") => Some(WorkloadKind::ReplicaSet),
        _ => None,
    }
}

/// Groups of the API server's own kinds (their status is the cluster's).
fn is_builtin(group: &str) -> bool {
    group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io")
}

/// `spec.selector.matchLabels` as a label selector (`a=b,c=d`).
fn match_labels(obj: &Value) -> String {
    obj.pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_helm_render_splits_into_objects_in_apply_order() {
        let dir =
            std::env::temp_dir().join(format!("hpa-harness-manifests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("render.yaml");
        std::fs::write(
            &file,
            "---\n# Source: chart/templates/hpa.yaml\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\n---\n# Source: chart/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n",
        )
        .unwrap();
        let kinds: Vec<String> = in_apply_order(read_manifests(&dir).unwrap())
            .into_iter()
            .map(|m| m.object["kind"].as_str().unwrap().to_owned())
            .collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            kinds,
            [
                "CustomResourceDefinition",
                "Deployment",
                "HorizontalPodAutoscaler"
            ]
        );
    }

    #[test]
    fn match_labels_make_a_selector() {
        let obj = json!({"spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": "web", "tier": "api"}}}});
        assert_eq!(match_labels(&obj), "app.kubernetes.io/name=web,tier=api");
    }
}
