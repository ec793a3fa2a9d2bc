//! The free resources of every node, indexed so that a fit is not a scan of every node.
//!
//! Per node: its free vector (cores, memory KB, GPUs). Per class: the sum of its nodes' free
//! vectors (cheap rejections first), the set of *idle* nodes (wholly free: interchangeable, a
//! whole-node fit is a count) and the set of *partial* nodes (some core free, not idle). Nodes
//! with no free core are in neither set and are skipped by every search for a job that needs a
//! core. Sets are bitsets in node order, so searches visit nodes by increasing index.
//!
//! Per class also: a log of the nodes whose free vector changed ([`FreeNodes::changes_since`]),
//! so that a reader keeping its own tally of the nodes' free vectors (node-level EASY's counts
//! of a class's distinct free vectors, `scheduler::node::free_counts`) catches up on what
//! changed since it last read instead of visiting every node. A change costs a push; the log is
//! dropped when it outgrows twice the class's nodes, and a reader that far behind reads every
//! node again. Nothing here keeps the tally: it pays only where a reader asks for it.
//!
//! Per class also: how many amounts without a core are held there
//! ([`FreeNodes::coreless_holds`]). Every other amount takes a core, so while a class holds
//! none, a job that takes every core of its nodes is alone on them (node-level EASY's shadow
//! releases such a job by count, `scheduler::node::shadow`).
//!
//! The engine owns one `FreeNodes` and is the only place that changes it; [`FreeNodes::take`]
//! refuses — as an error, never a panic — any amount that would over-allocate a component.

use std::sync::atomic::{AtomicU64, Ordering};

use super::layout::Layout;
use super::request::NodeShape;
use crate::sim::resources::ResourceVec;

/// The number of the next [`FreeNodes`] made: each numbers its own history of changes.
static HISTORIES: AtomicU64 = AtomicU64::new(1);

/// A place in the change log of one [`FreeNodes`] (its history — a clone continues its
/// original's — and a change number there), as [`FreeNodes::changes_since`] returns it. The
/// default is no place: the first read reads every node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogPosition {
    history: u64,
    change: u64,
}

/// A set of a class's nodes, by offset from the class's first node.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bits {
    words: Vec<u64>,
    len: u32,
}

impl Bits {
    fn new(n: u32, full: bool) -> Self {
        let mut words = vec![if full { u64::MAX } else { 0 }; (n as usize).div_ceil(64)];
        if full && !n.is_multiple_of(64) {
            *words.last_mut().expect("n > 0") = (1u64 << (n % 64)) - 1;
        }
        Bits {
            words,
            len: if full { n } else { 0 },
        }
    }

    #[inline]
    fn set(&mut self, i: u32, on: bool) {
        let (w, b) = ((i / 64) as usize, i % 64);
        let was = self.words[w] >> b & 1 == 1;
        if was != on {
            self.words[w] ^= 1 << b;
            if on {
                self.len += 1;
            } else {
                self.len -= 1;
            }
        }
    }

    #[inline]
    fn word(&self, w: usize) -> u64 {
        self.words[w]
    }
}

/// Per-node free resources and the per-class index.
#[derive(Clone, Debug)]
pub struct FreeNodes {
    free: Vec<ResourceVec>,
    /// Per class: first node, capacity per node.
    first: Vec<u32>,
    capacity: Vec<ResourceVec>,
    class_of: Vec<u32>,
    class_free: Vec<ResourceVec>,
    idle: Vec<Bits>,
    partial: Vec<Bits>,
    /// Per class: how many nodes have each number of free cores (0..=cores), at
    /// `hist_at[class]..`; and the largest free core count of any of its nodes.
    hist: Vec<u32>,
    hist_at: Vec<usize>,
    max_cores: Vec<u64>,
    /// Per class: the nodes whose free vector changed, oldest first (a node may repeat), the
    /// first of them change number `log_base[class]` of the class.
    log: Vec<Vec<u32>>,
    log_base: Vec<u64>,
    history: u64,
    /// Per class: amounts held there that take no core.
    coreless: Vec<u32>,
}

