//! The step functions of a shared class's nodes, one per group of nodes that share it.
//!
//! Nodes whose step functions agree from now on are interchangeable to a search for the
//! earliest fit: each gives the same earliest start for a shape. A search can then visit one
//! function per group and count it as many times as the group has members, which turns a walk
//! over every node of a class into a walk over the distinct futures there. On the Curie-shaped
//! window those are about 1 % of the nodes at 5,000 nodes and 6 % at 500 (wide jobs hold many
//! nodes over the same interval, and idle nodes share one flat future).
//!
//! A group *owns* its members' step function (issue 36): a node has no function of its own,
//! only its group's. So a change on every member of a group (a wide job's hold on nodes that
//! agreed, a release of a job alone on its nodes) changes one function; a change on some
//! members splits them off into a new group, with a copy of the function changed once; a
//! reset groups the nodes by their free vector. Every node's function is therefore its
//! group's at all times, exactly — grouping is never a guess. What is lazy is only the merging
//! of groups whose futures have become equal, which keeps the groups few ([`NodeGroups::sync`],
//! before a search): a group whose function changed (or that was split off) is re-hashed and
//! merged into a group of its class with the same future if there is one, checked breakpoint
//! for breakpoint ([`Steps::same_future`]; the hash only finds the candidate); and a group's
//! hash describes its future from the present, so it expires when the present passes the
//! group's next breakpoint, when it is re-hashed and merged likewise (two groups whose holds
//! end at different times agree once both ended).
//!
//! Each function also keeps where its capacity last rose ([`super::rises`]), so that a search
//! repeated after a failed one visits the functions that rose — one per group — rather than the
//! nodes (issue 36: at 500 nodes, 60 nodes visited a search for 7 functions searched). A rise
//! is stamped on the functions the nodes have after the change that raised them; a group split
//! off inherits its group's record (its members' rises so far), and a merged group takes in
//! both records, so a group's record covers every rise of every node while it was a member.
//! A search looking at a function's rises instead of each node's looks at more windows, never
//! fewer, and every start it finds is a real fit.
//!
//! A group's members are not listed: each node names its group, and a bit per node marks
//! where a run of nodes with the same group starts. Wide jobs take consecutive nodes and
//! alike nodes sit side by side, so the runs are few (issue 36: the 22 M nodes that changed
//! group at 5,000 nodes in fairshare order lay in 0.5 M runs, and a first-fit walk passes
//! 30 nodes a run): a change, a first-fit selection and a merge go run by run, and a node
//! changes group by a fill of its run, not by moving it between member lists.
//!
//! Classes of fewer than [`GROUPED_FROM`] nodes, and whole-node classes, keep one function per
//! node: a node's function is at its own index.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::BuildHasherDefault;

use super::idle_nodes::IdleNodes;
use super::layout::Layout;
use super::rises::{RiseOrder, Rises};
use super::steps::{Steps, Vector};
use crate::sim::job::Time;
use crate::sim::mix_hash::MixHasher;

/// Classes of fewer nodes are not grouped: a walk over them costs little, and the upkeep would
/// cost more (METACENTRUM-2009 on `mc-2013`, classes of 1–112 nodes: node-level conservative
/// took +55 % CPU with every class grouped). Unit tests group every class.
pub const GROUPED_FROM: u32 = if cfg!(test) { 1 } else { 128 };

#[derive(Clone, Copy, Debug, Default)]
struct Group {
    class: u32,
    /// The function's future hash as of when it was last computed.
    key: u64,
    /// Whether `by_key` maps `(class, key)` to this group (not when another group with a
    /// different future took the key first: a hash collision).
    indexed: bool,
    /// How many nodes are members (0: the id is not in use).
    count: u32,
    /// One member (any).
    any: u32,
    /// The function's next breakpoint after the present when `key` was computed.
    expires: Time,
    /// Where the group sits in its class's list.
    class_slot: u32,
}

