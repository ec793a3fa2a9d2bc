//! Aggressive backfilling (`backfill: aggressive`): walk the queue in order and start every job
//! that fits now; no job holds a reservation, so a large job at the head may wait as long as
//! smaller ones keep fitting (AleaNG's `FairshareAggressiveBackfilling`, Batsim's filler). With
//! advance reservations, "fits" means fits now and beside every reservation until the job's
//! requested time is up.

use super::fcfs::{Blocked, Fcfs};
use super::order::QueueOrder;
use super::{Scheduler, View};

pub struct Aggressive(Fcfs);

impl Aggressive {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        Aggressive(Fcfs::with_blocked(order, Blocked::Skip))
    }
}

impl Scheduler for Aggressive {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        self.0.schedule(view, starts);
    }

    fn started(&mut self, now: crate::sim::job::Time, job: u32) {
        self.0.started(now, job);
    }
}
