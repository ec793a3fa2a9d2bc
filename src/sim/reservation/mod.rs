//! Advance reservations (Margo et al., "Impact of Reservations on Production Job Scheduling",
//! `papers/margo-impact-of-reservations.txt`): requests that arrive during a simulation, the
//! policy that places them (Catalina's "after the queued jobs", or at the requested time), the
//! throttles that may reject them, and what happened to each. docs/reservations.md is the
//! user-facing description.

mod generator;
mod on_nodes;
mod placement;
mod throttle;
mod window_cap;

pub use generator::{Distribution, ReservationGenerator};
pub use on_nodes::{NodeWindow, capacity_for, classes_for, place_on_nodes};
pub use placement::place;
pub use throttle::{ThrottleState, Throttles, WindowCap, unit_seconds};
pub use window_cap::{SlidingWindowLoad, brute_force_peak};

use super::job::Time;

/// A [`WindowCap`] of `max` per `window` seconds.
pub fn throttle_cap(window: Time, max: u64) -> WindowCap {
    WindowCap { window, max }
}

/// One reservation request. Widths are in allocation units (whole nodes on an exclusive-node
/// machine, processors on a pool); on a topology, whole nodes of one class of `cluster`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReservationRequest {
    /// Stable identifier shown in outputs (1-based in request order unless given).
    pub id: u64,
    /// Who asked; throttles count per owner.
    pub owner: String,
    /// When the request reaches the scheduler.
    pub created: Time,
    /// Requested start (≥ `created`).
    pub start: Time,
    /// Seconds (> 0).
    pub duration: Time,
    /// Allocation units (> 0).
    pub width: u64,
    /// On a topology: the cluster whose nodes it holds (`None`: any cluster). Ignored by
    /// uniform machines.
    pub cluster: Option<String>,
}

/// Where a granted reservation goes relative to the waiting jobs.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// As SDSC's Catalina scheduler: only after every queued job has its (conservative)
    /// reservation, so the request never delays a job already waiting (Margo et al., section 2).
    #[default]
    AfterQueue,
    /// At the requested time whatever waits; the queued jobs are planned around it. Only the
    /// running jobs (by their requested times) and earlier reservations constrain it.
    AtRequestedTime,
}

/// What to do when the requested window is not free.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum OnConflict {
    /// Refuse the request (reason `no_room`).
    #[default]
    Reject,
    /// Grant the earliest free window of the same length starting at or after the requested
    /// start; the delay is recorded.
    Shift,
}

/// The whole reservation set-up of a simulation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reservations {
    /// Requests in any order; the engine handles them by creation time, then id.
    pub requests: Vec<ReservationRequest>,
    pub placement: Placement,
    pub on_conflict: OnConflict,
    pub throttles: Throttles,
}

/// The rule that refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Wider than the whole machine.
    WiderThanMachine,
    MinDuration,
    MaxDuration,
    MinWidth,
    MaxWidth,
    /// Would push some sliding window's reserved node-seconds over the cap.
    NodeSecondsCap,
    /// Would give its owner too many reservations in some sliding window.
    OwnerCap,
    /// The requested window is not free (and the conflict policy is `reject`).
    NoRoom,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::WiderThanMachine => "wider_than_machine",
            Rule::MinDuration => "min_duration",
            Rule::MaxDuration => "max_duration",
            Rule::MinWidth => "min_width",
            Rule::MaxWidth => "max_width",
            Rule::NodeSecondsCap => "node_seconds_cap",
            Rule::OwnerCap => "owner_cap",
            Rule::NoRoom => "no_room",
        }
    }
}

/// What became of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Granted at the requested start.
    Granted,
    /// Granted later than requested (conflict policy `shift`).
    Shifted,
    Rejected(Rule),
}

/// A request and its fate, in the order of [`Reservations::requests`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReservationOutcome {
    /// Index into [`Reservations::requests`].
    pub request: u32,
    pub decision: Decision,
    /// The granted window `[start, end)`, if granted.
    pub window: Option<(Time, Time)>,
}

/// A granted reservation as schedulers see it: `width` units blocked over `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReservedWindow {
    pub start: Time,
    pub end: Time,
    pub width: u64,
}
