//! First come, first served: the queue in submission order.

use super::QueueOrder;
use crate::sim::job::{Job, Time};
use crate::sim::queue::Queue;

/// Submission order (`order: fcfs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Submission;

impl QueueOrder for Submission {
    fn order(&mut self, _now: Time, queue: &Queue, _jobs: &[Job], out: &mut Vec<usize>) {
        out.clear();
        out.extend(0..queue.len());
    }

    fn is_submission(&self) -> bool {
        true
    }
}
