//! Object metrics (one object's value from `custom.metrics.k8s.io`).

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, MetricSpec, MetricStatus, MetricValueStatus, ObjectMetricStatus,
};

use super::{Ctx, Failure, Proposal, fail, milli_quantity, quantity_milli, value_trace, written};
use crate::calc;
use crate::decide::spec::{go_label_selector_string, metric_selector};
use crate::input::Fetched;
use crate::quantity::{Format, Quantity};
use crate::trace::MetricTrace;
use crate::version::KubernetesVersion;

/// Upstream's text for a failed object-metric fetch. Through 1.36 its
/// `fmt.Errorf("unable to get metric %s: %v on %s %s/%s", name, kind,
/// namespace, objName, err)` shifts every argument one place left of where
/// it belongs; 1.37 puts them in order
/// ([`KubernetesVersion::object_metric_error_in_order`]).
fn object_fetch_error(
    version: KubernetesVersion,
    metric: &str,
    obj: &CrossVersionObjectReference,
    namespace: &str,
    err: &str,
) -> String {
    let (kind, name) = (&obj.kind, &obj.name);
    if version.object_metric_error_in_order() {
        format!("unable to get metric {metric} on {kind} {namespace}/{name}: {err}")
    } else {
        format!("unable to get metric {metric}: {kind} on {namespace} {name}/{err}")
    }
}

pub(super) fn object_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let outer = "failed to get object metric value";
    let reason = "FailedGetObjectMetric";
    let Some(src) = spec.object.as_ref() else {
        let e = "invalid object metric source: the object field is not set".to_owned();
        return Err(fail(reason, e.clone(), format!("{outer}: {e}")));
    };
    if let Err(e) = metric_selector(src.metric.selector.as_ref()) {
        return Err(fail(reason, e.clone(), format!("{outer}: {e}")));
    }
    let obj = &src.described_object;
    let metric = &src.metric.name;
    let fetched = match ctx.fetched(i) {
        Some(Fetched::Object(Ok(s))) => Ok(ctx.config.version().milli_value(&s.value)),
        Some(Fetched::Object(Err(e))) => Err(e.clone()),
        _ => Err("metric was not fetched".to_owned()),
    }
    .map_err(|e| object_fetch_error(ctx.config.version(), metric, obj, ctx.namespace(), &e));
    let target = &src.target;
    if target.type_ == "Value"
        && let Some(target_m) = quantity_milli(target.value.as_ref())
    {
        trace.target = written(target.value.as_ref(), "value");
        let v = fetched
            .and_then(|usage| {
                calc::object_metric_replicas(
                    ctx.input.scale.spec_replicas,
                    target_m,
                    usage,
                    ctx.tolerances,
                    &ctx.pods,
                    ctx.config.version(),
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|e| fail(reason, e.clone(), format!("{outer}: {e}")))?;
        value_trace(trace, &v);
        trace.current = Quantity::from_milli(v.usage, Format::DecimalSI).to_string();
        return Ok(Proposal {
            replicas: v.replicas,
            name: format!("{} metric {metric}", obj.kind),
            status: MetricStatus {
                type_: "Object".to_owned(),
                object: Some(ObjectMetricStatus {
                    described_object: obj.clone(),
                    metric: src.metric.clone(),
                    current: MetricValueStatus {
                        value: Some(milli_quantity(v.usage)),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
        });
    }
    if target.type_ == "AverageValue"
        && let Some(target_m) = quantity_milli(target.average_value.as_ref())
    {
        trace.target = written(target.average_value.as_ref(), "average value");
        let v = fetched
            .map(|usage| {
                calc::object_per_pod_metric_replicas(
                    ctx.input.scale.status_replicas,
                    target_m,
                    usage,
                    ctx.tolerances,
                    ctx.config.version(),
                )
            })
            .map_err(|e| {
                fail(
                    reason,
                    e.clone(),
                    format!("{outer}: failed to get {metric} object metric: {e}"),
                )
            })?;
        value_trace(trace, &v);
        trace.current = Quantity::from_milli(v.usage, Format::DecimalSI).to_string();
        // Upstream leaves describedObject out of this status and names the
        // metric "external metric ..."; reproduced faithfully.
        return Ok(Proposal {
            replicas: v.replicas,
            name: format!(
                "external metric {metric}({})",
                go_label_selector_string(src.metric.selector.as_ref())
            ),
            status: MetricStatus {
                type_: "Object".to_owned(),
                object: Some(ObjectMetricStatus {
                    described_object: CrossVersionObjectReference::default(),
                    metric: src.metric.clone(),
                    current: MetricValueStatus {
                        average_value: Some(milli_quantity(v.usage)),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
        });
    }
    let e =
        "invalid object metric source: neither a value target nor an average value target was set"
            .to_owned();
    Err(fail(reason, e.clone(), format!("{outer}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_object_metric_fetch_error_is_misordered_through_v1_36_and_in_order_from_v1_37() {
        use KubernetesVersion::*;
        let obj = CrossVersionObjectReference {
            api_version: Some("apps/v1".into()),
            kind: "Deployment".into(),
            name: "app".into(),
        };
        for (version, want) in [
            (
                V1_36,
                "unable to get metric qps: Deployment on default app/boom",
            ),
            (
                V1_37,
                "unable to get metric qps on Deployment default/app: boom",
            ),
            (
                V1_38,
                "unable to get metric qps on Deployment default/app: boom",
            ),
        ] {
            assert_eq!(
                object_fetch_error(version, "qps", &obj, "default", "boom"),
                want,
                "{version}"
            );
        }
    }
}
