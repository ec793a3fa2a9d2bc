//! Conservative backfilling (Mu'alem & Feitelson, 2001): every queued job holds a reservation in
//! an availability [`Profile`] computed from requested times. A new job gets the earliest slot
//! that delays no existing reservation; the queue is *compressed* in submission order — each job
//! gives back its reservation and takes the earliest slot again, which is never later than before
//! — and jobs whose reservation starts now are started.
//!
//! Granted advance reservations are part of the profile before any queued job, so no job is ever
//! planned into reserved capacity.
//!
//! This matches pyss's `ConservativeScheduler` (reservations kept in submission order, compression
//! after early terminations), which the fixtures in `shared/fixtures/pyss` come from.
//!
//! Over another queue order, compression goes in that order, and whenever the order is no
//! longer the one the plan was made in (the previous order of the jobs still waiting, then the
//! arrivals in submission order: [`OrderTracker`]) every reservation is dropped and the queue is
//! planned afresh in the new order — reservations are then a plan, not a promise
//! (docs/semantics.md, "Conservative over a priority order"). The plan is kept between calls
//! then too ("Over a reordering queue" below).
//!
//! # Planning incrementally (issue 10)
//!
//! The decisions are those of the straightforward formulation, kept as
//! [`Conservative::reference`]: at *every* call, rebuild the profile of the committed work,
//! put every held reservation back, and compress the whole queue. That costs O(queue × profile)
//! per call. The default scheduler keeps its profile between calls instead, brings it up to date
//! with what happened (jobs that ended before their requested time give back the rest of it;
//! newly granted advance reservations are held; the past is dropped) and compresses only when a
//! compression can change something:
//!
//! - A compression that moves no reservation leaves a *fixed point*: compressing again with the
//!   same profile gives every job the same slot (each job's fit sees exactly what it saw). Jobs
//!   starting at their reservation and jobs ending at their requested time leave the future of
//!   the profile unchanged, and an arrival is planned after every older job, around their slots,
//!   so it cannot let any of them move: at a fixed point a call only starts the jobs whose
//!   reservation begins now and gives each new job its earliest slot.
//! - The profile changes in a way that can move reservations after an *early completion* (its
//!   capacity frees up before its requested time is over), a *stale* reservation (one that began
//!   between two periodic calls is given back and its job placed afresh), a newly granted
//!   advance reservation, or a job running past its requested time (`overrun: continue`: its
//!   predicted end moves with the clock, so the profile is rebuilt from the view).
//! - One compression need not reach a fixed point: a job that moves frees its old slot, which only
//!   jobs *after* it use in the same pass. So after a compression that moved a reservation, the
//!   next call compresses again.
//!
//! Within a compression, a job is re-fitted only if it can move: with no negative capacity in the
//! profile, a job can start earlier exactly when some window before its slot fits it until that
//! slot or for its requested time ([`Profile::fits_before`]); otherwise its slot stays, which is
//! what giving it back and fitting it again would give. When it can, the first such window is
//! its new slot ([`Profile::first_fit_before`]), so it is not searched for twice. A property test compares both
//! formulations on random workloads, with and without reservations, scheduling intervals and
//! overruns (`tests/conservative_incremental.rs`).
//!
//! # Searches that start later (issue 10, long queues)
//!
//! On long queues most of a compression's time went into jobs that cannot move, each searching
//! the profile from now up to its slot. Within one pass (one compression, or one call's
//! planning of new jobs) the scheduler remembers what its last search showed ([`NoFit`]):
//! "no window for demand r starts before b and fits until c or for d seconds, whichever ends
//! first". A later job asking at least r for at least d seconds, whose own slot is not before
//! c (a job being placed has none), cannot start before b either: each of its windows that
//! starts earlier holds one of those too-small windows, whose capacity has since only shrunk
//! — so its search starts at b, and it is skipped when b reaches its slot. A job that stays
//! gives "none before its slot", one that moves to t gives "none before t", one placed at t
//! gives "no whole window before t". Capacity only rises in a pass where a moved job gives back
//! the part of its old slot it does not take again (or, over negative capacity, where a job
//! gives its slot back to be placed afresh): a remembered window that reaches the rise may fit
//! now, so it is kept only if clipped before it. Runs of alike jobs, common in real traces
//! (88 % of RICC's consecutive jobs ask the same width and time), each search from where the
//! previous one stopped; only the last search is kept, as keeping more cost more than it saved
//! ([`LastNoFit`]). The decisions are unchanged (the same property tests).
//!
//! # Where capacity rose (issue 10, short queues)
//!
//! On traces with short queues (SDSC-BLUE: 34 jobs on average) most of a compression's time
//! was checks that end "stays": 7.1 M of 8.2 M. A job that can move now but could not at its
//! previous check has a window that fits now and did not then, so some second of it has more
//! capacity now than then, with at least the job's demand free. Capacity rises only where it is
//! given back: by early completions at this call (over `[now, latest requested end)`), and by
//! jobs that moved earlier (the part of their old slot they left) — those before the job in
//! the current pass, and those after it in the previous pass, which moved after its check
//! there. Such a second lies before the job's slot, and a mover's rise starts at or after the
//! mover's old slot. [`Rises`] keeps the largest free amount over each of these and where the
//! movers' rises begin; a job asking more than all of those that can lie before its slot stays
//! where it is without a search. This holds only when the previous pass checked every planned
//! job over a profile without negative capacity and nothing else changed since (no rebuild, no
//! reservation granted or given back); otherwise every job is searched. On SDSC-BLUE it
//! answers 3.0 M of 8.2 M checks with one comparison; decisions are unchanged (the same
//! property tests, which fail if any of the three sources of rises is left out).
//!
//! # Over a reordering queue (issue 36)
//!
//! The reference runs at every call over any order; the default scheduler keeps its plan in
//! the order it was made in (`plan[k]` is the k-th job of the order, each call's starts are
//! given in that order, as the reference gives them). Three cases, by what [`OrderTracker`]
//! would say of this call's order, read off the plan (the previous order of the jobs still
//! waiting) without the tracker's O(queue) bookkeeping:
//!
//! - **Unchanged** (the previous order of the jobs still waiting, then the arrivals in
//!   submission order): the reference keeps every reservation and compresses in that order,
//!   which is the submission-order case above with "queue order" read as "the plan's order" —
//!   every argument there (fixed points, an arrival planned after every older job, [`NoFit`])
//!   is about the order jobs are compressed and placed in, not about which order it is. So the
//!   same machinery runs on the plan as kept, the arrivals placed after it, [`Rises`]
//!   included: it follows a pass's movers by their rank in the plan ([`Planned::seq`]), which
//!   a job keeps while the order stays the plan's. Whatever plans anew (below) forgets the
//!   rises, so the compression after it checks every job.
//! - **Changed after an unchanged prefix of a fresh plan**: the reference plans the queue
//!   afresh, each job in the new order at its earliest slot over the committed work and the
//!   jobs before it — a job's fresh slot depends only on what precedes it. When the plan *is*
//!   the fresh plan of the previous order over the present state (`fresh`) and the new order
//!   keeps its first `k` jobs, the fresh plan of those `k` is the plan they hold: they keep
//!   it, every later reservation is given back, and the rest of the queue is placed after them
//!   in the new order. The plan is fresh after planning afresh (or keeping a prefix) and stays
//!   so across calls that neither compress nor raise capacity: those only start jobs at their
//!   reservation — a started job holds as a running job what its reservation held — place
//!   arrivals after the others, and see jobs end at their requested time, which frees nothing
//!   in the future; over the kept jobs' slots capacity has only shrunk, so each one's slot
//!   still fits and nothing earlier does. A stale reservation, a newly granted advance
//!   reservation, an overrun (whose predicted end moves with the clock), a job left unplanned
//!   or a compression end it (the prefix's fresh slots could be earlier than the ones held):
//!   such a call plans afresh. This is node-level conservative's shortcut
//!   ([`crate::sim::scheduler::node::NodeConservative`]) on a pool, where there is no node
//!   choice to keep.
//!
//!   An early completion alone (capacity only rose, over `[now, until)`) cuts the prefix
//!   instead ([`Conservative::unmoved_prefix`]): while the jobs before job k keep their fresh
//!   slots, k's fresh profile is the one its slot was the earliest fit in plus the rise, so a
//!   start that fits now and did not then holds a risen second and starts before `until` and
//!   before k's slot. Job k keeps its slot unless a whole window starts in `[now, min(slot,
//!   until))` over the committed work and the holds before it (a scratch profile, built for the
//!   call, that leaves out holds from `until` on: more capacity, so "no window" still holds);
//!   the prefix ends at the first job that may move.
//!
//!   What giving back every later reservation leaves is the committed work and the prefix's
//!   holds: when those are fewer changes than the holds to give back (a few times fewer, as
//!   building the profile in one pass costs a fraction of an update per change), the profile
//!   is rebuilt from them instead ([`Conservative::give_back_after`]).
//! - **Changed otherwise**: planned afresh as the reference does, every job in order placed at
//!   its earliest slot over the committed work as arrivals are placed after a plan ([`NoFit`]
//!   included, capacity only shrinking as jobs are placed). A fresh plan is a fixed point
//!   (each job holds its earliest slot over the jobs before it, and the jobs after it were
//!   placed around it), so the next call need not compress.
//!
//! **Placements left to the next call.** The order changes at about half the calls over
//! fairshare order, and each change places every job after it again, so the slots of the jobs
//! placed last at a call are read only if the next call's order keeps them. Once none of the
//! remaining jobs can start now, they are admitted to the plan unplaced
//! ([`Conservative::plan_arrivals`]). That is known without a search per job from each class
//! of requested time's least demand among them ([`LeastDemands`]): a job asking more than the
//! least free amount over the first seconds of its class (from `now` on, at least the second
//! `now`) cannot start now, nor after later jobs are held (session 24's rule compared the
//! least demand with the amount free at `now` alone, which on a pool crowded by small jobs
//! nearly never ruled them out: units free for minutes before a reservation). The next call places them first, at the deferring call's
//! time over the profile that call left (nothing touches it between calls), if its order is
//! unchanged or the plan no longer lines up with the queue — the same placements, one call
//! later — and drops them if its order changed: each changed-order path keeps at most a prefix
//! of placed jobs (`keep` stops at the first unplaced one) and places the rest afresh. (A
//! stale reservation among them is then never seen, so such a call may keep a prefix where it
//! would have planned afresh; the prefix's fresh slots depend only on the committed work and
//! the jobs before them, so that is exact too.) Counted on CTC-SP2 over fairshare order, this
//! leaves 2.03 M of the 4.72 M placements undone. A replan stopped where the new plan meets the
//! old one (the new order's first m jobs the old first m, in their old slots, and the orders
//! alike after m) would have saved under 0.01 %: a change reorders the whole rest of the
//! order, and its first moved job takes another slot (BENCHMARKS.md).
//!
//! When the plan no longer lines up with the previous order — a queued job left without
//! starting, or starts were not all applied (queue limits, `reorder: start`): the queue's
//! [`crate::sim::queue::Queue::reorders`] moved — the reference decides that call from the
//! reservations held (the tracker compares this call's order with the previous call's walk),
//! and its plan is taken over, but compressed again at the next call (a compression need not
//! reach a fixed point). Backfill candidates in
//! another order than the queue's (`backfill_order`) compress in an order that is not the
//! plan's: that case runs the reference at every call. `tests/conservative_order.rs` compares
//! the scheduler with the reference over fairshare, priority and shortest-first order on random
//! workloads, and fails unless each shortcut was taken many times.

