//! Where a step function's free capacity last rose: the intervals of its few latest rises, each
//! stamped with the [`super::Timeline`]'s clock, so that a search repeated after a failed one
//! can look only at the times capacity came back ([`super::Timeline::earliest_before_since`]).
//! A function is a node's, or on a grouped class its group's ([`super::node_groups`]), whose
//! record then covers every rise of every node that has been a member.
//!
//! A rise is a hold given back (`[from, to)`), a running job's release (`[at, ∞)`) or a reset
//! (all time). Only the latest [`KEPT`] rises are kept: when a rise after the asked clock may
//! have been forgotten, the answer is all time, which is always safe (it only widens the
//! search).

use crate::sim::job::Time;

/// How many of a node's latest rises are remembered.
const KEPT: usize = 4;

/// A node's latest rises, oldest overwritten first.
#[derive(Clone, Copy, Debug)]
pub struct Rises {
    /// `(clock, from, to)`; a clock of 0 is an empty slot (the clock starts at 1).
    entries: [(u64, Time, Time); KEPT],
    next: u8,
}

impl Default for Rises {
    fn default() -> Self {
        Rises {
            entries: [(0, Time::MAX, Time::MIN); KEPT],
            next: 0,
        }
    }
}

impl Rises {
    /// Records a rise over `[from, to)` at `clock` (greater than every earlier one).
    #[inline]
    pub fn note(&mut self, clock: u64, from: Time, to: Time) {
        self.entries[self.next as usize] = (clock, from, to);
        self.next = ((self.next as usize + 1) % KEPT) as u8;
    }

    /// Takes in `other`'s rises as well (the two functions became one): the newest [`KEPT`] of
    /// both. An interval asked of the result covers what either would have answered: when
    /// either would have answered all time (all its kept rises after the clock), so does the
    /// result, whose kept rises are at least as recent.
    pub fn merge(&mut self, other: &Rises) {
        let mut all = [(0, Time::MAX, Time::MIN); 2 * KEPT];
        all[..KEPT].copy_from_slice(&self.entries);
        all[KEPT..].copy_from_slice(&other.entries);
        all.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
        *self = Rises::default();
        for &(clock, from, to) in all[..KEPT].iter().rev() {
            if clock > 0 {
                self.note(clock, from, to);
            }
        }
    }

    /// An interval `[lo, hi)` that covers every rise stamped after `since`; empty (`lo ≥ hi`)
    /// if there was none. When one may have been overwritten, all time.
    #[inline]
    pub fn since(&self, since: u64) -> (Time, Time) {
        let (mut lo, mut hi) = (Time::MAX, Time::MIN);
        // Newest first: an entry at or before `since` means every older one (kept or
        // overwritten) is too.
        for k in 1..=KEPT {
            let (clock, from, to) = self.entries[(self.next as usize + KEPT - k) % KEPT];
            if clock <= since {
                return (lo, hi);
            }
            lo = lo.min(from);
            hi = hi.max(to);
        }
        (Time::MIN, Time::MAX)
    }
}

/// No node (an end of a [`RiseOrder`]'s list).
const NONE: u32 = u32::MAX;

/// A class's nodes in the order they last rose, the latest first, so that the nodes that rose
/// after a clock are found without visiting the others: a doubly linked list over the class's
/// nodes (indexed from its first node), a node moved to the front when it rises. Walking it
/// stops at the first node whose last rise is not after the clock; each node is listed once,
/// so nothing is skipped on the way (a log of every rise would hold superseded entries, whose
/// test mispredicts: BENCHMARKS.md, "Node-level conservative").
#[derive(Clone, Debug, Default)]
pub struct RiseOrder {
    /// The class's first node.
    base: u32,
    /// The latest to rise (`NONE`: none yet).
    head: u32,
    /// Per node of the class: the node that rose before it / after it (`NONE`: none, or not
    /// listed).
    next: Vec<u32>,
    prev: Vec<u32>,
}

