//! Requested times from runtimes: users overestimate by a factor, round up to a familiar limit
//! and are capped by the queue's maximum (the common model of Tsafrir et al., "Modeling user
//! runtime estimates", 2005: a few round values dominate requests).

use crate::sim::job::Time;

#[derive(Clone, Debug, PartialEq)]
pub enum EstimateModel {
    /// Requested time = runtime.
    Exact,
    /// runtime × factor (uniform in [factor_min, factor_max]), rounded up to the first of
    /// `round_up` that is not smaller, capped at `max`; a runtime above `max` is cut to it (the
    /// job would be killed at its limit).
    Factor {
        factor_min: f64,
        factor_max: f64,
        round_up: Vec<Time>,
        max: Time,
    },
}

impl EstimateModel {
    /// (runtime, requested time) for a job of `runtime` seconds; `u` ∈ [0, 1) draws the factor.
    pub fn apply(&self, runtime: Time, u: f64) -> (Time, Time) {
        match self {
            EstimateModel::Exact => (runtime, runtime),
            EstimateModel::Factor {
                factor_min,
                factor_max,
                round_up,
                max,
            } => {
                let runtime = runtime.min(*max);
                let factor = factor_min + u * (factor_max - factor_min);
                let raw = ((runtime as f64) * factor).ceil() as Time;
                let rounded = round_up.iter().copied().find(|&l| l >= raw).unwrap_or(raw);
                (runtime, rounded.min(*max).max(runtime).max(1))
            }
        }
    }

    /// The cap runtimes are cut to (infinite for exact estimates).
    pub fn cap(&self) -> f64 {
        match self {
            EstimateModel::Exact => f64::INFINITY,
            EstimateModel::Factor { max, .. } => *max as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_round_up_and_cap_by_hand() {
        let m = EstimateModel::Factor {
            factor_min: 2.0,
            factor_max: 4.0,
            round_up: vec![900, 1800, 3600, 7200],
            max: 7200,
        };
        // 100 s × 2 = 200 → 900.
        assert_eq!(m.apply(100, 0.0), (100, 900));
        // 600 s × 3 = 1800 → 1800 exactly.
        assert_eq!(m.apply(600, 0.5), (600, 1800));
        // 3000 s × 2 = 6000 → 7200.
        assert_eq!(m.apply(3000, 0.0), (3000, 7200));
        // 5000 s × 2 = 10000 → past every limit: capped at 7200.
        assert_eq!(m.apply(5000, 0.0), (5000, 7200));
        // 9000 s runs longer than the cap: cut to 7200 and requested 7200.
        assert_eq!(m.apply(9000, 0.9), (7200, 7200));
        assert_eq!(EstimateModel::Exact.apply(42, 0.3), (42, 42));
    }
}
