//! What one call of node-level EASY leaves to the next when nothing can have been freed in
//! between: the blocked head's shadow time and state, and the requests that fit nowhere now.
//!
//! Between two calls the engine applies the first call's starts and, at an arrival alone (no job
//! ended, no reservation, no queue limit), nothing else: every node has at most what it had at
//! any moment of the first call — provided each start took a core on each of its nodes (an
//! amount without one, or a zero amount, leaves an idle node idle to the engine while the call
//! counted it taken, so the next call could fit more; such a call carries nothing). Then, in
//! any queue order (the order may change between the calls: fairshare moves the users whose
//! jobs started):
//!
//! - If this call's first job is the last call's head, it is still blocked: it fit nowhere in
//!   the first call, and fitting now only gets harder with less free. Nothing starts before it,
//!   so it is this call's head.
//! - Its shadow time and the state `S` at that time are those the first call ended with, after
//!   its backfills, as long as no running job's predicted end moved (none is past its expected
//!   end): a fresh computation releases the same jobs at the same instants, now including the
//!   first call's starts — its own starts and long backfills it counted already, and its short
//!   backfills end by the shadow time, so they hold less only before it. The head cannot fit
//!   earlier with less free, and at the shadow time it still fits, since every long backfill
//!   left it fitting. [`super::shadow::Shadow::carry_over`] keeps `S` true on the short
//!   backfills' nodes.
//! - A request that fit no class now at its try still fits none ([`super::waiting`]'s record of
//!   them): fitting now is monotone in what is free (the node picker is exact), whatever the
//!   side of the shadow time. A request refused for the head's sake is tried again: that
//!   choice of nodes is greedy and need not fail again on less.
//!
//! Neither depends on the order of the jobs behind the head. So the second call skips the
//! shadow's computation and those tries, and makes the same decisions (tests/node_easy_index.rs
//! compares it with the walk, which carries nothing, in submission, fairshare and priority
//! order). On Curie's shape half of the calls are such arrivals behind a blocked head
//! (BENCHMARKS.md, sessions 27 and 28).

use super::NodeView;
use super::pass::Pass;
use crate::sim::job::Time;
use crate::sim::resources::ResourceVec;

/// The last call's head, shadow time and what the engine should look like at the next call if
/// only that call's starts were applied.
#[derive(Clone, Debug, Default)]
pub struct Carry {
    /// Whether the last call left a state to carry (a blocked head and a backfilling pass
    /// through the index, without reservations or queue limits).
    valid: bool,
    head: u32,
    shadow: Time,
    /// Starts the last call decided.
    starts: usize,
    /// Starts the engine reported since the last call.
    applied: usize,
    reorders: u64,
    reservations_epoch: u64,
    /// Per class: what was free after the last call's starts.
    class_free: Vec<ResourceVec>,
}

impl Carry {
    /// Records what the call that just ended leaves: head `head` blocked until `shadow`, `starts`
    /// starts decided, `pass` holding them.
    pub fn record(
        &mut self,
        view: &NodeView<'_>,
        pass: &Pass,
        head: u32,
        shadow: Time,
        starts: usize,
    ) {
        self.valid = true;
        self.head = head;
        self.shadow = shadow;
        self.starts = starts;
        self.applied = 0;
        self.reorders = view.queue.reorders();
        self.reservations_epoch = view.reservations_epoch;
        let classes = view.layout.classes().len() as u32;
        self.class_free.clear();
        self.class_free
            .extend((0..classes).map(|c| pass.class_free(view, c)));
    }

    /// Counts a start the engine applied.
    pub fn applied(&mut self) {
        self.applied += 1;
    }

    /// Forgets the last call's state.
    pub fn clear(&mut self) {
        self.valid = false;
        self.applied = 0;
    }

    /// Whether nothing can have been freed since the last call: its starts were applied, and
    /// nothing else changed. Clears the record either way, so it serves one call.
    pub fn take(&mut self, view: &NodeView<'_>) -> bool {
        let held = self.valid
            && self.applied == self.starts
            && view.completed.is_empty()
            && view.reservations.is_empty()
            && view.limits.is_none()
            && view.reservations_epoch == self.reservations_epoch
            && view.queue.reorders() == self.reorders
            && (0..self.class_free.len() as u32)
                .all(|c| view.free.class_free(c) == self.class_free[c as usize]);
        self.clear();
        held
    }

    /// The shadow time carried for `head`, the head of this call first in its order, if the
    /// running jobs' predicted ends are those of the last call: none is due by now.
    pub fn shadow_for(&self, view: &NodeView<'_>, head: u32, carried: bool) -> Option<Time> {
        let ends_ahead = view
            .running
            .iter()
            .next()
            .is_none_or(|r| r.expected_end > view.now);
        (carried && head == self.head && self.shadow > view.now && ends_ahead)
            .then_some(self.shadow)
    }
}
