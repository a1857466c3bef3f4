//! Which Kubernetes release each scenario runs under, and how a run under
//! several releases is reported.
//!
//! A run names its releases (`--kubernetes-version 1.36,1.37`; by default
//! the newest stable one, or a real cluster's own). A scenario without a
//! `@k8s-X.Y` tag runs under each of them. A tagged scenario is pinned: it
//! runs under the tagged releases the run names, or, when the run names none
//! of them, under every release it is tagged with (so a scenario written for
//! 1.36 still runs, as 1.36, in a default run).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::sync::{Arc, Mutex};

use hpa_core::version::KubernetesVersion;

use super::outcome::{ScenarioOutcome, Verdict};

/// The releases a scenario with `tags` (feature, rule and scenario tags,
/// with or without `@`) runs under in a run of `run`; a `@k8s-` tag naming
/// no supported release is an error.
pub fn of_scenario<'a>(
    tags: impl IntoIterator<Item = &'a str>,
    run: &[KubernetesVersion],
) -> Result<Vec<KubernetesVersion>, String> {
    let mut pinned = Vec::new();
    for tag in tags {
        if let Some(version) = KubernetesVersion::from_tag(tag) {
            let version = version.map_err(|e| format!("tag {tag}: {e}"))?;
            if !pinned.contains(&version) {
                pinned.push(version);
            }
        }
    }
    if pinned.is_empty() {
        return Ok(run.to_vec());
    }
    pinned.sort();
    let chosen: Vec<KubernetesVersion> =
        pinned.iter().copied().filter(|v| run.contains(v)).collect();
    Ok(if chosen.is_empty() { pinned } else { chosen })
}

/// Merges the JUnit documents of several passes (one per release) into one
/// `<testsuites>` document, each suite's name followed by its release.
pub fn merge_junit(passes: &[(KubernetesVersion, String)]) -> String {
    if let [(_, only)] = passes {
        return only.clone();
    }
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (version, doc) in passes {
        let inner = suites_of(doc);
        let label = format!(" (Kubernetes {version})\"");
        // Each `<testsuite ... name="...">` gets the release after its name.
        let mut rest = inner;
        while let Some(at) = rest.find("<testsuite ") {
            let tag_end = rest[at..].find('>').map_or(rest.len(), |e| at + e);
            let name_end = rest[at..tag_end]
                .find("name=\"")
                .map(|n| at + n + "name=\"".len())
                .and_then(|value| rest[value..tag_end].find('"').map(|e| value + e));
            match name_end {
                Some(end) => {
                    out.push_str(&rest[..end]);
                    out.push_str(&label);
                    rest = &rest[end + 1..];
                }
                None => {
                    out.push_str(&rest[..tag_end]);
                    rest = &rest[tag_end..];
                }
            }
        }
        out.push_str(rest);
        out.push('\n');
    }
    out.push_str("</testsuites>\n");
    out
}

/// What lies between a document's `<testsuites ...>` and `</testsuites>`
/// (the whole document when it has no such element).
fn suites_of(doc: &str) -> &str {
    let Some(open) = doc.find("<testsuites") else {
        return doc;
    };
    let Some(body) = doc[open..].find('>').map(|end| open + end + 1) else {
        return doc;
    };
    if doc[open..body].ends_with("/>") {
        return "";
    }
    let close = doc.rfind("</testsuites>").unwrap_or(doc.len());
    doc[body..close.max(body)].trim_matches('\n')
}

/// The scenarios that ran under more than one release and whose verdicts
/// differ, as a table for people (empty when none differ).
pub fn differences(outcomes: &[ScenarioOutcome]) -> String {
    let mut by_scenario: BTreeMap<(&str, &str), Vec<(KubernetesVersion, &Verdict)>> =
        BTreeMap::new();
    for o in outcomes {
        by_scenario
            .entry((o.location.as_str(), o.scenario.as_str()))
            .or_default()
            .push((o.kubernetes_version, &o.verdict));
    }
    let mut compared = 0;
    let mut rows = Vec::new();
    for ((location, scenario), mut verdicts) in by_scenario {
        if verdicts.len() < 2 {
            continue;
        }
        compared += 1;
        verdicts.sort_by_key(|(v, _)| *v);
        let first = verdicts[0].1;
        if verdicts.iter().all(|(_, v)| v.same_kind(first)) {
            continue;
        }
        rows.push((location, scenario, verdicts));
    }
    if compared == 0 {
        return String::new();
    }
    let mut text = String::new();
    let ran = if compared == 1 {
        "1 scenario ran".to_owned()
    } else {
        format!("{compared} scenarios ran")
    };
    if rows.is_empty() {
        let _ = writeln!(
            text,
            "Kubernetes releases: {ran} under several releases; the verdicts agree."
        );
        return text;
    }
    let _ = writeln!(
        text,
        "Kubernetes releases: {ran} under several releases; {} differ:",
        rows.len()
    );
    for (location, scenario, verdicts) in rows {
        let _ = writeln!(text, "  {scenario} ({location})");
        for (version, verdict) in verdicts {
            let _ = writeln!(text, "    {version}: {}", verdict.describe());
        }
    }
    text
}

