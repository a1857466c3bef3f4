#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! Media types through the router, as kubectl uses them: protobuf bodies
//! and answers, `as=Table`, and the 415 and 406 refusals.

use axum::body::Body;
use hpa_sim::{Sim, SimConfig};
use http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tower::ServiceExt as _;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

async fn call(sim: &Sim, req: Request<Body>) -> (StatusCode, String, Vec<u8>) {
    let r = sim.router().oneshot(req).await.unwrap();
    let status = r.status();
    let ct = r
        .headers()
        .get(http::header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = r.into_body().collect().await.unwrap().to_bytes().to_vec();
    (status, ct, body)
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
}

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

#[tokio::test]
async fn a_protobuf_deployment_is_created_and_read_back_in_protobuf() {
    let sim = Sim::new(SimConfig::default());
    let body = hpa_sim::protobuf::from_json(&deployment()).unwrap();
    let req = Request::post(DEPLOYMENTS)
        .header("content-type", PROTOBUF)
        .header("accept", format!("{PROTOBUF},application/json"))
        .body(Body::from(body))
        .unwrap();
    let (status, ct, body) = call(&sim, req).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&body)
    );
    assert_eq!(ct, PROTOBUF);
    let created = hpa_sim::protobuf::to_json(&body).unwrap();
    assert_eq!(created["metadata"]["name"], "web");
    assert_eq!(created["spec"]["replicas"], 2);
    assert!(created["metadata"]["uid"].is_string());

    // JSON first in Accept: JSON.
    let req = Request::get(format!("{DEPLOYMENTS}/web"))
        .header("accept", format!("application/json,{PROTOBUF}"))
        .body(Body::empty())
        .unwrap();
    let (status, ct, _) = call(&sim, req).await;
    assert_eq!((status, ct.as_str()), (StatusCode::OK, "application/json"));
}

#[tokio::test]
async fn unknown_media_types_are_refused_with_a_status_naming_the_accepted_ones() {
    let sim = Sim::new(SimConfig::default());
    let req = Request::post(DEPLOYMENTS)
        .header("content-type", "application/cbor")
        .body(Body::from(vec![0xa0]))
        .unwrap();
    let (status, _, body) = call(&sim, req).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let s: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(s["reason"], "UnsupportedMediaType");
    assert!(
        s["message"]
            .as_str()
            .unwrap()
            .contains("application/vnd.kubernetes.protobuf"),
        "{s}"
    );

    let req = Request::get(DEPLOYMENTS)
        .header("accept", "application/cbor")
        .body(Body::empty())
        .unwrap();
    let (status, _, body) = call(&sim, req).await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    let s: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(s["reason"], "NotAcceptable");
}

#[tokio::test]
async fn kubectl_get_receives_a_table_with_upstreams_columns() {
    let sim = Sim::new(SimConfig::default());
    let req = Request::post(DEPLOYMENTS)
        .header("content-type", "application/json")
        .body(Body::from(deployment().to_string()))
        .unwrap();
    assert_eq!(call(&sim, req).await.0, StatusCode::CREATED);
    let req = Request::get(DEPLOYMENTS)
        .header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
        )
        .body(Body::empty())
        .unwrap();
    let (status, _, body) = call(&sim, req).await;
    assert_eq!(status, StatusCode::OK);
    let t: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(t["kind"], "Table");
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["priority"] == 0)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Ready", "Up-to-date", "Available", "Age"]);
    assert_eq!(t["rows"][0]["cells"][0], "web");
    assert_eq!(t["rows"][0]["cells"][1], "2/2");
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}
