//! EASY backfilling on nodes (docs/semantics.md, "EASY on a topology"):
//!
//! 1. In queue order, start each job while it fits now (on the first class, in placement
//!    order, with enough nodes free for its per-node amounts).
//! 2. For the first job that does not — the head — compute its shadow time on nodes
//!    ([`super::shadow`]).
//! 3. Backfill: every later job that fits now starts if it ends (by its requested time) no
//!    later than the shadow time, or if, taking its nodes from what would be free at the shadow
//!    time, it leaves the head able to fit then.
//!
//! Without advance reservations this runs on the current state and the running jobs' releases
//! (the fast path); with them, on a [`Timeline`] ([`super::easy_timeline`]) — the same rule,
//! where "fits now" means fits beside every reservation until the job's requested time is up.
//! A property test runs both on random topologies.
//!
//! Once more than [`SCAN_LIMIT`] jobs follow the head, backfilling asks the [`WaitingGroups`]
//! index for the jobs the walk would try instead of walking the queue: the same jobs, tried in
//! the same order (tests/node_easy_index.rs) — merged from its groups in submission order; in
//! another order, read past the head from the order's runs by user or its job indices
//! ([`CallOrder`]), each passed over by its request's dense number when that request already
//! failed, and a whole run when all its requests did ([`WaitingGroups::backfill_runs`]).

use super::call_order::CallOrder;
use super::carry::Carry;
use super::easy_timeline::EasyOnTimeline;
use super::pass::{Failed, Pass};
use super::request_shapes::RequestShapes;
use super::shadow::{Shadow, Started};
use super::waiting::{Tried, WaitingGroups};
use super::{Decisions, NodeScheduler, NodeView};
use crate::sim::scheduler::order::{QueueOrder, Submission, Walk, report_ended};

pub struct NodeEasy {
    order: Box<dyn QueueOrder>,
    /// The queue in this call's order with positions and a copy of the queue, for the timeline
    /// (reservations) and for orders that keep no runs ([`QueueOrder::order_runs`]), whose
    /// positions are copied as indices.
    walk: Walk,
    pass: Pass,
    shadow: Shadow,
    started: Vec<Started>,
    started_nodes: Vec<u32>,
    nodes: Vec<u32>,
    failed: Failed,
    on_timeline: EasyOnTimeline,
    /// Always use the timeline formulation (for the equivalence tests).
    always_timeline: bool,
    last_shadow: Option<(u32, crate::sim::job::Time)>,
    /// The waiting jobs by request, for backfilling past long queues in submission order.
    index: WaitingGroups,
    /// Backfilling asks the index when more than this many jobs follow the head.
    scan_limit: usize,
    /// What the last call leaves to this one if nothing was freed in between.
    carry: Carry,
    /// The index's requests' shapes.
    shapes: RequestShapes,
    /// This call's order as the jobs' indices, when neither submission order nor kept in runs.
    ids: Vec<u32>,
}

/// Backfilling walks the queue job by job when at most this many jobs follow the head, and asks
/// the [`WaitingGroups`] beyond; both start the same jobs. Zero: measured with callgrind on the
/// Curie-shaped windows, METACENTRUM-2009 and wagap-2013, the index costs no more than the walk
/// on short queues and less on every longer one (BENCHMARKS.md, session 26); a test may set
/// another limit ([`NodeEasy::with_scan_limit`]).
const SCAN_LIMIT: usize = 0;

impl NodeEasy {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        NodeEasy {
            order,
            walk: Walk::default(),
            pass: Pass::default(),
            shadow: Shadow::default(),
            started: Vec::new(),
            started_nodes: Vec::new(),
            nodes: Vec::new(),
            failed: Failed::default(),
            on_timeline: EasyOnTimeline::default(),
            always_timeline: false,
            last_shadow: None,
            index: WaitingGroups::default(),
            scan_limit: SCAN_LIMIT,
            carry: Carry::default(),
            shapes: RequestShapes::default(),
            ids: Vec::new(),
        }
    }

    /// The same rule asking the index as soon as more than `n` jobs follow the head (0: at every
    /// backfilling pass in submission order; `usize::MAX`: never), for the tests.
    #[doc(hidden)]
    pub fn with_scan_limit(mut self, n: usize) -> Self {
        self.scan_limit = n;
        self
    }

    /// EASY that always plans on a timeline: the same decisions by another computation.
    pub fn on_timeline(order: Box<dyn QueueOrder>) -> Self {
        NodeEasy {
            always_timeline: true,
            ..Self::new(order)
        }
    }

    /// The blocked head of the last call and its shadow time, if there was one.
    pub fn last_shadow(&self) -> Option<(u32, crate::sim::job::Time)> {
        self.last_shadow
    }
}

