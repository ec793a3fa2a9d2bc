//! User-aware metrics of Tóth & Klusáček, "User-Aware Metrics for Measuring Quality of Parallel
//! Job Schedules" (`papers/toth-klusacek-user-aware-metrics-eet.txt`): every user expects a
//! share of the system (`capacity.rs`); each job gets an expected end time (EET) by filling its
//! user's share in arrival order with Algorithm 1 (`share.rs`, O(log n) amortised per job);
//! a schedule is then judged by which EETs it violates and by how much (`evaluate.rs`: per job,
//! per user — VEET_u, WT_u — and across users), and shown as a users × time heatmap of
//! violations (`heatmap.rs`). Pure: job records in, numbers out. Definitions with their
//! sources: docs/metrics.md, "User-aware metrics".
//!
//! Integration is one call: build an [`EetJob`] per job record (submit, start, runtime, CPUs,
//! memory, user, group), a [`CapacityRule`], then [`evaluate`] (and [`heatmap`] for the data of
//! the picture); on a simulated run, [`schedule_eet`] does all of it from the job records
//! under the manifest's [`ExpectedCapacity`].

mod capacity;
mod error;
mod evaluate;
mod expected;
pub mod heatmap;
mod job;
pub mod ratio;
mod resource;
mod schedule;
pub mod share;
mod spread;
mod stream;
mod user;

pub use capacity::CapacityRule;
pub use error::EetError;
pub use evaluate::{EetReport, EetSummary, VEET_BENCHMARK, evaluate};
pub use expected::{ExpectedCapacity, Split};
pub use heatmap::{Axis, AxisError, Heatmap, bin_width_for, heatmap};
pub use job::{EetJob, JobEet};
pub use ratio::Ratio;
pub use resource::{PerResource, Resource};
pub use schedule::{ScheduleEet, schedule_eet};
pub use spread::Spread;
pub use stream::{EetStream, EetUsers};
pub use user::UserEet;
