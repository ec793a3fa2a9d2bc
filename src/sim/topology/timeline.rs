//! Availability over time on a topology, for the policies that plan ahead (conservative
//! backfilling; every policy when advance reservations exist).
//!
//! - A **shared** class keeps one step function per node (its free vector over time): a job
//!   planned there is held on concrete nodes.
//! - A **whole-node** class (a cluster with exclusive allocation) keeps one step function of
//!   its idle-node count: its nodes are interchangeable, so a planned job holds a number of
//!   nodes and concrete ones are chosen when it starts. This is the uniform exclusive machine's
//!   model, and why a topology of one such class schedules exactly like it.
//!
//! "Fits" is a count: a job of `count` nodes (all taking `per_node`, except possibly a last one
//! taking less) fits over `[t, t + d)` when at least `full` nodes can take `per_node` over that
//! interval and at least `count` can take the last amount (docs/semantics.md). The earliest such
//! `t` is found without trying every breakpoint: each node's own earliest fit from `t` is
//! computed and `t` moves to the k-th smallest, until it stops moving. A node's search stops at
//! the k-th smallest found so far (a later node cannot lower it by fitting later). Nodes whose
//! step functions agree from now on are searched once per group ([`super::node_groups`]). A
//! shape whose full nodes take every core of a node starts where its class has that many idle
//! nodes at once, and fails at once where it never has ([`super::idle_nodes`]; issue 36).

use std::collections::BinaryHeap;

use super::free::FreeNodes;
use super::layout::Layout;
use super::node_groups::{GROUPED_FROM, NodeGroups, PerGroup};
use super::placement::Placement;
use super::request::NodeShape;
use super::steps::{Amount, Steps, Vector, vector};
use crate::sim::job::Time;
use crate::sim::resources::ResourceVec;

/// The windows a search among risen nodes looks at: starts `t` in `[from, before)`, each window
/// `[t, min(t + duration, clip))`, and only those that meet a node's rises since clock `since`
/// (0: every window).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RisenWindows {
    pub from: Time,
    pub before: Time,
    pub duration: Time,
    /// Where a window is cut off: capacity from here on is the caller's own hold, given back.
    pub clip: Time,
    pub since: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Per class: idle nodes over time (whole-node classes only).
    counts: Vec<Steps<i64>>,
    /// Per class: whether jobs take whole nodes there.
    whole: Vec<bool>,
    /// The present: step functions are advanced to it lazily, when next changed.
    now: Time,
    /// The smallest earliest fits found in one round of [`Timeline::earliest_within`]
    /// (max-heaps of at most k).
    scratch_full: Smallest,
    scratch_last: Smallest,
    /// Counts the changes that free capacity (and resets): a search that found nothing can
    /// be repeated on only what rose since ([`Timeline::fits_before_since`]).
    clock: u64,
    /// Per class: the `clock` of its last rise (any node of it, or its count).
    class_rises: Vec<u64>,
    /// Per node of a shared class: free vector over time, one function per group of nodes
    /// that share it on a class of [`GROUPED_FROM`] nodes or more, so that a full search
    /// visits one function per group and a change on a whole group changes one.
    groups: NodeGroups,
    /// The size from which classes are grouped ([`GROUPED_FROM`] when `None`; tests compare
    /// a grouped timeline with one grouping nothing).
    group_from: Option<u32>,
    /// Per group, its members' minimum free vector over the window a selection looks at.
    group_mins: PerGroup<Option<Vector>>,
    /// The step functions a full search visits: each node's once, or each group's with its
    /// number of members.
    visits: Vec<(u32, usize)>,
    /// Per group, what its members can take in a first-fit selection ([`node_takes`]).
    group_takes: Vec<u8>,
}

impl Timeline {
    /// A timeline that keeps one step function per node on every class (for tests comparing
    /// grouped and ungrouped answers outside this module).
    #[cfg(test)]
    pub(crate) fn grouping_nothing() -> Self {
        Timeline {
            group_from: Some(u32::MAX),
            ..Timeline::default()
        }
    }

    /// Resets to the state of `free` at `now`, with nothing to come.
    pub fn reset(&mut self, layout: &Layout, now: Time, free: &FreeNodes) {
        let classes = layout.classes();
        self.now = now;
        self.whole.clear();
        self.whole
            .extend(classes.iter().map(|c| c.capacity.whole_nodes));
        self.everything_risen();
        self.groups.reset(
            layout,
            &self.whole,
            self.group_from.unwrap_or(GROUPED_FROM),
            now,
            self.clock,
            |node| vector(free.free(node)),
        );
        self.counts.resize_with(classes.len(), Steps::default);
        for (c, class) in classes.iter().enumerate() {
            if class.capacity.whole_nodes {
                self.counts[c].reset(now, i64::from(free.idle_count(c as u32)));
            }
        }
    }

    /// Becomes what `source` holds (a timeline over the same layout, at the same present):
    /// every node's function and every class's count as there, and everything counted as
    /// risen, as after [`Timeline::reset`] — no search result carries over. The same answers
    /// as a reset followed by the changes `source` saw, at the cost of a copy of the functions
    /// in use (issue 36: node-level conservative over a reordering queue keeps the committed
    /// state apart and starts each new order from a copy of it).
    pub fn restore_from(&mut self, source: &Timeline, layout: &Layout) {
        debug_assert_eq!(self.group_from, source.group_from);
        self.counts.clone_from(&source.counts);
        self.whole.clone_from(&source.whole);
        self.now = source.now;
        self.everything_risen();
        self.groups
            .restore_from(&source.groups, layout, &self.whole, self.clock);
    }

    /// Counts every class as risen at a new clock (after `whole` is set), so that no earlier
    /// search result carries over a reset or a copy.
    fn everything_risen(&mut self) {
        self.clock += 1;
        self.class_rises.clear();
        self.class_rises.resize(self.whole.len(), self.clock);
    }

    /// Forgets everything before `now`. Lazy: a step function drops its past when it is next
    /// changed, so a call costs nothing per node (what is before `now` is never read: searches
    /// and changes start at `now` or later).
    pub fn advance(&mut self, now: Time) {
        self.now = self.now.max(now);
    }

    /// Counts a rise of `nodes` of `class` (the class's count on a whole-node class) over
    /// `[from, to)`: searches repeated from an earlier clock look there again.
    pub fn stamp_rise(&mut self, class: u32, nodes: &[u32], from: Time, to: Time) {
        let clock = self.tick(class);
        if !self.whole[class as usize] {
            // On the functions the nodes have now (a change splits them off first).
            self.groups.stamp_rises(class, nodes, clock, from, to);
        }
    }

    /// The clock of a new rise of `class`.
    fn tick(&mut self, class: u32) -> u64 {
        self.clock += 1;
        self.class_rises[class as usize] = self.clock;
        self.clock
    }

