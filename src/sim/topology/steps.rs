//! A step function of time: what is free from each breakpoint until the next, the last value
//! holding forever. The building block of [`super::timeline::Timeline`]: one per node of a
//! shared class (a resource vector), one per whole-node class (a count of nodes).
//!
//! Values are signed so that a transiently over-committed future (a job allowed to overrun, a
//! reservation kept while the queue is re-planned) is representable; such capacity never fits.

use crate::sim::job::Time;
use crate::sim::mix_hash::MixHasher;
use crate::sim::resources::{KINDS, ResourceVec};

/// A value a [`Steps`] holds: a count or a resource vector, compared component-wise.
pub trait Amount: Copy + PartialEq + std::fmt::Debug {
    const ZERO: Self;
    fn plus(self, other: Self) -> Self;
    fn minus(self, other: Self) -> Self;
    /// Every component at least `other`'s.
    fn covers(&self, other: &Self) -> bool;
    /// Component-wise minimum.
    fn meet(self, other: Self) -> Self;
}

impl Amount for i64 {
    const ZERO: Self = 0;
    #[inline]
    fn plus(self, other: Self) -> Self {
        self + other
    }
    #[inline]
    fn minus(self, other: Self) -> Self {
        self - other
    }
    #[inline]
    fn covers(&self, other: &Self) -> bool {
        self >= other
    }
    #[inline]
    fn meet(self, other: Self) -> Self {
        self.min(other)
    }
}

/// A signed resource vector (cores, memory KB, GPUs).
pub type Vector = [i64; KINDS];

/// The signed form of a resource vector.
#[inline]
pub fn vector(v: ResourceVec) -> Vector {
    v.0.map(|x| x as i64)
}

impl Amount for Vector {
    const ZERO: Self = [0; KINDS];
    #[inline]
    fn plus(self, o: Self) -> Self {
        [self[0] + o[0], self[1] + o[1], self[2] + o[2]]
    }
    #[inline]
    fn minus(self, o: Self) -> Self {
        [self[0] - o[0], self[1] - o[1], self[2] - o[2]]
    }
    #[inline]
    fn covers(&self, o: &Self) -> bool {
        // Non-short-circuit: one branch on the outcome instead of up to three (the step scans
        // test this at every breakpoint, and which component fails is data-dependent).
        (self[0] >= o[0]) & (self[1] >= o[1]) & (self[2] >= o[2])
    }
    #[inline]
    fn meet(self, o: Self) -> Self {
        [self[0].min(o[0]), self[1].min(o[1]), self[2].min(o[2])]
    }
}

/// Breakpoints `(t_i, v_i)` sorted by time; `v_i` holds on `[t_i, t_{i+1})`.
#[derive(Debug, PartialEq)]
pub struct Steps<V> {
    points: Vec<(Time, V)>,
}

/// By hand for `clone_from`, which copies into the allocation already there (a timeline
/// restored from another copies its functions this way: [`super::Timeline::restore_from`]).
impl<V: Clone> Clone for Steps<V> {
    fn clone(&self) -> Self {
        Steps {
            points: self.points.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.points.clone_from(&source.points);
    }
}

impl<V: Amount> Default for Steps<V> {
    fn default() -> Self {
        Steps {
            points: vec![(0, V::ZERO)],
        }
    }
}

impl<V: Amount> Steps<V> {
    /// No breakpoint, and no allocation: a placeholder for a function not in use, set
    /// ([`Steps::reset`], `clone_from`) before it is read (issue 36: at 50,000 nodes, one
    /// allocation per id of every timeline cost more than the grouped functions in use).
    pub fn unset() -> Self {
        Steps { points: Vec::new() }
    }

    /// `value` from `start` on.
    pub fn reset(&mut self, start: Time, value: V) {
        self.points.clear();
        self.points.push((start, value));
    }

    pub fn start(&self) -> Time {
        self.points[0].0
    }

    /// Breakpoints after the start.
    pub fn changes(&self) -> usize {
        self.points.len() - 1
    }

    #[inline]
    fn segment_of(&self, t: Time) -> usize {
        // Most searches start in the first segment (at `now`): answer that without the binary
        // search, whose branches mispredict on short step functions.
        if self.points.get(1).is_none_or(|p| p.0 > t) {
            return 0;
        }
        self.points.partition_point(|p| p.0 <= t).saturating_sub(1)
    }

    /// The value at `t` (the start value before the start).
    #[inline]
    pub fn at(&self, t: Time) -> V {
        self.points[self.segment_of(t)].1
    }

