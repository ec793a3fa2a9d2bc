//! A simulated schedule as a stream: what a simulation hands to whoever keeps it, one job and
//! one instant at a time, so that neither the engine nor the keeper needs memory that grows with
//! the number of scheduler calls (issue 16).
//!
//! - [`ScheduleSink`] receives each job's outcome (in submission order) and the state after each
//!   processed instant, with the queue length the scheduler saw if it was called then.
//! - [`RunLength`] folds consecutive instants of identical state, evenly spaced (a periodic
//!   scheduler ticking over an unchanged queue), into one [`InstantRun`]: a schedule of a job that
//!   blocks the machine for 10^12 s with `interval: 1` is a handful of runs, not 10^12 steps.
//!
//! The metrics ([`super::metrics::RunAccumulator`], [`super::timeseries::Binner`]) read the same
//! runs back, exactly: within a run the state is constant, and the calls of a run are at
//! `time + k·period`, so a measurement window cuts a run by arithmetic.

use super::engine::{Invocation, JobOutcome, SimOutcome, Step};
use super::job::{Time, Workload};
use super::resources::ResourceVec;

/// One job of a schedule: what the job asked for and what happened to it — everything the
/// metrics need, without the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduledJob {
    pub job_id: u64,
    /// Index of the job in the workload (submission order).
    pub index: u32,
    pub user: i32,
    pub group: i32,
    pub queue: i32,
    pub submit: Time,
    pub requested_time: Time,
    pub procs: u32,
    pub start: Time,
    pub end: Time,
    pub units: u64,
    /// Index of the cluster it ran in (0 on a uniform machine).
    pub cluster: u32,
    /// Global index of the node class it ran on (0 on a uniform machine).
    pub class: u32,
    /// Nodes it held.
    pub nodes: u32,
    /// What it held in all: cores, memory KB, GPUs.
    pub held: ResourceVec,
    /// The memory it asked for in all, KB, as read.
    pub requested_memory_kb: u64,
    pub backfilled: bool,
    pub killed: bool,
}

impl ScheduledJob {
    /// The scheduled job of outcome `o` of a run of `workload`.
    pub fn of(workload: &Workload, o: &JobOutcome) -> ScheduledJob {
        let job = &workload.jobs[o.job as usize];
        ScheduledJob {
            job_id: job.id,
            index: o.job,
            user: job.user,
            group: job.group,
            queue: job.queue,
            submit: job.submit,
            requested_time: job.requested_time,
            procs: job.procs,
            start: o.start,
            end: o.end,
            units: o.units,
            cluster: o.cluster,
            class: o.class,
            nodes: o.nodes,
            held: o.held,
            requested_memory_kb: super::metrics::requested_memory_kb(
                workload.request(job),
                job.procs,
            ),
            backfilled: o.backfilled,
            killed: o.killed,
        }
    }
}

impl ScheduledJob {
    /// The engine's outcome of this job.
    pub fn outcome(&self) -> JobOutcome {
        JobOutcome {
            job: self.index,
            start: self.start,
            end: self.end,
            units: self.units,
            cluster: self.cluster,
            class: self.class,
            nodes: self.nodes,
            held: self.held,
            killed: self.killed,
            backfilled: self.backfilled,
        }
    }
}

/// The state after one processed instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Instant {
    pub time: Time,
    /// Jobs waiting after the instant's decisions.
    pub queue_len: u32,
    /// Allocation units held by jobs.
    pub busy: u64,
    /// Allocation units blocked by started reservations.
    pub reserved: u64,
    /// The queue length the scheduler saw, if it was called at this instant.
    pub call: Option<u32>,
    /// Further calls at this instant (queue limits admitting held jobs decide again at once)
    /// and the sum of the queue lengths they saw.
    pub extra_calls: u32,
    pub extra_call_queue: u64,
}

