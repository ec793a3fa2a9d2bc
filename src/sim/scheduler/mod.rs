//! Scheduling policies. A policy receives a read-only [`View`] of the machine and the queue and
//! returns its decisions as data (the queue positions to start now); the engine applies them and
//! checks that nothing is over-allocated (STYLE.md item 6).
//!
//! A policy is a queue order ([`order`]) × a backfilling rule × (on topologies) a placement. The
//! rules, each over any order: `fcfs` (no backfilling: start jobs in order while they fit),
//! `easy`, `conservative` and `aggressive` (start every job that fits, in order, with no
//! reservation for anyone); counted in processors or nodes here, placed on nodes in [`node`].

mod aggressive;
mod conservative;
mod easy;
mod easy_index;
mod fcfs;
mod least_demands;
pub mod node;
pub mod order;
pub mod profile;

pub use aggressive::Aggressive;
pub use conservative::{Conservative, OrderedCalls};
pub use easy::Easy;
pub use fcfs::Fcfs;

use super::job::{Job, Time};
use super::limits::LimitState;
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
    /// The workload's jobs, by index (what an order may rank by: user, queue, size).
    pub jobs: &'a [Job],
    /// Running jobs in order of expected termination.
    pub running: &'a RunningSet,
    /// Jobs that left `running` (completed or killed) since the scheduler's previous call, in
    /// the order they ended: what a policy keeping state between calls needs to update it.
    pub ended: &'a [RunningJob],
    /// The same jobs with the instant each ended (what a queue order's ledger is fed).
    pub completed: &'a [node::Completed],
    /// Granted reservations not yet over, by start. Those already started are not in `free`.
    /// No job may hold reserved capacity: a job may start only if it fits beside every
    /// reservation until its requested time is up.
    pub reservations: &'a [ReservedWindow],
    /// With queues and limits: their run state (each job's queue, the jobs they hold). The
    /// built-in rules never read it (the engine has filtered `queue` already); a policy of the
    /// decision interface shows it ([`crate::sim::policy`]).
    pub limits: Option<&'a LimitState<'a>>,
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
        self.committed_profile_with(profile, []);
    }

    /// [`View::committed_profile`] with the `(from, to, demand)` holds of `holds` as well.
    pub fn committed_profile_with(
        &self,
        profile: &mut Profile,
        holds: impl IntoIterator<Item = (Time, Time, ResourceVec)>,
    ) {
        let now = self.now;
        let width = |w: &ReservedWindow| ResourceVec::units(w.width);
        let running = self.running.iter();
        let releases = running.map(|r| (self.predicted_end(r.expected_end), r.demand));
        let started = self.reservations.iter().filter(|w| w.start <= now);
        let to_come = self.reservations.iter().filter(|w| w.start > now);
        profile.rebuild(
            now,
            self.free,
            releases.chain(started.map(|w| (w.end, width(w)))),
            to_come.map(|w| (w.start, w.end, width(w))).chain(holds),
        );
    }
}

/// A scheduling policy. `schedule` appends to `starts` the queue positions (indices into
/// `view.queue`, each at most once) of the jobs to start at `view.now`, in the order it decided
/// them. The engine starts them all, except under CPU quotas, where it starts the longest
/// prefix (in that order) that keeps every quota and asks again (`crate::sim::limits`); it then
/// reports each start it made with `started`, before the next call.
pub trait Scheduler {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>);

    /// A failure of the last call that must stop the run (a policy of the decision interface,
    /// [`crate::sim::policy`], that raised or decided the impossible). The built-in rules
    /// never fail.
    fn failure(&mut self) -> Option<crate::sim::SimError> {
        None
    }

    /// `job` started at `now` by this call's decisions (stateful queue orders are charged here,
    /// for the starts made, not for the decisions).
    fn started(&mut self, now: Time, job: u32);

    /// Whether the last call was suspended rather than decided: it started nothing, and wants
    /// to be called again at the same instant, with the same view, once the driver of a
    /// [`crate::sim::engine::Stepped`] run has given it what it waits for (an agent's action).
    /// A run to completion reports a suspension as an error. The built-in rules never suspend.
    fn suspended(&mut self) -> bool {
        false
    }
}

/// The built-in backfilling rules, by name. With the `fcfs` queue order, `fcfs`, `easy` and
/// `conservative` are the classic policies of those names (pyss's exact schedules); `fcfs` is
/// the rule "no backfilling" (`backfill: none`) over any order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    Fcfs,
    Easy,
    Conservative,
    Aggressive,
}

impl SchedulerKind {
    pub const ALL: [SchedulerKind; 4] = [
        SchedulerKind::Fcfs,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
        SchedulerKind::Aggressive,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Fcfs => "fcfs",
            SchedulerKind::Easy => "easy",
            SchedulerKind::Conservative => "conservative",
            SchedulerKind::Aggressive => "aggressive",
        }
    }

    /// The rule's name on the `backfill` axis: `none` for `fcfs`.
    pub fn backfill_name(self) -> &'static str {
        match self {
            SchedulerKind::Fcfs => "none",
            other => other.name(),
        }
    }

    /// The rule over submission order, counting processors or nodes.
    pub fn build(self) -> Box<dyn Scheduler> {
        self.build_ordered(Box::new(order::Submission))
    }

    /// The rule over `order`, counting processors or nodes.
    pub fn build_ordered(self, order: Box<dyn order::QueueOrder>) -> Box<dyn Scheduler> {
        match self {
            SchedulerKind::Fcfs => Box::new(Fcfs::new(order)),
            SchedulerKind::Easy => Box::new(Easy::new(order)),
            SchedulerKind::Conservative => Box::new(Conservative::new(order)),
            SchedulerKind::Aggressive => Box::new(Aggressive::new(order)),
        }
    }

    /// The rule named `s` on the `backfill` axis (`none`, `easy`, `conservative`,
    /// `aggressive`).
    pub fn from_backfill(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(SchedulerKind::Fcfs),
            "easy" => Ok(SchedulerKind::Easy),
            "conservative" => Ok(SchedulerKind::Conservative),
            "aggressive" => Ok(SchedulerKind::Aggressive),
            _ => Err(format!(
                "unknown backfilling rule {s:?} (expected none, easy, conservative or aggressive)"
            )),
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
            .ok_or_else(|| {
                format!("unknown scheduler {s:?} (expected fcfs, easy, conservative or aggressive)")
            })
    }
}
