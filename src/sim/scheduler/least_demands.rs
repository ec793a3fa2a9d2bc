//! The least demand, by class of requested time, of the jobs a conservative call is still to
//! place after each one: what tells the call that none of the rest can start now, so that it
//! may leave them unplaced for the next call (`conservative.rs`, "Placements left to the next
//! call").
//!
//! A job asking `u` units for `d` seconds can start at `now` only if every step of the profile
//! over `[now, now + max(d, 1))` has `u` free (a window of 0 seconds still needs the step at
//! `now`). That least free amount only falls as `d` grows and as later jobs are held, so a job
//! whose class starts at `b ≤ d` cannot start now once it asks more than the least free amount
//! over `[now, now + max(b, 1))`, and it never can again in the same call. Checking each class's
//! least demand against the profile that way rules out every job of the class at once: one
//! walk over the profile's first steps ([`Profile::least_free_from`]) answers every class. A
//! class found to hold a job that may start answers the next position without a walk while
//! its least demand is no more and nothing was held before its first seconds end.
//!
//! On a pool overloaded by small jobs (the scale bench's Curie-shaped window on 500 nodes: a
//! third of the jobs ask one node at most) some units are nearly always free at `now`, so the
//! check on the free amount at `now` alone (the least demand of every later job against it)
//! left almost every placement to be made; most of those units are free only for minutes
//! before a reservation, which the longer classes see.

use crate::sim::job::Time;

use super::profile::Profile;

/// Classes of requested time: class 0 holds times under 2⁶ s, class k ≥ 1 those in
/// `[2^(k+5), 2^(k+6))`, the last one every time from 2²⁰ s (12 days) on.
const CLASSES: usize = 16;

/// The class of a requested time of `d` seconds.
#[inline]
fn class_of(d: Time) -> usize {
    // Bits above the 6th: 0 below 64 s, 1 for [64, 128), …
    let bits = (64 - (d.max(0) as u64 >> 5).leading_zeros()) as usize;
    bits.saturating_sub(1).min(CLASSES - 1)
}

/// The shortest requested time of class `k`.
#[inline]
fn class_start(k: usize) -> Time {
    if k == 0 { 0 } else { 1 << (k + 5) }
}

/// Per class, the least demand of the jobs from each position on, read forward: the classes'
/// least demands from the current position on, and the jobs after it that lower one of them
/// (each with the least demand of its class after it), to be passed. Filled by one pass back
/// over the jobs ([`LeastDemands::note_back`]), in which a job that lowers no least demand
/// costs one comparison.
#[derive(Clone, Debug, Default)]
pub struct LeastDemands {
    /// Per class, the least demand from the current position on (`u64::MAX`: none).
    least: [u64; CLASSES],
    /// The jobs that lower their class's least demand, `(position, class, least demand after
    /// it)`, by decreasing position: the last one is the next to pass.
    lowering: Vec<(u32, u32, u64)>,
    /// The last class found to hold a job that may start, with the least free amount over its
    /// first seconds and where those end: it still may while its least demand is no more and
    /// nothing is held before that end ([`LeastDemands::held`]).
    witness: Option<(usize, i64, Time)>,
}

impl LeastDemands {
    /// Forgets every job, before they are noted again.
    pub fn clear(&mut self) {
        self.least = [u64::MAX; CLASSES];
        self.lowering.clear();
        self.witness = None;
    }

    /// Notes the job at position `pos` (counted from the first to be placed), asking `units`
    /// for `d` seconds. The jobs are noted last first.
    #[inline]
    pub fn note_back(&mut self, pos: usize, d: Time, units: u64) {
        let class = class_of(d);
        if units < self.least[class] {
            debug_assert!(
                self.lowering
                    .last()
                    .is_none_or(|&(p, _, _)| p as usize > pos)
            );
            self.lowering
                .push((pos as u32, class as u32, self.least[class]));
            self.least[class] = units;
        }
    }

    /// Whether a job at position `pos` or after may start at `now` over `profile` (whose start
    /// is `now`): `false` only when every class's least demand from `pos` on is more than the
    /// least free amount over its first `max(class start, 1)` seconds. Positions are asked in
    /// increasing order.
    pub fn may_start_now(&mut self, pos: usize, now: Time, profile: &Profile) -> bool {
        let pos = pos as u32;
        while let Some(&(_, class, after)) = self.lowering.last().filter(|&&(p, _, _)| p < pos) {
            self.least[class as usize] = after;
            self.lowering.pop();
        }
        if let Some((k, free, _)) = self.witness
            && i64::try_from(self.least[k]).is_ok_and(|u| u <= free)
        {
            return true;
        }
        let mut walk = profile.least_free_from(now);
        for (k, &units) in self.least.iter().enumerate() {
            if units == u64::MAX {
                continue;
            }
            let end = now + class_start(k).max(1);
            let free = walk.until(end);
            if i64::try_from(units).is_ok_and(|u| u <= free) {
                self.witness = Some((k, free, end));
                return true;
            }
        }
        false
    }

