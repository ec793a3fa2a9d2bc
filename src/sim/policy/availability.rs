//! The helpers every backfilling policy needs, computed from a [`PolicyView`]: EASY's shadow
//! time and extra units, and the availability profile of the committed future ([`Plan`]: "the
//! earliest time at which a request of this shape fits", "does this job fit now without
//! delaying what is planned").
//!
//! They are the built-in rules' own computations (`Easy::shadow`'s walk, the [`Profile`] of
//! conservative backfilling), so a policy built on them reproduces the built-in schedules
//! exactly (tests/python/test_equivalence.py).

use super::view::PolicyView;
use crate::sim::job::Time;
use crate::sim::resources::ResourceVec;
use crate::sim::scheduler::profile::Profile;

/// EASY's reservation for a job: when it is expected to start, and the units left over then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow {
    pub time: Time,
    pub extra: i64,
}

/// The rows `started` of the view's waiting jobs as (expected end, units), sorted by end (ties
/// in the order given, as the built-in EASY keeps them).
fn started_ends(view: &PolicyView<'_>, started: &[usize]) -> Vec<(Time, i64)> {
    let w = view.waiting;
    let mut ends: Vec<(Time, i64)> = started
        .iter()
        .filter(|&&row| row < w.len())
        .map(|&row| (view.now + w.requested_time[row], w.units[row]))
        .collect();
    ends.sort_by_key(|e| e.0);
    ends
}

/// See [`PolicyView::shadow`].
pub(super) fn shadow(view: &PolicyView<'_>, row: usize, started: &[usize]) -> Option<Shadow> {
    // Units are cores summed over nodes on a topology: no answer there (the Placer has one).
    if view.topology.is_some() {
        return None;
    }
    let w = view.waiting;
    let (units, duration) = (*w.units.get(row)?, w.requested_time[row]);
    if !view.reservations.is_empty() {
        let mut plan = plan(view, started);
        let time = plan.earliest_start(units, duration)?;
        plan.reserve(time, units, duration);
        return Some(Shadow { time, extra: 0 });
    }
    let mine = started_ends(view, started);
    let mut available = view.free - mine.iter().map(|m| m.1).sum::<i64>();
    if units <= available {
        return Some(Shadow {
            time: view.now,
            extra: available - units,
        });
    }
    let r = view.running;
    let mut running = (0..r.len())
        .map(|k| (r.expected_end[k], r.units[k]))
        .peekable();
    let mut mine = mine.into_iter().peekable();
    let mut shadow_time: Option<Time> = None;
    loop {
        // Merge the two streams by expected end; a running job first on a tie.
        let next = match (running.peek(), mine.peek()) {
            (Some(a), Some(b)) if a.0 <= b.0 => running.next(),
            (Some(_), Some(_)) => mine.next(),
            (Some(_), None) => running.next(),
            (None, _) => mine.next(),
        };
        let Some((end, freed)) = next else { break };
        if shadow_time.is_some_and(|t| end > t) {
            break;
        }
        available += freed;
        if shadow_time.is_none() && units <= available {
            shadow_time = Some(end);
        }
    }
    Some(Shadow {
        time: shadow_time?,
        extra: available - units,
    })
}

/// See [`PolicyView::earliest_start`].
pub(super) fn earliest_start(
    view: &PolicyView<'_>,
    units: i64,
    duration: Time,
    started: &[usize],
) -> Option<Time> {
    if view.topology.is_some() {
        return None;
    }
    plan(view, started).earliest_start(units, duration)
}

/// The committed future of `view` with the rows of `started` running from now.
pub(super) fn plan(view: &PolicyView<'_>, started: &[usize]) -> Plan {
    let mut profile = Profile::default();
    profile.reset(view.now, ResourceVec::units(view.free.max(0) as u64));
    let r = view.running;
    for k in 0..r.len() {
        profile.release_from(
            r.expected_end[k],
            ResourceVec::units(r.units[k].max(0) as u64),
        );
    }
    for w in view.reservations {
        let width = ResourceVec::units(w.width);
        if w.start <= view.now {
            profile.release_from(w.end, width);
        } else {
            profile.reserve(w.start, w.end, width);
        }
    }
    let mut plan = Plan {
        now: view.now,
        profile,
    };
    let w = view.waiting;
    for &row in started.iter().filter(|&&row| row < w.len()) {
        plan.reserve(view.now, w.units[row], w.requested_time[row]);
    }
    plan
}

/// The availability of the machine from now on: capacity free now, released by running jobs
/// at their expected ends and by reservations at theirs, held by reservations to come and by
/// whatever the policy reserves in it. A policy's scratch pad for one call: changing it starts
/// nothing.
#[derive(Clone, Debug)]
pub struct Plan {
    now: Time,
    profile: Profile,
}

impl Plan {
    /// The earliest time ≥ now at which `units` fit for `duration` seconds; `None` if never.
    pub fn earliest_start(&self, units: i64, duration: Time) -> Option<Time> {
        if units < 0 || duration <= 0 {
            return None;
        }
        self.profile
            .earliest_fit(self.now, duration, ResourceVec::units(units as u64))
    }

    /// Whether `units` fit from now for `duration` seconds beside everything in the plan.
    pub fn fits_now(&self, units: i64, duration: Time) -> bool {
        self.earliest_start(units, duration) == Some(self.now)
    }

    /// Holds `units` over `[at, at + duration)`.
    pub fn reserve(&mut self, at: Time, units: i64, duration: Time) {
        if units > 0 && duration > 0 {
            self.profile
                .reserve(at, at + duration, ResourceVec::units(units as u64));
        }
    }

    /// Free units at `t` (t ≥ now); negative when the policy reserved more than is there.
    pub fn free_at(&self, t: Time) -> i64 {
        self.profile.free_at(t.max(self.now))
    }
}
