//! Reconcile-level tests of `plan` / `decide` / `finish`: the worked examples,
//! conditions, events, monitor labels and the branches that skip metrics.
#![allow(clippy::unwrap_used, reason = "test code: a panic is a test failure")]

mod common;

use common::*;
use hpa_core::config::{DecisionConfig, FeatureGates};
use hpa_core::decide::{
    ActionLabel, EarlyReason, ErrorLabel, EventType, Fetched, OtherHpa, Outcome, RescaleOutcome,
    ScaleReadError,
};
use hpa_core::normalize::HpaHistory;
use hpa_core::selector::Selector;
use hpa_core::{KubernetesVersion, decide, finish, get_scale_failed, plan};
use jiff::SignedDuration;
use serde_json::json;

fn run(
    input: &hpa_core::DecisionInput,
    history: &HpaHistory,
    config: &DecisionConfig,
) -> (Option<i32>, Outcome) {
    let d = decide(input, history, config, t0());
    let scale_to = d.scale_to;
    let outcome = if scale_to.is_some() {
        RescaleOutcome::Succeeded
    } else {
        RescaleOutcome::NotNeeded
    };
    (scale_to, finish(d, outcome, t0()))
}

fn conditions(o: &Outcome) -> Vec<(String, String, String)> {
    o.status
        .conditions
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status, c.reason.unwrap_or_default()))
        .collect()
}

fn cond(t: &str, s: &str, r: &str) -> (String, String, String) {
    (t.to_owned(), s.to_owned(), r.to_owned())
}

fn message(o: &Outcome, type_: &str) -> String {
    o.status
        .conditions
        .clone()
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == type_)
        .and_then(|c| c.message)
        .unwrap_or_default()
}

#[test]
fn worked_example_pods_at_50_and_100_against_average_60_scale_to_3() {
    let hpa = Hpa::test().pods_avg("qps", "60");
    let input = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "50"), ("web-1", "100")])],
    );
    let (scale_to, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, Some(3));
    assert_eq!(o.status.desired_replicas, 3);
    assert_eq!(
        o.events[0].message,
        "New size: 3; reason: pods metric qps above target"
    );
}

#[test]
fn worked_example_one_pod_at_2_and_one_silent_against_60_stays_at_2() {
    let hpa = Hpa::test().pods_avg("qps", "60");
    let input = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "2")])],
    );
    let d = decide(&input, &HpaHistory::default(), &v1_36(), t0());
    assert_eq!(d.scale_to, None);
    let shares = &d.trace.metrics[0].pods;
    let silent = shares.iter().find(|s| &*s.pod == "web-1").unwrap();
    assert_eq!((silent.class, silent.assumed), ("missing", Some(60_000)));
    let o = finish(d, RescaleOutcome::NotNeeded, t0());
    assert_eq!(o.status.desired_replicas, 2);
}

#[test]
fn cpu_scale_up_sets_status_conditions_event_and_monitor_labels() {
    let hpa = Hpa::test().cpu(50);
    let input = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", Some(1000)), pod("web-1", Some(1000))],
        vec![cpu_samples(&[("web-0", 900), ("web-1", 900)])],
    );
    let (scale_to, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, Some(4));
    assert_eq!(
        conditions(&o),
        vec![
            cond("AbleToScale", "True", "SucceededRescale"),
            cond("ScalingActive", "True", "ValidMetricFound"),
            cond("ScalingLimited", "False", "DesiredWithinRange"),
        ]
    );
    assert_eq!(
        message(&o, "ScalingActive"),
        "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"
    );
    assert_eq!(o.events.len(), 1);
    assert_eq!(o.events[0].type_, EventType::Normal);
    assert_eq!(o.events[0].reason, "SuccessfulRescale");
    assert_eq!(
        o.events[0].message,
        "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    );
    assert_eq!(
        (o.monitor.action, o.monitor.error),
        (ActionLabel::ScaleUp, ErrorLabel::None)
    );
    assert_eq!(
        o.monitor.metric_computations[0].action,
        ActionLabel::ScaleUp
    );
    let m = &o.status.current_metrics.as_ref().unwrap()[0];
    let r = m.resource.as_ref().unwrap();
    assert_eq!(r.current.average_utilization, Some(90));
    assert_eq!(r.current.average_value.as_ref().unwrap().0, "900m");
    assert_eq!(o.status.last_scale_time.as_ref().unwrap().0, t0());
    assert!(o.status_changed);
}

#[test]
fn legacy_scale_up_is_capped_at_twice_current_in_production() {
    let hpa = Hpa::test().cpu(10).max(100);
    let input = input(
        &hpa,
        4,
        4,
        (0..4)
            .map(|i| pod(&format!("web-{i}"), Some(1000)))
            .collect(),
        vec![cpu_samples(&[
            ("web-0", 1000),
            ("web-1", 1000),
            ("web-2", 1000),
            ("web-3", 1000),
        ])],
    );
    let (scale_to, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, Some(8));
    assert!(conditions(&o).contains(&cond("ScalingLimited", "True", "ScaleUpLimit")));
    let (scale_to, _) = run(
        &input,
        &HpaHistory::default(),
        &DecisionConfig::upstream_test(),
    );
    assert_eq!(scale_to, Some(32), "factor 8 as in upstream's unit tests");
}

/// Two pods at 900m of CPU, the second without a CPU request.
fn second_pod_without_request(hpa: &Hpa) -> hpa_core::DecisionInput {
    input(
        hpa,
        2,
        2,
        vec![pod("web-0", Some(1000)), pod("web-1", None)],
        vec![cpu_samples(&[("web-0", 900), ("web-1", 900)])],
    )
}

