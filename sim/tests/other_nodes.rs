#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! Pods the sim does not run: those of another scheduler, and every pod of
//! a sim without a node of its own. They stay Pending, as the API server
//! stores them, until a scheduler binds them (`pods/binding`) and their
//! node's kubelet writes their status; the sim's own kubelet never moves
//! them, whatever their delays or status say.

use hpa_sim::{PodDelays, Sim, SimConfig};
use jiff::SignedDuration;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn deployment(name: &str, replicas: i32, scheduler: Option<&str>) -> Deployment {
    let mut spec = json!({"containers": [{"name": "app", "image": "nginx"}]});
    if let Some(s) = scheduler {
        spec["schedulerName"] = json!(s);
    }
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}
    }))
    .unwrap()
}

fn binding(pod: &str, node: &str) -> Binding {
    Binding {
        metadata: kube::api::ObjectMeta {
            name: Some(pod.to_owned()),
            ..Default::default()
        },
        target: ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Node".to_owned()),
            name: Some(node.to_owned()),
            ..Default::default()
        },
    }
}

async fn bind(pods: &Api<Pod>, pod: &str, node: &str) -> Result<Value, kube::Error> {
    pods.create_subresource("binding", pod, &PostParams::default(), &binding(pod, node))
        .await
}

fn api_status(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn condition<'a>(
    pod: &'a Pod,
    type_: &str,
) -> Option<&'a k8s_openapi::api::core::v1::PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

async fn live(pods: &Api<Pod>, app: &str) -> Vec<Pod> {
    pods.list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .unwrap()
        .items
}

#[tokio::test]
async fn pods_of_another_scheduler_wait_unbound_and_the_sims_kubelet_never_moves_them() {
    let sim = Sim::new(SimConfig::default());
    // Delays and room that would move the sim's own pods.
    sim.set_pod_delays(
        "default",
        "web",
        PodDelays {
            running: SignedDuration::from_secs(5),
            ready: SignedDuration::from_secs(5),
            max_running: Some(5),
        },
    );
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    deps.create(&PostParams::default(), &deployment("web", 2, Some("fake")))
        .await
        .unwrap();
    deps.create(&PostParams::default(), &deployment("own", 1, None))
        .await
        .unwrap();
    sim.advance(SignedDuration::from_secs(60));
    for pod in live(&pods, "web").await {
        let status = pod.status.clone().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Pending"));
        assert!(status.conditions.is_none() && status.start_time.is_none());
        assert!(pod.spec.unwrap().node_name.is_none());
    }
    // The default scheduler's pod is the sim's to run.
    let own = &live(&pods, "own").await[0];
    assert_eq!(
        own.spec.as_ref().unwrap().node_name.as_deref(),
        Some("sim-node-0")
    );
    assert_eq!(
        own.status.as_ref().unwrap().phase.as_deref(),
        Some("Running")
    );

    // A scheduler writes that it found no room: the sim, which has room
    // for 5, leaves the pod to it.
    let unschedulable = json!({"status": {"conditions": [{"type": "PodScheduled",
        "status": "False", "reason": "Unschedulable", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    pods.patch_status(
        "web-1",
        &PatchParams::default(),
        &Patch::Merge(&unschedulable),
    )
    .await
    .unwrap();
    sim.advance(SignedDuration::from_secs(60));
    let waiting = pods.get("web-1").await.unwrap();
    assert_eq!(
        waiting.status.as_ref().unwrap().phase.as_deref(),
        Some("Pending")
    );
    assert!(waiting.spec.unwrap().node_name.is_none());

    // Bound, the pod is its node's: scheduled now, and still the sim's
    // kubelet does not start it.
    let before = sim.clock().now();
    let answer = bind(&pods, "web-0", "fake-node").await.unwrap();
    assert_eq!(answer["status"], "Success");
    let bound = pods.get("web-0").await.unwrap();
    assert_eq!(
        bound.spec.as_ref().unwrap().node_name.as_deref(),
        Some("fake-node")
    );
    let scheduled = condition(&bound, "PodScheduled").unwrap();
    assert_eq!(scheduled.status, "True");
    assert_eq!(
        scheduled
            .last_transition_time
            .as_ref()
            .unwrap()
            .0
            .as_second(),
        before.as_second()
    );
    sim.advance(SignedDuration::from_secs(60));
    let bound = pods.get("web-0").await.unwrap();
    assert_eq!(
        bound.status.as_ref().unwrap().phase.as_deref(),
        Some("Pending")
    );

    // Its kubelet's status counts for the Deployment as any pod's does.
    let running = json!({"status": {"phase": "Running", "conditions": [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "True"}]}});
    pods.patch_status("web-0", &PatchParams::default(), &Patch::Merge(&running))
        .await
        .unwrap();
    let web = deps.get("web").await.unwrap().status.unwrap();
    assert_eq!((web.replicas, web.ready_replicas), (Some(2), Some(1)));
}

#[tokio::test]
async fn a_binding_is_refused_as_the_api_server_refuses_it() {
    let sim = Sim::new(SimConfig::default());
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    deps.create(&PostParams::default(), &deployment("web", 1, Some("fake")))
        .await
        .unwrap();
    bind(&pods, "web-0", "n1").await.unwrap();
    let again = api_status(bind(&pods, "web-0", "n2").await.unwrap_err());
    assert_eq!((again.code, again.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        again.message,
        r#"Operation cannot be fulfilled on pods/binding "web-0": pod web-0 is already assigned to node "n1""#
    );
    let missing = api_status(bind(&pods, "nope", "n1").await.unwrap_err());
    assert_eq!(missing.code, 404);
    let mismatch = api_status(
        pods.create_subresource::<Binding, Value>(
            "binding",
            "web-0",
            &PostParams::default(),
            &binding("other", "n1"),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(mismatch.code, 400);
    let mut no_target = binding("web-0", "");
    no_target.target.name = None;
    let invalid = api_status(
        pods.create_subresource::<Binding, Value>(
            "binding",
            "web-0",
            &PostParams::default(),
            &no_target,
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(invalid.code, 422);
    assert!(
        invalid.message.contains("target.name: Required value"),
        "{}",
        invalid.message
    );
}

#[tokio::test]
async fn a_sim_without_a_node_runs_no_pod_of_its_own() {
    let sim = Sim::new(SimConfig {
        own_node: false,
        ..SimConfig::default()
    });
    let client = sim.client();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    deps.create(&PostParams::default(), &deployment("web", 2, None))
        .await
        .unwrap();
    sim.advance(SignedDuration::from_secs(60));
    let made = live(&pods, "web").await;
    assert_eq!(made.len(), 2);
    for pod in made {
        assert_eq!(pod.status.unwrap().phase.as_deref(), Some("Pending"));
        assert!(pod.spec.unwrap().node_name.is_none());
    }
    let web = deps.get("web").await.unwrap().status.unwrap();
    assert_eq!(web.ready_replicas.unwrap_or(0), 0);
}
