//! The reinforcement-learning environment's core (docs/rl.md): episodes of a trace run by the
//! engine one agent decision at a time ([`crate::sim::Stepped`]), observations written into
//! caller-provided buffers, rewards from the episode's job outcomes. Pure: no file system, no
//! threads, no clock; the Python package's `schedlab.gym` is a thin layer over [`Env`].
//!
//! An episode is `episode_jobs` consecutive jobs of the trace from a start drawn from the
//! env's seeded stream (or given), on a pool of the trace's processors or on a topology (an
//! Alea/AleaNG machine file). At each decision the agent picks one of the first K waiting
//! jobs; [`agent::Agent`] (on a pool) or [`node_agent::NodeAgent`] (on a topology, node-level
//! fit and EASY) starts it, or commits to it and backfills around it until it fits. Same seed
//! and actions: the same episode, byte for byte.

pub mod agent;
pub mod node_agent;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

pub use agent::Backfill;
use agent::{Agent, Shared};
use node_agent::NodeAgent;

use crate::sim::engine::JobOutcome;
use crate::sim::reservation::Reservations;
use crate::sim::schedule::{Instant, ScheduleSink};
use crate::sim::topology::Shape;
use crate::sim::{Machine, SchedulerKind, SimConfig, Stepped, Time, Workload};

/// A job feature of the observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Seconds waited so far / time scale.
    Wait,
    /// Requested time / time scale.
    RequestedTime,
    /// Requested processors / machine processors.
    Procs,
    /// Requested memory / the largest request of the trace (0 when none asks).
    Memory,
    /// Requested GPUs / the largest request of the trace (0 when none asks).
    Gpus,
    /// The user's share of the core-seconds used so far (completed jobs, running jobs to now).
    UserShare,
    /// The SWF queue number (-1 when unknown), as is.
    Queue,
    /// 1 when the job fits now (in the units free on a pool; on a topology, on the nodes: some
    /// class it may use has enough nodes with its per-node cores, memory and GPUs free), else 0.
    CanStart,
}

impl Feature {
    pub const DEFAULT: [Feature; 8] = [
        Feature::Wait,
        Feature::RequestedTime,
        Feature::Procs,
        Feature::Memory,
        Feature::Gpus,
        Feature::UserShare,
        Feature::Queue,
        Feature::CanStart,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Feature::Wait => "wait",
            Feature::RequestedTime => "requested_time",
            Feature::Procs => "procs",
            Feature::Memory => "memory",
            Feature::Gpus => "gpus",
            Feature::UserShare => "user_share",
            Feature::Queue => "queue",
            Feature::CanStart => "can_start",
        }
    }
}

impl std::str::FromStr for Feature {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Feature::DEFAULT
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Feature::DEFAULT.iter().map(|f| f.name()).collect();
                format!(
                    "unknown feature {s:?} (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// The episode metric a reward is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Mean bounded slowdown (reward: its negative).
    BoundedSlowdown,
    /// Mean wait in seconds (reward: its negative).
    Wait,
    /// Utilization of the machine over the episode (reward: itself; at the end only).
    Utilization,
    /// The fraction of the episode's jobs that end after their expected end time (Tóth &
    /// Klusáček's EET, Algorithm 1, on the machine's processors split equally among the
    /// episode's users; reward: its negative; at the end only).
    EetViolations,
    /// No reward from the core (the Python layer computes it from the jobs table).
    None,
}

/// Where episodes start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Starts {
    /// Uniformly among the possible starts, from the env's seeded stream.
    Random,
    /// These trace indices, in turn.
    Fixed(Vec<usize>),
}

