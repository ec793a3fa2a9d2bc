//! Queue orders: the order in which a backfilling rule considers the waiting jobs — one of the
//! three components of a policy (order × backfilling rule × placement; docs/semantics.md,
//! "Queue order").
//!
//! - [`Submission`] (`fcfs`): submission order, today's and pyss's order.
//! - [`FairshareOrder`] (`fairshare`): users by fairshare factor, highest first (Klusáček &
//!   Rudová; AleaNG's `FairshareFactorAndJobIDComparator`); a user's jobs in submission order.
//! - [`PriorityOrder`] (`priority`): a weighted sum of age, fairshare factor, size and queue
//!   priority, highest first (Maui/Slurm multifactor).
//! - [`ShortestFirst`] (`sjf`): shortest requested time first.
//!
//! With queues of different priorities ([`crate::sim::limits`]), queue priority composes with any
//! order: as the leading key ([`Tiered`], the default) or, in `priority` with
//! `queue_tiers: false`, as its weighted queue factor ([`OrderSpec::build_limited`]).
//!
//! Every tie is broken by submission order, so an order that ranks every job equally *is* FCFS.
//! Priorities are recomputed at every scheduler call, or at the first call of each period of
//! [`Reorder::Every`] seconds of trace time (fairshare daemons recompute periodically: AleaNG's
//! `fairshare_update_interval`, Slurm's `PriorityCalcPeriod`). Whatever the order, *backfilled*
//! keeps its definition (a job starting while an earlier-submitted one waits).
//!
//! An order may keep state about the run (the fairshare ledger): the policy that owns it tells it
//! which jobs ended since its last call ([`QueueOrder::ended`], before asking for the order) and
//! which jobs it started ([`QueueOrder::started`], after deciding) — the engine applies every
//! decision of a call or fails the run, so these are exactly the starts.

mod candidates;
mod fairshare;
mod fcfs;
mod priority;
mod runs;
mod sjf;
mod tiers;
mod user_queues;

pub use candidates::{CandidateOrder, WithCandidates};
pub use fairshare::FairshareOrder;
pub use fcfs::Submission;
pub use priority::{PriorityOrder, PriorityWeights};
pub use runs::{NO_OWNER, OrderRuns, Run, RunJobs, Runs};
pub use sjf::ShortestFirst;
pub use tiers::Tiered;
pub use user_queues::UserQueues;

use super::QueuedJob;
use super::node::Completed;
use crate::sim::compat::Compat;
use crate::sim::fairshare::{FairshareError, FairshareSpec, FairshareState};
use crate::sim::job::{Job, Time, Workload};
use crate::sim::machine::Machine;
use crate::sim::queue::{self, Queue};

/// Produces the positions of `queue` (waiting jobs in submission order) in the order a
/// backfilling rule should consider them; every position exactly once.
pub trait QueueOrder {
    fn order(&mut self, now: Time, queue: &Queue, jobs: &[Job], out: &mut Vec<usize>);

    /// This call's order written as the jobs themselves, not their queue positions: true if the
    /// order writes it so (false leaves `out` alone; the rule asks [`QueueOrder::order`]). An
    /// order that keeps the waiting jobs between calls (fairshare's [`UserQueues`]) writes them
    /// from there, so a rule that reads every job in order and the positions of few (pool
    /// conservative: those it starts) pays neither a position per job nor a copy of the queue.
    fn order_jobs(
        &mut self,
        _now: Time,
        _queue: &Queue,
        _jobs: &[Job],
        _out: &mut Vec<QueuedJob>,
    ) -> bool {
        false
    }

