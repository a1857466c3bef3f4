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

/// How long deleted namespaces may take to go (a real cluster finalizes
/// their content first).
const GONE_TIMEOUT: Duration = Duration::from_secs(180);

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
    let deadline = Instant::now() + GONE_TIMEOUT;
    while !deleting.is_empty() {
        let mut still = Vec::new();
        for name in deleting {
            match api.get_opt(&name).await {
                Ok(None) => {}
                Ok(Some(_)) => still.push(name),
                Err(e) => return Err(setup(format!("read namespace {name}"))(e)),
            }
        }
        deleting = still;
        if deleting.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            return Err(LoadError::Invalid(format!(
                "the load's namespaces {} were deleted but are still there after {}s",
                deleting.join(", "),
                GONE_TIMEOUT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
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
}
