#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! The admin API over a real socket: every endpoint through `AdminClient`,
//! with a kube client on the same sim seeing the effects.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use hpa_core::clock::ScenarioClock;
use hpa_sim::admin::{
    AdminClient, AdminError, CountedFault, FaultAction, ForbidFault, SimAdmin, ToggleFault,
};
use hpa_sim::{FeatureGates, KubernetesVersion, PodDelays, Sim, SimConfig};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(sim: Sim) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            hpa_sim::serve(sim, listener, async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Self {
            addr,
            stop: Some(stop),
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn admin(&self) -> AdminClient {
        AdminClient::new(self.url()).unwrap()
    }

    fn kube(&self) -> kube::Client {
        let config = kube::Config::new(self.url().parse().unwrap());
        kube::Client::try_from(config).unwrap()
    }

    async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("the server stops within 10s")
            .unwrap();
    }
}

fn virtual_sim() -> Sim {
    Sim::new(SimConfig::default())
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}
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

fn is_ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The status and message of a refused admin request.
fn rejected(e: AdminError) -> (u16, String) {
    match e {
        AdminError::Rejected {
            status, message, ..
        } => (status, message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn the_clock_is_read_and_advanced_over_http() {
    let server = Server::start(virtual_sim()).await;
    let admin = server.admin();
    let before = admin.clock().await.unwrap();
    assert!(before.is_virtual);
    let after = admin.advance(SignedDuration::from_secs(90)).await.unwrap();
    assert_eq!(after.now, before.now + SignedDuration::from_secs(90));
    assert_eq!(admin.clock().await.unwrap().now, after.now);
    let at: Timestamp = "2026-03-01T12:00:00Z".parse().unwrap();
    assert_eq!(admin.set_clock(at).await.unwrap().now, at);
    assert_eq!(admin.clock().await.unwrap().now, at);
    server.stop().await;
}

#[tokio::test]
async fn a_wall_clock_refuses_to_be_advanced_with_409() {
    let sim = Sim::new(SimConfig {
        clock: ScenarioClock::wall(),
        ..SimConfig::default()
    });
    let server = Server::start(sim).await;
    let admin = server.admin();
    let state = admin.clock().await.unwrap();
    assert!(!state.is_virtual);
    let drift = Timestamp::now().duration_since(state.now).abs();
    assert!(drift < SignedDuration::from_secs(5), "wall time: {drift}");
    let (status, message) = rejected(
        admin
            .advance(SignedDuration::from_secs(10))
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 409);
    assert!(message.contains("wall clock"), "{message}");
    server.stop().await;
}

#[tokio::test]
async fn a_fault_set_over_http_makes_a_scale_read_fail_until_cleared() {
    let server = Server::start(virtual_sim()).await;
    let admin = server.admin();
    let deps: Api<Deployment> = Api::default_namespaced(server.kube());
    deps.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();
    admin
        .set_fault(&FaultAction::FailGetScale(ToggleFault {
            namespace: "default".into(),
            name: "web".into(),
            fail: true,
        }))
        .await
        .unwrap();
    let err = deps.get_scale("web").await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 500),
        "{err:?}"
    );
    admin.clear_faults().await.unwrap();
    let scale: Scale = deps.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(2));
    server.stop().await;
}

