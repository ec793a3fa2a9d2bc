//! The free resources of every node, indexed so that a fit is not a scan of every node.
//!
//! Per node: its free vector (cores, memory KB, GPUs). Per class: the sum of its nodes' free
//! vectors (cheap rejections first), the set of *idle* nodes (wholly free: interchangeable, a
//! whole-node fit is a count) and the set of *partial* nodes (some core free, not idle). Nodes
//! with no free core are in neither set and are skipped by every search for a job that needs a
//! core. Sets are bitsets in node order, so searches visit nodes by increasing index.
//!
//! Per class also: its nodes' *distinct* free vectors, each with how many nodes have it
//! ([`FreeNodes::free_counts`]). A class's nodes mostly share a few free vectors (idle, full,
//! a few common remainders), so "how many nodes of this class can take this amount" is a pass
//! over those few entries instead of over the nodes (node-level EASY's shadow,
//! `scheduler::node::shadow`).
//!
//! The engine owns one `FreeNodes` and is the only place that changes it; [`FreeNodes::take`]
//! refuses — as an error, never a panic — any amount that would over-allocate a component.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::layout::Layout;
use crate::sim::mix_hash::MixHasher;
use crate::sim::resources::ResourceVec;

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
    /// Per class: its nodes' distinct free vectors, each with its number of nodes (> 0), in no
    /// particular order; and where each (class, free vector) is in its class's list.
    counts: Vec<Vec<(ResourceVec, u32)>>,
    count_at: HashMap<(u32, ResourceVec), u32, BuildHasherDefault<MixHasher>>,
    /// Per class: the two entries of `counts` last looked up (a job's nodes mostly move
    /// between the same two free vectors), forgotten when entries move.
    recent: Vec<[(ResourceVec, u32); 2]>,
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
        let counts: Vec<Vec<(ResourceVec, u32)>> = classes
            .iter()
            .map(|c| vec![(c.capacity.per_node, c.capacity.nodes)])
            .collect();
        let count_at = classes
            .iter()
            .enumerate()
            .map(|(c, class)| ((c as u32, class.capacity.per_node), 0))
            .collect();
        FreeNodes {
            recent: vec![[(ResourceVec::ZERO, u32::MAX); 2]; classes.len()],
            counts,
            count_at,
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
        self.reindex(node, old);
    }

    /// The distinct free vectors of `class`'s nodes, each with how many nodes have it (in no
    /// particular order; every count > 0).
    #[inline]
    pub fn free_counts(&self, class: u32) -> &[(ResourceVec, u32)] {
        &self.counts[class as usize]
    }

    /// The class of `node`.
    #[inline]
    pub fn class_of(&self, node: u32) -> u32 {
        self.class_of[node as usize]
    }

    /// Where free vector `v` is in `class`'s counts, if some node has it.
    #[inline]
    fn entry(&mut self, class: u32, v: ResourceVec) -> Option<u32> {
        let recent = &mut self.recent[class as usize];
        if let Some(&(_, i)) = recent.iter().find(|r| r.0 == v && r.1 != u32::MAX) {
            return Some(i);
        }
        let i = *self.count_at.get(&(class, v))?;
        recent[1] = recent[0];
        recent[0] = (v, i);
        Some(i)
    }

    /// Moves one node of `class` from free vector `old` to `new` in the class's counts.
    fn recount(&mut self, class: u32, old: ResourceVec, new: ResourceVec) {
        let c = class as usize;
        let i = self.entry(class, old).expect("a node has it") as usize;
        let list = &mut self.counts[c];
        list[i].1 -= 1;
        if list[i].1 == 0 {
            list.swap_remove(i);
            self.count_at.remove(&(class, old));
            if let Some(&(moved, _)) = list.get(i) {
                self.count_at.insert((class, moved), i as u32);
            }
            self.recent[c] = [(ResourceVec::ZERO, u32::MAX); 2];
        }
        match self.entry(class, new) {
            Some(j) => self.counts[c][j as usize].1 += 1,
            None => {
                let list = &mut self.counts[c];
                self.count_at.insert((class, new), list.len() as u32);
                list.push((new, 1));
            }
        }
    }

    fn reindex(&mut self, node: u32, old: ResourceVec) {
        let c = self.class_of[node as usize] as usize;
        let free = self.free[node as usize];
        if free != old {
            self.recount(c as u32, old, free);
        }
        let old_cores = old.0[0];
        let new_cores = free.0[0];
        if new_cores != old_cores {
            let h = &mut self.hist[self.hist_at[c]..];
            h[old_cores as usize] -= 1;
            h[new_cores as usize] += 1;
            let max = &mut self.max_cores[c];
            if new_cores > *max {
                *max = new_cores;
            } else {
                while *max > 0 && h[*max as usize] == 0 {
                    *max -= 1;
                }
            }
        }
        let i = node - self.first[c];
        let idle = free == self.capacity[c];
        self.idle[c].set(i, idle);
        self.partial[c].set(i, !idle && free.0[0] > 0);
    }

    /// The nodes of `class` that may hold an amount needing `cores` cores, in increasing
    /// index: idle and partial nodes when `cores > 0` (a node with no free core cannot), every
    /// node otherwise; only idle nodes when `idle_only`. The caller checks each node's free
    /// vector.
    #[inline]
    pub fn candidates(&self, class: u32, cores: u64, idle_only: bool) -> Candidates<'_> {
        let c = class as usize;
        let first = self.first[c];
        let end = self
            .first
            .get(c + 1)
            .copied()
            .unwrap_or(self.free.len() as u32);
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
mod tests {
    use super::super::cluster::{Cluster, NodeClass, Topology};
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};

    fn layout(small: u32) -> Layout {
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
    /// The distinct free vectors and their node counts, after random takes and gives, are
    /// those of a tally of every node's free vector.
    #[test]
    fn the_free_counts_are_a_tally_of_the_nodes() {
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
            if step % 97 == 0 || step == 4_999 {
                for class in 0..2u32 {
                    let mut tally = std::collections::BTreeMap::new();
                    for node in l.class(class).nodes.clone() {
                        *tally.entry(f.free(node)).or_insert(0u32) += 1;
                    }
                    let mut counts = f.free_counts(class).to_vec();
                    counts.sort();
                    assert_eq!(counts, tally.into_iter().collect::<Vec<_>>());
                }
            }
        }
        assert!(
            f.free_counts(0).len() > 5,
            "the run reached varied free vectors"
        );
    }
}
