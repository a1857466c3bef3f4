//! The cells of a step: its data table, its doc string, and the ages,
//! counts and per-container quantities written in them.

use cucumber::gherkin::Step;

use super::params::parse_duration;
use super::step_error::StepError;

/// A step's data table: a header row and data rows, cells trimmed.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table of `step`, which must have one with `required` columns.
    pub fn of(step: &Step, required: &[&str]) -> Result<Self, StepError> {
        let table = step
            .table
            .as_ref()
            .ok_or_else(|| StepError::Input(format!("step \"{}\" needs a table", step.value)))?;
        let mut rows = table
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.trim().to_owned()).collect::<Vec<_>>());
        let header = rows.next().ok_or_else(|| {
            StepError::Input(format!(
                "step \"{}\": the table needs a header row",
                step.value
            ))
        })?;
        let rows: Vec<Vec<String>> = rows.collect();
        for name in required {
            if !header.iter().any(|h| h == name) {
                return Err(StepError::Input(format!(
                    "step \"{}\": the table needs a column \"{name}\" (it has {})",
                    step.value,
                    header.join(", ")
                )));
            }
        }
        Ok(Self { header, rows })
    }

    /// The index of a column.
    pub fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// A cell by row index and column name; `None` when the column is absent.
    pub fn cell<'a>(&'a self, row: &'a [String], name: &str) -> Option<&'a str> {
        self.col(name).and_then(|i| row.get(i)).map(String::as_str)
    }
}

/// The doc string of `step`.
pub(crate) fn doc_string(step: &Step) -> Result<&str, StepError> {
    step.docstring
        .as_deref()
        .ok_or_else(|| StepError::Input(format!("step \"{}\" needs a doc string", step.value)))
}

/// An age cell (`4m`, `30s`, `0s`) as a duration.
pub(crate) fn age(text: &str, what: &str) -> Result<jiff::SignedDuration, StepError> {
    parse_duration(text).map_err(|e| StepError::Input(format!("{what}: {e}")))
}

/// A count cell.
pub(crate) fn count(text: &str, what: &str) -> Result<i32, StepError> {
    text.parse()
        .map_err(|_| StepError::Input(format!("{what}: {text:?} is not a whole number")))
}

/// Parses a per-container cell: `250m` (container `app`) or
/// `app=500m, sidecar=100m`, where `+proxy=100m` marks a restartable init
/// (sidecar) container: (container, quantity, restartable init) triples.
/// `app=` (nothing after `=`) names the container with no quantity.
pub(crate) fn per_container(
    cell: &str,
    what: &str,
) -> Result<Vec<(String, Option<String>, bool)>, StepError> {
    let mut out = Vec::new();
    for part in cell.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, q) = match part.split_once('=') {
            Some((n, q)) => (n.trim(), q.trim()),
            None => ("app", part),
        };
        let (name, sidecar) = match name.strip_prefix('+') {
            Some(n) => (n, true),
            None => (name, false),
        };
        if q.is_empty() {
            out.push((name.to_owned(), None, sidecar));
            continue;
        }
        super::params::parse_quantity(q).map_err(|e| StepError::Input(format!("{what}: {e}")))?;
        out.push((name.to_owned(), Some(q.to_owned()), sidecar));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_container_cells_name_the_app_container_by_default() {
        assert_eq!(
            per_container("250m", "x").unwrap(),
            [("app".to_owned(), Some("250m".to_owned()), false)]
        );
        assert_eq!(
            per_container("app=500m, +proxy=100m", "x").unwrap(),
            [
                ("app".to_owned(), Some("500m".to_owned()), false),
                ("proxy".to_owned(), Some("100m".to_owned()), true)
            ]
        );
        assert!(per_container("", "x").unwrap().is_empty());
        assert_eq!(
            per_container("app=, sidecar=", "x").unwrap(),
            [
                ("app".to_owned(), None, false),
                ("sidecar".to_owned(), None, false)
            ],
            "containers named with nothing after = have no quantity"
        );
        let err = per_container("app=lots", "pod web-0, cpu").unwrap_err();
        assert!(
            err.to_string().starts_with("pod web-0, cpu: bad quantity"),
            "{err}"
        );
    }
}