    /// This call's order as runs of jobs the order keeps by owner ([`OrderRuns`]), if it keeps
    /// them so (fairshare's [`UserQueues`]): read where they are kept, no copy of the queue per
    /// call. For a rule that reads every job's index and little else of most (node-level EASY:
    /// the head, then jobs passed over by request).
    fn order_runs(&mut self, _now: Time, _queue: &Queue, _jobs: &[Job]) -> Option<OrderRuns<'_>> {
        None
    }

    /// True when [`QueueOrder::order`] always gives `0..queue.len()`: rules may then walk the
    /// queue directly (the fast path) and keep plans between calls.
    fn is_submission(&self) -> bool {
        false
    }

    /// Begins a lazy pass over `queue` in this call's order, read job by job with
    /// [`QueueOrder::next`] (through [`Ordered::Lazy`]), so that a rule that stops early pays
    /// only for what it reads; false when the order only writes whole orders
    /// ([`QueueOrder::order`]). The jobs come in the order `order` would write.
    fn begin(&mut self, _now: Time, _queue: &Queue, _jobs: &[Job]) -> bool {
        false
    }

    /// The next job of the pass [`QueueOrder::begin`] began that `within` admits, without its
    /// queue position; the jobs passed over are jobs `within` does not admit. A rule that reads
    /// many jobs and starts few (EASY's backfilling) finds the positions of those it starts
    /// ([`Queue::position_of`], O(log queue)) rather than of every job it reads, and the order
    /// may pass over jobs that cannot start without handing each over.
    fn next_waiting(&mut self, _within: Within) -> Option<QueuedJob> {
        None
    }

    /// The next job of the pass [`QueueOrder::begin`] began, with its queue position; `queue`
    /// is the queue the pass began on.
    fn next(&mut self, queue: &Queue) -> Option<(usize, QueuedJob)> {
        let q = self.next_waiting(Within::ANY)?;
        let pos = queue
            .position_of(q.job)
            .expect("the pass reads waiting jobs only");
        Some((pos, q))
    }

    /// The policy started workload job `job` at `now` on class `class` (0 on a uniform machine).
    fn started(&mut self, _now: Time, _job: u32, _class: u32) {}

    /// Workload job `job` ended at `end` (reported before the next [`QueueOrder::order`], in the
    /// order jobs ended).
    fn ended(&mut self, _job: u32, _end: Time) {}

    /// The order in which backfilling offers the jobs after the first one that cannot start
    /// ([`CandidateOrder`]; the queue order itself unless [`WithCandidates`] says otherwise).
    fn candidates(&self) -> CandidateOrder {
        CandidateOrder::Queue
    }
}

/// Which jobs a lazy pass ([`QueueOrder::next_waiting`]) hands over: those of at most `units`
/// allocation units that request at most `time` seconds or take at most `extra` units — the
/// jobs EASY's backfilling may start (units free now; ends by the shadow time or fits in the
/// extra units).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Within {
    pub units: u64,
    pub time: Time,
    pub extra: u64,
}

impl Within {
    /// Every job.
    pub const ANY: Within = Within {
        units: u64::MAX,
        time: Time::MAX,
        extra: u64::MAX,
    };

    /// Whether a job of `units` units requesting `time` seconds is admitted.
    #[inline]
    pub fn admits(&self, units: u64, time: Time) -> bool {
        units <= self.units && (time <= self.time || units <= self.extra)
    }
}

/// Tells `order` about the jobs that ended since the last call.
pub fn report_ended(order: &mut dyn QueueOrder, completed: &[Completed]) {
    for c in completed {
        order.ended(c.job, c.end);
    }
}

/// The waiting jobs with their queue positions, in the order of a [`QueueOrder`], as a [`Walk`]
/// reads them: lazily from the queue in submission order (a rule that stops early pays only for
/// what it reads), or through the positions the order wrote.
pub enum Ordered<'a> {
    Submission(std::iter::Zip<std::ops::RangeFrom<usize>, queue::Iter<'a>>),
    /// Positions into a copy of the queue in submission order ([`Walk`]): `queue[pos]` finds a
    /// slot in O(log n) (the queue marks started jobs gone), which a walk over the whole queue
    /// in another order paid at every job (19 % of fairshare-ordered EASY on SDSC-SP2, 43 % of
    /// node-level EASY's on 500 nodes of Curie's shape).
    Copied(&'a [QueuedJob], std::slice::Iter<'a, usize>),
    /// Pulled from the order job by job ([`QueueOrder::begin`]).
    Lazy(&'a mut dyn QueueOrder, &'a Queue),
}

