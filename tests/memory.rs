//! Issue 16, bounded memory: the structural properties behind the figures of `make bench`
//! (benches/memory.rs, BENCHMARKS.md) — what a simulation keeps does not depend on the number of
//! scheduler calls, per-job outputs leave the engine as soon as their order allows, and a cold
//! run does not hold memory for every finished cell.

use std::fs;
use std::process::{Command, Stdio};

use schedlab::sim::metrics::{
    MetricsConfig, ReservationCounts, RunAccumulator, SizeClasses, Window,
};
use schedlab::sim::reservation::Reservations;
use schedlab::sim::schedule::{Instant, InstantRun, RunLength, ScheduleSink};
use schedlab::sim::{
    Job, JobOutcome, Machine, SchedulerKind, SimConfig, Time, Workload, simulate_into,
};

mod common;

fn job(id: u64, submit: Time, procs: u32, runtime: Time) -> Job {
    Job {
        id,
        submit,
        runtime,
        requested_time: runtime,
        procs,
        ..Job::default()
    }
}

/// Keeps what the pipeline keeps of a schedule: job outcomes (counted) and instant runs.
#[derive(Default)]
struct Kept {
    jobs: Vec<JobOutcome>,
    folding: RunLength,
    runs: Vec<InstantRun>,
    /// The instant at which each job was handed over (its outcome comes before the instant's
    /// state).
    handed_at: Vec<Time>,
    unplaced: usize,
}

impl ScheduleSink for Kept {
    fn job(&mut self, outcome: &JobOutcome) {
        self.jobs.push(*outcome);
        self.unplaced += 1;
    }

    fn instant(&mut self, instant: &Instant) {
        for _ in 0..std::mem::take(&mut self.unplaced) {
            self.handed_at.push(instant.time);
        }
        self.runs.extend(self.folding.push(instant));
    }
}

fn simulate_kept(workload: &Workload, procs: u32, interval: Option<Time>) -> Kept {
    let mut config = SimConfig::new(Machine::pool(procs), SchedulerKind::Easy);
    config.interval = interval;
    let mut kept = Kept::default();
    let rest = simulate_into(workload, &config, &Reservations::default(), &mut kept).unwrap();
    assert!(
        rest.jobs.is_empty() && rest.steps.is_empty() && rest.invocations.is_empty(),
        "the engine keeps nothing per job or per call"
    );
    kept.runs.extend(kept.folding.finish());
    kept
}

/// A job holding the whole machine for 10^6 s while another waits: with `interval: 1` the
/// scheduler is called a million times. What is kept — the instant runs — is the same handful
/// whatever the interval, and still gives the exact number of calls and the sampled queue.
#[test]
fn memory_does_not_depend_on_the_number_of_scheduler_calls() {
    let workload = Workload::new(vec![job(1, 0, 10, 1_000_000), job(2, 1, 1, 10)]);
    let every_second = simulate_kept(&workload, 10, Some(1));
    let hourly = simulate_kept(&workload, 10, Some(3600));
    let calls = |k: &Kept| -> u64 {
        k.runs
            .iter()
            .filter(|r| r.call.is_some())
            .map(|r| r.count)
            .sum()
    };
    // Calls at 0 (job 1 starts), then every second from 1 while job 2 waits, up to 10^6 when it
    // starts: 1 + 1,000,000.
    assert_eq!(calls(&every_second), 1_000_001);
    assert_eq!(calls(&hourly), 1 + 1_000_000 / 3600 + 1);
    assert!(
        every_second.runs.len() <= 6 && hourly.runs.len() <= 6,
        "kept runs: {:?} vs {:?}",
        every_second.runs,
        hourly.runs
    );
    // The metrics read the runs exactly: a million calls, each seeing one waiting job.
    let window = Window {
        first: 0,
        start: 0,
        end: 1_000_010,
    };
    let classes = SizeClasses::default();
    let mut summary = RunAccumulator::new(MetricsConfig::default(), window, 10, &classes);
    for run in &every_second.runs {
        summary.instants(run);
    }
    let (s, _) = summary.finish(0, ReservationCounts::default());
    assert_eq!(s.scheduler_calls, 1_000_001);
    assert_eq!(s.queue_length_sampled, Some(1.0));
    // Job 2 waits over [1, 10^6): the time-weighted queue over the window.
    assert_eq!(s.queue_length_time_weighted, Some(999_999.0 / 1_000_010.0));
}

