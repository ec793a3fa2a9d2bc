//! The limits as a run applies them: per-account counts of running and eligible jobs, and the
//! held jobs of each account in priority order (docs/queues.md, "When a held job becomes
//! eligible").
//!
//! Accounts are the queues, then every user and every group with caps. A held job waits in the
//! bucket of the account that refused it, and is looked at again only when that account frees a
//! slot (one of its jobs starts or ends), so a run costs O(log n) per event plus the jobs a freed
//! slot admits or passes on — not a scan of every held job at every instant.

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
    eligible: u32,
    eligible_cpus: u64,
}

impl Account {
    fn new(kind: Kind, caps: Caps) -> Self {
        Account {
            kind,
            caps,
            running: 0,
            running_cpus: 0,
            eligible: 0,
            eligible_cpus: 0,
        }
    }

    /// The first cap admitting a job of `cpus` processors would break, in check order.
    fn refuses(&self, cpus: u64) -> Option<LimitKind> {
        let running = self
            .caps
            .max_running
            .is_some_and(|max| self.running + self.eligible >= max);
        let queued = self.caps.max_queued.is_some_and(|max| self.eligible >= max);
        let quota = self
            .caps
            .cpu_quota
            .is_some_and(|max| self.running_cpus + self.eligible_cpus + cpus > max);
        use LimitKind::*;
        match self.kind {
            Kind::Queue => [
                (running, QueueMaxRunning),
                (queued, QueueMaxQueued),
                (quota, QueueCpuQuota),
            ],
            Kind::QueueUser => [
                (running, QueueUserMaxRunning),
                (queued, QueueUserMaxQueued),
                (quota, QueueUserCpuQuota),
            ],
            Kind::QueueGroup => [
                (running, QueueGroupMaxRunning),
                (queued, QueueGroupMaxQueued),
                (quota, QueueGroupCpuQuota),
            ],
            Kind::User => [
                (queued, UserMaxQueued),
                (running, UserMaxRunning),
                (quota, UserCpuQuota),
            ],
            Kind::Group => [
                (running, GroupMaxRunning),
                (queued, GroupMaxQueued),
                (quota, GroupCpuQuota),
            ],
        }
        .into_iter()
        .find_map(|(broken, kind)| broken.then_some(kind))
    }

    /// No job of the bucket can be admitted: some cap has no room even for a 1-processor job.
    fn is_full(&self) -> bool {
        self.refuses(1).is_some()
    }
}

/// What became of a submitted job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Eligible,
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
    /// Per account: its held jobs by (tier rank, job).
    buckets: Vec<BTreeSet<(i64, u32)>>,
    /// Per job: the account whose bucket holds it (`NONE` when not held).
    held_in: Vec<u32>,
    held: usize,
    dirty: BTreeSet<u32>,
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
            accounts,
            job_accounts,
            cpus: workload.jobs.iter().map(|j| j.procs).collect(),
            buckets,
            held_in: vec![NONE; n],
            held: 0,
            dirty: BTreeSet::new(),
            out: LimitsOutcome {
                queue_names: limits.queues.iter().map(|q| q.name.clone()).collect(),
                queue,
                held_by: vec![None; n],
                eligible_at: workload.jobs.iter().map(|j| j.submit).collect(),
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

    /// Held jobs right now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// `job` is submitted: eligible if every cap allows it, else held.
    pub fn arrive(&mut self, job: u32) -> Admission {
        match self.check(job) {
            None => {
                self.make_eligible(job);
                Admission::Eligible
            }
            Some((limit, account)) => {
                self.hold(job, limit, account);
                Admission::Held(limit)
            }
        }
    }

    /// `job`, eligible, starts.
    pub fn started(&mut self, job: u32) {
        let cpus = u64::from(self.cpus[job as usize]);
        for a in self.job_accounts[job as usize] {
            if a == NONE {
                continue;
            }
            let acc = &mut self.accounts[a as usize];
            acc.eligible -= 1;
            acc.eligible_cpus -= cpus;
            acc.running += 1;
            acc.running_cpus += cpus;
            if acc.caps.max_queued.is_some() && !self.buckets[a as usize].is_empty() {
                self.dirty.insert(a);
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
        }
    }

    /// Makes eligible, at `now`, the held jobs that the slots freed since the last call admit;
    /// appends them to `admitted` (accounts in order; each account's jobs in priority order).
    pub fn admit(&mut self, now: Time, admitted: &mut Vec<u32>) {
        while let Some(a) = self.dirty.pop_first() {
            let mut cursor: Option<(i64, u32)> = None;
            loop {
                if self.accounts[a as usize].is_full() {
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
                        self.make_eligible(job);
                        self.out.eligible_at[job as usize] = now;
                        admitted.push(job);
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

    /// The first cap `job` would break, and its account.
    fn check(&self, job: u32) -> Option<(LimitKind, u32)> {
        let cpus = u64::from(self.cpus[job as usize]);
        self.accounts_of(job)
            .find_map(|a| self.accounts[a as usize].refuses(cpus).map(|l| (l, a)))
    }

    fn make_eligible(&mut self, job: u32) {
        let cpus = u64::from(self.cpus[job as usize]);
        for a in self.job_accounts[job as usize] {
            if a != NONE {
                let acc = &mut self.accounts[a as usize];
                acc.eligible += 1;
                acc.eligible_cpus += cpus;
            }
        }
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
