//! `order: fairshare`: waiting jobs by their owner's fairshare factor, highest first; a user's
//! jobs in submission order; users with equal factors interleaved in submission order (Klusáček
//! & Rudová §4: "a single queue that was dynamically reordered according to continuously updated
//! job priorities"; AleaNG orders by factor, then job id).
//!
//! The factor comes from [`FairshareState`]: each start charges its owner through the usage
//! ledger at the job's rate on the class it got, each end settles it. Since FF = 2^(−key/ΣU)
//! with ΣU common to all users, ranking users by their key (effective usage over normalised
//! share, [`crate::sim::fairshare::ShareTree::key`]) is ranking them by factor: a call
//! costs O(queue + users with waiting jobs × log) — the queue is bucketed by user, users are
//! sorted, and only users with exactly equal keys are merged job by job.
//!
//! Read lazily ([`QueueOrder::begin`]), the waiting users stay sorted between calls, and a call
//! recomputes and re-places only the keys that can have changed: those of users whose jobs
//! started or ended since the last call, when [`FairshareState::key_epoch`] says the other keys
//! are the same to the bit (charging at the start, one level of shares, no decay or decay by
//! steps within one step: the default settings), or none between periods of
//! [`Reorder::Every`]. Decay multiplies every usage by one factor, which keeps the users'
//! order in exact arithmetic, but not always in floating point (each user's usage is decayed
//! from its own last charge): a call past a decay instant, or under continuous charging,
//! half-life decay or two-level shares, recomputes and sorts every waiting user's key.

use super::{QueueOrder, Reorder, UserQueues, Within};
use crate::sim::fairshare::FairshareState;
use crate::sim::job::{Job, Time};
use crate::sim::queue::Queue;
use crate::sim::scheduler::QueuedJob;

/// `order: fairshare`.
pub struct FairshareOrder {
    state: FairshareState,
    reorder: Reorder,
    /// The period of the last refresh.
    last: Option<Time>,
    /// Per user: its waiting jobs' queue positions in this call (reused).
    buckets: Vec<Vec<usize>>,
    waiting_users: Vec<u32>,
    /// The waiting jobs by user kept between calls, for lazy passes ([`QueueOrder::begin`]).
    queues: UserQueues,
    /// The key epoch ([`FairshareState::key_epoch`]) of the last lazy pass's keys, and whether
    /// a whole order written since may have refreshed them all (a period of
    /// [`Reorder::Every`]): the next pass then sorts every user afresh.
    epoch: Option<Time>,
    resort: bool,
}

impl FairshareOrder {
    pub fn new(state: FairshareState, reorder: Reorder) -> Self {
        let users = state.accounts().user_count();
        FairshareOrder {
            state,
            reorder,
            last: None,
            buckets: vec![Vec::new(); users],
            waiting_users: Vec::new(),
            queues: UserQueues::new(users),
            epoch: None,
            resort: false,
        }
    }

    pub fn state(&self) -> &FairshareState {
        &self.state
    }

    /// Recomputes the keys when due, for a whole order: every call, only the waiting users'
    /// keys matter (collected from `queue`); periodically, all users', frozen until the next
    /// period.
    fn refresh(&mut self, now: Time, queue: &Queue) {
        if !self.reorder.due(now, self.last) {
            return;
        }
        match self.reorder {
            Reorder::Call | Reorder::Start => self.state.refresh_waiting(now, queue),
            Reorder::Every(_) => self.state.refresh(now, None),
        }
        self.last = Some(self.reorder.period(now));
    }

