//! The one way the harness writes a workload (a Deployment or StatefulSet
//! whose pods carry `app: NAME`) and puts its pods on the fake node of a
//! real cluster: scenarios, replays and load runs all build theirs here.

use serde_json::{Value, json};

use super::cluster::fake_node;

/// An `apps/v1` `kind` (`Deployment`, `StatefulSet`) named `name` in `ns`
/// with `replicas` pods of `pod_spec`, selected by `app: NAME`. A
/// StatefulSet gets the `serviceName` the API server requires.
pub fn workload(kind: &str, ns: &str, name: &str, replicas: i64, pod_spec: Value) -> Value {
    let mut object = json!({
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
        },
    });
    if kind == "StatefulSet" {
        object["spec"]["serviceName"] = json!(name);
    }
    object
}

/// Sends the workload's pods to the harness's fake node, whose kubelet loop
/// binds them and leaves their status to the harness (real clusters only).
pub fn place_on_fake_node(object: &mut Value) {
    let template = &mut object["spec"]["template"];
    template["metadata"]["labels"][fake_node::MANAGED_POD_LABEL] = json!("true");
    template["spec"]["nodeSelector"] = json!(fake_node::node_selector());
    template["spec"]["tolerations"] = json!([fake_node::toleration()]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_selects_its_pods_by_app() {
        let spec = json!({"containers": [{"name": "app", "image": "app"}]});
        let d = workload("Deployment", "ns", "web", 3, spec.clone());
        assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "web");
        assert_eq!(d["spec"]["template"]["metadata"]["labels"]["app"], "web");
        assert_eq!(d["spec"]["replicas"], 3);
        assert!(d["spec"].get("serviceName").is_none());
        let s = workload("StatefulSet", "ns", "db", 1, spec);
        assert_eq!(s["spec"]["serviceName"], "db");
    }

    #[test]
    fn pods_on_the_fake_node_tolerate_it_and_are_managed() {
        let mut d = workload("Deployment", "ns", "web", 1, json!({"containers": []}));
        place_on_fake_node(&mut d);
        let template = &d["spec"]["template"];
        assert_eq!(
            template["metadata"]["labels"][fake_node::MANAGED_POD_LABEL],
            "true"
        );
        assert_eq!(template["metadata"]["labels"]["app"], "web");
        assert_eq!(
            template["spec"]["nodeSelector"],
            json!(fake_node::node_selector())
        );
        assert_eq!(
            template["spec"]["tolerations"],
            json!([fake_node::toleration()])
        );
    }
}
