//! The order scenarios start in on a real cluster: the longest waits first.
//!
//! On the wall clock a run side by side lasts at least as long as its
//! longest scenario, and longer when that one starts late, behind a queue
//! of short ones (the replay of a traffic series waits some 14 minutes).
//! cucumber starts scenarios in the order the features give them, so on a
//! real cluster the features, and the scenarios in each, are put in order
//! of the time their steps say they wait, longest first. On the simulated
//! cluster time is virtual and the files keep their order.

use std::cmp::Reverse;

use cucumber::gherkin;
use jiff::SignedDuration;

use super::params::parse_duration;

/// What a sync step waits for at most on a real cluster: about one
/// sync period of the controller.
const SYNC_WAIT: SignedDuration = SignedDuration::from_secs(15);

/// The wall-clock time one step says it waits: `When 5m pass`,
/// `stays at 2 replicas for 10m`, or a sync.
fn wait_of(step: &str) -> SignedDuration {
    let step = step.trim();
    let said = step
        .strip_suffix(" passes")
        .or_else(|| step.strip_suffix(" pass"))
        .filter(|d| d.split(' ').count() <= 2)
        .or_else(|| {
            let (head, tail) = step.rsplit_once(" for ")?;
            head.contains(" stays at ").then_some(tail)
        });
    match said.map(parse_duration) {
        Some(Ok(d)) => d,
        _ if step.ends_with("the HPA controller syncs") => SYNC_WAIT,
        _ => SignedDuration::ZERO,
    }
}

/// What some steps wait, together.
fn waits<'a>(steps: impl IntoIterator<Item = &'a gherkin::Step>) -> SignedDuration {
    steps.into_iter().fold(SignedDuration::ZERO, |sum, s| {
        sum.saturating_add(wait_of(&s.value))
    })
}

/// What a background waits before each of its scenarios.
fn background(b: Option<&gherkin::Background>) -> SignedDuration {
    waits(b.into_iter().flat_map(|b| &b.steps))
}

/// The scenarios of every feature, and the features, longest wait first
/// (a stable sort: equal waits keep the files' order).
pub(super) fn order(features: &mut [gherkin::Feature]) {
    for feature in features.iter_mut() {
        let base = background(feature.background.as_ref());
        feature
            .scenarios
            .sort_by_cached_key(|s| Reverse(base.saturating_add(waits(&s.steps))));
        for rule in &mut feature.rules {
            let base = base.saturating_add(background(rule.background.as_ref()));
            rule.scenarios
                .sort_by_cached_key(|s| Reverse(base.saturating_add(waits(&s.steps))));
        }
    }
    features.sort_by_cached_key(|f| Reverse(longest(f)));
}

/// The longest wait of a feature's scenarios.
fn longest(feature: &gherkin::Feature) -> SignedDuration {
    let base = background(feature.background.as_ref());
    let top = feature
        .scenarios
        .iter()
        .map(|s| base.saturating_add(waits(&s.steps)));
    let ruled = feature.rules.iter().flat_map(|r| {
        let base = base.saturating_add(background(r.background.as_ref()));
        r.scenarios
            .iter()
            .map(move |s| base.saturating_add(waits(&s.steps)))
    });
    top.chain(ruled).max().unwrap_or(SignedDuration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feature(path: &str, text: &str) -> gherkin::Feature {
        let mut f = gherkin::Feature::parse(text, gherkin::GherkinEnv::default()).unwrap();
        f.path = Some(path.into());
        f
    }

    #[test]
    fn the_waits_steps_say_are_read_and_quantities_are_not() {
        assert_eq!(wait_of("5m pass"), SignedDuration::from_mins(5));
        assert_eq!(wait_of("1m30s passes"), SignedDuration::from_secs(90));
        assert_eq!(
            wait_of("the deployment \"web\" stays at 2 replicas for 10m"),
            SignedDuration::from_mins(10)
        );
        assert_eq!(wait_of("15 seconds pass"), SignedDuration::from_secs(15));
        assert_eq!(
            wait_of("the deployment \"web\" stays at 2 replicas for 2 minutes"),
            SignedDuration::from_mins(2)
        );
        assert_eq!(wait_of("the HPA controller syncs"), SYNC_WAIT);
        // 900m is a quantity of cpu, not 15 hours.
        assert_eq!(
            wait_of("the pods of \"web\" report \"cpu\" of 900m and 700m"),
            SignedDuration::ZERO
        );
        assert_eq!(
            wait_of("the HPA \"web\" is ready for 5m"),
            SignedDuration::ZERO
        );
    }

    #[test]
    fn the_longest_scenario_starts_first_and_ties_keep_their_order() {
        let mut features = vec![
            feature(
                "a.feature",
                "Feature: a\n  Scenario: short\n    When 15s pass\n  Scenario: none\n    Given a deployment \"w\" with 1 pod\n",
            ),
            feature(
                "b.feature",
                "Feature: b\n  Background:\n    Given 1m passes\n  Scenario: one\n    When the HPA controller syncs\n  Scenario: long\n    Then the deployment \"w\" stays at 1 replica for 10m\n",
            ),
            feature(
                "c.feature",
                "Feature: c\n  Scenario: also short\n    When 15s pass\n",
            ),
        ];
        order(&mut features);
        let names: Vec<Vec<&str>> = features
            .iter()
            .map(|f| f.scenarios.iter().map(|s| s.name.as_str()).collect())
            .collect();
        assert_eq!(
            names,
            [
                vec!["long", "one"],
                vec!["short", "none"],
                vec!["also short"]
            ]
        );
    }
}
