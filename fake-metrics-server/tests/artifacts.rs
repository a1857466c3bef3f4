//! What ships beside the code: the example scripts, the README's script, the
//! manifests, and the binary itself.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use axum::body::Body;
use fake_metrics_server::script::Script;
use fake_metrics_server::types::PodMetricsList;
use fake_metrics_server::{AppState, app};
use hpa_core::clock::ScenarioClock;
use http_body_util::BodyExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use tower::ServiceExt;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_example_script_parses() {
    let mut count = 0;
    for entry in std::fs::read_dir(crate_dir().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            Script::parse(&read(&path), None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            count += 1;
        }
    }
    assert!(count >= 3, "expected the shipped examples, found {count}");
}

#[test]
fn the_readme_script_example_parses_and_uses_every_section() {
    let readme = read(&crate_dir().join("README.md"));
    let block = readme
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap();
    let script = Script::parse(block, None).unwrap();
    assert!(!script.pods.is_empty());
    assert!(!script.nodes.is_empty());
    assert!(!script.objects.is_empty());
    assert!(!script.external.is_empty());
    assert!(!script.rules.is_empty());
    assert!(!script.faults.is_empty());
    // One timeline step showing every change kind.
    assert_eq!(script.timeline[0].changes.len(), 10);
}

#[tokio::test]
async fn the_router_serves_the_basic_example_without_a_socket() {
    let script = Script::parse(&read(&crate_dir().join("examples/basic.yaml")), None).unwrap();
    let router = app(AppState::with_script(ScenarioClock::wall(), &script));
    let request = http::Request::get(
        "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb",
    )
    .body(Body::empty())
    .unwrap();
    let response = router.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let list: PodMetricsList = serde_json::from_slice(&bytes).unwrap();
    // web-2 is scripted as missing.
    assert_eq!(list.items.len(), 2);
    assert_eq!(list.items[0].containers[1].name, "istio-proxy");
}

fn documents(file: &str) -> Vec<serde_json::Value> {
    let text = read(&crate_dir().join("deploy").join(file));
    serde_saphyr::from_str_multiple::<serde_json::Value, Vec<_>>(&text)
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

fn of_kind<T: serde::de::DeserializeOwned>(docs: &[serde_json::Value], kind: &str) -> Vec<T> {
    docs.iter()
        .filter(|d| d["kind"] == kind)
        .map(|d| serde_json::from_value(d.clone()).unwrap())
        .collect()
}

#[test]
fn apiservices_register_all_four_group_versions_on_the_service() {
    let docs = documents("apiservices.yaml");
    let services: Vec<APIService> = of_kind(&docs, "APIService");
    let mut names: Vec<String> = services
        .iter()
        .map(|s| s.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "v1beta1.custom.metrics.k8s.io",
            "v1beta1.external.metrics.k8s.io",
            "v1beta1.metrics.k8s.io",
            "v1beta2.custom.metrics.k8s.io"
        ]
    );
    for s in &services {
        let spec = s.spec.as_ref().unwrap();
        let name = s.metadata.name.as_deref().unwrap();
        assert_eq!(
            name,
            format!(
                "{}.{}",
                spec.version.as_deref().unwrap(),
                spec.group.as_deref().unwrap()
            )
        );
        assert_eq!(spec.insecure_skip_tls_verify, Some(true));
        let svc = spec.service.as_ref().unwrap();
        assert_eq!(svc.name.as_deref(), Some("fake-metrics-server"));
        assert_eq!(svc.namespace.as_deref(), Some("fake-metrics"));
        assert_eq!(svc.port, Some(443));
    }
    let v1beta2 = services
        .iter()
        .find(|s| s.metadata.name.as_deref() == Some("v1beta2.custom.metrics.k8s.io"))
        .unwrap();
    assert_eq!(v1beta2.spec.as_ref().unwrap().version_priority, 200);
}

