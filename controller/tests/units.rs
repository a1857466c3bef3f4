//! Tests of single reconciles and of the metrics client that need a
//! simulated cluster and a fake metrics server: here in the harness, so the
//! `hpa-controller` crate itself depends on neither.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::sync::Arc;
use std::time::Duration;

use fake_metrics_server::AppState;
use hpa_controller::Context;
use hpa_controller::metrics_client::MetricsClient;
use hpa_controller::pod_index::PodIndex;
use hpa_controller::reconcile::{ReconcileError, Reconciled, reconcile};
use hpa_core::clock::{SystemClock, VirtualClock};
use hpa_core::{Quantity, Selector};
use hpa_embedded::Embedded;
use hpa_sim::SimConfig;
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;

#[tokio::test]
async fn an_hpa_missing_from_the_cache_is_forgotten() {
    let sim = hpa_sim::Sim::new(hpa_sim::SimConfig::default());
    let clock = VirtualClock::default();
    let ctx = Context::for_tests(sim.client(), Arc::new(clock.clone()));
    ctx.history
        .seed_recommendations("default/web", hpa_core::clock::Clock::now(&clock), &[]);
    let result = reconcile("default/web", &ctx).await.unwrap();
    assert_eq!(result, Reconciled::Deleted);
    assert!(!ctx.history.contains("default/web"));
}

#[tokio::test]
async fn a_key_without_a_namespace_is_refused() {
    let sim = hpa_sim::Sim::new(hpa_sim::SimConfig::default());
    let ctx = Context::for_tests(sim.client(), Arc::new(VirtualClock::default()));
    assert!(matches!(
        reconcile("web", &ctx).await,
        Err(ReconcileError::InvalidKey(_))
    ));
}

/// A custom metrics API answering an object metric with `n` values.
fn object_metric_with(n: usize) -> MetricsClient {
    let item = serde_json::json!({
        "describedObject": {"kind": "Namespace", "name": "ns", "apiVersion": "v1"},
        "metric": {"name": "queue"},
        "timestamp": "2026-01-01T00:00:00Z",
        "value": "5"
    });
    let list = serde_json::json!({
        "kind": "MetricValueList",
        "apiVersion": "custom.metrics.k8s.io/v1beta2",
        "metadata": {},
        "items": vec![item; n],
    });
    let router = axum::Router::new().route(
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/metrics/queue",
        axum::routing::get(move || async move { axum::Json(list) }),
    );
    let sim = hpa_sim::Sim::new(hpa_sim::SimConfig {
        metrics: Some(hpa_sim::Backend::Router(router)),
        ..hpa_sim::SimConfig::default()
    });
    MetricsClient::new(sim.client(), Duration::from_secs(15))
}

#[tokio::test]
async fn an_object_metric_needs_exactly_one_value() {
    let namespace = CrossVersionObjectReference {
        api_version: Some("v1".into()),
        kind: "Namespace".into(),
        name: "ns".into(),
    };
    let namespace = &namespace;
    let fetch = |n| async move {
        object_metric_with(n)
            .object("ns", namespace, "queue", &Selector::everything())
            .await
    };
    let one = fetch(1).await.unwrap();
    assert_eq!(one.value, Quantity::parse("5").unwrap());
    assert_eq!(
        fetch(2).await.unwrap_err(),
        "unable to fetch metrics from custom metrics API: the custom metrics API server returned 2 results when we asked for exactly one"
    );
    assert_eq!(
        fetch(0).await.unwrap_err(),
        "unable to fetch metrics from custom metrics API: the custom metrics API server returned 0 results when we asked for exactly one"
    );
}

/// A shared and an unshared client on a resource metrics API answering
/// every pod list of `ns` (whatever its selector) with `status` and `body`.
fn pod_metrics_answering(status: u16, body: &'static str) -> (MetricsClient, MetricsClient) {
    let router = axum::Router::new().route(
        "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods",
        axum::routing::get(move || async move {
            (
                http::StatusCode::from_u16(status).unwrap(),
                [(http::header::CONTENT_TYPE, "application/json")],
                body,
            )
        }),
    );
    let sim = hpa_sim::Sim::new(hpa_sim::SimConfig {
        metrics: Some(hpa_sim::Backend::Router(router)),
        ..hpa_sim::SimConfig::default()
    });
    let shared = MetricsClient::new(sim.client(), Duration::from_secs(15)).with_shared_lists(
        Duration::from_secs(60),
        false,
        Arc::new(SystemClock),
    );
    let upstream = MetricsClient::new(sim.client(), Duration::from_secs(15));
    (shared, upstream)
}

