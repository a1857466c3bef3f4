//! `hpa-controller`: the HPA controller against a cluster (kubeconfig or
//! in-cluster), with kube-controller-manager's flag names and defaults. The
//! container image's entry point; `hpa-harness controller` runs the same.

use std::process::ExitCode;

use clap::Parser;

/// jemalloc, not glibc's malloc: at 10,000 HPAs this binary spent a third
/// of its CPU in glibc's allocator (`_int_malloc`, `malloc_consolidate`),
/// growing as the heap fragmented; measured in docs/load-report.md ("How the
/// figures moved").
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Kubernetes' HorizontalPodAutoscaler controller (releases 1.35 to 1.38, the cluster's own by default), outside
/// kube-controller-manager.
#[derive(Debug, Parser)]
#[command(name = "hpa-controller", version)]
struct Cli {
    /// More log output (-v: debug, -vv: trace). RUST_LOG overrides it.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,

    /// Log lines as text (coloured on a terminal only) or as JSON objects.
    #[arg(long, value_enum, default_value_t, alias = "logging-format")]
    log_format: hpa_controller::cli::LogFormat,

    #[command(flatten)]
    args: hpa_controller::cli::Args,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    hpa_controller::cli::init_tracing(cli.verbose, cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(hpa_controller::cli::run(cli.args)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{}", hpa_controller::cli::error_report(err.as_ref()));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
