//! A bounded load generator: N concurrent clients ask for a PodMetrics list
//! with a label selector for D seconds and report requests per second.
//!
//! Without `--url` it starts a server in-process on 127.0.0.1 (plain HTTP)
//! with `--pods` pods, half of them matching the selector, so the figure
//! includes the server and the clients sharing this machine's cores.
//!
//! ```text
//! cargo run --release -p fake-metrics-server --example loadgen -- \
//!     --concurrency 8 --seconds 10 --pods 100
//! ```
#![allow(clippy::unwrap_used, reason = "a measuring tool: fail loudly")]

use std::time::{Duration, Instant};

use clap::Parser;
use fake_metrics_server::script::{ContainerSpec, PodSpec, Script, Value};
use fake_metrics_server::types::PodMetricsList;
use fake_metrics_server::{AppState, Transport};
use hpa_core::clock::ScenarioClock;

/// Load generator for the fake metrics server.
#[derive(Debug, Parser)]
struct Args {
    /// Server base URL; without it a server is started in-process.
    #[arg(long)]
    url: Option<String>,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// How long to run, in seconds (bounded to 300).
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Pods in the in-process script.
    #[arg(long, default_value_t = 100)]
    pods: usize,
    /// Label selector sent with every request.
    #[arg(long, default_value = "app=web,tier in (front,back)")]
    selector: String,
}

fn script(pods: usize) -> Script {
    Script {
        pods: (0..pods)
            .map(|i| PodSpec {
                namespace: "default".into(),
                name: format!("web-{i}"),
                labels: [
                    (
                        "app".to_owned(),
                        if i % 2 == 0 { "web" } else { "other" }.to_owned(),
                    ),
                    ("tier".to_owned(), "front".to_owned()),
                ]
                .into(),
                containers: vec![ContainerSpec {
                    name: "app".into(),
                    cpu: Some(Value(format!("{}m", 100 + i))),
                    memory: Some(Value("64Mi".into())),
                }],
                ..PodSpec::default()
            })
            .collect(),
        ..Script::default()
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let seconds = args.seconds.clamp(1, 300);
    let (base, _server) = match &args.url {
        Some(url) => (url.clone(), None),
        None => {
            let state = AppState::with_script(ScenarioClock::wall(), &script(args.pods));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let stop = tokio::time::sleep(Duration::from_secs(seconds + 30));
            let task = tokio::spawn(fake_metrics_server::run(
                listener,
                state,
                Transport::Plain,
                stop,
            ));
            (format!("http://{addr}"), Some(task))
        }
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .pool_max_idle_per_host(args.concurrency)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let url = reqwest::Url::parse_with_params(
        &format!("{base}/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"),
        &[("labelSelector", args.selector.as_str())],
    )
    .unwrap();

    // One checked request first, so a wrong setup fails loudly.
    let first: PodMetricsList = http
        .get(url.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let items = first.items.len();

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let workers: Vec<_> = (0..args.concurrency)
        .map(|_| {
            let http = http.clone();
            let url = url.clone();
            tokio::spawn(async move {
                let mut ok = 0u64;
                let mut failed = 0u64;
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let t = Instant::now();
                    match http.get(url.clone()).send().await {
                        Ok(r) if r.status().is_success() => match r.bytes().await {
                            Ok(_) => ok += 1,
                            Err(_) => failed += 1,
                        },
                        _ => failed += 1,
                    }
                    latencies.push(t.elapsed());
                }
                (ok, failed, latencies)
            })
        })
        .collect();
    let mut ok = 0;
    let mut failed = 0;
    let mut latencies = Vec::new();
    for w in workers {
        let (o, f, l) = w.await.unwrap();
        ok += o;
        failed += f;
        latencies.extend(l);
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let pct = |p: f64| {
        let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "PodMetrics list, {} pods scripted, {items} matching \"{}\": {ok} ok, {failed} failed in {elapsed:.1}s with {} clients",
        args.pods, args.selector, args.concurrency
    );
    println!(
        "{:.0} requests/s; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ok as f64 / elapsed,
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
}
