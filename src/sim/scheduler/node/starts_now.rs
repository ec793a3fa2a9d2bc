//! Whether a queued job can start now, for node-level conservative's placements left to the
//! next call ([`super::NodeConservative`], module documentation "Placements left to the next
//! call"): a job placed at a call is read at the next one only if that call's order keeps it, so
//! once no job left to place can start now, the rest are admitted unplaced.
//!
//! A job starts now exactly when its shape fits over `[now, now + requested)` on one of its
//! classes, which [`StartsNow::may_start`] checks as [`Timeline::fits`] does, but node by node
//! only on the nodes of a shared class that had a free core when the pass began (placing jobs
//! only takes capacity, so no other node can take a job with a core later in the pass), and on
//! a grouped class once per group of nodes that share a step function, counted as many times as
//! it has members: a test then costs the class's distinct futures, not its nodes (at 50,000
//! nodes in fairshare order this test was 94 % of the run when it walked the nodes). A shape of
//! whole nodes is first tested against the class's count of idle nodes
//! ([`Timeline::too_few_idle`]): too few somewhere in the window answers no without reading a
//! group (session 40: −4 % of the instructions at 500 nodes in fairshare order). [`Cut`]
//! finds, as the pass goes, where the jobs none of which can start now begin: each job is
//! tested once on the way back from the last, and the last one that may start once more before
//! each placement, so the pass stops as soon as the jobs it placed took what that one needed.

use super::NodeView;
use crate::sim::job::Time;
use crate::sim::topology::Timeline;
use crate::sim::topology::steps::{Amount, Vector, vector};
use crate::sim::topology::timeline::node_takes;

