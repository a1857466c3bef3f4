#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! kube-rs against the sim, in-process: CRUD and watch for every resource,
//! a reflector staying in sync, 409 and 410, the scale subresource, HPA
//! defaulting, validation and conversion, faults, aggregation, events.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use hpa_sim::{Backend, FeatureGates, KubernetesVersion, PodDelays, Sim, SimConfig};
use jiff::SignedDuration;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v1::{HorizontalPodAutoscaler as HpaV1, Scale};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Namespace, Pod};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::core::Status;
use serde_json::json;

fn sim() -> Sim {
    Sim::new(SimConfig::default())
}

fn api_err(e: kube::Error) -> Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn code(e: kube::Error) -> u16 {
    api_err(e).code
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx",
                    "resources": {"requests": {"cpu": "100m"}}}]}}}
    }))
    .unwrap()
}

fn hpa(name: &str, target: &str) -> HorizontalPodAutoscaler {
    serde_json::from_value(json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "maxReplicas": 10,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]}
    }))
    .unwrap()
}

async fn pod_names(pods: &Api<Pod>, selector: &str) -> Vec<String> {
    let mut names: Vec<String> = pods
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|p| p.metadata.name.unwrap())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn pods_support_create_get_list_update_patch_status_and_delete() {
    let sim = sim();
    let pods: Api<Pod> = Api::default_namespaced(sim.client());
    let pod: Pod =
        serde_json::from_value(json!({"metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}))
        .unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.unwrap();
    assert_eq!(created.status.unwrap().phase.as_deref(), Some("Pending"));
    assert!(created.metadata.uid.is_some());
    assert_eq!(
        code(pods.create(&PostParams::default(), &pod).await.unwrap_err()),
        409
    );

    let patched = pods
        .patch_status("p", &PatchParams::default(), &Patch::Merge(json!({"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})))
        .await
        .unwrap();
    assert_eq!(
        patched.status.as_ref().unwrap().phase.as_deref(),
        Some("Running")
    );

    let mut got = pods.get("p").await.unwrap();
    got.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("tier".into(), "web".into());
    let replaced = pods
        .replace("p", &PostParams::default(), &got)
        .await
        .unwrap();
    assert_eq!(replaced.metadata.labels.unwrap()["tier"], "web");
    assert_eq!(
        replaced.status.unwrap().phase.as_deref(),
        Some("Running"),
        "PUT keeps status"
    );

    let listed = pods
        .list(
            &ListParams::default()
                .labels("tier=web")
                .fields("status.phase=Running"),
        )
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
    let none = pods
        .list(&ListParams::default().fields("status.phase=Failed"))
        .await
        .unwrap();
    assert!(none.items.is_empty());
    assert_eq!(
        code(
            pods.list(&ListParams::default().fields("spec.bogus=1"))
                .await
                .unwrap_err()
        ),
        400
    );

    pods.delete("p", &DeleteParams::default()).await.unwrap();
    assert_eq!(code(pods.get("p").await.unwrap_err()), 404);
}

#[tokio::test]
async fn creating_in_a_missing_namespace_is_not_found_and_namespaces_have_crud() {
    let sim = sim();
    let client = sim.client();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "nowhere");
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}})).unwrap();
    let err = api_err(pods.create(&PostParams::default(), &pod).await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (404, "NotFound"));

    let nss: Api<Namespace> = Api::all(client);
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "nowhere"}})).unwrap();
    nss.create(&PostParams::default(), &ns).await.unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    assert_eq!(
        nss.get("nowhere")
            .await
            .unwrap()
            .status
            .unwrap()
            .phase
            .as_deref(),
        Some("Active")
    );
    nss.delete("nowhere", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        code(pods.get("p").await.unwrap_err()),
        404,
        "objects go with their namespace"
    );
}

