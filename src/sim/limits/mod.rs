//! Queues, limits and quotas (issue 11): a filter between the waiting jobs and the policy.
//!
//! A [`Limits`] names the queues of a batch system — each with a priority, a maximum walltime and
//! CPU time, a cap on running jobs and a CPU quota, and caps on each user's and group's jobs in
//! it — plus per-user and per-group caps (running
//! jobs, *eligible* waiting jobs, CPU quota). Sources:
//! - Medernach, "Local situation" (papers/medernach-grid-workload-markov-arrivals.tex.txt): LPC's
//!   five queues Test/Short/Long/Day/Infinite, each with a maximum CPU time, a maximum walltime
//!   ("a job in a given queue is killed if it exceeds its queue time limit") and at most 130
//!   running jobs, shorter queues served first;
//! - Margo et al., end of §5 (papers/margo-impact-of-reservations.txt): DataStar limits each user
//!   to six queued jobs;
//! - AleaNG's `.queues` (`id name CPU_quota priority`), `.users` and `.groups`
//!   (`id name shares CPU_quota`) files: CPUs a queue, user or group may hold at once.
//!
//! Semantics (docs/queues.md): a job reaches one queue ([`Routing`]) and passes two gates. It is
//! *admitted* only if, counting the running jobs **and the jobs already admitted** of each of
//! its accounts, it keeps every cap on job counts (`max_running`, `max_queued`); otherwise it is
//! *held* by the first it breaks (the order of [`LimitKind::ALL`]). Admission is sticky, so no
//! count cap is ever exceeded, and a held job is admitted exactly when a job of the account
//! holding it starts (queued caps) or ends (running caps); among held jobs a freed cap could
//! admit, queue priority then submission order decides. An admitted job is *eligible* (the
//! policy sees it) while it fits every CPU quota counting **running jobs only** — AleaNG's rule
//! and PBS's `max_run_res` (issue 33): a job waiting for processors uses none of its quota. That
//! gate is not sticky: a start holds the eligible jobs of its accounts that no longer fit, an end
//! lets them through again. Within one scheduler call the engine starts the longest prefix of
//! the policy's decisions, in the order it made them, that keeps every quota counting those
//! before it ([`LimitState::quota_prefix`]), and asks again without the jobs that prefix held —
//! the starts of AleaNG's walk, which checks each job against the quota as it reaches it.
//!
//! CPUs in quotas are requested processors (SWF field 8, else 5), on every machine.

mod routing;
mod state;

pub use routing::Routing;
pub use state::{Admission, LimitState};

use std::collections::BTreeMap;

use super::job::{Job, Time};

/// What happens to a job over its queue's maximum walltime.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum OverLimit {
    /// Accepted, its request cut to the limit, killed when it reaches the limit (PBS/Maui kill
    /// a job "if it exceeds its queue time limit"; Medernach).
    #[default]
    Kill,
    /// Refused at submission: it never runs (listed as rejected).
    Reject,
}

impl OverLimit {
    pub fn name(self) -> &'static str {
        match self {
            OverLimit::Kill => "kill",
            OverLimit::Reject => "reject",
        }
    }
}

/// Caps on the jobs of one account (a queue, a user or a group). `None`: no cap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Caps {
    /// Running jobs at once.
    pub max_running: Option<u32>,
    /// Eligible (waiting, seen by the policy) jobs at once — DataStar's six per user.
    pub max_queued: Option<u32>,
    /// Requested processors of running jobs at once (AleaNG's CPU quota).
    pub cpu_quota: Option<u64>,
}

impl Caps {
    pub fn is_empty(&self) -> bool {
        self.max_running.is_none() && self.max_queued.is_none() && self.cpu_quota.is_none()
    }
}

/// A named queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Queue {
    pub name: String,
    /// Higher first. Queues of equal priority share one tier (submission order across them).
    pub priority: i64,
    /// Longest run allowed, seconds.
    pub max_walltime: Option<Time>,
    /// Most CPU time a job may use (all its processors together), seconds; a job reaching it is
    /// killed (its use is SWF field 6 × processors, spread evenly over its run).
    pub max_cputime: Option<Time>,
    /// Caps on the queue as a whole (`max_queued` counts the queue's eligible jobs).
    pub caps: Caps,
    /// Caps on each user's jobs in this queue (Maui's `CLASSCFG MAXJOB[USER]`, Slurm's QOS
    /// `MaxJobsPerUser`): every user of the queue is an account of its own.
    pub per_user: Caps,
    /// Caps on each group's jobs in this queue.
    pub per_group: Caps,
}

/// Caps for every user (or group) by default, and per id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct AccountTable {
    pub default: Caps,
    pub by_id: BTreeMap<i32, Caps>,
}

impl AccountTable {
    pub fn caps(&self, id: i32) -> Caps {
        self.by_id.get(&id).copied().unwrap_or(self.default)
    }

