//! The limits as a run applies them: per-account counts of running and admitted jobs, the
//! held jobs of each account in priority order, and the jobs each CPU quota keeps from the
//! policy (docs/queues.md, "Eligible and held").
//!
//! Accounts are the queues, then every user and every group with caps. A job passes two gates.
//! *Admission* checks the caps on job counts (`max_running`, `max_queued`) counting running and
//! admitted jobs, and is sticky. The *quota gate* checks each CPU quota counting running jobs
//! only, and is not: a start closes it on the admitted jobs of its accounts that no longer fit
//! (the engine takes them out of the policy's queue), an end reopens it. A held job waits in the
//! bucket of the account that refused it, and is looked at again only when that account frees a
//! slot (one of its jobs starts or ends), so a run costs O(log n) per event plus the jobs a freed
//! slot admits, gates or passes on — not a scan of every held job at every instant.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use super::{Caps, LimitKind, Limits, LimitsOutcome, OverLimit, Rejection};
use crate::sim::job::{Job, Time, Workload};

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Queue,
    /// One user's jobs in one queue (the queue's `per_user` caps).
    QueueUser,
    /// One group's jobs in one queue (the queue's `per_group` caps).
    QueueGroup,
    User,
    Group,
}

#[derive(Clone, Debug)]
struct Account {
    kind: Kind,
    caps: Caps,
    running: u32,
    running_cpus: u64,
    /// Admitted waiting jobs (behind the quota gate or not).
    eligible: u32,
}

impl Account {
    fn new(kind: Kind, caps: Caps) -> Self {
        Account {
            kind,
            caps,
            running: 0,
            running_cpus: 0,
            eligible: 0,
        }
    }

    /// The first cap on job counts that admitting one more job would break, in check order.
    fn refuses(&self) -> Option<LimitKind> {
        let running = self
            .caps
            .max_running
            .is_some_and(|max| self.running + self.eligible >= max);
        let queued = self.caps.max_queued.is_some_and(|max| self.eligible >= max);
        use LimitKind::*;
        match self.kind {
            Kind::Queue => [(running, QueueMaxRunning), (queued, QueueMaxQueued)],
            Kind::QueueUser => [(running, QueueUserMaxRunning), (queued, QueueUserMaxQueued)],
            Kind::QueueGroup => [
                (running, QueueGroupMaxRunning),
                (queued, QueueGroupMaxQueued),
            ],
            Kind::User => [(queued, UserMaxQueued), (running, UserMaxRunning)],
            Kind::Group => [(running, GroupMaxRunning), (queued, GroupMaxQueued)],
        }
        .into_iter()
        .find_map(|(broken, kind)| broken.then_some(kind))
    }

    /// CPUs a job may still take under this account's quota, counting running jobs only.
    fn quota_room(&self) -> Option<u64> {
        self.caps
            .cpu_quota
            .map(|max| max.saturating_sub(self.running_cpus))
    }

    /// The quota cap of this account, if a job of `cpus` processors would break it now.
    fn over_quota(&self, cpus: u64) -> Option<LimitKind> {
        let room = self.quota_room()?;
        (cpus > room).then_some(match self.kind {
            Kind::Queue => LimitKind::QueueCpuQuota,
            Kind::QueueUser => LimitKind::QueueUserCpuQuota,
            Kind::QueueGroup => LimitKind::QueueGroupCpuQuota,
            Kind::User => LimitKind::UserCpuQuota,
            Kind::Group => LimitKind::GroupCpuQuota,
        })
    }
}

/// What became of a submitted job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The policy sees it.
    Eligible,
    /// Held by a cap on job counts, or behind a CPU quota.
    Held(LimitKind),
}

