//! Shortest job first: the shortest requested time first (the only runtime a scheduler may
//! know), ties in submission order.

use super::QueueOrder;
use crate::sim::job::{Job, Time};
use crate::sim::queue::Queue;

/// `order: sjf`. Its keys never change, so re-ordering periods do not matter.
#[derive(Clone, Debug, Default)]
pub struct ShortestFirst;

impl QueueOrder for ShortestFirst {
    fn order(&mut self, _now: Time, queue: &Queue, _jobs: &[Job], out: &mut Vec<usize>) {
        let requested: Vec<Time> = queue.iter().map(|q| q.requested_time).collect();
        out.clear();
        out.extend(0..queue.len());
        // Stable: equal requested times keep submission order.
        out.sort_by_key(|&p| requested[p]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;
    use crate::sim::scheduler::QueuedJob;

    #[test]
    fn shortest_first_ties_in_submission_order() {
        let q = |job, requested_time| QueuedJob {
            job,
            submit: 0,
            requested_time,
            demand: ResourceVec::units(1),
        };
        let queue: Queue = [q(0, 50), q(1, 10), q(2, 50), q(3, 5)]
            .into_iter()
            .collect();
        let mut out = Vec::new();
        ShortestFirst.order(0, &queue, &[], &mut out);
        assert_eq!(out, [3, 1, 0, 2]);
    }
}
