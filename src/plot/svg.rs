//! Draws timelines as SVG: per HPA, the metrics against their target on
//! top, the replicas below (actual and desired as steps, the raw
//! recommendation and the band the stabilization window held it in, the
//! min/max bounds, and a mark at each rescale).

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::bound::{self, Drawable};
use super::timeline::{NoteKind, Sample, Timeline};

/// Why a picture could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Plotters refused (a degenerate range, a font).
    #[error("drawing the timeline: {0}")]
    Draw(String),
    /// The file cannot be written.
    #[error("{path}")]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Nothing to draw.
    #[error("no decision to draw: the controller did not sync")]
    Empty,
}

/// How several timelines share the picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One under the other (several HPAs or scenarios).
    Stacked,
    /// Next to each other on the same scales (a comparison).
    SideBySide,
}

const WIDTH: u32 = 1200;
/// Room right of each chart for its legend, so that it hides no data.
const LEGEND_WIDTH: u32 = 300;
const HEIGHT: u32 = 640;

const ACTUAL: RGBColor = RGBColor(46, 160, 67);
const DESIRED: RGBColor = RGBColor(31, 90, 200);
const RECOMMENDATION: RGBColor = RGBColor(230, 120, 20);
const BOUNDS: RGBColor = RGBColor(120, 120, 120);
const UP: RGBColor = RGBColor(200, 30, 30);
const DOWN: RGBColor = RGBColor(130, 40, 170);
const OPERATOR: RGBColor = RGBColor(20, 20, 20);
const FALLBACK: RGBColor = RGBColor(220, 170, 0);
const METRIC_COLORS: [RGBColor; 4] = [
    RGBColor(200, 30, 30),
    RGBColor(31, 120, 180),
    RGBColor(150, 80, 20),
    RGBColor(90, 90, 90),
];

