//! The set of running jobs, ordered by expected termination (start + requested time), the order
//! in which EASY's shadow-time computation and conservative's profile consume them.

use std::collections::BTreeMap;

use super::job::Time;
use super::resources::ResourceVec;

/// A running job as schedulers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunningJob {
    /// Index of the job in the workload (its submission order).
    pub job: u32,
    pub start: Time,
    /// start + requested time: when the scheduler expects the job to end. It may lie in the past
    /// for a job allowed to overrun its request ([`super::Overrun::Continue`]).
    pub expected_end: Time,
    pub demand: ResourceVec,
}

/// Running jobs keyed by `(expected_end, job)`, so iteration is in expected-termination order
/// with ties broken by submission order.
#[derive(Clone, Debug, Default)]
pub struct RunningSet {
    by_expected_end: BTreeMap<(Time, u32), RunningJob>,
}

impl RunningSet {
    pub fn insert(&mut self, job: RunningJob) {
        self.by_expected_end
            .insert((job.expected_end, job.job), job);
    }

    pub fn remove(&mut self, expected_end: Time, job: u32) -> Option<RunningJob> {
        self.by_expected_end.remove(&(expected_end, job))
    }

    /// Running jobs in order of expected termination.
    pub fn iter(&self) -> impl Iterator<Item = &RunningJob> + '_ {
        self.by_expected_end.values()
    }

    pub fn len(&self) -> usize {
        self.by_expected_end.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_expected_end.is_empty()
    }
}
