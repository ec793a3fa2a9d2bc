//! `order: priority`: a weighted sum of factors in [0, 1], highest first, as Maui's and Slurm's
//! multifactor priority (Slurm's `priority/multifactor`: `PriorityWeightAge`,
//! `PriorityWeightFairshare`, `PriorityWeightJobSize`, `PriorityWeightPartition`):
//!
//! priority = w_age × min(1, wait / max_age) + w_fairshare × FF + w_size × size
//!            + w_queue × queue priority / the largest queue priority
//!
//! - age: time waited so far, saturating at `max_age` (Slurm's `PriorityMaxAge`, 7 days by
//!   default);
//! - FF: the owner's fairshare factor ([`FairshareState`], the run's fairshare spec);
//! - size: requested cores / the machine's cores, or 1 − that with `favor_small` (Slurm's
//!   `PriorityFavorSmall`);
//! - queue priority: from `queue_priority` (queue number → priority ≥ 0; absent queues 0), scaled
//!   by the largest, as Slurm scales partition priority tiers. In a run with queues of different
//!   priorities and `queue_tiers: false`, the job's queue in the run's queue setup gives the
//!   factor instead ([`PriorityOrder::with_queue_factors`]); with `queue_tiers: true` (the
//!   default) queue priority is the leading key over this order ([`super::Tiered`]).
//!
//! Ties in submission order. Priorities are recomputed for every waiting job at each
//! re-ordering; between periodic re-orderings a job keeps the priority it was given, and a new
//! job is ranked with the factors of the last re-ordering and its age at its first call.

use std::collections::BTreeMap;

use super::{OrderError, QueueOrder, Reorder};
use crate::sim::fairshare::FairshareState;
use crate::sim::job::{Job, Time};
use crate::sim::queue::Queue;
use crate::sim::scheduler::QueuedJob;

/// The weights and parameters of `order: priority`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PriorityWeights {
    pub age: f64,
    pub fairshare: f64,
    pub size: f64,
    pub queue: f64,
    /// Seconds of waiting at which the age factor reaches 1.
    pub max_age: Time,
    pub favor_small: bool,
    /// Queue number → priority (≥ 0).
    pub queue_priority: BTreeMap<i32, f64>,
    /// With a queue setup whose queues differ in priority: queue priority as the leading key
    /// (true, the default) or only as the weighted `queue` factor (false).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub queue_tiers: bool,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Default for PriorityWeights {
    /// Slurm-like defaults with fairshare dominating: age 1000, fairshare 10000, size 0,
    /// queue 0, max_age 7 days.
    fn default() -> Self {
        PriorityWeights {
            age: 1000.0,
            fairshare: 10000.0,
            size: 0.0,
            queue: 0.0,
            max_age: 7 * 86_400,
            favor_small: false,
            queue_priority: BTreeMap::new(),
            queue_tiers: true,
        }
    }
}

impl PriorityWeights {
    /// Checks the weights are usable (non-negative, positive max_age, queue priorities ≥ 0).
    pub fn validate(&self) -> Result<(), OrderError> {
        for (what, w) in [
            ("age", self.age),
            ("fairshare", self.fairshare),
            ("size", self.size),
            ("queue", self.queue),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return Err(OrderError::Weights(format!(
                    "the {what} weight must be a non-negative number"
                )));
            }
        }
        if self.max_age <= 0 {
            return Err(OrderError::Weights("max_age must be positive".into()));
        }
        if let Some((q, _)) = self
            .queue_priority
            .iter()
            .find(|(_, p)| !(p.is_finite() && **p >= 0.0))
        {
            return Err(OrderError::Weights(format!(
                "queue {q}: its priority must be a non-negative number"
            )));
        }
        Ok(())
    }
}

/// `order: priority`.
pub struct PriorityOrder {
    state: FairshareState,
    reorder: Reorder,
    weights: PriorityWeights,
    cores: f64,
    max_queue: f64,
    last: Option<Time>,
    /// Per job: its priority as last computed, and the re-ordering it was computed at.
    priority: Vec<f64>,
    computed: Vec<u64>,
    epoch: u64,
    keyed: Vec<(f64, usize)>,
    /// Per workload job: its queue factor in [0, 1], replacing `queue_priority` (queue setups).
    queue_factor: Option<Vec<f64>>,
}

impl PriorityOrder {
    pub fn new(
        state: FairshareState,
        reorder: Reorder,
        weights: PriorityWeights,
        cores: u64,
    ) -> Result<Self, OrderError> {
        weights.validate()?;
        let max_queue = weights.queue_priority.values().copied().fold(0.0, f64::max);
        Ok(PriorityOrder {
            state,
            reorder,
            weights,
            cores: cores.max(1) as f64,
            max_queue,
            last: None,
            priority: Vec::new(),
            computed: Vec::new(),
            epoch: 0,
            keyed: Vec::new(),
            queue_factor: None,
        })
    }

    /// Takes each job's queue factor (in [0, 1], by workload job) from `factor` instead of
    /// `queue_priority`: the priorities of a run's queue setup.
    pub fn with_queue_factors(mut self, factor: Vec<f64>) -> Self {
        self.queue_factor = Some(factor);
        self
    }

    fn priority_of(&self, now: Time, q: &QueuedJob, job: &Job) -> f64 {
        let w = &self.weights;
        let age = ((now - q.submit).max(0) as f64 / w.max_age as f64).min(1.0);
        let ff = self.state.factor(self.state.user_of_job(q.job));
        let mut size = f64::from(job.procs) / self.cores;
        if w.favor_small {
            size = 1.0 - size;
        }
        let queue = if let Some(f) = &self.queue_factor {
            f[q.job as usize]
        } else if self.max_queue > 0.0 {
            w.queue_priority.get(&job.queue).copied().unwrap_or(0.0) / self.max_queue
        } else {
            0.0
        };
        w.age * age + w.fairshare * ff + w.size * size + w.queue * queue
    }
}

