//! `hpa-harness explain` (being written).

use super::CliResult;

/// Options of `hpa-harness explain`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `hpa-harness explain`.
pub async fn run(_args: Args) -> CliResult {
    Err("this subcommand is not available yet".into())
}
