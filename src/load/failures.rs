//! Failed syncs: a sync whose metric could not be read, or whose scale
//! could not be written, kept no HPA at its target, so it is not counted as
//! a sync. The report lists failures by reason, and a run where more than
//! [`MAX_FAILED_SHARE`] of the syncs failed measured the failures, not the
//! controller: it is refused as a measurement.

use std::collections::BTreeMap;

/// The share of failed syncs above which a run is no measurement.
pub const MAX_FAILED_SHARE: f64 = 0.01;

/// Distinct reasons kept; the rest are counted under [`OTHER`].
const MAX_REASONS: usize = 20;

/// Where failures of reasons beyond the first `MAX_REASONS` are counted.
pub const OTHER: &str = "(other reasons)";

/// Reasons are cut to this many characters.
const MAX_REASON_CHARS: usize = 200;

/// Failed syncs by reason.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Failures {
    /// Every failed sync.
    pub total: u64,
    /// Failed syncs by reason (bounded: see [`OTHER`]).
    pub by_reason: BTreeMap<String, u64>,
}

impl Failures {
    /// Counts one failed sync.
    pub fn record(&mut self, reason: &str) {
        self.total += 1;
        let reason = reason_of(reason);
        if let Some(n) = self.by_reason.get_mut(&reason) {
            *n += 1;
        } else if self.by_reason.len() < MAX_REASONS {
            self.by_reason.insert(reason, 1);
        } else {
            *self.by_reason.entry(OTHER.to_owned()).or_default() += 1;
        }
    }
}

/// A reason as the report lists it: the first line, digits of names
/// folded (`load-3/w17` reads `load-N/wN`) so that one cause is one
/// reason, cut to a length.
pub fn reason_of(message: &str) -> String {
    let line = message.lines().next().unwrap_or_default().trim();
    let mut out = String::new();
    let mut prev: Option<char> = None;
    let mut in_digits = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            // Digits glued to a name (`w17`, `load-3`) are folded; numbers
            // standing alone (a status 404) are kept.
            let glued = in_digits || prev.is_some_and(|p| p.is_ascii_alphabetic() || p == '-');
            if glued {
                if !in_digits {
                    out.push('N');
                }
                in_digits = true;
                prev = Some(c);
                continue;
            }
        }
        in_digits = false;
        out.push(c);
        prev = Some(c);
    }
    out.chars().take(MAX_REASON_CHARS).collect()
}

/// Why a run with `syncs` successful and `failed` failed syncs is no
/// measurement, naming the most frequent reasons; `None` when at most
/// [`MAX_FAILED_SHARE`] failed.
pub fn refusal(syncs: u64, failed: u64, reasons: &BTreeMap<String, u64>) -> Option<String> {
    let attempts = syncs + failed;
    if failed == 0 || (failed as f64) <= MAX_FAILED_SHARE * attempts as f64 {
        return None;
    }
    Some(format!(
        "{failed} of {attempts} syncs failed ({:.1} %, more than {} %): not a measurement; first reasons: {}",
        100.0 * failed as f64 / attempts as f64,
        MAX_FAILED_SHARE * 100.0,
        first_reasons(reasons, 3)
    ))
}

/// The `n` most frequent reasons, with their counts.
pub fn first_reasons(reasons: &BTreeMap<String, u64>, n: usize) -> String {
    let mut sorted: Vec<(&String, &u64)> = reasons.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    sorted
        .into_iter()
        .take(n)
        .map(|(r, c)| format!("{c}x {r:?}"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_fold_the_digits_of_names_but_keep_numbers() {
        let table = [
            (
                "unable to fetch metrics: the server could not find the metric requests_per_second for pods * in namespace load-12",
                "unable to fetch metrics: the server could not find the metric requests_per_second for pods * in namespace load-N",
            ),
            (
                "no metrics returned from resource metrics API",
                "no metrics returned from resource metrics API",
            ),
            (
                "rescale of load-0/w17: answered 409\nmore",
                "rescale of load-N/wN: answered 409",
            ),
        ];
        for (message, want) in table {
            assert_eq!(reason_of(message), want);
        }
        assert_eq!(reason_of(&"x".repeat(500)).len(), MAX_REASON_CHARS);
    }

    #[test]
    fn one_cause_is_one_reason_and_reasons_are_bounded() {
        let mut f = Failures::default();
        f.record("not found in namespace load-1");
        f.record("not found in namespace load-2");
        assert_eq!(f.by_reason.len(), 1);
        for i in 0..30 {
            f.record(&format!("cause {i}"));
        }
        assert_eq!(f.total, 32);
        assert_eq!(f.by_reason.len(), MAX_REASONS + 1);
        assert_eq!(f.by_reason.values().sum::<u64>(), 32);
        assert!(f.by_reason.contains_key(OTHER));
    }

    #[test]
    fn more_than_one_percent_failed_is_no_measurement() {
        let reasons = BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 9)]);
        let table = [
            (990, 10, false),
            (989, 11, true),
            (0, 0, false),
            (0, 1, true),
            (100, 0, false),
        ];
        for (syncs, failed, refused) in table {
            assert_eq!(
                refusal(syncs, failed, &reasons).is_some(),
                refused,
                "{syncs} {failed}"
            );
        }
        let why = refusal(184, 546, &reasons).unwrap();
        assert!(why.contains("546 of 730 syncs failed"), "{why}");
        assert!(why.contains("9x \"b\"; 1x \"a\""), "{why}");
    }
}
