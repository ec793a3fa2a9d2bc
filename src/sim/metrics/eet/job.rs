//! A job as the EET metric sees it (what the integrator passes in) and its per-job result.

use super::resource::PerResource;
use crate::sim::job::{Time, Workload};
use crate::sim::metrics::JobRecord;

/// One job of the schedule being judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EetJob {
    /// The job number (carried through to outputs only).
    pub id: u64,
    /// The user whose share the job fills; -1 (unknown) is one user like any other.
    pub user: i32,
    /// The user's group (SWF field 13; -1 unknown), for per-group capacities and shares.
    pub group: i32,
    /// Arrival in the share: the submit time.
    pub submit: Time,
    /// The runtime the job actually had (end − start of the schedule judged, so a killed job
    /// counts with the time it ran): Algorithm 1's `runtime_j`.
    pub runtime: Time,
    /// Its start in the schedule judged; `None` when unknown (the job still takes its place
    /// in its user's share but is not judged).
    pub start: Option<Time>,
    /// What it asked for, per job: CPUs, memory in KB, GPUs (Algorithm 1's `rescReq_j`).
    pub request: PerResource<u64>,
}

impl EetJob {
    /// The metric's view of a simulated job: its record (start, run, user, group, processors)
    /// and the workload it came from, whose memory is KB per processor
    /// ([`Workload::memory_kb`]). A killed job counts with the time it ran.
    pub fn from_record(record: &JobRecord, workload: &Workload) -> EetJob {
        let cpus = u64::from(record.procs);
        let memory_kb = workload.memory_kb(&workload.jobs[record.index as usize]);
        EetJob {
            id: record.job_id,
            user: record.user,
            group: record.group,
            submit: record.submit,
            runtime: record.run,
            start: Some(record.start),
            request: PerResource::new(cpus, memory_kb.saturating_mul(cpus), 0),
        }
    }

    /// C_j = start + runtime, when the start is known.
    pub fn completion(&self) -> Option<Time> {
        self.start.map(|s| s.saturating_add(self.runtime))
    }
}

/// The metric for one job (Formula 2 and the EET of Algorithm 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobEet {
    /// EET_j: the latest over the modelled resources of the end in the user's share.
    pub eet: Time,
    /// The EET on each resource; `None` for a resource not modelled.
    pub by_resource: PerResource<Option<Time>>,
    /// EET_j − runtime_j: the latest start that meets the EET (where the heatmap plots a
    /// violation from, section 3.3).
    pub latest_start: Time,
    /// C_j; `None` when the start is unknown.
    pub completion: Option<Time>,
    /// C_j > EET_j; `None` when the completion is unknown.
    pub violated: Option<bool>,
    /// T_j = max(0, C_j − EET_j) (Formula 2); `None` when the completion is unknown.
    pub tardiness: Option<Time>,
}
