//! Client-side request rate limit (`--kube-api-qps`, `--kube-api-burst`):
//! a token bucket as client-go's, as a tower layer under the kube client.
//!
//! The permit is taken in `poll_ready`, so the kube client's request buffer
//! waits for it, and every request (watch starts included) counts once.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::time::Instant;
use tower::{Layer, Service};

/// A token bucket: `qps` tokens a second, at most `burst` saved up.
#[derive(Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
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

    /// Waits for a token.
    pub async fn acquire(&self) {
        if self.qps <= 0.0 {
            return;
        }
        loop {
            let wait = {
                let mut state = self
                    .state
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let now = Instant::now();
                let (tokens, last) = *state;
                let tokens =
                    (tokens + now.duration_since(last).as_secs_f64() * self.qps).min(self.burst);
                if tokens >= 1.0 {
                    *state = (tokens - 1.0, now);
                    return;
                }
                *state = (tokens, now);
                Duration::from_secs_f64((1.0 - tokens) / self.qps)
            };
            tokio::time::sleep(wait).await;
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
}
