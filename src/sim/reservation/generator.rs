//! Synthetic reservation requests: `per_week` requests per week of the simulated period, with
//! starts placed uniformly over it and widths, durations and advance notices drawn from the
//! given distributions (Margo et al., section 5: 15 a week, 8–128 nodes, 4–18 hours). Pure and
//! deterministic: one ChaCha8 stream seeded from the seed passed in.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

use super::ReservationRequest;
use crate::sim::job::Time;
use crate::sim::random::uniform;

/// An integer distribution.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    Fixed(i64),
    /// Every integer of `[min, max]` equally likely.
    Uniform {
        min: i64,
        max: i64,
    },
    /// `ln x` uniform on `[ln min, ln max]`, rounded to an integer (min ≥ 1).
    LogUniform {
        min: i64,
        max: i64,
    },
    /// One of the values, equally likely.
    Choice(Vec<i64>),
}

impl Distribution {
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> i64 {
        match self {
            Distribution::Fixed(v) => *v,
            Distribution::Uniform { min, max } => {
                let span = (max - min) as u64 + 1;
                min + (rng.next_u64() % span) as i64
            }
            Distribution::LogUniform { min, max } => {
                let (lo, hi) = ((*min as f64).ln(), (*max as f64).ln());
                let x = (lo + uniform(rng) * (hi - lo)).exp().round() as i64;
                x.clamp(*min, *max)
            }
            Distribution::Choice(values) => values[(rng.next_u64() % values.len() as u64) as usize],
        }
    }

    /// Smallest and largest value it can produce.
    pub fn bounds(&self) -> (i64, i64) {
        match self {
            Distribution::Fixed(v) => (*v, *v),
            Distribution::Uniform { min, max } | Distribution::LogUniform { min, max } => {
                (*min, *max)
            }
            Distribution::Choice(values) => (
                values.iter().copied().min().unwrap_or(0),
                values.iter().copied().max().unwrap_or(0),
            ),
        }
    }
}

/// Parameters of the synthetic requests. Widths are allocation units, times seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct ReservationGenerator {
    pub per_week: f64,
    pub width: Distribution,
    pub duration: Distribution,
    /// Advance notice: requested start − creation time.
    pub notice: Distribution,
    /// Owners are named `owner-1` … `owner-N`, each request's drawn uniformly.
    pub owners: u32,
}

pub const WEEK: Time = 7 * 86_400;

impl ReservationGenerator {
    /// Requests over the period `[from, to)`: `round(per_week × weeks)` of them, with starts
    /// uniform in the period, sorted by creation time (ids 1, 2, … in that order).
    pub fn generate(&self, from: Time, to: Time, seed: u64) -> Vec<ReservationRequest> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let length = (to - from).max(0);
        let count = (self.per_week * length as f64 / WEEK as f64).round() as u64;
        let mut requests: Vec<ReservationRequest> = (0..count)
            .map(|_| {
                let start = from + (uniform(&mut rng) * length as f64) as Time;
                let width = self.width.sample(&mut rng).max(1) as u64;
                let duration = self.duration.sample(&mut rng).max(1);
                let notice = self.notice.sample(&mut rng).max(0);
                let owner = 1 + rng.next_u64() % u64::from(self.owners.max(1));
                ReservationRequest {
                    id: 0,
                    owner: format!("owner-{owner}"),
                    created: start - notice,
                    start,
                    duration,
                    width,
                    cluster: None,
                }
            })
            .collect();
        requests.sort_by_key(|r| (r.created, r.start));
        for (i, r) in requests.iter_mut().enumerate() {
            r.id = i as u64 + 1;
        }
        requests
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper() -> ReservationGenerator {
        ReservationGenerator {
            per_week: 15.0,
            width: Distribution::Uniform { min: 8, max: 128 },
            duration: Distribution::Uniform {
                min: 4 * 3600,
                max: 18 * 3600,
            },
            notice: Distribution::Uniform {
                min: 0,
                max: 2 * 86_400,
            },
            owners: 5,
        }
    }

    #[test]
    fn a_month_at_fifteen_a_week_within_the_ranges() {
        let month = 30 * 86_400;
        let requests = paper().generate(1000, 1000 + month, 7);
        assert_eq!(requests.len(), (15.0f64 * 30.0 / 7.0).round() as usize);
        for r in &requests {
            assert!((1000..1000 + month).contains(&r.start));
            assert!((8..=128).contains(&r.width));
            assert!((4 * 3600..=18 * 3600).contains(&r.duration));
            assert!(r.start - r.created <= 2 * 86_400 && r.created <= r.start);
        }
        assert!(requests.windows(2).all(|w| w[0].created <= w[1].created));
        assert_eq!(
            requests.iter().map(|r| r.id).collect::<Vec<_>>(),
            (1..=64).collect::<Vec<_>>()
        );
    }

    #[test]
    fn deterministic_per_seed() {
        let g = paper();
        assert_eq!(g.generate(0, 1_000_000, 1), g.generate(0, 1_000_000, 1));
        assert_ne!(g.generate(0, 1_000_000, 1), g.generate(0, 1_000_000, 2));
    }

    #[test]
    fn distributions_stay_in_bounds_and_cover_them() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let d = Distribution::LogUniform { min: 8, max: 128 };
        let xs: Vec<i64> = (0..10_000).map(|_| d.sample(&mut rng)).collect();
        assert!(xs.iter().all(|x| (8..=128).contains(x)));
        // Log-uniform: about half the mass below the geometric mean 32.
        let below = xs.iter().filter(|&&x| x < 32).count() as f64 / xs.len() as f64;
        assert!((below - 0.5).abs() < 0.03, "{below}");
        let c = Distribution::Choice(vec![8, 64]);
        let xs: Vec<i64> = (0..1000).map(|_| c.sample(&mut rng)).collect();
        assert!(xs.contains(&8) && xs.contains(&64) && xs.iter().all(|x| *x == 8 || *x == 64));
    }
}
