#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! Rolling updates and pods without room, through kube-rs against the sim:
//! a Deployment surges and shrinks as the deployment controller does, a
//! StatefulSet replaces its pods highest ordinal first, and pods beyond a
//! workload's room stay Pending.

use hpa_sim::{PodDelays, Sim, SimConfig, TEMPLATE_HASH_LABEL};
use jiff::SignedDuration;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn workload(kind: &str, name: &str, replicas: i32) -> serde_json::Value {
    json!({
        "apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "serviceName": name,
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}
    })
}

fn ready_after(sim: &Sim, name: &str, secs: i64, max_running: Option<u32>) {
    sim.set_pod_delays(
        "default",
        name,
        PodDelays {
            running: SignedDuration::ZERO,
            ready: SignedDuration::from_secs(secs),
            max_running,
        },
    );
}

/// (name, template hash or revision, phase, ready) of each live pod, by name.
async fn pods(api: &Api<Pod>) -> Vec<(String, String, String, bool)> {
    let mut out: Vec<_> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(|p| {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            let revision = labels
                .get(TEMPLATE_HASH_LABEL)
                .or_else(|| labels.get(hpa_sim::REVISION_LABEL))
                .cloned()
                .unwrap_or_default();
            let status = p.status.unwrap_or_default();
            let ready = status
                .conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            (
                p.metadata.name.unwrap(),
                revision,
                status.phase.unwrap_or_default(),
                ready,
            )
        })
        .collect();
    out.sort_by_key(|(n, ..)| {
        n.rsplit_once('-')
            .and_then(|(_, i)| i.parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    });
    out
}

async fn roll(api: &Api<Deployment>, name: &str, version: u32) {
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {"version": version.to_string()}}}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// The live pods' names of one revision.
fn of(pods: &[(String, String, String, bool)], revision: &str) -> Vec<String> {
    pods.iter()
        .filter(|p| p.1 == revision)
        .map(|p| p.0.clone())
        .collect()
}

#[tokio::test]
async fn a_deployment_surges_then_swaps_old_pods_for_ready_new_ones() {
    let sim = Sim::new(SimConfig::default());
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let api: Api<Pod> = Api::default_namespaced(client);
    deps.create(
        &PostParams::default(),
        &serde_json::from_value(workload("Deployment", "web", 4)).unwrap(),
    )
    .await
    .unwrap();
    let before = pods(&api).await;
    let old = before[0].1.clone();
    assert_eq!(of(&before, &old).len(), 4);
    ready_after(&sim, "web", 30, None);
    roll(&deps, "web", 2).await;

    // maxSurge 25% of 4 = 1, maxUnavailable 1: one old pod goes at once,
    // two new pods (unready) take the total to 5.
    let now = pods(&api).await;
    let new = now.iter().find(|p| p.1 != old).unwrap().1.clone();
    assert_eq!(of(&now, &old), ["web-0", "web-1", "web-2"]);
    assert_eq!(of(&now, &new), ["web-4", "web-5"]);
    assert!(now.iter().filter(|p| p.1 == new).all(|p| !p.3));
    let status = deps.get("web").await.unwrap().status.unwrap();
    assert_eq!(status.replicas, Some(5));
    assert_eq!(status.updated_replicas, Some(2));
    assert_eq!(status.ready_replicas, Some(3));

    // Nothing moves until the new pods are Ready.
    sim.advance(SignedDuration::from_secs(29));
    assert_eq!(of(&pods(&api).await, &old).len(), 3);
    sim.advance(SignedDuration::from_secs(1));
    let now = pods(&api).await;
    assert_eq!(of(&now, &old), ["web-0"]);
    assert_eq!(of(&now, &new), ["web-4", "web-5", "web-6", "web-7"]);

    sim.advance(SignedDuration::from_secs(30));
    let now = pods(&api).await;
    assert!(of(&now, &old).is_empty());
    assert_eq!(of(&now, &new).len(), 4);
    let status = deps.get("web").await.unwrap().status.unwrap();
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.ready_replicas
        ),
        (Some(4), Some(4), Some(4))
    );
}

