//! `order: fairshare`: waiting jobs by their owner's fairshare factor, highest first; a user's
//! jobs in submission order; users with equal factors interleaved in submission order (Klusáček
//! & Rudová §4: "a single queue that was dynamically reordered according to continuously updated
//! job priorities"; AleaNG orders by factor, then job id).
//!
//! The factor comes from [`FairshareState`]: each start charges its owner through the usage
//! ledger at the job's rate on the class it got, each end settles it. Since FF = 2^(−key/ΣU)
//! with ΣU common to all users, ranking users by their key (effective usage over normalised
//! share, [`crate::sim::fairshare::ShareTree::key`]) is ranking them by factor.
//!
//! The waiting jobs are kept by user between calls and the waiting users sorted by key
//! ([`UserQueues`]), and a call recomputes and re-places only the keys that can have changed:
//! those of users whose jobs started or ended since the last call, when
//! [`FairshareState::key_epoch`] says the other keys are the same to the bit (charging at the
//! start, one level of shares, no decay or decay by steps within one step: the default
//! settings), or none between periods of [`Reorder::Every`]. Decay multiplies every usage by one
//! factor, which keeps the users' order in exact arithmetic, but not always in floating point
//! (each user's usage is decayed from its own last charge): a call past a decay instant, or under
//! continuous charging, half-life decay or two-level shares, recomputes and sorts every waiting
//! user's key. The order is then read lazily, job by job ([`QueueOrder::begin`]), or written
//! whole ([`QueueOrder::order`]) from the same sorted users; `tests/fairshare_lazy.rs` compares
//! both with the order bucketed and sorted afresh at every call.

use super::{OrderRuns, QueueOrder, Reorder, UserQueues, Within};
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
    /// The waiting jobs by user kept between calls, their users sorted by key.
    queues: UserQueues,
    /// The key epoch ([`FairshareState::key_epoch`]) of the keys the users were last sorted by.
    epoch: Option<Time>,
    /// Per workload job: its queue position in this call (reused by [`QueueOrder::order`]).
    position: Vec<u32>,
}

impl FairshareOrder {
    pub fn new(state: FairshareState, reorder: Reorder) -> Self {
        let users = state.accounts().user_count();
        FairshareOrder {
            state,
            reorder,
            last: None,
            queues: UserQueues::new(users),
            epoch: None,
            position: Vec::new(),
        }
    }

    pub fn state(&self) -> &FairshareState {
        &self.state
    }

    /// Brings the keys up to `now`: true when any waiting user's key may have changed (every
    /// waiting user's is recomputed), false when only the touched users' may have (theirs are:
    /// users whose jobs started or ended are touched). Every call recomputes, or the first of
    /// each period of [`Reorder::Every`] (every user's key then, frozen until the next period).
    fn rekey(&mut self, now: Time) -> bool {
        if !self.reorder.due(now, self.last) {
            // Frozen keys: only arrivals and starts move users.
            return false;
        }
        self.last = Some(self.reorder.period(now));
        match self.reorder {
            Reorder::Every(_) => {
                self.state.refresh(now, None);
                true
            }
            Reorder::Call | Reorder::Start => {
                let epoch = self.state.key_epoch(now);
                if epoch.is_none() || epoch != self.epoch {
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
    /// The whole order, from the users kept sorted between calls ([`QueueOrder::begin`]): a
    /// call costs O(arrivals + changed keys × log users) — O(waiting users × log) when every key
    /// may have changed — plus one pass over the queue for the jobs' positions and one over the
    /// users' jobs to write them, where the queue was bucketed by user and every waiting user's
    /// key recomputed and sorted at every call (BENCHMARKS.md, "Fairshare queue order").
    fn order(&mut self, now: Time, queue: &Queue, jobs: &[Job], out: &mut Vec<usize>) {
        self.begin(now, queue, jobs);
        // The queue holds its jobs by increasing workload index; a job's position is its rank.
        for (pos, q) in queue.iter().enumerate() {
            let job = q.job as usize;
            if job >= self.position.len() {
                self.position.resize(job + 1, 0);
            }
            self.position[job] = pos as u32;
        }
        let position = &self.position;
        self.queues
            .write_all(out, |job| position[job as usize] as usize);
    }

    /// The same order as [`QueueOrder::order`], copied from the waiting jobs kept by user: no
    /// pass over the queue for positions.
    fn order_jobs(
        &mut self,
        now: Time,
        queue: &Queue,
        jobs: &[Job],
        out: &mut Vec<QueuedJob>,
    ) -> bool {
        self.begin(now, queue, jobs);
        self.queues.write_all_jobs(out);
        true
    }

    /// The same order as [`QueueOrder::order`], as runs of the waiting jobs kept by user: each
    /// user alone at their key a run owned by their dense index ([`UserQueues::write_runs`]),
    /// no pass over the queue for positions and no copy of it.
    fn order_runs(&mut self, now: Time, queue: &Queue, jobs: &[Job]) -> Option<OrderRuns<'_>> {
        self.begin(now, queue, jobs);
        Some(self.queues.write_runs())
    }

    /// The same order as [`QueueOrder::order`], job by job: a call costs O(arrivals + changed
    /// keys × log users) — O(waiting users × log) when every key may have changed — and then
    /// O(log) per job read (its queue position), where the whole order costs O(queue).
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