use std::collections::HashMap;

use super::least_demands::LeastDemands;
use super::order::{OrderTracker, QueueOrder, Submission, Walk, report_ended};
use super::profile::Profile;
use super::{QueuedJob, Scheduler, View};
use crate::sim::job::Time;
use crate::sim::reservation::ReservedWindow;
use crate::sim::resources::ResourceVec;

/// No reservation.
const NONE: Time = Time::MIN;

/// A planned job that starts at this call: it leaves the plan when the call ends.
const STARTED: Time = Time::MAX;

/// A job of the planned queue prefix with its reservation: what a compression reads at every
/// check, kept contiguous in queue order (issue 10: reaching the queue's entries through its
/// slot bitmap and each reservation through a table indexed by workload index cost 4 % more
/// of the scheduler's instructions on SDSC-BLUE, 154 M of 4,035 M).
#[derive(Clone, Copy, Debug)]
struct Planned {
    job: u32,
    /// Rank in the plan's order, kept while the job stays planned ([`Rises`] follows a pass's
    /// movers by it): increasing along the plan, renumbered when a plan is made anew.
    seq: u32,
    units: u64,
    duration: Time,
    /// Reserved start (`NONE` if none, `STARTED` once started at this call).
    held: Time,
}

impl Planned {
    fn demand(&self) -> ResourceVec {
        ResourceVec::units(self.units)
    }
}

