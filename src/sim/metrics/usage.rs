//! Utilization per resource kind (cores, memory, GPUs) and per cluster, from what each job held
//! and for how long (docs/metrics.md, "Utilization by resource").
//!
//! The utilization of resource *r* over a window is Σ held_r × overlap(job, window) divided by
//! capacity_r × window length, per cluster and for the whole machine. A resource a machine does
//! not have (memory on a processor pool, GPUs on most systems) has no utilization (`None`).
//! On exclusive nodes a job holds its nodes' whole vector, so memory counts as used there.

use super::record::JobRecord;
use crate::sim::job::Time;
use crate::sim::machine::Machine;
use crate::sim::resources::{KINDS, ResourceVec};

/// The capacity (cores, memory KB, GPUs) of each cluster of `machine`, in topology order; a
/// uniform machine is one cluster of its processors.
pub fn cluster_capacities(machine: &Machine) -> Vec<ResourceVec> {
    match machine {
        Machine::Uniform(u) => vec![ResourceVec([u.procs(), 0, 0])],
        Machine::Topology(t) => t
            .topology
            .clusters
            .iter()
            .map(|cluster| {
                cluster.classes.iter().fold(ResourceVec::ZERO, |sum, c| {
                    let n = u64::from(c.count);
                    sum + ResourceVec([
                        n * u64::from(c.cores),
                        n * c.memory_kb,
                        n * u64::from(c.gpus),
                    ])
                })
            })
            .collect(),
    }
}

/// Fractions of capacity used, by resource kind: cores, memory, GPUs.
pub type Fractions = [Option<f64>; KINDS];

/// Utilization per resource over `[start, end)`: per cluster (same order as `capacities`) and
/// for the whole machine.
pub fn utilization(
    records: &[JobRecord],
    capacities: &[ResourceVec],
    window: (Time, Time),
) -> (Vec<Fractions>, Fractions) {
    let mut held = HeldInWindow::new(capacities.len(), window);
    records.iter().for_each(|r| held.job(r));
    held.finish(capacities)
}

/// [`utilization`] fed one record at a time: amount-seconds per cluster and resource.
pub struct HeldInWindow {
    window: (Time, Time),
    held: Vec<[f64; KINDS]>,
}

impl HeldInWindow {
    pub fn new(clusters: usize, window: (Time, Time)) -> HeldInWindow {
        HeldInWindow {
            window,
            held: vec![[0f64; KINDS]; clusters],
        }
    }

    pub fn job(&mut self, r: &JobRecord) {
        let (start, end) = self.window;
        let overlap = (r.end.min(end) - r.start.max(start)).max(0) as f64;
        if let Some(h) = self.held.get_mut(r.cluster as usize) {
            for (sum, amount) in h.iter_mut().zip(r.held.0) {
                *sum += amount as f64 * overlap;
            }
        }
    }

    pub fn finish(self, capacities: &[ResourceVec]) -> (Vec<Fractions>, Fractions) {
        let (start, end) = self.window;
        let held = self.held;
        let length = (end - start).max(0) as f64;
        let fractions = |used: &[f64; KINDS], cap: &ResourceVec| -> Fractions {
            std::array::from_fn(|k| {
                (cap.0[k] > 0 && length > 0.0).then(|| used[k] / (cap.0[k] as f64 * length))
            })
        };
        let per_cluster = held
            .iter()
            .zip(capacities)
            .map(|(h, c)| fractions(h, c))
            .collect();
        let total_held: [f64; KINDS] = std::array::from_fn(|k| held.iter().map(|h| h[k]).sum());
        let total_cap = capacities.iter().fold(ResourceVec::ZERO, |a, c| a + *c);
        (per_cluster, fractions(&total_held, &total_cap))
    }
}

/// Time-weighted utilization per resource in `bins` bins of `step` seconds from `origin`: one
/// series per cluster (order of `capacities`) and one for the whole machine.
pub fn utilization_bins(
    records: &[JobRecord],
    capacities: &[ResourceVec],
    origin: Time,
    step: Time,
    bins: usize,
) -> (Vec<Vec<Fractions>>, Vec<Fractions>) {
    let mut held = HeldPerBin::new(capacities.len(), origin, step, bins);
    records.iter().for_each(|r| held.job(r));
    let binned = held.finish(capacities);
    let per_cluster = (0..capacities.len())
        .map(|c| (0..bins).map(|b| binned.cluster(c, b)).collect())
        .collect();
    (per_cluster, binned.total)
}

/// [`utilization_bins`] fed one record at a time: amount-seconds per cluster, bin and resource
/// (bounded by the number of bins, `limits.max_timeseries_bins`). A cluster's series is
/// allocated when its first job arrives: a machine of 20,000 clusters that runs 400 jobs holds
/// at most 400 series, not 20,000 (issue 37).
pub struct HeldPerBin {
    origin: Time,
    step: Time,
    bins: usize,
    held: Vec<Option<Box<[[f64; KINDS]]>>>,
}

impl HeldPerBin {
    pub fn new(clusters: usize, origin: Time, step: Time, bins: usize) -> HeldPerBin {
        assert!(step > 0, "timeseries step must be positive");
        HeldPerBin {
            origin,
            step,
            bins,
            held: vec![None; clusters],
        }
    }

