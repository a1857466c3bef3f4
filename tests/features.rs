//! Runs every scenario of `features/` on the simulated cluster and fails if
//! any fails. Scenarios tagged `@known-bug` (a bug outside the runner, named
//! in a comment above the scenario) are left out.
//!
//! A `harness = false` test: cucumber prints its own report. Arguments:
//! `cargo test --test features -- PATH...` runs only those files or folders.

use std::path::PathBuf;
use std::process::ExitCode;

use hpa_harness::gherkin::{RunOptions, run};

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // libtest passes flags such as `--nocapture`; feature paths are the rest.
    let paths: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(|a| root.join(a))
        .collect();
    let options = RunOptions {
        paths: if paths.is_empty() {
            vec![root.join("features")]
        } else {
            paths
        },
        exclude_known_bugs: true,
        ..RunOptions::default()
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&options)) {
        Ok(summary) if !summary.failed() => ExitCode::SUCCESS,
        Ok(summary) => {
            eprintln!("feature scenarios failed: {summary:?}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("cannot run the feature scenarios: {e}");
            ExitCode::FAILURE
        }
    }
}
