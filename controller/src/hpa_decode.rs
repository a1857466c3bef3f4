//! A cached HPA's text read into k8s-openapi's types without `serde_json`:
//! the fast path of [`crate::hpa_cache::CachedHpa::hpa`], taken by every
//! sync.
//!
//! Why: `serde_json` through k8s-openapi's visitors cost about 35,000
//! instructions per HPA, a sixth of a steady sync (docs/load-report.md):
//! each key goes through a field visitor, each value through an
//! `Option`'s. This reads the text once with [`Scan`], strings eight
//! bytes at a time, and matches keys directly.
//!
//! It is sound by being strict, as the metrics lists' scanner is: it gives
//! up (`None`) on anything it does not read exactly as k8s-openapi does,
//! and the caller then decodes with `serde_json`. Given up on: a `null`
//! anywhere it reads a value, a key it reads given twice, a string with an
//! escape, a number that is not an integer in its field's range, an
//! `apiVersion` or `kind` other than the HPA's, managed fields, and any
//! text after the object. Unknown keys are skipped (checked to be JSON),
//! as k8s-openapi skips them; a required field left out reads as its
//! default, as k8s-openapi reads it.

use std::collections::BTreeMap;

use k8s_openapi::api::autoscaling::v2::{
    ContainerResourceMetricSource, ContainerResourceMetricStatus, CrossVersionObjectReference,
    ExternalMetricSource, ExternalMetricStatus, HPAScalingPolicy, HPAScalingRules,
    HorizontalPodAutoscaler, HorizontalPodAutoscalerBehavior, HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerSpec, HorizontalPodAutoscalerStatus, MetricIdentifier, MetricSpec,
    MetricStatus, MetricTarget, MetricValueStatus, ObjectMetricSource, ObjectMetricStatus,
    PodsMetricSource, PodsMetricStatus, ResourceMetricSource, ResourceMetricStatus,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference, Time,
};

use crate::json_scan::Scan;

/// The HPA `text` holds, or `None` when this reader gives up on it (see
/// the module documentation): `serde_json` then reads it.
pub fn hpa(text: &str) -> Option<HorizontalPodAutoscaler> {
    let mut scan = Scan::new(text);
    let hpa = read_hpa(&mut scan)?;
    // Only whitespace may follow.
    scan.peek().is_none().then_some(hpa)
}

/// Keeps a value read into `slot`; `None` when the key came before (or
/// the value did not read).
fn once<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value?);
    Some(())
}

fn string(scan: &mut Scan<'_>) -> Option<String> {
    scan.string().map(str::to_owned)
}

fn int32(scan: &mut Scan<'_>) -> Option<i32> {
    i32::try_from(scan.integer()?).ok()
}

fn quantity(scan: &mut Scan<'_>) -> Option<Quantity> {
    string(scan).map(Quantity)
}

/// A time as k8s-openapi reads one: jiff's parser of RFC 3339 text, but
/// for the one form every cached HPA holds (k8s-openapi writes it).
fn time(scan: &mut Scan<'_>) -> Option<Time> {
    let text = scan.string()?;
    utc_second(text).or_else(|| text.parse().ok()).map(Time)
}

/// `YYYY-MM-DDTHH:MM:SSZ` without jiff's general parser (550 instructions
/// a time, four times a sync), the date and time checked by jiff's own
/// constructors; `None` for any other text (a fraction, an offset, a
/// leap second), which jiff's parser then reads.
fn utc_second(text: &str) -> Option<jiff::Timestamp> {
    let b: &[u8; 20] = text.as_bytes().try_into().ok()?;
    let separators = [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'Z'),
    ];
    if separators.iter().any(|&(at, want)| b[at] != want) {
        return None;
    }
    let number = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0i16, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + i16::from(d - b'0'))
        })
    };
    let two = |from: usize| number(from, from + 2).and_then(|n| i8::try_from(n).ok());
    let date = jiff::civil::Date::new(number(0, 4)?, two(5)?, two(8)?).ok()?;
    let time = jiff::civil::Time::new(two(11)?, two(14)?, two(17)?, 0).ok()?;
    jiff::tz::Offset::UTC
        .to_timestamp(date.to_datetime(time))
        .ok()
}

