//! Per grouped shared class ([`super::node_groups`]), how many of its nodes are idle — every
//! core free — at each time: one step function of a count, kept up to date by every change of
//! a node's free vector, so that a search for a shape taking whole nodes first asks the count
//! (issue 36: "counts by class and free amount"). Classes too small to be grouped are not
//! counted: a search over them costs little, and the upkeep would cost more.
//!
//! A node can take `per_node` of a shape whose full nodes take every core of a node only over
//! a window where it is idle throughout. So a window where `full` nodes take the shape's full
//! amount has, at every instant, at least `full` idle nodes: the count's earliest window with
//! that many is a lower bound on the shape's earliest fit, and no such window means no fit.
//! It is a bound, not the answer: the count does not tell whether the same nodes stay idle
//! over the whole window, nor whether an idle node has the memory (a hold of no core). A node
//! counts as idle at "at least every core free", so that a transiently over-released function
//! (tests build them; the engine's never are) keeps the bound sound.

use super::layout::Layout;
use super::request::NodeShape;
use super::steps::{Steps, Vector, vector};
use crate::sim::job::Time;

/// One shared class's count.
#[derive(Clone, Debug, Default)]
struct ClassIdle {
    count: Steps<i64>,
    /// A node's cores (0: the class is not counted).
    cores: i64,
}

#[derive(Clone, Debug, Default)]
pub struct IdleNodes {
    /// Per class (a class not counted has `cores` 0).
    per_class: Vec<ClassIdle>,
}

impl IdleNodes {
    /// Starts counting afresh at `now` on the shared classes marked in `counted` (the others
    /// are never counted): every count is 0 until [`IdleNodes::count`] has been told each
    /// node's free vector (a reset already finds the distinct ones).
    pub fn reset(&mut self, layout: &Layout, counted: &[bool], now: Time) {
        let classes = layout.classes();
        self.per_class
            .resize_with(classes.len(), ClassIdle::default);
        for (c, class) in classes.iter().enumerate() {
            let idle = &mut self.per_class[c];
            idle.cores = if counted[c] {
                vector(class.capacity.per_node)[0]
            } else {
                0
            };
            idle.count.reset(now, 0);
        }
    }

    /// Counts `members` nodes of `class` free by `free` at the reset's `now`.
    #[inline]
    pub fn count(&mut self, class: u32, free: &Vector, members: u32) {
        let idle = &mut self.per_class[class as usize];
        if idle.cores > 0 && free[0] >= idle.cores {
            let now = idle.count.start();
            let n = idle.count.at(now);
            idle.count.reset(now, n + i64::from(members));
        }
    }

    /// Accounts for `delta` about to be added over `[from, to)` (`None`: forever) to `steps`,
    /// a function that `members` nodes of `class` share, advanced to `now` (nothing before it
    /// is read): each piece of the window whose value turns idle or busy moves the count.
    pub fn note(
        &mut self,
        class: u32,
        steps: &Steps<Vector>,
        (from, to): (Time, Option<Time>),
        delta: Vector,
        members: u32,
        now: Time,
    ) {
        let Some(idle) = self.per_class.get_mut(class as usize) else {
            return;
        };
        if idle.cores == 0 || delta[0] == 0 {
            return;
        }
        idle.count.advance(now);
        let cores = idle.cores;
        let count = &mut idle.count;
        steps.for_each_segment((from.max(now), to), |a, b, v| {
            let (was, will) = (v[0] >= cores, v[0] + delta[0] >= cores);
            if was != will {
                let sign = if will { 1 } else { -1 };
                count.add(a, b, sign * i64::from(members));
            }
        });
    }

    /// A lower bound on the earliest `t` in `[from, before)` at which `shape` fits on `class`
    /// over `[t, min(t + duration, clip))`: `from` when the count tells nothing (a class not
    /// counted, or a shape not taking whole nodes), `None` when no window of the count has
    /// enough idle nodes.
    pub fn bound(
        &self,
        class: u32,
        shape: &NodeShape,
        (from, before): (Time, Time),
        duration: Time,
        clip: Time,
    ) -> Option<Time> {
        let Some(idle) = self.per_class.get(class as usize) else {
            return Some(from);
        };
        let full = shape.full();
        if idle.cores == 0 || full == 0 || vector(shape.per_node)[0] < idle.cores {
            return Some(from);
        }
        idle.count
            .earliest_fit_within(from, before, duration, clip, &i64::from(full))
    }

