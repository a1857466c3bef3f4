//! Order statistics for load reports.
//!
//! Percentiles use the nearest-rank method on the sorted samples: p99 of 100
//! samples is the 99th smallest, so a reported p99 is always a value that was
//! actually observed (no interpolation between two syncs).

use serde::{Deserialize, Serialize};

/// p50, p99 and max of a set of samples, in the samples' unit (seconds here).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest sample.
    pub max: f64,
    /// How many samples the summary is over.
    pub count: u64,
}

impl Summary {
    /// Summarises `samples` (any order); all zeros for no samples. NaNs are
    /// dropped.
    pub fn of(samples: &[f64]) -> Self {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| !v.is_nan()).collect();
        if sorted.is_empty() {
            return Self::default();
        }
        sorted.sort_by(f64::total_cmp);
        Self {
            p50: nearest_rank(&sorted, 0.50),
            p99: nearest_rank(&sorted, 0.99),
            max: sorted[sorted.len() - 1],
            count: sorted.len() as u64,
        }
    }
}

/// The nearest-rank percentile of sorted, non-empty samples.
fn nearest_rank(sorted: &[f64], quantile: f64) -> f64 {
    let rank = (quantile * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_observed_values_by_nearest_rank() {
        let samples: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = Summary::of(&samples);
        assert_eq!(s.p50, 50.0);
        assert_eq!(s.p99, 99.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.count, 100);
    }

    #[test]
    fn one_sample_is_every_percentile() {
        let s = Summary::of(&[0.25]);
        assert_eq!((s.p50, s.p99, s.max), (0.25, 0.25, 0.25));
    }

    #[test]
    fn no_samples_give_zeros_and_nans_are_ignored() {
        assert_eq!(Summary::of(&[]), Summary::default());
        assert_eq!(Summary::of(&[f64::NAN, 2.0]).max, 2.0);
    }
}
