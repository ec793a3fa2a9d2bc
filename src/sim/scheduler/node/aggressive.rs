//! Aggressive backfilling on nodes (`backfill: aggressive`): walk the queue in order and start
//! every job that fits now on some class (in placement order); no job holds a reservation
//! (AleaNG's `FairshareAggressiveBackfilling`, Batsim's filler). With advance reservations,
//! "fits" means fits beside every reservation until the job's requested time is up.

use super::fcfs::NodeFcfs;
use super::{Decisions, NodeScheduler, NodeView};
use crate::sim::scheduler::order::QueueOrder;

pub struct NodeAggressive(NodeFcfs);

impl NodeAggressive {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        NodeAggressive(NodeFcfs::skipping(order))
    }
}

impl NodeScheduler for NodeAggressive {
    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        self.0.schedule(view, decisions);
    }

    fn started(&mut self, now: crate::sim::job::Time, job: u32, class: u32) {
        self.0.started(now, job, class);
    }
}
