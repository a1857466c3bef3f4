//! Timelines to draw, as text (so the seeds are readable): drawing never
//! panics, and a picture, when there is one, is whole SVG with finite
//! numbers only.
//!
//! The first line is `end tolerance metrics repeat layout`; each further
//! line a sample, `t current ready desired recommendation stabilized min
//! max rescale ratio...`; `---` starts another timeline. Numbers are Rust
//! floats and integers (`inf`, `NaN`, `1e20`); anything else reads as
//! unknown. `repeat N` (up to a week of 15 s syncs) cycles the samples at
//! 15 s apart, to reach the downsampling.
#![no_main]

use hpa_harness::plot::timeline::MetricLabel;
use hpa_harness::plot::{Layout, PlotError, Sample, Timeline, render};
use libfuzzer_sys::fuzz_target;

/// A week of syncs every 15 s.
const MAX_REPEAT: usize = 40_320;

fuzz_target!(|text: &str| {
    let mut lines = text.lines();
    let head: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let float = |i: usize| head.get(i).and_then(|s| s.parse::<f64>().ok());
    let end = float(0).unwrap_or(f64::NAN);
    let tolerance = float(1).unwrap_or(0.1);
    let metrics = head
        .get(2)
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(1)
        .min(64);
    let repeat = head
        .get(3)
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_REPEAT);
    let layout = match head.get(4) {
        Some(&"side") => Layout::SideBySide,
        _ => Layout::Stacked,
    };
    let mut timelines = Vec::new();
    let mut samples = Vec::new();
    for line in lines {
        if line.trim() == "---" {
            timelines.push(timeline(
                std::mem::take(&mut samples),
                end,
                tolerance,
                metrics,
                repeat,
            ));
        } else {
            samples.push(sample(line));
        }
    }
    timelines.push(timeline(samples, end, tolerance, metrics, repeat));
    match render(&timelines, layout) {
        Ok(svg) => {
            assert!(svg.starts_with("<svg"));
            assert!(svg.trim_end().ends_with("</svg>"));
            assert!(
                !svg.contains("NaN") && !svg.contains("inf"),
                "a non-finite number drawn"
            );
        }
        Err(PlotError::Empty) => {}
        Err(e) => panic!("{e}"),
    }
});

fn sample(line: &str) -> Sample {
    let words: Vec<&str> = line.split_whitespace().collect();
    let int = |i: usize| words.get(i).and_then(|s| s.parse::<i32>().ok());
    Sample {
        t: words
            .first()
            .and_then(|s| s.parse().ok())
            .unwrap_or(f64::NAN),
        current: int(1),
        ready: int(2),
        desired: int(3),
        recommendation: int(4),
        stabilized: int(5),
        min: int(6),
        max: int(7),
        rescale: words.get(8) == Some(&"true"),
        ratios: words.iter().skip(9).map(|s| s.parse().ok()).collect(),
        reason: String::new(),
    }
}

fn timeline(
    samples: Vec<Sample>,
    end: f64,
    tolerance: f64,
    metrics: usize,
    repeat: usize,
) -> Timeline {
    let samples = if repeat > 0 && !samples.is_empty() {
        samples
            .iter()
            .cycle()
            .take(repeat)
            .zip(0_u32..)
            .map(|(s, i)| Sample {
                t: f64::from(i) * 15.0,
                ..s.clone()
            })
            .collect()
    } else {
        samples
    };
    Timeline {
        title: "fuzz".to_owned(),
        metrics: (0..metrics)
            .map(|i| MetricLabel {
                name: format!("m{i}"),
                target: "10".to_owned(),
            })
            .collect(),
        samples,
        end,
        tolerance,
    }
}
