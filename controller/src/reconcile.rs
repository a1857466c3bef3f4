//! One reconcile of one HPA: gather inputs, let the core decide, apply.
//!
//! The core's two-phase API shapes it: [`hpa_core::plan`] says what to fetch,
//! [`hpa_core::decide`](fn@hpa_core::decide) whether to rescale, the shell writes the scale, and
//! [`hpa_core::finish`] returns the status, events, metric labels and history
//! to apply. Nothing here decides replicas.

use std::sync::Arc;
use std::time::Instant;

use futures::future::join_all;
use hpa_core::decide::{Fetched, MetricQuery, RescaleOutcome, ScaleInfo, ScaleReadError};
use hpa_core::{DecisionInput, Outcome, Selector};
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::autoscaling::v2::{HorizontalPodAutoscaler, HorizontalPodAutoscalerStatus};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, PostParams};

use super::context::Context;
use super::decisions::DecisionRecord;
use super::events::HpaEvent;
use super::hpa_cache::CachedHpa;
use super::keys::split_key;
use super::metrics::{ErrorLabel, HpaLabels};
use super::scale::{ScaleError, ScaleTarget};

/// Errors of one reconcile; each is retried by the queue.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The key is not `namespace/name`.
    #[error("invalid HPA key {0:?}: expected namespace/name")]
    InvalidKey(String),
    /// The core reported an error (failed metrics, failed rescale, ...).
    #[error("HPA {key}: {message}")]
    Decision { key: String, message: String },
    /// The controller's cache has not seen its own last status write yet
    /// (`StaleControllerConsistencyHPA`): the sync is deferred.
    #[error("HPA {key} is not ready for reconciliation")]
    NotReady {
        key: String,
        #[source]
        source: super::consistency::NotReady,
    },
    /// The cached HPA did not decode (a bug: the cache encoded it).
    #[error("HPA {key}: cannot read it from the cache")]
    Cache {
        key: String,
        #[source]
        source: super::hpa_cache::DecodeError,
    },
    /// The status could not be written.
    #[error("HPA {key}: failed to update status")]
    UpdateStatus {
        key: String,
        #[source]
        source: kube::Error,
    },
}

/// What a reconcile did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciled {
    /// The HPA is gone; its in-memory state was dropped.
    Deleted,
    /// The HPA was reconciled.
    Synced {
        /// The desired replicas in the computed status.
        desired: i32,
        /// Whether the scale was written.
        rescaled: bool,
    },
}