#[test]
fn missing_request_is_an_error_naming_container_and_pod() {
    let hpa = Hpa::test().cpu(50);
    let input = second_pod_without_request(&hpa);
    let (scale_to, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, None);
    assert!(conditions(&o).contains(&cond("ScalingActive", "False", "FailedGetResourceMetric")));
    assert_eq!(
        message(&o, "ScalingActive"),
        "the HPA was unable to compute the replica count: failed to get cpu utilization: missing request for cpu in container app of Pod web-1"
    );
    let reasons: Vec<&str> = o.events.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(
        reasons,
        ["FailedGetResourceMetric", "FailedComputeMetricsReplicas"]
    );
    assert_eq!(
        o.events[1].message,
        "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: missing request for cpu in container app of Pod web-1"
    );
    assert_eq!(
        (o.monitor.action, o.monitor.error),
        (ActionLabel::None, ErrorLabel::Internal)
    );
    assert!(o.error.unwrap().starts_with(
        "failed to compute desired number of replicas based on listed metrics for Deployment/test-namespace/web"
    ));
}

#[test]
fn zero_replicas_disable_scaling_without_the_gate() {
    let hpa = Hpa::test().min(0).external_value("queue", "1");
    let p = plan(
        &hpa.build(),
        &input(&hpa, 0, 0, vec![], vec![]).scale,
        &v1_36(),
    );
    assert_eq!(p.early, Some(EarlyReason::ScalingDisabled));
    let input = input(&hpa, 0, 0, vec![], vec![external_values(&["5"])]);
    let (scale_to, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, None);
    assert_eq!(
        message(&o, "ScalingActive"),
        "scaling is disabled since the replica count of the target is zero"
    );
    assert!(conditions(&o).contains(&cond("ScalingActive", "False", "ScalingDisabled")));
}

#[test]
fn the_hpa_scales_to_zero_and_back_with_the_gate_on() {
    let config = DecisionConfig {
        feature_gates: FeatureGates::parse(
            hpa_core::KubernetesVersion::V1_36,
            "HPAScaleToZero=true",
        )
        .unwrap(),
        ..v1_36()
    };
    let behavior = json!({"scaleDown": {"stabilizationWindowSeconds": 0}});
    let hpa = Hpa::test()
        .min(0)
        .external_value("queue", "1")
        .behavior(behavior.clone());
    let down = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![external_values(&["0"])],
    );
    let (scale_to, o) = run(&down, &HpaHistory::default(), &config);
    assert_eq!(scale_to, Some(0));
    assert!(conditions(&o).contains(&cond("ScaledToZero", "True", "ScaledToZero")));

    let hpa = hpa.status(serde_json::to_value(&o.status).unwrap());
    let up = input(&hpa, 0, 0, vec![], vec![external_values(&["5"])]);
    let (scale_to, o2) = run(&up, &o.history, &config);
    // ceil(5/1) = 5 from zero; the default policies count from the period's
    // start (0 + 2 removed just now) so 2 + 4 pods allow it.
    assert_eq!(scale_to, Some(5));
    assert!(conditions(&o2).contains(&cond("ScaledToZero", "False", "NotScaledToZero")));

    // Gate off: the stale condition is dropped and zero means disabled.
    let (scale_to, o3) = run(&up, &o.history, &v1_36());
    assert_eq!(scale_to, None);
    assert!(!conditions(&o3).iter().any(|c| c.0 == "ScaledToZero"));
}

#[test]
fn through_v1_35_zero_replicas_are_autoscaled_whenever_min_replicas_is_zero_and_no_condition_says_so()
 {
    let gate_on = |v| DecisionConfig {
        feature_gates: FeatureGates::parse(v, "HPAScaleToZero=true").unwrap(),
        ..DecisionConfig::of_version(v)
    };
    let (on_35, on_36) = (
        gate_on(KubernetesVersion::V1_35),
        gate_on(KubernetesVersion::V1_36),
    );
    let behavior = json!({"scaleDown": {"stabilizationWindowSeconds": 0}});
    let hpa = Hpa::test()
        .min(0)
        .external_value("queue", "1")
        .behavior(behavior);
    let down = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![external_values(&["0"])],
    );
    let (scale_to, o) = run(&down, &HpaHistory::default(), &on_35);
    assert_eq!(scale_to, Some(0));
    assert!(
        !conditions(&o).iter().any(|c| c.0 == "ScaledToZero"),
        "1.35 has no ScaledToZero condition: {:?}",
        conditions(&o)
    );

    // At zero, set by a person (no condition): 1.35 computes the metric and
    // scales from zero; 1.36 keeps scaling disabled.
    let at_zero = input(&hpa, 0, 0, vec![], vec![external_values(&["5"])]);
    assert_eq!(plan(&hpa.build(), &at_zero.scale, &on_35).early, None);
    let (scale_to, o) = run(&at_zero, &HpaHistory::default(), &on_35);
    assert_eq!(scale_to, Some(4), "0 + 4 pods: the default scale-up policy");
    assert!(!conditions(&o).iter().any(|c| c.0 == "ScaledToZero"));
    assert_eq!(
        plan(&hpa.build(), &at_zero.scale, &on_36).early,
        Some(EarlyReason::ScalingDisabled)
    );

    // minReplicas 1 at zero replicas: disabled in both.
    let one = Hpa::test().min(1).external_value("queue", "1");
    let at_zero = input(&one, 0, 0, vec![], vec![external_values(&["5"])]);
    for config in [&on_35, &on_36] {
        assert_eq!(
            plan(&one.build(), &at_zero.scale, config).early,
            Some(EarlyReason::ScalingDisabled)
        );
    }

    // A ScaledToZero condition stored under 1.36 (a downgrade): 1.35 knows
    // nothing of it and leaves it, gate off or on.
    let stored = Hpa::test().cpu(50).status(json!({
        "desiredReplicas": 2,
        "conditions": [{"type": "ScaledToZero", "status": "False", "reason": "NotScaledToZero"}]
    }));
    let steady = input(
        &stored,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![],
    );
    let (_, o) = run(
        &steady,
        &HpaHistory::default(),
        &DecisionConfig::of_version(KubernetesVersion::V1_35),
    );
    assert!(conditions(&o).contains(&cond("ScaledToZero", "False", "NotScaledToZero")));
    // 1.36 with the gate off removes it.
    let (_, o) = run(&steady, &HpaHistory::default(), &v1_36());
    assert!(!conditions(&o).iter().any(|c| c.0 == "ScaledToZero"));
}