#[tokio::test]
async fn stale_updates_conflict_with_409() {
    let sim = sim();
    let deps: Api<Deployment> = Api::default_namespaced(sim.client());
    let first = deps
        .create(&PostParams::default(), &deployment("web", 1))
        .await
        .unwrap();
    let mut a = deps.get("web").await.unwrap();
    a.metadata.labels = Some([("v".to_string(), "1".to_string())].into());
    deps.replace("web", &PostParams::default(), &a)
        .await
        .unwrap();
    let mut stale = first;
    stale.metadata.labels = Some([("v".to_string(), "2".to_string())].into());
    let err = api_err(
        deps.replace("web", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
}

#[tokio::test]
async fn deployments_keep_their_pods_in_line_through_the_scale_subresource() {
    let sim = sim();
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    deps.create(&PostParams::default(), &deployment("web", 3))
        .await
        .unwrap();
    assert_eq!(
        pod_names(&pods, "app=web").await,
        ["web-0", "web-1", "web-2"]
    );
    let pod = pods.get("web-0").await.unwrap();
    let status = pod.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert!(status.start_time.is_some());
    assert!(
        status
            .conditions
            .unwrap()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    );

    let scale: Scale = deps.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(3));
    let st = scale.status.unwrap();
    assert_eq!((st.replicas, st.selector.as_deref()), (3, Some("app=web")));

    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .unwrap();
    assert_eq!(
        pod_names(&pods, "app=web").await,
        ["web-0", "web-1", "web-2", "web-3", "web-4"]
    );
    let mut scale = deps.get_scale("web").await.unwrap();
    scale.spec.as_mut().unwrap().replicas = Some(2);
    let after = deps
        .replace_scale("web", &PostParams::default(), &scale)
        .await
        .unwrap();
    assert_eq!(after.status.unwrap().replicas, 2);
    assert_eq!(
        pod_names(&pods, "app=web").await,
        ["web-0", "web-1"],
        "highest numbers go first"
    );
    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await
    .unwrap();
    assert_eq!(
        pod_names(&pods, "app=web").await,
        ["web-0", "web-1", "web-5"],
        "numbers are not reused"
    );
    let d = deps.get("web").await.unwrap();
    assert_eq!(d.status.unwrap().ready_replicas, Some(3));
    let bad = api_err(
        deps.patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": -1}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(bad.code, 422);

    deps.delete("web", &DeleteParams::default()).await.unwrap();
    assert!(
        pod_names(&pods, "app=web").await.is_empty(),
        "pods go with their workload"
    );
}

#[tokio::test]
async fn with_generated_names_deployment_pods_are_named_as_a_real_cluster_names_them() {
    let sim = Sim::new(SimConfig {
        generated_pod_names: true,
        ..SimConfig::default()
    });
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let mut d = deployment("web", 3);
    // Asked-for names are a harness's wish, not a real cluster's.
    d.metadata.annotations = Some([("hpa-sim.io/pod-names".to_owned(), "a,b,c".to_owned())].into());
    deps.create(&PostParams::default(), &d).await.unwrap();
    let names = pod_names(&pods, "app=web").await;
    assert_eq!(names.len(), 3);
    let hash =
        pods.get(&names[0]).await.unwrap().metadata.labels.unwrap()["pod-template-hash"].clone();
    for n in &names {
        let rest = n
            .strip_prefix(&format!("web-{hash}-"))
            .unwrap_or_else(|| panic!("{n}"));
        assert_eq!(rest.len(), 5, "{n}");
    }
    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .unwrap();
    let more = pod_names(&pods, "app=web").await;
    assert_eq!(more.len(), 5);
    assert!(
        names.iter().all(|n| more.contains(n)),
        "the first pods stay"
    );
    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await
    .unwrap();
    assert_eq!(pod_names(&pods, "app=web").await.len(), 1);
    // StatefulSets keep their ordinals, as on a real cluster.
    let sts: Api<StatefulSet> = Api::default_namespaced(client);
    let mut spec = serde_json::to_value(deployment("db", 2)).unwrap();
    spec["kind"] = json!("StatefulSet");
    sts.create(
        &PostParams::default(),
        &serde_json::from_value(spec).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(pod_names(&pods, "app=db").await, ["db-0", "db-1"]);
}

#[tokio::test]
async fn replicasets_and_statefulsets_scale_too() {
    let sim = sim();
    let client = sim.client();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let mut spec = serde_json::to_value(deployment("rs", 2)).unwrap();
    spec["kind"] = json!("ReplicaSet");
    let rss: Api<ReplicaSet> = Api::default_namespaced(client.clone());
    rss.create(
        &PostParams::default(),
        &serde_json::from_value(spec).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(pod_names(&pods, "app=rs").await, ["rs-0", "rs-1"]);
    rss.patch_scale(
        "rs",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await
    .unwrap();
    assert_eq!(rss.get("rs").await.unwrap().status.unwrap().replicas, 1);

    let mut spec = serde_json::to_value(deployment("db", 1)).unwrap();
    spec["kind"] = json!("StatefulSet");
    let sts: Api<StatefulSet> = Api::default_namespaced(client);
    sts.create(
        &PostParams::default(),
        &serde_json::from_value(spec).unwrap(),
    )
    .await
    .unwrap();
    sts.patch_scale(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 2}})),
    )
    .await
    .unwrap();
    assert_eq!(pod_names(&pods, "app=db").await, ["db-0", "db-1"]);
    assert_eq!(
        sts.get_scale("db").await.unwrap().status.unwrap().replicas,
        2
    );
    assert_eq!(
        sts.get_status("db").await.unwrap().status.unwrap().replicas,
        2
    );
}

#[tokio::test]
async fn new_pods_become_ready_when_the_virtual_clock_passes_their_delay() {
    let sim = sim();
    sim.set_pod_delays(
        "default",
        "web",
        PodDelays {
            running: SignedDuration::ZERO,
            ready: SignedDuration::from_secs(30),
            max_running: None,
        },
    );
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    deps.create(&PostParams::default(), &deployment("web", 1))
        .await
        .unwrap();
    let ready = |p: &Pod| {
        p.status
            .as_ref()
            .unwrap()
            .conditions
            .as_ref()
            .unwrap()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    };
    let start = sim.clock().now();
    assert!(!ready(&pods.get("web-0").await.unwrap()));
    sim.advance(SignedDuration::from_secs(29));
    assert!(!ready(&pods.get("web-0").await.unwrap()));
    sim.advance(SignedDuration::from_secs(1));
    let pod = pods.get("web-0").await.unwrap();
    assert!(ready(&pod));
    let cond = pod
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(
        cond.last_transition_time.unwrap().0,
        start + SignedDuration::from_secs(30)
    );
    assert_eq!(
        deps.get("web")
            .await
            .unwrap()
            .status
            .unwrap()
            .ready_replicas,
        Some(1)
    );
}

#[tokio::test]
async fn hpas_are_defaulted_validated_and_served_as_v1_and_v2() {
    let sim = sim();
    let client = sim.client();
    let v2: Api<HorizontalPodAutoscaler> = Api::default_namespaced(client.clone());
    let mut h = hpa("web", "web");
    h.spec.behavior = Some(
        serde_json::from_value(json!({"scaleDown": {"stabilizationWindowSeconds": 60}})).unwrap(),
    );
    let created = v2.create(&PostParams::default(), &h).await.unwrap();
    let spec = created.spec;
    assert_eq!(spec.min_replicas, Some(1));
    let b = spec.behavior.unwrap();
    assert_eq!(b.scale_up.unwrap().policies.unwrap().len(), 2);
    assert_eq!(
        b.scale_down.as_ref().unwrap().stabilization_window_seconds,
        Some(60)
    );
    assert_eq!(b.scale_down.unwrap().select_policy.as_deref(), Some("Max"));

    let v1: Api<HpaV1> = Api::default_namespaced(client.clone());
    let old = v1.get("web").await.unwrap();
    assert_eq!(old.spec.target_cpu_utilization_percentage, Some(50));

    let status = v2
        .patch_status("web", &PatchParams::default(), &Patch::Merge(json!({"status": {"currentReplicas": 2,
            "desiredReplicas": 3, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
            "current": {"averageUtilization": 70, "averageValue": "70m"}}}]}})))
        .await
        .unwrap();
    assert_eq!(status.status.unwrap().desired_replicas, 3);
    let old = v1.get_status("web").await.unwrap();
    assert_eq!(
        old.status.unwrap().current_cpu_utilization_percentage,
        Some(70)
    );

    let mut bad = hpa("bad", "web");
    bad.spec.min_replicas = Some(20);
    let err = api_err(v2.create(&PostParams::default(), &bad).await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(err.message.contains("spec.maxReplicas"), "{}", err.message);

    let raw: Api<kube::api::DynamicObject> = Api::default_namespaced_with(
        client,
        &kube::api::ApiResource::erase::<HorizontalPodAutoscaler>(&()),
    );
    let missing_max: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "nomax"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "-1"}}}]}}))
    .unwrap();
    let err = api_err(
        raw.create(&PostParams::default(), &missing_max)
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    assert!(
        err.message.contains("spec.maxReplicas: Required value"),
        "{}",
        err.message
    );
    assert!(
        err.message
            .contains("spec.metrics[0].pods.target.averageValue"),
        "{}",
        err.message
    );
}