    pub fn is_empty(&self) -> bool {
        self.default.is_empty() && self.by_id.values().all(Caps::is_empty)
    }
}

/// A batch system's queues and limits, as the simulator applies them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Limits {
    /// At least one; indices are queue numbers in outputs.
    pub queues: Vec<Queue>,
    pub routing: Routing,
    pub over_walltime: OverLimit,
    pub users: AccountTable,
    pub groups: AccountTable,
}

/// A cap that holds a job back. Written in outputs by [`LimitKind::name`].
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum LimitKind {
    QueueMaxRunning,
    QueueMaxQueued,
    QueueCpuQuota,
    QueueUserMaxRunning,
    QueueUserMaxQueued,
    QueueUserCpuQuota,
    QueueGroupMaxRunning,
    QueueGroupMaxQueued,
    QueueGroupCpuQuota,
    UserMaxQueued,
    UserMaxRunning,
    UserCpuQuota,
    GroupMaxRunning,
    GroupMaxQueued,
    GroupCpuQuota,
}

impl LimitKind {
    /// In the order caps are checked.
    pub const ALL: [LimitKind; 15] = [
        LimitKind::QueueMaxRunning,
        LimitKind::QueueMaxQueued,
        LimitKind::QueueCpuQuota,
        LimitKind::QueueUserMaxRunning,
        LimitKind::QueueUserMaxQueued,
        LimitKind::QueueUserCpuQuota,
        LimitKind::QueueGroupMaxRunning,
        LimitKind::QueueGroupMaxQueued,
        LimitKind::QueueGroupCpuQuota,
        LimitKind::UserMaxQueued,
        LimitKind::UserMaxRunning,
        LimitKind::UserCpuQuota,
        LimitKind::GroupMaxRunning,
        LimitKind::GroupMaxQueued,
        LimitKind::GroupCpuQuota,
    ];

    /// The limit's number in [`LimitKind::ALL`] (what a policy's view holds).
    pub fn code(self) -> i64 {
        LimitKind::ALL
            .iter()
            .position(|&k| k == self)
            .expect("every limit is in ALL") as i64
    }

    pub const fn name(self) -> &'static str {
        match self {
            LimitKind::QueueMaxRunning => "queue_max_running",
            LimitKind::QueueMaxQueued => "queue_max_queued",
            LimitKind::QueueCpuQuota => "queue_cpu_quota",
            LimitKind::QueueUserMaxRunning => "queue_user_max_running",
            LimitKind::QueueUserMaxQueued => "queue_user_max_queued",
            LimitKind::QueueUserCpuQuota => "queue_user_cpu_quota",
            LimitKind::QueueGroupMaxRunning => "queue_group_max_running",
            LimitKind::QueueGroupMaxQueued => "queue_group_max_queued",
            LimitKind::QueueGroupCpuQuota => "queue_group_cpu_quota",
            LimitKind::UserMaxQueued => "user_max_queued",
            LimitKind::UserMaxRunning => "user_max_running",
            LimitKind::UserCpuQuota => "user_cpu_quota",
            LimitKind::GroupMaxRunning => "group_max_running",
            LimitKind::GroupMaxQueued => "group_max_queued",
            LimitKind::GroupCpuQuota => "group_cpu_quota",
        }
    }
}

/// Why a running job was stopped by its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum KillReason {
    MaxWalltime,
    MaxCputime,
}

impl KillReason {
    pub fn name(self) -> &'static str {
        match self {
            KillReason::MaxWalltime => "queue_max_walltime",
            KillReason::MaxCputime => "queue_max_cputime",
        }
    }
}

/// Why a job was refused at submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Rejection {
    /// No queue takes it (no mapping, no default route).
    NoQueue,
    /// Its request exceeds its queue's maximum walltime (`over_walltime: reject`).
    OverWalltime,
    /// It alone exceeds a CPU quota of one of its accounts: it could never start.
    OverCpuQuota,
}

impl Rejection {
    pub fn name(self) -> &'static str {
        match self {
            Rejection::NoQueue => "rejected_no_queue",
            Rejection::OverWalltime => "rejected_over_walltime",
            Rejection::OverCpuQuota => "rejected_over_cpu_quota",
        }
    }
}

/// What the limits did to each job of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LimitsOutcome {
    pub queue_names: Vec<String>,
    /// Per workload job: its queue (`u32::MAX` when none took it).
    pub queue: Vec<u32>,
    /// Per workload job: the cap that held it last before it became eligible, if any.
    pub held_by: Vec<Option<LimitKind>>,
    /// Per workload job: when it last became eligible (its submit time when never held).
    pub eligible_at: Vec<Time>,
    /// Per workload job: seconds it was held in all (by caps on job counts or behind a CPU
    /// quota, which may hold a job again after it was eligible).
    pub held_time: Vec<Time>,
    /// Per workload job: the queue limit that killed it, if any.
    pub killed_by: Vec<Option<KillReason>>,
    /// Jobs refused at submission, in submission order.
    pub rejected: Vec<(u32, Rejection)>,
}