/// The shared namespace list (decoded slim, picked by label) gives an HPA
/// what its own request gives (every entry here carries `app=web`, so the
/// unfiltered answer is the selection): the same samples, and the same
/// error texts for a bad quantity, a body that does not decode, and a
/// failed request.
#[tokio::test]
async fn a_shared_pod_metrics_list_gives_what_each_hpas_own_request_gives() {
    let good = r#"{"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {},
        "items": [
            {"metadata": {"name": "web-1", "namespace": "ns", "labels": {"app": "web"},
                "creationTimestamp": "2026-01-01T00:00:00Z"},
             "timestamp": "2026-01-01T00:00:10Z", "window": "15.011s",
             "containers": [{"name": "app", "usage": {"cpu": "250m", "memory": "64Mi"}}]},
            {"metadata": {"name": "web-2", "labels": {"app": "web", "tier": "front"}},
             "timestamp": "2026-01-01T00:00:11Z", "window": "30s",
             "containers": [{"name": "app", "usage": {"cpu": 1}}, {"name": "side", "usage": {"cpu": "5m"}}]}
        ]}"#;
    let bad_quantity = r#"{"items": [
            {"metadata": {"name": "web-1", "labels": {"app": "web"}},
             "timestamp": "2026-01-01T00:00:10Z", "window": "15s",
             "containers": [{"name": "app", "usage": {"cpu": "250m"}}]},
            {"metadata": {"name": "web-2", "labels": {"app": "web"}},
             "timestamp": "2026-01-01T00:00:10Z", "window": "15s",
             "containers": [{"name": "app", "usage": {"cpu": "lots"}}]}
        ]}"#;
    let no_window = r#"{"items": [{"metadata": {"name": "web-1", "labels": {"app": "web"}},
        "timestamp": "2026-01-01T00:00:10Z"}]}"#;
    let status = r#"{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server could not find the requested resource", "reason": "NotFound", "code": 404}"#;
    let web = Selector::parse("app=web").unwrap();
    for (code, body) in [
        (200, good),
        (200, bad_quantity),
        (200, no_window),
        (200, "not json"),
        (404, status),
        (500, "metrics unavailable"),
    ] {
        let (shared, upstream) = pod_metrics_answering(code, body);
        let theirs = upstream.pod_resources("ns", &web).await;
        assert_eq!(shared.pod_resources("ns", &web).await, theirs, "{body}");
    }
    let (shared, _) = pod_metrics_answering(200, good);
    let samples = shared.pod_resources("ns", &web).await.unwrap();
    let names: Vec<(&str, &str)> = samples.iter().map(|s| (&*s.pod, &*s.namespace)).collect();
    assert_eq!(names, [("web-1", "ns"), ("web-2", "ns")]);
    let front = Selector::parse("tier=front").unwrap();
    assert_eq!(
        shared.pod_resources("ns", &front).await.unwrap(),
        samples[1..]
    );
    let (shared, _) = pod_metrics_answering(200, no_window);
    let err = shared.pod_resources("ns", &web).await.unwrap_err();
    assert!(
        err.starts_with(
            "unable to fetch metrics from resource metrics API: Error deserializing response: missing field `window`"
        ),
        "{err}"
    );
    let (shared, _) = pod_metrics_answering(200, bad_quantity);
    let err = shared.pod_resources("ns", &web).await.unwrap_err();
    assert!(err.starts_with(r#"invalid quantity "lots": "#), "{err}");
}

/// How the external metrics server of [`with_two_queues`] answers a
/// namespace-wide list (no `labelSelector`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListAnswer {
    /// Every series, with its labels (the fake metrics server,
    /// prometheus-adapter's external rules).
    Every,
    /// A 500, as KEDA's adapter answers a list naming no ScaledObject.
    Refused,
}

/// A client on a simulated cluster whose metrics APIs are a fake
/// metrics server serving two `queue_depth` series in `ns`, answering
/// lists without a selector as `lists` says; each shared answer is fresh
/// for `window`.
fn with_two_queues(
    share_external: bool,
    lists: ListAnswer,
    window: Duration,
) -> (AppState, MetricsClient) {
    use fake_metrics_server::script::{Fault, Faults, Script};
    let Embedded { sim, metrics } =
        Embedded::new(Some(VirtualClock::default()), SimConfig::default());
    let keda = Fault {
        status: Some(500),
        message: Some("scaledObject name is not specified".into()),
        unselected: true,
        ..Fault::default()
    };
    metrics
        .load(&Script {
            external: vec![queue_series("a", "3"), queue_series("b", "7")],
            faults: Faults {
                external: (lists == ListAnswer::Refused).then_some(keda),
                ..Faults::default()
            },
            ..Script::default()
        })
        .unwrap();
    let client = MetricsClient::new(sim.client(), Duration::from_secs(15)).with_shared_lists(
        window,
        share_external,
        Arc::new(SystemClock),
    );
    (metrics, client)
}

