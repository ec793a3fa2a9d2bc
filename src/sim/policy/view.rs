//! What a [`super::Policy`] sees: the state at a scheduling point as columns.
//!
//! Columns rather than one struct per job: a policy in another language (Python, through the
//! `schedlab` package) receives each column as one array per call, never an object per job.
//! Waiting jobs are in submission order; running jobs in order of expected end (start +
//! requested time), ties by submission order — the order EASY's shadow time walks them.

use super::availability::{self, Plan, Shadow};
use super::topology::TopologyView;
use crate::sim::job::{Job, Time};
use crate::sim::reservation::ReservedWindow;
use crate::sim::topology::{RequestTable, Shape};

/// The waiting jobs, one entry per job in every column, in submission order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Waiting {
    /// Index of the job in the workload (its submission order; unique).
    pub index: Vec<i64>,
    /// The trace's job number (SWF field 1).
    pub id: Vec<i64>,
    /// SWF user, group and queue numbers (-1 when unknown).
    pub user: Vec<i64>,
    pub group: Vec<i64>,
    pub queue: Vec<i64>,
    pub submit: Vec<i64>,
    /// The user's runtime estimate: the only runtime a policy may use.
    pub requested_time: Vec<i64>,
    /// Seconds waited so far (now − submit).
    pub wait: Vec<i64>,
    /// Requested processors.
    pub procs: Vec<i64>,
    /// Allocation units the job takes: processors on a pool, whole nodes on exclusive nodes.
    pub units: Vec<i64>,
    /// Requested memory in KB, all of the job's (0 when none is asked).
    pub memory_kb: Vec<i64>,
    /// Requested GPUs, all of the job's.
    pub gpus: Vec<i64>,
    /// Core-seconds the job's user has used so far: completed jobs in full, running jobs up to
    /// now (no decay).
    pub user_usage: Vec<f64>,

    // --- Queues and limits (docs/queues.md): filled in a run with a queue setup. ---
    /// The queue the job was routed to: its number in the setup's `queues` (-1 without a
    /// queue setup). `queue` above keeps the trace's number.
    pub routed_queue: Vec<i64>,
    /// That queue's priority (higher first; 0 without a queue setup). The engine does not
    /// order the rows by it: a policy decides its order.
    pub queue_priority: Vec<i64>,

    // --- Fairshare (docs/fairshare.md): filled when the run configures one, else NaN. ---
    /// The user's decayed, priced usage as the native fairshare computes it at `now`.
    pub fairshare_usage: Vec<f64>,
    /// The user's fairshare factor 2^(−usage/(share·ΣU)), in (0, 1]: higher is served first by
    /// `order: fairshare`.
    pub fairshare_factor: Vec<f64>,
}

impl Waiting {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub(super) fn clear(&mut self) {
        for column in [
            &mut self.index,
            &mut self.id,
            &mut self.user,
            &mut self.group,
            &mut self.queue,
            &mut self.submit,
            &mut self.requested_time,
            &mut self.wait,
            &mut self.procs,
            &mut self.units,
            &mut self.memory_kb,
            &mut self.gpus,
        ] {
            column.clear();
        }
        self.user_usage.clear();
        self.routed_queue.clear();
        self.queue_priority.clear();
        self.fairshare_usage.clear();
        self.fairshare_factor.clear();
    }

    /// Appends job `index` of `jobs` (its requests in `requests`), waiting at `now`, taking
    /// `units`.
    pub(super) fn push(
        &mut self,
        jobs: &[Job],
        requests: &RequestTable,
        index: u32,
        now: Time,
        units: u64,
    ) {
        let job = &jobs[index as usize];
        self.index.push(i64::from(index));
        self.id.push(job.id as i64);
        self.user.push(i64::from(job.user));
        self.group.push(i64::from(job.group));
        self.queue.push(i64::from(job.queue));
        self.submit.push(job.submit);
        self.requested_time.push(job.requested_time);
        self.wait.push(now - job.submit);
        self.procs.push(i64::from(job.procs));
        self.units.push(units as i64);
        let (memory, gpus) = requested_memory_and_gpus(requests, job);
        self.memory_kb.push(memory);
        self.gpus.push(gpus);
    }
}

/// All the memory (KB) and GPUs a job asks for.
fn requested_memory_and_gpus(requests: &RequestTable, job: &Job) -> (i64, i64) {
    let request = requests.get(job.request);
    let memory = match request.shape {
        Shape::Flexible => request.memory_kb.saturating_mul(u64::from(job.procs)),
        Shape::Nodes { count, per_node } => per_node.memory_kb.saturating_mul(u64::from(count)),
    };
    let gpus = match request.shape {
        Shape::Flexible => 0,
        Shape::Nodes { count, per_node } => u64::from(per_node.gpus) * u64::from(count),
    };
    (memory.min(i64::MAX as u64) as i64, gpus as i64)
}

