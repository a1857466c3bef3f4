//! Upstream's `computeReplicasForMetrics`: one proposal per metric, the
//! highest wins, and the rule for when failed metrics stop the reconcile.

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{MetricSpec, MetricStatus};

use super::outcome::{ActionLabel, ErrorLabel, Event, EventType, MetricComputation};
use super::pod_selection::selected_pods;
use super::sources::{Ctx, Failure, Proposal, compute_metric};
use super::spec::spec_metrics;
use super::state::State;
use crate::calc::Tolerances;
use crate::config::DecisionConfig;
use crate::input::DecisionInput;
use crate::trace::{DecisionTrace, MetricTrace};

/// Upstream `computeReplicasForMetrics` with `validateAndParseSelector`.
/// `Err(())` = the reconcile stops (failure recorded in `state`).
pub(super) fn compute_replicas_for_metrics(
    input: &DecisionInput,
    config: &DecisionConfig,
    tolerances: Tolerances,
    now: Timestamp,
    state: &mut State,
    trace: &mut DecisionTrace,
) -> Result<(i32, String), ()> {
    let pods = selected_pods(input, now, state, trace)?;
    let ctx = Ctx {
        input,
        config,
        now,
        pods,
        tolerances,
    };
    let proposals = propose_all(&ctx, state, trace);
    conclude(input, proposals, now, state, trace)
}

/// Every metric's proposal folded as upstream does.
struct Proposals {
    /// The highest proposal (0 when none).
    replicas: i32,
    /// Its metric's description.
    metric: String,
    /// Number of failed metrics.
    invalid: usize,
    /// The first failure, in spec order.
    first_failure: Option<Failure>,
}

/// Computes each metric in spec order: its monitor labels, its Warning event
/// on failure, its status entry and trace.
fn propose_all(ctx: &Ctx<'_>, state: &mut State, trace: &mut DecisionTrace) -> Proposals {
    let hpa = &ctx.input.hpa;
    let specs = spec_metrics(hpa);
    let last_current = hpa
        .status
        .as_ref()
        .and_then(|s| s.current_replicas)
        .unwrap_or(0);
    let mut statuses = vec![MetricStatus::default(); specs.len()];
    let mut replicas = 0;
    let mut metric = String::new();
    let mut invalid = 0usize;
    let mut first_failure: Option<Failure> = None;
    for (i, spec) in specs.iter().enumerate() {
        let mut mt = MetricTrace::new(i, spec);
        let result = compute_metric(ctx, i, spec, &mut mt);
        state
            .computations
            .push(computation(spec, &result, last_current));
        match result {
            Ok(p) => {
                mt.proposal = Some(p.replicas);
                mt.name = p.name.clone();
                statuses[i] = p.status;
                if replicas == 0 || p.replicas > replicas {
                    replicas = p.replicas;
                    metric = p.name;
                }
            }
            Err(f) => {
                state.events.push(Event {
                    type_: EventType::Warning,
                    reason: f.reason.to_owned(),
                    message: f.event_error.clone(),
                });
                mt.error = Some(f.error.clone());
                invalid += 1;
                if first_failure.is_none() {
                    first_failure = Some(f);
                }
            }
        }
        trace.metrics.push(mt);
    }
    trace.chosen_metric = metric.clone();
    state.statuses = Some(statuses);
    Proposals {
        replicas,
        metric,
        invalid,
        first_failure,
    }
}

/// The `metric_computation_total` labels of one metric: its proposal against
/// the HPA's last reported current replicas, or its error class.
fn computation(
    spec: &MetricSpec,
    result: &Result<Proposal, Failure>,
    last_current: i32,
) -> MetricComputation {
    let (action, error) = match result {
        Ok(p) => (
            match p.replicas.cmp(&last_current) {
                std::cmp::Ordering::Greater => ActionLabel::ScaleUp,
                std::cmp::Ordering::Less => ActionLabel::ScaleDown,
                std::cmp::Ordering::Equal => ActionLabel::None,
            },
            ErrorLabel::None,
        ),
        Err(f) if f.spec => (ActionLabel::None, ErrorLabel::Spec),
        Err(_) => (ActionLabel::None, ErrorLabel::Internal),
    };
    MetricComputation {
        metric_type: spec.type_.clone(),
        action,
        error,
    }
}

/// Stops the reconcile when every metric failed, or some failed and the rest
/// would scale down (ScalingActive=False); otherwise ScalingActive=True and
/// any failure is reported while scaling proceeds.
fn conclude(
    input: &DecisionInput,
    proposals: Proposals,
    now: Timestamp,
    state: &mut State,
    trace: &mut DecisionTrace,
) -> Result<(i32, String), ()> {
    let Proposals {
        replicas,
        metric,
        invalid,
        first_failure,
    } = proposals;
    let specs = spec_metrics(&input.hpa);
    let spec_replicas = input.scale.spec_replicas;
    let error = first_failure.as_ref().map(|f| {
        format!(
            "invalid metrics ({invalid} invalid out of {}), first error is: {}",
            specs.len(),
            f.error
        )
    });
    if invalid >= specs.len() || (invalid > 0 && replicas < spec_replicas) {
        if let Some(f) = &first_failure {
            state.set_condition(
                "ScalingActive",
                "False",
                f.reason,
                format!(
                    "the HPA was unable to compute the replica count: {}",
                    f.event_error
                ),
                now,
            );
        }
        // With no metric at all upstream has no first error either; keep a text.
        state.failure =
            Some(error.unwrap_or_else(|| "invalid metrics (0 invalid out of 0)".to_owned()));
        trace.rule = "metrics failed".to_owned();
        return Err(());
    }
    state.set_condition(
        "ScalingActive",
        "True",
        "ValidMetricFound",
        [
            "the HPA was able to successfully calculate a replica count from ",
            &metric,
        ]
        .concat(),
        now,
    );
    state.soft_error = error;
    Ok((replicas, metric))
}
