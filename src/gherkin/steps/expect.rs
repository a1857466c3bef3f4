//! `Then` steps. A failing one says what it expected and what the cluster
//! shows: the HPAs' status and conditions, recent events, the scale targets
//! and the controller's latest decision traces (see
//! [`crate::gherkin::cluster_report`]).

use std::fmt::Write as _;

use cucumber::gherkin::Step;
use cucumber::then;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{HorizontalPodAutoscaler, MetricStatus};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams};
use serde_json::Value;

use super::{Table, age, count, doc_string};
use crate::gherkin::params::{Duration, Quantity, WorkloadKind, unescape};
use crate::gherkin::world::{AsyncCheck, HpaWorld, ObjKey, StepError, StepResult, yaml};

#[then(expr = "the {kind} {string} has {int} replica(s)")]
async fn has_replicas(
    world: &mut HpaWorld,
    kind: WorkloadKind,
    name: String,
    want: i32,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            let got = world.scale_replicas(kind, &name).await?;
            if got != want {
                return fail(
                    world,
                    format!("expected {kind} {name} to have {want} replicas, it has {got}"),
                )
                .await;
            }
            Ok(())
        })
        .await
}

#[then(expr = "the {kind} {string} is not rescaled")]
async fn not_rescaled(world: &mut HpaWorld, kind: WorkloadKind, name: String) -> StepResult {
    let (ns, n) = world.qualify(&name);
    let initial = world
        .workloads
        .get(&ObjKey::new(ns.clone(), n.clone()))
        .map(|w| w.initial_replicas)
        .ok_or_else(|| {
            StepError::Input(format!("{kind} {ns}/{n} was not declared by the scenario"))
        })?;
    let got = world.spec_replicas(kind, &name).await?;
    let rescales: Vec<Event> = events(world, &ns)
        .await?
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("SuccessfulRescale"))
        .collect();
    let mut targeted = Vec::new();
    for e in rescales {
        let hpa = e
            .regarding
            .as_ref()
            .and_then(|r| r.name.clone())
            .unwrap_or_default();
        let uid = hpa_uid(world, &ns, &hpa).await?;
        if same_object(&e, uid.as_deref()) && target_of(world, &ns, &hpa).await? == Some(n.clone())
        {
            targeted.push(e.note.unwrap_or_default());
        }
    }
    if got != initial || !targeted.is_empty() {
        return fail(
            world,
            format!(
                "expected {kind} {ns}/{n} not to be rescaled (it started at {initial}); it has {got} replicas{}",
                if targeted.is_empty() {
                    String::new()
                } else {
                    format!(", rescales: {}", targeted.join("; "))
                }
            ),
        )
        .await;
    }
    Ok(())
}

#[then(expr = "the HPA {string} wants {int} replica(s)")]
async fn wants(world: &mut HpaWorld, name: String, want: i32) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
        let hpa = world.hpa(&name).await?;
        let got = hpa.status.as_ref().map(|s| s.desired_replicas);
        if got != Some(want) {
            return fail(world, format!("expected HPA {name} to want {want} replicas (status.desiredReplicas), it shows {got:?}")).await;
        }
        Ok(())
        })
        .await
}

/// `metadata.generation` and `status.observedGeneration` (HPAGeneration,
/// from 1.37); each condition must carry the generation it was set at,
/// which is never later than the status's.
#[then(expr = "the HPA {string} has generation {int} and observed generation {int}")]
async fn generations(
    world: &mut HpaWorld,
    name: String,
    generation: i64,
    observed: i64,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            let hpa = world.hpa(&name).await?;
            let got = hpa.metadata.generation;
            let status = hpa.status.unwrap_or_default();
            let conditions: Vec<(String, Option<i64>)> = status
                .conditions
                .unwrap_or_default()
                .into_iter()
                .map(|c| (c.type_, c.observed_generation))
                .collect();
            let unstamped = conditions
                .iter()
                .any(|(_, g)| g.is_none_or(|g| g > observed));
            if got != Some(generation) || status.observed_generation != Some(observed) || unstamped || conditions.is_empty() {
                return fail(world, format!(
                    "expected HPA {name} at generation {generation} with status observed at {observed} and every condition stamped at or before it; it has generation {got:?}, status.observedGeneration {:?}, conditions {conditions:?}",
                    status.observed_generation
                )).await;
            }
            Ok(())
        })
        .await
}

