//! The controller's kube client, behaving as kube-controller-manager's
//! client-go one does where failures show:
//!
//! - no hidden retry loop: kube's default `RetryPolicy` retries 429, 503
//!   and 504 up to 15 times with a backoff growing to minutes, so a metrics
//!   API answering 503 kept an HPA `ValidMetricFound` for a whole outage and
//!   held its worker. client-go retries only answers carrying
//!   `Retry-After` (aggregated metrics APIs send none), so the first failure
//!   fails the sync, sets its condition and event, and the worker moves on;
//! - a bounded request time: [`REQUEST_TIMEOUT`], the API server's default
//!   `--request-timeout`, which bounds every non-watch request upstream sees;
//! - the client-side rate limit of `--kube-api-qps` / `--kube-api-burst`,
//!   one bucket per clientset upstream gives the HPA controller
//!   ([`PerClientsetLayer`]).

use std::time::Duration;

use tower::timeout::TimeoutLayer;

use super::ratelimit::PerClientsetLayer;

/// How long a request may wait for its response headers (watch streams
/// are not cut: their headers arrive at once).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A client for `config` without kube's retry layer, with a bounded request
/// time and the given client-side rate limit.
pub fn controller_client(
    mut config: kube::Config,
    qps: f64,
    burst: u32,
    timeout: Duration,
) -> Result<kube::Client, kube::Error> {
    config.default_retry = false;
    let builder = kube::client::ClientBuilder::try_from(config)?;
    Ok(builder
        .with_layer(&TimeoutLayer::new(timeout))
        .with_layer(&PerClientsetLayer::new(qps, burst))
        .build())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::Router;
    use axum::http::StatusCode;
    use axum::routing::get;

    use super::*;

    /// Serves a metrics API path answering 503 and counts the requests.
    async fn unavailable_server() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&hits);
        let app = Router::new().route(
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue",
            get(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async { (StatusCode::SERVICE_UNAVAILABLE, "service unavailable") }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        (format!("http://{addr}"), hits, server)
    }

    #[tokio::test]
    async fn a_503_fails_the_request_at_once_without_retries() {
        let (url, hits, server) = unavailable_server().await;
        let config = kube::Config::new(url.parse().unwrap());
        let client = controller_client(config, 0.0, 0, REQUEST_TIMEOUT).unwrap();
        let request =
            http::Request::get("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue")
                .body(Vec::new())
                .unwrap();
        let result = client.request::<serde_json::Value>(request).await;
        server.abort();
        assert!(result.is_err(), "a 503 is an error");
        assert_eq!(
            hits.load(Ordering::SeqCst),
            1,
            "exactly one request, no retry"
        );
    }
}
