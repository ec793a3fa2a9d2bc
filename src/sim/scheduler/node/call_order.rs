//! [`CallOrder`]: the waiting jobs of one call of node-level EASY in the queue's order, as
//! workload indices — read from the queue itself in submission order, else from the order
//! written as indices ([`crate::sim::scheduler::order::QueueOrder::order_ids`]). The rule reads
//! every job's index but the positions of the jobs it starts only, so another order costs
//! neither a pass over the queue for positions nor a copy of it (BENCHMARKS.md, "Node-level
//! EASY in fairshare order (session 28)").

use crate::sim::queue::{self, Queue};

#[derive(Clone, Copy)]
pub enum CallOrder<'a> {
    Submission(&'a Queue),
    Ids(&'a [u32]),
}

impl<'a> CallOrder<'a> {
    /// The jobs from the k-th in order on.
    pub fn from(self, k: usize) -> Jobs<'a> {
        match self {
            CallOrder::Submission(queue) => Jobs::Queue(queue.iter_from(k)),
            CallOrder::Ids(ids) => Jobs::Ids(ids[k.min(ids.len())..].iter()),
        }
    }

    /// The queue position in `queue` (the queue this order is of) of `job`, the k-th in
    /// order: O(log queue) unless in submission order.
    #[inline]
    pub fn position(self, queue: &Queue, k: usize, job: u32) -> usize {
        match self {
            CallOrder::Submission(_) => k,
            CallOrder::Ids(_) => queue
                .position_of(job)
                .expect("the order holds waiting jobs only"),
        }
    }

    pub fn is_submission(self) -> bool {
        matches!(self, CallOrder::Submission(_))
    }
}

/// The jobs of a [`CallOrder`] from some place on.
pub enum Jobs<'a> {
    Queue(queue::Iter<'a>),
    Ids(std::slice::Iter<'a, u32>),
}

impl Iterator for Jobs<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Jobs::Queue(it) => it.next().map(|q| q.job),
            Jobs::Ids(it) => it.next().copied(),
        }
    }
}