/// A `queue_depth` series of `ns` labelled `queue`.
fn queue_series(queue: &str, value: &str) -> fake_metrics_server::script::ExternalSpec {
    fake_metrics_server::script::ExternalSpec {
        namespace: "ns".into(),
        metric: "queue_depth".into(),
        labels: [("queue".to_string(), queue.to_string())].into(),
        value: fake_metrics_server::script::Value(value.into()),
        timestamp: None,
        window: None,
    }
}

/// External metrics requests the fake metrics server has answered, by
/// whether they carried a `labelSelector`: (lists without one, requests
/// with one).
fn external_requests(metrics: &AppState) -> (usize, usize) {
    let page = metrics.log().page(&fake_metrics_server::log::LogFilter {
        group: Some(fake_metrics_server::log::Group::External),
        ..Default::default()
    });
    let selected = page
        .entries
        .iter()
        .filter(|e| {
            e.query
                .as_deref()
                .is_some_and(|q| q.contains("labelSelector="))
        })
        .count();
    (page.entries.len() - selected, selected)
}

/// The values of the `queue_depth` series `selector` selects.
async fn queue(client: &MetricsClient, selector: &str) -> Vec<Quantity> {
    client
        .external("ns", "queue_depth", &Selector::parse(selector).unwrap())
        .await
        .unwrap()
        .values
}

fn quantities(values: &[&str]) -> Vec<Quantity> {
    values.iter().map(|v| Quantity::parse(v).unwrap()).collect()
}

#[tokio::test]
async fn shared_external_series_are_listed_once_and_filtered_by_labels_once_checked() {
    let (metrics, client) = with_two_queues(true, ListAnswer::Every, Duration::from_secs(60));
    // First syncs: each HPA gets its own answer, and its share of the one
    // list is checked against it.
    assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    assert_eq!(queue(&client, "queue=b").await, quantities(&["7"]));
    assert_eq!(external_requests(&metrics), (1, 2));
    // Then they read the list, filtered by their labels.
    assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    assert_eq!(queue(&client, "queue=b").await, quantities(&["7"]));
    assert_eq!(external_requests(&metrics), (1, 2));
    assert!(queue(&client, "queue=c").await.is_empty());
    assert!(queue(&client, "queue=c").await.is_empty());
    assert_eq!(external_requests(&metrics), (1, 3), "queue=c checked once");
}

#[tokio::test]
async fn once_checked_each_sync_lists_the_metric_and_sends_no_selector() {
    // A window of zero: every sync asks again.
    let (metrics, client) = with_two_queues(true, ListAnswer::Every, Duration::ZERO);
    for _ in 0..3 {
        assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    }
    assert_eq!(
        external_requests(&metrics),
        (3, 1),
        "one own request, to check; then the list"
    );
}

#[tokio::test]
async fn a_server_that_refuses_the_list_gets_each_hpas_own_request() {
    let (metrics, client) = with_two_queues(true, ListAnswer::Refused, Duration::ZERO);
    for _ in 0..3 {
        assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
        assert_eq!(queue(&client, "queue=b").await, quantities(&["7"]));
    }
    assert_eq!(
        external_requests(&metrics),
        (1, 6),
        "the list is asked once per metric, then each HPA asks on its own"
    );
}

/// Ten HPAs of one metric synced together for the first time, the
/// refusal slow to come: one of them asks for the list, the others learn
/// its refusal.
#[tokio::test]
async fn the_first_syncs_of_a_metrics_hpas_send_one_refused_list() {
    use fake_metrics_server::script::{Duration as ScriptDuration, Fault, Faults};
    let (metrics, client) = with_two_queues(true, ListAnswer::Refused, Duration::ZERO);
    metrics.set_faults(Faults {
        external: Some(Fault {
            status: Some(500),
            latency: Some(ScriptDuration::parse("100ms").unwrap()),
            unselected: true,
            ..Fault::default()
        }),
        ..Faults::default()
    });
    let selectors: Vec<String> = (0..10).map(|i| format!("queue in (a,x{i})")).collect();
    let answers = futures::future::join_all(selectors.iter().map(|s| queue(&client, s))).await;
    assert!(
        answers.iter().all(|a| *a == quantities(&["3"])),
        "{answers:?}"
    );
    assert_eq!(external_requests(&metrics), (1, 10));
}

