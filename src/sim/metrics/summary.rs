//! The run summary: aggregates over the measured jobs and the measurement window.
//!
//! Sources: response time, queue length at each scheduler call, utilization and fraction
//! backfilled are the exercise's four metrics (`papers/exercise-fcfs-vs-easy-backfilling.txt`);
//! the node-seconds-weighted expansion factor is Equation 2 and utilization Equation 1 of
//! Margo et al. (`papers/margo-impact-of-reservations.txt`, section 4); bounded slowdown with
//! threshold τ follows Feitelson et al. ("Theory and practice in parallel job scheduling", 1997).

use serde::Serialize;

use super::record::JobRecord;
use super::stats::Distribution;
use super::{MetricsConfig, Warmup};
use crate::sim::engine::SimOutcome;
use crate::sim::job::Time;
use crate::sim::reservation::Decision;

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct RunSummary {
    /// Jobs simulated (the workload minus jobs too large for the machine).
    pub jobs: u64,
    /// Jobs counted in the per-job aggregates (after the warm-up).
    pub measured_jobs: u64,
    /// Jobs asking for more processors than the machine has (never run).
    pub skipped_too_large: u64,
    /// Measured jobs killed at their requested time.
    pub killed: u64,
    pub wait_mean: Option<f64>,
    pub wait_median: Option<f64>,
    pub wait_p95: Option<f64>,
    pub response_mean: Option<f64>,
    pub response_median: Option<f64>,
    pub response_p95: Option<f64>,
    pub slowdown_mean: Option<f64>,
    pub bounded_slowdown_mean: Option<f64>,
    pub bounded_slowdown_median: Option<f64>,
    pub bounded_slowdown_p95: Option<f64>,
    /// Plain mean of per-job expansion factors.
    pub expansion_factor_mean: Option<f64>,
    /// Σ(EF · node-seconds) / Σ node-seconds (Margo et al., Eq. 2).
    pub expansion_factor_weighted: Option<f64>,
    /// Measured jobs started while an earlier-submitted job waited, over measured jobs.
    pub backfilled_fraction: Option<f64>,
    /// Allocated unit-seconds inside the window over capacity × window length (Eq. 1).
    pub utilization: Option<f64>,
    /// Reserved unit-seconds (started advance reservations) inside the window over capacity ×
    /// window length: capacity held for reservations, idle as far as the batch queue goes.
    pub reserved_fraction: Option<f64>,
    /// utilization + reserved_fraction: reservations counted as used (Margo et al., section 6).
    pub utilization_with_reserved: Option<f64>,
    /// Reservation requests made, granted at the requested time, granted shifted, rejected.
    pub reservations_requested: u64,
    pub reservations_granted: u64,
    pub reservations_shifted: u64,
    pub reservations_rejected: u64,
    /// Time-weighted mean number of waiting jobs over the window.
    pub queue_length_time_weighted: Option<f64>,
    /// Mean number of waiting jobs at each scheduler call in the window (the exercise's).
    pub queue_length_sampled: Option<f64>,
    /// Scheduler calls in the window.
    pub scheduler_calls: u64,
    /// Last end − first submit over all simulated jobs, in seconds.
    pub makespan: Time,
    /// Measurement window [window_start, window_end], in trace seconds.
    pub window_start: Time,
    pub window_end: Time,
    /// The bounded-slowdown threshold τ used, in seconds.
    pub tau: Time,
}

/// The measured part of a run: the index of the first measured record and the measurement
/// window `[start, end]` (docs/metrics.md, "Warm-up").
pub fn measurement(records: &[JobRecord], warmup: Warmup) -> (usize, Time, Time) {
    let first_submit = records.first().map_or(0, |r| r.submit);
    let last_end = records.iter().map(|r| r.end).max().unwrap_or(first_submit);
    let (first, start) = match warmup {
        Warmup::None => (0, first_submit),
        Warmup::Jobs(n) => {
            let n = (n as usize).min(records.len());
            (n, records.get(n).map_or(last_end, |r| r.submit))
        }
        Warmup::Seconds(t) => {
            let start = first_submit.saturating_add(t);
            (records.partition_point(|r| r.submit < start), start)
        }
    };
    (first, start, last_end.max(start))
}

