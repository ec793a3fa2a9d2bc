//! The run summary: aggregates over the measured jobs and the measurement window.
//!
//! Sources: response time, queue length at each scheduler call, utilization and fraction
//! backfilled are the exercise's four metrics (`papers/exercise-fcfs-vs-easy-backfilling.txt`);
//! the node-seconds-weighted expansion factor is Equation 2 and utilization Equation 1 of
//! Margo et al. (`papers/margo-impact-of-reservations.txt`, section 4); bounded slowdown with
//! threshold τ follows Feitelson et al. ("Theory and practice in parallel job scheduling", 1997).

use serde::Serialize;

use super::record::JobRecord;
use super::size_class::{ClassSummary, SizeClasses};
use super::stats::{Column, Distribution};
use super::{MetricsConfig, Warmup};
use crate::sim::engine::SimOutcome;
use crate::sim::job::Time;
use crate::sim::reservation::Decision;
use crate::sim::schedule::{InstantRun, runs_of};

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
    let mut scan = WindowScan::new(warmup);
    for r in records {
        scan.push(r.submit, r.end);
    }
    let w = scan.finish();
    (w.first as usize, w.start, w.end)
}

/// The measured part of a run: records from index `first` on, and the window `[start, end]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub first: u64,
    pub start: Time,
    pub end: Time,
}

/// Finds the measurement [`Window`] in one pass over the jobs (submit and end, in submission
/// order), holding a few numbers.
#[derive(Clone, Debug)]
pub struct WindowScan {
    warmup: Warmup,
    jobs: u64,
    first_submit: Option<Time>,
    last_end: Option<Time>,
    /// Warmup::Jobs(n): the submit time of job n.
    nth_submit: Option<Time>,
    /// Warmup::Seconds(t): jobs submitted before first submit + t.
    before: u64,
}

impl WindowScan {
    pub fn new(warmup: Warmup) -> Self {
        WindowScan {
            warmup,
            jobs: 0,
            first_submit: None,
            last_end: None,
            nth_submit: None,
            before: 0,
        }
    }

    /// Jobs pushed so far.
    pub fn jobs(&self) -> u64 {
        self.jobs
    }

    pub fn push(&mut self, submit: Time, end: Time) {
        let first_submit = *self.first_submit.get_or_insert(submit);
        self.last_end = Some(self.last_end.map_or(end, |e| e.max(end)));
        match self.warmup {
            Warmup::None => {}
            Warmup::Jobs(n) => {
                if self.jobs == n {
                    self.nth_submit = Some(submit);
                }
            }
            Warmup::Seconds(t) => {
                if submit < first_submit.saturating_add(t) {
                    self.before += 1;
                }
            }
        }
        self.jobs += 1;
    }

    pub fn finish(&self) -> Window {
        let first_submit = self.first_submit.unwrap_or(0);
        let last_end = self.last_end.unwrap_or(first_submit);
        let (first, start) = match self.warmup {
            Warmup::None => (0, first_submit),
            Warmup::Jobs(n) => (n.min(self.jobs), self.nth_submit.unwrap_or(last_end)),
            Warmup::Seconds(t) => (self.before, first_submit.saturating_add(t)),
        };
        Window {
            first,
            start,
            end: last_end.max(start),
        }
    }
}

/// How the reservation requests of a run were decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReservationCounts {
    pub requested: u64,
    pub granted: u64,
    pub shifted: u64,
    pub rejected: u64,
}

impl ReservationCounts {
    pub fn of(outcome: &SimOutcome) -> Self {
        let count = |f: fn(&Decision) -> bool| {
            outcome
                .reservations
                .iter()
                .filter(|r| f(&r.decision))
                .count() as u64
        };
        ReservationCounts {
            requested: outcome.reservations.len() as u64,
            granted: count(|d| *d == Decision::Granted),
            shifted: count(|d| *d == Decision::Shifted),
            rejected: count(|d| matches!(d, Decision::Rejected(_))),
        }
    }
}

