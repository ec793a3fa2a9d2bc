//! EASY's promise to the blocked queue head, on nodes: its *shadow time* and the state of the
//! head's classes at that time, which no backfilled job may spoil.
//!
//! The shadow time is found by releasing running jobs (and jobs started in this call) node by
//! node in order of predicted end — all releases of one instant together — until the head fits
//! on some eligible class: enough nodes each with the head's per-node amounts free. The state at
//! that instant `S` (per node of the head's classes) and the number of nodes that qualify for
//! the head in each class are kept.
//!
//! Nothing here visits every node of a large class: the counts start from the class's distinct
//! free vectors ([`super::free_counts`], brought up to date from the nodes that changed since
//! the previous call), corrected for the nodes this call has started something on, and `S` is
//! kept only where it differs from the engine's free vectors now — the nodes of this call's
//! starts, of the releases and of the long backfills — each marked with the call's epoch, so a
//! call costs what changed, released and took, not the machine's size. A class of fewer than
//! [`COUNTED_FROM`] nodes is counted by a pass over its nodes instead: there the pass is
//! cheaper than bringing the distinct vectors up to date (MetaCentrum's 20 clusters of 1–112
//! nodes, BENCHMARKS.md).
//!
//! A running job alone on its nodes — it takes every core of each, and no amount without a core
//! is held on its class ([`FreeNodes::coreless_holds`], [`Pass::coreless_taken`]) — is released
//! by count: each of its nodes goes from `capacity − amount` to `capacity`, so the head's counts
//! move once per distinct amount (two at most), not once per node, and `S` is not written
//! there. Nothing reads it there either: a selection offers only nodes with a core free now
//! unless the job it places takes no core, and before such a selection those nodes' `S` is
//! written ([`Shadow::select_long`]). On Curie's shape most releases are of such jobs (whole
//! 16-core nodes), and a head of a thousand nodes waits for as many (BENCHMARKS.md).
//!
//! The call's own starts on whole nodes ([`Pass::whole_takes`]) that are alone on them in the
//! same sense are counted the same way twice: taken, each node from `capacity` to `capacity −
//! amount`, and released at the start's end back to `capacity`; `S` is written on their nodes
//! only before a selection that takes no core, as for the running jobs.
//!
//! A job that would still run at the shadow time takes its amounts from `S` too, and may start
//! only if the head still fits on some class afterwards. Its nodes are chosen so as to spare the
//! head: first among nodes whose loss does not change what the head can use, then — only if it
//! needs more — among the others, each accepted only while the head still fits. The head holds
//! a time, not particular nodes; with exact estimates it starts no later than its shadow time
//! (docs/semantics.md, tests/topology_properties.rs).
//!
//! When such a job takes every core of each of its nodes, no amount without a core is held on
//! the class and the head needs a core on each of its nodes, the choice is decided from counts
//! ([`Shadow::select_long`]): every node that can take the job is idle and would be lost to the
//! head, so the job starts on the nodes a plain selection picks exactly when the head fits on
//! another class or has a node to spare on this one for each of the job's. On Curie's shape a
//! job of whole nodes behind a head of whole nodes would otherwise walk every idle node twice.
//!
//! On a pool (one node) this is the exercise's rule — backfill if it ends by the shadow time or
//! fits in the extra capacity — and on whole nodes of one class its node-count form.

use super::NodeView;
use super::free_counts::FreeCounts;
use super::pass::{Pass, Verdict};
use super::waiting::Tried;
use crate::sim::job::Time;
use crate::sim::resources::ResourceVec;
#[cfg(doc)]
use crate::sim::topology::FreeNodes;
use crate::sim::topology::NodeShape;

const NONE: u32 = u32::MAX;

/// Classes of at least this many nodes are counted from their distinct free vectors, smaller
/// ones by a pass over their nodes.
pub const COUNTED_FROM: u32 = 256;

