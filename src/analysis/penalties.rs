//! Klusáček & Rudová's §4 analysis of a trace on a system: every job's penalty P(j) under each
//! model ([`crate::sim::fairshare::penalty`]), and who pays more under `pe_min` than under
//! `cpu` — the share of jobs, of CPU time and of users affected (the paper: under 2 % of jobs,
//! over 5 % of CPU time, about 40 % of users) and the distribution of the increase among the
//! affected jobs (its Fig. 4 left: for nearly 90 % of them +20 % or more, for 40 % +100 % or
//! more). Also the number of clusters able to run each job (Fig. 4 right).
//!
//! Pure: a workload and a [`Pricing`] in, numbers out. "CPU time" is requested cores × runtime
//! (what a job holds, footnote 3 of the paper); a job is *affected* when its `pe_min` exceeds its
//! `cpu` penalty by more than one part in 10⁹ (the PE arithmetic is floating point).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::sim::fairshare::Pricing;
use crate::sim::{Infeasible, Time, Workload};

/// Relative tolerance below which `pe_min` counts as equal to `cpu`.
pub const AFFECTED_TOLERANCE: f64 = 1e-9;

/// One job's penalties.
#[derive(Clone, Debug, PartialEq)]
pub struct JobPenalties {
    /// Index in the workload (submission order).
    pub index: u32,
    pub job_id: u64,
    pub user: i32,
    pub group: i32,
    pub queue: i32,
    /// Requested totals: cores, memory (KB), GPUs.
    pub cores: f64,
    pub memory_kb: f64,
    pub gpus: f64,
    pub runtime: Time,
    /// Classes and clusters able to run the job (the paper's job-to-cluster suitability).
    pub classes: u32,
    pub clusters: u32,
    /// Why no class can run it, if so (its `pe_*` are then `None`).
    pub infeasible: Option<Infeasible>,
    pub cpu: f64,
    pub standard_job: f64,
    pub pe_global: f64,
    /// The cheapest and the dearest local PE over the classes able to run it: `pe_local`
    /// lands in this range depending on where the scheduler puts the job.
    pub pe_local_min: Option<f64>,
    pub pe_local_max: Option<f64>,
    pub pe_min: Option<f64>,
}

impl JobPenalties {
    /// pe_min / cpu − 1 (0.2 = +20 %); `None` for infeasible jobs.
    pub fn increase(&self) -> Option<f64> {
        Some(self.pe_min? / self.cpu - 1.0)
    }

    /// `pe_min` exceeds `cpu`.
    pub fn affected(&self) -> bool {
        self.increase().is_some_and(|x| x > AFFECTED_TOLERANCE)
    }
}

/// The §4 shares.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PenaltySummary {
    /// Jobs of the workload, and those no class can run (left out of everything below).
    pub jobs: u64,
    pub infeasible: u64,
    /// Jobs whose `pe_min` exceeds `cpu`, and their fraction of the priced jobs.
    pub affected_jobs: u64,
    pub affected_job_fraction: Option<f64>,
    /// Σ cores × runtime of the priced jobs (core-seconds), and the affected jobs' fraction.
    pub cpu_time: f64,
    pub affected_cpu_time_fraction: Option<f64>,
    /// Users with a priced job, and those with at least one affected job.
    pub users: u64,
    pub affected_users: u64,
    pub affected_user_fraction: Option<f64>,
    /// Among affected jobs: the fraction whose penalty rose by at least 20 % and 100 %.
    pub increase_at_least_20pct: Option<f64>,
    pub increase_at_least_100pct: Option<f64>,
    /// Among affected jobs: the median and 90th percentile of the increase (nearest rank).
    pub increase_median: Option<f64>,
    pub increase_p90: Option<f64>,
}

