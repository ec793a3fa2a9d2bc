//! Shortest job first: the shortest requested time first (the only runtime a scheduler may
//! know), ties in submission order.

use super::QueueOrder;
use crate::sim::job::{Job, Time};
use crate::sim::scheduler::QueuedJob;

/// `order: sjf`. Its keys never change, so re-ordering periods do not matter.
#[derive(Clone, Debug, Default)]
pub struct ShortestFirst;

impl QueueOrder for ShortestFirst {
    fn order(&mut self, _now: Time, queue: &[QueuedJob], _jobs: &[Job], out: &mut Vec<usize>) {
        out.clear();
        out.extend(0..queue.len());
        // Stable: equal requested times keep submission order.
        out.sort_by_key(|&p| queue[p].requested_time);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;

    #[test]
    fn shortest_first_ties_in_submission_order() {
        let q = |job, requested_time| QueuedJob {
            job,
            submit: 0,
            requested_time,
            demand: ResourceVec::units(1),
        };
        let queue = [q(0, 50), q(1, 10), q(2, 50), q(3, 5)];
        let mut out = Vec::new();
        ShortestFirst.order(0, &queue, &[], &mut out);
        assert_eq!(out, [3, 1, 0, 2]);
    }
}
