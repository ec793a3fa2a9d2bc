//! Sliding-window accounting for reservation throttles: "in any window of `W` seconds, the
//! weights of the items that *start* in it add up to at most a cap" — reserved node-seconds for
//! the node-seconds cap, 1 per reservation for the per-owner count (docs/reservations.md).
//!
//! Every query and insertion is O(log n) expected, whatever the order of insertion. The window
//! loads change only at item starts, and any window is dominated by the one that *ends* at the
//! last item it contains, so it suffices to keep, for every item start `p`, the load `T(p)` of
//! the window `(p − W, p]`. A treap keyed by start time holds `T` with lazy range additions and
//! subtree maxima and weight sums: a new item at `s` adds its weight to `T(p)` for every
//! `p ∈ [s, s + W)` and gets `T(s) = Σ weights in (s − W, s]`.

use crate::sim::job::Time;

const NIL: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node {
    time: Time,
    priority: u64,
    left: u32,
    right: u32,
    /// The item's own weight, and the sum over its subtree.
    weight: u64,
    sum: u64,
    /// Load of the window ending at `time`, and the maximum over the subtree (both already
    /// include this node's pending `lazy`; children still owe it).
    load: u64,
    max_load: u64,
    lazy: u64,
}

/// Sliding-window load of weighted item starts (see the module documentation).
#[derive(Clone, Debug)]
pub struct SlidingWindowLoad {
    window: Time,
    nodes: Vec<Node>,
    root: u32,
}

impl SlidingWindowLoad {
    /// Windows of `window` seconds (> 0).
    pub fn new(window: Time) -> Self {
        assert!(window > 0, "window must be positive");
        SlidingWindowLoad {
            window,
            nodes: Vec::new(),
            root: NIL,
        }
    }

    pub fn window(&self) -> Time {
        self.window
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The heaviest load of any window that contains `start`: an item of weight `a` starting at
    /// `start` keeps every window within `cap` exactly when `peak(start) + a ≤ cap`.
    pub fn peak(&mut self, start: Time) -> u64 {
        let w = self.window;
        let (before, rest) = self.split(self.root, start - w + 1);
        let (lead, rest) = self.split(rest, start);
        let (follow, after) = self.split(rest, start + w);
        let lead_sum = self.sum(lead);
        // T(p) of the items at or after `start` within a window of it, and the load of
        // the window ending at `start` itself (the items in (start − W, start]).
        let at_start = lead_sum + self.sum_at_most(follow, start);
        let peak = self.max_load(follow).max(at_start);
        let rest = self.merge(follow, after);
        let rest = self.merge(lead, rest);
        self.root = self.merge(before, rest);
        peak
    }

    /// Records an item of weight `weight` starting at `start`.
    pub fn add(&mut self, start: Time, weight: u64) {
        let w = self.window;
        let (before, rest) = self.split(self.root, start - w + 1);
        let (lead, rest) = self.split(rest, start);
        let (same, rest) = self.split(rest, start + 1);
        let (tail, after) = self.split(rest, start + w);
        let load = self.sum(lead) + self.sum(same) + weight;
        self.add_lazy(same, weight);
        self.add_lazy(tail, weight);
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            time: start,
            priority: mix(u64::from(id) ^ (start as u64).rotate_left(32)),
            left: NIL,
            right: NIL,
            weight,
            sum: weight,
            load,
            max_load: load,
            lazy: 0,
        });
        let same = self.merge(same, id);
        let rest = self.merge(tail, after);
        let rest = self.merge(same, rest);
        let rest = self.merge(lead, rest);
        self.root = self.merge(before, rest);
    }

    fn sum(&self, t: u32) -> u64 {
        if t == NIL {
            0
        } else {
            self.nodes[t as usize].sum
        }
    }

    fn max_load(&self, t: u32) -> u64 {
        if t == NIL {
            0
        } else {
            self.nodes[t as usize].max_load
        }
    }

    /// Σ weights of the items of subtree `t` starting at or before `time`.
    fn sum_at_most(&self, mut t: u32, time: Time) -> u64 {
        let mut total = 0;
        while t != NIL {
            let n = &self.nodes[t as usize];
            if n.time <= time {
                total += self.sum(n.left) + n.weight;
                t = n.right;
            } else {
                t = n.left;
            }
        }
        total
    }

    fn add_lazy(&mut self, t: u32, amount: u64) {
        if t != NIL && amount > 0 {
            let n = &mut self.nodes[t as usize];
            n.load += amount;
            n.max_load += amount;
            n.lazy += amount;
        }
    }

    fn push_down(&mut self, t: u32) {
        let (lazy, left, right) = {
            let n = &mut self.nodes[t as usize];
            let lazy = std::mem::take(&mut n.lazy);
            (lazy, n.left, n.right)
        };
        if lazy > 0 {
            self.add_lazy(left, lazy);
            self.add_lazy(right, lazy);
        }
    }

    fn update(&mut self, t: u32) {
        let (left, right) = (self.nodes[t as usize].left, self.nodes[t as usize].right);
        let sum = self.sum(left) + self.sum(right);
        let max = self.max_load(left).max(self.max_load(right));
        let n = &mut self.nodes[t as usize];
        n.sum = sum + n.weight;
        n.max_load = max.max(n.load);
    }

    /// Splits `t` into the items starting before `time` and the others.
    fn split(&mut self, t: u32, time: Time) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        self.push_down(t);
        if self.nodes[t as usize].time < time {
            let (l, r) = self.split(self.nodes[t as usize].right, time);
            self.nodes[t as usize].right = l;
            self.update(t);
            (t, r)
        } else {
            let (l, r) = self.split(self.nodes[t as usize].left, time);
            self.nodes[t as usize].left = r;
            self.update(t);
            (l, t)
        }
    }

    /// Joins two treaps whose items are all ordered (every start of `a` ≤ every start of `b`).
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].priority > self.nodes[b as usize].priority {
            self.push_down(a);
            let r = self.merge(self.nodes[a as usize].right, b);
            self.nodes[a as usize].right = r;
            self.update(a);
            a
        } else {
            self.push_down(b);
            let l = self.merge(a, self.nodes[b as usize].left);
            self.nodes[b as usize].left = l;
            self.update(b);
            b
        }
    }
}

