//! Resource and ContainerResource metrics (pod usage from `metrics.k8s.io`).

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{
    ContainerResourceMetricStatus, MetricSpec, MetricStatus, MetricTarget, MetricValueStatus,
    ResourceMetricStatus,
};

use super::{
    Ctx, Failure, Proposal, fail, failed_pods, plain_replicas, quantity_milli, trace_pods,
};
use crate::calc::{self, PodMetricsInfo};
use crate::input::Fetched;
use crate::quantity::build_quantity;
use crate::trace::MetricTrace;

/// The pod samples for one resource, or why there are none.
type Samples = Result<(PodMetricsInfo, Timestamp), String>;

/// What a Resource or ContainerResource spec names, with the condition
/// reason and outer error text its failures carry: upstream's
/// `computeStatusForResourceMetric` and `...ContainerResourceMetric`, which
/// differ only in these before sharing `computeStatusForResourceMetricGeneric`.
struct Source<'a> {
    name: &'a str,
    container: &'a str,
    target: &'a MetricTarget,
    reason: &'static str,
    /// What the outer error text names: `resource` (by its name) or
    /// `container` (by the container's); written only on a failure.
    outer: &'static str,
}

impl Source<'_> {
    /// A failure carrying this source's reason, wrapped in its outer text.
    fn fail(&self, e: String) -> Failure {
        let named = if self.outer == "container" {
            self.container
        } else {
            self.name
        };
        let outer = format!("failed to get {named} {} metric value: {e}", self.outer);
        fail(self.reason, e, outer)
    }

    /// Upstream's text for samples that could not be fetched.
    fn fetch_error(&self, e: String) -> String {
        format!("unable to get metrics for resource {}: {e}", self.name)
    }
}

/// Picks the source for the spec's type; a missing source field is upstream's
/// "invalid ... metric source" failure.
fn resource_source(spec: &MetricSpec) -> Result<Source<'_>, Failure> {
    match (spec.resource.as_ref(), spec.container_resource.as_ref()) {
        (Some(r), _) if spec.type_ == "Resource" => Ok(Source {
            name: r.name.as_str(),
            container: "",
            target: &r.target,
            reason: "FailedGetResourceMetric",
            outer: "resource",
        }),
        (_, Some(c)) if spec.type_ == "ContainerResource" => Ok(Source {
            name: c.name.as_str(),
            container: c.container.as_str(),
            target: &c.target,
            reason: "FailedGetContainerResourceMetric",
            outer: "container",
        }),
        _ => {
            let e = format!(
                "invalid {} metric source: the {} field is not set",
                spec.type_, spec.type_
            );
            Err(fail("FailedGetResourceMetric", e.clone(), e))
        }
    }
}

/// Upstream's `computeStatusForResourceMetricGeneric`: an average-value
/// target before an average-utilization one.
pub(super) fn resource_proposal(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let src = resource_source(spec)?;
    let samples = match ctx.fetched(i) {
        Some(Fetched::PodResource(Ok(s))) => {
            calc::pod_resource_metrics(s, src.name, src.container).map_err(|e| e.to_string())
        }
        Some(Fetched::PodResource(Err(e))) => Err(e.clone()),
        _ => Err("metric was not fetched".to_owned()),
    };
    if let Some(avg) = src.target.average_value.as_ref() {
        return average_value_proposal(ctx, spec, &src, avg, samples, trace);
    }
    let Some(target_util) = src.target.average_utilization else {
        return Err(src.fail(
            "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set"
                .to_owned(),
        ));
    };
    utilization_proposal(ctx, spec, &src, target_util, samples, trace)
}

/// An average-value (usage) target: upstream's `GetRawResourceReplicas`
/// branch.
fn average_value_proposal(
    ctx: &Ctx<'_>,
    spec: &MetricSpec,
    src: &Source<'_>,
    avg: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    samples: Samples,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let name = src.name;
    let target_m = quantity_milli(Some(avg)).unwrap_or(0);
    trace.target = format!("{} (average value)", avg.0);
    let p = samples
        .map_err(|e| src.fetch_error(e))
        .and_then(|(m, ts)| plain_replicas(ctx, target_m, name, &m, ts, trace))
        .map_err(|e| src.fail(format!("failed to get {name} usage: {e}")))?;
    trace_pods(trace, &p);
    let value = build_quantity(name, p.raw_value);
    trace.current = value.to_string();
    Ok(Proposal {
        replicas: p.replicas,
        name: [name, " resource"].concat(),
        status: resource_status(
            spec,
            src.container,
            name,
            MetricValueStatus {
                average_value: Some(value.into()),
                ..Default::default()
            },
        ),
    })
}

/// An average-utilization target (percent of request): upstream's
/// `GetResourceReplicas` branch.
fn utilization_proposal(
    ctx: &Ctx<'_>,
    spec: &MetricSpec,
    src: &Source<'_>,
    target_util: i32,
    samples: Samples,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    let name = src.name;
    trace.target = format!("{target_util}% utilization");
    let p = samples
        .map_err(|e| src.fetch_error(e))
        .and_then(|(m, ts)| {
            calc::resource_replicas(
                ctx.input.scale.spec_replicas,
                target_util,
                name,
                src.container,
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
        .map_err(|e| src.fail(format!("failed to get {name} utilization: {e}")))?;
    trace_pods(trace, &p);
    let value = build_quantity(name, p.raw_value);
    trace.current = format!("{}% ({value})", p.utilization.unwrap_or(0));
    let metric_name = if spec.type_ == "ContainerResource" {
        [
            name,
            " container resource utilization (percentage of request)",
        ]
        .concat()
    } else {
        [name, " resource utilization (percentage of request)"].concat()
    };
    Ok(Proposal {
        replicas: p.replicas,
        name: metric_name,
        status: resource_status(
            spec,
            src.container,
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
