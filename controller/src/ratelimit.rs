//! Client-side request rate limit (`--kube-api-qps`, `--kube-api-burst`):
//! a token bucket as client-go's, as a tower layer under the kube client.
//!
//! The permit is taken in `poll_ready`, so the kube client's request buffer
//! waits for it, and every request (watch starts included) counts once.
//!
//! A read for one HPA (its scale, its metrics) that has to wait for its
//! token says so to whoever runs it ([`WaitSignal`]): the workers then
//! leave that reconcile to wait on its own and take the next HPA, so one
//! slow clientset holds up no other.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
use tower::{Layer, Service};

tokio::task_local! {
    /// Set around a reconcile by its worker: told when one of its requests
    /// waits for a token.
    static WAITING: WaitSignal;
}

/// Tells the code running a future (through [`WaitSignal::around`]) that a
/// request of that future waits for its bucket.
#[derive(Debug, Clone, Default)]
pub struct WaitSignal(Arc<Notify>);

impl WaitSignal {
    /// `future`, with requests it makes that wait for a token telling this
    /// signal (also once `future` is moved to another task).
    pub fn around<F: Future>(&self, future: F) -> impl Future<Output = F::Output> + use<F> {
        WAITING.scope(self.clone(), future)
    }

    /// Resolves once a request of the future has waited for a token
    /// (at once if one did before this was called).
    pub async fn waited(&self) {
        self.0.notified().await;
    }

    /// Tells the signal of the running future, if any.
    fn notify_current() {
        let _ = WAITING.try_with(|signal| signal.0.notify_one());
    }
}

/// A token bucket: `qps` tokens a second, at most `burst` saved up. Waiters
/// reserve their token and sleep until its time, as client-go's limiter
/// (`golang.org/x/time/rate`'s `Wait`) does: first come, first served, one
/// wake-up each, however many wait.
#[derive(Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    /// Tokens (negative: reserved ahead) as of the instant.
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    /// A full bucket. `qps <= 0` means no limit.
    pub fn new(qps: f64, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            qps,
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (f64, Instant)> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for a token. A wait given up (the future dropped) hands its
    /// token back.
    pub async fn acquire(&self) {
        self.acquire_telling(false).await;
    }

    /// [`Self::acquire`]; with `tell`, a wait is told to the [`WaitSignal`]
    /// around the running future.
    async fn acquire_telling(&self, tell: bool) {
        if self.qps <= 0.0 {
            return;
        }
        let wait = {
            let mut state = self.lock();
            let now = Instant::now();
            let (tokens, last) = *state;
            let tokens =
                (tokens + now.duration_since(last).as_secs_f64() * self.qps).min(self.burst) - 1.0;
            *state = (tokens, now);
            if tokens >= 0.0 {
                return;
            }
            Duration::from_secs_f64(-tokens / self.qps)
        };
        if tell {
            WaitSignal::notify_current();
        }
        let mut reserved = Reserved(Some(self));
        tokio::time::sleep(wait).await;
        reserved.0 = None;
    }
}

/// A token reserved and not yet used: handed back if its wait is dropped.
struct Reserved<'a>(Option<&'a TokenBucket>);

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        if let Some(bucket) = self.0 {
            let mut state = bucket.lock();
            state.0 = (state.0 + 1.0).min(bucket.burst);
        }
    }
}

/// The layer.
#[derive(Debug, Clone)]
pub struct RateLimitLayer {
    bucket: Arc<TokenBucket>,
}

impl RateLimitLayer {
    /// `qps` requests a second, bursts of `burst`.
    pub fn new(qps: f64, burst: u32) -> Self {
        Self {
            bucket: Arc::new(TokenBucket::new(qps, burst)),
        }
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RateLimit {
            inner,
            bucket: Arc::clone(&self.bucket),
            permit: false,
            pending: None,
        }
    }
}

/// The service.
pub struct RateLimit<S> {
    inner: S,
    bucket: Arc<TokenBucket>,
    permit: bool,
    pending: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for RateLimit<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, Req> Service<Req> for RateLimit<S>
where
    S: Service<Req>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if !self.permit {
            let bucket = Arc::clone(&self.bucket);
            let pending = self
                .pending
                .get_or_insert_with(|| Box::pin(async move { bucket.acquire().await }));
            ready!(pending.as_mut().poll(cx));
            self.pending = None;
            self.permit = true;
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        self.permit = false;
        self.inner.call(req)
    }
}