/// An amount a node does not have free: a scheduler bug, reported by the engine as an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotFree {
    pub node: u32,
}

impl FreeNodes {
    /// Every node of `layout` wholly free.
    pub fn new(layout: &Layout) -> Self {
        let classes = layout.classes();
        let mut free = Vec::with_capacity(layout.node_count() as usize);
        let mut class_of = Vec::with_capacity(layout.node_count() as usize);
        for (c, class) in classes.iter().enumerate() {
            free.extend(std::iter::repeat_n(
                class.capacity.per_node,
                class.capacity.nodes as usize,
            ));
            class_of.extend(std::iter::repeat_n(c as u32, class.capacity.nodes as usize));
        }
        let mut hist_at = Vec::with_capacity(classes.len());
        let mut hist = Vec::new();
        for class in classes {
            hist_at.push(hist.len());
            let cores = class.capacity.per_node.0[0] as usize;
            hist.resize(hist.len() + cores + 1, 0);
            *hist.last_mut().expect("cores + 1 > 0") = class.capacity.nodes;
        }
        FreeNodes {
            log: vec![Vec::new(); classes.len()],
            log_base: vec![0; classes.len()],
            history: HISTORIES.fetch_add(1, Ordering::Relaxed),
            coreless: vec![0; classes.len()],
            hist,
            hist_at,
            max_cores: classes.iter().map(|c| c.capacity.per_node.0[0]).collect(),
            free,
            first: classes.iter().map(|c| c.nodes.start).collect(),
            capacity: classes.iter().map(|c| c.capacity.per_node).collect(),
            class_of,
            class_free: classes
                .iter()
                .map(|c| {
                    let n = u64::from(c.capacity.nodes);
                    let p = c.capacity.per_node;
                    ResourceVec([p.0[0] * n, p.0[1] * n, p.0[2] * n])
                })
                .collect(),
            idle: classes
                .iter()
                .map(|c| Bits::new(c.capacity.nodes, true))
                .collect(),
            partial: classes
                .iter()
                .map(|c| Bits::new(c.capacity.nodes, false))
                .collect(),
        }
    }

    /// What `node` has free.
    #[inline]
    pub fn free(&self, node: u32) -> ResourceVec {
        self.free[node as usize]
    }

    /// A node's capacity.
    #[inline]
    pub fn capacity(&self, node: u32) -> ResourceVec {
        self.capacity[self.class_of[node as usize] as usize]
    }

    /// The sum of the free vectors of `class`'s nodes.
    #[inline]
    pub fn class_free(&self, class: u32) -> ResourceVec {
        self.class_free[class as usize]
    }

    /// Wholly free nodes of `class`.
    #[inline]
    pub fn idle_count(&self, class: u32) -> u32 {
        self.idle[class as usize].len
    }

    /// Whether `node` is wholly free.
    #[inline]
    pub fn is_idle(&self, node: u32) -> bool {
        let c = self.class_of[node as usize];
        self.free[node as usize] == self.capacity[c as usize]
    }

    /// The largest number of free cores any node of `class` has.
    #[inline]
    pub fn max_free_cores(&self, class: u32) -> u64 {
        self.max_cores[class as usize]
    }

    /// Takes `amount` from `node`, or refuses without changing anything.
    pub fn take(&mut self, node: u32, amount: ResourceVec) -> Result<(), NotFree> {
        let old = self.free[node as usize];
        self.free[node as usize] = old.checked_sub(&amount).ok_or(NotFree { node })?;
        let c = self.class_of[node as usize] as usize;
        self.class_free[c] -= amount;
        if amount.0[0] == 0 {
            self.coreless[c] += 1;
        }
        self.reindex(node, old);
        Ok(())
    }