/// The whole external metrics API down: the list's failure says nothing
/// of lists, and once the API is back, the list is checked and shared.
#[tokio::test]
async fn an_api_down_is_no_refusal_of_the_list() {
    use fake_metrics_server::script::{Fault, Faults};
    let (metrics, client) = with_two_queues(true, ListAnswer::Every, Duration::ZERO);
    metrics.set_faults(Faults {
        external: Some(Fault {
            status: Some(503),
            ..Fault::default()
        }),
        ..Faults::default()
    });
    let a = Selector::parse("queue=a").unwrap();
    assert!(client.external("ns", "queue_depth", &a).await.is_err());
    assert_eq!(external_requests(&metrics), (1, 1));
    metrics.set_faults(Faults::default());
    for _ in 0..3 {
        assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    }
    assert_eq!(
        external_requests(&metrics),
        (4, 2),
        "checked again (a list and its own), then the list"
    );
}

#[tokio::test]
async fn a_list_refused_after_it_was_answered_leaves_the_hpa_its_own_answer() {
    use fake_metrics_server::script::{Fault, Faults};
    let (metrics, client) = with_two_queues(true, ListAnswer::Every, Duration::ZERO);
    assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    assert_eq!(external_requests(&metrics), (2, 1));
    metrics.set_faults(Faults {
        external: Some(Fault {
            status: Some(500),
            unselected: true,
            ..Fault::default()
        }),
        ..Faults::default()
    });
    for _ in 0..3 {
        assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    }
    assert_eq!(
        external_requests(&metrics),
        (3, 4),
        "one list refused, then the HPA's own requests"
    );
}

/// A server answering a namespace-wide list with its series but without
/// their labels (as KEDA's adapter did before it required the selector,
/// for a namespace of one ScaledObject): an HPA's share of that list is
/// not what its own request returns.
#[tokio::test]
async fn a_list_answered_differently_leaves_each_hpa_its_own_request() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let lists = Arc::new(AtomicU64::new(0));
    let own = Arc::new(AtomicU64::new(0));
    let (counted_lists, counted_own) = (Arc::clone(&lists), Arc::clone(&own));
    let answer = move |query: axum::extract::RawQuery| {
        let selected = query.0.is_some_and(|q| q.contains("labelSelector="));
        let labels = if selected {
            counted_own.fetch_add(1, Ordering::SeqCst);
            serde_json::json!({"scaledobject.keda.sh/name": "orders"})
        } else {
            counted_lists.fetch_add(1, Ordering::SeqCst);
            serde_json::Value::Null
        };
        async move {
            axum::Json(serde_json::json!({
                "kind": "ExternalMetricValueList",
                "apiVersion": "external.metrics.k8s.io/v1beta1",
                "metadata": {},
                "items": [{
                    "metricName": "s0-rabbitmq-orders",
                    "metricLabels": labels,
                    "timestamp": "2026-01-01T00:00:00Z",
                    "value": "12"
                }]
            }))
        }
    };
    let router = axum::Router::new().route(
        "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/s0-rabbitmq-orders",
        axum::routing::get(answer),
    );
    let sim = hpa_sim::Sim::new(SimConfig {
        metrics: Some(hpa_sim::Backend::Router(router)),
        ..SimConfig::default()
    });
    let client = MetricsClient::new(sim.client(), Duration::from_secs(15)).with_shared_lists(
        Duration::ZERO,
        true,
        Arc::new(SystemClock),
    );
    let orders = Selector::parse("scaledobject.keda.sh/name=orders").unwrap();
    for _ in 0..3 {
        let got = client
            .external("ns", "s0-rabbitmq-orders", &orders)
            .await
            .unwrap();
        assert_eq!(got.values, quantities(&["12"]));
    }
    assert_eq!(lists.load(Ordering::SeqCst), 1, "the list, checked once");
    assert_eq!(own.load(Ordering::SeqCst), 3, "then each sync its own");
}

#[tokio::test]
async fn without_sharing_each_external_fetch_sends_its_selector() {
    let (metrics, client) = with_two_queues(false, ListAnswer::Every, Duration::from_secs(60));
    assert_eq!(queue(&client, "queue=b").await, quantities(&["7"]));
    assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    assert_eq!(external_requests(&metrics), (0, 2));
}

