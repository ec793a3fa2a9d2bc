//! A simulated schedule in the form of Batsim's `jobs.csv` output (docs/sources.md, "Batsim's
//! jobs.csv"), which evalys (`JobSet.from_csv`) and Batsim users' scripts read: one row per
//! job, the times Batsim writes, and `allocated_resources` as an interval set (`0-3 5`).
//!
//! schedlab's results hold how many allocation units a job held, not which: [`allocate`]
//! gives each job concrete resource numbers by replaying the schedule in start order, every job
//! taking the lowest free numbers (ends before starts at the same instant). Any schedule that
//! keeps within the machine gets numbers within it, so the rows' resources never overlap in
//! time; the numbers are a valid placement, not the simulator's own (a pool has none).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;
use std::io::{self, Write};

/// One job of a schedule, as the export reads it from `jobs.parquet`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledJob {
    pub id: i64,
    pub submit: i64,
    pub start: i64,
    pub end: i64,
    pub requested_time: i64,
    /// Allocation units held: Batsim's resources.
    pub units: u64,
    /// Killed at its requested time.
    pub killed: bool,
}

/// The columns of Batsim's `jobs.csv`, in its order.
pub const COLUMNS: [&str; 17] = [
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
];

/// A schedule that cannot be placed on `capacity` resources.
#[derive(Debug, PartialEq, Eq)]
pub struct Overfull {
    pub job: i64,
    pub time: i64,
    pub capacity: u64,
}

impl std::fmt::Display for Overfull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "job {} starts at {} when fewer than its resources of {} are free",
            self.job, self.time, self.capacity
        )
    }
}

/// Resource numbers for each job of `jobs` (same order): intervals `(first, last)`, the lowest
/// free numbers at its start. `capacity`: the machine's resources (`None`: unbounded).
pub fn allocate(
    jobs: &[ScheduledJob],
    capacity: Option<u64>,
) -> Result<Vec<Vec<(u64, u64)>>, Overfull> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| (jobs[i].start, i));
    // Free resources as disjoint intervals, first → last.
    let mut free: BTreeMap<u64, u64> = BTreeMap::new();
    free.insert(0, capacity.map_or(u64::MAX - 1, |c| c.saturating_sub(1)));
    if capacity == Some(0) {
        free.clear();
    }
    let mut running: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let mut out = vec![Vec::new(); jobs.len()];
    for i in order {
        let job = &jobs[i];
        while let Some(&Reverse((end, j))) = running.peek() {
            if end > job.start {
                break;
            }
            running.pop();
            for &(lo, hi) in &out[j] {
                release(&mut free, lo, hi);
            }
        }
        let mut need = job.units;
        let mut taken = Vec::new();
        while need > 0 {
            let Some((&lo, &hi)) = free.iter().next() else {
                return Err(Overfull {
                    job: job.id,
                    time: job.start,
                    capacity: capacity.unwrap_or(u64::MAX),
                });
            };
            free.remove(&lo);
            let size = hi - lo + 1;
            if size > need {
                taken.push((lo, lo + need - 1));
                free.insert(lo + need, hi);
                need = 0;
            } else {
                taken.push((lo, hi));
                need -= size;
            }
        }
        out[i] = taken;
        running.push(Reverse((job.end, i)));
    }
    Ok(out)
}

/// Puts `lo..=hi` back among the free intervals, merged with its neighbours.
fn release(free: &mut BTreeMap<u64, u64>, mut lo: u64, mut hi: u64) {
    if let Some((&plo, &phi)) = free.range(..lo).next_back()
        && phi + 1 == lo
    {
        free.remove(&plo);
        lo = plo;
    }
    if let Some(&nhi) = free.get(&(hi + 1)) {
        free.remove(&(hi + 1));
        hi = nhi;
    }
    free.insert(lo, hi);
}

/// An interval set as Batsim writes it: `0-3 5 7-8`.
pub fn interval_set(intervals: &[(u64, u64)]) -> String {
    let mut s = String::new();
    for (k, &(lo, hi)) in intervals.iter().enumerate() {
        if k > 0 {
            s.push(' ');
        }
        if lo == hi {
            let _ = write!(s, "{lo}");
        } else {
            let _ = write!(s, "{lo}-{hi}");
        }
    }
    s
}

/// Writes the header line.
pub fn write_header(out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", COLUMNS.join(","))
}

/// Writes one job's row; `resources` from [`allocate`].
pub fn write_row(
    out: &mut impl Write,
    workload_name: &str,
    job: &ScheduledJob,
    resources: &[(u64, u64)],
) -> io::Result<()> {
    let execution = job.end - job.start;
    let waiting = job.start - job.submit;
    let turnaround = job.end - job.submit;
    // Batsim's stretch: turnaround / execution (a zero-length run has none).
    let stretch = if execution > 0 {
        format!("{}", turnaround as f64 / execution as f64)
    } else {
        String::new()
    };
    let (success, state) = if job.killed {
        (0, "COMPLETED_WALLTIME_REACHED")
    } else {
        (1, "COMPLETED_SUCCESSFULLY")
    };
    writeln!(
        out,
        "{},{},,{},{},{},{success},{state},{},{execution},{},{waiting},{turnaround},{stretch},{},-1,",
        job.id,
        csv_field(workload_name),
        job.submit,
        job.units,
        job.requested_time,
        job.start,
        job.end,
        interval_set(resources),
    )
}

/// A CSV field, quoted when it holds a comma, quote or line end.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: i64, start: i64, end: i64, units: u64) -> ScheduledJob {
        ScheduledJob {
            id,
            submit: 0,
            start,
            end,
            requested_time: end - start,
            units,
            killed: false,
        }
    }

    #[test]
    fn lowest_free_resources_ends_before_starts() {
        let jobs = [
            job(1, 0, 10, 2),
            job(2, 0, 5, 3),
            job(3, 5, 20, 1),
            job(4, 10, 12, 4),
            job(5, 12, 13, 5),
        ];
        let got = allocate(&jobs, Some(6)).unwrap();
        let shown: Vec<String> = got.iter().map(|r| interval_set(r)).collect();
        // Job 3 takes the first of job 2's freed resources; job 4 the rest and job 1's.
        assert_eq!(shown, ["0-1", "2-4", "2", "0-1 3-4", "0-1 3-5"]);
        assert_eq!(
            allocate(&jobs, Some(5)),
            Err(Overfull {
                job: 5,
                time: 12,
                capacity: 5
            })
        );
    }

    #[test]
    fn rows_have_every_column() {
        let mut out = Vec::new();
        write_header(&mut out).unwrap();
        let mut j = job(7, 4, 10, 2);
        j.submit = 1;
        write_row(&mut out, "w,0", &j, &[(0, 1)]).unwrap();
        j.killed = true;
        write_row(&mut out, "w0", &j, &[(3, 3), (5, 5)]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].split(',').count(), COLUMNS.len());
        assert_eq!(
            lines[1],
            "7,\"w,0\",,1,2,6,1,COMPLETED_SUCCESSFULLY,4,6,10,3,9,1.5,0-1,-1,"
        );
        assert_eq!(
            lines[2],
            "7,w0,,1,2,6,0,COMPLETED_WALLTIME_REACHED,4,6,10,3,9,1.5,3 5,-1,"
        );
    }
}