    /// Adds `sign` × (what `shape` takes on `nodes` of `class`) over `[from, to)` (`to = None`:
    /// forever), stamping the rise if `sign` > 0 and `stamp`. Whole-node classes count nodes;
    /// `nodes` may then be empty.
    #[allow(clippy::too_many_arguments)]
    fn change(
        &mut self,
        class: u32,
        shape: &NodeShape,
        nodes: &[u32],
        from: Time,
        to: Option<Time>,
        sign: i64,
        stamp: bool,
    ) {
        let rise = (sign > 0 && stamp).then(|| (self.tick(class), from, to.unwrap_or(Time::MAX)));
        if self.whole[class as usize] {
            let steps = &mut self.counts[class as usize];
            steps.advance(self.now);
            steps.add(from, to, sign * i64::from(shape.count));
        } else {
            // The runs of nodes taking one amount — the full nodes, then the last when it takes
            // another — each changed in one call: once per group on a grouped class, the rise
            // stamped from the runs the change found.
            debug_assert!(nodes.len() <= shape.count as usize);
            let split = match shape.last {
                Some(last) if last != shape.per_node => (shape.full() as usize).min(nodes.len()),
                _ => nodes.len(),
            };
            let (full, last) = nodes.split_at(split);
            for (run, amount) in [
                (full, shape.per_node),
                (last, shape.last.unwrap_or_default()),
            ] {
                if !run.is_empty() {
                    let delta = vector(amount).map(|x| sign * x);
                    self.groups
                        .add(class, run, (from, to), delta, self.now, rise);
                }
            }
        }
    }

    /// A running job (or started reservation) gives its nodes back at `at`.
    pub fn release(&mut self, class: u32, shape: &NodeShape, nodes: &[u32], at: Time) {
        self.change(class, shape, nodes, at, None, 1, true);
    }

    /// Holds what `shape` takes on `nodes` over `[from, to)`.
    pub fn hold(&mut self, class: u32, shape: &NodeShape, nodes: &[u32], from: Time, to: Time) {
        self.change(class, shape, nodes, from, Some(to), -1, false);
    }

    /// Undoes [`Timeline::hold`].
    pub fn unhold(&mut self, class: u32, shape: &NodeShape, nodes: &[u32], from: Time, to: Time) {
        self.change(class, shape, nodes, from, Some(to), 1, true);
    }

    /// Undoes [`Timeline::hold`] without counting a rise, for a hold given back only to search
    /// without it: the caller holds it again unchanged (a net change of nothing), or else
    /// stamps the rise ([`Timeline::stamp_rise`]) before its next search.
    pub fn unhold_unstamped(
        &mut self,
        class: u32,
        shape: &NodeShape,
        nodes: &[u32],
        from: Time,
        to: Time,
    ) {
        self.change(class, shape, nodes, from, Some(to), 1, false);
    }

    /// Idle nodes of a whole-node class, minimum over `[from, to)`.
    pub fn idle_min(&self, class: u32, from: Time, to: Time) -> i64 {
        self.counts[class as usize].min_over(from, to)
    }

    /// Whether what is held on `nodes` of `class` over `[from, to)` (a hold of `shape` among
    /// it) leaves no component over-committed: a hold still fits where it is exactly when
    /// this holds with it in place.
    pub fn none_negative(&self, class: u32, nodes: &[u32], from: Time, to: Time) -> bool {
        if self.whole[class as usize] {
            return self.idle_min(class, from, to) >= 0;
        }
        nodes
            .iter()
            .all(|&node| self.node_min(node, from, to).covers(&Vector::ZERO))
    }

    /// A shared-class node's free vector, minimum over `[from, to)`.
    pub fn node_min(&self, node: u32, from: Time, to: Time) -> Vector {
        self.groups.steps_of(node).min_over(from, to)
    }

    /// [`Timeline::node_min`] if it covers `floor`, else `None` (found as soon as it fails).
    #[inline]
    pub fn node_min_covering(
        &self,
        node: u32,
        from: Time,
        to: Time,
        floor: &Vector,
    ) -> Option<Vector> {
        self.groups
            .steps_of(node)
            .min_over_covering(from, to, floor)
    }

    /// A shared-class node's free vector at `t`.
    pub fn node_at(&self, node: u32, t: Time) -> Vector {
        self.groups.steps_of(node).at(t)
    }

    pub fn is_whole(&self, class: u32) -> bool {
        self.whole[class as usize]
    }

    /// Whether `shape` fits on `class` over `[t, t + duration)`.
    pub fn fits(
        &self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        t: Time,
        duration: Time,
    ) -> bool {
        if self.whole[class as usize] {
            return self.idle_min(class, t, t + duration) >= i64::from(shape.count);
        }
        let (full, last) = demands(layout, class, shape);
        let need_full = shape.full();
        let (mut q_full, mut q_last) = (0, 0);
        for node in layout.class(class).nodes.clone() {
            let m = self.node_min(node, t, t + duration);
            if m.covers(&full) {
                q_full += 1;
                q_last += 1;
            } else if last.is_some_and(|l| m.covers(&l)) {
                q_last += 1;
            }
            if q_full >= need_full && q_last >= shape.count {
                return true;
            }
        }
        false
    }

    /// The earliest `t ≥ from` at which `shape` fits on `class` for `duration`; `None` if never.
    pub fn earliest(
        &mut self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        from: Time,
        duration: Time,
    ) -> Option<Time> {
        self.earliest_within(layout, class, shape, (from, Time::MAX), duration, Time::MAX)
    }

    /// The earliest `t` in `[from, before)` at which `shape` fits on `class` over `[t, min(t +
    /// duration, clip))`; `None` if there is none. Bounding the search (`before`) stops it as
    /// soon as only later starts are left; clipping (`clip` ≥ `before`) asks only for a window
    /// up to `clip`, a condition every window that fits in full meets.
    pub fn earliest_within(
        &mut self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        (from, before): (Time, Time),
        duration: Time,
        clip: Time,
    ) -> Option<Time> {
        if self.whole[class as usize] {
            return self.counts[class as usize].earliest_fit_within(
                from,
                before,
                duration,
                clip,
                &i64::from(shape.count),
            );
        }
        // No fit starts before the class has enough idle nodes for the shape's full nodes.
        let from = self
            .groups
            .idle()
            .bound(class, shape, (from, before), duration, clip)?;
        let demand = demands(layout, class, shape);
        // Nodes that agree from now on give the same earliest fits: one visit per group (its
        // function's id), after merging groups that came to agree.
        let mut visits = std::mem::take(&mut self.visits);
        visits.clear();
        if self.groups.grouped(class) {
            self.groups.sync(self.now);
            visits.extend(self.groups.of_class(class));
        } else {
            // A node of a class not grouped owns the function at its own index.
            visits.extend(layout.class(class).nodes.clone().map(|n| (n, 1)));
        }
        let found = self.earliest_over(&visits, shape, (from, before), duration, clip, demand);
        self.visits = visits;
        found
    }

