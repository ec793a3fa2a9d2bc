//! The discrete-event engine.
//!
//! Event order (docs/semantics.md): time is integer seconds. At each instant the engine applies
//! every completion of that instant, then every arrival (in submission order), then — at every
//! such instant, or only at multiples of the scheduling interval when one is set — asks the
//! scheduler once for its decisions and applies them. Ties between jobs are broken by submission
//! order (the job's index in the [`Workload`]).
//!
//! The machine's allocation state lives in [`super::machine_state`]: the uniform fast path, or a
//! topology whose node-level policies name the nodes of every start.

use crate::sim::scheduler::order::Reorder as OrderReorder;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::job::{Time, Workload};
use super::limits::{Admission, LimitState, Limits, LimitsError, LimitsOutcome};
use super::machine::{Infeasible, Machine};
use super::machine_state::{MachineState, Refusal, TopologyState};
use super::queue::Queue;
use super::reservation::{
    Decision, ReservationOutcome, ReservationRequest, Reservations, ReservedWindow, ThrottleState,
    capacity_for, place, place_on_nodes,
};
use super::resources::ResourceVec;
use super::running::{RunningJob, RunningSet};
use super::schedule::{Instant, ScheduleSink};
use super::scheduler::node::{
    self, Completed, Decisions, NodeReservation, NodeScheduler, NodeView,
};
use super::scheduler::order::{OrderError, OrderKind, OrderSpec, QueueOrder};
use super::scheduler::{QueuedJob, Scheduler, SchedulerKind, View};
use super::topology::{Placement, TopologyError};

/// What happens to a job whose actual runtime exceeds its requested time.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Overrun {
    /// Killed when its request expires, as resource managers do (the default).
    #[default]
    Kill,
    /// Allowed to run to its actual runtime.
    Continue,
}

impl Overrun {
    pub fn name(self) -> &'static str {
        match self {
            Overrun::Kill => "kill",
            Overrun::Continue => "continue",
        }
    }
}

impl std::str::FromStr for Overrun {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "kill" => Ok(Overrun::Kill),
            "continue" => Ok(Overrun::Continue),
            _ => Err(format!(
                "unknown overrun policy {s:?} (expected kill or continue)"
            )),
        }
    }
}

/// Everything that shapes a simulation besides the workload.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    pub machine: Machine,
    /// The backfilling rule (`fcfs` is "no backfilling").
    pub scheduler: SchedulerKind,
    /// The queue order the rule walks (submission order by default).
    pub order: OrderSpec,
    /// Which class and nodes a job takes on a topology (ignored by uniform machines).
    pub placement: Placement,
    /// `None`: the scheduler runs at every event instant. `Some(n)`: only at multiples of `n`
    /// seconds (while jobs are waiting).
    pub interval: Option<Time>,
    pub overrun: Overrun,
}

impl SimConfig {
    /// `scheduler` on `machine`, called at every event, killing overrunning jobs, first fit.
    pub fn new(machine: Machine, scheduler: SchedulerKind) -> Self {
        SimConfig {
            machine,
            scheduler,
            order: OrderSpec::default(),
            placement: Placement::default(),
            interval: None,
            overrun: Overrun::Kill,
        }
    }
}

/// The simulated fate of one job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobOutcome {
    /// Index of the job in the workload.
    pub job: u32,
    pub start: Time,
    pub end: Time,
    /// Allocation units held (processors, or nodes with exclusive allocation; cores on a
    /// topology).
    pub units: u64,
    /// Index of the cluster it ran in (0 on a uniform machine).
    pub cluster: u32,
    /// Global index of the node class it ran on ([`crate::sim::topology::Layout::class`]; 0 on
    /// a uniform machine).
    pub class: u32,
    /// Nodes it held (1 on a pool).
    pub nodes: u32,
    /// What it held in all: cores (processors; on exclusive nodes all of their cores), memory in
    /// KB and GPUs (0 on a uniform machine, which models neither).
    pub held: ResourceVec,
    /// Stopped at its requested time ([`Overrun::Kill`]).
    pub killed: bool,
    /// Started while an earlier-submitted job was still waiting.
    pub backfilled: bool,
}

/// One call of the scheduler: when, and how many jobs were waiting when it was called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invocation {
    pub time: Time,
    pub queue_len: u32,
}

/// The state after an instant was fully processed (events applied, decisions applied).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    pub time: Time,
    pub queue_len: u32,
    /// Allocation units held by jobs.
    pub busy: u64,
    /// Allocation units blocked by started reservations.
    pub reserved: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimOutcome {
    /// Simulated jobs, in submission order.
    pub jobs: Vec<JobOutcome>,
    /// Jobs that can never run on this machine, with the reason, in submission order.
    pub skipped: Vec<(u32, Infeasible)>,
    pub invocations: Vec<Invocation>,
    /// The state after each processed instant, in time order.
    pub steps: Vec<Step>,
    /// The fate of every reservation request, in the order of [`Reservations::requests`].
    pub reservations: Vec<ReservationOutcome>,
    /// On a topology: the class and nodes of every simulated job, in submission order (empty on
    /// a uniform machine).
    pub assignments: Vec<Assignment>,
    /// On a topology: the nodes each started reservation held, by request index.
    pub reserved_nodes: Vec<(u32, Vec<u32>)>,
    /// With queues and limits ([`simulate_limited`]): each job's queue, what held or killed it,
    /// and the jobs rejected at submission.
    pub limits: Option<LimitsOutcome>,
}

impl SimOutcome {
    /// This outcome's jobs, steps and calls (as a [`ScheduleSink`] collected them) with the rest
    /// of a streamed run's outcome.
    fn with_rest(self, rest: SimOutcome) -> SimOutcome {
        SimOutcome {
            jobs: self.jobs,
            steps: self.steps,
            invocations: self.invocations,
            ..rest
        }
    }
}

