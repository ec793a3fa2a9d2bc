//! The Login/Logout Markov-modulated Poisson arrival model of Medernach (2005), section "Model"
//! and "Model characteristics": a user alternates between *Logout* (leaves at rate λ, the login
//! rate) and *Login* (leaves at rate δ, the logout rate) and, while logged in, submits jobs as a
//! Poisson process of rate μ. Its interarrival law is a two-phase hyper-exponential (p, m1, m2);
//! [`LoginModel::to_hyper_exponential`] and [`HyperExponential::to_login_model`] are the paper's
//! conversions both ways.

use std::fmt;

/// Parameters of one user's Login/Logout model, in events per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoginModel {
    /// λ: rate of leaving *Logout* (1/λ is the mean logged-out time).
    pub login_rate: f64,
    /// δ: rate of leaving *Login* (1/δ is the mean logged-in time).
    pub logout_rate: f64,
    /// μ: job submission rate while logged in.
    pub submit_rate: f64,
}

/// A two-phase hyper-exponential law: survival `p·e^(−m1·t) + (1−p)·e^(−m2·t)`, with
/// `m1 ≥ m2 > 0` (phase 1 is the fast one) and `p ∈ [0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyperExponential {
    pub p: f64,
    pub m1: f64,
    pub m2: f64,
}

/// Why a set of parameters does not describe a model that submits jobs.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelError(pub String);

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelError {}

fn check_rate(name: &str, value: f64, positive: bool) -> Result<(), ModelError> {
    let ok = value.is_finite() && if positive { value > 0.0 } else { value >= 0.0 };
    if ok {
        Ok(())
    } else {
        let expected = if positive { "> 0" } else { ">= 0" };
        Err(ModelError(format!(
            "{name} must be a finite rate {expected} per second, got {value}"
        )))
    }
}

impl LoginModel {
    /// Validates the rates: λ > 0 and μ > 0 (otherwise no job is ever submitted, R0 ≡ 1),
    /// δ ≥ 0 (δ = 0 is a Poisson process of rate μ after the first login).
    pub fn new(login_rate: f64, logout_rate: f64, submit_rate: f64) -> Result<Self, ModelError> {
        check_rate("login rate (lambda)", login_rate, true)?;
        check_rate("logout rate (delta)", logout_rate, false)?;
        check_rate("submit rate (mu)", submit_rate, true)?;
        Ok(LoginModel {
            login_rate,
            logout_rate,
            submit_rate,
        })
    }

    /// P_Login = λ / (λ + δ): the stationary probability of being logged in.
    pub fn p_login(&self) -> f64 {
        self.login_rate / (self.login_rate + self.logout_rate)
    }

    /// Mean submission rate μ·P_Login (jobs per second); also −R0′(0).
    pub fn arrival_rate(&self) -> f64 {
        self.submit_rate * self.p_login()
    }

    /// Mean interarrival time Ã = (λ + δ) / (λμ).
    pub fn mean_interarrival(&self) -> f64 {
        (self.login_rate + self.logout_rate) / (self.login_rate * self.submit_rate)
    }

    /// Squared coefficient of variation of the interarrival time, CV² = 1 + 2δμ / (λ + δ)².
    pub fn interarrival_cv2(&self) -> f64 {
        let s = self.login_rate + self.logout_rate;
        1.0 + 2.0 * self.logout_rate * self.submit_rate / (s * s)
    }

    /// Mean number of jobs per login period, μ/δ (the count is geometric,
    /// P_n = δ/(μ+δ)·(μ/(μ+δ))^n). Infinite when δ = 0.
    pub fn mean_jobs_per_login(&self) -> f64 {
        self.submit_rate / self.logout_rate
    }

    /// The exponents m1 ≥ m2 > 0: roots of x² − (λ+δ+μ)x + λμ = 0. The smaller root is taken
    /// as λμ/m1, which avoids the cancellation of `(s − √D)/2` when λμ is tiny.
    pub fn exponents(&self) -> (f64, f64) {
        let s = self.login_rate + self.logout_rate + self.submit_rate;
        let product = self.login_rate * self.submit_rate;
        let discriminant = (s * s - 4.0 * product).max(0.0);
        let m1 = (s + discriminant.sqrt()) / 2.0;
        (m1, product / m1)
    }

