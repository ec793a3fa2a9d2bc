//! No backfilling (`policy: fcfs`, `backfill: none`): start queued jobs in queue order while the
//! next one fits; never start a job past one that is waiting. With the `fcfs` order this is
//! first-come first-served; with `fairshare` it is the paper's experiment ("only the job at the
//! head of the queue was eligible to run"). With reservations, "fits" means fits now and beside
//! every reservation until the job's requested time is up.
//!
//! The same pass, skipping a job that does not fit instead of stopping, is the aggressive rule
//! ([`super::Aggressive`]).

use super::order::{QueueOrder, Submission, Walk, report_ended};
use super::profile::Profile;
use super::{Scheduler, View};

/// What the pass does at a job that does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Blocked {
    /// Stop: nothing passes a waiting job.
    Stop,
    /// Skip it and try the next.
    Skip,
}

pub struct Fcfs {
    order: Box<dyn QueueOrder>,
    walk: Walk,
    profile: Profile,
    blocked: Blocked,
}

impl Default for Fcfs {
    fn default() -> Self {
        Fcfs::new(Box::new(Submission))
    }
}

impl Fcfs {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        Fcfs::with_blocked(order, Blocked::Stop)
    }

    pub(super) fn with_blocked(order: Box<dyn QueueOrder>, blocked: Blocked) -> Self {
        Fcfs {
            order,
            walk: Walk::default(),
            profile: Profile::default(),
            blocked,
        }
    }
}

impl Scheduler for Fcfs {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        report_ended(&mut *self.order, view.completed);
        // Stopping at the first job that does not fit, the pass reads the order lazily; skipping
        // it reads most of the queue, which the whole order gives more cheaply.
        match self.blocked {
            Blocked::Stop => {
                self.walk
                    .prepare_lazily(&mut *self.order, view.now, view.queue, view.jobs)
            }
            Blocked::Skip => self
                .walk
                .prepare(&mut *self.order, view.now, view.queue, view.jobs),
        }
        let planned = !view.reservations.is_empty();
        if planned {
            view.committed_profile(&mut self.profile);
        }
        let mut free = view.free;
        let mut blocked_yet = false;
        let mut jobs = self.walk.iter(&mut *self.order, view.queue);
        let mut k = 0;
        while let Some((pos, job)) = jobs.next() {
            k += 1;
            let fits = if planned {
                self.profile
                    .earliest_fit(view.now, job.requested_time, job.demand)
                    == Some(view.now)
            } else {
                job.demand.fits_in(&free)
            };
            if !fits {
                match self.blocked {
                    Blocked::Stop => break,
                    Blocked::Skip => {
                        // Past the first job that does not fit, the candidates come in their
                        // own order (`backfill_order`).
                        if !std::mem::replace(&mut blocked_yet, true) && self.walk.has_candidates()
                        {
                            self.walk.candidates_after(k - 1);
                            jobs = self.walk.iter_from(view.queue, k);
                        }
                        continue;
                    }
                }
            }
            if planned {
                self.profile
                    .reserve(view.now, view.now + job.requested_time, job.demand);
            }
            free -= job.demand;
            starts.push(pos);
            if !planned && free.unit_count() == 0 {
                break;
            }
        }
    }

    fn started(&mut self, now: crate::sim::job::Time, job: u32) {
        self.order.started(now, job, 0);
    }
}
