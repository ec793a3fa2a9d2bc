//! Utilization and queue length over time, in fixed bins of `step` seconds, from the engine's
//! instants (the state after each processed instant holds until the next one), streamed as
//! [`InstantRun`]s so that memory is the bins, whatever the number of instants.
//!
//! Bin `k` covers `[origin + k·step, origin + (k+1)·step)` with `origin` the first instant
//! rounded down to a multiple of `step`; the last bin ends at or after the last instant. Values
//! are time-weighted means over the bin; the state before the first instant (an empty machine and
//! queue) counts as such.

use super::engine::Step;
use super::job::Time;
use super::metrics::{JobRecord, SizeClasses};
use super::schedule::{Instant, InstantRun, RunLength};

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

/// Bins a schedule streamed as instant runs ([`Binner::instants`], in time order) and waiting
/// jobs ([`Binner::waiting`]), holding only the bins. The first and last instants must be known
/// up front (they fix the bins; [`bins_needed`] says how many).
pub struct Binner {
    origin: Time,
    step: Time,
    capacity: u64,
    busy: Vec<f64>,
    reserved: Vec<f64>,
    queue: Vec<f64>,
    queue_max: Vec<u32>,
    class_queue: Vec<Vec<f64>>,
    pending: Option<InstantRun>,
}

/// The number of bins of width `step` from the instant `first` to the instant `last`.
pub fn bins_needed(first: Time, last: Time, step: Time) -> u64 {
    let origin = first.div_euclid(step) * step;
    ((last - origin) / step) as u64 + 1
}

impl Binner {
    /// Bins of width `step` over the instants `first ..= last` (`None`: a schedule without
    /// instants, hence no bins), for a machine of `capacity` units and `classes` size classes.
    pub fn new(span: Option<(Time, Time)>, step: Time, capacity: u64, classes: usize) -> Self {
        assert!(step > 0, "timeseries step must be positive");
        let (origin, n) = match span {
            Some((first, last)) => (
                first.div_euclid(step) * step,
                bins_needed(first, last, step) as usize,
            ),
            None => (0, 0),
        };
        Binner {
            origin,
            step,
            capacity,
            busy: vec![0.0; n],
            reserved: vec![0.0; n],
            queue: vec![0.0; n],
            queue_max: vec![0; n],
            class_queue: vec![vec![0.0; n]; classes],
            pending: None,
        }
    }

    fn bin_of(&self, t: Time) -> usize {
        ((t - self.origin) / self.step) as usize
    }

    /// The next instant run, in time order.
    pub fn instants(&mut self, run: &InstantRun) {
        if let Some(previous) = self.pending.replace(*run) {
            self.integrate(&previous, run.time);
        }
    }

    /// Integrates the constant piece `[run.time, end)` into the bins it overlaps.
    fn integrate(&mut self, s: &InstantRun, end: Time) {
        let k = self.bin_of(s.time);
        self.queue_max[k] = self.queue_max[k].max(s.queue_len);
        let mut t = s.time;
        while t < end {
            let k = self.bin_of(t);
            let bin_end = self.origin + (k as Time + 1) * self.step;
            let piece = (end.min(bin_end) - t) as f64;
            self.busy[k] += piece * s.busy as f64;
            self.reserved[k] += piece * s.reserved as f64;
            self.queue[k] += piece * f64::from(s.queue_len);
            self.queue_max[k] = self.queue_max[k].max(s.queue_len);
            t = end.min(bin_end);
        }
    }

    /// A job of size class `class` waiting over `[submit, start)`.
    pub fn waiting(&mut self, class: usize, submit: Time, start: Time) {
        let n = self.busy.len();
        if n == 0 {
            return;
        }
        let end = self.origin + n as Time * self.step;
        let (mut t, stop) = (submit.max(self.origin), start.min(end));
        while t < stop {
            let k = self.bin_of(t);
            let bin_end = self.origin + (k as Time + 1) * self.step;
            self.class_queue[class][k] += (stop.min(bin_end) - t) as f64;
            t = stop.min(bin_end);
        }
    }

    /// The bins, and the time-weighted mean queue of each size class in each bin.
    pub fn finish(mut self) -> (Vec<Bin>, Vec<Vec<f64>>) {
        if let Some(last) = self.pending.take() {
            // The last instant's state is not integrated: the schedule ends there.
            let end = last.last();
            self.integrate(&last, end);
            let k = self.bin_of(end);
            self.queue_max[k] = self.queue_max[k].max(last.queue_len);
        }
        let (step, capacity) = (self.step as f64, self.capacity as f64);
        let bins = (0..self.busy.len())
            .map(|k| Bin {
                start: self.origin + k as Time * self.step,
                utilization: self.busy[k] / (step * capacity),
                reserved: self.reserved[k] / (step * capacity),
                queue_mean: self.queue[k] / step,
                queue_max: self.queue_max[k],
            })
            .collect();
        for series in &mut self.class_queue {
            for v in series.iter_mut() {
                *v /= step;
            }
        }
        (bins, self.class_queue)
    }
}

/// Bins `steps` (in time order) with width `step` seconds, for a machine of `capacity` units.
pub fn bin(steps: &[Step], capacity: u64, step: Time) -> Vec<Bin> {
    let span = steps
        .first()
        .zip(steps.last())
        .map(|(f, l)| (f.time, l.time));
    let mut binner = Binner::new(span, step, capacity, 0);
    let mut folding = RunLength::default();
    for s in steps {
        let instant = Instant {
            time: s.time,
            queue_len: s.queue_len,
            busy: s.busy,
            reserved: s.reserved,
            ..Instant::default()
        };
        if let Some(run) = folding.push(&instant) {
            binner.instants(&run);
        }
    }
    if let Some(run) = folding.finish() {
        binner.instants(&run);
    }
    binner.finish().0
}

/// Time-weighted mean number of waiting jobs of each size class in each bin of `bins` (same
/// origin and width `step`): a job waits over `[submit, start)`. Returns one series per class.
pub fn queue_by_class(
    records: &[JobRecord],
    classes: &SizeClasses,
    bins: &[Bin],
    step: Time,
) -> Vec<Vec<f64>> {
    let span = bins
        .first()
        .zip(bins.last())
        .map(|(f, l)| (f.start, l.start));
    let mut binner = Binner::new(span, step, 1, classes.0.len());
    for r in records {
        binner.waiting(classes.of(r.units), r.submit, r.start);
    }
    binner.finish().1
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