/// Where a job ran on a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// Index of the job in the workload.
    pub job: u32,
    /// Global class index ([`crate::sim::topology::Layout::class`]).
    pub class: u32,
    /// Its nodes: the first `shape.full()` took the full per-node amount, a last one the rest
    /// ([`crate::sim::topology::NodeShape`]).
    pub nodes: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error(
        "scheduler bug at t={time}: it started queue position {position}, which is not waiting"
    )]
    InvalidDecision { time: Time, position: usize },
    #[error("scheduler bug at t={time}: starting job {job_id} would over-allocate the machine")]
    OverAllocation { time: Time, job_id: u64 },
    #[error(
        "at t={time}: {waiting} jobs wait on an idle machine and the scheduler starts none of them (in a built-in rule a bug; in a policy of yours, a policy that never starts them)"
    )]
    Stalled { time: Time, waiting: usize },
    /// A policy of the decision interface ([`crate::sim::policy`]) failed or decided the
    /// impossible; `message` names the policy, the job and the reason.
    #[error("at t={time}: {message}")]
    Policy { time: Time, message: String },
    #[error("invalid scheduling interval {0} (must be a positive number of seconds)")]
    BadInterval(Time),
    #[error("scheduler bug at t={time}: reservation {id} starts but its capacity is held by jobs")]
    ReservationConflict { time: Time, id: u64 },
    #[error(
        "reservations need `overrun: kill`: a job running past its requested time could hold reserved capacity"
    )]
    ReservationsNeedKill,
    #[error("reservation {id}: {problem}")]
    BadReservation { id: u64, problem: String },
    #[error("invalid topology: {0}")]
    Topology(#[from] TopologyError),
    #[error("scheduler bug at t={time}: job {job_id}: {problem}")]
    InvalidPlacement {
        time: Time,
        job_id: u64,
        problem: String,
    },
    #[error(
        "job {job_id} refers to constraint {constraint}, which its workload's constraint table does not have"
    )]
    UnknownConstraint { job_id: u64, constraint: u32 },
    #[error(
        "a {policy} policy cannot run on this machine (processor-count policies run on uniform machines, node-level policies on topologies)"
    )]
    PolicyMismatch { policy: &'static str },
    #[error("invalid queues and limits: {0}")]
    Limits(#[from] LimitsError),
    #[error("queue order {order}: {source}")]
    Order {
        order: &'static str,
        source: OrderError,
    },
}

/// A scheduling policy of either kind: one that counts allocation units (uniform machines) or
/// one that places jobs on nodes (topologies).
pub enum AnyPolicy {
    Units(Box<dyn Scheduler>),
    Nodes(Box<dyn NodeScheduler>),
}

impl AnyPolicy {
    /// The built-in policy `kind` for `machine`, over submission order.
    pub fn build(kind: SchedulerKind, machine: &Machine) -> Self {
        match machine {
            Machine::Uniform(_) => AnyPolicy::Units(kind.build()),
            Machine::Topology(_) => AnyPolicy::Nodes(node::build(kind)),
        }
    }

    /// The policy of `config` — its queue order × its backfilling rule, on its machine — for a
    /// run of `workload`.
    pub fn of(config: &SimConfig, workload: &Workload) -> Result<Self, SimError> {
        if !config.order.compat.is_none() {
            return AnyPolicy::compatible(config, workload);
        }
        AnyPolicy::ordered(config, config.order.build(workload, &config.machine))
    }

    /// The policy of a `compat` setting ([`crate::sim::compat`]): AleaNG's fairshare aggressive
    /// backfilling, on a topology only. Queue priorities (with queues) are read from the limits
    /// the engine shows it.
    fn compatible(config: &SimConfig, workload: &Workload) -> Result<Self, SimError> {
        let refuse = |why: &'static str| SimError::Order {
            order: config.order.kind.name(),
            source: OrderError::Compat(why),
        };
        if !matches!(config.machine, Machine::Topology(_)) {
            return Err(refuse(
                "runs on a topology (AleaNG's clusters: a machine file or `topology`), not on a processor pool",
            ));
        }
        if config.scheduler != SchedulerKind::Aggressive
            || config.order.kind != OrderKind::Fairshare
        {
            return Err(refuse(
                "reproduces AleaNG's FairshareAggressiveBackfilling: it needs `backfill: aggressive` and `order: fairshare`",
            ));
        }
        if !config.order.candidates.is_queue() {
            return Err(refuse(
                "walks AleaNG's own order: leave `backfill_order` out",
            ));
        }
        // The spec is checked as `order: fairshare` checks it (decay factor, shares).
        config
            .order
            .build(workload, &config.machine)
            .map_err(|source| SimError::Order {
                order: config.order.kind.name(),
                source,
            })?;
        Ok(AnyPolicy::Nodes(Box::new(node::AleangAggressive::new(
            workload,
            &config.order.fairshare,
            config.order.reorder,
        ))))
    }

    /// The backfilling rule of `config` over a built queue order, on the machine's kind.
    fn ordered(
        config: &SimConfig,
        order: Result<Box<dyn QueueOrder>, OrderError>,
    ) -> Result<Self, SimError> {
        let candidates = config.order.candidates;
        let order = order
            .and_then(|order| match config.machine {
                Machine::Topology(_) if !candidates.is_queue() => {
                    Err(OrderError::CandidatesOnTopology(candidates))
                }
                _ => Ok(order),
            })
            .map_err(|source| SimError::Order {
                order: config.order.kind.name(),
                source,
            })?;
        Ok(match config.machine {
            Machine::Uniform(_) => AnyPolicy::Units(config.scheduler.build_ordered(order)),
            Machine::Topology(_) => AnyPolicy::Nodes(node::build_ordered(config.scheduler, order)),
        })
    }
}

/// Simulates `workload` under `config`.
pub fn simulate(workload: &Workload, config: &SimConfig) -> Result<SimOutcome, SimError> {
    simulate_reserving(workload, config, &Reservations::default())
}

/// Simulates `workload` under `config` with advance reservation requests.
pub fn simulate_reserving(
    workload: &Workload,
    config: &SimConfig,
    reservations: &Reservations,
) -> Result<SimOutcome, SimError> {
    let mut kept = SimOutcome::default();
    let out = simulate_into(workload, config, reservations, &mut kept)?;
    Ok(kept.with_rest(out))
}

/// Simulates `workload` under `config` with reservations, handing each job's outcome (in
/// submission order) and each instant to `sink` as they are known — nothing per job or per
/// scheduler call is kept here. Returns the rest: skipped jobs, reservation outcomes, limits
/// and topology assignments (`jobs`, `steps` and `invocations` are empty).
pub fn simulate_into(
    workload: &Workload,
    config: &SimConfig,
    reservations: &Reservations,
    sink: &mut dyn ScheduleSink,
) -> Result<SimOutcome, SimError> {
    let policy = AnyPolicy::of(config, workload)?;
    Engine::new(workload, config, policy, reservations, None)?.run(sink)
}

impl AnyPolicy {
    /// The policy of `config` for a run of `workload` under `limits`: with queues of different
    /// priorities, queue priority composes with the configured order
    /// ([`crate::sim::scheduler::order::OrderSpec::build_limited`]: tiers, or the weighted
    /// queue factor of `order: priority`).
    pub fn limited(
        config: &SimConfig,
        workload: &Workload,
        limits: &Limits,
    ) -> Result<Self, SimError> {
        if !limits.has_tiers() || !config.order.compat.is_none() {
            return AnyPolicy::of(config, workload);
        }
        let priority: Vec<i64> = workload
            .jobs
            .iter()
            .map(|job| {
                limits
                    .route(workload, job)
                    .map_or(0, |q| limits.queues[q as usize].priority)
            })
            .collect();
        AnyPolicy::ordered(
            config,
            config
                .order
                .build_limited(workload, &config.machine, &priority),
        )
    }
}

/// Simulates `workload` under `config` with reservations and queues, limits and quotas
/// ([`crate::sim::limits`]): the policy ([`AnyPolicy::limited`]) sees only eligible jobs, with
/// queue priority composed with its order.
pub fn simulate_limited(
    workload: &Workload,
    config: &SimConfig,
    reservations: &Reservations,
    limits: &Limits,
) -> Result<SimOutcome, SimError> {
    let mut kept = SimOutcome::default();
    let out = simulate_limited_into(workload, config, reservations, limits, &mut kept)?;
    Ok(kept.with_rest(out))
}

/// [`simulate_limited`] handing the schedule to `sink` as [`simulate_into`] does.
pub fn simulate_limited_into(
    workload: &Workload,
    config: &SimConfig,
    reservations: &Reservations,
    limits: &Limits,
    sink: &mut dyn ScheduleSink,
) -> Result<SimOutcome, SimError> {
    // Built on the cut requests: orders and fairshare charging see what the policy plans with.
    simulate_limited_policy_into(workload, config, reservations, limits, sink, |workload| {
        AnyPolicy::limited(config, workload, limits)
    })
}

