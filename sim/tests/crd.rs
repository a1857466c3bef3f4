#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! CustomResourceDefinitions and the built-in kinds users describe, through
//! kube-rs discovery as a controller or `kubectl` sees them: a CRD makes its
//! custom resource served, with `/scale` through the CRD's paths; deleting
//! the CRD takes its objects along; Ingresses and ConfigMaps are served.

use hpa_sim::{Sim, SimConfig};
use k8s_openapi::api::autoscaling::v1::Scale;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::json;

fn crd(group: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("rollouts.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "rollouts", "singular": "rollout", "kind": "Rollout"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}}}]}
    }))
    .unwrap()
}

fn crd_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    )
}

#[tokio::test]
async fn a_crd_serves_its_resource_with_a_scale_subresource() {
    let sim = Sim::new(SimConfig::default());
    let client = sim.client();
    let group = "argoproj.test";
    let crds: Api<DynamicObject> = Api::all_with(client.clone(), &crd_resource());
    let created = crds
        .create(&PostParams::default(), &crd(group))
        .await
        .unwrap();
    let established = created.data["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    assert!(established, "{:?}", created.data);

    // Discovery finds the kind, as the HPA controller's mapper asks.
    let gvk = GroupVersionKind::gvk(group, "v1alpha1", "Rollout");
    let (resource, caps) = kube::discovery::pinned_kind(&client, &gvk).await.unwrap();
    assert_eq!(resource.plural, "rollouts");
    let subs: Vec<&str> = caps
        .subresources
        .iter()
        .map(|(r, _)| r.plural.as_str())
        .collect();
    assert!(subs.iter().any(|s| s.ends_with("scale")), "{subs:?}");

    let rollouts: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    let rollout: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{group}/v1alpha1"), "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {"replicas": 2},
        "status": {"replicas": 2, "selector": "app=web"}
    }))
    .unwrap();
    rollouts
        .create(&PostParams::default(), &rollout)
        .await
        .unwrap();
    let scale: Scale = rollouts.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(2));
    let status = scale.status.unwrap();
    assert_eq!(
        (status.replicas, status.selector.as_deref()),
        (2, Some("app=web"))
    );

    let patched = rollouts
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.unwrap().replicas, Some(5));
    assert_eq!(
        rollouts.get("web").await.unwrap().data["spec"]["replicas"],
        5
    );

    // Deleting the CRD takes its objects along.
    crds.delete(&format!("rollouts.{group}"), &Default::default())
        .await
        .unwrap();
    assert!(kube::discovery::pinned_kind(&client, &gvk).await.is_err());
    sim.reset();
}

#[tokio::test]
async fn a_crd_without_kind_or_storage_version_is_refused() {
    let sim = Sim::new(SimConfig::default());
    let crds: Api<DynamicObject> = Api::all_with(sim.client(), &crd_resource());
    let mut bad = crd("bad.test");
    bad.data["spec"]["names"]["kind"] = json!(null);
    let err = crds.create(&PostParams::default(), &bad).await.unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("expected an API error, got {err:?}");
    };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(status.message.contains("spec.names.kind"), "{status:?}");
}

#[tokio::test]
async fn ingresses_configmaps_and_the_usual_kinds_are_discoverable() {
    let sim = Sim::new(SimConfig::default());
    let client = sim.client();
    for (group, version, kind, plural) in [
        ("networking.k8s.io", "v1", "Ingress", "ingresses"),
        ("", "v1", "Service", "services"),
        ("", "v1", "ConfigMap", "configmaps"),
        ("", "v1", "Pod", "pods"),
        ("", "v1", "Namespace", "namespaces"),
        ("", "v1", "Node", "nodes"),
        ("apps", "v1", "Deployment", "deployments"),
        ("apps", "v1", "StatefulSet", "statefulsets"),
        ("apps", "v1", "ReplicaSet", "replicasets"),
        (
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        ),
    ] {
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (resource, _) = kube::discovery::pinned_kind(&client, &gvk)
            .await
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(resource.plural, plural);
    }
    let ingresses: Api<DynamicObject> = Api::namespaced_with(
        client,
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("networking.k8s.io", "v1", "Ingress"),
            "ingresses",
        ),
    );
    let ingress: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "main-route"},
        "spec": {"rules": [{"host": "example.com"}]}
    }))
    .unwrap();
    ingresses
        .create(&PostParams::default(), &ingress)
        .await
        .unwrap();
    assert_eq!(
        ingresses.get("main-route").await.unwrap().data["spec"]["rules"][0]["host"],
        "example.com"
    );
}