impl Iterator for Ordered<'_> {
    type Item = (usize, QueuedJob);

    // Forced: the rules' queue walks are their hottest loops, and a plain hint left this out
    // of line in node-level EASY after unrelated changes elsewhere in the crate (session 9).
    #[inline(always)]
    fn next(&mut self) -> Option<(usize, QueuedJob)> {
        match self {
            Ordered::Submission(it) => it.next().map(|(pos, q)| (pos, *q)),
            Ordered::Copied(jobs, it) => it.next().map(|&pos| (pos, jobs[pos])),
            Ordered::Lazy(order, queue) => order.next(queue),
        }
    }
}

/// The waiting jobs in the order of a [`Walk`], without their queue positions
/// ([`Walk::jobs_from`]): read from the queue in submission order, through the positions the
/// order wrote, or from the jobs it wrote ([`Walk::prepare_jobs`]).
#[derive(Clone)]
pub enum InOrder<'a> {
    Submission(queue::Iter<'a>),
    Copied(&'a [QueuedJob], std::slice::Iter<'a, usize>),
    Written(std::slice::Iter<'a, QueuedJob>),
}

impl Iterator for InOrder<'_> {
    type Item = QueuedJob;

    #[inline]
    fn next(&mut self) -> Option<QueuedJob> {
        match self {
            InOrder::Submission(it) => it.next().copied(),
            InOrder::Copied(jobs, it) => it.next().map(|&pos| jobs[pos]),
            InOrder::Written(it) => it.next().copied(),
        }
    }
}

/// The queue as a rule walks it: the k-th job in order is at queue position [`Walk::pos`]`(k)`.
/// Submission order is walked directly, nothing materialised (the classic policies' fast path).
#[derive(Clone, Debug, Default)]
pub struct Walk {
    identity: bool,
    /// The order is read job by job ([`Walk::prepare_lazily`]): nothing materialised.
    lazy: bool,
    /// The order of backfill candidates ([`Walk::candidates_after`]).
    candidates: CandidateOrder,
    len: usize,
    positions: Vec<usize>,
    /// The queue's jobs by position, copied in one pass when the order is not submission order
    /// (the order itself already reads the whole queue): walking then reads them in O(1).
    jobs: Vec<QueuedJob>,
    /// The order was written as the jobs themselves, in `in_order` ([`Walk::prepare_jobs`]):
    /// neither `positions` nor `jobs` is this call's.
    by_job: bool,
    in_order: Vec<QueuedJob>,
}

impl Walk {
    /// Asks `order` for this call's order of `queue`.
    pub fn prepare(&mut self, order: &mut dyn QueueOrder, now: Time, queue: &Queue, jobs: &[Job]) {
        self.lazy = false;
        self.by_job = false;
        self.len = queue.len();
        self.identity = order.is_submission();
        self.candidates = order.candidates();
        if !self.identity {
            order.order(now, queue, jobs, &mut self.positions);
            debug_assert_eq!(self.positions.len(), queue.len());
            self.jobs.clear();
            self.jobs.extend(queue.iter().copied());
        }
    }

    /// Like [`Walk::prepare`], but lets an order that can write the jobs themselves in order
    /// ([`QueueOrder::order_jobs`]) do so: for rules that read every job in order
    /// ([`Walk::jobs_from`], [`Walk::jobs_in_order`]) and the positions of few
    /// ([`Walk::pos_in`]), or all of them after [`Walk::materialise`]. Fairshare order then
    /// costs no pass over the queue for the jobs' positions and no copy of it (session 26: 10 %
    /// of pool conservative over fairshare order on SDSC-SP2, BENCHMARKS.md).
    pub fn prepare_jobs(
        &mut self,
        order: &mut dyn QueueOrder,
        now: Time,
        queue: &Queue,
        jobs: &[Job],
    ) {
        if !order.is_submission() && order.order_jobs(now, queue, jobs, &mut self.in_order) {
            debug_assert_eq!(self.in_order.len(), queue.len());
            self.unmaterialised(order, queue, false, true);
        } else {
            self.prepare(order, now, queue, jobs);
        }
    }

