#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! The simulated cluster proxies the metrics APIs to a fake metrics server
//! that serves TLS with its own self-signed certificate, as kube-apiserver
//! does for an APIService with `insecureSkipTLSVerify`: the request works
//! (it failed with 503 and a logged `UnknownIssuer` before).

use fake_metrics_server::{AppState, Transport};
use hpa_core::clock::{ScenarioClock, VirtualClock};
use hpa_sim::{Backend, Sim, SimConfig};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn metrics_apis_are_proxied_to_a_self_signed_tls_backend() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let tls = fake_metrics_server::self_signed_tls(&["127.0.0.1".to_owned()]).unwrap();
    let state = AppState::new(ScenarioClock::Virtual(VirtualClock::default()));
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    let server = tokio::spawn(async move {
        fake_metrics_server::run(listener, state, Transport::Tls(tls), async move {
            stopped.cancelled().await;
        })
        .await
    });
    let sim = Sim::new(SimConfig {
        metrics: Some(Backend::Url(format!("https://{addr}"))),
        ..SimConfig::default()
    });
    let request = http::Request::get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
        .body(Vec::new())
        .unwrap();
    let body = sim.client().request_text(request).await.unwrap();
    assert!(body.contains("PodMetricsList"), "{body}");
    stop.cancel();
    server.await.unwrap().unwrap();
}
