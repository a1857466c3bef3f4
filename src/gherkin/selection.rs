//! Which scenarios a run takes (`Selection`): its tag expression, less
//! known bugs when asked, `--name`, `FILE:LINE` filters, and in each pass
//! those that run under the pass's release.

use std::path::PathBuf;

use cucumber::gherkin::{self, tagexpr::TagOperation};
use cucumber::tag::Ext as _;
use hpa_core::version::KubernetesVersion;

use super::feature_files;
use super::versions;

/// The tag marking scenarios that fail because of a known bug outside the
/// runner; `tests/features.rs` leaves them out.
pub const KNOWN_BUG_TAG: &str = "known-bug";

/// The tag of scenarios whose pods run on a real node when the cluster is
/// real (elsewhere it changes nothing).
pub const REAL_NODE_TAG: &str = "real-node";
/// The tag of scenarios exact to the second: they run only where time is
/// virtual (on a real cluster they are not runnable, and say so).
pub const VIRTUAL_CLOCK_TAG: &str = "virtual-clock";
/// The tag of scenarios that count on the simulated cluster's workload
/// controllers keeping the pods they name: on a real cluster, whose
/// ReplicaSet replaces a failed or deleted pod at once and whose rollouts
/// pick their own pods, they are not runnable, and say so.
pub const SIMULATED_WORKLOADS_TAG: &str = "simulated-workloads";

/// A scenario's `@k8s-` tag names no supported release.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {reason}")]
pub struct VersionTagError {
    /// The feature file and line of the scenario.
    pub location: String,
    /// What is wrong with the tag.
    pub reason: String,
}

/// Which scenarios a run takes: the tag expression, less known bugs when
/// asked; in one pass, those that run under the pass's release.
#[derive(Debug, Clone)]
pub(super) struct Selection {
    pub(super) tags: Option<TagOperation>,
    pub(super) exclude_known_bugs: bool,
    /// The releases the run names.
    pub(super) run_versions: Vec<KubernetesVersion>,
    /// The release of the current pass (`None`: any).
    pub(super) pass: Option<KubernetesVersion>,
    /// `FILE:LINE` filters.
    pub(super) lines: super::line_filter::Lines,
    /// `--name`.
    pub(super) name: Option<regex::Regex>,
}

/// A scenario's tags with its feature's and rule's.
fn all_tags<'a>(
    feature: &'a gherkin::Feature,
    rule: Option<&'a gherkin::Rule>,
    scenario: &'a gherkin::Scenario,
) -> Vec<&'a str> {
    feature
        .tags
        .iter()
        .chain(rule.iter().flat_map(|r| r.tags.iter()))
        .chain(scenario.tags.iter())
        .map(|t| t.trim_start_matches('@'))
        .collect()
}

/// Every scenario of `features`, with its rule.
fn scenarios_of(
    f: &gherkin::Feature,
) -> impl Iterator<Item = (Option<&gherkin::Rule>, &gherkin::Scenario)> {
    let plain = f.scenarios.iter().map(|s| (None, s));
    let ruled = f
        .rules
        .iter()
        .flat_map(|r| r.scenarios.iter().map(move |s| (Some(r), s)));
    plain.chain(ruled)
}

impl Selection {
    pub(super) fn selects(
        &self,
        feature: &gherkin::Feature,
        rule: Option<&gherkin::Rule>,
        scenario: &gherkin::Scenario,
    ) -> bool {
        let all = all_tags(feature, rule, scenario);
        let known_bug = all.contains(&KNOWN_BUG_TAG);
        if self.exclude_known_bugs && known_bug {
            return false;
        }
        if self
            .name
            .as_ref()
            .is_some_and(|re| !re.is_match(&scenario.name))
        {
            return false;
        }
        if !self.lines.is_empty() {
            let lines: Vec<u32> = scenarios_of(feature)
                .map(|(_, s)| u32::try_from(s.position.line).unwrap_or(u32::MAX))
                .collect();
            let line = u32::try_from(scenario.position.line).unwrap_or(u32::MAX);
            if !self.lines.selects(feature.path.as_deref(), line, &lines) {
                return false;
            }
        }
        if let Some(pass) = self.pass {
            let ours = versions::of_scenario(all.iter().copied(), &self.run_versions);
            if !ours.is_ok_and(|v| v.contains(&pass)) {
                return false;
            }
        }
        self.tags
            .as_ref()
            .is_none_or(|op| op.eval(all.iter().copied()))
    }

    /// How many files and scenarios there are, and how many are selected;
    /// a `@k8s-` tag naming no supported release is an error naming its
    /// scenario.
    pub(super) fn count(
        &self,
        files: &[PathBuf],
        features: &[gherkin::Feature],
    ) -> Result<feature_files::Found, VersionTagError> {
        let mut found = feature_files::Found {
            files: files.len(),
            ..feature_files::Found::default()
        };
        for f in features {
            for (rule, s) in scenarios_of(f) {
                found.scenarios += 1;
                versions::of_scenario(all_tags(f, rule, s), &self.run_versions).map_err(
                    |reason| VersionTagError {
                        location: format!(
                            "{}:{}",
                            f.path
                                .as_ref()
                                .map_or_else(String::new, |p| p.display().to_string()),
                            s.position.line
                        ),
                        reason,
                    },
                )?;
                if self.selects(f, rule, s) {
                    found.selected += 1;
                }
            }
        }
        Ok(found)
    }

    /// The releases some selected scenario runs under, oldest first.
    pub(super) fn passes(&self, features: &[gherkin::Feature]) -> Vec<KubernetesVersion> {
        let mut used = std::collections::BTreeSet::new();
        for f in features {
            for (rule, s) in scenarios_of(f) {
                if !self.selects(f, rule, s) {
                    continue;
                }
                if let Ok(list) = versions::of_scenario(all_tags(f, rule, s), &self.run_versions) {
                    used.extend(list);
                }
            }
        }
        used.into_iter().collect()
    }
}