    /// A walk of `queue` in `order` that holds neither positions nor a copy of the queue: read
    /// lazily through the order ([`Walk::prepare_lazily`]) or from the jobs it wrote
    /// ([`Walk::prepare_jobs`]).
    fn unmaterialised(&mut self, order: &dyn QueueOrder, queue: &Queue, lazy: bool, by_job: bool) {
        self.lazy = lazy;
        self.by_job = by_job;
        self.identity = false;
        self.len = queue.len();
        self.candidates = order.candidates();
        debug_assert!(
            self.candidates.is_queue(),
            "candidate orders materialise the walk"
        );
    }

    /// Gives a walk prepared by [`Walk::prepare_jobs`] its positions and copy of `queue` (the
    /// queue it was prepared on), as [`Walk::prepare`] would have: O(queue × log queue), for
    /// the rare calls that read positions throughout.
    pub fn materialise(&mut self, queue: &Queue) {
        if !self.by_job {
            return;
        }
        self.positions.clear();
        self.positions.extend(self.in_order.iter().map(|q| {
            queue
                .position_of(q.job)
                .expect("the order holds waiting jobs only")
        }));
        self.jobs.clear();
        self.jobs.extend(queue.iter().copied());
        self.by_job = false;
    }

    /// Like [`Walk::prepare`], but lets an order that can be read lazily begin its pass
    /// instead of writing it whole: for rules that read the walk only through [`Walk::iter`]
    /// or read the order themselves ([`Walk::is_lazy`]).
    pub fn prepare_lazily(
        &mut self,
        order: &mut dyn QueueOrder,
        now: Time,
        queue: &Queue,
        jobs: &[Job],
    ) {
        if !order.is_submission() && order.begin(now, queue, jobs) {
            self.unmaterialised(order, queue, true, false);
        } else {
            self.prepare(order, now, queue, jobs);
        }
    }

