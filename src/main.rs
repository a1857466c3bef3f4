//! The `hpa-harness` command: parses the command line and runs one subcommand.

use std::process::ExitCode;

use clap::Parser;

/// jemalloc, not glibc's malloc: at 10,000 HPAs the controller spent a
/// quarter of its CPU in glibc's allocator (`malloc_consolidate`,
/// `_int_malloc`), and glibc kept freed memory resident; measured in
/// docs/load-report.md ("How the figures moved").
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = hpa_harness::cli::Cli::parse();
    hpa_harness::cli::init_tracing_of(&cli);
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
    match runtime.block_on(hpa_harness::cli::run(cli)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{}", hpa_controller::cli::error_report(err.as_ref()));
            ExitCode::FAILURE
        }
    }
}
