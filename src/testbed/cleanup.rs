//! Clearing a shared real cluster between scenarios: everything a scenario
//! creates carries [`SCENARIO_LABEL`], and the next scenario starts by
//! deleting what is left and waiting until it is gone, so that names like
//! `web` can be used again.

use std::time::Duration;

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams};

/// The label on every object a scenario creates.
pub const SCENARIO_LABEL: &str = "hpa-harness.io/scenario";

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
    let selector = ListParams::default().labels(&format!("{SCENARIO_LABEL}=true"));
    let delete = DeleteParams::foreground();
    for resource in resources() {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        for obj in api.list(&selector).await?.items {
            let (Some(ns), Some(name)) = (obj.metadata.namespace, obj.metadata.name) else {
                continue;
            };
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &resource);
            match api.delete(&name, &delete).await {
                Ok(_) | Err(kube::Error::Api(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }
    let deadline = tokio::time::Instant::now() + GONE_TIMEOUT;
    for resource in resources() {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        while !api.list(&selector).await?.items.is_empty() && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    Ok(())
}