#[derive(Clone, Debug)]
pub struct EnvConfig {
    /// Job slots of the observation (the first K waiting jobs).
    pub k: usize,
    pub features: Vec<Feature>,
    /// Running jobs described in the machine features.
    pub running_slots: usize,
    pub backfill: Backfill,
    /// Jobs per episode (`None`: the whole trace).
    pub episode_jobs: Option<usize>,
    pub starts: Starts,
    pub metric: Metric,
    /// Reward at each step (the metric's increments) rather than at the end.
    pub per_step: bool,
    /// Bounded-slowdown threshold, seconds.
    pub tau: Time,
    /// Seconds that count as 1 in time features.
    pub time_scale: f64,
}

impl EnvConfig {
    pub fn new() -> Self {
        EnvConfig {
            k: 128,
            features: Feature::DEFAULT.to_vec(),
            running_slots: 8,
            backfill: Backfill::Easy,
            episode_jobs: Some(256),
            starts: Starts::Random,
            metric: Metric::BoundedSlowdown,
            per_step: false,
            tau: 10,
            time_scale: 86_400.0,
        }
    }

    /// Machine features on a pool: free fraction, waiting jobs beyond K (fraction of K), then
    /// per running slot its remaining requested time (/ time scale) and units (/ capacity). On
    /// a topology ([`Env::machine_features`]) the free memory and GPU fractions follow.
    pub fn machine_features(&self) -> usize {
        2 + 2 * self.running_slots
    }
}

impl Default for EnvConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// A bad action or call order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    #[error(
        "action {action} is masked: {valid} job slots are valid now (actions 0 to {last}); only an action whose mask entry is 1 is accepted",
        last = *valid as i64 - 1
    )]
    Masked { action: i64, valid: usize },
    #[error("the episode is over: call reset() before step()")]
    Over,
    #[error("the simulation failed: {0}")]
    Sim(String),
}

/// The episode's outcomes as the engine hands them over.
#[derive(Default)]
struct Outcomes {
    jobs: Vec<JobOutcome>,
    tau: Time,
    /// Σ of the metric over the jobs handed over, and at the last step.
    sum: f64,
    reported: f64,
    metric: Option<Metric>,
    submits: Vec<Time>,
}

impl ScheduleSink for Outcomes {
    fn job(&mut self, outcome: &JobOutcome) {
        let submit = self.submits[outcome.job as usize];
        let wait = (outcome.start - submit) as f64;
        let run = (outcome.end - outcome.start) as f64;
        self.sum += match self.metric {
            Some(Metric::BoundedSlowdown) => ((wait + run) / run.max(self.tau as f64)).max(1.0),
            Some(Metric::Wait) => wait,
            _ => 0.0,
        };
        self.jobs.push(*outcome);
    }

    fn instant(&mut self, _: &Instant) {}
}

/// One episode: its workload and the stepped run over it.
struct Episode {
    // Dropped first: it borrows the boxes below.
    run: Option<Stepped<'static>>,
    sink: Outcomes,
    /// Trace index of the episode's first job.
    first: usize,
    workload: Box<Workload>,
    _reservations: Box<Reservations>,
}

/// One environment.
pub struct Env {
    trace: Arc<Workload>,
    /// Processors of the pool, or cores of the topology.
    procs: u32,
    machine: Machine,
    pub config: EnvConfig,
    rng: ChaCha8Rng,
    next_fixed: usize,
    shared: Rc<RefCell<Shared>>,
    episode: Option<Episode>,
    max_memory: f64,
    max_gpus: f64,
    /// Each trace job's user as a dense index, and how many users there are.
    users: Vec<u32>,
    n_users: usize,
    /// Decisions taken in this episode.
    pub decisions: u64,
}

/// What one step gives back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepResult {
    pub reward: f64,
    pub done: bool,
}

fn memory_and_gpus(workload: &Workload, index: usize) -> (f64, f64) {
    let job = &workload.jobs[index];
    let request = workload.requests.get(job.request);
    match request.shape {
        Shape::Flexible => (request.memory_kb as f64 * f64::from(job.procs), 0.0),
        Shape::Nodes { count, per_node } => (
            per_node.memory_kb as f64 * f64::from(count),
            f64::from(per_node.gpus) * f64::from(count),
        ),
    }
}

