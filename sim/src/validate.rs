//! Checks every object goes through as the API server's decoder and generic
//! validation would: field types and integer ranges (`replicas: "two"`,
//! `maxReplicas: 2147483648`), object names (DNS-1123), and quantities.
//!
//! The sim stores plain JSON, so without these a value the real server
//! refuses would be stored and read back as something else (an out-of-range
//! `replicas` read as "create two billion pods"). Types come from
//! k8s-openapi's structs, which hold exactly the Go types' ranges.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{ApiError, FieldError};
use crate::resources::{ResourceDef, Storage};

/// Why a body does not decode as its kind: the field path and the decoder's
/// message. `None` when it decodes.
pub fn type_error(def: &ResourceDef, obj: &Value) -> Option<String> {
    use k8s_openapi::api::{apps, autoscaling, coordination, core, events};
    let f = match (def.group, def.version, def.kind) {
        ("", "v1", "Namespace") => decode::<core::v1::Namespace>,
        ("", "v1", "Pod") => decode::<core::v1::Pod>,
        ("", "v1", "Event") => decode::<core::v1::Event>,
        ("", "v1", "Service") => decode::<core::v1::Service>,
        ("", "v1", "Node") => decode::<core::v1::Node>,
        ("events.k8s.io", "v1", "Event") => decode::<events::v1::Event>,
        ("apps", "v1", "Deployment") => decode::<apps::v1::Deployment>,
        ("apps", "v1", "ReplicaSet") => decode::<apps::v1::ReplicaSet>,
        ("apps", "v1", "StatefulSet") => decode::<apps::v1::StatefulSet>,
        ("autoscaling", "v2", "HorizontalPodAutoscaler") => {
            decode::<autoscaling::v2::HorizontalPodAutoscaler>
        }
        ("autoscaling", "v1", "HorizontalPodAutoscaler") => {
            decode::<autoscaling::v1::HorizontalPodAutoscaler>
        }
        ("coordination.k8s.io", "v1", "Lease") => decode::<coordination::v1::Lease>,
        _ => return None,
    };
    f(obj)
}

fn decode<T: DeserializeOwned + k8s_openapi::Resource>(obj: &Value) -> Option<String> {
    let mut obj = obj.clone();
    if let Some(m) = obj.as_object_mut() {
        // The URL names the kind; a mismatching body kind is refused elsewhere.
        m.insert("apiVersion".into(), T::API_VERSION.into());
        m.insert("kind".into(), T::KIND.into());
    }
    type_error_of::<T>(obj)
}

/// The first type error of `obj` as a `T`, with its path. A missing required
/// field is not a type error (Go decodes it as the zero value and validation
/// names it, 422), so it counts as none.
pub fn type_error_of<T: DeserializeOwned>(obj: Value) -> Option<String> {
    match serde_path_to_error::deserialize::<_, T>(obj) {
        Ok(_) => None,
        Err(e) if e.inner().to_string().starts_with("missing field") => None,
        Err(e) => Some(format!("{}: {}", e.path(), e.inner())),
    }
}

/// A create or update body that does not decode: 400, as the API server
/// answers when its JSON decoder fails.
pub fn check_body(def: &ResourceDef, obj: &Value) -> Result<(), ApiError> {
    match type_error(def, obj) {
        None => Ok(()),
        Some(e) => Err(ApiError::BadRequest(format!(
            "{kind} in version \"{v}\" cannot be handled as a {kind}: {e}",
            kind = def.kind,
            v = def.version
        ))),
    }
}

/// A patched object that does not decode: 422 Invalid on field `patch`, as
/// the API server's patcher answers; nothing is written.
pub fn check_patched(def: &ResourceDef, name: &str, patched: &Value) -> Result<(), ApiError> {
    match type_error(def, patched) {
        None => Ok(()),
        Some(e) => Err(patch_invalid(def.kind, def.group, name, &e)),
    }
}

/// A patched `/scale` that does not decode as an `autoscaling/v1` Scale
/// (`{"spec":{"replicas":"x"}}`): 422, never "replicas 0".
pub fn check_patched_scale(name: &str, patched: &Value) -> Result<(), ApiError> {
    use k8s_openapi::api::autoscaling::v1::Scale;
    match type_error_of::<Scale>(patched.clone()) {
        None => Ok(()),
        Some(e) => Err(patch_invalid("Scale", "autoscaling", name, &e)),
    }
}

fn patch_invalid(kind: &str, group: &str, name: &str, e: &str) -> ApiError {
    ApiError::Invalid {
        kind: kind.into(),
        name: name.into(),
        group: group.into(),
        causes: vec![FieldError::invalid("patch", "the patched object", e)],
    }
}

/// A replicas value of a Scale body, which the API server decodes as int32.
pub fn scale_replicas(name: &str, scale: &Value) -> Result<i32, ApiError> {
    let bad = |v: &Value| {
        ApiError::BadRequest(format!(
            "Scale in version \"v1\" cannot be handled as a Scale: spec.replicas: invalid value {v}, expected a 32-bit integer (for {name})"
        ))
    };
    match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .ok_or_else(|| bad(v)),
    }
}

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Whether `s` is a DNS-1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63.
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= 63
        && b.first().is_some_and(alnum)
        && b.last().is_some_and(alnum)
        && b.iter().all(|c| alnum(c) || *c == b'-')
}

