//! What the HPA's spec and stored status say, read the way every phase needs.

use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, MetricSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::calc::Tolerances;
use crate::config::DecisionConfig;
use crate::quantity::Quantity;
use crate::selector::Selector;
use crate::status::find_condition;

pub(super) fn reference(hpa: &HorizontalPodAutoscaler) -> String {
    let (kind, name) = (
        hpa.spec.scale_target_ref.kind.as_str(),
        hpa.spec.scale_target_ref.name.as_str(),
    );
    let namespace = hpa.metadata.namespace.as_deref().unwrap_or("");
    [kind, "/", namespace, "/", name].concat()
}

pub(super) fn spec_metrics(hpa: &HorizontalPodAutoscaler) -> &[MetricSpec] {
    hpa.spec.metrics.as_deref().unwrap_or(&[])
}

pub(super) fn has_object_or_external(hpa: &HorizontalPodAutoscaler) -> bool {
    spec_metrics(hpa)
        .iter()
        .any(|m| m.type_ == "Object" || m.type_ == "External")
}

pub(super) fn conditions_of(
    hpa: &HorizontalPodAutoscaler,
) -> Vec<HorizontalPodAutoscalerCondition> {
    hpa.status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
}

/// Whether the `ScaledToZero` condition is kept: under the gate, from 1.36
/// ([`crate::KubernetesVersion::scaled_to_zero_condition`]).
pub(super) fn keeps_scaled_to_zero(config: &DecisionConfig) -> bool {
    config.feature_gates.scale_to_zero() && config.version().scaled_to_zero_condition()
}

/// Whether this reconcile removes a stored `ScaledToZero` condition: from
/// 1.36 with the gate off (through 1.35 no code knows the condition).
pub(super) fn drops_scaled_to_zero(config: &DecisionConfig) -> bool {
    !config.feature_gates.scale_to_zero() && config.version().scaled_to_zero_condition()
}

/// Scale-to-zero state: (ScaledToZero=True under the gate, can scale from zero).
pub(super) fn zero_state(hpa: &HorizontalPodAutoscaler, config: &DecisionConfig) -> (bool, bool) {
    let gate = keeps_scaled_to_zero(config);
    let conditions = hpa
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let scaled_to_zero =
        gate && find_condition(conditions, "ScaledToZero").is_some_and(|c| c.status == "True");
    (
        scaled_to_zero,
        scaled_to_zero && has_object_or_external(hpa),
    )
}

pub(super) fn min_max(hpa: &HorizontalPodAutoscaler) -> (i32, i32) {
    (hpa.spec.min_replicas.unwrap_or(1), hpa.spec.max_replicas)
}

pub(super) fn metric_selector(sel: Option<&LabelSelector>) -> Result<Selector, String> {
    Selector::from_label_selector(sel).map_err(|e| e.to_string())
}

/// Go's `%+v` of a `*metav1.LabelSelector` (its generated `String()`), which
/// upstream embeds in external-metric names and errors.
pub fn go_label_selector_string(sel: Option<&LabelSelector>) -> String {
    let Some(sel) = sel else {
        return "nil".to_owned();
    };
    let labels: String = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let exprs: String = sel
        .match_expressions
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e.key,
                e.operator,
                e.values.clone().unwrap_or_default().join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}

/// Tolerances for this HPA: the flag, or per-HPA values when the gate is on.
pub fn tolerances_for(hpa: &HorizontalPodAutoscaler, config: &DecisionConfig) -> Tolerances {
    let mut t = Tolerances::symmetric(config.tolerance);
    if config.feature_gates.configurable_tolerance()
        && let Some(b) = hpa.spec.behavior.as_ref()
    {
        let get = |r: Option<&HPAScalingRules>| {
            r.and_then(|r| r.tolerance.as_ref())
                .and_then(|q| Quantity::parse(&q.0).ok())
                .map(|q| q.as_f64())
        };
        if let Some(up) = get(b.scale_up.as_ref()) {
            t.scale_up = up;
        }
        if let Some(down) = get(b.scale_down.as_ref()) {
            t.scale_down = down;
        }
    }
    t
}