/// Summarizes a run. `records` are [`super::job_records`] of `outcome`, in submission order;
/// `capacity` is the machine's capacity in allocation units.
pub fn summarize(
    records: &[JobRecord],
    outcome: &SimOutcome,
    capacity: u64,
    config: &MetricsConfig,
) -> RunSummary {
    let first_submit = records.first().map_or(0, |r| r.submit);
    let last_end = records.iter().map(|r| r.end).max().unwrap_or(first_submit);
    let (first, window_start, window_end) = measurement(records, config.warmup);
    let measured = &records[first..];
    let n = measured.len();
    let collect = |f: fn(&JobRecord) -> f64| measured.iter().map(f).collect::<Vec<f64>>();
    let wait = Distribution::of(&mut collect(|r| r.wait as f64));
    let response = Distribution::of(&mut collect(|r| r.response as f64));
    let bsld = Distribution::of(&mut collect(|r| r.bounded_slowdown));
    let mean =
        |f: fn(&JobRecord) -> f64| (n > 0).then(|| measured.iter().map(f).sum::<f64>() / n as f64);
    let node_seconds: f64 = measured
        .iter()
        .map(|r| (r.units as f64) * r.run as f64)
        .sum();
    let weighted_ef = (node_seconds > 0.0).then(|| {
        measured
            .iter()
            .map(|r| r.expansion_factor * r.units as f64 * r.run as f64)
            .sum::<f64>()
            / node_seconds
    });
    let length = window_end - window_start;
    let utilization = (length > 0 && capacity > 0).then(|| {
        let busy: f64 = records
            .iter()
            .map(|r| {
                let overlap = (r.end.min(window_end) - r.start.max(window_start)).max(0);
                r.units as f64 * overlap as f64
            })
            .sum();
        busy / (capacity as f64 * length as f64)
    });
    let reserved_fraction = (length > 0 && capacity > 0).then(|| {
        reserved_unit_seconds(outcome, window_start, window_end) / (capacity as f64 * length as f64)
    });
    let count = |f: fn(&Decision) -> bool| {
        outcome
            .reservations
            .iter()
            .filter(|r| f(&r.decision))
            .count() as u64
    };
    let calls: Vec<_> = outcome
        .invocations
        .iter()
        .filter(|c| c.time >= window_start && c.time <= window_end)
        .collect();
    let sampled = (!calls.is_empty())
        .then(|| calls.iter().map(|c| f64::from(c.queue_len)).sum::<f64>() / calls.len() as f64);
    RunSummary {
        jobs: records.len() as u64,
        measured_jobs: n as u64,
        skipped_too_large: outcome.skipped.len() as u64,
        killed: measured.iter().filter(|r| r.killed).count() as u64,
        wait_mean: wait.mean,
        wait_median: wait.median,
        wait_p95: wait.p95,
        response_mean: response.mean,
        response_median: response.median,
        response_p95: response.p95,
        slowdown_mean: mean(|r| r.slowdown),
        bounded_slowdown_mean: bsld.mean,
        bounded_slowdown_median: bsld.median,
        bounded_slowdown_p95: bsld.p95,
        expansion_factor_mean: mean(|r| r.expansion_factor),
        expansion_factor_weighted: weighted_ef,
        backfilled_fraction: mean(|r| if r.backfilled { 1.0 } else { 0.0 }),
        utilization,
        reserved_fraction,
        utilization_with_reserved: utilization.zip(reserved_fraction).map(|(u, r)| u + r),
        reservations_requested: outcome.reservations.len() as u64,
        reservations_granted: count(|d| *d == Decision::Granted),
        reservations_shifted: count(|d| *d == Decision::Shifted),
        reservations_rejected: count(|d| matches!(d, Decision::Rejected(_))),
        queue_length_time_weighted: (length > 0)
            .then(|| time_weighted_queue(outcome, window_start, window_end) / length as f64),
        queue_length_sampled: sampled,
        scheduler_calls: calls.len() as u64,
        makespan: last_end - first_submit,
        window_start,
        window_end,
        tau: config.tau,
    }
}

/// ∫ reserved units dt over [from, to), from the engine's steps.
fn reserved_unit_seconds(outcome: &SimOutcome, from: Time, to: Time) -> f64 {
    let steps = &outcome.steps;
    let mut total = 0.0;
    for (i, s) in steps.iter().enumerate() {
        let next = steps.get(i + 1).map_or(to, |n| n.time);
        let overlap = (next.min(to) - s.time.max(from)).max(0);
        total += s.reserved as f64 * overlap as f64;
    }
    total
}

