//! What a scenario run leaves for people to look at: each scenario's
//! verdict with its controller decisions ([`Recorder`], filled by the
//! runner's hooks), drawn as timelines (`explain --plot`) or written as one
//! HTML page per run (`test --report DIR`, [`html`]).

pub mod html;

pub use crate::gherkin::record::{DECISIONS_KEPT, HpaRecord, Recorder, ScenarioRecord};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gherkin::{RunOptions, Verdict, runner};

    const FEATURE: &str = r#"Feature: Report self-test
  Scenario: scales up
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas

  Scenario: expects too much
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When 1m passes
    Then the deployment "web" has 7 replicas
"#;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_report_shows_failures_first_with_their_decisions_and_timelines() {
        let dir = tempfile::tempdir().unwrap();
        let feature = dir.path().join("report.feature");
        std::fs::write(&feature, FEATURE).unwrap();
        let recorder = Recorder::default();
        runner::run(&RunOptions {
            paths: vec![feature.clone()],
            record: Some(recorder.clone()),
            ..RunOptions::default()
        })
        .await
        .unwrap();
        let records = recorder.scenarios();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].outcome.scenario, "expects too much");
        assert!(matches!(records[0].outcome.verdict, Verdict::Failed(_)));
        let failed = &records[0];
        assert_eq!(failed.hpas.len(), 1);
        // Under 1.37 (the default) the new HPA is synced at once, then
        // "1m passes" syncs at 15s, 30s, 45s and 1m.
        assert_eq!(failed.hpas[0].decisions.len(), 5);
        assert_eq!(failed.hpas[0].timeline.samples[0].t, 0.0);
        assert_eq!(failed.hpas[0].timeline.samples[1].t, 15.0);
        assert!(
            failed
                .outcome
                .failure
                .as_deref()
                .is_some_and(|e| e.contains("expected deployment web to have 7 replicas")),
            "{:?}",
            failed.outcome.failure
        );

        let out = html::write(&dir.path().join("report"), &records, &[feature], None).unwrap();
        let page = std::fs::read_to_string(out).unwrap();
        assert!(page.contains("1 failed"), "the counts");
        assert!(
            page.find("expects too much") < page.find("scales up"),
            "failures first"
        );
        assert!(page.contains("<svg"), "a timeline per HPA");
        // The trace and the timeline's legend write the target as the HPA
        // does (60), not in milli-units (60000m).
        assert!(
            page.contains(" 60 average ") && !page.contains("60000m"),
            "the target as written"
        );
        assert!(page.contains("decision trace (5 syncs)"), "the trace");
        assert!(
            page.contains("── sync at +15s"),
            "the explain table of each sync"
        );
    }

    /// The band drawn is the one the decisions used: an HPA's own 5 %
    /// scale-up tolerance was drawn as the flag's ±10 %.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_timeline_draws_the_tolerance_band_the_decisions_used() {
        let feature = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("features/scaling/tolerance.feature");
        let recorder = Recorder::default();
        let summary = runner::run(&RunOptions {
            paths: vec![feature],
            record: Some(recorder.clone()),
            ..RunOptions::default()
        })
        .await
        .unwrap();
        assert!(!summary.failed());
        let records = recorder.scenarios();
        let band = |scenario: &str| {
            let record = records
                .iter()
                .find(|r| r.outcome.scenario == scenario)
                .unwrap();
            record.hpas[0].timeline.clone()
        };
        let per_hpa = band("A per-HPA scale-up tolerance lets the same load scale up");
        assert_eq!(
            (per_hpa.tolerance.scale_up, per_hpa.tolerance.scale_down),
            (0.05, 0.1)
        );
        let svg = crate::plot::render(&[per_hpa], crate::plot::Layout::Stacked).unwrap();
        assert!(
            svg.contains("tolerance +5% / -10%"),
            "the asymmetric band's label"
        );
        let flag = band("A smaller cluster tolerance lets the same load scale up");
        assert_eq!(
            (flag.tolerance.scale_up, flag.tolerance.scale_down),
            (0.05, 0.05)
        );
        let svg = crate::plot::render(&[flag], crate::plot::Layout::Stacked).unwrap();
        assert!(svg.contains("tolerance ±5%"));
    }
}
