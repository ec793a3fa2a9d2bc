//! The discrete-event engine.
//!
//! Event order (docs/semantics.md): time is integer seconds. At each instant the engine applies
//! every completion of that instant, then every arrival (in submission order), then — at every
//! such instant, or only at multiples of the scheduling interval when one is set — asks the
//! scheduler once for its decisions and applies them. Ties between jobs are broken by submission
//! order (the job's index in the [`Workload`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::job::{Time, Workload};
use super::machine::{Infeasible, Machine};
use super::nodes::NodeTable;
use super::resources::ResourceVec;
use super::running::{RunningJob, RunningSet};
use super::scheduler::{QueuedJob, Scheduler, SchedulerKind, View};

/// What happens to a job whose actual runtime exceeds its requested time.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Overrun {
    /// Killed when its request expires, as resource managers do (the default).
    #[default]
    Kill,
    /// Allowed to run to its actual runtime.
    Continue,
}

impl Overrun {
    pub fn name(self) -> &'static str {
        match self {
            Overrun::Kill => "kill",
            Overrun::Continue => "continue",
        }
    }
}

impl std::str::FromStr for Overrun {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "kill" => Ok(Overrun::Kill),
            "continue" => Ok(Overrun::Continue),
            _ => Err(format!(
                "unknown overrun policy {s:?} (expected kill or continue)"
            )),
        }
    }
}

/// Everything that shapes a simulation besides the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimConfig {
    pub machine: Machine,
    pub scheduler: SchedulerKind,
    /// `None`: the scheduler runs at every event instant. `Some(n)`: only at multiples of `n`
    /// seconds (while jobs are waiting).
    pub interval: Option<Time>,
    pub overrun: Overrun,
}

/// The simulated fate of one job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobOutcome {
    /// Index of the job in the workload.
    pub job: u32,
    pub start: Time,
    pub end: Time,
    /// Allocation units held (processors, or nodes with exclusive allocation).
    pub units: u64,
    /// Stopped at its requested time ([`Overrun::Kill`]).
    pub killed: bool,
    /// Started while an earlier-submitted job was still waiting.
    pub backfilled: bool,
}

/// One call of the scheduler: when, and how many jobs were waiting when it was called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invocation {
    pub time: Time,
    pub queue_len: u32,
}

/// The state after an instant was fully processed (events applied, decisions applied).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub time: Time,
    pub queue_len: u32,
    /// Allocation units in use.
    pub busy: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimOutcome {
    /// Simulated jobs, in submission order.
    pub jobs: Vec<JobOutcome>,
    /// Jobs that can never run on this machine, with the reason, in submission order.
    pub skipped: Vec<(u32, Infeasible)>,
    pub invocations: Vec<Invocation>,
    /// The state after each processed instant, in time order.
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error(
        "scheduler bug at t={time}: it started queue position {position}, which is not waiting"
    )]
    InvalidDecision { time: Time, position: usize },
    #[error("scheduler bug at t={time}: starting job {job_id} would over-allocate the machine")]
    OverAllocation { time: Time, job_id: u64 },
    #[error(
        "scheduler bug at t={time}: {waiting} jobs wait on an idle machine and nothing will start them"
    )]
    Stalled { time: Time, waiting: usize },
    #[error("invalid scheduling interval {0} (must be a positive number of seconds)")]
    BadInterval(Time),
}

/// Simulates `workload` under `config`.
pub fn simulate(workload: &Workload, config: &SimConfig) -> Result<SimOutcome, SimError> {
    let scheduler = config.scheduler.build();
    Engine::new(workload, config, scheduler)?.run()
}

/// Simulates with a caller-supplied policy (for tests and custom policies).
pub fn simulate_with(
    workload: &Workload,
    config: &SimConfig,
    scheduler: Box<dyn Scheduler>,
) -> Result<SimOutcome, SimError> {
    Engine::new(workload, config, scheduler)?.run()
}

