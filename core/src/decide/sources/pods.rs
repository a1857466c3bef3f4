//! Pods metrics (per-pod values from `custom.metrics.k8s.io`).

use k8s_openapi::api::autoscaling::v2::{
    MetricIdentifier, MetricSpec, MetricStatus, MetricValueStatus, PodsMetricStatus,
};

use super::{
    Ctx, Failure, Proposal, fail, milli_quantity, plain_replicas, quantity_milli, trace_pods,
    written,
};
use crate::calc;
use crate::decide::spec::metric_selector;
use crate::input::Fetched;
use crate::quantity::{Format, Quantity};
use crate::trace::MetricTrace;

pub(super) fn pods_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let outer = "failed to get pods metric value";
    let reason = "FailedGetPodsMetric";
    let Some(src) = spec.pods.as_ref() else {
        let e = "invalid pods metric source: the pods field is not set".to_owned();
        return Err(fail(reason, e.clone(), format!("{outer}: {e}")));
    };
    if let Err(e) = metric_selector(src.metric.selector.as_ref()) {
        return Err(fail(reason, e.clone(), format!("{outer}: {e}")));
    }
    let wrap = |e: String| fail(reason, e.clone(), format!("{outer}: {e}"));
    let Some(target_m) = quantity_milli(src.target.average_value.as_ref()) else {
        return Err(wrap(
            "invalid pods metric source: no average value target was set".to_owned(),
        ));
    };
    trace.target = written(src.target.average_value.as_ref(), "average");
    let metric = &src.metric.name;
    let samples = match ctx.fetched(i) {
        Some(Fetched::PodsCustom(Ok(s))) => calc::pod_custom_metrics(s).map_err(|e| e.to_string()),
        Some(Fetched::PodsCustom(Err(e))) => Err(e.clone()),
        _ => Err("metric was not fetched".to_owned()),
    };
    let p = samples
        .map_err(|e| format!("unable to get metric {metric}: {e}"))
        .and_then(|(m, ts)| plain_replicas(ctx, target_m, "", &m, ts, trace))
        .map_err(wrap)?;
    trace_pods(trace, &p);
    trace.current = Quantity::from_milli(p.raw_value, Format::DecimalSI).to_string();
    Ok(Proposal {
        replicas: p.replicas,
        name: ["pods metric ", metric].concat(),
        status: MetricStatus {
            type_: "Pods".to_owned(),
            pods: Some(PodsMetricStatus {
                metric: MetricIdentifier {
                    name: metric.clone(),
                    selector: src.metric.selector.clone(),
                },
                current: MetricValueStatus {
                    average_value: Some(milli_quantity(p.raw_value)),
                    ..Default::default()
                },
            }),
            ..Default::default()
        },
    })
}
