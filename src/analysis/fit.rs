//! Fitting the Login/Logout model to a user's arrivals (Medernach, section "Simulation and
//! validation"). As in the paper: the mean submission rate μ·P_Login = −R0′(0) is pinned to
//! the observed rate (jobs / span), the two remaining parameters are searched, and the norm is
//! the largest difference between the model's and the empirical R0 curves (a Kolmogorov–Smirnov
//! style sup norm). The empirical curve is R̂0 on 40 log-spaced points from 1 s to a tenth of
//! the span ([`super::EmpiricalR0`]); its average over every start makes the paper's smoothing
//! step unnecessary.
//!
//! Search space: P_Login ∈ (0, 1) and δ > 0 (then μ = rate / P_Login and λ = δ·P/(1 − P)),
//! explored on a 40 × 40 grid of logit P × ln δ, then refined by Nelder–Mead from the three best
//! grid points. Deterministic; about 10⁵ model evaluations.

use super::r0::EmpiricalR0;
use crate::sim::synth::LoginModel;

/// A fitted model and how well it fits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    pub model: LoginModel,
    /// max_t |R0_model(t) − R̂0(t)| over the fitted curve.
    pub error: f64,
    /// Points of the empirical curve used.
    pub points: usize,
}

const P_RANGE: (f64, f64) = (-9.2, 9.2); // logit P: P from 1e-4 to 1 − 1e-4
const DELTA_RANGE: (f64, f64) = (-23.0, 2.0); // ln δ: δ from 1e-10 to 7 per second

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn model_at(rate: f64, x: f64, y: f64) -> LoginModel {
    let p = logistic(x.clamp(P_RANGE.0, P_RANGE.1));
    let delta = y.clamp(DELTA_RANGE.0, DELTA_RANGE.1).exp();
    LoginModel {
        login_rate: delta * p / (1.0 - p),
        logout_rate: delta,
        submit_rate: rate / p,
    }
}

fn sup_error(model: &LoginModel, curve: &[(f64, f64)]) -> f64 {
    curve
        .iter()
        .map(|&(t, r)| (model.r0(t) - r).abs())
        .fold(0.0, f64::max)
}

/// Fits the model to `times` (arrival times in seconds). `None` with too few arrivals or a
/// span too short for a curve (under 10 s).
pub fn fit_login_model(times: &[f64]) -> Option<Fit> {
    let empirical = EmpiricalR0::new(times)?;
    fit_r0_curve(empirical.rate(), &empirical.curve(1.0, 40))
}

/// Fits the model to an R0 curve `(t, R0(t))` with the mean submission rate μ·P_Login pinned
/// to `rate`. `None` with fewer than 5 points or a rate that is not positive.
pub fn fit_r0_curve(rate: f64, curve: &[(f64, f64)]) -> Option<Fit> {
    if curve.len() < 5 || !(rate.is_finite() && rate > 0.0) {
        return None;
    }
    let objective = |v: [f64; 2]| sup_error(&model_at(rate, v[0], v[1]), curve);
    let n = 40;
    let mut grid: Vec<(f64, [f64; 2])> = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            let x = P_RANGE.0 + (P_RANGE.1 - P_RANGE.0) * i as f64 / (n - 1) as f64;
            let y = DELTA_RANGE.0 + (DELTA_RANGE.1 - DELTA_RANGE.0) * j as f64 / (n - 1) as f64;
            grid.push((objective([x, y]), [x, y]));
        }
    }
    grid.sort_by(|a, b| a.0.total_cmp(&b.0));
    let step = [
        (P_RANGE.1 - P_RANGE.0) / (n - 1) as f64,
        (DELTA_RANGE.1 - DELTA_RANGE.0) / (n - 1) as f64,
    ];
    let (error, best) = grid
        .iter()
        .take(3)
        .map(|&(_, start)| nelder_mead(&objective, start, step, 400))
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    Some(Fit {
        model: model_at(rate, best[0], best[1]),
        error,
        points: curve.len(),
    })
}

