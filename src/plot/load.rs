//! The load report's picture: four charts of a sweep (reconcile latency,
//! sync interval, CPU and API requests per sync) against HPAs or workers,
//! with kube-controller-manager's figures as dashed reference lines.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingAreaErrorKind, DrawingBackend};

use crate::load::report::{LoadReport, ReportError};

/// Which parameter a sweep's plot puts on the x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotAxis {
    /// Number of HPAs.
    Hpas,
    /// Number of workers.
    Workers,
}

/// kube-controller-manager's HPA controller as measured on a real
/// kube-apiserver v1.36.2 (600 HPAs, the same fake metrics server; issue 16
/// and docs/load-report.md): CPU milliseconds per sync, low and high.
pub const UPSTREAM_CPU_MS_PER_SYNC: (f64, f64) = (0.46, 0.65);

/// Upstream's API requests per sync in steady state: a scale GET and one
/// metrics list.
pub const UPSTREAM_REQUESTS_PER_SYNC: f64 = 2.0;

/// A whole number with thousands separators, as axis labels read best:
/// 100, 1,000, 10,000 (not 1e4 or 10000.0).
pub fn thousands(x: f64) -> String {
    let n = x.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// The legend name of one line: "1 worker", "5 workers", "1,000 HPAs".
fn series_label(key: u64, axis: PlotAxis) -> String {
    let (one, many) = match axis {
        PlotAxis::Hpas => ("worker", "workers"),
        PlotAxis::Workers => ("HPA", "HPAs"),
    };
    format!(
        "{} {}",
        thousands(key as f64),
        if key == 1 { one } else { many }
    )
}

/// One chart of the plot: title, y unit, what it draws per run, and
/// upstream's figures as horizontal reference lines (label, value).
struct Panel {
    title: &'static str,
    y_label: &'static str,
    pick: fn(&LoadReport) -> f64,
    references: Vec<(String, f64)>,
}

impl PlotAxis {
    /// A run's place on the x axis.
    fn x(self, r: &LoadReport) -> f64 {
        match self {
            Self::Hpas => r.hpas as f64,
            Self::Workers => r.workers as f64,
        }
    }

    /// The line a run belongs to: the other parameter's value.
    fn series(self, r: &LoadReport) -> u64 {
        match self {
            Self::Hpas => r.workers,
            Self::Workers => r.hpas,
        }
    }

    /// The x axis's name.
    fn label(self) -> &'static str {
        match self {
            Self::Hpas => "HPAs",
            Self::Workers => "workers",
        }
    }
}

/// The runs of a sweep as the charts draw them: one line per value of the
/// other parameter, each sorted along the x axis, and the x range.
struct Sweep<'a> {
    axis: PlotAxis,
    lines: BTreeMap<u64, Vec<&'a LoadReport>>,
    x_min: f64,
    x_max: f64,
}

impl<'a> Sweep<'a> {
    fn new(reports: &'a [LoadReport], axis: PlotAxis) -> Self {
        let mut lines: BTreeMap<u64, Vec<&LoadReport>> = BTreeMap::new();
        for r in reports {
            lines.entry(axis.series(r)).or_default().push(r);
        }
        for line in lines.values_mut() {
            line.sort_by(|a, b| axis.x(a).total_cmp(&axis.x(b)));
        }
        let xs = || reports.iter().map(|r| axis.x(r));
        Self {
            axis,
            lines,
            x_min: xs().fold(f64::INFINITY, f64::min).max(1.0) / 1.2,
            x_max: xs().fold(1.0_f64, f64::max) * 1.2,
        }
    }
}

/// The four charts: reconcile latency p99, sync interval p99 (beside the
/// sync period), CPU per sync and API requests per sync (beside upstream's
/// measured figures).
fn panels(reports: &[LoadReport]) -> [Panel; 4] {
    let (cpu_low, cpu_high) = UPSTREAM_CPU_MS_PER_SYNC;
    [
        Panel {
            title: "Reconcile latency p99",
            y_label: "milliseconds",
            pick: |r| r.reconcile_latency_seconds.p99 * 1000.0,
            references: Vec::new(),
        },
        Panel {
            title: "Interval between two syncs of one HPA, p99",
            y_label: "seconds",
            pick: |r| r.sync_interval_seconds.p99,
            references: reports
                .first()
                .map(|r| vec![("sync period".to_string(), r.sync_period_seconds)])
                .unwrap_or_default(),
        },
        Panel {
            title: "CPU per sync (checker's replay left out)",
            y_label: "milliseconds",
            pick: |r| r.cpu_ms_per_sync,
            references: vec![
                (format!("kube-controller-manager, {cpu_low} ms"), cpu_low),
                (format!("kube-controller-manager, {cpu_high} ms"), cpu_high),
            ],
        },
        Panel {
            title: "API requests per sync",
            y_label: "requests",
            pick: |r| r.api_requests_per_sync,
            references: vec![(
                format!("kube-controller-manager, {UPSTREAM_REQUESTS_PER_SYNC}"),
                UPSTREAM_REQUESTS_PER_SYNC,
            )],
        },
    ]
}

