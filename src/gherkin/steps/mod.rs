//! Step definitions, grouped by domain. Each step is a few lines that parse
//! its captures and call [`super::world::HpaWorld`].

pub mod controller;
pub mod expect;
pub mod hpa;
pub mod metrics;
pub mod time;
pub mod workloads;

use cucumber::gherkin::Step;

use super::params::parse_duration;
use super::world::StepError;

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