/// The running jobs, in order of expected end (ties by submission order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Running {
    pub index: Vec<i64>,
    pub id: Vec<i64>,
    pub user: Vec<i64>,
    pub start: Vec<i64>,
    /// When the policy should expect the job to end: start + requested time, or one second
    /// from now for a job running past its request (`overrun: continue`).
    pub expected_end: Vec<i64>,
    pub procs: Vec<i64>,
    pub units: Vec<i64>,
}

impl Running {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub(super) fn clear(&mut self) {
        for column in [
            &mut self.index,
            &mut self.id,
            &mut self.user,
            &mut self.start,
            &mut self.expected_end,
            &mut self.procs,
            &mut self.units,
        ] {
            column.clear();
        }
    }
}

/// The jobs queues and limits hold back right now (docs/queues.md, "Eligible and held"), in
/// submission order: a policy sees who waits and why, and cannot start them. Empty without a
/// queue setup.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Held {
    pub index: Vec<i64>,
    pub id: Vec<i64>,
    pub user: Vec<i64>,
    pub group: Vec<i64>,
    /// The queue it was routed to (its number in the setup's `queues`).
    pub queue: Vec<i64>,
    pub procs: Vec<i64>,
    pub requested_time: Vec<i64>,
    /// Seconds since submission.
    pub wait: Vec<i64>,
    /// The limit holding it: its number in [`crate::sim::limits::LimitKind::ALL`] (the names
    /// are [`Held::LIMITS`]).
    pub limit: Vec<i64>,
}

impl Held {
    /// The names of the limit codes, by code (`queue_max_running`, …, `group_cpu_quota`).
    pub const LIMITS: [&'static str; 15] = {
        let mut names = [""; 15];
        let mut k = 0;
        while k < 15 {
            names[k] = crate::sim::limits::LimitKind::ALL[k].name();
            k += 1;
        }
        names
    };

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub(super) fn clear(&mut self) {
        for column in [
            &mut self.index,
            &mut self.id,
            &mut self.user,
            &mut self.group,
            &mut self.queue,
            &mut self.procs,
            &mut self.requested_time,
            &mut self.wait,
            &mut self.limit,
        ] {
            column.clear();
        }
    }
}

/// The state at one scheduling point. Borrowed from the adapter; never mutated by a policy.
#[derive(Clone, Copy, Debug)]
pub struct PolicyView<'a> {
    pub now: Time,
    /// Total allocation units (processors on a pool, nodes on exclusive nodes).
    pub capacity: i64,
    /// Allocation units free now.
    pub free: i64,
    /// Processors per allocation unit (1 on a pool).
    pub procs_per_unit: i64,
    pub waiting: &'a Waiting,
    pub running: &'a Running,
    /// Granted advance reservations not yet over, by start (units held over `[start, end)`).
    pub reservations: &'a [ReservedWindow],

    // --- Queues and limits. ---
    /// The jobs the limits hold (not startable: a decision naming one is refused). Empty on a
    /// topology, where a policy does not run with queues yet.
    pub held: &'a Held,

    // --- On a topology (issue 31) ---
    /// The nodes, each waiting job's shape on them, and the node-level helpers
    /// ([`TopologyView`], [`super::Placer`]); `None` on a uniform machine. On a topology the
    /// unit columns count cores: `capacity` and `free` are the machine's cores in all and free
    /// now (summed over nodes: whether a job fits depends on the nodes), `units` a job's
    /// processors; the uniform helpers [`Self::shadow`] and [`Self::earliest_start`] answer
    /// `None` there and [`Self::plan`] sees only those sums — use [`TopologyView::placer`].
    pub topology: Option<&'a TopologyView>,
}

impl PolicyView<'_> {
    /// EASY's reservation for the waiting job of `row` (docs/policies.md, "Helpers"): the
    /// earliest time at which it fits, walking the running jobs — and the jobs of `started` (rows of
    /// `waiting` this call already starts, expected to end at now + requested time) — in order
    /// of expected end, and the units left over then (the *extra* units a backfilled job may
    /// use past that time). `None` when it can never fit (more units than the machine). With
    /// advance reservations the profile formulation: the earliest fit beside every
    /// reservation, with no extra units (check each candidate with [`Self::plan`]).
    pub fn shadow(&self, row: usize, started: &[usize]) -> Option<Shadow> {
        availability::shadow(self, row, started)
    }

    /// The availability profile of the committed future with the rows of `started` running
    /// from now ([`Plan`]): a scratch pad for planning policies.
    pub fn plan(&self, started: &[usize]) -> Plan {
        availability::plan(self, started)
    }

    /// The earliest time, from now on, at which a request of `units` for `duration` seconds
    /// fits beside the running jobs (until their expected ends), the reservations, and the
    /// jobs of `started` (rows started this call). `None` when it never fits.
    pub fn earliest_start(&self, units: i64, duration: Time, started: &[usize]) -> Option<Time> {
        availability::earliest_start(self, units, duration, started)
    }
}