    /// [`Timeline::earliest_within`] over `visits` (step functions by id, each standing for
    /// `members` nodes).
    fn earliest_over(
        &mut self,
        visits: &[(u32, usize)],
        shape: &NodeShape,
        (from, before): (Time, Time),
        duration: Time,
        clip: Time,
        (full, last): (Vector, Option<Vector>),
    ) -> Option<Time> {
        let need_full = shape.full() as usize;
        let need_all = shape.count as usize;
        let mut t = from;
        loop {
            self.scratch_full.clear(need_full);
            self.scratch_last.clear(need_all);
            for &(id, members) in visits {
                let steps = self.groups.steps(id);
                if need_full > 0 {
                    let bound = self.scratch_full.bound(before);
                    if let Some(e) = steps.earliest_fit_within(t, bound, duration, clip, &full) {
                        self.scratch_full.offer(e, members);
                    }
                }
                if let Some(l) = last {
                    let bound = self.scratch_last.bound(before);
                    if let Some(e) = steps.earliest_fit_within(t, bound, duration, clip, &l) {
                        self.scratch_last.offer(e, members);
                    }
                }
            }
            let mut next = t;
            if need_full > 0 {
                next = next.max(self.scratch_full.kth()?);
            }
            if last.is_some() {
                next = next.max(self.scratch_last.kth()?);
            }
            if next == t {
                return Some(t);
            }
            if next >= before {
                return None;
            }
            t = next;
        }
    }

    /// The current count of rises: pass it back as `since` to
    /// [`Timeline::earliest_before_since`] after a search that found nothing.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// A lower bound on the start `t` in `[from, before)` of every window `[t, t + duration)`
    /// that fits `shape` on `class` in this timeline *plus* capacity given back from `before`
    /// on (a caller's own hold, starting there, unchanged since `since`); `None` if there is
    /// none. Given that there was none at clock `since` (0: unknown) from a time ≤ `from`, with
    /// the same arguments otherwise.
    ///
    /// Such a window fits, clipped at `before`, here (before `before` the two timelines are the
    /// same). Since `since`, a node whose capacity did not rise anywhere in `[t, t + duration)`
    /// only lost capacity there, so at any `t` the nodes that fit now and did not rise within
    /// the window fitted then too; a fit now needs more nodes at `t` than then, so one of them
    /// rose within it. So nothing is searched when nothing of the class rose; otherwise the
    /// bound is the earliest `t` at which a node whose window meets one of its rises fits
    /// clipped at `before`, raised, for several nodes, to the earliest clipped fit of the whole
    /// shape from there (`since` = 0 or a whole-node class: that from `from`), searched only
    /// before the latest end of the class's rises since `since`: a window starting there or
    /// later meets none of them.
    pub fn earliest_before_since(
        &mut self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        (from, before): (Time, Time),
        duration: Time,
        since: u64,
    ) -> Option<Time> {
        if self.search_all_since(class, since)? {
            return self.earliest_within(layout, class, shape, (from, before), duration, before);
        }
        // No window fits before its class has enough idle nodes at once.
        let from = self
            .groups
            .idle()
            .bound(class, shape, (from, before), duration, before)?;
        let windows = RisenWindows {
            from,
            before,
            duration,
            clip: before,
            since,
        };
        let (first, risen_until) = self.earliest_on_risen(class, shape, windows);
        let first = first?;
        if shape.count == 1 {
            return Some(first);
        }
        // A window that fits now and did not then uses a node that rose within it, so it
        // starts before the last rise ends: the whole shape is searched only up to there.
        // `first` is such a start itself (its window meets a rise and starts before `before`),
        // so the range is never empty.
        let before_rises_end = before.min(risen_until);
        debug_assert!(
            first < before_rises_end,
            "a risen fit starts before the rises end"
        );
        self.earliest_within(
            layout,
            class,
            shape,
            (first, before_rises_end),
            duration,
            before,
        )
    }

    /// The earliest `t` in `[from, before)` at which `shape` fits on `class` over `[t, t +
    /// duration)` (`earliest_within(.., (from, before), duration, Time::MAX)`), given that none
    /// did at clock `since` (0: unknown) from a time ≤ `from`, with the same arguments
    /// otherwise — as after [`Timeline::earliest_before_since`] found a bound, with the same
    /// `since` and nothing stamped since.
    ///
    /// A one-node shape fits on one node: one whose capacity did not rise within the window
    /// since `since` only lost capacity there and did not fit then, so only the nodes that
    /// rose within it are searched. Other shapes are searched on every node.
    pub fn earliest_since(
        &mut self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        (from, before): (Time, Time),
        duration: Time,
        since: u64,
    ) -> Option<Time> {
        if self.search_all_since(class, since)? || shape.count != 1 {
            return self.earliest_within(layout, class, shape, (from, before), duration, Time::MAX);
        }
        let from = self
            .groups
            .idle()
            .bound(class, shape, (from, before), duration, Time::MAX)?;
        let windows = RisenWindows {
            from,
            before,
            duration,
            clip: Time::MAX,
            since,
        };
        self.earliest_on_risen(class, shape, windows).0
    }

    /// The opening of the `*_since` searches: `None` when nothing of `class` rose since clock
    /// `since` (so nothing fits that did not then); otherwise whether all of the class must be
    /// searched (`since` = 0: unknown; or a whole-node class, whose rises are not kept per node)
    /// rather than only the nodes that rose.
    fn search_all_since(&self, class: u32, since: u64) -> Option<bool> {
        if !self.rose_since(class, since) {
            return None;
        }
        Some(since == 0 || self.whole[class as usize])
    }

    /// The earliest start of `windows` at which one node of a shared class, among those that
    /// rose since `windows.since` within the window, can take a node of `shape` over it — or
    /// an earlier real fit: the rises are kept per step function (issue 36), whose record
    /// covers every rise of every node that has it, so each function that rose is searched
    /// once, over the windows that meet its rises. That looks at every window the nodes' own
    /// rises would, and maybe more: only starts that really fit, none later than the answer
    /// node by node. Under the precondition of [`Timeline::earliest_since`] (nothing fitted
    /// at `since`) the earliest start that fits met a rise, so both give it.
    ///
    /// Also where the rises end: every rise since `windows.since` of the class's nodes ends
    /// by then.
    fn earliest_on_risen(
        &mut self,
        class: u32,
        shape: &NodeShape,
        windows: RisenWindows,
    ) -> (Option<Time>, Time) {
        if self.groups.grouped(class) {
            self.groups.sync(self.now);
        }
        let demands = node_demands(shape);
        let mut first: Option<Time> = None;
        let mut risen_until = Time::MIN;
        for id in self.groups.risen_since(class, windows.since) {
            let span = self.function_rise_span(id, windows.since);
            risen_until = risen_until.max(span.1);
            // Only a start before the best so far can lower it; none is before `from`. Where
            // the rises end is asked for several nodes only.
            if first == Some(windows.from) {
                if shape.count == 1 {
                    break;
                }
                continue;
            }
            let before = first.unwrap_or(windows.before);
            let steps = self.groups.steps(id);
            if let Some(e) =
                window_fit_within(steps, demands, RisenWindows { before, ..windows }, span)
            {
                first = Some(e);
            }
        }
        (first, risen_until)
    }

    /// The earliest start of `windows` at which `node` (of a shared class) can take a node of
    /// `shape` (its full amount or its last) over the window.
    pub fn earliest_on_node(
        &self,
        node: u32,
        shape: &NodeShape,
        windows: RisenWindows,
    ) -> Option<Time> {
        let demands = node_demands(shape);
        self.risen_window_fit(node, demands, windows)
    }