#[test]
fn the_in_cluster_service_reaches_the_deployment_port() {
    let svc: Vec<Service> = of_kind(&documents("service.yaml"), "Service");
    let deploy: Vec<Deployment> = of_kind(&documents("deployment.yaml"), "Deployment");
    let spec = svc[0].spec.as_ref().unwrap();
    let port = &spec.ports.as_ref().unwrap()[0];
    assert_eq!(port.port, 443);
    let pod = deploy[0].spec.template.clone();
    let labels = pod.metadata.unwrap().labels.unwrap();
    for (k, v) in spec.selector.as_ref().unwrap() {
        assert_eq!(labels.get(k), Some(v), "selector {k}");
    }
    let container = &pod.spec.unwrap().containers[0];
    let container_port = &container.ports.as_ref().unwrap()[0];
    assert_eq!(
        port.target_port,
        Some(
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(
                container_port.name.clone().unwrap()
            )
        )
    );
    assert!(container.args.as_ref().unwrap().contains(&format!(
        "--listen=0.0.0.0:{}",
        container_port.container_port
    )));
}

#[test]
fn the_deployment_watches_pods_with_an_account_allowed_to() {
    let deploy: Vec<Deployment> = of_kind(&documents("deployment.yaml"), "Deployment");
    let pod = deploy[0].spec.clone().template.spec.unwrap();
    assert!(
        pod.containers[0]
            .args
            .as_ref()
            .unwrap()
            .contains(&"--watch-pods".to_owned())
    );
    assert_eq!(pod.automount_service_account_token, Some(true));
    let docs = documents("rbac.yaml");
    let account = pod.service_account_name.unwrap();
    let binding = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRoleBinding")
        .unwrap();
    assert_eq!(binding["subjects"][0]["name"], account.as_str());
    assert_eq!(binding["subjects"][0]["namespace"], "fake-metrics");
    let role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == binding["roleRef"]["name"])
        .unwrap();
    let rule = &role["rules"][0];
    assert_eq!(rule["resources"][0], "pods");
    for verb in ["get", "list", "watch"] {
        assert!(
            rule["verbs"].as_array().unwrap().iter().any(|v| v == verb),
            "{verb}"
        );
    }
}

#[test]
fn the_host_endpointslice_belongs_to_a_selectorless_service() {
    let docs = documents("host-endpointslice.yaml");
    let svc: Vec<Service> = of_kind(&docs, "Service");
    let slices: Vec<EndpointSlice> = of_kind(&docs, "EndpointSlice");
    let spec = svc[0].spec.as_ref().unwrap();
    assert!(spec.selector.is_none());
    let slice = &slices[0];
    assert_eq!(
        slice.metadata.labels.as_ref().unwrap()["kubernetes.io/service-name"],
        svc[0].metadata.name.clone().unwrap()
    );
    let slice_port = &slice.ports.as_ref().unwrap()[0];
    let svc_port = &spec.ports.as_ref().unwrap()[0];
    assert_eq!(slice_port.name, svc_port.name);
    assert_eq!(
        svc_port.target_port,
        Some(
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(
                slice_port.port.unwrap()
            )
        )
    );
}

#[test]
fn the_binary_prints_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_fake-metrics-server"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in ["--listen", "--script", "--http", "--tls-cert", "--tls-key"] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
}

#[test]
fn the_binary_refuses_a_bad_script_naming_the_line() {
    let dir = std::env::temp_dir().join(format!("fms-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.yaml");
    std::fs::write(&path, "pods:\n  - name: a\n    cpu: 1\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fake-metrics-server"))
        .args(["--http", "--listen", "127.0.0.1:0", "--script"])
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("line 3"), "{err}");
}

#[test]
fn the_binary_serves_a_script_and_stops_gracefully_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-metrics-server"))
        .args(["--http", "--listen", "127.0.0.1:0", "--script"])
        .arg(crate_dir().join("examples/basic.yaml"))
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening: ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    let body = ureq_like_get(&format!("{url}/apis/metrics.k8s.io/v1beta1/pods"));
    assert!(body.contains("web-0"), "{body}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A blocking GET through reqwest on a throwaway runtime.
fn ureq_like_get(url: &str) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        reqwest::Client::new()
            .get(url)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    })
}