/// What a search showed: no window for `units` allocation units starts before `before` and fits
/// until `clip` or for `duration` seconds, whichever ends first — `[t, min(t + duration, clip))`
/// is too small somewhere for every `t` in `[now, before)`. It stays true while capacity only
/// shrinks below `clip` (see the module documentation, "Searches that start later"). The
/// profile counts allocation units only, so a demand is its unit count.
#[derive(Clone, Copy, Debug, Default)]
struct NoFit {
    units: u64,
    duration: Time,
    before: Time,
    clip: Time,
}

impl NoFit {
    /// Nothing learnt: whatever it applies to, it bounds nothing (`before` is the least time).
    const NOTHING: NoFit = NoFit {
        units: 0,
        duration: 0,
        before: Time::MIN,
        clip: Time::MIN,
    };
}

/// The last [`NoFit`] the current pass's searches showed. Only the last is kept:
/// remembering the last eight (sessions 7–8) made every check scan eight, and the bounds the
/// older ones added saved less than the scan cost on every trace measured (issue 10;
/// BENCHMARKS.md, "Searches that start later"). A run of alike jobs, the case this serves,
/// needs only the last.
#[derive(Clone, Debug)]
struct LastNoFit {
    last: NoFit,
    /// The time of the pass: a bound at or before it says nothing.
    now: Time,
}

impl Default for LastNoFit {
    fn default() -> Self {
        LastNoFit {
            last: NoFit::NOTHING,
            now: 0,
        }
    }
}

impl LastNoFit {
    fn clear(&mut self, now: Time) {
        self.last = NoFit::NOTHING;
        self.now = now;
    }

    #[inline]
    fn note(&mut self, no_fit: NoFit) {
        // An empty window always fits, and a bound at `now` says nothing: the last that said
        // something stays.
        if no_fit.duration > 0 && no_fit.before > self.now {
            self.last = no_fit;
        }
    }

    /// Capacity rose from `from` on: what was learnt about earlier capacity still holds, a
    /// window that reaches the rise may fit now.
    #[inline]
    fn rise(&mut self, from: Time) {
        if self.last.clip > from {
            self.last = NoFit::NOTHING;
        }
    }

    /// The earliest start a search for `units` over `duration` seconds can find, for a window
    /// clipped at `clip` (`Time::MAX`: whole windows): every window that starts earlier holds a
    /// window the last search found too small, with at most as much free capacity.
    #[inline]
    fn earliest(&self, units: u64, duration: Time, clip: Time) -> Time {
        let n = &self.last;
        // Every comparison evaluated and the bound selected without a branch: whether the last
        // search applies is data-dependent, and this lookup runs before every check (issue 10:
        // short-circuit branches here were mispredicted).
        let applies = (n.duration <= duration) & (n.clip <= clip) & (n.units <= units);
        std::hint::select_unpredictable(applies, n.before, Time::MIN)
    }
}

/// Rises in capacity taken together: the earliest second any of them starts at and the
/// largest free amount over them. A window before `from` holds none of them.
#[derive(Clone, Copy, Debug)]
struct Risen {
    from: Time,
    most: i64,
}

impl Default for Risen {
    fn default() -> Self {
        Risen::NONE
    }
}

impl Risen {
    const NONE: Risen = Risen {
        from: Time::MAX,
        most: i64::MIN,
    };

    /// The rises of both together.
    #[inline]
    fn and(self, other: Risen) -> Risen {
        Risen {
            from: self.from.min(other.from),
            most: self.most.max(other.most),
        }
    }
}

/// Which planned jobs a compression can move, from where capacity rose since each was last
/// checked (module documentation, "Where capacity rose"). A job that moves now and could not
/// then has a window that fits now and did not then: before its slot, it holds a second where
/// capacity rose since, with at least the job's demand free. So a job asking more than the
/// largest free amount over every such rise that starts before its slot stays where it is.
#[derive(Clone, Debug, Default)]
struct Rises {
    /// Whether the bounds hold for the current pass: every planned job was checked (or
    /// placed) in the previous pass over a profile without negative capacity, and since then
    /// capacity only rose where recorded here.
    active: bool,
    /// Whether the previous pass was such a pass (or a fixed point after one).
    checked: bool,
    /// Largest free amount where early completions gave capacity back at this call (from
    /// `now` on, so before every slot).
    at_call: i64,
    /// The previous pass's movers in plan order (by [`Planned::seq`]), each with what it and
    /// every later mover gave back: a job checked before them there has not seen any of it.
    earlier_pass: Vec<(u32, Risen)>,
    /// How many of `earlier_pass` are not after the job being checked.
    passed: usize,
    /// This pass's movers, each with what it gave back.
    this_pass: Vec<(u32, Risen)>,
    /// All of those so far.
    this_pass_risen: Risen,
}

impl Rises {
    /// The profile was brought up to date for a call: `Some(most)` if capacity only rose
    /// (early completions, with `most` the largest free amount there), `None` if it changed
    /// otherwise (rebuilt, reservations granted or given back).
    fn sync(&mut self, at_call: Option<i64>) {
        self.active = self.checked && at_call.is_some();
        self.at_call = at_call.unwrap_or(i64::MIN);
    }

    /// Forgets every rise, as a new [`Rises`] (the plan was made anew: the next compression
    /// checks every job), keeping the movers' buffers.
    fn forget(&mut self) {
        let mut earlier_pass = std::mem::take(&mut self.earlier_pass);
        let mut this_pass = std::mem::take(&mut self.this_pass);
        earlier_pass.clear();
        this_pass.clear();
        *self = Rises {
            earlier_pass,
            this_pass,
            ..Rises::default()
        };
    }

    /// A compression starts, over a profile without negative capacity if `consistent`.
    fn begin_pass(&mut self, consistent: bool) {
        self.active &= consistent;
        std::mem::swap(&mut self.earlier_pass, &mut self.this_pass);
        self.this_pass.clear();
        self.this_pass_risen = Risen::NONE;
        self.passed = 0;
        // Suffix summaries: each mover with itself and every later one.
        let mut all = Risen::NONE;
        for entry in self.earlier_pass.iter_mut().rev() {
            all = all.and(entry.1);
            entry.1 = all;
        }
        // Every job of this pass is checked over a consistent profile (or placed).
        self.checked = consistent;
    }

