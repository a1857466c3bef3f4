//! The decision core (`hpa-core`) and the KEDA model (`hpa-keda`) stay
//! pure: nothing in their dependency tree (normal dependencies, followed
//! to the end) runs an async runtime, a Kubernetes client or HTTP. Their
//! manifests say so in a comment; this test holds them to it, from
//! `cargo metadata`'s resolved graph, so IO cannot arrive through a
//! dependency's dependency either.

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use serde_json::Value;

/// The crates that must stay pure.
const PURE: &[&str] = &["hpa-core", "hpa-keda"];

/// Crates that bring IO: the async runtime and its reactor, HTTP clients
/// and servers, the Kubernetes client.
const IO: &[&str] = &[
    "tokio",
    "mio",
    "hyper",
    "reqwest",
    "axum",
    "tower",
    "kube",
    "kube-client",
    "kube-runtime",
];

/// The triple of the machine that builds this test (`host:` of
/// `rustc -vV`).
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    assert!(output.status.success(), "rustc -vV failed");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(|triple| triple.trim().to_owned())
        .unwrap_or_else(|| panic!("no `host:` line in rustc -vV: {text}"))
}

/// The resolved dependency graph of a build on this machine's platform:
/// package id → (name, normal dependencies).
///
/// Filtered to the host's triple: unfiltered, `cargo metadata` resolves
/// every platform and needs the manifests of crates no build here fetched
/// (Windows-only ones), which `--offline` cannot read from a fresh cache.
fn graph() -> HashMap<String, (String, Vec<String>)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let host = host_triple();
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let names: HashMap<&str, &str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            (
                p["id"].as_str().expect("an id"),
                p["name"].as_str().expect("a name"),
            )
        })
        .collect();
    metadata["resolve"]["nodes"]
        .as_array()
        .expect("the resolved graph")
        .iter()
        .map(|node| {
            let id = node["id"].as_str().expect("a node id");
            // A dependency counts when one of its kinds is normal (`null`).
            let normal = node["deps"]
                .as_array()
                .expect("deps")
                .iter()
                .filter(|dep| {
                    dep["dep_kinds"]
                        .as_array()
                        .is_some_and(|kinds| kinds.iter().any(|k| k["kind"].is_null()))
                })
                .map(|dep| dep["pkg"].as_str().expect("a dep id").to_owned())
                .collect();
            (id.to_owned(), (names[id].to_owned(), normal))
        })
        .collect()
}

/// Every crate `name` depends on, directly or not (normal dependencies).
fn tree_of(graph: &HashMap<String, (String, Vec<String>)>, name: &str) -> BTreeSet<String> {
    let root = graph
        .iter()
        .find(|(_, (n, _))| n == name)
        .map(|(id, _)| id.clone())
        .unwrap_or_else(|| panic!("{name} is not in the workspace"));
    let mut seen = BTreeSet::new();
    let mut names = BTreeSet::new();
    let mut next = vec![root];
    while let Some(id) = next.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        let (_, deps) = &graph[&id];
        for dep in deps {
            names.insert(graph[dep].0.clone());
            next.push(dep.clone());
        }
    }
    names
}

#[test]
fn the_core_and_the_keda_model_depend_on_no_io() {
    let graph = graph();
    for name in PURE {
        let io: Vec<String> = tree_of(&graph, name)
            .into_iter()
            .filter(|dep| IO.contains(&dep.as_str()))
            .collect();
        assert!(
            io.is_empty(),
            "{name} must stay pure, yet its dependencies bring in {io:?}"
        );
    }
}

/// The check sees IO where it is: the controller runs on tokio and kube.
#[test]
fn the_check_sees_io_in_the_controller() {
    let tree = tree_of(&graph(), "hpa-controller");
    assert!(tree.contains("tokio") && tree.contains("kube"), "{tree:?}");
}