impl NodeScheduler for NodeEasy {
    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        report_ended(&mut *self.order, view.completed);
        self.decide(view, decisions);
    }

    fn started(&mut self, now: crate::sim::job::Time, job: u32, class: u32) {
        self.order.started(now, job, class);
        self.index.started(job);
        self.carry.applied();
    }
}

impl NodeEasy {
    fn decide(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        let now = view.now;
        let carried = self.carry.take(view);
        self.pass.begin(view);
        self.last_shadow = None;
        if self.always_timeline || !view.reservations.is_empty() {
            self.walk
                .prepare(&mut *self.order, now, view.queue, view.jobs);
            let queue = self.walk.iter_from(view.queue, 0);
            self.last_shadow = self
                .on_timeline
                .schedule(view, &mut self.pass, queue, decisions);
            return;
        }
        if self.order.is_submission() {
            return self.decide_in(view, CallOrder::Submission(view.queue), carried, decisions);
        }
        // The order is borrowed while the rule reads its runs: held out of `self` meanwhile.
        let mut order = std::mem::replace(&mut self.order, Box::new(Submission));
        if let Some(runs) = order.order_runs(now, view.queue, view.jobs) {
            self.decide_in(view, CallOrder::Runs(runs), carried, decisions);
        } else {
            self.walk.prepare(&mut *order, now, view.queue, view.jobs);
            let mut ids = std::mem::take(&mut self.ids);
            ids.clear();
            ids.extend(self.walk.jobs_in_order());
            self.decide_in(view, CallOrder::Ids(&ids), carried, decisions);
            self.ids = ids;
        }
        self.order = order;
    }

    /// [`NodeEasy::decide`] without reservations over the jobs in `order`; `carried`: nothing
    /// was freed since the last call ([`super::carry`]).
    fn decide_in(
        &mut self,
        view: &NodeView<'_>,
        order: CallOrder<'_>,
        carried: bool,
        decisions: &mut Decisions,
    ) {
        let now = view.now;
        let decided_before = decisions.starts().len();
        self.started.clear();
        self.started_nodes.clear();
        // Whether a start takes no core on some node: then nothing is carried to the next call.
        let mut coreless = false;
        let mut jobs = order.from(0).enumerate();
        let (head_k, head) = loop {
            let Some((k, job)) = jobs.next() else { return };
            let mut placed = None;
            for &class in view.classes_of(job) {
                let Some(shape) = view.shape(job, class) else {
                    continue;
                };
                if self.pass.select_any(view, class, &shape, &mut self.nodes) {
                    placed = Some((class, shape));
                    break;
                }
            }
            let Some((class, shape)) = placed else {
                break (k, job);
            };
            self.pass.take(view, class, &shape, &self.nodes);
            decisions.start(order.position(view.queue, k, job), class, &self.nodes);
            coreless |= shape.coreless() > 0;
            let from = self.started_nodes.len() as u32;
            self.started_nodes.extend_from_slice(&self.nodes);
            self.started.push(Started {
                end: now + view.jobs[job as usize].requested_time,
                class,
                shape,
                nodes: (from, self.started_nodes.len() as u32),
            });
        };
        let indexed = view.queue.len() - (head_k + 1) > self.scan_limit;
        // The shadow is the head's whatever the order of the jobs behind it.
        let carried = match self.carry.shadow_for(view, head, carried && head_k == 0) {
            Some(shadow) if indexed => {
                self.shadow.carry_over();
                Some(shadow)
            }
            _ => None,
        };
        let shadow = match carried {
            Some(shadow) => shadow,
            None => {
                self.started.sort_by_key(|s| s.end);
                let Some(shadow) =
                    self.shadow
                        .compute(view, &self.pass, head, &self.started, &self.started_nodes)
                else {
                    return;
                };
                shadow
            }
        };
        self.last_shadow = Some((head, shadow));
        if indexed {
            let at = (head_k, head);
            if self.backfill_indexed(view, order, at, shadow, carried.is_some(), decisions)
                && !coreless
            {
                let starts = decisions.starts().len() - decided_before;
                self.carry.record(view, &self.pass, head, shadow, starts);
            }
            return;
        }
        self.failed.clear();
        for (k, id) in order.from(head_k + 1).enumerate() {
            let ends_by_shadow = now + view.jobs[id as usize].requested_time <= shadow;
            let job = &view.jobs[id as usize];
            if self.failed.contains(job, !ends_by_shadow) {
                continue;
            }
            match self.shadow.backfill_class(
                view,
                &mut self.pass,
                id,
                ends_by_shadow,
                &mut self.nodes,
            ) {
                Some((class, shape)) => {
                    self.pass.take(view, class, &shape, &self.nodes);
                    let pos = order.position(view.queue, head_k + 1 + k, id);
                    decisions.start(pos, class, &self.nodes);
                }
                None => self.failed.insert(job, !ends_by_shadow),
            }
        }
    }

