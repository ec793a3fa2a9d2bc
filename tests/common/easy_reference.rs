//! Pool-level EASY exactly as it was before its backfilling pass got an index over the waiting
//! jobs (issue 36; `src/sim/scheduler/easy.rs` at ae98a90): every call walks the whole queue
//! after the head. Kept, unchanged but for its name, as the reference that
//! `tests/easy_index.rs` compares the indexed rule with, schedule for schedule.

use schedlab::sim::ResourceVec;
use schedlab::sim::Time;
use schedlab::sim::scheduler::order::{QueueOrder, Submission, Walk, report_ended};
use schedlab::sim::scheduler::profile::Profile;
use schedlab::sim::scheduler::{QueuedJob, Scheduler, View};

pub struct ReferenceEasy {
    order: Box<dyn QueueOrder>,
    walk: Walk,
    /// Jobs started in the current pass, as (predicted end, demand); reused between calls.
    started: Vec<(Time, ResourceVec)>,
    profile: Profile,
    /// Use the profile formulation even without reservations (for the equivalence tests).
    always_profile: bool,
}

impl Default for ReferenceEasy {
    fn default() -> Self {
        ReferenceEasy::new(Box::new(Submission))
    }
}

/// The head's reservation: when it is expected to start and what is left over then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow {
    pub time: Time,
    pub extra: ResourceVec,
}

impl ReferenceEasy {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        ReferenceEasy {
            order,
            walk: Walk::default(),
            started: Vec::new(),
            profile: Profile::default(),
            always_profile: false,
        }
    }

    /// EASY that always runs on an availability profile: the same decisions as the default,
    /// by a different computation (tests compare the two).
    pub fn on_profile() -> Self {
        ReferenceEasy {
            always_profile: true,
            ..ReferenceEasy::default()
        }
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

impl Scheduler for ReferenceEasy {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        report_ended(&mut *self.order, view.completed);
        self.walk
            .prepare(&mut *self.order, view.now, view.queue, view.jobs);
        self.decide(view, starts);
    }

    fn started(&mut self, now: Time, job: u32) {
        self.order.started(now, job, 0);
    }
}

impl ReferenceEasy {
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
        // The head keeps its place; the candidates after it come in their own order.
        if self.walk.has_candidates() {
            self.walk.candidates_after(k);
            jobs = self.walk.iter_from(view.queue, k + 1);
        }
        for (pos, job) in jobs {
            if !job.demand.fits_in(&free) {
                continue;
            }
            let ends_by_shadow = view.now + job.requested_time <= shadow;
            if ends_by_shadow {
                free -= job.demand;
            } else if job.demand.fits_in(&extra) {
                free -= job.demand;
                extra -= job.demand;
            } else {
                continue;
            }
            starts.push(pos);
            if free.unit_count() == 0 {
                break;
            }
        }
    }
}
