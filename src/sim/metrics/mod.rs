//! Metrics of a simulated run: per-job records and the run summary (docs/metrics.md gives every
//! definition with its source).

pub mod eet;
mod per_cluster;
mod queues;
mod record;
mod size_class;
mod stats;
mod summary;
pub mod usage;
mod users;

pub use per_cluster::{ClusterJobs, ClusterSums, per_cluster};
pub use queues::{QueueSummary, QueueSums, summarize_queues};
pub use record::{JobRecord, job_records, requested_memory_kb};
pub use size_class::{ClassSummary, SizeClass, SizeClasses, summarize_classes};
pub use stats::Distribution;
pub use summary::{
    ReservationCounts, RunAccumulator, RunSummary, Window, WindowScan, measurement, summarize,
    summarize_with_classes,
};
pub use users::{UserFairness, UserRow, UserSums, fairness, jain_index, user_rows};

use serde::{Deserialize, Serialize};

use super::job::Time;

/// Bounded-slowdown threshold τ used when none is given (Feitelson et al.: 10 s).
pub const DEFAULT_TAU: Time = 10;

/// Which early part of a run to leave out of the aggregates (the initial transient).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    #[default]
    None,
    /// The first N jobs in submission order.
    Jobs(u64),
    /// Jobs submitted in the first T seconds after the first submission.
    Seconds(Time),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MetricsConfig {
    /// Bounded-slowdown threshold τ, in seconds.
    pub tau: Time,
    pub warmup: Warmup,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            tau: DEFAULT_TAU,
            warmup: Warmup::None,
        }
    }
}