    /// Brings the keys of a lazy pass up to `now`: true when any waiting user's key may have
    /// changed (every waiting user's is recomputed), false when only the touched users' may
    /// have (theirs are: users whose jobs started or ended are touched).
    fn rekey(&mut self, now: Time) -> bool {
        let resort = std::mem::take(&mut self.resort);
        if !self.reorder.due(now, self.last) {
            // Frozen keys: only arrivals and starts move users.
            return resort;
        }
        self.last = Some(self.reorder.period(now));
        match self.reorder {
            Reorder::Every(_) => {
                self.state.refresh(now, None);
                true
            }
            Reorder::Call | Reorder::Start => {
                let epoch = self.state.key_epoch(now);
                if resort || epoch.is_none() || epoch != self.epoch {
                    self.epoch = epoch;
                    self.state.refresh(now, Some(self.queues.users()));
                    true
                } else {
                    self.state.refresh(now, Some(self.queues.touched()));
                    false
                }
            }
        }
    }
}

impl QueueOrder for FairshareOrder {
    fn order(&mut self, now: Time, queue: &Queue, _jobs: &[Job], out: &mut Vec<usize>) {
        self.refresh(now, queue);
        // A period's refresh here would leave the users a lazy pass keeps sorted on old keys.
        self.resort = true;
        for &u in &self.waiting_users {
            self.buckets[u as usize].clear();
        }
        self.waiting_users.clear();
        for (pos, q) in queue.iter().enumerate() {
            let u = self.state.user_of_job(q.job);
            let bucket = &mut self.buckets[u as usize];
            if bucket.is_empty() {
                self.waiting_users.push(u);
            }
            bucket.push(pos);
        }
        let state = &self.state;
        // By key, then by the user's first waiting job: users of equal keys are merged below.
        self.waiting_users.sort_by(|&a, &b| {
            state
                .key(a)
                .total_cmp(&state.key(b))
                .then(self.buckets[a as usize][0].cmp(&self.buckets[b as usize][0]))
        });
        out.clear();
        let mut i = 0;
        while i < self.waiting_users.len() {
            let key = state.key(self.waiting_users[i]);
            let mut j = i + 1;
            while j < self.waiting_users.len() && state.key(self.waiting_users[j]) == key {
                j += 1;
            }
            let from = out.len();
            for &u in &self.waiting_users[i..j] {
                out.extend_from_slice(&self.buckets[u as usize]);
            }
            if j - i > 1 {
                // Equal factors: submission order (positions follow submission order).
                out[from..].sort_unstable();
            }
            i = j;
        }
    }

    /// The same order as [`QueueOrder::order`], job by job: the waiting jobs are kept by user
    /// between calls, and the users sorted ([`UserQueues`]), so a call costs O(arrivals +
    /// changed keys × log users) — O(waiting users × log) when every key may have changed — and
    /// then O(log) per job read, where the whole order costs O(queue).
    fn begin(&mut self, now: Time, queue: &Queue, _jobs: &[Job]) -> bool {
        let state = &self.state;
        self.queues.sync(queue, |job| state.user_of_job(job));
        let all = self.rekey(now);
        let state = &self.state;
        if all {
            self.queues.begin(|u| state.key(u));
        } else {
            self.queues.begin_touched(|u| state.key(u));
        }
        true
    }

    fn next_waiting(&mut self, within: Within) -> Option<QueuedJob> {
        self.queues.next_job(within)
    }

    fn started(&mut self, now: Time, job: u32, class: u32) {
        self.state.started(now, job, class);
        let user = self.state.user_of_job(job);
        // Its key changed, whether or not the job was mirrored.
        self.queues.touch(user);
        self.queues.started(job, user);
    }

