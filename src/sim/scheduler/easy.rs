//! EASY backfilling, exactly as the exercise describes it
//! (`papers/exercise-fcfs-vs-easy-backfilling.txt`, "The EASY scheduling algorithm"):
//!
//! 1. Start the queue head while it fits.
//! 2. For the first job that does not fit, compute the *shadow time* (when, walking the running
//!    jobs in order of expected termination — start + requested time — enough capacity is free
//!    for it) and the *extra* capacity (what is left over at the shadow time once it starts).
//! 3. Backfill: walk the rest of the queue in order and start every job that fits in the capacity
//!    free now and either ends (by its requested time) no later than the shadow time, or uses no
//!    more than the extra capacity. A job that runs past the shadow time consumes extra capacity.
//!
//! With advance reservations the same rule runs on an availability [`Profile`] of the running
//! jobs and the reservations: the head starts if it fits beside them until its requested time is
//! up; otherwise its shadow time is its earliest such fit, where it is held; a later job is
//! backfilled if it fits now beside all of that. Without reservations this is exactly the rule
//! above (a property test runs both on random workloads).
//!
//! One precision the exercise leaves open: the extra capacity counts *every* job expected to end
//! at the shadow time, not only the one whose release made the head fit — it is the capacity
//! free at that instant, as in pyss's availability profile.
//!
//! Over another queue order the rule is the same with "queue order" read as that order: the head
//! is the first job in it that does not fit, and backfilling walks the jobs after it — in the
//! candidate order when one is set (`backfill_order`, [`super::order::CandidateOrder`]: e.g.
//! shortest first, SJBF), the head keeping its place and its reservation.

use super::easy_index::WaitingIndex;
use super::order::{QueueOrder, Submission, Walk, Within, report_ended};
use super::profile::Profile;
use super::{QueuedJob, Scheduler, View};
use crate::sim::job::Time;
use crate::sim::queue::Queue;
use crate::sim::resources::ResourceVec;

pub struct Easy {
    order: Box<dyn QueueOrder>,
    walk: Walk,
    /// Jobs started in the current pass, as (predicted end, demand); reused between calls.
    started: Vec<(Time, ResourceVec)>,
    profile: Profile,
    /// Use the profile formulation even without reservations (for the equivalence tests).
    always_profile: bool,
    /// The waiting jobs by demand class, for backfilling past long queues in submission order.
    index: WaitingIndex,
    /// Backfilling asks the index when more than this many jobs follow the head.
    scan_limit: usize,
}

/// Backfilling walks the queue job by job when at most this many jobs follow the head, and asks
/// the [`WaitingIndex`] beyond: on short queues the walk is cheaper than the trees' queries,
/// and both start the same jobs.
const SCAN_LIMIT: usize = 256;

impl Default for Easy {
    fn default() -> Self {
        Easy::new(Box::new(Submission))
    }
}

/// The head's reservation: when it is expected to start and what is left over then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow {
    pub time: Time,
    pub extra: ResourceVec,
}

impl Easy {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        Easy {
            order,
            walk: Walk::default(),
            started: Vec::new(),
            profile: Profile::default(),
            always_profile: false,
            index: WaitingIndex::default(),
            scan_limit: SCAN_LIMIT,
        }
    }

    /// EASY that always runs on an availability profile: the same decisions as the default,
    /// by a different computation (tests compare the two).
    pub fn on_profile() -> Self {
        Easy {
            always_profile: true,
            ..Easy::default()
        }
    }

    /// The same rule asking the index as soon as more than `n` jobs follow the head (0: at every
    /// backfilling pass), so that tests on small workloads exercise it.
    #[doc(hidden)]
    pub fn with_scan_limit(mut self, n: usize) -> Self {
        self.scan_limit = n;
        self
    }

    /// The profile formulation, used when reservations exist.
    fn schedule_on_profile(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        let profile = &mut self.profile;
        view.committed_profile(profile);
        let mut jobs = self.walk.iter_from(view.queue, 0);
        let fits_now = |p: &Profile, job: &QueuedJob| {
            p.earliest_fit(now, job.requested_time, job.demand) == Some(now)
        };
        let mut k = 0;
        let head = loop {
            let Some((pos, job)) = jobs.next() else {
                return;
            };
            if !fits_now(profile, &job) {
                break job;
            }
            profile.reserve(now, now + job.requested_time, job.demand);
            starts.push(pos);
            k += 1;
        };
        let Some(shadow) = profile.earliest_fit(now, head.requested_time, head.demand) else {
            return;
        };
        profile.reserve(shadow, shadow + head.requested_time, head.demand);
        if self.walk.has_candidates() {
            self.walk.candidates_after(k);
            jobs = self.walk.iter_from(view.queue, k + 1);
        }
        for (pos, job) in jobs {
            if fits_now(profile, &job) {
                profile.reserve(now, now + job.requested_time, job.demand);
                starts.push(pos);
            }
        }
    }

    /// Computes the shadow time and extra capacity for `head`, given the capacity `free` now, the
    /// running jobs of `view` and the jobs `started` in this pass (sorted by predicted end).
    /// `None` when the head can never fit (only possible if it exceeds the machine).
    pub fn shadow(
        view: &View<'_>,
        started: &[(Time, ResourceVec)],
        free: ResourceVec,
        head: &QueuedJob,
    ) -> Option<Shadow> {
        let mut running = view
            .running
            .iter()
            .map(|r| (view.predicted_end(r.expected_end), r.demand))
            .peekable();
        let mut mine = started.iter().copied().peekable();
        let mut available = free;
        let mut shadow_time: Option<Time> = None;
        loop {
            // Merge the two streams by predicted end.
            let next = match (running.peek(), mine.peek()) {
                (Some(a), Some(b)) => {
                    if a.0 <= b.0 {
                        running.next()
                    } else {
                        mine.next()
                    }
                }
                (Some(_), None) => running.next(),
                (None, Some(_)) => mine.next(),
                (None, None) => None,
            };
            let Some((end, demand)) = next else { break };
            if let Some(t) = shadow_time
                && end > t
            {
                break;
            }
            available += demand;
            if shadow_time.is_none() && head.demand.fits_in(&available) {
                shadow_time = Some(end);
            }
        }
        let time = shadow_time?;
        Some(Shadow {
            time,
            extra: available - head.demand,
        })
    }
}

