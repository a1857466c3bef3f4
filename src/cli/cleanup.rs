//! `hpa-harness cleanup`: removes what earlier runs left on a cluster
//! (a run killed outright cannot clean up after itself), found by the
//! labels the harness puts on everything it creates.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::CliResult;
use crate::testbed::cleanup;

/// Options of `hpa-harness cleanup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The cluster's kubeconfig (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long)]
    pub context: Option<String>,
    /// How long to wait until everything deleted is gone (Go duration).
    #[arg(long, default_value = "3m", value_parser = crate::cli::controller::duration)]
    pub timeout: Duration,
    /// Only list what would be deleted.
    #[arg(long)]
    pub dry_run: bool,
}

/// Lists what the labels find, deletes it and waits until it is gone.
pub async fn run(args: Args) -> CliResult {
    let client =
        crate::testbed::kubeconfig::client(args.kubeconfig.as_deref(), args.context.as_deref())
            .await?;
    let found = cleanup::leftovers(&client).await?;
    if found.is_empty() {
        println!(
            "nothing to clean up: no namespace or object labelled {}",
            cleanup::harness_labels().join(" or ")
        );
        return Ok(ExitCode::SUCCESS);
    }
    for item in &found {
        println!(
            "{}{item}",
            if args.dry_run {
                "would delete "
            } else {
                "deleting "
            }
        );
    }
    if args.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    cleanup::remove(&client, &found, args.timeout).await?;
    println!("removed {} (all gone)", found.len());
    Ok(ExitCode::SUCCESS)
}
