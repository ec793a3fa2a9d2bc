//! Per node class, its nodes' *distinct* free vectors, each with how many nodes have it, kept by
//! a scheduler beside the engine's [`FreeNodes`] and brought up to date only when asked.
//!
//! A class's nodes mostly share a few free vectors (idle, full, a few common remainders), so
//! "how many nodes of this class can take this amount" is a pass over those few entries instead
//! of over the nodes (node-level EASY's shadow, [`super::shadow`]). The tally is not kept by
//! the engine at every start and end: on a machine whose jobs leave every node a free vector of
//! its own (memory per core from a trace) each change would move a map entry and the tally
//! would never pay. Here a class is brought up to date from [`FreeNodes::changes_since`] — the
//! runs of nodes that changed since this tally last read it, each moving its count from one
//! free vector to another, so that a job on a row of like nodes moves the tally once, not once
//! per node — and counted afresh from its nodes when the engine's log no longer reaches back
//! that far; a class nobody asks about costs nothing.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::sim::mix_hash::MixHasher;
use crate::sim::resources::ResourceVec;
use crate::sim::topology::{FreeNodes, Layout, LogPosition};

/// One class's tally.
#[derive(Clone, Debug, Default)]
struct Tally {
    /// `entries` counts the class's nodes as of `seen` (none at first).
    seen: LogPosition,
    /// The distinct free vectors with their node counts (> 0), in no particular order.
    entries: Vec<(ResourceVec, u32)>,
    /// Where each free vector is in `entries`.
    at: HashMap<ResourceVec, u32, BuildHasherDefault<MixHasher>>,
    /// The two entries last looked up, forgotten when entries move: the nodes of one job,
    /// consecutive in the engine's log, mostly move between the same two free vectors.
    recent: [Option<(ResourceVec, u32)>; 2],
}

impl Tally {
    /// Where free vector `v` is in `entries`, if some counted node has it.
    #[inline]
    fn find(&mut self, v: ResourceVec) -> Option<usize> {
        if let Some((_, i)) = self.recent.iter().flatten().find(|r| r.0 == v) {
            return Some(*i as usize);
        }
        let i = *self.at.get(&v)?;
        self.recent = [Some((v, i)), self.recent[0]];
        Some(i as usize)
    }

    /// Counts `n` more nodes with free vector `v`.
    fn add(&mut self, v: ResourceVec, n: u32) {
        match self.find(v) {
            Some(i) => self.entries[i].1 += n,
            None => {
                self.at.insert(v, self.entries.len() as u32);
                self.entries.push((v, n));
            }
        }
    }

    /// Counts `n` nodes fewer with free vector `v` (at least `n` counted nodes have it).
    fn remove(&mut self, v: ResourceVec, n: u32) {
        let i = self.find(v).expect("a counted node has it");
        self.entries[i].1 -= n;
        if self.entries[i].1 == 0 {
            self.entries.swap_remove(i);
            self.at.remove(&v);
            if let Some(&(moved, _)) = self.entries.get(i) {
                self.at.insert(moved, i as u32);
            }
            self.recent = [None; 2];
        }
    }

    /// Forgets every node.
    fn clear(&mut self) {
        self.entries.clear();
        self.at.clear();
        self.recent = [None; 2];
    }
}

/// The tallies of the classes asked about.
#[derive(Clone, Debug, Default)]
pub struct FreeCounts {
    tallies: Vec<Tally>,
}