fn sim_as(gates: FeatureGates) -> Sim {
    Sim::new(SimConfig {
        feature_gates: gates,
        ..SimConfig::default()
    })
}

/// An HPA that may scale to zero (an External metric).
fn hpa_to_zero(name: &str, min: i32) -> HorizontalPodAutoscaler {
    serde_json::from_value(json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": min, "maxReplicas": 10,
            "metrics": [{"type": "External", "external": {"metric": {"name": "queue"},
                "target": {"type": "AverageValue", "averageValue": "5"}}}]}
    }))
    .unwrap()
}

/// Without `HPAGeneration` (absent in v1.36, or turned off in v1.37) the HPA
/// registry strategy does not manage `metadata.generation`: a create keeps
/// what the client sent, an update keeps the stored value even when the
/// spec changes.
#[tokio::test]
async fn hpas_get_no_generation_from_the_server_without_hpa_generation() {
    let off = FeatureGates::parse(KubernetesVersion::V1_37, "HPAGeneration=false").unwrap();
    for gates in [FeatureGates::of(KubernetesVersion::V1_36), off] {
        let sim = sim_as(gates);
        let v2: Api<HorizontalPodAutoscaler> = Api::default_namespaced(sim.client());
        let created = v2
            .create(&PostParams::default(), &hpa("web", "web"))
            .await
            .unwrap();
        assert_eq!(created.metadata.generation, None);
        let mut edited = created.clone();
        edited.spec.max_replicas = 20;
        edited.metadata.generation = Some(7);
        let updated = v2
            .replace("web", &PostParams::default(), &edited)
            .await
            .unwrap();
        assert_eq!(updated.spec.max_replicas, 20);
        assert_eq!(updated.metadata.generation, None);

        let mut own = hpa("own", "web");
        own.metadata.generation = Some(5);
        let created = v2.create(&PostParams::default(), &own).await.unwrap();
        assert_eq!(created.metadata.generation, Some(5));
        let patched = v2
            .patch(
                "own",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"maxReplicas": 30}})),
            )
            .await
            .unwrap();
        assert_eq!(patched.metadata.generation, Some(5));

        // Deployments still get theirs.
        let deployments: Api<Deployment> = Api::default_namespaced(sim.client());
        let d = deployments
            .create(&PostParams::default(), &deployment("web", 1))
            .await
            .unwrap();
        assert_eq!(d.metadata.generation, Some(1));
    }
}

/// With `HPAGeneration` (v1.37's default, locked in v1.38), as upstream's
/// HPA strategy: generation 1 on create whatever the client sent, +1 on
/// each spec change, unchanged by metadata-only changes, by an update that
/// changes nothing, and by status writes.
#[tokio::test]
async fn hpa_generation_counts_spec_changes_only() {
    for release in [KubernetesVersion::V1_37, KubernetesVersion::V1_38] {
        let sim = sim_as(FeatureGates::of(release));
        let v2: Api<HorizontalPodAutoscaler> = Api::default_namespaced(sim.client());
        let mut own = hpa("web", "web");
        own.metadata.generation = Some(5);
        let created = v2.create(&PostParams::default(), &own).await.unwrap();
        assert_eq!(created.metadata.generation, Some(1), "{release}");

        let mut edited = created.clone();
        edited.spec.max_replicas = 20;
        edited.metadata.generation = Some(9);
        let updated = v2
            .replace("web", &PostParams::default(), &edited)
            .await
            .unwrap();
        assert_eq!(updated.metadata.generation, Some(2));

        let same = v2
            .replace("web", &PostParams::default(), &updated)
            .await
            .unwrap();
        assert_eq!(same.metadata.generation, Some(2), "no spec change");
        let labelled = v2
            .patch(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"team": "a"}}})),
            )
            .await
            .unwrap();
        assert_eq!(labelled.metadata.generation, Some(2), "metadata only");

        let status = v2
            .patch_status(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"observedGeneration": 2,
                    "desiredReplicas": 3, "currentReplicas": 2}})),
            )
            .await
            .unwrap();
        assert_eq!(status.metadata.generation, Some(2), "status write");
        assert_eq!(status.status.unwrap().observed_generation, Some(2));
        let status_spec = v2
            .patch_status(
                "web",
                &PatchParams::default(),
                &Patch::Merge(
                    json!({"spec": {"maxReplicas": 40}, "status": {"desiredReplicas": 4}}),
                ),
            )
            .await
            .unwrap();
        assert_eq!(status_spec.spec.max_replicas, 20, "/status keeps the spec");
        assert_eq!(status_spec.metadata.generation, Some(2));

        // A spec change through autoscaling/v1 counts too.
        let v1: Api<HpaV1> = Api::default_namespaced(sim.client());
        let through_v1 = v1
            .patch(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"targetCPUUtilizationPercentage": 70}})),
            )
            .await
            .unwrap();
        assert_eq!(through_v1.metadata.generation, Some(3));
    }
}

