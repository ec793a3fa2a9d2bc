//! Queue orders: the order in which a backfilling rule considers the waiting jobs — one of the
//! three components of a policy (order × backfilling rule × placement).
//!
//! Today's order is submission order ([`Submission`]); priority orders such as fairshare plug
//! in here. Whatever the order, *backfilled* keeps its definition (a job starting while an
//! earlier-submitted one waits).

use super::QueuedJob;
use crate::sim::job::{Job, Time};

/// Produces the positions of `queue` (waiting jobs in submission order) in the order a
/// backfilling rule should consider them; every position exactly once.
pub trait QueueOrder {
    fn order(&mut self, now: Time, queue: &[QueuedJob], jobs: &[Job], out: &mut Vec<usize>);
}

/// First come, first served: submission order.
#[derive(Clone, Copy, Debug, Default)]
pub struct Submission;

impl QueueOrder for Submission {
    fn order(&mut self, _now: Time, queue: &[QueuedJob], _jobs: &[Job], out: &mut Vec<usize>) {
        out.clear();
        out.extend(0..queue.len());
    }
}