    /// Gives back what [`FreeNodes::take`] took.
    pub fn give(&mut self, node: u32, amount: ResourceVec) {
        let c = self.class_of[node as usize] as usize;
        let old = self.free[node as usize];
        self.free[node as usize] += amount;
        debug_assert!(self.free[node as usize].fits_in(&self.capacity[c]));
        self.class_free[c] += amount;
        if amount.0[0] == 0 {
            self.coreless[c] -= 1;
        }
        self.reindex(node, old);
    }

    /// Takes `shape`'s amounts from `nodes` of `class` (its nodes in the shape's order: full
    /// ones first, the last one last), or refuses without changing anything when one of them
    /// does not have its amount free. The same as a [`FreeNodes::take`] per node, with what
    /// concerns the class done once: a job of a thousand nodes starts in one call.
    pub fn take_shape(
        &mut self,
        class: u32,
        shape: &NodeShape,
        nodes: &[u32],
    ) -> Result<(), NotFree> {
        debug_assert_eq!(nodes.len(), shape.count as usize);
        for (i, &node) in nodes.iter().enumerate() {
            if !shape.amount(i as u32).fits_in(&self.free[node as usize]) {
                return Err(NotFree { node });
            }
        }
        let c = class as usize;
        self.class_free[c] -= shape.total();
        self.coreless[c] += coreless_amounts(shape);
        let limit = self.log_limit(c);
        let mut most = 0;
        for (i, &node) in nodes.iter().enumerate() {
            debug_assert_eq!(self.class_of[node as usize], class);
            let old = self.free[node as usize];
            self.free[node as usize] = old - shape.amount(i as u32);
            most = most.max(self.reindex_node(c, node, old, limit));
        }
        self.settle_max_cores(c, most);
        Ok(())
    }

    /// Gives back what [`FreeNodes::take_shape`] took.
    pub fn give_shape(&mut self, class: u32, shape: &NodeShape, nodes: &[u32]) {
        debug_assert_eq!(nodes.len(), shape.count as usize);
        let c = class as usize;
        self.class_free[c] += shape.total();
        self.coreless[c] -= coreless_amounts(shape);
        let limit = self.log_limit(c);
        let mut most = 0;
        for (i, &node) in nodes.iter().enumerate() {
            debug_assert_eq!(self.class_of[node as usize], class);
            let old = self.free[node as usize];
            self.free[node as usize] = old + shape.amount(i as u32);
            debug_assert!(self.free[node as usize].fits_in(&self.capacity[c]));
            most = most.max(self.reindex_node(c, node, old, limit));
        }
        self.settle_max_cores(c, most);
    }

    /// How many amounts that take no core `class`'s nodes hold (each take of one counts, each
    /// give of one uncounts). While there are none, a node none of whose cores is free holds
    /// nothing but the amounts that took its cores.
    #[inline]
    pub fn coreless_holds(&self, class: u32) -> u32 {
        self.coreless[class as usize]
    }

    /// The class of `node`.
    #[inline]
    pub fn class_of(&self, node: u32) -> u32 {
        self.class_of[node as usize]
    }

    /// The nodes of `class` whose free vector changed since `seen` (oldest first, a node
    /// possibly repeated; some may have changed back), and the position to ask from next time.
    /// `None` for the nodes when the log does not reach back to `seen` (it was dropped, or
    /// `seen` is of another `FreeNodes` or none): the reader must read every node.
    #[inline]
    pub fn changes_since(&self, class: u32, seen: LogPosition) -> (Option<&[u32]>, LogPosition) {
        let c = class as usize;
        let base = self.log_base[c];
        let log = &self.log[c];
        let next = LogPosition {
            history: self.history,
            change: base + log.len() as u64,
        };
        let nodes = seen
            .change
            .checked_sub(base)
            .filter(|_| seen.history == self.history && seen.change <= next.change)
            .map(|i| &log[i as usize..]);
        (nodes, next)
    }

    fn reindex(&mut self, node: u32, old: ResourceVec) {
        let c = self.class_of[node as usize] as usize;
        let limit = self.log_limit(c);
        let cores = self.reindex_node(c, node, old, limit);
        self.settle_max_cores(c, cores);
    }

