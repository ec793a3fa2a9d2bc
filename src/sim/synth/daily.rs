//! A daily cycle: 24 hourly weights (time 0 is midnight) that modulate all of a user's rates,
//! as Medernach suggests for "non-constant parameters" (section "Login model") and as the
//! arrival histograms of his section "Arrival time" show. Implemented as a time change: the
//! model runs in *operational time* with constant rates, mapped to real time through the inverse
//! of the cumulative intensity Λ(t) = ∫ w(hour(s)) ds — which keeps every per-login property
//! of the model while arrivals follow the weights hour by hour.

use super::markov::ModelError;

const HOUR: f64 = 3600.0;
const DAY: f64 = 86_400.0;

#[derive(Clone, Debug, PartialEq)]
pub struct DailyCycle {
    /// Weights normalised to mean 1.
    weights: [f64; 24],
    /// Operational seconds elapsed at the start of each hour (25 entries; the last is a day).
    cumulative: [f64; 25],
}

impl DailyCycle {
    /// From 24 non-negative weights, not all zero.
    pub fn new(weights: &[f64]) -> Result<Self, ModelError> {
        if weights.len() != 24 || weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(ModelError("expected 24 non-negative weights".into()));
        }
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return Err(ModelError("the weights cannot all be zero".into()));
        }
        let mut normalised = [0.0; 24];
        let mut cumulative = [0.0; 25];
        for h in 0..24 {
            normalised[h] = weights[h] * 24.0 / total;
            cumulative[h + 1] = cumulative[h] + normalised[h] * HOUR;
        }
        Ok(DailyCycle {
            weights: normalised,
            cumulative,
        })
    }

    /// Real time at which operational time `tau` is reached (Λ⁻¹(τ)).
    pub fn real_time(&self, tau: f64) -> f64 {
        let days = (tau / DAY).floor();
        let rest = tau - days * DAY;
        // The hour whose operational span holds `rest`; zero-weight hours have an empty span.
        let h = (self.cumulative.partition_point(|&c| c <= rest) - 1).min(23);
        let h = (h..24).find(|&k| self.weights[k] > 0.0).unwrap_or(h);
        let within = (rest - self.cumulative[h]) / self.weights[h].max(f64::MIN_POSITIVE);
        days * DAY + h as f64 * HOUR + within.min(HOUR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_cycle_is_the_identity_and_a_day_maps_to_a_day() {
        let flat = DailyCycle::new(&[1.0; 24]).unwrap();
        for tau in [0.0, 1.0, 5000.5, 86_399.0, 200_000.0] {
            assert!((flat.real_time(tau) - tau).abs() < 1e-6);
        }
        let mut w = [0.0; 24];
        w[9..17].fill(1.0);
        let office = DailyCycle::new(&w).unwrap();
        // The first operational instant of a day is 9:00; the day's operational time fits in
        // 9:00–17:00, three times as fast.
        assert!((office.real_time(0.0) - 9.0 * HOUR).abs() < 1e-6);
        assert!((office.real_time(3.0 * HOUR) - 10.0 * HOUR).abs() < 1e-6);
        assert!((office.real_time(DAY + 3.0 * HOUR) - (DAY + 10.0 * HOUR)).abs() < 1e-6);
        assert!(DailyCycle::new(&[0.0; 24]).is_err());
        assert!(DailyCycle::new(&[1.0; 23]).is_err());
    }
}