    /// [`Timeline::earliest_on_node`] with the shape's demands ([`node_demands`]).
    #[inline(always)]
    fn risen_window_fit(
        &self,
        node: u32,
        demands: (Option<Vector>, Option<Vector>),
        windows: RisenWindows,
    ) -> Option<Time> {
        let id = self.groups.owner(node);
        let span = self.function_rise_span(id, windows.since);
        window_fit_within(self.groups.steps(id), demands, windows, span)
    }

    /// An interval that covers the rises of function `id` since clock `since` (0: all time) —
    /// and so those of each of its nodes.
    #[inline]
    fn function_rise_span(&self, id: u32, since: u64) -> (Time, Time) {
        if since == 0 {
            (Time::MIN, Time::MAX)
        } else {
            self.groups.rise_span(id, since)
        }
    }

    /// Whether capacity of `class` rose after clock `since` (0: unknown, as if it had).
    #[inline]
    pub fn rose_since(&self, class: u32, since: u64) -> bool {
        since == 0 || self.class_rises[class as usize] > since
    }

    /// The step functions of a shared class that rose after clock `since` (> 0), each once,
    /// as (id, one of its nodes, how many nodes have it): every node that rose has one of
    /// them (with the nodes that share it since, which may not have risen).
    pub fn risen_functions(
        &self,
        class: u32,
        since: u64,
    ) -> impl Iterator<Item = (u32, u32, usize)> + '_ {
        self.groups.risen_since(class, since).map(move |id| {
            let (node, members) = self.groups.members_of(class, id);
            (id, node, members)
        })
    }

    /// Merges the groups of nodes whose futures came to agree, so that the walks below visit
    /// each distinct future once ([`NodeGroups::sync`]; exact either way).
    pub fn sync_groups(&mut self) {
        self.groups.sync(self.now);
    }

    /// Calls `visit(steps, node, members)` once per distinct step function of the shared
    /// `class` as last synced ([`Timeline::sync_groups`]): its function, one of its nodes and
    /// how many nodes have it — each node of a class not grouped on its own.
    pub fn for_each_function(
        &self,
        layout: &Layout,
        class: u32,
        mut visit: impl FnMut(&Steps<Vector>, u32, usize),
    ) {
        if self.groups.grouped(class) {
            for (g, members) in self.groups.of_class(class) {
                visit(self.groups.steps(g), self.groups.first_member(g), members);
            }
        } else {
            for node in layout.class(class).nodes.clone() {
                visit(self.groups.steps(node), node, 1);
            }
        }
    }

    /// Whether the idle-node count of the shared `class` ([`super::idle_nodes`]) rules out
    /// `shape` over `[t, t + duration)`: its full nodes take every core of a node, and fewer
    /// of the class's nodes are idle somewhere in the window. False when the count tells
    /// nothing (a class not counted, a shape not taking whole nodes).
    pub fn too_few_idle(&self, class: u32, shape: &NodeShape, t: Time, duration: Time) -> bool {
        self.groups
            .idle()
            .bound(class, shape, (t, t + 1), duration, Time::MAX)
            .is_none()
    }

    /// The step functions of `class` with how many nodes have each, when the class is grouped
    /// (every node once, in no order); `None` when its nodes are searched one by one.
    pub fn grouped_functions(
        &self,
        class: u32,
    ) -> Option<impl Iterator<Item = (&Steps<Vector>, usize)> + '_> {
        self.groups.grouped(class).then(|| {
            self.groups
                .of_class(class)
                .map(|(g, members)| (self.groups.steps(g), members))
        })
    }

    /// The id of `node`'s step function: nodes with the same id have the same function
    /// (below [`Timeline::function_ids`]).
    #[inline]
    pub fn function_of(&self, node: u32) -> u32 {
        self.groups.owner(node)
    }

    /// An upper bound on the ids [`Timeline::function_of`] gives.
    pub fn function_ids(&self) -> usize {
        self.groups.ids()
    }

    /// The earliest `t` in `[from, before)` at which `demand` is free on `node` (of a shared
    /// class) over `[t, t + duration)`; `None` if there is none.
    #[inline]
    pub fn node_earliest_fit(
        &self,
        node: u32,
        (from, before): (Time, Time),
        duration: Time,
        demand: &Vector,
    ) -> Option<Time> {
        self.groups
            .steps_of(node)
            .earliest_fit_within(from, before, duration, Time::MAX, demand)
    }

    /// Chooses the nodes of a shared class that `shape` takes over `[t, t + duration)`, in
    /// `placement` order (best fit measures what each node has free at `t`), into `out` (full
    /// nodes first, the last node last). False, with `out` unspecified, if it does not fit.
    #[allow(clippy::too_many_arguments)]
    pub fn select(
        &mut self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        t: Time,
        duration: Time,
        placement: Placement,
        out: &mut Vec<u32>,
    ) -> bool {
        // Members of a group have the same minimum over the window: worked out once per group
        // (exact whether or not groups that came to agree are merged yet).
        let grouped = self.groups.grouped(class);
        if grouped && placement == Placement::FirstFit {
            return self.first_fit_grouped(layout, class, shape, (t, duration), out);
        }
        let mut mins = std::mem::take(&mut self.group_mins);
        if grouped {
            mins.begin(self.groups.ids());
        }
        let found = self.select_in(
            layout,
            class,
            shape,
            (t, duration),
            placement,
            1,
            &mut |_, _, _| true,
            grouped.then_some(&mut mins),
            out,
        );
        self.group_mins = mins;
        found
    }

    /// [`Timeline::select`] under first fit on a grouped class: the walk of
    /// [`Timeline::select_in`] with what each node can take worked out once per group — the
    /// same nodes, at a few instructions a node (a wide job's selection visits thousands).
    fn first_fit_grouped(
        &mut self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        (t, duration): (Time, Time),
        out: &mut Vec<u32>,
    ) -> bool {
        let (full, last) = demands(layout, class, shape);
        let floor = full.meet(last.unwrap_or(full));
        // Per group of the class: what its members can take over the window ([`node_takes`]),
        // `UNKNOWN` until a member is visited. Reset over the class's groups only, and read at
        // two loads a node: a wide job's walk visits thousands.
        const UNKNOWN: u8 = 4;
        let mut takes = std::mem::take(&mut self.group_takes);
        if takes.len() < self.groups.ids() {
            takes.resize(self.groups.ids(), UNKNOWN);
        }
        for (g, _) in self.groups.of_class(class) {
            takes[g as usize] = UNKNOWN;
        }
        let mut picker = Picker::new(shape);
        out.clear();
        out.reserve(shape.count as usize);
        // Run by run: a run's nodes share their group (issue 36: at 5,000 nodes, 30 nodes a
        // run where the walk passes).
        for (p, q) in self.groups.runs(layout.class(class).nodes.clone()) {
            if picker.done() {
                break;
            }
            let g = self.groups.owner(p);
            let mut can = takes[g as usize];
            if can == UNKNOWN {
                let min = self
                    .groups
                    .steps(g)
                    .min_over_covering(t, t + duration, &floor);
                can = node_takes(min, &full, last.as_ref());
                takes[g as usize] = can;
            }
            if can != 0 {
                picker.offer_run(p..q, can & 1 != 0, can & 2 != 0, out);
            }
        }
        self.group_takes = takes;
        picker.finish(out)
    }

    /// [`Timeline::select`] where `allow(node, amount, sweep)` may refuse a node offered for a
    /// role, and nodes are visited `sweeps` times (nodes already chosen are not offered again).
    #[allow(clippy::too_many_arguments)]
    pub fn select_with(
        &self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        window: (Time, Time),
        placement: Placement,
        sweeps: u32,
        allow: &mut dyn FnMut(u32, Vector, u32) -> bool,
        out: &mut Vec<u32>,
    ) -> bool {
        self.select_in(
            layout, class, shape, window, placement, sweeps, allow, None, out,
        )
    }

    /// [`Timeline::select_with`], reading each node's minimum over the window from its group's
    /// in `mins` when given.
    #[allow(clippy::too_many_arguments)]
    fn select_in(
        &self,
        layout: &Layout,
        class: u32,
        shape: &NodeShape,
        (t, duration): (Time, Time),
        placement: Placement,
        sweeps: u32,
        allow: &mut dyn FnMut(u32, Vector, u32) -> bool,
        mut mins: Option<&mut PerGroup<Option<Vector>>>,
        out: &mut Vec<u32>,
    ) -> bool {
        debug_assert!(!self.whole[class as usize]);
        let (full, last) = demands(layout, class, shape);
        let smallest = last.unwrap_or(full);
        let floor = full.meet(smallest);
        // A node's minimum over the window if it covers `asked` (`floor` or above: what covers
        // `asked` covers `floor`), its group's when grouped.
        let mut min_covering = |node: u32, asked: &Vector| match mins.as_deref_mut() {
            Some(mins) => mins
                .get(self.groups.owner(node), || {
                    self.node_min_covering(node, t, t + duration, &floor)
                })
                .filter(|m| m.covers(asked)),
            None => self.node_min_covering(node, t, t + duration, asked),
        };
        let mut picker = Picker::new(shape);
        out.clear();
        let nodes = layout.class(class).nodes.clone();
        // The visiting order: the class's nodes in index order (first fit: nothing to build,
        // as placement runs for every planned job), or sorted by best fit's key.
        let mut keyed: Vec<(u64, u64, u32)> = Vec::new();
        if placement == Placement::BestFit {
            keyed.extend(
                nodes
                    .clone()
                    .filter(|&n| min_covering(n, &smallest).is_some())
                    .map(|n| {
                        let v = self.node_at(n, t);
                        placement.node_key(n, &ResourceVec(v.map(|x| x.max(0) as u64)))
                    }),
            );
            keyed.sort_unstable();
        }
        let visits = match placement {
            Placement::FirstFit => nodes.len(),
            Placement::BestFit => keyed.len(),
        };
        let node_at = |k: usize| match placement {
            Placement::FirstFit => nodes.start + k as u32,
            Placement::BestFit => keyed[k].2,
        };
        // Nodes chosen so far, kept only when a later sweep must skip them.
        let mut used: Vec<u32> = Vec::new();
        'sweeps: for sweep in 0..sweeps {
            for k in 0..visits {
                let node = node_at(k);
                if sweep > 0 && used.contains(&node) {
                    continue;
                }
                // A node short of what both roles take somewhere in the window takes neither:
                // dismissed at the first segment that shows it.
                let Some(m) = min_covering(node, &floor) else {
                    continue;
                };
                let can = node_takes(Some(m), &full, last.as_ref());
                let Some(role) = picker.role(can & 1 != 0, can & 2 != 0) else {
                    continue;
                };
                let amount = if role { full } else { smallest };
                if allow(node, amount, sweep) {
                    picker.assign(node, role, out);
                    if sweeps > 1 {
                        used.push(node);
                    }
                    if picker.done() {
                        break 'sweeps;
                    }
                }
            }
        }
        picker.finish(out)
    }
}

