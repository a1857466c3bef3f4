//! The read-only client of `explain` and `capture`: the kubeconfig's
//! cluster through the controller's client (no hidden retries, bounded
//! requests), with a layer that notes every request the server refused
//! with 403, so that a refusal deep inside a metrics read (whose error is
//! only text) is still reported as RBAC's, naming the verb and resource.

use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use http::{Method, Request, Response, StatusCode};
use tower::{Layer, Service};

use super::error::LiveError;

/// One request the server refused with 403.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The verb as RBAC names it (`get`, `list`, `watch`).
    pub verb: String,
    /// `plural[.group][/subresource]` (`deployments.apps/scale`,
    /// `pods.metrics.k8s.io`), or the path of a non-resource URL.
    pub resource: String,
    /// The namespace of the request, if namespaced.
    pub namespace: Option<String>,
}

/// The refusals seen so far, shared by the layer and the reader.
#[derive(Debug, Clone, Default)]
pub struct Refusals(Arc<Mutex<Vec<Refusal>>>);

impl Refusals {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Refusal>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The first refusal noted since the last [`Self::clear`].
    pub fn first(&self) -> Option<Refusal> {
        self.lock().first().cloned()
    }

    /// Forgets what was noted.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn note(&self, refusal: Refusal) {
        self.lock().push(refusal);
    }
}

/// What RBAC checks for a request: its verb, resource and namespace, read
/// from the method and path as the API server's request info reads them.
pub fn request_info(method: &Method, path: &str, query: Option<&str>) -> Refusal {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, rest): (&str, &[&str]) = match segs.as_slice() {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (group, rest),
        _ => {
            return Refusal {
                verb: method.as_str().to_ascii_lowercase(),
                resource: path.to_owned(),
                namespace: None,
            };
        }
    };
    let (namespace, parts): (Option<&str>, &[&str]) = match rest {
        ["namespaces", ns, parts @ ..] if !parts.is_empty() => (Some(ns), parts),
        other => (None, other),
    };
    let (plural, name, sub) = match parts {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, sub, ..] => (*plural, Some(*name), Some(*sub)),
        [] => ("", None, None),
    };
    let watch = query.is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    let verb = match *method {
        Method::GET if watch => "watch",
        Method::GET if name.is_some() => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "other",
    };
    let mut resource = if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    };
    if let Some(sub) = sub {
        resource.push('/');
        resource.push_str(sub);
    }
    Refusal {
        verb: verb.to_owned(),
        resource,
        namespace: namespace.map(str::to_owned),
    }
}

/// The layer noting refusals.
#[derive(Debug, Clone)]
pub struct RefusalLayer(pub Refusals);

impl<S> Layer<S> for RefusalLayer {
    type Service = RefusalService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RefusalService {
            inner,
            refusals: self.0.clone(),
        }
    }
}

/// See [`RefusalLayer`].
#[derive(Debug, Clone)]
pub struct RefusalService<S> {
    inner: S,
    refusals: Refusals,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B, RB> Service<Request<B>> for RefusalService<S>
where
    S: Service<Request<B>, Response = Response<RB>>,
    S::Future: Send + 'static,
    S::Error: 'static,
    RB: 'static,
{
    type Response = Response<RB>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Response<RB>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let info = request_info(
            request.method(),
            request.uri().path(),
            request.uri().query(),
        );
        let refusals = self.refusals.clone();
        let future = self.inner.call(request);
        Box::pin(async move {
            let response = future.await?;
            if response.status() == StatusCode::FORBIDDEN {
                refusals.note(info);
            }
            Ok(response)
        })
    }
}

/// A read-only client of the kubeconfig's cluster, noting refusals in
/// `refusals`; also the cluster's URL.
pub async fn connect(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    refusals: &Refusals,
) -> Result<(kube::Client, String, String), LiveError> {
    let mut config = crate::testbed::kubeconfig::config(kubeconfig, context)
        .await
        .map_err(|e| LiveError::Kubeconfig(e.to_string()))?;
    let url = config.cluster_url.to_string();
    let namespace = config.default_namespace.clone();
    config.default_retry = false;
    let builder = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| LiveError::Kubeconfig(format!("kubeconfig: {e}")))?;
    let client = builder
        .with_layer(&tower::timeout::TimeoutLayer::new(
            hpa_controller::client::REQUEST_TIMEOUT,
        ))
        .with_layer(&RefusalLayer(refusals.clone()))
        .build();
    Ok((client, url, namespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: Method, path: &str) -> (String, String, Option<String>) {
        let r = request_info(&method, path, None);
        (r.verb, r.resource, r.namespace)
    }

    #[test]
    fn requests_are_read_as_rbac_reads_them() {
        let s = |v: &str| v.to_owned();
        assert_eq!(
            info(
                Method::GET,
                "/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers/web"
            ),
            (
                s("get"),
                s("horizontalpodautoscalers.autoscaling"),
                Some(s("shop"))
            )
        );
        assert_eq!(
            info(
                Method::GET,
                "/apis/apps/v1/namespaces/shop/deployments/web/scale"
            ),
            (s("get"), s("deployments.apps/scale"), Some(s("shop")))
        );
        assert_eq!(
            info(Method::GET, "/api/v1/namespaces/shop/pods"),
            (s("list"), s("pods"), Some(s("shop")))
        );
        assert_eq!(
            info(
                Method::GET,
                "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"
            ),
            (s("list"), s("pods.metrics.k8s.io"), Some(s("shop")))
        );
        assert_eq!(
            info(
                Method::GET,
                "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests"
            ),
            (
                s("get"),
                s("pods.custom.metrics.k8s.io/http_requests"),
                Some(s("shop"))
            )
        );
        assert_eq!(
            info(Method::GET, "/apis/autoscaling/v2/horizontalpodautoscalers"),
            (s("list"), s("horizontalpodautoscalers.autoscaling"), None)
        );
        assert_eq!(
            request_info(&Method::GET, "/api/v1/pods", Some("watch=true")).verb,
            "watch"
        );
        assert_eq!(
            info(Method::GET, "/version"),
            (s("get"), s("/version"), None)
        );
    }
}
