//! Round trip (issue 5): arrivals generated from known Login/Logout parameters are fitted back
//! from their empirical R0 curve. With 10^6 arrivals, μ·P_Login is pinned to within sampling
//! noise and the fitted (λ, δ, μ) come back within 5% (λ), 20% (δ) and 15% (μ) — measured
//! worst cases 1%, 12% and 11% — with a sup distance under 0.01: the paper's sup-norm fit of R0
//! identifies the model, not just its mean rate.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use schedlab::analysis::fit_login_model;
use schedlab::sim::synth::{LoginModel, MarkovArrivals};

/// (μ, δ, λ) of Biomed users 1–4 (Medernach, "Biomed simulation results").
const BIOMED: [(f64, f64, f64); 4] = [
    (0.0837, 0.02079, 2.1e-4),
    (0.0620, 0.01188, 1.2e-4),
    (0.0832, 0.02475, 2.5e-4),
    (0.0365, 1.4285e-3, 1.075e-4),
];

#[test]
fn fitting_generated_arrivals_recovers_their_parameters() {
    for (i, &(mu, delta, lambda)) in BIOMED.iter().enumerate() {
        let truth = LoginModel::new(lambda, delta, mu).unwrap();
        let times: Vec<f64> = MarkovArrivals::new(truth, ChaCha8Rng::seed_from_u64(i as u64))
            .take(1_000_000)
            .collect();
        let fit = fit_login_model(&times).unwrap();
        let got = fit.model;
        let rel = |a: f64, b: f64| (a - b).abs() / b;
        eprintln!(
            "user {}: λ {:.3e}/{lambda:.3e} δ {:.3e}/{delta:.3e} μ {:.3e}/{mu:.3e} error {:.4}",
            i + 1,
            got.login_rate,
            got.logout_rate,
            got.submit_rate,
            fit.error
        );
        assert!(fit.error < 0.01, "user {}: sup error {}", i + 1, fit.error);
        assert!(
            rel(got.arrival_rate(), truth.arrival_rate()) < 0.02,
            "user {}",
            i + 1
        );
        assert!(
            rel(got.login_rate, lambda) < 0.05,
            "user {}: λ {}",
            i + 1,
            got.login_rate
        );
        assert!(
            rel(got.logout_rate, delta) < 0.2,
            "user {}: δ {}",
            i + 1,
            got.logout_rate
        );
        assert!(
            rel(got.submit_rate, mu) < 0.15,
            "user {}: μ {}",
            i + 1,
            got.submit_rate
        );
    }
}
