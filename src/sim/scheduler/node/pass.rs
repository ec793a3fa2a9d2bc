//! The state *now* during one scheduler call — the engine's free vectors minus what the call has
//! already decided to start — and the choice of nodes for a start now.
//!
//! The engine's state is borrowed, never copied: what the call takes is recorded per touched
//! node and per class, and undone in O(touched) at the next call. Cheap rejections come first
//! (a class's free total, its idle-node count for whole nodes); only then are nodes visited,
//! through the class's idle/partial index, in placement order.
//!
//! A job that takes whole nodes now — it asked for them, or each of its amounts takes every
//! core of its node while no amount without a core is held on the class ([`Pass::takes_whole`])
//! — can go only on nodes that are idle and untouched by this call, all alike: it is placed on
//! the first of them in index order without offering each to the general test, and recorded as
//! one [`WholeTake`] that the shadow counts by count (Curie's shape: jobs of a hundred 16-core
//! nodes, BENCHMARKS.md).

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use super::NodeView;
use crate::sim::job::{Job, Time};
use crate::sim::mix_hash::MixHasher;
use crate::sim::resources::ResourceVec;
use crate::sim::topology::timeline::Picker;
use crate::sim::topology::{NodeShape, Placement, RequestId};

/// Requests that found no nodes earlier in a call. Within a call resources only shrink, so the
/// same request (same shape and constraint, same side of the shadow time) fails again: a queue
/// of many identical jobs costs one search, not one per job. On a timeline (advance
/// reservations) whether a job fits also depends on how long it runs, which is then part of
/// the key.
#[derive(Clone, Debug, Default)]
pub struct Failed {
    seen: HashSet<(RequestId, u32, bool, Time), BuildHasherDefault<MixHasher>>,
    /// Whether the requested time is part of the key.
    by_duration: bool,
}

impl Failed {
    /// Keys on the requested time too.
    pub fn by_duration() -> Self {
        Failed {
            by_duration: true,
            ..Failed::default()
        }
    }

    pub fn clear(&mut self) {
        self.seen.clear();
    }

    /// Requests are interned ([`crate::sim::topology::RequestInterner`]), so the id stands for
    /// the request (an equal request under another id only misses the memo).
    fn key(&self, job: &Job, long: bool) -> (RequestId, u32, bool, Time) {
        let d = if self.by_duration {
            job.requested_time
        } else {
            0
        };
        (job.request, job.procs, long, d)
    }

    /// Whether `job`'s request already failed on this side of the shadow time.
    #[inline]
    pub fn contains(&self, job: &Job, long: bool) -> bool {
        !self.seen.is_empty() && self.seen.contains(&self.key(job, long))
    }

    pub fn insert(&mut self, job: &Job, long: bool) {
        self.seen.insert(self.key(job, long));
    }
}

/// What [`Pass::select`]'s `allow` says of a node offered to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Take,
    Refuse,
    /// Refuse this node and end the selection as failed: every node still to be offered would
    /// be refused too.
    Stop,
}

/// A start of this call on whole nodes ([`Pass::takes_whole`]): its nodes are
/// `touched_nodes()[nodes.0..nodes.1]`, each idle before it and untouched by the call's other
/// starts then.
#[derive(Clone, Copy, Debug)]
pub struct WholeTake {
    pub class: u32,
    pub shape: NodeShape,
    pub nodes: (u32, u32),
}

#[derive(Clone, Debug, Default)]
pub struct Pass {
    taken: Vec<ResourceVec>,
    /// Per node, a bit: whether its `taken` is not zero ([`Pass::touched`]), so that a whole
    /// start skips touched nodes a word at a time. Brought up to date only when read
    /// ([`Pass::sync_touched`]): it covers the first `synced` of `touched`, and no other node
    /// has its bit set.
    touched_bits: Vec<u64>,
    synced: usize,
    /// Each node whose `taken` turned from zero to more, each time it did: every touched node
    /// is listed (a node given back wholly and taken again, twice).
    touched: Vec<u32>,
    /// The starts on whole nodes, in order; their nodes are runs of `touched`.
    whole: Vec<WholeTake>,
    class_taken: Vec<ResourceVec>,
    /// Per class: how many of the nodes the engine has idle this call has touched — counted
    /// where a node turns touched and where it turns untouched, and nowhere else. So
    /// [`Pass::idle`] is exactly the number of the class's idle nodes untouched by the call, the
    /// nodes [`Pass::select_whole`] looks for in the bits.
    idle_taken: Vec<u32>,
    /// Per class: amounts taken that take no core.
    coreless_taken: Vec<u32>,
    order: Vec<(u64, u64, u32)>,
    used: Vec<u32>,
}

