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
//! In a compression a job looks for an earlier slot only where capacity rose since it last
//! found none (the nodes, and the windows on them, that holds given back or releases touched:
//! [`Timeline::earliest_before_since`]); a job that finds none, or keeps its slot after a
//! full search, records the timeline's clock. Whether it moves, and where, is the same.
//!
//! # Searches that start later (issue 36, a deep queue)
//!
//! Each search also tells where no window of the job's shape fits: a placement's, none before
//! the slot it found; a compression's check, none before the bound it found (not even with the
//! job's hold given back). [`NoFits`] keeps the last of these per class while the class only
//! loses capacity, and a later search for a shape that takes at least as much, for at least as
//! long, starts where the record ends — a compression's check only when its own slot is past
//! the recorded windows' ends, as it searches windows cut at that slot. The pool does the same
//! with its last search ([`crate::sim::scheduler::Conservative`], "Searches that start later").
//! `NodeConservative::afresh` searches from where it is asked, and
//! `tests/node_conservative_prefix.rs` compares the two in every order.
//!
//! Over another queue order, compression goes in that order, and whenever the order is no
//! longer the one the plan was made in (the previous order of the jobs still waiting, then the
//! arrivals in submission order: [`OrderTracker`]) every reservation is dropped and the queue is
//! planned afresh in the new order (docs/semantics.md, "Conservative over a priority order").
//!
//! # Keeping the prefix the new order did not change (issue 36)
//!
//! Planning afresh gives each job, in order, its earliest slot over the committed work and the
//! jobs before it: a job's fresh slot depends only on what precedes it. So when the plan *is*
//! the fresh plan of the previous order (`fresh`) and the new order keeps that order's first
//! `k` waiting jobs, the fresh plan of those `k` is the plan they hold, and only the jobs after
//! them are given back and planned again — the same decisions at the cost of the changed part.
//! The plan stays the fresh plan across the calls that only start jobs at their reservation and
//! place arrivals after the others (no compression): a job that started holds as a running job
//! exactly what its reservation held, a job that ended at its requested time gave back nothing
//! in the future, so over the kept jobs' slots capacity has only shrunk (jobs placed after a
//! kept job, then started, hold what it left) and each kept job's slot is still its earliest.
//! Anything that raises capacity or breaks that argument plans afresh as before: an early
//! completion, an overrun, a stale reservation, a new advance reservation, a compression, a
//! waiting job the scheduler could not plan, a queued job that left without being started here.
//! The nodes are those a fresh plan chooses only under first fit (the first nodes, in index
//! order, that fit: shrunk capacity elsewhere does not change them); best fit ranks nodes by
//! their free amounts at the slot, which later starts change, so it always plans afresh.
//! `NodeConservative::afresh` is the formulation without the shortcut, and
//! `tests/node_conservative_prefix.rs` compares the two on random workloads and topologies.
//!
//! # A new order from a copy of the committed state (issue 36)
//!
//! A new order that keeps a prefix gives the other plans back: the timeline kept between
//! calls is the committed state plus the holds of the plans (above). One that keeps none plans
//! every job afresh over the committed state alone, which over a reordering queue is kept
//! apart (`committed`): built with every rebuild, then changed only as the engine's state
//! changes — a job started here holds its nodes until its requested end, one ending early gives
//! back the rest — so that it is, function for function, what a rebuild from the engine's free
//! nodes and running jobs would give. The new order's timeline is a copy of it
//! ([`Timeline::restore_from`]: the functions in use and the per-node arrays), where a rebuild
//! reads every node and releases every running job again, and giving every plan back costs in
//! the plans' nodes (issue 36: at 5,000 nodes in fairshare order, rebuilds were 19 % of the
//! instructions). What the copy does not follow forces a rebuild as before, of both: an
//! overrun (its predicted end moves with the clock), a granted reservation, a job that ended
//! without being started here. The reference ([`NodeConservative::afresh`]) rebuilds.
//!
//! # Placements left to the next call (issue 36)
//!
//! Over fairshare order the order changes at most calls, and each change places every job after
//! the kept prefix again, so the slots of the jobs placed last at a call are read only if the
//! next call's order keeps them. Once no job left to place can start now ([`StartsNow`]: none
//! fits over `[now, now + requested)`; placing jobs only takes capacity, so none will), the rest
//! are admitted unplaced (`deferred`), in order, whether the call plans afresh, keeps a prefix
//! or only places arrivals. Where that point is, [`Cut`] learns before each placement: the last
//! job that may start is asked again each time, so the pass stops as soon as the jobs placed
//! before it took what it needed, not when it reaches it. The next call places them first,
//! before anything touches the timeline, at the deferring call's time over the timeline as
//! that call left it, if its order is unchanged — the same placements, one call later — and
//! drops them if its order changed: every changed-order path plans them afresh, and a kept
//! prefix ends at the first of them (the previous order's jobs after the deferral point are
//! not looked at). This is pool conservative's deferral
//! ([`crate::sim::scheduler::Conservative`], "Placements left to the next call") on nodes,
//! where the test of "can start now" reads the nodes with a free core.

