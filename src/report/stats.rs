//! Replicate statistics for the report: the mean of a configuration's replicas with its 95 %
//! confidence interval (Student's t), and Welch's interval for the difference of two means —
//! what the findings call "beyond" or "within replicate noise".

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (two-sided 95 %).
pub fn t975(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1.0)).map_or(f64::NAN, |t| t.inverse_cdf(0.975))
}

/// A mean over replicas.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub n: usize,
    /// Sample variance (n − 1 in the denominator); `None` with one value.
    pub variance: Option<f64>,
}

impl Estimate {
    pub fn of(values: &[f64]) -> Option<Estimate> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let variance = (n > 1)
            .then(|| values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64);
        Some(Estimate { mean, n, variance })
    }

    /// Half-width of the 95 % confidence interval of the mean; `None` with one value or when
    /// the replicas agree exactly (a deterministic configuration: nothing to estimate).
    pub fn half_width(&self) -> Option<f64> {
        let v = self.variance.filter(|v| *v > 0.0)?;
        Some(t975((self.n - 1) as f64) * (v / self.n as f64).sqrt())
    }

    /// The 95 % interval (mean ± half-width), if any.
    pub fn interval(&self) -> Option<(f64, f64)> {
        self.half_width().map(|h| (self.mean - h, self.mean + h))
    }

    pub fn scaled(&self, k: f64) -> Estimate {
        Estimate {
            mean: self.mean * k,
            n: self.n,
            variance: self.variance.map(|v| v * k * k),
        }
    }
}

/// Welch's 95 % interval for mean(b) − mean(a); `None` unless both have replicas that vary.
pub fn difference_interval(a: &Estimate, b: &Estimate) -> Option<(f64, f64)> {
    let (va, vb) = (a.variance?, b.variance?);
    let (qa, qb) = (va / a.n as f64, vb / b.n as f64);
    let se2 = qa + qb;
    if se2 <= 0.0 {
        return None;
    }
    let df = se2 * se2 / (qa * qa / (a.n - 1) as f64 + qb * qb / (b.n - 1) as f64);
    let d = b.mean - a.mean;
    let h = t975(df) * se2.sqrt();
    Some((d - h, d + h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // {10, 12}: mean 11, s² = 2, half-width t(1) · √(2/2) = 12.706.
        let a = Estimate::of(&[10.0, 12.0]).unwrap();
        assert_eq!(a.mean, 11.0);
        assert_eq!(a.variance, Some(2.0));
        assert!((a.half_width().unwrap() - 12.7062).abs() < 1e-3);
        // Welch with {4, 6}: d = −6, se = √2, df = 2, t = 4.3027: −6 ± 6.085.
        let b = Estimate::of(&[4.0, 6.0]).unwrap();
        let (lo, hi) = difference_interval(&a, &b).unwrap();
        assert!(
            (lo + 12.085).abs() < 1e-3 && (hi - 0.085).abs() < 1e-3,
            "{lo} {hi}"
        );
        // Identical replicas: no interval.
        assert_eq!(Estimate::of(&[3.0, 3.0]).unwrap().half_width(), None);
        assert_eq!(Estimate::of(&[3.0]).unwrap().interval(), None);
    }
}
