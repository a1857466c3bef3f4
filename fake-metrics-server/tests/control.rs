//! The control API through `ControlClient` and raw HTTP: scripts, changes,
//! timelines, faults, the request log, the clock and bad inputs.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use fake_metrics_server::client::ClientError;
use fake_metrics_server::log::{Group, LogFilter};
use fake_metrics_server::script::{Api, Fault, PodSpec, ScriptPatch};
use fake_metrics_server::types::{ExternalMetricValueList, MetricValueList, PodMetricsList};
use jiff::SignedDuration;
use support::{Options, SCRIPT, start, start_with};

const PODS: &str = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods";

async fn cpu_of(s: &support::Server, pod: &str) -> Option<String> {
    let list: PodMetricsList = s.get_as(PODS).await;
    list.items
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some(pod))
        .and_then(|p| p.containers.first())
        .and_then(|c| c.usage.get("cpu"))
        .map(|q| q.0.clone())
}

const TIMELINE: &str = r#"
pods:
  - name: web-0
    labels: {app: web}
    containers: [{name: app, cpu: 100m}]
timeline:
  - at: 2m
    changes:
      - setFault: {api: resource, status: 503}
  - at: 1m
    changes:
      - podUsage: {pod: web-0, container: app, cpu: 900m}
      - pod: {name: web-1, labels: {app: web}, containers: [{name: app, cpu: 300m}]}
"#;

#[tokio::test]
async fn timeline_changes_values_at_their_offsets_on_the_virtual_clock() {
    let s = start(TIMELINE).await;
    let clock = s.clock.clone().unwrap();
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("100m"));
    assert_eq!(s.control.script().await.unwrap().timeline.len(), 2);
    clock.advance(SignedDuration::from_secs(59));
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("100m"));
    clock.advance(SignedDuration::from_secs(1));
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("900m"));
    assert_eq!(cpu_of(&s, "web-1").await.as_deref(), Some("300m"));
    // The clock endpoint moves the same virtual clock.
    let state = s
        .control
        .advance_clock(SignedDuration::from_secs(60))
        .await
        .unwrap();
    assert!(state.is_virtual);
    let (status, body) = s.get(PODS).await;
    assert_eq!(status, 503, "{body}");
    assert!(s.control.script().await.unwrap().timeline.is_empty());
    s.stop().await;
}

#[tokio::test]
async fn on_the_wall_clock_the_clock_endpoint_offsets_time_and_drives_the_timeline() {
    let s = start_with(
        TIMELINE,
        Options {
            virtual_clock: false,
            ..Options::default()
        },
    )
    .await;
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("100m"));
    let state = s
        .control
        .advance_clock(SignedDuration::from_secs(90))
        .await
        .unwrap();
    assert!(!state.is_virtual);
    assert_eq!(state.offset, "1m30s");
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("900m"));
    s.control.reset().await.unwrap();
    assert_eq!(s.control.clock().await.unwrap().offset, "0s");
    s.stop().await;
}

#[tokio::test]
async fn faults_answer_500_or_404_until_cleared_and_only_for_their_api() {
    let s = start(SCRIPT).await;
    s.control.fail(Api::Resource, 500).await.unwrap();
    let (status, body) = s.get(PODS).await;
    assert_eq!(status, 500);
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["code"], 500);
    assert_eq!(body["reason"], "InternalError");
    // Other APIs and discovery keep answering.
    let (status, _) = s
        .get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps")
        .await;
    assert_eq!(status, 200);
    let (status, _) = s.get("/apis/metrics.k8s.io/v1beta1").await;
    assert_eq!(status, 200);

    s.control
        .set_fault(
            Api::External,
            &Fault {
                status: Some(404),
                message: Some("no such queue".into()),
                ..Fault::default()
            },
        )
        .await
        .unwrap();
    let (status, body) = s
        .get("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready")
        .await;
    assert_eq!(status, 404);
    assert_eq!(body["message"], "no such queue");

    s.control.clear_fault(Api::Resource).await.unwrap();
    let (status, _) = s.get(PODS).await;
    assert_eq!(status, 200);
    let faults = s.control.clear_faults().await.unwrap();
    assert!(faults.is_empty());
    let (status, _) = s
        .get("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready")
        .await;
    assert_eq!(status, 200);
    s.stop().await;
}