    /// The length at which class `c`'s change log is dropped: twice its nodes.
    #[inline]
    fn log_limit(&self, c: usize) -> usize {
        2 * (self.class_end(c) - self.first[c]) as usize
    }

    /// Indexes the change of `node` (of class `c`) from `old` to what it has free now — the
    /// log, the core histogram, the idle and partial sets — but the class's largest free core
    /// count, which [`FreeNodes::settle_max_cores`] brings up to date once for a batch of
    /// nodes. Returns the node's free cores now.
    #[inline]
    fn reindex_node(&mut self, c: usize, node: u32, old: ResourceVec, log_limit: usize) -> u64 {
        let free = self.free[node as usize];
        if free != old {
            let log = &mut self.log[c];
            if log.len() >= log_limit {
                self.log_base[c] += log.len() as u64;
                log.clear();
            }
            log.push(node);
        }
        let old_cores = old.0[0];
        let new_cores = free.0[0];
        if new_cores != old_cores {
            let h = &mut self.hist[self.hist_at[c]..];
            h[old_cores as usize] -= 1;
            h[new_cores as usize] += 1;
        }
        let i = node - self.first[c];
        let idle = free == self.capacity[c];
        self.idle[c].set(i, idle);
        self.partial[c].set(i, !idle && free.0[0] > 0);
        new_cores
    }

    /// Brings class `c`'s largest free core count up to date after changed nodes of which
    /// `most` is the largest free core count now: it is `most` if that is more, else the
    /// previous one or, if no node has that many any more, the next count some node has.
    #[inline]
    fn settle_max_cores(&mut self, c: usize, most: u64) {
        let h = &self.hist[self.hist_at[c]..];
        let max = &mut self.max_cores[c];
        if most > *max {
            *max = most;
        } else {
            while *max > 0 && h[*max as usize] == 0 {
                *max -= 1;
            }
        }
    }

    /// One past the last node of class `c`.
    #[inline]
    fn class_end(&self, c: usize) -> u32 {
        self.first
            .get(c + 1)
            .copied()
            .unwrap_or(self.free.len() as u32)
    }

    /// The nodes of `class` that may hold an amount needing `cores` cores, in increasing
    /// index: idle and partial nodes when `cores > 0` (a node with no free core cannot), every
    /// node otherwise; only idle nodes when `idle_only`. The caller checks each node's free
    /// vector.
    #[inline]
    pub fn candidates(&self, class: u32, cores: u64, idle_only: bool) -> Candidates<'_> {
        let c = class as usize;
        let first = self.first[c];
        let end = self.class_end(c);
        let which = if idle_only {
            Which::Idle
        } else if cores > 0 {
            Which::Usable
        } else {
            Which::All
        };
        let mut it = Candidates {
            idle: &self.idle[c],
            partial: &self.partial[c],
            which,
            first,
            nodes: end - first,
            word: 0,
            bits: 0,
        };
        it.bits = it.load(0);
        it
    }
}

/// How many of `shape`'s amounts take no core.
#[inline]
fn coreless_amounts(shape: &NodeShape) -> u32 {
    let full = if shape.per_node.0[0] == 0 {
        shape.full()
    } else {
        0
    };
    full + u32::from(shape.last.is_some_and(|l| l.0[0] == 0))
}

#[derive(Clone, Copy)]
enum Which {
    Idle,
    Usable,
    All,
}

/// Iterator of [`FreeNodes::candidates`].
pub struct Candidates<'a> {
    idle: &'a Bits,
    partial: &'a Bits,
    which: Which,
    first: u32,
    nodes: u32,
    word: usize,
    bits: u64,
}

impl Candidates<'_> {
    #[inline]
    fn load(&self, w: usize) -> u64 {
        if w >= self.idle.words.len() {
            return 0;
        }
        match self.which {
            Which::Idle => self.idle.word(w),
            Which::Usable => self.idle.word(w) | self.partial.word(w),
            Which::All => {
                if (w + 1) * 64 <= self.nodes as usize {
                    u64::MAX
                } else {
                    (1u64 << (self.nodes % 64)) - 1
                }
            }
        }
    }
}