    fn ended(&mut self, job: u32, end: Time) {
        self.state.ended(job, end);
        self.queues.touch(self.state.user_of_job(job));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Machine;
    use crate::sim::fairshare::{
        Charging, Decay, FairshareSpec, PenaltyModel, PenaltySpec, SharesSpec,
    };
    use crate::sim::job::Workload;
    use crate::sim::resources::ResourceVec;
    use crate::sim::scheduler::QueuedJob;

    fn workload(users: &[i32]) -> Workload {
        Workload::new(
            users
                .iter()
                .map(|&user| Job {
                    user,
                    procs: 2,
                    runtime: 100,
                    requested_time: 100,
                    ..Job::default()
                })
                .collect(),
        )
    }

    fn queue(jobs: &[u32]) -> Queue {
        jobs.iter()
            .map(|&job| QueuedJob {
                job,
                submit: 0,
                requested_time: 100,
                demand: ResourceVec::units(2),
            })
            .collect()
    }

    fn order_of(spec: &FairshareSpec, users: &[i32]) -> FairshareOrder {
        let w = workload(users);
        FairshareOrder::new(
            FairshareState::new(&w, &Machine::pool(8), spec).unwrap(),
            Reorder::Call,
        )
    }

    #[test]
    fn without_usage_the_order_is_submission_order() {
        let mut o = order_of(&FairshareSpec::default(), &[3, 1, 3, 2, 1]);
        let mut out = Vec::new();
        o.order(0, &queue(&[0, 1, 2, 3, 4]), &[], &mut out);
        assert_eq!(out, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn the_user_who_used_less_goes_first() {
        // Jobs 0, 1 of user 1; jobs 2, 3 of user 2. User 1's job 0 ran: user 2 (no usage, FF 1)
        // goes first, then user 1.
        let mut o = order_of(&FairshareSpec::default(), &[1, 1, 2, 2]);
        o.started(0, 0, 0);
        o.ended(0, 100);
        let mut out = Vec::new();
        o.order(100, &queue(&[1, 2, 3]), &[], &mut out);
        assert_eq!(out, [1, 2, 0]);
        assert_eq!(o.state().factor(1), 1.0);
        assert_eq!(
            o.state().factor(0),
            0.25,
            "all the usage on a half share: 2^−2"
        );
    }

    #[test]
    fn shares_weigh_usage() {
        // User 1 used 200, user 2 used 100; with shares 3:1, user 1's key is 200/(3/4) < 100/(1/4).
        let spec = FairshareSpec {
            shares: SharesSpec {
                users: [(1, 3.0), (2, 1.0)].into_iter().collect(),
                ..SharesSpec::default()
            },
            penalty: PenaltySpec::of(PenaltyModel::Cpu),
            charging: Charging::Estimate,
            ..FairshareSpec::default()
        };
        let mut o = order_of(&spec, &[1, 2, 1, 2]);
        o.started(0, 0, 0); // user 1: 2 cores × 100 s estimate = 200
        o.started(0, 1, 0); // user 2: 200
        o.ended(1, 50); // user 2 actually used 100
        let mut out = Vec::new();
        o.order(50, &queue(&[2, 3]), &[], &mut out);
        assert_eq!(out, [0, 1], "user 1 (job 2) first");
    }

    #[test]
    fn periodic_reordering_freezes_keys_between_periods() {
        let mut o = FairshareOrder::new(
            FairshareState::new(
                &workload(&[1, 1, 2, 2]),
                &Machine::pool(8),
                &FairshareSpec::default(),
            )
            .unwrap(),
            Reorder::Every(60),
        );
        let mut out = Vec::new();
        o.order(0, &queue(&[0, 1, 2, 3]), &[], &mut out);
        assert_eq!(out, [0, 1, 2, 3]);
        o.started(0, 0, 0);
        // Same period: user 1's charge does not count yet.
        o.order(30, &queue(&[1, 2, 3]), &[], &mut out);
        assert_eq!(out, [0, 1, 2]);
        // Next period: user 2 first.
        o.order(60, &queue(&[1, 2, 3]), &[], &mut out);
        assert_eq!(out, [1, 2, 0]);
    }

    #[test]
    fn bad_decays_are_refused() {
        let mut spec = FairshareSpec {
            decay: Decay::Factor {
                factor: 1.5,
                every: 10,
            },
            ..FairshareSpec::default()
        };
        let err = FairshareState::new(&workload(&[1]), &Machine::pool(1), &spec)
            .err()
            .unwrap();
        assert!(err.to_string().contains("between 0 and 1"), "{err}");
        spec.decay = Decay::HalfLife { half_life: 0 };
        assert!(FairshareState::new(&workload(&[1]), &Machine::pool(1), &spec).is_err());
    }
}