/// The earliest start of `windows` at which a node with function `steps` can take `full` (or
/// `last`) over the window, among the windows that meet its rises within `[lo, hi)`.
#[inline(always)]
fn window_fit_within(
    steps: &Steps<Vector>,
    (full, last): (Option<Vector>, Option<Vector>),
    RisenWindows {
        from,
        before,
        duration,
        clip,
        since: _,
    }: RisenWindows,
    (lo, hi): (Time, Time),
) -> Option<Time> {
    // The windows that meet its rises, `[lo, hi)`: `t < hi` and `t + duration > lo`.
    let start = from.max(lo.saturating_sub(duration).saturating_add(1));
    let mut first = None;
    if let Some(f) = full {
        first = steps.earliest_fit_within(start, before.min(hi), duration, clip, &f);
    }
    if let Some(l) = last
        && let Some(e) =
            steps.earliest_fit_within(start, first.unwrap_or(before).min(hi), duration, clip, &l)
    {
        first = Some(e);
    }
    first
}

/// What one node of a shape takes: the full amount if any node takes it, and the last one.
#[inline]
fn node_demands(shape: &NodeShape) -> (Option<Vector>, Option<Vector>) {
    (
        (shape.full() > 0).then(|| vector(shape.per_node)),
        shape.last.map(vector),
    )
}

/// What a node can take of a shape whose nodes take `full` and the last one `last`, from its
/// minimum free vector over the window (`None`: short of what every node of the shape takes):
/// bit 0 the full amount, bit 1 the full amount or the last one. A selection and the test of
/// whether a job starts now work this out once per group of nodes that share a function.
#[inline]
pub fn node_takes(min: Option<Vector>, full: &Vector, last: Option<&Vector>) -> u8 {
    match min {
        Some(m) if m.covers(full) => 3,
        Some(m) if last.is_some_and(|l| m.covers(l)) => 2,
        _ => 0,
    }
}

/// The signed per-node demands of a shape: the full amount and the last one, if any.
#[inline]
pub fn demands(_layout: &Layout, _class: u32, shape: &NodeShape) -> (Vector, Option<Vector>) {
    (vector(shape.per_node), shape.last.map(vector))
}

/// The `k` smallest times offered, each offer with a number of copies (a group's members): a
/// max-heap of (time, copies), trimmed while dropping its top would leave at least `k`, so
/// that the `k`-th smallest lies in the top entry.
#[derive(Clone, Debug, Default)]
struct Smallest {
    heap: BinaryHeap<(Time, usize)>,
    /// Copies in `heap`.
    total: usize,
    k: usize,
}

impl Smallest {
    /// Empties it, to keep the `k` (≥ 1) smallest.
    fn clear(&mut self, k: usize) {
        self.heap.clear();
        self.total = 0;
        self.k = k;
    }

    fn offer(&mut self, e: Time, copies: usize) {
        if self
            .heap
            .peek()
            .is_some_and(|top| self.total >= self.k && e >= top.0)
        {
            return;
        }
        self.heap.push((e, copies));
        self.total += copies;
        while let Some(&(_, c)) = self.heap.peek() {
            if self.total - c < self.k {
                break;
            }
            self.heap.pop();
            self.total -= c;
        }
    }