/// The SVG text of `timelines` laid out as `layout` says. Whatever their
/// values, drawing takes bounded time and space: each is first made
/// [`bound::drawable`].
pub fn render(timelines: &[Timeline], layout: Layout) -> Result<String, PlotError> {
    let drawables: Vec<Drawable> = timelines.iter().map(bound::drawable).collect();
    if drawables.iter().all(|d| d.timeline.samples.is_empty()) {
        return Err(PlotError::Empty);
    }
    let n = u32::try_from(drawables.len()).unwrap_or(u32::MAX);
    let size = match layout {
        Layout::Stacked => (WIDTH, HEIGHT.saturating_mul(n)),
        Layout::SideBySide => ((WIDTH * 3 / 4).saturating_mul(n), HEIGHT),
    };
    let samples = || drawables.iter().flat_map(|d| d.timeline.samples.iter());
    // Shared scales, so that side-by-side pictures compare at a glance.
    let end = drawables.iter().map(|d| d.timeline.end).fold(1.0, f64::max);
    let replicas_max = samples()
        .flat_map(|s| {
            [
                s.max,
                s.min,
                s.current,
                s.ready,
                s.desired,
                s.recommendation,
                s.stabilized,
            ]
        })
        .flatten()
        .max()
        .unwrap_or(1)
        .max(1);
    let ratio_max =
        bound::ratio_axis_max(samples().flat_map(|s| s.ratios.iter().flatten())).max(1.5);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let areas = match layout {
            Layout::Stacked => root.split_evenly((drawables.len(), 1)),
            Layout::SideBySide => root.split_evenly((1, drawables.len())),
        };
        for (area, drawable) in areas.iter().zip(&drawables) {
            let end = match layout {
                Layout::Stacked => drawable.timeline.end,
                Layout::SideBySide => end,
            };
            let unit = time_unit(end);
            let scales = Scales {
                end: end / unit.0,
                unit,
                replicas_max,
                ratio_max,
            };
            draw_one(area, drawable, &scales).map_err(draw_err)?;
        }
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

/// Writes the SVG of `timelines` to `path`.
pub fn write(
    path: &std::path::Path,
    timelines: &[Timeline],
    layout: Layout,
) -> Result<(), PlotError> {
    let svg = render(timelines, layout)?;
    std::fs::write(path, svg).map_err(|source| PlotError::Write {
        path: path.to_path_buf(),
        source,
    })
}

fn draw_err(e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw(e.to_string())
}

struct Scales {
    /// The end of the time axis, in its unit.
    end: f64,
    /// Seconds per unit of the x axis, and its suffix.
    unit: (f64, &'static str),
    replicas_max: i32,
    ratio_max: f64,
}

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

/// A duration as the axis shows it: `45s`, `5m`, `1h30m`.
pub fn duration_label(secs: f64) -> String {
    let s = secs.round() as i64;
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    match (h, m, sec) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, _) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

/// The unit of the time axis for a picture of `end` seconds: seconds,
/// minutes or hours, so that plotters' round ticks are round durations.
fn time_unit(end: f64) -> (f64, &'static str) {
    if end <= 180.0 {
        (1.0, "s")
    } else if end <= 3.0 * 3600.0 {
        (60.0, "m")
    } else {
        (3600.0, "h")
    }
}

/// A tick label: `90s`, `4m`, `1.5h`.
fn tick_label(x: f64, unit: &str) -> String {
    let text = format!("{x:.2}");
    format!("{}{unit}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// A value held from each sample to the next, split where it is unknown.
fn steps(
    samples: &[Sample],
    end: f64,
    mut value: impl FnMut(&Sample) -> Option<f64>,
) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let next = samples.get(i + 1).map_or(end, |n| n.t);
        match value(s) {
            Some(v) => {
                current.push((s.t, v));
                current.push((next, v));
            }
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn draw_one<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    drawable: &Drawable,
    scales: &Scales,
) -> DrawResult<DB::ErrorType> {
    let area = area.titled(&drawable.timeline.title, ("sans-serif", 22))?;
    let timeline = &drawable.timeline.in_unit(scales.unit.0);
    let (w, h) = area.dim_in_pixel();
    let (top, bottom) = area.split_vertically(h * 2 / 5);
    let (top_chart, top_legend) = top.split_horizontally(w.saturating_sub(LEGEND_WIDTH));
    let (bottom_chart, bottom_legend) = bottom.split_horizontally(w.saturating_sub(LEGEND_WIDTH));
    let mut entries = draw_metrics(&top_chart, timeline, scales)?;
    if drawable.metrics_left_out > 0 {
        entries.push((
            Mark::None,
            format!("{} more metrics, not drawn", drawable.metrics_left_out),
        ));
    }
    legend(&top_legend, &entries)?;
    let mut entries = draw_replicas(&bottom_chart, timeline, scales)?;
    if drawable.merged > 1 {
        entries.push((
            Mark::None,
            format!(
                "each step: the peak of {} syncs (too many to draw one by one)",
                drawable.merged
            ),
        ));
    }
    legend(&bottom_legend, &entries)
}

/// How a legend entry shows its series.
enum Mark {
    Line(RGBAColor, u32),
    Dashed(RGBAColor, u32),
    Fill(RGBAColor),
    Up(RGBAColor),
    Down(RGBAColor),
    /// A note, with no series.
    None,
}

/// Draws `entries` top-down in `area` (beside the chart, so that it hides
/// no data), wrapping long labels.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Mark, String)],
) -> DrawResult<DB::ErrorType> {
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    let mut y = 18;
    for (mark, label) in entries {
        let (x0, x1) = (6, 30);
        match mark {
            Mark::Line(c, w) => {
                area.draw(&PathElement::new([(x0, y), (x1, y)], c.stroke_width(*w)))?
            }
            Mark::Dashed(c, w) => {
                for x in (x0..x1).step_by(8) {
                    area.draw(&PathElement::new(
                        [(x, y), ((x + 4).min(x1), y)],
                        c.stroke_width(*w),
                    ))?;
                }
            }
            Mark::Fill(c) => {
                area.draw(&Rectangle::new([(x0, y - 6), (x1, y + 6)], c.filled()))?;
            }
            Mark::Up(c) => area.draw(&Polygon::new(
                vec![(18, y - 7), (12, y + 4), (24, y + 4)],
                c.filled(),
            ))?,
            Mark::Down(c) => area.draw(&Polygon::new(
                vec![(18, y + 7), (12, y - 4), (24, y - 4)],
                c.filled(),
            ))?,
            Mark::None => {}
        }
        for (i, line) in wrap(label, 38).iter().enumerate() {
            let dy = i32::try_from(i).unwrap_or(0) * 16;
            area.draw(&Text::new(line.clone(), (38, y - 7 + dy), font.clone()))?;
            if i > 0 {
                y += 16;
            }
        }
        y += 22;
    }
    Ok(())
}

/// Splits `text` into lines of at most `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

fn draw_metrics<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    timeline: &Timeline,
    scales: &Scales,
) -> Result<Vec<(Mark, String)>, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut entries = Vec::new();
    let y_max = (scales.ratio_max * 110.0).ceil();
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..scales.end, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_labels(12)
        .x_label_formatter(&|x| tick_label(*x, scales.unit.1))
        .y_label_formatter(&|y| format!("{y:.0}%"))
        .y_desc("% of target")
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let band = timeline.tolerance;
    let (up, down) = (band.scale_up * 100.0, band.scale_down * 100.0);
    if up > 0.0 || down > 0.0 {
        chart.draw_series([Rectangle::new(
            [
                (0.0, (100.0 - down).max(0.0)),
                (scales.end, (100.0 + up).min(y_max)),
            ],
            BLACK.mix(0.07).filled(),
        )])?;
        entries.push((
            Mark::Fill(BLACK.mix(0.12)),
            format!("tolerance {band}: no rescale inside"),
        ));
    }
    chart.draw_series(DashedLineSeries::new(
        [(0.0, 100.0), (scales.end, 100.0)],
        6,
        4,
        BLACK.stroke_width(1),
    ))?;
    entries.push((Mark::Dashed(BLACK.to_rgba(), 1), "target (100%)".to_owned()));
    // Past the axis (an infinite ratio at zero replicas), drawn at its top.
    let mut clipped = false;
    for (i, metric) in timeline.metrics.iter().enumerate() {
        let color = METRIC_COLORS[i % METRIC_COLORS.len()];
        let segments = steps(&timeline.samples, timeline.end, |s| {
            let percent = s.ratios.get(i).copied().flatten()? * 100.0;
            clipped |= percent > y_max;
            Some(percent.min(y_max))
        });
        for seg in segments {
            chart.draw_series(LineSeries::new(seg, color.stroke_width(2)))?;
        }
        entries.push((
            Mark::Line(color.to_rgba(), 2),
            format!("{}, target {}", metric.name, metric.target),
        ));
    }
    if clipped {
        entries.push((
            Mark::None,
            format!("values above {y_max:.0}% are drawn at the top"),
        ));
    }
    Ok(entries)
}

/// A legend's entries, in drawing order.
type Entries = Vec<(Mark, String)>;

/// The replicas chart (time across, replicas up) as it is drawn, and its
/// legend's entries.
struct ReplicasChart<'a, DB: DrawingBackend> {
    chart: ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    entries: Entries,
}

