//! Starts a server on a free loopback port for a test; it stops when the
//! handle is dropped, or after a minute at the latest.

#![allow(dead_code, reason = "each test file uses a different part")]

use std::time::Duration;

use fake_metrics_server::client::ControlClient;
use fake_metrics_server::script::Script;
use fake_metrics_server::{AppState, Transport};
use hpa_core::clock::{ScenarioClock, VirtualClock};
use tokio::sync::oneshot;

/// The script most tests start from.
pub const SCRIPT: &str = r#"
defaults: {window: 30s}
pods:
  - name: web-0
    labels: {app: web, tier: front, track: stable}
    containers:
      - {name: app, cpu: 250m, memory: 64Mi}
      - {name: sidecar, cpu: 50m}
    metrics: {pps: 100}
  - name: web-1
    labels: {app: web, tier: back, track: canary}
    containers: [{name: app, cpu: 100m, memory: 32Mi}]
    timestamp: 10s
    window: 1m
    metrics:
      pps: {value: 200, labels: {verb: GET}, window: 1m}
  - name: web-2
    labels: {app: web, tier: front}
    missing: true
  - name: db-0
    labels: {app: db}
    containers: [{name: db, cpu: "1", memory: 1Gi}]
  - namespace: other
    name: web-0
    labels: {app: web}
    containers: [{name: app, cpu: 5m}]
nodes:
  - {name: node-1, labels: {zone: a}, cpu: 1500m, memory: 2Gi}
  - {name: node-2, labels: {zone: b}, cpu: 500m, memory: 1Gi}
objects:
  - {resource: services, namespace: default, name: queue, labels: {app: queue}, metrics: {messages: 30}}
  - {resource: namespaces, name: default, metrics: {quota-used: 7}}
  - {resource: nodes, name: node-1, metrics: {temperature: 45}}
external:
  - {metric: queue_messages_ready, labels: {queue: worker}, value: 30}
  - {metric: queue_messages_ready, labels: {queue: batch}, value: 12}
"#;

pub struct Server {
    pub base: String,
    pub http: reqwest::Client,
    pub control: ControlClient,
    pub clock: Option<VirtualClock>,
    pub state: AppState,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

pub struct Options {
    pub tls: bool,
    pub virtual_clock: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            tls: false,
            virtual_clock: true,
        }
    }
}

pub fn crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

pub async fn start(script: &str) -> Server {
    start_with(script, Options::default()).await
}

pub async fn start_with(script: &str, options: Options) -> Server {
    crypto();
    let script = Script::parse(script, None).unwrap();
    let clock = options.virtual_clock.then(VirtualClock::default);
    let server_clock = match &clock {
        Some(c) => ScenarioClock::Virtual(c.clone()),
        None => ScenarioClock::wall(),
    };
    let state = AppState::with_script(server_clock, &script);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (transport, scheme) = if options.tls {
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        (
            Transport::Tls(fake_metrics_server::self_signed_tls(&names).unwrap()),
            "https",
        )
    } else {
        (Transport::Plain, "http")
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let shutdown = async move {
        let _ = tokio::time::timeout(Duration::from_secs(60), stopped).await;
    };
    let task = tokio::spawn({
        let state = state.clone();
        async move {
            fake_metrics_server::run(listener, state, transport, shutdown)
                .await
                .unwrap();
        }
    });
    let base = format!("{scheme}://{addr}");
    let http = reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let control = ControlClient::with_http(http.clone(), base.clone());
    Server {
        base,
        http,
        control,
        clock,
        state,
        stop: Some(stop),
        task: Some(task),
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET `path`, returning status and JSON body.
    pub async fn get(&self, path: &str) -> (u16, serde_json::Value) {
        let r = self.http.get(self.url(path)).send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        (status, body)
    }

    /// GET `path` and deserialize a 200 answer into `T`.
    pub async fn get_as<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_value(body).unwrap()
    }

    /// Stops the server and waits for it to finish.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(15), task)
                .await
                .unwrap()
                .unwrap();
        }
    }
}

/// Names of the items of a list, as `namespace/name` or `name`.
pub fn names(list: &serde_json::Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let m = &i["metadata"];
            match m["namespace"].as_str() {
                Some(ns) => format!("{ns}/{}", m["name"].as_str().unwrap()),
                None => m["name"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}