/// The clientsets kube-controller-manager gives the HPA controller, each
/// made from its own `rest.Config` and so each with its own token bucket of
/// `--kube-api-qps` / `--kube-api-burst` (client-go builds a limiter per
/// REST client when the config carries none).
///
/// One kube client with one bucket would let the metrics reads, scale
/// writes, status writes and events of every HPA share what upstream spends
/// five times over, which made the deployed controller four times slower
/// than upstream at the same flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Clientset {
    /// `horizontal-pod-autoscaler`: HPA status writes, events, discovery.
    Hpa,
    /// The scale client (`scale.NewForConfig`): `/scale` reads and writes.
    Scale,
    /// `resourceclient` (metrics.k8s.io).
    ResourceMetrics,
    /// `custom_metrics` (custom.metrics.k8s.io).
    CustomMetrics,
    /// `external_metrics` (external.metrics.k8s.io).
    ExternalMetrics,
    /// `shared-informers`: the lists and watches behind the caches.
    Informers,
    /// `leader-election`: the Lease.
    LeaderElection,
}

impl Clientset {
    /// Every clientset, in a fixed order.
    pub const ALL: [Clientset; 7] = [
        Clientset::Hpa,
        Clientset::Scale,
        Clientset::ResourceMetrics,
        Clientset::CustomMetrics,
        Clientset::ExternalMetrics,
        Clientset::Informers,
        Clientset::LeaderElection,
    ];

    /// The clientset upstream would send this request through.
    pub fn of(method: &http::Method, uri: &http::Uri) -> Self {
        let path = uri.path();
        if path.starts_with("/apis/metrics.k8s.io/") {
            return Clientset::ResourceMetrics;
        }
        if path.starts_with("/apis/custom.metrics.k8s.io/") {
            return Clientset::CustomMetrics;
        }
        if path.starts_with("/apis/external.metrics.k8s.io/") {
            return Clientset::ExternalMetrics;
        }
        if path.starts_with("/apis/coordination.k8s.io/") {
            return Clientset::LeaderElection;
        }
        if path.ends_with("/scale") {
            return Clientset::Scale;
        }
        let watch = uri.query().is_some_and(|q| {
            q.split('&')
                .any(|kv| kv == "watch=true" || kv == "watch=1" || kv == "watch")
        });
        let list_of_cached = [
            "/pods",
            "/horizontalpodautoscalers",
            "/deployments",
            "/replicasets",
            "/statefulsets",
        ]
        .iter()
        .any(|collection| path.ends_with(collection));
        if *method == http::Method::GET && (watch || list_of_cached) {
            return Clientset::Informers;
        }
        Clientset::Hpa
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Whether the clientset serves one HPA's reads (its scale, its
    /// metrics), which other HPAs may not need: a reconcile waiting for
    /// its token tells its worker, which leaves it to wait on its own
    /// ([`WaitSignal`]). The HPA clientset's writes (statuses, events) are
    /// waited for in the worker, as upstream: every HPA whose status
    /// changed needs one, so a first pass would otherwise hold every HPA's
    /// reconcile in memory at once, waiting for its write.
    pub fn reads_for_one_hpa(self) -> bool {
        matches!(
            self,
            Clientset::Scale
                | Clientset::ResourceMetrics
                | Clientset::CustomMetrics
                | Clientset::ExternalMetrics
        )
    }
}

/// A token bucket per [`Clientset`], all at the same qps and burst, as a
/// tower layer under the kube client.
///
/// The bucket is chosen by the request, so the permit is taken in the
/// response future, not in `poll_ready`: the layer puts a
/// [`tower::buffer::Buffer`] under itself to have a cloneable inner service
/// (kube's base service is a `BoxService`), and a request waiting for an
/// empty bucket holds up no other clientset.
#[derive(Debug, Clone)]
pub struct PerClientsetLayer {
    buckets: Arc<[TokenBucket; 7]>,
}

impl PerClientsetLayer {
    /// Seven buckets of `qps` requests a second, bursts of `burst`
    /// (`qps <= 0`: no limit).
    pub fn new(qps: f64, burst: u32) -> Self {
        Self::with_rates(|_| (qps, burst))
    }