    /// The `k`-th smallest time offered, `None` if fewer than `k` were.
    fn kth(&self) -> Option<Time> {
        if self.total < self.k {
            return None;
        }
        self.heap.peek().map(|top| top.0)
    }

    /// The `k`-th smallest, or `before` if earlier or if fewer than `k` were offered: a search
    /// need not look past it.
    fn bound(&self, before: Time) -> Time {
        self.kth().map_or(before, |t| t.min(before))
    }
}

/// Greedy assignment of offered nodes to a shape's roles: the first `full` nodes that can take
/// the full amount, then one more that can take the last amount. Succeeds exactly when the
/// count condition holds over the offered nodes, whatever their order.
#[derive(Clone, Copy, Debug)]
pub struct Picker {
    full_left: u32,
    last_wanted: bool,
    last: Option<u32>,
}

impl Picker {
    pub fn new(shape: &NodeShape) -> Self {
        Picker {
            full_left: shape.full(),
            last_wanted: shape.last.is_some(),
            last: None,
        }
    }

    /// The role a node would take: `Some(true)` full, `Some(false)` last, `None` none.
    #[inline]
    pub fn role(&self, takes_full: bool, takes_last: bool) -> Option<bool> {
        if self.full_left > 0 && takes_full {
            Some(true)
        } else if self.last_wanted && self.last.is_none() && (takes_last || takes_full) {
            Some(false)
        } else {
            None
        }
    }

    /// Assigns `node` to `role` (from [`Picker::role`]).
    #[inline]
    pub fn assign(&mut self, node: u32, full_role: bool, out: &mut Vec<u32>) {
        if full_role {
            self.full_left -= 1;
            out.push(node);
        } else {
            self.last = Some(node);
        }
    }

    /// Offers a node; it takes the first role it qualifies for.
    #[inline]
    pub fn offer(&mut self, node: u32, takes_full: bool, takes_last: bool, out: &mut Vec<u32>) {
        if let Some(role) = self.role(takes_full, takes_last) {
            self.assign(node, role, out);
        }
    }

    /// Offers the nodes of `run` in order, each as [`Picker::offer`] would, stopping once
    /// done.
    #[inline]
    pub fn offer_run(
        &mut self,
        run: std::ops::Range<u32>,
        takes_full: bool,
        takes_last: bool,
        out: &mut Vec<u32>,
    ) {
        let mut next = run.start;
        if takes_full && self.full_left > 0 {
            let n = self.full_left.min(run.end - run.start);
            out.extend(next..next + n);
            self.full_left -= n;
            next += n;
        }
        if next < run.end {
            self.offer(next, takes_full, takes_last, out);
        }
    }

    #[inline]
    pub fn done(&self) -> bool {
        self.full_left == 0 && (!self.last_wanted || self.last.is_some())
    }

    /// Appends the last node; true if every role is filled.
    pub fn finish(&self, out: &mut Vec<u32>) -> bool {
        if !self.done() {
            return false;
        }
        if let Some(l) = self.last {
            out.push(l);
        }
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::cluster::{Cluster, NodeClass, Topology};
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};

    fn layout() -> Layout {
        Layout::new(&TopologyMachine::new(Topology::new(vec![
            Cluster::new("s", Allocation::Shared, vec![NodeClass::new("n", 3, 8, 16)]),
            Cluster::new(
                "x",
                Allocation::ExclusiveNodes,
                vec![NodeClass::new("n", 4, 4, 8)],
            ),
        ])))
        .unwrap()
    }

    /// `count` nodes of `cores` cores, the last one `last` cores if given.
    pub(crate) fn shape(count: u32, cores: u64, last: Option<u64>) -> NodeShape {
        NodeShape {
            count,
            per_node: ResourceVec([cores, 0, 0]),
            last: last.map(|l| ResourceVec([l, 0, 0])),
            whole: false,
        }
    }

    #[test]
    fn earliest_fit_needs_enough_nodes_at_one_time() {
        let l = layout();
        let mut tl = Timeline::default();
        tl.reset(&l, 0, &FreeNodes::new(&l));
        // Node 0 busy on [0, 10), node 1 on [5, 20), node 2 free.
        tl.hold(0, &shape(1, 8, None), &[0], 0, 10);
        tl.hold(0, &shape(1, 8, None), &[1], 5, 20);
        assert_eq!(tl.earliest(&l, 0, &shape(1, 8, None), 0, 100), Some(0));
        // Two whole nodes for 5 s: nodes 1 and 2 on [0, 5).
        assert_eq!(tl.earliest(&l, 0, &shape(2, 8, None), 0, 5), Some(0));
        // Two for 6 s: node 0 frees at 10 (node 1 is busy until 20) → 10 with nodes 0 and 2.
        assert_eq!(tl.earliest(&l, 0, &shape(2, 8, None), 0, 6), Some(10));
        assert_eq!(tl.earliest(&l, 0, &shape(3, 8, None), 0, 1), Some(20));
        // 8 + 4 cores: the 4 fit beside nothing else, so the same as two whole nodes here.
        assert_eq!(tl.earliest(&l, 0, &shape(2, 8, Some(4)), 0, 6), Some(10));
        let mut out = Vec::new();
        assert!(tl.select(
            &l,
            0,
            &shape(2, 8, None),
            10,
            6,
            Placement::FirstFit,
            &mut out
        ));
        assert_eq!(out, [0, 2]);
        assert!(!tl.select(
            &l,
            0,
            &shape(2, 8, None),
            9,
            6,
            Placement::FirstFit,
            &mut out
        ));
        assert!(tl.fits(&l, 0, &shape(2, 8, None), 10, 6));
        assert!(!tl.fits(&l, 0, &shape(2, 8, None), 9, 6));
    }

    /// A reset counts every function as risen, those whose ids were in use before it among
    /// them: a search from a clock before the reset looks everywhere. (Here the class has one
    /// idle group after each reset, under the same id: a record kept from before the reset
    /// would say nothing rose since.)
    #[test]
    fn a_reset_counts_every_function_as_risen() {
        let l = layout();
        let mut tl = Timeline::default();
        let free = FreeNodes::new(&l);
        tl.reset(&l, 0, &free);
        tl.hold(0, &shape(1, 8, None), &[0], 0, 100);
        let wide = shape(3, 8, None);
        // No window of three nodes in [0, 100) then, with node 0 held.
        assert_eq!(
            tl.earliest_within(&l, 0, &wide, (0, 100), 10, Time::MAX),
            None
        );
        let since = tl.clock();
        // A rebuild without the hold: the window at 0 is there again.
        tl.reset(&l, 0, &free);
        assert_eq!(
            tl.earliest_before_since(&l, 0, &wide, (0, 100), 10, since),
            Some(0)
        );
        assert_eq!(
            tl.earliest_since(&l, 0, &wide, (0, 100), 10, since),
            Some(0)
        );
    }

