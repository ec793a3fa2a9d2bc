//! What node-level conservative's last searches on each class showed (issue 36, a deep queue
//! on thousands of nodes): "no window of this shape, this long, starts in `[from, before)`",
//! so that a later search for a shape that takes at least as much starts at `before`.
//!
//! This is the node-level form of the pool's `NoFit` (the module documentation of
//! `scheduler::conservative`, "Searches that start later"). Shape `b` *covers* shape `a` on one
//! class when every set of nodes that can take `b` over a window can take `a` over it: at least
//! as many nodes, at least as many of them full, a full amount covering `a`'s and a smallest
//! amount (the last node's, or the full one) covering `a`'s smallest — a fit counts the nodes
//! able to take each (docs/semantics.md, [`Timeline::fits`]).
//!
//! A record says that no whole window `[t, t + d)` of shape `a` fits for `t` in
//! `[from, before)`: a placement's search shows it up to the slot it finds, and a compression's
//! check up to its bound (no slot of the job starts before it even with the job's hold given
//! back, so no window does with the hold in place). It stays true while capacity of the class
//! is only taken: a rise counted by the timeline's clock ([`Timeline::rose_since`]) ends it.
//! Then a search for a shape `b` covering `a`, lasting at least `d`, finds no window starting
//! in `[from, before)` either — each window of `b` holds one of `a` — as long as `b`'s windows
//! are cut off nowhere before `t + d`: a placement's are never cut, a compression's check cuts
//! them at the job's own slot (capacity from there on is the job's own hold, given back), so
//! a record serves it only if that slot is at `before + d` or later.
//!
//! A hold given back only to search without it ([`Timeline::unhold_unstamped`]) is no counted
//! rise: no record is made or read while it is out (the compression holds it again unchanged,
//! or stamps the rise). The last [`KEPT`] records per class are kept and each search reads
//! them all. How many pays was measured in instructions (session 40, BENCHMARKS.md "what a
//! search pays for"): against 32, keeping 4 cost 7.7 % less on the Curie window at 500
//! nodes in fcfs order, 3.8 % less in fairshare order, 20 % less on wagap-2013 on its own 68
//! nodes and 2.3 % less on METACENTRUM-2009; 8 and 2 came within a point of it, 1 was worse
//! on the Curie window. A record older than the last few is rarely the one that says most,
//! and each costs a test of every search.

use std::collections::VecDeque;

use crate::sim::job::Time;
use crate::sim::topology::{NodeShape, Timeline};

/// Records kept per class.
const KEPT: usize = 4;

/// "No window `[t, t + duration)` of `shape` fits for `t` in `[from, before)` on the class",
/// true while the class has not risen since `clock`.
#[derive(Clone, Copy, Debug)]
struct NoFit {
    shape: NodeShape,
    duration: Time,
    from: Time,
    before: Time,
    clock: u64,
}

/// Per class, the last searches that showed where no window fits.
#[derive(Clone, Debug)]
pub struct NoFits {
    per_class: Vec<VecDeque<NoFit>>,
    /// False: nothing is recorded (the reference formulation the tests compare with).
    on: bool,
    /// Searches that a record let start later (for tests).
    hits: u64,
}

impl NoFits {
    /// Records kept when `on`; none (every search from where it is asked) otherwise.
    pub fn new(on: bool) -> Self {
        NoFits {
            per_class: Vec::new(),
            on,
            hits: 0,
        }
    }

    /// How many searches a record let start later.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// A start at or after `from` before which no window `[t, min(t + duration, clip))` of
    /// `shape` on `class` fits in the timeline `tl`, by the records: `from` itself when none
    /// says more.
    pub fn bound(
        &mut self,
        tl: &Timeline,
        class: u32,
        shape: &NodeShape,
        duration: Time,
        clip: Time,
        from: Time,
    ) -> Time {
        let Some(records) = self.per_class.get(class as usize) else {
            return from;
        };
        let mut bound = from;
        for r in records {
            let says = r.from <= from
                && r.before > bound
                && duration >= r.duration
                && clip >= r.before.saturating_add(r.duration)
                && covers(shape, &r.shape)
                && !tl.rose_since(class, r.clock);
            if says {
                bound = r.before;
            }
        }
        self.hits += u64::from(bound > from);
        bound
    }

    /// Records that no window `[t, t + duration)` of `shape` on `class` fits for `t` in
    /// `[from, before)` (`before` = [`Time::MAX`]: none at all) in the timeline `tl` as it is.
    pub fn record(
        &mut self,
        tl: &Timeline,
        class: u32,
        shape: &NodeShape,
        duration: Time,
        (from, before): (Time, Time),
    ) {
        if !self.on || before <= from {
            return;
        }
        let c = class as usize;
        if self.per_class.len() <= c {
            self.per_class.resize_with(c + 1, VecDeque::new);
        }
        let records = &mut self.per_class[c];
        // Records made before the class last rose say nothing any more (they come first:
        // records are made in clock order); of the others, the oldest gives way.
        while records
            .front()
            .is_some_and(|r| tl.rose_since(class, r.clock))
        {
            records.pop_front();
        }
        if records.len() == KEPT {
            records.pop_front();
        }
        records.push_back(NoFit {
            shape: *shape,
            duration,
            from,
            before,
            clock: tl.clock(),
        });
    }
}

/// Whether every set of nodes that can take `b` over a window can take `a` over it.
fn covers(b: &NodeShape, a: &NodeShape) -> bool {
    let smallest = |s: &NodeShape| s.last.unwrap_or(s.per_node);
    b.count >= a.count
        && b.full() >= a.full()
        && (a.full() == 0 || a.per_node.fits_in(&b.per_node))
        && smallest(a).fits_in(&smallest(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::topology::timeline::tests::shape;

    #[test]
    fn a_shape_covers_what_takes_no_more_on_no_more_nodes() {
        assert!(covers(&shape(4, 8, None), &shape(4, 8, None)));
        assert!(covers(&shape(5, 8, None), &shape(4, 6, None)));
        assert!(covers(&shape(4, 8, None), &shape(4, 8, Some(2))));
        // Fewer nodes, fewer full nodes, a smaller full or last amount: not covered.
        assert!(!covers(&shape(3, 8, None), &shape(4, 8, None)));
        assert!(!covers(&shape(4, 8, Some(2)), &shape(4, 8, None)));
        assert!(!covers(&shape(4, 6, None), &shape(4, 8, None)));
        assert!(!covers(&shape(4, 8, Some(2)), &shape(4, 8, Some(4))));
        // Memory counts as well as cores.
        let mut big = shape(4, 8, None);
        big.per_node.0[1] = 1;
        assert!(covers(&big, &shape(4, 8, None)));
        assert!(!covers(&shape(4, 8, None), &big));
    }
}
