//! The fairshare of a run as it unfolds: the workload's accounts and shares, its jobs' prices,
//! and the usage ledgers fed by starts and ends — what the `fairshare` and `priority` orders rank
//! by, and what [`super::replay`] recomputes from a finished run for the outputs (the same
//! arithmetic in the same order, so both agree to the last bit).

use super::{
    Accounts, Decay, FairshareSpec, Hierarchy, Ledger, PenaltyError, PenaltyModel, Pricing,
    ShareError, ShareTree, fairshare_factor,
};
use crate::sim::job::{Job, Time, Workload};
use crate::sim::machine::Machine;
use crate::sim::queue::Queue;

/// A fairshare specification that cannot be used for a run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FairshareError {
    #[error("penalty: {0}")]
    Penalty(#[from] PenaltyError),
    #[error("shares: {0}")]
    Shares(#[from] ShareError),
    #[error("decay: {0}")]
    Decay(String),
}

/// The fairshare of a run: accounts, shares, prices and the usage ledgers, with the users' keys
/// as of the last refresh.
///
/// Usage is kept per user, and also per group (two-level shares need a group's usage) and in
/// total (the factor needs ΣU), each in its own [`Ledger`] fed the same charges, so a refresh
/// costs O(users refreshed), not O(all users).
pub struct FairshareState {
    accounts: Accounts,
    tree: ShareTree,
    pricing: Pricing,
    users: Ledger,
    groups: Option<Ledger>,
    total: Ledger,
    /// Per job: P(j) when it does not depend on placement (every model but `pe_local`).
    base: Vec<f64>,
    /// Per job: its requested time (the §3.4 estimate).
    requested: Vec<Time>,
    /// `pe_local` prices a job on the class it got: the jobs are kept for that.
    jobs: Option<Vec<Job>>,
    /// Per user, as of the last refresh that included them: the ordering key.
    keys: Vec<f64>,
    /// ΣU at the last refresh.
    total_usage: f64,
    /// Scratch: per-user usage and per-group usage of a refresh.
    usage: Vec<f64>,
    group_usage: Vec<f64>,
    /// Per user: the last call that collected them ([`FairshareState::collect_users`]).
    seen: Vec<u64>,
    call: u64,
    waiting: Vec<u32>,
}

impl FairshareState {
    pub fn new(
        workload: &Workload,
        machine: &Machine,
        spec: &FairshareSpec,
    ) -> Result<Self, FairshareError> {
        check_decay(spec.decay)?;
        let accounts = Accounts::of(workload);
        let tree = ShareTree::new(&accounts, &spec.shares)?;
        let pricing = Pricing::new(
            machine,
            (&workload.constraints, &workload.requests),
            &spec.penalty,
        )?;
        let placed = spec.penalty.model == PenaltyModel::PeLocal;
        let base = workload
            .jobs
            .iter()
            .map(|j| {
                if placed {
                    0.0
                } else {
                    pricing.penalty(j, None).unwrap_or(0.0)
                }
            })
            .collect();
        let users = accounts.user_count();
        let groups = (tree.hierarchy() == Hierarchy::Groups)
            .then(|| Ledger::new(accounts.group_count(), spec.charging, spec.decay));
        Ok(FairshareState {
            users: Ledger::new(users, spec.charging, spec.decay),
            groups,
            total: Ledger::new(1, spec.charging, spec.decay),
            requested: workload.jobs.iter().map(|j| j.requested_time).collect(),
            jobs: placed.then(|| workload.jobs.clone()),
            base,
            accounts,
            tree,
            pricing,
            keys: vec![0.0; users],
            total_usage: 0.0,
            usage: vec![0.0; users],
            group_usage: Vec::new(),
            seen: vec![0; users],
            call: 0,
            waiting: Vec::new(),
        })
    }

    pub fn accounts(&self) -> &Accounts {
        &self.accounts
    }

    /// What one second of `job`'s walltime on `class` adds to its owner's usage.
    pub fn rate(&self, job: u32, class: u32) -> f64 {
        let penalty = match &self.jobs {
            Some(jobs) => self
                .pricing
                .penalty(&jobs[job as usize], Some(class))
                .unwrap_or(0.0),
            None => self.base[job as usize],
        };
        penalty * self.pricing.walltime_factor(class)
    }

    pub fn started(&mut self, now: Time, job: u32, class: u32) {
        let user = self.accounts.user_of_job(job);
        let rate = self.rate(job, class);
        let requested = self.requested[job as usize];
        self.users.start(now, job, user, rate, requested);
        if let Some(g) = &mut self.groups {
            g.start(now, job, self.accounts.group_of(user), rate, requested);
        }
        self.total.start(now, job, 0, rate, requested);
    }

    pub fn ended(&mut self, job: u32, end: Time) {
        self.users.complete(end, job);
        if let Some(g) = &mut self.groups {
            g.complete(end, job);
        }
        self.total.complete(end, job);
    }

    /// Recomputes the keys of `users` (all users when `None`) and ΣU at `now`.
    pub fn refresh(&mut self, now: Time, users: Option<&[u32]>) {
        self.total_usage = self.total.usage(0, now);
        if let Some(g) = &self.groups {
            g.usages(now, &mut self.group_usage);
        }
        let key_of = |u: u32, state: &mut Self| {
            state.usage[u as usize] = state.users.usage(u, now);
            state.keys[u as usize] = state.tree.key(u, &state.usage, &state.group_usage);
        };
        match users {
            Some(list) => {
                for &u in list {
                    key_of(u, self);
                }
            }
            None => {
                for u in 0..self.keys.len() as u32 {
                    key_of(u, self);
                }
            }
        }
    }

    /// Recomputes ΣU and the keys of the users with jobs in `queue`.
    pub fn refresh_waiting(&mut self, now: Time, queue: &Queue) {
        self.collect_users(queue);
        let waiting = std::mem::take(&mut self.waiting);
        self.refresh(now, Some(&waiting));
        self.waiting = waiting;
    }

    /// The distinct users of `queue`'s jobs, in order of first appearance.
    pub fn collect_users(&mut self, queue: &Queue) -> &[u32] {
        self.call += 1;
        self.waiting.clear();
        for q in queue {
            let u = self.accounts.user_of_job(q.job);
            if self.seen[u as usize] != self.call {
                self.seen[u as usize] = self.call;
                self.waiting.push(u);
            }
        }
        &self.waiting
    }

    /// The dense user of workload job `job`.
    #[inline]
    pub fn user_of_job(&self, job: u32) -> u32 {
        self.accounts.user_of_job(job)
    }

    /// A user's key as of the last refresh that included them (smaller: higher priority).
    #[inline]
    pub fn key(&self, user: u32) -> f64 {
        self.keys[user as usize]
    }

    /// A user's usage as of the last refresh that included them.
    #[inline]
    pub fn usage(&self, user: u32) -> f64 {
        self.usage[user as usize]
    }

    /// ΣU as of the last refresh.
    pub fn total_usage(&self) -> f64 {
        self.total_usage
    }

    /// A user's normalised share S_u.
    pub fn share(&self, user: u32) -> f64 {
        self.tree.share(user)
    }

    /// A user's fairshare factor as of the last refresh that included them.
    pub fn factor(&self, user: u32) -> f64 {
        fairshare_factor(self.keys[user as usize], self.total_usage)
    }
}

fn check_decay(decay: Decay) -> Result<(), FairshareError> {
    match decay {
        Decay::None => Ok(()),
        Decay::Factor { factor, every } => {
            if !(0.0..=1.0).contains(&factor) {
                Err(FairshareError::Decay(format!(
                    "the factor {factor} must be between 0 and 1"
                )))
            } else if every <= 0 {
                Err(FairshareError::Decay(format!(
                    "the interval {every} s must be positive"
                )))
            } else {
                Ok(())
            }
        }
        Decay::HalfLife { half_life } if half_life <= 0 => Err(FairshareError::Decay(format!(
            "the half-life {half_life} s must be positive"
        ))),
        Decay::HalfLife { .. } => Ok(()),
    }
}