impl RiseOrder {
    /// Empties the list, for the class whose nodes are `nodes`. For the same class, only the
    /// listed nodes are unset — every other is unset already — which on a grouped class (its
    /// group ids listed, not its nodes) costs a fraction of unsetting every node (issue 36:
    /// a timeline restored at every new order, 5,000 nodes).
    pub fn clear(&mut self, nodes: std::ops::Range<u32>) {
        let len = nodes.len();
        if self.base == nodes.start && self.next.len() == len {
            let mut i = self.head;
            while i != NONE {
                let next = self.next[i as usize];
                self.next[i as usize] = NONE;
                self.prev[i as usize] = NONE;
                i = next;
            }
            self.head = NONE;
            return;
        }
        self.base = nodes.start;
        self.head = NONE;
        self.next.clear();
        self.next.resize(len, NONE);
        self.prev.clear();
        self.prev.resize(len, NONE);
    }

    /// Records that `node` (of the class) rose: it moves to the front.
    #[inline]
    pub fn note(&mut self, node: u32) {
        let i = node - self.base;
        if self.head == i {
            return;
        }
        let (prev, next) = (self.prev[i as usize], self.next[i as usize]);
        // Listed and not first: unlink it.
        if prev != NONE {
            self.next[prev as usize] = next;
            if next != NONE {
                self.prev[next as usize] = prev;
            }
        }
        self.prev[i as usize] = NONE;
        self.next[i as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = i;
        }
        self.head = i;
    }

    /// Takes `node` out of the list (nothing if it is not listed).
    pub fn unlink(&mut self, node: u32) {
        let i = node - self.base;
        let (prev, next) = (self.prev[i as usize], self.next[i as usize]);
        if prev != NONE {
            self.next[prev as usize] = next;
        } else if self.head == i {
            self.head = next;
        } else {
            return;
        }
        if next != NONE {
            self.prev[next as usize] = prev;
        }
        self.prev[i as usize] = NONE;
        self.next[i as usize] = NONE;
    }

    /// Lists `node` (not listed) right after `at` (listed): for one that last rose when `at`
    /// did.
    pub fn insert_after(&mut self, at: u32, node: u32) {
        let (a, i) = (at - self.base, node - self.base);
        let next = self.next[a as usize];
        self.next[a as usize] = i;
        self.prev[i as usize] = a;
        self.next[i as usize] = next;
        if next != NONE {
            self.prev[next as usize] = i;
        }
    }