use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasherDefault;

use super::bounds::OneNodeBounds;
use super::no_fit::NoFits;
use super::pass::Pass;
use super::starts_now::{Cut, StartsNow};
use super::{Decisions, NodeScheduler, NodeView};
use crate::sim::job::Time;
use crate::sim::mix_hash::MixHasher;
use crate::sim::scheduler::QueuedJob;
use crate::sim::scheduler::order::{OrderTracker, QueueOrder, Walk, report_ended};
use crate::sim::topology::steps::vector;
use crate::sim::topology::{NodeShape, Placement, RisenWindows, Timeline};

/// A queued job's reservation.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Plan {
    start: Time,
    class: u32,
    shape: NodeShape,
    /// Concrete nodes on a shared class; empty on a whole-node class.
    nodes: Vec<u32>,
    /// The timeline's clock when no window before `start` was found to fit the job with this
    /// hold given back (0: unknown): the next look needs only what rose since
    /// ([`Timeline::earliest_before_since`]).
    checked: u64,
}

/// Job-keyed maps, looked up for every queued job at every compression.
type ByJob<V> = HashMap<u32, V, BuildHasherDefault<MixHasher>>;

pub struct NodeConservative {
    order: Box<dyn QueueOrder>,
    /// This call's order over a reordering queue, written as the jobs themselves where the
    /// order can ([`Walk::prepare_jobs`]; issue 36: a look-up of each position in the queue
    /// per use cost 4 % of the instructions at 500 nodes in fairshare order). Starts look
    /// their position up.
    walk: Walk,
    tracker: OrderTracker,
    pass: Pass,
    tl: Timeline,
    nodes: Vec<u32>,
    plans: ByJob<Plan>,
    by_start: BTreeSet<(Time, u32)>,
    /// The queue prefix planned so far: later entries arrived since the last call.
    planned: usize,
    ordered: Vec<QueuedJob>,
    epoch: Option<u64>,
    /// The last compression moved a job: a job compressed before it may now fit earlier, so
    /// the next call compresses again.
    unsettled: bool,
    /// Running jobs this scheduler started: where their hold is in `tl`, so that one ending
    /// early gives back the rest of it without rebuilding the timeline.
    running: ByJob<Plan>,
    /// Per class a job could move to in a compression (placement order), its shape there and
    /// a start no earlier slot there precedes ([`NodeConservative::may_move`]).
    earlier: Vec<(u32, NodeShape, Time)>,
    /// Where one-node requests can start, shared by the checks of one compression.
    bounds: OneNodeBounds,
    /// Per class, where the last searches showed no window of a shape ([`NoFits`]): a later
    /// search for a shape taking at least as much starts there.
    no_fits: NoFits,
    /// The plan is the fresh plan of the order it was made in over the present state (module
    /// documentation, "Keeping the prefix the new order did not change").
    fresh: bool,
    /// Whether a new order keeps the plan of its unchanged prefix (false: the reference,
    /// [`NodeConservative::afresh`]).
    keeps_prefix: bool,
    /// Calls that kept a prefix of the plan, and the jobs kept (for tests and benches).
    kept: (u64, u64),
    /// Whether the jobs none of which can start now are left to the next call (module
    /// documentation, "Placements left to the next call"; false in the reference).
    defers: bool,
    /// The last jobs of the previous call's order, admitted unplaced, in that order.
    deferred: Vec<u32>,
    /// The time of the call that deferred them.
    deferred_at: Time,
    /// Which jobs can start now, for the deferral.
    starts_now: StartsNow,
    /// Deferred jobs dropped (the next order changed) and placed a call late (for tests).
    deferrals: (u64, u64),
    /// Over a reordering queue: the committed state alone — the running jobs' holds and the
    /// advance reservations, no plan — kept up to date as jobs start and end early, from which
    /// a new order that keeps no prefix is planned (module documentation, "A new order from a
    /// copy of the committed state"). Valid only while `committed_valid`.
    committed: Timeline,
    committed_valid: bool,
    /// New orders planned over a copy of `committed` (for tests).
    restored: u64,
}

