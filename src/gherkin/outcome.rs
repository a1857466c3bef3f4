//! What a run found: each scenario's outcome and the run's totals.

use hpa_core::version::KubernetesVersion;

/// What a run found, summed over all paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub passed_steps: usize,
    pub skipped_steps: usize,
    pub failed_steps: usize,
    pub parsing_errors: usize,
    pub hook_errors: usize,
    /// Each scenario's outcome, in the order they finished.
    pub scenarios: Vec<ScenarioOutcome>,
}

/// How one scenario ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioOutcome {
    /// The feature's name.
    pub feature: String,
    /// The scenario's name.
    pub scenario: String,
    /// The feature file and line of the scenario.
    pub location: String,
    /// Passed, failed or could not run here.
    pub verdict: Verdict,
    /// The Kubernetes release it ran under.
    pub kubernetes_version: KubernetesVersion,
    /// A failed step's whole error: what it expected and the cluster report
    /// that follows (the verdict keeps only its first line).
    pub failure: Option<String>,
}

/// A scenario's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// A step failed; the first line of its error.
    Failed(String),
    /// A step needs what this cluster or controller does not offer.
    Unsupported(String),
}

impl RunSummary {
    /// Whether anything failed (a scenario, a parse, a hook; skipped steps
    /// fail too, since every step must be implemented). A scenario the
    /// backend cannot run ([`Verdict::Unsupported`]) is not a failure: it
    /// is reported apart, with why.
    pub fn failed(&self) -> bool {
        self.scenarios
            .iter()
            .any(|s| matches!(s.verdict, Verdict::Failed(_)))
            || (self.failed_steps > 0 && self.scenarios.is_empty())
            || self.skipped_steps > 0
            || self.parsing_errors > 0
            || self.hook_errors > 0
    }

    /// The scenarios the backend could not run, and why.
    pub fn not_runnable(&self) -> impl Iterator<Item = (&ScenarioOutcome, &str)> {
        self.scenarios.iter().filter_map(|s| match &s.verdict {
            Verdict::Unsupported(why) => Some((s, why.as_str())),
            _ => None,
        })
    }
}

impl Verdict {
    /// Whether both are the same verdict, whatever their reasons.
    pub(super) fn same_kind(&self, other: &Verdict) -> bool {
        matches!(
            (self, other),
            (Verdict::Passed, Verdict::Passed)
                | (Verdict::Failed(_), Verdict::Failed(_))
                | (Verdict::Unsupported(_), Verdict::Unsupported(_))
        )
    }

    /// The verdict in words, with its reason.
    pub(super) fn describe(&self) -> String {
        match self {
            Verdict::Passed => "passed".to_owned(),
            Verdict::Failed(why) => format!("failed: {why}"),
            Verdict::Unsupported(why) => format!("not possible here: {why}"),
        }
    }

    /// A scenario's verdict from how cucumber saw it end.
    pub fn of(finished: &cucumber::event::ScenarioFinished) -> Self {
        use cucumber::event::ScenarioFinished as F;
        match finished {
            F::StepPassed => Self::Passed,
            F::StepSkipped => Self::Failed("a step has no definition".to_owned()),
            F::BeforeHookFailed(_) => Self::Failed("a before hook failed".to_owned()),
            F::StepFailed(..) => {
                let text = step_error(finished).unwrap_or_default();
                let first = text.lines().next().unwrap_or_default().to_owned();
                if text.contains(super::step_error::UNSUPPORTED_MARK) {
                    Self::Unsupported(first.replace(super::step_error::UNSUPPORTED_MARK, ""))
                } else {
                    Self::Failed(first)
                }
            }
        }
    }
}

/// The whole error of the step that failed a scenario, if one did.
pub fn step_error(finished: &cucumber::event::ScenarioFinished) -> Option<String> {
    let cucumber::event::ScenarioFinished::StepFailed(_, _, err) = finished else {
        return None;
    };
    Some(match err {
        cucumber::event::StepError::Panic(p) => p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "the step panicked".to_owned()),
        other => other.to_string(),
    })
}

/// A scenario that ran in two runs (say, under the two configurations of
/// `hpa-controller`) with different verdicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DifferingVerdict {
    /// The feature file and line of the scenario.
    pub location: String,
    /// The scenario's name.
    pub scenario: String,
    /// The release it ran under.
    pub kubernetes_version: KubernetesVersion,
    /// Its verdict in the first run and in the second (`None`: it did not
    /// run there).
    pub verdicts: [Option<Verdict>; 2],
}

impl std::fmt::Display for DifferingVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<Verdict>| {
            v.as_ref()
                .map_or_else(|| "did not run".to_owned(), Verdict::describe)
        };
        write!(
            f,
            "{} ({}, Kubernetes {}): {} / {}",
            self.scenario,
            self.location,
            self.kubernetes_version,
            show(&self.verdicts[0]),
            show(&self.verdicts[1])
        )
    }
}

/// The scenarios whose verdicts differ between two runs of the same
/// selection, matched by location and release.
pub fn differing_verdicts(first: &RunSummary, second: &RunSummary) -> Vec<DifferingVerdict> {
    use std::collections::BTreeMap;
    type Key = (String, KubernetesVersion);
    let mut by_key: BTreeMap<Key, (String, [Option<Verdict>; 2])> = BTreeMap::new();
    for (i, run) in [first, second].into_iter().enumerate() {
        for o in &run.scenarios {
            let entry = by_key
                .entry((o.location.clone(), o.kubernetes_version))
                .or_insert_with(|| (o.scenario.clone(), [None, None]));
            entry.1[i] = Some(o.verdict.clone());
        }
    }
    by_key
        .into_iter()
        .filter(|(_, (_, [a, b]))| match (a, b) {
            (Some(a), Some(b)) => !a.same_kind(b),
            _ => true,
        })
        .map(
            |((location, kubernetes_version), (scenario, verdicts))| DifferingVerdict {
                location,
                scenario,
                kubernetes_version,
                verdicts,
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(location: &str, verdict: Verdict) -> ScenarioOutcome {
        ScenarioOutcome {
            feature: "f".into(),
            scenario: format!("s {location}"),
            location: location.into(),
            verdict,
            kubernetes_version: KubernetesVersion::V1_37,
            failure: None,
        }
    }

    fn run(outcomes: Vec<ScenarioOutcome>) -> RunSummary {
        RunSummary {
            scenarios: outcomes,
            ..RunSummary::default()
        }
    }

    #[test]
    fn runs_differ_where_a_verdict_changes_or_a_scenario_is_missing() {
        let first = run(vec![
            outcome("a:1", Verdict::Passed),
            outcome("a:9", Verdict::Passed),
            outcome("b:3", Verdict::Failed("x".into())),
            outcome("c:5", Verdict::Passed),
        ]);
        let second = run(vec![
            outcome("a:1", Verdict::Passed),
            outcome("a:9", Verdict::Failed("expected 3 replicas".into())),
            outcome("b:3", Verdict::Failed("y".into())),
        ]);
        let differing = differing_verdicts(&first, &second);
        let locations: Vec<&str> = differing.iter().map(|d| d.location.as_str()).collect();
        assert_eq!(locations, ["a:9", "c:5"]);
        assert_eq!(
            differing[0].to_string(),
            "s a:9 (a:9, Kubernetes 1.37): passed / failed: expected 3 replicas"
        );
        assert_eq!(differing[1].verdicts[1], None);
        assert!(differing_verdicts(&first, &first).is_empty());
    }
}
