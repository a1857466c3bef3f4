//! Recording a run for people to look at: each scenario's verdict with its
//! controller decisions and timelines, filled by the runner's hooks
//! ([`RunOptions::record`](super::RunOptions::record)); `crate::report`
//! draws them (`explain --plot`, `test --report`).

use std::sync::{Arc, Mutex};

use crate::plot::Timeline;
use hpa_controller::config::ControllerConfig;
use hpa_controller::decisions::DecisionRecord;

use super::{HpaWorld, ScenarioOutcome, Verdict};

/// Decisions kept per HPA while recording: every sync of any scenario
/// (an hour of 15 s syncs is 240).
pub const DECISIONS_KEPT: usize = 5_000;

/// One HPA's decisions in a scenario.
#[derive(Debug, Clone)]
pub struct HpaRecord {
    /// `namespace/name`.
    pub key: String,
    /// Oldest first.
    pub decisions: Vec<DecisionRecord>,
    pub timeline: Timeline,
}

/// One scenario as it ended.
#[derive(Debug, Clone)]
pub struct ScenarioRecord {
    pub outcome: ScenarioOutcome,
    /// The virtual (or wall) time the scenario started at.
    pub started_at: Option<jiff::Timestamp>,
    pub hpas: Vec<HpaRecord>,
}

/// Collects [`ScenarioRecord`]s from the runner's hooks; clones share the
/// records.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    records: Arc<Mutex<Vec<ScenarioRecord>>>,
}

impl Recorder {
    /// Makes the controller of a scenario keep every decision.
    pub fn prepare(config: &mut ControllerConfig) {
        config.decisions_kept = config.decisions_kept.max(DECISIONS_KEPT);
    }

    /// Records a finished scenario with what its controller decided.
    pub fn capture(&self, outcome: &ScenarioOutcome, world: Option<&HpaWorld>) {
        let started_at = world.and_then(|w| w.cluster.env_if_started().map(|e| e.started_at));
        let hpas = match (world, started_at) {
            (Some(w), Some(start)) => w
                .cluster
                .driver_if_started()
                .map(|driver| {
                    driver
                        .keys()
                        .into_iter()
                        .filter_map(|key| {
                            let (ns, name) = key.split_once('/')?;
                            let decisions = driver.decisions(ns, name, DECISIONS_KEPT);
                            let timeline = Timeline::from_decisions(
                                format!("{} — HPA {key}", outcome.scenario),
                                start,
                                &decisions,
                                None,
                            );
                            Some(HpaRecord {
                                key,
                                decisions,
                                timeline,
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let record = ScenarioRecord {
            outcome: outcome.clone(),
            started_at,
            hpas,
        };
        if let Ok(mut all) = self.records.lock() {
            all.push(record);
        }
    }

    /// The records so far, failures first, then in file order.
    pub fn scenarios(&self) -> Vec<ScenarioRecord> {
        let mut all = self.records.lock().map(|r| r.clone()).unwrap_or_default();
        all.sort_by_key(|r| {
            let rank = match r.outcome.verdict {
                Verdict::Failed(_) => 0,
                Verdict::Unsupported(_) => 1,
                Verdict::Passed => 2,
            };
            (rank, location_key(&r.outcome.location))
        });
        all
    }
}

/// `file:line` sorted by file, then by line as a number.
fn location_key(location: &str) -> (String, u64) {
    match location.rsplit_once(':') {
        Some((file, line)) => (file.to_owned(), line.parse().unwrap_or(0)),
        None => (location.to_owned(), 0),
    }
}
