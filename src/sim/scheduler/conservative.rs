//! Conservative backfilling (Mu'alem & Feitelson, 2001): every queued job holds a reservation in
//! an availability [`Profile`] computed from requested times. A new job gets the earliest slot
//! that delays no existing reservation; at every call the queue is *compressed* in submission
//! order — each job gives back its reservation and takes the earliest slot again, which is never
//! later than before — and jobs whose reservation starts now are started.
//!
//! Granted advance reservations are part of the profile before any queued job, so no job is ever
//! planned into reserved capacity.
//!
//! This matches pyss's `ConservativeScheduler` (reservations kept in submission order, compression
//! after early terminations), which the fixtures in `shared/fixtures/pyss` come from.
//!
//! Over another queue order, compression goes in that order, and whenever the order is no
//! longer the one the plan was made in (the previous order of the jobs still waiting, then the
//! arrivals in submission order: [`OrderTracker`]) every reservation is dropped and the queue is
//! planned afresh in the new order — reservations are then a plan, not a promise
//! (docs/semantics.md, "Conservative over a priority order").

use std::collections::HashMap;

use super::order::{OrderTracker, QueueOrder, Submission, Walk, report_ended};
use super::profile::Profile;
use super::{Scheduler, View};
use crate::sim::job::Time;

pub struct Conservative {
    order: Box<dyn QueueOrder>,
    walk: Walk,
    tracker: OrderTracker,
    profile: Profile,
    /// Reserved start of every queued job seen so far, by workload index.
    reserved: HashMap<u32, Time>,
}

impl Default for Conservative {
    fn default() -> Self {
        Conservative::new(Box::new(Submission))
    }
}

impl Conservative {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        Conservative {
            order,
            walk: Walk::default(),
            tracker: OrderTracker::default(),
            profile: Profile::default(),
            reserved: HashMap::new(),
        }
    }

    /// The reserved start of a queued job after the last call, if it has one.
    pub fn reservation(&self, job: u32) -> Option<Time> {
        self.reserved.get(&job).copied()
    }
}

impl Scheduler for Conservative {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        report_ended(&mut *self.order, view.completed);
        self.walk
            .prepare(&mut *self.order, now, view.queue, view.jobs);
        if !self.walk.is_identity() && self.tracker.changed(view.queue, self.walk.positions()) {
            self.reserved.clear();
        }
        let from = starts.len();
        // Running jobs and reservations first: queued jobs are planned around both.
        view.committed_profile(&mut self.profile);
        // Existing reservations hold their place while earlier jobs are compressed. One already
        // in the past (missed between two periodic calls) is stale: that job is placed afresh.
        let mut held = Vec::with_capacity(view.queue.len());
        for pos in self.walk.from(0) {
            let job = &view.queue[pos];
            let slot = self.reserved.get(&job.job).copied().filter(|&s| s >= now);
            if let Some(s) = slot {
                self.profile.reserve(s, s + job.requested_time, job.demand);
            }
            held.push(slot);
        }
        let mut next = HashMap::with_capacity(view.queue.len());
        for (pos, slot) in self.walk.from(0).zip(held) {
            let job = &view.queue[pos];
            if let Some(s) = slot {
                self.profile
                    .unreserve(s, s + job.requested_time, job.demand);
            }
            let Some(start) = self
                .profile
                .earliest_fit(now, job.requested_time, job.demand)
            else {
                continue; // cannot fit the machine at all; the engine never queues such jobs
            };
            self.profile
                .reserve(start, start + job.requested_time, job.demand);
            if start == now {
                starts.push(pos);
            } else {
                next.insert(job.job, start);
            }
        }
        self.reserved = next;
        for &pos in &starts[from..] {
            self.order.started(now, view.queue[pos].job, 0);
        }
    }
}
