//! The scheduled jobs of a simulate entry for the metrics node, which goes over them three
//! times: decoded once and held when the schedule is small (most cells), streamed from
//! `schedule.parquet` on each pass when it is large. Only how the rows are delivered: the rows
//! and their batches are those of `store::schedule::read_jobs` either way, so this file is in
//! neither the model nor the metrics version (build.rs).

use std::path::{Path, PathBuf};

use crate::sim::schedule::ScheduledJob;
use crate::store::schedule::read_jobs;

/// The scheduled jobs of `dir/schedule.parquet` for a reader that goes over them more than once
/// (the metrics node: its measurement window and fairshare replay, then every job's record).
/// A schedule of at most [`HELD_ROWS`] jobs is decoded once and held, in the batches the file
/// gave (so each pass sees exactly the batches a read of the file would); a longer one is read
/// from the file again on each pass, so memory stays bounded whatever the schedule.
pub enum ScheduleJobs {
    Held(Vec<Vec<ScheduledJob>>),
    Streamed(PathBuf),
}

/// The most jobs [`ScheduleJobs`] holds in memory (about 4 MB of rows).
pub const HELD_ROWS: usize = 32_768;

impl ScheduleJobs {
    /// Reads `dir/schedule.parquet` once if it holds at most [`HELD_ROWS`] jobs; otherwise
    /// stops at the first batch beyond them and leaves the jobs to be streamed.
    pub fn open(dir: &Path) -> Result<ScheduleJobs, String> {
        let mut held: Vec<Vec<ScheduledJob>> = Vec::new();
        let (mut rows, mut over) = (0usize, false);
        let read = read_jobs(dir, |batch| {
            rows += batch.len();
            if rows > HELD_ROWS {
                over = true;
                // Not an error: the signal to stop decoding (checked below).
                return Err(String::new());
            }
            held.push(batch.to_vec());
            Ok(())
        });
        match read {
            Err(_) if over => Ok(ScheduleJobs::Streamed(dir.to_path_buf())),
            Err(e) => Err(e),
            Ok(()) => Ok(ScheduleJobs::Held(held)),
        }
    }

    /// Calls `f` with each batch of scheduled jobs, in submission order (as `read_jobs`).
    pub fn for_each(
        &self,
        mut f: impl FnMut(&[ScheduledJob]) -> Result<(), String>,
    ) -> Result<(), String> {
        match self {
            ScheduleJobs::Held(batches) => batches.iter().try_for_each(|b| f(b)),
            ScheduleJobs::Streamed(dir) => read_jobs(dir, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::reservation::Reservations;
    use crate::sim::{Job, Machine, Overrun, SchedulerKind, SimConfig, Workload, simulate_into};
    use crate::store::schedule::ScheduleWriter;

    /// A schedule of `n` one-processor jobs, one a second, on 4 processors.
    fn schedule(dir: &Path, n: u64) {
        let jobs = (0..n)
            .map(|id| Job {
                id: id + 1,
                submit: id as i64,
                runtime: 3,
                requested_time: 3,
                procs: 1,
                cpu_time: -1,
                user: (id % 5) as i32,
                group: -1,
                queue: -1,
                partition: -1,
                request: Default::default(),
            })
            .collect();
        let workload = Workload::new(jobs);
        let config = SimConfig {
            order: Default::default(),
            machine: Machine::pool(4),
            scheduler: SchedulerKind::Easy,
            interval: None,
            overrun: Overrun::Kill,
            placement: Default::default(),
        };
        let mut writer = ScheduleWriter::create(
            &dir.join("schedule.parquet"),
            &dir.join("instants.parquet"),
            &workload,
        )
        .unwrap();
        simulate_into(&workload, &config, &Reservations::default(), &mut writer).unwrap();
        writer.finish("{}").unwrap();
    }

    /// The batches each pass sees, as read_jobs gives them.
    fn batches(jobs: &ScheduleJobs) -> Vec<Vec<ScheduledJob>> {
        let mut out = Vec::new();
        jobs.for_each(|b| {
            out.push(b.to_vec());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn small_schedules_are_held_large_ones_streamed_and_every_pass_sees_the_files_batches() {
        for (n, held) in [
            (0, true),
            (100, true),
            (HELD_ROWS as u64, true),
            (40_000, false),
        ] {
            let dir = tempfile::tempdir().unwrap();
            schedule(dir.path(), n);
            let mut from_file = Vec::new();
            read_jobs(dir.path(), |b| {
                from_file.push(b.to_vec());
                Ok(())
            })
            .unwrap();
            assert_eq!(from_file.iter().map(Vec::len).sum::<usize>(), n as usize);
            let jobs = ScheduleJobs::open(dir.path()).unwrap();
            assert_eq!(matches!(jobs, ScheduleJobs::Held(_)), held, "{n} jobs");
            // Two passes, each the file's batches exactly (40,000 jobs: 8,192 at a time).
            assert_eq!(batches(&jobs), from_file, "{n} jobs");
            assert_eq!(batches(&jobs), from_file, "{n} jobs, again");
        }
    }

    #[test]
    fn a_missing_schedule_is_an_error_not_a_stream() {
        let dir = tempfile::tempdir().unwrap();
        assert!(ScheduleJobs::open(dir.path()).is_err());
    }
}
