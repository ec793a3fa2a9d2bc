//! The view's columns that both adapters — [`super::PolicyScheduler`] on uniform machines and
//! [`super::NodePolicyScheduler`] on topologies — fill alike: the running jobs, each waiting
//! job's user's usage, its routed queue and priority and the held jobs under a queue setup
//! (docs/queues.md), and its user's fairshare (docs/fairshare.md). One copy, so that a policy
//! sees the same columns on either kind of machine.

use std::collections::HashMap;

use super::view::{Held, PolicyView, Running, Waiting};
use crate::sim::fairshare::FairshareState;
use crate::sim::job::{Job, Time};
use crate::sim::limits::{LimitKind, LimitState};
use crate::sim::queue::Queue;
use crate::sim::running::RunningSet;
use crate::sim::topology::RequestTable;

/// The columns a call shows the policy — waiting, running, held — with the per-user usage that
/// fills them; buffers reused between calls. Each adapter holds one.
#[derive(Clone, Debug, Default)]
pub(super) struct CallColumns {
    pub waiting: Waiting,
    pub running: Running,
    /// The jobs the limits hold, as the view shows them (empty without a queue setup).
    pub held: Held,
    /// Scratch: the held jobs with their limits, as the limit state lists them.
    holding: Vec<(u32, LimitKind)>,
    pub usage: UserUsage,
}

/// What a call's columns are filled from: the parts of the engine's view that a uniform
/// machine's and a topology's have alike.
pub(super) struct CallState<'a> {
    pub jobs: &'a [Job],
    pub requests: &'a RequestTable,
    pub queue: &'a Queue,
    pub running: &'a RunningSet,
    pub limits: Option<&'a LimitState<'a>>,
    pub now: Time,
}

impl CallColumns {
    /// Fills every column for the call at `state.now`; `predicted_end` is the engine's
    /// prediction for an expected end, `fairshare` the run's when it configures one.
    pub fn fill(
        &mut self,
        state: CallState<'_>,
        fairshare: Option<&mut FairshareState>,
        predicted_end: impl Fn(Time) -> Time,
    ) {
        let CallState {
            jobs,
            requests,
            queue,
            running,
            limits,
            now,
        } = state;
        self.waiting.clear();
        for queued in queue.iter() {
            self.waiting
                .push(jobs, requests, queued.job, now, queued.demand.unit_count());
        }
        self.usage.fill(
            &mut self.waiting,
            &mut self.running,
            running,
            jobs,
            now,
            predicted_end,
        );
        fill_limits(
            &mut self.waiting,
            &mut self.held,
            &mut self.holding,
            limits,
            jobs,
            now,
        );
        fill_fairshare(&mut self.waiting, fairshare, now, queue);
    }
}

/// Core-seconds used per user (no decay): completed jobs in full, running jobs up to now.
#[derive(Clone, Debug, Default)]
pub(super) struct UserUsage {
    /// Each job's user as a dense slot, by job index (made at the first call from the
    /// workload), so that usage lives in vectors rather than being hashed per job per call.
    user_slot: Vec<u32>,
    /// Core-seconds of completed jobs, by user slot.
    used: Vec<f64>,
    /// Core-seconds of running jobs up to now, by user slot: a call's scratch, zeroed after it.
    running_use: Vec<f64>,
}

impl UserUsage {
    /// Numbers the users of `jobs` at the first call (the workload does not change in a run).
    pub fn ensure(&mut self, jobs: &[Job]) {
        if self.user_slot.len() == jobs.len() {
            return;
        }
        let mut slots: HashMap<i32, u32> = HashMap::new();
        self.user_slot = jobs
            .iter()
            .map(|job| {
                let next = slots.len() as u32;
                *slots.entry(job.user).or_insert(next)
            })
            .collect();
        self.used = vec![0.0; slots.len()];
        self.running_use = vec![0.0; slots.len()];
    }

    /// Charges job `job` (of `procs` processors), which ran `seconds`, to its user.
    pub fn charge(&mut self, job: u32, procs: u32, seconds: Time) {
        self.used[self.user_slot[job as usize] as usize] +=
            seconds.max(0) as f64 * f64::from(procs);
    }

