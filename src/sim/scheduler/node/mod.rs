//! Scheduling on a topology: policies that place jobs on concrete nodes.
//!
//! A [`NodeScheduler`] gets a read-only [`NodeView`] — the layout, every node's free vector, the
//! queue, the running jobs with their nodes, the advance reservations — and returns
//! [`Decisions`]: which queued jobs start now, on which class and which nodes. The engine checks
//! every decision (eligible class, the job's shape there, distinct nodes of that class, nothing
//! over-allocated) and applies it (STYLE.md item 6).
//!
//! A policy is a queue order ([`super::order`]) × a backfilling rule (FCFS, EASY, conservative,
//! aggressive) × a [`Placement`]; docs/semantics.md states each rule on nodes.

mod aggressive;
mod aleang;
mod bounds;
mod call_order;
mod carry;
mod conservative;
mod easy;
pub(crate) mod easy_timeline;
mod fcfs;
pub(crate) mod free_counts;
mod no_fit;
pub(crate) mod pass;
mod request_shapes;
pub(crate) mod shadow;
mod starts_now;
mod waiting;

pub use aggressive::NodeAggressive;
pub use aleang::{AleangAggressive, AleangParts};
pub use conservative::NodeConservative;
pub use easy::NodeEasy;
pub use fcfs::NodeFcfs;
pub use pass::Pass;

use std::ops::Range;

use super::SchedulerKind;
use super::order::{QueueOrder, Submission};
use crate::sim::job::{Job, Time};
use crate::sim::limits::LimitState;
use crate::sim::queue::Queue;
use crate::sim::running::RunningSet;
use crate::sim::topology::{
    FreeNodes, JobRequest, Layout, NodeShape, Placement, RequestTable, Timeline,
};

/// Where a running job is: its class, its shape there, and its nodes (the first
/// `shape.full()` take `shape.per_node`, a last one `shape.last`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alloc {
    pub class: u32,
    pub shape: NodeShape,
    pub nodes: Vec<u32>,
}

/// A granted advance reservation on a topology: `count` whole nodes of `class` over
/// `[start, end)`. On a shared class its nodes are chosen when it is granted; on a whole-node
/// class (interchangeable nodes) when it starts — `nodes` is empty until then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeReservation {
    pub start: Time,
    pub end: Time,
    pub class: u32,
    pub count: u32,
    pub nodes: Vec<u32>,
}

impl NodeReservation {
    /// The shape it holds: whole nodes of its class.
    pub fn shape(&self, layout: &Layout) -> NodeShape {
        NodeShape {
            count: self.count,
            per_node: layout.class(self.class).capacity.per_node,
            last: None,
            whole: true,
        }
    }
}

/// A job that completed since the previous scheduler call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completed {
    pub job: u32,
    /// start + requested time: an earlier completion is *early*.
    pub expected_end: Time,
    pub end: Time,
}

/// What a node-level policy may look at. Borrowed from the engine; never mutated.
pub struct NodeView<'a> {
    pub now: Time,
    pub layout: &'a Layout,
    /// Every node's free vector now, indexed per class.
    pub free: &'a FreeNodes,
    pub placement: Placement,
    /// The workload's jobs, by index.
    pub jobs: &'a [Job],
    /// The requests they refer to (`Job::request`).
    pub requests: &'a RequestTable,
    /// Per constraint id: the eligible classes in placement order (empty: nowhere).
    pub eligible: &'a [Vec<u32>],
    /// Waiting jobs in submission order, read like a slice (`len`, `queue[pos]`, `iter`).
    pub queue: &'a Queue,
    /// Running jobs in order of expected termination.
    pub running: &'a RunningSet,
    /// Per job index: its nodes while it runs.
    pub allocs: &'a [Option<Alloc>],
    /// Jobs that completed since the previous call.
    pub completed: &'a [Completed],
    /// Granted advance reservations not yet over, by start.
    pub reservations: &'a [NodeReservation],
    /// Changes whenever a reservation is granted, or held jobs become eligible out of
    /// submission order (queue limits): a plan kept between calls must then be rebuilt.
    pub reservations_epoch: u64,
    /// With queues and limits: their run state (each job's queue, the jobs they hold). The
    /// built-in rules never read it (the engine has filtered `queue` already); a policy of the
    /// decision interface shows it ([`crate::sim::policy`]).
    pub limits: Option<&'a LimitState<'a>>,
}

