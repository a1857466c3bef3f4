//! Conversion between a served version and its storage version.

use hpa_core::version::KubernetesVersion;
use serde_json::{Map, Value, json};

use crate::hpa;
use crate::resources::{ResourceDef, Storage};

/// events.k8s.io/v1 field -> core/v1 field (same meaning).
const EVENT_FIELDS: [(&str, &str); 10] = [
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingInstance", "reportingInstance"),
    ("eventTime", "eventTime"),
    ("series", "series"),
];

/// Whether the served version differs from the storage version.
pub fn needs_conversion(def: &ResourceDef) -> bool {
    let stored = def.storage.def();
    !std::ptr::eq(stored, def)
}

/// Stored object -> the served version `def`.
pub fn to_view(def: &ResourceDef, obj: Value) -> Value {
    if !needs_conversion(def) {
        return obj;
    }
    match (def.storage, def.version) {
        (Storage::Hpas, "v1") => hpa::v2_to_v1(obj),
        (Storage::Events, _) => event_core_to_v1(obj),
        (Storage::Custom(_), _) => with_api_version(obj, def),
        _ => obj,
    }
}

/// Served version `def` -> storage version, as `release` converts it.
pub fn from_view(def: &ResourceDef, obj: Value, release: KubernetesVersion) -> Value {
    if !needs_conversion(def) {
        return obj;
    }
    match (def.storage, def.version) {
        (Storage::Hpas, "v1") => {
            let mut v2 = hpa::v1_to_v2(obj);
            if !release.v1_keeps_object_average_value_targets() {
                hpa::v1_object_average_value_through_v1_35(&mut v2);
            }
            v2
        }
        (Storage::Events, _) => event_v1_to_core(obj),
        (Storage::Custom(_), _) => with_api_version(obj, def.storage.def()),
        _ => obj,
    }
}

/// A custom resource's versions differ only in `apiVersion` (no conversion
/// webhook: the API server's `None` strategy).
fn with_api_version(mut obj: Value, def: &ResourceDef) -> Value {
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!(def.api_version()));
    }
    obj
}

fn rename(
    obj: Value,
    pairs: impl Iterator<Item = (&'static str, &'static str)>,
    api: &str,
) -> Value {
    let Value::Object(mut map) = obj else {
        return obj;
    };
    let mut out = Map::new();
    for (from, to) in pairs {
        if let Some(v) = map.remove(from) {
            out.insert(to.into(), v);
        }
    }
    for k in ["metadata", "reason", "type", "action", "related"] {
        if let Some(v) = map.remove(k) {
            out.insert(k.into(), v);
        }
    }
    out.insert("apiVersion".into(), json!(api));
    out.insert("kind".into(), json!("Event"));
    Value::Object(out)
}

fn event_core_to_v1(obj: Value) -> Value {
    let mut out = rename(
        obj,
        EVENT_FIELDS.iter().map(|(a, b)| (*b, *a)),
        "events.k8s.io/v1",
    );
    // events.k8s.io/v1 requires eventTime; core events written without it
    // report the first timestamp (as the real conversion does).
    if out.get("eventTime").is_none_or(Value::is_null)
        && let Some(first) = out.get("deprecatedFirstTimestamp").cloned()
        && let Some(o) = out.as_object_mut()
    {
        o.insert("eventTime".into(), first);
    }
    out
}

fn event_v1_to_core(obj: Value) -> Value {
    rename(obj, EVENT_FIELDS.iter().copied(), "v1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::find;

    #[test]
    fn events_convert_both_ways() {
        let v1 = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "default"},
            "regarding": {"kind": "HorizontalPodAutoscaler", "name": "web"},
            "note": "New size: 3", "reason": "SuccessfulRescale", "type": "Normal",
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "hpa",
            "reportingInstance": "hpa-1", "action": "Scale"});
        let def = find("events.k8s.io", "v1", "events").unwrap();
        let core = from_view(def, v1.clone(), KubernetesVersion::default());
        assert_eq!(core["involvedObject"]["name"], "web");
        assert_eq!(core["message"], "New size: 3");
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(to_view(def, core), v1);
    }
}
