//! The `keda.sh/v1alpha1` ScaledObject, as much of it as decides scaling,
//! read from YAML or JSON, and the checks KEDA's controller makes before it
//! creates an HPA (a ScaledObject failing them gets `Ready=False`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// The annotation that pauses a ScaledObject at a replica count.
pub const PAUSED_REPLICAS_ANNOTATION: &str = "autoscaling.keda.sh/paused-replicas";
/// The annotation that pauses a ScaledObject where it is.
pub const PAUSED_ANNOTATION: &str = "autoscaling.keda.sh/paused";
/// The annotation that stops scale-in only (the HPA's scale-down is disabled).
pub const PAUSED_SCALE_IN_ANNOTATION: &str = "autoscaling.keda.sh/paused-scale-in";
/// The annotation that stops scale-out only.
pub const PAUSED_SCALE_OUT_ANNOTATION: &str = "autoscaling.keda.sh/paused-scale-out";
/// The label (and External metric selector) naming the ScaledObject.
pub const OWNER_LABEL: &str = "scaledobject.keda.sh/name";

/// Why a ScaledObject cannot be read or would not be reconciled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScaledObjectError {
    /// The document is not a ScaledObject of `keda.sh/v1alpha1`.
    #[error(
        "{what}: apiVersion {api_version:?} kind {kind:?} is not a keda.sh/v1alpha1 ScaledObject"
    )]
    NotAScaledObject {
        what: String,
        api_version: String,
        kind: String,
    },
    /// A field does not parse (the path names it).
    #[error("{what}: field {path}: {message}")]
    Field {
        what: String,
        path: String,
        message: String,
    },
    /// The YAML itself does not parse.
    #[error("{what}: the YAML does not parse: {message}")]
    Yaml { what: String, message: String },
    /// KEDA refuses the spec (its controller sets `Ready=False` with this).
    #[error("ScaledObject {name}: {message}")]
    Invalid { name: String, message: String },
}

/// A ScaledObject: metadata and spec (KEDA's status is the operator's, see
/// [`super::operator`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaledObject {
    pub metadata: Metadata,
    pub spec: Spec,
}

/// The metadata that matters to KEDA.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// `spec`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spec {
    pub scale_target_ref: ScaleTarget,
    /// Seconds between the operator's polls (default 30).
    #[serde(default)]
    pub polling_interval: Option<i32>,
    /// Seconds after the last activity before scaling to idle/0 (default 300).
    #[serde(default)]
    pub cooldown_period: Option<i32>,
    /// Seconds after creation before the first scale to 0 (default 0).
    #[serde(default)]
    pub initial_cooldown_period: Option<i32>,
    #[serde(default)]
    pub idle_replica_count: Option<i32>,
    #[serde(default)]
    pub min_replica_count: Option<i32>,
    #[serde(default)]
    pub max_replica_count: Option<i32>,
    #[serde(default)]
    pub advanced: Option<Advanced>,
    pub triggers: Vec<Trigger>,
    #[serde(default)]
    pub fallback: Option<Fallback>,
}

/// `spec.scaleTargetRef` (apps/v1 Deployment unless said otherwise).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleTarget {
    pub name: String,
    #[serde(default)]
    pub api_version: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
}

impl ScaleTarget {
    /// The target's apiVersion, KEDA's default filled in.
    pub fn api_version(&self) -> &str {
        self.api_version.as_deref().unwrap_or("apps/v1")
    }

    /// The target's kind, KEDA's default filled in.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("Deployment")
    }
}

/// One entry of `spec.triggers`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    #[serde(rename = "type")]
    pub kind: String,
    /// The name `scalingModifiers.formula` uses.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// `AverageValue` (default), `Value`, or `Utilization` (cpu/memory).
    #[serde(default)]
    pub metric_type: Option<String>,
}

/// `spec.fallback`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fallback {
    pub failure_threshold: i32,
    pub replicas: i32,
    #[serde(default)]
    pub behavior: FallbackBehavior,
}

