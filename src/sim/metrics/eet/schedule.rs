//! EET on a simulated schedule: the metric over a run's job records, as the per-job, per-user
//! and per-run figures of jobs.parquet, users.parquet and the summary, and the heatmap data.
//! Pure: records and settings in, numbers out; the writers only copy the result (one call in
//! the node that computes a cell's metrics).

use super::evaluate::{EetReport, evaluate};
use super::expected::ExpectedCapacity;
use super::heatmap::{Heatmap, heatmap};
use super::job::EetJob;
use super::resource::PerResource;
use crate::sim::metrics::JobRecord;

/// Everything the EET metric says about one schedule.
#[derive(Clone, Debug)]
pub struct ScheduleEet {
    /// In the order of the records.
    pub jobs: Vec<EetJob>,
    pub report: EetReport,
    /// Users × time violations with the usage underneath, bins chosen for the span.
    pub heatmap: Heatmap,
    /// The rule in words (for the summary).
    pub capacity: String,
}

impl EetJob {
    /// A simulated job as the metric sees it: submitted, started and run as the record says,
    /// asking for its processors and all the memory it requested (node requests count whole:
    /// per node × nodes).
    pub fn of_record(record: &JobRecord) -> EetJob {
        EetJob {
            id: record.job_id,
            user: record.user,
            group: record.group,
            submit: record.submit,
            runtime: record.run,
            start: Some(record.start),
            request: PerResource::new(u64::from(record.procs), record.requested_memory_kb, 0),
        }
    }
}

/// The EET metric of the schedule in `records` on a machine of `cores` and `memory_kb` (0:
/// none), with the users' normalised fairshare `shares` (for `split: shares`). Every record is
/// judged (warm-up included: a user's early jobs fill its share, so they cannot be left out
/// of it, and the paper judges whole schedules).
pub fn schedule_eet(
    records: &[JobRecord],
    expected: &ExpectedCapacity,
    cores: u64,
    memory_kb: u64,
    shares: &[(i32, f64)],
) -> Result<ScheduleEet, String> {
    let jobs: Vec<EetJob> = records.iter().map(EetJob::of_record).collect();
    let rule = expected.rule(cores, memory_kb, shares);
    let report = evaluate(&jobs, &rule).map_err(|e| format!("expected end times: {e}"))?;
    let heatmap =
        heatmap(&jobs, &report, None).map_err(|e| format!("expected end times heatmap: {e}"))?;
    Ok(ScheduleEet {
        jobs,
        report,
        heatmap,
        capacity: expected.describe(),
    })
}