impl Env {
    /// An environment over `trace` on a pool of `procs` processors.
    pub fn new(
        trace: Arc<Workload>,
        procs: u32,
        config: EnvConfig,
        seed: u64,
    ) -> Result<Self, String> {
        Self::on_machine(trace, Machine::pool(procs), config, seed)
    }

    /// An environment over `trace` on `machine`: a pool, or a topology (node-level fit;
    /// backfilling none or EASY).
    pub fn on_machine(
        trace: Arc<Workload>,
        machine: Machine,
        config: EnvConfig,
        seed: u64,
    ) -> Result<Self, String> {
        if matches!(machine, Machine::Topology(_)) && config.backfill == Backfill::Conservative {
            return Err(
                "backfill=\"conservative\" is not available on a topology (machines=): give \"none\" or \"easy\""
                    .to_string(),
            );
        }
        let procs = u32::try_from(machine.capacity().unit_count() * machine.procs_per_unit())
            .map_err(|_| "the machine has more than 2^32 processors".to_string())?;
        if config.k == 0 {
            return Err("k must be at least 1".to_string());
        }
        if config.features.is_empty() {
            return Err("give at least one feature".to_string());
        }
        if config.tau <= 0 {
            return Err(format!(
                "tau must be a positive number of seconds, found {}",
                config.tau
            ));
        }
        if config.time_scale.is_nan() || config.time_scale <= 0.0 {
            return Err("time_scale must be positive".to_string());
        }
        let n = trace.len();
        match config.episode_jobs {
            Some(0) => return Err("episode_jobs must be at least 1".to_string()),
            Some(m) if m > n => {
                return Err(format!(
                    "episode_jobs is {m}, but the trace has only {n} jobs"
                ));
            }
            _ => {}
        }
        if n == 0 {
            return Err("the trace has no jobs".to_string());
        }
        if let Starts::Fixed(starts) = &config.starts {
            let len = config.episode_jobs.unwrap_or(n);
            if starts.is_empty() {
                return Err("give at least one episode start".to_string());
            }
            if let Some(s) = starts.iter().find(|&&s| s + len > n) {
                return Err(format!(
                    "an episode of {len} jobs cannot start at job {s}: the trace has {n} jobs (starts 0 to {})",
                    n - len
                ));
            }
        }
        let (mut max_memory, mut max_gpus) = (0.0f64, 0.0f64);
        for i in 0..n {
            let (m, g) = memory_and_gpus(&trace, i);
            max_memory = max_memory.max(m);
            max_gpus = max_gpus.max(g);
        }
        let mut dense = std::collections::HashMap::new();
        let users: Vec<u32> = trace
            .jobs
            .iter()
            .map(|j| {
                let next = dense.len() as u32;
                *dense.entry(j.user).or_insert(next)
            })
            .collect();
        Ok(Env {
            n_users: dense.len(),
            users,
            trace,
            procs,
            machine,
            config,
            rng: ChaCha8Rng::seed_from_u64(seed),
            next_fixed: 0,
            shared: Rc::new(RefCell::new(Shared::default())),
            episode: None,
            max_memory,
            max_gpus,
            decisions: 0,
        })
    }