/// The generation a condition was last set at (its `observedGeneration`).
#[then(expr = "the HPA {string} has condition {string} set at generation {int}")]
async fn condition_generation(
    world: &mut HpaWorld,
    name: String,
    type_: String,
    at: i64,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            let hpa = world.hpa(&name).await?;
            let got = hpa
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .into_iter()
                .find(|c| c.type_ == type_)
                .map(|c| c.observed_generation);
            if got != Some(Some(at)) {
                return fail(world, format!(
                    "expected HPA {name}'s condition {type_} to have observedGeneration {at}; it has {got:?} (None: no such condition)"
                )).await;
            }
            Ok(())
        })
        .await
}

/// No generation anywhere: the object, its status and its conditions (as
/// through 1.36).
#[then(expr = "the HPA {string} has no generation and no observed generation")]
async fn no_generations(world: &mut HpaWorld, name: String) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            let hpa = world.hpa(&name).await?;
            let status = hpa.status.unwrap_or_default();
            let stamped: Vec<String> = status
                .conditions
                .unwrap_or_default()
                .into_iter()
                .filter(|c| c.observed_generation.is_some())
                .map(|c| c.type_)
                .collect();
            if hpa.metadata.generation.is_some() || status.observed_generation.is_some() || !stamped.is_empty() {
                return fail(world, format!(
                    "expected HPA {name} without generations; it has generation {:?}, status.observedGeneration {:?}, conditions with observedGeneration {stamped:?}",
                    hpa.metadata.generation, status.observed_generation
                )).await;
            }
            Ok(())
        })
        .await
}

#[then(expr = "the HPA {string} has condition {string} {string}")]
async fn has_condition(
    world: &mut HpaWorld,
    name: String,
    type_: String,
    status: String,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            check_condition(world, &name, &type_, &status, None, None).await
        })
        .await
}

#[then(expr = "the HPA {string} has condition {string} {string} with reason {string}")]
async fn has_condition_reason(
    world: &mut HpaWorld,
    name: String,
    type_: String,
    status: String,
    reason: String,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            check_condition(world, &name, &type_, &status, Some(&reason), None).await
        })
        .await
}

#[then(
    expr = "the HPA {string} has condition {string} {string} with reason {string} and message {string}"
)]
async fn has_condition_message(
    world: &mut HpaWorld,
    name: String,
    type_: String,
    status: String,
    reason: String,
    message: String,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            check_condition(
                world,
                &name,
                &type_,
                &status,
                Some(&reason),
                Some(&unescape(&message)),
            )
            .await
        })
        .await
}

#[then(expr = "the HPA {string} has conditions:")]
async fn has_conditions(world: &mut HpaWorld, step: &Step, name: String) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            let table = Table::of(step, &["type", "status", "reason"])?;
            let want: Vec<(String, String, String)> = table
                .rows
                .iter()
                .map(|r| {
                    (
                        table.cell(r, "type").unwrap_or_default().to_owned(),
                        table.cell(r, "status").unwrap_or_default().to_owned(),
                        table.cell(r, "reason").unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            let hpa = world.hpa(&name).await?;
            let got: Vec<(String, String, String)> = conditions(&hpa)
                .into_iter()
                .map(|c| (c.type_, c.status, c.reason.unwrap_or_default()))
                .collect();
            if got != want {
                let show = |v: &[(String, String, String)]| {
                    v.iter()
                        .map(|(t, s, r)| format!("{t}={s} ({r})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return fail(
                    world,
                    format!(
                        "expected HPA {name} to have exactly the conditions [{}], it has [{}]",
                        show(&want),
                        show(&got)
                    ),
                )
                .await;
            }
            Ok(())
        })
        .await
}

#[then(expr = "the HPA {string} reports {string} at {quantity}")]
async fn reports_at(
    world: &mut HpaWorld,
    name: String,
    metric: String,
    want: Quantity,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            let hpa = world.hpa(&name).await?;
            let current = current_metrics(&hpa);
            let found = current.iter().find_map(|m| metric_value(m, &metric));
            let ok = found
                .as_ref()
                .and_then(|q| crate::gherkin::params::parse_quantity(q).ok())
                .is_some_and(|q| q == want.value());
            if !ok {
                return fail(
                    world,
                    format!(
                        "expected HPA {name} to report {metric} at {want}, it reports {}",
                        found.unwrap_or_else(|| "nothing for that metric".to_owned())
                    ),
                )
                .await;
            }
            Ok(())
        })
        .await
}