/// Receives a simulated schedule as it is produced.
pub trait ScheduleSink {
    /// A job's outcome; called once per simulated job, in submission order.
    fn job(&mut self, outcome: &JobOutcome);
    /// The state after an instant; called once per processed instant, in time order.
    fn instant(&mut self, instant: &Instant);
    /// One scheduler call and the queue length it saw, before the instant it belongs to (every
    /// call, also those the instant sums in `extra_calls`).
    fn call(&mut self, _time: Time, _queue_len: u32) {}
    /// `count` instants of `first`'s state at `first.time + k·period`, each with the call
    /// `first.call` says (the idle ticks of a periodic scheduler, which the engine records
    /// without asking the scheduler). The same as `call` and `instant` for each in turn, which
    /// is what the default does; a sink that folds runs takes them at once.
    fn instants(&mut self, first: &Instant, period: Time, count: u64) {
        for k in 0..count {
            let instant = Instant {
                time: first.time + k as Time * period,
                ..*first
            };
            if let Some(queue_len) = instant.call {
                self.call(instant.time, queue_len);
            }
            self.instant(&instant);
        }
    }
}

/// Collects everything (the engine's classic result: tests, `schedlab simulate`).
impl ScheduleSink for SimOutcome {
    fn job(&mut self, outcome: &JobOutcome) {
        self.jobs.push(*outcome);
    }

    fn call(&mut self, time: Time, queue_len: u32) {
        self.invocations.push(Invocation { time, queue_len });
    }

    fn instant(&mut self, instant: &Instant) {
        self.steps.push(Step {
            time: instant.time,
            queue_len: instant.queue_len,
            busy: instant.busy,
            reserved: instant.reserved,
        });
    }
}

/// `count` instants of one state at `time + k·period`, k = 0 … count − 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstantRun {
    pub time: Time,
    /// Seconds between consecutive instants of the run (0 when `count` is 1).
    pub period: Time,
    pub count: u64,
    pub queue_len: u32,
    pub busy: u64,
    pub reserved: u64,
    /// The queue length the scheduler saw at each instant of the run, if it was called.
    pub call: Option<u32>,
    /// Further calls at each instant of the run, and the sum of their queue lengths.
    pub extra_calls: u32,
    pub extra_call_queue: u64,
}

impl InstantRun {
    fn of(i: &Instant) -> InstantRun {
        InstantRun {
            time: i.time,
            period: 0,
            count: 1,
            queue_len: i.queue_len,
            busy: i.busy,
            reserved: i.reserved,
            call: i.call,
            extra_calls: i.extra_calls,
            extra_call_queue: i.extra_call_queue,
        }
    }

    /// The last instant of the run.
    pub fn last(&self) -> Time {
        self.time + (self.count as Time - 1) * self.period
    }

    /// How many instants of the run lie in `[from, to]`.
    pub fn count_within(&self, from: Time, to: Time) -> u64 {
        if self.count == 0 || to < from || self.last() < from || self.time > to {
            return 0;
        }
        if self.period == 0 {
            return self.count;
        }
        // First k with time + k·p ≥ from, last k with time + k·p ≤ to.
        let first = if from <= self.time {
            0
        } else {
            (from - self.time + self.period - 1) / self.period
        };
        let last = ((to - self.time) / self.period).min(self.count as Time - 1);
        (last - first + 1).max(0) as u64
    }

    fn same_state(&self, i: &Instant) -> bool {
        (
            self.queue_len,
            self.busy,
            self.reserved,
            self.call,
            self.extra_calls,
            self.extra_call_queue,
        ) == (
            i.queue_len,
            i.busy,
            i.reserved,
            i.call,
            i.extra_calls,
            i.extra_call_queue,
        )
    }
}

/// Folds instants into runs (see the module documentation). Holds one run.
#[derive(Debug, Default)]
pub struct RunLength {
    current: Option<InstantRun>,
}

impl RunLength {
    /// Adds the next instant (in time order); returns the run it closes, if any.
    pub fn push(&mut self, instant: &Instant) -> Option<InstantRun> {
        if let Some(run) = &mut self.current
            && run.same_state(instant)
        {
            let gap = instant.time - run.last();
            if run.count == 1 && gap > 0 {
                run.period = gap;
                run.count = 2;
                return None;
            }
            if gap == run.period && gap > 0 {
                run.count += 1;
                return None;
            }
        }
        self.current.replace(InstantRun::of(instant))
    }