    /// The nodes that rose after `since`, the latest first, each once; `latest` is every
    /// node's last rise (by node index).
    #[inline]
    pub fn since<'a>(&'a self, since: u64, latest: &'a [u64]) -> impl Iterator<Item = u32> + 'a {
        let mut i = self.head;
        std::iter::from_fn(move || {
            if i == NONE {
                return None;
            }
            let node = self.base + i;
            if latest[node as usize] <= since {
                return None;
            }
            i = self.next[i as usize];
            Some(node)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_the_rises_after_a_clock_or_all_time_when_one_was_forgotten() {
        let mut r = Rises::default();
        assert!(matches!(r.since(1), (lo, hi) if lo >= hi));
        r.note(3, 10, 20);
        r.note(5, 40, 50);
        assert_eq!(r.since(2), (10, 50));
        assert_eq!(r.since(3), (40, 50));
        assert!(matches!(r.since(5), (lo, hi) if lo >= hi));
        r.note(6, 0, Time::MAX);
        r.note(8, 30, 35);
        // Four kept (3, 5, 6, 8); a fifth overwrites the rise at clock 3.
        r.note(9, 60, 70);
        assert_eq!(r.since(5), (0, Time::MAX));
        assert_eq!(r.since(6), (30, 70));
        // The rise at 3 was overwritten: whether anything rose after 4 besides the kept ones
        // is unknown, so all time.
        assert_eq!(r.since(4), (Time::MIN, Time::MAX));
    }

    #[test]
    fn merged_rises_cover_what_either_would_answer() {
        let mut rng = <rand_chacha::ChaCha8Rng as rand_core::SeedableRng>::seed_from_u64(7);
        let mut next = || rand_core::RngCore::next_u64(&mut rng);
        for _ in 0..2000 {
            let (mut a, mut b) = (Rises::default(), Rises::default());
            let mut clock = 1;
            for _ in 0..next() % 12 {
                clock += 1 + next() % 3;
                let from = (next() % 100) as Time;
                let rises = if next() % 2 == 0 { &mut a } else { &mut b };
                rises.note(clock, from, from + 1 + (next() % 50) as Time);
            }
            let mut merged = a;
            merged.merge(&b);
            for since in 1..=clock + 1 {
                let (lo, hi) = merged.since(since);
                for (l, h) in [a.since(since), b.since(since)] {
                    if l < h {
                        assert!(
                            lo <= l && h <= hi,
                            "{since}: [{l}, {h}) not in [{lo}, {hi})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_rise_order_unlinks_and_inserts() {
        let mut latest = vec![0u64; 6];
        let mut order = RiseOrder::default();
        order.clear(0..6);
        for (clock, node) in (1..).zip([0u32, 1, 2, 3]) {
            latest[node as usize] = clock;
            order.note(node);
        }
        order.unlink(1);
        order.unlink(3);
        order.unlink(5);
        assert_eq!(order.since(0, &latest).collect::<Vec<_>>(), [2, 0]);
        latest[4] = latest[2];
        order.insert_after(2, 4);
        assert_eq!(order.since(0, &latest).collect::<Vec<_>>(), [2, 4, 0]);
        order.note(1);
        latest[1] = 9;
        assert_eq!(order.since(2, &latest).collect::<Vec<_>>(), [1, 2, 4]);
    }

    #[test]
    fn the_rise_order_lists_each_node_that_rose_after_a_clock_once() {
        // Nodes 5..8 of a class; `latest` is indexed by node.
        let mut latest = vec![0u64; 8];
        let mut order = RiseOrder::default();
        order.clear(5..8);
        assert_eq!(order.since(0, &latest).count(), 0);
        for (clock, node) in (1..).zip([5u32, 6, 5, 7, 5].into_iter().cycle().take(200)) {
            latest[node as usize] = clock;
            order.note(node);
        }
        // The last five rises: 5 at 196, 6 at 197, 5 at 198, 7 at 199, 5 at 200.
        assert_eq!(order.since(196, &latest).collect::<Vec<_>>(), [5, 7, 6]);
        assert_eq!(order.since(199, &latest).collect::<Vec<_>>(), [5]);
        assert_eq!(order.since(200, &latest).count(), 0);
    }

    /// Against the definition, on random rises of a class of 9 nodes: the nodes whose last
    /// rise is after the clock, latest first. Now and then the list is emptied (as at a
    /// reset: every node unlisted, as if it never rose).
    #[test]
    fn the_rise_order_matches_the_last_rises_sorted() {
        let mut latest = vec![0u64; 12];
        let mut order = RiseOrder::default();
        order.clear(3..12);
        let mut rng = <rand_chacha::ChaCha8Rng as rand_core::SeedableRng>::seed_from_u64(0x9e37);
        let mut cleared = 0;
        for clock in 1..2000u64 {
            let seed = rand_core::RngCore::next_u64(&mut rng);
            if seed % 53 == 0 {
                order.clear(3..12);
                assert!(order.next.iter().chain(&order.prev).all(|&i| i == NONE));
                latest.fill(0);
                cleared += 1;
            }
            let node = 3 + (seed % 9) as u32;
            latest[node as usize] = clock;
            order.note(node);
            let since = clock.saturating_sub(seed % 40);
            let mut want: Vec<u32> = (3..12).filter(|&n| latest[n as usize] > since).collect();
            want.sort_by_key(|&n| std::cmp::Reverse(latest[n as usize]));
            assert_eq!(order.since(since, &latest).collect::<Vec<_>>(), want);
        }
        assert!(cleared > 20, "{cleared} clears");
    }
}