#[then(expr = "the HPA {string} reports {word} utilization {int}%")]
async fn reports_utilization(
    world: &mut HpaWorld,
    name: String,
    resource: String,
    want: i32,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            let hpa = world.hpa(&name).await?;
            let got = current_metrics(&hpa).iter().find_map(|m| {
                let (n, current) = match (&m.resource, &m.container_resource) {
                    (Some(r), _) => (r.name.as_str(), &r.current),
                    (None, Some(c)) => (c.name.as_str(), &c.current),
                    _ => return None,
                };
                (n == resource)
                    .then_some(current.average_utilization)
                    .flatten()
            });
            if got != Some(want) {
                return fail(
                world,
                format!(
                    "expected HPA {name} to report {resource} utilization {want}%, it reports {}",
                    got.map_or_else(|| "none".to_owned(), |g| format!("{g}%"))
                ),
            )
            .await;
            }
            Ok(())
        })
        .await
}

#[then(
    expr = "the HPA {string} has external metric {string} with selector {string} and average value {quantity}"
)]
async fn has_external_average(
    world: &mut HpaWorld,
    name: String,
    metric: String,
    selector: String,
    want: Quantity,
) -> StepResult {
    has_external(world, &name, &metric, &selector, "AverageValue", &want).await
}

#[then(
    expr = "the HPA {string} has external metric {string} with selector {string} and value {quantity}"
)]
async fn has_external_value(
    world: &mut HpaWorld,
    name: String,
    metric: String,
    selector: String,
    want: Quantity,
) -> StepResult {
    has_external(world, &name, &metric, &selector, "Value", &want).await
}

/// Whether the HPA's spec has the External metric `metric` with that
/// selector (`k=v,...` as match labels) and target.
async fn has_external(
    world: &mut HpaWorld,
    name: &str,
    metric: &str,
    selector: &str,
    kind: &str,
    want: &Quantity,
) -> StepResult {
    let hpa = world.hpa(name).await?;
    let labels: std::collections::BTreeMap<String, String> = selector
        .split(',')
        .filter(|s| !s.is_empty())
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let externals: Vec<_> = hpa
        .spec
        .metrics
        .iter()
        .flatten()
        .filter_map(|m| m.external.as_ref())
        .collect();
    let found = externals.iter().any(|e| {
        let same_labels = e
            .metric
            .selector
            .as_ref()
            .and_then(|s| s.match_labels.clone())
            .unwrap_or_default()
            == labels;
        let target = match kind {
            "AverageValue" => e.target.average_value.as_ref(),
            _ => e.target.value.as_ref(),
        };
        e.metric.name == metric
            && same_labels
            && e.target.type_ == kind
            && target
                .and_then(|q| crate::gherkin::params::parse_quantity(&q.0).ok())
                .is_some_and(|q| q == want.value())
    });
    if found {
        return Ok(());
    }
    let seen: Vec<String> = externals
        .iter()
        .map(|e| {
            format!(
                "{} {:?} {} {:?}",
                e.metric.name,
                e.metric
                    .selector
                    .as_ref()
                    .and_then(|s| s.match_labels.clone()),
                e.target.type_,
                e.target
                    .average_value
                    .as_ref()
                    .or(e.target.value.as_ref())
                    .map(|q| &q.0)
            )
        })
        .collect();
    fail(
        world,
        format!(
            "expected HPA {name} to have external metric {metric} with selector {selector:?} and {kind} {want}, it has [{}]",
            seen.join("; ")
        ),
    )
    .await
}