#[derive(Clone, Debug, Default)]
pub struct NodeGroups {
    /// Per id: a step function. Ids are node indices: a node of a class not grouped owns the
    /// function at its own index; a group of a grouped class owns one index of its class's
    /// nodes (a class never has more groups than nodes).
    steps: Vec<Steps<Vector>>,
    /// Per node: the id of its function (its group's, or its own).
    owner: Vec<u32>,
    /// Per node, a bit set where a run of nodes with one owner starts: at the first node of
    /// each class and wherever a node's owner differs from the node before. A group's members
    /// are the runs it owns — the walks over a wide job's nodes go run by run (issue 36: at
    /// 5,000 nodes in fairshare order, 22 M nodes changed in 0.5 M runs).
    starts: Vec<u64>,
    /// Per class: its nodes.
    class_nodes: Vec<std::ops::Range<u32>>,
    /// Within one change: `nodes` as runs of consecutive indices, and those cut into runs of
    /// one owner (also a merge's runs).
    spans: Vec<(u32, u32)>,
    runs: Vec<(u32, u32)>,
    /// Per class: whether its nodes are grouped (shared, and at least `group_from` nodes).
    grouped: Vec<bool>,
    /// Per id of a grouped class: the group.
    groups: Vec<Group>,
    /// Per class: ids given back since the reset (taken again first), then every id from
    /// `unused` to the class's end, none taken since the reset: a reset costs nothing per id.
    spare: Vec<Vec<u32>>,
    unused: Vec<u32>,
    /// Groups whose function changed since the last sync, and per id whether it is listed.
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    by_key: HashMap<(u32, u64), u32, BuildHasherDefault<MixHasher>>,
    /// Per class: its live groups.
    per_class: Vec<Vec<u32>>,
    /// Groups by when their key expires (entries whose group moved on are skipped).
    expiry: BinaryHeap<Reverse<(Time, u32)>>,
    /// Per id, within one change: how many of the changed nodes are members, and the group
    /// they move to (the same id when they are all its members).
    hits: Vec<u32>,
    moved_to: Vec<u32>,
    touched: Vec<u32>,
    /// A reset's distinct free vectors of one class and their groups.
    distinct: HashMap<Vector, u32, BuildHasherDefault<MixHasher>>,
    /// Per id: the clock of its function's last rise, and where its latest rises were. A
    /// group's record covers every rise of every node while it was a member (a group split off
    /// inherits it, a merged group takes in both), so the rises are stamped and searched once
    /// per function rather than once per node (issue 36).
    rise_clock: Vec<u64>,
    rise_spans: Vec<Rises>,
    /// Per shared class: its ids in use, in the order they last rose.
    risers: Vec<RiseOrder>,
    /// Per shared class, its idle nodes over time (kept by every change here).
    idle: IdleNodes,
}

impl NodeGroups {
    /// Every node of a shared class (`!whole[c]`) holds `value(node)` from `now` on, nothing
    /// to come; the nodes of a class of at least `group_from` nodes are grouped by it. Every
    /// function counts as risen over all time at `clock`: no earlier search result carries
    /// over a reset.
    #[allow(clippy::too_many_arguments)]
    pub fn reset(
        &mut self,
        layout: &Layout,
        whole: &[bool],
        group_from: u32,
        now: Time,
        clock: u64,
        value: impl Fn(u32) -> Vector,
    ) {
        let n = layout.node_count() as usize;
        self.steps.resize_with(n, Steps::unset);
        self.owner.clear();
        self.owner.extend(0..n as u32);
        self.starts.clear();
        self.starts.resize(n.div_ceil(64), 0);
        self.groups.resize_with(n, Group::default);
        self.is_dirty.clear();
        self.is_dirty.resize(n, false);
        self.dirty.clear();
        self.hits.clear();
        self.hits.resize(n, 0);
        self.moved_to.resize(n, 0);
        self.by_key.clear();
        self.expiry.clear();
        let classes = layout.classes();
        self.per_class.resize_with(classes.len(), Vec::new);
        self.spare.resize_with(classes.len(), Vec::new);
        self.unused.clear();
        self.unused
            .extend(classes.iter().map(|class| class.nodes.start));
        self.grouped.clear();
        self.grouped.extend(
            (classes.iter().zip(whole))
                .map(|(class, &whole)| !whole && class.nodes.len() as u32 >= group_from),
        );
        // Idle nodes are counted where searches visit groups: on a class of fewer nodes a
        // search costs little, and the count's upkeep would cost more (METACENTRUM's
        // wagap-2013 on mc-2013, classes of 1–112 nodes: +8 % instructions with every class
        // counted).
        self.idle.reset(layout, &self.grouped, now);
        self.class_nodes.clear();
        self.class_nodes
            .extend(classes.iter().map(|class| class.nodes.clone()));
        for (c, class) in classes.iter().enumerate() {
            self.per_class[c].clear();
            self.spare[c].clear();
            if whole[c] {
                continue;
            }
            if !self.grouped[c] {
                for node in class.nodes.clone() {
                    self.steps[node as usize].reset(now, value(node));
                }
                continue;
            }
            self.distinct.clear();
            // Neighbours often agree (runs of idle nodes, a wide job's nodes): the previous
            // node's group is tried before the map.
            let mut previous: Option<(Vector, u32)> = None;
            for node in class.nodes.clone() {
                let v = value(node);
                let g = match previous {
                    Some((p, g)) if p == v => g,
                    _ => {
                        let g = match self.distinct.get(&v) {
                            Some(&g) => g,
                            None => {
                                let g = self.open_group(c as u32);
                                self.steps[g as usize].reset(now, v);
                                self.distinct.insert(v, g);
                                self.groups[g as usize].any = node;
                                g
                            }
                        };
                        self.set_start(node, true);
                        g
                    }
                };
                previous = Some((v, g));
                self.owner[node as usize] = g;
                self.groups[g as usize].count += 1;
            }
            // Distinct values, so distinct futures: indexed without looking for a match, and
            // counted as idle or not once per group rather than once per node.
            let list = std::mem::take(&mut self.per_class[c]);
            for &g in &list {
                let steps = &self.steps[g as usize];
                let key = steps.future_hash(now);
                let free = steps.at(now);
                self.idle
                    .count(c as u32, &free, self.groups[g as usize].count);
                self.index(g, key, now);
            }
            self.per_class[c] = list;
        }
        self.reset_rises(layout, whole, clock);
    }

