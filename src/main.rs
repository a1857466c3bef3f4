//! The `hpa-harness` command: parses the command line and runs one subcommand.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = hpa_harness::cli::Cli::parse();
    hpa_harness::cli::init_tracing(cli.verbose);
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
            eprintln!(
                "{}",
                hpa_harness::controller::cli::error_report(err.as_ref())
            );
            ExitCode::FAILURE
        }
    }
}