#[test]
fn out_of_range_replicas_jump_to_the_bound_without_metrics() {
    let hpa = Hpa::test().cpu(50).min(2).max(5);
    let (scale_to, o) = run(
        &input(&hpa, 7, 7, vec![], vec![]),
        &HpaHistory::default(),
        &v1_36(),
    );
    assert_eq!(scale_to, Some(5));
    assert_eq!(
        o.events[0].message,
        "New size: 5; reason: Current number of replicas above Spec.MaxReplicas"
    );
    assert_eq!(
        conditions(&o),
        vec![cond("AbleToScale", "True", "SucceededRescale")]
    );
    let (scale_to, o) = run(
        &input(&hpa, 1, 1, vec![], vec![]),
        &HpaHistory::default(),
        &v1_36(),
    );
    assert_eq!(scale_to, Some(2));
    assert_eq!(
        o.events[0].message,
        "New size: 2; reason: Current number of replicas below Spec.MinReplicas"
    );
}

#[test]
fn selector_problems_stop_the_reconcile_with_upstream_reasons() {
    let hpa = Hpa::test().cpu(50);
    let mut i = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", Some(100))],
        vec![cpu_samples(&[("web-0", 50)])],
    );
    i.scale.selector = String::new();
    let (_, o) = run(&i, &HpaHistory::default(), &v1_36());
    assert_eq!(o.events[0].reason, "SelectorRequired");
    assert_eq!(
        message(&o, "ScalingActive"),
        "the HPA target's scale is missing a selector"
    );
    assert!(conditions(&o).contains(&cond("ScalingActive", "False", "InvalidSelector")));

    i.scale.selector = "cheddar cheese".to_owned();
    let (_, o) = run(&i, &HpaHistory::default(), &v1_36());
    assert_eq!(o.events[0].reason, "InvalidSelector");
    // labels.Parse's own words, after the controller's prefix.
    assert_eq!(
        message(&o, "ScalingActive"),
        "couldn't convert selector into a corresponding internal selector object: \
         unable to parse requirement: found 'cheese', expected: in, notin, =, ==, !=, gt, lt"
    );
    assert_eq!(o.events[0].message, message(&o, "ScalingActive"));
    i.scale.selector = "app:web".to_owned();
    let (_, o) = run(&i, &HpaHistory::default(), &v1_36());
    assert_eq!(
        message(&o, "ScalingActive"),
        "couldn't convert selector into a corresponding internal selector object: \
         unable to parse requirement: <nil>: Invalid value: \"app:web\": name part must consist \
         of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric \
         character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
         '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    );

    i.scale.selector = "app=web".to_owned();
    i.other_hpas = vec![OtherHpa {
        key: "test-namespace/other".to_owned(),
        selector: std::sync::Arc::new(Selector::parse("app").unwrap()),
    }];
    let (scale_to, o) = run(&i, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, None);
    assert_eq!(o.events[0].reason, "AmbiguousSelector");
    // Upstream prints the `[]selectors.Key` (each `namespace/name`) in Go
    // map order, which varies from run to run; we print one of its orders,
    // the sorted one, so that the text is stable.
    assert_eq!(
        message(&o, "ScalingActive"),
        "pods by selector app=web are controlled by multiple HPAs: [test-namespace/other test-namespace/test-hpa]"
    );
}