    /// A call at a fixed point: nothing moved in the previous pass, nothing rose but what the
    /// call's sync recorded, which the fixed point already accounts for (no compression).
    fn at_fixed_point(&mut self) {
        self.this_pass.clear();
    }

    /// Whether the planned job of rank `seq`, holding a slot from `held` and asking `units`,
    /// may move (its turn in the pass).
    #[inline]
    fn may_move(&mut self, seq: u32, held: Time, units: u64) -> bool {
        if !self.active {
            return true;
        }
        while self
            .earlier_pass
            .get(self.passed)
            .is_some_and(|&(mover, _)| mover <= seq)
        {
            self.passed += 1;
        }
        let later = self
            .earlier_pass
            .get(self.passed)
            .map_or(Risen::NONE, |&(_, risen)| risen);
        let movers = self.this_pass_risen.and(later);
        // When every mover's rise starts at or after `held`, none is in a window before it.
        let most = if movers.from < held {
            self.at_call.max(movers.most)
        } else {
            self.at_call
        };
        i64::try_from(units).is_ok_and(|u| u <= most)
    }

    /// The job of rank `seq` moved earlier, giving back capacity from `from` on, where the
    /// largest free amount is `most`.
    fn moved(&mut self, seq: u32, from: Time, most: i64) {
        let risen = Risen { from, most };
        self.this_pass.push((seq, risen));
        self.this_pass_risen = self.this_pass_risen.and(risen);
    }
}

pub struct Conservative {
    order: Box<dyn QueueOrder>,
    walk: Walk,
    /// Over a reordering queue: the previous call's walk, whose order the tracker compares
    /// this call's with when the plan no longer lines up with it (kept by swapping the two).
    previous_walk: Walk,
    tracker: OrderTracker,
    /// Run the straightforward formulation (rebuild and compress at every call).
    reference: bool,
    /// The reference formulation's reservations, by workload index.
    reference_slots: HashMap<u32, Time>,
    /// Committed work and every held reservation, from the last call on.
    profile: Profile,
    /// Whether `profile` holds the state left by the previous call.
    synced: bool,
    /// The planned queue prefix, in queue order: the first `plan.len()` queued jobs (jobs after
    /// them arrived since the last call), each with its reservation.
    plan: Vec<Planned>,
    /// The [`Planned::seq`] of the next job planned.
    next_seq: u32,
    /// No reservation starts before this (`Time::MAX` when none is held): the calls at which
    /// none begins, most of them, look no further. When one does, the planned jobs are walked
    /// to find which and to bring the bound up to date (issue 10: a heap of starts, which every
    /// move left a dead entry in, cost more than these walks).
    next_start: Time,
    /// Advance reservations as of the last call.
    windows: Vec<ReservedWindow>,
    /// The last call moved a reservation (or left a job unplanned): compress at the next one.
    unsettled: bool,
    /// [`crate::sim::queue::Queue::reorders`] as of the last call.
    reorders: u64,
    /// What this pass's last search showed, to start later searches later.
    last_no_fit: LastNoFit,
    /// Where capacity rose since each planned job was last checked, to tell most jobs that
    /// they stay with one comparison.
    rises: Rises,
    /// Over a reordering queue: the plan is the fresh plan of the order it was made in over
    /// the present state (module documentation, "Over a reordering queue").
    fresh: bool,
    /// Since the previous call capacity only rose, by early completions over `[now, t)`
    /// (`Some(t)`), as of the last [`Conservative::sync`].
    rose_until: Option<Time>,
    /// Over a reordering queue: the committed work with the holds of a kept prefix, to check
    /// which jobs of a fresh plan a rise in capacity leaves in place
    /// ([`Conservative::unmoved_prefix`]).
    prefix_profile: Profile,
    /// Over a reordering queue: how many of the plan's last jobs are not placed yet (module
    /// documentation, "Over a reordering queue"): none of them could start at the call that
    /// admitted them, at `deferred_at`, and the profile is as that call left it.
    deferred: usize,
    /// The time of the call that deferred the plan's last `deferred` jobs.
    deferred_at: Time,
    /// The least demand of the jobs being placed from each one on, by class of requested time
    /// (scratch for [`Conservative::plan_arrivals`]).
    least_demands: LeastDemands,
    /// Over a reordering queue: how often each way of planning was taken (for tests and
    /// benches).
    ordered: OrderedCalls,
}

/// How the calls over a reordering queue were planned ([`Conservative::ordered_calls`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrderedCalls {
    /// Calls whose order was the plan's: the plan kept, compressed only if needed.
    pub unchanged: u64,
    /// Calls whose new order kept an unchanged prefix of a fresh plan.
    pub kept_prefix: u64,
    /// The planned jobs those calls kept, in all.
    pub kept_jobs: u64,
    /// Of `kept_prefix`, the calls after capacity rose (early completions): the prefix kept is
    /// the jobs before the first one the rise may let start earlier.
    pub kept_after_rise: u64,
    /// Of `kept_prefix`, the calls that rebuilt the profile from the committed work and the
    /// prefix's holds instead of giving back the later jobs' holds one by one.
    pub prefix_rebuilds: u64,
    /// Calls planned afresh (the order changed) or by the reference (the plan no longer lined
    /// up with the queue).
    pub afresh: u64,
    /// Checks of planned jobs in compressions that `Rises` answered without a search (in
    /// any order: over a reordering queue, those of unchanged-order calls).
    pub rise_checks: u64,
    /// Jobs admitted unplaced (none could start at their call) and dropped unplaced, as the
    /// next call's order changed before them: placements saved.
    pub deferred_dropped: u64,
    /// Jobs admitted unplaced and placed at the next call, as its order kept them.
    pub deferred_placed: u64,
    /// Of the jobs admitted unplaced, those of calls where some units free at `now` covered
    /// the least demand of the rest: their requested times told that none could start.
    pub deferred_by_length: u64,
}

impl Default for Conservative {
    fn default() -> Self {
        Conservative::new(Box::new(Submission))
    }
}

impl Conservative {
    pub fn new(order: Box<dyn QueueOrder>) -> Self {
        Conservative {
            order,
            walk: Walk::default(),
            previous_walk: Walk::default(),
            tracker: OrderTracker::default(),
            reference: false,
            reference_slots: HashMap::new(),
            profile: Profile::default(),
            synced: false,
            plan: Vec::new(),
            next_seq: 0,
            next_start: Time::MAX,
            windows: Vec::new(),
            unsettled: false,
            reorders: 0,
            last_no_fit: LastNoFit::default(),
            rises: Rises::default(),
            fresh: false,
            rose_until: None,
            prefix_profile: Profile::default(),
            deferred: 0,
            deferred_at: 0,
            least_demands: LeastDemands::default(),
            ordered: OrderedCalls::default(),
        }
    }

