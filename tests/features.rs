//! Runs every scenario of `features/` on the simulated cluster, under
//! Kubernetes 1.35, 1.36 and 1.37 (scenarios tagged `@k8s-X.Y` under their
//! tagged releases), and fails if any fails. Scenarios tagged `@known-bug` (a bug outside the runner, named
//! in a comment above the scenario) are left out.
//!
//! The library runs twice: with our controller as `hpa-controller` ships
//! (its defaults: scale targets from the Deployment watch, shared metrics
//! lists), then as `hpa-controller --upstream-requests`. Both must pass,
//! and a scenario whose verdict differs between them fails the test. The
//! one bounded difference, a scenario that bends the `/scale` subresource,
//! is handled by the steps themselves (docs/steps.md).
//!
//! A `harness = false` test: cucumber prints its own report. Arguments:
//! `cargo test --test features -- PATH...` runs only those files or folders;
//! a libtest name filter that does not match "features" (as in
//! `cargo test some_unit_test`) skips the run, as libtest would.

use std::path::PathBuf;
use std::process::ExitCode;

use hpa_core::KubernetesVersion;
use hpa_harness::gherkin::outcome::differing_verdicts;
use hpa_harness::gherkin::{RunOptions, RunSummary, run};
use hpa_harness::testbed::controller::Requests;

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // libtest flags such as `--nocapture` are ignored; existing files and
    // folders are feature paths; anything else is a test-name filter.
    let (paths, filters): (Vec<PathBuf>, Vec<String>) = {
        let free: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .collect();
        let (paths, filters): (Vec<String>, Vec<String>) =
            free.into_iter().partition(|a| root.join(a).exists());
        (paths.into_iter().map(|a| root.join(a)).collect(), filters)
    };
    if paths.is_empty()
        && !filters.is_empty()
        && !filters.iter().any(|f| "features".contains(f.as_str()))
    {
        println!("features: skipped (test-name filter {filters:?})");
        return ExitCode::SUCCESS;
    }
    let options = RunOptions {
        paths: if paths.is_empty() {
            vec![root.join("features")]
        } else {
            paths
        },
        exclude_known_bugs: true,
        versions: Some(vec![
            KubernetesVersion::V1_35,
            KubernetesVersion::V1_36,
            KubernetesVersion::V1_37,
        ]),
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
    let mut summaries = Vec::new();
    for requests in [Requests::Shipped, Requests::Upstream] {
        println!("\n##### our controller: {requests} #####");
        let options = RunOptions {
            requests,
            ..options.clone()
        };
        match runtime.block_on(run(&options)) {
            Ok(summary) => summaries.push((requests, summary)),
            Err(e) => {
                eprintln!("cannot run the feature scenarios ({requests}): {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut ok = true;
    for (requests, summary) in &summaries {
        ok &= report_failures(*requests, summary);
    }
    if let [(a, first), (b, second)] = summaries.as_slice() {
        let differing = differing_verdicts(first, second);
        if differing.is_empty() {
            println!(
                "configurations: {} scenario runs, the same verdicts {a} and {b}",
                first.scenarios.len()
            );
        } else {
            ok = false;
            eprintln!("verdicts that differ ({a} / {b}):");
            for d in &differing {
                eprintln!("  {d}");
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Prints the failed scenarios of one configuration's run; whether none failed.
fn report_failures(requests: Requests, summary: &RunSummary) -> bool {
    // On the simulated cluster every scenario runs: one it cannot run fails
    // here too.
    let all_passed = summary
        .scenarios
        .iter()
        .all(|o| o.verdict == hpa_harness::gherkin::runner::Verdict::Passed);
    if all_passed && !summary.failed() {
        return true;
    }
    eprintln!("feature scenarios failed ({requests}):");
    for o in &summary.scenarios {
        if o.verdict != hpa_harness::gherkin::runner::Verdict::Passed {
            eprintln!(
                "  {} (Kubernetes {}): {:?}",
                o.location, o.kubernetes_version, o.verdict
            );
        }
    }
    false
}
