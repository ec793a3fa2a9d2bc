//! The empirical R0(t): the probability that an interval of length t, starting anywhere in the
//! observed span, holds no arrival (Medernach, section "Job submittal model": "R0(t) could be
//! estimated by splitting the arrival processes in intervals of duration t and estimating the
//! ratio of intervals with no arrival").
//!
//! Rather than one split into intervals, this averages over *every* start s in
//! [first, last − t]: the window (s, s + t] is empty exactly when s lies in a gap between
//! consecutive arrivals at least t before its end, so
//! R̂0(t) = Σ_gaps max(0, gap − t) / (span − t) — exact for the observed arrivals, no arbitrary
//! phase, O(log n) per t after sorting the gaps.

/// The t values (seconds) at which `trace stats` reports R0: 1 s to 4 weeks.
pub const R0_GRID: [f64; 16] = [
    1.0,
    10.0,
    30.0,
    60.0,
    300.0,
    600.0,
    1800.0,
    3600.0,
    7200.0,
    14_400.0,
    28_800.0,
    43_200.0,
    86_400.0,
    259_200.0,
    604_800.0,
    2_419_200.0,
];

/// Sorted gaps between consecutive arrivals, with suffix sums for O(log n) evaluation.
#[derive(Clone, Debug)]
pub struct EmpiricalR0 {
    gaps: Vec<f64>,
    /// suffix[i] = Σ gaps[i..]
    suffix: Vec<f64>,
    span: f64,
}

impl EmpiricalR0 {
    /// From arrival times (any order). `None` with fewer than two arrivals or a zero span.
    pub fn new(times: &[f64]) -> Option<Self> {
        let mut t = times.to_vec();
        t.sort_by(f64::total_cmp);
        let span = t.last()? - t.first()?;
        if t.len() < 2 || span <= 0.0 {
            return None;
        }
        let mut gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_by(f64::total_cmp);
        let mut suffix = vec![0.0; gaps.len() + 1];
        for i in (0..gaps.len()).rev() {
            suffix[i] = suffix[i + 1] + gaps[i];
        }
        Some(EmpiricalR0 { gaps, suffix, span })
    }

    pub fn span(&self) -> f64 {
        self.span
    }

    /// Arrivals per second over the span (the slope −R0′(0) = μ·P_Login of the model).
    pub fn rate(&self) -> f64 {
        self.gaps.len() as f64 / self.span
    }

    /// R̂0(t) for 0 ≤ t < span; `None` beyond.
    pub fn at(&self, t: f64) -> Option<f64> {
        if !(t >= 0.0 && t < self.span) {
            return None;
        }
        let i = self.gaps.partition_point(|&g| g <= t);
        let count = (self.gaps.len() - i) as f64;
        let empty = self.suffix[i] - count * t;
        Some((empty / (self.span - t)).clamp(0.0, 1.0))
    }

    /// (t, R̂0(t)) on `n` log-spaced points from `from` to a tenth of the span (where enough
    /// disjoint windows remain for the estimate to mean something).
    pub fn curve(&self, from: f64, n: usize) -> Vec<(f64, f64)> {
        let to = self.span / 10.0;
        if to <= from || n < 2 {
            return Vec::new();
        }
        let (a, b) = (from.ln(), to.ln());
        (0..n)
            .filter_map(|k| {
                let t = (a + (b - a) * k as f64 / (n - 1) as f64).exp();
                Some((t, self.at(t)?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // Arrivals at 0, 10, 40: gaps 10 and 30, span 40.
        let r = EmpiricalR0::new(&[40.0, 0.0, 10.0]).unwrap();
        assert_eq!(r.at(0.0), Some(1.0));
        // t = 5: empty starts (10 − 5) + (30 − 5) = 30 out of 35.
        assert_eq!(r.at(5.0), Some(30.0 / 35.0));
        // t = 20: only the second gap: 10 out of 20.
        assert_eq!(r.at(20.0), Some(0.5));
        assert_eq!(r.at(40.0), None);
        assert!((r.rate() - 2.0 / 40.0).abs() < 1e-15);
        assert!(EmpiricalR0::new(&[5.0]).is_none());
    }
}