/// Whether `s` is a DNS-1123 subdomain: dot-separated labels, at most 253.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// Whether `s` is a DNS-1035 label: a DNS-1123 label starting with a letter.
pub fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
}

/// The `metadata.name` errors of an object of `def`, by the rule its kind's
/// validation uses: namespaces are labels, services DNS-1035 labels,
/// everything else subdomains.
pub fn name_causes(def: &ResourceDef, name: &str) -> Vec<FieldError> {
    let (ok, max, msg) = match def.storage {
        Storage::Namespaces => (is_dns1123_label(name), 63, LABEL_MSG),
        Storage::Services => (is_dns1035_label(name), 63, DNS1035_MSG),
        _ => (is_dns1123_subdomain(name), 253, SUBDOMAIN_MSG),
    };
    let shown = format!("\"{name}\"");
    let mut out = Vec::new();
    if name.len() > max {
        out.push(FieldError::invalid(
            "metadata.name",
            &shown,
            &format!("must be no more than {max} characters"),
        ));
    }
    if !ok && !name.is_empty() {
        out.push(FieldError::invalid("metadata.name", &shown, msg));
    }
    out
}

/// Scaling rule tolerances of an HPA (`spec.behavior.scaleUp.tolerance`,
/// `scaleDown`): a quantity that does not parse is a 400 as the decoder
/// answers; a negative one a 422 as upstream's `validateScalingRules`.
pub fn tolerance_causes(obj: &Value) -> Result<Vec<FieldError>, ApiError> {
    let mut out = Vec::new();
    for dir in ["scaleUp", "scaleDown"] {
        let Some(v) = obj
            .pointer(&format!("/spec/behavior/{dir}/tolerance"))
            .filter(|v| !v.is_null())
        else {
            continue;
        };
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let q = hpa_core::quantity::Quantity::parse(&text).map_err(|e| {
            ApiError::BadRequest(format!(
                "HorizontalPodAutoscaler cannot be handled: spec.behavior.{dir}.tolerance: {e}"
            ))
        })?;
        if q.is_negative() {
            out.push(FieldError::invalid(
                format!("spec.behavior.{dir}.tolerance"),
                &text,
                "must be greater than or equal to 0",
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources;
    use serde_json::json;

    fn def(group: &str, plural: &str) -> &'static ResourceDef {
        resources::find(group, "v1", plural).unwrap()
    }

    #[test]
    fn replicas_past_int32_or_of_the_wrong_type_do_not_decode() {
        let d = def("apps", "deployments");
        for bad in [json!(2_147_483_648_i64), json!("two"), json!(1.5)] {
            let obj = json!({"spec": {"replicas": bad, "selector": {}}});
            let e = type_error(d, &obj).expect("refused");
            assert!(e.starts_with("spec.replicas"), "{e}");
        }
        assert!(type_error(d, &json!({"spec": {"replicas": 2_147_483_647}})).is_none());
    }

    #[test]
    fn a_missing_required_field_is_left_to_validation() {
        let d = def("apps", "deployments");
        assert!(type_error(d, &json!({"spec": {"replicas": 1}})).is_none());
    }

    #[test]
    fn names_follow_the_dns_rules_of_their_kind() {
        let dep = def("apps", "deployments");
        assert!(name_causes(dep, "web-1.a").is_empty());
        let causes = name_causes(dep, "Bad_Name!");
        assert_eq!(causes.len(), 1);
        assert!(causes[0].message.contains("RFC 1123 subdomain"));
        assert!(!name_causes(dep, &"a".repeat(254)).is_empty());
        let ns = def("", "namespaces");
        assert!(!name_causes(ns, "a.b").is_empty(), "a namespace is a label");
        let svc = def("", "services");
        assert!(
            !name_causes(svc, "1abc").is_empty(),
            "a service starts with a letter"
        );
        assert!(name_causes(svc, "abc-1").is_empty());
    }

    #[test]
    fn a_scale_with_string_replicas_is_refused() {
        let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "web"}, "spec": {"replicas": "x"}});
        assert!(check_patched_scale("web", &scale).is_err());
        assert!(scale_replicas("web", &scale).is_err());
        let ok = json!({"spec": {"replicas": 3}});
        assert_eq!(scale_replicas("web", &ok).unwrap(), 3);
    }

    #[test]
    fn negative_tolerances_are_invalid_and_junk_ones_bad_requests() {
        let hpa = json!({"spec": {"behavior": {"scaleUp": {"tolerance": "-1"}}}});
        let causes = tolerance_causes(&hpa).unwrap();
        assert_eq!(causes[0].field, "spec.behavior.scaleUp.tolerance");
        let junk = json!({"spec": {"behavior": {"scaleDown": {"tolerance": "lots"}}}});
        assert!(tolerance_causes(&junk).is_err());
        let fine = json!({"spec": {"behavior": {"scaleDown": {"tolerance": "0.05"}}}});
        assert!(tolerance_causes(&fine).unwrap().is_empty());
    }
}