/// SplitMix64 finaliser: deterministic, well-spread treap priorities.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The heaviest load of any window of `window` seconds over `items` (start, weight), by brute
/// force: the reference the tests and property tests compare against.
pub fn brute_force_peak(items: &[(Time, u64)], window: Time) -> u64 {
    items
        .iter()
        .map(|&(end, _)| {
            items
                .iter()
                .filter(|&&(s, _)| s > end - window && s <= end)
                .map(|&(_, w)| w)
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_window_holds_items_starting_within_w_seconds() {
        let mut load = SlidingWindowLoad::new(10);
        load.add(0, 5);
        assert_eq!(load.peak(9), 5); // window (0, 9] ∋ 0? (−1, 9] does
        assert_eq!(load.peak(10), 0); // no window of 10 s holds both 0 and 10
        load.add(10, 7);
        assert_eq!(load.peak(5), 7); // (0 .. 5) windows: [5,15) holds 10 → 7; [−4,6) holds 0 → 5
        load.add(5, 1);
        assert_eq!(load.peak(5), 8);
        assert_eq!(brute_force_peak(&[(0, 5), (10, 7), (5, 1)], 10), 8);
    }

    proptest! {
        #[test]
        fn peak_matches_brute_force(
            items in prop::collection::vec((0i64..200, 1u64..20), 1..60),
            window in 1i64..50,
            probe in 0i64..250,
        ) {
            let mut load = SlidingWindowLoad::new(window);
            let mut seen: Vec<(Time, u64)> = Vec::new();
            for &(s, w) in &items {
                // peak(s) + w is the heaviest window after adding the item, among those
                // containing s; windows not containing s are unchanged.
                let mut with = seen.clone();
                with.push((s, w));
                let containing = with
                    .iter()
                    .map(|&(end, _)| end)
                    .chain([s + window - 1])
                    .filter(|&end| end >= s && end < s + window)
                    .map(|end| with.iter().filter(|&&(t, _)| t > end - window && t <= end).map(|&(_, x)| x).sum::<u64>())
                    .max()
                    .unwrap();
                prop_assert_eq!(load.peak(s) + w, containing);
                load.add(s, w);
                seen.push((s, w));
            }
            let brute_probe = seen
                .iter()
                .map(|&(end, _)| end)
                .chain([probe + window - 1, probe])
                .filter(|&end| end >= probe && end < probe + window)
                .map(|end| seen.iter().filter(|&&(t, _)| t > end - window && t <= end).map(|&(_, x)| x).sum::<u64>())
                .max()
                .unwrap();
            prop_assert_eq!(load.peak(probe), brute_probe);
        }
    }
}