/// [`simulate_limited_into`] with the policy `make` builds on the workload as the limits give it
/// to the policy (requests cut to their queues' maximum walltimes): a policy of the decision
/// interface ([`crate::sim::policy`]) runs under queues and limits this way, seeing only the
/// eligible jobs. Queue priority does not reorder anything here: `make` decides.
pub fn simulate_limited_policy_into(
    workload: &Workload,
    config: &SimConfig,
    reservations: &Reservations,
    limits: &Limits,
    sink: &mut dyn ScheduleSink,
    make: impl FnOnce(&Workload) -> Result<AnyPolicy, SimError>,
) -> Result<SimOutcome, SimError> {
    limits.validate()?;
    // Requests over a queue's maximum walltime are cut to it (`over_walltime: kill`): policies
    // plan with the cut request. The workload is copied only when some request is cut.
    let cut = |i: usize| {
        let job = &workload.jobs[i];
        limits
            .route(workload, job)
            .map(|q| limits.effective_request(q, job))
            .filter(|&r| r < job.requested_time)
    };
    let mut copy = None;
    if limits.over_walltime == super::limits::OverLimit::Kill
        && (0..workload.len()).any(|i| cut(i).is_some())
    {
        let mut w = workload.clone();
        for (i, job) in w.jobs.iter_mut().enumerate() {
            if let Some(r) = cut(i) {
                job.requested_time = r;
            }
        }
        copy = Some(w);
    }
    let workload = copy.as_ref().unwrap_or(workload);
    let policy = make(workload)?;
    Engine::new(workload, config, policy, reservations, Some(limits))?.run(sink)
}

/// Simulates with a caller-supplied policy of either kind, and reservations.
pub fn simulate_policy(
    workload: &Workload,
    config: &SimConfig,
    policy: AnyPolicy,
    reservations: &Reservations,
) -> Result<SimOutcome, SimError> {
    Engine::new(workload, config, policy, reservations, None)?.collect()
}

/// [`simulate_policy`] handing the schedule to `sink` as [`simulate_into`] does (a policy of
/// the decision interface, [`crate::sim::policy`], comes in this way).
pub fn simulate_policy_into(
    workload: &Workload,
    config: &SimConfig,
    policy: AnyPolicy,
    reservations: &Reservations,
    sink: &mut dyn ScheduleSink,
) -> Result<SimOutcome, SimError> {
    Engine::new(workload, config, policy, reservations, None)?.run(sink)
}

/// Simulates with a caller-supplied policy (for tests and custom policies).
pub fn simulate_with(
    workload: &Workload,
    config: &SimConfig,
    scheduler: Box<dyn Scheduler>,
) -> Result<SimOutcome, SimError> {
    Engine::new(
        workload,
        config,
        AnyPolicy::Units(scheduler),
        &Reservations::default(),
        None,
    )?
    .collect()
}

/// [`simulate_with`] asking the scheduler at every tick of a periodic run, as the engine did
/// before it skipped idle ticks: the reference that tests compare the skipping engine with.
#[doc(hidden)]
pub fn simulate_with_every_tick(
    workload: &Workload,
    config: &SimConfig,
    scheduler: Box<dyn Scheduler>,
) -> Result<SimOutcome, SimError> {
    let none = Reservations::default();
    let mut engine = Engine::new(workload, config, AnyPolicy::Units(scheduler), &none, None)?;
    engine.skip_idle_ticks = false;
    engine.collect()
}

/// [`simulate_with`] and reservations.
pub fn simulate_with_reserving(
    workload: &Workload,
    config: &SimConfig,
    scheduler: Box<dyn Scheduler>,
    reservations: &Reservations,
) -> Result<SimOutcome, SimError> {
    Engine::new(
        workload,
        config,
        AnyPolicy::Units(scheduler),
        reservations,
        None,
    )?
    .collect()
}

/// A run driven from outside, one suspended scheduler call at a time (the reinforcement-learning
/// environment, `schedlab::gym`): the scheduler ([`Scheduler::suspended`]) may end a call
/// without deciding, and [`Stepped::advance`] then returns with the instant still open. The
/// driver hands the scheduler what it waited for (through state they share) and advances
/// again: the scheduler is called again at the same instant with the same view. Instants,
/// calls and outcomes reach the sink exactly as in a run to completion of a scheduler that
/// decided the same without suspending. No queues and limits; a uniform machine with a
/// [`Scheduler`] ([`Stepped::new`]) or a topology with a [`NodeScheduler`]
/// ([`Stepped::on_nodes`]).
pub struct Stepped<'w> {
    engine: Engine<'w>,
}

impl<'w> Stepped<'w> {
    pub fn new(
        workload: &'w Workload,
        config: &SimConfig,
        scheduler: Box<dyn Scheduler>,
        reservations: &'w Reservations,
    ) -> Result<Self, SimError> {
        Self::with(workload, config, AnyPolicy::Units(scheduler), reservations)
    }

    /// A stepped run on a topology (`config.machine`), decided by a node-level `scheduler`.
    pub fn on_nodes(
        workload: &'w Workload,
        config: &SimConfig,
        scheduler: Box<dyn NodeScheduler>,
        reservations: &'w Reservations,
    ) -> Result<Self, SimError> {
        Self::with(workload, config, AnyPolicy::Nodes(scheduler), reservations)
    }

    fn with(
        workload: &'w Workload,
        config: &SimConfig,
        policy: AnyPolicy,
        reservations: &'w Reservations,
    ) -> Result<Self, SimError> {
        let engine = Engine::new(workload, config, policy, reservations, None)?;
        Ok(Stepped { engine })
    }

    /// Runs until the scheduler suspends a call (`Some(now)`) or nothing is left to happen
    /// (`None`: [`Stepped::finish`] gives the outcome).
    pub fn advance(&mut self, sink: &mut dyn ScheduleSink) -> Result<Option<Time>, SimError> {
        Ok(match self.engine.advance(sink)? {
            Advance::Done => None,
            Advance::Suspended(now) => Some(now),
        })
    }

    /// The rest of the outcome once [`Stepped::advance`] returned `None` (a stall if jobs
    /// still wait).
    pub fn finish(self, sink: &mut dyn ScheduleSink) -> Result<SimOutcome, SimError> {
        self.engine.finish(sink)
    }
}

/// Scheduler calls in a row that may leave an idle machine idle before the run is reported as
/// stalled (only reachable with a periodic scheduler and a policy that postpones work).
const MAX_IDLE_CALLS: u32 = 10_000;

struct Engine<'w> {
    workload: &'w Workload,
    config: SimConfig,
    policy: AnyPolicy,
    /// The next feasible job to arrive, with its demand (admitted one job ahead, so that
    /// infeasible jobs never make an instant and no copy of the workload is kept).
    next_arrival: Option<QueuedJob>,
    /// Index of the first job of the workload not yet admitted.
    unadmitted: usize,
    /// (end, job, expected end) of running jobs: the expected end travels with the job, so
    /// nothing is kept per job of the workload.
    completions: BinaryHeap<Reverse<(Time, u32, Time)>>,
    queue: Queue,
    running: RunningSet,
    /// Running jobs that ended since the scheduler's last call (what `View::ended` shows).
    ended: Vec<RunningJob>,
    state: MachineState,
    /// Allocation units free (cores on a topology).
    free: ResourceVec,
    decisions: Decisions,
    /// Per job index, on a topology: where it ran.
    assignments: Vec<Option<Assignment>>,
    /// Outcomes on their way to the sink, in submission order.
    outcomes: Reorder,
    started_jobs: Vec<u32>,
    /// This call's decisions (queue positions) in the order the policy made them (reused).
    decided: Vec<usize>,
    /// Eligible jobs a start put behind a CPU quota at this call (reused buffer).
    gated: Vec<u32>,
    /// Consecutive scheduler calls that left an idle machine idle with nothing else to come.
    idle_calls: u32,
    booking: Booking<'w>,
    /// Queues and limits, when the run has them: the filter between waiting jobs and `queue`.
    limits: Option<LimitState<'w>>,
    /// Jobs the limits made eligible at this instant (reused buffer).
    admitted: Vec<u32>,
    /// Periodic mode: record the ticks at which no call can start anything without asking
    /// the scheduler ([`Engine::idle_ticks`]); off only to check that skipping changes nothing.
    skip_idle_ticks: bool,
    out: SimOutcome,
    /// The last instant processed.
    last: Option<Time>,
    /// The instant whose scheduler call is suspended, with the queue length the call saw.
    suspended: Option<(Time, u32)>,
    /// Queue positions started by the current call (reused buffer).
    starts: Vec<usize>,
}

