//! The fairshare of a run as it unfolds: the workload's accounts and shares, its jobs' prices,
//! and the usage ledgers fed by starts and ends — what the `fairshare` and `priority` orders rank
//! by, and what [`super::replay`] recomputes from a finished run for the outputs (the same
//! arithmetic in the same order, so both agree to the last bit).

use super::{
    Accounts, Charging, Decay, FairshareSpec, Hierarchy, Ledger, PenaltyError, PenaltyModel,
    Pricing, ShareError, ShareTree, fairshare_factor,
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

/// The jobs' requested times, 4 bytes each while every one fits 32 bits (they do in every
/// archive trace), else 8: a copy held for the whole run, so its size counts (issue 16, 5 M
/// jobs).
enum RequestedTimes {
    Narrow(Vec<u32>),
    Wide(Vec<Time>),
}

impl RequestedTimes {
    fn of(jobs: &[Job]) -> Self {
        match jobs
            .iter()
            .map(|j| u32::try_from(j.requested_time))
            .collect::<Result<Vec<u32>, _>>()
        {
            Ok(narrow) => RequestedTimes::Narrow(narrow),
            Err(_) => RequestedTimes::Wide(jobs.iter().map(|j| j.requested_time).collect()),
        }
    }

    fn of_job(&self, job: u32) -> Time {
        match self {
            RequestedTimes::Narrow(times) => Time::from(times[job as usize]),
            RequestedTimes::Wide(times) => times[job as usize],
        }
    }
}

/// The jobs' placement-free penalties, 4 bytes each while every one is a whole number that fits
/// 32 bits (the `cpu` model's processor counts), else 8; read back bit for bit.
enum BasePenalties {
    Whole(Vec<u32>),
    Real(Vec<f64>),
}

impl BasePenalties {
    fn of(jobs: usize, penalty: impl Fn(usize) -> f64) -> Self {
        let whole = |p: f64| {
            let w = p as u32;
            (f64::from(w).to_bits() == p.to_bits()).then_some(w)
        };
        match (0..jobs)
            .map(|i| whole(penalty(i)))
            .collect::<Option<Vec<u32>>>()
        {
            Some(narrow) => BasePenalties::Whole(narrow),
            None => BasePenalties::Real((0..jobs).map(penalty).collect()),
        }
    }

    fn of_job(&self, job: u32) -> f64 {
        match self {
            BasePenalties::Whole(p) => f64::from(p[job as usize]),
            BasePenalties::Real(p) => p[job as usize],
        }
    }
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
    base: BasePenalties,
    /// Per job: its requested time (the §3.4 estimate).
    requested: RequestedTimes,
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
        let base = BasePenalties::of(workload.jobs.len(), |i| {
            if placed {
                0.0
            } else {
                pricing.penalty(&workload.jobs[i], None).unwrap_or(0.0)
            }
        });
        let users = accounts.user_count();
        let groups = (tree.hierarchy() == Hierarchy::Groups)
            .then(|| Ledger::new(accounts.group_count(), spec.charging, spec.decay));
        Ok(FairshareState {
            users: Ledger::new(users, spec.charging, spec.decay),
            groups,
            total: Ledger::new(1, spec.charging, spec.decay),
            requested: RequestedTimes::of(&workload.jobs),
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
            None => self.base.of_job(job),
        };
        penalty * self.pricing.walltime_factor(class)
    }

    pub fn started(&mut self, now: Time, job: u32, class: u32) {
        let user = self.accounts.user_of_job(job);
        let rate = self.rate(job, class);
        let requested = self.requested.of_job(job);
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

    /// When the keys change without a start or an end: `Some(epoch)` when the key of a user
    /// none of whose jobs started or ended in between is the same, bit for bit, at any two
    /// instants of one epoch — with the request charged at the start (`estimate`), one level of
    /// shares, and no decay (one epoch) or decay by a factor (an epoch per interval: a user's
    /// usage is decayed from its last charge by the instants since, so the same number within
    /// an interval) — and `None` when keys move with time alone (continuous charging, half-life
    /// decay) or with other users' usage (two-level shares).
    pub fn key_epoch(&self, now: Time) -> Option<Time> {
        if self.groups.is_some() || self.users.charging() != Charging::Estimate {
            return None;
        }
        match self.users.decay() {
            Decay::None => Some(0),
            Decay::Factor { every, .. } => Some(now.div_euclid(every)),
            Decay::HalfLife { .. } => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_times_read_back_narrow_or_wide() {
        let jobs = |times: &[Time]| -> Vec<Job> {
            times
                .iter()
                .map(|&t| Job {
                    requested_time: t,
                    ..Job::default()
                })
                .collect()
        };
        let narrow = RequestedTimes::of(&jobs(&[1, 3600, u32::MAX as Time]));
        assert!(matches!(narrow, RequestedTimes::Narrow(_)));
        assert_eq!(narrow.of_job(2), u32::MAX as Time);
        // One time beyond 32 bits (the hardening tests' 10^12-second jobs) widens them all.
        let wide = RequestedTimes::of(&jobs(&[7, 1_000_000_000_000]));
        assert!(matches!(wide, RequestedTimes::Wide(_)));
        assert_eq!((wide.of_job(0), wide.of_job(1)), (7, 1_000_000_000_000));
    }

    #[test]
    fn base_penalties_read_back_bit_for_bit() {
        let whole = [0.0, 1.0, 64.0, u32::MAX as f64];
        let b = BasePenalties::of(whole.len(), |i| whole[i]);
        assert!(matches!(b, BasePenalties::Whole(_)));
        for (i, p) in whole.iter().enumerate() {
            assert_eq!(b.of_job(i as u32).to_bits(), p.to_bits());
        }
        // A fraction, a negative zero or a value beyond 32 bits keeps every penalty as f64.
        for odd in [2.5, -0.0, 1e12] {
            let real = [3.0, odd];
            let b = BasePenalties::of(2, |i| real[i]);
            assert!(matches!(b, BasePenalties::Real(_)), "{odd}");
            assert_eq!(b.of_job(1).to_bits(), odd.to_bits());
            assert_eq!(b.of_job(0), 3.0);
        }
    }
}