/// Every job's penalties under each model.
pub fn job_penalties(workload: &Workload, pricing: &Pricing) -> Vec<JobPenalties> {
    let layout = pricing.layout();
    workload
        .jobs
        .iter()
        .enumerate()
        .map(|(i, job)| {
            let [cores, memory_kb, gpus] = pricing.requested(job);
            let queue_cost = pricing.queue_cost(job);
            let mut classes = 0;
            let mut clusters = BTreeSet::new();
            let mut lo: Option<f64> = None;
            let mut hi: Option<f64> = None;
            for (class, _) in pricing.able(job) {
                classes += 1;
                clusters.insert(layout.class(class).cluster);
                let pe = queue_cost * pricing.local_pe(job, class).expect("able to run it");
                lo = Some(lo.map_or(pe, |m| m.min(pe)));
                hi = Some(hi.map_or(pe, |m| m.max(pe)));
            }
            JobPenalties {
                index: i as u32,
                job_id: job.id,
                user: job.user,
                group: job.group,
                queue: job.queue,
                cores,
                memory_kb,
                gpus,
                runtime: job.runtime,
                classes,
                clusters: clusters.len() as u32,
                infeasible: if classes == 0 {
                    Some(
                        pricing
                            .infeasible(job)
                            .unwrap_or(Infeasible::NoNodeWithProperties),
                    )
                } else {
                    None
                },
                cpu: pricing.cpu(job),
                standard_job: pricing.standard_job(job),
                pe_global: pricing.pe_global(job),
                pe_local_min: lo,
                pe_local_max: hi,
                pe_min: lo,
            }
        })
        .collect()
}

