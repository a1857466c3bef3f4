//! The metric series a replay feeds the controller: a CSV export (a
//! timestamp column and one column per metric) or the JSON a Prometheus
//! `query_range` returns. Each column becomes a step function of time: the
//! value of the latest sample at or before `t`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Why a series file cannot be used. Each names the file, and the line and
/// column (or JSON path) where it went wrong.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    /// The file cannot be read.
    #[error("{file}")]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The CSV does not parse (quoting, a row with too many fields).
    #[error("{file}")]
    Csv {
        file: PathBuf,
        #[source]
        source: csv::Error,
    },
    /// No column holds the timestamps.
    #[error(
        "{file}:1: no timestamp column: the first column must be named timestamp or time (found {found:?})"
    )]
    NoTimestamp { file: PathBuf, found: String },
    /// The CSV has a timestamp column only.
    #[error("{file}:1: no metric column besides {timestamp:?}")]
    NoColumns { file: PathBuf, timestamp: String },
    /// A timestamp does not parse.
    #[error(
        "{file}:{line}: column {column:?}: {value:?} is not a timestamp (RFC 3339, Unix seconds or an offset like 90s)"
    )]
    Timestamp {
        file: PathBuf,
        line: u64,
        column: String,
        value: String,
    },
    /// Timestamps go backwards or repeat.
    #[error(
        "{file}:{line}: column {column:?}: timestamps must increase, but {value:?} does not come after the previous row's"
    )]
    Unsorted {
        file: PathBuf,
        line: u64,
        column: String,
        value: String,
    },
    /// Absolute timestamps and offsets are mixed.
    #[error(
        "{file}:{line}: column {column:?}: {value:?} mixes offsets and absolute timestamps; use one kind"
    )]
    MixedTimes {
        file: PathBuf,
        line: u64,
        column: String,
        value: String,
    },
    /// A value is not a number or quantity.
    #[error("{file}:{line}: column {column:?}: {value:?} is not a number or quantity ({reason})")]
    Value {
        file: PathBuf,
        line: u64,
        column: String,
        value: String,
        reason: String,
    },
    /// A row has fewer fields than the header.
    #[error("{file}:{line}: the row has {found} fields, the header {expected}")]
    Short {
        file: PathBuf,
        line: u64,
        found: usize,
        expected: usize,
    },
    /// The Prometheus JSON does not have the `query_range` shape.
    #[error("{file}:{line}:{column}: not a Prometheus query_range answer: {reason}")]
    Json {
        file: PathBuf,
        line: usize,
        column: usize,
        reason: String,
    },
    /// The Prometheus answer is not a successful matrix.
    #[error("{file}: field {field}: {reason}")]
    Prometheus {
        file: PathBuf,
        field: String,
        reason: String,
    },
    /// Nothing to replay.
    #[error("{file}: the series has no samples")]
    Empty { file: PathBuf },
    /// Different files use absolute timestamps and offsets.
    #[error(
        "{file}: its timestamps are offsets but {other}'s are absolute (or the reverse); use one kind"
    )]
    MixedFiles { file: PathBuf, other: PathBuf },
}

/// When a sample was taken, as written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Time {
    /// Unix seconds.
    Absolute(f64),
    /// Seconds from the start of the series.
    Offset(f64),
}

impl Time {
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if let Ok(secs) = text.parse::<f64>() {
            return secs.is_finite().then_some(Self::Absolute(secs));
        }
        if let Ok(ts) = text.parse::<jiff::Timestamp>() {
            return Some(Self::Absolute(ts.as_millisecond() as f64 / 1000.0));
        }
        let unsigned = text.strip_prefix('+').unwrap_or(text);
        fake_metrics_server::script::parse_go_duration(unsigned)
            .ok()
            .filter(|d| !d.is_negative())
            .map(|d| Self::Offset(d.as_secs_f64()))
    }

    fn secs(self) -> f64 {
        match self {
            Self::Absolute(s) | Self::Offset(s) => s,
        }
    }

    fn same_kind(self, other: Self) -> bool {
        matches!(
            (self, other),
            (Self::Absolute(_), Self::Absolute(_)) | (Self::Offset(_), Self::Offset(_))
        )
    }
}

