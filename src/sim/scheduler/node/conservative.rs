//! Conservative backfilling on nodes (Mu'alem & Feitelson, 2001; docs/semantics.md): every
//! queued job holds a reservation in a [`Timeline`] — on concrete nodes of a shared class, as a
//! count of a whole-node class's interchangeable nodes — computed from requested times. A new
//! job gets the earliest slot, over its eligible classes (ties in placement order), that delays
//! no existing reservation; jobs whose reservation starts now are started.
//!
//! The plan is kept between calls and only *compressed* when it can improve or has become
//! invalid: after a job ended before its requested time, while a job overruns its request
//! (`overrun: continue`), when a reservation is granted, or when a reservation fell between two
//! periodic calls (stale: that job is placed afresh). Compression goes through the queue in
//! order: each job gives back its reservation and takes the earliest slot again; it keeps its
//! old slot (nodes included) unless a strictly earlier one exists, so it never starts later than
//! reserved. A compression that moved a job is followed by another at the next call (a job
//! compressed before it may now fit earlier). Otherwise compressing again would change
//! nothing, and an arrival cannot move anyone earlier, so arrivals are simply placed after the
//! existing reservations — the decisions are those of compressing at every call (as pyss does),
//! at a fraction of the cost.
//!
//! Over another queue order, compression goes in that order, and whenever the order is no
//! longer the one the plan was made in (the previous order of the jobs still waiting, then the
//! arrivals in submission order: [`OrderTracker`]) every reservation is dropped and the queue is
//! planned afresh in the new order (docs/semantics.md, "Conservative over a priority order").

use std::collections::{BTreeSet, HashMap};

use super::pass::Pass;
use super::{Decisions, NodeScheduler, NodeView};
use crate::sim::job::Time;
use crate::sim::scheduler::QueuedJob;
use crate::sim::scheduler::order::{OrderTracker, QueueOrder, report_ended};
use crate::sim::topology::{NodeShape, Timeline};

/// A queued job's reservation.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Plan {
    start: Time,
    class: u32,
    shape: NodeShape,
    /// Concrete nodes on a shared class; empty on a whole-node class.
    nodes: Vec<u32>,
}

pub struct NodeConservative {
    order: Box<dyn QueueOrder>,
    positions: Vec<usize>,
    tracker: OrderTracker,
    pass: Pass,
    tl: Timeline,
    nodes: Vec<u32>,
    plans: HashMap<u32, Plan>,
    by_start: BTreeSet<(Time, u32)>,
    /// The queue prefix planned so far: later entries arrived since the last call.
    planned: usize,
    ordered: Vec<(usize, QueuedJob)>,
    epoch: Option<u64>,
    /// The last compression moved a job: a job compressed before it may now fit earlier, so
    /// the next call compresses again.
    unsettled: bool,
}

