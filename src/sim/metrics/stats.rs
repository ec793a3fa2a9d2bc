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

/// A sample kept for its [`Distribution`] in as little memory as is exact: 4 bytes a value
/// while every value is a whole number of 0 ..= 4,294,967,295 (waits and response times in
/// seconds), 8 bytes (f64) from the first value that is not.
#[derive(Clone, Debug)]
pub enum Column {
    Whole(Vec<u32>),
    Float(Vec<f64>),
}

impl Column {
    /// An empty column with room for `n` values.
    pub fn with_capacity(n: usize) -> Column {
        Column::Whole(Vec::with_capacity(n))
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Column::Whole(v) => v.len(),
            Column::Float(v) => v.len(),
        }
    }

    pub fn push(&mut self, value: f64) {
        match self {
            Column::Whole(v) => {
                let whole = value as u32;
                if f64::from(whole) == value && value.is_sign_positive() {
                    v.push(whole);
                } else {
                    let mut floats: Vec<f64> = Vec::with_capacity(v.capacity().max(v.len() + 1));
                    floats.extend(v.iter().map(|&x| f64::from(x)));
                    floats.push(value);
                    *self = Column::Float(floats);
                }
            }
            Column::Float(v) => v.push(value),
        }
    }

    /// The distribution of the values, exactly as [`Distribution::of`] gives it (same order of
    /// summation: ascending).
    pub fn distribution(self) -> Distribution {
        match self {
            Column::Float(mut v) => Distribution::of(&mut v),
            Column::Whole(mut v) => {
                if v.is_empty() {
                    return Distribution::default();
                }
                v.sort_unstable();
                let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
                let rank = |p: f64| {
                    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
                    f64::from(v[rank.clamp(1, v.len()) - 1])
                };
                Distribution {
                    mean: Some(mean),
                    median: Some(rank(50.0)),
                    p95: Some(rank(95.0)),
                }
            }
        }
    }
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

    #[test]
    fn a_column_gives_the_distribution_of_its_values() {
        // Whole numbers stay 4 bytes; the distribution is the one of the f64 values.
        let values: Vec<f64> = (0..1000u32).map(|i| f64::from((i * 7919) % 1013)).collect();
        let mut column = Column::with_capacity(values.len());
        values.iter().for_each(|&v| column.push(v));
        assert!(matches!(column, Column::Whole(_)));
        assert_eq!(column.distribution(), Distribution::of(&mut values.clone()));
        // A fraction, a negative value or one beyond u32 turns the column into f64s.
        for odd in [2.5, -1.0, 5e9, -0.0] {
            let mut column = Column::with_capacity(4);
            let mut all = vec![3.0, 1.0, odd, 2.0];
            all.iter().for_each(|&v| column.push(v));
            assert!(matches!(column, Column::Float(_)), "{odd}");
            assert_eq!(column.len(), 4);
            assert_eq!(column.distribution(), Distribution::of(&mut all));
        }
        assert_eq!(
            Column::with_capacity(0).distribution(),
            Distribution::default()
        );
    }
}
