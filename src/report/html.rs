//! The HTML report of `hpa-harness test --report DIR`: one self-contained
//! page per run (`DIR/index.html`), failures first, each scenario with its
//! verdict, its error, its timelines and its decision trace.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::ScenarioRecord;
use crate::gherkin::Verdict;
use crate::plot::Layout;

/// Why the report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("HTML report {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Escapes text for HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1250px; color: #222; }
h1 { margin-bottom: 0.2em; }
.counts span { margin-right: 1.5em; font-weight: bold; }
table.index { border-collapse: collapse; width: 100%; margin: 1em 0 2em; }
table.index td, table.index th { border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; }
.failed { color: #b00020; } .passed { color: #1b7a2f; } .unsupported { color: #8a6d00; }
section.scenario { border: 1px solid #ccc; border-radius: 6px; padding: 0.5em 1em 1em; margin: 1.5em 0; }
section.scenario.failed { border-left: 6px solid #b00020; }
section.scenario.passed { border-left: 6px solid #1b7a2f; }
section.scenario.unsupported { border-left: 6px solid #d4a800; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 12px; }
pre.error { background: #fdecee; color: #700; white-space: pre-wrap; }
.timeline svg { max-width: 100%; height: auto; }
.where { color: #666; font-size: 0.9em; }
";

fn class(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Passed => "passed",
        Verdict::Failed(_) => "failed",
        Verdict::Unsupported(_) => "unsupported",
    }
}

fn word(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Passed => "passed",
        Verdict::Failed(_) => "FAILED",
        Verdict::Unsupported(_) => "unsupported here",
    }
}

/// The page for `records` (already in report order), run over `paths`.
pub fn page(records: &[ScenarioRecord], paths: &[PathBuf], junit: Option<&Path>) -> String {
    let count = |c: &str| {
        records
            .iter()
            .filter(|r| class(&r.outcome.verdict) == c)
            .count()
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>hpa-harness report</title><style>{STYLE}</style></head><body>\n"
    );
    let _ = writeln!(out, "<h1>hpa-harness test report</h1>");
    let _ = writeln!(
        out,
        "<p class=\"where\">{}{}</p>",
        esc(&paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")),
        junit
            .map(|j| format!(" · JUnit: {}", esc(&j.display().to_string())))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "<p class=\"counts\"><span class=\"failed\">{} failed</span>\
         <span class=\"unsupported\">{} unsupported</span>\
         <span class=\"passed\">{} passed</span></p>",
        count("failed"),
        count("unsupported"),
        count("passed")
    );
    let _ = writeln!(
        out,
        "<table class=\"index\"><tr><th>result</th><th>scenario</th><th>feature</th><th>where</th></tr>"
    );
    for (i, r) in records.iter().enumerate() {
        let o = &r.outcome;
        let _ = writeln!(
            out,
            "<tr><td class=\"{c}\">{w}</td><td><a href=\"#s{i}\">{s}</a></td><td>{f}</td><td class=\"where\">{l}</td></tr>",
            c = class(&o.verdict),
            w = word(&o.verdict),
            s = esc(&o.scenario),
            f = esc(&o.feature),
            l = esc(&o.location),
        );
    }
    let _ = writeln!(out, "</table>");
    for (i, r) in records.iter().enumerate() {
        section(&mut out, i, r);
    }
    let _ = writeln!(out, "</body></html>");
    out
}

fn section(out: &mut String, i: usize, r: &ScenarioRecord) {
    let o = &r.outcome;
    let c = class(&o.verdict);
    let _ = writeln!(
        out,
        "<section class=\"scenario {c}\" id=\"s{i}\"><h2><span class=\"{c}\">{}</span> {}</h2>\
         <p class=\"where\">{} · {}</p>",
        word(&o.verdict),
        esc(&o.scenario),
        esc(&o.feature),
        esc(&o.location)
    );
    match (&o.verdict, &o.failure) {
        (Verdict::Passed, _) => {}
        (_, Some(e)) => {
            let _ = writeln!(out, "<pre class=\"error\">{}</pre>", esc(e));
        }
        (Verdict::Failed(m) | Verdict::Unsupported(m), None) => {
            let _ = writeln!(out, "<pre class=\"error\">{}</pre>", esc(m));
        }
    }
    if r.hpas.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"where\">The controller took no decision.</p>"
        );
    }
    for hpa in &r.hpas {
        let _ = writeln!(out, "<h3>HPA {}</h3>", esc(&hpa.key));
        match crate::plot::render(std::slice::from_ref(&hpa.timeline), Layout::Stacked) {
            Ok(svg) => {
                let _ = writeln!(out, "<div class=\"timeline\">{svg}</div>");
            }
            Err(e) => {
                let _ = writeln!(
                    out,
                    "<p class=\"where\">no timeline: {}</p>",
                    esc(&e.to_string())
                );
            }
        }
        let _ = writeln!(
            out,
            "<details><summary>decision trace ({} syncs)</summary><pre>",
            hpa.decisions.len()
        );
        for d in &hpa.decisions {
            let offset = r
                .started_at
                .map_or(jiff::SignedDuration::ZERO, |s| d.at.duration_since(s));
            let table = crate::gherkin::explain::table(offset, &[(hpa.key.clone(), d.clone())]);
            let _ = write!(out, "{}", esc(&table));
        }
        let _ = writeln!(out, "</pre></details>");
    }
    let _ = writeln!(out, "</section>");
}

/// Writes the page to `dir/index.html`, creating `dir`; returns the file.
pub fn write(
    dir: &Path,
    records: &[ScenarioRecord],
    paths: &[PathBuf],
    junit: Option<&Path>,
) -> Result<PathBuf, ReportError> {
    let file = dir.join("index.html");
    let err = |source| ReportError::Write {
        path: file.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(err)?;
    std::fs::write(&file, page(records, paths, junit)).map_err(err)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gherkin::ScenarioOutcome;

    fn record(name: &str, verdict: Verdict) -> ScenarioRecord {
        ScenarioRecord {
            outcome: ScenarioOutcome {
                feature: "F".to_owned(),
                scenario: name.to_owned(),
                location: "features/x.feature:3".to_owned(),
                verdict,
                kubernetes_version: hpa_core::KubernetesVersion::default(),
                failure: None,
            },
            started_at: None,
            hpas: Vec::new(),
        }
    }

    #[test]
    fn the_page_lists_each_scenario_with_its_verdict_and_escapes_text() {
        let html = page(
            &[
                record("a <b>", Verdict::Failed("expected 5, got <3>".to_owned())),
                record("ok", Verdict::Passed),
            ],
            &[PathBuf::from("features")],
            Some(Path::new("junit.xml")),
        );
        assert!(html.contains("1 failed"), "{html}");
        assert!(html.contains("1 passed"), "{html}");
        assert!(html.contains("a &lt;b&gt;"), "{html}");
        assert!(html.contains("expected 5, got &lt;3&gt;"), "{html}");
        assert!(html.contains("JUnit: junit.xml"), "{html}");
        assert!(html.find("a &lt;b&gt;") < html.find(">ok<"), "{html}");
    }
}