impl QueueOrder for PriorityOrder {
    fn order(&mut self, now: Time, queue: &Queue, jobs: &[Job], out: &mut Vec<usize>) {
        if self.priority.len() < jobs.len() {
            self.priority.resize(jobs.len(), 0.0);
            self.computed.resize(jobs.len(), 0);
        }
        if self.reorder.due(now, self.last) {
            match self.reorder {
                Reorder::Call | Reorder::Start => self.state.refresh_waiting(now, queue),
                Reorder::Every(_) => self.state.refresh(now, None),
            }
            self.last = Some(self.reorder.period(now));
            self.epoch += 1;
        }
        self.keyed.clear();
        for (pos, q) in queue.iter().enumerate() {
            let j = q.job as usize;
            if self.computed[j] != self.epoch {
                self.priority[j] = self.priority_of(now, q, &jobs[j]);
                self.computed[j] = self.epoch;
            }
            self.keyed.push((self.priority[j], pos));
        }
        // Highest first; ties by position (submission order).
        self.keyed
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        out.clear();
        out.extend(self.keyed.iter().map(|&(_, pos)| pos));
    }

    fn started(&mut self, now: Time, job: u32, class: u32) {
        self.state.started(now, job, class);
    }

    fn ended(&mut self, job: u32, end: Time) {
        self.state.ended(job, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Machine;
    use crate::sim::fairshare::FairshareSpec;
    use crate::sim::job::Workload;
    use crate::sim::resources::ResourceVec;

    fn setup(weights: PriorityWeights) -> (Workload, PriorityOrder) {
        // Job 0: user 1, 1 core, queue 0, submitted at 0. Job 1: user 2, 8 cores, queue 1,
        // submitted at 100. Job 2: user 1, 4 cores, queue 1, submitted at 200.
        let job = |user, procs, queue, submit| Job {
            user,
            procs,
            queue,
            submit,
            runtime: 10,
            requested_time: 10,
            ..Job::default()
        };
        let w = Workload::new(vec![job(1, 1, 0, 0), job(2, 8, 1, 100), job(1, 4, 1, 200)]);
        let state = FairshareState::new(&w, &Machine::pool(8), &FairshareSpec::default()).unwrap();
        let o = PriorityOrder::new(state, Reorder::Call, weights, 8).unwrap();
        (w, o)
    }

    fn queue(w: &Workload) -> Queue {
        w.jobs
            .iter()
            .enumerate()
            .map(|(i, j)| QueuedJob {
                job: i as u32,
                submit: j.submit,
                requested_time: j.requested_time,
                demand: ResourceVec::units(u64::from(j.procs)),
            })
            .collect()
    }

    fn zero() -> PriorityWeights {
        PriorityWeights {
            age: 0.0,
            fairshare: 0.0,
            size: 0.0,
            queue: 0.0,
            ..PriorityWeights::default()
        }
    }

    #[test]
    fn each_factor_orders_on_its_own() {
        let mut out = Vec::new();
        // Size: largest first, or smallest with favor_small.
        let (w, mut o) = setup(PriorityWeights {
            size: 1.0,
            ..zero()
        });
        o.order(300, &queue(&w), &w.jobs, &mut out);
        assert_eq!(out, [1, 2, 0]);
        let (w, mut o) = setup(PriorityWeights {
            size: 1.0,
            favor_small: true,
            ..zero()
        });
        o.order(300, &queue(&w), &w.jobs, &mut out);
        assert_eq!(out, [0, 2, 1]);
        // Queue priority: queue 1 above queue 0; ties in submission order.
        let (w, mut o) = setup(PriorityWeights {
            queue: 1.0,
            queue_priority: [(0, 10.0), (1, 50.0)].into_iter().collect(),
            ..zero()
        });
        o.order(300, &queue(&w), &w.jobs, &mut out);
        assert_eq!(out, [1, 2, 0]);
        // Age alone is FCFS (older first), and saturates: with max_age 100 s at t = 300 all
        // three have waited ≥ 100 s, so they tie and keep submission order.
        let (w, mut o) = setup(PriorityWeights {
            age: 1.0,
            max_age: 100,
            ..zero()
        });
        o.order(300, &queue(&w), &w.jobs, &mut out);
        assert_eq!(out, [0, 1, 2]);
        // All weights zero: everything ties, submission order.
        let (w, mut o) = setup(zero());
        o.order(300, &queue(&w), &w.jobs, &mut out);
        assert_eq!(out, [0, 1, 2]);
    }

    #[test]
    fn the_weighted_sum() {
        // Size weight 1000 (job 1: 1000, job 2: 500, job 0: 125) against fairshare weight 2000
        // after user 2 used everything so far (FF_2 = 2^−2, FF_1 = 1): job 0: 2000 + 125,
        // job 2: 2000 + 500, job 1: 500 + 1000.
        let (w, mut o) = setup(PriorityWeights {
            size: 1000.0,
            fairshare: 2000.0,
            ..zero()
        });
        o.started(100, 1, 0);
        o.ended(1, 110);
        let mut out = Vec::new();
        o.order(300, &queue(&w), &w.jobs, &mut out);
        assert_eq!(out, [2, 0, 1]);
    }

    #[test]
    fn weights_are_checked() {
        let w = Workload::new(vec![Job::default()]);
        let state = FairshareState::new(&w, &Machine::pool(1), &FairshareSpec::default()).unwrap();
        let err = PriorityOrder::new(
            state,
            Reorder::Call,
            PriorityWeights {
                size: -1.0,
                ..PriorityWeights::default()
            },
            1,
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("size weight"), "{err}");
    }
}
