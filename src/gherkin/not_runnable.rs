//! Why a scenario cannot run where it was asked to: each "unsupported
//! here" reason falls in one of a few [`Category`]s, and docs/steps.md
//! keeps the list of the scenarios of `features/` that do not run on a
//! real cluster, with theirs, for our controller and for upstream's.
//! `tests/control_plane.rs` runs the library on the genuine control plane
//! and holds the run to that list both ways: a scenario not run without a
//! listed reason fails it, and so does a listed one that ran.

use std::collections::BTreeMap;

use super::outcome::{ScenarioOutcome, Verdict};

/// Why a scenario cannot run on a real cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    /// A ScaledObject: the harness's model of KEDA needs the simulated
    /// cluster.
    Keda,
    /// Pinned to a release other than the cluster's own.
    Release,
    /// An injected API-server fault or a bent `/scale` subresource.
    ApiServerFault,
    /// Pods whose requests differ from their template's.
    PodRequests,
    /// Tagged `@virtual-clock`: exact to the second.
    VirtualClock,
    /// Tagged `@simulated-workloads`: counts on the simulated cluster's
    /// workload controllers keeping the pods it names.
    SimulatedWorkloads,
    /// Needs a feature gate the cluster's API server runs without.
    ServerGate,
    /// Needs our controller (its flags, memory or metrics) where
    /// upstream's acts.
    OurController,
}

/// Every category, in the order the list explains them.
pub const ALL: [Category; 8] = [
    Category::Keda,
    Category::Release,
    Category::ApiServerFault,
    Category::PodRequests,
    Category::VirtualClock,
    Category::SimulatedWorkloads,
    Category::ServerGate,
    Category::OurController,
];

impl Category {
    /// The word the list uses.
    pub fn key(self) -> &'static str {
        match self {
            Self::Keda => "keda",
            Self::Release => "release",
            Self::ApiServerFault => "api-server-fault",
            Self::PodRequests => "pod-requests",
            Self::VirtualClock => "virtual-clock",
            Self::SimulatedWorkloads => "simulated-workloads",
            Self::ServerGate => "server-gate",
            Self::OurController => "our-controller",
        }
    }

    fn by_key(key: &str) -> Option<Self> {
        ALL.into_iter().find(|c| c.key() == key)
    }

    /// The category of an "unsupported here" reason, as the steps word
    /// them; `None`: a reason no category covers.
    pub fn of(reason: &str) -> Option<Self> {
        let has = |s: &str| reason.contains(s);
        Some(if has("model of KEDA") {
            Self::Keda
        } else if has("this cluster runs") && has("its /version") {
            Self::Release
        } else if has("needs the simulated API server") {
            Self::ApiServerFault
        } else if has("with requests of its own") {
            Self::PodRequests
        } else if has("@virtual-clock") {
            Self::VirtualClock
        } else if has("@simulated-workloads") {
            Self::SimulatedWorkloads
        } else if has("API server runs without") {
            Self::ServerGate
        } else if has("the cluster's own HPA controller acts") || has("needs our controller") {
            Self::OurController
        } else {
            return None;
        })
    }
}

/// A scenario by its feature file (relative to the project) and name.
pub type Key = (String, String);

/// Why a scenario does not run, with our controller and with upstream's
/// (`None`: it runs).
pub type Why = [Option<Category>; 2];

/// The scenarios of two runs (ours, upstream's) that did not run, and why;
/// `Err`: reasons no category covers, each with its scenario. `root` is
/// taken off the feature paths.
pub fn of_runs(
    root: &str,
    ours: &[ScenarioOutcome],
    upstream: &[ScenarioOutcome],
) -> Result<BTreeMap<Key, Why>, Vec<String>> {
    let mut list: BTreeMap<Key, Why> = BTreeMap::new();
    let mut unknown = Vec::new();
    for (side, run) in [ours, upstream].into_iter().enumerate() {
        for o in run {
            let Verdict::Unsupported(reason) = &o.verdict else {
                continue;
            };
            let file = o.location.rsplit_once(':').map_or(&*o.location, |(f, _)| f);
            let file = file
                .strip_prefix(root)
                .unwrap_or(file)
                .trim_start_matches('/');
            match Category::of(reason) {
                Some(category) => {
                    let why = list
                        .entry((file.to_owned(), o.scenario.clone()))
                        .or_default();
                    // A scenario of several releases keeps its first reason.
                    why[side].get_or_insert(category);
                }
                None => unknown.push(format!("{} ({}): {reason}", o.scenario, o.location)),
            }
        }
    }
    if unknown.is_empty() {
        Ok(list)
    } else {
        Err(unknown)
    }
}

/// The list's rows, as docs/steps.md holds them.
pub fn render(list: &BTreeMap<Key, Why>) -> String {
    let cell = |c: Option<Category>| c.map_or("runs", Category::key);
    let mut out =
        String::from("| feature | scenario | ours | upstream |\n| --- | --- | --- | --- |\n");
    for ((file, scenario), [ours, upstream]) in list {
        out.push_str(&format!(
            "| {file} | {} | {} | {} |\n",
            scenario.replace('|', "\\|"),
            cell(*ours),
            cell(*upstream)
        ));
    }
    out
}

