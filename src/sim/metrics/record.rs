//! Per-job records: what happened to each simulated job and its per-job metrics.

use crate::sim::engine::SimOutcome;
use crate::sim::job::{Time, Workload};
use crate::sim::resources::ResourceVec;
use crate::sim::schedule::ScheduledJob;
use crate::sim::topology::{JobRequest, Shape};

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
    /// The memory it asked for in all, KB, as read (even when the machine ignores memory).
    pub requested_memory_kb: u64,
    /// response / run.
    pub slowdown: f64,
    /// max(1, response / max(run, τ)).
    pub bounded_slowdown: f64,
    /// (requested_time + wait) / requested_time (Margo et al., section 4).
    pub expansion_factor: f64,
    pub backfilled: bool,
    pub killed: bool,
}

impl JobRecord {
    /// The record of a scheduled job, with bounded slowdown at threshold `tau`.
    pub fn of(s: &ScheduledJob, tau: Time) -> JobRecord {
        let wait = s.start - s.submit;
        let response = s.end - s.submit;
        let run = s.end - s.start;
        JobRecord {
            job_id: s.job_id,
            index: s.index,
            user: s.user,
            group: s.group,
            queue: s.queue,
            submit: s.submit,
            start: s.start,
            end: s.end,
            wait,
            response,
            run,
            requested_time: s.requested_time,
            procs: s.procs,
            units: s.units,
            cluster: s.cluster,
            nodes: s.nodes,
            held: s.held,
            requested_memory_kb: s.requested_memory_kb,
            slowdown: response as f64 / run as f64,
            bounded_slowdown: (response as f64 / run.max(tau) as f64).max(1.0),
            expansion_factor: (s.requested_time + wait) as f64 / s.requested_time as f64,
            backfilled: s.backfilled,
            killed: s.killed,
        }
    }
}

/// The memory a job asks for in all: per node × nodes for a node request, per processor ×
/// processors for a flexible one (of `procs` processors).
pub fn requested_memory_kb(request: &JobRequest, procs: u32) -> u64 {
    match request.shape {
        Shape::Nodes { count, per_node } => u64::from(count).saturating_mul(per_node.memory_kb),
        Shape::Flexible => u64::from(procs).saturating_mul(request.memory_kb),
    }
}

/// Records of every simulated job, in submission order, with bounded slowdown at threshold `tau`.
pub fn job_records(workload: &Workload, outcome: &SimOutcome, tau: Time) -> Vec<JobRecord> {
    outcome
        .jobs
        .iter()
        .map(|o| JobRecord::of(&ScheduledJob::of(workload, o), tau))
        .collect()
}
