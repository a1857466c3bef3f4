//! HorizontalPodAutoscaler defaulting, validation and v1 <-> v2 conversion,
//! as kube-apiserver does them; what differs between releases (fields a
//! release drops, the `minReplicas` bound) comes in as [`FeatureGates`] and
//! [`ValidationOptions`].
//!
//! HPAs are stored as autoscaling/v2. An autoscaling/v1 view carries what v1
//! cannot express in `autoscaling.alpha.kubernetes.io/*` annotations, so a
//! v1 round trip keeps the v2 fields (the upstream approach).

use hpa_core::gates::FeatureGates;
use hpa_core::version::KubernetesVersion;
use serde_json::{Map, Value, json};

use crate::error::FieldError;

const ANN_METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const ANN_BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const ANN_CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const ANN_CURRENT: &str = "autoscaling.alpha.kubernetes.io/current-metrics";

/// Fills the defaults of an autoscaling/v2 HPA in place: `minReplicas` 1,
/// a CPU 80% utilization metric when none is set, and the full scale-up and
/// scale-down rules when `behavior` is set (scale-down stabilization stays
/// unset: the controller's flag decides it).
pub fn default_v2(hpa: &mut Value) {
    // The shared definition in hpa-core, when the object has the typed shape;
    // a malformed one (say, no maxReplicas) gets the same defaults here and
    // is then rejected by validation with its field path.
    // (k8s-openapi reads a missing required field as zero, hence the check.)
    let complete = hpa.pointer("/spec/maxReplicas").is_some()
        && hpa.pointer("/spec/scaleTargetRef/kind").is_some()
        && hpa.pointer("/spec/scaleTargetRef/name").is_some();
    if complete
        && let Ok(mut typed) = serde_json::from_value::<
            k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler,
        >(hpa.clone())
    {
        hpa_core::default_hpa(&mut typed);
        if let (Ok(Value::Object(spec)), Some(obj)) =
            (serde_json::to_value(&typed.spec), hpa.as_object_mut())
        {
            obj.insert("spec".into(), Value::Object(spec));
            return;
        }
    }
    default_v2_json(hpa);
}

fn default_v2_json(hpa: &mut Value) {
    let Some(spec) = hpa.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("minReplicas").is_none_or(Value::is_null) {
        spec.insert("minReplicas".into(), json!(1));
    }
    let no_metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_metrics {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    if let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        let up = default_rules(
            behavior.get("scaleUp"),
            Some(0),
            json!([{"type": "Pods", "value": 4, "periodSeconds": 15},
                   {"type": "Percent", "value": 100, "periodSeconds": 15}]),
        );
        let down = default_rules(
            behavior.get("scaleDown"),
            None,
            json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
        );
        behavior.insert("scaleUp".into(), up);
        behavior.insert("scaleDown".into(), down);
    }
}

fn default_rules(given: Option<&Value>, window: Option<i64>, policies: Value) -> Value {
    let mut out = Map::new();
    if let Some(w) = window {
        out.insert("stabilizationWindowSeconds".into(), json!(w));
    }
    out.insert("selectPolicy".into(), json!("Max"));
    out.insert("policies".into(), policies);
    if let Some(Value::Object(g)) = given {
        for (k, v) in g {
            if !v.is_null() {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Drops what the real API server never stores in an autoscaling/v2 status
/// (Go `omitempty`): `currentReplicas` of 0, empty `currentMetrics` and
/// `conditions`, and nulls; a client reads them back absent (a controller
/// comparing its computed status with the stored one must treat the two
/// alike). `desiredReplicas` has no `omitempty` and stays.
pub fn omit_empty_status(hpa: &mut Value) {
    let Some(status) = hpa.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    status.retain(|key, value| match (key.as_str(), &*value) {
        (_, Value::Null) => false,
        ("currentReplicas", v) => v.as_i64() != Some(0),
        ("currentMetrics" | "conditions", Value::Array(items)) => !items.is_empty(),
        _ => true,
    });
}

/// What a release's API server does not store of an HPA, on create and on
/// every update (main and `/status`), given the stored object `old`:
///
/// - `behavior.scaleUp/scaleDown.tolerance` with `HPAConfigurableTolerance`
///   off, unless `old` already uses a tolerance (upstream's
///   `dropDisabledFields`);
/// - `status.conditions[].observedGeneration` in v1.36, whose autoscaling/v2
///   has no such field (k/k #138653 adds it in v1.37): pruned as unknown;
/// - in v1.37 and later with `HPAGeneration` off, `status.observedGeneration`
///   and the conditions' `observedGeneration`, unless `old` already has
///   them (the usual ratchet of a gated field).
pub fn drop_disabled_fields(hpa: &mut Value, old: Option<&Value>, gates: &FeatureGates) {
    drop_tolerance(hpa, old, gates.configurable_tolerance());
    drop_observed_generation(hpa, old, gates);
}

fn drop_tolerance(hpa: &mut Value, old: Option<&Value>, tolerance_gate: bool) {
    let uses_tolerance = |h: &Value| {
        ["scaleUp", "scaleDown"].iter().any(|dir| {
            h.pointer(&format!("/spec/behavior/{dir}/tolerance"))
                .is_some_and(|t| !t.is_null())
        })
    };
    if tolerance_gate || old.is_some_and(uses_tolerance) {
        return;
    }
    for dir in ["scaleUp", "scaleDown"] {
        if let Some(rules) = hpa
            .pointer_mut(&format!("/spec/behavior/{dir}"))
            .and_then(Value::as_object_mut)
        {
            rules.remove("tolerance");
        }
    }
}

/// Whether `release`'s autoscaling/v2 has `status.conditions[].observedGeneration`.
fn has_condition_observed_generation(release: KubernetesVersion) -> bool {
    release >= KubernetesVersion::V1_37
}

fn drop_observed_generation(hpa: &mut Value, old: Option<&Value>, gates: &FeatureGates) {
    let known = has_condition_observed_generation(gates.version());
    if known && gates.generation() {
        return;
    }
    let status_in_use = old
        .and_then(|o| o.pointer("/status/observedGeneration"))
        .is_some_and(|g| !g.is_null());
    let conditions_in_use = old
        .and_then(|o| o.pointer("/status/conditions"))
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.get("observedGeneration").is_some_and(|g| !g.is_null()))
        });
    let Some(status) = hpa.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    // v1.36 stores `status.observedGeneration` (a field since v2 GA) as it is.
    if known && !status_in_use {
        status.remove("observedGeneration");
    }
    if (!known || !conditions_in_use)
        && let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut)
    {
        for c in conditions.iter_mut().filter_map(Value::as_object_mut) {
            c.remove("observedGeneration");
        }
    }
}

