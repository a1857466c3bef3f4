//! `hpa-harness test`: runs Gherkin scenarios.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CliResult;
use crate::gherkin::{BackendKind, RunOptions, runner};

/// Options of `hpa-harness test`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Feature files or folders to run.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Where the scenarios run: the embedded simulated cluster (`sim`,
    /// virtual time, no Docker) or a real cluster.
    #[arg(long, value_enum, default_value_t = BackendKind::Sim)]
    pub backend: BackendKind,
    /// Run only scenarios whose tags match this expression, e.g.
    /// `@smoke and not @known-bug`.
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,
    /// Also write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// How many scenarios run at the same time (each in its own cluster).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
}

/// Runs `hpa-harness test`: exit code 0 when every scenario passed.
pub async fn run(args: Args) -> CliResult {
    let options = RunOptions {
        paths: args.paths,
        backend: args.backend,
        tags: args.tags,
        exclude_known_bugs: false,
        junit: args.junit,
        concurrency: usize::from(args.concurrency),
    };
    let summary = runner::run(&options).await?;
    Ok(if summary.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
