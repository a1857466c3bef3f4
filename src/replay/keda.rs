//! A ScaledObject's replay: before every HPA sync, KEDA's operator (its
//! 0 ↔ 1 steps) and metrics adapter (the values and fallback the HPA reads)
//! run on the series' trigger columns, as in a scenario
//! (`src/gherkin/world/keda.rs`); the logic is [`hpa_keda`].

use std::collections::BTreeMap;

use fake_metrics_server::script::{ExternalSpec, Value as ScriptValue};
use jiff::Timestamp;
use serde::Serialize;

use super::error::ReplayError;
use super::manifest::HpaManifest;
use super::series::Series;
use hpa_keda::adapter::{Reading, Replicas};
use hpa_keda::hpa::trigger_metrics;
use hpa_keda::scaled_object::OWNER_LABEL;
use hpa_keda::scalers::TriggerMetric;
use hpa_keda::{KedaLoop, Readings, ScaledObject};

/// One change of the target's replicas made by KEDA's operator.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KedaStep {
    /// Seconds since the series' start.
    pub at_seconds: f64,
    pub from: i32,
    pub to: i32,
    /// KEDA's event reason (`KEDAScaleTargetActivated`, ...), or
    /// `paused-replicas`.
    pub reason: String,
    pub message: String,
}

/// What KEDA did during a replay.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KedaRun {
    /// `namespace/name` of the ScaledObject.
    pub scaled_object: String,
    /// The series column read for each trigger (`s0-rabbitmq-orders` ←
    /// `queue`).
    pub columns: BTreeMap<String, String>,
    pub steps: Vec<KedaStep>,
    /// Per recorded decision: whether fallback was in force.
    pub fallback: Vec<bool>,
}

/// KEDA's state over a replay.
#[derive(Debug)]
pub struct KedaReplay {
    keda: KedaLoop,
    namespace: String,
    /// Trigger index → series column.
    columns: BTreeMap<usize, String>,
    pub run: KedaRun,
}

impl KedaReplay {
    /// Matches each External trigger with a series column: the trigger's
    /// `name`, its metric name or its type; a series of one column feeds a
    /// ScaledObject of one trigger whatever the column's name.
    pub fn new(hpa: &HpaManifest, so: &ScaledObject, series: &Series) -> Result<Self, ReplayError> {
        let triggers = trigger_metrics(so).map_err(|e| ReplayError::Create {
            file: hpa.doc.file.display().to_string(),
            line: hpa.doc.line_of("spec.triggers"),
            what: format!("ScaledObject {}", so.metadata.name),
            reason: e.to_string(),
        })?;
        let external: Vec<&TriggerMetric> = triggers.iter().filter(|t| !t.resource).collect();
        let mut columns = BTreeMap::new();
        for t in &external {
            let named = series
                .columns
                .iter()
                .find(|c| t.answers_to(&c.name))
                .map(|c| c.name.clone());
            let column = named.or_else(|| match (external.len(), series.columns.as_slice()) {
                (1, [only]) => Some(only.name.clone()),
                _ => None,
            });
            let Some(column) = column else {
                let field = format!("spec.triggers[{}]", t.index);
                return Err(ReplayError::MissingColumn {
                    hpa_file: hpa.doc.file.display().to_string(),
                    line: hpa.doc.line_of(&format!("{field}.type")),
                    field,
                    metric: t.trigger_name.clone().unwrap_or_else(|| t.metric.clone()),
                    found: format!("columns: {}", series.names().join(", ")),
                });
            };
            columns.insert(t.index, column);
        }
        let namespace = hpa.namespace.clone();
        Ok(Self {
            run: KedaRun {
                scaled_object: format!("{namespace}/{}", so.metadata.name),
                columns: triggers
                    .iter()
                    .filter_map(|t| columns.get(&t.index).map(|c| (t.metric.clone(), c.clone())))
                    .collect(),
                ..KedaRun::default()
            },
            keda: KedaLoop::new(so.clone(), &namespace),
            namespace,
            columns,
        })
    }

    /// What the triggers read at `t`: a failed read where the column has
    /// a gap, nothing where it has no sample yet.
    fn readings(&self, series: &Series, t: f64) -> Readings {
        self.columns
            .iter()
            .filter_map(|(i, c)| {
                let r = match series.column(c)?.reading(t)? {
                    None => Reading::Failed,
                    Some(v) => Reading::Value(v),
                };
                Some((*i, r))
            })
            .collect()
    }

    /// KEDA's turn at `t`: the replica count to set on the target, if any.
    /// The replay's HPA was made from the ScaledObject at its start, so
    /// the turn's HPA changes are not written.
    pub fn operate(
        &mut self,
        series: &Series,
        t: f64,
        now: Timestamp,
        current: i32,
    ) -> Option<i32> {
        let scale = self
            .keda
            .step(now, &self.readings(series, t), Some(current))
            .scale?;
        self.run.steps.push(KedaStep {
            at_seconds: t,
            from: current,
            to: scale.to,
            reason: scale
                .event
                .as_ref()
                .map_or("paused-replicas", |e| e.reason)
                .to_owned(),
            message: scale.event.map(|e| e.message).unwrap_or_default(),
        });
        Some(scale.to)
    }

    /// The adapter's answers to the HPA's read at `t`, for the fake metrics
    /// server (a failed read is left out: the HPA's read fails).
    pub fn answers(&mut self, series: &Series, t: f64, replicas: Replicas) -> Vec<ExternalSpec> {
        let readings = self.readings(series, t);
        let answers = self.keda.answer(&readings, replicas);
        let name = self.keda.scaled_object().metadata.name.clone();
        let labels = BTreeMap::from([(OWNER_LABEL.to_owned(), name)]);
        answers
            .iter()
            .filter_map(|a| {
                a.quantity().map(|q| ExternalSpec {
                    namespace: self.namespace.clone(),
                    metric: a.metric.clone(),
                    labels: labels.clone(),
                    value: ScriptValue(q),
                    timestamp: None,
                    window: None,
                })
            })
            .collect()
    }

    /// Records whether fallback is in force for the decision just taken.
    pub fn record_fallback(&mut self) {
        let on = self.keda.fallback_active();
        self.run.fallback.push(on);
    }
}