/// `spec.fallback.behavior`: which replica count the fallback aims at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FallbackBehavior {
    #[default]
    Static,
    CurrentReplicas,
    CurrentReplicasIfHigher,
    CurrentReplicasIfLower,
}

/// `spec.advanced`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Advanced {
    #[serde(default)]
    pub horizontal_pod_autoscaler_config: Option<HpaConfig>,
    #[serde(default)]
    pub restore_to_original_replica_count: bool,
    #[serde(default)]
    pub scaling_modifiers: ScalingModifiers,
}

/// `spec.advanced.horizontalPodAutoscalerConfig`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaConfig {
    #[serde(default)]
    pub name: Option<String>,
    /// Copied into the HPA as written.
    #[serde(default)]
    pub behavior: Option<Value>,
}

/// `spec.advanced.scalingModifiers`: one composite metric from a formula.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalingModifiers {
    #[serde(default)]
    pub formula: String,
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub activation_target: String,
    #[serde(default)]
    pub metric_type: Option<String>,
}

impl ScalingModifiers {
    /// KEDA's `IsUsingModifiers`: any field set.
    pub fn in_use(&self) -> bool {
        self != &Self::default()
    }
}

impl ScaledObject {
    /// Reads a ScaledObject from a YAML document; `what` names it in errors.
    pub fn from_yaml(text: &str, what: &str) -> Result<Self, ScaledObjectError> {
        let value: Value = serde_saphyr::from_str(text).map_err(|e| ScaledObjectError::Yaml {
            what: what.to_owned(),
            message: e.to_string(),
        })?;
        Self::from_value(&value, what)
    }

