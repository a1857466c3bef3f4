#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! Bad input never hangs, panics or silently changes the sim: each request
//! here was accepted (or crashed the server) before, and now gets the
//! answer the real API server gives. Requests go through the router as a
//! tower service, so the raw bodies and query strings reach the sim as sent.

use hpa_sim::{Sim, SimConfig};
use http::{Method, Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt;

async fn send(
    sim: &Sim,
    method: Method,
    uri: &str,
    ct: &str,
    body: Vec<u8>,
) -> (StatusCode, http::HeaderMap, Value) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::CONTENT_TYPE, ct)
        .body(axum::body::Body::from(body))
        .unwrap();
    let resp = sim.router().oneshot(req).await.unwrap();
    let (parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (parts.status, parts.headers, v)
}

async fn post(sim: &Sim, uri: &str, obj: &Value) -> (StatusCode, Value) {
    let (code, _, v) = send(
        sim,
        Method::POST,
        uri,
        "application/json",
        obj.to_string().into_bytes(),
    )
    .await;
    (code, v)
}

async fn get(sim: &Sim, uri: &str) -> (StatusCode, http::HeaderMap, Value) {
    send(sim, Method::GET, uri, "application/json", Vec::new()).await
}

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const HPAS: &str = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";

fn deployment(name: &str, replicas: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
}

fn hpa(name: &str, max: Value, behavior: Value) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": max, "behavior": behavior,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]}})
}

#[tokio::test]
async fn replicas_past_int32_or_of_the_wrong_type_are_bad_requests_and_store_nothing() {
    let sim = Sim::new(SimConfig::default());
    for bad in [json!(2_147_483_648_i64), json!("two")] {
        let (code, status) = post(&sim, DEPLOYMENTS, &deployment("web", bad.clone())).await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{bad}: {status}");
        assert_eq!(status["reason"], "BadRequest");
        assert!(
            status["message"]
                .as_str()
                .unwrap()
                .contains("spec.replicas"),
            "{status}"
        );
    }
    let (code, _, _) = get(&sim, &format!("{DEPLOYMENTS}/web")).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "nothing was stored");
    let (code, _, pods) = get(&sim, "/api/v1/namespaces/default/pods").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(pods["items"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn hpa_max_replicas_past_int32_is_a_bad_request_and_a_negative_tolerance_invalid() {
    let sim = Sim::new(SimConfig::default());
    let (code, status) = post(&sim, HPAS, &hpa("a", json!(2_147_483_648_i64), json!(null))).await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("spec.maxReplicas")
    );
    let behavior = json!({"scaleUp": {"tolerance": "-1"}});
    let (code, status) = post(&sim, HPAS, &hpa("b", json!(5), behavior)).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.behavior.scaleUp.tolerance"
    );
}

#[tokio::test]
async fn names_that_are_not_dns_subdomains_are_invalid() {
    let sim = Sim::new(SimConfig::default());
    let (code, status) = post(&sim, DEPLOYMENTS, &deployment("Bad_Name!", json!(1))).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["causes"][0]["field"], "metadata.name");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("RFC 1123 subdomain")
    );
}

#[tokio::test]
async fn a_body_over_three_mebibytes_is_refused_with_413() {
    let sim = Sim::new(SimConfig::default());
    let mut obj = deployment("big", json!(1));
    obj["metadata"]["annotations"] = json!({"x": "a".repeat(3 * 1024 * 1024)});
    let (code, status) = post(&sim, DEPLOYMENTS, &obj).await;
    assert_eq!(code, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(status["reason"], "RequestEntityTooLarge");
    assert_eq!(status["code"], 413);
}

#[tokio::test]
async fn a_multibyte_continue_token_and_an_overflowing_watch_timeout_are_bad_requests() {
    let sim = Sim::new(SimConfig::default());
    let (code, _, status) = get(&sim, "/api/v1/namespaces/default/pods?continue=%E2%82%ACa").await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
    let (code, _, status) = get(
        &sim,
        "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=18446744073709551615",
    )
    .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
}

#[tokio::test]
async fn a_watch_from_a_future_resource_version_times_out_with_a_retry_after() {
    let sim = Sim::new(SimConfig::default());
    let future = sim.resource_version() + 1000;
    let (code, headers, status) = get(
        &sim,
        &format!("/api/v1/namespaces/default/pods?watch=1&resourceVersion={future}"),
    )
    .await;
    assert_eq!(code, StatusCode::GATEWAY_TIMEOUT, "{status}");
    assert_eq!(status["reason"], "Timeout");
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert_eq!(status["details"]["retryAfterSeconds"], 1);
    assert_eq!(headers.get(http::header::RETRY_AFTER).unwrap(), "1");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("Timeout: Too large resource version")
    );
}