/// Users sharing one server, each in a namespace of its own: a fault of
/// one namespace hits only its requests, goes ahead of the API's own
/// fault, and goes with the namespace's data.
#[tokio::test]
async fn a_namespace_fault_hits_only_that_namespace() {
    let s = start(SCRIPT).await;
    let team = "/apis/metrics.k8s.io/v1beta1/namespaces/team-a/pods";
    let faults = s
        .control
        .fail_in("team-a", Api::Resource, 500)
        .await
        .unwrap();
    assert!(faults.resource.is_none(), "{faults:?}");
    assert_eq!(
        faults.namespaces["team-a"]
            .resource
            .as_ref()
            .unwrap()
            .status,
        Some(500)
    );
    let (status, _) = s.get(team).await;
    assert_eq!(status, 500);
    let (status, _) = s.get(PODS).await;
    assert_eq!(status, 200, "another namespace is served");
    let (status, _) = s.get("/apis/metrics.k8s.io/v1beta1/pods").await;
    assert_eq!(status, 200, "a list across namespaces is served");

    // Ahead of the API's own fault.
    s.control.fail(Api::Resource, 503).await.unwrap();
    let (status, _) = s.get(team).await;
    assert_eq!(status, 500);
    let (status, _) = s.get(PODS).await;
    assert_eq!(status, 503);
    s.control.clear_fault(Api::Resource).await.unwrap();

    // Cleared by itself, set by a change, cleared with the namespace's data.
    let faults = s
        .control
        .clear_fault_in("team-a", Api::Resource)
        .await
        .unwrap();
    assert!(faults.is_empty(), "{faults:?}");
    let (status, _) = s.get(team).await;
    assert_eq!(status, 200);
    s.control
        .apply_json(serde_json::json!({"setFault": {"api": "resource", "status": 500, "namespace": "team-a"}}))
        .await
        .unwrap();
    let (status, _) = s.get(team).await;
    assert_eq!(status, 500);
    s.control.reset_namespace("team-a").await.unwrap();
    let (status, _) = s.get(team).await;
    assert_eq!(status, 200);
    assert!(s.control.faults().await.unwrap().is_empty());

    // A bad namespace is refused and names the field.
    let err = s
        .control
        .fail_in("a%2Fb", Api::Resource, 500)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("namespace"), "{err}");
    let err = s
        .control
        .set_faults(
            &serde_json::from_value(serde_json::json!({
                "namespaces": {"team-a": {"namespaces": {"team-b": {"resource": {"status": 500}}}}}
            }))
            .unwrap(),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("faults.namespaces.team-a.namespaces"),
        "{err}"
    );
    s.stop().await;
}

/// KEDA's adapter: an External list without a selector (naming no
/// ScaledObject) is refused, a list with one is answered.
#[tokio::test]
async fn an_unselected_fault_refuses_only_lists_without_a_selector() {
    let s = start(SCRIPT).await;
    let keda = "scaledObject name is not specified";
    s.control
        .set_fault(
            Api::External,
            &Fault {
                status: Some(500),
                message: Some(keda.into()),
                unselected: true,
                ..Fault::default()
            },
        )
        .await
        .unwrap();
    let all = "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready";
    let (status, body) = s.get(all).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["message"], keda);
    let (status, _) = s.get(&format!("{all}?labelSelector=")).await;
    assert_eq!(status, 500, "an empty selector selects nothing out");
    let list: ExternalMetricValueList = s
        .get_as(&format!("{all}?labelSelector=queue%3Dworker"))
        .await;
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].value.0, "30");
    // The same fault set by a change, on another API.
    s.control
        .apply_json(
            serde_json::json!({"setFault": {"api": "resource", "status": 503, "unselected": true}}),
        )
        .await
        .unwrap();
    assert!(
        s.control
            .faults()
            .await
            .unwrap()
            .resource
            .unwrap()
            .unselected
    );
    let (status, _) = s.get(PODS).await;
    assert_eq!(status, 503);
    let (status, _) = s.get(&format!("{PODS}?labelSelector=app%3Dweb")).await;
    assert_eq!(status, 200);
    s.stop().await;
}