    /// Reads a ScaledObject from a JSON value (a parsed manifest).
    pub fn from_value(value: &Value, what: &str) -> Result<Self, ScaledObjectError> {
        let text = |k: &str| {
            value
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        if api_version != "keda.sh/v1alpha1" || kind != "ScaledObject" {
            return Err(ScaledObjectError::NotAScaledObject {
                what: what.to_owned(),
                api_version,
                kind,
            });
        }
        serde_path_to_error::deserialize(value).map_err(|e| ScaledObjectError::Field {
            what: what.to_owned(),
            path: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }

    /// The name (for messages and keys).
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// The scalingModifiers, when any field is set.
    pub fn modifiers(&self) -> Option<&ScalingModifiers> {
        self.spec
            .advanced
            .as_ref()
            .map(|a| &a.scaling_modifiers)
            .filter(|m| m.in_use())
    }

    /// `autoscaling.keda.sh/paused-replicas`, parsed as KEDA does (an int32).
    pub fn paused_replicas(&self) -> Result<Option<i32>, ScaledObjectError> {
        self.metadata
            .annotations
            .get(PAUSED_REPLICAS_ANNOTATION)
            .map(|v| {
                v.parse::<i32>().map_err(|e| {
                    self.invalid(format!(
                        "annotation {PAUSED_REPLICAS_ANNOTATION}={v:?}: {e}"
                    ))
                })
            })
            .transpose()
    }

    /// `autoscaling.keda.sh/paused`: a value that is not a boolean pauses too.
    pub fn paused(&self) -> bool {
        self.metadata
            .annotations
            .get(PAUSED_ANNOTATION)
            .is_some_and(|v| parse_go_bool(v).unwrap_or(true))
    }

    /// Whether one of the one-way pause annotations is true.
    pub fn pauses_scale(&self, annotation: &str) -> bool {
        self.metadata
            .annotations
            .get(annotation)
            .is_some_and(|v| parse_go_bool(v).unwrap_or(false))
    }

    /// The checks KEDA's controller makes before creating the HPA
    /// (`CheckReplicaCountBoundsAreValid`, `CheckFallbackValid`, unique
    /// trigger names, the scalingModifiers' target).
    pub fn validate(&self) -> Result<(), ScaledObjectError> {
        let spec = &self.spec;
        let min = match spec.min_replica_count {
            Some(_) => hpa_min_replicas(spec),
            None => 0,
        };
        let max = hpa_max_replicas(spec);
        if min > max {
            return Err(self.invalid(format!(
                "MinReplicaCount={min} must be less than MaxReplicaCount={max}"
            )));
        }
        if let Some(idle) = spec.idle_replica_count
            && idle >= min
        {
            return Err(self.invalid(format!(
                "IdleReplicaCount={idle} must be less than MinReplicaCount={min}"
            )));
        }
        let mut names = std::collections::BTreeSet::new();
        for t in &spec.triggers {
            if let Some(n) = t.name.as_deref().filter(|n| !n.is_empty())
                && !names.insert(n)
            {
                return Err(self.invalid(format!("triggerName {n:?} is defined multiple times")));
            }
        }
        if spec.triggers.is_empty() {
            return Err(self.invalid("no triggers defined".to_owned()));
        }
        if let Some(f) = &spec.fallback {
            if f.failure_threshold < 0 || f.replicas < 0 {
                return Err(self.invalid(format!(
                    "FailureThreshold={} & Replicas={} must both be greater than or equal to 0",
                    f.failure_threshold, f.replicas
                )));
            }
            for t in &spec.triggers {
                if matches!(t.kind.as_str(), "cpu" | "memory") {
                    return Err(self.invalid(format!(
                        "type is {}, but fallback it is not supported by the CPU & memory scalers",
                        t.kind
                    )));
                }
            }
        }
        if let Some(m) = self.modifiers() {
            if m.formula.is_empty() {
                return Err(self.invalid("scalingModifiers.formula is empty".to_owned()));
            }
            let target: f64 = m.target.parse().map_err(|_| {
                self.invalid(format!(
                    "scalingModifiers.target {:?} is not a number",
                    m.target
                ))
            })?;
            if target <= 0.0 {
                return Err(
                    self.invalid(format!("scalingModifiers.target {target} must be above 0"))
                );
            }
            if !m.activation_target.is_empty() && m.activation_target.parse::<f64>().is_err() {
                return Err(self.invalid(format!(
                    "scalingModifiers.activationTarget {:?} is not a number",
                    m.activation_target
                )));
            }
            if spec
                .triggers
                .iter()
                .any(|t| t.name.as_deref().unwrap_or_default().is_empty())
            {
                return Err(
                    self.invalid("scalingModifiers.formula needs every trigger named".to_owned())
                );
            }
            super::formula::Expr::parse(&m.formula).map_err(|e| {
                self.invalid(format!("scalingModifiers.formula {:?}: {e}", m.formula))
            })?;
        }
        Ok(())
    }

    pub(crate) fn invalid(&self, message: String) -> ScaledObjectError {
        ScaledObjectError::Invalid {
            name: self.metadata.name.clone(),
            message,
        }
    }
}

/// The HPA's `minReplicas`: `minReplicaCount` when above 0, else 1 (an HPA
/// cannot go to 0; KEDA's operator does).
pub fn hpa_min_replicas(spec: &Spec) -> i32 {
    spec.min_replica_count.filter(|m| *m > 0).unwrap_or(1)
}

/// The HPA's `maxReplicas`: `maxReplicaCount`, else 100.
pub fn hpa_max_replicas(spec: &Spec) -> i32 {
    spec.max_replica_count.unwrap_or(100)
}

/// Go's `strconv.ParseBool`.
fn parse_go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn so(yaml: &str) -> ScaledObject {
        ScaledObject::from_yaml(yaml, "test").unwrap()
    }

    const BASE: &str = "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: web}\n";

    #[test]
    fn a_scaled_object_reads_from_yaml_with_defaults() {
        let so = so(&format!(
            "{BASE}spec:\n  scaleTargetRef: {{name: web}}\n  triggers:\n  - type: rabbitmq\n    metadata: {{queueName: orders, value: \"20\"}}\n"
        ));
        assert_eq!(so.spec.scale_target_ref.kind(), "Deployment");
        assert_eq!(so.spec.scale_target_ref.api_version(), "apps/v1");
        assert_eq!(so.spec.triggers[0].metadata["value"], "20");
        assert_eq!(hpa_min_replicas(&so.spec), 1);
        assert_eq!(hpa_max_replicas(&so.spec), 100);
        so.validate().unwrap();
    }

    #[test]
    fn a_bad_field_is_named_by_its_path() {
        let err = ScaledObject::from_yaml(
            &format!("{BASE}spec:\n  scaleTargetRef: {{name: web}}\n  minReplicaCount: lots\n  triggers: []\n"),
            "so.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("so.yaml: field spec.minReplicaCount"), "{err}");
    }

    #[test]
    fn another_kind_is_refused() {
        let err = ScaledObject::from_yaml("apiVersion: v1\nkind: Pod\n", "x").unwrap_err();
        assert!(matches!(err, ScaledObjectError::NotAScaledObject { .. }));
    }

    #[test]
    fn replica_bounds_are_checked_as_keda_does() {
        let trig = "  triggers:\n  - type: cron\n    metadata: {timezone: UTC, start: 0 * * * *, end: 1 * * * *, desiredReplicas: \"1\"}\n";
        let cases = [
            (
                "  minReplicaCount: 10\n  maxReplicaCount: 5\n",
                Some("MinReplicaCount=10 must be less than MaxReplicaCount=5"),
            ),
            (
                "  idleReplicaCount: 10\n  minReplicaCount: 5\n",
                Some("IdleReplicaCount=10 must be less than MinReplicaCount=5"),
            ),
            // Without minReplicaCount the minimum is 0, so idle 10 >= 0.
            (
                "  idleReplicaCount: 10\n  maxReplicaCount: 5\n",
                Some("IdleReplicaCount=10 must be less than MinReplicaCount=0"),
            ),
            ("  idleReplicaCount: 0\n  minReplicaCount: 1\n", None),
            ("  minReplicaCount: 0\n", None),
        ];
        for (bounds, want) in cases {
            let s = so(&format!(
                "{BASE}spec:\n  scaleTargetRef: {{name: web}}\n{bounds}{trig}"
            ));
            match (s.validate(), want) {
                (Ok(()), None) => {}
                (Err(e), Some(w)) => assert!(e.to_string().contains(w), "{bounds}: {e}"),
                (got, want) => panic!("{bounds}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_trigger_name_used_twice_is_refused() {
        let s = so(&format!(
            "{BASE}spec:\n  scaleTargetRef: {{name: web}}\n  triggers:\n  - {{type: prometheus, name: a, metadata: {{threshold: \"1\"}}}}\n  - {{type: prometheus, name: a, metadata: {{threshold: \"1\"}}}}\n"
        ));
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("\"a\" is defined multiple times")
        );
    }

    #[test]
    fn pause_annotations_parse_as_go_does() {
        let with = |k: &str, v: &str| {
            let mut s = so(&format!(
                "{BASE}spec:\n  scaleTargetRef: {{name: web}}\n  triggers: []\n"
            ));
            s.metadata.annotations.insert(k.to_owned(), v.to_owned());
            s
        };
        assert!(with(PAUSED_ANNOTATION, "true").paused());
        assert!(!with(PAUSED_ANNOTATION, "false").paused());
        assert!(
            with(PAUSED_ANNOTATION, "yes please").paused(),
            "not a bool: paused"
        );
        assert_eq!(
            with(PAUSED_REPLICAS_ANNOTATION, "3").paused_replicas(),
            Ok(Some(3))
        );
        assert!(
            with(PAUSED_REPLICAS_ANNOTATION, "three")
                .paused_replicas()
                .is_err()
        );
    }
}
