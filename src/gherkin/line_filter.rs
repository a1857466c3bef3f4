//! `FILE.feature:LINE` on the command line: run the scenario at (or around)
//! a line, as cucumber users expect.
//!
//! A line selects the scenarios that start on it; failing that, the scenario
//! whose block holds it (from its `Scenario`/`Scenario Outline` line to the
//! next one). The line of a `Scenario Outline` selects every example of it,
//! and the line of one examples row only that example.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Paths with their `:LINE` suffixes split off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lines {
    /// The files (by canonical path) narrowed to lines, with their lines.
    by_file: BTreeMap<PathBuf, Vec<u32>>,
}

/// Splits `paths` into plain paths and line filters: `a.feature:47` is the
/// file `a.feature` narrowed to line 47 when `a.feature:47` itself does not
/// exist and `a.feature` does.
pub fn split(paths: &[PathBuf]) -> (Vec<PathBuf>, Lines) {
    let mut plain = Vec::new();
    let mut lines = Lines::default();
    for p in paths {
        match with_line(p) {
            Some((file, line)) => {
                let key = canonical(&file);
                lines.by_file.entry(key).or_default().push(line);
                if !plain.contains(&file) {
                    plain.push(file);
                }
            }
            None => plain.push(p.clone()),
        }
    }
    (plain, lines)
}

/// Whether `p` names a file narrowed to a line (`a.feature:47`, where
/// `a.feature` exists and `a.feature:47` does not).
pub fn is_file_with_line(p: &Path) -> bool {
    with_line(p).is_some()
}

fn with_line(p: &Path) -> Option<(PathBuf, u32)> {
    if p.exists() {
        return None;
    }
    let text = p.to_str()?;
    let (file, line) = text.rsplit_once(':')?;
    let line: u32 = line.parse().ok()?;
    let file = PathBuf::from(file);
    file.is_file().then_some((file, line))
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// The lines where scenario blocks start in a feature file's text.
fn block_starts(text: &str) -> Vec<u32> {
    const KEYWORDS: [&str; 4] = [
        "Scenario:",
        "Scenario Outline:",
        "Scenario Template:",
        "Example:",
    ];
    text.lines()
        .enumerate()
        .filter(|(_, l)| KEYWORDS.iter().any(|k| l.trim_start().starts_with(k)))
        .filter_map(|(i, _)| u32::try_from(i + 1).ok())
        .collect()
}

impl Lines {
    /// Whether no line was asked for.
    pub fn is_empty(&self) -> bool {
        self.by_file.is_empty()
    }

    /// Whether the scenario at `line` of `file` (an example's own line for
    /// outlines), among `all_lines` (every scenario line of that file), is
    /// selected. Files without a line filter are whole.
    pub fn selects(&self, file: Option<&Path>, line: u32, all_lines: &[u32]) -> bool {
        if self.is_empty() {
            return true;
        }
        let Some(file) = file else {
            return false;
        };
        let Some(wanted) = self.by_file.get(&canonical(file)) else {
            return true;
        };
        let starts = std::fs::read_to_string(file)
            .map(|t| block_starts(&t))
            .unwrap_or_default();
        wanted
            .iter()
            .any(|&w| line_selects(w, line, all_lines, &starts))
    }
}

/// Whether the wanted line `w` selects the scenario at `line`.
fn line_selects(w: u32, line: u32, all_lines: &[u32], starts: &[u32]) -> bool {
    if all_lines.contains(&w) {
        return w == line;
    }
    let block_of = |l: u32| starts.iter().rev().find(|&&s| s <= l).copied();
    match (block_of(w), block_of(line)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FEATURE: &str = "Feature: f\n\n  Scenario: one\n    Given a\n\n  Scenario Outline: two <x>\n    Given <x>\n\n    Examples:\n      | x |\n      | 1 |\n      | 2 |\n";

    #[test]
    fn a_line_selects_its_scenario_or_the_block_around_it() {
        let starts = block_starts(FEATURE);
        assert_eq!(starts, vec![3, 6]);
        // Scenarios as loaded: "one" at 3, the outline's examples at 11 and 12.
        let all = [3, 11, 12];
        assert!(line_selects(3, 3, &all, &starts));
        assert!(!line_selects(3, 11, &all, &starts));
        assert!(
            line_selects(4, 3, &all, &starts),
            "a step line selects its scenario"
        );
        assert!(
            line_selects(6, 11, &all, &starts),
            "the outline line selects every example"
        );
        assert!(line_selects(6, 12, &all, &starts));
        assert!(
            line_selects(12, 12, &all, &starts),
            "an examples row only its example"
        );
        assert!(!line_selects(12, 11, &all, &starts));
        assert!(
            !line_selects(1, 3, &all, &starts),
            "the Feature line selects none"
        );
    }

    #[test]
    fn file_line_arguments_are_split_off_only_when_the_file_exists() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.feature");
        std::fs::write(&file, FEATURE).unwrap();
        let with = PathBuf::from(format!("{}:6", file.display()));
        let missing = dir.path().join("b.feature:3");
        let (plain, lines) = split(&[with, missing.clone(), dir.path().to_path_buf()]);
        assert_eq!(plain, vec![file.clone(), missing, dir.path().to_path_buf()]);
        assert!(lines.selects(Some(&file), 11, &[3, 11, 12]));
        assert!(!lines.selects(Some(&file), 3, &[3, 11, 12]));
        assert!(lines.selects(Some(Path::new("other.feature")), 1, &[1]));
    }
}