impl LimitsOutcome {
    /// Seconds `job` was held back by limits (kept from the policy) before it started.
    pub fn held_seconds(&self, job: u32) -> Time {
        self.held_time[job as usize]
    }

    /// The queue name of `job`, if a queue took it.
    pub fn queue_name(&self, job: u32) -> Option<&str> {
        let q = *self.queue.get(job as usize)?;
        self.queue_names.get(q as usize).map(String::as_str)
    }
}

/// A definition the simulator cannot run, found before it starts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    #[error("no queue is defined")]
    NoQueues,
    #[error("queue {queue:?}: {problem}")]
    BadQueue { queue: String, problem: String },
    #[error("{what}: {problem}")]
    BadCaps { what: String, problem: String },
}

impl Limits {
    /// One queue without caps: what a run without limits is.
    pub fn single(name: &str) -> Self {
        Limits {
            queues: vec![Queue {
                name: name.to_string(),
                ..Queue::default()
            }],
            ..Limits::default()
        }
    }

    /// Checks what the simulator relies on; manifests check the same with locations.
    pub fn validate(&self) -> Result<(), LimitsError> {
        if self.queues.is_empty() {
            return Err(LimitsError::NoQueues);
        }
        for q in &self.queues {
            let bad = |problem: &str| LimitsError::BadQueue {
                queue: q.name.clone(),
                problem: problem.to_string(),
            };
            if q.max_walltime.is_some_and(|t| t <= 0) {
                return Err(bad("max_walltime must be positive"));
            }
            if q.max_cputime.is_some_and(|t| t <= 0) {
                return Err(bad("max_cputime must be positive"));
            }
            check_caps(&format!("queue {:?}", q.name), &q.caps)?;
            check_caps(&format!("queue {:?} per_user", q.name), &q.per_user)?;
            check_caps(&format!("queue {:?} per_group", q.name), &q.per_group)?;
        }
        check_caps("users.default", &self.users.default)?;
        for (id, c) in &self.users.by_id {
            check_caps(&format!("user {id}"), c)?;
        }
        check_caps("groups.default", &self.groups.default)?;
        for (id, c) in &self.groups.by_id {
            check_caps(&format!("group {id}"), c)?;
        }
        self.routing.validate(self.queues.len())
    }

    /// Whether queues differ in priority (so queue priority composes with the policy's order:
    /// [`crate::sim::AnyPolicy::limited`]).
    pub fn has_tiers(&self) -> bool {
        self.queues
            .windows(2)
            .any(|w| w[0].priority != w[1].priority)
    }

    /// The request `job` is scheduled with in queue `q`: cut to the queue's maximum walltime.
    pub fn effective_request(&self, q: u32, job: &Job) -> Time {
        match self.queues[q as usize].max_walltime {
            Some(max) => job.requested_time.min(max),
            None => job.requested_time,
        }
    }

    /// When (run time since its start) and why the queue stops `job`, if its actual run of
    /// `runtime` seconds would pass a limit.
    pub fn kill_at(&self, q: u32, job: &Job, runtime: Time) -> Option<(Time, KillReason)> {
        let queue = &self.queues[q as usize];
        let wall = queue
            .max_walltime
            .filter(|&max| runtime > max)
            .map(|max| (max, KillReason::MaxWalltime));
        let cpu = queue
            .max_cputime
            .and_then(|max| cpu_kill_time(job, runtime, max))
            .map(|t| (t, KillReason::MaxCputime));
        match (wall, cpu) {
            (Some(w), Some(c)) => Some(if c.0 < w.0 { c } else { w }),
            (w, c) => w.or(c),
        }
    }
}

/// The run time at which `job` has used `max` seconds of CPU (all processors), if it does
/// within its run: its CPU use (SWF field 6 × processors) spread evenly over its runtime.
fn cpu_kill_time(job: &Job, runtime: Time, max: Time) -> Option<Time> {
    if job.cpu_time <= 0 {
        return None;
    }
    let total = i128::from(job.cpu_time) * i128::from(job.procs);
    if total <= i128::from(max) {
        return None;
    }
    // ceil(max × runtime / total): the first whole second at which the use reaches max.
    let t = (i128::from(max) * i128::from(runtime) + total - 1) / total;
    Some((t as Time).max(1))
}

fn check_caps(what: &str, caps: &Caps) -> Result<(), LimitsError> {
    let bad = |problem: &str| LimitsError::BadCaps {
        what: what.to_string(),
        problem: problem.to_string(),
    };
    if caps.max_running == Some(0) {
        return Err(bad("max_running must be at least 1"));
    }
    if caps.max_queued == Some(0) {
        return Err(bad("max_queued must be at least 1"));
    }
    if caps.cpu_quota == Some(0) {
        return Err(bad("cpu_quota must be at least 1"));
    }
    Ok(())
}
