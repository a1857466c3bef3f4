//! `hpa-harness sim` (being written).

use super::CliResult;

/// Options of `hpa-harness sim`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `hpa-harness sim`.
pub async fn run(_args: Args) -> CliResult {
    Err("this subcommand is not available yet".into())
}