    /// The straightforward formulation: the same decisions, recomputed from scratch at every
    /// call (the property tests compare the two).
    pub fn reference() -> Self {
        Conservative::reference_over(Box::new(Submission))
    }

    /// The straightforward formulation over `order`.
    pub fn reference_over(order: Box<dyn QueueOrder>) -> Self {
        Conservative {
            reference: true,
            ..Conservative::new(order)
        }
    }

    /// How the calls over a reordering queue were planned so far.
    pub fn ordered_calls(&self) -> OrderedCalls {
        self.ordered
    }

    /// The reserved start of a queued job after the last call, if it has one.
    pub fn reservation(&self, job: u32) -> Option<Time> {
        if self.reference {
            return self.reference_slots.get(&job).copied();
        }
        let held = if self.order.is_submission() {
            // The plan is in queue order, which is submission order (the queue keeps it so
            // even when limits insert a held job).
            let i = self.plan.binary_search_by_key(&job, |p| p.job).ok()?;
            self.plan[i].held
        } else {
            let pos = self.plan.iter().position(|p| p.job == job)?;
            let unplaced = self.plan.len() - self.deferred;
            if pos >= unplaced {
                return self.deferred_slot(pos);
            }
            self.plan[pos].held
        };
        Some(held).filter(|&s| s != NONE && s != STARTED)
    }

    /// The slot the deferred job at plan position `pos` will be given if the next call places
    /// the deferred jobs: the same placements, on a copy of the profile.
    fn deferred_slot(&self, pos: usize) -> Option<Time> {
        let mut profile = self.profile.clone();
        for p in &self.plan[self.plan.len() - self.deferred..=pos] {
            let start = profile.place(self.deferred_at, p.duration, p.demand())?;
            if p.job == self.plan[pos].job {
                return Some(start);
            }
        }
        None
    }

    /// Places the jobs the previous call deferred, as that call would have: in plan order, at
    /// its time, over the profile as it left it (untouched since). None of them starts then.
    fn place_deferred(&mut self) {
        let at = self.deferred_at;
        let mut starts = Vec::new();
        for pos in self.plan.len() - self.deferred..self.plan.len() {
            let p = self.plan[pos];
            let start = self.place(at, p.duration, p.demand());
            self.settle(at, pos, start, &mut starts);
        }
        debug_assert!(
            starts.is_empty(),
            "a deferred job could start when deferred"
        );
        self.ordered.deferred_placed += self.deferred as u64;
        self.deferred = 0;
    }

    /// Takes away the reservations of the planned jobs that begin by `until`, and brings
    /// [`Self::next_start`] up to date from the others. Returns the (job, queue position,
    /// start) of those taken, by start.
    fn take_starting(&mut self, until: Time) -> Vec<(u32, usize, Time)> {
        let mut taken = Vec::new();
        let mut next = Time::MAX;
        for (pos, p) in self.plan.iter_mut().enumerate() {
            let s = p.held;
            if s == NONE {
                continue;
            }
            if s <= until {
                p.held = NONE;
                taken.push((p.job, pos, s));
            } else {
                next = next.min(s);
            }
        }
        self.next_start = next;
        // By start, then job: the order in which the jobs are started (and stale ones given back).
        taken.sort_unstable_by_key(|&(job, _, s)| (s, job));
        taken
    }

    /// Brings the profile up to `view` (see the module documentation). Returns whether the queue
    /// must be compressed.
    fn sync(&mut self, view: &View<'_>) -> bool {
        let now = view.now;
        let mut compress = self.unsettled;
        // A running job past its requested time (overrun: continue) is predicted to end one
        // second from now at every call: rebuild rather than follow it.
        let overrunning = view
            .running
            .iter()
            .next()
            .is_some_and(|r| r.expected_end <= now);
        let rebuild = !self.synced || overrunning;
        // Whether capacity only rose since the previous pass, over `[now, risen_until)`
        // (besides the rises that pass recorded).
        let mut only_rises = !rebuild;
        let mut risen_until = now;
        if rebuild {
            view.committed_profile(&mut self.profile);
            for p in &self.plan {
                if p.held != NONE && p.held >= now {
                    self.profile
                        .reserve(p.held, p.held + p.duration, p.demand());
                }
            }
            self.windows.clear();
            self.windows.extend_from_slice(view.reservations);
            self.synced = !overrunning;
            compress = true;
        } else {
            self.profile.advance(now);
            for r in view.ended {
                if r.expected_end > now {
                    self.profile.unreserve(now, r.expected_end, r.demand);
                    risen_until = risen_until.max(r.expected_end);
                    compress = true;
                }
            }
            if self.windows.as_slice() != view.reservations {
                for w in granted_since(&self.windows, view.reservations) {
                    self.profile
                        .reserve(w.start, w.end, ResourceVec::units(w.width));
                    only_rises = false;
                    compress = true;
                }
                self.windows.clear();
                self.windows.extend_from_slice(view.reservations);
            }
        }
        // Stale reservations (begun between two periodic calls): given back; placed afresh.
        if self.next_start < now {
            for (_, pos, start) in self.take_starting(now - 1) {
                if !rebuild {
                    let p = self.plan[pos];
                    self.profile
                        .unreserve(start, start + p.duration, p.demand());
                }
                only_rises = false;
                compress = true;
            }
        }
        self.rose_until = only_rises.then_some(risen_until);
        let at_call = only_rises.then(|| self.profile.max_free(now, risen_until));
        self.rises.sync(at_call);
        compress
    }

    /// Gives a job asking `demand` for `d` seconds its earliest slot in the profile and holds
    /// it; `None` if it can never fit.
    fn place(&mut self, now: Time, d: Time, demand: ResourceVec) -> Option<Time> {
        let units = demand.unit_count();
        let from = now.max(self.last_no_fit.earliest(units, d, Time::MAX));
        let start = self.profile.place(from, d, demand)?;
        self.last_no_fit.note(NoFit {
            units,
            duration: d,
            before: start,
            clip: Time::MAX,
        });
        Some(start)
    }

    /// Appends a job that arrived since the last call to the plan, without a reservation yet.
    fn admit(&mut self, job: &QueuedJob) {
        self.plan.push(Planned {
            job: job.job,
            seq: self.next_seq,
            units: job.demand.unit_count(),
            duration: job.requested_time,
            held: NONE,
        });
        self.next_seq += 1;
    }