/// Builds the [`RunSummary`] and the size-class aggregates from a stream: every job record in
/// submission order ([`RunAccumulator::job`]), then every instant run in time order
/// ([`RunAccumulator::instants`]). It holds running sums, and the wait, response and bounded
/// slowdown of measured jobs for their percentiles (24 bytes a job) — never the records.
pub struct RunAccumulator<'c> {
    config: MetricsConfig,
    window: Window,
    capacity: u64,
    classes: &'c SizeClasses,
    jobs: u64,
    first_submit: Option<Time>,
    last_end: Option<Time>,
    /// Waits and responses (whole seconds: 4 bytes each while they fit) and bounded slowdowns
    /// of the measured jobs, for their exact percentiles.
    wait: Column,
    response: Column,
    bsld: Vec<f64>,
    killed: u64,
    slowdown: f64,
    expansion_factor: f64,
    backfilled: f64,
    node_seconds: f64,
    ef_weighted: f64,
    busy: f64,
    class_jobs: Vec<u64>,
    class_wait: Vec<f64>,
    class_bsld: Vec<f64>,
    class_ef_weighted: Vec<f64>,
    class_weight: Vec<f64>,
    class_waiting: Vec<f64>,
    /// The last instant run, integrated once the next one (or the end) is known.
    pending: Option<InstantRun>,
    queue_seconds: f64,
    reserved_seconds: f64,
    calls: u64,
    call_queue: f64,
}

impl<'c> RunAccumulator<'c> {
    pub fn new(
        config: MetricsConfig,
        window: Window,
        capacity: u64,
        classes: &'c SizeClasses,
    ) -> Self {
        let k = classes.0.len();
        RunAccumulator {
            config,
            window,
            capacity,
            classes,
            jobs: 0,
            first_submit: None,
            last_end: None,
            wait: Column::with_capacity(0),
            response: Column::with_capacity(0),
            bsld: Vec::new(),
            killed: 0,
            slowdown: 0.0,
            expansion_factor: 0.0,
            backfilled: 0.0,
            node_seconds: 0.0,
            ef_weighted: 0.0,
            busy: 0.0,
            class_jobs: vec![0; k],
            class_wait: vec![0.0; k],
            class_bsld: vec![0.0; k],
            class_ef_weighted: vec![0.0; k],
            class_weight: vec![0.0; k],
            class_waiting: vec![0.0; k],
            pending: None,
            queue_seconds: 0.0,
            reserved_seconds: 0.0,
            calls: 0,
            call_queue: 0.0,
        }
    }

    /// Makes room for the percentiles of `n` measured jobs at once (no reallocation on the
    /// way, which would hold the old and the new buffer together).
    pub fn expect_measured(&mut self, n: usize) {
        self.wait = Column::with_capacity(n);
        self.response = Column::with_capacity(n);
        self.bsld = Vec::with_capacity(n);
    }

    /// The next job record, in submission order.
    pub fn job(&mut self, r: &JobRecord) {
        let Window { first, start, end } = self.window;
        self.first_submit.get_or_insert(r.submit);
        self.last_end = Some(self.last_end.map_or(r.end, |e| e.max(r.end)));
        let class = self.classes.of(r.units);
        if self.jobs >= first {
            self.wait.push(r.wait as f64);
            self.response.push(r.response as f64);
            self.bsld.push(r.bounded_slowdown);
            self.killed += u64::from(r.killed);
            self.slowdown += r.slowdown;
            self.expansion_factor += r.expansion_factor;
            self.backfilled += if r.backfilled { 1.0 } else { 0.0 };
            let weight = r.units as f64 * r.run as f64;
            self.node_seconds += weight;
            // Multiplied in the order of the whole-run formula, (EF · units) · run, so the
            // streamed sum rounds exactly as summing the records would.
            self.ef_weighted += r.expansion_factor * r.units as f64 * r.run as f64;
            self.class_jobs[class] += 1;
            self.class_wait[class] += r.wait as f64;
            self.class_bsld[class] += r.bounded_slowdown;
            self.class_ef_weighted[class] += r.expansion_factor * weight;
            self.class_weight[class] += weight;
        }
        // Busy time and waiting count every job (running is running, measured or not).
        let overlap = (r.end.min(end) - r.start.max(start)).max(0);
        self.busy += r.units as f64 * overlap as f64;
        let waiting = (r.start.min(end) - r.submit.max(start)).max(0);
        self.class_waiting[class] += waiting as f64;
        self.jobs += 1;
    }

    /// The next instant run, in time order.
    pub fn instants(&mut self, run: &InstantRun) {
        if let Some(previous) = self.pending.replace(*run) {
            self.integrate(&previous, run.time);
        }
    }

    /// Adds a run whose state holds until `next` (each instant's state holds until the next).
    fn integrate(&mut self, run: &InstantRun, next: Time) {
        let Window { start, end, .. } = self.window;
        let overlap = (next.min(end) - run.time.max(start)).max(0) as f64;
        self.queue_seconds += f64::from(run.queue_len) * overlap;
        self.reserved_seconds += run.reserved as f64 * overlap;
        if let Some(q) = run.call {
            let n = run.count_within(start, end);
            self.calls += n * (1 + u64::from(run.extra_calls));
            self.call_queue += (f64::from(q) + run.extra_call_queue as f64) * n as f64;
        }
    }