    /// R0(t): the probability that no job is submitted in an interval of length `t` starting
    /// at an arbitrary (stationary) time — the paper's closed form
    /// `m0·(e^(−m1 t) − e^(−m2 t))/(m1 − m2) + (m1 e^(−m2 t) − m2 e^(−m1 t))/(m1 − m2)` with
    /// m0 = μ·P_Login, and its limit `e^(−m t)(1 + m t − m0 t)` when m1 = m2 = m.
    pub fn r0(&self, t: f64) -> f64 {
        two_phase_survival(self.arrival_rate(), self.exponents(), t)
    }

    /// A(t): the probability that the next job comes more than `t` after a submission (the
    /// interarrival survival function; same form as R0 with m0 replaced by μ).
    pub fn interarrival_survival(&self, t: f64) -> f64 {
        two_phase_survival(self.submit_rate, self.exponents(), t)
    }

    /// The equivalent hyper-exponential interarrival law: p = (μ − m2)/(m1 − m2).
    pub fn to_hyper_exponential(&self) -> HyperExponential {
        let (m1, m2) = self.exponents();
        let p = if m1 > m2 {
            ((self.submit_rate - m2) / (m1 - m2)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        HyperExponential { p, m1, m2 }
    }
}

impl HyperExponential {
    /// Validates p ∈ [0, 1] and m1, m2 > 0, and orders the phases so that m1 ≥ m2.
    pub fn new(p: f64, m1: f64, m2: f64) -> Result<Self, ModelError> {
        if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
            return Err(ModelError(format!("p must be in [0, 1], got {p}")));
        }
        check_rate("m1", m1, true)?;
        check_rate("m2", m2, true)?;
        Ok(if m1 >= m2 {
            HyperExponential { p, m1, m2 }
        } else {
            HyperExponential {
                p: 1.0 - p,
                m1: m2,
                m2: m1,
            }
        })
    }

    /// Mean p/m1 + (1−p)/m2.
    pub fn mean(&self) -> f64 {
        self.p / self.m1 + (1.0 - self.p) / self.m2
    }

    /// Survival function p·e^(−m1 t) + (1−p)·e^(−m2 t).
    pub fn survival(&self, t: f64) -> f64 {
        self.p * (-self.m1 * t).exp() + (1.0 - self.p) * (-self.m2 * t).exp()
    }

    /// The paper's inverse conversion: μ = p·m1 + (1−p)·m2, λ = m1·m2/μ, δ = m1 + m2 − μ − λ.
    /// δ ≥ 0 always holds mathematically (μ lies between m2 and m1); rounding is clamped.
    pub fn to_login_model(&self) -> LoginModel {
        let mu = self.p * self.m1 + (1.0 - self.p) * self.m2;
        let lambda = self.m1 * self.m2 / mu;
        let delta = (self.m1 + self.m2 - mu - lambda).max(0.0);
        LoginModel {
            login_rate: lambda,
            logout_rate: delta,
            submit_rate: mu,
        }
    }
}

/// `c·(e^(−m1 t) − e^(−m2 t))/(m1 − m2) + (m1 e^(−m2 t) − m2 e^(−m1 t))/(m1 − m2)`, the common
/// form of R0 (c = m0) and A (c = μ), with its confluent limit.
fn two_phase_survival(c: f64, (m1, m2): (f64, f64), t: f64) -> f64 {
    if t <= 0.0 {
        return 1.0;
    }
    let (e1, e2) = ((-m1 * t).exp(), (-m2 * t).exp());
    let gap = m1 - m2;
    if gap <= 1e-9 * m1 {
        let m = 0.5 * (m1 + m2);
        return (-m * t).exp() * (1.0 + m * t - c * t);
    }
    let value = (c * (e1 - e2) + m1 * e2 - m2 * e1) / gap;
    value.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four Biomed users of the paper's table "Biomed simulation results" (μ, δ, λ).
    const BIOMED: [(f64, f64, f64); 4] = [
        (0.0837, 0.02079, 2.1e-4),
        (0.0620, 0.01188, 1.2e-4),
        (0.0832, 0.02475, 2.5e-4),
        (0.0365, 1.4285e-3, 1.075e-4),
    ];

    fn biomed() -> impl Iterator<Item = LoginModel> {
        BIOMED
            .iter()
            .map(|&(mu, delta, lambda)| LoginModel::new(lambda, delta, mu).unwrap())
    }

    #[test]
    fn conversions_round_trip_for_the_biomed_users() {
        for model in biomed() {
            let h = model.to_hyper_exponential();
            assert!((0.0..=1.0).contains(&h.p));
            let back = h.to_login_model();
            for (a, b) in [
                (model.login_rate, back.login_rate),
                (model.logout_rate, back.logout_rate),
                (model.submit_rate, back.submit_rate),
            ] {
                assert!(
                    (a - b).abs() <= 1e-9 * a.max(1e-12),
                    "{model:?} -> {back:?}"
                );
            }
            // Same mean from either side.
            let rel = (h.mean() - model.mean_interarrival()).abs() / model.mean_interarrival();
            assert!(rel < 1e-9, "{rel}");
        }
    }

    #[test]
    fn hyper_exponential_survival_is_the_interarrival_survival() {
        for model in biomed() {
            let h = model.to_hyper_exponential();
            for t in [0.0, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5] {
                let (a, b) = (h.survival(t), model.interarrival_survival(t));
                assert!((a - b).abs() < 1e-9, "t={t}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn r0_has_the_slopes_the_paper_derives() {
        // R0'(0) = −μ·P_Login, R0''(0)/R0'(0) = −μ (section "Model characteristics"), checked
        // by finite differences.
        for model in biomed() {
            let h = 1e-3;
            let d1 = (model.r0(h) - 1.0) / h;
            let rel = (d1 + model.arrival_rate()).abs() / model.arrival_rate();
            assert!(rel < 1e-3, "R0'(0) {d1} vs {}", -model.arrival_rate());
            let h = 0.01;
            let d2 = (model.r0(2.0 * h) - 2.0 * model.r0(h) + 1.0) / (h * h);
            let d1 = (-3.0 + 4.0 * model.r0(h) - model.r0(2.0 * h)) / (2.0 * h);
            let ratio = d2 / d1;
            assert!(
                (ratio + model.submit_rate).abs() / model.submit_rate < 0.01,
                "{ratio}"
            );
        }
    }

    #[test]
    fn poisson_limit_and_confluent_roots() {
        // δ = 0: R0(t) = e^(−μt) after login.
        let poisson = LoginModel::new(0.5, 0.0, 0.01).unwrap();
        for t in [1.0, 50.0, 300.0] {
            assert!((poisson.r0(t) - (-0.01f64 * t).exp()).abs() < 1e-12);
        }
        // δ = 0 and λ = μ: a double root; the limit form must agree with a nearby model.
        let double = LoginModel::new(0.01, 0.0, 0.01).unwrap();
        let near = LoginModel::new(0.01 * (1.0 + 1e-6), 0.0, 0.01).unwrap();
        for t in [1.0, 100.0, 1000.0] {
            assert!((double.r0(t) - near.r0(t)).abs() < 1e-6, "{t}");
            assert!((double.r0(t) - (-0.01f64 * t).exp()).abs() < 1e-9);
        }
    }

    #[test]
    fn invalid_rates_are_refused() {
        assert!(LoginModel::new(0.0, 0.1, 0.1).is_err());
        assert!(LoginModel::new(0.1, -1.0, 0.1).is_err());
        assert!(LoginModel::new(0.1, 0.1, f64::NAN).is_err());
        assert!(HyperExponential::new(1.5, 0.1, 0.1).is_err());
        let swapped = HyperExponential::new(0.3, 0.01, 0.1).unwrap();
        assert_eq!((swapped.p, swapped.m1, swapped.m2), (0.7, 0.1, 0.01));
    }
}