/// Switching the release with stored objects: as after an upgrade, an HPA
/// stored without a generation gets one counted from 0 at its next spec
/// change (upstream: `oldHPA.Generation + 1`).
#[tokio::test]
async fn an_hpa_stored_before_hpa_generation_counts_from_zero() {
    let sim = sim_as(FeatureGates::of(KubernetesVersion::V1_36));
    let v2: Api<HorizontalPodAutoscaler> = Api::default_namespaced(sim.client());
    v2.create(&PostParams::default(), &hpa("web", "web"))
        .await
        .unwrap();
    sim.set_feature_gates(&FeatureGates::of(KubernetesVersion::V1_37));
    let patched = v2
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"maxReplicas": 30}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.metadata.generation, Some(1));
}

const CONDITIONS_WITH_GENERATION: &str = r#"{"status": {"observedGeneration": 1,
    "desiredReplicas": 2, "currentReplicas": 2,
    "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
        "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}]}}"#;

async fn status_with_generations(gates: FeatureGates) -> (Option<i64>, Option<i64>) {
    let sim = sim_as(gates);
    let v2: Api<HorizontalPodAutoscaler> = Api::default_namespaced(sim.client());
    v2.create(&PostParams::default(), &hpa("web", "web"))
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(CONDITIONS_WITH_GENERATION).unwrap();
    let written = v2
        .patch_status("web", &PatchParams::default(), &Patch::Merge(body))
        .await
        .unwrap();
    let stored = v2.get_status("web").await.unwrap();
    assert_eq!(written.status, stored.status);
    let status = stored.status.unwrap();
    let condition = status.conditions.unwrap()[0].observed_generation;
    (status.observed_generation, condition)
}

/// v1.36's autoscaling/v2 has no `conditions[].observedGeneration`: the API
/// server prunes it on a status write; v1.37 stores it (and, as every
/// release, `status.observedGeneration`).
#[tokio::test]
async fn conditions_observed_generation_is_pruned_in_1_36_and_stored_in_1_37() {
    assert_eq!(
        status_with_generations(FeatureGates::of(KubernetesVersion::V1_36)).await,
        (Some(1), None)
    );
    assert_eq!(
        status_with_generations(FeatureGates::of(KubernetesVersion::V1_37)).await,
        (Some(1), Some(1))
    );
    let off = FeatureGates::parse(KubernetesVersion::V1_37, "HPAGeneration=false").unwrap();
    assert_eq!(status_with_generations(off).await, (None, None));
}

fn invalid_message(e: kube::Error) -> String {
    let status = api_err(e);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    status.message
}

/// `minReplicas: 0` needs `HPAScaleToZero` (beta, on, from v1.37; alpha,
/// off, in v1.36), or on update a stored object that already had 0
/// (upstream's ratchet in `validationOptionsForHorizontalPodAutoscaler`).
#[tokio::test]
async fn min_replicas_zero_follows_the_release_and_ratchets_on_update() {
    let sim = sim_as(FeatureGates::of(KubernetesVersion::V1_37));
    let v2: Api<HorizontalPodAutoscaler> = Api::default_namespaced(sim.client());
    let zero = v2
        .create(&PostParams::default(), &hpa_to_zero("zero", 0))
        .await
        .unwrap();
    assert_eq!(zero.spec.min_replicas, Some(0));
    v2.create(&PostParams::default(), &hpa_to_zero("one", 1))
        .await
        .unwrap();

    sim.set_feature_gates(&FeatureGates::of(KubernetesVersion::V1_36));
    let message = invalid_message(
        v2.create(&PostParams::default(), &hpa_to_zero("new", 0))
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"),
        "{message}"
    );
    // The stored zero stays updatable; another HPA cannot newly go to zero.
    let kept = v2
        .patch(
            "zero",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"maxReplicas": 20}})),
        )
        .await
        .unwrap();
    assert_eq!(
        (kept.spec.min_replicas, kept.spec.max_replicas),
        (Some(0), 20)
    );
    let message = invalid_message(
        v2.patch(
            "one",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"minReplicas": 0}})),
        )
        .await
        .unwrap_err(),
    );
    assert!(message.contains("greater than or equal to 1"), "{message}");
    // With the alpha gate turned on, 1.36 accepts it too.
    sim.set_feature_gates(
        &FeatureGates::parse(KubernetesVersion::V1_36, "HPAScaleToZero=true").unwrap(),
    );
    v2.create(&PostParams::default(), &hpa_to_zero("new", 0))
        .await
        .unwrap();
    // Below zero is refused whatever the gate.
    let message = invalid_message(
        v2.create(&PostParams::default(), &hpa_to_zero("negative", -1))
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("spec.minReplicas: Invalid value: -1: must be greater than or equal to 0"),
        "{message}"
    );
}