/// The run state of a [`Limits`].
pub struct LimitState<'l> {
    limits: &'l Limits,
    tiers: bool,
    accounts: Vec<Account>,
    /// Per job: its accounts (queue, queue × user, queue × group, user, group), `NONE` where
    /// it has none.
    job_accounts: Vec<[u32; 5]>,
    cpus: Vec<u32>,
    /// Per account: its held (not admitted) jobs by (tier rank, job).
    buckets: Vec<BTreeSet<(i64, u32)>>,
    /// Per job: the account whose bucket holds it (`NONE` when not held).
    held_in: Vec<u32>,
    /// Per account with a CPU quota: its admitted jobs behind that quota, by (CPUs, job).
    gates: Vec<BTreeSet<(u32, u32)>>,
    /// Per account with a CPU quota: its eligible jobs (in the policy's queue), by (CPUs, job).
    open: Vec<BTreeSet<(u32, u32)>>,
    /// Per job: the account whose quota keeps it from the policy (`NONE` when none does).
    gated_in: Vec<u32>,
    /// Per job: since when it has been held or gated (meaningful while it is).
    held_since: Vec<Time>,
    held: usize,
    dirty: BTreeSet<u32>,
    /// Accounts whose quota freed CPUs (a job ended) while jobs wait behind it.
    reopened: BTreeSet<u32>,
    out: LimitsOutcome,
}

impl<'l> LimitState<'l> {
    /// Routes every job of `workload` and sets up the accounts.
    pub fn new(limits: &'l Limits, workload: &Workload) -> Self {
        let mut accounts: Vec<Account> = limits
            .queues
            .iter()
            .map(|q| Account::new(Kind::Queue, q.caps))
            .collect();
        let mut users: BTreeMap<(u32, i32), u32> = BTreeMap::new();
        let mut groups: BTreeMap<(u32, i32), u32> = BTreeMap::new();
        let mut queue_users: BTreeMap<(u32, i32), u32> = BTreeMap::new();
        let mut queue_groups: BTreeMap<(u32, i32), u32> = BTreeMap::new();
        // Ids in first-seen order get account numbers: deterministic for a given workload.
        let mut account_of =
            |map: &mut BTreeMap<(u32, i32), u32>, kind: Kind, id: (u32, i32), caps: Caps| {
                if caps.is_empty() {
                    return NONE;
                }
                *map.entry(id).or_insert_with(|| {
                    accounts.push(Account::new(kind, caps));
                    (accounts.len() - 1) as u32
                })
            };
        let n = workload.len();
        let mut job_accounts = Vec::with_capacity(n);
        let mut queue = Vec::with_capacity(n);
        for job in &workload.jobs {
            let q = limits.route(workload, job).unwrap_or(NONE);
            let (qu, qg) = match limits.queues.get(q as usize) {
                Some(queue) => (
                    account_of(
                        &mut queue_users,
                        Kind::QueueUser,
                        (q, job.user),
                        queue.per_user,
                    ),
                    account_of(
                        &mut queue_groups,
                        Kind::QueueGroup,
                        (q, job.group),
                        queue.per_group,
                    ),
                ),
                None => (NONE, NONE),
            };
            let u = account_of(
                &mut users,
                Kind::User,
                (0, job.user),
                limits.users.caps(job.user),
            );
            let g = account_of(
                &mut groups,
                Kind::Group,
                (0, job.group),
                limits.groups.caps(job.group),
            );
            job_accounts.push([q, qu, qg, u, g]);
            queue.push(q);
        }
        let buckets = vec![BTreeSet::new(); accounts.len()];
        LimitState {
            limits,
            tiers: limits.has_tiers(),
            gates: vec![BTreeSet::new(); accounts.len()],
            open: vec![BTreeSet::new(); accounts.len()],
            accounts,
            job_accounts,
            cpus: workload.jobs.iter().map(|j| j.procs).collect(),
            buckets,
            held_in: vec![NONE; n],
            gated_in: vec![NONE; n],
            held_since: vec![0; n],
            held: 0,
            dirty: BTreeSet::new(),
            reopened: BTreeSet::new(),
            out: LimitsOutcome {
                queue_names: limits.queues.iter().map(|q| q.name.clone()).collect(),
                queue,
                held_by: vec![None; n],
                eligible_at: workload.jobs.iter().map(|j| j.submit).collect(),
                held_time: vec![0; n],
                killed_by: vec![None; n],
                rejected: Vec::new(),
            },
        }
    }