    /// The first breakpoint strictly after `t`.
    pub fn next_change(&self, t: Time) -> Option<Time> {
        let i = self.points.partition_point(|p| p.0 <= t);
        self.points.get(i).map(|p| p.0)
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

    /// Adds `delta` over `[from, to)` (`to = None`: forever); `from` is clamped to the start.
    pub fn add(&mut self, from: Time, to: Option<Time>, delta: V) {
        let from = from.max(self.start());
        if to.is_some_and(|to| to <= from) {
            return;
        }
        let first = self.split_at(from);
        let last = match to {
            Some(to) => self.split_at(to),
            None => self.points.len(),
        };
        for p in &mut self.points[first..last] {
            p.1 = p.1.plus(delta);
        }
        // Keep no two equal neighbours (a hold given back leaves none behind): only the two
        // boundaries can have become equal to their neighbour.
        if last < self.points.len() && self.points[last].1 == self.points[last - 1].1 {
            self.points.remove(last);
        }
        if first > 0 && self.points[first].1 == self.points[first - 1].1 {
            self.points.remove(first);
        }
    }

    /// The component-wise minimum over `[from, to)` (`from` ≥ start, `to` > `from`).
    pub fn min_over(&self, from: Time, to: Time) -> V {
        let mut i = self.segment_of(from);
        let mut m = self.points[i].1;
        i += 1;
        while i < self.points.len() && self.points[i].0 < to {
            m = m.meet(self.points[i].1);
            i += 1;
        }
        m
    }

    /// [`Steps::min_over`] if it covers `floor`, else `None` — found at the first segment
    /// that does not (the running minimum only decreases), so that a node which cannot take a
    /// request is dismissed without reading the rest of the window.
    #[inline]
    pub fn min_over_covering(&self, from: Time, to: Time, floor: &V) -> Option<V> {
        let mut i = self.segment_of(from);
        let mut m = self.points[i].1;
        loop {
            if !m.covers(floor) {
                return None;
            }
            i += 1;
            match self.points.get(i) {
                Some(&(t, v)) if t < to => m = m.meet(v),
                _ => return Some(m),
            }
        }
    }

    /// Calls `f(a, b, v)` for each piece `[a, b)` (`b = None`: forever) of `[from, to)` on which
    /// the function is `v`, in time order (`from` ≥ start).
    pub fn for_each_segment(
        &self,
        (from, to): (Time, Option<Time>),
        mut f: impl FnMut(Time, Option<Time>, V),
    ) {
        let to_end = to.unwrap_or(Time::MAX);
        if from >= to_end {
            return;
        }
        let mut i = self.segment_of(from);
        let mut a = from;
        loop {
            let next = self.points.get(i + 1).map(|p| p.0);
            match next {
                Some(n) if n < to_end => {
                    f(a, Some(n), self.points[i].1);
                    a = n;
                    i += 1;
                }
                _ => {
                    f(a, to, self.points[i].1);
                    return;
                }
            }
        }
    }

    /// Whether `demand` is free over `[from, from + duration)`.
    #[inline]
    pub fn fits(&self, from: Time, duration: Time, demand: &V) -> bool {
        self.min_over(from, from + duration).covers(demand)
    }

    /// The earliest `t ≥ from` with `demand` free over `[t, t + duration)`; `None` if never.
    pub fn earliest_fit(&self, from: Time, duration: Time, demand: &V) -> Option<Time> {
        self.earliest_fit_within(from, Time::MAX, duration, Time::MAX, demand)
    }

    /// The earliest `t` in `[from, before)` with `demand` free over `[t, min(t + duration,
    /// clip))`; `None` if there is none. `clip` ≥ `before` (a window never ends before `t`).
    #[inline]
    pub fn earliest_fit_within(
        &self,
        from: Time,
        before: Time,
        duration: Time,
        clip: Time,
        demand: &V,
    ) -> Option<Time> {
        let from = from.max(self.start());
        let mut candidate = from;
        if candidate >= before {
            return None;
        }
        // Where the window from `candidate` ends: recomputed only when the candidate moves.
        let mut end = candidate.saturating_add(duration).min(clip);
        let points = &self.points[self.segment_of(from)..];
        for (i, &(t, free)) in points.iter().enumerate() {
            if t >= end && t > candidate {
                return Some(candidate);
            }
            if !free.covers(demand) {
                candidate = points.get(i + 1)?.0;
                if candidate >= before {
                    return None;
                }
                end = candidate.saturating_add(duration).min(clip);
            }
        }
        Some(candidate)
    }

    /// A hash of the function from `now` on: its value at `now` and every later breakpoint.
    /// Functions equal from `now` on hash alike whatever their pasts, and the hash holds until
    /// the next breakpoint after `now` ([`Steps::next_change`]).
    pub fn future_hash(&self, now: Time) -> u64
    where
        V: std::hash::Hash,
    {
        use std::hash::{Hash, Hasher};
        let mut h = MixHasher::default();
        let future = &self.points[self.segment_of(now)..];
        future[0].1.hash(&mut h);
        future[1..].hash(&mut h);
        h.finish()
    }

    /// Whether `self` and `other` are equal from `now` on (breakpoints are kept without equal
    /// neighbours, so equal functions have equal breakpoints).
    pub fn same_future(&self, other: &Self, now: Time) -> bool {
        let a = &self.points[self.segment_of(now)..];
        let b = &other.points[other.segment_of(now)..];
        a.len() == b.len() && a[0].1 == b[0].1 && a[1..] == b[1..]
    }

    /// Moves the start to `now` (≥ start), forgetting the past. Cheap when nothing changes
    /// before `now` (the usual case): callers may advance lazily, just before a change.
    #[inline]
    pub fn advance(&mut self, now: Time) {
        if self.points.len() > 1 && self.points[1].0 <= now {
            let i = self.segment_of(now);
            self.points.drain(..i);
        }
        self.points[0].0 = now.max(self.points[0].0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_over_intervals() {
        let mut s: Steps<i64> = Steps::default();
        s.reset(0, 2);
        s.add(10, None, 6); // 8 from 10
        s.add(5, Some(15), -1); // 1 on [5,10), 7 on [10,15)
        assert_eq!((s.at(4), s.at(5), s.at(10), s.at(15)), (2, 1, 7, 8));
        assert_eq!(s.min_over(0, 5), 2);
        assert_eq!(s.min_over(0, 6), 1);
        assert_eq!(s.min_over(10, 100), 7);
        assert_eq!(s.earliest_fit(0, 5, &2), Some(0));
        assert_eq!(s.earliest_fit(0, 6, &2), Some(10));
        assert_eq!(s.earliest_fit(0, 5, &8), Some(15));
        assert_eq!(s.earliest_fit(0, 5, &9), None);
        assert_eq!(s.next_change(5), Some(10));
        assert_eq!(s.next_change(15), None);
        // Giving a change back leaves no breakpoint behind.
        s.add(20, Some(30), -3);
        assert_eq!(s.changes(), 5);
        s.add(20, Some(30), 3);
        assert_eq!(s.changes(), 3);
        assert_eq!(s.earliest_fit_within(0, 10, 6, Time::MAX, &2), None);
        assert_eq!(s.earliest_fit_within(0, 11, 6, Time::MAX, &2), Some(10));
        // The pieces of a window, each with its value; an open window's last is open too.
        let mut pieces = Vec::new();
        s.for_each_segment((3, Some(15)), |a, b, v| pieces.push((a, b, v)));
        assert_eq!(
            pieces,
            [(3, Some(5), 2), (5, Some(10), 1), (10, Some(15), 7)]
        );
        pieces.clear();
        s.for_each_segment((12, None), |a, b, v| pieces.push((a, b, v)));
        assert_eq!(pieces, [(12, Some(15), 7), (15, None, 8)]);
        pieces.clear();
        s.for_each_segment((16, Some(16)), |a, b, v| pieces.push((a, b, v)));
        assert!(pieces.is_empty());
        // Clipped at 5: [0, 5) holds 2 free, although [0, 6) does not.
        assert_eq!(s.earliest_fit_within(0, 5, 6, 5, &2), Some(0));
        assert_eq!(s.earliest_fit_within(1, 6, 6, 6, &2), None);
        s.advance(12);
        assert_eq!((s.start(), s.at(12), s.at(20), s.changes()), (12, 7, 8, 1));
    }

    /// Against `min_over` on random step functions and windows: the same minimum when it
    /// covers the floor, `None` exactly when it does not.
    #[test]
    fn the_covering_minimum_is_the_minimum_or_none() {
        // The simulator's seeded stream (crate::sim::random), not a generator of the test's own.
        let mut rng = <rand_chacha::ChaCha8Rng as rand_core::SeedableRng>::seed_from_u64(0x2545);
        let mut next = |n: u64| rand_core::RngCore::next_u64(&mut rng) % n;
        for _ in 0..500 {
            let mut s: Steps<Vector> = Steps::default();
            s.reset(0, [8, 16, 1]);
            for _ in 0..next(8) {
                let from = next(100) as Time;
                let to = from + 1 + next(50) as Time;
                s.add(from, Some(to), [-(next(5) as i64), -(next(9) as i64), 0]);
            }
            let from = next(120) as Time;
            let to = from + 1 + next(80) as Time;
            let floor = [next(6) as i64, next(12) as i64, next(2) as i64];
            let m = s.min_over(from, to);
            let want = m.covers(&floor).then_some(m);
            assert_eq!(s.min_over_covering(from, to, &floor), want);
        }
    }

    #[test]
    fn vectors_fit_component_wise() {
        let mut s: Steps<Vector> = Steps::default();
        s.reset(0, [8, 16, 0]);
        s.add(0, Some(10), [-1, -16, 0]);
        assert!(s.fits(0, 5, &[7, 0, 0]));
        assert!(!s.fits(0, 5, &[1, 1, 0]));
        assert_eq!(s.earliest_fit(0, 5, &[1, 1, 0]), Some(10));
        assert_eq!(s.earliest_fit(0, 5, &[1, 0, 1]), None);
    }
}
