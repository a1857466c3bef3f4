//! Properties over generated inputs: the result stays within [min, max],
//! nothing changes inside the tolerance band, and no input panics.
#![allow(clippy::unwrap_used, reason = "test code: a panic is a test failure")]

mod common;

use common::*;
use hpa_core::config::DecisionConfig;
use hpa_core::decide::{Fetched, RescaleOutcome};
use hpa_core::normalize::HpaHistory;
use hpa_core::{decide, finish, plan};
use proptest::prelude::*;
use serde_json::json;

/// A generated world: HPA bounds, current replicas, pods with optional
/// requests, and cpu samples for some of them (possibly for unknown pods).
#[derive(Debug, Clone)]
struct World {
    min: i32,
    max: i32,
    current: i32,
    status_replicas: i32,
    target: i32,
    behavior: bool,
    requests: Vec<Option<i64>>,
    usages: Vec<Option<i64>>,
    extra_samples: usize,
    external: Vec<i64>,
}

fn world() -> impl Strategy<Value = World> {
    (
        0i32..5,
        0i32..30,
        0i32..40,
        0i32..40,
        1i32..300,
        any::<bool>(),
        prop::collection::vec(prop::option::weighted(0.9, 0i64..4000), 0..12),
        prop::collection::vec(prop::option::weighted(0.8, 0i64..i64::MAX), 0..14),
        0usize..3,
        prop::collection::vec(any::<i64>(), 0..4),
    )
        .prop_map(
            |(
                min,
                span,
                current,
                status_replicas,
                target,
                behavior,
                requests,
                usages,
                extra_samples,
                external,
            )| World {
                min,
                max: (min + span).max(1),
                current,
                status_replicas,
                target,
                behavior,
                requests,
                usages,
                extra_samples,
                external,
            },
        )
}

fn build(w: &World) -> hpa_core::DecisionInput {
    let mut hpa = Hpa::test()
        .min(w.min)
        .max(w.max)
        .cpu(w.target)
        .external_value("queue", "10");
    if w.behavior {
        hpa = hpa.behavior(json!({"scaleDown": {"stabilizationWindowSeconds": 0}}));
    }
    let pods: Vec<_> = w
        .requests
        .iter()
        .enumerate()
        .map(|(i, r)| pod(&format!("web-{i}"), *r))
        .collect();
    let mut samples: Vec<(String, i64)> = w
        .usages
        .iter()
        .enumerate()
        .filter_map(|(i, u)| u.map(|u| (format!("web-{i}"), u % 1_000_000_000)))
        .collect();
    for i in 0..w.extra_samples {
        samples.push((format!("ghost-{i}"), 10));
    }
    let refs: Vec<(&str, i64)> = samples.iter().map(|(p, v)| (p.as_str(), *v)).collect();
    let external = if w.external.is_empty() {
        Fetched::External(Err(
            "no metrics returned from external metrics API".to_owned()
        ))
    } else {
        let vals: Vec<String> = w.external.iter().map(|v| format!("{v}m")).collect();
        let refs: Vec<&str> = vals.iter().map(String::as_str).collect();
        external_values(&refs)
    };
    input(
        &hpa,
        w.current,
        w.status_replicas,
        pods,
        vec![cpu_samples(&refs), external],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_rescale_always_lands_within_min_and_max(w in world()) {
        let config = DecisionConfig::default();
        let input = build(&w);
        let d = decide(&input, &HpaHistory::default(), &config, t0());
        if let Some(n) = d.scale_to {
            prop_assert!(n >= w.min && n <= w.max, "scale_to {n} outside [{}, {}]", w.min, w.max);
            prop_assert_ne!(n, w.current);
        }
        let o = finish(d, RescaleOutcome::Succeeded, t0());
        let desired = o.status.desired_replicas;
        prop_assert!(
            (desired >= w.min && desired <= w.max) || desired == w.current || desired == 0,
            "desired {desired} for current {} in [{}, {}]", w.current, w.min, w.max
        );
    }

    #[test]
    fn inside_the_tolerance_band_nothing_changes(
        current in 1i32..20,
        target_m in 1i64..1_000_000,
        permille in 900i64..=1100,
        legacy in any::<bool>(),
    ) {
        let value_m = target_m * permille / 1000;
        let ratio = value_m as f64 / target_m as f64;
        prop_assume!((0.9..=1.1).contains(&ratio));
        let mut hpa = Hpa::test().min(1).max(50).pods_avg("qps", &format!("{target_m}m"));
        if !legacy {
            hpa = hpa.behavior(json!({}));
        }
        let pods: Vec<_> = (0..current).map(|i| pod(&format!("web-{i}"), None)).collect();
        let names: Vec<String> = (0..current).map(|i| format!("web-{i}")).collect();
        let vals: Vec<(&str, String)> = names.iter().map(|n| (n.as_str(), format!("{value_m}m"))).collect();
        let refs: Vec<(&str, &str)> = vals.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let i = input(&hpa, current, current, pods, vec![custom_samples(&refs)]);
        let d = decide(&i, &HpaHistory::default(), &DecisionConfig::default(), t0());
        prop_assert_eq!(d.scale_to, None);
        prop_assert_eq!(d.trace.metrics[0].proposal, Some(current));
    }

    #[test]
    fn no_input_panics(w in world(), selector in "[a-z=!, ()]{0,12}", gates in any::<(bool, bool, bool)>()) {
        let mut config = DecisionConfig::default();
        use hpa_core::config::Gate;
        config.feature_gates.force(Gate::HpaScaleToZero, gates.0);
        config.feature_gates.force(Gate::HpaConfigurableTolerance, gates.1);
        config.feature_gates.force(Gate::PodLevelResources, gates.2);
        let mut input = build(&w);
        if selector.len() % 3 == 0 {
            input.scale.selector = selector;
        }
        let _ = plan(&input.hpa, &input.scale, &config);
        let d = decide(&input, &HpaHistory::default(), &config, t0());
        let _ = d.trace.to_string();
        let o = finish(d, RescaleOutcome::Failed("x".to_owned()), t0());
        let _ = serde_json::to_string(&o).unwrap();
    }
}

#[test]
fn extreme_values_do_not_panic() {
    let config = DecisionConfig::default();
    for (req, usage, target) in [
        (Some(0), 0, 1),
        (Some(1), i64::MAX, 1),
        (None, 5, 50),
        (Some(i64::MAX), i64::MAX, i32::MAX),
        (Some(1), 0, i32::MAX),
    ] {
        let hpa = Hpa::test().min(1).max(i32::MAX).cpu(target);
        let i = input(
            &hpa,
            3,
            3,
            vec![pod("web-0", req), pod("web-1", req)],
            vec![cpu_samples(&[
                ("web-0", usage),
                ("web-1", usage),
                ("web-9", usage),
            ])],
        );
        let d = decide(&i, &HpaHistory::default(), &config, t0());
        let _ = finish(d, RescaleOutcome::Succeeded, t0());
    }
    // No pods at all, and more metrics than pods.
    let hpa = Hpa::test()
        .cpu(50)
        .pods_avg("qps", "0")
        .external_value("q", "0")
        .object_value("o", "0");
    let i = input(
        &hpa,
        2,
        0,
        vec![],
        vec![
            cpu_samples(&[]),
            custom_samples(&[]),
            external_values(&[]),
            object_value("0"),
        ],
    );
    let d = decide(&i, &HpaHistory::default(), &config, t0());
    assert_eq!(d.scale_to, None);
    let _ = finish(d, RescaleOutcome::NotNeeded, t0());
}
