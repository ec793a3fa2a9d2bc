//! Utilization and queue length over time, in fixed bins of `step` seconds, from the engine's
//! [`Step`]s (the state after each processed instant holds until the next one).
//!
//! Bin `k` covers `[origin + k·step, origin + (k+1)·step)` with `origin` the first instant
//! rounded down to a multiple of `step`; the last bin ends at or after the last instant. Values
//! are time-weighted means over the bin; the state before the first instant (an empty machine and
//! queue) counts as such.

use super::engine::Step;
use super::job::Time;
use super::metrics::{JobRecord, SizeClasses};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bin {
    /// Start of the bin, in trace seconds.
    pub start: Time,
    /// Mean fraction of capacity allocated to jobs over the bin (0–1).
    pub utilization: f64,
    /// Mean fraction of capacity blocked by started reservations over the bin (0–1).
    pub reserved: f64,
    /// Time-weighted mean number of waiting jobs over the bin.
    pub queue_mean: f64,
    /// Largest number of waiting jobs at any instant of the bin.
    pub queue_max: u32,
}

/// Bins `steps` (in time order) with width `step` seconds, for a machine of `capacity` units.
pub fn bin(steps: &[Step], capacity: u64, step: Time) -> Vec<Bin> {
    assert!(step > 0, "timeseries step must be positive");
    let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
        return Vec::new();
    };
    let origin = first.time.div_euclid(step) * step;
    let n = ((last.time - origin) / step + 1) as usize;
    let mut busy = vec![0.0f64; n];
    let mut reserved = vec![0.0f64; n];
    let mut queue = vec![0.0f64; n];
    let mut queue_max = vec![0u32; n];
    // Integrate each constant piece [t_i, t_{i+1}) into the bins it overlaps.
    for (i, s) in steps.iter().enumerate() {
        let k = ((s.time - origin) / step) as usize;
        queue_max[k] = queue_max[k].max(s.queue_len);
        let Some(next) = steps.get(i + 1) else { break };
        let (mut t, end) = (s.time, next.time);
        while t < end {
            let k = ((t - origin) / step) as usize;
            let bin_end = origin + (k as Time + 1) * step;
            let piece = (end.min(bin_end) - t) as f64;
            busy[k] += piece * s.busy as f64;
            reserved[k] += piece * s.reserved as f64;
            queue[k] += piece * f64::from(s.queue_len);
            if t > s.time {
                queue_max[k] = queue_max[k].max(s.queue_len);
            }
            t = end.min(bin_end);
        }
    }
    (0..n)
        .map(|k| Bin {
            start: origin + k as Time * step,
            utilization: busy[k] / (step as f64 * capacity as f64),
            reserved: reserved[k] / (step as f64 * capacity as f64),
            queue_mean: queue[k] / step as f64,
            queue_max: queue_max[k],
        })
        .collect()
}

/// Time-weighted mean number of waiting jobs of each size class in each bin of `bins` (same
/// origin and width `step`): a job waits over `[submit, start)`. Returns one series per class.
pub fn queue_by_class(
    records: &[JobRecord],
    classes: &SizeClasses,
    bins: &[Bin],
    step: Time,
) -> Vec<Vec<f64>> {
    let n = bins.len();
    let mut out = vec![vec![0.0f64; n]; classes.0.len()];
    let Some(origin) = bins.first().map(|b| b.start) else {
        return out;
    };
    let end = origin + n as Time * step;
    for r in records {
        let series = &mut out[classes.of(r.units)];
        let (mut t, stop) = (r.submit.max(origin), r.start.min(end));
        while t < stop {
            let k = ((t - origin) / step) as usize;
            let bin_end = origin + (k as Time + 1) * step;
            series[k] += (stop.min(bin_end) - t) as f64;
            t = stop.min(bin_end);
        }
    }
    for series in &mut out {
        for v in series.iter_mut() {
            *v /= step as f64;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(time: Time, queue_len: u32, busy: u64) -> Step {
        Step {
            time,
            queue_len,
            busy,
            reserved: 0,
        }
    }

    #[test]
    fn pieces_are_split_across_bins() {
        // 10 units busy on [5, 25), 4 waiting on [5, 15); capacity 10, bins of 10 s from 0.
        let steps = [s(5, 4, 10), s(15, 0, 10), s(25, 0, 0)];
        let bins = bin(&steps, 10, 10);
        assert_eq!(bins.len(), 3);
        assert_eq!(
            bins[0],
            Bin {
                start: 0,
                utilization: 0.5,
                reserved: 0.0,
                queue_mean: 2.0,
                queue_max: 4
            }
        );
        assert_eq!(
            bins[1],
            Bin {
                start: 10,
                utilization: 1.0,
                reserved: 0.0,
                queue_mean: 2.0,
                queue_max: 4
            }
        );
        assert_eq!(
            bins[2],
            Bin {
                start: 20,
                utilization: 0.5,
                reserved: 0.0,
                queue_mean: 0.0,
                queue_max: 0
            }
        );
    }

    #[test]
    fn reserved_capacity_is_binned_apart_from_jobs() {
        // 4 of 10 units reserved on [10, 30), 6 busy on [0, 20).
        let mut steps = [s(0, 0, 6), s(10, 0, 6), s(20, 0, 0), s(30, 0, 0)];
        steps[1].reserved = 4;
        steps[2].reserved = 4;
        let bins = bin(&steps, 10, 20);
        assert_eq!((bins[0].utilization, bins[0].reserved), (0.6, 0.2));
        assert_eq!((bins[1].utilization, bins[1].reserved), (0.0, 0.2));
    }
}