/// `/version` and the OpenAPI document report the sim's release, so a
/// client asking the server learns what it talks to.
#[tokio::test]
async fn the_server_reports_its_release() {
    for (release, minor, git) in [
        (KubernetesVersion::V1_35, "35", "v1.35.0-hpa-sim"),
        (KubernetesVersion::V1_36, "36", "v1.36.0-hpa-sim"),
        (KubernetesVersion::V1_37, "37", "v1.37.0-hpa-sim"),
        (KubernetesVersion::V1_38, "38", "v1.38.0-alpha.2-hpa-sim"),
    ] {
        let sim = sim_as(FeatureGates::of(release));
        let client = sim.client();
        let info = client.apiserver_version().await.unwrap();
        assert_eq!(
            (
                info.major.as_str(),
                info.minor.as_str(),
                info.git_version.as_str()
            ),
            ("1", minor, git)
        );
        let parsed: KubernetesVersion = info.git_version.parse().unwrap();
        assert_eq!(parsed, release);
        let openapi: serde_json::Value = client
            .request(
                http::Request::get("/openapi/v3/apis/autoscaling/v2")
                    .body(Vec::new())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(openapi["info"]["version"], git);
    }
    let sim = sim();
    sim.set_feature_gates(&FeatureGates::of(KubernetesVersion::V1_36));
    let info = sim.client().apiserver_version().await.unwrap();
    assert_eq!(info.minor, "36", "a change of release shows at once");
}

#[tokio::test]
async fn leases_events_and_apiservices_have_crud() {
    let sim = sim();
    let client = sim.client();
    let leases: Api<Lease> = Api::default_namespaced(client.clone());
    let lease: Lease = serde_json::from_value(
        json!({"metadata": {"name": "hpa"}, "spec": {"holderIdentity": "a"}}),
    )
    .unwrap();
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let got = leases
        .patch(
            "hpa",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"holderIdentity": "b"}})),
        )
        .await
        .unwrap();
    assert_eq!(got.spec.unwrap().holder_identity.as_deref(), Some("b"));
    leases
        .delete("hpa", &DeleteParams::default())
        .await
        .unwrap();

    let events: Api<Event> = Api::default_namespaced(client.clone());
    let ev: Event = serde_json::from_value(json!({"metadata": {"name": "e1"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "hpa", "reportingInstance": "hpa-0",
        "action": "Scale", "reason": "SuccessfulRescale", "type": "Normal", "note": "New size: 3",
        "regarding": {"kind": "HorizontalPodAutoscaler", "name": "web", "namespace": "default"}}))
    .unwrap();
    events.create(&PostParams::default(), &ev).await.unwrap();
    let core: Api<CoreEvent> = Api::default_namespaced(client.clone());
    let found = core
        .list(&ListParams::default().fields("involvedObject.name=web,reason=SuccessfulRescale"))
        .await
        .unwrap();
    assert_eq!(found.items.len(), 1);
    assert_eq!(found.items[0].message.as_deref(), Some("New size: 3"));
    let by_regarding = events
        .list(&ListParams::default().fields("regarding.name=web"))
        .await
        .unwrap();
    assert_eq!(by_regarding.items[0].note.as_deref(), Some("New size: 3"));
    assert!(
        events
            .list(&ListParams::default().fields("regarding.name=db"))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    events.delete("e1", &DeleteParams::default()).await.unwrap();

    let svcs: Api<APIService> = Api::all(client);
    let svc: APIService = serde_json::from_value(json!({"metadata": {"name": "v1beta1.metrics.k8s.io"},
        "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
            "versionPriority": 100, "service": {"namespace": "kube-system", "name": "metrics-server"}}}))
    .unwrap();
    svcs.create(&PostParams::default(), &svc).await.unwrap();
    assert_eq!(
        svcs.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    svcs.delete("v1beta1.metrics.k8s.io", &DeleteParams::default())
        .await
        .unwrap();
}

/// As kube-apiserver's `--event-ttl` (1h by default): an Event goes an
/// hour after its last write, on the sim's virtual clock, with a DELETED
/// watch event; an update renews it; other objects stay.
#[tokio::test]
async fn events_expire_an_hour_after_their_last_write_on_the_virtual_clock() {
    let sim = sim();
    let client = sim.client();
    let events: Api<Event> = Api::default_namespaced(client.clone());
    let event = |name: &str| -> Event {
        serde_json::from_value(json!({"metadata": {"name": name},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "hpa",
            "reportingInstance": "hpa-0", "action": "Scale", "reason": "SuccessfulRescale",
            "type": "Normal", "note": "New size: 3",
            "regarding": {"kind": "HorizontalPodAutoscaler", "name": "web", "namespace": "default"}}))
        .unwrap()
    };
    let names = |list: kube::core::ObjectList<Event>| -> Vec<String> {
        list.items
            .into_iter()
            .filter_map(|e| e.metadata.name)
            .collect()
    };
    events
        .create(&PostParams::default(), &event("old"))
        .await
        .unwrap();
    events
        .create(&PostParams::default(), &event("renewed"))
        .await
        .unwrap();
    let leases: Api<Lease> = Api::default_namespaced(client.clone());
    let lease: Lease = serde_json::from_value(json!({"metadata": {"name": "hpa"}})).unwrap();
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let watch = events
        .watch(&WatchParams::default(), &sim.resource_version().to_string())
        .await
        .unwrap();
    futures::pin_mut!(watch);

    sim.advance(SignedDuration::from_mins(30));
    events
        .patch(
            "renewed",
            &PatchParams::default(),
            &Patch::Merge(json!({"note": "New size: 4"})),
        )
        .await
        .unwrap();
    sim.advance(SignedDuration::from_mins(29));
    let all = events.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(all), ["old", "renewed"], "59 minutes: both kept");
    sim.advance(SignedDuration::from_mins(1));
    let all = events.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(all), ["renewed"], "an hour after its creation");
    sim.advance(SignedDuration::from_mins(30));
    assert!(
        events
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert!(
        leases.get_opt("hpa").await.unwrap().is_some(),
        "only Events expire"
    );

    let mut deleted = Vec::new();
    while deleted.len() < 2 {
        let next = tokio::time::timeout(Duration::from_secs(5), watch.try_next()).await;
        match next.unwrap().unwrap() {
            Some(WatchEvent::Deleted(e)) => deleted.push(e.metadata.name.unwrap()),
            Some(_) => {}
            None => break,
        }
    }
    assert_eq!(deleted, ["old", "renewed"]);
}

