//! Scheduling policies. A policy receives a read-only [`View`] of the machine and the queue and
//! returns its decisions as data (the queue positions to start now); the engine applies them and
//! checks that nothing is over-allocated (STYLE.md item 6).

mod conservative;
mod easy;
mod fcfs;
pub mod node;
pub mod order;
pub mod profile;

pub use conservative::Conservative;
pub use easy::Easy;
pub use fcfs::Fcfs;

use super::job::Time;
use super::queue::Queue;
use super::reservation::ReservedWindow;
use super::resources::ResourceVec;
use super::running::{RunningJob, RunningSet};
use profile::Profile;

/// A waiting job as schedulers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedJob {
    /// Index of the job in the workload (its submission order).
    pub job: u32,
    pub submit: Time,
    pub requested_time: Time,
    pub demand: ResourceVec,
}

/// What a scheduler may look at when it decides. Borrowed from the engine; never mutated.
pub struct View<'a> {
    pub now: Time,
    /// Total capacity in allocation units.
    pub capacity: ResourceVec,
    /// Capacity free right now.
    pub free: ResourceVec,
    /// Waiting jobs in submission order, read like a slice (`len`, `queue[pos]`, `iter`).
    pub queue: &'a Queue,
    /// Running jobs in order of expected termination.
    pub running: &'a RunningSet,
    /// Jobs that left `running` (completed or killed) since the scheduler's previous call, in
    /// the order they ended: what a policy keeping state between calls needs to update it.
    pub ended: &'a [RunningJob],
    /// Granted reservations not yet over, by start. Those already started are not in `free`.
    /// No job may hold reserved capacity: a job may start only if it fits beside every
    /// reservation until its requested time is up.
    pub reservations: &'a [ReservedWindow],
}

impl View<'_> {
    /// Expected end of a running job as a scheduler should use it. A job allowed to overrun its
    /// request ([`crate::sim::Overrun::Continue`]) is still running now, so it is predicted to end
    /// one second from now rather than in the past.
    pub fn predicted_end(&self, expected_end: Time) -> Time {
        expected_end.max(self.now + 1)
    }

    /// Resets `profile` to the committed future: capacity free now, released by running jobs at
    /// their predicted ends and by started reservations at their ends, and held by the
    /// reservations still to come.
    pub fn committed_profile(&self, profile: &mut Profile) {
        profile.reset(self.now, self.free);
        for r in self.running.iter() {
            profile.release_from(self.predicted_end(r.expected_end), r.demand);
        }
        for w in self.reservations {
            let width = ResourceVec::units(w.width);
            if w.start <= self.now {
                profile.release_from(w.end, width);
            } else {
                profile.reserve(w.start, w.end, width);
            }
        }
    }
}

/// A scheduling policy. `schedule` appends to `starts` the queue positions (indices into
/// `view.queue`, strictly increasing or in any order, each at most once) of the jobs to start
/// at `view.now`.
pub trait Scheduler {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>);
}

/// The built-in policies, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    Fcfs,
    Easy,
    Conservative,
}

impl SchedulerKind {
    pub const ALL: [SchedulerKind; 3] = [
        SchedulerKind::Fcfs,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Fcfs => "fcfs",
            SchedulerKind::Easy => "easy",
            SchedulerKind::Conservative => "conservative",
        }
    }

    pub fn build(self) -> Box<dyn Scheduler> {
        match self {
            SchedulerKind::Fcfs => Box::new(Fcfs::default()),
            SchedulerKind::Easy => Box::new(Easy::default()),
            SchedulerKind::Conservative => Box::new(Conservative::default()),
        }
    }
}

impl std::fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SchedulerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SchedulerKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown scheduler {s:?} (expected fcfs, easy or conservative)"))
    }
}
