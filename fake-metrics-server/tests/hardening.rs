#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! Bad input, slow clients and strangers never silently change the server:
//! each request here was accepted before (an empty script wiping every pod,
//! a form body read as YAML, a clock wrapping to 1726, a legitimate large
//! YAML script refused, an open control API on the network).

use std::fmt::Write as _;

use axum::body::Body;
use fake_metrics_server::auth::ControlToken;
use fake_metrics_server::script::Script;
use fake_metrics_server::{AppState, app, app_with_token};
use hpa_core::clock::{Clock, ScenarioClock, VirtualClock};
use http::{Method, Request, StatusCode};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

const ONE_POD: &str = "pods:\n  - name: web-0\n    containers: [{name: app, cpu: 250m}]\n";

fn state() -> AppState {
    let clock = ScenarioClock::Virtual(VirtualClock::new("2026-01-01T00:00:00Z".parse().unwrap()));
    AppState::with_script(clock, &Script::parse(ONE_POD, None).unwrap())
}

async fn send(
    router: axum::Router,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Body>,
) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(path);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = router
        .oneshot(req.body(body.into()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

const YAML: (&str, &str) = ("content-type", "application/yaml");

#[tokio::test]
async fn an_empty_script_is_refused_and_the_pods_stay() {
    let s = state();
    for body in ["", "  \n"] {
        let (code, status) = send(
            app(s.clone()),
            Method::PUT,
            "/control/v1/script",
            &[YAML],
            body,
        )
        .await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
    }
    assert_eq!(s.script().pods.len(), 1);
    let (code, _) = send(
        app(s.clone()),
        Method::PUT,
        "/control/v1/script",
        &[YAML],
        "{}",
    )
    .await;
    assert_eq!(
        code,
        StatusCode::OK,
        "an explicit empty script still clears"
    );
    assert_eq!(s.script().pods.len(), 0);
}

#[tokio::test]
async fn a_body_of_an_unsupported_type_is_refused_with_415() {
    let s = state();
    let form = ("content-type", "application/x-www-form-urlencoded");
    let (code, _) = send(
        app(s.clone()),
        Method::PUT,
        "/control/v1/script",
        &[form],
        "pods: []",
    )
    .await;
    assert_eq!(code, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(s.script().pods.len(), 1);
}

#[tokio::test]
async fn a_body_declared_over_the_limit_is_refused_with_413() {
    let s = state();
    let len = (fake_metrics_server::limits::MAX_BODY + 1).to_string();
    let (code, _) = send(
        app(s.clone()),
        Method::PUT,
        "/control/v1/script",
        &[YAML, ("content-length", &len)],
        "pods: []",
    )
    .await;
    assert_eq!(code, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(s.script().pods.len(), 1);
}

#[tokio::test]
async fn the_clock_refuses_moves_it_cannot_hold() {
    let s = state();
    let before = s.clock().now();
    for body in [
        r#"{"advance": "2500000h"}"#,
        r#"{"set": "9000-01-01T00:00:00Z"}"#,
    ] {
        let json = ("content-type", "application/json");
        let (code, status) = send(
            app(s.clone()),
            Method::POST,
            "/control/v1/clock",
            &[json],
            body,
        )
        .await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{body}: {status}");
    }
    assert_eq!(s.clock().now(), before);
}

/// A YAML script of `n` pods, as a load run writes it.
fn big_script(n: usize) -> String {
    let mut out = String::from("defaults: {window: 30s}\npods:\n");
    for i in 0..n {
        let _ = write!(
            out,
            "  - name: web-{i}\n    namespace: load-{}\n    labels: {{app: web-{}}}\n    containers:\n      - {{name: app, cpu: 250m, memory: 64Mi}}\n    metrics: {{pps: 100}}\n",
            i % 100,
            i % 1000
        );
    }
    out
}

#[tokio::test]
async fn a_100000_pod_yaml_script_loads() {
    // The documented scale (15 MiB of YAML). serde-saphyr's default budget
    // refused 30,000 pods ("budget breached: Nodes"). The YAML parser is
    // optimised in test builds (Cargo.toml) so this takes seconds, not the
    // 80 s of an unoptimised parser.
    let s = state();
    let text = big_script(100_000);
    assert!(text.len() < fake_metrics_server::limits::MAX_BODY);
    let (code, status) = send(
        app(s.clone()),
        Method::PUT,
        "/control/v1/script",
        &[YAML],
        text,
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{status}");
    assert_eq!(status["pods"], 100_000);
}

#[tokio::test]
async fn a_yaml_alias_bomb_is_still_refused() {
    let mut bomb = String::from("defaults: {}\nfaults: {}\n");
    bomb.push_str("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        let _ = writeln!(
            bomb,
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]"
        );
    }
    bomb.push_str("pods: *a11\n");
    let s = state();
    let (code, _) = send(
        app(s.clone()),
        Method::PUT,
        "/control/v1/script",
        &[YAML],
        bomb,
    )
    .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(s.script().pods.len(), 1);
}

#[tokio::test]
async fn the_control_api_behind_a_token_refuses_requests_without_it() {
    let s = state();
    let router = || app_with_token(s.clone(), ControlToken::new("s3cret"));
    let (code, _) = send(router(), Method::PUT, "/control/v1/script", &[YAML], "{}").await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    let (code, _) = send(
        router(),
        Method::GET,
        "/control/v1/script",
        &[("authorization", "Bearer nope")],
        "",
    )
    .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    assert_eq!(s.script().pods.len(), 1);
    let (code, _) = send(
        router(),
        Method::GET,
        "/control/v1/script",
        &[("x-control-token", "s3cret")],
        "",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    let (code, _) = send(
        router(),
        Method::GET,
        "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
        &[],
        "",
    )
    .await;
    assert_eq!(code, StatusCode::OK, "the metrics APIs need no token");
}

/// Paused time: the server's deadlines fire as soon as the client stalls.
#[tokio::test(start_paused = true)]
async fn a_client_that_never_finishes_its_tls_handshake_or_headers_is_dropped() {
    for tls in [true, false] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let transport = if tls {
            fake_metrics_server::Transport::Tls(
                fake_metrics_server::self_signed_tls(&["localhost".to_owned()]).unwrap(),
            )
        } else {
            fake_metrics_server::Transport::Plain
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(fake_metrics_server::run(
            listener,
            state(),
            transport,
            async {
                let _ = stopped.await;
            },
        ));
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        // Half a request line, then nothing.
        stream
            .write_all(if tls { b"\x16\x03" } else { b"GET / HT" })
            .await
            .unwrap();
        let mut buf = Vec::new();
        // An hour of (paused) time: far past the server's deadlines, which
        // close the connection first; without them this wait runs out.
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(3600),
            stream.read_to_end(&mut buf),
        )
        .await;
        assert!(
            read.is_ok(),
            "the server closed the stalled connection (tls: {tls})"
        );
        let _ = stop.send(());
        server.await.unwrap().unwrap();
    }
}