#[tokio::test]
async fn without_surge_old_pods_make_room_first() {
    let sim = Sim::new(SimConfig::default());
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let api: Api<Pod> = Api::default_namespaced(client);
    let mut obj = workload("Deployment", "web", 4);
    obj["spec"]["strategy"] = json!({"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}});
    deps.create(
        &PostParams::default(),
        &serde_json::from_value(obj).unwrap(),
    )
    .await
    .unwrap();
    let old = pods(&api).await[0].1.clone();
    ready_after(&sim, "web", 30, None);
    roll(&deps, "web", 2).await;
    let now = pods(&api).await;
    assert_eq!(now.len(), 4);
    assert_eq!(of(&now, &old).len(), 3);
    sim.advance(SignedDuration::from_secs(30));
    let now = pods(&api).await;
    assert_eq!(now.len(), 4);
    assert_eq!(of(&now, &old).len(), 2);
}

#[tokio::test]
async fn a_scale_in_mid_rollout_is_shared_among_old_and_new_pods() {
    let sim = Sim::new(SimConfig::default());
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let api: Api<Pod> = Api::default_namespaced(client);
    deps.create(
        &PostParams::default(),
        &serde_json::from_value(workload("Deployment", "web", 4)).unwrap(),
    )
    .await
    .unwrap();
    let old = pods(&api).await[0].1.clone();
    ready_after(&sim, "web", 30, None);
    roll(&deps, "web", 2).await;
    deps.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .unwrap();
    // 3 old + 2 new, allowed 5 + 2 surge: each gets one more.
    let now = pods(&api).await;
    assert_eq!(of(&now, &old).len(), 4);
    assert_eq!(now.len(), 7);
    sim.advance(SignedDuration::from_secs(60));
    let now = pods(&api).await;
    assert!(of(&now, &old).is_empty(), "{now:?}");
    assert_eq!(now.len(), 5);
}

#[tokio::test]
async fn a_statefulset_replaces_one_pod_at_a_time_highest_ordinal_first() {
    let sim = Sim::new(SimConfig::default());
    let client = sim.client();
    let sets: Api<StatefulSet> = Api::default_namespaced(client.clone());
    let api: Api<Pod> = Api::default_namespaced(client);
    sets.create(
        &PostParams::default(),
        &serde_json::from_value(workload("StatefulSet", "db", 3)).unwrap(),
    )
    .await
    .unwrap();
    let old = pods(&api).await[0].1.clone();
    ready_after(&sim, "db", 30, None);
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {"version": "2"}}}}});
    sets.patch("db", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let names = |ps: &[(String, String, String, bool)]| {
        ps.iter()
            .map(|p| format!("{}{}", p.0, if p.1 == old { "" } else { "*" }))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&pods(&api).await), ["db-0", "db-1", "db-2*"]);
    sim.advance(SignedDuration::from_secs(29));
    assert_eq!(names(&pods(&api).await), ["db-0", "db-1", "db-2*"]);
    sim.advance(SignedDuration::from_secs(1));
    assert_eq!(names(&pods(&api).await), ["db-0", "db-1*", "db-2*"]);
    sim.advance(SignedDuration::from_secs(30));
    assert_eq!(names(&pods(&api).await), ["db-0*", "db-1*", "db-2*"]);
    sim.advance(SignedDuration::from_secs(30));
    let status = sets.get("db").await.unwrap().status.unwrap();
    assert_eq!(status.ready_replicas, Some(3));
    assert_eq!(status.updated_replicas, Some(3));
}

#[tokio::test]
async fn pods_beyond_the_room_stay_pending_until_a_running_one_goes() {
    let sim = Sim::new(SimConfig::default());
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let api: Api<Pod> = Api::default_namespaced(client);
    deps.create(
        &PostParams::default(),
        &serde_json::from_value(workload("Deployment", "web", 2)).unwrap(),
    )
    .await
    .unwrap();
    ready_after(&sim, "web", 0, Some(3));
    deps.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .unwrap();
    let phases =
        |ps: Vec<(String, String, String, bool)>| ps.into_iter().map(|p| p.2).collect::<Vec<_>>();
    assert_eq!(
        phases(pods(&api).await),
        ["Running", "Running", "Running", "Pending", "Pending"]
    );
    let pending = api.get("web-3").await.unwrap();
    let status = pending.status.unwrap();
    assert!(status.start_time.is_none());
    let scheduled = status
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "PodScheduled")
        .unwrap();
    assert_eq!(
        (scheduled.status.as_str(), scheduled.reason.as_deref()),
        ("False", Some("Unschedulable"))
    );
    assert_eq!(
        deps.get("web").await.unwrap().status.unwrap().replicas,
        Some(5)
    );
    // A running pod goes: the oldest waiting one starts.
    api.delete("web-0", &DeleteParams::default()).await.unwrap();
    assert_eq!(
        phases(pods(&api).await),
        ["Running", "Running", "Running", "Pending"]
    );
    assert_eq!(
        api.get("web-3")
            .await
            .unwrap()
            .status
            .unwrap()
            .phase
            .as_deref(),
        Some("Running")
    );
}