/// One metric over time.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The column's name (CSV header, `NAME=` of a Prometheus file, or its
    /// `__name__` label).
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// The header line (CSV) or 1.
    pub line: u64,
    /// `(seconds from the series' start, value)`, by time. NaN marks a
    /// failed read (a CSV cell that is empty or `fail`).
    pub samples: Vec<(f64, f64)>,
}

impl Column {
    /// The value at `t` seconds: the latest good sample at or before it
    /// (the first good sample before the first). Failed reads are gaps.
    pub fn at(&self, t: f64) -> Option<f64> {
        let i = self.samples.partition_point(|(s, _)| *s <= t);
        let good = |&&(_, v): &&(f64, f64)| !v.is_nan();
        self.samples[..i]
            .iter()
            .rev()
            .find(good)
            .or_else(|| self.samples.iter().find(good))
            .map(|(_, v)| *v)
    }

    /// A trigger's read at `t` seconds (ScaledObject replays): the latest
    /// sample at or before it, `Some(None)` when that read failed.
    pub fn reading(&self, t: f64) -> Option<Option<f64>> {
        let i = self.samples.partition_point(|(s, _)| *s <= t).max(1);
        self.samples
            .get(i - 1)
            .map(|(_, v)| (!v.is_nan()).then_some(*v))
    }
}

/// Every column of every series file, on one time axis starting at 0.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// The columns, in file and header order.
    pub columns: Vec<Column>,
    /// Unix seconds of time 0, when the files give absolute timestamps.
    pub start: Option<f64>,
}

impl Series {
    /// The last sample's time.
    pub fn end(&self) -> f64 {
        self.columns
            .iter()
            .filter_map(|c| c.samples.last().map(|(t, _)| *t))
            .fold(0.0, f64::max)
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The column names, for messages.
    pub fn names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }
}

/// One `--series` argument: a file, with the column name its Prometheus
/// series get (`NAME=FILE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesArg {
    pub name: Option<String>,
    pub file: PathBuf,
}

impl std::str::FromStr for SeriesArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('=') {
            Some((name, file)) if !name.is_empty() && !name.contains('/') => Ok(Self {
                name: Some(name.to_owned()),
                file: PathBuf::from(file),
            }),
            _ if s.is_empty() => Err("a series file is needed".to_owned()),
            _ => Ok(Self {
                name: None,
                file: PathBuf::from(s),
            }),
        }
    }
}

/// A column as read, before the files are put on one time axis.
struct RawColumn {
    name: String,
    line: u64,
    samples: Vec<(Time, f64)>,
}

/// How the series of one Prometheus answer that share a column become its
/// value at each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Combine {
    /// Added up: a per-pod query gives the workload's total.
    #[default]
    Sum,
    /// Averaged, when the series are per pod (a `pod` label): the value of
    /// one pod (a replay giving each pod the value as it is).
    MeanPerPod,
}

/// One `query_range` answer read from a server: where it came from (named
/// in messages), its text, and the column it feeds (`None`: its series'
/// `__name__`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryRangeText {
    pub source: PathBuf,
    pub text: String,
    pub name: Option<String>,
}

/// Reads every series file and puts them on one time axis.
pub fn load(args: &[SeriesArg]) -> Result<Series, SeriesError> {
    load_with(args, &[], Combine::Sum)
}

