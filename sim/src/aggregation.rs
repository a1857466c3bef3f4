//! API aggregation: the metrics APIs are proxied to a backend, as
//! kube-apiserver does for a registered APIService.
//!
//! A backend is either a base URL (proxied with reqwest) or an in-process
//! `axum::Router` (called as a tower service, no socket). The group's
//! APIService object decides the backend when one exists: `spec.service`
//! naming a service registered with [`crate::Sim::set_service_backend`] uses
//! that backend, any other service uses the default backend, and a local
//! APIService (no service) is not proxied. Without an APIService, the three
//! metrics groups go to the default backend ([`crate::SimConfig::metrics`]).

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, Method, Uri};
use tower::ServiceExt;

use crate::backend::Backend;
use crate::error::ApiError;
use crate::resources::Storage;
use crate::sim::Sim;

/// The aggregated groups served by default, with their versions.
pub const METRICS_GROUPS: [(&str, &[&str]); 3] = [
    ("metrics.k8s.io", &["v1beta1"]),
    ("custom.metrics.k8s.io", &["v1beta2", "v1beta1"]),
    ("external.metrics.k8s.io", &["v1beta1"]),
];

/// Groups and versions to list in discovery: registered APIServices plus the
/// default metrics groups when a default backend exists.
pub fn aggregated_groups(sim: &Sim) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    if sim.inner.config.metrics.is_some() {
        for (g, vs) in METRICS_GROUPS {
            out.push((g.to_owned(), vs.iter().map(|v| (*v).to_owned()).collect()));
        }
    }
    let st = sim.lock();
    for e in st.store.table(Storage::ApiServices).range(None) {
        let v = e.value();
        let g = v
            .pointer("/spec/group")
            .and_then(|x| x.as_str())
            .unwrap_or_default();
        let ver = v
            .pointer("/spec/version")
            .and_then(|x| x.as_str())
            .unwrap_or_default();
        if g.is_empty() || crate::resources::groups().iter().any(|(x, _)| *x == g) {
            continue;
        }
        match out.iter_mut().find(|(x, _)| x == g) {
            Some((_, vs)) => {
                if !vs.iter().any(|x| x == ver) {
                    vs.push(ver.to_owned());
                }
            }
            None => out.push((g.to_owned(), vec![ver.to_owned()])),
        }
    }
    out
}

/// Where a request to an aggregated group goes.
#[derive(Debug, Clone)]
pub enum Route {
    /// Proxied to this backend.
    Proxy(Backend),
    /// Answered 503 by the aggregator: the group's APIService is not
    /// Available.
    Unavailable,
}

impl Route {
    /// The proxied answer, or kube-aggregator's own 503 (its `proxyError`:
    /// plain text, not a Status).
    pub async fn answer(
        self,
        method: Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Response {
        match self {
            Self::Proxy(backend) => proxy(backend, method, uri, headers, body).await,
            Self::Unavailable => (
                http::StatusCode::SERVICE_UNAVAILABLE,
                [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                "service unavailable\n",
            )
                .into_response(),
        }
    }
}

/// Where `group/version` goes, or `None` if the group is not aggregated.
pub fn backend_for(sim: &Sim, group: &str, version: &str) -> Result<Option<Route>, ApiError> {
    let registered = {
        let st = sim.lock();
        st.store
            .table(Storage::ApiServices)
            .get("", &format!("{version}.{group}"))
            .map(|e| e.value())
    };
    let default = sim.inner.config.metrics.clone();
    match registered {
        Some(api) => match api.pointer("/spec/service").filter(|s| !s.is_null()) {
            None => Ok(None),
            // kube-aggregator's proxy answers 503 while the APIService's
            // Available condition is not True (its availability
            // controller's verdict; here, what the object's status says).
            Some(_) if !available(&api) => Ok(Some(Route::Unavailable)),
            Some(svc) => {
                let key = format!(
                    "{}/{}",
                    svc.get("namespace")
                        .and_then(|x| x.as_str())
                        .unwrap_or_default(),
                    svc.get("name").and_then(|x| x.as_str()).unwrap_or_default()
                );
                let named = sim
                    .inner
                    .backends
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&key)
                    .cloned();
                match named.or(default) {
                    Some(b) => Ok(Some(Route::Proxy(b))),
                    None => Err(ApiError::ServiceUnavailable(format!(
                        "the server is currently unable to handle the request (service {key} has no endpoints)"
                    ))),
                }
            }
        },
        None => {
            let known = METRICS_GROUPS
                .iter()
                .any(|(g, vs)| *g == group && vs.contains(&version));
            Ok(if known {
                default.map(Route::Proxy)
            } else {
                None
            })
        }
    }
}

/// Whether an APIService's `Available` condition is True.
fn available(api: &serde_json::Value) -> bool {
    api.pointer("/status/conditions")
        .and_then(|c| c.as_array())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(|t| t.as_str()) == Some("Available"))
        })
        .and_then(|c| c.get("status").and_then(|s| s.as_str()))
        == Some("True")
}

/// Forwards a request to a backend.
pub async fn proxy(
    backend: Backend,
    method: Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    match backend {
        Backend::Router(router) => {
            let mut req = http::Request::new(Body::from(body));
            *req.method_mut() = method;
            *req.uri_mut() = path.parse().unwrap_or_default();
            *req.headers_mut() = headers.clone();
            match router.oneshot(req).await {
                Ok(resp) => resp,
                Err(never) => match never {},
            }
        }
        Backend::Url(base) => {
            let url = format!("{}{}", base.trim_end_matches('/'), path);
            let client = match http_client() {
                Ok(c) => c,
                Err(e) => {
                    return ApiError::Internal(format!("cannot build an HTTP client: {e}"))
                        .into_response();
                }
            };
            let mut rb = client.request(method, &url).body(body);
            for h in [http::header::ACCEPT, http::header::CONTENT_TYPE] {
                if let Some(v) = headers.get(&h) {
                    rb = rb.header(h, v.clone());
                }
            }
            match rb.send().await {
                Ok(resp) => {
                    let status = resp.status();
                    let ct = resp.headers().get(http::header::CONTENT_TYPE).cloned();
                    match resp.bytes().await {
                        Ok(bytes) => {
                            let mut out = (status, bytes).into_response();
                            if let Some(ct) = ct {
                                out.headers_mut().insert(http::header::CONTENT_TYPE, ct);
                            }
                            out
                        }
                        Err(e) => ApiError::ServiceUnavailable(format!(
                            "error reading the response of {url}: {e}"
                        ))
                        .into_response(),
                    }
                }
                Err(e) => ApiError::ServiceUnavailable(format!(
                    "error trying to reach service: {url}: {e}"
                ))
                .into_response(),
            }
        }
    }
}

/// One shared reqwest client (rustls needs its ring provider installed).
/// A backend's certificate is not verified, as for an APIService with
/// `insecureSkipTLSVerify: true` (how metrics servers are registered, and
/// the fake metrics server makes its own self-signed certificate); said once.
fn http_client() -> Result<reqwest::Client, String> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> =
        std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // Another part of the process may have installed it already.
            let _ = rustls::crypto::ring::default_provider().install_default();
            tracing::info!(
                "aggregated APIs are proxied without verifying the backend's TLS certificate (as an APIService with insecureSkipTLSVerify)"
            );
            reqwest::Client::builder()
                .tls_danger_accept_invalid_certs(true)
                .build()
                .map_err(|e| e.to_string())
        })
        .clone()
}