/// RBAC's refusal, injected: the verb on the resource answers 403 with the
/// API server's wording; other verbs and resources pass; lifting it or
/// clearing the faults allows it again.
#[tokio::test]
async fn a_forbidden_verb_answers_403_naming_verb_and_resource() {
    // A metrics backend nobody serves: RBAC answers before the proxy.
    let server = Server::start(Sim::new(SimConfig {
        metrics: Some(hpa_sim::Backend::Url("http://127.0.0.1:1".into())),
        ..SimConfig::default()
    }))
    .await;
    let admin = server.admin();
    let deps: Api<Deployment> = Api::default_namespaced(server.kube());
    deps.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();
    let forbid = |resource: &str, forbid: bool| {
        FaultAction::Forbid(ForbidFault {
            verb: "get".into(),
            resource: resource.into(),
            forbid,
        })
    };
    admin
        .set_fault(&forbid("deployments.apps/scale", true))
        .await
        .unwrap();
    let err = deps.get_scale("web").await.unwrap_err();
    let kube::Error::Api(status) = &err else {
        panic!("{err:?}")
    };
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        "deployments.apps \"web\" is forbidden: User \"hpa-harness\" cannot get resource \"deployments/scale\" in API group \"apps\" in the namespace \"default\""
    );
    // Another verb, and the object itself, are not denied.
    deps.get("web").await.unwrap();
    deps.list(&ListParams::default()).await.unwrap();
    admin
        .set_fault(&forbid("deployments.apps/scale", false))
        .await
        .unwrap();
    deps.get_scale("web").await.unwrap();
    // An aggregated API's resource, named with its group.
    admin
        .set_fault(&FaultAction::Forbid(ForbidFault {
            verb: "list".into(),
            resource: "pods.metrics.k8s.io".into(),
            forbid: true,
        }))
        .await
        .unwrap();
    let (code, body) = raw(
        &server,
        reqwest::Method::GET,
        "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
        "",
    )
    .await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body.contains("pods.metrics.k8s.io is forbidden: User \"hpa-harness\" cannot list resource \"pods\" in API group \"metrics.k8s.io\" in the namespace \"default\""),
        "{body}"
    );
    admin.clear_faults().await.unwrap();
    deps.get_scale("web").await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn a_watch_lag_set_over_http_holds_hpa_changes_until_cleared() {
    let sim = virtual_sim();
    let server = Server::start(sim.clone()).await;
    let admin = server.admin();
    admin
        .set_fault(&FaultAction::LagHpaWatch(hpa_sim::admin::WatchLag {
            lag: "20s".into(),
        }))
        .await
        .unwrap();
    assert_eq!(
        sim.faults().hpa_watch_lag().map(|(lag, _)| lag),
        Some(jiff::SignedDuration::from_secs(20))
    );
    admin.clear_faults().await.unwrap();
    assert_eq!(sim.faults().hpa_watch_lag(), None);
    server.stop().await;
}

#[tokio::test]
async fn scale_overrides_and_conflicts_set_over_http_show_on_the_scale() {
    let server = Server::start(virtual_sim()).await;
    let admin = server.admin();
    let deps: Api<Deployment> = Api::default_namespaced(server.kube());
    deps.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();
    let action: FaultAction = serde_json::from_value(json!({
        "overrideScaleReplicas": {"name": "web", "spec": 7, "status": 5}
    }))
    .unwrap();
    admin.set_fault(&action).await.unwrap();
    let action: FaultAction =
        serde_json::from_value(json!({"overrideScaleSelector": {"name": "web", "selector": ""}}))
            .unwrap();
    admin.set_fault(&action).await.unwrap();
    let scale = deps.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(7));
    let status = scale.status.unwrap();
    assert_eq!(status.replicas, 5);
    assert_eq!(status.selector, None);

    admin
        .set_fault(&FaultAction::ConflictUpdateScale(CountedFault {
            namespace: "default".into(),
            name: "web".into(),
            times: 1,
        }))
        .await
        .unwrap();
    let patch = kube::api::Patch::Merge(json!({"spec": {"replicas": 3}}));
    let err = deps
        .patch_scale("web", &kube::api::PatchParams::default(), &patch)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409),
        "{err:?}"
    );
    let scale = deps
        .patch_scale("web", &kube::api::PatchParams::default(), &patch)
        .await
        .unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(3));
    server.stop().await;
}

#[tokio::test]
async fn pod_delays_set_over_http_hold_readiness_until_the_clock_is_advanced() {
    let server = Server::start(virtual_sim()).await;
    let admin = server.admin();
    admin
        .set_pod_delays(
            "default",
            "web",
            PodDelays {
                running: SignedDuration::ZERO,
                ready: SignedDuration::from_secs(30),
                max_running: None,
            },
        )
        .await
        .unwrap();
    let client = server.kube();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    deps.create(&PostParams::default(), &deployment("web", 1))
        .await
        .unwrap();
    assert!(!is_ready(&pods.get("web-0").await.unwrap()));
    admin.advance(SignedDuration::from_secs(29)).await.unwrap();
    assert!(!is_ready(&pods.get("web-0").await.unwrap()));
    admin.advance(SignedDuration::from_secs(1)).await.unwrap();
    assert!(is_ready(&pods.get("web-0").await.unwrap()));
    server.stop().await;
}

