//! One user's expected share of one resource, and Algorithm 1 of Tóth & Klusáček (section 3.2,
//! "Algorithm for EET Calculation") run on it in O(log n) amortised per job.
//!
//! Algorithm 1 walks time second by second from a job's arrival: at each second the job takes
//! `min(capacity_t, request)` of what is left of the share, until it has taken `request ×
//! runtime`; its EET is the second after the last one it took from. The last second takes the
//! full `min(capacity_t, request)` even when less would do (the "last-step consumption").
//!
//! Jobs are placed in arrival order, so only the share from the current arrival on matters, and
//! there it is a **non-decreasing step function** of time: initially the constant capacity;
//! a job turns every second of `[arrival, EET)` into `max(0, left − request)`, which zeroes the
//! prefix where `left ≤ request` and lowers the rest of the interval by `request` (with the step
//! back up at the EET), and leaves later seconds alone — still non-decreasing. So a job
//!
//! 1. walks the zeroed-or-narrow prefix (`left < request`) segment by segment, taking all of
//!    each; every segment walked is removed, so this is amortised O(1) segments per job;
//! 2. at the first segment with `left ≥ request` takes exactly `request` per second to its end,
//!    which is `ceil(rest / request)` seconds away whatever the segments beyond look like.
//!
//! The function is stored as its increases: a base level at the current arrival and a sorted map
//! from time to the (positive) step up at that time. A job removes the steps it walked over and
//! adds at most two. Amounts are `u128` in the share's own units (see `ratio.rs` for fractional
//! capacities).

use std::collections::BTreeMap;

use crate::sim::job::Time;

/// Why a job could not be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceError {
    /// `request × runtime` or the EET does not fit the integer types.
    Overflow,
    /// Jobs must be placed in arrival order.
    OutOfOrder,
    /// A share of 0: no job asking for something could ever end.
    ZeroCapacity,
}

/// What is left of one user's share of one resource, from the latest arrival on.
#[derive(Clone, Debug)]
pub struct ShareProfile {
    capacity: u128,
    /// The latest arrival placed; nothing before it is kept.
    origin: Time,
    /// What is left at `origin`.
    base: u128,
    /// Steps up after `origin`: what is left at `t ≥ origin` is `base` plus the steps at or
    /// before `t`. Every step is positive; `base` plus all steps is the capacity.
    steps: BTreeMap<Time, u128>,
}

impl ShareProfile {
    /// An untouched share of `capacity` units; `None` for a zero capacity (no job could ever
    /// finish).
    pub fn new(capacity: u128) -> Option<ShareProfile> {
        (capacity > 0).then(|| ShareProfile {
            capacity,
            origin: Time::MIN,
            base: capacity,
            steps: BTreeMap::new(),
        })
    }

    pub fn capacity(&self) -> u128 {
        self.capacity
    }

    /// What is left of the share at `t`, for `t` at or after the latest arrival.
    pub fn left_at(&self, t: Time) -> u128 {
        self.base + self.steps.range(..=t).map(|(_, d)| d).sum::<u128>()
    }

    /// Breakpoints currently stored (for tests and benchmarks: stays small).
    pub fn breakpoints(&self) -> usize {
        self.steps.len()
    }