    /// A bucket per clientset at the `(qps, burst)` that `rate` gives it
    /// (kube-controller-manager gives them all the same; tests and loads
    /// slow down one).
    pub fn with_rates(rate: impl Fn(Clientset) -> (f64, u32)) -> Self {
        Self {
            buckets: Arc::new(Clientset::ALL.map(|c| {
                let (qps, burst) = rate(c);
                TokenBucket::new(qps, burst)
            })),
        }
    }
}

/// Requests queued below the layer; as kube's own buffer.
const BUFFER: usize = 1024;

impl<S> Layer<S> for PerClientsetLayer
where
    S: Service<http::Request<kube::client::Body>> + Send + 'static,
    S::Future: Send,
    S::Error: Into<tower::BoxError> + Send + Sync,
{
    type Service =
        PerClientset<tower::buffer::Buffer<http::Request<kube::client::Body>, S::Future>>;

    fn layer(&self, inner: S) -> Self::Service {
        PerClientset {
            inner: tower::buffer::Buffer::new(inner, BUFFER),
            buckets: Arc::clone(&self.buckets),
        }
    }
}

/// The service of [`PerClientsetLayer`].
#[derive(Debug, Clone)]
pub struct PerClientset<S> {
    inner: S,
    buckets: Arc<[TokenBucket; 7]>,
}

impl<S, B> Service<http::Request<B>> for PerClientset<S>
where
    S: Service<http::Request<B>> + Clone + Send + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Readiness is awaited in the future, after the bucket.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let clientset = Clientset::of(req.method(), req.uri());
        let buckets = Arc::clone(&self.buckets);
        let inner = self.inner.clone();
        Box::pin(async move {
            buckets[clientset.index()]
                .acquire_telling(clientset.reads_for_one_hpa())
                .await;
            tower::ServiceExt::oneshot(inner, req).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_bucket_allows_a_burst_then_paces_at_qps() {
        let bucket = TokenBucket::new(10.0, 3);
        let start = Instant::now();
        for _ in 0..3 {
            bucket.acquire().await;
        }
        assert!(
            start.elapsed() < Duration::from_millis(1),
            "the burst is free"
        );
        for _ in 0..5 {
            bucket.acquire().await;
        }
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(490) && elapsed <= Duration::from_millis(520),
            "5 more at 10/s take 0.5s, took {elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_layer_delays_requests_beyond_the_burst() {
        let service =
            tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
        let mut limited = RateLimitLayer::new(2.0, 1).layer(service);
        let start = Instant::now();
        for i in 0..3 {
            let out = tower::ServiceExt::ready(&mut limited)
                .await
                .unwrap()
                .call(i)
                .await
                .unwrap();
            assert_eq!(out, i);
        }
        assert!(start.elapsed() >= Duration::from_millis(1000));
    }

    #[tokio::test(start_paused = true)]
    async fn waiters_are_served_in_turn_at_qps() {
        let bucket = Arc::new(TokenBucket::new(10.0, 1));
        bucket.acquire().await;
        let start = Instant::now();
        let waiters: Vec<_> = (0..5)
            .map(|_| {
                let bucket = Arc::clone(&bucket);
                tokio::spawn(async move {
                    bucket.acquire().await;
                    start.elapsed()
                })
            })
            .collect();
        let mut took = Vec::new();
        for w in waiters {
            took.push(w.await.unwrap().as_millis());
        }
        assert_eq!(took, [100, 200, 300, 400, 500]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_given_up_hands_its_token_back() {
        let bucket = TokenBucket::new(1.0, 1);
        bucket.acquire().await;
        // Given up after 0.1 s of the second's wait.
        let given_up = tokio::time::timeout(Duration::from_millis(100), bucket.acquire()).await;
        assert!(given_up.is_err());
        let start = Instant::now();
        bucket.acquire().await;
        assert_eq!(
            start.elapsed(),
            Duration::from_millis(900),
            "the next waits for the first token, not a second one"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_read_for_one_hpa_that_waits_for_its_token_tells_the_signal_around_it() {
        let service = tower::service_fn(|_: http::Request<kube::client::Body>| async move {
            Ok::<_, std::convert::Infallible>(())
        });
        let limited = PerClientsetLayer::new(1.0, 1).layer(service);
        let send = |method: &str, uri: &str| {
            let request = http::Request::builder()
                .method(method)
                .uri(uri)
                .body(kube::client::Body::empty())
                .unwrap();
            tower::ServiceExt::oneshot(limited.clone(), request)
        };
        let told = |signal: &WaitSignal| {
            let signal = signal.clone();
            async move {
                tokio::time::timeout(Duration::ZERO, signal.waited())
                    .await
                    .is_ok()
            }
        };
        let external = "/apis/external.metrics.k8s.io/v1beta1/namespaces/d/q";
        let status = "/apis/autoscaling/v2/namespaces/d/horizontalpodautoscalers/w/status";
        let signal = WaitSignal::default();
        signal.around(send("GET", external)).await.unwrap();
        assert!(!told(&signal).await, "a token at once tells nothing");
        let start = Instant::now();
        signal.around(send("GET", external)).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        assert!(told(&signal).await, "a metrics read that waits is told");
        // A status write waits in place, untold.
        let signal = WaitSignal::default();
        signal.around(send("PUT", status)).await.unwrap();
        signal.around(send("PUT", status)).await.unwrap();
        assert!(!told(&signal).await);
        // Outside any signal's future a wait tells nobody, and works.
        send("GET", external).await.unwrap();
    }

    fn of(method: &str, uri: &str) -> Clientset {
        Clientset::of(&method.parse().unwrap(), &uri.parse().unwrap())
    }

    #[test]
    fn requests_go_to_upstreams_clientsets() {
        let cases = [
            (
                "GET",
                "/apis/metrics.k8s.io/v1beta1/namespaces/d/pods?labelSelector=app%3Dweb",
                Clientset::ResourceMetrics,
            ),
            (
                "GET",
                "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/%2A/qps",
                Clientset::CustomMetrics,
            ),
            (
                "GET",
                "/apis/external.metrics.k8s.io/v1beta1/namespaces/d/queue",
                Clientset::ExternalMetrics,
            ),
            (
                "GET",
                "/apis/apps/v1/namespaces/d/deployments/web/scale",
                Clientset::Scale,
            ),
            (
                "PUT",
                "/apis/apps/v1/namespaces/d/deployments/web/scale",
                Clientset::Scale,
            ),
            (
                "PUT",
                "/apis/autoscaling/v2/namespaces/d/horizontalpodautoscalers/web/status",
                Clientset::Hpa,
            ),
            ("POST", "/api/v1/namespaces/d/events", Clientset::Hpa),
            ("PATCH", "/api/v1/namespaces/d/events/web.1", Clientset::Hpa),
            (
                "GET",
                "/apis/autoscaling/v2/horizontalpodautoscalers?watch=true&resourceVersion=5",
                Clientset::Informers,
            ),
            ("GET", "/api/v1/pods?limit=500", Clientset::Informers),
            ("GET", "/apis/apps/v1/deployments", Clientset::Informers),
            ("GET", "/apis/apps/v1", Clientset::Hpa),
            (
                "PUT",
                "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/hpa",
                Clientset::LeaderElection,
            ),
        ];
        for (method, uri, want) in cases {
            assert_eq!(of(method, uri), want, "{method} {uri}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_bucket_holds_up_only_its_own_clientset() {
        let service = tower::service_fn(|r: http::Request<kube::client::Body>| async move {
            Ok::<_, std::convert::Infallible>(r.uri().path().to_owned())
        });
        let limited = PerClientsetLayer::new(1.0, 1).layer(service);
        let send = |uri: &'static str| {
            let svc = limited.clone();
            async move {
                let req = http::Request::get(uri)
                    .body(kube::client::Body::empty())
                    .unwrap();
                tower::ServiceExt::oneshot(svc, req).await.unwrap()
            }
        };
        let start = Instant::now();
        // The first metrics read takes the resource-metrics burst.
        send("/apis/metrics.k8s.io/v1beta1/namespaces/d/pods").await;
        // A scale read and an external read have buckets of their own.
        send("/apis/apps/v1/namespaces/d/deployments/web/scale").await;
        send("/apis/external.metrics.k8s.io/v1beta1/namespaces/d/q").await;
        assert!(
            start.elapsed() < Duration::from_millis(1),
            "{:?}",
            start.elapsed()
        );
        // A second metrics read waits a second for its token.
        send("/apis/metrics.k8s.io/v1beta1/namespaces/d/pods").await;
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(990) && waited <= Duration::from_millis(1100),
            "the second read of one clientset waits for its bucket: {waited:?}"
        );
    }
}
