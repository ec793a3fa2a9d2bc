//! Queue priority tiers: the queue priority of a run with queues ([`crate::sim::limits`]) as the
//! leading key over any other order — every waiting job of a higher-priority queue comes before
//! every job of a lower one, and within a tier the wrapped order (fcfs, fairshare, sjf,
//! priority) decides. This is "shorter queues served first" at LPC (Medernach, "Local
//! situation"), AleaNG's `by_queue=true` (queues walked one by one in priority order) and Slurm's
//! partition `PriorityTier`. docs/queues.md, "Priorities".
//!
//! The backfilling rule is untouched: EASY reserves for the first job *in this order* (the head
//! of the highest non-empty tier) and backfills the rest; conservative plans every job in this
//! order; aggressive starts whatever fits in this order.

use super::QueueOrder;
use crate::sim::job::{Job, Time};
use crate::sim::queue::Queue;

/// `inner` with every job's tier in front (tier 0 first).
pub struct Tiered {
    /// Per workload job: its tier, 0 for the highest queue priority.
    tier: Vec<u32>,
    inner: Box<dyn QueueOrder>,
    /// One bucket of queue positions per tier (reused between calls).
    buckets: Vec<Vec<usize>>,
}

impl Tiered {
    /// `priority` per workload job (higher first; jobs no queue takes can have any value: they
    /// never wait) over `inner`.
    pub fn new(priority: &[i64], inner: Box<dyn QueueOrder>) -> Self {
        let mut levels: Vec<i64> = priority.to_vec();
        levels.sort_unstable_by(|a, b| b.cmp(a));
        levels.dedup();
        let tier = priority
            .iter()
            .map(|p| levels.partition_point(|l| l > p) as u32)
            .collect();
        Tiered {
            tier,
            inner,
            buckets: vec![Vec::new(); levels.len().max(1)],
        }
    }
}

impl QueueOrder for Tiered {
    fn order(&mut self, now: Time, queue: &Queue, jobs: &[Job], out: &mut Vec<usize>) {
        self.inner.order(now, queue, jobs, out);
        // A stable bucket pass: O(queue), the inner order kept within each tier.
        for b in &mut self.buckets {
            b.clear();
        }
        for &pos in out.iter() {
            let tier = self.tier[queue[pos].job as usize] as usize;
            self.buckets[tier].push(pos);
        }
        out.clear();
        for b in &self.buckets {
            out.extend_from_slice(b);
        }
    }

    fn started(&mut self, now: Time, job: u32, class: u32) {
        self.inner.started(now, job, class);
    }

    fn ended(&mut self, job: u32, end: Time) {
        self.inner.ended(job, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;
    use crate::sim::scheduler::QueuedJob;
    use crate::sim::scheduler::order::{ShortestFirst, Submission};

    fn queue(requested: &[Time]) -> (Queue, Vec<Job>) {
        let jobs: Vec<Job> = requested
            .iter()
            .map(|&r| Job {
                requested_time: r,
                runtime: r,
                procs: 1,
                ..Job::default()
            })
            .collect();
        let q = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| QueuedJob {
                job: i as u32,
                submit: i as Time,
                requested_time: j.requested_time,
                demand: ResourceVec::units(1),
            })
            .collect();
        (q, jobs)
    }

    #[test]
    fn higher_tiers_first_and_the_inner_order_within_each() {
        // Jobs 0..5 with priorities 10, 50, 10, 50, 20: tiers 50 {1, 3}, 20 {4}, 10 {0, 2}.
        let (q, jobs) = queue(&[5, 9, 1, 3, 7]);
        let priority = [10, 50, 10, 50, 20];
        let mut out = Vec::new();
        Tiered::new(&priority, Box::new(Submission)).order(0, &q, &jobs, &mut out);
        assert_eq!(out, [1, 3, 4, 0, 2]);
        // Shortest first within tiers: 3 (3 s) before 1 (9 s), 2 (1 s) before 0 (5 s).
        Tiered::new(&priority, Box::new(ShortestFirst)).order(0, &q, &jobs, &mut out);
        assert_eq!(out, [3, 1, 4, 2, 0]);
    }

    #[test]
    fn one_priority_is_the_inner_order() {
        let (q, jobs) = queue(&[5, 9, 1, 3]);
        let mut out = Vec::new();
        Tiered::new(&[7; 4], Box::new(ShortestFirst)).order(0, &q, &jobs, &mut out);
        assert_eq!(out, [2, 3, 0, 1]);
    }
}
