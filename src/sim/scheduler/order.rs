//! Queue orders: the order in which a backfilling rule considers the waiting jobs — one of the
//! three components of a policy (order × backfilling rule × placement).
//!
//! Today's order is submission order ([`Submission`]), which reads the queue as it is; priority
//! orders such as fairshare plug in here by returning positions. Whatever the order,
//! *backfilled* keeps its definition (a job starting while an earlier-submitted one waits).

use super::QueuedJob;
use crate::sim::job::{Job, Time};
use crate::sim::queue::{self, Queue};

/// Decides the order of the waiting jobs.
pub trait QueueOrder {
    /// Writes into `out` the positions of `queue` (waiting jobs in submission order) in the
    /// order a backfilling rule should consider them, every position exactly once, and returns
    /// true; or returns false, writing nothing, to mean submission order.
    fn order(&mut self, now: Time, queue: &Queue, jobs: &[Job], out: &mut Vec<usize>) -> bool;
}

/// First come, first served: submission order.
#[derive(Clone, Copy, Debug, Default)]
pub struct Submission;

impl QueueOrder for Submission {
    fn order(&mut self, _: Time, _: &Queue, _: &[Job], _: &mut Vec<usize>) -> bool {
        false
    }
}

/// The waiting jobs with their queue positions, in the order of a [`QueueOrder`]: read lazily
/// from the queue in submission order (a policy that stops early pays for what it reads), or
/// through the positions the order wrote.
pub enum Ordered<'a> {
    Submission(std::iter::Enumerate<queue::Iter<'a>>),
    Positions(&'a Queue, std::slice::Iter<'a, usize>),
}

impl<'a> Ordered<'a> {
    /// `queue` in the order `order` gives, using `scratch` for positions.
    pub fn new(
        order: &mut dyn QueueOrder,
        now: Time,
        queue: &'a Queue,
        jobs: &[Job],
        scratch: &'a mut Vec<usize>,
    ) -> Self {
        scratch.clear();
        if order.order(now, queue, jobs, scratch) {
            Ordered::Positions(queue, scratch.iter())
        } else {
            Ordered::Submission(queue.iter().enumerate())
        }
    }
}

impl Iterator for Ordered<'_> {
    type Item = (usize, QueuedJob);

    #[inline]
    fn next(&mut self) -> Option<(usize, QueuedJob)> {
        match self {
            Ordered::Submission(it) => it.next().map(|(pos, q)| (pos, *q)),
            Ordered::Positions(queue, it) => it.next().map(|&pos| (pos, queue[pos])),
        }
    }
}