impl Scheduler for Easy {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        report_ended(&mut *self.order, view.completed);
        let first = starts.len();
        if self.always_profile || !view.reservations.is_empty() || self.order.is_submission() {
            // The profile formulation walks the whole order; submission order is the walk.
            self.walk
                .prepare(&mut *self.order, view.now, view.queue, view.jobs);
            self.decide(view, starts);
        } else {
            self.decide_over_order(view, starts);
        }
        if self.index.is_valid() {
            for &pos in &starts[first..] {
                self.index.started(&view.queue[pos]);
            }
        }
    }

    fn started(&mut self, now: Time, job: u32) {
        self.order.started(now, job, 0);
    }
}

impl Easy {
    fn decide(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        if self.always_profile || !view.reservations.is_empty() {
            return self.schedule_on_profile(view, starts);
        }
        let mut free = view.free;
        self.started.clear();
        let mut jobs = self.walk.iter_from(view.queue, 0);
        let mut k = 0;
        let head = loop {
            let Some((pos, job)) = jobs.next() else {
                return;
            };
            if !job.demand.fits_in(&free) {
                break job;
            }
            free -= job.demand;
            self.started
                .push((view.now + job.requested_time, job.demand));
            starts.push(pos);
            k += 1;
        };
        if free.unit_count() == 0 {
            return;
        }
        self.started.sort_unstable_by_key(|s| s.0);
        let Some(Shadow {
            time: shadow,
            mut extra,
        }) = Self::shadow(view, &self.started, free, &head)
        else {
            return;
        };
        if self.walk.is_identity() && view.queue.len() - (k + 1) > self.scan_limit {
            return self.backfill_indexed(view, &head, free, shadow, extra, starts);
        }
        // The head keeps its place; the candidates after it come in their own order.
        if self.walk.has_candidates() {
            self.walk.candidates_after(k);
            jobs = self.walk.iter_from(view.queue, k + 1);
        }
        for (pos, job) in jobs {
            if !backfill_takes(&job, view.now, shadow, &mut free, &mut extra) {
                continue;
            }
            starts.push(pos);
            if free.unit_count() == 0 {
                break;
            }
        }
    }

    /// [`Easy::decide`] over an order other than submission order: read job by job
    /// ([`Easy::decide_lazily`]) when the order can be, else written whole into the walk.
    // Out of line: with the lazy path reachable from `schedule` or `decide` themselves, the
    // default order's path took 5–9 % more instructions (`simulate -s easy`, SDSC-SP2:
    // `Easy::schedule` 59 → 86 M), though it decides and walks as before.
    #[inline(never)]
    fn decide_over_order(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        self.walk
            .prepare_lazily(&mut *self.order, view.now, view.queue, view.jobs);
        if self.walk.is_lazy() {
            self.decide_lazily(view, starts);
        } else {
            self.decide(view, starts);
        }
    }

