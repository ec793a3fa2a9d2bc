//! Per-queue aggregates of a run with queues and limits (docs/outputs.md, `queues.parquet`):
//! how many jobs each queue took, rejected, held and killed; their mean wait, mean held time and
//! mean bounded slowdown; and the queue's share of the delivered processor-time.

use super::JobRecord;
use crate::sim::job::Time;
use crate::sim::limits::LimitsOutcome;

/// One queue's aggregates. Means are over the measured jobs (after the warm-up); counts and the
/// processor-time over every simulated job.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSummary {
    pub queue: String,
    /// Simulated jobs.
    pub jobs: u64,
    /// Jobs refused at submission.
    pub rejected: u64,
    /// Jobs held back by a limit for at least one second.
    pub held_jobs: u64,
    /// Jobs stopped by the queue's walltime or CPU-time limit.
    pub killed_by_limit: u64,
    pub wait_mean: Option<f64>,
    pub held_seconds_mean: Option<f64>,
    pub bounded_slowdown_mean: Option<f64>,
    /// Processor-seconds its jobs ran (requested processors × run).
    pub proc_seconds: f64,
    /// `proc_seconds` / the processor-seconds of every queue.
    pub utilization_share: Option<f64>,
}

/// Aggregates per queue, in queue order; without limits, one row `all` for every job.
/// `first` is the index of the first measured record ([`super::measurement`]).
pub fn summarize_queues(
    records: &[JobRecord],
    first: usize,
    limits: Option<&LimitsOutcome>,
) -> Vec<QueueSummary> {
    let mut sums = QueueSums::new(limits);
    for (i, r) in records.iter().enumerate() {
        sums.job(r, i >= first);
    }
    sums.finish()
}

/// [`summarize_queues`] fed one record at a time, in submission order: a few numbers per
/// queue.
pub struct QueueSums<'a> {
    limits: Option<&'a LimitsOutcome>,
    rows: Vec<QueueSummary>,
    /// Per queue, over measured jobs: count, Σ wait, Σ held seconds, Σ bounded slowdown.
    sums: Vec<(u64, i128, i128, f64)>,
}

impl<'a> QueueSums<'a> {
    pub fn new(limits: Option<&'a LimitsOutcome>) -> QueueSums<'a> {
        let names: Vec<String> = match limits {
            Some(l) => l.queue_names.clone(),
            None => vec!["all".to_string()],
        };
        let rows: Vec<QueueSummary> = names
            .into_iter()
            .map(|queue| QueueSummary {
                queue,
                jobs: 0,
                rejected: 0,
                held_jobs: 0,
                killed_by_limit: 0,
                wait_mean: None,
                held_seconds_mean: None,
                bounded_slowdown_mean: None,
                proc_seconds: 0.0,
                utilization_share: None,
            })
            .collect();
        let sums = vec![(0u64, 0i128, 0i128, 0.0f64); rows.len()];
        QueueSums { limits, rows, sums }
    }

    /// The next record; `measured` when it is after the warm-up.
    pub fn job(&mut self, r: &JobRecord, measured: bool) {
        let limits = self.limits;
        let q = match limits {
            Some(l) => l.queue[r.index as usize] as usize,
            None => 0,
        };
        let row = &mut self.rows[q];
        row.jobs += 1;
        let h: Time = limits.map_or(0, |l| l.held_seconds(r.index));
        if h > 0 {
            row.held_jobs += 1;
        }
        if limits.is_some_and(|l| l.killed_by[r.index as usize].is_some()) {
            row.killed_by_limit += 1;
        }
        row.proc_seconds += f64::from(r.procs) * r.run as f64;
        if measured {
            let s = &mut self.sums[q];
            s.0 += 1;
            s.1 += i128::from(r.wait);
            s.2 += i128::from(h);
            s.3 += r.bounded_slowdown;
        }
    }

    pub fn finish(self) -> Vec<QueueSummary> {
        let QueueSums {
            limits,
            mut rows,
            sums,
        } = self;
        if let Some(l) = limits {
            for &(job, _) in &l.rejected {
                if let Some(&q) = l.queue.get(job as usize)
                    && let Some(row) = rows.get_mut(q as usize)
                {
                    row.rejected += 1;
                }
            }
        }
        let total: f64 = rows.iter().map(|r| r.proc_seconds).sum();
        for (row, (n, wait, held, bsld)) in rows.iter_mut().zip(sums) {
            if n > 0 {
                let n_f = n as f64;
                row.wait_mean = Some(wait as f64 / n_f);
                row.held_seconds_mean = Some(held as f64 / n_f);
                row.bounded_slowdown_mean = Some(bsld / n_f);
            }
            if total > 0.0 {
                row.utilization_share = Some(row.proc_seconds / total);
            }
        }
        rows
    }
}