/// Pods of two apps in `ns` with a `rps` custom metric, known to the
/// metrics server; a client sharing lists whose pod cache holds
/// `cached` of them (name, labels).
fn with_rps_pods(cached: &[(&str, &str)]) -> (hpa_sim::Sim, MetricsClient, MetricsClient) {
    use fake_metrics_server::script::{MetricSpec, PodSpec, Script, Value};
    let Embedded { sim, metrics } =
        Embedded::new(Some(VirtualClock::default()), SimConfig::default());
    let pod = |name: &str, app: &str, rps: &str| PodSpec {
        namespace: "ns".into(),
        name: name.into(),
        labels: [("app".to_string(), app.to_string())].into(),
        metrics: [("rps".to_string(), MetricSpec::Value(Value(rps.into())))].into(),
        ..PodSpec::default()
    };
    metrics
        .load(&Script {
            pods: vec![
                pod("web-1", "web", "10"),
                pod("db-1", "db", "30"),
                pod("web-2", "web", "20"),
                pod("new-1", "web", "40"),
            ],
            ..Script::default()
        })
        .unwrap();
    let index = PodIndex::default();
    for (name, app) in cached {
        let slim: hpa_controller::slim_pod::SlimPod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "labels": {"app": app}}
        }))
        .unwrap();
        index.apply(&kube::runtime::watcher::Event::Apply(slim));
    }
    let shared = MetricsClient::new(sim.client(), Duration::from_secs(15))
        .with_shared_lists(Duration::from_secs(60), false, Arc::new(SystemClock))
        .with_pod_cache(index);
    let upstream = MetricsClient::new(sim.client(), Duration::from_secs(15));
    (sim, shared, upstream)
}

fn custom_requests(sim: &hpa_sim::Sim) -> u64 {
    sim.requests()
        .snapshot()
        .iter()
        .filter(|((verb, resource), _)| verb == "list" && resource.starts_with("custom.metrics"))
        .map(|(_, n)| *n)
        .sum()
}

/// Each pod's value, in the answer's order (timestamps are the
/// server's now, so they differ between two requests).
async fn rps(client: &MetricsClient, selector: &str) -> Result<Vec<(String, Quantity)>, String> {
    let selector = Selector::parse(selector).unwrap();
    let samples = client
        .pods_custom("ns", "rps", &selector, &Selector::everything())
        .await?;
    Ok(samples
        .into_iter()
        .map(|s| (s.pod.to_string(), s.value))
        .collect())
}

#[tokio::test]
async fn pods_metrics_are_listed_once_per_namespace_and_picked_with_the_pod_cache() {
    let all = [
        ("web-1", "web"),
        ("db-1", "db"),
        ("web-2", "web"),
        ("new-1", "web"),
    ];
    let (sim, shared, upstream) = with_rps_pods(&all);
    let web = rps(&shared, "app=web").await.unwrap();
    let db = rps(&shared, "app=db").await.unwrap();
    let web_cpu = rps(&shared, "app=web,tier!=cache").await.unwrap();
    assert_eq!(custom_requests(&sim), 1, "one namespace-wide list");
    // Exactly what each HPA's own request returns, in its order.
    assert_eq!(web, rps(&upstream, "app=web").await.unwrap());
    assert_eq!(db, rps(&upstream, "app=db").await.unwrap());
    assert_eq!(web_cpu, web);
    let pods: Vec<&str> = web.iter().map(|(pod, _)| pod.as_str()).collect();
    assert_eq!(pods, ["new-1", "web-1", "web-2"]);
}

#[tokio::test]
async fn a_pod_the_cache_does_not_hold_sends_each_hpa_its_own_request() {
    // new-1 carries app=web on the server; the cache has not seen it.
    let (sim, shared, upstream) =
        with_rps_pods(&[("web-1", "web"), ("db-1", "db"), ("web-2", "web")]);
    let web = rps(&shared, "app=web").await.unwrap();
    let db = rps(&shared, "app=db").await.unwrap();
    assert_eq!(
        custom_requests(&sim),
        3,
        "the namespace list, then one per HPA"
    );
    assert_eq!(web.len(), 3, "new-1 counts, as in upstream's request");
    assert_eq!(web, rps(&upstream, "app=web").await.unwrap());
    assert_eq!(db, rps(&upstream, "app=db").await.unwrap());
}

#[tokio::test]
async fn identical_external_requests_share_one_answer_without_listing_every_series() {
    let (metrics, client) = with_two_queues(false, ListAnswer::Every, Duration::from_secs(60));
    assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    assert_eq!(queue(&client, "queue=a").await, quantities(&["3"]));
    assert_eq!(external_requests(&metrics), (0, 1));
    assert_eq!(queue(&client, "queue=b").await, quantities(&["7"]));
    assert_eq!(
        external_requests(&metrics),
        (0, 2),
        "another selector, another request"
    );
}