impl NodeConservative {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        NodeConservative {
            order,
            walk: Walk::default(),
            tracker: OrderTracker::default(),
            pass: Pass::default(),
            tl: Timeline::default(),
            nodes: Vec::new(),
            plans: ByJob::default(),
            by_start: BTreeSet::new(),
            planned: 0,
            ordered: Vec::new(),
            epoch: None,
            unsettled: false,
            running: ByJob::default(),
            earlier: Vec::new(),
            bounds: OneNodeBounds::default(),
            no_fits: NoFits::new(true),
            fresh: false,
            keeps_prefix: true,
            kept: (0, 0),
            defers: true,
            deferred: Vec::new(),
            deferred_at: 0,
            starts_now: StartsNow::default(),
            deferrals: (0, 0),
            committed: Timeline::default(),
            committed_valid: false,
            restored: 0,
        }
    }

    /// The formulation that plans the whole queue afresh whenever the order changes, without
    /// keeping the prefix it did not change, placing every job at the call that admits it and
    /// searching every slot from where it is asked (no [`NoFits`]): the same decisions (the
    /// tests compare the two).
    pub fn afresh(order: Box<dyn QueueOrder>) -> Self {
        NodeConservative {
            keeps_prefix: false,
            defers: false,
            no_fits: NoFits::new(false),
            ..NodeConservative::new(order)
        }
    }

    /// How many searches started later by what an earlier one showed ([`NoFits`]).
    pub fn no_fit_hits(&self) -> u64 {
        self.no_fits.hits()
    }

    /// How many calls kept the plan of an unchanged prefix of a new order, and how many
    /// planned jobs they kept in all.
    pub fn kept_prefixes(&self) -> (u64, u64) {
        self.kept
    }

    /// How many new orders without a kept prefix were planned over a copy of the committed
    /// state.
    pub fn restored(&self) -> u64 {
        self.restored
    }

    /// Whether the committed state is kept apart: over a reordering queue, outside the
    /// reference formulation.
    fn keeps_committed(&self) -> bool {
        self.keeps_prefix && !self.order.is_submission()
    }

    /// How many jobs left unplaced were dropped because the next call's order changed, and
    /// how many that call placed.
    pub fn deferrals(&self) -> (u64, u64) {
        self.deferrals
    }

    /// How many of this call's first jobs in order (`self.walk`) are, in the same order,
    /// the previous call's first jobs still waiting, each holding the plan made for it. 0
    /// when that cannot be told: a job of the previous order that is neither waiting with a
    /// plan nor started here (it could not be planned, or left the queue otherwise).
    fn unchanged_prefix(&self) -> usize {
        // The deferred jobs end the previous order, unplaced: a prefix stops at them.
        let previous = self.tracker.previous();
        let mut previous = previous[..previous.len() - self.deferred.len()].iter();
        for (k, job) in self.walk.jobs_in_order().enumerate() {
            loop {
                let Some(&old) = previous.next() else {
                    // Past the previous order's placed jobs: a deferred job or an arrival
                    // (kept out of the prefix).
                    return k;
                };
                if old == job {
                    break;
                }
                if self.plans.contains_key(&old) {
                    // Still waiting, no longer at this place in the order.
                    return k;
                }
                if !self.running.contains_key(&old) {
                    return 0;
                }
                // Started at its reservation since: its hold is a running job's now.
            }
            if !self.plans.contains_key(&job) {
                return 0;
            }
        }
        self.walk.len()
    }

    /// The reserved start of a queued job after the last call, if it has one (a job left to
    /// the next call has none yet).
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

    /// The earliest slot of `job` from `from` on over its classes (ties: the first class in
    /// placement order).
    fn earliest(
        &mut self,
        view: &NodeView<'_>,
        job: u32,
        from: Time,
    ) -> Option<(Time, u32, NodeShape)> {
        let requested = view.jobs[job as usize].requested_time;
        let mut best: Option<(Time, u32, NodeShape)> = None;
        for &class in view.classes_of(job) {
            let Some(shape) = view.shape(job, class) else {
                continue;
            };
            // A later class wins only with a strictly earlier start.
            let before = best.as_ref().map_or(Time::MAX, |b| b.0);
            // No window of a shape taking less starts in [from, start).
            let start = self
                .no_fits
                .bound(&self.tl, class, &shape, requested, Time::MAX, from);
            let found = if start < before {
                self.tl.earliest_within(
                    view.layout,
                    class,
                    &shape,
                    (start, before),
                    requested,
                    Time::MAX,
                )
            } else {
                None
            };
            let none_before = found.unwrap_or(before);
            self.no_fits
                .record(&self.tl, class, &shape, requested, (from, none_before));
            if let Some(t) = found {
                best = Some((t, class, shape));
                if t == from {
                    break;
                }
            }
        }
        best
    }

    /// Plans `job` at its earliest slot `best` and holds it. No slot before `best` fitted on
    /// any class: that is what the plan records as checked.
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
            checked: self.tl.clock(),
        };
        self.hold(&plan, requested);
        Some(plan)
    }

    /// Whether `job` may have a slot before `plan`'s start once its hold is given back,
    /// looking only at what rose since the plan was last found unable to move. Leaves in
    /// `self.earlier` each class where it may, with a start no such slot precedes
    /// ([`Timeline::earliest_before_since`]: before `plan`'s start the timeline is the same
    /// with or without the job's hold, so such a slot fits there clipped at that start); the
    /// search for an earlier slot begins there ([`NodeConservative::earliest_from`]).
    fn may_move(&mut self, view: &NodeView<'_>, job: u32, plan: &Plan) -> bool {
        let requested = view.jobs[job as usize].requested_time;
        self.earlier.clear();
        for &class in view.classes_of(job) {
            // Nothing of the class rose since the plan was checked: no slot there precedes it
            // (what both searches below answer first), so its shape is not even needed.
            if !self.tl.rose_since(class, plan.checked) {
                continue;
            }
            // The plan's shape is the job's shape on its class.
            let shape = if class == plan.class {
                plan.shape
            } else {
                match view.shape(job, class) {
                    Some(shape) => shape,
                    None => continue,
                }
            };
            // Windows clipped at the plan's start: there the timeline is the same with or
            // without the job's hold. No window of a shape taking less starts in [now, from).
            let from = self
                .no_fits
                .bound(&self.tl, class, &shape, requested, plan.start, view.now);
            let bound = if from >= plan.start {
                None
            } else if shape.count == 1 && !self.tl.is_whole(class) {
                self.one_node_bound(view, class, &shape, requested, plan, from)
            } else {
                self.tl.earliest_before_since(
                    view.layout,
                    class,
                    &shape,
                    (from, plan.start),
                    requested,
                    plan.checked,
                )
            };
            // No slot of the job starts before the bound even with its hold given back, so
            // no whole window of its shape does in the timeline as it is.
            let none_before = bound.unwrap_or(plan.start);
            self.no_fits
                .record(&self.tl, class, &shape, requested, (view.now, none_before));
            if let Some(t) = bound {
                self.earlier.push((class, shape, t));
            }
        }
        !self.earlier.is_empty()
    }

    /// [`Timeline::earliest_before_since`] for a one-node shape on a shared class, through the
    /// compression's [`OneNodeBounds`]: when no node but the job's own can start a window of
    /// it before `plan`'s start even in full — there the timeline is the same with or without
    /// the job's hold — only the job's own node can hold a slot before it, and only that node
    /// is searched, as `earliest_before_since` searches each node (the windows that meet its
    /// rises since the plan's `checked`, clipped at the plan's start). Otherwise the general
    /// search. A lower bound on every such slot's start either way, `None` only if there is
    /// none.
    fn one_node_bound(
        &mut self,
        view: &NodeView<'_>,
        class: u32,
        shape: &NodeShape,
        requested: Time,
        plan: &Plan,
        from: Time,
    ) -> Option<Time> {
        let own = (class == plan.class).then(|| plan.nodes[0]);
        let others = self.bounds.others(
            &mut self.tl,
            view.layout,
            class,
            &vector(shape.amount(0)),
            requested,
            view.now,
            own,
        );
        // A request asked for the first time in this compression has no bound yet.
        if others.is_none_or(|t| t < plan.start) {
            return self.tl.earliest_before_since(
                view.layout,
                class,
                shape,
                (from, plan.start),
                requested,
                plan.checked,
            );
        }
        let windows = RisenWindows {
            from,
            before: plan.start,
            duration: requested,
            clip: plan.start,
            since: plan.checked,
        };
        self.tl.earliest_on_node(own?, shape, windows)
    }

    /// [`NodeConservative::earliest`] of `job` before `before` with its hold given back, over
    /// the classes [`NodeConservative::may_move`] left, each searched from the bound it found
    /// (no slot on a class begins earlier; the classes it did not leave have none before
    /// `before`) and, for a one-node shape, only on nodes that rose since the plan's `checked`
    /// ([`Timeline::earliest_since`]), so the same slot.
    fn earliest_from(
        &mut self,
        view: &NodeView<'_>,
        job: u32,
        before: Time,
        checked: u64,
    ) -> Option<(Time, u32, NodeShape)> {
        let requested = view.jobs[job as usize].requested_time;
        let mut best: Option<(Time, u32, NodeShape)> = None;
        let earlier = std::mem::take(&mut self.earlier);
        for &(class, shape, from) in &earlier {
            // A later class wins only with a strictly earlier start.
            let before = best.as_ref().map_or(before, |b| b.0);
            if from >= before {
                continue;
            }
            if let Some(t) = self.tl.earliest_since(
                view.layout,
                class,
                &shape,
                (from, before),
                requested,
                checked,
            ) {
                best = Some((t, class, shape));
            }
        }
        self.earlier = earlier;
        best
    }

    /// Whether `plan`, held, still fits where it is: nothing it holds is over-committed.
    fn still_fits(&self, plan: &Plan, requested: Time) -> bool {
        self.tl
            .none_negative(plan.class, &plan.nodes, plan.start, plan.start + requested)
    }

    /// Brings the timeline up to `view` and compresses the queue. `rebuild`: the timeline is
    /// rebuilt from the committed state (first call, advance reservations granted, a job
    /// overrunning its request, a new order in the reference) and the held reservations put
    /// back, none if `afresh` (the order changed: the queue is planned anew in its order,
    /// which `self.walk` already holds). Otherwise the timeline kept from the last call
    /// is what a rebuild would give once jobs that ended early have given back the rest of
    /// their hold and stale reservations theirs.
    ///
    /// `afresh` without `rebuild`: every plan but those of the first `keep` jobs (0, or the
    /// order changed after them and their plan is the fresh one: module documentation,
    /// "Keeping the prefix the new order did not change") is given back, and those jobs are
    /// planned afresh after the kept ones.
    ///
    /// `restore` (with `afresh`, no `keep`, no `rebuild`): the timeline becomes a copy of the
    /// committed state kept apart, and every job is planned afresh over it.
    fn replan(
        &mut self,
        view: &NodeView<'_>,
        rebuild: bool,
        restore: bool,
        afresh: bool,
        keep: usize,
    ) {
        let now = view.now;
        let mut ordered = std::mem::take(&mut self.ordered);
        ordered.clear();
        if self.order.is_submission() {
            ordered.extend(view.queue.iter().copied());
        } else {
            // `schedule` computed this call's order.
            ordered.extend(self.walk.jobs_from(view.queue, 0));
        }
        if restore {
            debug_assert!(afresh && keep == 0 && !rebuild && self.committed_valid);
            self.tl.restore_from(&self.committed, view.layout);
            self.plans.clear();
            self.by_start.clear();
            self.restored += 1;
        } else if afresh && !rebuild {
            debug_assert!(keep > 0, "a new order keeping nothing restores or rebuilds");
            let mut old = std::mem::take(&mut self.plans);
            for q in &ordered[..keep] {
                let plan = old.remove(&q.job).expect("a kept job has a plan");
                self.plans.insert(q.job, plan);
            }
            // Given back in start order (every plan is in `by_start`), as deterministic as
            // the rest; each give-back is a rise the kept jobs' next checks look at.
            let starts = std::mem::take(&mut self.by_start);
            for (start, job) in starts {
                match old.remove(&job) {
                    Some(p) => {
                        let requested = view.jobs[job as usize].requested_time;
                        self.tl
                            .unhold(p.class, &p.shape, &p.nodes, p.start, p.start + requested);
                    }
                    None => {
                        self.by_start.insert((start, job));
                    }
                }
            }
            debug_assert!(old.is_empty(), "every plan is in by_start");
            self.kept.0 += 1;
            self.kept.1 += keep as u64;
        } else if rebuild {
            if self.keeps_committed() {
                view.committed_timeline(&mut self.committed);
                self.committed_valid = true;
                self.tl.restore_from(&self.committed, view.layout);
            } else {
                view.committed_timeline(&mut self.tl);
            }
            let mut old = std::mem::take(&mut self.plans);
            for q in &ordered {
                if let Some(p) = old.remove(&q.job)
                    && p.start >= now
                    && !afresh
                {
                    self.hold(&p, q.requested_time);
                    self.plans.insert(q.job, p);
                }
            }
        } else {
            // Stale reservations (begun between two periodic calls): given back; their jobs
            // are placed afresh below.
            while let Some(&(start, job)) = self.by_start.first()
                && start < now
            {
                self.by_start.pop_first();
                if let Some(p) = self.plans.remove(&job) {
                    let requested = view.jobs[job as usize].requested_time;
                    self.tl
                        .unhold(p.class, &p.shape, &p.nodes, p.start, p.start + requested);
                }
            }
        }
        // Kept up to date job by job, except after a rebuild (plans put back, others dropped).
        if rebuild {
            self.by_start.clear();
        }
        self.unsettled = false;
        self.bounds.clear();
        if afresh {
            // No job after the kept prefix holds a plan: they are placed in the new order.
            self.place_in_order(view, &ordered[keep..]);
            self.ordered = ordered;
            return;
        }
        // Out of `self` while the queue is compressed, so that each kept plan is compressed in
        // place: one lookup per queued job, not a removal and an insertion (no method called
        // below reads `self.plans`).
        let mut plans = std::mem::take(&mut self.plans);
        for &q in &ordered[keep..] {
            let requested = q.requested_time;
            let (was, start) = match plans.get_mut(&q.job) {
                Some(p) => {
                    let was = p.start;
                    if self.compress(view, q.job, requested, p, rebuild) {
                        (Some(was), Some(p.start))
                    } else {
                        plans.remove(&q.job);
                        (Some(was), None)
                    }
                }
                None => {
                    let best = self.earliest(view, q.job, now);
                    let plan = self.place(view, q.job, best);
                    let start = plan.as_ref().map(|p| p.start);
                    if let Some(plan) = plan {
                        plans.insert(q.job, plan);
                    }
                    (None, start)
                }
            };
            if rebuild || start != was {
                if let Some(t) = was {
                    self.by_start.remove(&(t, q.job));
                }
                if let Some(t) = start {
                    self.by_start.insert((t, q.job));
                }
            }
        }
        self.plans = plans;
        self.ordered = ordered;
    }

    /// Places `jobs`, none of which holds a plan, in order after every plan held, each at its
    /// earliest slot. Over a reordering queue, once none of the jobs left can start now, they
    /// are left to the next call (module documentation, "Placements left to the next call").
    fn place_in_order(&mut self, view: &NodeView<'_>, jobs: &[QueuedJob]) {
        debug_assert!(self.deferred.is_empty());
        let defers = self.defers && !self.order.is_submission();
        self.starts_now.clear();
        let mut cut = Cut::new(jobs.len());
        for (i, q) in jobs.iter().enumerate() {
            if defers
                && cut.defers(i, |j| {
                    self.starts_now.may_start(&self.tl, view, jobs[j].job)
                })
            {
                self.deferred.extend(jobs[i..].iter().map(|q| q.job));
                self.deferred_at = view.now;
                return;
            }
            let best = self.earliest(view, q.job, view.now);
            if let Some(plan) = self.place(view, q.job, best) {
                cut.held(plan.start, |j| {
                    view.now + view.jobs[jobs[j].job as usize].requested_time
                });
                self.by_start.insert((plan.start, q.job));
                self.plans.insert(q.job, plan);
            }
        }
    }

    /// Places the jobs the previous call left unplaced, as it would have: in its order, at its
    /// time, over the timeline as it left it (nothing touched it since). None starts then.
    fn place_deferred(&mut self, view: &NodeView<'_>) {
        let deferred = std::mem::take(&mut self.deferred);
        for &job in &deferred {
            let best = self.earliest(view, job, self.deferred_at);
            if let Some(plan) = self.place(view, job, best) {
                debug_assert!(plan.start > self.deferred_at, "a deferred job could start");
                self.by_start.insert((plan.start, job));
                self.plans.insert(job, plan);
            }
        }
        self.deferrals.1 += deferred.len() as u64;
        self.deferred = deferred;
        self.deferred.clear();
    }

    /// Compresses one held reservation in place: the job gives it back and takes the earliest
    /// slot again, keeping the old one (nodes included) unless a strictly earlier one exists or
    /// the old one no longer fits. Sets `unsettled` when it moves; false when no slot is left
    /// (the plan is then to be dropped).
    ///
    /// Giving back and holding again is skipped when the job cannot move: on `[now, start)`
    /// the timeline is the same with or without the job's hold (it begins at `start`), so a
    /// slot before `start` needs a window that fits with the hold in place when clipped at
    /// `start`; when none does, and the hold over-commits nothing, the job keeps its slot.
    /// Either way, when it keeps its slot the plan records that nothing earlier fitted now.
    ///
    /// A hold given back to search without it and then held again is no rise: it is stamped
    /// as one only when the job leaves it, so that the jobs after it are not sent to look
    /// again where nothing changed.
    ///
    /// Only after a rebuild (`rebuilt`: holds put back over the committed state, unchecked) can
    /// a hold over-commit anything: otherwise every hold was taken where it fitted, holds taken
    /// since were taken where they fitted with it in place, and capacity has only been given
    /// back, so it still fits.
    fn compress(
        &mut self,
        view: &NodeView<'_>,
        job: u32,
        requested: Time,
        p: &mut Plan,
        rebuilt: bool,
    ) -> bool {
        let fits = if rebuilt {
            self.still_fits(p, requested)
        } else {
            debug_assert!(self.still_fits(p, requested));
            true
        };
        let may_move = self.may_move(view, job, p);
        if !may_move && fits {
            p.checked = self.tl.clock();
            return true;
        }
        let (start, end) = (p.start, p.start + requested);
        self.tl
            .unhold_unstamped(p.class, &p.shape, &p.nodes, start, end);
        let earlier = if may_move {
            self.earliest_from(view, job, start, p.checked)
        } else {
            None
        };
        let plan = match earlier {
            Some(best) => {
                self.tl.stamp_rise(p.class, &p.nodes, start, end);
                self.place(view, job, Some(best))
            }
            None if fits => {
                self.hold(p, requested);
                p.checked = self.tl.clock();
                return true;
            }
            None => {
                self.tl.stamp_rise(p.class, &p.nodes, start, end);
                let best = self.earliest(view, job, view.now);
                self.place(view, job, best)
            }
        };
        let Some(plan) = plan else {
            return false;
        };
        self.unsettled |= plan.start != start;
        *p = plan;
        true
    }
}