/// The head on one of its classes: its shape there and how many nodes qualify.
#[derive(Clone, Copy, Debug)]
struct HeadClass {
    shape: NodeShape,
    q_full: u32,
    q_last: u32,
}

impl HeadClass {
    /// (can take the full amount, can take the last amount).
    #[inline]
    fn qualifies(&self, v: &ResourceVec) -> (bool, bool) {
        let full = self.shape.per_node.fits_in(v);
        (full, full || self.shape.last.is_some_and(|l| l.fits_in(v)))
    }

    #[inline]
    fn fits(&self) -> bool {
        self.q_full >= self.shape.full() && self.q_last >= self.shape.count
    }

    /// Counts `n` more nodes with `v` free.
    #[inline]
    fn count(&mut self, v: &ResourceVec, n: u32) {
        let (f, l) = self.qualifies(v);
        self.q_full += n * u32::from(f);
        self.q_last += n * u32::from(l);
    }

    /// Counts `n` nodes whose free amount went from `old` to `new`.
    #[inline]
    fn moved(&mut self, old: &ResourceVec, new: &ResourceVec, n: u32) {
        let (f0, l0) = self.qualifies(old);
        let (f1, l1) = self.qualifies(new);
        self.q_full = self.q_full + n * u32::from(f1) - n * u32::from(f0);
        self.q_last = self.q_last + n * u32::from(l1) - n * u32::from(l0);
    }

    /// Counts a release that raised `n` nodes from `old` free to `new` (⊇ `old`: a node that
    /// qualified for the full amount still does, and is not looked at again).
    #[inline]
    fn released(&mut self, old: &ResourceVec, new: &ResourceVec, n: u32) {
        let (f0, l0) = self.qualifies(old);
        if !f0 {
            let (f1, l1) = self.qualifies(new);
            self.q_full += n * u32::from(f1);
            self.q_last += n * u32::from(l1 && !l0);
        }
    }

    /// Fits with no node to spare: a node that stops qualifying for either amount ends it.
    #[inline]
    fn tight(&self) -> bool {
        self.q_full == self.shape.full() && self.q_last == self.shape.count
    }
}

/// A job started earlier in this call: it releases `nodes` of `class` at `end`.
#[derive(Clone, Copy, Debug)]
pub struct Started {
    pub end: Time,
    pub class: u32,
    pub shape: NodeShape,
    pub nodes: (u32, u32),
}

#[derive(Clone, Debug, Default)]
pub struct Shadow {
    /// Per node of the head's classes: free at the shadow time, after long backfills — where
    /// `stamp[node] == epoch`; every other node has at the shadow time what the engine has free
    /// now, but those of the jobs in `released_alone`, which have their whole capacity, and
    /// those of `held_alone`.
    s: Vec<ResourceVec>,
    stamp: Vec<u32>,
    /// Of the last [`Shadow::compute`]; never 0, so a fresh `stamp` marks nothing.
    epoch: u32,
    /// Per class: index into `heads`, or NONE.
    slot: Vec<u32>,
    heads: Vec<HeadClass>,
    /// Classes on which the head fits at the shadow time.
    fitting: u32,
    /// (node, previous S) of the selection in progress.
    log: Vec<(u32, ResourceVec)>,
    /// The large classes' distinct free vectors.
    counts: FreeCounts,
    /// The running jobs released by count in the last [`Shadow::compute`] whose nodes' `S` is
    /// not written yet.
    released_alone: Vec<u32>,
    /// The call's starts on whole nodes ([`Pass::whole_takes`], by index) that the last
    /// [`Shadow::compute`] counted by count, alone on their nodes: `S` there is `capacity −
    /// amount` until released, and not written yet.
    held_alone: Vec<u32>,
    /// The nodes of those that it released: `S` there is their capacity again.
    released_started: Vec<u32>,
}

