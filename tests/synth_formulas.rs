//! Medernach's formulas checked on simulated samples (issue 5): for each of the four Biomed
//! users of the paper's table "Biomed simulation results", at least 10^6 arrivals from the
//! Login/Logout chain reproduce the mean interarrival (λ+δ)/(λμ), CV² = 1 + 2δμ/(λ+δ)², the
//! geometric number of jobs per login (mean μ/δ) and R0(t). Tolerances are five standard errors,
//! computed from the model itself (see each test), so a wrong formula or a wrong simulation —
//! say λ and δ swapped — fails.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use schedlab::sim::synth::{Event, HyperExponential, LoginModel, MarkovArrivals};

/// (μ, δ, λ) of Biomed users 1–4.
const BIOMED: [(f64, f64, f64); 4] = [
    (0.0837, 0.02079, 2.1e-4),
    (0.0620, 0.01188, 1.2e-4),
    (0.0832, 0.02475, 2.5e-4),
    (0.0365, 1.4285e-3, 1.075e-4),
];

const SAMPLES: usize = 1_000_000;

fn model(i: usize) -> LoginModel {
    let (mu, delta, lambda) = BIOMED[i];
    LoginModel::new(lambda, delta, mu).unwrap()
}

fn arrivals(i: usize, seed: u64) -> Vec<f64> {
    MarkovArrivals::new(model(i), ChaCha8Rng::seed_from_u64(seed))
        .take(SAMPLES + 1)
        .collect()
}

/// k-th raw moment of a two-phase hyper-exponential: k!·(p/m1^k + (1−p)/m2^k).
fn moment(h: &HyperExponential, k: i32) -> f64 {
    let fact = (1..=k).product::<i32>() as f64;
    fact * (h.p / h.m1.powi(k) + (1.0 - h.p) / h.m2.powi(k))
}

#[test]
fn mean_interarrival_and_cv2_match_the_closed_forms() {
    for i in 0..4 {
        let m = model(i);
        let times = arrivals(i, 100 + i as u64);
        let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let second = gaps.iter().map(|g| g * g).sum::<f64>() / n;
        let cv2 = second / (mean * mean) - 1.0;
        // After a submission the user is logged in whatever happened before, so gaps are i.i.d.
        // hyper-exponential: standard errors follow from its moments. Mean: σ/√n. CV² =
        // M2/M1² − 1 by the delta method with the covariance of (X, X²).
        let h = m.to_hyper_exponential();
        let (m1, m2, m3, m4) = (moment(&h, 1), moment(&h, 2), moment(&h, 3), moment(&h, 4));
        let se_mean = ((m2 - m1 * m1) / n).sqrt();
        let (g1, g2) = (-2.0 * m2 / (m1 * m1 * m1), 1.0 / (m1 * m1));
        let var_cv2 =
            (g1 * g1 * (m2 - m1 * m1) + 2.0 * g1 * g2 * (m3 - m1 * m2) + g2 * g2 * (m4 - m2 * m2))
                / n;
        let se_cv2 = var_cv2.sqrt();
        let expected_mean = (m.login_rate + m.logout_rate) / (m.login_rate * m.submit_rate);
        let s = m.login_rate + m.logout_rate;
        let expected_cv2 = 1.0 + 2.0 * m.logout_rate * m.submit_rate / (s * s);
        assert!((m1 - expected_mean).abs() < 1e-9 * expected_mean);
        assert!(
            (mean - expected_mean).abs() < 5.0 * se_mean,
            "user {}: mean {mean} vs {expected_mean} (se {se_mean})",
            i + 1
        );
        assert!(
            (cv2 - expected_cv2).abs() < 5.0 * se_cv2,
            "user {}: CV² {cv2} vs {expected_cv2} (se {se_cv2})",
            i + 1
        );
        // Swapping λ and δ would move the mean by far more than the tolerance.
        let swapped = s / (m.logout_rate * m.submit_rate);
        assert!((mean - swapped).abs() > 50.0 * se_mean);
    }
}

#[test]
fn jobs_per_login_are_geometric_with_mean_mu_over_delta() {
    for i in 0..4 {
        let m = model(i);
        let mut chain = MarkovArrivals::new(m, ChaCha8Rng::seed_from_u64(200 + i as u64));
        // Count whole login periods only: skip to the first login.
        while !matches!(chain.next_event(), Event::Login(_)) {}
        let (mut counts, mut current, mut submits) = (Vec::new(), 0u64, 0usize);
        while submits < SAMPLES || counts.len() < 1000 {
            match chain.next_event() {
                Event::Submit(_) => {
                    current += 1;
                    submits += 1;
                }
                Event::Logout(_) => {
                    counts.push(current);
                    current = 0;
                }
                Event::Login(_) => {}
            }
        }
        let n = counts.len() as f64;
        let mean = counts.iter().sum::<u64>() as f64 / n;
        // P_n = δ/(μ+δ)·(μ/(μ+δ))^n: mean μ/δ, variance (μ/δ)(1 + μ/δ).
        let expected = m.submit_rate / m.logout_rate;
        let se = (expected * (1.0 + expected) / n).sqrt();
        assert!(
            (mean - expected).abs() < 5.0 * se,
            "user {}: {mean} jobs per login vs {expected} (se {se}, {n} logins)",
            i + 1
        );
        // The probability of an empty login period is δ/(μ+δ).
        let empty = counts.iter().filter(|&&c| c == 0).count() as f64 / n;
        let p0 = m.logout_rate / (m.submit_rate + m.logout_rate);
        assert!(
            (empty - p0).abs() < 5.0 * (p0 * (1.0 - p0) / n).sqrt(),
            "user {}",
            i + 1
        );
    }
}

#[test]
fn no_arrival_probability_r0_matches_the_closed_form() {
    for i in 0..4 {
        let m = model(i);
        let times = arrivals(i, 300 + i as u64);
        let horizon = *times.last().unwrap();
        for t in [10.0, 100.0, 1_000.0, 10_000.0] {
            // Disjoint windows [s, s + t) from a random-free grid; batch means over 100 batches
            // give the standard error (windows close together are correlated through the login
            // state).
            let windows = (horizon / t) as usize - 1;
            let mut next = 0;
            let mut empty = vec![0u64; 100];
            let mut total = vec![0u64; 100];
            for w in 0..windows {
                let s = w as f64 * t;
                while times[next] < s {
                    next += 1;
                }
                let b = w * 100 / windows;
                total[b] += 1;
                if times[next] >= s + t {
                    empty[b] += 1;
                }
            }
            let batch: Vec<f64> = (0..100)
                .map(|b| empty[b] as f64 / total[b] as f64)
                .collect();
            let mean = batch.iter().sum::<f64>() / 100.0;
            let var = batch.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 99.0;
            let se = (var / 100.0).sqrt().max(1e-4);
            let expected = m.r0(t);
            assert!(
                (mean - expected).abs() < 5.0 * se,
                "user {} t={t}: R0 {mean} vs {expected} (se {se})",
                i + 1
            );
        }
    }
}