/// Scheduler calls in a row that may leave an idle machine idle before the run is reported as
/// stalled (only reachable with a periodic scheduler and a policy that postpones work).
const MAX_IDLE_CALLS: u32 = 10_000;

struct Engine<'w> {
    workload: &'w Workload,
    config: SimConfig,
    scheduler: Box<dyn Scheduler>,
    /// Feasible jobs with their demand, in submission order.
    arrivals: Vec<QueuedJob>,
    next_arrival: usize,
    completions: BinaryHeap<Reverse<(Time, u32)>>,
    queue: Vec<QueuedJob>,
    running: RunningSet,
    /// Per job index: expected end and nodes held while it runs.
    held: Vec<(Time, Vec<u32>)>,
    nodes: NodeTable,
    free: ResourceVec,
    outcomes: Vec<Option<JobOutcome>>,
    started_jobs: Vec<u32>,
    /// Consecutive scheduler calls that left an idle machine idle with nothing else to come.
    idle_calls: u32,
    out: SimOutcome,
}

impl<'w> Engine<'w> {
    fn new(
        workload: &'w Workload,
        config: &SimConfig,
        scheduler: Box<dyn Scheduler>,
    ) -> Result<Self, SimError> {
        if let Some(n) = config.interval
            && n <= 0
        {
            return Err(SimError::BadInterval(n));
        }
        let mut out = SimOutcome::default();
        let mut arrivals = Vec::with_capacity(workload.len());
        for (i, job) in workload.jobs.iter().enumerate() {
            match config.machine.demand(job) {
                Ok(demand) => arrivals.push(QueuedJob {
                    job: i as u32,
                    submit: job.submit,
                    requested_time: job.requested_time,
                    demand,
                }),
                Err(why) => out.skipped.push((i as u32, why)),
            }
        }
        Ok(Engine {
            workload,
            config: *config,
            scheduler,
            arrivals,
            next_arrival: 0,
            completions: BinaryHeap::new(),
            queue: Vec::new(),
            running: RunningSet::default(),
            held: vec![(0, Vec::new()); workload.len()],
            nodes: NodeTable::new(&config.machine),
            free: config.machine.capacity(),
            outcomes: vec![None; workload.len()],
            started_jobs: Vec::new(),
            idle_calls: 0,
            out,
        })
    }

    /// The next instant with something to do, if any.
    fn next_instant(&self, after: Option<Time>) -> Option<Time> {
        let arrival = self.arrivals.get(self.next_arrival).map(|j| j.submit);
        let completion = self.completions.peek().map(|Reverse((t, _))| *t);
        let tick = match (self.config.interval, self.queue.is_empty()) {
            (Some(n), false) => {
                let from = after.map_or(Time::MIN, |t| t + 1);
                Some(from.div_euclid(n) * n + if from.rem_euclid(n) == 0 { 0 } else { n })
            }
            _ => None,
        };
        [arrival, completion, tick].into_iter().flatten().min()
    }

    fn run(mut self) -> Result<SimOutcome, SimError> {
        let mut starts = Vec::new();
        let mut last = None;
        while let Some(now) = self.next_instant(last) {
            last = Some(now);
            self.complete_until(now);
            while let Some(job) = self.arrivals.get(self.next_arrival) {
                if job.submit != now {
                    break;
                }
                self.queue.push(*job);
                self.next_arrival += 1;
            }
            let decides = match self.config.interval {
                None => true,
                Some(n) => now.rem_euclid(n) == 0 && !self.queue.is_empty(),
            };
            if decides {
                self.decide(now, &mut starts)?;
            }
            let busy = self.config.machine.capacity().unit_count() - self.free.unit_count();
            self.out.steps.push(Step {
                time: now,
                queue_len: self.queue.len() as u32,
                busy,
            });
        }
        if !self.queue.is_empty() {
            // No event is left that could start them.
            let time = last.unwrap_or_default();
            return Err(SimError::Stalled {
                time,
                waiting: self.queue.len(),
            });
        }
        let mut out = self.out;
        out.jobs = self.outcomes.into_iter().flatten().collect();
        Ok(out)
    }