#[test]
fn the_largest_proposal_wins_and_a_failed_metric_blocks_only_scale_down() {
    let hpa = Hpa::test()
        .pods_avg("qps", "10")
        .external_value("queue", "10");
    let pods = vec![pod("web-0", None), pod("web-1", None)];
    // qps says 2 (avg 10), queue says ceil(40/10 × 2) = 8.
    let i = input(
        &hpa,
        2,
        2,
        pods.clone(),
        vec![
            custom_samples(&[("web-0", "10"), ("web-1", "10")]),
            external_values(&["40"]),
        ],
    );
    let (scale_to, o) = run(&i, &HpaHistory::default(), &DecisionConfig::upstream_test());
    assert_eq!(scale_to, Some(8));
    assert!(message(&o, "ScalingActive").ends_with("external metric queue(nil)"));

    // The external metric fails, the pods metric proposes a scale-up: proceed, report internal.
    let i = input(
        &hpa,
        2,
        2,
        pods.clone(),
        vec![
            custom_samples(&[("web-0", "30"), ("web-1", "30")]),
            Fetched::External(Err("boom".to_owned())),
        ],
    );
    let (scale_to, o) = run(&i, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, Some(4));
    assert_eq!(o.monitor.error, ErrorLabel::Internal);
    assert_eq!(o.monitor.metric_computations[1].error, ErrorLabel::Internal);
    assert!(
        o.events
            .iter()
            .any(|e| e.reason == "FailedGetExternalMetric"
                && e.message == "unable to get external metric test-namespace/queue/nil: boom")
    );

    // The external metric fails and the rest would scale down: no scale-down.
    let i = input(
        &hpa,
        2,
        2,
        pods,
        vec![
            custom_samples(&[("web-0", "1"), ("web-1", "1")]),
            Fetched::External(Err("boom".to_owned())),
        ],
    );
    let (scale_to, o) = run(&i, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, None);
    assert!(conditions(&o).contains(&cond("ScalingActive", "False", "FailedGetExternalMetric")));
}

#[test]
fn unknown_metric_types_are_spec_errors_per_metric() {
    let hpa = Hpa::test().metric(json!({"type": "CheddarCheese"}));
    let (_, o) = run(
        &input(&hpa, 2, 2, vec![pod("web-0", None)], vec![]),
        &HpaHistory::default(),
        &v1_36(),
    );
    assert_eq!(o.monitor.metric_computations[0].error, ErrorLabel::Spec);
    assert!(conditions(&o).contains(&cond("ScalingActive", "False", "InvalidMetricSourceType")));
    assert_eq!(
        o.events[0].message,
        "unknown metric source type \"CheddarCheese\""
    );
}

#[test]
fn per_hpa_tolerance_is_honoured_only_with_the_gate() {
    let hpa = Hpa::test()
        .pods_avg("qps", "10")
        .behavior(json!({"scaleUp": {"tolerance": "0.5"}}));
    let i = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "14"), ("web-1", "14")])],
    );
    let (scale_to, _) = run(&i, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, None, "1.4 is inside a 50% scale-up tolerance");
    let mut config = v1_36();
    config
        .feature_gates
        .force(hpa_core::config::Gate::HpaConfigurableTolerance, false);
    let (scale_to, _) = run(&i, &HpaHistory::default(), &config);
    assert_eq!(scale_to, Some(3));
}

#[test]
fn the_trace_records_the_tolerances_the_decision_used() {
    let hpa = Hpa::test()
        .pods_avg("qps", "10")
        .behavior(json!({"scaleUp": {"tolerance": "0.05"}}));
    let i = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "10"), ("web-1", "10")])],
    );
    let band = |config: &DecisionConfig| {
        let t = decide(&i, &HpaHistory::default(), config, t0())
            .trace
            .tolerances;
        (t.scale_up, t.scale_down)
    };
    assert_eq!(
        band(&v1_36()),
        (0.05, 0.1),
        "the HPA's scale-up, the flag's scale-down"
    );
    let mut config = v1_36();
    config.tolerance = 0.2;
    config
        .feature_gates
        .force(hpa_core::config::Gate::HpaConfigurableTolerance, false);
    assert_eq!(
        band(&config),
        (0.2, 0.2),
        "without the gate, the flag's both ways"
    );
}

#[test]
fn behavior_stabilization_and_policies_limit_the_change() {
    let hpa = Hpa::test().cpu(50).max(100).behavior(json!({
        "scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]},
        "scaleDown": {"stabilizationWindowSeconds": 120}
    }));
    let pods: Vec<_> = (0..4)
        .map(|i| pod(&format!("web-{i}"), Some(1000)))
        .collect();
    let hot = cpu_samples(&[
        ("web-0", 1000),
        ("web-1", 1000),
        ("web-2", 1000),
        ("web-3", 1000),
    ]);
    let (scale_to, o) = run(
        &input(&hpa, 4, 4, pods.clone(), vec![hot]),
        &HpaHistory::default(),
        &v1_36(),
    );
    assert_eq!(scale_to, Some(5), "one pod per minute");
    assert!(conditions(&o).contains(&cond("ScalingLimited", "True", "ScaleUpLimit")));
    assert_eq!(o.history.scale_up_events.len(), 1);

    // Cold a minute later: the 120 s down window still holds the earlier 8.
    let cold = cpu_samples(&[("web-0", 10), ("web-1", 10), ("web-2", 10), ("web-3", 10)]);
    let later = t0() + SignedDuration::from_secs(60);
    let d = decide(
        &input(&hpa, 5, 5, pods, vec![cold]),
        &o.history,
        &v1_36(),
        later,
    );
    assert_eq!(d.scale_to, None);
    assert_eq!(d.trace.stabilization, "ScaleDownStabilized");
    let text = d.trace.to_string();
    assert!(
        text.contains("stabilized") && text.contains("web-3"),
        "{text}"
    );
}

#[test]
fn an_unchanged_status_is_not_rewritten_and_keeps_transition_times() {
    let hpa = Hpa::test().pods_avg("qps", "10");
    let samples = || custom_samples(&[("web-0", "10"), ("web-1", "10")]);
    let pods = vec![pod("web-0", None), pod("web-1", None)];
    let (_, first) = run(
        &input(&hpa, 2, 2, pods.clone(), vec![samples()]),
        &HpaHistory::default(),
        &v1_36(),
    );
    assert!(first.status_changed);
    let hpa = hpa.status(serde_json::to_value(&first.status).unwrap());
    let later = t0() + SignedDuration::from_secs(15);
    let d = decide(
        &input(&hpa, 2, 2, pods, vec![samples()]),
        &first.history,
        &v1_36(),
        later,
    );
    let second = finish(d, RescaleOutcome::NotNeeded, later);
    assert!(!second.status_changed);
    assert_eq!(second.status.conditions, first.status.conditions);
}