    /// Starts a new episode (re-seeding the stream first when `seed` is given). `true` when it
    /// is over already (no decision to take: every job was infeasible).
    pub fn reset(&mut self, seed: Option<u64>) -> Result<bool, EnvError> {
        if let Some(seed) = seed {
            self.rng = ChaCha8Rng::seed_from_u64(seed);
            self.next_fixed = 0;
        }
        self.episode = None;
        self.decisions = 0;
        let n = self.trace.len();
        let len = self.config.episode_jobs.unwrap_or(n);
        let first = match &self.config.starts {
            Starts::Random => (self.rng.next_u64() % (n - len + 1) as u64) as usize,
            Starts::Fixed(starts) => {
                let s = starts[self.next_fixed % starts.len()];
                self.next_fixed += 1;
                s
            }
        };
        let mut workload = Workload {
            jobs: self.trace.jobs[first..first + len].to_vec(),
            constraints: self.trace.constraints.clone(),
            requests: self.trace.requests.clone(),
            queue_names: Default::default(),
            names: Default::default(),
        };
        if first == 0 && len == n {
            workload.queue_names = self.trace.queue_names.clone();
            workload.names = self.trace.names.clone();
        }
        let workload = Box::new(workload);
        let reservations = Box::new(Reservations::default());
        let track_usage = self.config.features.contains(&Feature::UserShare);
        let users = if track_usage {
            self.users[first..first + len].to_vec()
        } else {
            Vec::new()
        };
        *self.shared.borrow_mut() = Shared::new(track_usage, users, self.n_users);
        let config = SimConfig::new(self.machine.clone(), SchedulerKind::Fcfs);
        // SAFETY: the run borrows the workload and the reservations, which live in boxes owned
        // by the same `Episode`, never moved out of or mutated while the run exists, and
        // dropped after it (field order). The 'static lifetime never leaves this module.
        let run = unsafe {
            let w: &'static Workload = &*(workload.as_ref() as *const Workload);
            let r: &'static Reservations = &*(reservations.as_ref() as *const Reservations);
            if self.is_topology() {
                let agent =
                    NodeAgent::new(self.shared.clone(), self.config.backfill, self.config.k);
                Stepped::on_nodes(w, &config, Box::new(agent), r)
            } else {
                let agent = Agent::new(self.shared.clone(), self.config.backfill);
                Stepped::new(w, &config, Box::new(agent), r)
            }
            .map_err(|e| EnvError::Sim(e.to_string()))?
        };
        let submits = workload.jobs.iter().map(|j| j.submit).collect();
        self.episode = Some(Episode {
            run: Some(run),
            sink: Outcomes {
                tau: self.config.tau,
                metric: Some(self.config.metric),
                submits,
                ..Outcomes::default()
            },
            first,
            workload,
            _reservations: reservations,
        });
        self.advance()
    }

    /// Runs to the next decision; `true` when the episode ended instead.
    fn advance(&mut self) -> Result<bool, EnvError> {
        let Some(ep) = &mut self.episode else {
            return Err(EnvError::Over);
        };
        let Some(run) = &mut ep.run else {
            return Err(EnvError::Over);
        };
        match run.advance(&mut ep.sink) {
            Err(e) => Err(EnvError::Sim(e.to_string())),
            Ok(Some(_)) => Ok(false),
            Ok(None) => {
                let run = ep.run.take().expect("checked above");
                run.finish(&mut ep.sink)
                    .map_err(|e| EnvError::Sim(e.to_string()))?;
                Ok(true)
            }
        }
    }

    /// Whether the machine is a topology (node-level decisions).
    pub fn is_topology(&self) -> bool {
        matches!(self.machine, Machine::Topology(_))
    }

    /// Machine features of the observation: [`EnvConfig::machine_features`], and on a topology
    /// the free memory and GPU fractions after them.
    pub fn machine_features(&self) -> usize {
        self.config.machine_features() + if self.is_topology() { 2 } else { 0 }
    }

    /// Whether the episode is over (or none was started).
    pub fn is_done(&self) -> bool {
        self.episode.as_ref().is_none_or(|e| e.run.is_none())
    }

    /// Valid action slots now: min(K, waiting jobs); 0 when the episode is over.
    pub fn valid(&self) -> usize {
        if self.is_done() {
            return 0;
        }
        self.shared.borrow().call.waiting.len().min(self.config.k)
    }

