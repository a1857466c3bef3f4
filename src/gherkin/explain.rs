//! `hpa-harness explain`: the controller's decision at every sync as a
//! readable table, one row per HPA, its decision trace (the core's own
//! text rendering) underneath.

use std::fmt::Write as _;

use jiff::SignedDuration;

use hpa_controller::decisions::DecisionRecord;

/// Renders the decisions taken at one sync, `offset` after the scenario's
/// start.
pub fn table(offset: SignedDuration, decisions: &[(String, DecisionRecord)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "── sync at +{} ─────────────────────────────────────────────",
        fake_metrics_server::script::format_go_duration(offset)
    );
    out.push_str(&rows(decisions));
    out
}

/// The table of [`table`] without its heading: one row per HPA, its
/// events and its decision trace underneath (also what `explain
/// NAMESPACE/NAME` prints for a live HPA).
pub fn rows(decisions: &[(String, DecisionRecord)]) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 5]> = decisions
        .iter()
        .map(|(key, d)| {
            let conditions = d
                .computed_status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .map(|cs| {
                    cs.iter()
                        .map(|c| {
                            format!(
                                "{}={} {}",
                                c.type_,
                                c.status,
                                c.reason.as_deref().unwrap_or_default()
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let outcome = match (&d.error, d.rescaled) {
                (Some(e), _) => format!("error: {e}"),
                (None, true) => "rescaled".to_owned(),
                // A dry run (and a live explanation) writes nothing.
                (None, false) if d.dry_run && d.desired_replicas != d.current_replicas => {
                    "would rescale".to_owned()
                }
                (None, false) => "unchanged".to_owned(),
            };
            [
                key.clone(),
                show(d.current_replicas),
                show(d.desired_replicas),
                outcome,
                conditions,
            ]
        })
        .collect();
    let header = ["HPA", "current", "desired", "outcome", "conditions"];
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[&str]| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join(" │ ")
    };
    let _ = writeln!(out, "{}", line(&header));
    for (row, (_, d)) in rows.iter().zip(decisions) {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        let _ = writeln!(out, "{}", line(&cells));
        for e in &d.events {
            let _ = writeln!(out, "    event {:?} {}: {}", e.type_, e.reason, e.message);
        }
        if let Some(trace) = &d.trace {
            for l in trace.to_string().lines() {
                let _ = writeln!(out, "    {l}");
            }
        }
    }
    out
}

fn show(v: Option<i32>) -> String {
    v.map_or_else(|| "-".to_owned(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_becomes_one_row_of_the_table() {
        let d = DecisionRecord {
            at: jiff::Timestamp::UNIX_EPOCH,
            current_replicas: Some(2),
            desired_replicas: Some(3),
            rescaled: true,
            status_written: true,
            dry_run: false,
            observed: None,
            computed_status: None,
            events: vec![],
            error: None,
            trace: None,
        };
        let text = table(
            SignedDuration::from_secs(75),
            &[("default/web".to_owned(), d)],
        );
        assert!(text.contains("+1m15s"), "{text}");
        assert!(
            text.contains("default/web │ 2       │ 3       │ rescaled"),
            "{text}"
        );
    }
}