/// What HPA validation depends on besides the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidationOptions {
    /// 0 with the `HPAScaleToZero` gate on (or when the stored object already
    /// had 0), else 1.
    pub min_replicas_lower_bound: i64,
    /// An update that keeps `scaleTargetRef`'s apiVersion and kind: its
    /// apiVersion is not checked (upstream's ratchet, so HPAs stored before
    /// the check stay updatable).
    pub allow_invalid_target_api_version: bool,
    /// An update of an HPA whose stored Object metrics already fail the
    /// `describedObject.apiVersion` check: not checked.
    pub allow_invalid_object_api_version: bool,
    /// From 1.36 the handwritten `maxReplicas` checks answer with
    /// declarative validation's texts (kubernetes#135412): 0, or none, is
    /// "Required value: must be set and greater than 0", a negative value
    /// "must be greater than or equal to 1". Before, both were "Invalid
    /// value: N: must be greater than 0". The genuine v1.36.2 API server
    /// answers so.
    pub max_replicas_texts_of_1_36: bool,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        Self {
            min_replicas_lower_bound: 1,
            allow_invalid_target_api_version: false,
            allow_invalid_object_api_version: false,
            max_replicas_texts_of_1_36: false,
        }
    }
}

/// Validates the spec of a (defaulted) autoscaling/v2 HPA with the gate off;
/// field paths as the real API server reports them.
pub fn validate_v2(hpa: &Value) -> Vec<FieldError> {
    validate_v2_with(hpa, ValidationOptions::default())
}