/// ∫ queue length dt over [from, to), from the engine's steps (each holds until the next).
fn time_weighted_queue(outcome: &SimOutcome, from: Time, to: Time) -> f64 {
    let steps = &outcome.steps;
    let mut total = 0.0;
    for (i, s) in steps.iter().enumerate() {
        let next = steps.get(i + 1).map_or(to, |n| n.time);
        let overlap = (next.min(to) - s.time.max(from)).max(0);
        total += f64::from(s.queue_len) * overlap as f64;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::metrics::job_records;
    use crate::sim::{Job, Machine, Overrun, SchedulerKind, SimConfig, Workload, simulate};

    fn job(id: u64, submit: Time, procs: u32, runtime: Time, requested: Time) -> Job {
        Job {
            id,
            submit,
            runtime,
            requested_time: requested,
            procs,
            memory_kb: 0,
            cpu_time: -1,
            user: 1,
            group: -1,
            queue: -1,
            partition: -1,
            request: Default::default(),
        }
    }

    fn run(jobs: Vec<Job>, procs: u32, config: MetricsConfig) -> RunSummary {
        let w = Workload::new(jobs);
        let sim = SimConfig {
            order: Default::default(),
            machine: Machine::pool(procs),
            scheduler: SchedulerKind::Fcfs,
            interval: None,
            overrun: Overrun::Kill,
            placement: Default::default(),
        };
        let out = simulate(&w, &sim).unwrap();
        let records = job_records(&w, &out, config.tau);
        summarize(&records, &out, u64::from(procs), &config)
    }

    #[test]
    fn two_jobs_in_sequence_by_hand() {
        // 4 processors. Job 1: 4 procs, 0–100. Job 2 (2 procs, 50 s, request 100) arrives at 10
        // and waits for job 1: runs 100–150.
        let s = run(
            vec![job(1, 0, 4, 100, 100), job(2, 10, 2, 50, 100)],
            4,
            MetricsConfig::default(),
        );
        // Waits 0 and 90; responses 100 and 140.
        assert_eq!(
            (s.wait_mean, s.wait_median, s.wait_p95),
            (Some(45.0), Some(0.0), Some(90.0))
        );
        assert_eq!(s.response_mean, Some(120.0));
        // Slowdowns 1 and 140/50 = 2.8; bounded the same (runs exceed τ = 10).
        assert_eq!(s.slowdown_mean, Some(1.9));
        assert_eq!(s.bounded_slowdown_mean, Some(1.9));
        // EF: (100+0)/100 = 1 and (100+90)/100 = 1.9; weights 4·100 and 2·50.
        assert_eq!(s.expansion_factor_mean, Some(1.45));
        assert_eq!(
            s.expansion_factor_weighted,
            Some((400.0 * 1.0 + 100.0 * 1.9) / 500.0)
        );
        // Busy 4·100 + 2·50 = 500 unit-seconds over 4 × 150.
        assert_eq!(s.utilization, Some(500.0 / 600.0));
        // One job waits over [10, 100): 90 of 150 seconds.
        assert_eq!(s.queue_length_time_weighted, Some(90.0 / 150.0));
        // Calls at 0 (queue 1), 10 (queue 1), 100 (queue 1), 150 (queue 0).
        assert_eq!(s.scheduler_calls, 4);
        assert_eq!(s.queue_length_sampled, Some(0.75));
        assert_eq!(s.backfilled_fraction, Some(0.0));
        assert_eq!((s.makespan, s.window_start, s.window_end), (150, 0, 150));
    }

    #[test]
    fn bounded_slowdown_uses_tau_for_short_jobs() {
        // 2 s job waiting 8 s behind another: response 10 (after 0–8 wait... ) measured by hand.
        let s = run(
            vec![job(1, 0, 1, 8, 8), job(2, 0, 1, 2, 2)],
            1,
            MetricsConfig {
                tau: 10,
                warmup: Warmup::None,
            },
        );
        // Job 1: response 8, run 8 → bsld max(1, 8/10) = 1. Job 2: waits 8, response 10,
        // run 2 → slowdown 5, bsld 10/10 = 1.
        assert_eq!(s.slowdown_mean, Some(3.0));
        assert_eq!(s.bounded_slowdown_mean, Some(1.0));
        let s = run(
            vec![job(1, 0, 1, 8, 8), job(2, 0, 1, 2, 2)],
            1,
            MetricsConfig {
                tau: 1,
                warmup: Warmup::None,
            },
        );
        assert_eq!(s.bounded_slowdown_mean, Some(3.0));
        assert_eq!(s.tau, 1);
    }

    #[test]
    fn warmup_by_jobs_and_by_seconds() {
        // One processor, three 10 s jobs submitted at 0, 0 and 20: runs 0–10, 10–20, 20–30.
        let jobs = vec![
            job(1, 0, 1, 10, 10),
            job(2, 0, 1, 10, 10),
            job(3, 20, 1, 10, 10),
        ];
        let s = run(
            jobs.clone(),
            1,
            MetricsConfig {
                tau: 10,
                warmup: Warmup::Jobs(1),
            },
        );
        assert_eq!(s.measured_jobs, 2);
        assert_eq!(s.wait_mean, Some(5.0)); // waits 10 and 0
        // Window [0, 30] (job 2 was submitted at 0): fully busy.
        assert_eq!((s.window_start, s.utilization), (0, Some(1.0)));
        let s = run(
            jobs,
            1,
            MetricsConfig {
                tau: 10,
                warmup: Warmup::Seconds(15),
            },
        );
        assert_eq!(s.measured_jobs, 1);
        assert_eq!(s.wait_mean, Some(0.0));
        // Window [15, 30]: busy 15–20 (job 2) and 20–30 (job 3) → 1.0.
        assert_eq!((s.window_start, s.utilization), (15, Some(1.0)));
        assert_eq!(s.jobs, 3);
    }

    #[test]
    fn an_empty_run_has_no_undefined_numbers() {
        let s = run(vec![], 4, MetricsConfig::default());
        assert_eq!(
            (s.jobs, s.wait_mean, s.utilization, s.makespan),
            (0, None, None, 0)
        );
    }
}
