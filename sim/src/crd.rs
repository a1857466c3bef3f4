//! CustomResourceDefinitions: a CRD stored in the sim makes its custom
//! resource served (discovery, REST, `/status`, and `/scale` through the
//! CRD's `specReplicasPath`, `statusReplicasPath` and `labelSelectorPath`),
//! as the API server's apiextensions does. An HPA can then target a custom
//! resource with a scale subresource, and an Object metric describe one.
//!
//! The definitions a CRD serves are kept process-wide by
//! [`crate::resources::custom`] (which the resource table reads); which ones
//! a sim serves follows the CRDs in its own store.

use serde_json::{Value, json};

use crate::error::FieldError;
use crate::resources::custom::{self, DefKey};
use crate::resources::{self, RESOURCES, ResourceDef, Storage};
use crate::store::Store;

pub use crate::resources::custom::{MAX_CUSTOM, PrinterColumn, ScalePaths, storage_def};

/// `.spec.replicas` -> `/spec/replicas`.
fn pointer(path: &str) -> String {
    path.trim_start_matches('.')
        .split('.')
        .fold(String::new(), |mut out, p| {
            out.push('/');
            out.push_str(p);
            out
        })
}

fn text<'a>(v: &'a Value, path: &str) -> &'a str {
    v.pointer(path).and_then(Value::as_str).unwrap_or_default()
}

/// The definitions a CRD object serves, one per served version. Empty when
/// the CRD is incomplete or every slot is taken.
pub(crate) fn defs_of(crd: &Value) -> Vec<&'static ResourceDef> {
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    let kind = text(crd, "/spec/names/kind");
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return Vec::new();
    }
    let singular = match text(crd, "/spec/names/singular") {
        "" => kind.to_ascii_lowercase(),
        s => s.to_owned(),
    };
    let short_names: Vec<String> = crd
        .pointer("/spec/names/shortNames")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let namespaced = text(crd, "/spec/scope") != "Cluster";
    let mut versions = Vec::new();
    for v in crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let version = text(v, "/name");
        if version.is_empty() || v.get("served").and_then(Value::as_bool) == Some(false) {
            continue;
        }
        let scale = v.pointer("/subresources/scale").map(|s| ScalePaths {
            spec_replicas: pointer(text(s, "/specReplicasPath")),
            status_replicas: pointer(text(s, "/statusReplicasPath")),
            label_selector: s
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(pointer),
        });
        let columns = v
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| PrinterColumn {
                name: text(c, "/name").to_owned(),
                kind: text(c, "/type").to_owned(),
                json_path: text(c, "/jsonPath").to_owned(),
                priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
            })
            .filter(|c| !c.name.is_empty() && !c.json_path.is_empty())
            .collect();
        let key = DefKey {
            group: group.to_owned(),
            version: version.to_owned(),
            plural: plural.to_owned(),
            singular: singular.clone(),
            kind: kind.to_owned(),
            namespaced,
            status: v.pointer("/subresources/status").is_some(),
            scale,
            short_names: short_names.clone(),
            columns,
        };
        versions.push((key, v.get("storage").and_then(Value::as_bool) == Some(true)));
    }
    custom::register(group, plural, versions)
}

/// The values a printer column's JSONPath selects in `obj`: the subset CRDs
/// use (fields, `[*]`, `[N]`, and `[?(@.field=="value")]` filters).
pub fn json_path<'a>(obj: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut current = vec![obj];
    let mut rest = path.trim().trim_start_matches('{').trim_end_matches('}');
    rest = rest.strip_prefix('$').unwrap_or(rest);
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let field = &r[..end];
            current = current.into_iter().filter_map(|v| v.get(field)).collect();
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let Some(end) = r.find(']') else {
                return Vec::new();
            };
            let inner = &r[..end];
            rest = &r[end + 1..];
            let items = current.into_iter().filter_map(Value::as_array).flatten();
            current = if inner == "*" {
                items.collect()
            } else if let Some(filter) =
                inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')'))
            {
                let Some((field, want)) = filter.split_once("==") else {
                    return Vec::new();
                };
                let want = want.trim().trim_matches(|c| c == '"' || c == '\'');
                items
                    .filter(|i| {
                        i.get(field.trim()).is_some_and(|v| match v {
                            Value::String(s) => s == want,
                            // Numbers and booleans compare by their JSON text.
                            other => {
                                let text = other.to_string();
                                text == want
                            }
                        })
                    })
                    .collect()
            } else if let Ok(n) = inner.parse::<usize>() {
                items.skip(n).take(1).collect()
            } else {
                return Vec::new();
            };
        } else {
            return Vec::new();
        }
    }
    current
}

