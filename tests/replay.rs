//! `hpa-harness replay` against the Gherkin runner: the replay of
//! features/replay/traffic.csv gives, at every time the equivalent scenario
//! (features/replay/replay.feature) checks, the replicas it expects, and
//! the scenario passes.

#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::path::{Path, PathBuf};

use hpa_controller::config::ControllerConfig;
use hpa_harness::gherkin::{RunOptions, Verdict, runner};
use hpa_harness::plot::{Layout, Timeline};
use hpa_harness::replay::series::{self, SeriesArg};
use hpa_harness::replay::{ReplayOptions, Spread, Summary, manifest, replay};

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("features/replay")
        .join(file)
}

/// `(seconds, replicas)` the scenario expects: "has N replicas" at the
/// current time, "stays at N replicas for D" at every sync through D.
fn expectations(feature: &str) -> Vec<(f64, i32)> {
    let secs = |d: &str| {
        fake_metrics_server::script::parse_go_duration(d)
            .unwrap()
            .as_secs_f64()
    };
    let mut t = 0.0;
    let mut out = Vec::new();
    for line in feature.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [_, d, "pass" | "passes"] => t += secs(d),
            [_, "the", "deployment", _, "has", n, "replicas"] => out.push((t, n.parse().unwrap())),
            [
                _,
                "the",
                "deployment",
                _,
                "stays",
                "at",
                n,
                "replicas",
                "for",
                d,
            ] => {
                let end = t + secs(d);
                while t < end {
                    t += 15.0;
                    out.push((t, n.parse().unwrap()));
                }
            }
            _ => {}
        }
    }
    out
}

async fn replay_example(hpa_file: &str) -> (Summary, Timeline) {
    let hpa = manifest::hpa(&example(hpa_file), None).unwrap();
    let workload = manifest::workload(&hpa, Some(&example("deployment.yaml"))).unwrap();
    let series = series::load(&[SeriesArg {
        name: None,
        file: example("traffic.csv"),
    }])
    .unwrap();
    let options = ReplayOptions {
        config: ControllerConfig::default(),
        spread: Spread::Total,
        pod_delays: hpa_sim::PodDelays::default(),
    };
    let run = replay(&hpa, &workload, &series, &options).await.unwrap();
    let timeline = Timeline::from_decisions("t", run.start, &run.decisions, Some(&run.ready));
    (
        Summary::of(hpa_file, &run, &timeline, Spread::Total),
        timeline,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_gives_the_replicas_of_the_equivalent_scenario() {
    let feature = example("replay.feature");
    let summary = runner::run(&RunOptions {
        paths: vec![feature.clone()],
        ..RunOptions::default()
    })
    .await
    .unwrap();
    assert_eq!(summary.scenarios.len(), 1);
    assert_eq!(summary.scenarios[0].verdict, Verdict::Passed);

    let expected = expectations(&std::fs::read_to_string(&feature).unwrap());
    assert!(
        expected.len() > 40,
        "the scenario checks most syncs: {expected:?}"
    );
    let (replayed, _) = replay_example("hpa.yaml").await;
    assert_eq!(replayed.syncs, 57, "14m of 15s syncs, both ends included");
    for (t, n) in expected {
        let sample = replayed
            .samples
            .iter()
            .find(|s| s.t == t)
            .unwrap_or_else(|| panic!("no sync at {t}s"));
        assert_eq!(sample.after(), Some(n), "replicas after the sync at {t}s");
    }
    assert_eq!(replayed.rescales.len(), 5);
    assert_eq!(replayed.max_replicas_seen, Some(9));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_scale_down_window_holds_the_replicas_longer_in_the_comparison() {
    let (fast, a) = replay_example("hpa.yaml").await;
    let (slow, b) = replay_example("hpa-slow-scale-down.yaml").await;
    let down = |s: &Summary| {
        s.rescales
            .iter()
            .find(|r| r.to < r.from)
            .map(|r| r.at_seconds)
            .unwrap()
    };
    assert_eq!(
        down(&fast),
        405.0,
        "6m45s: 45s after the load fell, with a 60s window"
    );
    assert!(
        down(&slow) >= 360.0 + 300.0,
        "the default window is 5 minutes"
    );
    let svg = hpa_harness::plot::render(&[a, b], Layout::SideBySide).unwrap();
    assert!(svg.contains("held by the stabilization window"));
}

#[tokio::test]
async fn a_series_without_the_hpas_metric_names_the_manifest_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("traffic.csv");
    std::fs::write(&csv, "timestamp,rps,latency\n0s,10,0.2\n").unwrap();
    let hpa = manifest::hpa(&example("hpa.yaml"), None).unwrap();
    let workload = manifest::workload(&hpa, Some(&example("deployment.yaml"))).unwrap();
    let series = series::load(&[SeriesArg {
        name: None,
        file: csv.clone(),
    }])
    .unwrap();
    let options = ReplayOptions {
        config: ControllerConfig::default(),
        spread: Spread::Total,
        pod_delays: hpa_sim::PodDelays::default(),
    };
    let err = replay(&hpa, &workload, &series, &options)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!(
            "{}:17: field spec.metrics[0].resource.name: the HPA scales on \"cpu\" but the series has no column \"cpu\" (columns of {}: rps, latency)",
            example("hpa.yaml").display(),
            csv.display()
        )),
        "{err}"
    );
}

