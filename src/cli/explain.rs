//! `hpa-harness explain`: runs one feature file and prints, for every sync,
//! the controller's decision for each HPA as a table.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CliResult;
use crate::gherkin::{RunOptions, runner, world};

/// Options of `hpa-harness explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The feature file to run and explain.
    #[arg(value_name = "FILE.feature")]
    pub file: PathBuf,
    /// Run only scenarios whose tags match this expression.
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,
}

/// Runs `hpa-harness explain`: the scenarios run one at a time so that the
/// tables of one scenario stay together.
pub async fn run(args: Args) -> CliResult {
    world::set_explain(true);
    let options = RunOptions {
        paths: vec![args.file],
        tags: args.tags,
        concurrency: 1,
        ..RunOptions::default()
    };
    let summary = runner::run(&options).await?;
    Ok(if summary.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
