//! Phase 1: which metrics the shell must fetch, or the rule that needs none.

use k8s_openapi::api::autoscaling::v2::{CrossVersionObjectReference, HorizontalPodAutoscaler};
use serde::Serialize;

use super::spec::{metric_selector, min_max, spec_metrics, zero_state};
use crate::config::DecisionConfig;
use crate::input::ScaleInfo;
use crate::selector::Selector;

/// One metric fetch the shell must perform.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum MetricQuery {
    /// `metrics.k8s.io` PodMetrics list for `selector` (Resource and ContainerResource).
    PodResource {
        /// `cpu`, `memory`, ...
        resource: String,
        /// The container, for ContainerResource.
        container: Option<String>,
        /// Pod selector (the scale's).
        selector: Selector,
    },
    /// `custom.metrics.k8s.io` `pods/*/<metric>` for `selector`.
    PodsCustom {
        /// Metric name.
        metric: String,
        /// Pod selector (the scale's).
        selector: Selector,
        /// `metricLabelSelector`.
        metric_selector: Selector,
    },
    /// `custom.metrics.k8s.io` single-object metric.
    Object {
        /// The object described.
        described_object: CrossVersionObjectReference,
        /// Metric name.
        metric: String,
        /// `metricLabelSelector`.
        metric_selector: Selector,
    },
    /// `external.metrics.k8s.io` series.
    External {
        /// Metric name.
        metric: String,
        /// `labelSelector` for the series.
        metric_selector: Selector,
    },
}

/// What to fetch for a reconcile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Why no metric is needed (a rule short-circuits), if so.
    pub early: Option<EarlyReason>,
    /// One entry per `spec.metrics` entry, in order; `None` where nothing can
    /// be fetched (invalid metric spec, or when `early` is set).
    pub queries: Vec<Option<MetricQuery>>,
}

/// Rules that decide without metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EarlyReason {
    /// Target at 0 replicas while autoscaling from zero is not allowed.
    ScalingDisabled,
    /// Current replicas above `maxReplicas`.
    AboveMax,
    /// Current replicas below `minReplicas`.
    BelowMin,
    /// The scale has no selector.
    SelectorRequired,
    /// The scale's selector does not parse.
    InvalidSelector,
}

/// Which rule applies before any metric (None = compute metrics).
pub(super) fn early_branch(
    hpa: &HorizontalPodAutoscaler,
    current: i32,
    config: &DecisionConfig,
) -> Option<EarlyReason> {
    let (min, max) = min_max(hpa);
    let (scaled_to_zero, can_from_zero) = zero_state(hpa, config);
    if current == 0 && !config.version().scaled_to_zero_condition() {
        // Through 1.35: zero replicas disable scaling unless minReplicas is 0.
        (min != 0).then_some(EarlyReason::ScalingDisabled)
    } else if current == 0 {
        if (min != 0 && scaled_to_zero) || can_from_zero {
            None
        } else {
            Some(EarlyReason::ScalingDisabled)
        }
    } else if current > max {
        Some(EarlyReason::AboveMax)
    } else if current < min {
        Some(EarlyReason::BelowMin)
    } else {
        None
    }
}

/// What to fetch for this reconcile.
pub fn plan(hpa: &HorizontalPodAutoscaler, scale: &ScaleInfo, config: &DecisionConfig) -> Plan {
    let metrics = spec_metrics(hpa);
    let none = |early| Plan {
        early: Some(early),
        queries: vec![None; metrics.len()],
    };
    if let Some(early) = early_branch(hpa, scale.spec_replicas, config) {
        return none(early);
    }
    if scale.selector.is_empty() {
        return none(EarlyReason::SelectorRequired);
    }
    let Ok(selector) = scale.parse_selector() else {
        return none(EarlyReason::InvalidSelector);
    };
    let queries = metrics
        .iter()
        .map(|m| match m.type_.as_str() {
            "Resource" => m.resource.as_ref().map(|r| MetricQuery::PodResource {
                resource: r.name.clone(),
                container: None,
                selector: selector.clone(),
            }),
            "ContainerResource" => {
                m.container_resource
                    .as_ref()
                    .map(|r| MetricQuery::PodResource {
                        resource: r.name.clone(),
                        container: Some(r.container.clone()),
                        selector: selector.clone(),
                    })
            }
            "Pods" => m.pods.as_ref().and_then(|p| {
                Some(MetricQuery::PodsCustom {
                    metric: p.metric.name.clone(),
                    selector: selector.clone(),
                    metric_selector: metric_selector(p.metric.selector.as_ref()).ok()?,
                })
            }),
            "Object" => m.object.as_ref().and_then(|o| {
                Some(MetricQuery::Object {
                    described_object: o.described_object.clone(),
                    metric: o.metric.name.clone(),
                    metric_selector: metric_selector(o.metric.selector.as_ref()).ok()?,
                })
            }),
            "External" => m.external.as_ref().and_then(|e| {
                Some(MetricQuery::External {
                    metric: e.metric.name.clone(),
                    metric_selector: metric_selector(e.metric.selector.as_ref()).ok()?,
                })
            }),
            _ => None,
        })
        .collect();
    Plan {
        early: None,
        queries,
    }
}
