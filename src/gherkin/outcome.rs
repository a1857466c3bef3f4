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
    /// Whether anything failed (a step, a parse, a hook; skipped steps fail
    /// too, since every step must be implemented).
    pub fn failed(&self) -> bool {
        self.failed_steps > 0
            || self.skipped_steps > 0
            || self.parsing_errors > 0
            || self.hook_errors > 0
    }
}

impl Verdict {
    /// A scenario's verdict from how cucumber saw it end.
    pub fn of(finished: &cucumber::event::ScenarioFinished) -> Self {
        use cucumber::event::ScenarioFinished as F;
        match finished {
            F::StepPassed => Self::Passed,
            F::StepSkipped => Self::Failed("a step has no definition".to_owned()),
            F::BeforeHookFailed(_) => Self::Failed("a before hook failed".to_owned()),
            F::StepFailed(_, _, err) => {
                let text = match err {
                    cucumber::event::StepError::Panic(p) => p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_else(|| "the step panicked".to_owned()),
                    other => other.to_string(),
                };
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
