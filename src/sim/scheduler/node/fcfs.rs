//! First-come first-served on nodes: start queued jobs in queue order while each fits now (on
//! the first class, in placement order, with enough nodes free for its per-node amounts); never
//! start a job past one that is waiting. With advance reservations, "fits" means fits beside
//! every reservation until the job's requested time is up (planned on a [`Timeline`]).
//!
//! The same pass, skipping a job that does not fit instead of stopping, is the aggressive rule
//! ([`super::NodeAggressive`]).

use super::pass::Pass;
use super::{Decisions, NodeScheduler, NodeView};
use crate::sim::scheduler::order::{QueueOrder, Walk, report_ended};
use crate::sim::topology::Timeline;

pub struct NodeFcfs {
    order: Box<dyn QueueOrder>,
    walk: Walk,
    pass: Pass,
    tl: Timeline,
    nodes: Vec<u32>,
    /// Skip a job that does not fit (aggressive) instead of stopping there.
    skip_blocked: bool,
}

impl NodeFcfs {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        NodeFcfs {
            order,
            walk: Walk::default(),
            pass: Pass::default(),
            tl: Timeline::default(),
            nodes: Vec::new(),
            skip_blocked: false,
        }
    }

    /// The pass that skips blocked jobs: aggressive backfilling.
    pub(super) fn skipping(order: Box<dyn QueueOrder>) -> Self {
        NodeFcfs {
            skip_blocked: true,
            ..NodeFcfs::new(order)
        }
    }
}

impl NodeScheduler for NodeFcfs {
    fn started(&mut self, now: crate::sim::job::Time, job: u32, class: u32) {
        self.order.started(now, job, class);
    }

    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        report_ended(&mut *self.order, view.completed);
        self.pass.begin(view);
        let planned = !view.reservations.is_empty();
        if planned {
            view.committed_timeline(&mut self.tl);
        }
        let now = view.now;
        // Stopping at the first job that does not fit, the pass reads the order lazily; skipping
        // it reads most of the queue, which the whole order gives more cheaply.
        let order = &mut *self.order;
        if self.skip_blocked {
            self.walk.prepare(order, now, view.queue, view.jobs);
        } else {
            self.walk.prepare_lazily(order, now, view.queue, view.jobs);
        }
        let queue = self.walk.iter(order, view.queue);
        'queue: for (pos, q) in queue {
            for &class in view.classes_of(q.job) {
                let Some(shape) = view.shape(q.job, class) else {
                    continue;
                };
                let fits = if !planned {
                    self.pass.select_any(view, class, &shape, &mut self.nodes)
                } else if self.tl.is_whole(class) {
                    self.tl.idle_min(class, now, now + q.requested_time) >= i64::from(shape.count)
                        && self.pass.select_any(view, class, &shape, &mut self.nodes)
                } else {
                    self.pass.may_fit(view, class, &shape)
                        && self.tl.select(
                            view.layout,
                            class,
                            &shape,
                            now,
                            q.requested_time,
                            view.placement,
                            &mut self.nodes,
                        )
                };
                if fits {
                    if planned {
                        self.tl
                            .hold(class, &shape, &self.nodes, now, now + q.requested_time);
                    }
                    self.pass.take(view, class, &shape, &self.nodes);
                    decisions.start(pos, class, &self.nodes);
                    continue 'queue;
                }
            }
            if !self.skip_blocked {
                break;
            }
        }
    }
}