    /// Takes action `action` (a slot below [`Env::valid`]).
    pub fn step(&mut self, action: i64) -> Result<StepResult, EnvError> {
        if self.is_done() {
            return Err(EnvError::Over);
        }
        let valid = self.valid();
        if action < 0 || action as usize >= valid {
            return Err(EnvError::Masked { action, valid });
        }
        self.shared.borrow_mut().action = Some(action as usize);
        self.decisions += 1;
        let done = self.advance()?;
        let ep = self.episode.as_mut().expect("an episode runs");
        let jobs = ep.workload.len().max(1) as f64;
        let reward = match (self.config.metric, self.config.per_step, done) {
            (Metric::BoundedSlowdown | Metric::Wait, true, _) => {
                let r = -(ep.sink.sum - ep.sink.reported) / jobs;
                ep.sink.reported = ep.sink.sum;
                r
            }
            (_, _, true) => self.final_reward()?,
            _ => 0.0,
        };
        Ok(StepResult { reward, done })
    }

    /// The metric of the finished episode as a reward (0 for [`Metric::None`]).
    fn final_reward(&self) -> Result<f64, EnvError> {
        let Some(ep) = &self.episode else {
            return Ok(0.0);
        };
        let n = ep.sink.jobs.len().max(1) as f64;
        Ok(match self.config.metric {
            Metric::BoundedSlowdown | Metric::Wait => -ep.sink.sum / n,
            Metric::Utilization => {
                let used: f64 = ep
                    .sink
                    .jobs
                    .iter()
                    .map(|o| (o.end - o.start) as f64 * o.units as f64)
                    .sum();
                let begin = ep.workload.jobs.first().map_or(0, |j| j.submit);
                let end = ep.sink.jobs.iter().map(|o| o.end).max().unwrap_or(begin);
                used / (f64::from(self.procs) * ((end - begin).max(1)) as f64)
            }
            Metric::EetViolations => -self.eet_violated_fraction(ep)?,
            Metric::None => 0.0,
        })
    }

    /// The fraction of `ep`'s jobs ending after their EET, as a simulation's
    /// `eet_violated_fraction` counts it (docs/metrics.md) under the default expected capacity
    /// on this pool: its processors split equally among the episode's users (memory is not a
    /// resource of the environment).
    fn eet_violated_fraction(&self, ep: &Episode) -> Result<f64, EnvError> {
        use crate::sim::metrics::eet::{EetJob, ExpectedCapacity, PerResource, evaluate};
        let jobs: Vec<EetJob> = ep
            .sink
            .jobs
            .iter()
            .map(|o| {
                let job = &ep.workload.jobs[o.job as usize];
                EetJob {
                    id: job.id,
                    user: job.user,
                    group: job.group,
                    submit: job.submit,
                    runtime: o.end - o.start,
                    start: Some(o.start),
                    request: PerResource::new(u64::from(job.procs), 0, 0),
                }
            })
            .collect();
        let rule = ExpectedCapacity::default().rule(u64::from(self.procs), 0, &[]);
        let report = evaluate(&jobs, &rule)
            .map_err(|e| EnvError::Sim(format!("expected end times: {e}")))?;
        Ok(report.summary.violated_fraction.unwrap_or(0.0))
    }

