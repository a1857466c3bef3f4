//! External metrics (series from `external.metrics.k8s.io`).

use k8s_openapi::api::autoscaling::v2::{
    ExternalMetricStatus, MetricIdentifier, MetricSpec, MetricStatus, MetricValueStatus,
};

use super::{Ctx, Failure, Proposal, fail, milli_quantity, quantity_milli, value_trace, written};
use crate::calc;
use crate::decide::spec::{go_label_selector_string, metric_selector};
use crate::input::Fetched;
use crate::quantity::{Format, Quantity};
use crate::trace::MetricTrace;

pub(super) fn external_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let reason = "FailedGetExternalMetric";
    let Some(src) = spec.external.as_ref() else {
        let e = "invalid external metric source: the external field is not set".to_owned();
        return Err(fail(reason, e.clone(), e));
    };
    let metric = &src.metric.name;
    let outer = ["failed to get ", metric, " external metric value"].concat();
    let sel_text = go_label_selector_string(src.metric.selector.as_ref());
    let values = match metric_selector(src.metric.selector.as_ref()) {
        Err(e) => Err(e),
        Ok(_) => match ctx.fetched(i) {
            Some(Fetched::External(Ok(s))) if s.values.is_empty() => {
                Err("no metrics returned from external metrics API".to_owned())
            }
            Some(Fetched::External(Ok(s))) => Ok(s
                .values
                .iter()
                .map(|q| ctx.config.version().milli_value(q))
                .collect::<Vec<_>>()),
            Some(Fetched::External(Err(e))) => Err(e.clone()),
            _ => Err("metric was not fetched".to_owned()),
        }
        .map_err(|e| {
            format!(
                "unable to get external metric {}/{metric}/{sel_text}: {e}",
                ctx.namespace()
            )
        }),
    };
    let name = ["external metric ", metric, "(", &sel_text, ")"].concat();
    let identifier = MetricIdentifier {
        name: metric.clone(),
        selector: src.metric.selector.clone(),
    };
    if let Some(target_m) = quantity_milli(src.target.average_value.as_ref()) {
        trace.target = written(src.target.average_value.as_ref(), "average value");
        let v = values
            .map(|vals| {
                calc::external_per_pod_metric_replicas(
                    ctx.input.scale.status_replicas,
                    target_m,
                    &vals,
                    ctx.tolerances,
                    ctx.config.version(),
                )
            })
            .map_err(|e| {
                fail(
                    reason,
                    e.clone(),
                    format!("{outer}: failed to get {metric} external metric: {e}"),
                )
            })?;
        value_trace(trace, &v);
        trace.current = Quantity::from_milli(v.usage, Format::DecimalSI).to_string();
        return Ok(Proposal {
            replicas: v.replicas,
            name,
            status: MetricStatus {
                type_: "External".to_owned(),
                external: Some(ExternalMetricStatus {
                    metric: identifier,
                    current: MetricValueStatus {
                        average_value: Some(milli_quantity(v.usage)),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
        });
    }
    if let Some(target_m) = quantity_milli(src.target.value.as_ref()) {
        trace.target = written(src.target.value.as_ref(), "value");
        let v = values
            .and_then(|vals| {
                calc::external_metric_replicas(
                    ctx.input.scale.spec_replicas,
                    target_m,
                    &vals,
                    ctx.tolerances,
                    &ctx.pods,
                    ctx.config.version(),
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|e| {
                fail(
                    reason,
                    e.clone(),
                    format!("{outer}: failed to get external metric {metric}: {e}"),
                )
            })?;
        value_trace(trace, &v);
        trace.current = Quantity::from_milli(v.usage, Format::DecimalSI).to_string();
        return Ok(Proposal {
            replicas: v.replicas,
            name,
            status: MetricStatus {
                type_: "External".to_owned(),
                external: Some(ExternalMetricStatus {
                    metric: identifier,
                    current: MetricValueStatus {
                        value: Some(milli_quantity(v.usage)),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
        });
    }
    let e = "invalid external metric source: neither a value target nor an average value target was set".to_owned();
    Err(fail(reason, e.clone(), format!("{outer}: {e}")))
}