/// `--event-ttl 0s` (`event_ttl: None`) keeps Events for ever.
#[tokio::test]
async fn without_a_ttl_events_stay() {
    let sim = Sim::new(SimConfig {
        event_ttl: None,
        ..SimConfig::default()
    });
    let events: Api<CoreEvent> = Api::default_namespaced(sim.client());
    let event: CoreEvent = serde_json::from_value(json!({"metadata": {"name": "e"},
        "involvedObject": {"kind": "HorizontalPodAutoscaler", "name": "web", "namespace": "default"},
        "reason": "SuccessfulRescale", "message": "New size: 3", "type": "Normal"}))
    .unwrap();
    events.create(&PostParams::default(), &event).await.unwrap();
    sim.advance(SignedDuration::from_hours(48));
    assert_eq!(
        events
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
}

#[tokio::test]
async fn a_reflector_stays_in_sync_through_updates_and_deletes() {
    let sim = sim();
    let client = sim.client();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let deps: Api<Deployment> = Api::default_namespaced(client);
    deps.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();
    let (reader, writer) = kube::runtime::reflector::store();
    let stream = kube::runtime::reflector(
        writer,
        kube::runtime::watcher(pods.clone(), Default::default()),
    );
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();

    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    pods.patch_status(
        "web-1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Failed"}})),
    )
    .await
    .unwrap();
    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await
    .unwrap();

    let wanted = ["web-0", "web-1", "web-2"];
    let mut ok = false;
    for _ in 0..200 {
        let mut names: Vec<String> = reader
            .state()
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        names.sort();
        let failed = reader.state().iter().any(|p| {
            p.metadata.name.as_deref() == Some("web-1")
                && p.status.as_ref().unwrap().phase.as_deref() == Some("Failed")
        });
        if names == wanted && failed {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    task.abort();
    assert!(
        ok,
        "reflector did not converge: {:?}",
        reader
            .state()
            .iter()
            .map(|p| p.metadata.name.clone())
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn watches_report_added_modified_deleted_and_bookmarks() {
    let sim = sim();
    let pods: Api<Pod> = Api::default_namespaced(sim.client());
    let rv = pods
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = pods
        .watch(&WatchParams::default().labels("app=w").timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    let pod: Pod =
        serde_json::from_value(json!({"metadata": {"name": "w", "labels": {"app": "w"}}})).unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    pods.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {"a": "b"}}})),
    )
    .await
    .unwrap();
    pods.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "other"}}})),
    )
    .await
    .unwrap();
    let mut kinds = Vec::new();
    for _ in 0..3 {
        match stream.try_next().await.unwrap().unwrap() {
            WatchEvent::Added(_) => kinds.push("ADDED"),
            WatchEvent::Modified(_) => kinds.push("MODIFIED"),
            WatchEvent::Deleted(_) => kinds.push("DELETED"),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        kinds,
        ["ADDED", "MODIFIED", "DELETED"],
        "leaving the selection reads as DELETED"
    );

    let sim = Sim::new(SimConfig {
        bookmark_interval: Duration::from_millis(20),
        ..SimConfig::default()
    });
    let pods: Api<Pod> = Api::default_namespaced(sim.client());
    let mut stream = pods
        .watch(&WatchParams::default().timeout(5), "1")
        .await
        .unwrap()
        .boxed();
    let first = tokio::time::timeout(Duration::from_secs(2), stream.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(first, WatchEvent::Bookmark(_)), "{first:?}");
}

#[tokio::test]
async fn a_watch_from_an_expired_resource_version_gets_410_gone() {
    let sim = Sim::new(SimConfig {
        watch_history: 3,
        ..SimConfig::default()
    });
    let pods: Api<Pod> = Api::default_namespaced(sim.client());
    let rv = pods
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    for i in 0..5 {
        let pod: Pod =
            serde_json::from_value(json!({"metadata": {"name": format!("p{i}")}})).unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    let mut stream = pods
        .watch(&WatchParams::default().timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    match stream.try_next().await.unwrap().unwrap() {
        WatchEvent::Error(e) => assert_eq!((e.code, e.reason.as_str()), (410, "Expired")),
        other => panic!("expected 410, got {other:?}"),
    }
}

#[tokio::test]
async fn injected_faults_and_scale_overrides_apply() {
    let sim = sim();
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    deps.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();

    sim.faults().override_scale_replicas("default", "web", 4, 3);
    sim.faults().override_scale_selector("default", "web", "");
    let s = deps.get_scale("web").await.unwrap();
    assert_eq!(s.spec.unwrap().replicas, Some(4));
    assert_eq!(s.status.as_ref().unwrap().replicas, 3);
    assert_eq!(s.status.unwrap().selector, None);
    assert_eq!(
        pod_names(&pods, "app=web").await.len(),
        2,
        "overrides create no pods"
    );

    sim.faults().fail_get_scale("default", "web", true);
    assert_eq!(code(deps.get_scale("web").await.unwrap_err()), 500);
    sim.faults().fail_get_scale("default", "web", false);
    sim.faults().fail_update_scale("default", "web", true);
    let p = Patch::Merge(json!({"spec": {"replicas": 3}}));
    assert_eq!(
        code(
            deps.patch_scale("web", &PatchParams::default(), &p)
                .await
                .unwrap_err()
        ),
        500
    );
    sim.faults().fail_update_scale("default", "web", false);
    sim.faults().conflict_update_scale("default", "web", 1);
    assert_eq!(
        code(
            deps.patch_scale("web", &PatchParams::default(), &p)
                .await
                .unwrap_err()
        ),
        409
    );
    deps.patch_scale("web", &PatchParams::default(), &p)
        .await
        .unwrap();

    let hpas: Api<HorizontalPodAutoscaler> = Api::default_namespaced(client);
    hpas.create(&PostParams::default(), &hpa("web", "web"))
        .await
        .unwrap();
    sim.faults().conflict_hpa_status("default", "web", 2);
    let st = Patch::Merge(json!({"status": {"currentReplicas": 3, "desiredReplicas": 3}}));
    assert_eq!(
        code(
            hpas.patch_status("web", &PatchParams::default(), &st)
                .await
                .unwrap_err()
        ),
        409
    );
    assert_eq!(
        code(
            hpas.patch_status("web", &PatchParams::default(), &st)
                .await
                .unwrap_err()
        ),
        409
    );
    hpas.patch_status("web", &PatchParams::default(), &st)
        .await
        .unwrap();

    let counts = sim.requests().snapshot();
    assert_eq!(
        counts[&("get".to_string(), "deployments.apps/scale".to_string())],
        2
    );
    assert_eq!(
        counts[&(
            "patch".to_string(),
            "horizontalpodautoscalers.autoscaling/status".to_string()
        )],
        3
    );
}

#[tokio::test]
async fn aggregated_metrics_apis_are_proxied_to_the_backend() {
    let backend = axum::Router::new().route(
        "/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods",
        axum::routing::get(
            |axum::extract::Path(ns): axum::extract::Path<String>, uri: http::Uri| async move {
                axum::Json(json!({"kind": "PodMetricsList", "ns": ns, "query": uri.query()}))
            },
        ),
    );
    let sim = Sim::new(SimConfig {
        metrics: Some(Backend::Router(backend)),
        ..SimConfig::default()
    });
    let client = sim.client();
    let req = http::Request::get(
        "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb",
    )
    .body(Vec::new())
    .unwrap();
    let v: serde_json::Value = client.request(req).await.unwrap();
    assert_eq!(v["ns"], "default");
    assert_eq!(v["query"], "labelSelector=app%3Dweb");
    let groups = client.list_api_groups().await.unwrap();
    assert!(
        groups
            .groups
            .iter()
            .any(|g| g.name == "custom.metrics.k8s.io")
    );

    // A registered local APIService (no service) is not proxied.
    let svcs: Api<APIService> = Api::all(client.clone());
    let local: APIService = serde_json::from_value(json!({"metadata": {"name": "v1beta1.metrics.k8s.io"},
        "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 1, "versionPriority": 1}}))
    .unwrap();
    svcs.create(&PostParams::default(), &local).await.unwrap();
    let req = http::Request::get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
        .body(Vec::new())
        .unwrap();
    assert!(client.request::<serde_json::Value>(req).await.is_err());
}

/// kube-aggregator answers a request to a group whose APIService is not
/// Available with its own 503 (plain text), whatever the backend.
#[tokio::test]
async fn an_api_service_that_is_not_available_answers_503() {
    let backend = axum::Router::new().route(
        "/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods",
        axum::routing::get(|| async { axum::Json(json!({"kind": "PodMetricsList", "items": []})) }),
    );
    let sim = Sim::new(SimConfig {
        metrics: Some(Backend::Router(backend)),
        ..SimConfig::default()
    });
    let client = sim.client();
    let svcs: Api<APIService> = Api::all(client.clone());
    let svc: APIService = serde_json::from_value(json!({"metadata": {"name": "v1beta1.metrics.k8s.io"},
        "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
            "service": {"namespace": "kube-system", "name": "metrics-server"}}}))
    .unwrap();
    svcs.create(&PostParams::default(), &svc).await.unwrap();
    let get = || {
        http::Request::get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
            .body(Vec::new())
            .unwrap()
    };
    // Created Available (the sim has no availability controller): proxied.
    let list: serde_json::Value = client.request(get()).await.unwrap();
    assert_eq!(list["kind"], "PodMetricsList");
    svcs.patch_status(
        "v1beta1.metrics.k8s.io",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": [{"type": "Available", "status": "False",
            "reason": "FailedDiscoveryCheck", "message": "failing or missing response from https://10.96.0.10:443/apis/metrics.k8s.io/v1beta1"}]}})),
    )
    .await
    .unwrap();
    let err = client
        .request::<serde_json::Value>(get())
        .await
        .unwrap_err();
    assert_eq!(code(err), 503);
    let raw = client.request_text(get()).await.unwrap_err();
    assert!(raw.to_string().contains("service unavailable"), "{raw}");
}

