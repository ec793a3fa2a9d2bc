//! [`OrderRuns`]: one call's order as runs of waiting jobs that the order holds itself, each
//! run the jobs of one owner — in fairshare order, a user alone at their key, in submission
//! order — or of several merged ([`NO_OWNER`]), with a stamp that changes whenever that owner's
//! waiting jobs do ([`Run`]). A rule that reads jobs in order and passes over most by what
//! they request (node-level EASY's backfilling, [`crate::sim::scheduler::node`]) then reads the
//! order where it is kept, without a copy of it per call, and passes over a whole run at once
//! when every request among its jobs already failed, keeping what each owner requests between
//! calls while their stamp holds (issue 36).

use super::UserQueues;
use crate::sim::scheduler::QueuedJob;

/// The owner of a run with no single owner (users of equal keys merged in submission order).
pub const NO_OWNER: u32 = u32::MAX;

/// A run of an order ([`OrderRuns`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run<'a> {
    /// The dense index of the run's owner, or [`NO_OWNER`].
    pub owner: u32,
    /// Two runs of one owner with the same stamp, from the same order, hold the same jobs: the
    /// order gives the owner a new stamp whenever a job of theirs arrives or starts, and
    /// whenever it rebuilds what it keeps.
    pub stamp: u64,
    /// The run's jobs, in order.
    pub jobs: &'a [QueuedJob],
}

/// One call's order as runs, borrowed from the order until the call's starts are reported.
#[derive(Clone, Copy)]
pub struct OrderRuns<'a> {
    queues: &'a UserQueues,
}

impl<'a> OrderRuns<'a> {
    pub(super) fn new(queues: &'a UserQueues) -> Self {
        OrderRuns { queues }
    }

    /// The runs, in order.
    pub fn iter(self) -> Runs<'a> {
        Runs {
            queues: self.queues,
            at: 0,
            merged: 0,
        }
    }

    /// The waiting jobs in order, from the k-th on: O(runs before it) to find it.
    pub fn from(self, k: usize) -> RunJobs<'a> {
        let mut runs = self.iter();
        let mut skipped = 0;
        for run in runs.by_ref() {
            if skipped + run.jobs.len() > k {
                let jobs = run.jobs[k - skipped..].iter();
                return RunJobs { runs, jobs };
            }
            skipped += run.jobs.len();
        }
        RunJobs {
            runs,
            jobs: [].iter(),
        }
    }
}

/// The runs of an [`OrderRuns`], in order.
#[derive(Clone)]
pub struct Runs<'a> {
    queues: &'a UserQueues,
    /// The next run's place in the users sorted, and the next group of several users merged.
    at: usize,
    merged: usize,
}

impl<'a> Iterator for Runs<'a> {
    type Item = Run<'a>;

    #[inline]
    fn next(&mut self) -> Option<Run<'a>> {
        let (run, at, merged) = self.queues.run_at(self.at, self.merged)?;
        (self.at, self.merged) = (at, merged);
        Some(run)
    }
}

/// The jobs of an [`OrderRuns`] from some place on, as their workload indices.
#[derive(Clone)]
pub struct RunJobs<'a> {
    runs: Runs<'a>,
    jobs: std::slice::Iter<'a, QueuedJob>,
}

impl Iterator for RunJobs<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        loop {
            if let Some(q) = self.jobs.next() {
                return Some(q.job);
            }
            self.jobs = self.runs.next()?.jobs.iter();
        }
    }
}
