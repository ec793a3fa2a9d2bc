//! `make bench`: reservation throttle accounting (issue 6). Feeds 10k, 100k and 1M requests —
//! starts uniform over a year, 8–128 nodes × 4–18 h, 50 owners — through the paper's throttles
//! (node-seconds cap per sliding 7 days, plus a per-owner count per 7 days), timing check and
//! commit per request. O(log n) accounting shows as a per-request time that grows by a small
//! constant per tenfold n; the brute-force check it replaces is O(n) per request. Each run
//! checks its answer against the brute force on the 10k set.

use std::time::Instant;

use schedlab::sim::reservation::{
    ReservationRequest, ThrottleState, Throttles, brute_force_peak, throttle_cap, unit_seconds,
};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// SplitMix64, enough for benchmark inputs.
struct Mix(u64);
impl Mix {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (x ^ (x >> 31)) % n
    }
}

fn requests(n: usize) -> Vec<ReservationRequest> {
    let mut rng = Mix(42);
    let year = 365 * 86_400;
    (0..n)
        .map(|i| {
            let start = rng.next(year) as i64;
            ReservationRequest {
                id: i as u64 + 1,
                owner: format!("owner-{}", rng.next(50)),
                created: start,
                start,
                duration: 4 * 3600 + rng.next(14 * 3600) as i64,
                width: 8 + rng.next(121),
                cluster: None,
            }
        })
        .collect()
}

fn throttles(n: usize) -> Throttles {
    // Scale the cap with the request density so that a steady fraction is granted.
    let scale = (n as u64 / 10_000).max(1);
    Throttles {
        unit_seconds: Some(throttle_cap(7 * 86_400, 256 * 12 * 3600 * 10 * scale)),
        per_owner: Some(throttle_cap(7 * 86_400, 4 * scale)),
        ..Throttles::default()
    }
}

fn run(requests: &[ReservationRequest], throttles: &Throttles) -> Vec<bool> {
    let mut state = ThrottleState::new(throttles.clone());
    requests
        .iter()
        .map(|r| {
            let ok = state.check_window(r, r.start).is_ok();
            if ok {
                state.commit(r, r.start);
            }
            ok
        })
        .collect()
}

/// The straightforward alternative: granted starts in a sorted vector; a check scans the
/// items within ±W of the start (two pointers over the windows ending at each), O(k) for k
/// items nearby, and an insertion shifts the vector, O(n).
fn run_linear(requests: &[ReservationRequest], throttles: &Throttles) -> Vec<bool> {
    let cap = throttles.unit_seconds.unwrap();
    let w = cap.window;
    let mut items: Vec<(i64, u64)> = Vec::new();
    requests
        .iter()
        .map(|r| {
            let s = r.start;
            let lo = items.partition_point(|x| x.0 <= s - w);
            let hi = items.partition_point(|x| x.0 < s + w);
            let near = &items[lo..hi];
            let weight = unit_seconds(r);
            // Windows (p − W, p] for p = s and every item p in [s, s + W).
            let ends = std::iter::once(s).chain(near.iter().map(|x| x.0).filter(|&p| p >= s));
            let mut peak = 0;
            let (mut a, mut b, mut sum) = (0usize, 0usize, 0u64);
            for p in ends {
                while b < near.len() && near[b].0 <= p {
                    sum += near[b].1;
                    b += 1;
                }
                while a < b && near[a].0 <= p - w {
                    sum -= near[a].1;
                    a += 1;
                }
                peak = peak.max(sum);
            }
            let ok = peak + weight <= cap.max;
            if ok {
                let at = items.partition_point(|x| x.0 <= s);
                items.insert(at, (s, weight));
            }
            ok
        })
        .collect()
}

fn main() {
    println!("## Reservation throttle accounting (one thread, median of 5)\n");
    println!(
        "| requests | granted | median s | ns per request | linear scan ns per request | ratio |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in [10_000, 100_000, 1_000_000] {
        let reqs = requests(n);
        let t = throttles(n);
        let mut times = Vec::new();
        let mut granted = Vec::new();
        for _ in 0..5 {
            let clock = Instant::now();
            granted = run(&reqs, &t);
            times.push(clock.elapsed().as_secs_f64());
        }
        if n == 10_000 {
            // Check: the granted set respects both caps by brute force.
            let kept: Vec<&ReservationRequest> = reqs
                .iter()
                .zip(&granted)
                .filter(|(_, g)| **g)
                .map(|(r, _)| r)
                .collect();
            let items: Vec<(i64, u64)> = kept.iter().map(|r| (r.start, unit_seconds(r))).collect();
            let cap = t.unit_seconds.unwrap();
            assert!(brute_force_peak(&items, cap.window) <= cap.max);
        }
        let count = granted.iter().filter(|g| **g).count();
        assert!(
            count > 0 && count < n,
            "the caps should bind on some requests"
        );
        let m = median(times);
        // The linear baseline on the node-seconds cap alone (the per-owner cap off on both).
        let cap_only = Throttles {
            per_owner: None,
            ..t.clone()
        };
        let expected = run(&reqs, &cap_only);
        let mut linear_times = Vec::new();
        for _ in 0..3 {
            let clock = Instant::now();
            let got = run_linear(&reqs, &cap_only);
            linear_times.push(clock.elapsed().as_secs_f64());
            assert_eq!(got, expected, "the two accountings disagree");
        }
        let mut tree_times = Vec::new();
        for _ in 0..3 {
            let clock = Instant::now();
            run(&reqs, &cap_only);
            tree_times.push(clock.elapsed().as_secs_f64());
        }
        let (lin, tree) = (median(linear_times), median(tree_times));
        println!(
            "| {n} | {count} | {m:.3} | {:.0} | {:.0} | {:.1} |",
            m * 1e9 / n as f64,
            lin * 1e9 / n as f64,
            lin / tree
        );
    }
}