    /// The least demand of every class from the position asked last on (`i64::MAX`: none).
    pub fn least(&self) -> i64 {
        let least = self.least.iter().copied().min().unwrap_or(u64::MAX);
        i64::try_from(least).unwrap_or(i64::MAX)
    }

    /// Capacity was held from `from` on: the least free amounts over windows that reach it may
    /// have fallen.
    #[inline]
    pub fn held(&mut self, from: Time) {
        if self.witness.is_some_and(|(_, _, end)| from < end) {
            self.witness = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;

    #[test]
    fn classes_split_at_powers_of_two_from_64_seconds() {
        assert_eq!(class_of(0), 0);
        assert_eq!(class_of(63), 0);
        assert_eq!(class_of(64), 1);
        assert_eq!(class_of(127), 1);
        assert_eq!(class_of(128), 2);
        assert_eq!(class_of(3600), 6); // [2048, 4096)
        assert_eq!(class_of(1 << 20), CLASSES - 1);
        assert_eq!(class_of(Time::MAX), CLASSES - 1);
        for d in [0, 1, 63, 64, 100, 3600, 86_400, 1 << 20, 1 << 40] {
            let k = class_of(d);
            assert!(class_start(k) <= d, "{d} s in class {k}");
            if k + 1 < CLASSES {
                assert!(d < class_start(k + 1), "{d} s in class {k}");
            }
        }
    }

    /// 10 units free now; 4 from 100 s; 0 from 1,000 s to 5,000 s; 10 after.
    fn profile() -> Profile {
        let mut p = Profile::default();
        p.reset(0, ResourceVec::units(10));
        p.reserve(100, 5_000, ResourceVec::units(6));
        p.reserve(1_000, 5_000, ResourceVec::units(4));
        p
    }

    /// `least` of `jobs` (requested time, units) in order.
    fn fill(least: &mut LeastDemands, jobs: &[(Time, u64)]) {
        least.clear();
        for (pos, &(d, units)) in jobs.iter().enumerate().rev() {
            least.note_back(pos, d, units);
        }
    }

    #[test]
    fn a_job_that_fits_now_for_its_class_start_may_start() {
        let p = profile();
        let mut least = LeastDemands::default();
        // 90 s (class 1, from 64 s: 10 free over [0, 64)) for 8 units may start;
        fill(&mut least, &[(90, 8)]);
        assert!(least.may_start_now(0, 0, &p));
        // 200 s (class 2, from 128 s: 4 free) for 5 cannot, for 4 may.
        fill(&mut least, &[(200, 5)]);
        assert!(!least.may_start_now(0, 0, &p));
        fill(&mut least, &[(200, 4)]);
        assert!(least.may_start_now(0, 0, &p));
        // An hour (class 6, from 2,048 s: nothing free at 1,000 s) for 1 cannot.
        fill(&mut least, &[(3_600, 1)]);
        assert!(!least.may_start_now(0, 0, &p));
        // A 0-second job needs the step at `now`.
        fill(&mut least, &[(0, 10)]);
        assert!(least.may_start_now(0, 0, &p));
        fill(&mut least, &[(0, 11)]);
        assert!(!least.may_start_now(0, 0, &p));
    }

    #[test]
    fn each_position_sees_only_the_jobs_from_it_on() {
        let p = profile();
        let mut least = LeastDemands::default();
        // Positions 0 and 2 may start (short, small), 1 and 3 cannot (an hour).
        fill(
            &mut least,
            &[(90, 2), (3_600, 1), (70, 9), (7_200, 1), (3_600, 2)],
        );
        assert!(least.may_start_now(0, 0, &p));
        assert!(least.may_start_now(1, 0, &p));
        assert!(least.may_start_now(2, 0, &p));
        assert!(!least.may_start_now(3, 0, &p));
        assert!(!least.may_start_now(4, 0, &p));
        assert!(!least.may_start_now(5, 0, &p));
    }
}
