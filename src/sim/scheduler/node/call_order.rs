//! [`CallOrder`]: the waiting jobs of one call of node-level EASY in the queue's order, as
//! workload indices — read from the queue itself in submission order, from the runs an order
//! keeps by user where it keeps them
//! ([`crate::sim::scheduler::order::QueueOrder::order_runs`]: fairshare), else from the order's
//! positions written as indices. The rule reads every job's index but the positions of the jobs
//! it starts only, so fairshare order costs neither a pass over the queue for positions nor a
//! copy of it (BENCHMARKS.md, "Node-level EASY in fairshare order", sessions 28 and 32).

use crate::sim::queue::{self, Queue};
use crate::sim::scheduler::order::{OrderRuns, RunJobs};

#[derive(Clone, Copy)]
pub enum CallOrder<'a> {
    Submission(&'a Queue),
    Ids(&'a [u32]),
    /// Runs of jobs kept by the order ([`OrderRuns`]).
    Runs(OrderRuns<'a>),
}

impl<'a> CallOrder<'a> {
    /// The jobs from the k-th in order on.
    pub fn from(self, k: usize) -> Jobs<'a> {
        match self {
            CallOrder::Submission(queue) => Jobs::Queue(queue.iter_from(k)),
            CallOrder::Ids(ids) => Jobs::Ids(ids[k.min(ids.len())..].iter()),
            CallOrder::Runs(runs) => Jobs::Runs(runs.from(k)),
        }
    }

    /// The queue position in `queue` (the queue this order is of) of `job`, the k-th in
    /// order: O(log queue) unless in submission order.
    #[inline]
    pub fn position(self, queue: &Queue, k: usize, job: u32) -> usize {
        match self {
            CallOrder::Submission(_) => k,
            CallOrder::Ids(_) | CallOrder::Runs(_) => queue
                .position_of(job)
                .expect("the order holds waiting jobs only"),
        }
    }
}

/// The jobs of a [`CallOrder`] from some place on.
pub enum Jobs<'a> {
    Queue(queue::Iter<'a>),
    Ids(std::slice::Iter<'a, u32>),
    Runs(RunJobs<'a>),
}

impl Iterator for Jobs<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Jobs::Queue(it) => it.next().map(|q| q.job),
            Jobs::Ids(it) => it.next().copied(),
            Jobs::Runs(it) => it.next(),
        }
    }
}