/// Job outcomes leave the engine in submission order, each as soon as every earlier job has
/// started — the engine holds only outcomes of jobs started ahead of a waiting one.
#[test]
fn per_job_outputs_stream_in_submission_order() {
    // 4 processors. Job 1 takes all of them for 100 s; job 2 (4 procs) waits for it; jobs 3–5
    // (1 proc, submitted later) wait behind job 2 — except that nothing can backfill while job
    // 1 holds the machine. Job 6 arrives after everything ended and is handed over at once.
    let workload = Workload::new(vec![
        job(1, 0, 4, 100),
        job(2, 1, 4, 50),
        job(3, 2, 1, 10),
        job(4, 3, 1, 10),
        job(5, 4, 1, 10),
        job(6, 1000, 1, 10),
        job(7, 1000, 99, 10), // too large: skipped, never blocks the order
        job(8, 1001, 1, 10),
    ]);
    let kept = simulate_kept(&workload, 4, None);
    let order: Vec<u32> = kept.jobs.iter().map(|o| o.job).collect();
    assert_eq!(order, vec![0, 1, 2, 3, 4, 5, 7]);
    // Each job was handed over at the instant the last of the jobs up to it started.
    let mut latest_start = Time::MIN;
    for (o, &at) in kept.jobs.iter().zip(&kept.handed_at) {
        latest_start = latest_start.max(o.start);
        assert_eq!(at, latest_start, "job {} handed over at {at}", o.job);
    }
    assert_eq!(kept.handed_at, vec![0, 100, 150, 150, 150, 1000, 1001]);
}

/// A workload is mostly `Job`s (5 M jobs: 320 MB at 64 bytes, 480 MB at the 96 bytes a `Job`
/// had while it carried its topology request): what few jobs ask beyond processors lives in the
/// workload's request table, so `Job` must not grow back.
#[test]
fn a_job_is_at_most_64_bytes() {
    assert!(
        std::mem::size_of::<Job>() <= 64,
        "Job is {} bytes",
        std::mem::size_of::<Job>()
    );
}

/// A trace whose jobs ask for a few distinct memory sizes keeps one request per distinct size
/// (plus the default), not one per job.
#[test]
fn requests_are_kept_once_per_distinct_value() {
    let mut text = String::new();
    for i in 0..3000 {
        // Memory per processor: -1 (none), 1 GB or 2 GB, in turn.
        let memory = [-1, 1 << 20, 2 << 20][i % 3];
        text.push_str(&format!(
            "{} {i} -1 10 1 -1 -1 1 10 {memory} 1 1 1 -1 1 -1 -1 -1\n",
            i + 1
        ));
    }
    let trace =
        schedlab::swf::read_bytes(text.as_bytes(), "m.swf", schedlab::swf::Mode::Strict).unwrap();
    let w = &trace.workload;
    assert_eq!(w.len(), 3000);
    assert_eq!(w.requests.len(), 3);
    let memory: Vec<u64> = w.jobs[..4].iter().map(|j| w.memory_kb(j)).collect();
    assert_eq!(memory, [0, 1 << 20, 2 << 20, 0]);
}

/// A cold run of many small cells: a grid three times larger peaks within a fixed allowance of
/// the smaller one — what a run keeps does not grow with the number of finished cells (issue 16
/// measured ~60 KB a cell: 2.33 GB for 40,000 cells).
#[test]
fn a_cold_run_does_not_hold_memory_per_finished_cell() {
    let dir = common::project_with_kth();
    let run = |cells: usize| -> i64 {
        let _ = fs::remove_dir_all(dir.path().join("results"));
        // Distinct machine sizes: every cell is its own simulation of KTH's first 300 jobs.
        // Both grids write more rows than the aggregate's buffers hold (16 MiB in all, reached
        // by ~300 cells), so the difference is what finished cells leave behind.
        let values: Vec<String> = (100..100 + cells).map(|v| v.to_string()).collect();
        fs::write(
            dir.path().join("experiments/many.yaml"),
            format!(
                "name: many
workloads:
  kth: {{trace: ../workloads/kth.swf.gz, first_jobs: 300}}
clusters:
  pool: {{procs: 100}}
schedulers:
  easy: {{policy: easy}}
grid:
  axes:
    procs: [{}]
",
                values.join(", "),
            ),
        )
        .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .current_dir(dir.path())
            .args(["run", "--quiet", "-j", "2", "experiments/many.yaml"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        common::peak_rss(child)
    };
    let small = run(600);
    let large = run(1800);
    // Measured (BENCHMARKS.md, "A cold run's memory and finished cells"): +1.1 MB from 600 to
    // 1,800 cells; before, +15.8 MB (and +26 MB from 1,800 to 5,400). What still grows is the
    // plan's own nodes, keys and labels (~1.5 KB a planned cell: O(cells) by nature, bounded
    // by the planning tests). The result files' row-group metadata no longer stays in memory
    // until a file closes (`store::footer`; exact heap bound in tests/sink_memory.rs). The
    // allowance is fixed, not per cell: it holds the plan's growth and noise, and fails for
    // anything else kept per finished cell above ~2 KB.
    let allowance_kib = 5 * 1024;
    assert!(
        large - small < allowance_kib,
        "peak memory rose by {} KiB from 600 cells ({small} KiB) to 1,800 ({large} KiB); allowed {allowance_kib} KiB",
        large - small
    );
}
