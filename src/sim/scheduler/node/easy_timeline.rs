//! EASY on nodes, planned on a [`Timeline`]: the formulation used when advance reservations
//! exist (they are holds in the timeline), and the reference the fast path is tested against.
//!
//! "Fits now" means fits over `[now, now + requested time)` beside everything committed; the
//! head's shadow time is its earliest such fit; the head qualifies a node (or a whole-node
//! class's idle count) by what is free over `[shadow, shadow + its requested time)`. A job that
//! would still run at the shadow time may start only if the head still fits on some class with
//! the job's holds added; its nodes spare the head first, exactly as in [`super::shadow`].
//! Without reservations the free state only grows with time, so these minimums are the values
//! at the shadow time and the two formulations decide alike.

use super::pass::{Failed, Pass};
use super::{Decisions, NodeView};
use crate::sim::job::Time;
use crate::sim::scheduler::QueuedJob;
use crate::sim::topology::NodeShape;
use crate::sim::topology::steps::{Amount, Vector, vector};
use crate::sim::topology::timeline::Timeline;

const NONE: u32 = u32::MAX;

/// The head on one of its classes.
#[derive(Clone, Copy, Debug)]
struct Head {
    shape: NodeShape,
    /// Shared class: nodes able to take the full / the last amount over the head's interval.
    q_full: u32,
    q_last: u32,
    /// Whole-node class: idle nodes over the head's interval.
    idle: i64,
    whole: bool,
}

impl Head {
    fn qualifies(&self, v: &Vector) -> (bool, bool) {
        let full = v.covers(&vector(self.shape.per_node));
        (
            full,
            full || self.shape.last.is_some_and(|l| v.covers(&vector(l))),
        )
    }

    fn fits(&self) -> bool {
        if self.whole {
            self.idle >= i64::from(self.shape.count)
        } else {
            self.q_full >= self.shape.full() && self.q_last >= self.shape.count
        }
    }
}

#[derive(Clone, Debug)]
pub struct EasyOnTimeline {
    tl: Timeline,
    nodes: Vec<u32>,
    heads: Vec<Head>,
    slot: Vec<u32>,
    fitting: u32,
    log: Vec<(u32, bool, bool, bool, bool)>,
    failed: Failed,
    /// The blocked job's `[shadow, shadow + requested time)`, once [`Self::block`] found it.
    window: Option<(Time, Time)>,
}

impl Default for EasyOnTimeline {
    fn default() -> Self {
        EasyOnTimeline {
            tl: Timeline::default(),
            nodes: Vec::new(),
            heads: Vec::new(),
            slot: Vec::new(),
            fitting: 0,
            log: Vec::new(),
            failed: Failed::by_duration(),
            window: None,
        }
    }
}

impl EasyOnTimeline {
    /// Starts now on `class` if `shape` fits there for `duration`: the nodes go to `self.nodes`.
    fn select_plain(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        class: u32,
        shape: &NodeShape,
        duration: Time,
    ) -> bool {
        let now = view.now;
        if !pass.may_fit(view, class, shape) {
            return false;
        }
        if self.tl.is_whole(class) {
            self.tl.idle_min(class, now, now + duration) >= i64::from(shape.count)
                && pass.select_any(view, class, shape, &mut self.nodes)
        } else {
            self.tl.select(
                view.layout,
                class,
                shape,
                now,
                duration,
                view.placement,
                &mut self.nodes,
            )
        }
    }

    /// Holds `self.nodes` of `class` for `shape` over `[now, now + duration)` in the plan and
    /// takes them in `pass`: a start now.
    fn hold(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        class: u32,
        shape: &NodeShape,
        duration: Time,
    ) {
        let now = view.now;
        self.tl.hold(class, shape, &self.nodes, now, now + duration);
        pass.take(view, class, shape, &self.nodes);
    }

    /// Resets the plan to the committed future of `view`: running jobs releasing their nodes
    /// at their predicted ends, reservations holding theirs. Forgets any blocked job.
    pub fn begin(&mut self, view: &NodeView<'_>) {
        view.committed_timeline(&mut self.tl);
        self.window = None;
    }

    /// The nodes of the last start (or of the last [`Self::fits_plain`] that found some).
    pub fn nodes(&self) -> &[u32] {
        &self.nodes
    }

    /// Whether `job` fits now for `duration` beside everything planned, on some class it may
    /// use (placement order); nothing is held.
    pub fn fits_plain(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        job: u32,
        duration: Time,
    ) -> bool {
        view.classes_of(job).iter().any(|&class| {
            view.shape(job, class)
                .is_some_and(|shape| self.select_plain(view, pass, class, &shape, duration))
        })
    }