    /// The backfilling walk of [`NodeEasy::decide`], trying only the jobs the [`WaitingGroups`]
    /// offers: those the walk would try, in the same order — merged from its groups in
    /// submission order, or read from `order` past the head `head`, its `head_k`-th job, in any
    /// other order. `carried`: nothing was freed since the last call ([`super::carry`]). True if the
    /// next call may carry this one's state as far as its backfills go: none took no core on a
    /// node.
    fn backfill_indexed(
        &mut self,
        view: &NodeView<'_>,
        order: CallOrder<'_>,
        (head_k, head): (usize, u32),
        shadow: crate::sim::job::Time,
        carried: bool,
        decisions: &mut Decisions,
    ) -> bool {
        self.index.sync(view.queue, view.jobs);
        let mut tries = Tries {
            view,
            pass: &mut self.pass,
            shadow: &mut self.shadow,
            nodes: &mut self.nodes,
            shapes: &mut self.shapes,
            rebuilds: self.index.rebuilds(),
            decisions,
            keeps: true,
        };
        // A closure each, so that each pass has the try inlined (a closure shared by both was
        // left out of line: +6 % instructions in submission order on 20,000 Curie-shaped jobs).
        match order {
            CallOrder::Submission(_) => self.index.backfill(
                head,
                view.now,
                shadow,
                carried,
                |job, request, ends_by_shadow| tries.try_start(job, request, ends_by_shadow),
            ),
            CallOrder::Ids(_) => self.index.backfill_in_order(
                order.from(head_k + 1),
                view.now,
                shadow,
                carried,
                |job, request, short| tries.try_start(job, request, short),
            ),
            CallOrder::Runs(runs) => self.index.backfill_runs(
                runs,
                head_k + 1,
                (view.now, shadow),
                carried,
                |job, request, short| tries.try_start(job, request, short),
            ),
        }
        tries.keeps
    }
}

/// What a backfilling pass through the index tries a job with.
struct Tries<'a, 'v> {
    view: &'a NodeView<'v>,
    pass: &'a mut Pass,
    shadow: &'a mut Shadow,
    nodes: &'a mut Vec<u32>,
    shapes: &'a mut RequestShapes,
    rebuilds: u64,
    decisions: &'a mut Decisions,
    /// No start so far took no core on a node.
    keeps: bool,
}

impl Tries<'_, '_> {
    /// Tries `job`, of the index's dense request `request`, on the side of the shadow time
    /// `ends_by_shadow` says, and starts it if it fits.
    #[inline(always)]
    fn try_start(&mut self, job: u32, request: u32, ends_by_shadow: bool) -> Tried {
        let view = self.view;
        let shapes = self
            .shapes
            .of(view, self.rebuilds, request, job)
            .iter()
            .copied();
        let (class, shape) =
            match self
                .shadow
                .try_shapes(view, self.pass, shapes, ends_by_shadow, self.nodes)
            {
                Ok(started) => started,
                Err(failed) => return failed,
            };
        // A start taking no core on a node leaves it idle to the engine while the pass counts
        // it taken: the next call could fit more than this one did.
        self.keeps &= shape.coreless() == 0;
        if self.keeps && ends_by_shadow {
            self.shadow.keep_short(view, class, self.nodes);
        }
        let pos = view
            .queue
            .position_of(job)
            .expect("the index holds waiting jobs only");
        self.pass.take(view, class, &shape, self.nodes);
        self.decisions.start(pos, class, self.nodes);
        Tried::Started
    }
}