/// Reads every series file and every `query_range` answer (the chunks of
/// one query join into one column, in time order), and puts them on one
/// time axis; `combine` says how per-pod series of an answer (files'
/// included) make one value.
pub fn load_with(
    args: &[SeriesArg],
    answers: &[QueryRangeText],
    combine: Combine,
) -> Result<Series, SeriesError> {
    let mut files: Vec<(PathBuf, Vec<RawColumn>)> = Vec::new();
    for arg in args {
        let text = std::fs::read_to_string(&arg.file).map_err(|source| SeriesError::Read {
            file: arg.file.clone(),
            source,
        })?;
        let columns = if text.trim_start().starts_with('{') {
            prometheus(&arg.file, &text, arg.name.as_deref(), combine)?
        } else {
            csv_columns(&arg.file, &text)?
        };
        if columns
            .iter()
            .all(|c| c.samples.iter().all(|(_, v)| v.is_nan()))
        {
            return Err(SeriesError::Empty {
                file: arg.file.clone(),
            });
        }
        files.push((arg.file.clone(), columns));
    }
    for answer in answers {
        let columns = prometheus(
            &answer.source,
            &answer.text,
            answer.name.as_deref(),
            combine,
        )?;
        match files.iter_mut().find(|(f, _)| *f == answer.source) {
            // A later chunk of the same query: its samples follow.
            Some((_, known)) => {
                for column in columns {
                    match known.iter_mut().find(|c| c.name == column.name) {
                        Some(c) => {
                            let last = c.samples.last().map(|(t, _)| t.secs());
                            c.samples.extend(
                                column
                                    .samples
                                    .into_iter()
                                    .filter(|(t, _)| last.is_none_or(|l| t.secs() > l)),
                            );
                        }
                        None => known.push(column),
                    }
                }
            }
            None => files.push((answer.source.clone(), columns)),
        }
    }
    for (file, columns) in &files {
        if columns
            .iter()
            .all(|c| c.samples.iter().all(|(_, v)| v.is_nan()))
        {
            return Err(SeriesError::Empty { file: file.clone() });
        }
    }
    let first_time = |cols: &[RawColumn]| cols.iter().find_map(|c| c.samples.first().map(|s| s.0));
    let mut kind: Option<(Time, PathBuf)> = None;
    for (file, cols) in &files {
        if let Some(t) = first_time(cols) {
            match &kind {
                Some((k, other)) if !k.same_kind(t) => {
                    return Err(SeriesError::MixedFiles {
                        file: file.clone(),
                        other: other.clone(),
                    });
                }
                Some(_) => {}
                None => kind = Some((t, file.clone())),
            }
        }
    }
    let start = match kind {
        Some((Time::Absolute(_), _)) => Some(
            files
                .iter()
                .flat_map(|(_, cols)| cols.iter())
                .filter_map(|c| c.samples.first().map(|s| s.0.secs()))
                .fold(f64::INFINITY, f64::min),
        ),
        _ => None,
    };
    let zero = start.unwrap_or(0.0);
    let columns = files
        .into_iter()
        .flat_map(|(file, cols)| {
            cols.into_iter().map(move |c| Column {
                name: c.name,
                file: file.clone(),
                line: c.line,
                samples: c
                    .samples
                    .into_iter()
                    .map(|(t, v)| (t.secs() - zero, v))
                    .collect(),
            })
        })
        .collect();
    Ok(Series { columns, start })
}

/// Parses a value: a plain number (`0.25`, `1e3`) or a Kubernetes quantity
/// (`250m`, `1Gi`).
fn number(text: &str) -> Result<f64, String> {
    let text = text.trim();
    if let Ok(v) = text.parse::<f64>() {
        return if v.is_finite() {
            Ok(v)
        } else {
            Err("not finite".to_owned())
        };
    }
    hpa_core::quantity::Quantity::parse(text)
        .map(|q| q.as_f64())
        .map_err(|e| e.to_string())
}

const TIME_HEADERS: [&str; 4] = ["timestamp", "time", "ts", "date"];