#[then(expr = "the HPA {string} has min {int} and max {int} replicas")]
async fn has_bounds(world: &mut HpaWorld, name: String, min: i32, max: i32) -> StepResult {
    let hpa = world.hpa(&name).await?;
    let got = (hpa.spec.min_replicas.unwrap_or(1), hpa.spec.max_replicas);
    if got != (min, max) {
        return fail(
            world,
            format!("expected HPA {name} to have min {min} and max {max} replicas, it has {got:?}"),
        )
        .await;
    }
    Ok(())
}

#[then(expr = "the HPA {string} has metrics:")]
async fn has_metrics(world: &mut HpaWorld, step: &Step, name: String) -> StepResult {
    let hpa = world.hpa(&name).await?;
    spec_part_is(world, step, &name, "metrics", hpa.spec.metrics.as_ref()).await
}

#[then(expr = "the HPA {string} has behavior:")]
async fn has_behavior(world: &mut HpaWorld, step: &Step, name: String) -> StepResult {
    let hpa = world.hpa(&name).await?;
    spec_part_is(world, step, &name, "behavior", hpa.spec.behavior.as_ref()).await
}

/// Compares a part of HPA `name`'s stored spec (`what`: `metrics`,
/// `behavior`) with the step's YAML, defaults and key order aside.
async fn spec_part_is<T: serde::Serialize>(
    world: &mut HpaWorld,
    step: &Step,
    name: &str,
    what: &str,
    got: Option<&T>,
) -> StepResult {
    let want = yaml(doc_string(step)?, &format!("expected {what}"))?;
    let got = got
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| StepError::State(format!("HPA {name} {what}: {e}")))?
        .unwrap_or(Value::Null);
    if normalize(&got) != normalize(&want) {
        return fail(
            world,
            format!(
                "expected HPA {name} to have the {what}\n{}\nit has\n{}",
                pretty(&want),
                pretty(&got)
            ),
        )
        .await;
    }
    Ok(())
}

#[then(expr = "the HPA controller's recommendations for {string} are:")]
async fn recommendations_are(world: &mut HpaWorld, step: &Step, name: String) -> StepResult {
    let table = Table::of(step, &["age", "replicas"])?;
    let mut want = Vec::new();
    for row in &table.rows {
        want.push((
            age(
                table.cell(row, "age").unwrap_or_default(),
                "recommendation age",
            )?,
            count(
                table.cell(row, "replicas").unwrap_or_default(),
                "recommended replicas",
            )?,
        ));
    }
    let key = world.hpa_key(&name);
    let (ns, n) = world.qualify(&name);
    let got: Vec<(SignedDuration, i32)> = world
        .driver()
        .await?
        .recommendations(&ns, &n)
        .await
        .map_err(StepError::controller(
            "reading the controller's recommendations",
        ))?
        .unwrap_or_default()
        .into_iter()
        .map(|r| (r.age, r.replicas))
        .collect();
    // A multiset: the order of the controller's slice is not behaviour.
    if sorted(&got) != sorted(&want) {
        return fail(
            world,
            format!(
                "expected the recommendations for {key} to be [{}], they are [{}]",
                show_aged(&want),
                show_aged(&got)
            ),
        )
        .await;
    }
    Ok(())
}

