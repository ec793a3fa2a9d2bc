//! The state *now* during one scheduler call — the engine's free vectors minus what the call has
//! already decided to start — and the choice of nodes for a start now.
//!
//! The engine's state is borrowed, never copied: what the call takes is recorded per touched
//! node and per class, and undone in O(touched) at the next call. Cheap rejections come first
//! (a class's free total, its idle-node count for whole nodes); only then are nodes visited,
//! through the class's idle/partial index, in placement order.

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

#[derive(Clone, Debug, Default)]
pub struct Pass {
    taken: Vec<ResourceVec>,
    touched: Vec<u32>,
    class_taken: Vec<ResourceVec>,
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
        } else {
            for &n in &self.touched {
                self.taken[n as usize] = ResourceVec::ZERO;
            }
        }
        self.touched.clear();
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

    /// The nodes this call has started something on (a node may repeat when a rule gave back
    /// what it took and took again, [`Pass::untake`]).
    #[inline]
    pub fn touched_nodes(&self) -> &[u32] {
        &self.touched
    }

    /// Idle nodes of `class` now.
    #[inline]
    pub fn idle(&self, view: &NodeView<'_>, class: u32) -> u32 {
        view.free.idle_count(class) - self.idle_taken[class as usize]
    }

    /// Records that this call starts `shape` on `nodes` of `class`.
    pub fn take(&mut self, view: &NodeView<'_>, class: u32, shape: &NodeShape, nodes: &[u32]) {
        let c = class as usize;
        self.class_taken[c] += shape.total();
        self.coreless_taken[c] += shape.coreless();
        let mut idle = 0;
        for (i, &node) in nodes.iter().enumerate() {
            let taken = &mut self.taken[node as usize];
            if *taken == ResourceVec::ZERO {
                self.touched.push(node);
                idle += u32::from(view.free.is_idle(node));
            }
            *taken += shape.amount(i as u32);
        }
        self.idle_taken[c] += idle;
    }

    /// Gives back what [`Pass::take`] recorded for `shape` on `nodes` of `class`: a rule that
    /// holds back the nodes of jobs that ended at this instant releases them one by one, in the
    /// order it models (`compat: aleang`, [`super::AleangAggressive`]).
    pub fn untake(&mut self, view: &NodeView<'_>, class: u32, shape: &NodeShape, nodes: &[u32]) {
        for (i, &node) in nodes.iter().enumerate() {
            let amount = shape.amount(i as u32);
            self.taken[node as usize] -= amount;
            self.class_taken[class as usize] -= amount;
            if amount.0[0] == 0 {
                self.coreless_taken[class as usize] -= 1;
            }
            if !self.touched(node) && view.free.is_idle(node) {
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
        self.select(view, class, shape, 1, &mut |_, _, _| Verdict::Take, out)
    }
}
