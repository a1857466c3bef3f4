#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

//! The standalone sim on a loopback socket: kube-rs over HTTP, and kubectl
//! (`get`, `apply -f`, `scale`, `get hpa`) when it is installed.

use std::path::PathBuf;
use std::process::Output;

use hpa_sim::Sim;
use hpa_sim::standalone::{Args, config_from_args};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

const MANIFEST: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx
        resources:
          requests: {cpu: 100m}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 50}
";

struct Server {
    addr: std::net::SocketAddr,
    kubeconfig: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

async fn start(tag: &str) -> Server {
    let dir = std::env::temp_dir().join(format!("hpa-sim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = Args {
        listen: "127.0.0.1:0".parse().unwrap(),
        kubeconfig: dir.join("kubeconfig"),
        force: true,
        metrics_url: None,
        virtual_clock: None,
        pod_start_delay: jiff::SignedDuration::ZERO,
        pod_ready_delay: jiff::SignedDuration::ZERO,
        watch_history: 1000,
        kubernetes_version: hpa_sim::KubernetesVersion::default(),
        feature_gates: String::new(),
        generated_pod_names: false,
        pod_creation_delay: jiff::SignedDuration::ZERO,
        event_ttl: jiff::SignedDuration::from_hours(1),
        without_node: false,
    };
    let sim = Sim::new(config_from_args(&args).unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let run_args = args.clone();
    let task = tokio::spawn(async move {
        hpa_sim::standalone::run(
            sim,
            &run_args,
            move |addr| {
                let _ = ready_tx.send(addr);
            },
            async move {
                let _ = stopped.await;
            },
        )
        .await
        .unwrap();
    });
    let addr = ready_rx.await.unwrap();
    Server {
        addr,
        kubeconfig: args.kubeconfig,
        stop: Some(stop),
        task,
    }
}

impl Server {
    async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        tokio::time::timeout(std::time::Duration::from_secs(10), self.task)
            .await
            .expect("the server stops within 10s")
            .unwrap();
    }
}

async fn kubectl(server: &Server, args: &[&str], stdin: Option<&str>) -> Output {
    use tokio::io::AsyncWriteExt;
    let mut cmd = tokio::process::Command::new("kubectl");
    cmd.arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).await.unwrap();
    }
    drop(input);
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("kubectl finishes within 60s")
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_talks_to_the_standalone_server_over_http() {
    let server = start("kube").await;
    let config = kube::Config::new(format!("http://{}", server.addr).parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    assert!(
        pods.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let written = std::fs::read_to_string(&server.kubeconfig).unwrap();
    assert!(written.contains(&format!("server: http://{}", server.addr)));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gets_applies_scales_and_lists_hpas() {
    if which("kubectl").is_none() {
        eprintln!("SKIPPED kubectl_gets_applies_scales_and_lists_hpas: kubectl is not on PATH");
        return;
    }
    let server = start("kubectl").await;
    let out = kubectl(&server, &["apply", "-f", "-"], Some(MANIFEST)).await;
    assert!(
        text(&out).contains("deployment.apps/web created"),
        "{}",
        text(&out)
    );
    let out = kubectl(&server, &["get", "pods", "-o", "name"], None).await;
    assert_eq!(text(&out), "pod/web-0\npod/web-1\n");

    // Re-applying an edited manifest patches the object.
    let edited = MANIFEST.replace("maxReplicas: 10", "maxReplicas: 12");
    let out = kubectl(&server, &["apply", "-f", "-"], Some(&edited)).await;
    assert!(
        text(&out).contains("horizontalpodautoscaler.autoscaling/web configured"),
        "{}",
        text(&out)
    );

    kubectl(
        &server,
        &["scale", "deployment", "web", "--replicas=4"],
        None,
    )
    .await;
    let out = kubectl(
        &server,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.status.replicas}",
        ],
        None,
    )
    .await;
    assert_eq!(text(&out), "4");
    let out = kubectl(&server, &["get", "pods", "-o", "name"], None).await;
    assert_eq!(text(&out), "pod/web-0\npod/web-1\npod/web-2\npod/web-3\n");

    let out = kubectl(&server, &["get", "hpa"], None).await;
    assert!(text(&out).contains("web"), "{}", text(&out));
    let out = kubectl(
        &server,
        &["get", "hpa", "web", "-o", "jsonpath={.spec.maxReplicas}"],
        None,
    )
    .await;
    assert_eq!(text(&out), "12");
    server.stop().await;
}

/// KEDA's ScaledObject CRD as the harness installs it (names, status
/// subresource and printer columns of `keda.sh_scaledobjects.yaml`), and a
/// ScaledObject a user applies.
const KEDA: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: scaledobjects.keda.sh
spec:
  group: keda.sh
  names: {kind: ScaledObject, listKind: ScaledObjectList, plural: scaledobjects, singular: scaledobject, shortNames: [so]}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    additionalPrinterColumns:
    - {name: ScaleTargetKind, type: string, jsonPath: .status.scaleTargetKind}
    - {name: ScaleTargetName, type: string, jsonPath: .spec.scaleTargetRef.name}
    - {name: Min, type: integer, jsonPath: .spec.minReplicaCount}
    - {name: Max, type: integer, jsonPath: .spec.maxReplicaCount}
    - {name: Triggers, type: string, jsonPath: '.spec.triggers[*].type'}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: worker
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 1
  maxReplicaCount: 10
  triggers:
  - type: rabbitmq
    metadata: {queueName: orders, value: "20"}
  - type: cron
    metadata: {timezone: UTC, start: "0 8 * * *", end: "0 18 * * *", desiredReplicas: "3"}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_a_scaled_object_and_prints_keda_s_columns() {
    if which("kubectl").is_none() {
        eprintln!(
            "SKIPPED kubectl_applies_a_scaled_object_and_prints_keda_s_columns: kubectl is not on PATH"
        );
        return;
    }
    let server = start("keda").await;
    // kubectl applies the CRD, then needs discovery to know the new kind.
    let (crd, so) = KEDA.split_once("---\n").unwrap();
    let out = kubectl(&server, &["apply", "-f", "-"], Some(crd)).await;
    assert!(text(&out).contains("created"), "{}", text(&out));
    let out = kubectl(&server, &["apply", "-f", "-"], Some(so)).await;
    assert!(
        text(&out).contains("scaledobject.keda.sh/worker created"),
        "{}\n{}",
        text(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = kubectl(&server, &["get", "so"], None).await;
    let printed = text(&out);
    let mut lines = printed.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "SCALETARGETKIND",
            "SCALETARGETNAME",
            "MIN",
            "MAX",
            "TRIGGERS",
            "READY",
            "AGE"
        ],
        "{printed}"
    );
    let row = lines.next().unwrap_or_default();
    let cells: Vec<&str> = row.split_whitespace().collect();
    // No status yet: the status columns are empty.
    assert_eq!(cells.first(), Some(&"worker"), "{printed}");
    assert!(row.contains(" 1 ") && row.contains(" 10 "), "{printed}");
    assert!(cells.contains(&"rabbitmq,cron"), "{printed}");
    let out = kubectl(
        &server,
        &[
            "get",
            "scaledobject",
            "worker",
            "-o",
            "jsonpath={.spec.triggers[0].metadata.queueName}",
        ],
        None,
    )
    .await;
    assert_eq!(text(&out), "orders");
    server.stop().await;
}

fn which(bin: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(bin))
            .find(|p| p.is_file())
    })
}