    /// Becomes what `source` (over the same layout and classes) holds — the same function for
    /// every node, the same groups, the same merges pending — with every function counted as
    /// risen over all time at `clock`, as after a reset: no search result carries over. A
    /// copy of the functions in use and of the per-node arrays, where a reset reads every
    /// node's free vector and the running jobs are released again (issue 36: node-level
    /// conservative over a reordering queue plans each new order from a copy of the committed
    /// state, [`super::Timeline::restore_from`]).
    pub fn restore_from(
        &mut self,
        source: &NodeGroups,
        layout: &Layout,
        whole: &[bool],
        clock: u64,
    ) {
        // Every field named, so that a new one cannot be left out unnoticed. Not copied: the
        // scratch of one change or reset, `is_dirty` (set from `dirty`) and the rises
        // (stamped afresh below).
        let NodeGroups {
            steps,
            owner,
            starts,
            class_nodes,
            spans: _,
            runs: _,
            grouped,
            groups,
            spare,
            unused,
            dirty,
            is_dirty: _,
            by_key,
            per_class,
            expiry,
            hits: _,
            moved_to: _,
            touched: _,
            distinct: _,
            rise_clock: _,
            rise_spans: _,
            risers: _,
            idle,
        } = source;
        let n = owner.len();
        // Only the functions in use, and the groups of the ids taken since `source`'s reset (a
        // key's expiry may name one dropped since): an id is set when it is next taken
        // (`open_group`), and a copy of every id's would cost as much as a reset (at 5,000
        // nodes).
        self.steps.resize_with(n, Steps::unset);
        self.groups.resize_with(n, Group::default);
        for (c, class) in layout.classes().iter().enumerate() {
            if whole[c] {
                continue;
            }
            if grouped[c] {
                for &g in &per_class[c] {
                    self.steps[g as usize].clone_from(&steps[g as usize]);
                }
                let taken = class.nodes.start as usize..unused[c] as usize;
                self.groups[taken.clone()].copy_from_slice(&groups[taken]);
            } else {
                for node in class.nodes.clone() {
                    self.steps[node as usize].clone_from(&steps[node as usize]);
                }
            }
        }
        self.owner.clone_from(owner);
        self.starts.clone_from(starts);
        self.class_nodes.clone_from(class_nodes);
        self.grouped.clone_from(grouped);
        self.spare.clone_from(spare);
        self.unused.clone_from(unused);
        // The marks of the groups listed, not a copy of every id's.
        self.is_dirty.resize(n, false);
        for &g in &self.dirty {
            self.is_dirty[g as usize] = false;
        }
        for &g in dirty {
            self.is_dirty[g as usize] = true;
        }
        self.dirty.clone_from(dirty);
        self.by_key.clone_from(by_key);
        self.per_class.clone_from(per_class);
        self.expiry.clone_from(expiry);
        self.idle.clone_from(idle);
        // Zero between changes, in both.
        self.hits.resize(n, 0);
        self.moved_to.resize(n, 0);
        self.reset_rises(layout, whole, clock);
    }