#[test]
fn a_failed_rescale_reports_failed_update_scale() {
    let hpa = Hpa::test().pods_avg("qps", "10");
    let i = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "30"), ("web-1", "30")])],
    );
    let d = decide(&i, &HpaHistory::default(), &v1_36(), t0());
    assert_eq!(d.scale_to, Some(4));
    let o = finish(d, RescaleOutcome::Failed("conflict".to_owned()), t0());
    assert!(conditions(&o).contains(&cond("AbleToScale", "False", "FailedUpdateScale")));
    assert_eq!(
        o.events[0].message,
        "New size: 4; reason: pods metric qps above target; error: conflict"
    );
    assert_eq!(
        o.status.desired_replicas, 0,
        "desired stays as previously reported"
    );
    assert_eq!(
        o.error.as_deref(),
        Some("failed to rescale Deployment/test-namespace/web: conflict")
    );
}

#[test]
fn a_failed_scale_read_sets_failed_get_scale() {
    let hpa = Hpa::test().cpu(50).build();
    let o = get_scale_failed(
        &hpa,
        &ScaleReadError::Failed("not found".to_owned()),
        &HpaHistory::default(),
        &v1_36(),
        t0(),
    );
    assert_eq!(o.events[0].reason, "FailedGetScale");
    let c = &o.status.conditions.as_ref().unwrap()[0];
    assert_eq!(c.reason.as_deref(), Some("FailedGetScale"));
    assert_eq!(
        c.message.as_deref(),
        Some("the HPA controller was unable to get the target's current scale: not found")
    );
    assert_eq!(o.monitor.error, ErrorLabel::Internal);
    let o = get_scale_failed(
        &hpa,
        &ScaleReadError::InvalidApiVersion("bad".to_owned()),
        &HpaHistory::default(),
        &v1_36(),
        t0(),
    );
    assert_eq!(o.monitor.error, ErrorLabel::Spec);
}

#[test]
fn plan_lists_one_query_per_metric() {
    let hpa = Hpa::test()
        .cpu(50)
        .pods_avg("qps", "1")
        .object_value("hits", "5")
        .external_value("queue", "3");
    let i = input(&hpa, 2, 2, vec![], vec![]);
    let p = plan(&i.hpa, &i.scale, &v1_36());
    assert_eq!(p.early, None);
    assert_eq!(p.queries.len(), 4);
    assert!(p.queries.iter().all(Option::is_some));
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("\"selector\":\"app=web\""), "{json}");
}

/// The release these tests were written for: v1.36, where `HPAScaleToZero`
/// is off by default.
fn v1_36() -> DecisionConfig {
    DecisionConfig::of_version(hpa_core::KubernetesVersion::V1_36)
}

fn scale_to_zero_gate() -> DecisionConfig {
    DecisionConfig {
        feature_gates: FeatureGates::parse(
            hpa_core::KubernetesVersion::V1_36,
            "HPAScaleToZero=true",
        )
        .unwrap(),
        ..v1_36()
    }
}

#[test]
fn from_v1_37_every_rescale_adds_scaled_to_zero_false_by_default() {
    // HPAScaleToZero is beta and on in 1.37: an HPA that never goes near
    // zero still gets the condition on its first rescale.
    let hpa = Hpa::test().pods_avg("qps", "60");
    let input = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "50"), ("web-1", "100")])],
    );
    let v1_37 = DecisionConfig::of_version(hpa_core::KubernetesVersion::V1_37);
    let (scale_to, o) = run(&input, &HpaHistory::default(), &v1_37);
    assert_eq!(scale_to, Some(3));
    assert!(conditions(&o).contains(&cond("ScaledToZero", "False", "NotScaledToZero")));
    let (_, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert!(!conditions(&o).iter().any(|c| c.0 == "ScaledToZero"));
}

#[test]
fn every_rescale_not_to_zero_adds_scaled_to_zero_false_under_the_gate() {
    // No ScaledToZero condition yet: upstream's else branch adds it.
    let hpa = Hpa::test().pods_avg("qps", "60");
    let input = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "50"), ("web-1", "100")])],
    );
    let (scale_to, o) = run(&input, &HpaHistory::default(), &scale_to_zero_gate());
    assert_eq!(scale_to, Some(3));
    assert!(conditions(&o).contains(&cond("ScaledToZero", "False", "NotScaledToZero")));
    assert_eq!(
        message(&o, "ScaledToZero"),
        "the HPA controller did not scale the workload to zero"
    );
    // Gate off: no ScaledToZero condition at all.
    let (_, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert!(!conditions(&o).iter().any(|c| c.0 == "ScaledToZero"));
}