#[tokio::test]
async fn a_latency_fault_delays_the_answer() {
    let s = start(SCRIPT).await;
    s.control
        .set_fault(
            Api::Custom,
            &Fault {
                latency: Some(fake_metrics_server::script::Duration::parse("300ms").unwrap()),
                ..Fault::default()
            },
        )
        .await
        .unwrap();
    let started = Instant::now();
    let (status, _) = s
        .get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps")
        .await;
    assert_eq!(status, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
    let started = Instant::now();
    s.get(PODS).await;
    assert!(started.elapsed() < Duration::from_millis(300));
    s.stop().await;
}

#[tokio::test]
async fn the_request_log_records_what_was_asked_and_how_it_was_answered() {
    let s = start(SCRIPT).await;
    s.control.clear_requests().await.unwrap();
    let start_time = s.control.clock().await.unwrap().now;
    for _ in 0..3 {
        s.get(&format!("{PODS}?labelSelector=app%3Dweb")).await;
    }
    s.get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/ghost")
        .await;
    s.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps")
        .await;
    s.get("/apis").await;

    let page = s
        .control
        .requests(&LogFilter {
            group: Some(Group::Resource),
            ..LogFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(page.entries.len(), 4);
    let first = &page.entries[0];
    assert_eq!(first.method, "GET");
    assert_eq!(first.path, PODS);
    assert_eq!(first.query.as_deref(), Some("labelSelector=app%3Dweb"));
    assert_eq!(first.status, 200);
    assert!(first.time >= start_time);
    assert_eq!(page.entries[3].status, 404);
    assert_eq!(page.counters.resource.requests, 4);
    assert_eq!(page.counters.resource.errors, 1);
    assert_eq!(page.counters.custom.requests, 1);
    assert_eq!(page.counters.discovery.requests, 1);

    let limited = s
        .control
        .requests(&LogFilter {
            path: Some("/pods/ghost".into()),
            ..LogFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(limited.entries.len(), 1);

    let counters = s.control.counters().await.unwrap();
    assert_eq!(counters.resource.requests, 4);
    s.control.clear_requests().await.unwrap();
    // Only the clearing request itself, logged once answered, remains.
    let page = s.control.requests(&LogFilter::default()).await.unwrap();
    assert_eq!(page.entries.len(), 1);
    assert_eq!(page.entries[0].method, "DELETE");
    assert_eq!(page.entries[0].group, Group::Control);
    assert_eq!(page.counters.resource.requests, 0);
    s.stop().await;
}

#[tokio::test]
async fn malformed_yaml_is_a_400_naming_the_line_and_the_old_script_keeps_serving() {
    let s = start(SCRIPT).await;
    let cases = [
        ("pods:\n  - name: a\n    labels: [unclosed\n", "line"),
        ("pods:\n  - name: a\n    colour: red\n", "colour"),
        (
            "pods:\n  - name: a\n    containers: [{name: app, cpu: -100m}]\n",
            "line 3",
        ),
        (
            "pods:\n  - name: a\n    containers: [{name: app, cpu: lots}]\n",
            "lots",
        ),
        ("pods: [{name: a}, {name: a}]\n", "pods[1]"),
        ("{\"pods\": [{\"name\": \"a\", \"oops\": 1}]}", "line 1"),
    ];
    for (body, expected) in cases {
        let err = s.control.put_script_yaml(body).await.unwrap_err();
        match &err {
            ClientError::Rejected {
                status, message, ..
            } => {
                assert_eq!(*status, 400, "{body}");
                assert!(message.contains(expected), "{body}: {message}");
            }
            other => panic!("{body}: unexpected {other}"),
        }
    }
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("250m"));
    s.stop().await;
}

#[tokio::test]
async fn a_bad_value_is_a_400_carrying_the_servers_message() {
    let s = start(SCRIPT).await;
    let err = s
        .control
        .set_container_usage("default", "web-0", "app", Some("-1"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Rejected { status: 400, message, .. } if message.contains("-1")),
        "{err}"
    );
    let err = s
        .control
        .set_pod_metric("default", "web-0", "pps", Some("fast"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Rejected { status: 400, message, .. } if message.contains("fast")),
        "{err}"
    );
    let err = s
        .control
        .set_pod_metric("default", "ghost", "pps", Some("1"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Rejected { status: 404, message, .. } if message.contains("ghost")),
        "{err}"
    );
    let err = s.control.fail(Api::Resource, 200).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Rejected { status: 400, .. }),
        "{err}"
    );
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("250m"));
    s.stop().await;
}

#[tokio::test]
async fn control_client_sets_each_kind_of_value() {
    let s = start(SCRIPT).await;
    let c = &s.control;
    c.set_container_usage("default", "web-0", "app", Some("750m"), Some("128Mi"))
        .await
        .unwrap();
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("750m"));

    c.set_pod_missing("default", "web-0", true).await.unwrap();
    assert_eq!(cpu_of(&s, "web-0").await, None);
    c.set_pod_missing("default", "web-0", false).await.unwrap();

    c.set_pod_metric("default", "web-0", "pps", Some("55"))
        .await
        .unwrap();
    c.set_pod_metric("default", "web-1", "pps", None)
        .await
        .unwrap();
    let list: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/pps?labelSelector=app%3Dweb")
        .await;
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].value.0, "55");

    c.set_object_metric("services", Some("default"), "queue", "messages", Some("90"))
        .await
        .unwrap();
    c.set_object_metric("deployments.apps", Some("default"), "web", "rps", Some("3"))
        .await
        .unwrap();
    let svc: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/services/queue/messages")
        .await;
    assert_eq!(svc.items[0].value.0, "90");
    let deploy: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/deployments.apps/web/rps")
        .await;
    assert_eq!(deploy.items[0].described_object.kind, "Deployment");
    assert_eq!(deploy.items[0].described_object.api_version, "apps/v1");

    let labels = BTreeMap::from([("queue".to_owned(), "worker".to_owned())]);
    c.set_external_metric("default", "queue_messages_ready", &labels, Some("99"))
        .await
        .unwrap();
    let new_labels = BTreeMap::from([("queue".to_owned(), "new".to_owned())]);
    c.set_external_metric("default", "queue_messages_ready", &new_labels, Some("1"))
        .await
        .unwrap();
    let ext: ExternalMetricValueList = s
        .get_as("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready")
        .await;
    let values: Vec<&str> = ext.items.iter().map(|i| i.value.0.as_str()).collect();
    assert_eq!(values, ["99", "12", "1"]);

    c.set_pod(&PodSpec {
        namespace: "default".into(),
        name: "web-9".into(),
        labels: BTreeMap::from([("app".into(), "web".into())]),
        ..PodSpec::default()
    })
    .await
    .unwrap();
    c.set_container_usage("default", "web-9", "app", Some("1"), None)
        .await
        .unwrap();
    assert_eq!(cpu_of(&s, "web-9").await.as_deref(), Some("1"));
    c.remove_pod("default", "web-9").await.unwrap();
    assert_eq!(cpu_of(&s, "web-9").await, None);
    s.stop().await;
}

