//! Resource and ContainerResource metrics (pod usage from `metrics.k8s.io`).

use k8s_openapi::api::autoscaling::v2::{
    ContainerResourceMetricStatus, MetricSpec, MetricStatus, MetricValueStatus,
    ResourceMetricStatus,
};

use super::{Ctx, Failure, Proposal, fail, failed_pods, quantity_milli, trace_pods};
use crate::calc;
use crate::input::Fetched;
use crate::quantity::build_quantity;
use crate::trace::MetricTrace;

pub(super) fn resource_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let (name, container, target, reason, outer) =
        match (spec.resource.as_ref(), spec.container_resource.as_ref()) {
            (Some(r), _) if spec.type_ == "Resource" => (
                r.name.as_str(),
                "",
                &r.target,
                "FailedGetResourceMetric",
                format!("failed to get {} resource metric value", r.name),
            ),
            (_, Some(c)) if spec.type_ == "ContainerResource" => (
                c.name.as_str(),
                c.container.as_str(),
                &c.target,
                "FailedGetContainerResourceMetric",
                format!("failed to get {} container metric value", c.container),
            ),
            _ => {
                let e = format!(
                    "invalid {} metric source: the {} field is not set",
                    spec.type_, spec.type_
                );
                return Err(fail("FailedGetResourceMetric", e.clone(), e));
            }
        };
    let wrap = |inner: String| {
        let e = inner;
        fail(reason, e.clone(), format!("{outer}: {e}"))
    };
    let current = ctx.input.scale.spec_replicas;
    let samples = match ctx.fetched(i) {
        Some(Fetched::PodResource(Ok(s))) => {
            calc::pod_resource_metrics(s, name, container).map_err(|e| e.to_string())
        }
        Some(Fetched::PodResource(Err(e))) => Err(e.clone()),
        _ => Err("metric was not fetched".to_owned()),
    };
    let fetch_err = |e: String| format!("unable to get metrics for resource {name}: {e}");
    if let Some(avg) = target.average_value.as_ref() {
        let target_m = quantity_milli(Some(avg)).unwrap_or(0);
        trace.target = format!("{} (average value)", avg.0);
        let p = samples
            .map_err(fetch_err)
            .and_then(|(m, ts)| {
                calc::plain_metric_replicas(
                    current,
                    target_m,
                    name,
                    ctx.tolerances,
                    &ctx.pods,
                    &m,
                    ts,
                    ctx.readiness(),
                    ctx.now,
                    ctx.config.version(),
                )
                .map_err(|f| failed_pods(trace, f))
            })
            .map_err(|e| wrap(format!("failed to get {name} usage: {e}")))?;
        trace_pods(trace, &p);
        let value = build_quantity(name, p.raw_value);
        trace.current = value.to_string();
        return Ok(Proposal {
            replicas: p.replicas,
            name: format!("{name} resource"),
            status: resource_status(
                spec,
                container,
                name,
                MetricValueStatus {
                    average_value: Some(value.into()),
                    ..Default::default()
                },
            ),
        });
    }
    let Some(target_util) = target.average_utilization else {
        return Err(wrap(
            "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set"
                .to_owned(),
        ));
    };
    trace.target = format!("{target_util}% utilization");
    let p = samples
        .map_err(fetch_err)
        .and_then(|(m, ts)| {
            calc::resource_replicas(
                current,
                target_util,
                name,
                container,
                ctx.tolerances,
                &ctx.pods,
                &m,
                ts,
                ctx.readiness(),
                ctx.config.feature_gates.pod_level_resources(),
                ctx.now,
                ctx.config.version(),
            )
            .map_err(|f| failed_pods(trace, f))
        })
        .map_err(|e| wrap(format!("failed to get {name} utilization: {e}")))?;
    trace_pods(trace, &p);
    let value = build_quantity(name, p.raw_value);
    trace.current = format!("{}% ({value})", p.utilization.unwrap_or(0));
    let metric_name = if spec.type_ == "ContainerResource" {
        format!("{name} container resource utilization (percentage of request)")
    } else {
        format!("{name} resource utilization (percentage of request)")
    };
    Ok(Proposal {
        replicas: p.replicas,
        name: metric_name,
        status: resource_status(
            spec,
            container,
            name,
            MetricValueStatus {
                average_utilization: p.utilization,
                average_value: Some(value.into()),
                ..Default::default()
            },
        ),
    })
}

fn resource_status(
    spec: &MetricSpec,
    container: &str,
    name: &str,
    current: MetricValueStatus,
) -> MetricStatus {
    if spec.type_ == "ContainerResource" {
        MetricStatus {
            type_: "ContainerResource".to_owned(),
            container_resource: Some(ContainerResourceMetricStatus {
                name: name.to_owned(),
                container: container.to_owned(),
                current,
            }),
            ..Default::default()
        }
    } else {
        MetricStatus {
            type_: "Resource".to_owned(),
            resource: Some(ResourceMetricStatus {
                name: name.to_owned(),
                current,
            }),
            ..Default::default()
        }
    }
}