impl Pass {
    /// Forgets the previous call's starts.
    pub fn begin(&mut self, view: &NodeView<'_>) {
        let nodes = view.layout.node_count() as usize;
        if self.taken.len() != nodes {
            self.taken = vec![ResourceVec::ZERO; nodes];
            self.touched_bits = vec![0; nodes.div_ceil(64)];
        } else {
            for &n in &self.touched[..self.synced] {
                self.touched_bits[n as usize / 64] = 0;
            }
            for &n in &self.touched {
                self.taken[n as usize] = ResourceVec::ZERO;
            }
        }
        self.synced = 0;
        self.touched.clear();
        self.whole.clear();
        let classes = view.layout.classes().len();
        self.class_taken.clear();
        self.class_taken.resize(classes, ResourceVec::ZERO);
        self.idle_taken.clear();
        self.idle_taken.resize(classes, 0);
        self.coreless_taken.clear();
        self.coreless_taken.resize(classes, 0);
    }

    /// What `node` has free now, after this call's starts.
    #[inline]
    pub fn free(&self, view: &NodeView<'_>, node: u32) -> ResourceVec {
        view.free.free(node) - self.taken[node as usize]
    }

    /// Whether this call has started something on `node`.
    #[inline]
    pub fn touched(&self, node: u32) -> bool {
        self.taken[node as usize] != ResourceVec::ZERO
    }

    /// Brings the bits of touched nodes up to date with the nodes touched since they last were:
    /// a node's `taken` turns from zero to more only when it is listed in `touched` (again), and
    /// back to zero only in [`Pass::untake`], which keeps the bits itself.
    fn sync_touched(&mut self) {
        for &n in &self.touched[self.synced..] {
            let on = self.taken[n as usize] != ResourceVec::ZERO;
            self.touched_bits[n as usize / 64] |= u64::from(on) << (n % 64);
        }
        self.synced = self.touched.len();
    }

    /// Records whether `node` is touched now, after a change of its `taken`.
    #[inline]
    fn mark(&mut self, node: u32) {
        let bit = 1u64 << (node % 64);
        let word = &mut self.touched_bits[node as usize / 64];
        if self.taken[node as usize] == ResourceVec::ZERO {
            *word &= !bit;
        } else {
            *word |= bit;
        }
    }

    /// The 64 bits of [`Pass::touched`] from node `from` on (none past the last node).
    #[inline]
    fn touched_word(&self, from: u32) -> u64 {
        let (w, b) = (from as usize / 64, from % 64);
        let low = self.touched_bits[w] >> b;
        match (b, self.touched_bits.get(w + 1)) {
            (1.., Some(&high)) => low | high << (64 - b),
            _ => low,
        }
    }

    /// The nodes this call has started something on (a node may repeat when a rule gave back
    /// what it took and took again, [`Pass::untake`]).
    #[inline]
    pub fn touched_nodes(&self) -> &[u32] {
        &self.touched
    }

    /// This call's starts on whole nodes, in order (each a run of [`Pass::touched_nodes`]; one
    /// given back by [`Pass::untake`] stays listed).
    #[inline]
    pub fn whole_takes(&self) -> &[WholeTake] {
        &self.whole
    }

    /// Whether `shape` takes whole nodes of `class` now: it asked for them, or each of its
    /// amounts takes every core of its node while no amount without a core is held on the
    /// class (engine or call). Then a node can take it exactly when the engine has it idle and
    /// this call has not touched it: a node holding nothing without a core holds nothing when
    /// all its cores are free, and `shape` fits an empty node.
    #[inline]
    pub fn takes_whole(&self, view: &NodeView<'_>, class: u32, shape: &NodeShape) -> bool {
        if shape.whole {
            return true;
        }
        let cores = view.layout.class(class).capacity.per_node.0[0];
        cores > 0
            && shape.per_node.0[0] == cores
            && shape.last.is_none_or(|l| l.0[0] == cores)
            && view.free.coreless_holds(class) == 0
            && self.coreless_taken[class as usize] == 0
    }