fn strings(scan: &mut Scan<'_>) -> Option<Vec<String>> {
    list(scan, string)
}

fn list<T>(
    scan: &mut Scan<'_>,
    mut read: impl FnMut(&mut Scan<'_>) -> Option<T>,
) -> Option<Vec<T>> {
    let mut items = Vec::new();
    scan.array(&mut |scan| {
        items.push(read(scan)?);
        Some(())
    })?;
    Some(items)
}

/// A string map (labels, annotations, a selector's `matchLabels`); a key
/// given twice is given up on (serde keeps the last).
fn string_map(scan: &mut Scan<'_>) -> Option<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    scan.object(|scan, key| {
        let value = string(scan)?;
        map.insert(key.to_owned(), value).is_none().then_some(())
    })?;
    Some(map)
}

fn read_hpa(scan: &mut Scan<'_>) -> Option<HorizontalPodAutoscaler> {
    let (mut api_version, mut kind) = (None, None);
    let (mut metadata, mut spec, mut status) = (None, None, None);
    scan.object(|scan, key| match key {
        "apiVersion" => once(
            &mut api_version,
            scan.string().filter(|v| *v == "autoscaling/v2"),
        ),
        "kind" => once(
            &mut kind,
            scan.string().filter(|k| *k == "HorizontalPodAutoscaler"),
        ),
        "metadata" => once(&mut metadata, object_meta(scan)),
        "spec" => once(&mut spec, hpa_spec(scan)),
        "status" => once(&mut status, hpa_status(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(HorizontalPodAutoscaler {
        metadata: metadata.unwrap_or_default(),
        spec: spec.unwrap_or_default(),
        status,
    })
}

fn object_meta(scan: &mut Scan<'_>) -> Option<ObjectMeta> {
    let mut meta = ObjectMeta::default();
    scan.object(|scan, key| match key {
        "annotations" => once(&mut meta.annotations, string_map(scan)),
        "creationTimestamp" => once(&mut meta.creation_timestamp, time(scan)),
        "deletionGracePeriodSeconds" => {
            once(&mut meta.deletion_grace_period_seconds, scan.integer())
        }
        "deletionTimestamp" => once(&mut meta.deletion_timestamp, time(scan)),
        "finalizers" => once(&mut meta.finalizers, strings(scan)),
        "generateName" => once(&mut meta.generate_name, string(scan)),
        "generation" => once(&mut meta.generation, scan.integer()),
        "labels" => once(&mut meta.labels, string_map(scan)),
        // The cache drops them: a text with them takes the slow path.
        "managedFields" => None,
        "name" => once(&mut meta.name, string(scan)),
        "namespace" => once(&mut meta.namespace, string(scan)),
        "ownerReferences" => once(&mut meta.owner_references, list(scan, owner_reference)),
        "resourceVersion" => once(&mut meta.resource_version, string(scan)),
        "selfLink" => once(&mut meta.self_link, string(scan)),
        "uid" => once(&mut meta.uid, string(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(meta)
}

fn owner_reference(scan: &mut Scan<'_>) -> Option<OwnerReference> {
    let (mut api_version, mut kind, mut name, mut uid) = (None, None, None, None);
    let (mut block_owner_deletion, mut controller) = (None, None);
    scan.object(|scan, key| match key {
        "apiVersion" => once(&mut api_version, string(scan)),
        "blockOwnerDeletion" => once(&mut block_owner_deletion, scan.boolean()),
        "controller" => once(&mut controller, scan.boolean()),
        "kind" => once(&mut kind, string(scan)),
        "name" => once(&mut name, string(scan)),
        "uid" => once(&mut uid, string(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(OwnerReference {
        api_version: api_version.unwrap_or_default(),
        block_owner_deletion,
        controller,
        kind: kind.unwrap_or_default(),
        name: name.unwrap_or_default(),
        uid: uid.unwrap_or_default(),
    })
}

fn hpa_spec(scan: &mut Scan<'_>) -> Option<HorizontalPodAutoscalerSpec> {
    let (mut behavior, mut max_replicas, mut metrics) = (None, None, None);
    let (mut min_replicas, mut scale_target_ref) = (None, None);
    scan.object(|scan, key| match key {
        "behavior" => once(&mut behavior, hpa_behavior(scan)),
        "maxReplicas" => once(&mut max_replicas, int32(scan)),
        "metrics" => once(&mut metrics, list(scan, metric_spec)),
        "minReplicas" => once(&mut min_replicas, int32(scan)),
        "scaleTargetRef" => once(&mut scale_target_ref, object_reference(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(HorizontalPodAutoscalerSpec {
        behavior,
        max_replicas: max_replicas.unwrap_or_default(),
        metrics,
        min_replicas,
        scale_target_ref: scale_target_ref.unwrap_or_default(),
    })
}

fn hpa_behavior(scan: &mut Scan<'_>) -> Option<HorizontalPodAutoscalerBehavior> {
    let mut behavior = HorizontalPodAutoscalerBehavior::default();
    scan.object(|scan, key| match key {
        "scaleDown" => once(&mut behavior.scale_down, scaling_rules(scan)),
        "scaleUp" => once(&mut behavior.scale_up, scaling_rules(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(behavior)
}

fn scaling_rules(scan: &mut Scan<'_>) -> Option<HPAScalingRules> {
    let mut rules = HPAScalingRules::default();
    scan.object(|scan, key| match key {
        "policies" => once(&mut rules.policies, list(scan, scaling_policy)),
        "selectPolicy" => once(&mut rules.select_policy, string(scan)),
        "stabilizationWindowSeconds" => once(&mut rules.stabilization_window_seconds, int32(scan)),
        "tolerance" => once(&mut rules.tolerance, quantity(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(rules)
}

fn scaling_policy(scan: &mut Scan<'_>) -> Option<HPAScalingPolicy> {
    let (mut period_seconds, mut type_, mut value) = (None, None, None);
    scan.object(|scan, key| match key {
        "periodSeconds" => once(&mut period_seconds, int32(scan)),
        "type" => once(&mut type_, string(scan)),
        "value" => once(&mut value, int32(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(HPAScalingPolicy {
        period_seconds: period_seconds.unwrap_or_default(),
        type_: type_.unwrap_or_default(),
        value: value.unwrap_or_default(),
    })
}

fn object_reference(scan: &mut Scan<'_>) -> Option<CrossVersionObjectReference> {
    let (mut api_version, mut kind, mut name) = (None, None, None);
    scan.object(|scan, key| match key {
        "apiVersion" => once(&mut api_version, string(scan)),
        "kind" => once(&mut kind, string(scan)),
        "name" => once(&mut name, string(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(CrossVersionObjectReference {
        api_version,
        kind: kind.unwrap_or_default(),
        name: name.unwrap_or_default(),
    })
}

fn metric_identifier(scan: &mut Scan<'_>) -> Option<MetricIdentifier> {
    let (mut name, mut selector) = (None, None);
    scan.object(|scan, key| match key {
        "name" => once(&mut name, string(scan)),
        "selector" => once(&mut selector, label_selector(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(MetricIdentifier {
        name: name.unwrap_or_default(),
        selector,
    })
}

fn label_selector(scan: &mut Scan<'_>) -> Option<LabelSelector> {
    let mut selector = LabelSelector::default();
    scan.object(|scan, key| match key {
        "matchExpressions" => once(&mut selector.match_expressions, list(scan, requirement)),
        "matchLabels" => once(&mut selector.match_labels, string_map(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(selector)
}

fn requirement(scan: &mut Scan<'_>) -> Option<LabelSelectorRequirement> {
    let (mut key_, mut operator, mut values) = (None, None, None);
    scan.object(|scan, key| match key {
        "key" => once(&mut key_, string(scan)),
        "operator" => once(&mut operator, string(scan)),
        "values" => once(&mut values, strings(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(LabelSelectorRequirement {
        key: key_.unwrap_or_default(),
        operator: operator.unwrap_or_default(),
        values,
    })
}

fn metric_target(scan: &mut Scan<'_>) -> Option<MetricTarget> {
    let (mut average_utilization, mut average_value) = (None, None);
    let (mut type_, mut value) = (None, None);
    scan.object(|scan, key| match key {
        "averageUtilization" => once(&mut average_utilization, int32(scan)),
        "averageValue" => once(&mut average_value, quantity(scan)),
        "type" => once(&mut type_, string(scan)),
        "value" => once(&mut value, quantity(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(MetricTarget {
        average_utilization,
        average_value,
        type_: type_.unwrap_or_default(),
        value,
    })
}

fn metric_value_status(scan: &mut Scan<'_>) -> Option<MetricValueStatus> {
    let mut current = MetricValueStatus::default();
    scan.object(|scan, key| match key {
        "averageUtilization" => once(&mut current.average_utilization, int32(scan)),
        "averageValue" => once(&mut current.average_value, quantity(scan)),
        "value" => once(&mut current.value, quantity(scan)),
        _ => scan.value().map(drop),
    })?;
    Some(current)
}

/// The members every metric source and status is made of, read once
/// each; which ones a type takes is its own reader's business.
#[derive(Default)]
struct MetricParts {
    container: Option<String>,
    name: Option<String>,
    metric: Option<MetricIdentifier>,
    described_object: Option<CrossVersionObjectReference>,
    target: Option<MetricTarget>,
    current: Option<MetricValueStatus>,
}

impl MetricParts {
    /// An object of the members `accepts` names (any other is skipped).
    fn read(scan: &mut Scan<'_>, accepts: &[&str]) -> Option<Self> {
        let mut parts = Self::default();
        scan.object(|scan, key| {
            if !accepts.contains(&key) {
                return scan.value().map(drop);
            }
            match key {
                "container" => once(&mut parts.container, string(scan)),
                "name" => once(&mut parts.name, string(scan)),
                "metric" => once(&mut parts.metric, metric_identifier(scan)),
                "describedObject" => once(&mut parts.described_object, object_reference(scan)),
                "target" => once(&mut parts.target, metric_target(scan)),
                "current" => once(&mut parts.current, metric_value_status(scan)),
                _ => scan.value().map(drop),
            }
        })?;
        Some(parts)
    }
}

fn metric_spec(scan: &mut Scan<'_>) -> Option<MetricSpec> {
    let mut spec = MetricSpec::default();
    let mut type_ = None;
    scan.object(|scan, key| match key {
        "containerResource" => {
            let parts = MetricParts::read(scan, &["container", "name", "target"])?;
            let source = ContainerResourceMetricSource {
                container: parts.container.unwrap_or_default(),
                name: parts.name.unwrap_or_default(),
                target: parts.target.unwrap_or_default(),
            };
            once(&mut spec.container_resource, Some(source))
        }
        "external" => {
            let parts = MetricParts::read(scan, &["metric", "target"])?;
            let source = ExternalMetricSource {
                metric: parts.metric.unwrap_or_default(),
                target: parts.target.unwrap_or_default(),
            };
            once(&mut spec.external, Some(source))
        }
        "object" => {
            let parts = MetricParts::read(scan, &["describedObject", "metric", "target"])?;
            let source = ObjectMetricSource {
                described_object: parts.described_object.unwrap_or_default(),
                metric: parts.metric.unwrap_or_default(),
                target: parts.target.unwrap_or_default(),
            };
            once(&mut spec.object, Some(source))
        }
        "pods" => {
            let parts = MetricParts::read(scan, &["metric", "target"])?;
            let source = PodsMetricSource {
                metric: parts.metric.unwrap_or_default(),
                target: parts.target.unwrap_or_default(),
            };
            once(&mut spec.pods, Some(source))
        }
        "resource" => {
            let parts = MetricParts::read(scan, &["name", "target"])?;
            let source = ResourceMetricSource {
                name: parts.name.unwrap_or_default(),
                target: parts.target.unwrap_or_default(),
            };
            once(&mut spec.resource, Some(source))
        }
        "type" => once(&mut type_, string(scan)),
        _ => scan.value().map(drop),
    })?;
    spec.type_ = type_.unwrap_or_default();
    Some(spec)
}

fn metric_status(scan: &mut Scan<'_>) -> Option<MetricStatus> {
    let mut status = MetricStatus::default();
    let mut type_ = None;
    scan.object(|scan, key| match key {
        "containerResource" => {
            let parts = MetricParts::read(scan, &["container", "current", "name"])?;
            let source = ContainerResourceMetricStatus {
                container: parts.container.unwrap_or_default(),
                current: parts.current.unwrap_or_default(),
                name: parts.name.unwrap_or_default(),
            };
            once(&mut status.container_resource, Some(source))
        }
        "external" => {
            let parts = MetricParts::read(scan, &["current", "metric"])?;
            let source = ExternalMetricStatus {
                current: parts.current.unwrap_or_default(),
                metric: parts.metric.unwrap_or_default(),
            };
            once(&mut status.external, Some(source))
        }
        "object" => {
            let parts = MetricParts::read(scan, &["current", "describedObject", "metric"])?;
            let source = ObjectMetricStatus {
                current: parts.current.unwrap_or_default(),
                described_object: parts.described_object.unwrap_or_default(),
                metric: parts.metric.unwrap_or_default(),
            };
            once(&mut status.object, Some(source))
        }
        "pods" => {
            let parts = MetricParts::read(scan, &["current", "metric"])?;
            let source = PodsMetricStatus {
                current: parts.current.unwrap_or_default(),
                metric: parts.metric.unwrap_or_default(),
            };
            once(&mut status.pods, Some(source))
        }
        "resource" => {
            let parts = MetricParts::read(scan, &["current", "name"])?;
            let source = ResourceMetricStatus {
                current: parts.current.unwrap_or_default(),
                name: parts.name.unwrap_or_default(),
            };
            once(&mut status.resource, Some(source))
        }
        "type" => once(&mut type_, string(scan)),
        _ => scan.value().map(drop),
    })?;
    status.type_ = type_.unwrap_or_default();
    Some(status)
}

fn hpa_status(scan: &mut Scan<'_>) -> Option<HorizontalPodAutoscalerStatus> {
    let mut status = HorizontalPodAutoscalerStatus::default();
    let mut desired_replicas = None;
    scan.object(|scan, key| match key {
        "conditions" => once(&mut status.conditions, list(scan, condition)),
        "currentMetrics" => once(&mut status.current_metrics, list(scan, metric_status)),
        "currentReplicas" => once(&mut status.current_replicas, int32(scan)),
        "desiredReplicas" => once(&mut desired_replicas, int32(scan)),
        "lastScaleTime" => once(&mut status.last_scale_time, time(scan)),
        "observedGeneration" => once(&mut status.observed_generation, scan.integer()),
        _ => scan.value().map(drop),
    })?;
    status.desired_replicas = desired_replicas.unwrap_or_default();
    Some(status)
}

fn condition(scan: &mut Scan<'_>) -> Option<HorizontalPodAutoscalerCondition> {
    let mut condition = HorizontalPodAutoscalerCondition::default();
    let (mut status, mut type_) = (None, None);
    scan.object(|scan, key| match key {
        "lastTransitionTime" => once(&mut condition.last_transition_time, time(scan)),
        "message" => once(&mut condition.message, string(scan)),
        "observedGeneration" => once(&mut condition.observed_generation, scan.integer()),
        "reason" => once(&mut condition.reason, string(scan)),
        "status" => once(&mut status, string(scan)),
        "type" => once(&mut type_, string(scan)),
        _ => scan.value().map(drop),
    })?;
    condition.status = status.unwrap_or_default();
    condition.type_ = type_.unwrap_or_default();
    Some(condition)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field k8s-openapi's HPA types have, each source and status
    /// type once, in an order and spacing of a hand-written manifest.
    const FULL: &str = r#"{
      "kind": "HorizontalPodAutoscaler", "apiVersion": "autoscaling/v2",
      "metadata": {
        "name": "web", "namespace": "shop", "uid": "4f1c-9a", "resourceVersion": "812",
        "generation": 3, "creationTimestamp": "2026-11-30T10:00:00Z",
        "deletionTimestamp": "2026-11-30T11:00:00.5+01:00", "deletionGracePeriodSeconds": 30,
        "generateName": "web-", "selfLink": "/apis/x", "finalizers": ["a/b", "c"],
        "labels": {"app": "web", "tier": ""}, "annotations": {"note": "ünïcode ✓"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
          "uid": "77", "controller": true, "blockOwnerDeletion": false}],
        "unknownField": {"nested": [1, 2.5e3, null, true]}
      },
      "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": -1, "maxReplicas": 2147483647,
        "metrics": [
          {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
          {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app",
            "target": {"type": "AverageValue", "averageValue": "512Mi"}}},
          {"type": "Pods", "pods": {"metric": {"name": "rps", "selector": {"matchLabels": {"verb": "GET"}}},
            "target": {"type": "AverageValue", "averageValue": "10"}}},
          {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "main"},
            "metric": {"name": "hits"}, "target": {"type": "Value", "value": "2k"}}},
          {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchExpressions": [
            {"key": "q", "operator": "In", "values": ["a", "b"]}, {"key": "r", "operator": "Exists"}]}},
            "target": {"type": "AverageValue", "averageValue": "30", "value": "1"}}}
        ],
        "behavior": {
          "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "tolerance": "0.05",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}, {"type": "Pods", "value": 4, "periodSeconds": 60}]},
          "scaleDown": {"selectPolicy": "Disabled", "policies": []}
        }
      },
      "status": {
        "observedGeneration": 3, "lastScaleTime": "2026-11-30T10:05:00Z",
        "currentReplicas": 4, "desiredReplicas": 5,
        "currentMetrics": [
          {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 75, "averageValue": "750m"}}},
          {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app", "current": {"averageValue": "400Mi"}}},
          {"type": "Pods", "pods": {"metric": {"name": "rps"}, "current": {"averageValue": "12"}}},
          {"type": "Object", "object": {"describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
            "metric": {"name": "hits"}, "current": {"value": "2500m"}}},
          {"type": "External", "external": {"metric": {"name": "queue"}, "current": {"value": "31", "averageValue": "7750m"}}},
          {"type": ""}
        ],
        "conditions": [
          {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-11-30T10:00:00Z",
            "reason": "ReadyForNewScale", "message": "recommended size matches current size", "observedGeneration": 3},
          {"type": "ScalingActive", "status": "False"}
        ]
      }
    }"#;

    fn by_serde(text: &str) -> Option<HorizontalPodAutoscaler> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn reads_every_field_as_serde_does() {
        let read = hpa(FULL).expect("the fast path reads it");
        assert_eq!(Some(&read), by_serde(FULL).as_ref());
        // Not vacuous: the fields came through.
        let status = read.status.as_ref().expect("status");
        assert_eq!(status.current_metrics.as_ref().map(Vec::len), Some(6));
        assert_eq!(read.spec.max_replicas, i32::MAX);
        assert_eq!(
            read.metadata.owner_references.as_ref().map(Vec::len),
            Some(1)
        );
        // And as the cache writes it: serde's own text, compact (its times
        // to the second, so not the text above).
        let written = serde_json::to_string(&read).expect("serialize");
        assert!(hpa(&written).is_some());
        assert_eq!(hpa(&written), by_serde(&written));
    }

    #[test]
    fn reads_the_smallest_hpas() {
        for text in [
            "{}",
            r#"{"metadata":{},"spec":{}}"#,
            r#" {"spec":{"metrics":[]},"status":{"conditions":[]}} "#,
        ] {
            assert_eq!(hpa(text), by_serde(text), "{text}");
            assert!(hpa(text).is_some(), "{text}");
        }
    }

    #[test]
    fn gives_up_on_what_it_does_not_read() {
        for (change, from, to) in [
            ("a null", r#""minReplicas": -1"#, r#""minReplicas": null"#),
            (
                "a key twice",
                r#""minReplicas": -1"#,
                r#""minReplicas": -1, "minReplicas": 2"#,
            ),
            (
                "a label twice",
                r#""tier": """#,
                r#""tier": "", "app": "api""#,
            ),
            (
                "an escape",
                r#""name": "web", "namespace""#,
                r#""name": "w\u0065b", "namespace""#,
            ),
            (
                "another kind",
                r#""kind": "HorizontalPodAutoscaler""#,
                r#""kind": "Scale""#,
            ),
            (
                "another version",
                r#""apiVersion": "autoscaling/v2""#,
                r#""apiVersion": "autoscaling/v1""#,
            ),
            (
                "a number quantity",
                r#""averageValue": "10""#,
                r#""averageValue": 10"#,
            ),
            (
                "a fraction",
                r#""averageUtilization": 60"#,
                r#""averageUtilization": 60.0"#,
            ),
            ("beyond i32", "2147483647", "2147483648"),
            (
                "managed fields",
                r#""generation": 3,"#,
                r#""generation": 3, "managedFields": [],"#,
            ),
            (
                "a string integer",
                r#""generation": 3,"#,
                r#""generation": "3","#,
            ),
            (
                "a bad time",
                r#""lastScaleTime": "2026-11-30T10:05:00Z""#,
                r#""lastScaleTime": "yesterday""#,
            ),
        ] {
            assert!(FULL.contains(from), "{change}: {from}");
            let text = FULL.replacen(from, to, 1);
            assert_eq!(hpa(&text), None, "{change}");
        }
        for text in [
            format!("{FULL} {{}}"),
            format!("{FULL},"),
            FULL[..FULL.len() - 1].to_owned(),
        ] {
            assert_eq!(hpa(&text), None, "{text}");
        }
    }

    /// The usual form read without jiff's parser reads as jiff reads it,
    /// and every other text is left to jiff.
    #[test]
    fn a_utc_second_reads_as_jiff_reads_it() {
        let mut read = 0;
        for year in [
            "0000", "0001", "1969", "1970", "2000", "2024", "2026", "2100", "9999",
        ] {
            for month in ["00", "01", "02", "04", "12", "13"] {
                for day in ["00", "01", "28", "29", "30", "31", "32"] {
                    for clock in [
                        "00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "1a:00:00",
                    ] {
                        let text = format!("{year}-{month}-{day}T{clock}Z");
                        let jiff = text.parse::<jiff::Timestamp>().ok();
                        let fast = utc_second(&text);
                        read += usize::from(fast.is_some());
                        if clock.ends_with(":60") {
                            // jiff reads a leap second as :59; left to it.
                            assert_eq!(fast, None, "{text}");
                        } else {
                            assert_eq!(fast, jiff, "{text}");
                        }
                    }
                }
            }
        }
        // Not vacuous: the valid dates took the fast way.
        assert!(read > 250, "{read}");
        for other in [
            "2026-11-30T10:00:00.5Z",
            "2026-11-30T10:00:00+01:00",
            "2026-11-30t10:00:00z",
            "2026-11-30 10:00:00Z",
            "+02026-11-30T10:00:00Z",
            "2026-11-30T10:00Z",
        ] {
            assert_eq!(utc_second(other), None, "{other}");
        }
    }

    /// Every prefix, every byte removed or replaced by a JSON-significant
    /// one: whatever the fast path reads, serde reads the same.
    #[test]
    fn never_disagrees_with_serde_on_mutated_texts() {
        let text: String = FULL.split_whitespace().collect::<Vec<_>>().join(" ");
        let bytes = text.as_bytes();
        let replacements = [
            b'"', b'\\', b',', b':', b'{', b'}', b'[', b']', b'0', b'-', b'n', b' ', b'x', b'e',
            b'.',
        ];
        let (mut accepted, mut total) = (0, 0);
        let mut check = |variant: Vec<u8>| {
            let Ok(variant) = String::from_utf8(variant) else {
                return;
            };
            total += 1;
            if let Some(read) = hpa(&variant) {
                accepted += 1;
                assert_eq!(Some(read), by_serde(&variant), "{variant}");
            }
        };
        for at in 0..bytes.len() {
            check(bytes[..at].to_vec());
            let mut removed = bytes.to_vec();
            removed.remove(at);
            check(removed);
            for &b in &replacements {
                let mut changed = bytes.to_vec();
                changed[at] = b;
                check(changed);
            }
        }
        // Not vacuous: many changes (in names, values, spacing) keep a
        // text the fast path reads.
        assert!(accepted * 5 > total, "{accepted} of {total}");
    }
}