    /// Records the outcome of planning the job at queue position `pos` of the plan.
    fn settle(&mut self, now: Time, pos: usize, start: Option<Time>, starts: &mut Vec<usize>) {
        self.plan[pos].held = match start {
            Some(s) if s == now => {
                starts.push(pos);
                STARTED
            }
            Some(s) => {
                self.next_start = self.next_start.min(s);
                s
            }
            None => {
                // Cannot fit the machine at all (the engine never queues such jobs): try again
                // at the next call, as the reference does.
                self.unsettled = true;
                NONE
            }
        };
    }

    /// Compresses the whole queue in submission order.
    fn compress(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        self.last_no_fit.clear(now);
        // With no negative capacity anywhere, every held slot still fits, so a job's new slot is
        // never later than its old one and `fits_before` tells exactly whether it moves.
        let consistent = self.profile.min_free() >= 0;
        let mut moved = false;
        self.rises.begin_pass(consistent);
        // Every queued job is visited: the bound is recomputed from the slots they keep or take.
        self.next_start = Time::MAX;
        let planned = self.plan.len();
        for pos in 0..planned {
            let Planned {
                seq,
                units,
                duration: d,
                held,
                ..
            } = self.plan[pos];
            let demand = ResourceVec::units(units);
            // Where the job moves, when the search that tells whether it can move finds it.
            let mut earlier = None;
            if held != NONE {
                let may_move = consistent && self.rises.may_move(seq, held, units);
                self.ordered.rise_checks += u64::from(consistent && !may_move);
                if may_move {
                    let from = now.max(self.last_no_fit.earliest(units, d, held));
                    // Often the last search already reaches the slot: no search at all.
                    if from < held {
                        earlier = self.profile.first_fit_before(from, held, d, demand);
                    }
                    self.last_no_fit.note(NoFit {
                        units,
                        duration: d,
                        before: earlier.unwrap_or(held),
                        clip: held,
                    });
                }
                if consistent && earlier.is_none() {
                    if held == now {
                        starts.push(pos);
                        self.plan[pos].held = STARTED;
                    } else {
                        self.next_start = self.next_start.min(held);
                    }
                    continue;
                }
                if let Some(t) = earlier {
                    // One update of the profile: only where the old and new slots differ.
                    let risen = self.profile.shift(held, t, d, demand);
                    self.rises.moved(seq, held.max(t + d), risen);
                } else {
                    if !consistent {
                        // Giving the slot back raises capacity from `held` on before the job is
                        // placed again (possibly later).
                        self.last_no_fit.rise(held);
                    }
                    self.profile.unreserve(held, held + d, demand);
                }
            }
            let start = match earlier {
                Some(t) => Some(t),
                None => self.place(now, d, demand),
            };
            if held != NONE && start != Some(held) {
                moved = true;
                // The capacity the job gave back and did not take again: after its new slot
                // when it moved earlier.
                if let Some(t) = start.filter(|&t| t < held) {
                    self.last_no_fit.rise(held.max(t + d));
                }
            }
            self.settle(now, pos, start, starts);
        }
        self.unsettled |= moved;
        self.plan_arrivals(view, starts);
    }

    /// Plans the jobs of this call's walk after the plan (the arrivals since the last call, in
    /// submission order), after all others.
    ///
    /// Over a reordering queue, once none of the remaining jobs can start now (each asks more
    /// than the least free amount over the first seconds of its class of requested time:
    /// [`LeastDemands`]), they are admitted unplaced (`deferred`), to be placed by the next
    /// call if its order keeps them and dropped if it changes before them (module
    /// documentation, "Over a reordering queue").
    fn plan_arrivals(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        let walk = std::mem::take(&mut self.walk);
        let mut least = std::mem::take(&mut self.least_demands);
        let reordering = !self.order.is_submission();
        if reordering {
            least.clear();
            let first = self.plan.len();
            walk.for_each_back(view.queue, first, |k, job| {
                least.note_back(k - first, job.requested_time, job.demand.unit_count());
            });
        }
        debug_assert_eq!(self.deferred, 0);
        let mut by_length = false;
        for (i, job) in walk.jobs_from(view.queue, self.plan.len()).enumerate() {
            self.admit(&job);
            if self.deferred > 0 || (reordering && !least.may_start_now(i, now, &self.profile)) {
                if self.deferred == 0 {
                    by_length = least.least() <= self.profile.free_at(now);
                }
                self.deferred += 1;
                continue;
            }
            let start = self.place(now, job.requested_time, job.demand);
            if let Some(t) = start {
                least.held(t);
            }
            self.settle(now, self.plan.len() - 1, start, starts);
        }
        if by_length {
            self.ordered.deferred_by_length += self.deferred as u64;
        }
        self.deferred_at = now;
        self.least_demands = least;
        self.walk = walk;
    }

    /// At a fixed point: starts the jobs whose reservation begins now and plans the new ones.
    fn extend(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        self.last_no_fit.clear(now);
        self.rises.at_fixed_point();
        if self.next_start <= now {
            let taken = self.take_starting(now);
            for (_, pos, _) in taken {
                starts.push(pos);
                self.plan[pos].held = STARTED;
            }
        }
        self.plan_arrivals(view, starts);
    }

    /// The straightforward formulation (the module documentation's reference).
    fn schedule_reference(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        self.walk
            .prepare(&mut *self.order, now, view.queue, view.jobs);
        if !self.walk.is_identity() && self.tracker.changed_jobs(self.walk.jobs_in_order()) {
            self.reference_slots.clear();
        }
        self.plan_reference(view, starts);
    }