    /// The run summary and the size-class aggregates. `skipped` counts the jobs too large for
    /// the machine.
    pub fn finish(
        mut self,
        skipped: u64,
        reservations: ReservationCounts,
    ) -> (RunSummary, Vec<ClassSummary>) {
        let Window {
            start: window_start,
            end: window_end,
            ..
        } = self.window;
        if let Some(last) = self.pending.take() {
            self.integrate(&last, window_end);
        }
        let n = self.wait.len();
        let first_submit = self.first_submit.unwrap_or(0);
        let last_end = self.last_end.unwrap_or(first_submit);
        let wait = std::mem::replace(&mut self.wait, Column::with_capacity(0)).distribution();
        let response =
            std::mem::replace(&mut self.response, Column::with_capacity(0)).distribution();
        let bsld = Distribution::of(&mut self.bsld);
        let mean = |sum: f64| (n > 0).then(|| sum / n as f64);
        let length = window_end - window_start;
        let capacity = self.capacity;
        let utilization =
            (length > 0 && capacity > 0).then(|| self.busy / (capacity as f64 * length as f64));
        let reserved_fraction = (length > 0 && capacity > 0)
            .then(|| self.reserved_seconds / (capacity as f64 * length as f64));
        let summary = RunSummary {
            jobs: self.jobs,
            measured_jobs: n as u64,
            skipped_too_large: skipped,
            killed: self.killed,
            wait_mean: wait.mean,
            wait_median: wait.median,
            wait_p95: wait.p95,
            response_mean: response.mean,
            response_median: response.median,
            response_p95: response.p95,
            slowdown_mean: mean(self.slowdown),
            bounded_slowdown_mean: bsld.mean,
            bounded_slowdown_median: bsld.median,
            bounded_slowdown_p95: bsld.p95,
            expansion_factor_mean: mean(self.expansion_factor),
            expansion_factor_weighted: (self.node_seconds > 0.0)
                .then(|| self.ef_weighted / self.node_seconds),
            backfilled_fraction: mean(self.backfilled),
            utilization,
            reserved_fraction,
            utilization_with_reserved: utilization.zip(reserved_fraction).map(|(u, r)| u + r),
            reservations_requested: reservations.requested,
            reservations_granted: reservations.granted,
            reservations_shifted: reservations.shifted,
            reservations_rejected: reservations.rejected,
            queue_length_time_weighted: (length > 0).then(|| self.queue_seconds / length as f64),
            queue_length_sampled: (self.calls > 0).then(|| self.call_queue / self.calls as f64),
            scheduler_calls: self.calls,
            makespan: last_end - first_submit,
            window_start,
            window_end,
            tau: self.config.tau,
        };
        let length = length as f64;
        let classes = self
            .classes
            .0
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let count = self.class_jobs[k] as f64;
                let any = self.class_jobs[k] > 0;
                ClassSummary {
                    name: c.name.clone(),
                    jobs: self.class_jobs[k],
                    wait_mean: any.then(|| self.class_wait[k] / count),
                    expansion_factor_weighted: (self.class_weight[k] > 0.0)
                        .then(|| self.class_ef_weighted[k] / self.class_weight[k]),
                    bounded_slowdown_mean: any.then(|| self.class_bsld[k] / count),
                    queue_mean: (length > 0.0).then(|| self.class_waiting[k] / length),
                }
            })
            .collect();
        (summary, classes)
    }
}

/// Summarizes a run held in memory: [`RunAccumulator`] over `records` (the
/// [`super::job_records`] of `outcome`, in submission order) and the outcome's instants;
/// `capacity` is the machine's capacity in allocation units.
pub fn summarize(
    records: &[JobRecord],
    outcome: &SimOutcome,
    capacity: u64,
    config: &MetricsConfig,
) -> RunSummary {
    summarize_with_classes(records, outcome, capacity, config, &SizeClasses::default()).0
}

/// [`summarize`] and the aggregates of each size class.
pub fn summarize_with_classes(
    records: &[JobRecord],
    outcome: &SimOutcome,
    capacity: u64,
    config: &MetricsConfig,
    classes: &SizeClasses,
) -> (RunSummary, Vec<ClassSummary>) {
    let mut scan = WindowScan::new(config.warmup);
    for r in records {
        scan.push(r.submit, r.end);
    }
    let mut acc = RunAccumulator::new(*config, scan.finish(), capacity, classes);
    for r in records {
        acc.job(r);
    }
    for run in runs_of(outcome) {
        acc.instants(&run);
    }
    acc.finish(outcome.skipped.len() as u64, ReservationCounts::of(outcome))
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