    /// Idle nodes of `class` at `t`, if counted (for tests).
    #[cfg(test)]
    pub fn at(&self, class: u32, t: Time) -> Option<i64> {
        let idle = &self.per_class[class as usize];
        (idle.cores > 0).then(|| idle.count.at(t))
    }
}

#[cfg(test)]
mod tests {
    use super::super::cluster::{Cluster, NodeClass, Topology};
    use super::super::node_groups::NodeGroups;
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};
    use crate::sim::resources::ResourceVec;

    /// A shared class of 7 nodes and one of 3, 8 cores and 16 (memory) each.
    fn layout() -> Layout {
        Layout::new(&TopologyMachine::new(Topology::new(vec![Cluster::new(
            "s",
            Allocation::Shared,
            vec![NodeClass::new("a", 7, 8, 16), NodeClass::new("b", 3, 8, 16)],
        )])))
        .unwrap()
    }

    fn whole_nodes(count: u32, last: Option<u64>) -> NodeShape {
        NodeShape {
            count,
            per_node: ResourceVec([8, 4, 0]),
            last: last.map(|l| ResourceVec([l, 1, 0])),
            whole: false,
        }
    }

    /// On random holds that fit (runs and scattered nodes, some of every core), give-backs of
    /// them and releases of the nodes busy at the reset, over grouped and ungrouped functions
    /// as the present moves: the count at every time is the number of nodes whose function
    /// has every core free then; and its bound for a shape of whole nodes is never after the
    /// earliest start at which that many nodes have every core free over the window (read
    /// node by node), and `None` only when there is none.
    #[test]
    fn the_count_is_the_nodes_with_every_core_free() {
        let l = layout();
        let mut rand = super::super::test_rand(0x1d1e);
        for round in 0..200 {
            let group_from = if round % 2 == 0 { 1 } else { u32::MAX };
            // Some nodes busy at the reset, released later.
            let busy: Vec<i64> = (0..10).map(|_| [0, 0, 3, 8][rand(4) as usize]).collect();
            let start = |n: u32| -> Vector { [8 - busy[n as usize], 16, 0] };
            let mut groups = NodeGroups::default();
            groups.reset(&l, &[false, false], group_from, 0, 1, start);
            let mut now = 0;
            let mut holds: Vec<(u32, Vec<u32>, Time, Time, Vector)> = Vec::new();
            let mut releases: Vec<u32> = (0..10).filter(|&n| busy[n as usize] > 0).collect();
            for _ in 0..40 {
                match rand(5) {
                    0 => now += rand(20) as Time,
                    1 if !holds.is_empty() => {
                        let (c, nodes, from, to, d) =
                            holds.swap_remove(rand(holds.len() as u64) as usize);
                        let back = d.map(|x| -x);
                        groups.add(c, &nodes, (from.max(now), Some(to)), back, now, None);
                    }
                    2 if !releases.is_empty() => {
                        let n = releases.swap_remove(rand(releases.len() as u64) as usize);
                        let at = now + rand(50) as Time;
                        let class = u32::from(n >= 7);
                        let d = [busy[n as usize], 0, 0];
                        groups.add(class, &[n], (at, None), d, now, None);
                    }
                    _ => {
                        let class = rand(2) as u32;
                        let range = l.class(class).nodes.clone();
                        let nodes: Vec<u32> = if rand(2) == 0 {
                            let first = range.start + rand(u64::from(range.len() as u32)) as u32;
                            (first..(first + 1 + rand(4) as u32).min(range.end)).collect()
                        } else {
                            range.clone().filter(|_| rand(2) == 0).collect()
                        };
                        let cores = if rand(2) == 0 { 8 } else { 1 + rand(7) as i64 };
                        let d = [-cores, -(rand(3) as i64), 0];
                        let from = now + rand(40) as Time;
                        let to = from + 1 + rand(60) as Time;
                        let fits = nodes.iter().all(|&n| {
                            let m = groups.steps_of(n).min_over(from, to);
                            m[0] >= cores && m[1] >= -d[1]
                        });
                        if fits && !nodes.is_empty() {
                            groups.add(class, &nodes, (from, Some(to)), d, now, None);
                            holds.push((class, nodes, from, to, d));
                        }
                    }
                }
                for class in 0..2u32 {
                    let range = l.class(class).nodes.clone();
                    let idle_at = |t: Time| {
                        range
                            .clone()
                            .filter(|&n| groups.steps_of(n).at(t)[0] == 8)
                            .count() as i64
                    };
                    // Counted on grouped classes only.
                    let counted = group_from == 1;
                    for t in (now..now + 120).step_by(3) {
                        let want = counted.then(|| idle_at(t));
                        assert_eq!(groups.idle().at(class, t), want, "at {t}");
                    }
                    let count = 1 + rand(u64::from(range.len() as u32)) as u32;
                    let last = (rand(2) == 0).then(|| 1 + rand(7));
                    let shape = whole_nodes(count, last);
                    let (from, duration) = (now + rand(30) as Time, 1 + rand(40) as Time);
                    // Every core free on `full` nodes over the window, node by node.
                    let fits = |t: Time| {
                        range
                            .clone()
                            .filter(|&n| groups.steps_of(n).min_over(t, t + duration)[0] == 8)
                            .count() as u32
                            >= shape.full()
                    };
                    let want = (from..from + 300).find(|&t| fits(t));
                    let bound =
                        groups
                            .idle()
                            .bound(class, &shape, (from, Time::MAX), duration, Time::MAX);
                    match (bound, want) {
                        (Some(b), Some(w)) => assert!(b <= w, "{b} after {w}"),
                        (None, Some(w)) => panic!("no bound, but a fit at {w}"),
                        _ => {}
                    }
                }
            }
        }
    }

    /// Holds of every core make nodes busy and their give-backs idle again; a hold of memory
    /// alone leaves the count as it is (the bound is still sound: a node short of memory does
    /// not take the shape either), as does a hold of some cores on a busy node.
    #[test]
    fn holds_of_every_core_move_the_count() {
        let l = layout();
        let mut groups = NodeGroups::default();
        groups.reset(&l, &[false, false], 1, 0, 1, |n| {
            [8 - i64::from(n == 6), 16, 0]
        });
        assert_eq!(groups.idle().at(0, 5), Some(6));
        groups.add(0, &[0, 1], (0, Some(10)), [-8, -4, 0], 0, None);
        assert_eq!(
            (groups.idle().at(0, 5), groups.idle().at(0, 10)),
            (Some(4), Some(6))
        );
        let shape = whole_nodes(5, None);
        let bound = |g: &NodeGroups| g.idle().bound(0, &shape, (0, 100), 5, 100);
        assert_eq!(bound(&groups), Some(10), "5 idle nodes from 10");
        groups.add(0, &[2], (0, Some(20)), [0, -4, 0], 0, None);
        groups.add(0, &[0], (5, Some(10)), [0, -1, 0], 0, None);
        groups.add(0, &[1], (0, Some(10)), [0, 0, 0], 0, None);
        assert_eq!(groups.idle().at(0, 5), Some(4));
        groups.add(0, &[6], (0, None), [1, 0, 0], 0, None);
        assert_eq!(groups.idle().at(0, 5), Some(5));
        assert_eq!(bound(&groups), Some(0), "5 idle nodes from 0");
        groups.add(0, &[3, 4], (12, Some(30)), [-3, 0, 0], 0, None);
        assert_eq!(groups.idle().at(0, 12), Some(5));
        // [10, 12) has 7; from 12 on, 5 until 30: a window of 5 from 10 fits only from 12.
        assert_eq!(
            groups
                .idle()
                .bound(0, &whole_nodes(7, Some(2)), (0, 100), 5, 100),
            Some(30)
        );
        assert_eq!(
            groups
                .idle()
                .bound(0, &whole_nodes(7, None), (0, 30), 5, 100),
            None
        );
        // The other class and a shape of fewer cores are not bounded.
        assert_eq!(groups.idle().at(1, 5), Some(3));
        let partial = NodeShape {
            per_node: ResourceVec([4, 0, 0]),
            ..whole_nodes(7, None)
        };
        assert_eq!(groups.idle().bound(0, &partial, (3, 100), 5, 100), Some(3));
    }
}