    /// Counts every function of the shared classes as risen over all time at `clock`. Only
    /// the ids in use are stamped: an id taken later inherits its record (a split), and a
    /// whole-node class's are never read (issue 36: at 5,000 nodes, hundreds of resets).
    fn reset_rises(&mut self, layout: &Layout, whole: &[bool], clock: u64) {
        let n = layout.node_count() as usize;
        let mut all_time = Rises::default();
        all_time.note(clock, Time::MIN, Time::MAX);
        self.rise_clock.resize(n, clock);
        self.rise_spans.resize(n, all_time);
        let classes = layout.classes();
        self.risers.resize_with(classes.len(), RiseOrder::default);
        for (c, class) in classes.iter().enumerate() {
            if whole[c] {
                continue;
            }
            let order = &mut self.risers[c];
            order.clear(class.nodes.clone());
            let mut stamp = |id: u32| {
                self.rise_clock[id as usize] = clock;
                self.rise_spans[id as usize] = all_time;
                order.note(id);
            };
            if self.grouped[c] {
                self.per_class[c].iter().for_each(|&g| stamp(g));
            } else {
                class.nodes.clone().for_each(stamp);
            }
        }
    }

    /// Counts a rise over `[from, to)` at `clock` (later than every earlier one) of the
    /// functions of `nodes` (of the shared `class`), each function once.
    pub fn stamp_rises(&mut self, class: u32, nodes: &[u32], clock: u64, from: Time, to: Time) {
        if !self.grouped(class) {
            for &node in nodes {
                self.stamp_rise(class, node, clock, from, to);
            }
            return;
        }
        // Run by run: a run's nodes share a function.
        self.cut_runs(nodes);
        let runs = std::mem::take(&mut self.runs);
        for &(p, _) in &runs {
            self.stamp_rise(class, p, clock, from, to);
        }
        self.runs = runs;
    }

    /// `nodes` (distinct) into `spans` as runs of consecutive indices, and those into `runs`
    /// as runs of one owner.
    fn cut_runs(&mut self, nodes: &[u32]) {
        spans_of(nodes, &mut self.spans);
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        for &(a, b) in &self.spans {
            runs.extend(self.runs(a..b));
        }
        self.runs = runs;
    }