    /// Writes the observation: `jobs` (K × F, row-major), `machine` (machine features), `mask`
    /// (K). Zeros after the episode's end.
    pub fn observe(&self, jobs: &mut [f32], machine: &mut [f32], mask: &mut [u8]) {
        let k = self.config.k;
        let f = self.config.features.len();
        jobs.fill(0.0);
        machine.fill(0.0);
        mask.fill(0);
        if self.is_done() {
            return;
        }
        let ep = self.episode.as_ref().expect("an episode runs");
        let shared = self.shared.borrow();
        let c = &shared.call;
        let scale = self.config.time_scale;
        let procs = f64::from(self.procs);
        for (slot, w) in c.waiting.iter().take(k).enumerate() {
            mask[slot] = 1;
            let job = &ep.workload.jobs[w.job as usize];
            let row = &mut jobs[slot * f..slot * f + f];
            for (x, feature) in row.iter_mut().zip(&self.config.features) {
                let v = match feature {
                    Feature::Wait => (c.now - w.submit) as f64 / scale,
                    Feature::RequestedTime => w.requested_time as f64 / scale,
                    Feature::Procs => f64::from(job.procs) / procs,
                    Feature::Memory if self.max_memory > 0.0 => {
                        memory_and_gpus(&ep.workload, w.job as usize).0 / self.max_memory
                    }
                    Feature::Gpus if self.max_gpus > 0.0 => {
                        memory_and_gpus(&ep.workload, w.job as usize).1 / self.max_gpus
                    }
                    Feature::Memory | Feature::Gpus => 0.0,
                    Feature::UserShare if c.total_usage > 0.0 => {
                        c.usage[self.users[ep.first + w.job as usize] as usize] / c.total_usage
                    }
                    Feature::UserShare => 0.0,
                    Feature::Queue => f64::from(job.queue),
                    Feature::CanStart if self.is_topology() => {
                        f64::from(c.fits.get(slot).copied().unwrap_or(0))
                    }
                    Feature::CanStart => f64::from(u8::from(w.units <= c.free)),
                };
                *x = v as f32;
            }
        }
        let capacity = c.capacity.max(1) as f64;
        machine[0] = (c.free as f64 / capacity) as f32;
        machine[1] = (c.waiting.len().saturating_sub(k) as f64 / k as f64) as f32;
        let r = self.config.running_slots;
        if r > 0 {
            let mut ends = c.ends.clone();
            ends.sort_by_key(|e| e.0);
            for (s, (end, units)) in ends.iter().take(r).enumerate() {
                machine[2 + 2 * s] = ((end - c.now) as f64 / scale) as f32;
                machine[3 + 2 * s] = (*units as f64 / capacity) as f32;
            }
        }
        if self.is_topology() {
            machine[2 + 2 * r] = c.free_memory as f32;
            machine[3 + 2 * r] = c.free_gpus as f32;
        }
    }

    /// The first K waiting jobs' raw columns, each K long (zeros past the waiting jobs): trace
    /// index, submit, wait, requested time, processors, user — for exact heuristics.
    pub const RAW_COLUMNS: [&'static str; 6] =
        ["index", "submit", "wait", "requested_time", "procs", "user"];

    pub fn raw(&self, out: &mut [i64]) {
        let k = self.config.k;
        out.fill(0);
        if self.is_done() {
            return;
        }
        let ep = self.episode.as_ref().expect("an episode runs");
        let shared = self.shared.borrow();
        let c = &shared.call;
        for (slot, w) in c.waiting.iter().take(k).enumerate() {
            let job = &ep.workload.jobs[w.job as usize];
            let values = [
                (ep.first + w.job as usize) as i64,
                w.submit,
                c.now - w.submit,
                w.requested_time,
                i64::from(job.procs),
                i64::from(job.user),
            ];
            for (col, v) in values.into_iter().enumerate() {
                out[col * k + slot] = v;
            }
        }
    }

    /// The current decision's time.
    pub fn now(&self) -> Time {
        self.shared.borrow().call.now
    }

    /// The episode's jobs so far, in submission order: (trace index, submit, start, end,
    /// requested time, procs).
    pub fn jobs(&self) -> Vec<[i64; 6]> {
        let Some(ep) = &self.episode else {
            return Vec::new();
        };
        ep.sink
            .jobs
            .iter()
            .map(|o| {
                let job = &ep.workload.jobs[o.job as usize];
                [
                    (ep.first + o.job as usize) as i64,
                    job.submit,
                    o.start,
                    o.end,
                    job.requested_time,
                    i64::from(job.procs),
                ]
            })
            .collect()
    }

    /// Jobs backfilled (started by the rule, not the agent) in this episode.
    pub fn backfilled(&self) -> u64 {
        self.shared.borrow().backfilled
    }

    /// The trace index of the episode's first job.
    pub fn first(&self) -> usize {
        self.episode.as_ref().map_or(0, |e| e.first)
    }
}
