//! Per-job records: what happened to each simulated job and its per-job metrics.

use crate::sim::engine::SimOutcome;
use crate::sim::job::{Time, Workload};
use crate::sim::resources::ResourceVec;

/// One simulated job. Times in seconds; ratios dimensionless.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    /// SWF job number.
    pub job_id: u64,
    /// Index of the job in the workload (submission order).
    pub index: u32,
    pub user: i32,
    pub group: i32,
    pub queue: i32,
    pub submit: Time,
    pub start: Time,
    pub end: Time,
    /// start − submit.
    pub wait: Time,
    /// end − submit.
    pub response: Time,
    /// end − start: the simulated run (the actual runtime, or the request if killed).
    pub run: Time,
    pub requested_time: Time,
    /// Requested processors.
    pub procs: u32,
    /// Allocation units held (processors on a pool, nodes with exclusive allocation).
    pub units: u64,
    /// Index of the cluster it ran in (0 on a uniform machine).
    pub cluster: u32,
    /// Nodes it held.
    pub nodes: u32,
    /// What it held in all: cores, memory KB, GPUs (whole nodes' worth on exclusive nodes).
    pub held: ResourceVec,
    /// response / run.
    pub slowdown: f64,
    /// max(1, response / max(run, τ)).
    pub bounded_slowdown: f64,
    /// (requested_time + wait) / requested_time (Margo et al., section 4).
    pub expansion_factor: f64,
    pub backfilled: bool,
    pub killed: bool,
}

/// Records of every simulated job, in submission order, with bounded slowdown at threshold `tau`.
pub fn job_records(workload: &Workload, outcome: &SimOutcome, tau: Time) -> Vec<JobRecord> {
    outcome
        .jobs
        .iter()
        .map(|o| {
            let job = &workload.jobs[o.job as usize];
            let wait = o.start - job.submit;
            let response = o.end - job.submit;
            let run = o.end - o.start;
            JobRecord {
                job_id: job.id,
                index: o.job,
                user: job.user,
                group: job.group,
                queue: job.queue,
                submit: job.submit,
                start: o.start,
                end: o.end,
                wait,
                response,
                run,
                requested_time: job.requested_time,
                procs: job.procs,
                units: o.units,
                cluster: o.cluster,
                nodes: o.nodes,
                held: o.held,
                slowdown: response as f64 / run as f64,
                bounded_slowdown: (response as f64 / run.max(tau) as f64).max(1.0),
                expansion_factor: (job.requested_time + wait) as f64 / job.requested_time as f64,
                backfilled: o.backfilled,
                killed: o.killed,
            }
        })
        .collect()
}