#[tokio::test]
async fn kube_discovery_finds_every_resource() {
    let sim = sim();
    let discovery = kube::Discovery::new(sim.client()).run().await.unwrap();
    for (group, kind) in [
        ("", "Pod"),
        ("", "Namespace"),
        ("", "Event"),
        ("events.k8s.io", "Event"),
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "StatefulSet"),
        ("autoscaling", "HorizontalPodAutoscaler"),
        ("coordination.k8s.io", "Lease"),
        ("apiregistration.k8s.io", "APIService"),
    ] {
        let g = discovery
            .get(group)
            .unwrap_or_else(|| panic!("group {group:?} missing"));
        assert!(g.recommended_kind(kind).is_some(), "{group}/{kind} missing");
    }
    let auto = discovery.get("autoscaling").unwrap();
    assert_eq!(auto.preferred_version_or_latest(), "v2");
}

#[tokio::test]
async fn the_event_recorder_publishes_into_the_sim() {
    let sim = sim();
    let client = sim.client();
    let hpas: Api<HorizontalPodAutoscaler> = Api::default_namespaced(client.clone());
    let h = hpas
        .create(&PostParams::default(), &hpa("web", "web"))
        .await
        .unwrap();
    let reporter = kube::runtime::events::Reporter {
        controller: "horizontal-pod-autoscaler".into(),
        instance: None,
    };
    let recorder = kube::runtime::events::Recorder::new(client.clone(), reporter);
    let oref = kube::Resource::object_ref(&h, &());
    for _ in 0..2 {
        recorder
            .publish(
                &kube::runtime::events::Event {
                    type_: kube::runtime::events::EventType::Normal,
                    reason: "SuccessfulRescale".into(),
                    note: Some("New size: 3; reason: cpu resource utilization (percentage of request) above target".into()),
                    action: "Scale".into(),
                    secondary: None,
                },
                &oref,
            )
            .await
            .unwrap();
    }
    let events: Api<Event> = Api::default_namespaced(client);
    let list = events
        .list(&ListParams::default().fields("regarding.name=web"))
        .await
        .unwrap();
    assert_eq!(
        list.items.len(),
        1,
        "the second publish is a series update of the first"
    );
    assert_eq!(list.items[0].reason.as_deref(), Some("SuccessfulRescale"));
}

