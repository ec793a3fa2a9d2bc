//! Job sizes: a weighted choice among processor counts, or log-uniform sizes rounded to a power
//! of two with some probability — the usual emphasis on powers of two of parallel workloads
//! (Lublin & Feitelson, "The workload on parallel supercomputers", 2003).

#[derive(Clone, Debug, PartialEq)]
pub enum SizeModel {
    /// Processor counts with their cumulative probabilities (last = 1).
    Weights {
        procs: Vec<u32>,
        cumulative: Vec<f64>,
    },
    /// ln(size) uniform on [ln min, ln max]; rounded to the nearest power of two within
    /// [min, max] with probability `power_of_two`, else to the nearest integer. Build it with
    /// [`SizeModel::log_uniform`] (the logarithms are kept: generation is hot).
    LogUniform {
        min: u32,
        max: u32,
        power_of_two: f64,
        ln_min: f64,
        ln_max: f64,
    },
}

impl SizeModel {
    /// From (processors, weight) pairs: weights ≥ 0, not all 0, processors > 0.
    pub fn weights(pairs: &[(u32, f64)]) -> Option<Self> {
        let total: f64 = pairs.iter().map(|p| p.1).sum();
        if pairs.is_empty() || total <= 0.0 || pairs.iter().any(|p| p.0 == 0 || p.1 < 0.0) {
            return None;
        }
        let mut acc = 0.0;
        let cumulative = pairs
            .iter()
            .map(|p| {
                acc += p.1;
                acc / total
            })
            .collect();
        Some(SizeModel::Weights {
            procs: pairs.iter().map(|p| p.0).collect(),
            cumulative,
        })
    }

    /// Log-uniform sizes on [min, max] (1 ≤ min ≤ max), a power of two with probability
    /// `power_of_two`.
    pub fn log_uniform(min: u32, max: u32, power_of_two: f64) -> Self {
        SizeModel::LogUniform {
            min,
            max,
            power_of_two,
            ln_min: f64::from(min).ln(),
            ln_max: f64::from(max).ln(),
        }
    }

    /// A size from two uniforms in [0, 1).
    pub fn sample(&self, u1: f64, u2: f64) -> u32 {
        match self {
            SizeModel::Weights { procs, cumulative } => {
                let i = cumulative.partition_point(|&c| c <= u1);
                procs[i.min(procs.len() - 1)]
            }
            SizeModel::LogUniform {
                min,
                max,
                power_of_two,
                ln_min,
                ln_max,
            } => {
                let ln = ln_min + u1 * (ln_max - ln_min);
                if u2 < *power_of_two {
                    nearest_power_of_two(ln, *min, *max)
                } else {
                    (ln.exp().round() as u32).clamp(*min, *max)
                }
            }
        }
    }

    /// E[size]: exact for weights; for log-uniform sizes a midpoint rule over 10,000 quantiles
    /// of each branch (deterministic, error far below the sampling noise of any workload).
    pub fn mean(&self) -> f64 {
        match self {
            SizeModel::Weights { procs, cumulative } => {
                let mut prev = 0.0;
                procs
                    .iter()
                    .zip(cumulative)
                    .map(|(&p, &c)| {
                        let w = c - prev;
                        prev = c;
                        w * f64::from(p)
                    })
                    .sum()
            }
            SizeModel::LogUniform { power_of_two, .. } => {
                let n = 10_000;
                let (mut rounded, mut pow2) = (0.0, 0.0);
                for k in 0..n {
                    let u = (k as f64 + 0.5) / n as f64;
                    rounded += f64::from(self.sample(u, 1.0));
                    pow2 += f64::from(self.sample(u, 0.0));
                }
                (power_of_two * pow2 + (1.0 - power_of_two) * rounded) / n as f64
            }
        }
    }
}

/// The power of two nearest in log scale to the size whose natural logarithm is `ln`, within
/// [min, max]; the size rounded if the range holds no power of two.
fn nearest_power_of_two(ln: f64, min: u32, max: u32) -> u32 {
    let k = (ln / std::f64::consts::LN_2).round().clamp(0.0, 31.0) as u32;
    let candidate = 1u32 << k;
    if (min..=max).contains(&candidate) {
        return candidate;
    }
    let first = min.next_power_of_two();
    let last = if max.is_power_of_two() {
        max
    } else {
        max.next_power_of_two() >> 1
    };
    if first <= max && last >= min {
        candidate.clamp(first, last)
    } else {
        (ln.exp().round() as u32).clamp(min, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_chosen_in_proportion() {
        let m = SizeModel::weights(&[(1, 6.0), (4, 3.0), (64, 1.0)]).unwrap();
        assert!((m.mean() - (0.6 + 1.2 + 6.4)).abs() < 1e-12);
        let n = 100_000;
        let ones = (0..n)
            .filter(|k| m.sample((*k as f64 + 0.5) / n as f64, 0.0) == 1)
            .count();
        assert_eq!(ones, 60_000);
        assert!(SizeModel::weights(&[(0, 1.0)]).is_none());
        assert!(SizeModel::weights(&[(2, 0.0)]).is_none());
    }

    #[test]
    fn log_uniform_sizes_favour_powers_of_two() {
        let m = SizeModel::log_uniform(1, 128, 0.8);
        let n = 10_000;
        let mut pow2 = 0;
        for k in 0..n {
            let u1 = (k as f64 * 0.618_033_988_7).fract();
            let u2 = (k as f64 * 0.414_213_562_3).fract();
            let s = m.sample(u1, u2);
            assert!((1..=128).contains(&s));
            pow2 += usize::from(s.is_power_of_two());
        }
        // 80% forced, plus the rounded sizes that happen to be powers of two.
        assert!(pow2 as f64 / n as f64 > 0.8, "{pow2}");
        let near = |x: f64, min, max| nearest_power_of_two(x.ln(), min, max);
        assert_eq!(near(5.0, 1, 128), 4);
        assert_eq!(near(6.0, 1, 128), 8);
        assert_eq!(near(200.0, 1, 100), 64);
        assert_eq!(near(5.0, 5, 7), 5);
    }
}