    /// The reference's planning, in the order `self.walk` holds, from the reservations in
    /// `self.reference_slots`: the profile rebuilt and the whole queue compressed.
    fn plan_reference(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        // Running jobs and reservations first: queued jobs are planned around both.
        view.committed_profile(&mut self.profile);
        // Existing reservations hold their place while earlier jobs are compressed. One already
        // in the past (missed between two periodic calls) is stale: that job is placed afresh.
        // By queue position: the walk may be re-sorted past its first job that cannot start.
        let mut held = Vec::with_capacity(view.queue.len());
        for job in view.queue.iter() {
            let slot = self
                .reference_slots
                .get(&job.job)
                .copied()
                .filter(|&s| s >= now);
            if let Some(s) = slot {
                self.profile.reserve(s, s + job.requested_time, job.demand);
            }
            held.push(slot);
        }
        let mut next = HashMap::with_capacity(view.queue.len());
        let mut blocked_yet = false;
        for k in 0..self.walk.len() {
            let (pos, job) = self.walk.at(view.queue, k);
            if let Some(s) = held[pos] {
                self.profile
                    .unreserve(s, s + job.requested_time, job.demand);
            }
            let Some(start) = self
                .profile
                .earliest_fit(now, job.requested_time, job.demand)
            else {
                continue; // cannot fit the machine at all; the engine never queues such jobs
            };
            self.profile
                .reserve(start, start + job.requested_time, job.demand);
            if start == now {
                starts.push(pos);
            } else {
                next.insert(job.job, start);
                // The jobs after the first that cannot start are planned in the candidate
                // order (`backfill_order`).
                if !std::mem::replace(&mut blocked_yet, true) {
                    self.walk.candidates_after(k);
                }
            }
        }
        self.reference_slots = next;
    }

    /// Over a reordering queue (module documentation, "Over a reordering queue").
    fn schedule_ordered(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        std::mem::swap(&mut self.walk, &mut self.previous_walk);
        // The jobs in order, without their positions: those of the jobs that start are looked up.
        self.walk
            .prepare_jobs(&mut *self.order, now, view.queue, view.jobs);
        let first = starts.len();
        if view.queue.reorders() != self.reorders {
            // The reference reads positions throughout.
            self.walk.materialise(view.queue);
            if self.deferred > 0 {
                self.place_deferred();
            }
            // Jobs left the queue without starting, or this scheduler's starts were not all
            // applied (queue limits, `reorder: start`): the plan no longer lines up with the
            // previous order. The reference decides this call from the reservations held.
            self.reorders = view.queue.reorders();
            self.reference_slots.clear();
            // Recorded first, to compare this call's order with (the tracker ignores the jobs
            // that left).
            self.tracker
                .changed_jobs(self.previous_walk.jobs_in_order());
            if !self.tracker.changed_jobs(self.walk.jobs_in_order()) {
                let held = self.plan.iter().filter(|p| p.held != NONE);
                self.reference_slots.extend(held.map(|p| (p.job, p.held)));
            }
            self.plan_reference(view, starts);
            self.adopt_reference(view, starts, first);
            return;
        }
        // The plan is the previous order's jobs still waiting, in that order: the order is
        // unchanged when it lists them first, then the arrivals in submission order.
        let (same, changed) = {
            let order = self.walk.jobs_in_order();
            let same = self.plan.iter().zip(order.clone());
            let same = same.take_while(|(p, job)| p.job == *job).count();
            (
                same,
                same < self.plan.len() || !order.skip(same).is_sorted(),
            )
        };
        if self.deferred > 0 {
            if changed {
                // Every path below keeps at most the plan's placed jobs (`keep` stops at the
                // first unplaced one) and places the rest afresh.
                self.ordered.deferred_dropped += self.deferred as u64;
                self.deferred = 0;
            } else {
                self.place_deferred();
            }
        }
        let keep = if self.fresh {
            self.plan[..same]
                .iter()
                .take_while(|p| p.held != NONE)
                .count()
        } else {
            0
        };
        if changed && keep == 0 {
            self.plan_afresh(view, starts);
        } else {
            let unsettled = self.unsettled;
            let compress = self.sync(view);
            self.unsettled = false;
            if changed {
                let keep = match self.rose_until {
                    _ if !compress => keep,
                    // Capacity rose since the plan was made, by early completions alone: the
                    // prefix keeps the slots the rise cannot make earlier.
                    Some(until) if !unsettled => self.unmoved_prefix(view, keep, until),
                    // Capacity changed otherwise: the prefix's fresh slots may differ from the
                    // ones it holds.
                    _ => 0,
                };
                if keep == 0 {
                    self.plan_afresh(view, starts);
                } else {
                    if compress {
                        self.ordered.kept_after_rise += 1;
                    }
                    self.keep_prefix(view, keep, starts);
                }
            } else {
                self.ordered.unchanged += 1;
                if compress {
                    self.compress(view, starts);
                    self.fresh = false;
                } else {
                    self.extend(view, starts);
                }
            }
        }
        // The plan is in this call's order: plan index k is the walk's k-th job. Starts are
        // given in that order, as the reference gives them (queue limits and `reorder: start`
        // apply a prefix of them).
        let ours = &mut starts[first..];
        if !ours.is_empty() {
            ours.sort_unstable();
            for s in ours.iter_mut() {
                *s = self.walk.pos_in(view.queue, *s);
            }
            self.plan.retain(|p| p.held != STARTED);
        }
        debug_assert_eq!(self.plan.len(), view.queue.len() - (starts.len() - first));
    }

    /// The order changed after the plan's first `keep` jobs, whose slots are those of this
    /// call's fresh plan (capacity did not rise since the plan was made, or
    /// [`Conservative::unmoved_prefix`] found them unmoved by the rise): they keep them, every
    /// later reservation is given back and the rest of the queue is planned in the new order
    /// after them.
    fn keep_prefix(&mut self, view: &View<'_>, keep: usize, starts: &mut Vec<usize>) {
        let now = view.now;
        self.give_back_after(view, keep);
        self.plan.truncate(keep);
        for (k, p) in (0..).zip(&mut self.plan) {
            p.seq = k;
        }
        self.next_seq = keep as u32;
        // What rose since the kept jobs were last checked is not recorded: the next
        // compression checks every job.
        self.rises.forget();
        self.last_no_fit.clear(now);
        // Kept jobs whose reservation begins now start (and `next_start` forgets the others').
        for (_, pos, _) in self.take_starting(now) {
            starts.push(pos);
            self.plan[pos].held = STARTED;
        }
        self.plan_arrivals(view, starts);
        self.ordered.kept_prefix += 1;
        self.ordered.kept_jobs += keep as u64;
    }

