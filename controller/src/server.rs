//! The controller's HTTP endpoints: `/metrics` (Prometheus text),
//! `/healthz` (the process serves), `/readyz` (caches synced),
//! `/debug/decisions` (JSON: the latest decisions next to each HPA's status),
//! `/debug/memory` (JSON: the bytes each structure holds and the
//! allocator's totals, [`crate::memory`]), `/debug/allocator` (text:
//! jemalloc's own statistics, per size class),
//! `/debug/syncs` (JSON: when each HPA's kept decisions were taken,
//! `?since=RFC 3339 time` for the recent ones only, `?after=N` for those
//! logged after the read whose `next` was N; what `hpa-harness load
//! --controller upstream` counts every sync of every HPA from).
//!
//! Served on `--bind-address`, by default `127.0.0.1:10257`: the port of
//! kube-controller-manager's secure serving (which this controller
//! replaces), on loopback because the endpoints are plain HTTP and
//! unauthenticated (kube-controller-manager serves them over HTTPS with
//! authentication and authorization delegated to the API server; this
//! controller does not, so it keeps them off the network). The kubelet's
//! probes get the health endpoints alone on `--health-bind-address`
//! ([`health_app`]), which the Deployment binds on the pod's address.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::decisions::DecisionLog;
use super::memory_report::MemorySource;
use super::metrics::ControllerMetrics;

/// The default `--bind-address`.
pub const DEFAULT_BIND_ADDRESS: &str = "127.0.0.1:10257";

/// What the endpoints read.
#[derive(Debug, Clone)]
pub struct ServerState {
    pub metrics: ControllerMetrics,
    pub decisions: DecisionLog,
    /// Set once the HPA and pod caches have synced.
    pub ready: Arc<AtomicBool>,
    /// What `/debug/memory` measures (`None`: answers 404).
    pub memory: Option<MemorySource>,
}

/// The router.
pub fn app(state: ServerState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/debug/decisions", get(decisions))
        .route("/debug/syncs", get(syncs))
        .route("/debug/memory", get(memory))
        .route("/debug/allocator", get(allocator))
        .with_state(state)
}

/// The debug endpoints alone (`/debug/decisions`, `/debug/syncs`): what a
/// process embedding the controller (`hpa-harness sim --controller`) serves
/// beside its own routes.
pub fn debug_app(state: ServerState) -> Router {
    Router::new()
        .route("/debug/decisions", get(decisions))
        .route("/debug/syncs", get(syncs))
        .with_state(state)
}

/// The health endpoints alone (`/healthz`, `/livez`, `/readyz`): what a
/// kubelet probes, safe to serve where others can reach it.
pub fn health_app(state: ServerState) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(state)
}

/// Serves `router` on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

/// Serves `app` on `listener` until `shutdown`.
pub async fn run(
    listener: TcpListener,
    state: ServerState,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(listener, app(state))
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

async fn metrics(State(state): State<ServerState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
        .into_response()
}

/// jemalloc's statistics ([`crate::memory::allocator_report`]), answered
/// as `/debug/memory` is: 404 where memory is not measured, 501 where
/// jemalloc is not the allocator.
async fn allocator(State(state): State<ServerState>) -> Response {
    if state.memory.is_none() {
        return (StatusCode::NOT_FOUND, "memory is not measured here").into_response();
    }
    match super::memory::allocator_report() {
        Some(text) => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response(),
        None => (
            StatusCode::NOT_IMPLEMENTED,
            "jemalloc is not this process's allocator",
        )
            .into_response(),
    }
}

async fn readyz(State(state): State<ServerState>) -> Response {
    if state.ready.load(Ordering::SeqCst) {
        (StatusCode::OK, "ok").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "caches not synced").into_response()
    }
}

async fn decisions(State(state): State<ServerState>) -> Response {
    axum::Json(state.decisions.report()).into_response()
}

/// Where the memory goes: each structure's bytes and the allocator's
/// totals ([`crate::memory`]), measured on a blocking thread (copying every
/// entry once takes a while at 100,000 HPAs).
async fn memory(State(state): State<ServerState>) -> Response {
    let Some(source) = state.memory else {
        return (StatusCode::NOT_FOUND, "no memory source").into_response();
    };
    match tokio::task::spawn_blocking(move || source.report()).await {
        Ok(Some(report)) => axum::Json(report).into_response(),
        Ok(None) => (
            StatusCode::NOT_IMPLEMENTED,
            "memory is measured only with jemalloc as the allocator",
        )
            .into_response(),
        Err(err) => (StatusCode::INTERNAL_SERVER_ERROR, err.to_string()).into_response(),
    }
}

/// The query of `/debug/syncs`.
#[derive(Debug, serde::Deserialize)]
struct SyncsQuery {
    /// Only decisions taken at or after this time (RFC 3339).
    since: Option<jiff::Timestamp>,
    /// Only decisions logged after this one (an earlier read's `next`).
    after: Option<u64>,
}