impl FreeCounts {
    /// The distinct free vectors of `class`'s nodes in `free` now, each with how many nodes
    /// have it (in no particular order; every count > 0).
    pub fn of(&mut self, layout: &Layout, free: &FreeNodes, class: u32) -> &[(ResourceVec, u32)] {
        if self.tallies.len() != layout.classes().len() {
            self.tallies = vec![Tally::default(); layout.classes().len()];
        }
        let tally = &mut self.tallies[class as usize];
        let (changed, next) = free.changes_since(class, tally.seen);
        match changed {
            Some(changes) => {
                // Each change moves its nodes' count; consecutive changes of the same move (a
                // job's nodes split into runs by a gap in their indices) move it at once.
                let mut run: Option<(ResourceVec, ResourceVec, u32)> = None;
                for change in changes {
                    match &mut run {
                        Some((from, to, n)) if *from == change.was && *to == change.now => {
                            *n += change.count
                        }
                        _ => {
                            let next = (change.was, change.now, change.count);
                            if let Some((from, to, n)) = run.replace(next) {
                                tally.remove(from, n);
                                tally.add(to, n);
                            }
                        }
                    }
                }
                if let Some((from, to, n)) = run {
                    tally.remove(from, n);
                    tally.add(to, n);
                }
            }
            None => {
                tally.clear();
                for node in layout.class(class).nodes.clone() {
                    tally.add(free.free(node), 1);
                }
            }
        }
        tally.seen = next;
        &tally.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::topology::NodeShape;
    // A shared cluster of small nodes (8 cores) and one big one (80): the engine's own tests'.
    use crate::sim::topology::free::tests::{layout, seeded};

    /// After random takes and gives, of a node or a row of nodes at once, read at random
    /// moments (often enough that the tally catches up from the engine's log, rarely enough
    /// that the log is sometimes dropped and the class counted afresh), the tally is a tally of
    /// every node's free vector.
    #[test]
    fn the_counts_are_a_tally_of_the_nodes() {
        let l = layout(70);
        let mut f = FreeNodes::new(&l);
        let mut counts = FreeCounts::default();
        let mut held: Vec<(Vec<u32>, ResourceVec)> = Vec::new();
        let row = |nodes: &[u32], per_node| NodeShape {
            count: nodes.len() as u32,
            per_node,
            last: None,
            whole: false,
        };
        let mut next = seeded(0x9E37_79B9_u64);
        let (mut caught_up, mut afresh) = (0, 0);
        for step in 0..20_000 {
            if held.is_empty() || next(3) > 0 {
                let amount = ResourceVec([1 + next(4), next(3) * 2, 0]);
                if next(3) == 0 {
                    // A row of small nodes at once: the log holds it as runs.
                    let first = next(60) as u32;
                    let nodes: Vec<u32> = (first..first + 2 + next(9) as u32).collect();
                    if f.take_shape(0, &row(&nodes, amount), &nodes).is_ok() {
                        held.push((nodes, amount));
                    }
                } else {
                    let node = next(71) as u32;
                    if f.take(node, amount).is_ok() {
                        held.push((vec![node], amount));
                    }
                }
            } else {
                let (nodes, amount) = held.swap_remove(next(held.len() as u64) as usize);
                if nodes.len() > 1 {
                    f.give_shape(0, &row(&nodes, amount), &nodes);
                } else {
                    f.give(nodes[0], amount);
                }
            }
            // Reads 1 step in 8 on average, with stretches of up to ~400 steps unread.
            let stretch = (step / 2_000) % 2 == 1;
            if next(if stretch { 400 } else { 8 }) == 0 || step == 19_999 {
                for class in 0..2u32 {
                    let before = counts.tallies.get(class as usize).map(|t| t.seen);
                    let reaches = before.is_some_and(|s| f.changes_since(class, s).0.is_some());
                    let mut got = counts.of(&l, &f, class).to_vec();
                    if class == 0 {
                        if reaches {
                            caught_up += 1;
                        } else {
                            afresh += 1;
                        }
                    }
                    got.sort();
                    let mut tally = std::collections::BTreeMap::new();
                    for node in l.class(class).nodes.clone() {
                        *tally.entry(f.free(node)).or_insert(0u32) += 1;
                    }
                    assert_eq!(got, tally.into_iter().collect::<Vec<_>>(), "step {step}");
                }
            }
        }
        assert!(caught_up > 1_000, "caught up {caught_up} times");
        assert!(afresh > 5, "counted afresh {afresh} times");
        assert!(
            counts.of(&l, &f, 0).len() > 5,
            "the run reached varied free vectors"
        );
        // Read from another FreeNodes, the class is counted afresh.
        let fresh = FreeNodes::new(&l);
        assert_eq!(
            counts.of(&l, &fresh, 0),
            [(l.class(0).capacity.per_node, 70)]
        );
    }
}