#[tokio::test]
async fn a_cluster_wide_watch_sees_status_patches_of_workload_pods() {
    let sim = sim();
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    deps.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();
    let all: Api<Pod> = Api::all(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    let rv = pods
        .list(&ListParams::default().limit(1))
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = all
        .watch(&WatchParams::default().timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    pods.patch_status(
        "web-1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Failed"}})),
    )
    .await
    .unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(3), stream.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    match ev {
        WatchEvent::Modified(p) => assert_eq!(p.metadata.name.as_deref(), Some("web-1")),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn an_object_with_finalizers_is_marked_on_delete_and_goes_with_the_last_one() {
    let sim = sim();
    let pods: Api<Pod> = Api::default_namespaced(sim.client());
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    pods.delete("held", &DeleteParams::default()).await.unwrap();
    let marked = pods.get("held").await.unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());
    // A second delete changes nothing.
    pods.delete("held", &DeleteParams::default()).await.unwrap();
    assert_eq!(
        pods.get("held").await.unwrap().metadata.deletion_timestamp,
        marked.metadata.deletion_timestamp
    );
    let release = json!({"metadata": {"finalizers": []}});
    pods.patch("held", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .unwrap();
    assert_eq!(code(pods.get("held").await.unwrap_err()), 404);
}

#[tokio::test]
async fn with_a_creation_delay_a_workloads_pods_appear_that_much_later_on_the_sims_clock() {
    let sim = Sim::new(SimConfig {
        generated_pod_names: true,
        pod_creation_delay: jiff::SignedDuration::from_millis(500),
        ..SimConfig::default()
    });
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    deps.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();
    assert!(pod_names(&pods, "app=web").await.is_empty(), "not yet");
    sim.advance(jiff::SignedDuration::from_millis(499));
    assert!(pod_names(&pods, "app=web").await.is_empty(), "not yet");
    sim.advance(jiff::SignedDuration::from_millis(1));
    assert_eq!(pod_names(&pods, "app=web").await.len(), 2);
    // A scale-up waits as long again.
    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    assert_eq!(pod_names(&pods, "app=web").await.len(), 2);
    sim.advance(jiff::SignedDuration::from_millis(500));
    assert_eq!(pod_names(&pods, "app=web").await.len(), 4);
    // A scale-down is at once.
    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await
    .unwrap();
    assert_eq!(pod_names(&pods, "app=web").await.len(), 1);
}

/// Through 1.35, autoscaling/v1 -> v2 gives an Object metric with an
/// AverageValue target v1's `targetValue` as its `value` ("0": v1 always
/// has one), and validation refuses the write: an HPA with such a metric
/// cannot be updated (or created) through v1. 1.36 fixed the conversion
/// (k/k #137856).
#[tokio::test]
async fn through_1_35_an_object_average_value_hpa_cannot_be_written_through_v1() {
    let object_average = || -> HorizontalPodAutoscaler {
        serde_json::from_value(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 10,
                "metrics": [{"type": "Object", "object": {
                    "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
                    "metric": {"name": "rps"},
                    "target": {"type": "AverageValue", "averageValue": "5"}}}]}
        }))
        .unwrap()
    };
    for (release, refused) in [
        (KubernetesVersion::V1_35, true),
        (KubernetesVersion::V1_36, false),
        (KubernetesVersion::V1_37, false),
    ] {
        let sim = sim_as(FeatureGates::of(release));
        let v2: Api<HorizontalPodAutoscaler> = Api::default_namespaced(sim.client());
        v2.create(&PostParams::default(), &object_average())
            .await
            .unwrap();
        let v1: Api<HpaV1> = Api::default_namespaced(sim.client());
        let mut read = v1.get("web").await.unwrap();
        read.spec.max_replicas = 20;
        let written = v1.replace("web", &PostParams::default(), &read).await;
        if refused {
            let status = api_err(written.unwrap_err());
            assert_eq!(status.code, 422, "{release}");
            assert!(
                status
                    .message
                    .contains("spec.metrics[0].object.target.value: Invalid value: 0")
                    && status.message.ends_with("must be positive"),
                "{release}: {}",
                status.message
            );
            assert_eq!(v2.get("web").await.unwrap().spec.max_replicas, 10);
        } else {
            written.unwrap();
            let stored = v2.get("web").await.unwrap();
            assert_eq!(stored.spec.max_replicas, 20, "{release}");
            let target = &stored.spec.metrics.unwrap()[0]
                .object
                .clone()
                .unwrap()
                .target;
            assert_eq!(target.value, None, "{release}");
        }
    }
}

/// "the HPA watch lags 20s": what was written before the lag reaches watches
/// as usual; a change written after reaches an HPA watch 20 s (of the sim's
/// clock) after its write, and lists answer as of then, while a GET reads
/// the latest. Catching up (`0s`) delivers the rest at once.
#[tokio::test]
async fn a_lagging_hpa_watch_delivers_changes_late_and_lists_answer_as_of_then() {
    let sim = sim();
    let hpas: Api<HorizontalPodAutoscaler> = Api::default_namespaced(sim.client());
    hpas.create(&PostParams::default(), &hpa("web", "web"))
        .await
        .unwrap();
    let rv = sim.resource_version().to_string();
    sim.lag_hpa_watch(SignedDuration::from_secs(20));
    let max = |n: i32| Patch::Merge(json!({"spec": {"maxReplicas": n}}));
    let changed = hpas
        .patch("web", &PatchParams::default(), &max(20))
        .await
        .unwrap();
    let mut stream = hpas
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .unwrap()
        .boxed();
    assert!(
        next_within(&mut stream).await.is_none(),
        "held back for 20 s"
    );
    let listed = hpas.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items[0].spec.max_replicas, 10, "the list lags too");
    assert_eq!(
        listed.metadata.resource_version.as_deref(),
        Some(rv.as_str()),
        "consistent with what the watch has delivered"
    );
    assert_eq!(hpas.get("web").await.unwrap().spec.max_replicas, 20);

    sim.advance(SignedDuration::from_secs(19));
    assert!(
        next_within(&mut stream).await.is_none(),
        "19 s after the write"
    );
    sim.advance(SignedDuration::from_secs(1));
    match next_within(&mut stream).await.unwrap().unwrap() {
        WatchEvent::Modified(h) => {
            assert_eq!(
                h.metadata.resource_version,
                changed.metadata.resource_version
            );
        }
        other => panic!("expected the change, got {other:?}"),
    }
    let listed = hpas.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items[0].spec.max_replicas, 20);

    // A later change, then catching up: delivered without the clock moving.
    hpas.patch("web", &PatchParams::default(), &max(30))
        .await
        .unwrap();
    assert!(next_within(&mut stream).await.is_none());
    sim.lag_hpa_watch(SignedDuration::ZERO);
    match next_within(&mut stream).await.unwrap().unwrap() {
        WatchEvent::Modified(h) => assert_eq!(h.spec.max_replicas, 30),
        other => panic!("expected the change, got {other:?}"),
    }
}

/// The stream's next item if one comes within 300 ms.
async fn next_within<S: futures::Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    tokio::time::timeout(Duration::from_millis(300), stream.next())
        .await
        .ok()
        .flatten()
}