impl NodeView<'_> {
    /// As [`super::View::predicted_end`]: a job overrunning its request is predicted to end one
    /// second from now.
    #[inline]
    pub fn predicted_end(&self, expected_end: Time) -> Time {
        expected_end.max(self.now + 1)
    }

    /// The classes `job` may run on, in placement order.
    #[inline]
    pub fn classes_of(&self, job: u32) -> &[u32] {
        let c = self.request(job).constraint.0 as usize;
        self.eligible.get(c).map_or(&[], Vec::as_slice)
    }

    /// What `job` asks of the topology.
    #[inline]
    pub fn request(&self, job: u32) -> &'_ JobRequest {
        self.requests.get(self.jobs[job as usize].request)
    }

    /// `job`'s shape on `class`, if it fits an empty class.
    #[inline]
    pub fn shape(&self, job: u32, class: u32) -> Option<NodeShape> {
        let procs = self.jobs[job as usize].procs;
        self.layout.shape(self.request(job), procs, class).ok()
    }

    /// The nodes of a running job.
    #[inline]
    pub fn alloc(&self, job: u32) -> &Alloc {
        self.allocs[job as usize]
            .as_ref()
            .expect("running jobs have an allocation")
    }

    /// Resets `tl` to the committed future: the free state now, running jobs releasing their
    /// nodes at their predicted ends, started reservations at their ends, and reservations to
    /// come holding their nodes.
    pub fn committed_timeline(&self, tl: &mut Timeline) {
        tl.reset(self.layout, self.now, self.free);
        for r in self.running.iter() {
            let a = self.alloc(r.job);
            tl.release(
                a.class,
                &a.shape,
                &a.nodes,
                self.predicted_end(r.expected_end),
            );
        }
        for w in self.reservations {
            let shape = w.shape(self.layout);
            if w.start <= self.now {
                tl.release(w.class, &shape, &w.nodes, w.end);
            } else {
                tl.hold(w.class, &shape, &w.nodes, w.start, w.end);
            }
        }
    }
}

/// One decision: start the job at queue position `pos` on `class`, on the nodes
/// [`Decisions::nodes`] gives for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Start {
    pub pos: usize,
    pub class: u32,
    nodes: Range<u32>,
}

/// What a node-level policy returns: jobs to start now, each on named nodes.
#[derive(Clone, Debug, Default)]
pub struct Decisions {
    starts: Vec<Start>,
    nodes: Vec<u32>,
}

impl Decisions {
    pub fn clear(&mut self) {
        self.starts.clear();
        self.nodes.clear();
    }

    /// Starts queue position `pos` on `nodes` of `class` (in the order of the job's shape: full
    /// nodes first, the last node last).
    pub fn start(&mut self, pos: usize, class: u32, nodes: &[u32]) {
        let from = self.nodes.len() as u32;
        self.nodes.extend_from_slice(nodes);
        self.starts.push(Start {
            pos,
            class,
            nodes: from..self.nodes.len() as u32,
        });
    }

    pub fn starts(&self) -> &[Start] {
        &self.starts
    }

    pub fn nodes(&self, start: &Start) -> &[u32] {
        &self.nodes[start.nodes.start as usize..start.nodes.end as usize]
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
}

/// A node-level scheduling policy: `schedule` appends its decisions in the order it made them;
/// the engine applies them as [`crate::sim::scheduler::Scheduler`]'s (a prefix under CPU
/// quotas) and reports each start made with `started`.
pub trait NodeScheduler {
    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions);

    /// `job` started at `now` on a node of `class` by this call's decisions.
    fn started(&mut self, now: Time, job: u32, class: u32);

    /// A failure of the last call that must stop the run (a policy of the decision interface
    /// on a topology, [`crate::sim::policy::NodePolicyScheduler`], that raised or decided the
    /// impossible). The built-in rules never fail.
    fn failure(&mut self) -> Option<crate::sim::SimError> {
        None
    }

    /// As [`super::Scheduler::suspended`]: the last call was suspended rather than decided (it
    /// decided nothing) and wants to be called again at the same instant with the same view,
    /// once the driver of a [`crate::sim::engine::Stepped`] run has given it what it waits for.
    /// The built-in rules never suspend.
    fn suspended(&mut self) -> bool {
        false
    }
}

/// The built-in backfilling rule `kind` on nodes, over the submission order.
pub fn build(kind: SchedulerKind) -> Box<dyn NodeScheduler> {
    build_ordered(kind, Box::new(Submission))
}

/// The built-in backfilling rule `kind` over a given queue order.
pub fn build_ordered(kind: SchedulerKind, order: Box<dyn QueueOrder>) -> Box<dyn NodeScheduler> {
    match kind {
        SchedulerKind::Fcfs => Box::new(NodeFcfs::new(order)),
        SchedulerKind::Easy => Box::new(NodeEasy::new(order)),
        SchedulerKind::Conservative => Box::new(NodeConservative::new(order)),
        SchedulerKind::Aggressive => Box::new(NodeAggressive::new(order)),
    }
}
