//! Runtimes: Downey's multi-stage log-uniform distribution ("A parallel workload model and its
//! implications for processor allocation", 1997): the CDF is piecewise linear in ln t between
//! given points. Medernach's runtime figures (section "Running time") show the same shape: most
//! Biomed jobs under 15 minutes, a long tail.

use super::markov::ModelError;

/// A multi-stage log-uniform distribution over seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct LogUniformStages {
    /// (ln seconds, cumulative probability), ln seconds strictly increasing.
    points: Vec<(f64, f64)>,
}

impl LogUniformStages {
    /// From CDF points (seconds, cumulative probability): seconds ≥ 1 and strictly increasing,
    /// probabilities non-decreasing from exactly 0 to exactly 1.
    pub fn new(points: &[(f64, f64)]) -> Result<Self, ModelError> {
        let bad = |m: String| Err(ModelError(m));
        if points.len() < 2 {
            return bad("give at least two points [seconds, cumulative probability]".into());
        }
        if points[0].1 != 0.0 || points[points.len() - 1].1 != 1.0 {
            return bad("the first point's probability must be 0 and the last one's 1".into());
        }
        for (i, &(t, p)) in points.iter().enumerate() {
            if !(t.is_finite() && t >= 1.0 && (0.0..=1.0).contains(&p)) {
                return bad(format!(
                    "point {i}: expected seconds ≥ 1 and a probability in [0, 1], found [{t}, {p}]"
                ));
            }
            if i > 0 && (t <= points[i - 1].0 || p < points[i - 1].1) {
                return bad(format!(
                    "point {i}: seconds must increase and probabilities must not decrease"
                ));
            }
        }
        Ok(LogUniformStages {
            points: points.iter().map(|&(t, p)| (t.ln(), p)).collect(),
        })
    }

    /// The inverse CDF at `u` ∈ [0, 1): seconds.
    pub fn sample(&self, u: f64) -> f64 {
        // The segment whose probability range holds u (segments of zero mass are never chosen).
        let i = self
            .points
            .partition_point(|p| p.1 <= u)
            .clamp(1, self.points.len() - 1);
        let ((a, pa), (b, pb)) = (self.points[i - 1], self.points[i]);
        let x = if pb > pa {
            a + (u - pa) / (pb - pa) * (b - a)
        } else {
            b
        };
        x.exp()
    }

    /// P(T ≤ t).
    pub fn cdf(&self, t: f64) -> f64 {
        let x = t.max(f64::MIN_POSITIVE).ln();
        let i = self.points.partition_point(|p| p.0 <= x);
        if i == 0 {
            return 0.0;
        }
        if i == self.points.len() {
            return 1.0;
        }
        let ((a, pa), (b, pb)) = (self.points[i - 1], self.points[i]);
        pa + (x - a) / (b - a) * (pb - pa)
    }

    /// E[min(T, cap)], exactly: a log-uniform segment on [a, b] has density 1/(t ln(b/a)), so
    /// its mean is (b − a)/ln(b/a), and a cap inside it splits the integral.
    pub fn mean_capped(&self, cap: f64) -> f64 {
        self.points
            .windows(2)
            .map(|w| {
                let ((la, pa), (lb, pb)) = (w[0], w[1]);
                let (a, b, mass) = (la.exp(), lb.exp(), pb - pa);
                let span = lb - la;
                if mass == 0.0 {
                    0.0
                } else if cap >= b {
                    mass * (b - a) / span
                } else if cap <= a {
                    mass * cap
                } else {
                    mass * ((cap - a) / span + (lb - cap.ln()) / span * cap)
                }
            })
            .sum()
    }

    /// E[T].
    pub fn mean(&self) -> f64 {
        self.mean_capped(f64::INFINITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stages() -> LogUniformStages {
        LogUniformStages::new(&[(1.0, 0.0), (60.0, 0.5), (3600.0, 0.9), (86_400.0, 1.0)]).unwrap()
    }

    #[test]
    fn quantiles_are_log_linear_between_points() {
        let s = stages();
        assert!((s.sample(0.0) - 1.0).abs() < 1e-9);
        assert!((s.sample(0.5) - 60.0).abs() < 1e-9);
        // Halfway in probability between 60 s and 3600 s is their geometric mean.
        assert!((s.sample(0.7) - (60.0f64 * 3600.0).sqrt()).abs() < 1e-6);
        assert!((s.cdf(60.0) - 0.5).abs() < 1e-12);
        assert!((s.cdf((60.0f64 * 3600.0).sqrt()) - 0.7).abs() < 1e-12);
        assert_eq!((s.cdf(0.5), s.cdf(1e6)), (0.0, 1.0));
    }

    #[test]
    fn exact_mean_matches_a_fine_numeric_integral() {
        // E[min(T, c)] = ∫0^c (1 − F(t)) dt, integrated numerically on a log grid.
        let s = stages();
        for cap in [30.0f64, 600.0, 50_000.0, 1e9] {
            let (mut t, mut total) = (0.0f64, 0.0);
            let top = cap.min(86_400.0);
            let n = 2_000_000;
            let dt = top / n as f64;
            for _ in 0..n {
                total += (1.0 - s.cdf(t + dt / 2.0)) * dt;
                t += dt;
            }
            let exact = s.mean_capped(cap);
            assert!(
                (exact - total).abs() / exact < 1e-4,
                "cap {cap}: {exact} vs {total}"
            );
        }
    }

    #[test]
    fn bad_points_are_refused() {
        assert!(LogUniformStages::new(&[(1.0, 0.0)]).is_err());
        assert!(LogUniformStages::new(&[(1.0, 0.1), (10.0, 1.0)]).is_err());
        assert!(LogUniformStages::new(&[(10.0, 0.0), (10.0, 1.0)]).is_err());
        assert!(
            LogUniformStages::new(&[(1.0, 0.0), (10.0, 0.6), (20.0, 0.5), (30.0, 1.0)]).is_err()
        );
        assert!(LogUniformStages::new(&[(0.5, 0.0), (10.0, 1.0)]).is_err());
    }
}