impl Iterator for Candidates<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.bits == 0 {
            self.word += 1;
            if self.word >= self.idle.words.len() {
                return None;
            }
            self.bits = self.load(self.word);
        }
        let b = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some(self.first + self.word as u32 * 64 + b)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::cluster::{Cluster, NodeClass, Topology};
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};

    /// A shared cluster of `small` nodes of 8 cores and 16 memory units and one of 80 and 512
    /// (also the layout of `scheduler::node::free_counts`' tests).
    pub(crate) fn layout(small: u32) -> Layout {
        Layout::new(&TopologyMachine::new(Topology::new(vec![Cluster::new(
            "c",
            Allocation::Shared,
            vec![
                NodeClass::new("small", small, 8, 16),
                NodeClass::new("big", 1, 80, 512),
            ],
        )])))
        .unwrap()
    }

    #[test]
    fn the_index_follows_every_change() {
        let l = layout(70);
        let mut f = FreeNodes::new(&l);
        assert_eq!(f.idle_count(0), 70);
        assert_eq!(f.class_free(0), ResourceVec([560, 1120, 0]));
        f.take(3, ResourceVec([2, 4, 0])).unwrap();
        f.take(65, ResourceVec([8, 1, 0])).unwrap(); // no core left
        assert_eq!(f.idle_count(0), 68);
        assert_eq!(f.class_free(0), ResourceVec([550, 1115, 0]));
        assert_eq!(f.max_free_cores(0), 8);
        for n in 0..70 {
            if n != 65 {
                f.take(n, ResourceVec([if n == 3 { 4 } else { 6 }, 0, 0]))
                    .unwrap();
            }
        }
        assert_eq!(f.max_free_cores(0), 2);
        for n in 0..70 {
            if n != 65 {
                f.give(n, ResourceVec([if n == 3 { 4 } else { 6 }, 0, 0]));
            }
        }
        let with_core: Vec<u32> = f.candidates(0, 1, false).collect();
        assert_eq!(with_core.len(), 69);
        assert!(with_core.contains(&3) && !with_core.contains(&65));
        assert!(with_core.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(f.candidates(0, 0, false).count(), 70);
        assert_eq!(f.candidates(0, 1, true).count(), 68);
        assert_eq!(f.candidates(1, 1, false).collect::<Vec<_>>(), [70]);
        // Refused without change.
        assert_eq!(f.take(3, ResourceVec([7, 0, 0])), Err(NotFree { node: 3 }));
        assert_eq!(f.free(3), ResourceVec([6, 12, 0]));
        f.give(3, ResourceVec([2, 4, 0]));
        f.give(65, ResourceVec([8, 1, 0]));
        assert_eq!(f.idle_count(0), 70);
        assert!(f.is_idle(65));
        assert_eq!(f.max_free_cores(0), 8);
        assert_eq!(f.candidates(0, 1, false).count(), 70);
    }
    /// Whole shapes taken and given back at once leave the index as a take or give per node
    /// does: free vectors, class totals, idle and partial sets, the largest free core count,
    /// the amounts without a core and the change log.
    #[test]
    fn a_shape_at_once_indexes_as_node_by_node() {
        let l = layout(12);
        let (mut batch, mut single) = (FreeNodes::new(&l), FreeNodes::new(&l));
        let mut held: Vec<(NodeShape, Vec<u32>)> = Vec::new();
        let mut x = 0x2545_F491_u64;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        };
        let (mut refused, mut to_zero) = (0, 0);
        for step in 0..6_000 {
            if held.is_empty() || next(5) > 1 {
                let count = 1 + next(6) as u32;
                let per_node = ResourceVec([next(9), next(5), 0]);
                let last = (next(2) == 0).then(|| ResourceVec([next(9), next(5), 0]));
                let shape = NodeShape {
                    count,
                    per_node,
                    last,
                    whole: false,
                };
                let first = next(12) as u32;
                let nodes: Vec<u32> = (0..count).map(|i| (first + 7 * i) % 12).collect();
                let before = batch.free.clone();
                match batch.take_shape(0, &shape, &nodes) {
                    Ok(()) => {
                        for (i, &node) in nodes.iter().enumerate() {
                            single.take(node, shape.amount(i as u32)).unwrap();
                        }
                        held.push((shape, nodes));
                    }
                    Err(_) => {
                        refused += 1;
                        assert_eq!(batch.free, before, "step {step}: refused without change");
                    }
                }
            } else {
                let (shape, nodes) = held.swap_remove(next(held.len() as u64) as usize);
                batch.give_shape(0, &shape, &nodes);
                for (i, &node) in nodes.iter().enumerate() {
                    single.give(node, shape.amount(i as u32));
                }
            }
            to_zero += usize::from(batch.max_free_cores(0) < 8);
            assert_eq!(batch.free, single.free, "step {step}");
            assert_eq!(batch.class_free(0), single.class_free(0));
            assert_eq!(batch.idle_count(0), single.idle_count(0));
            assert_eq!(
                batch.max_free_cores(0),
                single.max_free_cores(0),
                "step {step}"
            );
            assert_eq!(batch.coreless_holds(0), single.coreless_holds(0));
            assert!(
                batch
                    .candidates(0, 1, false)
                    .eq(single.candidates(0, 1, false))
            );
            assert!(
                batch
                    .candidates(0, 1, true)
                    .eq(single.candidates(0, 1, true))
            );
            assert_eq!(batch.log, single.log, "step {step}");
            assert_eq!(batch.log_base, single.log_base);
        }
        assert!(
            refused > 100 && to_zero > 100,
            "{refused} refused, {to_zero} below 8 cores"
        );
    }

    /// After random takes and gives, a reader that saved every node's free vector at some
    /// change number finds every node that differs now among the changes since, unless the log
    /// was dropped past it.
    #[test]
    fn the_log_names_every_node_that_changed() {
        let l = layout(70);
        let mut f = FreeNodes::new(&l);
        let mut held: Vec<(u32, ResourceVec)> = Vec::new();
        let mut x = 0x9E37_79B9_u64;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        };
        let snapshot = |f: &FreeNodes| (0..71).map(|n| f.free(n)).collect::<Vec<_>>();
        let position = |f: &FreeNodes| f.changes_since(0, LogPosition::default()).1;
        let mut saved = vec![(position(&f), snapshot(&f))];
        let (mut reached, mut dropped) = (0, 0);
        for step in 0..5_000 {
            if held.is_empty() || next(3) > 0 {
                let node = next(71) as u32;
                let amount = ResourceVec([1 + next(4), next(3) * 2, 0]);
                if f.take(node, amount).is_ok() {
                    held.push((node, amount));
                }
            } else {
                let (node, amount) = held.swap_remove(next(held.len() as u64) as usize);
                f.give(node, amount);
            }
            if step % 13 == 0 {
                saved.push((position(&f), snapshot(&f)));
            }
            if step % 97 == 0 {
                let now = position(&f);
                for (seen, then) in &saved {
                    match f.changes_since(0, *seen) {
                        (Some(nodes), next) => {
                            reached += 1;
                            assert_eq!(next, now);
                            assert_eq!(nodes.len() as u64, now.change - seen.change);
                            for n in 0..70u32 {
                                if f.free(n) != then[n as usize] {
                                    assert!(nodes.contains(&n), "node {n} since {seen:?}");
                                }
                            }
                        }
                        (None, _) => dropped += 1,
                    }
                }
            }
        }
        assert!(
            reached > 100 && dropped > 100,
            "{reached} reached, {dropped} dropped"
        );
        // Another FreeNodes' position, or none, reaches nothing.
        assert!(f.changes_since(0, LogPosition::default()).0.is_none());
        let other = FreeNodes::new(&l);
        assert!(f.changes_since(0, position(&other)).0.is_none());
        assert!(f.clone().changes_since(0, position(&f)).0.is_some());
    }
}