#[tokio::test]
async fn an_hpa_the_api_server_refuses_is_named_with_the_line_of_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hpa.yaml");
    let text = std::fs::read_to_string(example("hpa.yaml")).unwrap();
    std::fs::write(&file, text.replace("maxReplicas: 10", "maxReplicas: 0")).unwrap();
    let hpa = manifest::hpa(&file, None).unwrap();
    let workload = manifest::workload(&hpa, Some(&example("deployment.yaml"))).unwrap();
    let series = series::load(&[SeriesArg {
        name: None,
        file: example("traffic.csv"),
    }])
    .unwrap();
    let options = ReplayOptions {
        config: ControllerConfig::default(),
        spread: Spread::Total,
        pod_delays: hpa_sim::PodDelays::default(),
    };
    let err = replay(&hpa, &workload, &series, &options)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!(
            "{}:13: HorizontalPodAutoscaler default/php-apache: field spec.maxReplicas: Required value: must be set and greater than 0",
            file.display()
        )),
        "{err}"
    );
}

/// A ScaledObject replays with KEDA's operator and adapter around its HPA:
/// the operator's 0 <-> 1 steps and fallback appear in the summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scaled_object_replays_with_keda_s_steps_and_fallback() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("features/keda/replay");
    let hpa = manifest::hpa(&dir.join("worker.yaml"), None).unwrap();
    assert_eq!(hpa.name, "keda-hpa-worker");
    let workload = manifest::workload(&hpa, None).unwrap();
    let series = series::load(&[SeriesArg {
        name: None,
        file: dir.join("triggers.csv"),
    }])
    .unwrap();
    let options = ReplayOptions {
        config: ControllerConfig::default(),
        spread: Spread::Total,
        pod_delays: hpa_sim::PodDelays::default(),
    };
    let run = replay(&hpa, &workload, &series, &options).await.unwrap();
    let timeline = Timeline::from_decisions("t", run.start, &run.decisions, Some(&run.ready));
    let summary = Summary::of("worker.yaml", &run, &timeline, Spread::Total);
    println!("{}", summary.text());
    let keda = summary.keda.as_ref().unwrap();
    let steps: Vec<(f64, i32, i32, &str)> = keda
        .run
        .steps
        .iter()
        .map(|s| (s.at_seconds, s.from, s.to, s.reason.as_str()))
        .collect();
    assert_eq!(
        steps,
        [
            // Never active: at the first poll, initialCooldownPeriod (0)
            // has passed since creation (KEDA's creation time is whole
            // seconds, its first poll comes after it), so down to 0 at once.
            (0.0, 1, 0, "KEDAScaleTargetDeactivated"),
            // 35 is above activationValue 2: back to 1 at once.
            (60.0, 0, 1, "KEDAScaleTargetActivated"),
            // Last active at 105 s (failed reads are not activity): more
            // than cooldownPeriod 60 s later, to 0.
            (180.0, 5, 0, "KEDAScaleTargetDeactivated"),
        ]
    );
    let after = |t: f64| {
        summary
            .samples
            .iter()
            .find(|s| s.t == t)
            .and_then(|s| s.after())
    };
    // 35 / 10 per pod from 1 pod: 4.
    assert_eq!(after(60.0), Some(4));
    // Reads fail from 120 s; the 3rd in a row (more than failureThreshold
    // 2) is answered with 10 x 5, so the HPA goes to fallback's 5.
    assert_eq!(after(135.0), Some(4));
    assert_eq!(after(150.0), Some(5));
    assert_eq!(keda.fallback_spans, [(150.0, 180.0)]);
    assert!(summary.errors >= 2, "the first two failed reads are errors");
    assert!(summary.text().contains("KEDAScaleTargetActivated"));
}

/// `replay --kubernetes-version 1.35 --compare-version 1.36`: the oldest
/// release is one a replay may take, and a CPU HPA far from zero decides
/// the same in both (what differs, the ScaledToZero condition and a target
/// set to zero by a person, does not arise).
#[test]
fn a_replay_compares_1_35_with_1_36() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hpa-harness"))
        .arg("replay")
        .arg(example("hpa.yaml"))
        .arg("--workload")
        .arg(example("deployment.yaml"))
        .arg("--series")
        .arg(example("traffic.csv"))
        .args(["--kubernetes-version", "1.35", "--compare-version", "1.36"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Kubernetes 1.35):"), "{stdout}");
    assert!(
        stdout.contains("Kubernetes 1.35 and 1.36 decide the same at every sync"),
        "{stdout}"
    );
}