fn csv_columns(file: &Path, text: &str) -> Result<Vec<RawColumn>, SeriesError> {
    let csv_err = |source| SeriesError::Csv {
        file: file.to_path_buf(),
        source,
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(csv_err)?.clone();
    let header_line = reader.position().line().max(1);
    let time_header = header.get(0).unwrap_or_default().to_owned();
    if !TIME_HEADERS
        .iter()
        .any(|h| h.eq_ignore_ascii_case(&time_header))
    {
        return Err(SeriesError::NoTimestamp {
            file: file.to_path_buf(),
            found: time_header,
        });
    }
    if header.len() < 2 {
        return Err(SeriesError::NoColumns {
            file: file.to_path_buf(),
            timestamp: time_header,
        });
    }
    let mut columns: Vec<RawColumn> = header
        .iter()
        .skip(1)
        .map(|name| RawColumn {
            name: name.to_owned(),
            line: header_line,
            samples: Vec::new(),
        })
        .collect();
    let mut previous: Option<Time> = None;
    for record in reader.records() {
        let record = record.map_err(csv_err)?;
        let line = record.position().map_or(0, csv::Position::line);
        if record.len() == 1 && record.get(0).is_some_and(str::is_empty) {
            continue;
        }
        if record.len() < header.len() {
            return Err(SeriesError::Short {
                file: file.to_path_buf(),
                line,
                found: record.len(),
                expected: header.len(),
            });
        }
        let raw_time = record.get(0).unwrap_or_default();
        let time = Time::parse(raw_time).ok_or_else(|| SeriesError::Timestamp {
            file: file.to_path_buf(),
            line,
            column: time_header.clone(),
            value: raw_time.to_owned(),
        })?;
        if let Some(prev) = previous {
            if !prev.same_kind(time) {
                return Err(SeriesError::MixedTimes {
                    file: file.to_path_buf(),
                    line,
                    column: time_header.clone(),
                    value: raw_time.to_owned(),
                });
            }
            if time.secs() <= prev.secs() {
                return Err(SeriesError::Unsorted {
                    file: file.to_path_buf(),
                    line,
                    column: time_header.clone(),
                    value: raw_time.to_owned(),
                });
            }
        }
        previous = Some(time);
        for (col, cell) in columns.iter_mut().zip(record.iter().skip(1)) {
            // An empty or `fail` cell is a failed read: a ScaledObject's
            // trigger read fails there; an HPA's metric keeps the
            // previous value ([`Column::at`]).
            if cell.is_empty() || cell.eq_ignore_ascii_case("fail") {
                col.samples.push((time, f64::NAN));
                continue;
            }
            let v = number(cell).map_err(|reason| SeriesError::Value {
                file: file.to_path_buf(),
                line,
                column: col.name.clone(),
                value: cell.to_owned(),
                reason,
            })?;
            col.samples.push((time, v));
        }
    }
    Ok(columns)
}

/// The part of a Prometheus HTTP API answer that a replay reads.
#[derive(Debug, Deserialize)]
struct PromAnswer {
    status: String,
    #[serde(default)]
    error: Option<String>,
    data: Option<PromData>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromData {
    result_type: String,
    result: Vec<PromSeries>,
}

#[derive(Debug, Deserialize)]
struct PromSeries {
    #[serde(default)]
    metric: BTreeMap<String, String>,
    #[serde(default)]
    values: Vec<(serde_json::Value, String)>,
}

/// Reads a `query_range` answer: series with the same name (`NAME=` of the
/// argument, else their `__name__`, else `value`) are summed, so that a
/// per-pod query gives the total (averaged instead with
/// [`Combine::MeanPerPod`] when they carry a `pod` label).
fn prometheus(
    file: &Path,
    text: &str,
    name: Option<&str>,
    combine: Combine,
) -> Result<Vec<RawColumn>, SeriesError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let answer: PromAnswer = serde_path_to_error::deserialize(de).map_err(|e| {
        let inner = e.inner();
        SeriesError::Json {
            file: file.to_path_buf(),
            line: inner.line(),
            column: inner.column(),
            reason: format!("field {}: {inner}", e.path()),
        }
    })?;
    let bad = |field: &str, reason: String| SeriesError::Prometheus {
        file: file.to_path_buf(),
        field: field.to_owned(),
        reason,
    };
    if answer.status != "success" {
        return Err(bad(
            "status",
            format!(
                "the query failed ({:?}): {}",
                answer.status,
                answer.error.unwrap_or_default()
            ),
        ));
    }
    let data = answer
        .data
        .ok_or_else(|| bad("data", "missing".to_owned()))?;
    if data.result_type != "matrix" {
        return Err(bad(
            "data.resultType",
            format!(
                "{:?}: a range query (query_range) answers \"matrix\"",
                data.result_type
            ),
        ));
    }
    // Per column and step: the sum of the series' values and their number.
    let mut sums: BTreeMap<String, BTreeMap<u64, (f64, u32)>> = BTreeMap::new();
    let mean =
        combine == Combine::MeanPerPod && data.result.iter().any(|s| s.metric.contains_key("pod"));
    for (i, s) in data.result.iter().enumerate() {
        let column = name
            .map(str::to_owned)
            .or_else(|| s.metric.get("__name__").cloned())
            .unwrap_or_else(|| "value".to_owned());
        let sum = sums.entry(column).or_default();
        for (j, (t, v)) in s.values.iter().enumerate() {
            let field = format!("data.result[{i}].values[{j}]");
            let t = t
                .as_f64()
                .ok_or_else(|| bad(&field, format!("{t} is not Unix seconds")))?;
            let v = v
                .parse::<f64>()
                .map_err(|e| bad(&field, format!("{v:?}: {e}")))?;
            // NaN and ±Inf (a division by zero in the query) are gaps.
            if v.is_finite() {
                // Millisecond keys: Prometheus steps are aligned to them.
                let entry = sum.entry((t * 1000.0).round() as u64).or_default();
                entry.0 += v;
                entry.1 += 1;
            }
        }
    }
    Ok(sums
        .into_iter()
        .map(|(name, samples)| RawColumn {
            name,
            line: 1,
            samples: samples
                .into_iter()
                .map(|(ms, (total, n))| {
                    let v = if mean { total / f64::from(n) } else { total };
                    (Time::Absolute(ms as f64 / 1000.0), v)
                })
                .collect(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn arg(path: &Path) -> SeriesArg {
        SeriesArg {
            name: None,
            file: path.to_path_buf(),
        }
    }

    #[test]
    fn a_csv_with_offsets_becomes_step_functions() {
        let (_d, p) = write("s.csv", "timestamp,cpu,rps\n0s,0.5,10\n1m,250m,\n2m,1,30\n");
        let s = load(&[arg(&p)]).unwrap();
        assert_eq!(s.names(), ["cpu", "rps"]);
        let cpu = s.column("cpu").unwrap();
        assert_eq!(cpu.at(0.0), Some(0.5));
        assert_eq!(cpu.at(59.0), Some(0.5));
        assert_eq!(cpu.at(60.0), Some(0.25));
        // An empty cell holds the previous value.
        assert_eq!(s.column("rps").unwrap().at(90.0), Some(10.0));
        assert_eq!(s.end(), 120.0);
        assert_eq!(s.start, None);
    }

    #[test]
    fn absolute_timestamps_count_from_the_first() {
        let (_d, p) = write(
            "s.csv",
            "time,cpu\n2026-01-01T00:00:00Z,1\n2026-01-01T00:00:30Z,2\n",
        );
        let s = load(&[arg(&p)]).unwrap();
        assert_eq!(s.column("cpu").unwrap().samples, [(0.0, 1.0), (30.0, 2.0)]);
        assert!(s.start.is_some());
    }

    #[test]
    fn unsorted_timestamps_name_the_file_line_and_column() {
        let (_d, p) = write("s.csv", "timestamp,cpu\n0s,1\n30s,1\n15s,1\n");
        let err = load(&[arg(&p)]).unwrap_err().to_string();
        assert!(err.ends_with("s.csv:4: column \"timestamp\": timestamps must increase, but \"15s\" does not come after the previous row's"), "{err}");
    }

    #[test]
    fn a_bad_value_names_the_file_line_and_column() {
        let (_d, p) = write("s.csv", "timestamp,cpu\n0s,1\n15s,lots\n");
        let err = load(&[arg(&p)]).unwrap_err().to_string();
        assert!(
            err.contains("s.csv:3: column \"cpu\": \"lots\" is not a number or quantity"),
            "{err}"
        );
    }

    #[test]
    fn a_csv_without_a_timestamp_column_is_refused() {
        let (_d, p) = write("s.csv", "cpu,rps\n1,2\n");
        let err = load(&[arg(&p)]).unwrap_err().to_string();
        assert!(err.ends_with("s.csv:1: no timestamp column: the first column must be named timestamp or time (found \"cpu\")"), "{err}");
    }

    #[test]
    fn a_prometheus_range_answer_sums_its_series() {
        let json = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"pod":"a"},"values":[[1700000000,"0.25"],[1700000015,"0.5"]]},
            {"metric":{"pod":"b"},"values":[[1700000000,"0.25"],[1700000015,"NaN"]]}]}}"#;
        let (_d, p) = write("q.json", json);
        let s = load(&[SeriesArg {
            name: Some("cpu".to_owned()),
            file: p,
        }])
        .unwrap();
        assert_eq!(s.names(), ["cpu"]);
        assert_eq!(s.column("cpu").unwrap().samples, [(0.0, 0.5), (15.0, 0.5)]);
        assert_eq!(s.start, Some(1_700_000_000.0));
    }

    #[test]
    fn per_pod_series_are_averaged_when_each_pod_gets_the_value_as_it_is() {
        let json = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"pod":"a"},"values":[[1700000000,"0.2"],[1700000015,"0.6"]]},
            {"metric":{"pod":"b"},"values":[[1700000000,"0.4"]]}]}}"#;
        let answer = QueryRangeText {
            source: PathBuf::from("http://prometheus:9090"),
            text: json.to_owned(),
            name: Some("cpu".to_owned()),
        };
        let mean = load_with(&[], std::slice::from_ref(&answer), Combine::MeanPerPod).unwrap();
        let samples = &mean.column("cpu").unwrap().samples;
        assert_eq!(samples.len(), 2);
        assert!((samples[0].1 - 0.3).abs() < 1e-9, "{samples:?}");
        assert!((samples[1].1 - 0.6).abs() < 1e-9, "{samples:?}");
        let sum = load_with(&[], &[answer], Combine::Sum).unwrap();
        assert!((sum.column("cpu").unwrap().samples[0].1 - 0.6).abs() < 1e-9);
    }

    #[test]
    fn the_chunks_of_one_query_join_in_time_order() {
        let chunk = |t0: u64, t1: u64| QueryRangeText {
            source: PathBuf::from("http://prometheus:9090 q"),
            text: format!(
                r#"{{"status":"success","data":{{"resultType":"matrix","result":[
                {{"metric":{{}},"values":[[{t0},"1"],[{t1},"2"]]}}]}}}}"#
            ),
            name: Some("rps".to_owned()),
        };
        // The second chunk starts at the first's last step: it is not repeated.
        let s = load_with(&[], &[chunk(100, 115), chunk(115, 130)], Combine::Sum).unwrap();
        assert_eq!(
            s.column("rps").unwrap().samples,
            [(0.0, 1.0), (15.0, 2.0), (30.0, 2.0)]
        );
    }

    #[test]
    fn a_prometheus_error_answer_is_named() {
        let (_d, p) = write("q.json", r#"{"status":"error","error":"bad query"}"#);
        let err = load(&[arg(&p)]).unwrap_err().to_string();
        assert!(
            err.contains("q.json: field status: the query failed (\"error\"): bad query"),
            "{err}"
        );
    }

    #[test]
    fn a_malformed_prometheus_answer_names_line_and_field() {
        let (_d, p) = write(
            "q.json",
            "{\"status\":\"success\",\n\"data\":{\"resultType\":\"matrix\",\"result\":[{\"values\":[[1,2]]}]}}",
        );
        let err = load(&[arg(&p)]).unwrap_err().to_string();
        assert!(err.contains("q.json:2:"), "{err}");
        assert!(err.contains("data.result[0].values[0]"), "{err}");
    }

    #[test]
    fn series_arguments_may_name_their_column() {
        let a: SeriesArg = "cpu=q.json".parse().unwrap();
        assert_eq!(a.name.as_deref(), Some("cpu"));
        let b: SeriesArg = "dir/x=y.csv".parse().unwrap();
        assert_eq!(b.name, None);
    }
}