#[tokio::test]
async fn the_release_and_its_feature_gates_are_read_and_set_over_http() {
    let sim = virtual_sim();
    let server = Server::start(sim.clone()).await;
    let admin = server.admin();
    let state = admin.feature_gates().await.unwrap();
    assert_eq!(state.kubernetes_version, KubernetesVersion::V1_37);
    assert_eq!(state.feature_gates, "");
    assert_eq!(
        state.gates,
        BTreeMap::from([
            ("HPAConfigurableTolerance".to_owned(), true),
            ("HPAGeneration".to_owned(), true),
            ("HPAOptimizedSelectorStore".to_owned(), true),
            ("HPAScaleToZero".to_owned(), true),
            ("PodLevelResources".to_owned(), true),
            ("StaleControllerConsistencyHPA".to_owned(), true),
        ])
    );

    let wanted = FeatureGates::parse(KubernetesVersion::V1_36, "HPAScaleToZero=true").unwrap();
    let answer = admin.set_feature_gates(&wanted).await.unwrap();
    assert_eq!(sim.feature_gates(), wanted);
    assert_eq!(answer, admin.feature_gates().await.unwrap());
    assert_eq!(answer.to_gates().unwrap(), wanted);
    assert_eq!(answer.feature_gates, "HPAScaleToZero=true");
    assert_eq!(answer.gates.get("HPAGeneration"), None, "absent in 1.36");
    let info = server.kube().apiserver_version().await.unwrap();
    assert_eq!((info.major.as_str(), info.minor.as_str()), ("1", "36"));

    // Through the trait the scenario world uses.
    let back = FeatureGates::of(KubernetesVersion::V1_38);
    SimAdmin::set_feature_gates(&admin, &back).await.unwrap();
    assert_eq!(sim.feature_gates(), back);
    server.stop().await;
}