impl Shadow {
    /// `S` at `node`.
    #[inline]
    fn get(&self, view: &NodeView<'_>, node: u32) -> ResourceVec {
        if self.stamp[node as usize] == self.epoch {
            self.s[node as usize]
        } else {
            view.free.free(node)
        }
    }

    fn set(&mut self, view: &NodeView<'_>, node: u32, class: u32, value: ResourceVec) {
        let old = self.get(view, node);
        let h = &mut self.heads[self.slot[class as usize] as usize];
        let before = h.fits();
        h.moved(&old, &value, 1);
        let after = h.fits();
        self.fitting = self.fitting + u32::from(after) - u32::from(before);
        self.s[node as usize] = value;
        self.stamp[node as usize] = self.epoch;
    }

    /// Writes `S` on `nodes` that this call started something on: what the pass left there.
    fn start_by_node(&mut self, view: &NodeView<'_>, pass: &Pass, nodes: &[u32]) {
        for &node in nodes {
            let slot = self.slot[view.free.class_of(node) as usize];
            if slot == NONE || self.stamp[node as usize] == self.epoch {
                continue;
            }
            let h = &mut self.heads[slot as usize];
            let now = pass.free(view, node);
            h.moved(&view.free.free(node), &now, 1);
            self.s[node as usize] = now;
            self.stamp[node as usize] = self.epoch;
        }
    }