    /// The runs of nodes with one owner that cover `range` (nodes of one class), as `(p, q)`
    /// for `[p, q)`, in order.
    #[inline]
    pub fn runs(&self, range: std::ops::Range<u32>) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut p = range.start;
        std::iter::from_fn(move || {
            (p < range.end).then(|| {
                let q = self.next_start(p, range.end);
                let run = (p, q);
                p = q;
                run
            })
        })
    }

    /// Counts a rise of `node`'s function, once per `clock`.
    #[inline]
    fn stamp_rise(&mut self, class: u32, node: u32, clock: u64, from: Time, to: Time) {
        let id = self.owner[node as usize];
        if self.rise_clock[id as usize] != clock {
            self.rise_clock[id as usize] = clock;
            self.rise_spans[id as usize].note(clock, from, to);
            self.risers[class as usize].note(id);
        }
    }

    /// The ids of the functions of the shared `class` that rose after clock `since`, the
    /// latest first, each once.
    #[inline]
    pub fn risen_since(&self, class: u32, since: u64) -> impl Iterator<Item = u32> + '_ {
        self.risers[class as usize].since(since, &self.rise_clock)
    }

    /// An interval that covers the rises of function `id` after clock `since` (> 0).
    #[inline]
    pub fn rise_span(&self, id: u32, since: u64) -> (Time, Time) {
        self.rise_spans[id as usize].since(since)
    }

    /// One node of function `id` of the shared `class` and how many nodes have it.
    #[inline]
    pub fn members_of(&self, class: u32, id: u32) -> (u32, usize) {
        if self.grouped(class) {
            let group = &self.groups[id as usize];
            (group.any, group.count as usize)
        } else {
            (id, 1)
        }
    }

    /// Whether `class`'s nodes are grouped (else searched node by node).
    #[inline]
    pub fn grouped(&self, class: u32) -> bool {
        self.grouped[class as usize]
    }

    /// The idle nodes of each shared class over time.
    pub fn idle(&self) -> &IdleNodes {
        &self.idle
    }

    /// `node`'s step function (its group's).
    #[inline]
    pub fn steps_of(&self, node: u32) -> &Steps<Vector> {
        &self.steps[self.owner[node as usize] as usize]
    }

    /// The step function of id `id` (a group's, or a node's of a class not grouped).
    #[inline]
    pub fn steps(&self, id: u32) -> &Steps<Vector> {
        &self.steps[id as usize]
    }

    /// The id of `node`'s step function: its group's, or its own (below [`NodeGroups::ids`]).
    #[inline]
    pub fn owner(&self, node: u32) -> u32 {
        self.owner[node as usize]
    }

    /// An upper bound on ids.
    pub fn ids(&self) -> usize {
        self.steps.len()
    }

    /// Adds `delta` over `[from, to)` (`to = None`: forever) to the function of each of
    /// `nodes` (distinct nodes of `class`, a shared class), forgetting its past before `now`.
    /// On a grouped class, once per group: a group all of whose members are among `nodes`
    /// changes its function; the members among `nodes` of any other group move to a new group
    /// holding a changed copy of it. With `rise = Some((clock, from, to))`, then counts a rise
    /// as [`NodeGroups::stamp_rises`] does, from the runs this change found.
    pub fn add(
        &mut self,
        class: u32,
        nodes: &[u32],
        (from, to): (Time, Option<Time>),
        delta: Vector,
        now: Time,
        rise: Option<(u64, Time, Time)>,
    ) {
        if !self.grouped(class) {
            for &node in nodes {
                let steps = &mut self.steps[node as usize];
                steps.advance(now);
                steps.add(from, to, delta);
                if let Some((clock, a, b)) = rise {
                    self.stamp_rise(class, node, clock, a, b);
                }
            }
            return;
        }
        self.cut_runs(nodes);
        let (spans, runs) = (
            std::mem::take(&mut self.spans),
            std::mem::take(&mut self.runs),
        );
        let mut touched = std::mem::take(&mut self.touched);
        touched.clear();
        let end = self.class_nodes[class as usize].end;
        for &(p, q) in &runs {
            let g = self.owner[p as usize] as usize;
            if self.hits[g] == 0 {
                touched.push(g as u32);
            }
            self.hits[g] += q - p;
        }
        let mut split = false;
        for &g in &touched {
            let members = self.groups[g as usize].count;
            let hits = self.hits[g as usize];
            debug_assert!(hits <= members, "nodes repeated");
            let target = if hits == members {
                g
            } else {
                split = true;
                let h = self.open_group(class);
                let (src, dst) = pair_mut(&mut self.steps, g as usize, h as usize);
                dst.clone_from(src);
                // Its members' rises so far are the group's.
                self.rise_clock[h as usize] = self.rise_clock[g as usize];
                self.rise_spans[h as usize] = self.rise_spans[g as usize];
                self.risers[class as usize].insert_after(g, h);
                h
            };
            self.hits[g as usize] = 0;
            self.moved_to[g as usize] = target;
            let steps = &mut self.steps[target as usize];
            steps.advance(now);
            self.idle.note(class, steps, (from, to), delta, hits, now);
            steps.add(from, to, delta);
            if !self.is_dirty[target as usize] {
                self.is_dirty[target as usize] = true;
                self.dirty.push(target);
            }
        }
        // Runs move only out of a group some of whose members stay (none when the change
        // covers whole groups, as a plan given back on the group it formed does). A run keeps
        // its bounds inside a span (distinct groups move to distinct groups): only the
        // spans' own ends may start or stop a run.
        if split {
            for &(p, q) in &runs {
                let g = self.owner[p as usize];
                let h = self.moved_to[g as usize];
                if h != g {
                    self.owner[p as usize..q as usize].fill(h);
                    self.groups[g as usize].count -= q - p;
                    let new = &mut self.groups[h as usize];
                    new.count += q - p;
                    new.any = p;
                }
            }
            for &(a, b) in &spans {
                self.mark_start(a);
                if b < end {
                    self.mark_start(b);
                }
            }
            // A group that kept members may have lost the one it named.
            for &g in &touched {
                if self.moved_to[g as usize] != g
                    && self.owner[self.groups[g as usize].any as usize] != g
                {
                    self.groups[g as usize].any = self.find_member(class, g);
                }
            }
        }
        // The runs keep their bounds, and each names its node's function after the change.
        if let Some((clock, a, b)) = rise {
            for &(p, _) in &runs {
                self.stamp_rise(class, p, clock, a, b);
            }
        }
        // Every touched group's `moved_to` is set again before it is read at a later change.
        self.touched = touched;
        (self.spans, self.runs) = (spans, runs);
    }

    /// Merges the groups whose futures have become equal: those changed since the last sync
    /// and those whose hash expired by `now`.
    pub fn sync(&mut self, now: Time) {
        if self.dirty.is_empty() && self.expiry.peek().is_none_or(|e| e.0.0 > now) {
            return;
        }
        // The changed groups' keys are stale: out of the index first, so that no search below
        // finds them as candidates.
        let dirty = std::mem::take(&mut self.dirty);
        for &g in &dirty {
            self.unindex(g);
        }
        while let Some(&Reverse((t, g))) = self.expiry.peek() {
            if t > now {
                break;
            }
            self.expiry.pop();
            let group = &self.groups[g as usize];
            if group.count == 0 || group.expires != t || self.is_dirty[g as usize] {
                continue;
            }
            self.rekey(g, now);
        }
        for &g in &dirty {
            self.is_dirty[g as usize] = false;
            // (A changed group keeps members until a merge, and merges happen only here.)
            debug_assert!(self.groups[g as usize].count > 0);
            self.rekey(g, now);
        }
        self.dirty = dirty;
        self.dirty.clear();
    }

    /// The groups of `class` as (the id of their function, the number of members), once synced
    /// (any time: unsynced groups are exact, only possibly more than the distinct futures).
    pub fn of_class(&self, class: u32) -> impl Iterator<Item = (u32, usize)> + '_ {
        self.per_class[class as usize]
            .iter()
            .map(|&g| (g, self.groups[g as usize].count as usize))
    }

    /// One member of group `g` (a live group of a grouped class).
    #[inline]
    pub fn first_member(&self, g: u32) -> u32 {
        self.groups[g as usize].any
    }

    fn unindex(&mut self, g: u32) {
        let group = &mut self.groups[g as usize];
        if group.indexed {
            group.indexed = false;
            self.by_key.remove(&(group.class, group.key));
        }
    }

    /// Files `g` (not indexed) under `key`, its future's hash as of `now`, merged into the
    /// group already there if their futures agree; otherwise schedules the key's expiry.
    fn rekey(&mut self, g: u32, now: Time) {
        self.unindex(g);
        let class = self.groups[g as usize].class;
        let key = self.steps[g as usize].future_hash(now);
        if let Some(&other) = self.by_key.get(&(class, key))
            && self.steps[other as usize].same_future(&self.steps[g as usize], now)
        {
            // The smaller group's members move: the larger keeps its function.
            if self.groups[g as usize].count <= self.groups[other as usize].count {
                self.merge(g, other);
            } else {
                self.merge(other, g);
                self.index(g, key, now);
            }
            return;
        }
        self.index(g, key, now);
    }

    /// Files `g` (not indexed) under `key` as of `now` and schedules the key's expiry.
    fn index(&mut self, g: u32, key: u64, now: Time) {
        let group = &mut self.groups[g as usize];
        group.key = key;
        group.expires = self.steps[g as usize].next_change(now).unwrap_or(Time::MAX);
        if let std::collections::hash_map::Entry::Vacant(e) = self.by_key.entry((group.class, key))
        {
            e.insert(g);
            group.indexed = true;
        }
        if group.expires < Time::MAX {
            self.expiry.push(Reverse((group.expires, g)));
        }
    }

    /// Moves every member of `from` into `into` (whose future agrees) and drops `from`.
    fn merge(&mut self, from: u32, into: u32) {
        // `into` takes in `from`'s rises, and its place in the order of rises if later.
        let risers = &mut self.risers[self.groups[from as usize].class as usize];
        if self.rise_clock[from as usize] > self.rise_clock[into as usize] {
            self.rise_clock[into as usize] = self.rise_clock[from as usize];
            risers.unlink(into);
            risers.insert_after(from, into);
        }
        risers.unlink(from);
        let spans = self.rise_spans[from as usize];
        self.rise_spans[into as usize].merge(&spans);
        // Its runs, found by walking the class's runs until every member is relabelled.
        let class = self.groups[from as usize].class;
        let range = self.class_nodes[class as usize].clone();
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        let mut left = self.groups[from as usize].count;
        for (p, q) in self.runs(range.clone()) {
            if left == 0 {
                break;
            }
            if self.owner[p as usize] == from {
                runs.push((p, q));
                left -= q - p;
            }
        }
        debug_assert_eq!(left, 0, "a group's count is its members'");
        for &(p, q) in &runs {
            self.owner[p as usize..q as usize].fill(into);
        }
        for &(p, q) in &runs {
            self.mark_start(p);
            if q < range.end {
                self.mark_start(q);
            }
        }
        self.runs = runs;
        let moved = std::mem::take(&mut self.groups[from as usize].count);
        self.groups[into as usize].count += moved;
        self.drop_group(from);
    }

    /// A member of `g`, a live group of `class`.
    fn find_member(&self, class: u32, g: u32) -> u32 {
        let range = self.class_nodes[class as usize].clone();
        let member = self
            .runs(range.clone())
            .find(|&(p, _)| self.owner[p as usize] == g);
        debug_assert!(member.is_some(), "a live group has members");
        member.map_or(range.start, |(p, _)| p)
    }

    /// The first node after `p` and before `end` (in `p`'s class) that starts a run, or `end`.
    #[inline]
    fn next_start(&self, p: u32, end: u32) -> u32 {
        let mut i = p as usize + 1;
        while i < end as usize {
            let word = i / 64;
            let bits = self.starts[word] >> (i % 64);
            if bits != 0 {
                return (i + bits.trailing_zeros() as usize).min(end as usize) as u32;
            }
            i = (word + 1) * 64;
        }
        end
    }

    fn set_start(&mut self, node: u32, on: bool) {
        let (word, bit) = (node as usize / 64, node % 64);
        if on {
            self.starts[word] |= 1 << bit;
        } else {
            self.starts[word] &= !(1 << bit);
        }
    }

    /// Sets whether `node` starts a run from its owner and its neighbour's. A class's first
    /// node always does: every id is one of its own class's nodes, so two classes never share
    /// an owner.
    fn mark_start(&mut self, node: u32) {
        let on = node == 0 || self.owner[node as usize] != self.owner[node as usize - 1];
        self.set_start(node, on);
    }

    /// A new empty group of `class`, listed in its class (not yet indexed).
    fn open_group(&mut self, class: u32) -> u32 {
        // Lowest ids first (any order would do: ids are never compared).
        let c = class as usize;
        let g = self.spare[c].pop().unwrap_or_else(|| {
            let g = self.unused[c];
            assert!(
                g < self.class_nodes[c].end,
                "a class has no more groups than nodes"
            );
            self.unused[c] += 1;
            g
        });
        let list = &mut self.per_class[c];
        let group = &mut self.groups[g as usize];
        // An id not taken since the reset may hold a count from before it.
        group.count = 0;
        group.class = class;
        group.indexed = false;
        group.expires = Time::MAX;
        group.class_slot = list.len() as u32;
        list.push(g);
        g
    }

    /// Drops `g` (without members) from the index and its class's list.
    fn drop_group(&mut self, g: u32) {
        self.unindex(g);
        let group = &self.groups[g as usize];
        debug_assert_eq!(group.count, 0);
        let (class, slot) = (group.class as usize, group.class_slot as usize);
        let list = &mut self.per_class[class];
        list.swap_remove(slot);
        if let Some(&moved) = list.get(slot) {
            self.groups[moved as usize].class_slot = slot as u32;
        }
        self.spare[class].push(g);
    }
}