#[tokio::test]
async fn a_scale_patch_with_string_replicas_is_refused_and_leaves_the_replicas() {
    let sim = Sim::new(SimConfig::default());
    let (code, _) = post(&sim, DEPLOYMENTS, &deployment("web", json!(3))).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, _, status) = send(
        &sim,
        Method::PATCH,
        &format!("{DEPLOYMENTS}/web/scale"),
        "application/merge-patch+json",
        br#"{"spec":{"replicas":"x"}}"#.to_vec(),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    let (_, _, dep) = get(&sim, &format!("{DEPLOYMENTS}/web")).await;
    assert_eq!(dep["spec"]["replicas"], 3);
}

#[tokio::test]
async fn an_apply_patch_that_is_not_an_object_is_refused_and_stores_nothing() {
    let sim = Sim::new(SimConfig::default());
    let (code, _) = post(&sim, DEPLOYMENTS, &deployment("web", json!(1))).await;
    assert_eq!(code, StatusCode::CREATED);
    let (_, _, before) = get(&sim, &format!("{DEPLOYMENTS}/web")).await;
    for junk in ["this is not yaml: [", "just words", "junk: key"] {
        for name in ["web", "new"] {
            let (code, _, status) = send(
                &sim,
                Method::PATCH,
                &format!("{DEPLOYMENTS}/{name}?fieldManager=t"),
                "application/apply-patch+yaml",
                junk.as_bytes().to_vec(),
            )
            .await;
            assert_eq!(
                code,
                StatusCode::BAD_REQUEST,
                "{junk:?} on {name}: {status}"
            );
        }
    }
    let (_, _, after) = get(&sim, &format!("{DEPLOYMENTS}/web")).await;
    assert_eq!(before, after);
    let (code, _, _) = get(&sim, &format!("{DEPLOYMENTS}/new")).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_large_workload_gets_all_its_pods_in_batches_up_to_the_cap() {
    let sim = Sim::new(SimConfig {
        max_pods_per_workload: 1_200,
        ..SimConfig::default()
    });
    let (code, _) = post(&sim, DEPLOYMENTS, &deployment("big", json!(1_100))).await;
    assert_eq!(code, StatusCode::CREATED);
    let count = |v: &Value| v["items"].as_array().unwrap().len();
    let (_, _, pods) = get(&sim, "/api/v1/namespaces/default/pods").await;
    assert_eq!(
        count(&pods),
        1_100,
        "more than one batch, all made before the write returned"
    );
    // The API server accepts any int32; the sim stops at its cap and says so
    // in the status instead of growing without bound.
    let (code, _, _) = send(
        &sim,
        Method::PATCH,
        &format!("{DEPLOYMENTS}/big/scale"),
        "application/merge-patch+json",
        br#"{"spec":{"replicas":2147483647}}"#.to_vec(),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    let (_, _, pods) = get(&sim, "/api/v1/namespaces/default/pods").await;
    assert_eq!(count(&pods), 1_200);
    let (_, _, dep) = get(&sim, &format!("{DEPLOYMENTS}/big")).await;
    assert_eq!(dep["spec"]["replicas"], 2_147_483_647);
    assert_eq!(dep["status"]["replicas"], 1_200);
}
