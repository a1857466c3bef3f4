//! Which revision of its workload's pod template a pod is of: the label a
//! Deployment's pods carry (`pod-template-hash`) and a StatefulSet's
//! (`controller-revision-hash`). New pods get it when they are made, and
//! the rolling updaters tell old pods from new by it.

use serde_json::Value;

/// The label naming the template (the ReplicaSet) of a Deployment's pod.
pub const TEMPLATE_HASH_LABEL: &str = "pod-template-hash";

/// The label naming the revision of a StatefulSet's pod (`NAME-HASH`).
pub const REVISION_LABEL: &str = "controller-revision-hash";

/// A pod template's `pod-template-hash` ([`crate::pod_names::template_hash`]).
pub(crate) fn template_hash(template: &Value) -> String {
    // One hash, so that a generated pod name and its label agree.
    crate::pod_names::template_hash(template)
}

/// The revision label a workload's new pods carry.
pub(crate) fn revision_label(owner: &Value) -> Option<(&'static str, String)> {
    let template = owner.pointer("/spec/template")?;
    match owner.get("kind").and_then(Value::as_str)? {
        "Deployment" => Some((TEMPLATE_HASH_LABEL, template_hash(template))),
        "StatefulSet" => {
            let name = owner.pointer("/metadata/name").and_then(Value::as_str)?;
            Some((
                REVISION_LABEL,
                format!("{name}-{}", template_hash(template)),
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_template_hash_ignores_key_order_and_sees_every_change() {
        let a = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}});
        let b = json!({"spec": {"containers": []}, "metadata": {"labels": {"app": "web"}}});
        let c = json!({"metadata": {"labels": {"app": "web"}, "annotations": {"v": "2"}},
            "spec": {"containers": []}});
        assert_eq!(template_hash(&a), template_hash(&b));
        assert_ne!(template_hash(&a), template_hash(&c));
        assert_eq!(template_hash(&a).len(), 10);
    }
}