/// Validates the spec of a (defaulted) autoscaling/v2 HPA.
pub fn validate_v2_with(hpa: &Value, opts: ValidationOptions) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = hpa.get("spec").cloned().unwrap_or(Value::Null);
    let int = |v: Option<&Value>| v.and_then(Value::as_i64);
    let min = int(spec.get("minReplicas"));
    let max = int(spec.get("maxReplicas"));
    if let Some(m) = min
        && m < opts.min_replicas_lower_bound
    {
        errs.push(FieldError::invalid(
            "spec.minReplicas",
            m,
            &format!(
                "must be greater than or equal to {}",
                opts.min_replicas_lower_bound
            ),
        ));
    }
    if min == Some(0) && !has_object_or_external_metric(&spec) {
        // Upstream validateMetrics: scaling to zero needs a metric that does
        // not come from the (absent) pods.
        errs.push(FieldError::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    // An absent maxReplicas decodes as 0 into the API server's int32.
    let max = if opts.max_replicas_texts_of_1_36 {
        max.or(Some(0))
    } else {
        max
    };
    match max {
        None => errs.push(FieldError::required("spec.maxReplicas", "")),
        Some(0) if opts.max_replicas_texts_of_1_36 => errs.push(FieldError::required(
            "spec.maxReplicas",
            "must be set and greater than 0",
        )),
        Some(m) if m < 1 && opts.max_replicas_texts_of_1_36 => errs.push(FieldError::invalid(
            "spec.maxReplicas",
            m,
            "must be greater than or equal to 1",
        )),
        Some(m) if m < 1 => errs.push(FieldError::invalid(
            "spec.maxReplicas",
            m,
            "must be greater than 0",
        )),
        Some(_) => {}
    }
    if let (Some(lo), Some(hi)) = (min, max)
        && hi < lo
    {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            hi,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let target = spec.get("scaleTargetRef");
    validate_ref(target, "spec.scaleTargetRef", &mut errs);
    if !opts.allow_invalid_target_api_version {
        // Only the one scalable core/v1 kind may name no API group.
        let core_kind = target.and_then(|t| t.get("kind")).and_then(Value::as_str)
            == Some("ReplicationController");
        validate_api_version(target, "spec.scaleTargetRef", !core_kind, &mut errs);
    }
    if let Some(metrics) = spec.get("metrics").and_then(Value::as_array) {
        for (i, m) in metrics.iter().enumerate() {
            validate_metric(m, &format!("spec.metrics[{i}]"), opts, &mut errs);
        }
    }
    if let Some(b) = spec.get("behavior").filter(|b| !b.is_null()) {
        for dir in ["scaleUp", "scaleDown"] {
            if let Some(r) = b.get(dir).filter(|r| !r.is_null()) {
                validate_rules(r, &format!("spec.behavior.{dir}"), &mut errs);
            }
        }
    }
    errs
}

fn has_object_or_external_metric(spec: &Value) -> bool {
    spec.get("metrics")
        .and_then(Value::as_array)
        .is_some_and(|ms| {
            ms.iter().any(|m| {
                matches!(
                    m.get("type").and_then(Value::as_str),
                    Some("Object" | "External")
                )
            })
        })
}

/// Upstream's `ValidateAPIVersion` of a cross-version reference: the
/// apiVersion must parse as a GroupVersion and, where `require_group`, name
/// an API group (so a missing apiVersion, or `v1` for a Deployment, is
/// refused on create).
fn validate_api_version(
    r: Option<&Value>,
    path: &str,
    require_group: bool,
    errs: &mut Vec<FieldError>,
) {
    let v = r
        .and_then(|r| r.get("apiVersion"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let group = match group_of(v) {
        Ok(g) => g,
        Err(msg) => {
            errs.push(FieldError::invalid(
                format!("{path}.apiVersion"),
                format!("\"{v}\""),
                &msg,
            ));
            return;
        }
    };
    if require_group && group.is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.apiVersion"),
            format!("\"{v}\""),
            "apiVersion must specify API group",
        ));
    }
}

/// The group of an apiVersion as apimachinery's `ParseGroupVersion` reads
/// it: "" and "/" are the empty GroupVersion, no slash is a core version,
/// one slash splits group and version, more is an error.
fn group_of(api_version: &str) -> Result<&str, String> {
    if api_version.is_empty() || api_version == "/" {
        return Ok("");
    }
    match api_version.matches('/').count() {
        0 => Ok(""),
        1 => Ok(api_version.split('/').next().unwrap_or_default()),
        _ => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

/// Upstream's ratchets on update (`validationOptionsForHorizontalPodAutoscaler`):
/// the target's apiVersion is not checked again when the update keeps its
/// apiVersion and kind, and Object metrics' apiVersions are not checked when
/// one of the stored ones already fails the check.
pub fn api_version_ratchets(new: &Value, old: &Value) -> (bool, bool) {
    let same = |field: &str| {
        let p = format!("/spec/scaleTargetRef/{field}");
        new.pointer(&p) == old.pointer(&p)
    };
    let keep_target = same("apiVersion") && same("kind");
    let mut objects = Vec::new();
    for m in old
        .pointer("/spec/metrics")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| m.get("type").and_then(Value::as_str) == Some("Object"))
    {
        validate_api_version(
            m.pointer("/object/describedObject"),
            "",
            false,
            &mut objects,
        );
    }
    (keep_target, !objects.is_empty())
}

fn validate_ref(r: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    for field in ["kind", "name"] {
        let v = r.and_then(|r| r.get(field)).and_then(Value::as_str);
        match v {
            None | Some("") => errs.push(FieldError::required(format!("{path}.{field}"), "")),
            Some(s) if s.contains('/') || s.contains('%') || s == "." || s == ".." => {
                errs.push(FieldError::invalid(
                    format!("{path}.{field}"),
                    format!("\"{s}\""),
                    "may not contain '/' or '%'",
                ));
            }
            Some(_) => {}
        }
    }
}

const SOURCE_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

/// Upstream `validateMetricSpec`: a known type with its own source field
/// populated and no other, then that source's own checks.
fn validate_metric(m: &Value, path: &str, opts: ValidationOptions, errs: &mut Vec<FieldError>) {
    let ty = m.get("type").and_then(Value::as_str).unwrap_or_default();
    if ty.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric source type",
        ));
        return;
    }
    if !SOURCE_TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            ty,
            &SOURCE_TYPES,
        ));
        return;
    }
    let field = lower_first(ty);
    let present: Vec<&str> = [
        "object",
        "pods",
        "resource",
        "containerResource",
        "external",
    ]
    .into_iter()
    .filter(|f| m.get(*f).is_some_and(|v| !v.is_null()))
    .collect();
    for other in present.iter().filter(|f| **f != field) {
        errs.push(FieldError::forbidden(
            format!("{path}.{other}"),
            "must populate the given metric source only",
        ));
    }
    let Some(src) = m.get(&field).filter(|v| !v.is_null()) else {
        errs.push(FieldError::required(
            format!("{path}.{field}"),
            "must populate information for the given metric source",
        ));
        return;
    };
    let sp = format!("{path}.{field}");
    match ty {
        "Resource" => validate_resource_source(src, &sp, false, errs),
        "ContainerResource" => validate_resource_source(src, &sp, true, errs),
        "Object" => validate_object_source(src, &sp, opts, errs),
        "Pods" => validate_pods_source(src, &sp, errs),
        _ => validate_external_source(src, &sp, errs),
    }
}