/// The custom resources the CRDs in `store` serve.
pub(crate) fn served(store: &Store) -> Vec<&'static ResourceDef> {
    store
        .table(Storage::Crds)
        .range(None)
        .flat_map(|e| defs_of(&e.value()))
        .collect()
}

/// Every definition served over `store`: the built-in ones, then its CRDs'.
pub(crate) fn all_defs(store: &Store) -> Vec<&'static ResourceDef> {
    RESOURCES.iter().chain(served(store)).collect()
}

/// The custom resource the CRDs in `store` serve for `group/version/plural`.
pub(crate) fn find_served(
    store: &Store,
    group: &str,
    version: &str,
    plural: &str,
) -> Option<&'static ResourceDef> {
    served(store)
        .into_iter()
        .find(|d| d.group == group && d.version == version && d.plural == plural)
}

/// The custom groups the CRDs in `store` serve, each with its versions (in
/// CRD order).
pub(crate) fn groups(store: &Store) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for d in served(store) {
        if resources::groups().iter().any(|(g, _)| *g == d.group) {
            continue;
        }
        match out.iter_mut().find(|(g, _)| g == d.group) {
            Some((_, vs)) if !vs.iter().any(|v| v == d.version) => vs.push(d.version.to_owned()),
            Some(_) => {}
            None => out.push((d.group.to_owned(), vec![d.version.to_owned()])),
        }
    }
    out
}