/// How far [`Engine::advance`] got.
/// What one scheduler call came to.
enum Called {
    /// The scheduler suspended its call: nothing applied.
    Suspended,
    /// Its decisions were applied; `cut` when a CPU quota started only a prefix of them.
    Applied { cut: bool },
}

enum Advance {
    Done,
    /// The scheduler suspended its call at this instant.
    Suspended(Time),
}

/// The engine's reservation state.
struct Booking<'w> {
    setup: &'w Reservations,
    /// Request indices by (creation time, id).
    order: Vec<u32>,
    next_request: usize,
    throttle: ThrottleState,
    /// Granted reservations not yet over, sorted; what schedulers see.
    granted: Vec<ReservedWindow>,
    /// (start, request) and (end, request) of granted reservations still to start / end.
    starts: BinaryHeap<Reverse<(Time, u32)>>,
    ends: BinaryHeap<Reverse<(Time, u32)>>,
    /// Nodes held by each started reservation, by request index.
    held: Vec<Vec<u32>>,
    /// Units blocked by started reservations.
    reserved: u64,
}

impl<'w> Booking<'w> {
    fn new(setup: &'w Reservations) -> Result<Self, SimError> {
        for r in &setup.requests {
            let problem = if r.duration <= 0 {
                Some("its duration must be positive")
            } else if r.width == 0 {
                Some("its width must be positive")
            } else if r.start < r.created {
                Some("it starts before it is requested")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(SimError::BadReservation {
                    id: r.id,
                    problem: problem.to_string(),
                });
            }
        }
        let mut order: Vec<u32> = (0..setup.requests.len() as u32).collect();
        order.sort_by_key(|&i| {
            let r = &setup.requests[i as usize];
            (r.created, r.id, i)
        });
        Ok(Booking {
            setup,
            order,
            next_request: 0,
            throttle: ThrottleState::new(setup.throttles.clone()),
            granted: Vec::new(),
            starts: BinaryHeap::new(),
            ends: BinaryHeap::new(),
            held: vec![Vec::new(); setup.requests.len()],
            reserved: 0,
        })
    }

    fn request(&self, i: u32) -> &'w ReservationRequest {
        &self.setup.requests[i as usize]
    }

    fn next_event(&self) -> Option<Time> {
        let created = self
            .order
            .get(self.next_request)
            .map(|&i| self.request(i).created);
        let start = self.starts.peek().map(|Reverse((t, _))| *t);
        let end = self.ends.peek().map(|Reverse((t, _))| *t);
        [created, start, end].into_iter().flatten().min()
    }

    /// Nothing left to happen: no request to come, no reservation to start or end.
    fn is_done(&self) -> bool {
        self.next_request == self.order.len() && self.starts.is_empty() && self.ends.is_empty()
    }
}

impl<'w> Engine<'w> {
    /// Runs to the end, keeping everything in the outcome.
    fn collect(self) -> Result<SimOutcome, SimError> {
        let mut kept = SimOutcome::default();
        let out = self.run(&mut kept)?;
        Ok(kept.with_rest(out))
    }

    fn new(
        workload: &'w Workload,
        config: &SimConfig,
        policy: AnyPolicy,
        reservations: &'w Reservations,
        limits: Option<&'w Limits>,
    ) -> Result<Self, SimError> {
        if let Some(n) = config.interval
            && n <= 0
        {
            return Err(SimError::BadInterval(n));
        }
        if !reservations.requests.is_empty() && config.overrun == Overrun::Continue {
            return Err(SimError::ReservationsNeedKill);
        }
        let booking = Booking::new(reservations)?;
        let state = MachineState::new(&config.machine, workload, config.placement)?;
        match (&policy, &state) {
            (AnyPolicy::Units(_), MachineState::Topology(_)) => {
                return Err(SimError::PolicyMismatch { policy: "unit" });
            }
            (AnyPolicy::Nodes(_), MachineState::Uniform(_)) => {
                return Err(SimError::PolicyMismatch { policy: "node" });
            }
            _ => {}
        }
        if matches!(state, MachineState::Topology(_))
            && let Some(job) = workload.jobs.iter().find(|job| {
                workload.request(job).constraint.0 as usize >= workload.constraints.len()
            })
        {
            return Err(SimError::UnknownConstraint {
                job_id: job.id,
                constraint: workload.request(job).constraint.0,
            });
        }
        let mut engine = Engine {
            workload,
            config: config.clone(),
            policy,
            next_arrival: None,
            unadmitted: 0,
            completions: BinaryHeap::new(),
            queue: Queue::default(),
            running: RunningSet::default(),
            ended: Vec::new(),
            state,
            free: config.machine.capacity(),
            decisions: Decisions::default(),
            assignments: Vec::new(),
            outcomes: Reorder::default(),
            started_jobs: Vec::new(),
            decided: Vec::new(),
            gated: Vec::new(),
            idle_calls: 0,
            booking,
            limits: limits.map(|l| LimitState::new(l, workload)),
            admitted: Vec::new(),
            skip_idle_ticks: true,
            out: SimOutcome::default(),
            last: None,
            suspended: None,
            starts: Vec::new(),
        };
        engine.admit_next();
        Ok(engine)
    }

    /// Admits jobs until the next feasible one (infeasible ones are recorded as skipped, those
    /// the queue setup refuses as rejected).
    fn admit_next(&mut self) {
        self.next_arrival = None;
        while let Some(job) = self.workload.jobs.get(self.unadmitted) {
            let i = self.unadmitted as u32;
            self.unadmitted += 1;
            if let Some(l) = &mut self.limits
                && let Some(why) = l.rejects(i, job)
            {
                l.reject(i, why);
                self.outcomes.skip(i);
                continue;
            }
            match self.state.admit(self.workload, job) {
                Ok(demand) => {
                    self.next_arrival = Some(QueuedJob {
                        job: i,
                        submit: job.submit,
                        requested_time: job.requested_time,
                        demand,
                    });
                    return;
                }
                Err(why) => {
                    self.out.skipped.push((i, why));
                    self.outcomes.skip(i);
                }
            }
        }
    }