#[test]
fn scaling_from_zero_to_min_replicas_by_normalization_keeps_the_empty_reason() {
    // Held at zero by the HPA, minReplicas raised to 3, the metric proposes
    // 0: normalization clamps to minReplicas before upstream's "below
    // Spec.MinReplicas" fallback could apply, so the reason stays empty.
    let hpa = Hpa::test()
        .min(3)
        .external_value("queue", "1")
        .status(json!({
            "desiredReplicas": 0,
            "conditions": [{"type": "ScaledToZero", "status": "True", "reason": "ScaledToZero"}]
        }));
    let input = input(&hpa, 0, 0, vec![], vec![external_values(&["0"])]);
    let (scale_to, o) = run(&input, &HpaHistory::default(), &scale_to_zero_gate());
    assert_eq!(scale_to, Some(3));
    assert_eq!(o.events[0].message, "New size: 3; reason: ");
    assert!(conditions(&o).contains(&cond("ScaledToZero", "False", "NotScaledToZero")));
}

#[test]
fn a_scale_up_driven_by_stabilization_history_has_an_empty_reason() {
    // A human scaled 5 -> 3 while the last recommendation was 5: the metric
    // proposes 3 (no reason), the downscale window brings 5 back.
    let hpa = Hpa::test().pods_avg("qps", "60");
    let pods: Vec<_> = (0..3).map(|i| pod(&format!("web-{i}"), None)).collect();
    let samples = custom_samples(&[("web-0", "60"), ("web-1", "60"), ("web-2", "60")]);
    let input = input(&hpa, 3, 3, pods, vec![samples]);
    let history = HpaHistory {
        recommendations: Some(vec![hpa_core::normalize::Recommendation {
            replicas: 5,
            timestamp: t0() - SignedDuration::from_secs(30),
        }]),
        ..HpaHistory::default()
    };
    let (scale_to, o) = run(&input, &history, &v1_36());
    assert_eq!(scale_to, Some(5));
    assert_eq!(o.events[0].message, "New size: 5; reason: ");
}

#[test]
fn an_object_value_target_without_pods_reports_the_ready_pods_failure() {
    let hpa = Hpa::test().object_value("depth", "10");
    let input = input(&hpa, 2, 2, vec![], vec![object_value("50")]);
    let (scale_to, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, None);
    assert!(
        message(&o, "ScalingActive").ends_with(
            "unable to calculate ready pods: no pods returned by selector while calculating replica count"
        ),
        "{}",
        message(&o, "ScalingActive")
    );
}

#[test]
fn a_sync_that_sets_the_status_drops_observed_generation_as_v1_36() {
    let hpa = Hpa::test()
        .pods_avg("qps", "60")
        .status(json!({"observedGeneration": 3, "currentReplicas": 2, "desiredReplicas": 2}));
    let input = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "60"), ("web-1", "60")])],
    );
    let (_, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert_eq!(o.status.observed_generation, None);
    assert!(o.status_changed);
}

fn of(version: KubernetesVersion) -> DecisionConfig {
    DecisionConfig::of_version(version)
}

/// The conditions' `observedGeneration`s, in order.
fn condition_generations(o: &Outcome) -> Vec<Option<i64>> {
    o.status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.observed_generation)
        .collect()
}

/// A steady HPA at generation 7 whose stored status observed generation 3.
fn generation_7() -> (Hpa, hpa_core::DecisionInput) {
    let hpa = Hpa::test()
        .generation(7)
        .pods_avg("qps", "60")
        .status(json!({"observedGeneration": 3, "currentReplicas": 2, "desiredReplicas": 2}));
    let i = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![custom_samples(&[("web-0", "60"), ("web-1", "60")])],
    );
    (hpa, i)
}

#[test]
fn observed_generation_is_the_hpas_generation_from_v1_37_and_absent_in_v1_36() {
    use KubernetesVersion::*;
    let (_, input) = generation_7();
    // (release, status.observedGeneration, each condition's)
    for (version, want) in [(V1_36, None), (V1_37, Some(7)), (V1_38, Some(7))] {
        let (_, o) = run(&input, &HpaHistory::default(), &of(version));
        assert_eq!(o.status.observed_generation, want, "{version}");
        let conditions = condition_generations(&o);
        assert_eq!(conditions.len(), 3, "{version}");
        assert!(
            conditions.iter().all(|g| *g == want),
            "{version}: {conditions:?}"
        );
        assert!(o.status_changed, "{version}");
    }
}

#[test]
fn hpa_generation_turned_off_in_v1_37_drops_observed_generation() {
    let (_, input) = generation_7();
    let config = DecisionConfig {
        feature_gates: FeatureGates::parse(KubernetesVersion::V1_37, "HPAGeneration=false")
            .unwrap(),
        ..DecisionConfig::default()
    };
    let (_, o) = run(&input, &HpaHistory::default(), &config);
    assert_eq!(o.status.observed_generation, None);
    assert!(condition_generations(&o).iter().all(Option::is_none));
}

#[test]
fn a_failed_metric_still_records_the_observed_generation() {
    // A missing request: the reconcile stops after computing metrics and
    // upstream's setCurrentReplicasAndMetricsInStatus rebuilds the status.
    let hpa = Hpa::test().generation(4).cpu(50);
    let i = input(
        &hpa,
        2,
        2,
        vec![pod("web-0", None), pod("web-1", None)],
        vec![cpu_samples(&[("web-0", 100), ("web-1", 100)])],
    );
    let (scale_to, o) = run(&i, &HpaHistory::default(), &of(KubernetesVersion::V1_37));
    assert_eq!(scale_to, None);
    assert!(o.error.is_some());
    assert_eq!(o.status.observed_generation, Some(4));
    assert!(conditions(&o).contains(&cond("ScalingActive", "False", "FailedGetResourceMetric")));
    assert!(condition_generations(&o).iter().all(|g| *g == Some(4)));
}