/// Nelder–Mead minimisation in two dimensions (standard coefficients: reflection 1, expansion
/// 2, contraction ½, shrink ½) from `start` with an initial simplex of `step`.
fn nelder_mead(
    f: &dyn Fn([f64; 2]) -> f64,
    start: [f64; 2],
    step: [f64; 2],
    iterations: usize,
) -> (f64, [f64; 2]) {
    let mut simplex: Vec<([f64; 2], f64)> = [
        start,
        [start[0] + step[0], start[1]],
        [start[0], start[1] + step[1]],
    ]
    .into_iter()
    .map(|p| (p, f(p)))
    .collect();
    let lerp =
        |a: [f64; 2], b: [f64; 2], t: f64| [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
    for _ in 0..iterations {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        if (simplex[2].1 - simplex[0].1).abs() < 1e-12 {
            break;
        }
        let centroid = lerp(simplex[0].0, simplex[1].0, 0.5);
        let worst = simplex[2];
        let reflected = lerp(worst.0, centroid, 2.0);
        let fr = f(reflected);
        if fr < simplex[0].1 {
            let expanded = lerp(worst.0, centroid, 3.0);
            let fe = f(expanded);
            simplex[2] = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < simplex[1].1 {
            simplex[2] = (reflected, fr);
        } else {
            let contracted = lerp(worst.0, centroid, 0.5);
            let fc = f(contracted);
            if fc < worst.1 {
                simplex[2] = (contracted, fc);
            } else {
                let best = simplex[0].0;
                for vertex in simplex.iter_mut().skip(1) {
                    let p = lerp(best, vertex.0, 0.5);
                    *vertex = (p, f(p));
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    (simplex[0].1, simplex[0].0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nelder_mead_finds_a_quadratic_minimum() {
        let f = |v: [f64; 2]| (v[0] - 1.5).powi(2) + 3.0 * (v[1] + 0.5).powi(2);
        let (value, at) = nelder_mead(&f, [0.0, 0.0], [1.0, 1.0], 500);
        assert!(value < 1e-10 && (at[0] - 1.5).abs() < 1e-4 && (at[1] + 0.5).abs() < 1e-4);
    }

    #[test]
    fn a_poisson_stream_fits_as_one() {
        // Regular arrivals every 10 s are not Poisson, but arrivals at exponential gaps are:
        // the fitted CV² must be close to 1.
        let mut t = 0.0;
        let mut x: u64 = 12345;
        let times: Vec<f64> = (0..20_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let u = ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
                t += -u.ln() * 100.0;
                t
            })
            .collect();
        let fit = fit_login_model(&times).unwrap();
        assert!(fit.error < 0.02, "{}", fit.error);
        assert!(fit.model.interarrival_cv2() < 1.2, "{:?}", fit.model);
        assert!((fit.model.arrival_rate() - 0.01).abs() < 0.001);
    }

    #[test]
    fn an_exact_model_curve_gives_its_parameters_back_every_time() {
        // Noise-free R0 curves of the four Biomed users (Medernach's table), 60 log-spaced
        // points from 1 s to 10^6 s: the fit recovers λ, δ and μ within 1%, identically on
        // a second run.
        for (mu, delta, lambda) in [
            (0.0837, 0.02079, 2.1e-4),
            (0.0620, 0.01188, 1.2e-4),
            (0.0832, 0.02475, 2.5e-4),
            (0.0365, 1.4285e-3, 1.075e-4),
        ] {
            let truth = LoginModel::new(lambda, delta, mu).unwrap();
            let curve: Vec<(f64, f64)> = (0..60)
                .map(|k| {
                    let t = 10f64.powf(6.0 * k as f64 / 59.0);
                    (t, truth.r0(t))
                })
                .collect();
            let fit = fit_r0_curve(truth.arrival_rate(), &curve).unwrap();
            let got = fit.model;
            for (a, b) in [
                (got.login_rate, lambda),
                (got.logout_rate, delta),
                (got.submit_rate, mu),
            ] {
                assert!((a - b).abs() / b < 0.01, "{got:?} vs {truth:?}");
            }
            assert!(fit.error < 1e-4);
            assert_eq!(fit_r0_curve(truth.arrival_rate(), &curve), Some(fit));
        }
    }
}