/// What the API server checks of a CRD (the parts the sim relies on).
pub(crate) fn validate(crd: &Value, name: &str) -> Vec<FieldError> {
    let mut causes = Vec::new();
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    for (field, path) in [
        ("spec.group", "/spec/group"),
        ("spec.names.plural", "/spec/names/plural"),
        ("spec.names.kind", "/spec/names/kind"),
    ] {
        if text(crd, path).is_empty() {
            causes.push(FieldError::required(field, ""));
        }
    }
    if !matches!(text(crd, "/spec/scope"), "Namespaced" | "Cluster") {
        causes.push(FieldError::invalid(
            "spec.scope",
            format!("{:?}", text(crd, "/spec/scope")),
            "should be either Cluster or Namespaced",
        ));
    }
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        causes.push(FieldError::invalid(
            "metadata.name",
            format!("{name:?}"),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        causes.push(FieldError::required(
            "spec.versions",
            "must have exactly one version marked as storage version",
        ));
    } else if versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count()
        != 1
    {
        causes.push(FieldError::invalid(
            "spec.versions",
            versions.len(),
            "must have exactly one version marked as storage version",
        ));
    }
    for (i, v) in versions.iter().enumerate() {
        if let Some(scale) = v.pointer("/subresources/scale") {
            for key in ["specReplicasPath", "statusReplicasPath"] {
                if !text(scale, &format!("/{key}")).starts_with('.') {
                    causes.push(FieldError::required(
                        format!("spec.versions[{i}].subresources.scale.{key}"),
                        "should be a JSON path starting with .",
                    ));
                }
            }
        }
    }
    if causes.is_empty()
        && !group.is_empty()
        && !plural.is_empty()
        && custom::claim_slot(group, plural).is_none()
    {
        causes.push(FieldError::invalid(
            "metadata.name",
            format!("{name:?}"),
            &format!("the simulated cluster serves at most {MAX_CUSTOM} custom resources"),
        ));
    }
    causes
}

/// The status the API server gives a new CRD: its names accepted, established.
pub(crate) fn initial_status(crd: &Value) -> Value {
    let storage: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").cloned())
        .collect();
    let cond = |t: &str, reason: &str| json!({"type": t, "status": "True", "reason": reason});
    json!({
        "acceptedNames": crd.pointer("/spec/names").cloned().unwrap_or_else(|| json!({})),
        "conditions": [cond("NamesAccepted", "NoConflicts"), cond("Established", "InitialNamesAccepted")],
        "storedVersions": storage,
    })
}

/// The Scale of a custom resource, read through its CRD's paths.
pub(crate) fn scale_of(paths: &ScalePaths, obj: &Value) -> Value {
    let m = |k: &str| {
        obj.pointer(&format!("/metadata/{k}"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let int = |p: &str| obj.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    let mut status = json!({"replicas": int(&paths.status_replicas)});
    if let Some(sel) = paths
        .label_selector
        .as_deref()
        .and_then(|p| obj.pointer(p))
        .and_then(Value::as_str)
    {
        status["selector"] = json!(sel);
    }
    json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": m("name"), "namespace": m("namespace"), "uid": m("uid"),
            "resourceVersion": m("resourceVersion"), "creationTimestamp": m("creationTimestamp")},
        "spec": {"replicas": int(&paths.spec_replicas)},
        "status": status,
    })
}

/// Writes `replicas` at the CRD's `specReplicasPath`.
pub(crate) fn set_spec_replicas(paths: &ScalePaths, obj: &mut Value, replicas: i64) {
    let mut cur = obj;
    let parts: Vec<&str> = paths.spec_replicas.split('/').skip(1).collect();
    for (i, part) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let Some(map) = cur.as_object_mut() else {
            return;
        };
        if i + 1 == parts.len() {
            map.insert((*part).to_owned(), json!(replicas));
            return;
        }
        cur = map.entry((*part).to_owned()).or_insert_with(|| json!({}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(group: &str) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("rollouts.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"plural": "rollouts", "singular": "rollout", "kind": "Rollout", "shortNames": ["ro"]},
                "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                    "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}}}]}})
    }

    #[test]
    fn printer_column_paths_select_fields_lists_and_filtered_conditions() {
        let obj = json!({
            "spec": {"min": 1, "triggers": [{"type": "rabbitmq"}, {"type": "cron"}]},
            "status": {"conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Active", "status": "False"},
            ]},
        });
        assert_eq!(json_path(&obj, ".spec.min"), [&json!(1)]);
        assert_eq!(
            json_path(&obj, ".spec.triggers[*].type"),
            [&json!("rabbitmq"), &json!("cron")]
        );
        assert_eq!(
            json_path(&obj, r#".status.conditions[?(@.type=="Active")].status"#),
            [&json!("False")]
        );
        assert_eq!(json_path(&obj, ".spec.triggers[1].type"), [&json!("cron")]);
        assert!(json_path(&obj, ".status.missing").is_empty());
    }

    #[test]
    fn a_crd_serves_its_versions_with_the_scale_paths() {
        let defs = defs_of(&crd("crd-test.example.com"));
        assert_eq!(defs.len(), 1);
        let d = defs[0];
        assert_eq!(
            (d.kind, d.plural, d.namespaced, d.status, d.scale),
            ("Rollout", "rollouts", true, true, true)
        );
        let paths = d.scale_paths.unwrap();
        assert_eq!(paths.spec_replicas, "/spec/replicas");
        assert_eq!(paths.label_selector.as_deref(), Some("/status/selector"));
        // The same CRD again is the same definition and storage.
        let again = defs_of(&crd("crd-test.example.com"));
        assert!(std::ptr::eq(d, again[0]));
        assert!(std::ptr::eq(d.storage.def(), d));
    }

    #[test]
    fn scale_reads_and_writes_through_the_paths() {
        let d = defs_of(&crd("crd-scale.example.com"))[0];
        let paths = d.scale_paths.unwrap();
        let mut obj = json!({"metadata": {"name": "web"}, "spec": {"replicas": 2},
            "status": {"replicas": 3, "selector": "app=web"}});
        let scale = scale_of(paths, &obj);
        assert_eq!(scale["spec"]["replicas"], 2);
        assert_eq!(
            scale["status"],
            json!({"replicas": 3, "selector": "app=web"})
        );
        set_spec_replicas(paths, &mut obj, 5);
        assert_eq!(obj["spec"]["replicas"], 5);
    }

    #[test]
    fn an_incomplete_crd_is_refused_with_its_fields() {
        let bad = json!({"spec": {"group": "x.io", "names": {"plural": "things"}, "scope": "Galaxy",
            "versions": [{"name": "v1", "served": true, "storage": false}]}});
        let fields: Vec<String> = validate(&bad, "things.x.io")
            .into_iter()
            .map(|c| c.field)
            .collect();
        assert_eq!(fields, ["spec.names.kind", "spec.scope", "spec.versions"]);
        assert!(validate(&crd("crd-ok.example.com"), "rollouts.crd-ok.example.com").is_empty());
    }
}