impl NodeScheduler for NodeConservative {
    fn started(&mut self, now: Time, job: u32, class: u32) {
        self.order.started(now, job, class);
    }

    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        let now = view.now;
        report_ended(&mut *self.order, view.completed);
        // How much of a new order's plan can be kept (when it changed).
        let mut keep = 0;
        let afresh = !self.order.is_submission() && {
            self.walk
                .prepare_jobs(&mut *self.order, now, view.queue, view.jobs);
            if self.fresh && self.keeps_prefix && view.placement == Placement::FirstFit {
                keep = self.unchanged_prefix();
            }
            self.tracker.changed_jobs(self.walk.jobs_in_order())
        };
        if !self.deferred.is_empty() {
            if afresh {
                // Every changed-order path plans them afresh.
                self.deferrals.0 += self.deferred.len() as u64;
                self.deferred.clear();
            } else {
                self.place_deferred(view);
            }
        }
        self.pass.begin(view);
        let overrun = view
            .running
            .iter()
            .next()
            .is_some_and(|r| r.expected_end <= now);
        let granted = self.epoch != Some(view.reservations_epoch);
        let early = view.completed.iter().any(|c| c.end < c.expected_end);
        let stale = self.by_start.first().is_some_and(|&(t, _)| t < now);
        // Only a new order over a fresh plan with nothing risen can keep a prefix.
        if !afresh || overrun || granted || early || stale || self.unsettled {
            keep = 0;
        }
        // A new order gives the plans after a kept prefix back; without one it starts from a
        // copy of the committed state when that is kept apart (module documentation, "A new
        // order from a copy of the committed state"); the reference rebuilds.
        let restore = afresh && keep == 0 && self.committed_valid && !overrun && !granted;
        // A kept prefix implies neither an overrun nor a granted reservation (above).
        let gives_back = afresh && keep > 0;
        let mut rebuild = overrun || granted || (afresh && !gives_back && !restore);
        self.epoch = Some(view.reservations_epoch);
        self.tl.advance(now);
        if self.committed_valid {
            self.committed.advance(now);
        }
        for c in view.completed {
            let started = self.running.remove(&c.job);
            if c.end < c.expected_end {
                match started {
                    // Its hold ran to `expected_end`: the rest is free from now.
                    Some(p) if !rebuild => {
                        if self.committed_valid {
                            // Never searched: its rises are not counted.
                            self.committed.unhold_unstamped(
                                p.class,
                                &p.shape,
                                &p.nodes,
                                now,
                                c.expected_end,
                            );
                        }
                        if !restore {
                            self.tl
                                .unhold(p.class, &p.shape, &p.nodes, now, c.expected_end);
                        }
                    }
                    Some(_) => {}
                    // Not started here (never expected): rebuild from what the engine says.
                    None => {
                        rebuild = true;
                        self.committed_valid = false;
                    }
                }
            }
        }
        if rebuild || afresh || early || stale || self.unsettled {
            self.replan(
                view,
                rebuild && keep == 0,
                restore && !rebuild,
                afresh,
                keep,
            );
            // A compression's plan is not the fresh one; an overrunning job's predicted end
            // moves with the clock.
            self.fresh = afresh && !overrun;
        } else {
            // The arrivals, after every plan held (the order is unchanged: they come last, in
            // submission order).
            let mut arrivals = std::mem::take(&mut self.ordered);
            arrivals.clear();
            arrivals.extend(view.queue.iter_from(self.planned).copied());
            self.place_in_order(view, &arrivals);
            self.ordered = arrivals;
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
            // Its hold in the timeline is now that of a running job (until start + requested,
            // the engine's expected end), and so in the committed state.
            if self.committed_valid {
                let requested = view.jobs[job as usize].requested_time;
                self.committed
                    .hold(plan.class, &plan.shape, &plan.nodes, now, now + requested);
            }
            self.running.insert(job, plan);
        }
        if self.committed_valid {
            // Merged as the changes come, once a call: a copy of groups left unmerged would
            // be merged again at every new order's first search.
            self.committed.sync_groups();
        }
        // What stays queued after these starts has been planned; later entries are arrivals.
        self.planned = view.queue.len() - (decisions.starts().len() - before);
    }
}