    /// A wide shape's search after a failed one looks up to the latest end of the rises since,
    /// whichever rise the one-node search meets first: here one node rose at the search's
    /// start and another later, and only with the later one do two nodes fit.
    #[test]
    fn a_search_since_looks_up_to_the_last_rise_s_end() {
        let l = layout();
        let one = shape(1, 8, None);
        let two = shape(2, 8, None);
        for early_rise_first in [true, false] {
            let mut tl = Timeline::default();
            tl.reset(&l, 0, &FreeNodes::new(&l));
            // Nodes 0 and 1 held over the whole horizon, node 2 until 100: no two nodes then.
            tl.hold(0, &one, &[0], 0, 1000);
            tl.hold(0, &one, &[1], 0, 1000);
            tl.hold(0, &one, &[2], 0, 100);
            assert_eq!(tl.earliest_within(&l, 0, &two, (0, 1000), 10, 1000), None);
            let since = tl.clock();
            // Node 0 frees [0, 20) (one node fits at the start, two do not: node 2 is busy)
            // and node 1 [500, 600) (nodes 1 and 2 fit at 500), in either order.
            let rises = [(0u32, 0, 20), (1, 500, 600)];
            let order = if early_rise_first { [0, 1] } else { [1, 0] };
            for i in order {
                let (node, from, to) = rises[i];
                tl.unhold(0, &one, &[node], from, to);
            }
            assert_eq!(
                tl.earliest_before_since(&l, 0, &two, (0, 1000), 10, since),
                Some(500),
                "early rise first: {early_rise_first}"
            );
        }
    }

    /// `earliest` against the first fitting start among `from` and the holds' ends (where
    /// capacity rises: a window that fits starts at one of them), each tried with `fits`, on
    /// random holds, for one-node shapes and wider ones.
    #[test]
    fn earliest_is_the_first_start_that_fits() {
        let l = layout();
        let mut rand = super::super::test_rand(0x5eed);
        for _ in 0..2_000 {
            let mut tl = Timeline::default();
            tl.reset(&l, 0, &FreeNodes::new(&l));
            let mut ends = vec![0];
            for _ in 0..rand(8) {
                let (node, from) = (rand(3) as u32, rand(50) as Time);
                let to = from + 1 + rand(40) as Time;
                let cores = 1 + rand(8);
                // Only holds that fit, as a plan makes them.
                if tl.node_min(node, from, to)[0] >= cores as i64 {
                    tl.hold(0, &shape(1, cores, None), &[node], from, to);
                    ends.push(to);
                }
            }
            let count = 1 + rand(3) as u32;
            let cores = 2 + rand(7);
            // A last node takes less than the others.
            let last = (rand(2) == 0).then(|| 1 + rand(cores - 1));
            let s = shape(count, cores, last);
            let (from, duration) = (rand(30) as Time, 1 + rand(30) as Time);
            let want = ends
                .iter()
                .map(|&e| e.max(from))
                .filter(|&t| tl.fits(&l, 0, &s, t, duration))
                .min();
            assert_eq!(tl.earliest(&l, 0, &s, from, duration), want, "{s:?}");
        }
    }

    /// With nodes grouped by their future (issue 36): on random holds and give-backs over runs
    /// of nodes as the present moves, `earliest` is the first start among `from` and the
    /// holds' ends that `fits` (which reads every node) accepts, and `select`, which reads one
    /// minimum per group, chooses what `select_with`, which reads every node, chooses.
    #[test]
    fn grouped_searches_agree_with_every_node() {
        let l = Layout::new(&TopologyMachine::new(Topology::new(vec![Cluster::new(
            "s",
            Allocation::Shared,
            vec![
                NodeClass::new("a", 12, 8, 16),
                NodeClass::new("b", 5, 8, 16),
            ],
        )])))
        .unwrap();
        let mut rand = super::super::test_rand(0x6a09);
        for _ in 0..300 {
            let mut tl = Timeline::default();
            tl.reset(&l, 0, &FreeNodes::new(&l));
            let mut now = 0;
            let mut holds: Vec<(u32, NodeShape, Vec<u32>, Time, Time)> = Vec::new();
            let mut ends = Vec::new();
            for _ in 0..30 {
                match rand(4) {
                    0 => {
                        now += rand(20) as Time;
                        tl.advance(now);
                    }
                    1 if !holds.is_empty() => {
                        let (c, s, nodes, from, to) =
                            holds.swap_remove(rand(holds.len() as u64) as usize);
                        tl.unhold(c, &s, &nodes, from.max(now), to);
                    }
                    _ => {
                        let class = rand(2) as u32;
                        let range = l.class(class).nodes.clone();
                        let first = range.start + rand(u64::from(range.end - range.start)) as u32;
                        let nodes: Vec<u32> =
                            (first..(first + 1 + rand(5) as u32).min(range.end)).collect();
                        let from = now + rand(40) as Time;
                        let to = from + 1 + rand(60) as Time;
                        let s = shape(nodes.len() as u32, 1 + rand(8), None);
                        // Only holds that fit, as a plan makes them.
                        if nodes
                            .iter()
                            .all(|&n| tl.node_min(n, from, to)[0] >= s.per_node.0[0] as i64)
                        {
                            tl.hold(class, &s, &nodes, from, to);
                            holds.push((class, s, nodes, from, to));
                            ends.push(to);
                        }
                    }
                }
                let class = rand(2) as u32;
                let count = 1 + rand(6) as u32;
                let cores = 2 + rand(7);
                let last = (rand(2) == 0).then(|| 1 + rand(cores - 1));
                let s = shape(count, cores, last);
                let (from, duration) = (now + rand(30) as Time, 1 + rand(40) as Time);
                let want = std::iter::once(from)
                    .chain(ends.iter().map(|&e| e.max(from)))
                    .filter(|&t| tl.fits(&l, class, &s, t, duration))
                    .min();
                let got = tl.earliest(&l, class, &s, from, duration);
                assert_eq!(got, want, "{s:?} from {from} for {duration}");
                let t = got.unwrap_or(from);
                for placement in [Placement::FirstFit, Placement::BestFit] {
                    let (mut grouped, mut each) = (Vec::new(), Vec::new());
                    let every = tl.select_with(
                        &l,
                        class,
                        &s,
                        (t, duration),
                        placement,
                        1,
                        &mut |_, _, _| true,
                        &mut each,
                    );
                    let found = tl.select(&l, class, &s, t, duration, placement, &mut grouped);
                    assert_eq!(found, every);
                    assert_eq!(found, got.is_some());
                    if found {
                        assert_eq!(grouped, each);
                    }
                }
            }
        }
    }