/// `nodes` (distinct) as runs of consecutive indices `[a, b)`, in their order, into `spans`.
fn spans_of(nodes: &[u32], spans: &mut Vec<(u32, u32)>) {
    /// Nodes compared at once where a run goes on: a comparison the compiler vectorises (a
    /// wide job's runs are hundreds of nodes long).
    const BLOCK: usize = 8;
    spans.clear();
    let mut i = 0;
    while i < nodes.len() {
        let first = nodes[i];
        let mut j = i + 1;
        while let Some(block) = nodes.get(j..j + BLOCK) {
            let base = first.wrapping_add((j - i) as u32);
            let mut goes_on = true;
            for (k, &node) in block.iter().enumerate() {
                goes_on &= node == base.wrapping_add(k as u32);
            }
            if !goes_on {
                break;
            }
            j += BLOCK;
        }
        while j < nodes.len() && nodes[j] == first.wrapping_add((j - i) as u32) {
            j += 1;
        }
        spans.push((first, first + (j - i) as u32));
        i = j;
    }
}

/// Mutable references to two distinct elements.
fn pair_mut<T>(v: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    debug_assert_ne!(a, b);
    if a < b {
        let (lo, hi) = v.split_at_mut(b);
        (&mut lo[a], &mut hi[0])
    } else {
        let (lo, hi) = v.split_at_mut(a);
        (&mut hi[0], &mut lo[b])
    }
}