#[then(expr = "the HPA controller's scale events for {string} are:")]
async fn scale_events_are(world: &mut HpaWorld, step: &Step, name: String) -> StepResult {
    let table = Table::of(step, &["age", "direction", "pods"])?;
    // The flag is compared only when the table has the column.
    let with_flag = table.col("outdated").is_some();
    let mut want = Vec::new();
    for row in &table.rows {
        want.push((
            age(
                table.cell(row, "age").unwrap_or_default(),
                "scale event age",
            )?,
            table.cell(row, "direction").unwrap_or_default().to_owned(),
            count(
                table.cell(row, "pods").unwrap_or_default(),
                "scale event pods",
            )?,
            with_flag && super::controller::outdated(table.cell(row, "outdated"))?,
        ));
    }
    let key = world.hpa_key(&name);
    let (ns, n) = world.qualify(&name);
    let got: Vec<(SignedDuration, String, i32, bool)> = world
        .driver()
        .await?
        .scale_events(&ns, &n)
        .await
        .map_err(StepError::controller(
            "reading the controller's scale events",
        ))?
        .into_iter()
        .map(|e| {
            let d = match e.direction {
                hpa_controller::Direction::Up => "up",
                hpa_controller::Direction::Down => "down",
            };
            (e.age, d.to_owned(), e.pods, with_flag && e.outdated)
        })
        .collect();
    if sorted(&got) != sorted(&want) {
        let show = |v: &[(SignedDuration, String, i32, bool)]| {
            v.iter()
                .map(|(a, d, p, o)| {
                    let flag = if *o { " (outdated)" } else { "" };
                    format!("{} ago {d} {p}{flag}", Duration(*a))
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        return fail(
            world,
            format!(
                "expected the scale events for {key} to be [{}], they are [{}]",
                show(&want),
                show(&got)
            ),
        )
        .await;
    }
    Ok(())
}

#[then(expr = "the controller metric {string} is {float}")]
async fn controller_metric(world: &mut HpaWorld, sample: String, want: f64) -> StepResult {
    let sample = unescape(&sample);
    let text = world
        .driver()
        .await?
        .metrics_text()
        .await
        .map_err(StepError::controller("reading the controller's metrics"))?;
    let got = hpa_controller::metrics::sample_value(&text, &sample);
    if got.is_none_or(|g| (g - want).abs() > 1e-9) {
        return fail(
            world,
            format!(
                "expected the controller metric {sample} to be {want}, it is {}",
                got.map_or_else(|| "absent".to_owned(), |g| g.to_string())
            ),
        )
        .await;
    }
    Ok(())
}

#[then(expr = "an event {string} is recorded for the HPA {string}")]
async fn event_recorded(world: &mut HpaWorld, reason: String, name: String) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            check_event(world, &reason, None, &name, true).await
        })
        .await
}

#[then(expr = "no event {string} is recorded for the HPA {string}")]
async fn no_event_recorded(world: &mut HpaWorld, reason: String, name: String) -> StepResult {
    check_event(world, &reason, None, &name, false).await
}

#[then(expr = "an event {string} with message {string} is recorded for the HPA {string}")]
async fn event_with_message(
    world: &mut HpaWorld,
    reason: String,
    message: String,
    name: String,
) -> StepResult {
    world
        .eventually(async |world: &mut HpaWorld| {
            check_event(world, &reason, Some(&unescape(&message)), &name, true).await
        })
        .await
}

#[then(expr = "the HPA {string} last scaled {duration} ago")]
async fn last_scaled(world: &mut HpaWorld, name: String, ago: Duration) -> StepResult {
    // On the wall clock the scale happened at a sync that landed a moment
    // before the step (upstream's, somewhere in the period the step before
    // waited): "N ago" then means within the sync period before now - N.
    let window = match world.patience() {
        Some(_) => jiff::SignedDuration::try_from(world.sync_period()).unwrap_or_default(),
        None => jiff::SignedDuration::ZERO,
    };
    let now = world.now().await?;
    world
        .eventually(async |world: &mut HpaWorld| {
        let hpa = world.hpa(&name).await?;
        let last = hpa
            .status
            .as_ref()
            .and_then(|s| s.last_scale_time.as_ref())
            .map(|t| t.0);
        let want = now - ago.0;
        // metav1.Time keeps whole seconds.
        let want = Timestamp::from_second(want.as_second()).unwrap_or(want);
        let earliest = want - window;
        if !last.is_some_and(|t| earliest <= t && t <= want) {
            return fail(
                world,
                format!(
                    "expected HPA {name} to have last scaled {ago} ago ({want}), its lastScaleTime is {}",
                    last.map_or_else(|| "unset".to_owned(), |t| format!("{t} ({} ago)", Duration(now.duration_since(t))))
                ),
            )
            .await;
        }
        Ok(())
        })
        .await
}

#[then(expr = "the {kind} {string} stays at {int} replica(s) for {duration}")]
async fn stays_at(
    world: &mut HpaWorld,
    kind: WorkloadKind,
    name: String,
    want: i32,
    span: Duration,
) -> StepResult {
    let mut check = StaysAt {
        kind,
        name,
        want,
        started: world.now().await?,
    };
    check.check(world).await?;
    world.pass_time(span.0, check).await
}

/// "stays at": the replica count holds at every sync.
struct StaysAt {
    kind: WorkloadKind,
    name: String,
    want: i32,
    started: Timestamp,
}

