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

/// Sends the workload's pods to the harness's fake node, which schedules
/// and runs them as the scenario says (real clusters only).
pub fn place_on_fake_node(object: &mut Value) {
    place_pod(&mut object["spec"]["template"]);
}

/// Sends the pods of an object a chart renders to the fake node: a Pod, or
/// whatever holds a pod template (`spec.template`: Deployments,
/// StatefulSets, ReplicaSets, DaemonSets, Jobs, an Argo Rollout;
/// `spec.jobTemplate.spec.template`: CronJobs). Returns whether it has
/// pods.
pub fn place_manifest_on_fake_node(object: &mut Value) -> bool {
    if object.get("kind").and_then(Value::as_str) == Some("Pod") {
        place_pod(object);
        return true;
    }
    for path in ["/spec/template", "/spec/jobTemplate/spec/template"] {
        if let Some(template) = object.pointer_mut(path)
            && template
                .pointer("/spec/containers")
                .is_some_and(Value::is_array)
        {
            place_pod(template);
            return true;
        }
    }
    false
}

/// A pod or pod template (its metadata and spec) on the fake node: the
/// managed-pod label, the node's selector, toleration and scheduler. The
/// node schedules it, so no other scheduler must; selectors and
/// tolerations of its own stay.
fn place_pod(pod: &mut Value) {
    pod["metadata"]["labels"][fake_node::MANAGED_POD_LABEL] = json!("true");
    let spec = &mut pod["spec"];
    for (key, value) in fake_node::node_selector() {
        spec["nodeSelector"][key] = json!(value);
    }
    let toleration = json!(fake_node::toleration());
    match spec.get_mut("tolerations").and_then(Value::as_array_mut) {
        Some(list) if list.contains(&toleration) => {}
        Some(list) => list.push(toleration),
        None => spec["tolerations"] = json!([toleration]),
    }
    spec["schedulerName"] = json!(fake_node::SCHEDULER_NAME);
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
        assert_eq!(template["spec"]["schedulerName"], fake_node::SCHEDULER_NAME);
    }

    #[test]
    fn a_charts_pod_templates_go_to_the_fake_node_keeping_their_own_placement() {
        let mut deployment = workload(
            "Deployment",
            "ns",
            "cache",
            1,
            json!({"containers": [{"name": "server"}],
                "nodeSelector": {"kubernetes.io/os": "linux"},
                "tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
        );
        assert!(place_manifest_on_fake_node(&mut deployment));
        let spec = &deployment["spec"]["template"]["spec"];
        assert_eq!(spec["nodeSelector"]["kubernetes.io/os"], "linux");
        assert_eq!(spec["nodeSelector"][fake_node::NODE_LABEL], "true");
        assert_eq!(spec["tolerations"].as_array().unwrap().len(), 2);
        assert_eq!(spec["schedulerName"], fake_node::SCHEDULER_NAME);
        // Placing twice adds nothing twice.
        assert!(place_manifest_on_fake_node(&mut deployment));
        let spec = &deployment["spec"]["template"]["spec"];
        assert_eq!(spec["tolerations"].as_array().unwrap().len(), 2);

        let mut cron = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template":
            {"spec": {"containers": [{"name": "job"}]}}}}}});
        assert!(place_manifest_on_fake_node(&mut cron));
        let template = &cron["spec"]["jobTemplate"]["spec"]["template"];
        assert_eq!(
            template["metadata"]["labels"][fake_node::MANAGED_POD_LABEL],
            "true"
        );
        let mut pod = json!({"kind": "Pod", "spec": {"containers": []}});
        assert!(place_manifest_on_fake_node(&mut pod));
        assert_eq!(pod["spec"]["schedulerName"], fake_node::SCHEDULER_NAME);
        // No pods: nothing to place.
        let mut service = json!({"kind": "Service", "spec": {"ports": []}});
        assert!(!place_manifest_on_fake_node(&mut service));
        assert_eq!(service, json!({"kind": "Service", "spec": {"ports": []}}));
    }
}