#[test]
fn a_generation_bump_alone_rewrites_the_status_only_under_hpa_generation() {
    use KubernetesVersion::*;
    for (version, rewritten) in [(V1_36, false), (V1_37, true), (V1_38, true)] {
        let (hpa, input) = generation_7();
        let (_, first) = run(&input, &HpaHistory::default(), &of(version));
        // The status written, read back; then only the spec's generation moves.
        let stored = serde_json::to_value(&first.status).unwrap();
        let bumped = hpa.generation(8).status(stored.clone());
        let samples = custom_samples(&[("web-0", "60"), ("web-1", "60")]);
        let pods = vec![pod("web-0", None), pod("web-1", None)];
        let later = t0() + SignedDuration::from_secs(15);
        let d = decide(
            &input_of(&bumped, pods.clone(), samples.clone()),
            &first.history,
            &of(version),
            later,
        );
        let second = finish(d, RescaleOutcome::NotNeeded, later);
        assert_eq!(second.status_changed, rewritten, "{version}");
        // Unbumped, nothing changes in any release.
        let same = Hpa {
            json: bumped.json.clone(),
        }
        .generation(7);
        let d = decide(
            &input_of(&same, pods, samples),
            &first.history,
            &of(version),
            later,
        );
        assert!(
            !finish(d, RescaleOutcome::NotNeeded, later).status_changed,
            "{version}"
        );
    }
}

fn input_of(
    hpa: &Hpa,
    pods: Vec<k8s_openapi::api::core::v1::Pod>,
    m: Fetched,
) -> hpa_core::DecisionInput {
    input(hpa, 2, 2, pods, vec![m])
}

#[test]
fn a_failed_scale_read_keeps_the_stored_observed_generation_and_stamps_its_condition() {
    let hpa = Hpa::test()
        .generation(5)
        .cpu(50)
        .status(json!({"observedGeneration": 3, "desiredReplicas": 2}))
        .build();
    let read = |version| {
        get_scale_failed(
            &hpa,
            &ScaleReadError::Failed("not found".to_owned()),
            &HpaHistory::default(),
            &of(version),
            t0(),
        )
    };
    let o = read(KubernetesVersion::V1_37);
    assert_eq!(o.status.observed_generation, Some(3));
    assert_eq!(condition_generations(&o), vec![Some(5)]);
    let o = read(KubernetesVersion::V1_36);
    assert_eq!(o.status.observed_generation, Some(3));
    assert_eq!(condition_generations(&o), vec![None]);
}

#[test]
fn an_object_metric_fetch_failure_names_the_object_as_each_release_words_it() {
    use KubernetesVersion::*;
    let hpa = Hpa::test().object_value("hits", "5");
    let failed = Fetched::Object(Err("the server could not find the metric".to_owned()));
    let i = input(&hpa, 2, 2, vec![pod("web-0", None)], vec![failed]);
    for (version, want) in [
        (
            V1_36,
            "unable to get metric hits: Service on test-namespace front/the server could not find the metric",
        ),
        (
            V1_37,
            "unable to get metric hits on Service test-namespace/front: the server could not find the metric",
        ),
    ] {
        let (_, o) = run(&i, &HpaHistory::default(), &of(version));
        assert_eq!(
            message(&o, "ScalingActive"),
            format!("the HPA was unable to compute the replica count: {want}"),
            "{version}"
        );
    }
}

#[test]
fn an_external_average_value_at_zero_replicas_shows_the_underflow_through_v1_37_and_the_total_from_v1_38()
 {
    use KubernetesVersion::*;
    // Held at zero by the HPA (ScaledToZero=True), metrics computed from zero.
    let hpa = Hpa::test()
        .min(0)
        .metric(
            json!({"type": "External", "external": {"metric": {"name": "queue"},
            "target": {"type": "AverageValue", "averageValue": "1"}}}),
        )
        .status(json!({
            "desiredReplicas": 0,
            "conditions": [{"type": "ScaledToZero", "status": "True", "reason": "ScaledToZero"}]
        }));
    let i = input(&hpa, 0, 0, vec![], vec![external_values(&["5"])]);
    for (version, shown) in [(V1_37, "-9223372036854775808m"), (V1_38, "5")] {
        let (scale_to, o) = run(&i, &HpaHistory::default(), &of(version));
        // ceil(5 / 1) = 5 proposed; the legacy cap from zero is 4.
        assert_eq!(scale_to, Some(4), "{version}");
        let status = serde_json::to_value(&o.status.current_metrics).unwrap();
        assert_eq!(
            status[0]["external"]["current"]["averageValue"], shown,
            "{version}: {status}"
        );
    }
}

#[test]
fn pod_level_requests_count_the_overhead_in_utilization_until_v1_38() {
    use KubernetesVersion::*;
    use k8s_openapi::api::core::v1::ResourceRequirements;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    let hpa = Hpa::test().cpu(50);
    let cpu = |m: &str| [("cpu".to_owned(), Quantity(m.to_owned()))].into();
    let with_overhead = |name: &str| {
        let mut p = pod(name, Some(500));
        let spec = p.spec.as_mut().unwrap();
        spec.overhead = Some(cpu("500m"));
        spec.resources = Some(ResourceRequirements {
            requests: Some(cpu("500m")),
            ..Default::default()
        });
        p
    };
    let i = input(
        &hpa,
        2,
        2,
        vec![with_overhead("web-0"), with_overhead("web-1")],
        vec![cpu_samples(&[("web-0", 500), ("web-1", 500)])],
    );
    // 500m used of 1000m (request + overhead) is 50 %: on target; of 500m
    // (request alone) 100 %: twice the target.
    for (version, scale_to) in [(V1_36, None), (V1_37, None), (V1_38, Some(4))] {
        let (got, _) = run(&i, &HpaHistory::default(), &of(version));
        assert_eq!(got, scale_to, "{version}");
    }
}