    /// The jobs of `queue` (the queue this walk was prepared on) with their positions, in
    /// order; `order` is the order it was prepared with (read from when lazy).
    pub fn iter<'q>(&'q self, order: &'q mut dyn QueueOrder, queue: &'q Queue) -> Ordered<'q> {
        if self.lazy {
            Ordered::Lazy(order, queue)
        } else {
            self.iter_from(queue, 0)
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the walk is read from the order job by job ([`Walk::prepare_lazily`]).
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether this call's order is submission order.
    pub fn is_identity(&self) -> bool {
        self.identity
    }

    /// Whether backfill candidates are offered in another order than the queue's.
    pub fn has_candidates(&self) -> bool {
        !self.candidates.is_queue()
    }

    /// Re-sorts the walk after its k-th job (the first that cannot start) into the candidate
    /// order, stably: ties keep the queue order. A no-op with the default candidate order.
    pub fn candidates_after(&mut self, k: usize) {
        if self.candidates.is_queue() || k + 1 >= self.len {
            return;
        }
        debug_assert!(!self.by_job, "a candidate order materialises the walk");
        debug_assert!(!self.identity, "a candidate order materialises the walk");
        let (jobs, candidates) = (&self.jobs, self.candidates);
        self.positions[k + 1..].sort_by_key(|&pos| candidates.key(pos, &jobs[pos]));
    }

    /// The queue position of the k-th job in order.
    #[inline]
    pub fn pos(&self, k: usize) -> usize {
        debug_assert!(!self.lazy, "a lazy walk is read through Walk::iter");
        debug_assert!(!self.by_job, "a walk of jobs is read through Walk::pos_in");
        if self.identity { k } else { self.positions[k] }
    }

    /// The queue position of the k-th job in order in `queue` (the queue this walk was prepared
    /// on): looked up, O(log queue), when the order wrote the jobs themselves.
    pub fn pos_in(&self, queue: &Queue, k: usize) -> usize {
        if self.by_job {
            queue
                .position_of(self.in_order[k].job)
                .expect("the order holds waiting jobs only")
        } else {
            self.pos(k)
        }
    }

    /// The k-th job in order with its queue position: `queue` (the queue this walk was
    /// prepared on) is read only in submission order, other orders read the walk's copy.
    #[inline]
    pub fn at(&self, queue: &Queue, k: usize) -> (usize, QueuedJob) {
        debug_assert!(!self.by_job, "a walk of jobs has no positions");
        if self.identity {
            (k, queue[k])
        } else {
            let pos = self.positions[k];
            (pos, self.jobs[pos])
        }
    }

    /// The jobs in order (their workload indices), from the walk's copy: a walk over
    /// another order than submission order only.
    pub fn jobs_in_order(&self) -> impl Iterator<Item = u32> + Clone + '_ {
        debug_assert!(!self.identity, "submission order is not copied");
        if self.by_job {
            InOrder::Written(self.in_order.iter())
        } else {
            InOrder::Copied(&self.jobs, self.positions.iter())
        }
        .map(|q| q.job)
    }

    /// The jobs of `queue` (the queue this walk was prepared on) from the k-th in order on,
    /// without their positions.
    pub fn jobs_from<'q>(&'q self, queue: &'q Queue, k: usize) -> InOrder<'q> {
        debug_assert_eq!(queue.len(), self.len, "the queue this walk was prepared on");
        debug_assert!(!self.lazy, "a lazy walk is read through Walk::iter");
        if self.identity {
            InOrder::Submission(queue.iter_from(k))
        } else if self.by_job {
            InOrder::Written(self.in_order[k.min(self.len)..].iter())
        } else {
            InOrder::Copied(&self.jobs, self.positions[k.min(self.len)..].iter())
        }
    }

    /// Calls `f` with each job of `queue` (the queue this walk was prepared on) from the k-th in
    /// order on and its rank in order, the last first: a pass back over the jobs without a copy
    /// of them. Not for submission order, which is read from the queue forward only.
    pub fn for_each_back(&self, queue: &Queue, k: usize, mut f: impl FnMut(usize, &QueuedJob)) {
        debug_assert_eq!(queue.len(), self.len, "the queue this walk was prepared on");
        debug_assert!(!self.identity && !self.lazy, "a walk held in order");
        if self.by_job {
            for (i, job) in self.in_order.iter().enumerate().skip(k).rev() {
                f(i, job);
            }
        } else {
            for (i, &pos) in self.positions.iter().enumerate().skip(k).rev() {
                f(i, &self.jobs[pos]);
            }
        }
    }

    /// The positions in order, materialised (empty for submission order).
    pub fn positions(&self) -> &[usize] {
        debug_assert!(!self.by_job, "a walk of jobs has no positions");
        if self.identity { &[] } else { &self.positions }
    }

    /// The positions in order, from the k-th on.
    pub fn from(&self, k: usize) -> impl Iterator<Item = usize> + '_ {
        (k..self.len).map(move |i| self.pos(i))
    }

    /// The jobs of `queue` (the queue this walk was prepared on) with their positions, from the
    /// k-th in order on; submission order is read straight from the queue.
    pub fn iter_from<'q>(&'q self, queue: &'q Queue, k: usize) -> Ordered<'q> {
        debug_assert_eq!(queue.len(), self.len, "the queue this walk was prepared on");
        debug_assert!(!self.by_job, "a walk of jobs has no positions");
        debug_assert!(!self.lazy, "a lazy walk is read through Walk::iter");
        if self.identity {
            Ordered::Submission((k..).zip(queue.iter_from(k)))
        } else {
            Ordered::Copied(&self.jobs, self.positions[k.min(self.len)..].iter())
        }
    }
}

/// Tells a planning rule (conservative) whether the order of the waiting jobs is still the one
/// its plan was made in: the previous call's order of the jobs still waiting, followed by the new
/// arrivals in submission order. When it is not, the plan is rebuilt from scratch in the new
/// order (docs/semantics.md, "Conservative over a priority order").
#[derive(Clone, Debug, Default)]
pub struct OrderTracker {
    /// Per job index: 1 + its rank in the previous call's order; 0 if it was not waiting then.
    rank: Vec<u32>,
    previous: Vec<u32>,
}