    /// Idle nodes of `class` now: those the engine has idle and this call has not touched.
    #[inline]
    pub fn idle(&self, view: &NodeView<'_>, class: u32) -> u32 {
        view.free.idle_count(class) - self.idle_taken[class as usize]
    }

    /// Records that this call starts `shape` on `nodes` of `class` (nodes that can take it now).
    pub fn take(&mut self, view: &NodeView<'_>, class: u32, shape: &NodeShape, nodes: &[u32]) {
        let c = class as usize;
        if self.takes_whole(view, class, shape) {
            // Every node idle and untouched: each turns touched now (every amount of such a
            // shape takes cores, and a class's nodes have some), and idle no more.
            debug_assert!(
                nodes
                    .iter()
                    .all(|&n| !self.touched(n) && view.free.is_idle(n))
            );
            let from = self.touched.len() as u32;
            self.touched.extend_from_slice(nodes);
            let (full, last) = nodes.split_at(shape.full() as usize);
            for &node in full {
                self.taken[node as usize] = shape.per_node;
            }
            if let (Some(amount), [node]) = (shape.last, last) {
                self.taken[*node as usize] = amount;
            }
            self.idle_taken[c] += shape.count;
            self.whole.push(WholeTake {
                class,
                shape: *shape,
                nodes: (from, self.touched.len() as u32),
            });
        } else {
            self.take_by_node(view, c, shape, nodes);
        }
        self.class_taken[c] += shape.total();
        self.coreless_taken[c] += shape.coreless();
    }

    /// [`Pass::take`]'s record on each node of any start: a node that turns touched — its
    /// `taken` from zero to more — is listed, and counted off its class's idle nodes if the
    /// engine has it idle. An amount of nothing (a job asking no core and no memory per node)
    /// touches no node: listing or counting it would count an idle node off again at each
    /// such start, while the node stays free for a start on whole nodes.
    fn take_by_node(&mut self, view: &NodeView<'_>, c: usize, shape: &NodeShape, nodes: &[u32]) {
        let mut idle = 0;
        for (i, &node) in nodes.iter().enumerate() {
            let taken = &mut self.taken[node as usize];
            let was = *taken;
            *taken += shape.amount(i as u32);
            if was == ResourceVec::ZERO && *taken != ResourceVec::ZERO {
                self.touched.push(node);
                idle += u32::from(view.free.is_idle(node));
            }
        }
        self.idle_taken[c] += idle;
    }

    /// Gives back what [`Pass::take`] recorded for `shape` on `nodes` of `class`: a rule that
    /// holds back the nodes of jobs that ended at this instant releases them one by one, in the
    /// order it models (`compat: aleang`, [`super::AleangAggressive`]).
    pub fn untake(&mut self, view: &NodeView<'_>, class: u32, shape: &NodeShape, nodes: &[u32]) {
        self.sync_touched();
        for (i, &node) in nodes.iter().enumerate() {
            let amount = shape.amount(i as u32);
            let was = self.touched(node);
            self.taken[node as usize] -= amount;
            self.mark(node);
            self.class_taken[class as usize] -= amount;
            if amount.0[0] == 0 {
                self.coreless_taken[class as usize] -= 1;
            }
            // Counted back only when it turns untouched: an amount of nothing given back on a
            // node still untouched leaves the count as it is.
            if was && !self.touched(node) && view.free.is_idle(node) {
                self.idle_taken[class as usize] -= 1;
            }
        }
    }

    /// How many amounts that take no core this call has taken on `class` (as
    /// [`crate::sim::topology::FreeNodes::coreless_holds`] counts the engine's).
    #[inline]
    pub fn coreless_taken(&self, class: u32) -> u32 {
        self.coreless_taken[class as usize]
    }

    /// Free cores of `class` now, after this call's starts.
    #[inline]
    pub fn free_cores(&self, view: &NodeView<'_>, class: u32) -> u64 {
        view.free.class_free(class).0[0] - self.class_taken[class as usize].0[0]
    }

    /// What `class` has free now in all, after this call's starts.
    #[inline]
    pub fn class_free(&self, view: &NodeView<'_>, class: u32) -> ResourceVec {
        view.free.class_free(class) - self.class_taken[class as usize]
    }

