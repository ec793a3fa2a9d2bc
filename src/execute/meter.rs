//! How far the running simulations have got, for progress displays (issue 35: "nothing is
//! printed for up to 9 minutes while one cell runs").
//!
//! The simulator stays pure: it hands every processed instant to its `ScheduleSink`, and the
//! simulate node wraps its sink in [`Metered`], which stores the instant's simulated time in
//! the cell's [`Meter`] — one relaxed atomic store per instant, no lock, no I/O, no clock. The
//! progress display reads the [`Meters`] of the running cells on its own thread and turns the
//! simulated time reached into a fraction of the cell's submission span.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use crate::sim::engine::JobOutcome;
use crate::sim::job::Time;
use crate::sim::schedule::{Instant, ScheduleSink};

/// No time yet (an `i64` that no instant has).
const UNSET: i64 = i64::MIN;

/// The progress of one running simulation: its submission span and the simulated time reached.
#[derive(Debug)]
pub struct Meter {
    pub label: String,
    /// The node's cost estimate ([`crate::execute::DagNode::cost`]).
    pub cost: u64,
    first: AtomicI64,
    last: AtomicI64,
    reached: AtomicI64,
}

/// What a display reads of a running cell at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub label: String,
    pub cost: u64,
    /// Simulated seconds reached since the first submission and the submission span, once the
    /// workload is read and the first instant simulated.
    pub simulated: Option<(Time, Time)>,
}

impl Reading {
    /// The fraction of the submission span simulated, in `[0, 1]`; 0 before the first instant.
    /// Past the last submission the queue drains: still 1, the node's end says when it is done.
    pub fn fraction(&self) -> f64 {
        match self.simulated {
            Some((_, 0)) => 1.0,
            Some((reached, span)) => (reached as f64 / span as f64).clamp(0.0, 1.0),
            None => 0.0,
        }
    }
}

impl Meter {
    /// A meter that no display reads (a Slurm worker's simulation, tests).
    pub fn detached() -> Meter {
        Meter::new(String::new(), 0)
    }

    fn new(label: String, cost: u64) -> Meter {
        Meter {
            label,
            cost,
            first: AtomicI64::new(UNSET),
            last: AtomicI64::new(UNSET),
            reached: AtomicI64::new(UNSET),
        }
    }

    /// The first and last submission times of the workload being simulated.
    pub fn span(&self, first: Time, last: Time) {
        self.first.store(first, Ordering::Relaxed);
        self.last.store(last.max(first), Ordering::Relaxed);
    }

    /// The simulated time reached.
    fn reached(&self, time: Time) {
        self.reached.store(time, Ordering::Relaxed);
    }

    pub fn read(&self) -> Reading {
        let first = self.first.load(Ordering::Relaxed);
        let last = self.last.load(Ordering::Relaxed);
        let reached = self.reached.load(Ordering::Relaxed);
        let simulated = (first != UNSET && last != UNSET && reached != UNSET)
            .then(|| ((reached - first).max(0), last - first));
        Reading {
            label: self.label.clone(),
            cost: self.cost,
            simulated,
        }
    }
}

/// A sink that notes the simulated time of each instant in a [`Meter`] and passes everything
/// on unchanged (runs of instants stay folded).
pub struct Metered<'a> {
    pub inner: &'a mut dyn ScheduleSink,
    pub meter: &'a Meter,
}

impl ScheduleSink for Metered<'_> {
    fn job(&mut self, outcome: &JobOutcome) {
        self.inner.job(outcome);
    }

    fn instant(&mut self, instant: &Instant) {
        self.meter.reached(instant.time);
        self.inner.instant(instant);
    }

    fn call(&mut self, time: Time, queue_len: u32) {
        self.inner.call(time, queue_len);
    }

    fn instants(&mut self, first: &Instant, period: Time, count: u64) {
        if count > 0 {
            self.meter
                .reached(first.time + (count as Time - 1) * period);
        }
        self.inner.instants(first, period, count);
    }
}

/// The meters of the simulations running in this process, by node index.
#[derive(Debug, Default)]
pub struct Meters {
    running: Mutex<BTreeMap<usize, Arc<Meter>>>,
}

/// A running node's meter; it leaves the [`Meters`] when dropped (the node ended).
pub struct Running<'a> {
    meters: &'a Meters,
    node: usize,
    pub meter: Arc<Meter>,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.meters.running.lock().unwrap().remove(&self.node);
    }
}

impl Meters {
    /// Node `node` (`label`, cost estimate `cost`) starts simulating.
    pub fn start(&self, node: usize, label: &str, cost: u64) -> Running<'_> {
        let meter = Arc::new(Meter::new(label.to_string(), cost));
        self.running.lock().unwrap().insert(node, meter.clone());
        Running {
            meters: self,
            node,
            meter,
        }
    }

    /// The running simulations, in node order.
    pub fn read(&self) -> Vec<Reading> {
        self.running
            .lock()
            .unwrap()
            .values()
            .map(|m| m.read())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count(u64);
    impl ScheduleSink for Count {
        fn job(&mut self, _: &JobOutcome) {}
        fn instant(&mut self, _: &Instant) {
            self.0 += 1;
        }
        fn instants(&mut self, _: &Instant, _: Time, count: u64) {
            // A folding sink takes a run at once: 1, whatever its length.
            self.0 += u64::from(count > 0);
        }
    }

    #[test]
    fn the_fraction_is_the_simulated_time_over_the_submission_span() {
        let meters = Meters::default();
        let running = meters.start(3, "exp/cell", 50);
        assert_eq!(meters.read()[0].fraction(), 0.0, "nothing simulated yet");
        running.meter.span(1_000, 87_400);
        let mut inner = Count(0);
        let mut sink = Metered {
            inner: &mut inner,
            meter: &running.meter,
        };
        sink.instant(&Instant {
            time: 22_600,
            ..Instant::default()
        });
        // (22,600 − 1,000) / (87,400 − 1,000) = 21,600 / 86,400 = 0.25.
        let r = &meters.read()[0];
        assert_eq!((r.label.as_str(), r.cost), ("exp/cell", 50));
        assert_eq!(r.simulated, Some((21_600, 86_400)));
        assert_eq!(r.fraction(), 0.25);
        // A folded run of 10 ticks every 600 s from 44,200 ends at 49,600: 0.5625; the inner
        // sink still gets it as one run.
        sink.instants(
            &Instant {
                time: 44_200,
                ..Instant::default()
            },
            600,
            10,
        );
        assert_eq!(meters.read()[0].fraction(), 48_600.0 / 86_400.0);
        assert_eq!(inner.0, 2);
        // Draining the queue past the last submission: 1, never more.
        running.meter.reached(200_000);
        assert_eq!(meters.read()[0].fraction(), 1.0);
        drop(running);
        assert!(meters.read().is_empty(), "an ended node leaves the display");
    }
}
