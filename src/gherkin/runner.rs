//! Runs feature files or folders: each scenario in a fresh [`HpaWorld`],
//! scenarios in parallel, a summary on stdout and optionally a JUnit report.

use std::io;
use std::path::PathBuf;

use cucumber::gherkin::tagexpr::TagOperation;
use cucumber::tag::Ext as _;
use cucumber::{StatsWriter as _, World as _, WriterExt as _, writer};

use super::world::HpaWorld;

/// The tag marking scenarios that fail because of a known bug outside the
/// runner; `tests/features.rs` leaves them out.
pub const KNOWN_BUG_TAG: &str = "known-bug";

/// Where the scenarios run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The embedded simulated cluster with a virtual clock.
    #[default]
    Sim,
    /// The cluster of the current kubeconfig.
    Kubeconfig,
    /// A kind cluster created for the run.
    Kind,
    /// A k3d cluster created for the run.
    K3d,
    /// A k3s container created for the run.
    K3s,
}

/// What to run and how.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Feature files or folders.
    pub paths: Vec<PathBuf>,
    /// Where to run.
    pub backend: BackendKind,
    /// A tag expression (`@smoke and not @slow`); scenarios must match it.
    pub tags: Option<String>,
    /// Leave out scenarios tagged `@known-bug`.
    pub exclude_known_bugs: bool,
    /// Write a JUnit XML report here.
    pub junit: Option<PathBuf>,
    /// Scenarios run at the same time.
    pub concurrency: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            paths: Vec::new(),
            backend: BackendKind::Sim,
            tags: None,
            exclude_known_bugs: false,
            junit: None,
            concurrency: 8,
        }
    }
}

/// What a run found, summed over all paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub passed_steps: usize,
    pub skipped_steps: usize,
    pub failed_steps: usize,
    pub parsing_errors: usize,
    pub hook_errors: usize,
}

impl RunSummary {
    /// Whether anything failed (a step, a parse, a hook; skipped steps fail
    /// too, since every step must be implemented).
    pub fn failed(&self) -> bool {
        self.failed_steps > 0 || self.skipped_steps > 0 || self.parsing_errors > 0 || self.hook_errors > 0
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A path does not exist.
    #[error("feature path {0} does not exist")]
    MissingPath(PathBuf),
    /// No path given.
    #[error("no feature file or folder given")]
    NoPaths,
    /// The tag expression does not parse.
    #[error("tag expression {expr:?}: {reason}")]
    Tags { expr: String, reason: String },
    /// The JUnit report cannot be written.
    #[error("JUnit report {path}: {source}")]
    Junit {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The backend is not part of this build.
    #[error("backend {0:?} is not available in this build; use --backend sim")]
    Backend(BackendKind),
}

/// Runs the scenarios of `options.paths`.
pub async fn run(options: &RunOptions) -> Result<RunSummary, RunError> {
    if options.backend != BackendKind::Sim {
        return Err(RunError::Backend(options.backend));
    }
    if options.paths.is_empty() {
        return Err(RunError::NoPaths);
    }
    for p in &options.paths {
        if !p.exists() {
            return Err(RunError::MissingPath(p.clone()));
        }
    }
    let tags: Option<TagOperation> = options
        .tags
        .as_deref()
        .map(|expr| {
            expr.parse().map_err(|e: <TagOperation as std::str::FromStr>::Err| RunError::Tags {
                expr: expr.to_owned(),
                reason: e.to_string(),
            })
        })
        .transpose()?;
    let mut summary = RunSummary::default();
    for path in &options.paths {
        let junit_out: Box<dyn io::Write> = match &options.junit {
            Some(file) => {
                // One report per run: with several paths, each path's report
                // goes to FILE, FILE.1, FILE.2, ...
                let target = junit_path(file, path, &options.paths);
                Box::new(std::fs::File::create(&target).map_err(|source| RunError::Junit {
                    path: target.clone(),
                    source,
                })?)
            }
            None => Box::new(io::sink()),
        };
        let tags = tags.clone();
        let exclude_known_bugs = options.exclude_known_bugs;
        let writer = HpaWorld::cucumber()
            .max_concurrent_scenarios(options.concurrency.max(1))
            .with_writer(
                writer::Basic::raw(io::stdout(), writer::Coloring::Auto, writer::Verbosity::Default)
                    .summarized()
                    .tee::<HpaWorld, _>(writer::JUnit::for_tee(junit_out, writer::Verbosity::Default))
                    .normalized(),
            )
            .fail_on_skipped()
            .with_default_cli()
            .filter_run(path.clone(), move |feature, rule, scenario| {
                let all: Vec<&String> = feature
                    .tags
                    .iter()
                    .chain(rule.iter().flat_map(|r| r.tags.iter()))
                    .chain(scenario.tags.iter())
                    .collect();
                let known_bug = all.iter().any(|t| t.trim_start_matches('@') == KNOWN_BUG_TAG);
                if exclude_known_bugs && known_bug {
                    return false;
                }
                tags.as_ref().is_none_or(|op| op.eval(all.iter().map(|t| t.trim_start_matches('@'))))
            })
            .await;
        summary.passed_steps += writer.passed_steps();
        summary.skipped_steps += writer.skipped_steps();
        summary.failed_steps += writer.failed_steps();
        summary.parsing_errors += writer.parsing_errors();
        summary.hook_errors += writer.hook_errors();
    }
    Ok(summary)
}

fn junit_path(file: &std::path::Path, path: &PathBuf, all: &[PathBuf]) -> PathBuf {
    match all.iter().position(|p| p == path) {
        Some(0) | None => file.to_path_buf(),
        Some(i) => {
            let mut s = file.as_os_str().to_owned();
            s.push(format!(".{i}"));
            PathBuf::from(s)
        }
    }
}