#[tokio::test]
async fn a_refused_feature_gate_is_a_400_that_changes_nothing() {
    let sim = virtual_sim();
    let before = FeatureGates::parse(KubernetesVersion::V1_37, "HPAGeneration=false").unwrap();
    sim.set_feature_gates(&before);
    let server = Server::start(sim.clone()).await;
    let put = reqwest::Method::PUT;
    for (body, wanted) in [
        (
            r#"{"featureGates": "HPAScaleToZero=false,HPAConfigurableTolerance=false"}"#,
            "field featureGates: cannot set feature gate HPAConfigurableTolerance to false, feature is locked to true",
        ),
        (
            r#"{"kubernetesVersion": "1.38", "featureGates": "HPAGeneration=false"}"#,
            "cannot set feature gate HPAGeneration to false, feature is locked to true",
        ),
        (
            r#"{"kubernetesVersion": "1.36", "featureGates": "HPAGeneration=true"}"#,
            "field featureGates: unrecognized feature gate: HPAGeneration",
        ),
        (
            r#"{"kubernetesVersion": "1.34"}"#,
            "field kubernetesVersion: Kubernetes version \"1.34\" is not supported",
        ),
        (r#"{"HPAConfigurableTolerance": false}"#, "locked to true"),
        (
            r#"{"HPAScaleToZero": false, "NoSuchGate": true}"#,
            "field NoSuchGate: unrecognized feature gate: NoSuchGate",
        ),
    ] {
        let (status, message) = raw(&server, put.clone(), "/admin/v1/feature-gates", body).await;
        assert_eq!(status, 400, "{body}: {message}");
        assert!(message.contains(wanted), "{body}: {message:?}");
        assert_eq!(sim.feature_gates(), before, "{body} changed the gates");
    }
    server.stop().await;
}

#[tokio::test]
async fn the_older_map_body_sets_gates_on_top_of_the_current_ones() {
    let sim = virtual_sim();
    sim.set_feature_gates(&FeatureGates::of(KubernetesVersion::V1_36));
    let server = Server::start(sim.clone()).await;
    let (status, message) = raw(
        &server,
        reqwest::Method::PUT,
        "/admin/v1/feature-gates",
        r#"{"HPAScaleToZero": true}"#,
    )
    .await;
    assert_eq!(status, 200, "{message}");
    let (status, _) = raw(
        &server,
        reqwest::Method::PUT,
        "/admin/v1/feature-gates",
        r#"{"PodLevelResources": false}"#,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        sim.feature_gates(),
        FeatureGates::parse(
            KubernetesVersion::V1_36,
            "HPAScaleToZero=true,PodLevelResources=false"
        )
        .unwrap()
    );
    server.stop().await;
}

#[tokio::test]
async fn reset_removes_what_clients_made_and_open_watches_see_it_go() {
    let sim = virtual_sim();
    let server = Server::start(sim.clone()).await;
    let admin = server.admin();
    let client = server.kube();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap(),
        )
        .await
        .unwrap();
    let deps: Api<Deployment> = Api::default_namespaced(client.clone());
    let team_deps: Api<Deployment> = Api::namespaced(client.clone(), "team");
    deps.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();
    team_deps
        .create(&PostParams::default(), &deployment("api", 1))
        .await
        .unwrap();
    let hpas: Api<HorizontalPodAutoscaler> = Api::default_namespaced(client.clone());
    hpas.create(&PostParams::default(), &hpa("web", "web"))
        .await
        .unwrap();
    let leases: Api<Lease> = Api::default_namespaced(client.clone());
    leases
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": "lock", "finalizers": ["x/hold"]}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    nodes
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "node-1"}})).unwrap(),
        )
        .await
        .unwrap();
    admin
        .set_fault(&FaultAction::FailGetScale(ToggleFault {
            namespace: "default".into(),
            name: "web".into(),
            fail: true,
        }))
        .await
        .unwrap();
    admin
        .set_feature_gates(
            &FeatureGates::parse(KubernetesVersion::V1_36, "HPAScaleToZero=true").unwrap(),
        )
        .await
        .unwrap();

    let all_deps: Api<Deployment> = Api::all(client.clone());
    let rv = all_deps
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut watch = all_deps
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    let rv_before = sim.resource_version();

    let summary = admin.reset().await.unwrap();
    // 2 deployments, 3 pods, 1 HPA, 1 lease, 1 node, 1 namespace.
    assert_eq!(summary.removed, 9);
    assert!(summary.resource_version > rv_before);

    let pods: Api<Pod> = Api::all(client.clone());
    let lp = ListParams::default();
    assert!(pods.list(&lp).await.unwrap().items.is_empty());
    assert!(all_deps.list(&lp).await.unwrap().items.is_empty());
    let all_hpas: Api<HorizontalPodAutoscaler> = Api::all(client.clone());
    assert!(all_hpas.list(&lp).await.unwrap().items.is_empty());
    let all_leases: Api<Lease> = Api::all(client.clone());
    assert!(all_leases.list(&lp).await.unwrap().items.is_empty());
    assert!(nodes.list(&lp).await.unwrap().items.is_empty());
    let mut names: Vec<String> = namespaces
        .list(&lp)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|n| n.metadata.name.unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );

    let mut deleted = Vec::new();
    while deleted.len() < 2 {
        let event = tokio::time::timeout(Duration::from_secs(5), watch.try_next())
            .await
            .expect("the watch reports the deletions within 5s")
            .unwrap()
            .expect("the watch stays open");
        if let WatchEvent::Deleted(d) = event {
            deleted.push(d.metadata.name.unwrap());
        }
    }
    deleted.sort();
    assert_eq!(deleted, ["api", "web"]);

    // Faults and gates are back to the configuration.
    deps.create(&PostParams::default(), &deployment("web", 1))
        .await
        .unwrap();
    assert!(deps.get_scale("web").await.is_ok());
    let default_pods: Api<Pod> = Api::default_namespaced(client.clone());
    assert!(
        default_pods.get("web-0").await.is_ok(),
        "pod indices start again at 0"
    );
    assert_eq!(sim.feature_gates(), FeatureGates::default());
    assert!(sim.resource_version() > summary.resource_version);
    drop(watch);
    server.stop().await;
}

