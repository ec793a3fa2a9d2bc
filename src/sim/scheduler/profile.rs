//! An availability profile: free capacity as a step function of future time, used by
//! conservative backfilling to hold a reservation for every queued job (and by EASY, FCFS and
//! reservation placement when advance reservations exist).
//!
//! Stored as breakpoints `(t_i, free_i)`: `free_i` is free from `t_i` until the next breakpoint,
//! and the last value holds forever. Amounts are signed so that a transiently inconsistent
//! profile (a job that overran its request, a reservation left in the past between periodic
//! scheduler calls, an advance reservation granted over planned jobs) is representable; such
//! capacity simply never fits a job.
//!
//! The breakpoints live in a treap keyed by time (the structure of
//! [`crate::sim::reservation::SlidingWindowLoad`]) with lazy range additions and, per subtree,
//! the minimum and maximum of every resource component. Holding or giving back capacity over an
//! interval is O(log n) expected; the earliest fit descends to the first breakpoint that does not
//! fit, then to the first that fits again, so it costs O(log n) per stretch of too little
//! capacity it has to step over — where the vector it replaces (issue 10) shifted elements on
//! every insertion and scanned every breakpoint. Breakpoints whose value equals their
//! predecessor's are merged away, so the tree holds exactly the steps of the function and its
//! answers never depend on the order of the operations that built it.

use crate::sim::job::Time;
use crate::sim::resources::{KINDS, ResourceVec};

type Amount = [i64; KINDS];

const NIL: u32 = u32::MAX;

fn signed(v: ResourceVec) -> Amount {
    v.0.map(|x| x as i64)
}

#[inline]
fn fits(demand: &Amount, free: &Amount) -> bool {
    demand.iter().zip(free).all(|(d, f)| d <= f)
}

#[inline]
fn plus(a: &Amount, b: &Amount) -> Amount {
    std::array::from_fn(|k| a[k] + b[k])
}

#[derive(Clone, Debug)]
struct Node {
    time: Time,
    priority: u64,
    left: u32,
    right: u32,
    /// Free capacity from `time` to the next breakpoint; `min`/`max` over the subtree. All three
    /// already include this node's pending `lazy`; its children still owe it.
    free: Amount,
    min: Amount,
    max: Amount,
    lazy: Amount,
}

#[derive(Clone, Debug)]
pub struct Profile {
    nodes: Vec<Node>,
    /// Slots of `nodes` free for reuse.
    spare: Vec<u32>,
    root: u32,
    start: Time,
    /// Counter behind the (deterministic) treap priorities.
    created: u64,
}

impl Default for Profile {
    /// An empty profile: free nothing, from time 0, until [`Profile::reset`].
    fn default() -> Self {
        Profile {
            nodes: Vec::new(),
            spare: Vec::new(),
            root: NIL,
            start: 0,
            created: 0,
        }
    }
}

impl Profile {
    /// A profile that starts at `now` with `free` capacity.
    pub fn reset(&mut self, now: Time, free: ResourceVec) {
        self.nodes.clear();
        self.spare.clear();
        self.start = now;
        self.root = self.node(now, signed(free));
    }

    pub fn start(&self) -> Time {
        self.start
    }

