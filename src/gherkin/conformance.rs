//! The conformance report: the same scenarios run once with the cluster's
//! own HPA controller (upstream) and once with ours, side by side.
//!
//! Building and printing the table is pure; `hpa-harness conformance` runs
//! the scenarios.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::outcome::{ScenarioOutcome, Verdict};

/// One scenario's two results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// `file:line`.
    pub location: String,
    /// The scenario's name.
    pub scenario: String,
    /// With kube-controller-manager's controller (`None`: not run).
    pub upstream: Option<Verdict>,
    /// With ours.
    pub ours: Option<Verdict>,
}

impl Row {
    /// Whether both ran and one passed where the other failed (a scenario
    /// one of them cannot run is no disagreement).
    pub fn disagrees(&self) -> bool {
        match (&self.upstream, &self.ours) {
            (Some(u), Some(o)) => {
                let decided = |v: &Verdict| !matches!(v, Verdict::Unsupported(_));
                decided(u) && decided(o) && (*u == Verdict::Passed) != (*o == Verdict::Passed)
            }
            _ => false,
        }
    }
}

/// Pairs the outcomes of the two runs by scenario location, in file order.
pub fn rows(upstream: &[ScenarioOutcome], ours: &[ScenarioOutcome]) -> Vec<Row> {
    let mut by_location: BTreeMap<(String, u64), Row> = BTreeMap::new();
    for o in upstream {
        let key = sort_key(&o.location);
        let row = by_location.entry(key).or_insert_with(|| blank(o));
        row.upstream = Some(o.verdict.clone());
    }
    for o in ours {
        let key = sort_key(&o.location);
        let row = by_location.entry(key).or_insert_with(|| blank(o));
        row.ours = Some(o.verdict.clone());
    }
    by_location.into_values().collect()
}

fn blank(o: &ScenarioOutcome) -> Row {
    Row {
        location: o.location.clone(),
        scenario: o.scenario.clone(),
        upstream: None,
        ours: None,
    }
}

/// `file:line` sorted by file, then line as a number.
fn sort_key(location: &str) -> (String, u64) {
    match location.rsplit_once(':') {
        Some((file, line)) => (file.to_owned(), line.parse().unwrap_or(u64::MAX)),
        None => (location.to_owned(), 0),
    }
}

fn cell(v: Option<&Verdict>) -> &'static str {
    match v {
        Some(Verdict::Passed) => "pass",
        Some(Verdict::Failed(_)) => "FAIL",
        Some(Verdict::Unsupported(_)) => "n/a",
        None => "-",
    }
}

/// The table `scenario | upstream | ours`, a line of totals, and for each
/// disagreement or failure why.
pub fn render(rows: &[Row]) -> String {
    let width = rows
        .iter()
        .map(|r| r.scenario.chars().count())
        .max()
        .unwrap_or(0)
        .max("scenario".len());
    let mut out = String::new();
    let _ = writeln!(out, "{:<width$} | upstream | ours", "scenario");
    let _ = writeln!(out, "{}-|----------|------", "-".repeat(width));
    for r in rows {
        let mark = if r.disagrees() { "  <- differs" } else { "" };
        let _ = writeln!(
            out,
            "{:<width$} | {:<8} | {:<4}{mark}",
            r.scenario,
            cell(r.upstream.as_ref()),
            cell(r.ours.as_ref()),
        );
    }
    let count = |pick: fn(&Row) -> Option<&Verdict>, want: fn(&Verdict) -> bool| {
        rows.iter().filter(|r| pick(r).is_some_and(want)).count()
    };
    let passed = |v: &Verdict| *v == Verdict::Passed;
    let failed = |v: &Verdict| matches!(v, Verdict::Failed(_));
    let unsupported = |v: &Verdict| matches!(v, Verdict::Unsupported(_));
    fn up(r: &Row) -> Option<&Verdict> {
        r.upstream.as_ref()
    }
    fn ours(r: &Row) -> Option<&Verdict> {
        r.ours.as_ref()
    }
    let _ = writeln!(
        out,
        "\n{} scenarios; upstream: {} pass, {} fail, {} n/a; ours: {} pass, {} fail, {} n/a; {} differ",
        rows.len(),
        count(up, passed),
        count(up, failed),
        count(up, unsupported),
        count(ours, passed),
        count(ours, failed),
        count(ours, unsupported),
        rows.iter().filter(|r| r.disagrees()).count(),
    );
    let notes: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            [("upstream", &r.upstream), ("ours", &r.ours)]
                .into_iter()
                .filter_map(move |(who, v)| match v {
                    Some(Verdict::Failed(why)) => {
                        Some(format!("  {} ({who}, {}): {why}", r.scenario, r.location))
                    }
                    _ => None,
                })
        })
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "\nfailures:");
        for n in notes {
            let _ = writeln!(out, "{n}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(line: u32, name: &str, verdict: Verdict) -> ScenarioOutcome {
        ScenarioOutcome {
            feature: "F".to_owned(),
            scenario: name.to_owned(),
            location: format!("features/a.feature:{line}"),
            verdict,
            kubernetes_version: hpa_core::KubernetesVersion::default(),
            failure: None,
        }
    }

    #[test]
    fn rows_pair_by_location_in_line_order_and_flag_differences() {
        let upstream = vec![
            outcome(
                20,
                "b",
                Verdict::Failed("expected 3 replicas, it has 2".to_owned()),
            ),
            outcome(3, "a", Verdict::Passed),
            outcome(
                40,
                "c",
                Verdict::Unsupported("needs our controller".to_owned()),
            ),
        ];
        let ours = vec![
            outcome(3, "a", Verdict::Passed),
            outcome(40, "c", Verdict::Passed),
            outcome(20, "b", Verdict::Passed),
        ];
        let rows = rows(&upstream, &ours);
        let names: Vec<&str> = rows.iter().map(|r| r.scenario.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"], "line 3 < 20 < 40 as numbers");
        assert!(!rows[0].disagrees());
        assert!(rows[1].disagrees(), "upstream failed where ours passed");
        assert!(!rows[2].disagrees(), "n/a is no disagreement");
        let table = render(&rows);
        assert!(
            table.contains("b        | FAIL     | pass  <- differs"),
            "{table}"
        );
        assert!(table.contains("c        | n/a      | pass"), "{table}");
        assert!(
            table.contains("3 scenarios; upstream: 1 pass, 1 fail, 1 n/a; ours: 3 pass, 0 fail, 0 n/a; 1 differ"),
            "{table}"
        );
        assert!(
            table.contains("b (upstream, features/a.feature:20): expected 3 replicas, it has 2"),
            "{table}"
        );
    }

    #[test]
    fn a_scenario_only_one_side_ran_shows_a_dash() {
        let rows = rows(&[], &[outcome(3, "a", Verdict::Passed)]);
        assert_eq!(rows.len(), 1);
        assert!(!rows[0].disagrees());
        assert!(render(&rows).contains("a        | -        | pass"));
    }
}