impl NodeConservative {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        NodeConservative {
            order,
            positions: Vec::new(),
            tracker: OrderTracker::default(),
            pass: Pass::default(),
            tl: Timeline::default(),
            nodes: Vec::new(),
            plans: HashMap::new(),
            by_start: BTreeSet::new(),
            planned: 0,
            ordered: Vec::new(),
            epoch: None,
            unsettled: false,
        }
    }

    /// The reserved start of a queued job after the last call, if it has one.
    pub fn reservation(&self, job: u32) -> Option<Time> {
        self.plans.get(&job).map(|p| p.start)
    }

    fn hold(&mut self, plan: &Plan, requested: Time) {
        self.tl.hold(
            plan.class,
            &plan.shape,
            &plan.nodes,
            plan.start,
            plan.start + requested,
        );
    }

    /// The earliest slot of `job` over its classes (ties: the first class in placement order).
    fn earliest(&mut self, view: &NodeView<'_>, job: u32) -> Option<(Time, u32, NodeShape)> {
        let requested = view.jobs[job as usize].requested_time;
        let mut best: Option<(Time, u32, NodeShape)> = None;
        for &class in view.classes_of(job) {
            let Some(shape) = view.shape(job, class) else {
                continue;
            };
            let from = view.now;
            if let Some(t) = self
                .tl
                .earliest(view.layout, class, &shape, from, requested)
                && best.is_none_or(|b| t < b.0)
            {
                best = Some((t, class, shape));
                if t == view.now {
                    break;
                }
            }
        }
        best
    }

    /// Plans `job` at its earliest slot `best` and holds it.
    fn place(
        &mut self,
        view: &NodeView<'_>,
        job: u32,
        best: Option<(Time, u32, NodeShape)>,
    ) -> Option<Plan> {
        let requested = view.jobs[job as usize].requested_time;
        let (start, class, shape) = best?;
        let mut nodes = Vec::new();
        if !self.tl.is_whole(class) {
            let found = self.tl.select(
                view.layout,
                class,
                &shape,
                start,
                requested,
                view.placement,
                &mut nodes,
            );
            debug_assert!(found, "an earliest fit has nodes");
        }
        let plan = Plan {
            start,
            class,
            shape,
            nodes,
        };
        self.hold(&plan, requested);
        Some(plan)
    }

    /// Whether `plan` (not held) still fits where it is.
    fn still_fits(&self, view: &NodeView<'_>, plan: &Plan, requested: Time) -> bool {
        let end = plan.start + requested;
        if self.tl.is_whole(plan.class) {
            return self.tl.idle_min(plan.class, plan.start, end) >= i64::from(plan.shape.count);
        }
        plan.nodes.iter().enumerate().all(|(i, &node)| {
            let need = crate::sim::topology::steps::vector(plan.shape.amount(i as u32));
            use crate::sim::topology::steps::Amount;
            self.tl.node_min(node, plan.start, end).covers(&need)
        }) && plan.start >= view.now
    }

    /// Rebuilds the timeline from the committed state and compresses the queue; `afresh`: the
    /// order changed, every reservation is dropped and the queue planned anew in its order
    /// (`self.positions` already holds it).
    fn replan(&mut self, view: &NodeView<'_>, afresh: bool) {
        let now = view.now;
        view.committed_timeline(&mut self.tl);
        let mut ordered = std::mem::take(&mut self.ordered);
        ordered.clear();
        if self.order.is_submission() {
            ordered.extend(view.queue.iter().copied().enumerate());
        } else {
            // `schedule` computed this call's order into `self.positions`.
            ordered.extend(self.positions.iter().map(|&pos| (pos, view.queue[pos])));
        }
        let mut old = std::mem::take(&mut self.plans);
        old.retain(|_, p| p.start >= now && !afresh);
        for (_, q) in &ordered {
            if let Some(p) = old.get(&q.job) {
                let end = p.start + q.requested_time;
                self.tl.hold(p.class, &p.shape, &p.nodes, p.start, end);
            }
        }
        self.by_start.clear();
        self.unsettled = false;
        for &(_, q) in &ordered {
            let previous = old.remove(&q.job);
            let previous_start = previous.as_ref().map(|p| p.start);
            if let Some(p) = &previous {
                self.tl.unhold(
                    p.class,
                    &p.shape,
                    &p.nodes,
                    p.start,
                    p.start + q.requested_time,
                );
            }
            let best = self.earliest(view, q.job);
            let keep = previous.filter(|p| {
                best.is_none_or(|e| e.0 >= p.start) && self.still_fits(view, p, q.requested_time)
            });
            let plan = match keep {
                Some(p) => {
                    self.hold(&p, q.requested_time);
                    Some(p)
                }
                None => self.place(view, q.job, best),
            };
            if let Some(plan) = plan {
                self.unsettled |= previous_start.is_some_and(|s| s != plan.start);
                self.by_start.insert((plan.start, q.job));
                self.plans.insert(q.job, plan);
            }
        }
        self.ordered = ordered;
    }
}

impl NodeScheduler for NodeConservative {
    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        let now = view.now;
        report_ended(&mut *self.order, view.completed);
        let afresh = !self.order.is_submission() && {
            self.order
                .order(now, view.queue, view.jobs, &mut self.positions);
            self.tracker.changed(view.queue, &self.positions)
        };
        self.pass.begin(view);
        let early = view.completed.iter().any(|c| c.end < c.expected_end);
        let overrun = view
            .running
            .iter()
            .next()
            .is_some_and(|r| r.expected_end <= now);
        let stale = self.by_start.first().is_some_and(|&(t, _)| t < now);
        let replan = afresh
            || early
            || overrun
            || stale
            || self.unsettled
            || self.epoch != Some(view.reservations_epoch);
        self.epoch = Some(view.reservations_epoch);
        if replan {
            self.replan(view, afresh);
        } else {
            self.tl.advance(view.layout, now);
            for q in view.queue.iter_from(self.planned) {
                let best = self.earliest(view, q.job);
                if let Some(plan) = self.place(view, q.job, best) {
                    self.by_start.insert((plan.start, q.job));
                    self.plans.insert(q.job, plan);
                }
            }
        }
        let before = decisions.starts().len();
        while let Some(&(start, job)) = self.by_start.first() {
            if start != now {
                break;
            }
            self.by_start.pop_first();
            let plan = self.plans.remove(&job).expect("a planned job has a plan");
            let Some(pos) = view.queue.position_of(job) else {
                continue;
            };
            if self.tl.is_whole(plan.class) {
                if !self
                    .pass
                    .select_any(view, plan.class, &plan.shape, &mut self.nodes)
                {
                    // The plan promised idle nodes the engine does not have: let the engine
                    // report it rather than hide it.
                    self.nodes.clear();
                }
            } else {
                self.nodes.clone_from(&plan.nodes);
            }
            self.pass.take(view, plan.class, &plan.shape, &self.nodes);
            decisions.start(pos, plan.class, &self.nodes);
        }
        for d in &decisions.starts()[before..] {
            self.order.started(now, view.queue[d.pos].job, d.class);
        }
        // What stays queued after these starts has been planned; later entries are arrivals.
        self.planned = view.queue.len() - (decisions.starts().len() - before);
    }
}