/// Draws four charts against HPAs or workers, one line per value of the
/// other parameter, as SVG: reconcile latency p99, sync interval p99, CPU
/// per sync and API requests per sync, the last two beside upstream's
/// measured figures.
pub fn write_plot(path: &Path, reports: &[LoadReport], axis: PlotAxis) -> Result<(), ReportError> {
    use plotters::prelude::*;

    let plot_err = |e: &dyn std::fmt::Display| ReportError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let sweep = Sweep::new(reports, axis);
    let root = SVGBackend::new(path, (1400, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(&e))?;
    let areas = root.split_evenly((2, 2));
    for (area, panel) in areas.iter().zip(&panels(reports)) {
        draw_panel(area, panel, reports, &sweep).map_err(|e| plot_err(&e))?;
    }
    root.present().map_err(|e| plot_err(&e))?;
    Ok(())
}

/// One chart: upstream's references dashed, then a line of points per
/// value of the other parameter, on a logarithmic x axis.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    reports: &[LoadReport],
    sweep: &Sweep<'_>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    use plotters::prelude::*;

    let colors = [&BLUE, &RED, &GREEN, &MAGENTA, &BLACK, &CYAN];
    let grey = RGBColor(110, 110, 110);
    let (x_min, x_max) = (sweep.x_min, sweep.x_max);
    let y_max = reports
        .iter()
        .map(panel.pick)
        .chain(panel.references.iter().map(|(_, v)| *v))
        .fold(1e-3_f64, f64::max)
        * 1.25;
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(panel.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60);
    // Both HPAs (100 to 10,000) and workers (1 to 20) span orders of
    // magnitude, so the x axis is logarithmic either way.
    let mut chart = builder.build_cartesian_2d((x_min..x_max).log_scale(), 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc(sweep.axis.label())
        .y_desc(panel.y_label)
        .x_label_formatter(&|x| thousands(*x))
        .draw()?;
    for (label, value) in &panel.references {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x_min, *value), (x_max, *value)],
                6,
                4,
                grey.stroke_width(2),
            ))?
            .label(label.clone())
            // Dashed in the legend as on the chart.
            .legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (7, 0)], grey.stroke_width(2))
                    + PathElement::new(vec![(13, 0), (20, 0)], grey.stroke_width(2))
            });
    }
    for (i, (key, line)) in sweep.lines.iter().enumerate() {
        let color = colors[i % colors.len()];
        let points: Vec<(f64, f64)> = line
            .iter()
            .map(|r| (sweep.axis.x(r), (panel.pick)(r)))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color))?
            .label(series_label(*key, sweep.axis))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::report::sample as report;

    #[test]
    fn axis_labels_have_thousands_separators() {
        assert_eq!(thousands(100.0), "100");
        assert_eq!(thousands(1000.0), "1,000");
        assert_eq!(thousands(10000.0), "10,000");
        assert_eq!(thousands(100000.0), "100,000");
        assert_eq!(series_label(1, PlotAxis::Hpas), "1 worker");
        assert_eq!(series_label(20, PlotAxis::Hpas), "20 workers");
        assert_eq!(series_label(1000, PlotAxis::Workers), "1,000 HPAs");
    }

    #[test]
    fn plot_is_an_svg_with_both_charts() {
        let dir = std::env::temp_dir().join(format!("hpa-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sweep.svg");
        let reports = [
            report(100, 1),
            report(1000, 1),
            report(100, 5),
            report(1000, 5),
        ];
        write_plot(&path, &reports, PlotAxis::Hpas).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("Reconcile latency p99"));
        assert!(svg.contains("5 workers"));
        assert!(
            svg.contains("1 worker<") || svg.contains("1 worker\n"),
            "singular"
        );
        assert!(svg.contains("CPU per sync"));
        assert!(svg.contains("API requests per sync"));
        assert!(svg.contains("kube-controller-manager, 0.46 ms"));
        // Axis labels as people write them: 1,000, not 1000.0 or 1e3.
        assert!(svg.contains("1,000"));
        assert!(!svg.contains("1000.0"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
