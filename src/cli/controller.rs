//! `hpa-harness controller` (being written).

use super::CliResult;

/// Options of `hpa-harness controller`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `hpa-harness controller`.
pub async fn run(_args: Args) -> CliResult {
    Err("this subcommand is not available yet".into())
}