#[test]
fn a_decision_says_why_it_failed_when_a_metric_could_not_be_read() {
    let hpa = Hpa::test()
        .pods_avg("qps", "10")
        .external_value("queue", "10");
    let pods = vec![pod("web-0", None), pod("web-1", None)];
    let ok = input(
        &hpa,
        2,
        2,
        pods.clone(),
        vec![
            custom_samples(&[("web-0", "10"), ("web-1", "10")]),
            external_values(&["20"]),
        ],
    );
    let d = decide(&ok, &HpaHistory::default(), &v1_36(), t0());
    assert_eq!(d.error(), None);
    // One metric fails: scaling may go on, the sync is still an error.
    let partly = input(
        &hpa,
        2,
        2,
        pods.clone(),
        vec![
            custom_samples(&[("web-0", "30"), ("web-1", "30")]),
            Fetched::External(Err("boom".to_owned())),
        ],
    );
    let d = decide(&partly, &HpaHistory::default(), &v1_36(), t0());
    assert!(
        d.error().is_some_and(|e| e.contains("boom")),
        "{:?}",
        d.error()
    );
    // Every metric fails: no replica count at all.
    let hpa = Hpa::test().external_value("queue", "10");
    let none = input(
        &hpa,
        2,
        2,
        pods,
        vec![Fetched::External(Err(
            "the server could not find the metric".to_owned(),
        ))],
    );
    let d = decide(&none, &HpaHistory::default(), &v1_36(), t0());
    assert!(
        d.error()
            .is_some_and(|e| e.contains("the server could not find the metric")),
        "{:?}",
        d.error()
    );
}

/// "did not receive metrics for targeted pods (pods might be unready)":
/// the failed metric's trace still holds every pod with the rule and times
/// that made it unready, as the proposal's own grouping decided them.
#[test]
fn pods_unready_for_lack_of_a_window_after_readiness_are_named_in_a_failed_metrics_trace() {
    let hpa = Hpa::test().cpu(50);
    // Both pods started and turned Ready 10s ago; their 30s samples, taken
    // 30s ago, began 50s before readiness.
    let young = |name: &str| {
        let mut p = pod(name, Some(200));
        let status = p.status.as_mut().unwrap();
        let ten_ago = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            t0() - SignedDuration::from_secs(10),
        );
        status.start_time = Some(ten_ago.clone());
        status.conditions.as_mut().unwrap()[0].last_transition_time = Some(ten_ago);
        p
    };
    let input = input(
        &hpa,
        2,
        2,
        vec![young("web-0"), young("web-1")],
        vec![cpu_samples(&[("web-0", 150), ("web-1", 150)])],
    );
    let d = decide(&input, &HpaHistory::default(), &v1_36(), t0());
    assert_eq!(d.scale_to, None);
    let metric = &d.trace.metrics[0];
    assert!(
        metric
            .error
            .as_deref()
            .unwrap()
            .ends_with("did not receive metrics for targeted pods (pods might be unready)"),
        "{:?}",
        metric.error
    );
    let names: Vec<&str> = metric.pods.iter().map(|p| &*p.pod).collect();
    assert_eq!(names, ["web-0", "web-1"]);
    for share in &metric.pods {
        assert_eq!(share.class, "unready");
        assert_eq!(
            share.why,
            hpa_core::grouping::GroupRule::SampleBeforeReady {
                ready_since: t0() - SignedDuration::from_secs(10),
                sample_time: t0() - SignedDuration::from_secs(30),
                window: SignedDuration::from_secs(30),
                initialization_ends: t0() + SignedDuration::from_secs(290),
            }
        );
        assert_eq!(
            share.why.counts_from(),
            Some(t0() + SignedDuration::from_secs(20))
        );
    }
    // The trace reads back with the rules (a controller keeps it as text).
    let text = serde_json::to_string(&d.trace).unwrap();
    let back: hpa_core::DecisionTrace = serde_json::from_str(&text).unwrap();
    assert_eq!(back, d.trace);
    assert!(
        d.trace.to_string().contains("before it turned Ready"),
        "{}",
        d.trace
    );
}

/// The ContainerResource twin: its failures name the container in the
/// outer text and carry their own reason (upstream's
/// `computeStatusForContainerResourceMetric`).
#[test]
fn a_container_metric_failure_names_the_container() {
    let hpa = Hpa::test().metric(serde_json::json!({"type": "ContainerResource",
        "containerResource": {"name": "cpu", "container": "app",
            "target": {"type": "Utilization", "averageUtilization": 50}}}));
    let input = second_pod_without_request(&hpa);
    let (scale_to, o) = run(&input, &HpaHistory::default(), &v1_36());
    assert_eq!(scale_to, None);
    assert!(conditions(&o).contains(&cond(
        "ScalingActive",
        "False",
        "FailedGetContainerResourceMetric"
    )));
    assert_eq!(
        o.events[1].message,
        "invalid metrics (1 invalid out of 1), first error is: failed to get app container metric value: failed to get cpu utilization: missing request for cpu in container app of Pod web-1"
    );
}