    /// Starts `job` now for `duration` on the first class (placement order) where it fits
    /// beside everything planned: held in the plan and taken in `pass`, its nodes in
    /// [`Self::nodes`]. `None` (nothing held) when it fits nowhere.
    pub fn start_plain(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        job: u32,
        duration: Time,
    ) -> Option<(u32, NodeShape)> {
        self.start_in_first_class(view, pass, job, duration, |this, pass, class, shape| {
            this.select_plain(view, pass, class, shape, duration)
        })
    }

    /// Starts `job` for `duration` in the first of its classes where `select` chooses nodes
    /// (it leaves them in the pass), holding them; the class and shape, or `None`.
    fn start_in_first_class(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        job: u32,
        duration: Time,
        mut select: impl FnMut(&mut Self, &mut Pass, u32, &NodeShape) -> bool,
    ) -> Option<(u32, NodeShape)> {
        for &class in view.classes_of(job) {
            let Some(shape) = view.shape(job, class) else {
                continue;
            };
            if select(self, pass, class, &shape) {
                self.hold(view, pass, class, &shape, duration);
                return Some((class, shape));
            }
        }
        None
    }

    /// Holds `nodes` of `class` for `shape` from now for `duration` if that leaves everything
    /// planned in place (the nodes' free state now is the caller's to check); `false`, nothing
    /// held, when it would over-commit the plan — a reservation's nodes before it is up.
    pub fn take(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        (class, shape): (u32, &NodeShape),
        nodes: &[u32],
        duration: Time,
    ) -> bool {
        let now = view.now;
        self.tl.hold(class, shape, nodes, now, now + duration);
        if !self.tl.none_negative(class, nodes, now, now + duration) {
            self.tl.unhold(class, shape, nodes, now, now + duration);
            return false;
        }
        self.nodes.clear();
        self.nodes.extend_from_slice(nodes);
        pass.take(view, class, shape, nodes);
        true
    }

    /// Makes `head` the blocked job: its shadow time (its earliest fit beside everything
    /// planned) and, per class it may use, what is free for it over `[shadow, shadow + its
    /// requested time)`, which backfilling must leave it. `None` when it never fits.
    pub fn block(&mut self, view: &NodeView<'_>, head: u32) -> Option<Time> {
        let now = view.now;
        self.window = None;
        let head_time = view.jobs[head as usize].requested_time;
        let mut shadow: Option<Time> = None;
        for &class in view.classes_of(head) {
            if let Some(shape) = view.shape(head, class)
                && let Some(t) = self.tl.earliest(view.layout, class, &shape, now, head_time)
                && shadow.is_none_or(|s| t < s)
            {
                shadow = Some(t);
            }
        }
        let shadow = shadow?;
        let shadow_end = shadow + head_time;
        self.slot.clear();
        self.slot.resize(view.layout.classes().len(), NONE);
        self.heads.clear();
        self.fitting = 0;
        for &class in view.classes_of(head) {
            let Some(shape) = view.shape(head, class) else {
                continue;
            };
            let whole = self.tl.is_whole(class);
            let mut h = Head {
                shape,
                q_full: 0,
                q_last: 0,
                idle: 0,
                whole,
            };
            if whole {
                h.idle = self.tl.idle_min(class, shadow, shadow_end);
            } else {
                for node in view.layout.class(class).nodes.clone() {
                    let (f, l) = h.qualifies(&self.tl.node_min(node, shadow, shadow_end));
                    h.q_full += u32::from(f);
                    h.q_last += u32::from(l);
                }
            }
            self.fitting += u32::from(h.fits());
            self.slot[class as usize] = self.heads.len() as u32;
            self.heads.push(h);
        }
        self.window = Some((shadow, shadow_end));
        Some(shadow)
    }

    /// EASY's backfilling of `job` (for `duration`) against the blocked job of the last
    /// [`Self::block`]: started now, as [`Self::start_plain`], if it ends by the shadow time or
    /// leaves the blocked job able to start then, its nodes chosen to spare that job. `None`
    /// (nothing held) when it may not start, or when no job is blocked.
    pub fn backfill(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        job: u32,
        duration: Time,
    ) -> Option<(u32, NodeShape)> {
        let window @ (shadow, _) = self.window?;
        let end = view.now + duration;
        self.start_in_first_class(view, pass, job, duration, |this, pass, class, shape| {
            if end <= shadow || this.slot[class as usize] == NONE {
                this.select_plain(view, pass, class, shape, duration)
            } else if this.tl.is_whole(class) {
                this.select_long_whole(view, pass, class, shape, end, window)
            } else {
                this.select_long_shared(view, pass, class, shape, end, window)
            }
        })
    }