/// The §4 shares of `jobs` (from [`job_penalties`]).
pub fn summarize_penalties(jobs: &[JobPenalties]) -> PenaltySummary {
    let priced: Vec<&JobPenalties> = jobs.iter().filter(|j| j.pe_min.is_some()).collect();
    let affected: Vec<&JobPenalties> = priced.iter().copied().filter(|j| j.affected()).collect();
    let cpu_time =
        |js: &[&JobPenalties]| -> f64 { js.iter().map(|j| j.cores * j.runtime as f64).sum() };
    let total_time = cpu_time(&priced);
    let users: BTreeSet<i32> = priced.iter().map(|j| j.user).collect();
    let affected_users: BTreeSet<i32> = affected.iter().map(|j| j.user).collect();
    let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
    let mut increases: Vec<f64> = affected.iter().filter_map(|j| j.increase()).collect();
    increases.sort_by(f64::total_cmp);
    let at_least = |x: f64| {
        ratio(
            increases
                .iter()
                .filter(|&&v| v >= x - AFFECTED_TOLERANCE)
                .count() as f64,
            increases.len() as f64,
        )
    };
    let rank = |p: f64| -> Option<f64> {
        if increases.is_empty() {
            return None;
        }
        let r = ((p / 100.0) * increases.len() as f64).ceil() as usize;
        Some(increases[r.clamp(1, increases.len()) - 1])
    };
    PenaltySummary {
        jobs: jobs.len() as u64,
        infeasible: (jobs.len() - priced.len()) as u64,
        affected_jobs: affected.len() as u64,
        affected_job_fraction: ratio(affected.len() as f64, priced.len() as f64),
        cpu_time: total_time,
        affected_cpu_time_fraction: ratio(cpu_time(&affected), total_time),
        users: users.len() as u64,
        affected_users: affected_users.len() as u64,
        affected_user_fraction: ratio(affected_users.len() as f64, users.len() as f64),
        increase_at_least_20pct: at_least(0.2),
        increase_at_least_100pct: at_least(1.0),
        increase_median: rank(50.0),
        increase_p90: rank(90.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fairshare::{PenaltyModel, PenaltySpec};
    use crate::sim::topology::{ConstraintTable, JobRequest, NodeDemand, RequestTable, Topology};
    use crate::sim::{Job, Machine};

    const GIB: u64 = 1 << 20;

    /// A job of one node × (`cores`, `memory_gib`), its request added to `requests`.
    fn job(
        requests: &mut RequestTable,
        (user, cores, memory_gib, runtime): (i32, u32, u64, Time),
    ) -> Job {
        Job {
            user,
            procs: cores,
            runtime,
            requested_time: runtime,
            request: requests.push(JobRequest::nodes(
                1,
                NodeDemand {
                    cores,
                    memory_kb: memory_gib * GIB,
                    gpus: 0,
                },
            )),
            ..Job::default()
        }
    }

    /// A workload of jobs `(user, cores, memory GB, runtime)`.
    fn workload(jobs: &[(i32, u32, u64, Time)]) -> Workload {
        let mut requests = RequestTable::default();
        let jobs = jobs.iter().map(|&j| job(&mut requests, j)).collect();
        Workload::with_requests(jobs, requests, ConstraintTable::default())
    }

    #[test]
    fn hand_worked_shares_on_the_example_system() {
        // On Examples 3–5's system (8-CPU/16 GB nodes and one 80-CPU/512 GB node):
        // - user 1: (1 CPU, 16 GB) for 100 s → pe_min 2.5, cpu 1: +150 %, affected;
        // - user 1: (8 CPU, 1 GB) for 100 s → pe_min 8 = cpu: not affected;
        // - user 2: (1 CPU, 512 GB) for 300 s → pe_min 80, cpu 1: +7900 %, affected;
        // - user 3: (4 CPU, 2 GB) for 50 s → pe_min max(4/8, 2/16)·8 = 4 = cpu;
        // - user 3: (1 CPU, 600 GB): fits nowhere.
        let w = workload(&[
            (1, 1, 16, 100),
            (1, 8, 1, 100),
            (2, 1, 512, 300),
            (3, 4, 2, 50),
            (3, 1, 600, 10),
        ]);
        let pricing = Pricing::new(
            &Machine::topology(Topology::example_3()),
            (&w.constraints, &w.requests),
            &PenaltySpec::of(PenaltyModel::PeMin),
        )
        .unwrap();
        let jobs = job_penalties(&w, &pricing);
        assert_eq!(jobs[0].pe_min, Some(2.5));
        assert_eq!(jobs[0].pe_local_max, Some(8.0));
        assert_eq!((jobs[0].classes, jobs[0].clusters), (2, 1));
        assert_eq!(jobs[2].classes, 1);
        assert_eq!(jobs[4].infeasible, Some(Infeasible::TooMuchMemoryPerNode));
        assert!(jobs[0].affected() && !jobs[1].affected() && jobs[2].affected());
        let s = summarize_penalties(&jobs);
        assert_eq!((s.jobs, s.infeasible, s.affected_jobs), (5, 1, 2));
        assert_eq!(s.affected_job_fraction, Some(0.5));
        // CPU time: 100 + 800 + 300 + 200 = 1400 core-seconds; affected 100 + 300.
        assert_eq!(s.cpu_time, 1400.0);
        assert_eq!(s.affected_cpu_time_fraction, Some(400.0 / 1400.0));
        // Users 1, 2, 3 priced; 1 and 2 affected.
        assert_eq!((s.users, s.affected_users), (3, 2));
        assert_eq!(s.increase_at_least_20pct, Some(1.0));
        assert_eq!(s.increase_at_least_100pct, Some(1.0));
        assert_eq!(s.increase_median, Some(1.5));
        assert_eq!(s.increase_p90, Some(79.0));
    }

    #[test]
    fn nothing_affected_on_a_pool() {
        let w = workload(&[(1, 4, 100, 10)]);
        let pricing = Pricing::new(
            &Machine::pool(8),
            (&w.constraints, &w.requests),
            &PenaltySpec::of(PenaltyModel::PeMin),
        )
        .unwrap();
        let s = summarize_penalties(&job_penalties(&w, &pricing));
        assert_eq!(s.affected_jobs, 0);
        assert_eq!(s.affected_job_fraction, Some(0.0));
        assert_eq!(s.increase_median, None);
        assert_eq!(s.increase_at_least_20pct, None);
    }
}