impl OrderTracker {
    /// The previous call's order, as job indices (before [`OrderTracker::changed_jobs`] records
    /// this call's).
    pub fn previous(&self) -> &[u32] {
        &self.previous
    }

    /// Records this call's order, given as the jobs in order, and says whether it breaks the
    /// plan. (Callers read the jobs from a copy of the order, not a look-up in the queue per
    /// job: [`Walk`]'s, or node-level conservative's.)
    pub fn changed_jobs(&mut self, order: impl Iterator<Item = u32> + Clone) -> bool {
        let highest = order.clone().map(|job| job as usize + 1).max().unwrap_or(0);
        if self.rank.len() < highest {
            self.rank.resize(highest, 0);
        }
        let mut changed = false;
        let mut last_old = 0u32;
        let mut last_new: Option<u32> = None;
        for job in order.clone() {
            match self.rank[job as usize] {
                0 => {
                    // A new arrival: after every old job, in submission order.
                    if last_new.is_some_and(|n| n > job) {
                        changed = true;
                    }
                    last_new = Some(job);
                }
                r => {
                    if last_new.is_some() || r < last_old {
                        changed = true;
                    }
                    last_old = r;
                }
            }
        }
        for &job in &self.previous {
            self.rank[job as usize] = 0;
        }
        self.previous.clear();
        for (k, job) in order.enumerate() {
            self.previous.push(job);
            self.rank[job as usize] = k as u32 + 1;
        }
        changed
    }
}

/// The orders, by the name manifests and outputs use.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum OrderKind {
    #[default]
    Fcfs,
    Fairshare,
    Priority,
    Sjf,
}

impl OrderKind {
    pub const ALL: [OrderKind; 4] = [
        OrderKind::Fcfs,
        OrderKind::Fairshare,
        OrderKind::Priority,
        OrderKind::Sjf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OrderKind::Fcfs => "fcfs",
            OrderKind::Fairshare => "fairshare",
            OrderKind::Priority => "priority",
            OrderKind::Sjf => "sjf",
        }
    }
}

impl std::fmt::Display for OrderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for OrderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        OrderKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown queue order {s:?} (expected fcfs, fairshare, priority or sjf)")
            })
    }
}

/// When priorities are recomputed.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Reorder {
    /// At every scheduler call.
    #[default]
    Call,
    /// At the first call at or after each multiple of this many seconds of trace time; in
    /// between, the last computed priorities stand (new jobs are ranked by them).
    Every(Time),
    /// After every single start: the scheduler starts at most one job per pass and is asked
    /// again at the same instant, on priorities that count that start (with `charging:
    /// estimate`, its owner's charge). AleaNG's selection loop (Klusáček & Rudová §3.4 charge
    /// the estimate at the start; AleaNG re-sorts after each one), outside `compat: aleang`.
    Start,
}

impl Reorder {
    /// Whether a call at `now` recomputes, given the period of the last recomputation.
    fn due(self, now: Time, last: Option<Time>) -> bool {
        match (self, last) {
            (Reorder::Call | Reorder::Start, _) | (_, None) => true,
            (Reorder::Every(n), Some(period)) => now.div_euclid(n) != period,
        }
    }

    /// The period `now` falls in (what [`Reorder::due`] compares).
    fn period(self, now: Time) -> Time {
        match self {
            Reorder::Call | Reorder::Start => now,
            Reorder::Every(n) => now.div_euclid(n),
        }
    }
}

/// A queue order with everything it needs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OrderSpec {
    pub kind: OrderKind,
    pub reorder: Reorder,
    /// The fairshare of `fairshare` and of `priority`'s fairshare factor.
    pub fairshare: FairshareSpec,
    /// The weights of `priority`.
    pub priority: PriorityWeights,
    /// The order of backfill candidates (`backfill_order`); absent from the key material when
    /// it is the default, so earlier cells keep their keys.
    #[serde(default, skip_serializing_if = "CandidateOrder::is_queue")]
    pub candidates: CandidateOrder,
    /// Another simulator's behaviours to reproduce (`compat`); absent from the key material
    /// when none.
    #[serde(default, skip_serializing_if = "Compat::is_none")]
    pub compat: Compat,
}

