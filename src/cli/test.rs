//! `hpa-harness test` (being written).

use super::CliResult;

/// Options of `hpa-harness test`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `hpa-harness test`.
pub async fn run(_args: Args) -> CliResult {
    Err("this subcommand is not available yet".into())
}
