//! What each cluster did for the jobs it ran: measured jobs, their waits and bounded slowdowns,
//! and the fraction backfilled, one entry per cluster (docs/metrics.md, "Per cluster"). With
//! utilization by resource (`usage.rs`) this is the per-cluster view of reports and
//! `clusters.parquet`.

use super::record::JobRecord;
use super::stats::Distribution;

/// The measured jobs of one cluster.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClusterJobs {
    pub jobs: u64,
    /// Waits, seconds.
    pub wait: Distribution,
    pub bounded_slowdown_mean: Option<f64>,
    /// Fraction of the cluster's jobs that were backfilled; `None` without jobs.
    pub backfilled_fraction: Option<f64>,
}

/// Per cluster `0..clusters`, over `measured` (the records after the warm-up). A record naming
/// a cluster outside the range is not counted.
pub fn per_cluster(measured: &[JobRecord], clusters: usize) -> Vec<ClusterJobs> {
    let mut sums = ClusterSums::new(clusters);
    measured.iter().for_each(|r| sums.measured(r));
    sums.finish(|| {
        let mut waits: Vec<f64> = measured.iter().map(|r| r.wait as f64).collect();
        Distribution::of(&mut waits)
    })
}

/// [`per_cluster`] fed one measured record at a time: running sums per cluster and, on a machine
/// of several clusters, the waits (8 bytes a measured job, for their exact median and 95th
/// percentile). On a machine of one cluster every measured job ran there, so its waits are the
/// whole run's, whose distribution the caller has already ([`ClusterSums::finish`]).
pub struct ClusterSums {
    waits: Vec<Vec<f64>>,
    bsld: Vec<f64>,
    backfilled: Vec<u64>,
    /// Measured jobs per cluster.
    counts: Vec<u64>,
}

impl ClusterSums {
    pub fn new(clusters: usize) -> ClusterSums {
        ClusterSums {
            waits: vec![Vec::new(); clusters],
            bsld: vec![0.0; clusters],
            backfilled: vec![0; clusters],
            counts: vec![0; clusters],
        }
    }

    /// The next measured record.
    pub fn measured(&mut self, r: &JobRecord) {
        let c = r.cluster as usize;
        if c >= self.bsld.len() {
            return;
        }
        if self.bsld.len() > 1 {
            self.waits[c].push(r.wait as f64);
        }
        self.counts[c] += 1;
        self.bsld[c] += r.bounded_slowdown;
        self.backfilled[c] += u64::from(r.backfilled);
    }

    /// The clusters' figures; `whole_run_waits` gives the distribution of every measured
    /// job's wait (called only on a machine of one cluster).
    pub fn finish(self, whole_run_waits: impl FnOnce() -> Distribution) -> Vec<ClusterJobs> {
        let single = self.bsld.len() == 1;
        let mut whole_run_waits = Some(whole_run_waits);
        self.waits
            .into_iter()
            .zip(self.bsld)
            .zip(self.backfilled)
            .zip(self.counts)
            .map(|(((mut w, bsld), backfilled), n)| {
                let wait = match whole_run_waits.take().filter(|_| single) {
                    Some(whole) if n > 0 => whole(),
                    _ => Distribution::of(&mut w),
                };
                let n = n as usize;
                ClusterJobs {
                    jobs: n as u64,
                    wait,
                    bounded_slowdown_mean: (n > 0).then(|| bsld / n as f64),
                    backfilled_fraction: (n > 0).then(|| backfilled as f64 / n as f64),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;

    fn record(cluster: u32, wait: i64, run: i64, backfilled: bool) -> JobRecord {
        JobRecord {
            job_id: 0,
            index: 0,
            user: -1,
            group: -1,
            queue: -1,
            submit: 0,
            start: wait,
            end: wait + run,
            wait,
            response: wait + run,
            run,
            requested_time: run,
            procs: 1,
            units: 1,
            cluster,
            nodes: 1,
            held: ResourceVec([1, 0, 0]),
            requested_memory_kb: 0,
            slowdown: (wait + run) as f64 / run as f64,
            bounded_slowdown: ((wait + run) as f64 / run.max(10) as f64).max(1.0),
            expansion_factor: 1.0,
            backfilled,
            killed: false,
        }
    }

    #[test]
    fn waits_and_slowdowns_by_hand() {
        // Cluster 0: waits 0 and 100 on 100 s runs → mean 50, bounded slowdowns 1 and 2.
        // Cluster 1: one backfilled job waiting 30 s on a 10 s run → bsld 4.
        // Cluster 2: nothing ran there.
        let records = [
            record(0, 0, 100, false),
            record(1, 30, 10, true),
            record(0, 100, 100, false),
            record(7, 5, 5, false), // outside the machine: ignored
        ];
        let per = per_cluster(&records, 3);
        assert_eq!(per[0].jobs, 2);
        assert_eq!(per[0].wait.mean, Some(50.0));
        assert_eq!(per[0].wait.median, Some(0.0)); // nearest rank: the lower middle
        assert_eq!(per[0].wait.p95, Some(100.0));
        assert_eq!(per[0].bounded_slowdown_mean, Some(1.5));
        assert_eq!(per[0].backfilled_fraction, Some(0.0));
        assert_eq!(per[1].jobs, 1);
        assert_eq!(per[1].bounded_slowdown_mean, Some(4.0));
        assert_eq!(per[1].backfilled_fraction, Some(1.0));
        assert_eq!(per[2], ClusterJobs::default());
        assert_eq!(per[2].wait.mean, None);
    }
}