#[tokio::test]
async fn patch_upserts_pods_and_removes_others() {
    let s = start(SCRIPT).await;
    let patch: ScriptPatch = fake_metrics_server::script::ScriptPatch::parse(
        "pods:\n  - {name: web-0, labels: {app: web}, containers: [{name: app, cpu: 1}]}\nremovePods: [{name: db-0}]\n",
        None,
    )
    .unwrap();
    let summary = s.control.patch_script(&patch).await.unwrap();
    assert_eq!(summary.pods, 4);
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("1"));
    assert_eq!(cpu_of(&s, "db-0").await, None);
    s.stop().await;
}

#[tokio::test]
async fn put_script_replaces_everything_and_reset_empties_it() {
    let s = start(SCRIPT).await;
    let summary = s
        .control
        .put_script_yaml("pods: [{name: only, containers: [{name: app, cpu: 1m}]}]")
        .await
        .unwrap();
    assert_eq!(summary.pods, 1);
    let (_, body) = s.get(PODS).await;
    assert_eq!(support::names(&body), ["default/only"]);
    // JSON works too, and the script reads back.
    let script = s.control.script().await.unwrap();
    s.control.put_script(&script).await.unwrap();
    assert_eq!(s.control.script().await.unwrap(), script);

    s.control.fail(Api::Custom, 500).await.unwrap();
    s.control.reset().await.unwrap();
    let (_, body) = s.get(PODS).await;
    assert!(support::names(&body).is_empty());
    assert!(s.control.faults().await.unwrap().is_empty());
    let counters = s.control.counters().await.unwrap();
    assert_eq!(counters.resource.requests, 1);
    s.stop().await;
}