fn draw_replicas<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    timeline: &Timeline,
    scales: &Scales,
) -> Result<Entries, DrawingAreaErrorKind<DB::ErrorType>> {
    let y_max = f64::from(scales.replicas_max) * 1.1 + 1.0;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..scales.end, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_labels(12)
        .x_label_formatter(&|x| tick_label(*x, scales.unit.1))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc("time since start")
        .y_desc("replicas")
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let mut drawn = ReplicasChart {
        chart,
        entries: Vec::new(),
    };
    drawn.held_band(timeline)?;
    drawn.fallback_spans(timeline, (scales.end, y_max))?;
    drawn.bounds(timeline)?;
    drawn.replica_lines(timeline)?;
    drawn.operator_steps(timeline)?;
    drawn.rescales(timeline)?;
    Ok(drawn.entries)
}

impl<DB: DrawingBackend> ReplicasChart<'_, DB> {
    /// The stabilization window's effect: where the decision differs from the
    /// raw recommendation, the gap between them is shaded.
    fn held_band(&mut self, timeline: &Timeline) -> DrawResult<DB::ErrorType> {
        let samples = &timeline.samples;
        let band: Vec<Rectangle<(f64, f64)>> = samples
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let (r, st) = (s.recommendation?, s.stabilized?);
                (r != st).then(|| {
                    let next = samples.get(i + 1).map_or(timeline.end, |n| n.t);
                    Rectangle::new(
                        [(s.t, f64::from(r.min(st))), (next, f64::from(r.max(st)))],
                        RECOMMENDATION.mix(0.18).filled(),
                    )
                })
            })
            .collect();
        self.shade(
            band,
            Mark::Fill(RECOMMENDATION.mix(0.25)),
            "held by the stabilization window",
        )
    }

    /// The spans where KEDA's fallback held the replicas, shaded the chart's
    /// full height (`(x_end, y_max)`).
    fn fallback_spans(
        &mut self,
        timeline: &Timeline,
        (x_end, y_max): (f64, f64),
    ) -> DrawResult<DB::ErrorType> {
        let spans: Vec<Rectangle<(f64, f64)>> = timeline
            .notes
            .iter()
            .filter(|n| n.kind == NoteKind::Fallback && n.to > n.from)
            .map(|n| {
                Rectangle::new(
                    [(n.from, 0.0), (n.to.min(x_end), y_max)],
                    FALLBACK.mix(0.15).filled(),
                )
            })
            .collect();
        self.shade(
            spans,
            Mark::Fill(FALLBACK.mix(0.3)),
            "KEDA fallback in force",
        )
    }

    /// Shades `areas`, with a legend entry when there is any.
    fn shade(
        &mut self,
        areas: Vec<Rectangle<(f64, f64)>>,
        mark: Mark,
        label: &str,
    ) -> DrawResult<DB::ErrorType> {
        if !areas.is_empty() {
            self.chart.draw_series(areas)?;
            self.entries.push((mark, label.to_owned()));
        }
        Ok(())
    }

    /// `minReplicas` and `maxReplicas`, dashed.
    fn bounds(&mut self, timeline: &Timeline) -> DrawResult<DB::ErrorType> {
        let mut bounds = false;
        for bound in [|s: &Sample| s.max, |s: &Sample| s.min] {
            for seg in steps(&timeline.samples, timeline.end, |s| bound(s).map(f64::from)) {
                self.chart
                    .draw_series(DashedLineSeries::new(seg, 8, 5, BOUNDS.stroke_width(1)))?;
                bounds = true;
            }
        }
        if bounds {
            self.entries.push((
                Mark::Dashed(BOUNDS.to_rgba(), 1),
                "minReplicas / maxReplicas".to_owned(),
            ));
        }
        Ok(())
    }

    /// The actual replicas, the recommendation before stabilization and the
    /// desired replicas, as steps.
    fn replica_lines(&mut self, timeline: &Timeline) -> DrawResult<DB::ErrorType> {
        let (samples, end) = (&timeline.samples, timeline.end);
        for seg in steps(samples, end, |s| s.actual().map(f64::from)) {
            self.chart
                .draw_series(LineSeries::new(seg, ACTUAL.mix(0.8).stroke_width(5)))?;
        }
        let actual = if samples.iter().any(|s| s.ready.is_some()) {
            "actual replicas (ready pods at each sync)"
        } else {
            "actual replicas (the target at each sync)"
        };
        self.entries
            .push((Mark::Line(ACTUAL.mix(0.8), 5), actual.to_owned()));
        let mut recommended = false;
        for seg in steps(samples, end, |s| s.recommendation.map(f64::from)) {
            self.chart.draw_series(DashedLineSeries::new(
                seg,
                4,
                3,
                RECOMMENDATION.stroke_width(2),
            ))?;
            recommended = true;
        }
        if recommended {
            self.entries.push((
                Mark::Dashed(RECOMMENDATION.to_rgba(), 2),
                "recommendation (before stabilization)".to_owned(),
            ));
        }
        for seg in steps(samples, end, |s| s.desired.map(f64::from)) {
            self.chart
                .draw_series(LineSeries::new(seg, DESIRED.stroke_width(2)))?;
        }
        self.entries.push((
            Mark::Line(DESIRED.to_rgba(), 2),
            "desired replicas".to_owned(),
        ));
        Ok(())
    }

    /// KEDA's operator steps (0 <-> its minimum), as diamonds.
    fn operator_steps(&mut self, timeline: &Timeline) -> DrawResult<DB::ErrorType> {
        let steps_of_operator: Vec<(f64, f64)> = timeline
            .notes
            .iter()
            .filter(|n| n.kind == NoteKind::OperatorStep)
            .filter_map(|n| Some((n.from, f64::from(n.replicas?))))
            .collect();
        if !steps_of_operator.is_empty() {
            self.chart
                .draw_series(steps_of_operator.into_iter().map(|c| {
                    EmptyElement::at(c)
                        + Polygon::new(vec![(0, -7), (7, 0), (0, 7), (-7, 0)], OPERATOR.filled())
                }))?;
            self.entries.push((
                Mark::Line(OPERATOR.to_rgba(), 6),
                "KEDA operator step (0 <-> minimum)".to_owned(),
            ));
        }
        Ok(())
    }

    /// A triangle at each rescale event: up, or down.
    fn rescales(&mut self, timeline: &Timeline) -> DrawResult<DB::ErrorType> {
        let marks = |up: bool| {
            timeline
                .samples
                .iter()
                .filter(move |s| s.rescale)
                .filter_map(move |s| {
                    let to = s.desired?;
                    let from = s.current?;
                    // A merged run may end where it began: no direction.
                    (to != from && up == (to > from)).then_some((s.t, f64::from(to)))
                })
                .collect::<Vec<_>>()
        };
        let ups = marks(true);
        if !ups.is_empty() {
            self.chart.draw_series(ups.into_iter().map(|c| {
                EmptyElement::at(c) + Polygon::new(vec![(0, -7), (-6, 4), (6, 4)], UP.filled())
            }))?;
            self.entries.push((
                Mark::Up(UP.to_rgba()),
                "scale up (rescale event)".to_owned(),
            ));
        }
        let downs = marks(false);
        if !downs.is_empty() {
            self.chart.draw_series(downs.into_iter().map(|c| {
                EmptyElement::at(c) + Polygon::new(vec![(0, 7), (-6, -4), (6, -4)], DOWN.filled())
            }))?;
            self.entries.push((
                Mark::Down(DOWN.to_rgba()),
                "scale down (rescale event)".to_owned(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::timeline::MetricLabel;
    use hpa_core::calc::Tolerances;

    fn sample(t: f64, current: i32, desired: i32, rec: i32) -> Sample {
        Sample {
            t,
            current: Some(current),
            ready: None,
            desired: Some(desired),
            recommendation: Some(rec),
            stabilized: Some(desired),
            min: Some(1),
            max: Some(10),
            ratios: vec![Some(f64::from(rec) / f64::from(current))],
            rescale: desired != current,
            reason: String::new(),
        }
    }

    fn timeline() -> Timeline {
        Timeline {
            title: "default/web".to_owned(),
            metrics: vec![MetricLabel {
                name: "cpu".to_owned(),
                target: "50% utilization".to_owned(),
            }],
            samples: vec![
                sample(0.0, 1, 4, 5),
                sample(15.0, 4, 5, 5),
                sample(30.0, 5, 5, 1),
                sample(45.0, 5, 1, 1),
            ],
            end: 60.0,
            tolerance: Tolerances::symmetric(0.1),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_picture_has_a_legend_with_units_and_marks_each_rescale() {
        let svg = render(&[timeline()], Layout::Stacked).unwrap();
        for text in [
            "% of target",
            "replicas",
            "time since start",
            "cpu, target 50% utilization",
            "target (100%)",
            "actual replicas",
            "desired replicas",
            "recommendation (before stabilization)",
            "held by the stabilization window",
            "minReplicas / maxReplicas",
            "scale up (rescale event)",
            "scale down (rescale event)",
            "default/web",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    /// Issue 29: scaling up from zero, an External AverageValue metric's
    /// ratio is `usage / (target × 0)`; the axis ran to infinity and its
    /// ticks never ended.
    #[test]
    fn an_infinite_ratio_at_zero_replicas_is_drawn_at_the_top_of_a_finite_axis() {
        let mut t = timeline();
        t.samples = vec![sample(0.0, 2, 0, 0), sample(15.0, 0, 3, 3)];
        t.samples[0].ratios = vec![Some(0.0)];
        t.samples[1].ratios = vec![Some(f64::INFINITY)];
        t.end = 30.0;
        let svg = render(&[t], Layout::Stacked).unwrap();
        assert!(svg.contains("values above 165% are drawn at the top"));
        assert!(svg.contains("scale up (rescale event)"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn side_by_side_pictures_are_twice_as_wide() {
        let one = render(&[timeline()], Layout::SideBySide).unwrap();
        let two = render(&[timeline(), timeline()], Layout::SideBySide).unwrap();
        assert!(one.contains("width=\"900\""), "{}", &one[..200]);
        assert!(two.contains("width=\"1800\""), "{}", &two[..200]);
    }

    #[test]
    fn nothing_to_draw_is_an_error() {
        assert!(matches!(
            render(&[], Layout::Stacked),
            Err(PlotError::Empty)
        ));
    }

    #[test]
    fn steps_hold_each_value_until_the_next_sample_and_break_on_gaps() {
        let mut samples = timeline().samples;
        samples[2].desired = None;
        let segs = steps(&samples, 60.0, |s| s.desired.map(f64::from));
        assert_eq!(
            segs,
            vec![
                vec![(0.0, 4.0), (15.0, 4.0), (15.0, 5.0), (30.0, 5.0)],
                vec![(45.0, 1.0), (60.0, 1.0)],
            ]
        );
    }

    #[test]
    fn the_time_axis_counts_in_a_unit_that_fits_the_span() {
        assert_eq!(time_unit(120.0), (1.0, "s"));
        assert_eq!(time_unit(855.0), (60.0, "m"));
        assert_eq!(time_unit(86_400.0), (3600.0, "h"));
        assert_eq!(tick_label(2.0, "m"), "2m");
        assert_eq!(tick_label(1.5, "h"), "1.5h");
    }

    #[test]
    fn long_legend_labels_wrap_at_spaces() {
        assert_eq!(
            wrap("cpu resource utilization (percentage of request)", 20),
            ["cpu resource", "utilization", "(percentage of", "request)"]
        );
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(duration_label(45.0), "45s");
        assert_eq!(duration_label(300.0), "5m");
        assert_eq!(duration_label(90.0), "1m30s");
        assert_eq!(duration_label(5400.0), "1h30m");
    }
}