    /// Gives back the reservations of the plan's jobs after its first `keep`: one by one, or,
    /// when they outnumber a few times the changes of the committed work and the prefix's
    /// holds, by rebuilding the profile from those (the same function: the profile is the
    /// committed work and every held reservation, as the reference rebuilds it). A change
    /// costs a rebuild about a quarter of what an update costs (sorting and appending against
    /// locating, splitting and merging; CTC-SP2, BENCHMARKS.md).
    fn give_back_after(&mut self, view: &View<'_>, keep: usize) {
        let given_back = self.plan[keep..].iter().filter(|p| p.held != NONE);
        let changes = view.running.len() + view.reservations.len() + keep;
        if 4 * given_back.count() > changes {
            let kept = self.plan[..keep].iter().filter(|p| p.held != NONE);
            let holds = kept.map(|p| (p.held, p.held + p.duration, p.demand()));
            view.committed_profile_with(&mut self.profile, holds);
            self.ordered.prefix_rebuilds += 1;
            return;
        }
        for p in &self.plan[keep..] {
            if p.held != NONE {
                self.profile
                    .unreserve(p.held, p.held + p.duration, p.demand());
            }
        }
    }

    /// How many of the plan's first `keep` jobs (a fresh plan, in this call's order) hold their
    /// fresh slot still, now that capacity rose since the plan was made, by early completions
    /// alone, over `[now, until)` (module documentation, "Over a reordering queue"). Job k's
    /// fresh slot is its earliest fit over the committed work and the k jobs before it; when
    /// those kept theirs, that profile is the one its slot was the earliest fit in, plus the
    /// rise. A start that fits now and did not then lies where capacity rose, so before
    /// `until`, and before the job's slot: a job that has no whole window starting in
    /// `[now, min(slot, until))` over that profile keeps its slot.
    fn unmoved_prefix(&mut self, view: &View<'_>, keep: usize, until: Time) -> usize {
        let now = view.now;
        let prefix = &mut self.prefix_profile;
        view.committed_profile(prefix);
        for (k, p) in self.plan[..keep].iter().enumerate() {
            let before = p.held.min(until);
            if before > now
                && prefix
                    .first_full_fit(now, before - 1, p.duration, p.demand())
                    .is_some()
            {
                return k;
            }
            // A hold from `until` on is left out: the profile then has more capacity than the
            // next jobs' fresh one only from `until` on, so a check that finds no window in it
            // finds none in theirs either.
            if p.held < until {
                prefix.reserve(p.held, p.held + p.duration, p.demand());
            }
        }
        keep
    }

    /// The order changed: the queue is planned afresh in it, as the reference does — each job
    /// in order at its earliest slot over the committed work and the jobs before it, as
    /// arrivals are placed after a plan ([`NoFit`] included: capacity only shrinks as the
    /// jobs are placed).
    fn plan_afresh(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let now = view.now;
        view.committed_profile(&mut self.profile);
        self.windows.clear();
        self.windows.extend_from_slice(view.reservations);
        self.synced = true;
        self.plan.clear();
        self.next_seq = 0;
        self.next_start = Time::MAX;
        self.unsettled = false;
        self.last_no_fit.clear(now);
        self.plan_arrivals(view, starts);
        // A running job past its requested time is predicted to end one second from now, at
        // every call: the plan is not fresh at the next.
        let overrunning = view
            .running
            .iter()
            .next()
            .is_some_and(|r| r.expected_end <= now);
        self.fresh = !overrunning;
        self.rises.forget();
        self.ordered.afresh += 1;
    }

    /// Takes the reference's plan of this call as the incremental plan: its profile is the
    /// committed work with every reservation held, the one the incremental path keeps. After a
    /// compression the plan need not be a fixed point: the next call compresses.
    fn adopt_reference(&mut self, view: &View<'_>, starts: &[usize], first: usize) {
        self.plan.clear();
        let mut next = Time::MAX;
        // The reference gives its starts in walk order.
        let mut started = starts[first..].iter().peekable();
        for (pos, q) in self.walk.iter_from(view.queue, 0) {
            if started.next_if_eq(&&pos).is_some() {
                continue;
            }
            let held = self.reference_slots.get(&q.job).copied().unwrap_or(NONE);
            if held != NONE {
                next = next.min(held);
            }
            self.plan.push(Planned {
                job: q.job,
                seq: self.plan.len() as u32,
                units: q.demand.unit_count(),
                duration: q.requested_time,
                held,
            });
        }
        debug_assert!(started.next().is_none(), "starts in walk order");
        self.next_seq = self.plan.len() as u32;
        self.reference_slots.clear();
        self.next_start = next;
        self.windows.clear();
        self.windows.extend_from_slice(view.reservations);
        self.synced = true;
        self.unsettled = true;
        self.fresh = false;
        self.rises.forget();
        self.ordered.afresh += 1;
    }

    /// Main's incremental formulation (submission order only).
    fn schedule_incremental(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        if view.queue.reorders() != self.reorders {
            // A job entered before planned ones (queue limits): plan the queue afresh.
            let order = std::mem::replace(&mut self.order, Box::new(Submission));
            *self = Conservative {
                reorders: view.queue.reorders(),
                ..Conservative::new(order)
            };
        }
        self.walk
            .prepare(&mut *self.order, view.now, view.queue, view.jobs);
        let compress = self.sync(view);
        self.unsettled = false;
        let first = starts.len();
        if compress {
            self.compress(view, starts);
        } else {
            self.extend(view, starts);
        }
        // The jobs that start leave the queue, and the plan with them.
        if starts.len() > first {
            self.plan.retain(|p| p.held != STARTED);
        }
        debug_assert_eq!(self.plan.len(), view.queue.len() - (starts.len() - first));
    }
}

/// The windows of `now` (sorted) that `before` (sorted) does not hold, counted as a multiset:
/// two reservations shifted to the same window are two windows, and the second must be held in
/// the profile too although an equal one was already there. Windows that left the list have
/// ended (the engine drops a window when it ends), so only additions matter.
fn granted_since<'a>(
    before: &'a [ReservedWindow],
    now: &'a [ReservedWindow],
) -> impl Iterator<Item = &'a ReservedWindow> + 'a {
    let mut old = before.iter().peekable();
    now.iter().filter(move |w| {
        while old.next_if(|o| *o < *w).is_some() {}
        old.next_if(|o| *o == *w).is_none()
    })
}

impl Scheduler for Conservative {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        report_ended(&mut *self.order, view.completed);
        if self.reference {
            self.schedule_reference(view, starts);
        } else if self.order.is_submission() {
            self.schedule_incremental(view, starts);
        } else if self.order.candidates().is_queue() {
            self.schedule_ordered(view, starts);
        } else {
            // Backfill candidates re-sorted after the first job that cannot start: the
            // compression's order is not the plan's (the straightforward formulation).
            self.schedule_reference(view, starts);
        }
    }

    fn started(&mut self, now: Time, job: u32) {
        self.order.started(now, job, 0);
    }
}
