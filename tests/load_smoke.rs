//! A short load run through the library (200 HPAs, a 2 s sync period, 15 s):
//! checks the report's invariants (every HPA synced, no disagreement with
//! the pure core), not its speed, so it holds on any machine and in debug
//! builds.
#![allow(clippy::unwrap_used)] // reason: test code; a panic is the failure report

use std::time::Duration;

use hpa_harness::load::{LoadOptions, MetricProfile, run};

/// The runs share two cores: one at a time, so that each has the machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn smoke(hpas: usize, seconds: u64, optimize: bool, profile: MetricProfile) -> LoadOptions {
    LoadOptions {
        hpas,
        pods_per_hpa: 3,
        workers: 5,
        duration: Duration::from_secs(seconds),
        sync_period: Duration::from_secs(2),
        profile,
        optimize,
        hpas_per_namespace: 50,
        ..LoadOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_ramp_syncs_every_hpa_and_agrees_with_the_core() {
    let _one = ONE_AT_A_TIME.lock().await;
    let report = run(&smoke(200, 15, true, MetricProfile::Ramp))
        .await
        .unwrap();
    eprintln!(
        "{}",
        hpa_harness::load::report::to_table(std::slice::from_ref(&report))
    );
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
    assert!(report.syncs >= 200, "only {} syncs", report.syncs);
    assert_eq!(report.hpas, 200);
    assert!(
        report.sync_interval_seconds.count > 0,
        "no HPA synced twice"
    );
    assert!(report.api_requests_per_sync > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_caches_every_sync_reads_the_scale() {
    let _one = ONE_AT_A_TIME.lock().await;
    let report = run(&smoke(50, 6, false, MetricProfile::Steady))
        .await
        .unwrap();
    assert!(
        report.invariant_violations().is_empty(),
        "{:?}",
        report.invariant_violations()
    );
    // Upstream's requests: one GET of /scale per sync.
    let scale_gets = report
        .api_requests_by_kind
        .get("get deployments.apps/scale")
        .copied()
        .unwrap_or(0.0);
    assert!(scale_gets >= 0.99, "{:?}", report.api_requests_by_kind);
}
