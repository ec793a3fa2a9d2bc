//! Whether a queued job can start now, for node-level conservative's placements left to the
//! next call ([`super::NodeConservative`], module documentation "Placements left to the next
//! call"): a job placed at a call is read at the next one only if that call's order keeps it, so
//! once no job left to place can start now, the rest are admitted unplaced.
//!
//! A job starts now exactly when its shape fits over `[now, now + requested)` on one of its
//! classes, which [`StartsNow::may_start`] checks as [`Timeline::fits`] does, but only on the
//! nodes of a shared class that had a free core when the pass began: placing jobs only takes
//! capacity, so no other node can take a job with a core later in the pass. [`Cut`] finds, as the
//! pass goes, where the jobs none of which can start now begin, testing each job at most twice.

use super::NodeView;
use crate::sim::topology::Timeline;
use crate::sim::topology::node_groups::PerGroup;
use crate::sim::topology::steps::{Amount, vector};

/// The nodes of each shared class with a free core at the start of a pass (built when first
/// asked).
#[derive(Debug, Default)]
pub struct StartsNow {
    built: bool,
    roomy: Vec<Vec<u32>>,
    /// Within one test, what the nodes of each step function can take (bits: the full amount,
    /// the last): nodes that share a function are read once.
    takes: PerGroup<u8>,
}

impl StartsNow {
    /// Forgets the nodes found: the next question reads the timeline afresh.
    pub fn clear(&mut self) {
        self.built = false;
    }

    /// Whether `job` fits over `[now, now + requested)` on one of its classes in `tl` — exactly
    /// [`Timeline::fits`], provided the timeline has only lost capacity since the first call
    /// after [`StartsNow::clear`].
    pub fn may_start(&mut self, tl: &Timeline, view: &NodeView<'_>, job: u32) -> bool {
        let now = view.now;
        if !self.built {
            self.build(tl, view);
        }
        let end = now + view.jobs[job as usize].requested_time;
        for &class in view.classes_of(job) {
            let Some(shape) = view.shape(job, class) else {
                continue;
            };
            if tl.is_whole(class) {
                if tl.idle_min(class, now, end) >= i64::from(shape.count) {
                    return true;
                }
                continue;
            }
            let full = vector(shape.per_node);
            let last = shape.last.map(vector);
            // What every node of the job takes at least.
            let floor = last.map_or(full, |l| l.meet(full));
            if floor[0] <= 0 {
                // A node of it takes no core: any node may take it.
                if tl.fits(view.layout, class, &shape, now, end - now) {
                    return true;
                }
                continue;
            }
            let (need_full, need_all) = (shape.full(), shape.count);
            let (mut q_full, mut q_all) = (0, 0);
            self.takes.begin(tl.function_ids());
            for &node in &self.roomy[class as usize] {
                let takes = self.takes.get(tl.function_of(node), || {
                    match tl.node_min_covering(node, now, end, &floor) {
                        Some(m) if m.covers(&full) => 3,
                        Some(m) if last.is_some_and(|l| m.covers(&l)) => 2,
                        _ => 0,
                    }
                });
                q_full += u32::from(takes & 1);
                q_all += u32::from(takes >> 1);
                if q_full >= need_full && q_all >= need_all {
                    return true;
                }
            }
        }
        false
    }

    fn build(&mut self, tl: &Timeline, view: &NodeView<'_>) {
        let classes = view.layout.classes();
        self.roomy.resize_with(classes.len(), Vec::new);
        for (c, class) in classes.iter().enumerate() {
            let roomy = &mut self.roomy[c];
            roomy.clear();
            if !tl.is_whole(c as u32) {
                roomy.extend(
                    class
                        .nodes
                        .clone()
                        .filter(|&n| tl.node_at(n, view.now)[0] > 0),
                );
            }
        }
        self.built = true;
    }
}

/// Where, in a pass placing jobs in order over only-shrinking capacity, the jobs none of which
/// can start now begin. Tests from the last job back until one may start; when the pass reaches
/// that job, it is tested again (capacity may have shrunk since), and the scan goes on back from
/// it if it no longer may.
#[derive(Debug)]
pub struct Cut {
    /// Every job from here on was found unable to start now.
    scan: usize,
    /// The job at `scan - 1` was found able to start now.
    passer: bool,
}

impl Cut {
    pub fn new(len: usize) -> Self {
        Cut {
            scan: len,
            passer: false,
        }
    }

    /// Whether none of the jobs from `i` on can start now (`i` increasing from 0 between
    /// calls). `may_start(j)`: whether job `j` can start now over the present capacity.
    pub fn defers(&mut self, i: usize, mut may_start: impl FnMut(usize) -> bool) -> bool {
        loop {
            if i >= self.scan {
                return true;
            }
            if self.passer && self.scan - 1 > i {
                return false;
            }
            if may_start(self.scan - 1) {
                self.passer = true;
                return false;
            }
            self.scan -= 1;
            self.passer = false;
        }
    }
}