    /// Holds, give-backs and releases on random sets of nodes (runs, as a wide job's, and
    /// scattered nodes, which split groups; the full amount and a last one) as the present
    /// moves, applied alike to a timeline whose groups own their members' functions
    /// (`node_groups`) and to one keeping a function per node: every node's function, every
    /// `earliest`, `select` (first and best fit) and repeated search since a clock agree. Now
    /// and then each is replaced by a copy of it made with [`Timeline::restore_from`] over a
    /// timeline with another history (an earlier round's), and they go on agreeing.
    #[test]
    fn group_owned_functions_agree_with_one_per_node() {
        let l = Layout::new(&TopologyMachine::new(Topology::new(vec![Cluster::new(
            "s",
            Allocation::Shared,
            vec![
                NodeClass::new("a", 16, 8, 16),
                NodeClass::new("b", 6, 8, 16),
            ],
        )])))
        .unwrap();
        let mut rand = super::super::test_rand(0xbb67);
        // Restored into: an earlier round's timelines (stale functions and groups), one of
        // each kind, which pass through the same changes (so their clocks agree, as the
        // searches since a clock below need).
        let mut spare = Timeline::default();
        let mut spare_each = Timeline::grouping_nothing();
        let mut restored = 0;
        for round in 0..300 {
            let mut free = FreeNodes::new(&l);
            // Some rounds start from partly used nodes: the reset groups unequal vectors.
            if round % 2 == 1 {
                for node in 0..l.node_count() {
                    if rand(3) == 0 {
                        free.take(node, ResourceVec([1 + rand(7), 0, 0])).unwrap();
                    }
                }
            }
            let (mut grouped, mut each) = (Timeline::default(), Timeline::default());
            each.group_from = Some(u32::MAX);
            grouped.reset(&l, 0, &free);
            each.reset(&l, 0, &free);
            assert!(grouped.groups.grouped(0) && !each.groups.grouped(0));
            let mut now = 0;
            let mut holds: Vec<(u32, NodeShape, Vec<u32>, Time, Time)> = Vec::new();
            for _ in 0..40 {
                let class = rand(2) as u32;
                let range = l.class(class).nodes.clone();
                match rand(5) {
                    0 => {
                        now += rand(20) as Time;
                        grouped.advance(now);
                        each.advance(now);
                    }
                    1 if !holds.is_empty() => {
                        let (c, s, nodes, from, to) =
                            holds.swap_remove(rand(holds.len() as u64) as usize);
                        let from = from.max(now);
                        if rand(2) == 0 {
                            grouped.unhold(c, &s, &nodes, from, to);
                            each.unhold(c, &s, &nodes, from, to);
                        } else {
                            grouped.unhold_unstamped(c, &s, &nodes, from, to);
                            each.unhold_unstamped(c, &s, &nodes, from, to);
                        }
                    }
                    2 => {
                        // A release of capacity that was never held here, as a rebuild's.
                        let nodes: Vec<u32> = range.clone().filter(|_| rand(4) == 0).collect();
                        let s = shape(nodes.len() as u32, 1 + rand(3), None);
                        let at = now + rand(50) as Time;
                        grouped.release(class, &s, &nodes, at);
                        each.release(class, &s, &nodes, at);
                    }
                    _ => {
                        let nodes: Vec<u32> = if rand(2) == 0 {
                            let first =
                                range.start + rand(u64::from(range.end - range.start)) as u32;
                            (first..(first + 1 + rand(8) as u32).min(range.end)).collect()
                        } else {
                            range.clone().filter(|_| rand(3) == 0).collect()
                        };
                        if nodes.is_empty() {
                            continue;
                        }
                        let cores = 1 + rand(4);
                        let last = (nodes.len() > 1 && rand(2) == 0).then(|| rand(cores));
                        let s = shape(nodes.len() as u32, cores, last);
                        let from = now + rand(40) as Time;
                        let to = from + 1 + rand(60) as Time;
                        grouped.hold(class, &s, &nodes, from, to);
                        each.hold(class, &s, &nodes, from, to);
                        holds.push((class, s, nodes, from, to));
                    }
                }
                if rand(8) == 0 {
                    spare.restore_from(&grouped, &l);
                    std::mem::swap(&mut grouped, &mut spare);
                    spare_each.restore_from(&each, &l);
                    std::mem::swap(&mut each, &mut spare_each);
                    restored += 1;
                }
                for node in 0..l.node_count() {
                    let (a, b) = (grouped.groups.steps_of(node), each.groups.steps_of(node));
                    assert!(a.same_future(b, now), "node {node} at {now}");
                }
                let count = 1 + rand(8) as u32;
                let cores = 1 + rand(8);
                let last = (rand(2) == 0).then(|| rand(cores));
                let s = shape(count, cores, last);
                let (from, duration) = (now + rand(30) as Time, 1 + rand(40) as Time);
                let before = from + rand(80) as Time;
                let got = grouped.earliest(&l, class, &s, from, duration);
                assert_eq!(got, each.earliest(&l, class, &s, from, duration));
                let since = grouped.clock().saturating_sub(rand(4));
                // The grouped searches look at a function's rises where the others look at a
                // node's, which they cover (a group's record holds every rise of every node
                // while a member): at least the same windows, so bounds no later, and starts
                // that are real fits (the searches' preconditions are not set up here, so
                // these are the properties that hold whatever `since` is).
                let window = (from, before);
                let bound = grouped.earliest_before_since(&l, class, &s, window, duration, since);
                if let Some(b) = each.earliest_before_since(&l, class, &s, window, duration, since)
                {
                    assert!(bound.is_some_and(|g| g <= b), "{bound:?} after {b}");
                }
                let start = grouped.earliest_since(&l, class, &s, window, duration, since);
                if let Some(e) = each.earliest_since(&l, class, &s, window, duration, since) {
                    assert!(start.is_some_and(|g| g <= e), "{start:?} after {e}");
                }
                if let Some(g) = start {
                    assert!(grouped.fits(&l, class, &s, g, duration), "{g} does not fit");
                    let first = grouped.earliest_within(&l, class, &s, window, duration, Time::MAX);
                    assert!(first.is_some_and(|f| f <= g));
                }
                let t = got.unwrap_or(from);
                for placement in [Placement::FirstFit, Placement::BestFit] {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let found = grouped.select(&l, class, &s, t, duration, placement, &mut a);
                    assert_eq!(
                        found,
                        each.select(&l, class, &s, t, duration, placement, &mut b)
                    );
                    if found {
                        assert_eq!(a, b);
                    }
                }
            }
        }
        assert!(restored > 1_000, "{restored} copies restored");
    }

    #[test]
    fn whole_node_classes_count_nodes() {
        let l = layout();
        let mut tl = Timeline::default();
        let mut free = FreeNodes::new(&l);
        free.take(3, ResourceVec([4, 8, 0])).unwrap();
        tl.reset(&l, 0, &free);
        assert_eq!(tl.idle_min(1, 0, 1), 3);
        tl.release(1, &shape(1, 4, None), &[3], 50);
        tl.hold(1, &shape(2, 4, None), &[], 10, 60);
        assert_eq!(tl.earliest(&l, 1, &shape(3, 4, None), 0, 10), Some(0));
        assert_eq!(tl.earliest(&l, 1, &shape(3, 4, None), 0, 11), Some(60));
        assert_eq!(tl.earliest(&l, 1, &shape(2, 4, None), 0, 11), Some(50));
    }

    #[test]
    fn the_picker_fills_full_roles_before_the_last() {
        let s = shape(3, 8, Some(2));
        let mut p = Picker::new(&s);
        let mut out = Vec::new();
        p.offer(7, false, true, &mut out); // only the last fits here
        p.offer(8, true, true, &mut out);
        assert!(!p.done());
        p.offer(9, true, true, &mut out);
        assert!(p.finish(&mut out));
        assert_eq!(out, [8, 9, 7]);
    }
}