    /// Adds `count` instants of `first`'s state at `first.time + k·period` (in time order after
    /// what was pushed), as `count` calls of [`RunLength::push`] would, in O(1); `closed`
    /// receives the runs they close.
    pub fn push_many(
        &mut self,
        first: &Instant,
        period: Time,
        count: u64,
        closed: &mut Vec<InstantRun>,
    ) {
        if count == 0 {
            return;
        }
        closed.extend(self.push(first));
        if count == 1 {
            return;
        }
        closed.extend(self.push(&Instant {
            time: first.time + period,
            ..*first
        }));
        let rest = count - 2;
        if rest > 0 {
            let run = self.current.as_mut().expect("just pushed");
            if run.count == 1 {
                run.period = period;
            }
            run.count += rest;
        }
    }

    /// The last run, at the end of the schedule.
    pub fn finish(&mut self) -> Option<InstantRun> {
        self.current.take()
    }
}

/// The instants of an in-memory outcome (its steps, with the calls made at them), as runs.
pub fn runs_of(outcome: &SimOutcome) -> Vec<InstantRun> {
    let mut calls = outcome.invocations.iter().peekable();
    let mut folding = RunLength::default();
    let mut runs = Vec::new();
    for s in &outcome.steps {
        let call = calls.next_if(|c| c.time == s.time).map(|c| c.queue_len);
        let (mut extra_calls, mut extra_call_queue) = (0, 0);
        while let Some(c) = calls.next_if(|c| c.time == s.time) {
            extra_calls += 1;
            extra_call_queue += u64::from(c.queue_len);
        }
        let instant = Instant {
            time: s.time,
            queue_len: s.queue_len,
            busy: s.busy,
            reserved: s.reserved,
            call,
            extra_calls,
            extra_call_queue,
        };
        runs.extend(folding.push(&instant));
    }
    runs.extend(folding.finish());
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(time: Time, queue_len: u32, call: Option<u32>) -> Instant {
        Instant {
            time,
            queue_len,
            busy: 4,
            reserved: 0,
            call,
            ..Instant::default()
        }
    }

    #[test]
    fn evenly_spaced_identical_instants_fold_into_one_run() {
        let mut f = RunLength::default();
        let mut runs = Vec::new();
        for t in [0, 60, 120, 180] {
            runs.extend(f.push(&at(t, 3, Some(3))));
        }
        // A different spacing starts a new run, as does a different state.
        runs.extend(f.push(&at(200, 3, Some(3))));
        runs.extend(f.push(&at(260, 2, Some(3))));
        runs.extend(f.finish());
        let shape: Vec<_> = runs.iter().map(|r| (r.time, r.period, r.count)).collect();
        assert_eq!(shape, vec![(0, 60, 4), (200, 0, 1), (260, 0, 1)]);
        assert_eq!(runs[0].last(), 180);
    }

    #[test]
    fn many_instants_at_once_fold_as_one_by_one() {
        for (before, period, count) in [
            (vec![], 60, 5),
            (vec![0, 60], 60, 3),
            (vec![0, 30], 60, 4),
            (vec![0], 60, 1),
            (vec![0, 50], 60, 2),
        ] {
            let start = before.last().map_or(0, |t| t + period);
            let (mut one, mut many) = (RunLength::default(), RunLength::default());
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for &t in &before {
                a.extend(one.push(&at(t, 3, Some(3))));
                b.extend(many.push(&at(t, 3, Some(3))));
            }
            for k in 0..count {
                a.extend(one.push(&at(start + k as Time * period, 3, Some(3))));
            }
            many.push_many(&at(start, 3, Some(3)), period, count, &mut b);
            a.extend(one.finish());
            b.extend(many.finish());
            assert_eq!(a, b, "{before:?} then {count} every {period}");
        }
    }

    #[test]
    fn a_window_cuts_a_run_by_arithmetic() {
        let run = InstantRun {
            time: 100,
            period: 10,
            count: 5, // 100, 110, 120, 130, 140
            queue_len: 1,
            busy: 0,
            reserved: 0,
            call: Some(1),
            extra_calls: 0,
            extra_call_queue: 0,
        };
        assert_eq!(run.count_within(0, 1000), 5);
        assert_eq!(run.count_within(101, 1000), 4);
        assert_eq!(run.count_within(110, 130), 3);
        assert_eq!(run.count_within(141, 1000), 0);
        assert_eq!(run.count_within(0, 99), 0);
        assert_eq!(run.count_within(111, 119), 0);
    }
}