    /// [`Easy::decide`] over an order read job by job ([`QueueOrder::next_waiting`]): the
    /// fairshare order kept by user between calls, where writing the whole order costs O(queue)
    /// three times over (the waiting users collected, the queue bucketed by user, copied by
    /// position) before the walk. Backfilling asks the order only for the jobs that may pass
    /// [`backfill_takes`] ([`Within`]: the order passes over the others, whole users at once
    /// when their least demand and requested time show it), so the same jobs start in the same
    /// order; a job's queue position is found only when it starts.
    // Out of line, away from `decide`'s walk over submission order, the default order's hot
    // path (BENCHMARKS.md, "Fairshare queue order").
    #[inline(never)]
    fn decide_lazily(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let mut free = view.free;
        self.started.clear();
        let order = &mut *self.order;
        let head = loop {
            let Some(job) = order.next_waiting(Within::ANY) else {
                return;
            };
            if !start_if_fits(view, &job, &mut free, &mut self.started) {
                break job;
            }
            starts.push(position(view.queue, &job));
        };
        let Some(Shadow {
            time: shadow,
            mut extra,
        }) = Self::reservation(view, &mut self.started, free, &head)
        else {
            return;
        };
        loop {
            let within = Within {
                units: free.unit_count(),
                time: shadow - view.now,
                extra: extra.unit_count(),
            };
            let Some(job) = order.next_waiting(within) else {
                return;
            };
            if !backfill_takes(&job, view.now, shadow, &mut free, &mut extra) {
                continue;
            }
            starts.push(position(view.queue, &job));
            if free.unit_count() == 0 {
                return;
            }
        }
    }

    /// The head's reservation once the jobs before it started (`started`, sorted here by
    /// predicted end), or `None` when nothing is left to backfill: no unit free, or a head that
    /// can never fit.
    fn reservation(
        view: &View<'_>,
        started: &mut [(Time, ResourceVec)],
        free: ResourceVec,
        head: &QueuedJob,
    ) -> Option<Shadow> {
        if free.unit_count() == 0 {
            return None;
        }
        started.sort_unstable_by_key(|s| s.0);
        Self::shadow(view, started, free, head)
    }

    /// The backfilling walk of [`Easy::decide`] over submission order, visiting only the jobs
    /// the [`WaitingIndex`] offers: every job it skips fails the walk's first test (its units
    /// exceed those free) or both of the others (it ends after the shadow time and its units
    /// exceed the extra units), so the same jobs start, in the same order.
    fn backfill_indexed(
        &mut self,
        view: &View<'_>,
        head: &QueuedJob,
        mut free: ResourceVec,
        shadow: Time,
        mut extra: ResourceVec,
        starts: &mut Vec<usize>,
    ) {
        self.index.sync(view.queue);
        let t = shadow - view.now;
        let mut after = head.job;
        while let Some(id) = self.index.next_candidate(
            after,
            free.unit_count(),
            t,
            free.unit_count().min(extra.unit_count()),
        ) {
            after = id;
            let pos = view
                .queue
                .position_of(id)
                .expect("the index holds waiting jobs only");
            if !backfill_takes(&view.queue[pos], view.now, shadow, &mut free, &mut extra) {
                continue;
            }
            starts.push(pos);
            if free.unit_count() == 0 {
                break;
            }
        }
    }
}

/// EASY's first step, one job of the queue order at a time: starts `job` if it fits in `free`
/// (taking its units and recording it in `started` as (predicted end, demand)); false when it
/// does not fit, which makes it the head.
#[inline(always)]
fn start_if_fits(
    view: &View<'_>,
    job: &QueuedJob,
    free: &mut ResourceVec,
    started: &mut Vec<(Time, ResourceVec)>,
) -> bool {
    if !job.demand.fits_in(free) {
        return false;
    }
    *free -= job.demand;
    started.push((view.now + job.requested_time, job.demand));
    true
}

/// The queue position of a waiting job read from a lazy order.
fn position(queue: &Queue, job: &QueuedJob) -> usize {
    queue
        .position_of(job.job)
        .expect("the order reads waiting jobs only")
}

/// EASY's test of one backfill candidate at `now`: it fits in the `free` units and either ends
/// by the `shadow` time or fits in the `extra` units the head does not need. When it passes,
/// the job's units are taken from `free` (and from `extra` when it runs past the shadow).
fn backfill_takes(
    job: &QueuedJob,
    now: Time,
    shadow: Time,
    free: &mut ResourceVec,
    extra: &mut ResourceVec,
) -> bool {
    if !job.demand.fits_in(free) {
        return false;
    }
    if now + job.requested_time <= shadow {
        *free -= job.demand;
    } else if job.demand.fits_in(extra) {
        *free -= job.demand;
        *extra -= job.demand;
    } else {
        return false;
    }
    true
}
