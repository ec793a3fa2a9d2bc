//! Mean, median and 95th percentile of a sample. Percentiles use the nearest-rank method: the
//! p-th percentile of n sorted values is the value of rank ceil(p/100 · n) (so the median is the
//! lower middle value for even n).

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Distribution {
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub p95: Option<f64>,
}

impl Distribution {
    /// Summarizes `values` (reordered in place). All `None` for an empty sample.
    pub fn of(values: &mut [f64]) -> Distribution {
        if values.is_empty() {
            return Distribution::default();
        }
        values.sort_unstable_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        Distribution {
            mean: Some(mean),
            median: Some(nearest_rank(values, 50.0)),
            p95: Some(nearest_rank(values, 95.0)),
        }
    }
}

/// The nearest-rank `p`-th percentile of sorted, non-empty `values`.
pub fn nearest_rank(values: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        let d = Distribution::of(&mut v);
        assert_eq!(d.mean, Some(10.5));
        assert_eq!(d.median, Some(10.0)); // rank ceil(0.5·20) = 10
        assert_eq!(d.p95, Some(19.0)); // rank ceil(0.95·20) = 19
        let d = Distribution::of(&mut [7.0]);
        assert_eq!((d.median, d.p95), (Some(7.0), Some(7.0)));
        assert_eq!(Distribution::of(&mut []), Distribution::default());
    }
}