async fn syncs(State(state): State<ServerState>, query: Query<SyncsQuery>) -> Response {
    axum::Json(state.decisions.sync_times(query.since, query.after)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    fn state() -> ServerState {
        ServerState {
            metrics: ControllerMetrics::new(),
            decisions: DecisionLog::new(3),
            ready: Arc::new(AtomicBool::new(false)),
            memory: None,
        }
    }

    async fn get_path(app: Router, path: &str) -> (StatusCode, String) {
        let response = app
            .oneshot(
                axum::http::Request::get(path)
                    .body(axum::body::Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn readyz_fails_until_the_caches_sync() {
        let state = state();
        let (code, _) = get_path(app(state.clone()), "/readyz").await;
        assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
        state.ready.store(true, Ordering::SeqCst);
        let (code, _) = get_path(app(state.clone()), "/readyz").await;
        assert_eq!(code, StatusCode::OK);
        let (code, body) = get_path(app(state), "/healthz").await;
        assert_eq!((code, body.as_str()), (StatusCode::OK, "ok"));
    }

    #[tokio::test]
    async fn metrics_serves_the_upstream_names() {
        let state = state();
        state.metrics.record_reconciliation(
            super::super::metrics::ActionLabel::None,
            super::super::metrics::ErrorLabel::None,
            0.01,
        );
        let (code, body) = get_path(app(state), "/metrics").await;
        assert_eq!(code, StatusCode::OK);
        assert!(body.contains(
            "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"none\",error=\"none\"} 1"
        ));
    }

    #[tokio::test]
    async fn debug_decisions_is_json() {
        let (code, body) = get_path(app(state()), "/debug/decisions").await;
        assert_eq!(code, StatusCode::OK);
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(doc["hpas"].is_array());
    }

    /// The debug routes alone: the decisions, and nothing a host process
    /// serves itself (its health endpoints, `/metrics`).
    #[tokio::test]
    async fn the_debug_app_serves_the_decisions_only() {
        let (code, body) = get_path(debug_app(state()), "/debug/decisions").await;
        assert_eq!(code, StatusCode::OK);
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(doc["hpas"].is_array());
        let (code, _) = get_path(debug_app(state()), "/debug/syncs").await;
        assert_eq!(code, StatusCode::OK);
        for path in ["/healthz", "/metrics"] {
            let (code, _) = get_path(debug_app(state()), path).await;
            assert_eq!(code, StatusCode::NOT_FOUND, "{path}");
        }
    }

    /// Without a source there is nothing to measure; with one, where
    /// jemalloc is not the allocator (these tests), it says so.
    #[tokio::test]
    async fn debug_memory_answers_only_what_it_can_measure() {
        let (code, _) = get_path(app(state()), "/debug/memory").await;
        assert_eq!(code, StatusCode::NOT_FOUND);
        let client =
            kube::Client::try_from(kube::Config::new("http://127.0.0.1:1".parse().unwrap()))
                .unwrap();
        let ctx =
            crate::Context::for_tests(client, Arc::new(hpa_core::clock::VirtualClock::default()));
        let queue = crate::queue::WorkQueue::new(
            crate::queue::Backoff {
                base: std::time::Duration::from_secs(1),
                max: std::time::Duration::from_secs(1),
            },
            crate::metrics::QueueMetrics::default(),
        );
        let state = ServerState {
            memory: Some(MemorySource::new(ctx, queue)),
            ..state()
        };
        let (code, body) = get_path(app(state.clone()), "/debug/memory").await;
        assert_eq!(code, StatusCode::NOT_IMPLEMENTED, "{body}");
        assert!(body.contains("jemalloc"), "{body}");
        let (code, body) = get_path(app(state), "/debug/allocator").await;
        assert_eq!(code, StatusCode::NOT_IMPLEMENTED, "{body}");
        assert!(body.contains("jemalloc"), "{body}");
        let (code, _) = get_path(app(super::tests::state()), "/debug/allocator").await;
        assert_eq!(code, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn debug_syncs_lists_decision_times_since_a_time() {
        let state = state();
        let at = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        state.decisions.push(
            "ns/a",
            super::super::decisions::DecisionRecord {
                at,
                current_replicas: None,
                desired_replicas: None,
                rescaled: false,
                status_written: false,
                dry_run: false,
                observed: None,
                computed_status: None,
                events: vec![],
                error: None,
                trace: None,
            },
        );
        let (code, body) = get_path(app(state.clone()), "/debug/syncs").await;
        assert_eq!(code, StatusCode::OK);
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["kept"], 3);
        assert_eq!(doc["hpas"][0]["key"], "ns/a");
        assert_eq!(doc["hpas"][0]["at"][0], "2027-01-15T08:00:00Z");
        let (code, body) = get_path(
            app(state.clone()),
            "/debug/syncs?since=2027-01-15T08:00:01Z",
        )
        .await;
        assert_eq!(code, StatusCode::OK);
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["hpas"].as_array().unwrap().len(), 0, "{body}");
        let (code, _) = get_path(app(state), "/debug/syncs?since=yesterday").await;
        assert_eq!(code, StatusCode::BAD_REQUEST);
    }

    #[tokio::test]
    async fn the_server_answers_on_a_real_socket_and_stops() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(run(listener, state(), shutdown.clone()));
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(
            &mut stream,
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await
        .unwrap();
        let mut response = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut response)
            .await
            .unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.ends_with("ok"), "{response}");
        shutdown.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), server)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
}
