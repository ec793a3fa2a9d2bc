//! The order of backfill candidates (`backfill_order`): which waiting jobs a backfilling rule
//! offers first once a job *cannot* start, independently of the queue order that decides the
//! head (issue 33, "Shortest-job backfilling"; docs/semantics.md, "Backfill candidate order").
//!
//! `order: sjf` sorts the whole queue, head included. The classic shortest-job backfilling
//! (pyss's `EasySJBFScheduler`, Maui's backfill ordering) keeps the queue order up to the first
//! job that does not fit — which keeps its place and, under EASY, its reservation — and offers
//! only the jobs after it in another order. So a rule walks the queue in queue order while jobs
//! start, and at the first job that does not start it re-sorts the rest of its walk
//! ([`super::Walk::candidates_after`]): stable, so ties keep the queue order.
//!
//! The setting rides on the queue order ([`WithCandidates`] wraps it), so every order composes
//! with every candidate order, and the rules that consult [`super::QueueOrder::candidates`]
//! (FCFS needs none: it never passes a waiting job) apply it.

use serde::{Deserialize, Serialize};

use super::QueueOrder;
use crate::sim::job::{Job, Time};
use crate::sim::queue::Queue;
use crate::sim::scheduler::QueuedJob;

/// In which order the jobs after the first one that cannot start are offered to backfilling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateOrder {
    /// The queue order itself (the default: classic EASY and conservative).
    #[default]
    Queue,
    /// Submission order, whatever the queue order.
    Submission,
    /// Shortest requested time first (shortest-job backfilling, SJBF).
    Shortest,
    /// Smallest requested area (requested time × units) first.
    SmallestArea,
}

impl CandidateOrder {
    pub const ALL: [CandidateOrder; 4] = [
        CandidateOrder::Queue,
        CandidateOrder::Submission,
        CandidateOrder::Shortest,
        CandidateOrder::SmallestArea,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CandidateOrder::Queue => "queue",
            CandidateOrder::Submission => "submission",
            CandidateOrder::Shortest => "shortest",
            CandidateOrder::SmallestArea => "smallest_area",
        }
    }

    /// Whether this is the default (candidates in queue order).
    pub fn is_queue(&self) -> bool {
        *self == CandidateOrder::Queue
    }

    /// The sort key of a waiting job at queue position `pos` (lower first). `Queue` gives 0 for
    /// every job, which a stable sort leaves in place.
    pub fn key(self, pos: usize, job: &QueuedJob) -> (i128, usize) {
        match self {
            CandidateOrder::Queue => (0, 0),
            CandidateOrder::Submission => (0, pos),
            CandidateOrder::Shortest => (i128::from(job.requested_time), 0),
            CandidateOrder::SmallestArea => (
                i128::from(job.requested_time) * i128::from(job.demand.unit_count()),
                0,
            ),
        }
    }
}

impl std::fmt::Display for CandidateOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CandidateOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        CandidateOrder::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown backfill order {s:?} (expected queue, submission, shortest or smallest_area)"
                )
            })
    }
}

/// A queue order with a candidate order other than its own. Never submission order for the
/// rules (their fast paths walk the queue lazily and cannot re-sort it), so they materialise
/// the walk; the order itself is the inner one's.
pub struct WithCandidates {
    inner: Box<dyn QueueOrder>,
    candidates: CandidateOrder,
}

impl WithCandidates {
    pub fn new(inner: Box<dyn QueueOrder>, candidates: CandidateOrder) -> Self {
        WithCandidates { inner, candidates }
    }
}

impl QueueOrder for WithCandidates {
    fn order(&mut self, now: Time, queue: &Queue, jobs: &[Job], out: &mut Vec<usize>) {
        if self.inner.is_submission() {
            out.clear();
            out.extend(0..queue.len());
        } else {
            self.inner.order(now, queue, jobs, out);
        }
    }

    fn started(&mut self, now: Time, job: u32, class: u32) {
        self.inner.started(now, job, class);
    }

    fn ended(&mut self, job: u32, end: Time) {
        self.inner.ended(job, end);
    }

    fn candidates(&self) -> CandidateOrder {
        self.candidates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;

    #[test]
    fn names_round_trip_and_keys_order_as_documented() {
        for c in CandidateOrder::ALL {
            assert_eq!(c.name().parse::<CandidateOrder>(), Ok(c));
        }
        assert!("sjf".parse::<CandidateOrder>().is_err());
        let q = |requested_time, units| QueuedJob {
            job: 0,
            submit: 0,
            requested_time,
            demand: ResourceVec::units(units),
        };
        let (long_narrow, short_wide) = (q(100, 1), q(10, 50));
        assert!(
            CandidateOrder::Shortest.key(0, &short_wide)
                < CandidateOrder::Shortest.key(1, &long_narrow)
        );
        assert!(
            CandidateOrder::SmallestArea.key(0, &long_narrow)
                < CandidateOrder::SmallestArea.key(1, &short_wide)
        );
        assert!(
            CandidateOrder::Submission.key(3, &short_wide)
                < CandidateOrder::Submission.key(4, &long_narrow)
        );
        assert_eq!(
            CandidateOrder::Queue.key(0, &short_wide),
            CandidateOrder::Queue.key(9, &long_narrow)
        );
    }
}