    /// The head's shadow time: the first instant at which, with every release up to then, it
    /// fits on one of its classes. `None` if it never does.
    pub fn compute(
        &mut self,
        view: &NodeView<'_>,
        pass: &Pass,
        head: u32,
        started: &[Started],
        started_nodes: &[u32],
    ) -> Option<Time> {
        let layout = view.layout;
        let nodes = layout.node_count() as usize;
        if self.s.len() != nodes {
            self.s = vec![ResourceVec::ZERO; nodes];
            self.stamp = vec![0; nodes];
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.fill(0);
            self.epoch = 1;
        }
        self.slot.clear();
        self.slot.resize(layout.classes().len(), NONE);
        self.heads.clear();
        self.fitting = 0;
        self.log.clear();
        self.released_alone.clear();
        self.held_alone.clear();
        self.released_started.clear();
        for &class in view.classes_of(head) {
            let Some(shape) = view.shape(head, class) else {
                continue;
            };
            let mut h = HeadClass {
                shape,
                q_full: 0,
                q_last: 0,
            };
            let nodes = layout.class(class).nodes.clone();
            if nodes.len() < COUNTED_FROM as usize {
                for node in nodes {
                    h.count(&view.free.free(node), 1);
                }
            } else {
                for &(v, count) in self.counts.of(layout, view.free, class) {
                    h.count(&v, count);
                }
            }
            self.slot[class as usize] = self.heads.len() as u32;
            self.heads.push(h);
        }
        // This call's starts: S there is what the pass left, not what the engine has. A start
        // on whole nodes that is alone on them takes each from `capacity` to `capacity −
        // amount`, counted once per amount; `S` is not written there (see `held_alone`).
        let touched = pass.touched_nodes();
        let mut from = 0;
        for (i, w) in pass.whole_takes().iter().enumerate() {
            self.start_by_node(view, pass, &touched[from..w.nodes.0 as usize]);
            from = w.nodes.1 as usize;
            let slot = self.slot[w.class as usize];
            if slot == NONE {
                continue;
            }
            if alone(view, pass, w.class, &w.shape) {
                let capacity = view.layout.class(w.class).capacity.per_node;
                let h = &mut self.heads[slot as usize];
                h.moved(&capacity, &(capacity - w.shape.per_node), w.shape.full());
                if let Some(last) = w.shape.last {
                    h.moved(&capacity, &(capacity - last), 1);
                }
                self.held_alone.push(i as u32);
            } else {
                self.start_by_node(view, pass, &touched[w.nodes.0 as usize..from]);
            }
        }
        self.start_by_node(view, pass, &touched[from..]);
        self.fitting = self.heads.iter().map(|h| u32::from(h.fits())).sum();
        if self.heads.is_empty() {
            return None;
        }
        if self.fitting > 0 {
            return Some(view.now);
        }
        let mut running = view
            .running
            .iter()
            .map(|r| (view.predicted_end(r.expected_end), r.job))
            .peekable();
        let mut mine = started.iter().peekable();
        let mut current = None;
        loop {
            let take_running = match (running.peek(), mine.peek()) {
                (Some(a), Some(b)) => a.0 <= b.end,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let t = if take_running {
                running.peek().map(|r| r.0)
            } else {
                mine.peek().map(|s| s.end)
            }
            .expect("one stream has a release");
            if let Some(c) = current
                && t > c
                && self.fitting > 0
            {
                return Some(c);
            }
            current = Some(t);
            let (class, shape, nodes, running_job): (u32, NodeShape, &[u32], _) = if take_running {
                let (_, job) = running.next().expect("peeked");
                let a = view.alloc(job);
                (a.class, a.shape, &a.nodes, Some(job))
            } else {
                let s = mine.next().expect("peeked");
                (
                    s.class,
                    s.shape,
                    &started_nodes[s.nodes.0 as usize..s.nodes.1 as usize],
                    None,
                )
            };
            let slot = self.slot[class as usize];
            if slot == NONE {
                continue;
            }
            // A release only adds: a node can only start to qualify. The counts are
            // gathered over the job's nodes and `fitting` brought up to date once.
            let mut h = self.heads[slot as usize];
            let before = h.fits();
            if alone(view, pass, class, &shape) {
                let capacity = view.layout.class(class).capacity.per_node;
                // Each node goes from `capacity − amount` free to `capacity`.
                h.released(&(capacity - shape.per_node), &capacity, shape.full());
                if let Some(last) = shape.last {
                    h.released(&(capacity - last), &capacity, 1);
                }
                match running_job {
                    Some(job) => self.released_alone.push(job),
                    // A start of this call alone on its nodes was counted by count (a start on
                    // whole nodes, `Pass::takes_whole`); at `capacity` again, `S` there is what
                    // the engine has, unless written when the start's nodes were.
                    None => self.released_started.extend_from_slice(nodes),
                }
            } else {
                for (i, &node) in nodes.iter().enumerate() {
                    let old = self.get(view, node);
                    let new = old + shape.amount(i as u32);
                    h.released(&old, &new, 1);
                    self.s[node as usize] = new;
                    self.stamp[node as usize] = self.epoch;
                }
            }
            self.fitting = self.fitting + u32::from(h.fits()) - u32::from(before);
            self.heads[slot as usize] = h;
        }
        current.filter(|_| self.fitting > 0)
    }

    /// Writes `S` on the nodes [`Shadow::compute`] counted by count: those of the running jobs
    /// it released have their whole capacity at the shadow time, those of the call's starts on
    /// whole nodes `capacity − amount`, or their capacity again if it released them.
    fn write_alone(&mut self, view: &NodeView<'_>, pass: &Pass) {
        for &job in &self.released_alone {
            let a = view.alloc(job);
            let capacity = view.layout.class(a.class).capacity.per_node;
            for &node in &a.nodes {
                self.s[node as usize] = capacity;
                self.stamp[node as usize] = self.epoch;
            }
        }
        self.released_alone.clear();
        let touched = pass.touched_nodes();
        for &i in &self.held_alone {
            let w = pass.whole_takes()[i as usize];
            let capacity = view.layout.class(w.class).capacity.per_node;
            let nodes = &touched[w.nodes.0 as usize..w.nodes.1 as usize];
            for (k, &node) in nodes.iter().enumerate() {
                self.s[node as usize] = capacity - w.shape.amount(k as u32);
                self.stamp[node as usize] = self.epoch;
            }
        }
        self.held_alone.clear();
        for &node in &self.released_started {
            self.s[node as usize] = view.free.capacity(node);
            self.stamp[node as usize] = self.epoch;
        }
        self.released_started.clear();
    }

    /// EASY's backfilling test of waiting job `job` on nodes: the first of its classes on
    /// which it can start now — on any nodes when it ends by the shadow time, else only as
    /// [`Shadow::select_long`] allows — with its shape there; its nodes are left in `out`.
    /// `None` when no class takes it now.
    pub fn backfill_class(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        job: u32,
        ends_by_shadow: bool,
        out: &mut Vec<u32>,
    ) -> Option<(u32, NodeShape)> {
        let shapes = view
            .classes_of(job)
            .iter()
            .filter_map(|&class| Some((class, view.shape(job, class)?)));
        self.try_shapes(view, pass, shapes, ends_by_shadow, out)
            .ok()
    }

    /// [`Shadow::backfill_class`] of a job whose shapes on the classes it may run on, in
    /// placement order, are `shapes` (those where it fits an empty class), saying why when no
    /// class takes it: [`Tried::NoRoom`] when it fits none now, whatever the head,
    /// [`Tried::Refused`] when some class was refused for the head's sake
    /// ([`Shadow::select_long`]).
    pub fn try_shapes(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        shapes: impl IntoIterator<Item = (u32, NodeShape)>,
        ends_by_shadow: bool,
        out: &mut Vec<u32>,
    ) -> Result<(u32, NodeShape), Tried> {
        let mut failed = Tried::NoRoom;
        for (class, shape) in shapes {
            if !pass.may_fit(view, class, &shape) {
                continue;
            }
            let ok = if ends_by_shadow {
                pass.select_any(view, class, &shape, out)
            } else {
                // A refusal here may come of the head as well as of the nodes.
                failed = Tried::Refused;
                self.select_long(view, pass, class, &shape, out)
            };
            if ok {
                return Ok((class, shape));
            }
        }
        Err(failed)
    }

    /// Keeps `S` true, for a next call that carries it ([`super::carry`]), on the nodes of a
    /// start of `shape` on `class` now that ends by the shadow time: `S` there is what they
    /// have free before it (it is gone by then), which the engine's free vectors no longer say
    /// once the start is applied. The start takes a core on each node (a carried call follows
    /// only such starts), so its nodes hold nothing counted by count: `get` reads `S` there.
    pub fn keep_short(&mut self, view: &NodeView<'_>, class: u32, nodes: &[u32]) {
        if self.slot[class as usize] == NONE {
            return;
        }
        for &node in nodes {
            self.s[node as usize] = self.get(view, node);
            self.stamp[node as usize] = self.epoch;
        }
    }

    /// Carries the state of the last [`Shadow::compute`], with its call's backfills, into a
    /// call that finds nothing freed since ([`super::carry`]): the engine now holds that call's
    /// starts, so on its starts on whole nodes counted by count `S` is what the engine has
    /// (`capacity − amount`), and their record by the last call's [`Pass`] is dropped.
    pub fn carry_over(&mut self) {
        self.held_alone.clear();
    }

    /// Chooses nodes now for a job that would still run at the shadow time (see the module
    /// documentation) and takes its amounts from the shadow state. False, with nothing
    /// changed, if the head would no longer fit.
    pub fn select_long(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        class: u32,
        shape: &NodeShape,
        out: &mut Vec<u32>,
    ) -> bool {
        if self.slot[class as usize] == NONE {
            return pass.select_any(view, class, shape, out);
        }
        if shape.last.unwrap_or(shape.per_node).0[0] == 0 {
            // Offered every node, those counted by count among them.
            self.write_alone(view, pass);
        }
        if let Some(ok) = self.select_every_core(view, pass, class, shape, out) {
            return ok;
        }
        self.log.clear();
        let single_amount = shape.last.is_none();
        let ok = pass.select(
            view,
            class,
            shape,
            2,
            &mut |node, amount, sweep| {
                let h = &self.heads[self.slot[class as usize] as usize];
                let old = self.get(view, node);
                let new = old.checked_sub(&amount).unwrap_or(ResourceVec::ZERO);
                let (f0, l0) = h.qualifies(&old);
                let (f1, l1) = h.qualifies(&new);
                let costly = (f0 && !f1) || (l0 && !l1);
                if costly && sweep == 0 {
                    return Verdict::Refuse;
                }
                // The second sweep offers only nodes the first refused as costly, with the same
                // amount when the job has one per-node amount; if the head fits on this class
                // alone with no node to spare, each would leave it fitting nowhere.
                if costly && single_amount && self.fitting == 1 && h.tight() {
                    return Verdict::Stop;
                }
                self.set(view, node, class, new);
                if self.fitting == 0 {
                    self.set(view, node, class, old);
                    return Verdict::Refuse;
                }
                self.log.push((node, old));
                Verdict::Take
            },
            out,
        );
        if !ok {
            while let Some((node, old)) = self.log.pop() {
                self.set(view, node, class, old);
            }
        }
        ok
    }

    /// [`Shadow::select_long`] decided from counts, for a job with one per-node amount that
    /// takes every core of each of its nodes, on a class holding no amount without a core
    /// (engine or call) while the head needs a core on each of its nodes; `None` otherwise.
    ///
    /// Then a node that can take the job now has every core free, so it holds nothing and `S`
    /// there is its capacity: every such node qualifies for the head and none does once the
    /// job takes its cores. The first sweep therefore refuses them all, and the second accepts
    /// them in placement order while the head still fits somewhere: each costs the head one
    /// node of either amount on this class. So the job starts, on the nodes the plain
    /// selection picks, if the head fits on another class (or not on this one, and so on
    /// another), or has on this one a node to spare for each of the job's; else it fails, and
    /// neither sweep walks the idle nodes (Curie's shape: a job of whole 16-core nodes behind
    /// a head of whole nodes, BENCHMARKS.md).
    fn select_every_core(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        class: u32,
        shape: &NodeShape,
        out: &mut Vec<u32>,
    ) -> Option<bool> {
        let capacity = view.layout.class(class).capacity.per_node;
        let h = self.heads[self.slot[class as usize] as usize];
        let head_needs_cores = h.shape.per_node.0[0] > 0 && h.shape.last.is_none_or(|l| l.0[0] > 0);
        if shape.last.is_some()
            || shape.per_node.0[0] != capacity.0[0]
            || !head_needs_cores
            || view.free.coreless_holds(class) > 0
            || pass.coreless_taken(class) > 0
        {
            return None;
        }
        if self.fitting == u32::from(h.fits()) {
            // The head fits on this class alone: it may lose as many nodes as it has to spare.
            let spare = if h.fits() {
                (h.q_full - h.shape.full()).min(h.q_last - h.shape.count)
            } else {
                0
            };
            if spare < shape.count {
                return Some(false);
            }
        }
        if !pass.select_any(view, class, shape, out) {
            return Some(false);
        }
        let taken = capacity - shape.per_node;
        for &node in out.iter() {
            self.set(view, node, class, taken);
        }
        Some(true)
    }
}

/// Whether a running job of `shape` on `class` is alone on each of its nodes now: it takes
/// every core of each, and no amount without a core is held on the class, by the engine or by
/// this call — so each node has `capacity − amount` free, and `S` there is what the engine has.
#[inline]
fn alone(view: &NodeView<'_>, pass: &Pass, class: u32, shape: &NodeShape) -> bool {
    let cores = view.layout.class(class).capacity.per_node.0[0];
    shape.per_node.0[0] == cores
        && shape.last.is_none_or(|l| l.0[0] == cores)
        && view.free.coreless_holds(class) == 0
        && pass.coreless_taken(class) == 0
}
