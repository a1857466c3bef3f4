//! The manifests in deploy/ stay in step with the binary: the Deployment's
//! arguments parse, it runs two replicas with leader election, and the RBAC
//! grants what the controller calls and nothing cluster-wide beyond it.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use clap::Parser;
use hpa_harness::cli::{Cli, Command};

fn docs(path: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    text.split("\n---\n")
        .map(|doc| serde_saphyr::from_str::<serde_json::Value>(doc).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

#[test]
fn the_deployment_arguments_parse_and_elect_a_leader_among_two_replicas() {
    let docs = docs("deploy/deployment.yaml");
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 2);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    // The image runs `hpa-controller`, whose flags are `hpa-harness controller`'s.
    let mut argv = vec!["hpa-harness".to_string(), "controller".to_string()];
    argv.extend(
        container["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    let cli = Cli::try_parse_from(&argv).unwrap();
    let Command::Controller(args) = cli.command else {
        panic!("the Deployment does not run the controller: {argv:?}");
    };
    assert!(args.leader_elect);
    assert_eq!(args.bind_address.port(), 10257);
    assert!(
        args.bind_address.ip().is_loopback(),
        "/metrics and /debug/decisions are plain HTTP without authentication: loopback only"
    );
    let health = args
        .health_bind_address
        .expect("the probes need a reachable port");
    assert_eq!(container["ports"][0]["containerPort"], health.port());
    assert_eq!(container["livenessProbe"]["httpGet"]["port"], "health");
    assert_eq!(
        container["livenessProbe"]["httpGet"]["path"], "/healthz",
        "liveness"
    );
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["serviceAccountName"],
        "hpa-harness-controller"
    );
}

#[test]
fn the_cluster_role_grants_only_what_the_controller_uses() {
    let docs = docs("deploy/rbac.yaml");
    let role = docs.iter().find(|d| d["kind"] == "ClusterRole").unwrap();
    let mut grants: Vec<String> = Vec::new();
    for rule in role["rules"].as_array().unwrap() {
        for group in rule["apiGroups"].as_array().unwrap() {
            for resource in rule["resources"].as_array().unwrap() {
                for verb in rule["verbs"].as_array().unwrap() {
                    grants.push(format!(
                        "{}/{}:{}",
                        group.as_str().unwrap(),
                        resource.as_str().unwrap(),
                        verb.as_str().unwrap()
                    ));
                }
            }
        }
    }
    grants.sort();
    let mut expected = vec![
        "autoscaling/horizontalpodautoscalers:get",
        "autoscaling/horizontalpodautoscalers:list",
        "autoscaling/horizontalpodautoscalers:watch",
        "autoscaling/horizontalpodautoscalers/status:update",
        "*/*/scale:get",
        "*/*/scale:update",
        "/pods:list",
        "/pods:watch",
        // The Deployment scale cache (off with --upstream-requests).
        "apps/deployments:list",
        "apps/deployments:watch",
        "metrics.k8s.io/pods:list",
        "custom.metrics.k8s.io/*:get",
        "custom.metrics.k8s.io/*:list",
        "external.metrics.k8s.io/*:get",
        "external.metrics.k8s.io/*:list",
        "events.k8s.io/events:create",
        "events.k8s.io/events:patch",
    ];
    expected.sort_unstable();
    assert_eq!(grants, expected);
    // Leases only in the controller's namespace, and only its own by name.
    let role = docs.iter().find(|d| d["kind"] == "Role").unwrap();
    assert_eq!(role["metadata"]["namespace"], "hpa-harness");
    let named = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["verbs"].as_array().unwrap().iter().any(|v| v == "update"))
        .unwrap();
    assert_eq!(named["resourceNames"][0], "hpa-harness-controller");
}

/// `hpa-harness explain` and `capture` read only: get and list on HPAs,
/// scales, pods, the metrics APIs and the APIServices behind them
/// (tests/live.rs checks that the requests they make are within it).
#[test]
fn the_explain_role_grants_only_get_and_list_on_what_explain_reads() {
    let docs = docs("deploy/explain-rbac.yaml");
    assert_eq!(docs.len(), 1, "one ClusterRole, no binding");
    let role = &docs[0];
    assert_eq!(role["kind"], "ClusterRole");
    assert_eq!(role["metadata"]["name"], "hpa-harness-explain");
    let mut grants: Vec<String> = Vec::new();
    for rule in role["rules"].as_array().unwrap() {
        for group in rule["apiGroups"].as_array().unwrap() {
            for resource in rule["resources"].as_array().unwrap() {
                for verb in rule["verbs"].as_array().unwrap() {
                    grants.push(format!(
                        "{}/{}:{}",
                        group.as_str().unwrap(),
                        resource.as_str().unwrap(),
                        verb.as_str().unwrap()
                    ));
                }
            }
        }
    }
    grants.sort();
    let mut expected = vec![
        "autoscaling/horizontalpodautoscalers:get",
        "autoscaling/horizontalpodautoscalers:list",
        "*/*/scale:get",
        "/pods:get",
        "/pods:list",
        "metrics.k8s.io/pods:get",
        "metrics.k8s.io/pods:list",
        "custom.metrics.k8s.io/*:get",
        "custom.metrics.k8s.io/*:list",
        "external.metrics.k8s.io/*:get",
        "external.metrics.k8s.io/*:list",
        "apiregistration.k8s.io/apiservices:get",
        "apiregistration.k8s.io/apiservices:list",
    ];
    expected.sort_unstable();
    assert_eq!(grants, expected);
}

#[test]
fn the_kustomization_lists_every_manifest() {
    let k = &docs("deploy/kustomization.yaml")[0];
    let listed: Vec<&str> = k["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let mut files: Vec<String> =
        std::fs::read_dir(format!("{}/deploy", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|f| f.ends_with(".yaml") && f != "kustomization.yaml")
            .collect();
    files.sort();
    let mut listed_sorted: Vec<String> = listed.iter().map(|s| (*s).to_string()).collect();
    listed_sorted.sort();
    assert_eq!(listed_sorted, files);
}