    /// The cheap test: false when `shape` cannot fit `class` now whatever the nodes (not
    /// enough idle nodes for whole nodes, no node with enough free cores, or not enough free in
    /// the class's total).
    #[inline]
    pub fn may_fit(&self, view: &NodeView<'_>, class: u32, shape: &NodeShape) -> bool {
        if shape.whole {
            return self.idle(view, class) >= shape.count;
        }
        if view.free.max_free_cores(class) < shape.per_node.0[0] {
            return false;
        }
        let free = view.free.class_free(class) - self.class_taken[class as usize];
        shape.total().fits_in(&free)
    }

    /// Chooses nodes of `class` for `shape` now, in placement order, into `out` (full nodes
    /// first, the last node last). A node is offered for the first role it can take; `allow`
    /// (node, amount, sweep) may refuse it, or end the selection as failed when it knows that
    /// it would refuse every node still to be offered ([`Verdict::Stop`]). Nodes are visited
    /// `sweeps` times (a policy refusing some nodes in the first sweep may accept them in the
    /// next). False if the shape is not filled (`out` unspecified); nothing is recorded either
    /// way (see [`Pass::take`]).
    pub fn select(
        &mut self,
        view: &NodeView<'_>,
        class: u32,
        shape: &NodeShape,
        sweeps: u32,
        allow: &mut impl FnMut(u32, ResourceVec, u32) -> Verdict,
        out: &mut Vec<u32>,
    ) -> bool {
        out.clear();
        if !self.may_fit(view, class, shape) {
            return false;
        }
        let whole = shape.whole;
        let full = shape.per_node;
        let last = shape.last.unwrap_or(full);
        let mut picker = Picker::new(shape);
        self.used.clear();
        if view.placement == Placement::BestFit {
            self.order.clear();
            for node in view.free.candidates(class, last.0[0], whole) {
                let f = self.free(view, node);
                if last.fits_in(&f) && !(whole && self.touched(node)) {
                    self.order.push(view.placement.node_key(node, &f));
                }
            }
            self.order.sort_unstable();
        }
        let mut stopped = false;
        'sweeps: for sweep in 0..sweeps {
            // True when the selection is over: filled, or stopped by `allow`.
            let mut offer = |pass: &mut Pass, node: u32, picker: &mut Picker| -> bool {
                if whole && pass.touched(node) {
                    return false;
                }
                if sweep > 0 && pass.used.contains(&node) {
                    return false;
                }
                let f = pass.free(view, node);
                let Some(role) = picker.role(full.fits_in(&f), last.fits_in(&f)) else {
                    return false;
                };
                let amount = if role { full } else { last };
                match allow(node, amount, sweep) {
                    Verdict::Take => {
                        picker.assign(node, role, out);
                        pass.used.push(node);
                        picker.done()
                    }
                    Verdict::Refuse => false,
                    Verdict::Stop => {
                        stopped = true;
                        true
                    }
                }
            };
            match view.placement {
                Placement::FirstFit => {
                    for node in view.free.candidates(class, last.0[0], whole) {
                        if offer(self, node, &mut picker) {
                            break 'sweeps;
                        }
                    }
                }
                Placement::BestFit => {
                    for i in 0..self.order.len() {
                        let node = self.order[i].2;
                        if offer(self, node, &mut picker) {
                            break 'sweeps;
                        }
                    }
                }
            }
        }
        !stopped && picker.finish(out)
    }

    /// [`Pass::select`] with every node allowed, in one sweep.
    pub fn select_any(
        &mut self,
        view: &NodeView<'_>,
        class: u32,
        shape: &NodeShape,
        out: &mut Vec<u32>,
    ) -> bool {
        if self.takes_whole(view, class, shape) {
            return self.select_whole(view, class, shape, out);
        }
        self.select(view, class, shape, 1, &mut |_, _, _| Verdict::Take, out)
    }

    /// [`Pass::select_any`] for a shape that takes whole nodes ([`Pass::takes_whole`]): the
    /// nodes that can take it are the idle nodes this call has not touched, all with their whole
    /// capacity free, so the selection's full nodes are the first `shape.full()` of them in
    /// index order and its last node the next — the order of either placement, best fit
    /// ordering nodes of the same free vector by index.
    fn select_whole(
        &mut self,
        view: &NodeView<'_>,
        class: u32,
        shape: &NodeShape,
        out: &mut Vec<u32>,
    ) -> bool {
        out.clear();
        if self.idle(view, class) < shape.count {
            return false;
        }
        let count = shape.count as usize;
        out.reserve(count);
        self.sync_touched();
        let (first, idle) = view.free.idle_words(class);
        for (w, &word) in idle.iter().enumerate() {
            let base = first + w as u32 * 64;
            let mut bits = word & !self.touched_word(base);
            if bits == u64::MAX && count - out.len() >= 64 {
                out.extend(base..base + 64);
            } else {
                while bits != 0 && out.len() < count {
                    out.push(base + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
            if out.len() == count {
                return true;
            }
        }
        // Not reached: [`Pass::idle`] counts the nodes the bits show (see `idle_taken`). Were
        // the count ever high, the scan's answer is still the true one.
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};
    use crate::sim::queue::Queue;
    use crate::sim::running::RunningSet;
    use crate::sim::topology::cluster::{Cluster, NodeClass, Topology};
    use crate::sim::topology::free::tests::{layout, seeded};
    use crate::sim::topology::{FreeNodes, Layout, RequestTable};

    fn view<'a>(
        l: &'a Layout,
        free: &'a FreeNodes,
        placement: Placement,
        empty: &'a (Queue, RunningSet, RequestTable),
    ) -> NodeView<'a> {
        NodeView {
            now: 0,
            layout: l,
            free,
            placement,
            jobs: &[],
            requests: &empty.2,
            eligible: &[],
            queue: &empty.0,
            running: &empty.1,
            allocs: &[],
            completed: &[],
            reservations: &[],
            reservations_epoch: 0,
            limits: None,
        }
    }

    /// The record node by node that [`Pass::take`] keeps for any start.
    fn take_by_node(p: &mut Pass, v: &NodeView<'_>, class: u32, shape: &NodeShape, nodes: &[u32]) {
        let c = class as usize;
        p.take_by_node(v, c, shape, nodes);
        p.class_taken[c] += shape.total();
        p.coreless_taken[c] += shape.coreless();
    }

    /// The nodes of `class` that the engine has idle and `p` has not touched, counted afresh:
    /// what [`Pass::idle`] must say, and what a start on whole nodes can take.
    fn idle_untouched(p: &Pass, v: &NodeView<'_>, class: u32) -> u32 {
        let nodes = v.layout.class(class).nodes.clone();
        nodes
            .filter(|&n| v.free.is_idle(n) && !p.touched(n))
            .count() as u32
    }

    /// A job asking for no core and no memory on a node (`Shape::Nodes` of zero cores and zero
    /// memory) takes nothing there: the node stays idle and untouched, free for a start on
    /// whole nodes. The record counted that node off the class's idle nodes at each such
    /// start, and back at each give back that left it untouched, so that [`Pass::idle`] went
    /// wrong — below zero, wrapping, in a release build — and the selection of whole nodes
    /// found fewer nodes than it was told of: `unreachable!` in node-level EASY
    /// (tests/node_easy_index.rs, the case kept in its proptest-regressions).
    #[test]
    fn an_amount_of_nothing_touches_no_node() {
        let l = layout(2);
        let empty = (
            Queue::default(),
            RunningSet::default(),
            RequestTable::default(),
        );
        // Node 1 busy, node 0 idle: one idle node in class 0.
        let mut free = FreeNodes::new(&l);
        free.take(1, ResourceVec([1, 0, 0])).unwrap();
        let v = view(&l, &free, Placement::FirstFit, &empty);
        let nothing = NodeShape {
            count: 1,
            per_node: ResourceVec::ZERO,
            last: None,
            whole: false,
        };
        let whole = |count| NodeShape {
            count,
            per_node: ResourceVec([8, 16, 0]),
            last: None,
            whole: true,
        };
        let mut p = Pass::default();
        p.begin(&v);
        let mut out = Vec::new();
        for _ in 0..2 {
            assert!(p.select_any(&v, 0, &nothing, &mut out));
            assert_eq!(out, [0]);
            p.take(&v, 0, &nothing, &out);
        }
        assert_eq!(p.idle(&v, 0), 1);
        // Two whole nodes: only one is idle.
        assert!(!p.select_any(&v, 0, &whole(2), &mut out));
        assert!(p.select_any(&v, 0, &whole(1), &mut out));
        assert_eq!(out, [0]);
        assert!(!p.touched(0) && p.touched_nodes().is_empty());

        // Given back (`compat: aleang`) after a real amount on the same node: the node turns
        // untouched once, when the amount is given back, not again with the nothing.
        let one_core = NodeShape {
            per_node: ResourceVec([1, 0, 0]),
            ..nothing
        };
        p.begin(&v);
        p.take(&v, 0, &one_core, &[0]);
        p.take(&v, 0, &nothing, &[0]);
        assert_eq!(p.idle(&v, 0), 0);
        p.untake(&v, 0, &one_core, &[0]);
        assert_eq!(p.idle(&v, 0), 1);
        p.untake(&v, 0, &nothing, &[0]);
        assert_eq!(p.idle(&v, 0), 1);
        assert!(!p.select_any(&v, 0, &whole(2), &mut out));
        assert!(p.select_any(&v, 0, &whole(1), &mut out));
        assert_eq!(out, [0]);
    }

    /// Calls of random shapes on an engine state of random holds (some without a core): the
    /// selection and record of starts on whole nodes ([`Pass::takes_whole`]) choose the nodes
    /// that offering each node to the general test chooses, and leave what a record node by
    /// node leaves — what every node has free, which are touched, the class's idle nodes, free
    /// total and holds without a core — after every start. Some starts take nothing at all;
    /// the idle nodes are also counted afresh, since both records count them the same way.
    #[test]
    fn whole_node_starts_select_and_record_as_node_by_node() {
        let l = layout(150);
        let empty = (
            Queue::default(),
            RunningSet::default(),
            RequestTable::default(),
        );
        let mut next = seeded(0x5EED_0025);
        let (mut whole_starts, mut other_starts, mut with_coreless) = (0, 0, 0);
        for call in 0..400 {
            let mut free = FreeNodes::new(&l);
            for _ in 0..next(200) {
                let node = next(150) as u32;
                let amount = if next(12) == 0 {
                    ResourceVec([0, 1 + next(4), 0])
                } else {
                    ResourceVec([1 + next(8), next(17), 0])
                };
                let _ = free.take(node, amount);
            }
            let placement = if call % 2 == 0 {
                Placement::FirstFit
            } else {
                Placement::BestFit
            };
            let v = view(&l, &free, placement, &empty);
            let (mut fast, mut slow) = (Pass::default(), Pass::default());
            fast.begin(&v);
            slow.begin(&v);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..30 {
                let count = 1 + next(12) as u32;
                let (per_node, last, whole) = match next(6) {
                    0 => (ResourceVec([8, 16, 0]), None, true),
                    // A last node takes at most what the others take (`NodeShape`).
                    1 | 2 => {
                        let memory = next(17);
                        let last = (next(2) == 0).then(|| ResourceVec([8, next(memory + 1), 0]));
                        (ResourceVec([8, memory, 0]), last, false)
                    }
                    3 => {
                        let memory = next(17);
                        let last = ResourceVec([1 + next(7), next(memory + 1), 0]);
                        (ResourceVec([8, memory, 0]), Some(last), false)
                    }
                    // Some take nothing at all.
                    4 => (ResourceVec([0, next(3), 0]), None, false),
                    _ => (ResourceVec([1 + next(8), next(17), 0]), None, false),
                };
                let shape = NodeShape {
                    count,
                    per_node,
                    last: last.filter(|_| count > 1),
                    whole,
                };
                let ok = fast.select_any(&v, 0, &shape, &mut a);
                let reference = slow.select(&v, 0, &shape, 1, &mut |_, _, _| Verdict::Take, &mut b);
                assert_eq!(ok, reference, "call {call}: {shape:?}");
                if !ok {
                    continue;
                }
                assert_eq!(a, b, "call {call}: {shape:?}");
                if fast.takes_whole(&v, 0, &shape) {
                    whole_starts += 1;
                    with_coreless += u32::from(shape.whole && free.coreless_holds(0) > 0);
                } else {
                    other_starts += 1;
                }
                fast.take(&v, 0, &shape, &a);
                take_by_node(&mut slow, &v, 0, &shape, &b);
                for node in 0..150 {
                    assert_eq!(fast.free(&v, node), slow.free(&v, node), "node {node}");
                    assert_eq!(fast.touched(node), slow.touched(node), "node {node}");
                }
                let mut touched = (fast.touched.clone(), slow.touched.clone());
                touched.0.sort_unstable();
                touched.1.sort_unstable();
                assert_eq!(touched.0, touched.1);
                assert_eq!(fast.idle(&v, 0), slow.idle(&v, 0));
                assert_eq!(fast.idle(&v, 0), idle_untouched(&fast, &v, 0));
                assert_eq!(fast.class_free(&v, 0), slow.class_free(&v, 0));
                assert_eq!(fast.coreless_taken(0), slow.coreless_taken(0));
            }
            // Each start on whole nodes is a run of the touched nodes holding its nodes.
            for w in fast.whole_takes() {
                let nodes = &fast.touched[w.nodes.0 as usize..w.nodes.1 as usize];
                assert_eq!(nodes.len(), w.shape.count as usize);
                for (i, &node) in nodes.iter().enumerate() {
                    assert!(free.is_idle(node));
                    let held = free.free(node) - fast.free(&v, node);
                    assert!(w.shape.amount(i as u32).fits_in(&held));
                }
            }
        }
        assert!(whole_starts > 1_000 && other_starts > 1_000 && with_coreless > 50);
    }

    /// One pass reused over many calls on a class whose first node is not at a word's start
    /// (node 37), with starts of up to 90 whole nodes, others of any amount (nothing at all
    /// among them), and some given back ([`Pass::untake`], some calls ending on one):
    /// the starts on whole nodes skip the nodes this call touched — and only those, not the
    /// previous calls' — as the general selection offering each node does, and [`Pass::idle`]
    /// counts the idle nodes untouched after every start and give back.
    #[test]
    fn whole_starts_skip_this_calls_nodes_across_calls() {
        let l = Layout::new(&TopologyMachine::new(Topology::new(vec![Cluster::new(
            "c",
            Allocation::Shared,
            vec![
                NodeClass::new("a", 37, 8, 16),
                NodeClass::new("b", 150, 8, 16),
            ],
        )])))
        .unwrap();
        let empty = (
            Queue::default(),
            RunningSet::default(),
            RequestTable::default(),
        );
        let mut next = seeded(0x0DD_0026);
        let mut fast = Pass::default();
        let (mut long, mut given_back, mut whole_starts) = (0, 0, 0);
        for call in 0..300 {
            let mut free = FreeNodes::new(&l);
            for _ in 0..next(60) {
                let _ = free.take(
                    37 + next(150) as u32,
                    ResourceVec([1 + next(8), next(9), 0]),
                );
            }
            let v = view(&l, &free, Placement::FirstFit, &empty);
            let mut slow = Pass::default();
            fast.begin(&v);
            slow.begin(&v);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut this_call: Vec<(NodeShape, Vec<u32>)> = Vec::new();
            for _ in 0..20 {
                if next(5) == 0 && !this_call.is_empty() {
                    let (shape, nodes) =
                        this_call.swap_remove(next(this_call.len() as u64) as usize);
                    fast.untake(&v, 1, &shape, &nodes);
                    slow.untake(&v, 1, &shape, &nodes);
                    assert_eq!(fast.idle(&v, 1), idle_untouched(&fast, &v, 1));
                    given_back += 1;
                    // Sometimes the call ends on a give back: no start reads the bits
                    // before the next call.
                    if next(3) == 0 {
                        break;
                    }
                    continue;
                }
                let whole = next(3) > 0;
                let shape = NodeShape {
                    count: 1 + next(if whole { 90 } else { 6 }) as u32,
                    per_node: if whole {
                        ResourceVec([8, 16, 0])
                    } else {
                        // Some take nothing at all.
                        ResourceVec([next(9), next(9), 0])
                    },
                    last: None,
                    whole,
                };
                let ok = fast.select_any(&v, 1, &shape, &mut a);
                let reference = slow.select(&v, 1, &shape, 1, &mut |_, _, _| Verdict::Take, &mut b);
                assert_eq!(ok, reference, "call {call}: {shape:?}");
                if !ok {
                    continue;
                }
                assert_eq!(a, b, "call {call}: {shape:?}");
                whole_starts += u32::from(whole);
                long += u32::from(whole && a.len() > 64);
                fast.take(&v, 1, &shape, &a);
                take_by_node(&mut slow, &v, 1, &shape, &b);
                assert_eq!(fast.idle(&v, 1), idle_untouched(&fast, &v, 1));
                this_call.push((shape, a.clone()));
            }
        }
        assert!(
            whole_starts > 1_000 && long > 100 && given_back > 300,
            "{whole_starts} whole starts, {long} of more than 64 nodes, {given_back} given back"
        );
    }
}