impl AsyncCheck for StaysAt {
    async fn check(&mut self, world: &mut HpaWorld) -> StepResult {
        let got = world.scale_replicas(self.kind, &self.name).await?;
        if got != self.want {
            let now = world.now().await?;
            return fail(
                world,
                format!(
                    "expected {} {} to stay at {} replicas; {} into the span it has {got}",
                    self.kind,
                    self.name,
                    self.want,
                    Duration(now.duration_since(self.started))
                ),
            )
            .await;
        }
        Ok(())
    }
}

async fn check_condition(
    world: &mut HpaWorld,
    name: &str,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
) -> StepResult {
    let hpa = world.hpa(name).await?;
    let (ns, _) = world.qualify(name);
    let mut conds = conditions(&hpa);
    for c in &mut conds {
        c.message = c
            .message
            .as_deref()
            .map(|m| world.pod_names.in_step_names(&ns, m));
    }
    let found = conds.iter().find(|c| c.type_ == type_);
    let ok = found.is_some_and(|c| {
        c.status == status
            && reason.is_none_or(|r| c.reason.as_deref() == Some(r))
            && message.is_none_or(|m| c.message.as_deref() == Some(m))
    });
    if !ok {
        let mut want = format!("{type_}={status}");
        if let Some(r) = reason {
            let _ = write!(want, " with reason {r}");
        }
        if let Some(m) = message {
            let _ = write!(want, " and message {m:?}");
        }
        let got = found.map_or_else(
            || "no such condition".to_owned(),
            |c| {
                format!(
                    "{}={} with reason {} and message {:?}",
                    c.type_,
                    c.status,
                    c.reason.as_deref().unwrap_or_default(),
                    c.message.as_deref().unwrap_or_default()
                )
            },
        );
        return fail(
            world,
            format!("expected HPA {name} to have condition {want}; it has {got}"),
        )
        .await;
    }
    Ok(())
}

async fn check_event(
    world: &mut HpaWorld,
    reason: &str,
    message: Option<&str>,
    name: &str,
    present: bool,
) -> StepResult {
    let (ns, n) = world.qualify(name);
    let all = events(world, &ns).await?;
    let uid = hpa_uid(world, &ns, &n).await?;
    let of_hpa: Vec<Event> = all
        .iter()
        .filter(|e| regards(e, &n) && same_object(e, uid.as_deref()))
        .map(|e| Event {
            note: e
                .note
                .as_deref()
                .map(|m| world.pod_names.in_step_names(&ns, m)),
            ..e.clone()
        })
        .collect();
    let matching = of_hpa.iter().any(|e| {
        e.reason.as_deref() == Some(reason) && message.is_none_or(|m| e.note.as_deref() == Some(m))
    });
    if matching != present {
        let seen = of_hpa
            .iter()
            .map(|e| {
                format!(
                    "{}: {}",
                    e.reason.as_deref().unwrap_or_default(),
                    e.note.as_deref().unwrap_or_default()
                )
            })
            .collect::<Vec<_>>();
        let what = match message {
            Some(m) => format!("event {reason} with message {m:?}"),
            None => format!("event {reason}"),
        };
        return fail(
            world,
            format!(
                "expected {}{what} for HPA {ns}/{n}; its events are:\n  {}",
                if present { "an " } else { "no " },
                if seen.is_empty() {
                    "(none)".to_owned()
                } else {
                    seen.join("\n  ")
                }
            ),
        )
        .await;
    }
    Ok(())
}

/// Whether an event is about HPA `name`.
fn regards(e: &Event, name: &str) -> bool {
    e.regarding.as_ref().is_some_and(|r| {
        r.kind.as_deref() == Some("HorizontalPodAutoscaler") && r.name.as_deref() == Some(name)
    })
}

/// Events of a namespace, oldest first: only those of this scenario's time
/// (a shared cluster still lists an earlier scenario's).
async fn events(world: &mut HpaWorld, ns: &str) -> Result<Vec<Event>, StepError> {
    let api: Api<Event> = world.api(ns).await?;
    let mut list = api
        .list(&ListParams::default())
        .await
        .map_err(StepError::kube(format!(
            "listing the events of namespace {ns}"
        )))?
        .items;
    let started = world.env().await?.started_at;
    // Event times may be whole seconds.
    let since = started - SignedDuration::from_secs(1);
    list.retain(|e| event_time(e).is_none_or(|t| t >= since));
    list.sort_by_key(event_time);
    Ok(list)
}