/// A value worked out once per group within one search (what every member would give).
#[derive(Clone, Debug, Default)]
pub struct PerGroup<T> {
    /// Per group id: the search that filled it, and the value.
    entries: Vec<(u64, T)>,
    search: u64,
}

impl<T: Copy + Default> PerGroup<T> {
    /// Starts a search over groups with ids below `ids`: every entry is unknown.
    pub fn begin(&mut self, ids: usize) {
        self.search += 1;
        if self.entries.len() < ids {
            self.entries.resize(ids, (0, T::default()));
        }
    }

    /// Group `g`'s value, worked out by `f` the first time in this search.
    #[inline]
    pub fn get(&mut self, g: u32, f: impl FnOnce() -> T) -> T {
        let entry = &mut self.entries[g as usize];
        if entry.0 != self.search {
            *entry = (self.search, f());
        }
        entry.1
    }
}

#[cfg(test)]
mod tests {
    use super::super::cluster::{Cluster, NodeClass, Topology};
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};

    /// Two shared classes of alike nodes (so that an idle node of one agrees with an idle node
    /// of the other: groups must still not mix classes) and a whole-node class.
    fn layout() -> Layout {
        Layout::new(&TopologyMachine::new(Topology::new(vec![
            Cluster::new(
                "s",
                Allocation::Shared,
                vec![NodeClass::new("a", 9, 8, 16), NodeClass::new("b", 5, 8, 16)],
            ),
            Cluster::new(
                "x",
                Allocation::ExclusiveNodes,
                vec![NodeClass::new("n", 3, 8, 16)],
            ),
        ])))
        .unwrap()
    }

    /// Against a step function per node changed node by node, on random changes over random
    /// sets of nodes (runs, as a wide job's, and scattered nodes, which split groups) as the
    /// present moves: every node's function is its reference's from now on at every step,
    /// synced or not; and after every sync each node sits in exactly one group of its class,
    /// and the class has as many groups as distinct futures (equal futures are merged, also
    /// once the holds that told them apart have passed). Rounds reuse one value, each from a
    /// reset.
    #[test]
    fn groups_own_their_members_functions() {
        let l = layout();
        let whole = [false, false, true];
        let mut rand = super::super::test_rand(0x9e37);
        // One value reset at each round, as the timeline resets its groups: nothing of the
        // last round may show through.
        let mut groups = NodeGroups::default();
        for round in 0..300 {
            // Some resets start from unequal free vectors (groups formed by the reset).
            let start = |node: u32| -> Vector {
                if round % 2 == 0 {
                    [8, 16, 0]
                } else {
                    [(node % 3) as i64 + 6, 16, 0]
                }
            };
            let mut reference: Vec<Steps<Vector>> = (0..l.node_count())
                .map(|n| {
                    let mut s = Steps::default();
                    s.reset(0, start(n));
                    s
                })
                .collect();
            groups.reset(&l, &whole, 1, 0, 1, start);
            let mut now = 0;
            for _ in 0..60 {
                match rand(3) {
                    0 => now += rand(15) as Time,
                    _ => {
                        let class = rand(2) as u32;
                        let range = l.class(class).nodes.clone();
                        let mut nodes: Vec<u32> = if rand(2) == 0 {
                            let first = range.start + rand(u64::from(range.len() as u32)) as u32;
                            (first..(first + 1 + rand(6) as u32).min(range.end)).collect()
                        } else {
                            range.clone().filter(|_| rand(3) == 0).collect()
                        };
                        // A shape's last node comes after its full ones, wherever it lies.
                        if rand(4) == 0 && !nodes.is_empty() {
                            nodes.rotate_left(1);
                        }
                        let from = now + rand(30) as Time;
                        let to = (rand(4) > 0).then(|| from + 1 + rand(30) as Time);
                        let delta = [rand(3) as i64 - 1, rand(2) as i64, 0];
                        for &node in &nodes {
                            let steps = &mut reference[node as usize];
                            steps.advance(now);
                            steps.add(from, to, delta);
                        }
                        groups.add(class, &nodes, (from, to), delta, now, None);
                    }
                }
                for node in 0..9 + 5 {
                    assert!(
                        groups
                            .steps_of(node)
                            .same_future(&reference[node as usize], now),
                        "node {node} at {now}"
                    );
                }
                // The runs are exactly where owners change within a class.
                for class in 0..2u32 {
                    let range = l.class(class).nodes.clone();
                    for (p, q) in groups.runs(range.clone()) {
                        assert!((p + 1..q).all(|n| groups.owner(n) == groups.owner(p)));
                        assert!(q == range.end || groups.owner(q) != groups.owner(q - 1));
                    }
                }
                if rand(3) > 0 {
                    continue;
                }
                groups.sync(now);
                for class in 0..2u32 {
                    let range = l.class(class).nodes.clone();
                    let listed: usize = groups.of_class(class).map(|(_, m)| m).sum();
                    assert_eq!(listed, range.len());
                    for (g, members) in groups.of_class(class) {
                        assert!(range.contains(&g), "an id of the class's own");
                        let owned = range.clone().filter(|&n| groups.owner(n) == g).count();
                        assert_eq!(owned, members, "a group's count is its members'");
                        assert_eq!(groups.owner(groups.first_member(g)), g);
                    }
                    let mut distinct: Vec<u32> = Vec::new();
                    for node in range {
                        if !distinct.iter().any(|&d| {
                            reference[d as usize].same_future(&reference[node as usize], now)
                        }) {
                            distinct.push(node);
                        }
                    }
                    assert_eq!(groups.of_class(class).count(), distinct.len(), "at {now}");
                }
            }
        }
    }
}