/// Upstream `validateResourceSource` and, with `container`,
/// `validateContainerResourceSource`: a name, and exactly one of an average
/// utilization and an average value.
fn validate_resource_source(src: &Value, sp: &str, container: bool, errs: &mut Vec<FieldError>) {
    if src
        .get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        errs.push(FieldError::required(
            format!("{sp}.name"),
            "must specify a resource name",
        ));
    }
    if container
        && src
            .get("container")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        errs.push(FieldError::required(
            format!("{sp}.container"),
            "must specify a container",
        ));
    }
    validate_target(src.get("target"), &format!("{sp}.target"), errs);
    let (util, avg) = (
        target_has(src, "averageUtilization"),
        target_has(src, "averageValue"),
    );
    if !util && !avg {
        errs.push(FieldError::required(
            format!("{sp}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if util && avg {
        errs.push(FieldError::forbidden(
            format!("{sp}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
}

/// Upstream `validateObjectSource`.
fn validate_object_source(
    src: &Value,
    sp: &str,
    opts: ValidationOptions,
    errs: &mut Vec<FieldError>,
) {
    validate_ref(
        src.get("describedObject"),
        &format!("{sp}.describedObject"),
        errs,
    );
    if !opts.allow_invalid_object_api_version {
        // Object metrics may name a core kind (a Service): no group
        // needed, but the apiVersion must parse.
        validate_api_version(
            src.get("describedObject"),
            &format!("{sp}.describedObject"),
            false,
            errs,
        );
    }
    validate_identifier(src.get("metric"), &format!("{sp}.metric"), errs);
    validate_target(src.get("target"), &format!("{sp}.target"), errs);
    if !target_has(src, "value") && !target_has(src, "averageValue") {
        errs.push(FieldError::required(
            format!("{sp}.target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
}

/// Upstream `validatePodsSource`.
fn validate_pods_source(src: &Value, sp: &str, errs: &mut Vec<FieldError>) {
    validate_identifier(src.get("metric"), &format!("{sp}.metric"), errs);
    validate_target(src.get("target"), &format!("{sp}.target"), errs);
    if !target_has(src, "averageValue") {
        errs.push(FieldError::required(
            format!("{sp}.target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
}

/// Upstream `validateExternalSource`.
fn validate_external_source(src: &Value, sp: &str, errs: &mut Vec<FieldError>) {
    validate_identifier(src.get("metric"), &format!("{sp}.metric"), errs);
    validate_target(src.get("target"), &format!("{sp}.target"), errs);
    if !target_has(src, "value") && !target_has(src, "averageValue") {
        errs.push(FieldError::required(
            format!("{sp}.target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
}

fn validate_identifier(id: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    if id
        .and_then(|i| i.get("name"))
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a metric name",
        ));
    }
}

/// Upstream `validateMetricTarget`: the type must be one of the three, and
/// each value present must be positive. Which values are set is not tied to
/// the type here (upstream's own scale-to-zero test uses `{type: Value,
/// averageValue: 100}`); each source checks what it needs.
fn validate_target(t: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    let t = t.filter(|t| !t.is_null());
    let ty = t
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if ty.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric target type",
        ));
    }
    if !["Utilization", "Value", "AverageValue"].contains(&ty) {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            format!("\"{ty}\""),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    let Some(t) = t else { return };
    for field in ["value", "averageValue"] {
        if let Some(q) = t.get(field).filter(|v| !v.is_null()) {
            match quantity_sign(q) {
                Some(s) if s > 0 => {}
                Some(_) => errs.push(FieldError::invalid(
                    format!("{path}.{field}"),
                    q.as_str().map_or_else(|| q.to_string(), str::to_owned),
                    "must be positive",
                )),
                None => errs.push(FieldError::invalid(
                    format!("{path}.{field}"),
                    q.to_string(),
                    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                )),
            }
        }
    }
    if let Some(u) = t.get("averageUtilization").and_then(Value::as_i64)
        && u < 1
    {
        errs.push(FieldError::invalid(
            format!("{path}.averageUtilization"),
            u,
            "must be greater than 0",
        ));
    }
}

/// Whether the target sets `field` (a JSON null is unset).
fn target_has(src: &Value, field: &str) -> bool {
    src.get("target")
        .and_then(|t| t.get(field))
        .is_some_and(|v| !v.is_null())
}

/// The sign of a Kubernetes quantity (`"500m"`, `"2"`, `"1e3"`), or `None` if
/// it does not parse.
fn quantity_sign(q: &Value) -> Option<i8> {
    let s = match q {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(end);
    let known = [
        "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    let exp_ok = suffix
        .strip_prefix(['e', 'E'])
        .is_some_and(|e| e.trim_start_matches(['+', '-']).parse::<u32>().is_ok());
    if !known.contains(&suffix) && !exp_ok {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    Some(if n > 0.0 {
        1
    } else if n < 0.0 {
        -1
    } else {
        0
    })
}

const SELECT_POLICIES: [&str; 3] = ["Disabled", "Max", "Min"];
const POLICY_TYPES: [&str; 2] = ["Percent", "Pods"];

fn validate_rules(r: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(w) = r.get("stabilizationWindowSeconds").and_then(Value::as_i64) {
        if w < 0 {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                w,
                "must be greater than or equal to zero",
            ));
        } else if w > 3600 {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                w,
                "must be less than or equal to 3600",
            ));
        }
    }
    if let Some(t) = r.get("tolerance").filter(|t| !t.is_null())
        && quantity_sign(t).is_some_and(|s| s < 0)
    {
        errs.push(FieldError::invalid(
            format!("{path}.tolerance"),
            t.as_str().map_or_else(|| t.to_string(), str::to_owned),
            "must be greater than or equal to zero",
        ));
    }
    if let Some(p) = r.get("selectPolicy").and_then(Value::as_str)
        && !SELECT_POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported(
            format!("{path}.selectPolicy"),
            p,
            &SELECT_POLICIES,
        ));
    }
    let policies = r
        .get("policies")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if policies.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, p) in policies.iter().enumerate() {
        let pp = format!("{path}.policies[{i}]");
        let ty = p.get("type").and_then(Value::as_str).unwrap_or_default();
        if !POLICY_TYPES.contains(&ty) {
            errs.push(FieldError::not_supported(
                format!("{pp}.type"),
                ty,
                &POLICY_TYPES,
            ));
        }
        let value = p.get("value").and_then(Value::as_i64).unwrap_or(0);
        if value <= 0 {
            errs.push(FieldError::invalid(
                format!("{pp}.value"),
                value,
                "must be greater than zero",
            ));
        }
        let period = p.get("periodSeconds").and_then(Value::as_i64).unwrap_or(0);
        if period <= 0 {
            errs.push(FieldError::invalid(
                format!("{pp}.periodSeconds"),
                period,
                "must be greater than zero",
            ));
        } else if period > 1800 {
            errs.push(FieldError::invalid(
                format!("{pp}.periodSeconds"),
                period,
                "must be less than or equal to 1800",
            ));
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn is_cpu_utilization(m: &Value) -> Option<i64> {
    (m.get("type")? == "Resource"
        && m.pointer("/resource/name")? == "cpu"
        && m.pointer("/resource/target/type")? == "Utilization")
        .then(|| m.pointer("/resource/target/averageUtilization")?.as_i64())
        .flatten()
}

fn annotations(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let meta = obj.get_mut("metadata")?.as_object_mut()?;
    let ann = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if ann.is_null() {
        *ann = Value::Object(Map::new());
    }
    ann.as_object_mut()
}

fn drop_empty_annotations(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        && meta
            .get("annotations")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
    {
        meta.remove("annotations");
    }
}

/// Stored autoscaling/v2 -> autoscaling/v1 view.
pub fn v2_to_v1(mut hpa: Value) -> Value {
    let spec = hpa.get("spec").cloned().unwrap_or(Value::Null);
    let status = hpa.get("status").cloned().unwrap_or(Value::Null);
    let metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let cpu = metrics.iter().find_map(is_cpu_utilization);
    let others: Vec<Value> = metrics
        .iter()
        .filter(|m| is_cpu_utilization(m).is_none())
        .cloned()
        .collect();
    let mut v1spec = Map::new();
    for k in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(v) = spec.get(k) {
            v1spec.insert(k.into(), v.clone());
        }
    }
    if let Some(c) = cpu {
        v1spec.insert("targetCPUUtilizationPercentage".into(), json!(c));
    }
    let mut v1status = Map::new();
    for k in [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
    ] {
        if let Some(v) = status.get(k) {
            v1status.insert(k.into(), v.clone());
        }
    }
    if !v1status.contains_key("currentReplicas") && !status.is_null() {
        v1status.insert("currentReplicas".into(), json!(0));
    }
    if !v1status.contains_key("desiredReplicas") && !status.is_null() {
        v1status.insert("desiredReplicas".into(), json!(0));
    }
    let current = status
        .get("currentMetrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(u) = current.iter().find_map(|m| {
        (m.get("type")? == "Resource" && m.pointer("/resource/name")? == "cpu")
            .then(|| m.pointer("/resource/current/averageUtilization")?.as_i64())
            .flatten()
    }) {
        v1status.insert("currentCPUUtilizationPercentage".into(), json!(u));
    }
    let conditions = status.get("conditions").cloned();
    let behavior = spec.get("behavior").cloned();
    if let Some(ann) = annotations(&mut hpa) {
        if !others.is_empty() {
            ann.insert(ANN_METRICS.into(), json!(Value::Array(others).to_string()));
        }
        if let Some(b) = behavior.filter(|b| !b.is_null()) {
            ann.insert(ANN_BEHAVIOR.into(), json!(b.to_string()));
        }
        if let Some(c) = conditions.filter(|c| !c.is_null()) {
            ann.insert(ANN_CONDITIONS.into(), json!(c.to_string()));
        }
        if !current.is_empty() {
            ann.insert(ANN_CURRENT.into(), json!(Value::Array(current).to_string()));
        }
    }
    drop_empty_annotations(&mut hpa);
    if let Some(o) = hpa.as_object_mut() {
        o.insert("apiVersion".into(), json!("autoscaling/v1"));
        o.insert("spec".into(), Value::Object(v1spec));
        if status.is_null() {
            o.remove("status");
        } else {
            o.insert("status".into(), Value::Object(v1status));
        }
    }
    hpa
}

/// What autoscaling/v1 -> v2 did through 1.35 to an Object metric with an
/// AverageValue target: its `value` became v1's `targetValue`, "0" when
/// the metric had none
/// ([`KubernetesVersion::v1_keeps_object_average_value_targets`]).
pub fn v1_object_average_value_through_v1_35(hpa: &mut Value) {
    let Some(metrics) = hpa
        .pointer_mut("/spec/metrics")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for target in metrics
        .iter_mut()
        .filter(|m| m.get("type").and_then(Value::as_str) == Some("Object"))
        .filter_map(|m| m.pointer_mut("/object/target"))
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("AverageValue"))
    {
        if let Some(t) = target.as_object_mut()
            && t.get("value").is_none_or(Value::is_null)
        {
            t.insert("value".into(), json!("0"));
        }
    }
}

/// autoscaling/v1 view -> stored autoscaling/v2.
pub fn v1_to_v2(mut hpa: Value) -> Value {
    let spec = hpa.get("spec").cloned().unwrap_or(Value::Null);
    let status = hpa.get("status").cloned().unwrap_or(Value::Null);
    let take = |hpa: &mut Value, key: &str| -> Option<Value> {
        let ann = annotations(hpa)?;
        let s = ann.remove(key)?;
        serde_json::from_str(s.as_str()?).ok()
    };
    let extra_metrics = take(&mut hpa, ANN_METRICS);
    let behavior = take(&mut hpa, ANN_BEHAVIOR);
    let conditions = take(&mut hpa, ANN_CONDITIONS);
    let current = take(&mut hpa, ANN_CURRENT);
    drop_empty_annotations(&mut hpa);
    let mut metrics = Vec::new();
    if let Some(c) = spec
        .get("targetCPUUtilizationPercentage")
        .and_then(Value::as_i64)
    {
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": c}}}));
    }
    if let Some(Value::Array(m)) = extra_metrics {
        metrics.extend(m);
    }
    let mut v2spec = Map::new();
    for k in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(v) = spec.get(k) {
            v2spec.insert(k.into(), v.clone());
        }
    }
    if !metrics.is_empty() {
        v2spec.insert("metrics".into(), Value::Array(metrics));
    }
    if let Some(b) = behavior {
        v2spec.insert("behavior".into(), b);
    }
    let mut v2status = Map::new();
    for k in [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
    ] {
        if let Some(v) = status.get(k) {
            v2status.insert(k.into(), v.clone());
        }
    }
    match current {
        Some(c) => {
            v2status.insert("currentMetrics".into(), c);
        }
        None => {
            if let Some(u) = status
                .get("currentCPUUtilizationPercentage")
                .and_then(Value::as_i64)
            {
                v2status.insert(
                    "currentMetrics".into(),
                    json!([{"type": "Resource", "resource": {"name": "cpu",
                        "current": {"averageUtilization": u}}}]),
                );
            }
        }
    }
    if let Some(c) = conditions {
        v2status.insert("conditions".into(), c);
    }
    if let Some(o) = hpa.as_object_mut() {
        o.insert("apiVersion".into(), json!("autoscaling/v2"));
        o.insert("spec".into(), Value::Object(v2spec));
        if status.is_null() {
            o.remove("status");
        } else {
            o.insert("status".into(), Value::Object(v2status));
        }
    }
    hpa
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hpa(spec: Value) -> Value {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
    }

    #[test]
    fn defaults_fill_min_replicas_cpu_metric_and_behavior_rules() {
        let mut h = hpa(
            json!({"maxReplicas": 5, "behavior": {"scaleDown": {"selectPolicy": "Min"}},
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}}),
        );
        default_v2(&mut h);
        assert_eq!(h["spec"]["minReplicas"], 1);
        assert_eq!(
            h["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert_eq!(
            h["spec"]["behavior"]["scaleUp"]["stabilizationWindowSeconds"],
            0
        );
        assert_eq!(
            h["spec"]["behavior"]["scaleUp"]["policies"][0]["type"],
            "Pods"
        );
        assert_eq!(h["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Min");
        assert!(
            h["spec"]["behavior"]["scaleDown"]
                .get("stabilizationWindowSeconds")
                .is_none()
        );
    }

    #[test]
    fn json_defaulting_agrees_with_hpa_core() {
        let base = hpa(json!({"maxReplicas": 5,
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": 30}, "scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}},
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}}));
        let mut shared = base.clone();
        default_v2(&mut shared);
        let mut local = base;
        default_v2_json(&mut local);
        assert_eq!(shared, local);
    }

    #[test]
    fn validation_names_the_failing_fields() {
        let mut h = hpa(json!({"minReplicas": 5, "maxReplicas": 2,
            "scaleTargetRef": {"kind": "Deployment", "apiVersion": "apps/v1"},
            "metrics": [{"type": "Pods"}, {"type": "Bogus"}]}));
        default_v2(&mut h);
        let fields: Vec<String> = validate_v2(&h).into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            vec![
                "spec.maxReplicas",
                "spec.scaleTargetRef.name",
                "spec.metrics[0].pods",
                "spec.metrics[1].type",
            ]
        );
        let missing = hpa(json!({"scaleTargetRef": {"kind": "Deployment", "name": "x"}}));
        assert_eq!(validate_v2(&missing)[0].field, "spec.maxReplicas");
    }

    #[test]
    fn from_1_36_max_replicas_answers_with_declarative_validations_texts() {
        let texts = |max: Option<i64>, of_1_36: bool| {
            let mut spec = json!({"scaleTargetRef":
                {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}});
            if let Some(max) = max {
                spec["maxReplicas"] = json!(max);
            }
            let mut h = hpa(spec);
            default_v2(&mut h);
            let opts = ValidationOptions {
                max_replicas_texts_of_1_36: of_1_36,
                ..ValidationOptions::default()
            };
            validate_v2_with(&h, opts)
                .into_iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect::<Vec<_>>()
        };
        // What the genuine v1.36.2 API server answers.
        let zero = [
            "spec.maxReplicas: Required value: must be set and greater than 0",
            "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
        ];
        assert_eq!(texts(Some(0), true), zero);
        assert_eq!(texts(None, true), zero);
        assert_eq!(
            texts(Some(-1), true),
            [
                "spec.maxReplicas: Invalid value: -1: must be greater than or equal to 1",
                "spec.maxReplicas: Invalid value: -1: must be greater than or equal to `minReplicas`",
            ]
        );
        assert_eq!(
            texts(Some(0), false)[0],
            "spec.maxReplicas: Invalid value: 0: must be greater than 0"
        );
    }

    #[test]
    fn min_replicas_zero_needs_the_gate_and_an_object_or_external_metric() {
        let mut h = hpa(json!({"minReplicas": 0, "maxReplicas": 5,
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "metrics": [{"type": "External", "external": {
                "metric": {"name": "queue"},
                "target": {"type": "Value", "value": "10"}}}]}));
        default_v2(&mut h);
        let gate_off = validate_v2(&h);
        assert_eq!(gate_off.len(), 1);
        assert_eq!(gate_off[0].field, "spec.minReplicas");
        assert!(gate_off[0].message.contains("greater than or equal to 1"));
        let gate_on = ValidationOptions {
            min_replicas_lower_bound: 0,
            ..ValidationOptions::default()
        };
        assert!(validate_v2_with(&h, gate_on).is_empty());
        let mut cpu_only = hpa(json!({"minReplicas": 0, "maxReplicas": 5,
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}}));
        default_v2(&mut cpu_only);
        let errs = validate_v2_with(&cpu_only, gate_on);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.metrics");
        assert!(
            errs[0]
                .message
                .contains("at least one Object or External metric")
        );
    }

    fn errors_of(metric: Value) -> Vec<(String, String)> {
        let mut h = hpa(json!({"maxReplicas": 5,
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "metrics": [metric]}));
        default_v2(&mut h);
        validate_v2(&h)
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect()
    }

    #[test]
    fn target_values_are_not_tied_to_the_target_type() {
        // Upstream's own scale-to-zero test: type Value with an averageValue.
        let object = json!({"type": "Object", "object": {
            "describedObject": {"kind": "Service", "name": "q", "apiVersion": "v1"},
            "metric": {"name": "depth"},
            "target": {"type": "Value", "averageValue": "100"}}});
        assert_eq!(errors_of(object), vec![]);
        let external = json!({"type": "External", "external": {
            "metric": {"name": "depth"},
            "target": {"type": "AverageValue", "value": "5"}}});
        assert_eq!(errors_of(external), vec![]);
        let resource = json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageValue": "500m"}}});
        assert_eq!(errors_of(resource), vec![]);
    }

    #[test]
    fn each_source_requires_the_values_it_reads() {
        let object = json!({"type": "Object", "object": {
            "describedObject": {"kind": "Service", "name": "q", "apiVersion": "v1"},
            "metric": {"name": "depth"}, "target": {"type": "Value"}}});
        assert_eq!(
            errors_of(object),
            vec![(
                "spec.metrics[0].object.target.averageValue".to_owned(),
                "Required value: must set either a target value or averageValue".to_owned()
            )]
        );
        let both = json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50, "averageValue": "1"}}});
        let fields: Vec<String> = errors_of(both).into_iter().map(|e| e.0).collect();
        assert_eq!(fields, vec!["spec.metrics[0].resource.target.averageValue"]);
        let bad_type = json!({"type": "Pods", "pods": {"metric": {"name": "qps"},
            "target": {"type": "Average", "averageValue": "1"}}});
        let errs = errors_of(bad_type);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0]
                .1
                .contains("must be either Utilization, Value, or AverageValue")
        );
    }

    #[test]
    fn a_negative_tolerance_is_refused() {
        let mut h = hpa(json!({"maxReplicas": 5,
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "behavior": {"scaleUp": {"tolerance": "-0.1"}, "scaleDown": {"tolerance": "0.05"}}}));
        default_v2(&mut h);
        let fields: Vec<String> = validate_v2(&h).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, vec!["spec.behavior.scaleUp.tolerance"]);
    }

    #[test]
    fn tolerance_is_dropped_when_its_gate_is_off_unless_already_in_use() {
        let with = |t: &str| {
            hpa(json!({"maxReplicas": 5,
                "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                "behavior": {"scaleUp": {"tolerance": t}}}))
        };
        let tolerance = |h: &Value| h.pointer("/spec/behavior/scaleUp/tolerance").cloned();
        let gate_on = FeatureGates::of(KubernetesVersion::V1_36);
        let gate_off =
            FeatureGates::parse(KubernetesVersion::V1_36, "HPAConfigurableTolerance=false")
                .unwrap();
        let mut on = with("0.05");
        drop_disabled_fields(&mut on, None, &gate_on);
        assert_eq!(tolerance(&on), Some(json!("0.05")));
        let mut off = with("0.05");
        drop_disabled_fields(&mut off, None, &gate_off);
        assert_eq!(tolerance(&off), None);
        let stored = with("0.01");
        let mut update = with("0.05");
        drop_disabled_fields(&mut update, Some(&stored), &gate_off);
        assert_eq!(tolerance(&update), Some(json!("0.05")));
    }

    fn with_generations(status_generation: i64, condition_generation: i64) -> Value {
        json!({"status": {"observedGeneration": status_generation, "desiredReplicas": 2,
            "conditions": [
                {"type": "AbleToScale", "status": "True", "observedGeneration": condition_generation},
                {"type": "ScalingActive", "status": "True"}]}})
    }

    fn generations(h: &Value) -> (Option<&Value>, Option<&Value>) {
        (
            h.pointer("/status/observedGeneration"),
            h.pointer("/status/conditions/0/observedGeneration"),
        )
    }

    #[test]
    fn v1_36_prunes_the_conditions_observed_generation_it_does_not_know() {
        let gates = FeatureGates::of(KubernetesVersion::V1_36);
        let mut h = with_generations(3, 3);
        drop_disabled_fields(&mut h, Some(&with_generations(2, 2)), &gates);
        assert_eq!(generations(&h), (Some(&json!(3)), None));
        assert_eq!(
            h.pointer("/status/conditions/1"),
            Some(&json!({"type": "ScalingActive", "status": "True"}))
        );
    }

    #[test]
    fn v1_37_stores_observed_generations_with_hpa_generation_on() {
        for release in [KubernetesVersion::V1_37, KubernetesVersion::V1_38] {
            let mut h = with_generations(3, 3);
            drop_disabled_fields(&mut h, None, &FeatureGates::of(release));
            assert_eq!(generations(&h), (Some(&json!(3)), Some(&json!(3))));
        }
    }

    #[test]
    fn v1_37_with_hpa_generation_off_drops_observed_generations_not_already_in_use() {
        let off = FeatureGates::parse(KubernetesVersion::V1_37, "HPAGeneration=false").unwrap();
        let mut fresh = with_generations(3, 3);
        let old_without = json!({"status": {"desiredReplicas": 1,
            "conditions": [{"type": "AbleToScale", "status": "True"}]}});
        drop_disabled_fields(&mut fresh, Some(&old_without), &off);
        assert_eq!(generations(&fresh), (None, None));

        let mut kept = with_generations(3, 3);
        drop_disabled_fields(&mut kept, Some(&with_generations(2, 2)), &off);
        assert_eq!(generations(&kept), (Some(&json!(3)), Some(&json!(3))));
    }

    /// v1.36's autoscaling/v2 has no `spec.selectionStrategy` and no
    /// `external.fallback` (KEP-5325 and KEP-5679 did not land in it): the
    /// API server prunes them as unknown fields, whatever the gates say.
    #[test]
    fn fields_v1_36_does_not_know_are_pruned_from_the_spec() {
        let mut h = hpa(
            json!({"maxReplicas": 5, "selectionStrategy": "OwnerReferences",
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "metrics": [{"type": "External", "external": {
                "metric": {"name": "queue"}, "target": {"type": "Value", "value": "10"},
                "fallback": {"failureDurationSeconds": 180, "replicas": 4}}}]}),
        );
        default_v2(&mut h);
        assert_eq!(h.pointer("/spec/selectionStrategy"), None);
        assert_eq!(h.pointer("/spec/metrics/0/external/fallback"), None);
        assert_eq!(
            h.pointer("/spec/metrics/0/external/metric/name"),
            Some(&json!("queue"))
        );
    }

    #[test]
    fn the_status_is_stored_without_its_omitempty_zero_values() {
        let mut h = json!({"status": {"currentReplicas": 0, "desiredReplicas": 0,
            "currentMetrics": [], "conditions": [], "lastScaleTime": null}});
        omit_empty_status(&mut h);
        assert_eq!(h, json!({"status": {"desiredReplicas": 0}}));
        let mut kept = json!({"status": {"currentReplicas": 2, "desiredReplicas": 3,
            "conditions": [{"type": "AbleToScale", "status": "True"}]}});
        let before = kept.clone();
        omit_empty_status(&mut kept);
        assert_eq!(kept, before);
    }

    #[test]
    fn v1_round_trip_keeps_v2_only_fields() {
        let mut h = hpa(
            json!({"maxReplicas": 5, "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
                {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}],
            "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}),
        );
        default_v2(&mut h);
        let v1 = v2_to_v1(h.clone());
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 50);
        assert!(v1["spec"].get("metrics").is_none());
        assert_eq!(v1_to_v2(v1), h);
    }

    #[test]
    fn a_scale_target_without_an_api_group_is_refused_on_create() {
        let with = |target: Value| {
            let mut h = hpa(json!({"maxReplicas": 5, "scaleTargetRef": target}));
            default_v2(&mut h);
            validate_v2(&h)
        };
        let missing = with(json!({"kind": "Deployment", "name": "web"}));
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert_eq!(missing[0].field, "spec.scaleTargetRef.apiVersion");
        assert_eq!(
            missing[0].message,
            "Invalid value: \"\": apiVersion must specify API group"
        );
        let core = with(json!({"kind": "Deployment", "name": "web", "apiVersion": "v1"}));
        assert_eq!(core[0].field, "spec.scaleTargetRef.apiVersion");
        let bad = with(json!({"kind": "Deployment", "name": "web", "apiVersion": "a/b/c"}));
        assert!(
            bad[0]
                .message
                .ends_with("unexpected GroupVersion string: a/b/c"),
            "{bad:?}"
        );
        // The one scalable core kind may name no group.
        assert!(with(json!({"kind": "ReplicationController", "name": "rc"})).is_empty());
        assert!(
            with(json!({"kind": "ReplicationController", "name": "rc", "apiVersion": "v1"}))
                .is_empty()
        );
        assert!(
            with(json!({"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"})).is_empty()
        );
    }

    #[test]
    fn object_metrics_may_name_a_core_kind_but_their_api_version_must_parse() {
        let with = |described: Value| {
            let mut h = hpa(json!({"maxReplicas": 5,
                "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                "metrics": [{"type": "Object", "object": {"describedObject": described,
                    "metric": {"name": "hits"}, "target": {"type": "Value", "value": "10"}}}]}));
            default_v2(&mut h);
            validate_v2(&h)
        };
        assert!(with(json!({"kind": "Service", "name": "s", "apiVersion": "v1"})).is_empty());
        assert!(with(json!({"kind": "Service", "name": "s"})).is_empty());
        let bad = with(json!({"kind": "Service", "name": "s", "apiVersion": "x/y/z"}));
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!(
            bad[0].field,
            "spec.metrics[0].object.describedObject.apiVersion"
        );
    }

    #[test]
    fn updates_keeping_the_stored_target_skip_the_api_version_check() {
        let stored = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "metrics": [{"type": "Object", "object": {"describedObject":
                {"kind": "Service", "name": "s", "apiVersion": "x/y/z"}}}]}});
        let same = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "other"}}});
        assert_eq!(api_version_ratchets(&same, &stored), (true, true));
        let changed = json!({"spec": {"scaleTargetRef":
            {"kind": "Deployment", "name": "web", "apiVersion": "v1"}}});
        assert!(!api_version_ratchets(&changed, &stored).0);
        let valid_objects =
            json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}}});
        assert_eq!(api_version_ratchets(&same, &valid_objects), (true, false));
    }
}
