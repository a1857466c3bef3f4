//! What the picture may draw of a timeline, so that no input makes drawing
//! hang or grow without bound.
//!
//! Plotters computes axis ticks by looping until they fit: an infinite or
//! NaN end never fits, and a range too narrow to divide never does either
//! (issue 29: a target scaled to zero gives an External `AverageValue`
//! metric the ratio `usage / (target × 0) = ∞`, and the ratio axis became
//! `0..∞`). So every value drawn here is finite, every range has a span,
//! and the number of samples, metrics and label characters is capped.

use hpa_core::calc::Tolerances;

use super::timeline::{MetricLabel, Sample, Timeline};

/// Samples drawn per timeline. A chart is about 900 pixels wide, so more
/// would not show; a week of 15 s syncs (40,320) is merged down to this.
pub const MAX_SAMPLES: usize = 1_500;
/// Metrics drawn per timeline; the legend says how many more there were.
pub const MAX_METRICS: usize = 8;
/// Characters kept of a title or a legend label.
pub const MAX_LABEL_CHARS: usize = 160;
/// The ratio axis ends at most at this multiple of the target: past it,
/// values (an infinite one from zero replicas, say) are drawn at the top
/// edge rather than flattening everything else.
pub const RATIO_AXIS_CAP: f64 = 20.0;
/// Seconds past which a sample is dropped (a century): time counts from the
/// scenario's start, so a later one is a broken input, not a long run.
pub const MAX_SECONDS: f64 = 100.0 * 365.0 * 86_400.0;
/// The span drawn after the last sample when the timeline's own end is
/// missing or earlier: the default sync period, so the last decision shows.
const DEFAULT_PERIOD: f64 = 15.0;

/// A timeline made safe to draw, with what was left out of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawable {
    pub timeline: Timeline,
    /// Metrics past [`MAX_METRICS`], not drawn.
    pub metrics_left_out: usize,
    /// How many syncs each drawn sample stands for (1 unless merged).
    pub merged: usize,
}

/// `timeline` as the picture draws it: samples with a time that is not
/// finite, negative or past [`MAX_SECONDS`] are dropped, the rest sorted by
/// time; NaN ratios are unknown (a gap), negative values and replicas count
/// as 0; the end is finite, after the last sample and at least 1 s; the tolerance is
/// finite and at most [`RATIO_AXIS_CAP`]; labels are cut to
/// [`MAX_LABEL_CHARS`]; at most [`MAX_METRICS`] metrics are kept; and more
/// than [`MAX_SAMPLES`] samples are merged ([`downsample`]).
pub fn drawable(timeline: &Timeline) -> Drawable {
    let metrics_kept = timeline.metrics.len().min(MAX_METRICS);
    let mut samples: Vec<Sample> = timeline
        .samples
        .iter()
        .filter(|s| s.t.is_finite() && (0.0..=MAX_SECONDS).contains(&s.t))
        .map(|s| clean(s, metrics_kept))
        .collect();
    samples.sort_by(|a, b| a.t.total_cmp(&b.t));
    let (samples, merged) = downsample(samples, MAX_SAMPLES);
    let last = samples.last().map_or(0.0, |s| s.t);
    let end = if timeline.end.is_finite() && timeline.end > last {
        timeline.end.min(MAX_SECONDS + DEFAULT_PERIOD)
    } else {
        last + DEFAULT_PERIOD
    }
    // A narrower axis could not be divided into ticks.
    .max(1.0);
    let fraction = |t: f64| {
        if t.is_finite() {
            t.clamp(0.0, RATIO_AXIS_CAP)
        } else {
            0.0
        }
    };
    let tolerance = Tolerances {
        scale_up: fraction(timeline.tolerance.scale_up),
        scale_down: fraction(timeline.tolerance.scale_down),
    };
    Drawable {
        timeline: Timeline {
            title: cut(&timeline.title),
            metrics: timeline.metrics[..metrics_kept]
                .iter()
                .map(|m| MetricLabel {
                    name: cut(&m.name),
                    target: cut(&m.target),
                })
                .collect(),
            samples,
            end,
            tolerance,
            notes: timeline.notes.clone(),
        },
        metrics_left_out: timeline.metrics.len() - metrics_kept,
        merged,
    }
}

/// The largest ratio worth an axis: the largest finite one, at most
/// [`RATIO_AXIS_CAP`].
pub fn ratio_axis_max<'a>(ratios: impl IntoIterator<Item = &'a f64>) -> f64 {
    ratios
        .into_iter()
        .copied()
        .filter(|r| r.is_finite())
        .fold(0.0, f64::max)
        .min(RATIO_AXIS_CAP)
}

fn clean(s: &Sample, metrics: usize) -> Sample {
    let replicas = |r: Option<i32>| r.map(|r| r.max(0));
    Sample {
        t: s.t,
        current: replicas(s.current),
        ready: replicas(s.ready),
        desired: replicas(s.desired),
        recommendation: replicas(s.recommendation),
        stabilized: replicas(s.stabilized),
        min: replicas(s.min),
        max: replicas(s.max),
        ratios: s
            .ratios
            .iter()
            .take(metrics)
            .map(|r| r.filter(|r| !r.is_nan()).map(|r| r.max(0.0)))
            .collect(),
        rescale: s.rescale,
        // Not drawn: only the explain table shows it.
        reason: String::new(),
    }
}

/// Merges runs of consecutive samples so that at most `max` remain, and
/// says how many each stands for. A merged sample starts where its run
/// starts and holds the run's peak of each value (most replicas, highest
/// ratio): a picture of a week is read for where it scaled, and peaks are
/// what scaling answers to. It is a rescale if any of the run was; its mark
/// shows only when the peaks differ.
pub fn downsample(samples: Vec<Sample>, max: usize) -> (Vec<Sample>, usize) {
    let max = max.max(1);
    if samples.len() <= max {
        return (samples, 1);
    }
    let per = samples.len().div_ceil(max);
    let merged = samples.chunks(per).map(peak).collect();
    (merged, per)
}