/// How many scenarios each category keeps from running, per side.
pub fn counts(list: &BTreeMap<Key, Why>) -> BTreeMap<Category, [usize; 2]> {
    let mut counts = BTreeMap::new();
    for why in list.values() {
        for (side, c) in why.iter().enumerate() {
            if let Some(c) = c {
                counts.entry(*c).or_insert([0, 0])[side] += 1;
            }
        }
    }
    counts
}

/// The table of how many scenarios each reason keeps from running, per
/// side, as docs/steps.md holds it (with a total row).
pub fn render_counts(list: &BTreeMap<Key, Why>) -> String {
    let counts = counts(list);
    let mut out = String::from("| reason | ours | upstream |\n| --- | --- | --- |\n");
    let mut total = [0, 0];
    for category in ALL {
        let [ours, upstream] = counts.get(&category).copied().unwrap_or([0, 0]);
        total[0] += ours;
        total[1] += upstream;
        out.push_str(&format!("| `{}` | {ours} | {upstream} |\n", category.key()));
    }
    out.push_str(&format!("| all | {} | {} |\n", total[0], total[1]));
    out
}

/// The list between the markers `<!-- not-runnable:begin -->` and
/// `<!-- not-runnable:end -->` of a document.
pub fn parse(doc: &str) -> Result<BTreeMap<Key, Why>, String> {
    let begin = doc
        .find("<!-- not-runnable:begin -->")
        .ok_or("no <!-- not-runnable:begin --> marker")?;
    let end = doc
        .find("<!-- not-runnable:end -->")
        .ok_or("no <!-- not-runnable:end --> marker")?;
    let mut list = BTreeMap::new();
    for line in doc[begin..end].lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<String> = split_row(line);
        if cells.len() != 4 || cells[0] == "feature" || cells[0] == "---" {
            continue;
        }
        let side = |s: &str| -> Result<Option<Category>, String> {
            match s {
                "runs" => Ok(None),
                key => Category::by_key(key)
                    .map(Some)
                    .ok_or_else(|| format!("unknown category {key:?} in: {line}")),
            }
        };
        list.insert(
            (cells[0].clone(), cells[1].clone()),
            [side(&cells[2])?, side(&cells[3])?],
        );
    }
    Ok(list)
}

/// A markdown table row's cells (`\|` is a `|` inside a cell).
fn split_row(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                if let Some(s) = cells.last_mut() {
                    s.push('|');
                }
            }
            '|' => cells.push(String::new()),
            c => {
                if let Some(s) = cells.last_mut() {
                    s.push(c);
                }
            }
        }
    }
    cells.into_iter().map(|c| c.trim().to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpa_core::KubernetesVersion;

    fn outcome(location: &str, scenario: &str, verdict: Verdict) -> ScenarioOutcome {
        ScenarioOutcome {
            feature: "f".into(),
            scenario: scenario.into(),
            location: location.into(),
            verdict,
            kubernetes_version: KubernetesVersion::V1_36,
            failure: None,
        }
    }

    #[test]
    fn each_reason_the_steps_give_has_its_category() {
        for (reason, want) in [
            (
                "a ScaledObject is played by the harness's model of KEDA, which needs the simulated cluster",
                Category::Keda,
            ),
            (
                "the scenario is for Kubernetes 1.37, and this cluster runs 1.36 (its /version): ...",
                Category::Release,
            ),
            (
                "injecting FailGetScale(true) for ns/web needs the simulated API server; a real one cannot be told to fail",
                Category::ApiServerFault,
            ),
            (
                "deployment ns/web: pod web-1 with requests of its own needs the simulated cluster",
                Category::PodRequests,
            ),
            (
                "the scenario is tagged @virtual-clock: its expectations are exact to the second",
                Category::VirtualClock,
            ),
            (
                "the scenario is tagged @simulated-workloads: it counts on the pods",
                Category::SimulatedWorkloads,
            ),
            (
                "the scenario turns on HPAScaleToZero, which this cluster's API server runs without",
                Category::ServerGate,
            ),
            (
                "flag feature-gates: the cluster's own HPA controller acts in this run",
                Category::OurController,
            ),
        ] {
            assert_eq!(Category::of(reason), Some(want), "{reason}");
        }
        assert_eq!(Category::of("something new"), None);
    }

    #[test]
    fn the_list_of_two_runs_reads_back_from_its_table() {
        let ours = [
            outcome(
                "/p/features/k.feature:3",
                "a | b",
                Verdict::Unsupported("model of KEDA".into()),
            ),
            outcome("/p/features/s.feature:9", "ok", Verdict::Passed),
        ];
        let upstream = [
            outcome(
                "/p/features/k.feature:3",
                "a | b",
                Verdict::Unsupported("model of KEDA".into()),
            ),
            outcome(
                "/p/features/s.feature:9",
                "ok",
                Verdict::Unsupported("needs our controller".into()),
            ),
        ];
        let list = of_runs("/p", &ours, &upstream).unwrap();
        let table = render(&list);
        assert!(
            table.contains("| features/s.feature | ok | runs | our-controller |"),
            "{table}"
        );
        let doc = format!("x\n<!-- not-runnable:begin -->\n{table}<!-- not-runnable:end -->\n");
        assert_eq!(parse(&doc).unwrap(), list);
        assert_eq!(counts(&list)[&Category::Keda], [1, 1]);
        let unknown = of_runs(
            "/p",
            &[outcome("f:1", "x", Verdict::Unsupported("new".into()))],
            &[],
        );
        assert_eq!(unknown.unwrap_err(), ["x (f:1): new"]);
    }
}