    /// Number of breakpoints (steps of the function).
    pub fn len(&self) -> usize {
        self.nodes.len() - self.spare.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Free capacity at time `t` (t ≥ start).
    pub fn free_at(&self, t: Time) -> [i64; KINDS] {
        let mut n = self.root;
        let mut acc = [0; KINDS];
        let mut found = None;
        while n != NIL {
            let node = &self.nodes[n as usize];
            if node.time <= t {
                found = Some(plus(&node.free, &acc));
                acc = plus(&acc, &node.lazy);
                n = node.right;
            } else {
                acc = plus(&acc, &node.lazy);
                n = node.left;
            }
        }
        found.unwrap_or([0; KINDS])
    }

    /// Capacity `demand` becomes free from `t` on (a running job's predicted end).
    pub fn release_from(&mut self, t: Time, demand: ResourceVec) {
        self.add(t, None, signed(demand));
    }

    /// Holds `demand` over `[from, to)`.
    pub fn reserve(&mut self, from: Time, to: Time, demand: ResourceVec) {
        self.add(from, Some(to), signed(demand).map(|x| -x));
    }

    /// Gives back `demand` over `[from, to)`.
    pub fn unreserve(&mut self, from: Time, to: Time, demand: ResourceVec) {
        self.add(from, Some(to), signed(demand));
    }

    /// Moves the start of the profile to `now` (≥ start), forgetting the past: the value in
    /// effect at `now` becomes the first step. O(log n) plus the breakpoints dropped.
    pub fn advance(&mut self, now: Time) {
        if now <= self.start {
            return;
        }
        let (past, rest) = self.split(self.root, now);
        let rest = if self.leftmost_time(rest) == Some(now) {
            rest
        } else {
            let value = self.rightmost_value(past);
            let n = self.node(now, value);
            self.merge(n, rest)
        };
        self.release_subtree(past);
        self.root = rest;
        self.start = now;
    }

    /// The smallest free amount of each resource from the start on: all non-negative when the
    /// committed work and reservations fit the machine everywhere.
    pub fn min_free(&self) -> [i64; KINDS] {
        match self.root {
            NIL => [0; KINDS],
            root => self.nodes[root as usize].min,
        }
    }

    /// The earliest time ≥ `from` at which `demand` fits for `duration` seconds.
    /// `None` if it never does (it exceeds the capacity left at the end of the profile).
    pub fn earliest_fit(&self, from: Time, duration: Time, demand: ResourceVec) -> Option<Time> {
        let d = signed(demand);
        let mut candidate = from.max(self.start);
        loop {
            // The step in effect at the candidate, then the first step from there on that is
            // too small: the candidate holds if that step begins after the window.
            let step = self.step_at(candidate);
            let Some(blocked) = self.first_short(step, &d) else {
                return Some(candidate);
            };
            if blocked > candidate && blocked >= candidate + duration {
                return Some(candidate);
            }
            candidate = self.first_fitting_after(blocked, &d)?;
        }
    }

    /// Whether `demand` could start anywhere in `[from, before)` and fit until `before` or for
    /// `duration` seconds, whichever ends first. With a non-negative profile this is exactly
    /// whether a job holding `[before, before + duration)` could move earlier: the capacity it
    /// gives back covers the rest of any window that overlaps its own.
    pub fn fits_before(
        &self,
        from: Time,
        before: Time,
        duration: Time,
        demand: ResourceVec,
    ) -> bool {
        let d = signed(demand);
        let mut candidate = from.max(self.start);
        while candidate < before {
            let step = self.step_at(candidate);
            let blocked = match self.first_short(step, &d) {
                None => return true,
                Some(b) if b > candidate && b >= before.min(candidate + duration) => return true,
                Some(b) => b,
            };
            match self.first_fitting_after(blocked, &d) {
                Some(next) => candidate = next,
                None => return false,
            }
        }
        false
    }

    /// Adds `delta` over `[from, to)` (to the end when `to` is `None`), keeping the breakpoints
    /// minimal.
    fn add(&mut self, from: Time, to: Option<Time>, delta: Amount) {
        let from = from.max(self.start);
        if to.is_some_and(|to| to <= from) || delta == [0; KINDS] {
            return;
        }
        let (before, rest) = self.split(self.root, from);
        let (mut middle, mut after) = match to {
            Some(to) => self.split(rest, to),
            None => (rest, NIL),
        };
        // Breakpoints at both ends, carrying the value in effect there.
        let value_at_from = if self.leftmost_time(middle) == Some(from) {
            None
        } else {
            Some(self.rightmost_value(before))
        };
        if let Some(to) = to
            && self.leftmost_time(after) != Some(to)
        {
            let value = if middle == NIL {
                value_at_from.expect("a breakpoint precedes every time")
            } else {
                self.rightmost_value(middle)
            };
            let n = self.node(to, value);
            after = self.merge(n, after);
        }
        if let Some(value) = value_at_from {
            let n = self.node(from, value);
            middle = self.merge(n, middle);
        }
        self.add_lazy(middle, delta);
        // A step equal to the one before it is no step: merge it away (never the first).
        if to.is_some() && Some(self.rightmost_value(middle)) == self.leftmost_value(after) {
            after = self.pop_leftmost(after);
        }
        if before != NIL && Some(self.rightmost_value(before)) == self.leftmost_value(middle) {
            middle = self.pop_leftmost(middle);
        }
        let rest = self.merge(middle, after);
        self.root = self.merge(before, rest);
    }

    /// The time of the step in effect at `t` (the last breakpoint ≤ t).
    fn step_at(&self, t: Time) -> Time {
        let mut n = self.root;
        let mut found = self.start;
        while n != NIL {
            let node = &self.nodes[n as usize];
            if node.time <= t {
                found = node.time;
                n = node.right;
            } else {
                n = node.left;
            }
        }
        found
    }

    /// The first breakpoint at or after `from` whose step is too small for `demand`.
    fn first_short(&self, from: Time, demand: &Amount) -> Option<Time> {
        self.first_short_in(self.root, [0; KINDS], from, demand)
    }

    fn first_short_in(&self, n: u32, acc: Amount, from: Time, demand: &Amount) -> Option<Time> {
        if n == NIL {
            return None;
        }
        let node = &self.nodes[n as usize];
        if fits(demand, &plus(&node.min, &acc)) {
            return None; // every step of the subtree is large enough
        }
        let below = plus(&acc, &node.lazy);
        if node.time < from {
            return self.first_short_in(node.right, below, from, demand);
        }
        if let Some(t) = self.first_short_in(node.left, below, from, demand) {
            return Some(t);
        }
        if !fits(demand, &plus(&node.free, &acc)) {
            return Some(node.time);
        }
        self.first_short_in(node.right, below, from, demand)
    }

    /// The first breakpoint after `after` whose step is large enough for `demand`.
    fn first_fitting_after(&self, after: Time, demand: &Amount) -> Option<Time> {
        self.first_fitting_in(self.root, [0; KINDS], after, demand)
    }

    fn first_fitting_in(&self, n: u32, acc: Amount, after: Time, demand: &Amount) -> Option<Time> {
        if n == NIL {
            return None;
        }
        let node = &self.nodes[n as usize];
        let max = plus(&node.max, &acc);
        if !fits(demand, &max) {
            return None; // some resource is short everywhere in the subtree
        }
        let below = plus(&acc, &node.lazy);
        if node.time <= after {
            return self.first_fitting_in(node.right, below, after, demand);
        }
        if let Some(t) = self.first_fitting_in(node.left, below, after, demand) {
            return Some(t);
        }
        if fits(demand, &plus(&node.free, &acc)) {
            return Some(node.time);
        }
        self.first_fitting_in(node.right, below, after, demand)
    }

    fn node(&mut self, time: Time, free: Amount) -> u32 {
        self.created += 1;
        let node = Node {
            time,
            priority: mix(self.created),
            left: NIL,
            right: NIL,
            free,
            min: free,
            max: free,
            lazy: [0; KINDS],
        };
        match self.spare.pop() {
            Some(id) => {
                self.nodes[id as usize] = node;
                id
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    fn release_subtree(&mut self, t: u32) {
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            if t != NIL {
                stack.push(self.nodes[t as usize].left);
                stack.push(self.nodes[t as usize].right);
                self.spare.push(t);
            }
        }
    }

    fn leftmost_time(&self, mut t: u32) -> Option<Time> {
        if t == NIL {
            return None;
        }
        while self.nodes[t as usize].left != NIL {
            t = self.nodes[t as usize].left;
        }
        Some(self.nodes[t as usize].time)
    }

    /// Value of the first step of subtree `t` (`None` if empty).
    fn leftmost_value(&self, mut t: u32) -> Option<Amount> {
        if t == NIL {
            return None;
        }
        let mut acc = [0; KINDS];
        loop {
            let node = &self.nodes[t as usize];
            if node.left == NIL {
                return Some(plus(&node.free, &acc));
            }
            acc = plus(&acc, &node.lazy);
            t = node.left;
        }
    }

    /// Value of the last step of subtree `t` (zero if empty).
    fn rightmost_value(&self, mut t: u32) -> Amount {
        let mut acc = [0; KINDS];
        if t == NIL {
            return acc;
        }
        loop {
            let node = &self.nodes[t as usize];
            if node.right == NIL {
                return plus(&node.free, &acc);
            }
            acc = plus(&acc, &node.lazy);
            t = node.right;
        }
    }

    /// Removes the first breakpoint of subtree `t`; returns the new subtree.
    fn pop_leftmost(&mut self, t: u32) -> u32 {
        self.push_down(t);
        let left = self.nodes[t as usize].left;
        if left == NIL {
            let right = self.nodes[t as usize].right;
            self.spare.push(t);
            return right;
        }
        let l = self.pop_leftmost(left);
        self.nodes[t as usize].left = l;
        self.update(t);
        t
    }

    fn add_lazy(&mut self, t: u32, delta: Amount) {
        if t == NIL {
            return;
        }
        let n = &mut self.nodes[t as usize];
        for k in 0..KINDS {
            n.free[k] += delta[k];
            n.min[k] += delta[k];
            n.max[k] += delta[k];
            n.lazy[k] += delta[k];
        }
    }

    fn push_down(&mut self, t: u32) {
        let n = &mut self.nodes[t as usize];
        if n.lazy == [0; KINDS] {
            return;
        }
        let lazy = std::mem::take(&mut n.lazy);
        let (left, right) = (n.left, n.right);
        self.add_lazy(left, lazy);
        self.add_lazy(right, lazy);
    }

    fn update(&mut self, t: u32) {
        let (left, right) = (self.nodes[t as usize].left, self.nodes[t as usize].right);
        let mut min = self.nodes[t as usize].free;
        let mut max = min;
        for child in [left, right] {
            if child != NIL {
                let c = &self.nodes[child as usize];
                for k in 0..KINDS {
                    min[k] = min[k].min(c.min[k]);
                    max[k] = max[k].max(c.max[k]);
                }
            }
        }
        let n = &mut self.nodes[t as usize];
        n.min = min;
        n.max = max;
    }

    /// Splits `t` into the breakpoints before `time` and the others.
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

    /// Joins two treaps whose breakpoints are ordered (every time of `a` < every time of `b`).
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn u(n: u64) -> ResourceVec {
        ResourceVec::units(n)
    }

    #[test]
    fn earliest_fit_waits_for_releases() {
        let mut p = Profile::default();
        p.reset(0, u(2));
        p.release_from(10, u(6)); // 8 free from 10
        p.release_from(20, u(2)); // 10 free from 20
        assert_eq!(p.earliest_fit(0, 5, u(2)), Some(0));
        assert_eq!(p.earliest_fit(0, 5, u(3)), Some(10));
        assert_eq!(p.earliest_fit(0, 5, u(10)), Some(20));
        assert_eq!(p.earliest_fit(0, 5, u(11)), None);
        assert_eq!(p.earliest_fit(12, 5, u(8)), Some(12));
    }

    #[test]
    fn a_reservation_blocks_only_its_interval() {
        let mut p = Profile::default();
        p.reset(0, u(10));
        p.reserve(5, 15, u(8));
        assert_eq!(p.free_at(4), [10, 0, 0]);
        assert_eq!(p.free_at(5), [2, 0, 0]);
        assert_eq!(p.free_at(15), [10, 0, 0]);
        // A 3-wide job of 5 s fits before the reservation only if it ends by 5.
        assert_eq!(p.earliest_fit(0, 5, u(3)), Some(0));
        assert_eq!(p.earliest_fit(0, 6, u(3)), Some(15));
        assert_eq!(p.earliest_fit(1, 5, u(3)), Some(15));
        assert!(p.fits_before(1, 15, 5, u(3)) == false);
        assert!(p.fits_before(0, 15, 5, u(3)));
        p.unreserve(5, 15, u(8));
        assert_eq!(p.earliest_fit(1, 5, u(3)), Some(1));
        assert_eq!(
            p.len(),
            1,
            "giving back a reservation leaves no step behind"
        );
    }

    /// The profile as a plain sorted vector of breakpoints: the straightforward implementation
    /// the treap replaced, kept as the reference the property test compares against.
    #[derive(Clone, Debug, Default)]
    struct Reference {
        points: Vec<(Time, Amount)>,
    }

    impl Reference {
        fn reset(&mut self, now: Time, free: ResourceVec) {
            self.points = vec![(now, signed(free))];
        }

        fn segment_of(&self, t: Time) -> usize {
            self.points.partition_point(|p| p.0 <= t).saturating_sub(1)
        }

        fn free_at(&self, t: Time) -> Amount {
            self.points[self.segment_of(t)].1
        }

        fn split_at(&mut self, t: Time) -> usize {
            let i = self.points.partition_point(|p| p.0 < t);
            if i < self.points.len() && self.points[i].0 == t {
                return i;
            }
            let value = self.points[i - 1].1;
            self.points.insert(i, (t, value));
            i
        }

        fn add(&mut self, from: Time, to: Option<Time>, delta: Amount) {
            let from = from.max(self.points[0].0);
            if to.is_some_and(|to| to <= from) {
                return;
            }
            let first = self.split_at(from);
            let last = match to {
                Some(to) => self.split_at(to),
                None => self.points.len(),
            };
            for point in &mut self.points[first..last] {
                point.1 = plus(&point.1, &delta);
            }
        }

        fn advance(&mut self, now: Time) {
            if now > self.points[0].0 {
                let i = self.split_at(now);
                self.points.drain(..i);
            }
        }

        fn earliest_fit(&self, from: Time, duration: Time, demand: ResourceVec) -> Option<Time> {
            let d = signed(demand);
            let from = from.max(self.points[0].0);
            let mut candidate = from;
            let mut i = self.segment_of(from);
            while i < self.points.len() {
                let (t, free) = self.points[i];
                if t >= candidate + duration && t > candidate {
                    return Some(candidate);
                }
                if !fits(&d, &free) {
                    match self.points.get(i + 1) {
                        Some(&(next, _)) => candidate = next,
                        None => return None,
                    }
                }
                i += 1;
            }
            Some(candidate)
        }

        /// Number of steps once equal neighbours are merged.
        fn steps(&self) -> usize {
            1 + self.points.windows(2).filter(|w| w[0].1 != w[1].1).count()
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Release(Time, u64),
        Reserve(Time, Time, u64),
        Unreserve(Time, Time, u64),
        Advance(Time),
    }

    fn arb_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0i64..120, 1u64..6).prop_map(|(t, n)| Op::Release(t, n)),
            (0i64..120, 1i64..40, 1u64..6).prop_map(|(t, d, n)| Op::Reserve(t, t + d, n)),
            (0i64..120, 1i64..40, 1u64..6).prop_map(|(t, d, n)| Op::Unreserve(t, t + d, n)),
            (0i64..60).prop_map(Op::Advance),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        /// Same step function, same earliest fits, and exactly its steps as breakpoints, after
        /// any sequence of operations (negative capacity included).
        #[test]
        fn matches_the_vector_profile(
            free in 0u64..8,
            ops in prop::collection::vec(arb_op(), 0..40),
            queries in prop::collection::vec((0i64..150, 0i64..50, 0u64..12), 1..20),
        ) {
            let mut p = Profile::default();
            let mut r = Reference::default();
            p.reset(0, u(free));
            r.reset(0, u(free));
            for op in ops {
                match op {
                    Op::Release(t, n) => {
                        p.release_from(t, u(n));
                        r.add(t, None, signed(u(n)));
                    }
                    Op::Reserve(a, b, n) => {
                        p.reserve(a, b, u(n));
                        r.add(a, Some(b), signed(u(n)).map(|x| -x));
                    }
                    Op::Unreserve(a, b, n) => {
                        p.unreserve(a, b, u(n));
                        r.add(a, Some(b), signed(u(n)));
                    }
                    Op::Advance(t) => {
                        let t = t.max(p.start());
                        p.advance(t);
                        r.advance(t);
                    }
                }
                prop_assert_eq!(p.start(), r.points[0].0);
                prop_assert_eq!(p.len(), r.steps());
                let min = r.points.iter().fold([i64::MAX; KINDS], |m, p| std::array::from_fn(|k| m[k].min(p.1[k])));
                prop_assert_eq!(p.min_free(), min);
            }
            for (t, d, n) in queries {
                prop_assert_eq!(p.free_at(t.max(p.start())), r.free_at(t.max(p.start())));
                prop_assert_eq!(p.earliest_fit(t, d, u(n)), r.earliest_fit(t, d, u(n)));
                // fits_before against a brute force over every start in [from, before).
                let before = t + d;
                let brute = (t.max(p.start())..before).any(|c| {
                    (c..before.min(c + d.max(1))).all(|x| fits(&signed(u(n)), &r.free_at(x)))
                });
                prop_assert_eq!(p.fits_before(t, before, d, u(n)), brute, "from {} before {} d {} n {}", t, before, d, n);
            }
        }
    }
}