/// The peak of a run of samples (not empty: `chunks` yields none).
fn peak(run: &[Sample]) -> Sample {
    let most = |f: fn(&Sample) -> Option<i32>| run.iter().filter_map(f).max();
    let width = run.iter().map(|s| s.ratios.len()).max().unwrap_or(0);
    Sample {
        t: run.first().map_or(0.0, |s| s.t),
        current: most(|s| s.current),
        ready: most(|s| s.ready),
        desired: most(|s| s.desired),
        recommendation: most(|s| s.recommendation),
        stabilized: most(|s| s.stabilized),
        min: most(|s| s.min),
        max: most(|s| s.max),
        ratios: (0..width)
            .map(|i| {
                run.iter()
                    .filter_map(|s| s.ratios.get(i).copied().flatten())
                    .reduce(f64::max)
            })
            .collect(),
        rescale: run.iter().any(|s| s.rescale),
        reason: String::new(),
    }
}

/// `text` cut to [`MAX_LABEL_CHARS`], with an ellipsis where cut.
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_LABEL_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, replicas: i32, ratio: f64) -> Sample {
        Sample {
            t,
            current: Some(replicas),
            ready: None,
            desired: Some(replicas),
            recommendation: Some(replicas),
            stabilized: Some(replicas),
            min: Some(0),
            max: Some(5),
            ratios: vec![Some(ratio)],
            rescale: false,
            reason: "why".to_owned(),
        }
    }

    fn timeline(samples: Vec<Sample>, end: f64) -> Timeline {
        Timeline {
            title: "t".to_owned(),
            metrics: vec![MetricLabel {
                name: "queue_messages".to_owned(),
                target: "10".to_owned(),
            }],
            samples,
            end,
            tolerance: Tolerances::symmetric(0.1),
            notes: Vec::new(),
        }
    }

    #[test]
    fn samples_at_no_time_are_dropped_and_the_rest_sorted() {
        let d = drawable(&timeline(
            vec![
                sample(30.0, 1, 1.0),
                sample(f64::NAN, 1, 1.0),
                sample(f64::INFINITY, 1, 1.0),
                sample(-1.0, 1, 1.0),
                sample(1e300, 1, 1.0),
                sample(15.0, 2, 1.0),
            ],
            45.0,
        ));
        let times: Vec<f64> = d.timeline.samples.iter().map(|s| s.t).collect();
        assert_eq!(times, [15.0, 30.0]);
    }

    #[test]
    fn a_nan_ratio_is_a_gap_and_a_negative_one_is_zero() {
        let d = drawable(&timeline(
            vec![sample(0.0, 1, f64::NAN), sample(15.0, 1, -2.0)],
            30.0,
        ));
        assert_eq!(d.timeline.samples[0].ratios, [None]);
        assert_eq!(d.timeline.samples[1].ratios, [Some(0.0)]);
    }

    #[test]
    fn an_end_that_is_not_after_the_last_sample_becomes_one_period_after_it() {
        for end in [f64::NAN, f64::INFINITY, 0.0, 10.0] {
            let d = drawable(&timeline(vec![sample(30.0, 1, 1.0)], end));
            assert_eq!(d.timeline.end, 45.0, "end {end}");
        }
        let d = drawable(&timeline(Vec::new(), f64::NAN));
        assert_eq!(d.timeline.end, DEFAULT_PERIOD);
    }

    #[test]
    fn the_ratio_axis_ignores_infinity_and_stops_at_the_cap() {
        assert_eq!(ratio_axis_max(&[1.5, f64::INFINITY, f64::NAN]), 1.5);
        assert_eq!(ratio_axis_max(&[1e20]), RATIO_AXIS_CAP);
        assert_eq!(ratio_axis_max(&[]), 0.0);
    }

    #[test]
    fn a_week_of_syncs_merges_into_runs_holding_their_peaks() {
        let week: Vec<Sample> = (0..40_320)
            .map(|i| sample(f64::from(i) * 15.0, i % 7, f64::from(i % 5)))
            .collect();
        let d = drawable(&timeline(week, 40_320.0 * 15.0));
        assert!(d.timeline.samples.len() <= MAX_SAMPLES);
        assert_eq!(d.merged, 27);
        let first = &d.timeline.samples[0];
        assert_eq!(
            (first.t, first.desired, first.ratios[0]),
            (0.0, Some(6), Some(4.0))
        );
    }

    #[test]
    fn metrics_past_the_cap_are_counted_not_drawn() {
        let mut t = timeline(vec![sample(0.0, 1, 1.0)], 15.0);
        t.metrics = vec![t.metrics[0].clone(); MAX_METRICS + 3];
        t.samples[0].ratios = vec![Some(1.0); MAX_METRICS + 3];
        let d = drawable(&t);
        assert_eq!(d.timeline.metrics.len(), MAX_METRICS);
        assert_eq!(d.timeline.samples[0].ratios.len(), MAX_METRICS);
        assert_eq!(d.metrics_left_out, 3);
    }

    #[test]
    fn long_labels_are_cut_with_an_ellipsis() {
        let mut t = timeline(Vec::new(), 15.0);
        t.title = "é".repeat(MAX_LABEL_CHARS + 10);
        let title = drawable(&t).timeline.title;
        assert_eq!(title.chars().count(), MAX_LABEL_CHARS + 1);
        assert!(title.ends_with('…'));
    }
}
