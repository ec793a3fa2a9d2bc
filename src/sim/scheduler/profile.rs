//! An availability profile: free capacity as a step function of future time, used by
//! conservative backfilling to hold a reservation for every queued job.
//!
//! Stored as breakpoints `(t_i, free_i)` sorted by time: `free_i` is free from `t_i` until
//! `t_{i+1}`, and the last value holds forever. Amounts are signed so that a transiently
//! inconsistent profile (a job that overran its request, a reservation left in the past between
//! periodic scheduler calls) is representable; such capacity simply never fits a job.

use crate::sim::job::Time;
use crate::sim::resources::{KINDS, ResourceVec};

type Amount = [i64; KINDS];

fn signed(v: ResourceVec) -> Amount {
    v.0.map(|x| x as i64)
}

fn fits(demand: &Amount, free: &Amount) -> bool {
    demand.iter().zip(free).all(|(d, f)| d <= f)
}

#[derive(Clone, Debug, Default)]
pub struct Profile {
    points: Vec<(Time, Amount)>,
}

impl Profile {
    /// A profile that starts at `now` with `free` capacity.
    pub fn reset(&mut self, now: Time, free: ResourceVec) {
        self.points.clear();
        self.points.push((now, signed(free)));
    }

    pub fn start(&self) -> Time {
        self.points[0].0
    }

    /// Free capacity at time `t` (t ≥ start).
    pub fn free_at(&self, t: Time) -> [i64; KINDS] {
        let i = self.segment_of(t);
        self.points[i].1
    }

    /// Index of the segment containing `t` (t ≥ start).
    fn segment_of(&self, t: Time) -> usize {
        self.points.partition_point(|p| p.0 <= t).saturating_sub(1)
    }

    /// Ensures a breakpoint exists at `t` and returns its index.
    fn split_at(&mut self, t: Time) -> usize {
        let i = self.points.partition_point(|p| p.0 < t);
        if i < self.points.len() && self.points[i].0 == t {
            return i;
        }
        let value = self.points[i - 1].1;
        self.points.insert(i, (t, value));
        i
    }

    fn apply(&mut self, from: Time, to: Option<Time>, demand: ResourceVec, sign: i64) {
        let from = from.max(self.start());
        if let Some(to) = to
            && to <= from
        {
            return;
        }
        let first = self.split_at(from);
        let last = match to {
            Some(to) => self.split_at(to),
            None => self.points.len(),
        };
        let d = signed(demand);
        for point in &mut self.points[first..last] {
            for (free, amount) in point.1.iter_mut().zip(d) {
                *free += sign * amount;
            }
        }
    }

    /// Capacity `demand` becomes free from `t` on (a running job's predicted end).
    pub fn release_from(&mut self, t: Time, demand: ResourceVec) {
        self.apply(t, None, demand, 1);
    }

    /// Holds `demand` over `[from, to)`.
    pub fn reserve(&mut self, from: Time, to: Time, demand: ResourceVec) {
        self.apply(from, Some(to), demand, -1);
    }

    /// Gives back `demand` over `[from, to)`.
    pub fn unreserve(&mut self, from: Time, to: Time, demand: ResourceVec) {
        self.apply(from, Some(to), demand, 1);
    }

    /// The earliest time ≥ `from` at which `demand` fits for `duration` seconds.
    /// `None` if it never does (it exceeds the capacity left at the end of the profile).
    pub fn earliest_fit(&self, from: Time, duration: Time, demand: ResourceVec) -> Option<Time> {
        let d = signed(demand);
        let from = from.max(self.start());
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
        p.unreserve(5, 15, u(8));
        assert_eq!(p.earliest_fit(1, 5, u(3)), Some(1));
    }
}
