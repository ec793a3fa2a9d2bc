//! `make bench`: synthetic workload generation (issue 5; target ≥ 5 M jobs/s on one thread).
//! 50 users with the Biomed parameter sets of Medernach's table (cycled), Downey runtimes,
//! estimates rounded to common limits and log-uniform power-of-two sizes; 2 M jobs per run,
//! median of 7 runs. Each run checks its answer: the job count, submission order, and the same
//! workload on every repetition.

use std::time::Instant;

use schedlab::sim::synth::{
    EstimateModel, Length, LogUniformStages, LoginModel, SizeModel, SyntheticSpec, UserSpec,
    generate,
};

const BIOMED: [(f64, f64, f64); 4] = [
    (0.0837, 0.02079, 2.1e-4),
    (0.0620, 0.01188, 1.2e-4),
    (0.0832, 0.02475, 2.5e-4),
    (0.0365, 1.4285e-3, 1.075e-4),
];

fn spec(jobs: u64) -> SyntheticSpec {
    let users = (0..50)
        .map(|i| {
            let (mu, delta, lambda) = BIOMED[i % 4];
            UserSpec {
                name: format!("user-{i}"),
                count: 1,
                model: LoginModel::new(lambda, delta, mu).expect("valid rates"),
                daily: None,
                runtime: LogUniformStages::new(&[
                    (1.0, 0.0),
                    (60.0, 0.3),
                    (900.0, 0.7),
                    (14_400.0, 0.95),
                    (172_800.0, 1.0),
                ])
                .expect("valid points"),
                estimate: EstimateModel::Factor {
                    factor_min: 1.0,
                    factor_max: 5.0,
                    round_up: vec![900, 1800, 3600, 7200, 14_400, 43_200, 86_400, 172_800],
                    max: 172_800,
                },
                size: SizeModel::log_uniform(1, 128, 0.75),
                memory_kb: 0,
            }
        })
        .collect();
    SyntheticSpec {
        users,
        length: Length::Jobs(jobs),
        rate_scale: 1.0,
    }
}

fn main() {
    let n = 2_000_000;
    let s = spec(n);
    let mut times = Vec::new();
    let mut first = None;
    for _ in 0..7 {
        let t = Instant::now();
        let w = generate(&s, 42);
        times.push(t.elapsed().as_secs_f64());
        assert_eq!(w.len() as u64, n);
        assert!(w.jobs.windows(2).all(|p| p[0].submit <= p[1].submit));
        match &first {
            None => first = Some(w),
            Some(f) => assert!(f == &w, "generation is not deterministic"),
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!("## Synthetic generation (one thread, median of 7)\n");
    println!("| jobs | users | median s | jobs/s |");
    println!("|---:|---:|---:|---:|");
    println!(
        "| {n} | 50 | {median:.3} | {:.2} M |",
        n as f64 / median / 1e6
    );
}