    fn complete_until(&mut self, now: Time) {
        while let Some(&Reverse((end, job))) = self.completions.peek() {
            if end != now {
                break;
            }
            self.completions.pop();
            let (expected_end, nodes) = std::mem::take(&mut self.held[job as usize]);
            let running = self
                .running
                .remove(expected_end, job)
                .expect("running job is tracked");
            self.free += running.demand;
            self.nodes.release(running.demand, &nodes);
        }
    }

    fn decide(&mut self, now: Time, starts: &mut Vec<usize>) -> Result<(), SimError> {
        self.out.invocations.push(Invocation {
            time: now,
            queue_len: self.queue.len() as u32,
        });
        starts.clear();
        let view = View {
            now,
            capacity: self.config.machine.capacity(),
            free: self.free,
            queue: &self.queue,
            running: &self.running,
        };
        self.scheduler.schedule(&view, starts);
        starts.sort_unstable();
        for (k, &pos) in starts.iter().enumerate() {
            if pos >= self.queue.len() || (k > 0 && starts[k - 1] == pos) {
                return Err(SimError::InvalidDecision {
                    time: now,
                    position: pos,
                });
            }
            self.start(now, self.queue[pos])?;
        }
        if !starts.is_empty() {
            self.started_jobs.clear();
            self.started_jobs
                .extend(starts.iter().map(|&pos| self.queue[pos].job));
            let mut started = starts.iter().peekable();
            let mut pos = 0;
            self.queue.retain(|_| {
                let keep = started.peek() != Some(&&pos);
                if !keep {
                    started.next();
                }
                pos += 1;
                keep
            });
            // Backfilled: an earlier-submitted job is still waiting, i.e. the new queue head
            // precedes it in submission order.
            if let Some(head) = self.queue.first().map(|q| q.job) {
                for &job in &self.started_jobs {
                    if job > head
                        && let Some(outcome) = &mut self.outcomes[job as usize]
                    {
                        outcome.backfilled = true;
                    }
                }
            }
        }
        // Periodic mode keeps ticking while jobs wait, so a policy that leaves an idle machine
        // idle forever would never end: report it after a bounded number of such calls.
        let idle = self.running.is_empty() && self.next_arrival == self.arrivals.len();
        if idle && !self.queue.is_empty() {
            self.idle_calls += 1;
            if self.idle_calls > MAX_IDLE_CALLS {
                return Err(SimError::Stalled {
                    time: now,
                    waiting: self.queue.len(),
                });
            }
        } else {
            self.idle_calls = 0;
        }
        Ok(())
    }

    fn start(&mut self, now: Time, queued: QueuedJob) -> Result<(), SimError> {
        let job = &self.workload.jobs[queued.job as usize];
        let (expected_end, held) = &mut self.held[queued.job as usize];
        if !queued.demand.fits_in(&self.free) || self.nodes.allocate(queued.demand, held).is_err() {
            return Err(SimError::OverAllocation {
                time: now,
                job_id: job.id,
            });
        }
        self.free -= queued.demand;
        let killed = self.config.overrun == Overrun::Kill && job.runtime > job.requested_time;
        let run = if killed {
            job.requested_time
        } else {
            job.runtime
        };
        *expected_end = now + job.requested_time;
        self.running.insert(RunningJob {
            job: queued.job,
            start: now,
            expected_end: *expected_end,
            demand: queued.demand,
        });
        self.completions.push(Reverse((now + run, queued.job)));
        self.outcomes[queued.job as usize] = Some(JobOutcome {
            job: queued.job,
            start: now,
            end: now + run,
            units: queued.demand.unit_count(),
            killed,
            backfilled: false,
        });
        Ok(())
    }
}
