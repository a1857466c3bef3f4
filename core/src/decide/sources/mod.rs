//! One proposal per metric source (upstream's `computeStatusForResourceMetric`,
//! `...PodsMetric`, `...ObjectMetric` and `...ExternalMetric`): the replica
//! count, the metric's status entry, or the failure with upstream's texts.

mod external;
mod object;
mod pods;
mod resource;

use external::external_proposal;
use object::object_proposal;
use pods::pods_proposal;
use resource::resource_proposal;

use std::borrow::Cow;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{MetricSpec, MetricStatus};

use crate::calc::{PodFailure, PodProposal, Readiness, Tolerances, ValueProposal};
use crate::config::DecisionConfig;
use crate::input::{DecisionInput, Fetched};
use crate::pod::CorePod;
use crate::quantity::{Format, Quantity};
use crate::trace::MetricTrace;

/// One metric's computed proposal.
pub(super) struct Proposal {
    pub(super) replicas: i32,
    pub(super) name: String,
    pub(super) status: MetricStatus,
}

/// One metric's failure: condition reason, condition/event error text, the
/// error propagated upward, and whether it is a spec error.
pub(super) struct Failure {
    pub(super) reason: &'static str,
    pub(super) event_error: String,
    pub(super) error: String,
    pub(super) spec: bool,
}

fn fail(reason: &'static str, event_error: String, error: String) -> Failure {
    Failure {
        reason,
        event_error,
        error,
        spec: false,
    }
}

pub(super) struct Ctx<'a> {
    pub(super) input: &'a DecisionInput,
    pub(super) config: &'a DecisionConfig,
    pub(super) now: Timestamp,
    pub(super) pods: Cow<'a, [Arc<CorePod>]>,
    pub(super) tolerances: Tolerances,
}

impl Ctx<'_> {
    fn readiness(&self) -> Readiness {
        Readiness {
            cpu_initialization_period: self.config.cpu_initialization_period,
            initial_readiness_delay: self.config.initial_readiness_delay,
        }
    }

    fn namespace(&self) -> &str {
        self.input.hpa.metadata.namespace.as_deref().unwrap_or("")
    }

    fn fetched(&self, i: usize) -> Option<&Fetched> {
        self.input.metrics.get(i).and_then(Option::as_ref)
    }
}

fn quantity_milli(
    q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
) -> Option<i64> {
    q.and_then(|q| Quantity::parse(&q.0).ok())
        .map(|q| q.milli_value())
}

/// A target quantity as the HPA's spec writes it (`100`, `1k`, `500m`),
/// then what it is: the trace, the timeline's legend and `explain` show
/// what the user wrote, not its milli-units.
fn written(
    q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    what: &str,
) -> String {
    q.map_or_else(String::new, |q| format!("{} {what}", q.0))
}

fn milli_quantity(v: i64) -> k8s_openapi::apimachinery::pkg::api::resource::Quantity {
    Quantity::from_milli(v, Format::DecimalSI).into()
}

fn trace_pods(trace: &mut MetricTrace, p: &PodProposal) {
    trace.ratio = Some(p.ratio);
    trace.new_ratio = p.new_ratio;
    trace.pods = p.pods.clone();
}

/// Keeps a failed proposal's pods in the trace (how they were grouped
/// explains "pods might be unready"); the error's text for the caller.
fn failed_pods(trace: &mut MetricTrace, failure: PodFailure) -> String {
    trace.pods = failure.pods;
    failure.error.to_string()
}

/// Upstream's `calcPlainMetricReplicas` on the HPA's pods (a Pods metric,
/// a Resource metric's average value); a failure keeps its pods in the
/// trace and gives its text.
fn plain_replicas(
    ctx: &Ctx<'_>,
    target_m: i64,
    resource: &str,
    metrics: &crate::calc::PodMetricsInfo,
    timestamp: Timestamp,
    trace: &mut MetricTrace,
) -> Result<PodProposal, String> {
    crate::calc::plain_metric_replicas(
        ctx.input.scale.spec_replicas,
        target_m,
        resource,
        ctx.tolerances,
        &ctx.pods,
        metrics,
        timestamp,
        ctx.readiness(),
        ctx.now,
        ctx.config.version(),
    )
    .map_err(|f| failed_pods(trace, f))
}

fn value_trace(trace: &mut MetricTrace, v: &ValueProposal) {
    trace.ratio = Some(v.ratio);
    trace.ready_pods = v.ready_pods;
}

pub(super) fn compute_metric(
    ctx: &Ctx<'_>,
    i: usize,
    spec: &MetricSpec,
    trace: &mut MetricTrace,
) -> Result<Proposal, Failure> {
    match spec.type_.as_str() {
        "Resource" | "ContainerResource" => resource_proposal(ctx, i, spec, trace),
        "Pods" => pods_proposal(ctx, i, spec, trace),
        "Object" => object_proposal(ctx, i, spec, trace),
        "External" => external_proposal(ctx, i, spec, trace),
        other => {
            let e = format!("unknown metric source type {other:?}");
            Err(Failure {
                reason: "InvalidMetricSourceType",
                event_error: e.clone(),
                error: e,
                spec: true,
            })
        }
    }
}
