//! Mean, standard deviation and coefficient of variation of a sample (population form, as in
//! Medernach's tables: σ = √(Σ(x − x̄)²/n)).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Moments {
    pub n: u64,
    pub mean: f64,
    pub sd: f64,
    /// sd / mean; `None` when the mean is 0.
    pub cv: Option<f64>,
}

impl Moments {
    /// `None` for an empty sample.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Moments> {
        // Welford's update: stable for the long, heavy-tailed samples of traces.
        let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
        for x in values {
            n += 1;
            let d = x - mean;
            mean += d / n as f64;
            m2 += d * (x - mean);
        }
        (n > 0).then(|| {
            let sd = (m2 / n as f64).sqrt();
            Moments {
                n,
                mean,
                sd,
                cv: (mean != 0.0).then(|| sd / mean),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        let m = Moments::of([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((m.n, m.mean, m.sd), (8, 5.0, 2.0));
        assert_eq!(m.cv, Some(0.4));
        assert!(Moments::of([]).is_none());
        assert_eq!(Moments::of([0.0, 0.0]).unwrap().cv, None);
    }
}
