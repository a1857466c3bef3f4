//! PATCH bodies: JSON merge patch, JSON patch, strategic merge patch (for the
//! list fields the HPA workflow touches) and server-side apply (approximated
//! as a strategic merge of the applied configuration; no field ownership).

use serde_json::{Map, Value};

/// A failed patch.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The body is not JSON (or YAML for apply).
    #[error("the patch body is not valid {format}: {message}")]
    Body {
        /// JSON or YAML.
        format: &'static str,
        /// Parser message with position.
        message: String,
    },
    /// A JSON patch operation failed.
    #[error("the JSON patch could not be applied: {0}")]
    Json(String),
    /// Unknown Content-Type.
    #[error("unsupported patch content type {0:?}")]
    ContentType(String),
}

/// Which kind of patch a Content-Type names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchKind {
    /// From a Content-Type header value.
    pub fn from_content_type(ct: &str) -> Result<Self, PatchError> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(Self::Apply),
            other => Err(PatchError::ContentType(other.to_owned())),
        }
    }
}

/// Parses a patch body (YAML accepted for apply, which is a superset of JSON)
/// and checks its shape as the API server does before patching anything: a
/// JSON patch is a list of operations, every other patch an object, and an
/// apply patch a whole object that names its `apiVersion` and `kind` (so a
/// line of prose, which YAML reads as a string or a one-key map, is refused
/// instead of stored).
pub fn parse_body(kind: PatchKind, body: &[u8]) -> Result<Value, PatchError> {
    let (format, parsed) = if kind == PatchKind::Apply {
        let text = std::str::from_utf8(body).map_err(|e| PatchError::Body {
            format: "YAML",
            message: e.to_string(),
        })?;
        let v: Value = serde_saphyr::from_str(text).map_err(|e| PatchError::Body {
            format: "YAML",
            message: e.to_string(),
        })?;
        ("YAML", v)
    } else {
        let v: Value = serde_json::from_slice(body).map_err(|e| PatchError::Body {
            format: "JSON",
            message: e.to_string(),
        })?;
        ("JSON", v)
    };
    let shape = |message: &str| PatchError::Body {
        format,
        message: message.to_owned(),
    };
    match kind {
        PatchKind::Json if !parsed.is_array() => {
            Err(shape("a JSON patch must be a list of operations"))
        }
        PatchKind::Merge | PatchKind::Strategic if !parsed.is_object() => {
            Err(shape("the patch must be an object"))
        }
        PatchKind::Apply => {
            let named = |k: &str| {
                parsed
                    .get(k)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
            };
            if !parsed.is_object() {
                Err(shape("an apply patch must be an object"))
            } else if !named("apiVersion") || !named("kind") {
                Err(shape("an apply patch must set apiVersion and kind"))
            } else {
                Ok(parsed)
            }
        }
        _ => Ok(parsed),
    }
}

/// Applies a parsed patch to `target`.
pub fn apply(kind: PatchKind, target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    match kind {
        PatchKind::Merge => {
            json_patch::merge(target, patch);
            Ok(())
        }
        PatchKind::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| PatchError::Json(e.to_string()))?;
            json_patch::patch(target, &ops).map_err(|e| PatchError::Json(e.to_string()))
        }
        PatchKind::Strategic | PatchKind::Apply => {
            strategic(target, patch, "");
            Ok(())
        }
    }
}

/// Merge keys of the lists that strategic merge patch merges item by item;
/// other lists are replaced.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "containerStatuses"
        | "initContainerStatuses"
        | "readinessGates"
        | "resourceClaims" => "name",
        "ports" => "containerPort",
        "volumeMounts" | "volumeDevices" => "mountPath",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "hostAliases" => "ip",
        _ => return None,
    })
}