impl OrderSpec {
    pub fn of(kind: OrderKind) -> Self {
        OrderSpec {
            kind,
            ..OrderSpec::default()
        }
    }

    /// Whether the order is submission order (the default).
    pub fn is_fcfs(&self) -> bool {
        self.kind == OrderKind::Fcfs
    }

    /// Builds the order for a run of `workload` on `machine`, with its candidate order.
    pub fn build(
        &self,
        workload: &Workload,
        machine: &Machine,
    ) -> Result<Box<dyn QueueOrder>, OrderError> {
        Ok(self.with_candidates(self.build_order(workload, machine)?))
    }

    /// `order` with this spec's candidate order, when it is not the default.
    fn with_candidates(&self, order: Box<dyn QueueOrder>) -> Box<dyn QueueOrder> {
        if self.candidates.is_queue() {
            order
        } else {
            Box::new(WithCandidates::new(order, self.candidates))
        }
    }

    /// The queue order alone.
    fn build_order(
        &self,
        workload: &Workload,
        machine: &Machine,
    ) -> Result<Box<dyn QueueOrder>, OrderError> {
        if let Reorder::Every(n) = self.reorder
            && n <= 0
        {
            return Err(OrderError::BadReorder(n));
        }
        Ok(match self.kind {
            OrderKind::Fcfs => Box::new(Submission),
            OrderKind::Sjf => Box::new(ShortestFirst),
            OrderKind::Fairshare => Box::new(FairshareOrder::new(
                FairshareState::new(workload, machine, &self.fairshare)?,
                self.reorder,
            )),
            OrderKind::Priority => Box::new(PriorityOrder::new(
                FairshareState::new(workload, machine, &self.fairshare)?,
                self.reorder,
                self.priority.clone(),
                machine.procs(),
            )?),
        })
    }

    /// Builds the order for a run whose jobs sit in queues of these priorities (`priority[j]`:
    /// the priority of job j's queue, higher first). Queues of one priority: [`OrderSpec::build`].
    /// Otherwise queue priority is the leading key over this order ([`Tiered`]), except in
    /// `priority` with `queue_tiers: false`, where it is the weighted queue factor instead:
    /// (p − lowest) / (highest − lowest), so the lowest queue adds 0 and the highest the full
    /// `queue` weight (docs/queues.md, "Priorities").
    pub fn build_limited(
        &self,
        workload: &Workload,
        machine: &Machine,
        priority: &[i64],
    ) -> Result<Box<dyn QueueOrder>, OrderError> {
        let (lo, hi) = priority
            .iter()
            .fold((i64::MAX, i64::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)));
        if priority.is_empty() || lo == hi {
            return self.build(workload, machine);
        }
        if self.kind == OrderKind::Priority && !self.priority.queue_tiers {
            if self.priority.queue <= 0.0 {
                return Err(OrderError::Weights(
                    "`queue_tiers: false` weighs queue priority by the `queue` weight, which is 0"
                        .into(),
                ));
            }
            let span = (hi - lo) as f64;
            let factor = priority.iter().map(|&p| (p - lo) as f64 / span).collect();
            let order = PriorityOrder::new(
                FairshareState::new(workload, machine, &self.fairshare)?,
                self.reorder,
                self.priority.clone(),
                machine.procs(),
            )?
            .with_queue_factors(factor);
            return Ok(self.with_candidates(Box::new(order)));
        }
        Ok(self.with_candidates(Box::new(Tiered::new(
            priority,
            self.build_order(workload, machine)?,
        ))))
    }
}

/// An order specification that cannot be built for a run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    #[error("fairshare {0}")]
    Fairshare(#[from] FairshareError),
    #[error("priority weights: {0}")]
    Weights(String),
    #[error("re-ordering period {0} s must be positive")]
    BadReorder(Time),
    #[error(
        "backfill order {0}: the node-level rules on a topology offer backfill candidates in queue order only (yet)"
    )]
    CandidatesOnTopology(CandidateOrder),
    /// `compat: aleang` outside what it reproduces.
    #[error("compat: aleang {0}")]
    Compat(&'static str),
}