#[tokio::test]
async fn changes_can_be_posted_as_a_yaml_list() {
    let s = start(SCRIPT).await;
    let r = s
        .http
        .post(s.url("/control/v1/changes"))
        .header("content-type", "application/yaml")
        .body("- podUsage: {pod: web-0, container: app, cpu: 1}\n- podMissing: {pod: web-1, missing: true}\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(cpu_of(&s, "web-0").await.as_deref(), Some("1"));
    assert_eq!(cpu_of(&s, "web-1").await, None);
    // An unknown change kind is a 400 naming it.
    let r = s
        .http
        .post(s.url("/control/v1/changes"))
        .header("content-type", "application/json")
        .body(r#"{"explode": {}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("explode"),
        "{body}"
    );
    s.stop().await;
}

#[tokio::test]
async fn all_faults_can_be_replaced_at_once_and_bad_ones_are_refused() {
    let s = start(SCRIPT).await;
    let faults: fake_metrics_server::script::Faults = fake_metrics_server::script::from_yaml(
        "resource: {status: 503}\nexternal: {status: 500}\n",
    )
    .unwrap();
    let now = s.control.set_faults(&faults).await.unwrap();
    assert_eq!(now, faults);
    let (status, _) = s.get(PODS).await;
    assert_eq!(status, 503);
    let r = s
        .http
        .put(s.url("/control/v1/faults"))
        .header("content-type", "application/yaml")
        .body("resource: {status: 200}\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(s.control.faults().await.unwrap(), faults);
    s.stop().await;
}

#[tokio::test]
async fn the_clock_can_be_set_to_an_instant_and_the_script_read_as_yaml() {
    let s = start(SCRIPT).await;
    let at: jiff::Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
    let state = s.control.set_clock(at).await.unwrap();
    assert_eq!(state.now, at);
    let web0: fake_metrics_server::types::PodMetrics = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-0")
        .await;
    assert_eq!(web0.timestamp.0, at);

    let r = s
        .http
        .get(s.url("/control/v1/script?format=yaml"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let yaml = r.text().await.unwrap();
    let script = fake_metrics_server::script::Script::parse(&yaml, None).unwrap();
    assert_eq!(script.pods.len(), 5);
    s.stop().await;
}

#[tokio::test]
async fn a_script_of_many_mebibytes_is_accepted() {
    // 40,000 pods as JSON: several MiB, more than axum's default body limit
    // (2 MiB). (A YAML body this size meets the YAML parser's node budget,
    // a guard against YAML bombs, first.)
    let s = start(SCRIPT).await;
    let pods: Vec<PodSpec> = (0..40_000)
        .map(|i| {
            serde_json::from_value(serde_json::json!({
                "namespace": format!("load-{}", i / 1000),
                "name": format!("pod-{i}"),
                "labels": {"app": format!("w{i}")},
                "containers": [{"name": "app", "cpu": "100m"}],
            }))
            .unwrap()
        })
        .collect();
    let script = fake_metrics_server::script::Script {
        pods,
        ..Default::default()
    };
    let size = serde_json::to_vec(&script).unwrap().len();
    assert!(size > 3 * 1024 * 1024, "{size} bytes");
    let summary = s.control.put_script(&script).await.unwrap();
    assert_eq!(summary.pods, 40_000);
}

#[tokio::test]
async fn a_reset_of_one_namespace_leaves_the_other_namespaces_served() {
    let s = start(
        "pods:\n  - {name: web-0, namespace: one, containers: [{name: app, cpu: 100m}]}\n  - {name: web-0, namespace: two, containers: [{name: app, cpu: 200m}]}\n",
    )
    .await;
    let served = |ns: &'static str| {
        let s = &s;
        async move {
            let list: PodMetricsList = s
                .get_as(&format!(
                    "/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods"
                ))
                .await;
            list.items.len()
        }
    };
    assert_eq!((served("one").await, served("two").await), (1, 1));
    s.control.reset_namespace("one").await.unwrap();
    assert_eq!((served("one").await, served("two").await), (0, 1));
    s.stop().await;
}