fn strategic(target: &mut Value, patch: &Value, field: &str) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        *target = Value::Object(strip_directives(p));
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Some(t) = target.as_object_mut() else {
        return;
    };
    for (k, v) in p {
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                t.remove(k);
            }
            Value::Array(items) => {
                let existing = t.get_mut(k);
                match (merge_key(k), existing) {
                    (Some(key), Some(Value::Array(cur))) => merge_list(cur, items, key),
                    (None, Some(Value::Array(cur))) if k == "finalizers" => {
                        for i in items {
                            if !cur.contains(i) {
                                cur.push(i.clone());
                            }
                        }
                    }
                    _ => {
                        let clean: Vec<Value> = items
                            .iter()
                            .filter(|i| i.get("$patch").is_none())
                            .map(|i| match i {
                                Value::Object(m) => Value::Object(strip_directives(m)),
                                other => other.clone(),
                            })
                            .collect();
                        t.insert(k.clone(), Value::Array(clean));
                    }
                }
            }
            Value::Object(_) => {
                let slot = t.entry(k.clone()).or_insert(Value::Null);
                strategic(slot, v, k);
            }
            other => {
                t.insert(k.clone(), other.clone());
            }
        }
    }
    let _ = field;
}

fn merge_list(cur: &mut Vec<Value>, items: &[Value], key: &str) {
    for item in items {
        let id = item.get(key).cloned();
        let pos = id
            .as_ref()
            .and_then(|id| cur.iter().position(|c| c.get(key) == Some(id)));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                cur.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => strategic(&mut cur[i], item, key),
            (None, false) => {
                let mut fresh = Value::Null;
                strategic(&mut fresh, item, key);
                cur.push(fresh);
            }
        }
    }
}

fn strip_directives(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patches_of_the_wrong_shape_are_refused_before_anything_is_patched() {
        for text in ["not yaml at all", "junk: key", "- a\n- b", "{{{"] {
            assert!(
                parse_body(PatchKind::Apply, text.as_bytes()).is_err(),
                "{text:?}"
            );
        }
        let ok = parse_body(PatchKind::Apply, b"apiVersion: v1\nkind: Pod\n").unwrap();
        assert_eq!(ok["kind"], "Pod");
        assert!(parse_body(PatchKind::Merge, b"\"x\"").is_err());
        assert!(parse_body(PatchKind::Strategic, b"[1]").is_err());
        assert!(parse_body(PatchKind::Json, b"{}").is_err());
        assert!(parse_body(PatchKind::Json, b"[]").is_ok());
    }

    #[test]
    fn strategic_merge_merges_conditions_by_type_and_replaces_plain_lists() {
        let mut pod = json!({"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]},
            "spec": {"tolerations": [{"key": "a"}]}});
        let patch = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}],
            "$setElementOrder/conditions": [{"type": "Ready"}]},
            "spec": {"tolerations": [{"key": "b"}]}});
        apply(PatchKind::Strategic, &mut pod, &patch).unwrap();
        assert_eq!(
            pod["status"]["conditions"][0],
            json!({"type": "Ready", "status": "True"})
        );
        assert_eq!(pod["status"]["conditions"][1]["type"], "PodScheduled");
        assert_eq!(pod["spec"]["tolerations"], json!([{"key": "b"}]));
        assert!(pod["status"].get("$setElementOrder/conditions").is_none());
    }

    #[test]
    fn merge_and_json_patches_follow_their_rfcs() {
        let mut obj = json!({"spec": {"replicas": 1, "paused": true}});
        apply(
            PatchKind::Merge,
            &mut obj,
            &json!({"spec": {"replicas": 3, "paused": null}}),
        )
        .unwrap();
        assert_eq!(obj, json!({"spec": {"replicas": 3}}));
        apply(
            PatchKind::Json,
            &mut obj,
            &json!([{"op": "replace", "path": "/spec/replicas", "value": 5}]),
        )
        .unwrap();
        assert_eq!(obj["spec"]["replicas"], 5);
        assert!(
            apply(
                PatchKind::Json,
                &mut obj,
                &json!([{"op": "test", "path": "/spec/replicas", "value": 1}])
            )
            .is_err()
        );
    }
}