    /// The next instant with something to do, if any.
    fn next_instant(&self, after: Option<Time>) -> Option<Time> {
        let arrival = self.next_arrival.map(|j| j.submit);
        let completion = self.completions.peek().map(|Reverse((t, _, _))| *t);
        let tick = match (self.config.interval, self.queue.is_empty()) {
            // Held jobs wait for an event (a start or an end), not for a tick.
            (Some(n), false) => {
                let from = after.map_or(Time::MIN, |t| t + 1);
                Some(from.div_euclid(n) * n + if from.rem_euclid(n) == 0 { 0 } else { n })
            }
            _ => None,
        };
        let booking = self.booking.next_event();
        [arrival, completion, tick, booking]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs to the end, handing every job outcome and instant to `sink`; returns the rest of
    /// the outcome (skipped jobs, reservations, assignments: `jobs`, `steps` and `invocations`
    /// stay empty).
    fn run(mut self, sink: &mut dyn ScheduleSink) -> Result<SimOutcome, SimError> {
        match self.advance(sink)? {
            Advance::Done => self.finish(sink),
            // Only a stepped run's scheduler suspends ([`Stepped`]).
            Advance::Suspended(time) => Err(SimError::Policy {
                time,
                message: "the scheduler suspended its call outside a stepped run".to_string(),
            }),
        }
    }

    /// Processes instants until the run is over or the scheduler suspends its call (then the
    /// instant is left open: the next `advance` calls the scheduler again at the same instant,
    /// with the same view, and goes on from there).
    fn advance(&mut self, sink: &mut dyn ScheduleSink) -> Result<Advance, SimError> {
        let mut starts = std::mem::take(&mut self.starts);
        let result = self.advance_with(sink, &mut starts);
        self.starts = starts;
        result
    }

    fn advance_with(
        &mut self,
        sink: &mut dyn ScheduleSink,
        starts: &mut Vec<usize>,
    ) -> Result<Advance, SimError> {
        loop {
            let (now, call) = match self.suspended.take() {
                Some(open) => open,
                None => {
                    let Some(now) = self.next_instant(self.last) else {
                        return Ok(Advance::Done);
                    };
                    self.last = Some(now);
                    self.open_instant(now)?;
                    let decides = match self.config.interval {
                        None => true,
                        Some(n) => now.rem_euclid(n) == 0 && !self.queue.is_empty(),
                    };
                    if !decides {
                        self.close_instant(now, None, (0, 0), sink);
                        continue;
                    }
                    let call = self.queue.len() as u32;
                    sink.call(now, call);
                    (now, call)
                }
            };
            let Called::Applied { cut: mut again } = self.decide(now, starts)? else {
                self.suspended = Some((now, call));
                return Ok(Advance::Suspended(now));
            };
            let (mut extra_calls, mut extra_call_queue) = (0u32, 0u64);
            // Starts may free queued-job caps: the jobs they admit are decided on at once.
            // A call cut short by a CPU quota is asked again, without the jobs it gated.
            while self.admit_held(now) || again {
                extra_calls += 1;
                extra_call_queue += self.queue.len() as u64;
                sink.call(now, self.queue.len() as u32);
                again = match self.decide(now, starts)? {
                    Called::Applied { cut } => cut,
                    Called::Suspended => {
                        return Err(SimError::Policy {
                            time: now,
                            message: "a stepped run cannot suspend with queues and limits"
                                .to_string(),
                        });
                    }
                };
            }
            self.close_instant(now, Some(call), (extra_calls, extra_call_queue), sink);
        }
    }

    /// Applies the events of instant `now`: completions, reservation ends, arrivals, held jobs
    /// admitted, reservation starts and requests.
    fn open_instant(&mut self, now: Time) -> Result<(), SimError> {
        self.complete_until(now);
        self.end_reservations(now);
        while let Some(job) = self.next_arrival.filter(|j| j.submit == now) {
            self.admit_next();
            match self.limits.as_mut().map(|l| l.arrive(job.job, now)) {
                None => self.queue.push(job),
                Some(Admission::Eligible) => self.enqueue(job),
                Some(Admission::Held(_)) => {}
            }
        }
        self.admit_held(now);
        // Reservations due now start before requests are placed: a view counts every
        // reservation with start ≤ now as started (one granted to start at once starts as
        // soon as it is granted).
        self.start_reservations(now)?;
        self.handle_requests(now)
    }

    /// Hands over what instant `now` settled: the outcomes now in order, and the instant.
    fn close_instant(
        &mut self,
        now: Time,
        call: Option<u32>,
        (extra_calls, extra_call_queue): (u32, u64),
        sink: &mut dyn ScheduleSink,
    ) {
        self.outcomes.emit_ready(sink);
        let reserved = self.booking.reserved;
        let busy = self.config.machine.capacity().unit_count() - self.free.unit_count() - reserved;
        let held = self.limits.as_ref().map_or(0, LimitState::held);
        let instant = Instant {
            time: now,
            queue_len: (self.queue.len() + held) as u32,
            busy,
            reserved,
            call,
            extra_calls,
            extra_call_queue,
        };
        sink.instant(&instant);
        if call.is_some()
            && let Some((first, count, period)) = self.idle_ticks(now)
        {
            // The calls at these ticks would see this instant's state and start nothing:
            // they are recorded as made, without asking the scheduler.
            sink.instants(
                &Instant {
                    time: first,
                    call: Some(self.queue.len() as u32),
                    extra_calls: 0,
                    extra_call_queue: 0,
                    ..instant
                },
                period,
                count,
            );
            self.last = Some(first + (count as Time - 1) * period);
        }
    }

    /// After the last instant: a stall if jobs still wait, else the rest of the outcome.
    fn finish(mut self, sink: &mut dyn ScheduleSink) -> Result<SimOutcome, SimError> {
        let held = self.limits.as_ref().map_or(0, LimitState::held);
        if !self.queue.is_empty() || held > 0 {
            // No event is left that could start them.
            let time = self.last.unwrap_or_default();
            return Err(SimError::Stalled {
                time,
                waiting: self.queue.len() + held,
            });
        }
        self.outcomes.emit_ready(sink);
        let mut out = self.out;
        out.limits = self.limits.map(LimitState::finish);
        out.assignments = self.assignments.into_iter().flatten().collect();
        out.reserved_nodes.sort_by_key(|r| r.0);
        out.reservations.sort_by_key(|r| r.request);
        Ok(out)
    }

    /// Periodic mode, right after a call at `now`: the ticks before the next event (arrival,
    /// completion, reservation request, start or end) at which a call cannot start anything,
    /// as (first tick, how many, period). Nothing changes the machine or the queue before that
    /// event, the scheduler has seen every completion, and no waiting job fits in the free
    /// units, so every call at those ticks would start nothing; the engine records them as
    /// such without asking (a 2-job trace with `interval: 1` over a long span took time in
    /// proportion to the span). Uniform machines without queue limits, under the rules whose
    /// calls keep no plan (not conservative), only: there, "fits in the free units" is exact and
    /// cheap (O(queue) once per skipped stretch).
    fn idle_ticks(&self, now: Time) -> Option<(Time, u64, Time)> {
        let n = self.config.interval?;
        if !self.skip_idle_ticks
            // Conservative keeps a plan from call to call (its compression runs at each call),
            // so its calls are never skipped.
            || self.config.scheduler == SchedulerKind::Conservative
            || self.queue.is_empty()
            || !self.ended.is_empty()
            || self.limits.is_some()
            || !matches!(self.state, MachineState::Uniform(_))
        {
            return None;
        }
        let arrival = self.next_arrival.map(|j| j.submit);
        let completion = self.completions.peek().map(|Reverse((t, _, _))| *t);
        let event = [arrival, completion, self.booking.next_event()]
            .into_iter()
            .flatten()
            .min()?;
        let first = now.div_euclid(n).checked_add(1)?.checked_mul(n)?;
        let last = (event - 1).div_euclid(n) * n;
        if first > last || self.queue.iter().any(|q| q.demand.fits_in(&self.free)) {
            return None;
        }
        Some((first, ((last - first) / n + 1) as u64, n))
    }

    /// Decides every reservation request created at `now`, in id order: the request's own
    /// throttles, then placement, then the sliding-window caps on the granted window.
    fn handle_requests(&mut self, now: Time) -> Result<(), SimError> {
        while let Some(&i) = self.booking.order.get(self.booking.next_request) {
            let request = self.booking.request(i);
            if request.created != now {
                break;
            }
            self.booking.next_request += 1;
            let setup = self.booking.setup;
            let throttle = &mut self.booking.throttle;
            let granted = match &self.state {
                MachineState::Uniform(_) => {
                    let capacity = self.config.machine.capacity().unit_count();
                    let view = View {
                        now,
                        capacity: self.config.machine.capacity(),
                        free: self.free,
                        queue: &self.queue,
                        jobs: &self.workload.jobs,
                        running: &self.running,
                        ended: &self.ended,
                        completed: &[],
                        reservations: &self.booking.granted,
                        limits: self.limits.as_ref(),
                    };
                    throttle.check_request(request, capacity).and_then(|()| {
                        let start = place(&view, request, setup.placement, setup.on_conflict)?;
                        throttle.check_window(request, start)?;
                        Ok((start, None))
                    })
                }
                MachineState::Topology(t) => {
                    let capacity = capacity_for(&t.layout, request);
                    let view = node_view(
                        t,
                        now,
                        self.config.placement,
                        self.workload,
                        &self.queue,
                        &self.running,
                        self.limits.as_ref(),
                    );
                    throttle.check_request(request, capacity).and_then(|()| {
                        let w = place_on_nodes(&view, request, setup.placement, setup.on_conflict)?;
                        throttle.check_window(request, w.start)?;
                        Ok((w.start, Some(w)))
                    })
                }
            };
            let outcome = match granted {
                Ok((start, on_nodes)) => {
                    self.booking.throttle.commit(request, start);
                    let end = start + request.duration;
                    match (on_nodes, &mut self.state) {
                        (Some(w), MachineState::Topology(t)) => {
                            let entry = NodeReservation {
                                start,
                                end,
                                class: w.class,
                                count: request.width as u32,
                                nodes: w.nodes,
                            };
                            let at = t
                                .reservations
                                .iter()
                                .zip(&t.reservation_requests)
                                .position(|(r, &k)| (r.start, k) > (start, i))
                                .unwrap_or(t.reservations.len());
                            t.reservations.insert(at, entry);
                            t.reservation_requests.insert(at, i);
                            t.epoch += 1;
                        }
                        _ => {
                            let window = ReservedWindow {
                                start,
                                end,
                                width: request.width,
                            };
                            let at = self.booking.granted.partition_point(|w| *w <= window);
                            self.booking.granted.insert(at, window);
                        }
                    }
                    self.booking.starts.push(Reverse((start, i)));
                    ReservationOutcome {
                        request: i,
                        decision: if start == request.start {
                            Decision::Granted
                        } else {
                            Decision::Shifted
                        },
                        window: Some((start, end)),
                    }
                }
                Err(rule) => ReservationOutcome {
                    request: i,
                    decision: Decision::Rejected(rule),
                    window: None,
                },
            };
            let starts_now = outcome.window.is_some_and(|(start, _)| start == now);
            self.out.reservations.push(outcome);
            if starts_now {
                self.start_reservations(now)?;
            }
        }
        Ok(())
    }

    /// Blocks the capacity of the reservations starting at `now`. Placement and the schedulers
    /// keep it free, so a failure is a bug, reported as an error.
    fn start_reservations(&mut self, now: Time) -> Result<(), SimError> {
        while let Some(&Reverse((start, i))) = self.booking.starts.peek() {
            if start != now {
                break;
            }
            self.booking.starts.pop();
            let request = self.booking.request(i);
            let conflict = SimError::ReservationConflict {
                time: now,
                id: request.id,
            };
            let held = &mut self.booking.held[i as usize];
            let units = match &mut self.state {
                MachineState::Uniform(u) => {
                    let width = ResourceVec::units(request.width);
                    if !width.fits_in(&self.free) || u.table.allocate(width, held).is_err() {
                        return Err(conflict);
                    }
                    request.width
                }
                MachineState::Topology(t) => {
                    let at = t
                        .reservation_requests
                        .iter()
                        .position(|&k| k == i)
                        .ok_or(conflict.clone())?;
                    let class = t.reservations[at].class;
                    let cap = t.layout.class(class).capacity.per_node;
                    if t.reservations[at].nodes.is_empty() {
                        let chosen: Vec<u32> = t
                            .free
                            .candidates(class, 0, true)
                            .take(t.reservations[at].count as usize)
                            .collect();
                        t.reservations[at].nodes = chosen;
                    }
                    let nodes = &t.reservations[at].nodes;
                    if nodes.len() != t.reservations[at].count as usize
                        || nodes.iter().any(|&n| !t.free.is_idle(n))
                    {
                        return Err(conflict);
                    }
                    for &n in nodes {
                        t.free.take(n, cap).map_err(|_| conflict.clone())?;
                    }
                    held.clone_from(nodes);
                    self.out.reserved_nodes.push((i, nodes.clone()));
                    cap.0[0] * nodes.len() as u64
                }
            };
            self.free -= ResourceVec::units(units);
            self.booking.reserved += units;
            self.booking.ends.push(Reverse((now + request.duration, i)));
        }
        Ok(())
    }

    /// Gives back the capacity of the reservations ending at `now`.
    fn end_reservations(&mut self, now: Time) {
        while let Some(&Reverse((end, i))) = self.booking.ends.peek() {
            if end != now {
                break;
            }
            self.booking.ends.pop();
            let request = self.booking.request(i);
            let held = std::mem::take(&mut self.booking.held[i as usize]);
            let units = match &mut self.state {
                MachineState::Uniform(u) => {
                    let width = ResourceVec::units(request.width);
                    u.table.release(width, &held);
                    let window = ReservedWindow {
                        start: end - request.duration,
                        end,
                        width: request.width,
                    };
                    if let Some(at) = self.booking.granted.iter().position(|w| *w == window) {
                        self.booking.granted.remove(at);
                    }
                    request.width
                }
                MachineState::Topology(t) => {
                    let mut cores = 0;
                    if let Some(at) = t.reservation_requests.iter().position(|&k| k == i) {
                        let cap = t.layout.class(t.reservations[at].class).capacity.per_node;
                        for &n in &held {
                            t.free.give(n, cap);
                            cores += cap.0[0];
                        }
                        t.reservations.remove(at);
                        t.reservation_requests.remove(at);
                    }
                    cores
                }
            };
            self.free += ResourceVec::units(units);
            self.booking.reserved -= units;
        }
    }

    fn complete_until(&mut self, now: Time) {
        while let Some(&Reverse((end, job, expected_end))) = self.completions.peek() {
            if end != now {
                break;
            }
            self.completions.pop();
            let running = self
                .running
                .remove(expected_end, job)
                .expect("running job is tracked");
            self.free += running.demand;
            if let Some(l) = &mut self.limits {
                l.ended(job);
            }
            match &mut self.state {
                MachineState::Uniform(u) => {
                    let nodes = u.held.remove(&job).unwrap_or_default();
                    u.table.release(running.demand, &nodes);
                    u.completed.push(Completed {
                        job,
                        expected_end,
                        end: now,
                    });
                }
                MachineState::Topology(t) => {
                    // Every job completes before the run ends: its nodes move to the outcome.
                    if let Some(a) = t.release(job, expected_end, now) {
                        if self.assignments.is_empty() {
                            self.assignments = vec![None; self.workload.len()];
                        }
                        self.assignments[job as usize] = Some(Assignment {
                            job,
                            class: a.class,
                            nodes: a.nodes,
                        });
                    }
                }
            }
            self.ended.push(running);
        }
    }

    /// One scheduler call at `now` and its starts: suspended (nothing applied: it is asked
    /// again at the same instant), or applied — and then whether a CPU quota cut it short (the
    /// policy must be asked again at `now`).
    fn decide(&mut self, now: Time, starts: &mut Vec<usize>) -> Result<Called, SimError> {
        let Called::Applied { cut } = self.ask(now, starts)? else {
            return Ok(Called::Suspended);
        };
        if !starts.is_empty() {
            let mut gated = std::mem::take(&mut self.gated);
            gated.clear();
            if let Some(l) = &mut self.limits {
                for &job in &self.started_jobs {
                    l.started(job, now, &mut gated);
                }
            }
            // Jobs a start put behind a CPU quota leave the queue with the started ones.
            let withdrawn = !gated.is_empty();
            if withdrawn {
                for &job in &gated {
                    let pos = self
                        .queue
                        .position_of(job)
                        .expect("a gated job was eligible");
                    starts.push(pos);
                }
                starts.sort_unstable();
            }
            // O(started × log queue): the queue marks the jobs gone (src/sim/queue.rs).
            self.queue.remove_positions(starts);
            self.gated = gated;
            if withdrawn || cut {
                // A planning policy's plan held jobs that left without starting, or decisions
                // that were not applied: it plans afresh.
                self.queue.mark_changed();
                if let MachineState::Topology(t) = &mut self.state {
                    t.epoch += 1;
                }
            }
            // Backfilled: an earlier-submitted job is still waiting, i.e. the new queue head
            // precedes it in submission order.
            if let Some(head) = self.queue.first().map(|q| q.job) {
                for &job in &self.started_jobs {
                    if job > head {
                        self.outcomes.mark_backfilled(job);
                    }
                }
            }
        }
        // Periodic mode keeps ticking while jobs wait, so a policy that leaves an idle machine
        // idle forever would never end: report it after a bounded number of such calls.
        let idle = self.running.is_empty()
            && self.next_arrival.is_none()
            && self.booking.is_done()
            && self.limits.as_ref().is_none_or(|l| l.held() == 0);
        if idle && !self.queue.is_empty() {
            self.idle_calls += 1;
            if self.idle_calls > MAX_IDLE_CALLS {
                return Err(SimError::Stalled {
                    time: now,
                    waiting: self.queue.len(),
                });
            }
        } else {
            self.idle_calls = 0;
        }
        Ok(Called::Applied { cut })
    }

    /// Asks the policy for its decisions at `now` and starts them; `starts` receives the queue
    /// positions started, in increasing order. Under CPU quotas only the longest prefix of the
    /// decisions, in the order the policy made them, that keeps every quota counting the jobs
    /// running (those started before it in the prefix included) starts ([`Called::Applied`]'s
    /// `cut` says whether the decisions were cut so). [`Called::Suspended`] when the policy
    /// suspended its call ([`Scheduler::suspended`]): nothing is applied or cleared, so that the
    /// same view is shown again when the run resumes.
    fn ask(&mut self, now: Time, starts: &mut Vec<usize>) -> Result<Called, SimError> {
        starts.clear();
        self.started_jobs.clear();
        let mut cut = false;
        match &mut self.policy {
            AnyPolicy::Units(scheduler) => {
                let MachineState::Uniform(u) = &mut self.state else {
                    unreachable!("checked when the engine was built");
                };
                let view = View {
                    now,
                    capacity: self.config.machine.capacity(),
                    free: self.free,
                    queue: &self.queue,
                    jobs: &self.workload.jobs,
                    running: &self.running,
                    ended: &self.ended,
                    completed: &u.completed,
                    reservations: &self.booking.granted,
                    limits: self.limits.as_ref(),
                };
                scheduler.schedule(&view, starts);
                if let Some(failure) = scheduler.failure() {
                    return Err(failure);
                }
                if scheduler.suspended() {
                    if !starts.is_empty() {
                        return Err(SimError::Policy {
                            time: now,
                            message: "the scheduler suspended its call after deciding starts"
                                .to_string(),
                        });
                    }
                    return Ok(Called::Suspended);
                }
                u.completed.clear();
                self.decided.clone_from(starts);
                starts.sort_unstable();
                for (k, &pos) in starts.iter().enumerate() {
                    if pos >= self.queue.len() || (k > 0 && starts[k - 1] == pos) {
                        return Err(SimError::InvalidDecision {
                            time: now,
                            position: pos,
                        });
                    }
                }
                if let Some(l) = &self.limits {
                    let queue = &self.queue;
                    let keep = l.quota_prefix(self.decided.iter().map(|&pos| queue[pos].job));
                    if keep < self.decided.len() {
                        cut = true;
                        self.decided.truncate(keep);
                        starts.clone_from(&self.decided);
                        starts.sort_unstable();
                    }
                }
                if self.config.order.reorder == OrderReorder::Start && !self.decided.is_empty() {
                    // One start per pass: the first decided, then the scheduler is asked again
                    // on priorities that count it.
                    cut = true;
                    self.decided.truncate(1);
                    starts.clone_from(&self.decided);
                }
                for &pos in starts.iter() {
                    let queued = self.queue[pos];
                    self.start(now, queued, None)?;
                    self.started_jobs.push(queued.job);
                }
                let AnyPolicy::Units(scheduler) = &mut self.policy else {
                    unreachable!("this arm's policy");
                };
                for &pos in &self.decided {
                    scheduler.started(now, self.queue[pos].job);
                }
            }
            AnyPolicy::Nodes(scheduler) => {
                let MachineState::Topology(t) = &mut self.state else {
                    unreachable!("checked when the engine was built");
                };
                self.decisions.clear();
                let view = node_view(
                    t,
                    now,
                    self.config.placement,
                    self.workload,
                    &self.queue,
                    &self.running,
                    self.limits.as_ref(),
                );
                scheduler.schedule(&view, &mut self.decisions);
                if let Some(failure) = scheduler.failure() {
                    return Err(failure);
                }
                if scheduler.suspended() {
                    if !self.decisions.starts().is_empty() {
                        return Err(SimError::Policy {
                            time: now,
                            message: "the scheduler suspended its call after deciding starts"
                                .to_string(),
                        });
                    }
                    return Ok(Called::Suspended);
                }
                t.completed.clear();
                let decisions = std::mem::take(&mut self.decisions);
                starts.extend(decisions.starts().iter().map(|d| d.pos));
                starts.sort_unstable();
                for (k, &pos) in starts.iter().enumerate() {
                    if pos >= self.queue.len() || (k > 0 && starts[k - 1] == pos) {
                        return Err(SimError::InvalidDecision {
                            time: now,
                            position: pos,
                        });
                    }
                }
                let mut keep = decisions.starts().len();
                if let Some(l) = &self.limits {
                    let queue = &self.queue;
                    keep = l.quota_prefix(decisions.starts().iter().map(|d| queue[d.pos].job));
                    if keep < decisions.starts().len() {
                        cut = true;
                        starts.clear();
                        starts.extend(decisions.starts()[..keep].iter().map(|d| d.pos));
                        starts.sort_unstable();
                    }
                }
                if self.config.order.reorder == OrderReorder::Start && keep > 0 {
                    // One start per pass, as on a uniform machine.
                    cut = true;
                    keep = 1;
                    starts.clear();
                    starts.push(decisions.starts()[0].pos);
                }
                for d in &decisions.starts()[..keep] {
                    let queued = self.queue[d.pos];
                    self.start(now, queued, Some((d.class, decisions.nodes(d))))?;
                    self.started_jobs.push(queued.job);
                }
                let AnyPolicy::Nodes(scheduler) = &mut self.policy else {
                    unreachable!("this arm's policy");
                };
                for d in &decisions.starts()[..keep] {
                    scheduler.started(now, self.queue[d.pos].job, d.class);
                }
                self.decisions = decisions;
            }
        }
        self.ended.clear();
        Ok(Called::Applied { cut })
    }

    /// Starts `queued` now: on a uniform machine wherever the node table puts it, on a topology
    /// on the class and nodes the policy named.
    fn start(
        &mut self,
        now: Time,
        queued: QueuedJob,
        on: Option<(u32, &[u32])>,
    ) -> Result<(), SimError> {
        let job = &self.workload.jobs[queued.job as usize];
        let over = SimError::OverAllocation {
            time: now,
            job_id: job.id,
        };
        let (units, cluster, class, nodes, held, runtime) = match &mut self.state {
            MachineState::Uniform(u) => {
                let held = u.held.entry(queued.job).or_default();
                if !queued.demand.fits_in(&self.free)
                    || u.table.allocate(queued.demand, held).is_err()
                {
                    return Err(over);
                }
                let units = queued.demand.unit_count();
                let procs = units * u.machine.procs_per_unit();
                (
                    units,
                    0,
                    0,
                    held.len() as u32,
                    ResourceVec::units(procs),
                    job.runtime,
                )
            }
            MachineState::Topology(t) => {
                let Some((class, nodes)) = on else {
                    return Err(SimError::InvalidPlacement {
                        time: now,
                        job_id: job.id,
                        problem: "no nodes given".into(),
                    });
                };
                let shape = t
                    .start(
                        queued.job,
                        (job.procs, self.workload.request(job)),
                        class,
                        nodes,
                    )
                    .map_err(|r| match r {
                        Refusal::OverAllocation => over,
                        Refusal::Invalid(problem) => SimError::InvalidPlacement {
                            time: now,
                            job_id: job.id,
                            problem,
                        },
                    })?;
                let total = shape.total();
                let info = t.layout.class(class);
                (
                    total.0[0],
                    info.cluster,
                    class,
                    shape.count,
                    total,
                    t.layout.runtime_on(job.runtime, class),
                )
            }
        };
        let demand = ResourceVec::units(units);
        self.free -= demand;
        let mut killed = self.config.overrun == Overrun::Kill && runtime > job.requested_time;
        // `compat: aleang`: the job holds its nodes a second longer than it runs (never past a
        // kill at its requested time).
        let occupancy = self.config.order.compat.occupancy();
        let mut run = if killed {
            job.requested_time
        } else {
            runtime + occupancy
        };
        if let Some(l) = &mut self.limits
            && let Some(at) = l.kill_at(queued.job, job, runtime)
        {
            // The queue's limit, unless the job's own request stops it first.
            if at <= run {
                run = at;
                killed = true;
            } else {
                l.unkill(queued.job);
            }
        }
        let expected_end = now + job.requested_time;
        self.running.insert(RunningJob {
            job: queued.job,
            start: now,
            expected_end,
            demand,
        });
        self.completions
            .push(Reverse((now + run, queued.job, expected_end)));
        self.outcomes.started(JobOutcome {
            job: queued.job,
            start: now,
            end: now + run,
            units,
            cluster,
            class,
            nodes,
            held,
            killed,
            backfilled: false,
        });
        Ok(())
    }
}

/// Job outcomes on their way to the sink in submission order: an outcome leaves once every
/// earlier job has started (or was skipped as infeasible). Holds only the outcomes of jobs that
/// started ahead of a job still waiting — a handful, not the workload.
#[derive(Default)]
struct Reorder {
    /// Index of the next job to hand over.
    next: u32,
    /// Slots of jobs `next ..`, in order.
    slots: VecDeque<Slot>,
}

#[derive(Clone, Copy)]
enum Slot {
    Waiting,
    Started(JobOutcome),
    Skipped,
}

impl Reorder {
    fn slot(&mut self, job: u32) -> &mut Slot {
        let at = (job - self.next) as usize;
        if self.slots.len() <= at {
            self.slots.resize(at + 1, Slot::Waiting);
        }
        &mut self.slots[at]
    }