    /// Decides one call over the waiting jobs `queue` (in queue order, with their positions);
    /// returns the blocked head and its shadow time, if any.
    pub fn schedule(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        mut queue: impl Iterator<Item = (usize, QueuedJob)>,
        decisions: &mut Decisions,
    ) -> Option<(u32, Time)> {
        let now = view.now;
        self.begin(view);
        let head = loop {
            let (pos, q) = queue.next()?;
            match self.start_plain(view, pass, q.job, q.requested_time) {
                Some((class, _)) => decisions.start(pos, class, &self.nodes),
                None => break q.job,
            }
        };
        let shadow = self.block(view, head)?;
        self.failed.clear();
        for (pos, q) in queue {
            let end = now + q.requested_time;
            let job = &view.jobs[q.job as usize];
            if self.failed.contains(job, end > shadow) {
                continue;
            }
            match self.backfill(view, pass, q.job, q.requested_time) {
                Some((class, _)) => decisions.start(pos, class, &self.nodes),
                None => self.failed.insert(job, end > shadow),
            }
        }
        Some((head, shadow))
    }

    /// A whole-node class's idle count over the head's interval once `count` more nodes are
    /// held over `[now, end)`.
    fn select_long_whole(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        class: u32,
        shape: &NodeShape,
        end: Time,
        (shadow, shadow_end): (Time, Time),
    ) -> bool {
        let h = self.slot[class as usize] as usize;
        let overlap_end = end.min(shadow_end);
        let mut idle = self.tl.idle_min(class, shadow, overlap_end) - i64::from(shape.count);
        if end < shadow_end {
            idle = idle.min(self.tl.idle_min(class, end, shadow_end));
        }
        let before = self.heads[h].fits();
        let mut after = self.heads[h];
        after.idle = idle;
        let fitting = self.fitting + u32::from(after.fits()) - u32::from(before);
        if fitting == 0 || !self.select_plain(view, pass, class, shape, end - view.now) {
            return false;
        }
        self.heads[h] = after;
        self.fitting = fitting;
        true
    }

    /// A shared class: nodes chosen to spare the head (see [`super::shadow`]).
    fn select_long_shared(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        class: u32,
        shape: &NodeShape,
        end: Time,
        (shadow, shadow_end): (Time, Time),
    ) -> bool {
        let now = view.now;
        if !pass.may_fit(view, class, shape) {
            return false;
        }
        let h = self.slot[class as usize] as usize;
        let overlap_end = end.min(shadow_end);
        self.log.clear();
        let tl = &self.tl;
        let heads = &mut self.heads;
        let fitting = &mut self.fitting;
        let log = &mut self.log;
        let ok = tl.select_with(
            view.layout,
            class,
            shape,
            (now, end - now),
            view.placement,
            2,
            &mut |node, amount, sweep| {
                let head = &mut heads[h];
                let before = tl.node_min(node, shadow, shadow_end);
                let mut after = tl.node_min(node, shadow, overlap_end).minus(amount);
                if end < shadow_end {
                    after = after.meet(tl.node_min(node, end, shadow_end));
                }
                let (f0, l0) = head.qualifies(&before);
                let (f1, l1) = head.qualifies(&after);
                if ((f0 && !f1) || (l0 && !l1)) && sweep == 0 {
                    return false;
                }
                let was = head.fits();
                let mut next = *head;
                next.q_full = next.q_full + u32::from(f1) - u32::from(f0);
                next.q_last = next.q_last + u32::from(l1) - u32::from(l0);
                let f = *fitting + u32::from(next.fits()) - u32::from(was);
                if f == 0 {
                    return false;
                }
                *head = next;
                *fitting = f;
                log.push((node, f0, l0, f1, l1));
                true
            },
            &mut self.nodes,
        );
        if !ok {
            while let Some((_, f0, l0, f1, l1)) = self.log.pop() {
                let head = &mut self.heads[h];
                let was = head.fits();
                head.q_full = head.q_full + u32::from(f0) - u32::from(f1);
                head.q_last = head.q_last + u32::from(l0) - u32::from(l1);
                self.fitting = self.fitting + u32::from(head.fits()) - u32::from(was);
            }
        }
        ok
    }
}
