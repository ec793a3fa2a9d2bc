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

    /// Starts queue position `pos` on `self.nodes` of `class` for `duration`.
    fn commit(
        &mut self,
        view: &NodeView<'_>,
        pass: &mut Pass,
        decisions: &mut Decisions,
        (pos, class, shape, duration): (usize, u32, &NodeShape, Time),
    ) {
        let now = view.now;
        self.tl.hold(class, shape, &self.nodes, now, now + duration);
        pass.take(view, class, shape, &self.nodes);
        decisions.start(pos, class, &self.nodes);
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
        view.committed_timeline(&mut self.tl);
        let head = 'head: loop {
            let (pos, q) = queue.next()?;
            for &class in view.classes_of(q.job) {
                let Some(shape) = view.shape(q.job, class) else {
                    continue;
                };
                if self.select_plain(view, pass, class, &shape, q.requested_time) {
                    let start = (pos, class, &shape, q.requested_time);
                    self.commit(view, pass, decisions, start);
                    continue 'head;
                }
            }
            break q.job;
        };
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
        self.failed.clear();
        'queue: for (pos, q) in queue {
            let end = now + q.requested_time;
            let job = &view.jobs[q.job as usize];
            if self.failed.contains(job, end > shadow) {
                continue;
            }
            for &class in view.classes_of(q.job) {
                let Some(shape) = view.shape(q.job, class) else {
                    continue;
                };
                let slot = self.slot[class as usize];
                let ok = if end <= shadow || slot == NONE {
                    self.select_plain(view, pass, class, &shape, q.requested_time)
                } else if self.tl.is_whole(class) {
                    self.select_long_whole(view, pass, class, &shape, end, (shadow, shadow_end))
                } else {
                    self.select_long_shared(view, pass, class, &shape, end, (shadow, shadow_end))
                };
                if ok {
                    self.commit(
                        view,
                        pass,
                        decisions,
                        (pos, class, &shape, q.requested_time),
                    );
                    continue 'queue;
                }
            }
            self.failed.insert(job, end > shadow);
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
