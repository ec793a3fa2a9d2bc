//! The spread of a per-user metric across users: what the paper's box plots show (Fig. 6:
//! minimum, lower quartile, median, upper quartile, maximum), plus the mean. Quartiles use the
//! nearest-rank method, like every percentile in docs/metrics.md.

use serde::{Deserialize, Serialize};

use crate::sim::metrics::stats::nearest_rank;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: Option<f64>,
    pub q1: Option<f64>,
    pub median: Option<f64>,
    pub q3: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
}

impl Spread {
    /// Summarizes `values` (reordered in place); all `None` for an empty sample.
    pub fn of(values: &mut [f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        values.sort_unstable_by(f64::total_cmp);
        Spread {
            min: values.first().copied(),
            q1: Some(nearest_rank(values, 25.0)),
            median: Some(nearest_rank(values, 50.0)),
            q3: Some(nearest_rank(values, 75.0)),
            max: values.last().copied(),
            mean: Some(values.iter().sum::<f64>() / values.len() as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quartiles() {
        // Eight values: ranks ceil(0.25·8) = 2, ceil(0.5·8) = 4, ceil(0.75·8) = 6.
        let mut v = [80.0, 10.0, 0.0, 100.0, 20.0, 35.0, 50.0, 5.0];
        let s = Spread::of(&mut v);
        assert_eq!(
            (s.min, s.q1, s.median, s.q3, s.max),
            (Some(0.0), Some(5.0), Some(20.0), Some(50.0), Some(100.0))
        );
        assert_eq!(s.mean, Some(300.0 / 8.0));
        assert_eq!(Spread::of(&mut []), Spread::default());
    }
}