    /// Places a job arriving at `arrival` that asks for `request` units for `runtime` seconds
    /// and returns its EET. Arrivals must not decrease from one call to the next. A job asking
    /// for nothing (`request × runtime ≤ 0`) ends at its arrival, as in Algorithm 1 whose loop
    /// then never runs.
    pub fn place(
        &mut self,
        arrival: Time,
        request: u128,
        runtime: Time,
    ) -> Result<Time, PlaceError> {
        if arrival < self.origin {
            return Err(PlaceError::OutOfOrder);
        }
        // Forget the past: steps at or before the arrival become part of the base.
        while let Some(entry) = self.steps.first_entry() {
            if *entry.key() > arrival {
                break;
            }
            self.base += entry.remove();
        }
        self.origin = arrival;
        if runtime <= 0 || request == 0 {
            return Ok(arrival);
        }
        let mut need = request
            .checked_mul(runtime as u128)
            .ok_or(PlaceError::Overflow)?;
        let end_after = |from: Time, need: u128, rate: u128| -> Result<Time, PlaceError> {
            let seconds = need.div_ceil(rate);
            i64::try_from(seconds)
                .ok()
                .and_then(|s| from.checked_add(s))
                .ok_or(PlaceError::Overflow)
        };
        // Walk the narrow prefix: segments [time, next step) where less than `request` is left.
        let mut time = arrival;
        let mut left = self.base;
        loop {
            if left >= request {
                // From here on at least `request` is left every second: the job takes exactly
                // `request` per second and the level drops by it until the EET.
                let eet = end_after(time, need, request)?;
                if time == arrival {
                    self.base = left - request;
                } else {
                    self.base = 0;
                    if left > request {
                        self.steps.insert(time, left - request);
                    }
                }
                *self.steps.entry(eet).or_insert(0) += request;
                return Ok(eet);
            }
            // Narrow: the job takes all that is left each second.
            let next = self.steps.first_key_value().map(|(&t, &d)| (t, d));
            let segment_end = next.map(|(t, _)| t);
            if left > 0 {
                let fits_before = match segment_end {
                    None => true,
                    Some(end) => left
                        .checked_mul((end - time) as u128)
                        .is_none_or(|taken| taken >= need),
                };
                if fits_before {
                    let eet = end_after(time, need, left)?;
                    // [arrival, eet) is used up; from the EET on the segment's level remains.
                    self.base = 0;
                    *self.steps.entry(eet).or_insert(0) += left;
                    return Ok(eet);
                }
            }
            let (end, step) = next.expect("a finite segment: the last level is the capacity > 0");
            need -= left * (end - time) as u128;
            self.steps.pop_first();
            left += step;
            time = end;
        }
    }
}

/// EETs of one user's jobs on one resource: `jobs` are `(arrival, request, runtime)`, placed in
/// arrival order (ties in the given order); the EETs come back in the given order.
pub fn expected_end_times(
    jobs: &[(Time, u128, Time)],
    capacity: u128,
) -> Result<Vec<Time>, PlaceError> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| jobs[i].0);
    let mut share = ShareProfile::new(capacity).ok_or(PlaceError::ZeroCapacity)?;
    let mut eets = vec![0; jobs.len()];
    for i in order {
        let (arrival, request, runtime) = jobs[i];
        eets[i] = share.place(arrival, request, runtime)?;
    }
    Ok(eets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_1_of_the_paper() {
        // Capacity 3; job 1 (arrival 0, 2 units, 4 s) ends at 4, job 2 (1, 2 units, 1 s) takes
        // the one unit left at 1 and one at 2: EET 3.
        let jobs = [(0, 2, 4), (1, 2, 1)];
        assert_eq!(expected_end_times(&jobs, 3), Ok(vec![4, 3]));
    }

    #[test]
    fn the_profile_stays_small_and_non_decreasing() {
        let mut share = ShareProfile::new(4).unwrap();
        // 3 units for 10 s at 0: 1 left on [0, 10).
        assert_eq!(share.place(0, 3, 10), Ok(10));
        assert_eq!(
            (share.left_at(0), share.left_at(9), share.left_at(10)),
            (1, 1, 4)
        );
        // 2 units for 5 s at 2: one unit per second on [2, 10) gives 8 of 10; then 2 per second
        // from 10: one more second. EET 11; left: 0 on [2, 10), 2 on [10, 11), 4 after.
        assert_eq!(share.place(2, 2, 5), Ok(11));
        assert_eq!(
            (share.left_at(2), share.left_at(10), share.left_at(11)),
            (0, 2, 4)
        );
        assert_eq!(share.breakpoints(), 2);
        assert_eq!(share.place(1, 1, 1), Err(PlaceError::OutOfOrder));
        assert!(ShareProfile::new(0).is_none());
    }

    // The comparison with a literal transcription of Algorithm 1 on random inputs is in
    // tests/eet.rs.

    #[test]
    fn overflow_is_an_error_not_a_panic() {
        let mut share = ShareProfile::new(1).unwrap();
        assert_eq!(share.place(0, u128::MAX, 2), Err(PlaceError::Overflow));
        assert_eq!(
            share.place(i64::MAX - 10, 1 << 40, 1 << 30),
            Err(PlaceError::Overflow)
        );
    }
}