    /// Why `job` (workload index) is refused at submission, if it is.
    pub fn rejects(&self, index: u32, job: &Job) -> Option<Rejection> {
        let [q, ..] = self.job_accounts[index as usize];
        if q == NONE {
            return Some(Rejection::NoQueue);
        }
        let queue = &self.limits.queues[q as usize];
        if self.limits.over_walltime == OverLimit::Reject
            && queue
                .max_walltime
                .is_some_and(|max| job.requested_time > max)
        {
            return Some(Rejection::OverWalltime);
        }
        let cpus = u64::from(job.procs);
        let over_quota = self.accounts_of(index).any(|a| {
            self.accounts[a as usize]
                .caps
                .cpu_quota
                .is_some_and(|max| cpus > max)
        });
        over_quota.then_some(Rejection::OverCpuQuota)
    }

    /// Records that `job` never enters the queue.
    pub fn reject(&mut self, job: u32, why: Rejection) {
        self.out.rejected.push((job, why));
    }

    /// The key the policy's queue is sorted by: queue priority tier (highest first) when
    /// queues differ in priority, then submission order.
    pub fn order_key(&self, job: u32) -> (i64, u32) {
        if !self.tiers {
            return (0, job);
        }
        let q = self.job_accounts[job as usize][0];
        (-self.limits.queues[q as usize].priority, job)
    }

    /// Whether the policy's queue is sorted by priority tier before submission order.
    pub fn has_tiers(&self) -> bool {
        self.tiers
    }

    /// Held jobs right now (by a cap on job counts or behind a CPU quota).
    pub fn held(&self) -> usize {
        self.held
    }