    /// Adds the job's amounts to each bin it overlaps, weighted by the overlap.
    pub fn job(&mut self, r: &JobRecord) {
        let (origin, step, bins) = (self.origin, self.step, self.bins);
        let Some(slot) = self.held.get_mut(r.cluster as usize) else {
            return;
        };
        let horizon = origin + step * bins as Time;
        let (from, to) = (r.start.max(origin), r.end.min(horizon));
        if from >= to {
            return;
        }
        let series = slot.get_or_insert_with(|| vec![[0f64; KINDS]; bins].into_boxed_slice());
        let mut t = from;
        while t < to {
            let k = ((t - origin) / step) as usize;
            let bin_end = origin + (k as Time + 1) * step;
            let piece = (to.min(bin_end) - t) as f64;
            for (sum, amount) in series[k].iter_mut().zip(r.held.0) {
                *sum += amount as f64 * piece;
            }
            t = to.min(bin_end);
        }
    }

    pub fn finish(self, capacities: &[ResourceVec]) -> BinnedUtilization {
        let step = self.step as f64;
        let total_cap = capacities.iter().fold(ResourceVec::ZERO, |a, c| a + *c);
        let mut sums = vec![[0f64; KINDS]; self.bins];
        for series in self.held.iter().flatten() {
            for (sum, h) in sums.iter_mut().zip(series.iter()) {
                for k in 0..KINDS {
                    sum[k] += h[k];
                }
            }
        }
        let total = sums.iter().map(|h| fraction(h, &total_cap, step)).collect();
        BinnedUtilization {
            step,
            held: self.held,
            capacities: capacities.to_vec(),
            total,
        }
    }
}

/// The utilization per bin of [`HeldPerBin::finish`]: the machine's series, and each cluster's
/// computed on demand ([`Self::cluster`]) so that per-cluster tables are written as they are
/// read, never held whole.
pub struct BinnedUtilization {
    step: f64,
    held: Vec<Option<Box<[[f64; KINDS]]>>>,
    capacities: Vec<ResourceVec>,
    /// The whole machine's utilization, per bin.
    pub total: Vec<Fractions>,
}

impl BinnedUtilization {
    /// Cluster `c`'s utilization in bin `bin` (zero where it has the resource and held none).
    pub fn cluster(&self, c: usize, bin: usize) -> Fractions {
        let held = self.held[c].as_ref().map_or([0f64; KINDS], |s| s[bin]);
        fraction(&held, &self.capacities[c], self.step)
    }
}

/// Amount-seconds `held` in a bin of `step` seconds as fractions of `cap`.
fn fraction(held: &[f64; KINDS], cap: &ResourceVec, step: f64) -> Fractions {
    std::array::from_fn(|k| (cap.0[k] > 0).then(|| held[k] / (cap.0[k] as f64 * step)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::topology::Topology;

    const GIB: u64 = 1 << 20;

    fn record(cluster: u32, start: Time, end: Time, held: [u64; 3]) -> JobRecord {
        JobRecord {
            job_id: 0,
            index: 0,
            user: -1,
            group: -1,
            queue: -1,
            submit: start,
            start,
            end,
            wait: 0,
            response: end - start,
            run: end - start,
            requested_time: end - start,
            procs: held[0] as u32,
            units: held[0],
            cluster,
            nodes: 1,
            held: ResourceVec(held),
            requested_memory_kb: 0,
            slowdown: 1.0,
            bounded_slowdown: 1.0,
            expansion_factor: 1.0,
            backfilled: false,
            killed: false,
        }
    }

    #[test]
    fn example_3_with_its_ram_constrained_job() {
        // Klusáček & Rudová's Example 3 system: 160 cores, 672 GB. The 1-CPU / 512 GB job
        // holds the big node's memory for 100 s of a 200 s window: cores 1×100 / (160×200),
        // memory 512×100 / (672×200).
        let m = Machine::topology(Topology::example_3());
        let caps = cluster_capacities(&m);
        assert_eq!(caps, [ResourceVec([160, 672 * GIB, 0])]);
        let records = [record(0, 0, 100, [1, 512 * GIB, 0])];
        let (per, total) = utilization(&records, &caps, (0, 200));
        assert_eq!(per[0], total);
        assert_eq!(total[0], Some(100.0 / 32_000.0));
        assert_eq!(total[1], Some(512.0 * 100.0 / (672.0 * 200.0)));
        assert_eq!(total[2], None, "no GPUs");
    }

    #[test]
    fn per_cluster_and_binned() {
        // Two clusters of 10 cores (no memory); a 10-core job on cluster 1 over [50, 150).
        let caps = [ResourceVec([10, 0, 0]), ResourceVec([10, 0, 0])];
        let records = [record(1, 50, 150, [10, 0, 0])];
        let (per, total) = utilization(&records, &caps, (0, 200));
        assert_eq!(per[0][0], Some(0.0));
        assert_eq!(per[1][0], Some(0.5));
        assert_eq!(total[0], Some(0.25));
        assert_eq!(per[1][1], None);
        // Bins of 100 s from 0: the job fills half of each bin of cluster 1.
        let (per, total) = utilization_bins(&records, &caps, 0, 100, 2);
        assert_eq!(per[1][0][0], Some(0.5));
        assert_eq!(per[1][1][0], Some(0.5));
        assert_eq!(per[0][1][0], Some(0.0));
        assert_eq!(total[0][0], Some(0.25));
    }

    #[test]
    fn a_pool_is_one_cluster_of_processors() {
        assert_eq!(
            cluster_capacities(&Machine::pool(128)),
            [ResourceVec([128, 0, 0])]
        );
        assert_eq!(
            cluster_capacities(&Machine::exclusive_nodes(16, 8)),
            [ResourceVec([128, 0, 0])]
        );
    }
}
