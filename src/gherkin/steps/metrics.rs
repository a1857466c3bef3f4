//! Steps that script the fake metrics server, through its HTTP control API.
//! `cpu` and `memory` go to metrics.k8s.io (per container), any other metric
//! name to custom.metrics.k8s.io (per pod).

use cucumber::gherkin::Step;
use cucumber::{given, when};
use fake_metrics_server::script::Api as MetricsApi;

use super::hpa::selector_labels;
use super::{Table, age};
use crate::gherkin::params::{Quantity, Values};
use crate::gherkin::world::{HpaWorld, SeriesKey, StepError, StepResult, set_value};

#[given(expr = "the pods of {string} report {string} of {values}")]
#[when(expr = "the pods of {string} report {string} of {values}")]
async fn pods_report(
    world: &mut HpaWorld,
    workload: String,
    metric: String,
    values: Values,
) -> StepResult {
    let (ns, n) = world.qualify(&workload);
    // New pods get the values "the new pods of ..." gave them first: these,
    // said later of the pods by name, win.
    world.report_new_pods().await?;
    // On a real cluster the pods a scale-down removes linger a moment,
    // terminating: the values are for the pods that stay (those a scenario
    // holds terminating count), once the cluster shows as many.
    let want = values.0.len();
    let mut pods = Vec::new();
    let _ = world
        .eventually(async |w: &mut HpaWorld| {
            pods = w.pods_of(&ns, &n).await?;
            pods.retain(|p| !crate::gherkin::pods::leaving(p));
            if pods.len() == want {
                Ok(())
            } else {
                Err(StepError::Expectation(String::new()))
            }
        })
        .await;
    if pods.len() != values.0.len() {
        let names: Vec<String> = pods
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        return Err(StepError::Input(format!(
            "{} values of {metric} for the {} pods of {ns}/{n} ({}): give one value per pod, in pod order",
            values.0.len(),
            pods.len(),
            names.join(", ")
        )));
    }
    for (pod, v) in pods.iter().zip(&values.0) {
        let pod = pod.metadata.name.clone().unwrap_or_default();
        set_value(world, &ns, &pod, &metric, Some(&v.0), true).await?;
    }
    Ok(())
}

#[given(expr = "the pods report:")]
#[when(expr = "the pods report:")]
async fn pods_report_table(world: &mut HpaWorld, step: &Step) -> StepResult {
    let table = Table::of(step, &["pod"])?;
    // New pods get the values "the new pods of ..." gave them first: the
    // table, later and about these pods by name, wins (with or without its
    // sample times).
    world.report_new_pods().await?;
    let metric_columns: Vec<&String> = table
        .header
        .iter()
        .filter(|h| !matches!(h.as_str(), "pod" | "timestamp" | "window"))
        .collect();
    for row in &table.rows {
        let (ns, pod) = world
            .resolve_pod(table.cell(row, "pod").unwrap_or_default())
            .await?;
        let timestamp = table
            .cell(row, "timestamp")
            .filter(|c| !c.is_empty())
            .map(|c| age(c, &format!("pod {pod}, timestamp")))
            .transpose()?;
        let window = table
            .cell(row, "window")
            .filter(|c| !c.is_empty())
            .map(|c| age(c, &format!("pod {pod}, window")))
            .transpose()?;
        {
            let model = world.pod_model(&ns, &pod).await?;
            if timestamp.is_some() {
                model.timestamp = timestamp;
            }
            if window.is_some() {
                model.window = window;
            }
        }
        for metric in &metric_columns {
            let cell = table.cell(row, metric).unwrap_or_default();
            let value = (!cell.is_empty()).then_some(cell);
            set_value(world, &ns, &pod, metric, value, false).await?;
        }
        world.push_pod(&ns, &pod).await?;
    }
    Ok(())
}

#[given(expr = "object metric {string} of {word} {string} is {quantity}")]
#[when(expr = "object metric {string} of {word} {string} is {quantity}")]
async fn object_metric_is(
    world: &mut HpaWorld,
    metric: String,
    kind: String,
    object: String,
    value: Quantity,
) -> StepResult {
    let (ns, n) = world.qualify(&object);
    let described = world.resolve_kind(&kind).await?;
    let resource = described.resource;
    let client = world.env().await?.metrics.clone();
    let namespace = described.namespaced.then_some(ns.as_str());
    client
        .set_object_metric(&resource, namespace, &n, &metric, Some(&value.0))
        .await
        .map_err(StepError::metrics(format!(
            "setting object metric {metric} of {kind} {ns}/{n}"
        )))?;
    Ok(())
}

#[given(expr = "external metric {string} with selector {string} is {values}")]
#[when(expr = "external metric {string} with selector {string} is {values}")]
async fn external_metric_is(
    world: &mut HpaWorld,
    metric: String,
    selector: String,
    values: Values,
) -> StepResult {
    let labels = selector_labels(&selector)?;
    let ns = world.namespace.clone();
    let client = world.env().await?.metrics.clone();
    let key = SeriesKey {
        ns: ns.clone(),
        metric: metric.clone(),
        selector: selector.clone(),
    };
    let before = world.metrics.series(&key);
    let series_labels = |i: usize| {
        let mut l = labels.clone();
        l.insert("series".to_owned(), i.to_string());
        l
    };
    for (i, v) in values.0.iter().enumerate() {
        client
            .set_external_metric(&ns, &metric, &series_labels(i), Some(&v.0))
            .await
            .map_err(StepError::metrics(format!(
                "setting external metric {metric} ({selector})"
            )))?;
    }
    for i in values.0.len()..before {
        client
            .set_external_metric(&ns, &metric, &series_labels(i), None)
            .await
            .map_err(StepError::metrics(format!(
                "removing a series of external metric {metric}"
            )))?;
    }
    world.metrics.set_series(key, values.0.len());
    Ok(())
}

#[given(expr = "the {word} metrics API fails")]
#[when(expr = "the {word} metrics API fails")]
async fn api_fails(world: &mut HpaWorld, api: String) -> StepResult {
    world
        .set_metrics_api_failing(metrics_api(&api)?, true)
        .await
}

#[given(expr = "the {word} metrics API recovers")]
#[when(expr = "the {word} metrics API recovers")]
async fn api_recovers(world: &mut HpaWorld, api: String) -> StepResult {
    world
        .set_metrics_api_failing(metrics_api(&api)?, false)
        .await
}

fn metrics_api(word: &str) -> Result<MetricsApi, StepError> {
    match word {
        "resource" => Ok(MetricsApi::Resource),
        "custom" => Ok(MetricsApi::Custom),
        "external" => Ok(MetricsApi::External),
        other => Err(StepError::Input(format!(
            "metrics API {other:?}: expected resource, custom or external"
        ))),
    }
}