/// A JUnit report written to memory, so that the reports of several passes
/// become one file.
#[derive(Debug, Clone, Default)]
pub(super) struct PassJunit(Arc<Mutex<Vec<u8>>>);

impl PassJunit {
    pub(super) fn text(&self) -> String {
        self.0
            .lock()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

impl io::Write for PassJunit {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.lock() {
            Ok(mut b) => {
                b.extend_from_slice(buf);
                Ok(buf.len())
            }
            Err(_) => Err(io::Error::other("the JUnit buffer's lock is poisoned")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use KubernetesVersion::*;

    #[test]
    fn untagged_scenarios_run_under_every_release_of_the_run() {
        assert_eq!(of_scenario([], &[V1_36, V1_37]), Ok(vec![V1_36, V1_37]));
        assert_eq!(of_scenario(["@slow"], &[V1_37]), Ok(vec![V1_37]));
    }

    #[test]
    fn a_pinned_scenario_runs_under_its_pins_the_run_names_else_under_all_its_pins() {
        assert_eq!(of_scenario(["@k8s-1.36"], &[V1_37]), Ok(vec![V1_36]));
        assert_eq!(
            of_scenario(["k8s-1.37", "@k8s-1.38"], &[V1_36, V1_37]),
            Ok(vec![V1_37])
        );
        assert_eq!(
            of_scenario(["@k8s-1.38", "@k8s-1.37"], &[V1_36]),
            Ok(vec![V1_37, V1_38])
        );
        let err = of_scenario(["@k8s-1.99"], &[V1_37]).unwrap_err();
        assert!(
            err.contains("tag @k8s-1.99") && err.contains("not supported"),
            "{err}"
        );
    }

    fn outcome(location: &str, v: KubernetesVersion, verdict: Verdict) -> ScenarioOutcome {
        ScenarioOutcome {
            feature: "f".into(),
            scenario: format!("s {location}"),
            location: location.into(),
            verdict,
            kubernetes_version: v,
            failure: None,
        }
    }

    #[test]
    fn differing_verdicts_are_listed_per_scenario() {
        let outcomes = [
            outcome("a:1", V1_36, Verdict::Passed),
            outcome("a:1", V1_37, Verdict::Failed("expected 2 replicas".into())),
            outcome("b:2", V1_36, Verdict::Passed),
            outcome("b:2", V1_37, Verdict::Passed),
            outcome("c:3", V1_36, Verdict::Passed),
        ];
        let text = differences(&outcomes);
        assert!(
            text.contains("2 scenarios ran under several releases; 1 differ"),
            "{text}"
        );
        assert!(
            text.contains("s a:1 (a:1)\n    1.36: passed\n    1.37: failed: expected 2 replicas"),
            "{text}"
        );
        assert!(!text.contains("b:2"), "{text}");
        let agree = differences(&outcomes[2..]);
        assert!(agree.contains("agree"), "{agree}");
        assert_eq!(differences(&outcomes[4..]), "");
    }

    #[test]
    fn junit_documents_of_several_releases_merge_into_one() {
        let doc = |name: &str| {
            format!(
                "<?xml version=\"1.0\"?>\n<testsuites name=\"run\">\n<testsuite name=\"{name}\" tests=\"1\"><testcase name=\"x\"/></testsuite>\n</testsuites>\n"
            )
        };
        let merged = merge_junit(&[(V1_36, doc("F")), (V1_37, doc("F"))]);
        assert!(
            merged.contains("<testsuite name=\"F (Kubernetes 1.36)\" tests=\"1\">"),
            "{merged}"
        );
        assert!(
            merged.contains("<testsuite name=\"F (Kubernetes 1.37)\" tests=\"1\">"),
            "{merged}"
        );
        assert_eq!(merged.matches("<testsuites").count(), 1, "{merged}");
        assert_eq!(merge_junit(&[(V1_37, doc("G"))]), doc("G"));
    }
}