#[tokio::test]
async fn request_counters_are_read_and_zeroed_over_http() {
    let server = Server::start(virtual_sim()).await;
    let admin = server.admin();
    let pods: Api<Pod> = Api::default_namespaced(server.kube());
    admin.reset_requests().await.unwrap();
    pods.list(&ListParams::default()).await.unwrap();
    pods.list(&ListParams::default()).await.unwrap();
    let _ = pods.get("missing").await;
    let counts = admin.requests().await.unwrap();
    let count = |verb: &str| {
        counts
            .requests
            .iter()
            .find(|r| r.verb == verb && r.resource == "pods")
            .map_or(0, |r| r.count)
    };
    assert_eq!(count("list"), 2, "{counts:?}");
    assert_eq!(count("get"), 1, "{counts:?}");
    assert_eq!(counts.total, 3, "admin calls are not counted: {counts:?}");
    admin.reset_requests().await.unwrap();
    assert_eq!(admin.requests().await.unwrap().total, 0);
    server.stop().await;
}

/// Sends a raw body and returns the status and the `message`.
async fn raw(server: &Server, method: reqwest::Method, path: &str, body: &str) -> (u16, String) {
    // A bare reqwest client needs a TLS provider even for plain HTTP.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::Client::new()
        .request(method, format!("{}{path}", server.url()))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.unwrap();
    (
        status,
        body["message"].as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test]
async fn bad_bodies_are_refused_with_400_naming_the_field() {
    let server = Server::start(virtual_sim()).await;
    let post = reqwest::Method::POST;
    let put = reqwest::Method::PUT;
    let cases = [
        (
            post.clone(),
            "/admin/v1/clock",
            r#"{"advance": "soon"}"#,
            "advance",
        ),
        (
            post.clone(),
            "/admin/v1/clock",
            r#"{"advnce": "1s"}"#,
            "advnce",
        ),
        (
            post.clone(),
            "/admin/v1/clock",
            r#"{"advance": "-5s"}"#,
            "advance",
        ),
        (
            post.clone(),
            "/admin/v1/faults",
            r#"{"failGetScale": {"namespace": "default"}}"#,
            "name",
        ),
        (
            post.clone(),
            "/admin/v1/faults",
            r#"{"conflictHpaStatus": {"name": "web", "times": "twice"}}"#,
            "conflictHpaStatus.times",
        ),
        (
            post.clone(),
            "/admin/v1/faults",
            r#"{"breakEverything": {"name": "web"}}"#,
            "breakEverything",
        ),
        (
            post.clone(),
            "/admin/v1/faults",
            r#"{"lagHpaWatch": {"lag": "a while"}}"#,
            "lagHpaWatch.lag",
        ),
        (
            post.clone(),
            "/admin/v1/faults",
            r#"{"lagHpaWatch": {"lag": "-5s"}}"#,
            "lagHpaWatch.lag",
        ),
        (
            post.clone(),
            "/admin/v1/faults",
            r#"{"failGetScale": {"name": "a"}, "failUpdateScale": {"name": "b"}}"#,
            "failUpdateScale",
        ),
        (
            put.clone(),
            "/admin/v1/pod-delays/default/web",
            r#"{"running": "0s", "ready": "later"}"#,
            "ready",
        ),
        (
            put.clone(),
            "/admin/v1/feature-gates",
            r#"{"HPAScaleToZero": "yes"}"#,
            "HPAScaleToZero",
        ),
    ];
    for (method, path, body, field) in cases {
        let (status, message) = raw(&server, method.clone(), path, body).await;
        assert_eq!(status, 400, "{method} {path} {body}: {message}");
        assert!(
            message.contains(field),
            "{method} {path} {body}: {message:?} should name {field}"
        );
    }
    server.stop().await;
}