/// When an event happened (its eventTime, else its last or creation time).
fn event_time(e: &Event) -> Option<jiff::Timestamp> {
    e.event_time
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.deprecated_last_timestamp.as_ref().map(|t| t.0))
        .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

/// The uid of HPA `ns/name`, if it exists: events of an earlier HPA of the
/// same name (another scenario's) do not count.
async fn hpa_uid(world: &mut HpaWorld, ns: &str, name: &str) -> Result<Option<String>, StepError> {
    let api: Api<HorizontalPodAutoscaler> = world.api(ns).await?;
    Ok(api
        .get_opt(name)
        .await
        .map_err(StepError::kube(format!("reading HPA {ns}/{name}")))?
        .and_then(|h| h.metadata.uid))
}

/// Whether an event about an object is about this one (same uid when both
/// say).
fn same_object(e: &Event, uid: Option<&str>) -> bool {
    match (e.regarding.as_ref().and_then(|r| r.uid.as_deref()), uid) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// The name of the scale target of HPA `ns/name`, if it exists.
async fn target_of(
    world: &mut HpaWorld,
    ns: &str,
    name: &str,
) -> Result<Option<String>, StepError> {
    let api: Api<HorizontalPodAutoscaler> = world.api(ns).await?;
    Ok(api
        .get_opt(name)
        .await
        .map_err(StepError::kube(format!("reading HPA {ns}/{name}")))?
        .map(|h| h.spec.scale_target_ref.name))
}

fn conditions(
    hpa: &HorizontalPodAutoscaler,
) -> Vec<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerCondition> {
    hpa.status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
}

fn current_metrics(hpa: &HorizontalPodAutoscaler) -> Vec<MetricStatus> {
    hpa.status
        .as_ref()
        .and_then(|s| s.current_metrics.clone())
        .unwrap_or_default()
}

/// The current value of `metric` in one status entry: averageValue where
/// the status sets it, else value.
fn metric_value(m: &MetricStatus, metric: &str) -> Option<String> {
    let (name, current) = if let Some(r) = &m.resource {
        (r.name.as_str(), &r.current)
    } else if let Some(c) = &m.container_resource {
        (c.name.as_str(), &c.current)
    } else if let Some(p) = &m.pods {
        (p.metric.name.as_str(), &p.current)
    } else if let Some(o) = &m.object {
        (o.metric.name.as_str(), &o.current)
    } else if let Some(e) = &m.external {
        (e.metric.name.as_str(), &e.current)
    } else {
        return None;
    };
    if name != metric {
        return None;
    }
    current
        .average_value
        .as_ref()
        .or(current.value.as_ref())
        .map(|q| q.0.clone())
}

/// Canonicalizes JSON for comparison: quantities and numbers as strings
/// compare by value, maps by key.
fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), normalize(v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Number(n) => Value::String(n.to_string()),
        Value::String(s) => match crate::gherkin::params::parse_quantity(s) {
            Ok(q)
                if s.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit() || c == '.') =>
            {
                Value::String(q.to_canonical_string())
            }
            _ => Value::String(s.clone()),
        },
        other => other.clone(),
    }
}

fn pretty(v: &Value) -> String {
    serde_saphyr::to_string(v).unwrap_or_else(|_| v.to_string())
}

/// A copy in order, to compare rows as multisets.
fn sorted<T: Ord + Clone>(rows: &[T]) -> Vec<T> {
    let mut rows = rows.to_vec();
    rows.sort();
    rows
}

fn show_aged(v: &[(SignedDuration, i32)]) -> String {
    v.iter()
        .map(|(a, r)| format!("{r} ({} ago)", Duration(*a)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Fails a `Then` step with `what` plus what the cluster shows.
async fn fail(world: &mut HpaWorld, what: String) -> StepResult {
    let context = crate::gherkin::cluster_report::report(world).await;
    Err(StepError::Expectation(format!("{what}\n\n{context}")))
}
