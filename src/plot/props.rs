//! Property tests: whatever the timeline, the picture is drawn, in bounded
//! time and size, with finite numbers only.

use std::sync::mpsc;
use std::time::Duration;

use hpa_core::calc::Tolerances;
use proptest::collection::vec;
use proptest::prelude::*;

use super::bound::{self, MAX_SAMPLES};
use super::svg::{Layout, PlotError, render};
use super::timeline::{MetricLabel, Sample, Timeline};

/// An SVG per timeline stays under this (a capped timeline draws about
/// 1 MB at most).
const MAX_BYTES_PER_TIMELINE: usize = 4 << 20;

/// Values that broke or could break the axes, and ordinary ones.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e20),
        Just(-1e20),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        Just(f64::EPSILON),
        0.0..5.0,
        0.0..1e6,
        any::<f64>(),
    ]
}

fn replicas() -> impl Strategy<Value = Option<i32>> {
    prop::option::of(prop_oneof![
        Just(0),
        Just(i32::MAX),
        Just(i32::MIN),
        0..20,
        any::<i32>(),
    ])
}

fn sample() -> impl Strategy<Value = Sample> {
    (
        number(),
        [replicas(), replicas(), replicas(), replicas()],
        [replicas(), replicas(), replicas()],
        vec(prop::option::of(number()), 0..10),
        any::<bool>(),
    )
        .prop_map(
            |(
                t,
                [current, ready, desired, recommendation],
                [stabilized, min, max],
                ratios,
                rescale,
            )| {
                Sample {
                    t,
                    current,
                    ready,
                    desired,
                    recommendation,
                    stabilized,
                    min,
                    max,
                    ratios,
                    rescale,
                    reason: String::new(),
                }
            },
        )
}

/// Labels without `i` or `N`, so that any "inf" or "NaN" in the SVG is a
/// number the picture printed.
fn label() -> impl Strategy<Value = String> {
    "[a-hj-z0-9 /.%-]{0,200}"
}

fn timeline_with(samples: impl Strategy<Value = Vec<Sample>>) -> impl Strategy<Value = Timeline> {
    (
        label(),
        vec((label(), label()), 0..12),
        samples,
        number(),
        (number(), number()),
    )
        .prop_map(|(title, metrics, samples, end, (up, down))| Timeline {
            title,
            metrics: metrics
                .into_iter()
                .map(|(name, target)| MetricLabel { name, target })
                .collect(),
            samples,
            end,
            tolerance: Tolerances {
                scale_up: up,
                scale_down: down,
            },
            notes: Vec::new(),
        })
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![Just(Layout::Stacked), Just(Layout::SideBySide)]
}

/// Renders on a thread of its own: a hang fails the case after a minute
/// instead of stalling the run.
fn render_within_a_minute(timelines: Vec<Timeline>, layout: Layout) -> Result<String, PlotError> {
    let (done, rendered) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(render(&timelines, layout));
    });
    rendered
        .recv_timeout(Duration::from_secs(60))
        .expect("the picture is drawn within a minute")
}

/// What every picture satisfies.
fn assert_sound(svg: &str, timelines: usize) {
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(100)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(!svg.contains("NaN"), "a NaN was printed");
    assert!(!svg.contains("inf"), "an infinity was printed");
    assert!(
        svg.len() <= MAX_BYTES_PER_TIMELINE * timelines,
        "{} bytes",
        svg.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_timelines_draw_a_sound_picture_or_say_there_is_nothing(
        timelines in vec(timeline_with(vec(sample(), 0..40)), 1..4),
        layout in layout(),
    ) {
        let drawable = timelines
            .iter()
            .any(|t| !bound::drawable(t).timeline.samples.is_empty());
        let n = timelines.len();
        match render_within_a_minute(timelines, layout) {
            Ok(svg) => assert_sound(&svg, n),
            Err(PlotError::Empty) => prop_assert!(!drawable, "samples to draw, yet Empty"),
            Err(e) => prop_assert!(false, "{e}"),
        }
    }

    #[test]
    fn a_single_sample_at_zero_replicas_and_an_infinite_ratio_draws(
        t in 0.0..1e6,
        end in number(),
        ratio in prop_oneof![Just(f64::INFINITY), Just(f64::NAN), Just(1e20)],
    ) {
        let timeline = Timeline {
            title: "default/batch".to_owned(),
            metrics: vec![MetricLabel { name: "queue_messages".to_owned(), target: "10".to_owned() }],
            samples: vec![Sample {
                t,
                current: Some(0),
                ready: None,
                desired: Some(3),
                recommendation: Some(3),
                stabilized: Some(3),
                min: Some(0),
                max: Some(5),
                ratios: vec![Some(ratio)],
                rescale: true,
                reason: String::new(),
            }],
            end,
            tolerance: Tolerances::symmetric(0.1),
            notes: Vec::new(),
        };
        let svg = render_within_a_minute(vec![timeline], Layout::Stacked);
        prop_assert!(svg.is_ok(), "{svg:?}");
        assert_sound(&svg.unwrap_or_default(), 1);
    }
}

proptest! {
    // A week of syncs per case: few cases.
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    #[test]
    fn a_week_of_syncs_every_15s_draws_a_bounded_picture(
        pattern in vec(sample(), 1..30),
        metrics in 0..10_usize,
    ) {
        const WEEK: usize = 7 * 24 * 3600 / 15;
        let samples: Vec<Sample> = pattern
            .iter()
            .cycle()
            .take(WEEK)
            .zip(0_u32..)
            .map(|(s, i)| Sample { t: f64::from(i) * 15.0, ..s.clone() })
            .collect();
        let timeline = Timeline {
            title: "a week".to_owned(),
            metrics: vec![MetricLabel { name: "m".to_owned(), target: "1".to_owned() }; metrics],
            samples,
            end: WEEK as f64 * 15.0,
            tolerance: Tolerances::symmetric(0.1),
            notes: Vec::new(),
        };
        prop_assert!(bound::drawable(&timeline).timeline.samples.len() <= MAX_SAMPLES);
        let svg = render_within_a_minute(vec![timeline], Layout::Stacked);
        prop_assert!(svg.is_ok(), "{svg:?}");
        assert_sound(&svg.unwrap_or_default(), 1);
    }
}

#[test]
fn empty_timelines_have_nothing_to_draw() {
    let empty = Timeline {
        title: String::new(),
        metrics: Vec::new(),
        samples: Vec::new(),
        end: f64::NAN,
        tolerance: Tolerances::symmetric(f64::NAN),
        notes: Vec::new(),
    };
    assert!(matches!(
        render(&[empty.clone(), empty], Layout::SideBySide),
        Err(PlotError::Empty)
    ));
}