fn reference(hpa: &HorizontalPodAutoscaler) -> ObjectReference {
    ObjectReference {
        api_version: Some("autoscaling/v2".into()),
        kind: Some(super::events::HPA_KIND.into()),
        name: hpa.metadata.name.clone(),
        namespace: hpa.metadata.namespace.clone(),
        uid: hpa.metadata.uid.clone(),
        resource_version: hpa.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

fn scale_read_error(err: &ScaleError) -> ScaleReadError {
    match err {
        ScaleError::InvalidApiVersion(v) => ScaleReadError::InvalidApiVersion(v.clone()),
        // The RESTMapper's own text: the core adds upstream's
        // "unable to determine resource ..." prefix to the returned error
        // only, so the event and condition do not say it twice.
        ScaleError::UnknownKind { group, kind, .. } => {
            ScaleReadError::NoMapping(format!("no matches for kind {kind:?} in group {group:?}"))
        }
        ScaleError::NoScaleSubresource { .. } => ScaleReadError::NoMapping(err.to_string()),
        ScaleError::Get { source } | ScaleError::Update { source } => {
            ScaleReadError::Failed(kube_error_text(source))
        }
    }
}

/// The error text of a kube error as client-go prints an API status.
pub fn kube_error_text(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

/// Reconciles the HPA `key` (`namespace/name`) once.
///
/// The writes (scale, status, events) and the scale read past the cache
/// await boxed futures: a steady sync makes none of them, yet its future,
/// allocated and moved once per sync, would be as large as the largest.
pub async fn reconcile(key: &str, ctx: &Context) -> Result<Reconciled, ReconcileError> {
    let started = Instant::now();
    let (namespace, _) = split_key(key).ok_or_else(|| ReconcileError::InvalidKey(key.into()))?;
    let Some((cached, hpa)) = load_hpa(key, ctx)? else {
        ctx.forget(key);
        return Ok(Reconciled::Deleted);
    };
    // Built once with the settings, not per reconcile.
    let core = &ctx.config.decision;
    let history = ctx.history.get(key);
    let now = ctx.clock.now();

    let (target, scale) = match read_scale(ctx, namespace, &hpa).await {
        Ok(found) => found,
        Err(err) => {
            let outcome =
                hpa_core::get_scale_failed(&hpa, &scale_read_error(&err), &history, core, now);
            let computed_durations = Vec::new();
            return apply(
                key,
                ctx,
                (&hpa, &cached),
                outcome,
                false,
                false,
                &computed_durations,
                started,
            )
            .await;
        }
    };
    let mut scale_info = scale_info_of(&scale);
    // The selector as parsed at an earlier sync from the same text: the
    // core then parses it neither to plan nor to select the pods.
    scale_info.parsed_selector = ctx.selectors.known(key, &scale_info.selector);
    let plan = hpa_core::plan(&hpa, &scale_info, core);
    let selector = target_selector(ctx, key, plan.early.is_none(), &scale_info.selector);
    // Parsed from the same text: the core's pod selection takes it as is.
    scale_info.parsed_selector.clone_from(&selector);
    let (metrics, durations) = fetch_metrics(ctx, namespace, &plan.queries).await;

    // Only the target's pods: the core selects them again, and the
    // ambiguity check needs no others.
    let pods = ctx.cached_pods(namespace, selector.as_deref());
    let input = DecisionInput {
        hpa,
        scale: scale_info,
        other_hpas: ctx.selectors.others(namespace, key, &pods),
        pods,
        metrics,
    };
    let decision = hpa_core::decide(&input, &history, core, now);
    let observed_decision = ctx.observer.as_ref().map(|_| decision.clone());

    let (rescale, rescaled) = write_scale(ctx, &target, scale, decision.scale_to).await;
    let finished_at = ctx.clock.now();
    let outcome = hpa_core::finish(decision, rescale.clone(), finished_at);
    let (desired_replicas, status_changed) =
        (outcome.status.desired_replicas, outcome.status_changed);
    let result = apply(
        key,
        ctx,
        (&input.hpa, &cached),
        outcome,
        true,
        rescaled,
        &durations,
        started,
    )
    .await;
    if let (Some(observer), Some(decision)) = (&ctx.observer, observed_decision) {
        observer.observe(super::observe::ReconcileObservation {
            key: key.to_string(),
            input,
            history,
            config: core.clone(),
            now,
            decision,
            rescale,
            finished_at,
            desired_replicas,
            status_changed,
            started,
            duration: started.elapsed(),
        });
    }
    result
}

/// The cache's entry and the HPA decoded from it.
type LoadedHpa = (Arc<CachedHpa>, Arc<HorizontalPodAutoscaler>);

/// The cached HPA, decoded for this reconcile (shared with its observation;
/// the decision log keeps the cache's entry); `None` when it is gone. With
/// `StaleControllerConsistencyHPA`, an HPA whose last status write the cache
/// has not seen yet is not ready.
fn load_hpa(key: &str, ctx: &Context) -> Result<Option<LoadedHpa>, ReconcileError> {
    let Some(cached) = ctx.hpas.get(key) else {
        return Ok(None);
    };
    let hpa = Arc::new(cached.hpa().map_err(|source| ReconcileError::Cache {
        key: key.to_owned(),
        source,
    })?);
    if ctx
        .config
        .decision
        .feature_gates
        .stale_controller_consistency()
    {
        ctx.consistency
            .ensure_ready(key)
            .map_err(|source| ReconcileError::NotReady {
                key: key.to_owned(),
                source,
            })?;
    }
    Ok(Some((cached, hpa)))
}

/// The scale target and its scale: the Deployment cache's where it holds
/// the target, else read from the scale subresource.
async fn read_scale(
    ctx: &Context,
    namespace: &str,
    hpa: &HorizontalPodAutoscaler,
) -> Result<(ScaleTarget, Arc<Scale>), ScaleError> {
    let target = ctx
        .scales
        .resolve(&ctx.client, namespace, &hpa.spec.scale_target_ref)
        .await?;
    match super::deployment_scales::cached_scale(ctx.deployments.as_ref(), &target) {
        Some(scale) => Ok((target, scale)),
        None => {
            let scale = Box::pin(ctx.scales.get_scale(&ctx.client, &target)).await?;
            Ok((target, Arc::new(scale)))
        }
    }
}

/// What the decision reads of a `/scale`: its spec and status replicas
/// and its selector's text.
pub fn scale_info_of(scale: &Scale) -> ScaleInfo {
    ScaleInfo::new(
        scale.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0),
        scale.status.as_ref().map_or(0, |s| s.replicas),
        scale
            .status
            .as_ref()
            .and_then(|s| s.selector.clone())
            .unwrap_or_default(),
    )
}

/// The target's selector, parsed. Upstream registers an HPA's selector for
/// the ambiguity check only where it computes metrics
/// (validateAndParseSelector), not when a rule decides without them (a
/// target at zero, out of range). Registered, an unchanged selector is not
/// parsed again.
fn target_selector(
    ctx: &Context,
    key: &str,
    computes_metrics: bool,
    text: &str,
) -> Option<Arc<Selector>> {
    if computes_metrics {
        ctx.selectors.register(key, text)
    } else {
        Selector::parse(text)
            .ok()
            .filter(|_| !text.is_empty())
            .map(Arc::new)
    }
}

/// The plan's metrics, fetched concurrently, each fetch timed for the
/// computation metric (durations only of the metrics fetched). Most HPAs
/// have one metric: its fetch is awaited as it is, without `join_all`'s
/// boxed slots.
async fn fetch_metrics(
    ctx: &Context,
    namespace: &str,
    queries: &[Option<MetricQuery>],
) -> (Vec<Option<Fetched>>, Vec<f64>) {
    let fetched = match queries {
        [one] => vec![fetch_metric(ctx, namespace, one.as_ref()).await],
        many => {
            join_all(
                many.iter()
                    .map(|query| fetch_metric(ctx, namespace, query.as_ref())),
            )
            .await
        }
    };
    let (metrics, durations): (Vec<_>, Vec<_>) = fetched.into_iter().unzip();
    (metrics, durations.into_iter().flatten().collect())
}

/// One query's metric, and how long its fetch took (`None` when the plan
/// fetches nothing for it).
async fn fetch_metric(
    ctx: &Context,
    namespace: &str,
    query: Option<&MetricQuery>,
) -> (Option<Fetched>, Option<f64>) {
    let Some(query) = query else {
        return (None, None);
    };
    let t = Instant::now();
    let fetched = ctx.metrics_client.fetch(namespace, query).await;
    (Some(fetched), Some(t.elapsed().as_secs_f64()))
}

/// Writes the scale when the core says so (a dry run only says it did);
/// the outcome for the core, and whether the scale was written.
async fn write_scale(
    ctx: &Context,
    target: &ScaleTarget,
    scale: Arc<Scale>,
    scale_to: Option<i32>,
) -> (RescaleOutcome, bool) {
    match scale_to {
        None => (RescaleOutcome::NotNeeded, false),
        Some(_) if ctx.config.dry_run => (RescaleOutcome::Succeeded, false),
        Some(replicas) => match Box::pin(ctx.scales.update_scale(
            &ctx.client,
            target,
            Arc::unwrap_or_clone(scale),
            replicas,
        ))
        .await
        {
            Ok(_) => (RescaleOutcome::Succeeded, true),
            Err(ScaleError::Update { source }) => {
                (RescaleOutcome::Failed(kube_error_text(&source)), false)
            }
            Err(other) => (RescaleOutcome::Failed(other.to_string()), false),
        },
    }
}

/// Applies an outcome: history, status, events, metrics, decision log.
#[allow(clippy::too_many_arguments)] // reason: one call site per phase; a struct would only rename them
async fn apply(
    key: &str,
    ctx: &Context,
    (hpa, cached): (&Arc<HorizontalPodAutoscaler>, &Arc<CachedHpa>),
    outcome: Outcome,
    got_scale: bool,
    rescaled: bool,
    durations: &[f64],
    started: Instant,
) -> Result<Reconciled, ReconcileError> {
    // Moved, not copied: the outcome is this reconcile's alone.
    let Outcome {
        status,
        status_changed,
        events,
        monitor,
        history,
        error,
        trace,
    } = outcome;
    ctx.history.set(key, history);
    let dry_run = ctx.config.dry_run;
    let mut events: Vec<HpaEvent> = events;
    let mut error = error.map(|message| ReconcileError::Decision {
        key: key.to_string(),
        message,
    });

    let mut status_written = false;
    if status_changed && !dry_run {
        match Box::pin(write_status(ctx, hpa, &status)).await {
            Ok(()) => status_written = true,
            Err(source) => {
                events.push(failed_update_status(&kube_error_text(&source)));
                if error.is_none() {
                    error = Some(ReconcileError::UpdateStatus {
                        key: key.to_string(),
                        source,
                    });
                }
            }
        }
    }

    if !dry_run && !events.is_empty() {
        let regarding = reference(hpa);
        for event in &events {
            Box::pin(ctx.recorder.publish(&regarding, event)).await;
        }
    }

    // Monitor metrics, labelled as upstream.
    for (i, computation) in monitor.metric_computations.iter().enumerate() {
        ctx.metrics.record_metric_computation(
            computation.action,
            computation.error,
            &computation.metric_type,
            durations.get(i).copied().unwrap_or(0.0),
        );
    }
    // A failed status write is an internal error even when the decision had none.
    let error_label = match (monitor.error, &error) {
        (ErrorLabel::None, Some(ReconcileError::UpdateStatus { .. })) => ErrorLabel::Internal,
        (label, _) => label,
    };
    ctx.metrics
        .record_reconciliation(monitor.action, error_label, started.elapsed().as_secs_f64());
    let desired = status.desired_replicas;
    if let Some((namespace, name)) = split_key(key) {
        ctx.metrics
            .desired_replicas
            .get_or_create(&HpaLabels {
                namespace: namespace.to_string(),
                hpa_name: name.to_string(),
            })
            .set(i64::from(desired));
    }

    let record = DecisionRecord {
        at: ctx.clock.now(),
        current_replicas: got_scale.then(|| status.current_replicas.unwrap_or(0)),
        desired_replicas: got_scale.then_some(desired),
        rescaled,
        status_written,
        dry_run,
        observed: Some(Arc::clone(cached)),
        computed_status: Some(status),
        events,
        error: error.as_ref().map(ToString::to_string),
        trace,
    };
    // A status the core found unchanged is the observed one: the log keeps
    // the cache's entry for both.
    if status_changed {
        ctx.decisions.push(key, record);
    } else {
        ctx.decisions.push_unchanged(key, record);
    }
    tracing::debug!(hpa = key, desired, rescaled, status_written, "reconciled");
    match error {
        Some(err) => Err(err),
        None => Ok(Reconciled::Synced { desired, rescaled }),
    }
}

/// Writes the status through the status subresource once, as upstream's
/// `updateStatus`: a conflict is a failure (`FailedUpdateStatus`), and the
/// next sync, reading the HPA afresh, writes again.
async fn write_status(
    ctx: &Context,
    hpa: &HorizontalPodAutoscaler,
    status: &HorizontalPodAutoscalerStatus,
) -> Result<(), kube::Error> {
    let namespace = hpa.metadata.namespace.as_deref().unwrap_or("default");
    let name = hpa.metadata.name.as_deref().unwrap_or_default();
    let api: Api<HorizontalPodAutoscaler> = Api::namespaced(ctx.client.clone(), namespace);
    let mut object = hpa.clone();
    object.status = Some(status.clone());
    let written = api
        .replace_status(name, &PostParams::default(), &object)
        .await?;
    if ctx
        .config
        .decision
        .feature_gates
        .stale_controller_consistency()
    {
        ctx.consistency.wrote_at(
            &format!("{namespace}/{name}"),
            written.metadata.uid.as_deref().unwrap_or_default(),
            written.metadata.resource_version.as_deref(),
        );
    }
    Ok(())
}

/// Upstream's warning when the status cannot be written.
fn failed_update_status(error: &str) -> HpaEvent {
    HpaEvent {
        type_: hpa_core::decide::EventType::Warning,
        reason: "FailedUpdateStatus".to_string(),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_kind_is_named_once_in_event_and_condition() {
        let err = ScaleError::UnknownKind {
            group: "apps".into(),
            kind: "Dep".into(),
            source: None,
        };
        assert_eq!(
            scale_read_error(&err),
            ScaleReadError::NoMapping("no matches for kind \"Dep\" in group \"apps\"".into())
        );
    }
}