    fn started(&mut self, outcome: JobOutcome) {
        *self.slot(outcome.job) = Slot::Started(outcome);
    }

    fn skip(&mut self, job: u32) {
        *self.slot(job) = Slot::Skipped;
    }

    fn mark_backfilled(&mut self, job: u32) {
        if job >= self.next
            && let Slot::Started(outcome) = self.slot(job)
        {
            outcome.backfilled = true;
        }
    }

    /// Hands over every outcome whose earlier jobs have all started or been skipped.
    fn emit_ready(&mut self, sink: &mut dyn ScheduleSink) {
        while let Some(slot) = self.slots.front() {
            match slot {
                Slot::Waiting => break,
                Slot::Started(outcome) => sink.job(outcome),
                Slot::Skipped => {}
            }
            self.slots.pop_front();
            self.next += 1;
        }
    }
}

impl Engine<'_> {
    /// Puts an eligible job into the policy's queue at its place in submission order.
    fn enqueue(&mut self, job: QueuedJob) {
        self.queue.insert(job);
    }

    /// Moves the held jobs that freed caps admit into the policy's queue; whether any moved.
    fn admit_held(&mut self, now: Time) -> bool {
        let Some(l) = &mut self.limits else {
            return false;
        };
        let mut admitted = std::mem::take(&mut self.admitted);
        admitted.clear();
        l.admit(now, &mut admitted);
        for &i in &admitted {
            // Its demand again (no per-job copy of the arrivals is kept): a held job was
            // admitted once, so the machine can run it.
            let job = &self.workload.jobs[i as usize];
            let demand = self
                .state
                .admit(self.workload, job)
                .expect("a held job is a feasible arrival");
            self.enqueue(QueuedJob {
                job: i,
                submit: job.submit,
                requested_time: job.requested_time,
                demand,
            });
        }
        let any = !admitted.is_empty();
        if any && let MachineState::Topology(t) = &mut self.state {
            // Jobs submitted earlier than some already seen: a node policy's incremental plan
            // (which takes new jobs as those after the last one seen) must be rebuilt.
            t.epoch += 1;
        }
        self.admitted = admitted;
        any
    }
}

/// What a node-level policy sees of the engine's state.
fn node_view<'a>(
    t: &'a TopologyState,
    now: Time,
    placement: Placement,
    workload: &'a Workload,
    queue: &'a Queue,
    running: &'a RunningSet,
    limits: Option<&'a LimitState<'a>>,
) -> NodeView<'a> {
    NodeView {
        now,
        layout: &t.layout,
        free: &t.free,
        placement,
        jobs: &workload.jobs,
        requests: &workload.requests,
        eligible: &t.eligible,
        queue,
        running,
        allocs: &t.allocs,
        completed: &t.completed,
        reservations: &t.reservations,
        reservations_epoch: t.epoch,
        limits,
    }
}