    /// Fills the running columns from `set` and each waiting row's `user_usage` (the rows are
    /// already pushed). `predicted_end` is the engine's prediction for an expected end.
    pub fn fill(
        &mut self,
        waiting: &mut Waiting,
        running: &mut Running,
        set: &RunningSet,
        jobs: &[Job],
        now: Time,
        predicted_end: impl Fn(Time) -> Time,
    ) {
        running.clear();
        for r in set.iter() {
            let job = &jobs[r.job as usize];
            running.index.push(i64::from(r.job));
            running.id.push(job.id as i64);
            running.user.push(i64::from(job.user));
            running.start.push(r.start);
            running.expected_end.push(predicted_end(r.expected_end));
            running.procs.push(i64::from(job.procs));
            running.units.push(r.demand.unit_count() as i64);
            self.running_use[self.user_slot[r.job as usize] as usize] +=
                (now - r.start).max(0) as f64 * f64::from(job.procs);
        }
        for &index in &waiting.index {
            let slot = self.user_slot[index as usize] as usize;
            waiting
                .user_usage
                .push(self.used[slot] + self.running_use[slot]);
        }
        for r in set.iter() {
            self.running_use[self.user_slot[r.job as usize] as usize] = 0.0;
        }
    }
}

/// The waiting rows' routed queues and priorities, and the held table, from the run's limit
/// state (without a queue setup: queue −1, priority 0, nothing held). `holding` is scratch.
fn fill_limits(
    waiting: &mut Waiting,
    held: &mut Held,
    holding: &mut Vec<(u32, LimitKind)>,
    limits: Option<&LimitState<'_>>,
    jobs: &[Job],
    now: Time,
) {
    held.clear();
    let Some(limits) = limits else {
        waiting.routed_queue.resize(waiting.index.len(), -1);
        waiting.queue_priority.resize(waiting.index.len(), 0);
        return;
    };
    let queue = |job: u32| limits.queue_of(job).map_or(-1, i64::from);
    let priority = |q: i64| {
        usize::try_from(q)
            .ok()
            .and_then(|q| limits.limits().queues.get(q))
            .map_or(0, |q| q.priority)
    };
    for &index in &waiting.index {
        let q = queue(index as u32);
        waiting.routed_queue.push(q);
        waiting.queue_priority.push(priority(q));
    }
    holding.clear();
    limits.held_jobs(holding);
    holding.sort_unstable();
    for &(index, limit) in holding.iter() {
        let job = &jobs[index as usize];
        held.index.push(i64::from(index));
        held.id.push(job.id as i64);
        held.user.push(i64::from(job.user));
        held.group.push(i64::from(job.group));
        held.queue.push(queue(index));
        held.procs.push(i64::from(job.procs));
        held.requested_time.push(job.requested_time);
        held.wait.push(now - job.submit);
        held.limit.push(limit.code());
    }
}

/// The waiting rows' users' decayed usage and factor, as `order: fairshare` computes them at
/// `now` over `queue` (NaN without a fairshare).
fn fill_fairshare(
    waiting: &mut Waiting,
    fairshare: Option<&mut FairshareState>,
    now: Time,
    queue: &Queue,
) {
    let Some(fairshare) = fairshare else {
        waiting
            .fairshare_usage
            .resize(waiting.index.len(), f64::NAN);
        waiting
            .fairshare_factor
            .resize(waiting.index.len(), f64::NAN);
        return;
    };
    fairshare.refresh_waiting(now, queue);
    for &index in &waiting.index {
        let user = fairshare.user_of_job(index as u32);
        waiting.fairshare_usage.push(fairshare.usage(user));
        waiting.fairshare_factor.push(fairshare.factor(user));
    }
}

/// The error for a decision naming `row` when the rows past the waiting ones number the held
/// jobs (the two tables one after the other): a held job cannot start. `None` when `row` is
/// not a held job's.
pub(super) fn held_row_error(view: &PolicyView<'_>, row: usize) -> Option<String> {
    let k = row
        .checked_sub(view.waiting.len())
        .filter(|&k| k < view.held.len())?;
    let h = view.held;
    Some(format!(
        "it started job {} (row {row}, row {k} of the held jobs), which the limits hold: {} keeps it from the policy until it lets it through",
        h.id[k],
        Held::LIMITS[h.limit[k] as usize]
    ))
}