/// The nodes of each shared class not grouped with a free core at the start of a pass (built
/// when first asked).
#[derive(Debug, Default)]
pub struct StartsNow {
    built: bool,
    roomy: Vec<Vec<u32>>,
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
            let (need_full, need_all) = (shape.full() as usize, shape.count as usize);
            // What a node with this function can take (bits: the full amount, either).
            let takes = |min: Option<Vector>| node_takes(min, &full, last.as_ref());
            let (mut q_full, mut q_all) = (0, 0);
            // Too few idle nodes for a shape of whole nodes: no group need be read.
            if tl.too_few_idle(class, &shape, now, end - now) {
                continue;
            }
            if let Some(functions) = tl.grouped_functions(class) {
                // Once per group: a node with no free core now takes nothing, so reading every
                // group counts what the roomy nodes alone would.
                for (steps, members) in functions {
                    let takes = takes(steps.min_over_covering(now, end, &floor));
                    q_full += members * usize::from(takes & 1);
                    q_all += members * usize::from(takes >> 1);
                    if q_full >= need_full && q_all >= need_all {
                        return true;
                    }
                }
                continue;
            }
            // A class not grouped has a function per node: nothing to read once for several.
            for &node in &self.roomy[class as usize] {
                let takes = takes(tl.node_min_covering(node, now, end, &floor));
                q_full += usize::from(takes & 1);
                q_all += usize::from(takes >> 1);
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
            // A grouped class is read group by group, without the list.
            if !tl.is_whole(c as u32) && tl.grouped_functions(c as u32).is_none() {
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
/// can start now begin. Tests from the last job back until one may start; that job, the
/// candidate, is tested again before the next placement once a job was held where it could
/// take what the candidate needs (from before the candidate's window ends), and once the jobs
/// placed before it took that, the scan goes on back from it. Capacity only shrinks, so a job
/// found unable stays unable, and the pass stops at the first job after which none can start.
///
/// Testing the candidate only when the pass reached it (sessions 25–37) placed every job up to
/// it even when the first few placements had already blocked it: at 500 nodes of the Curie
/// window in fairshare order, 108,637 of the 142,334 placements came after the last job that
/// started at their call (BENCHMARKS.md, "the cut found as soon as the candidate is blocked").
#[derive(Debug)]
pub struct Cut {
    /// Every job from here on was found unable to start now.
    scan: usize,
    /// The job at `scan - 1` was found able to start now, and nothing held since starts
    /// before its window ends.
    able: bool,
}

impl Cut {
    pub fn new(len: usize) -> Self {
        Cut {
            scan: len,
            able: false,
        }
    }

    /// Whether none of the jobs from `i` on can start now (`i` increasing from 0 between
    /// calls, capacity only shrinking). `may_start(j)`: whether job `j` can start now over the
    /// present capacity.
    pub fn defers(&mut self, i: usize, mut may_start: impl FnMut(usize) -> bool) -> bool {
        while i < self.scan {
            if self.able || may_start(self.scan - 1) {
                self.able = true;
                return false;
            }
            self.scan -= 1;
        }
        true
    }

    /// A job was held from `start` on. `window_end(j)`: where job `j`'s window from now ends
    /// (now plus its requested time); a hold from there on cannot take what it needs now.
    pub fn held(&mut self, start: Time, window_end: impl FnOnce(usize) -> Time) {
        if self.able && start < window_end(self.scan - 1) {
            self.able = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::job::{Job, Time};
    use crate::sim::machine::{Allocation, TopologyMachine};
    use crate::sim::queue::Queue;
    use crate::sim::resources::ResourceVec;
    use crate::sim::running::RunningSet;
    use crate::sim::topology::{
        Cluster, FreeNodes, JobRequest, Layout, NodeClass, NodeDemand, NodeShape, Placement,
        RequestTable, Shape, Topology,
    };

    /// Over a pass that only takes capacity (holds), `may_start` says what `Timeline::fits`
    /// says, on a class whose nodes are grouped by step function (read once per group) and on
    /// the same class searched node by node (its roomy nodes): node requests whose last node
    /// takes less, flexible requests, requests of no core, requests of whole nodes that the
    /// idle-node count rules out.
    #[test]
    fn may_start_answers_as_fits_while_capacity_only_shrinks() {
        let layout = Layout::new(&TopologyMachine::new(Topology::new(vec![Cluster::new(
            "s",
            Allocation::Shared,
            vec![NodeClass::new("n", 10, 8, 16)],
        )])))
        .unwrap();
        let mut rand = crate::sim::topology::test_rand(0x5eed);
        // Jobs of every kind, each asking for its own request.
        let mut requests = RequestTable::default();
        let mut jobs = Vec::new();
        for i in 0..60 {
            let request = if i % 3 == 0 {
                JobRequest {
                    memory_kb: rand(3) * 1024 * 1024,
                    ..JobRequest::default()
                }
            } else {
                JobRequest {
                    shape: Shape::Nodes {
                        count: 1 + rand(5) as u32,
                        per_node: NodeDemand {
                            cores: rand(9) as u32,
                            memory_kb: rand(4) * 2 * 1024 * 1024,
                            gpus: 0,
                        },
                    },
                    ..JobRequest::default()
                }
            };
            jobs.push(Job {
                id: i + 1,
                procs: 1 + rand(40) as u32,
                requested_time: 10 + rand(90) as Time,
                request: requests.push(request),
                ..Job::default()
            });
        }
        let eligible = vec![vec![0u32]];
        let (queue, running) = (Queue::default(), RunningSet::default());
        let (mut grouped_answers, mut started, mut ruled_out) = (0, 0, 0);
        for round in 0..200 {
            let mut free = FreeNodes::new(&layout);
            for node in 0..layout.node_count() {
                if rand(3) == 0 {
                    free.take(node, ResourceVec([1 + rand(8), 0, 0])).unwrap();
                }
            }
            let now = 5;
            let view = NodeView {
                now,
                layout: &layout,
                free: &free,
                placement: Placement::FirstFit,
                jobs: &jobs,
                requests: &requests,
                eligible: &eligible,
                queue: &queue,
                running: &running,
                allocs: &[],
                completed: &[],
                reservations: &[],
                reservations_epoch: 0,
                limits: None,
            };
            let mut tl = if round % 2 == 0 {
                Timeline::default()
            } else {
                Timeline::grouping_nothing()
            };
            tl.reset(&layout, now, &free);
            let grouped = tl.grouped_functions(0).is_some();
            assert_eq!(grouped, round % 2 == 0);
            let mut starts = StartsNow::default();
            starts.clear();
            for _ in 0..40 {
                // A hold where it fits, as a pass places a job: on a run of nodes (neighbours
                // then share a function) or on one.
                let first = rand(10) as u32;
                let count = 1 + rand(3) as u32;
                let nodes: Vec<u32> = (first..(first + count).min(10)).collect();
                let cores = 1 + rand(8);
                let shape = NodeShape {
                    count: nodes.len() as u32,
                    per_node: ResourceVec([cores, 0, 0]),
                    last: None,
                    whole: false,
                };
                let from = now + rand(60) as Time;
                let to = from + 1 + rand(60) as Time;
                if nodes
                    .iter()
                    .all(|&n| tl.node_min(n, from, to)[0] >= cores as i64)
                {
                    tl.hold(0, &shape, &nodes, from, to);
                }
                let job = rand(jobs.len() as u64) as u32;
                let truth = view.shape(job, 0).is_some_and(|shape| {
                    tl.fits(&layout, 0, &shape, now, jobs[job as usize].requested_time)
                });
                assert_eq!(
                    starts.may_start(&tl, &view, job),
                    truth,
                    "job {job} of {:?}, grouped: {grouped}",
                    requests.get(jobs[job as usize].request)
                );
                grouped_answers += usize::from(grouped);
                started += usize::from(truth);
                // Jobs of whole nodes that the idle-node count alone answers.
                ruled_out += usize::from(view.shape(job, 0).is_some_and(|shape| {
                    tl.too_few_idle(0, &shape, now, jobs[job as usize].requested_time)
                }));
            }
        }
        // Both answers were common.
        assert!(
            grouped_answers > 3000 && started > 1000 && started < 7000 && ruled_out > 100,
            "{started} of 8,000 could start, {ruled_out} ruled out by the idle count"
        );
    }

    /// A pass of six jobs on two free units, each job taking one and able to start while one
    /// is left: job 4 is the last that may start, and once jobs 0 and 1 are placed (both
    /// units taken) nothing may. The cut falls right after job 1's placement, not when the
    /// pass reaches job 4; a pass whose placements take nothing reaches job 5; one whose holds
    /// all start after the candidate's window asks it once.
    #[test]
    fn the_cut_falls_as_soon_as_the_candidate_is_blocked() {
        let able = [false, true, false, true, true, false];
        // Each job's window from now ends at 10.
        let run = |takes: bool, held_from: Time| {
            let mut free = 2;
            let mut tests = Vec::new();
            let mut cut = Cut::new(able.len());
            for i in 0..able.len() {
                if cut.defers(i, |j| {
                    tests.push(j);
                    able[j] && free > 0
                }) {
                    return (i, tests);
                }
                if takes {
                    free -= 1;
                }
                cut.held(held_from, |_| 10);
            }
            (able.len(), tests)
        };
        // 5 is unable and 4 may; before jobs 0 and 1 it still may, before job 2 it may not,
        // nor may 3 or 2: the rest begin at job 2.
        assert_eq!(run(true, 0), (2, vec![5, 4, 4, 4, 3, 2]));
        // Nothing taken: job 4 is tested before each placement up to its own, and the rest
        // begin at job 5.
        assert_eq!(run(false, 9), (5, vec![5, 4, 4, 4, 4, 4]));
        // Holds from the window's end on cannot block job 4: it is not asked again.
        assert_eq!(run(false, 10), (5, vec![5, 4]));
    }
}