    /// The queue setup applied.
    pub fn limits(&self) -> &'l Limits {
        self.limits
    }

    /// The queue `job` was routed to (`None` when no queue takes it).
    pub fn queue_of(&self, job: u32) -> Option<u32> {
        let q = self.job_accounts[job as usize][0];
        (q != NONE).then_some(q)
    }

    /// Appends the jobs held right now — by a cap on job counts or behind a CPU quota — with
    /// the limit holding each, in no particular order (a policy's view sorts them). Walks the
    /// held buckets and quota gates, not every job.
    pub fn held_jobs(&self, out: &mut Vec<(u32, LimitKind)>) {
        if self.held == 0 {
            return;
        }
        let limit = |job: u32| {
            self.out.held_by[job as usize].expect("a held or gated job has the limit holding it")
        };
        for bucket in &self.buckets {
            out.extend(bucket.iter().map(|&(_, job)| (job, limit(job))));
        }
        for gate in &self.gates {
            out.extend(gate.iter().map(|&(_, job)| (job, limit(job))));
        }
    }

    /// `job` is submitted at `now`: eligible if every cap allows it, else held.
    pub fn arrive(&mut self, job: u32, now: Time) -> Admission {
        self.held_since[job as usize] = now;
        match self.check(job) {
            None => {
                self.count_admitted(job);
                self.pass_gate(job, now)
            }
            Some((limit, account)) => {
                self.hold(job, limit, account);
                Admission::Held(limit)
            }
        }
    }

    /// How many of `jobs`, eligible and about to start in this order, start before the first
    /// that would break a CPU quota counting the running jobs and those before it in the list.
    /// Every eligible job fits its quotas alone, so it is at least 1 when `jobs` is not empty.
    pub fn quota_prefix(&self, jobs: impl IntoIterator<Item = u32>) -> usize {
        let mut taken: BTreeMap<u32, u64> = BTreeMap::new();
        let mut n = 0;
        for job in jobs {
            let cpus = u64::from(self.cpus[job as usize]);
            let fits = self.accounts_of(job).all(|a| {
                self.accounts[a as usize]
                    .quota_room()
                    .is_none_or(|room| taken.get(&a).copied().unwrap_or(0) + cpus <= room)
            });
            if !fits {
                break;
            }
            for a in self.accounts_of(job) {
                if self.accounts[a as usize].caps.cpu_quota.is_some() {
                    *taken.entry(a).or_default() += cpus;
                }
            }
            n += 1;
        }
        n
    }

    /// `job`, eligible, starts at `now`. The eligible jobs of its accounts that no longer fit a
    /// CPU quota are gated: appended to `gated` (the engine takes them out of the policy's
    /// queue).
    pub fn started(&mut self, job: u32, now: Time, gated: &mut Vec<u32>) {
        let cpus = self.cpus[job as usize];
        for a in self.job_accounts[job as usize] {
            if a == NONE {
                continue;
            }
            let acc = &mut self.accounts[a as usize];
            acc.eligible -= 1;
            acc.running += 1;
            acc.running_cpus += u64::from(cpus);
            if acc.caps.max_queued.is_some() && !self.buckets[a as usize].is_empty() {
                self.dirty.insert(a);
            }
            self.open[a as usize].remove(&(cpus, job));
        }
        for a in self.job_accounts[job as usize] {
            let Some(room) = self.accounts.get(a as usize).and_then(Account::quota_room) else {
                continue;
            };
            // The eligible jobs asking for more than the room left, largest first.
            while let Some(&(c, j)) = self.open[a as usize].last()
                && u64::from(c) > room
            {
                self.close(j, a, now);
                gated.push(j);
            }
        }
    }

    /// `job`, running, ends.
    pub fn ended(&mut self, job: u32) {
        let cpus = u64::from(self.cpus[job as usize]);
        for a in self.job_accounts[job as usize] {
            if a == NONE {
                continue;
            }
            let acc = &mut self.accounts[a as usize];
            acc.running -= 1;
            acc.running_cpus -= cpus;
            if !self.buckets[a as usize].is_empty() {
                self.dirty.insert(a);
            }
            if !self.gates[a as usize].is_empty() {
                self.reopened.insert(a);
            }
        }
    }

    /// Makes eligible, at `now`, the held jobs that the slots freed since the last call admit
    /// and the gated jobs that the CPUs freed let through; appends them to `admitted`.
    pub fn admit(&mut self, now: Time, admitted: &mut Vec<u32>) {
        while let Some(a) = self.dirty.pop_first() {
            let mut cursor: Option<(i64, u32)> = None;
            loop {
                if self.accounts[a as usize].refuses().is_some() {
                    break;
                }
                let bucket = &self.buckets[a as usize];
                let next = match cursor {
                    None => bucket.first().copied(),
                    Some(k) => bucket
                        .range((Bound::Excluded(k), Bound::Unbounded))
                        .next()
                        .copied(),
                };
                let Some(key) = next else { break };
                cursor = Some(key);
                let job = key.1;
                match self.check(job) {
                    None => {
                        self.unhold(job);
                        self.count_admitted(job);
                        if self.pass_gate(job, now) == Admission::Eligible {
                            admitted.push(job);
                        }
                    }
                    Some((limit, b)) => {
                        self.out.held_by[job as usize] = Some(limit);
                        if b != a {
                            self.unhold(job);
                            self.hold(job, limit, b);
                        }
                    }
                }
            }
        }
        while let Some(a) = self.reopened.pop_first() {
            let Some(room) = self.accounts[a as usize].quota_room() else {
                continue;
            };
            let room = u32::try_from(room).unwrap_or(u32::MAX);
            let through: Vec<(u32, u32)> = self.gates[a as usize]
                .range(..=(room, u32::MAX))
                .copied()
                .collect();
            for key in through {
                let job = key.1;
                self.gates[a as usize].remove(&key);
                self.gated_in[job as usize] = NONE;
                self.held -= 1;
                if self.pass_gate(job, now) == Admission::Eligible {
                    admitted.push(job);
                }
            }
        }
    }

    /// When and why `job`'s queue stops it after a run of `runtime` seconds, if it does; the
    /// kill is recorded.
    pub fn kill_at(&mut self, job: u32, workload_job: &Job, runtime: Time) -> Option<Time> {
        let q = self.job_accounts[job as usize][0];
        let (at, why) = self.limits.kill_at(q, workload_job, runtime)?;
        self.out.killed_by[job as usize] = Some(why);
        Some(at)
    }

    /// Forgets a kill recorded by [`LimitState::kill_at`] that did not happen (the job ended
    /// earlier by its own request).
    pub fn unkill(&mut self, job: u32) {
        self.out.killed_by[job as usize] = None;
    }

    pub fn finish(self) -> LimitsOutcome {
        self.out
    }

    fn accounts_of(&self, job: u32) -> impl Iterator<Item = u32> + '_ {
        self.job_accounts[job as usize]
            .into_iter()
            .filter(|&a| a != NONE)
    }

    /// The first cap on job counts `job` would break, and its account.
    fn check(&self, job: u32) -> Option<(LimitKind, u32)> {
        self.accounts_of(job)
            .find_map(|a| self.accounts[a as usize].refuses().map(|l| (l, a)))
    }

    /// The first CPU quota `job` would break counting running jobs only, and its account.
    fn check_quota(&self, job: u32) -> Option<(LimitKind, u32)> {
        let cpus = u64::from(self.cpus[job as usize]);
        self.accounts_of(job)
            .find_map(|a| self.accounts[a as usize].over_quota(cpus).map(|l| (l, a)))
    }

    /// Counts `job`, admitted, against the caps on job counts of its accounts.
    fn count_admitted(&mut self, job: u32) {
        for a in self.job_accounts[job as usize] {
            if a != NONE {
                self.accounts[a as usize].eligible += 1;
            }
        }
    }

    /// `job`, admitted and neither held nor gated, goes through the quota gate at `now`:
    /// eligible, or gated by the first quota it breaks counting running jobs only.
    fn pass_gate(&mut self, job: u32, now: Time) -> Admission {
        match self.check_quota(job) {
            Some((limit, a)) => {
                self.held += 1;
                self.out.held_by[job as usize] = Some(limit);
                self.gated_in[job as usize] = a;
                self.gates[a as usize].insert((self.cpus[job as usize], job));
                Admission::Held(limit)
            }
            None => {
                let i = job as usize;
                self.out.held_time[i] += now - self.held_since[i];
                self.out.eligible_at[i] = now;
                let cpus = self.cpus[i];
                for a in self.job_accounts[i] {
                    if a != NONE && self.accounts[a as usize].caps.cpu_quota.is_some() {
                        self.open[a as usize].insert((cpus, job));
                    }
                }
                Admission::Eligible
            }
        }
    }

    /// Gates eligible `job` behind account `a`'s quota at `now`.
    fn close(&mut self, job: u32, a: u32, now: Time) {
        let cpus = self.cpus[job as usize];
        for b in self.job_accounts[job as usize] {
            if b != NONE {
                self.open[b as usize].remove(&(cpus, job));
            }
        }
        let limit = self.accounts[a as usize]
            .over_quota(u64::from(cpus))
            .expect("a job is gated only by a quota it breaks");
        self.out.held_by[job as usize] = Some(limit);
        self.held_since[job as usize] = now;
        self.gated_in[job as usize] = a;
        self.gates[a as usize].insert((cpus, job));
        self.held += 1;
    }

    fn hold(&mut self, job: u32, limit: LimitKind, account: u32) {
        self.out.held_by[job as usize] = Some(limit);
        self.held_in[job as usize] = account;
        let key = self.order_key(job);
        self.buckets[account as usize].insert(key);
        self.held += 1;
    }

    fn unhold(&mut self, job: u32) {
        let a = std::mem::replace(&mut self.held_in[job as usize], NONE);
        let key = self.order_key(job);
        self.buckets[a as usize].remove(&key);
        self.held -= 1;
    }
}
