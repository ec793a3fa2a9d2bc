//! What a [`super::Policy`] sees of a topology (docs/policies.md, "On a topology"): the nodes
//! as columns (cluster, class, capacity, free now), each waiting job's shape on a node as the
//! engine resolves it, the nodes a job may use, and the [`Placer`] — the built-in node-level
//! rules' own node choice (the machine's placement, EASY's shadow time and its backfilling on
//! nodes) as a scratch pad for one call.
//!
//! [`TopologyView`] is a snapshot the adapter ([`super::NodePolicyScheduler`]) fills at each
//! call from the engine's [`NodeView`]: the per-run tables (layout, eligibility, requests,
//! constraints) shared, the free vectors copied, and the waiting and running jobs renumbered
//! locally — waiting row `k` is local job `k`, running row `k` local job `waiting + k` — so
//! that the node-level rules' code ([`Pass`], EASY's [`Shadow`]) runs on it unchanged and a
//! policy built on the helpers reproduces the native schedules exactly.

use std::sync::Arc;

use super::NodeStart;
use crate::sim::job::{Job, Time};
use crate::sim::queue::Queue;
use crate::sim::resources::ResourceVec;
use crate::sim::running::{RunningJob, RunningSet};
use crate::sim::scheduler::node::easy_timeline::EasyOnTimeline;
use crate::sim::scheduler::node::shadow::{Shadow, Started};
use crate::sim::scheduler::node::{Alloc, NodeReservation, NodeView, Pass};
use crate::sim::topology::{
    ConstraintTable, FreeNodes, Layout, NodeShape, Placement, RequestTable,
};

/// The nodes, one entry per node in every column, by node index (nodes are numbered
/// consecutively class by class, classes in topology order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Nodes {
    /// Index of the node's cluster (into [`TopologyView::clusters`]).
    pub cluster: Vec<i64>,
    /// Index of the node's class (a cluster's nodes of one kind).
    pub class: Vec<i64>,
    /// Capacity: cores, memory (KB), GPUs.
    pub cores: Vec<i64>,
    pub memory_kb: Vec<i64>,
    pub gpus: Vec<i64>,
    /// Free now (before this call's starts).
    pub free_cores: Vec<i64>,
    pub free_memory_kb: Vec<i64>,
    pub free_gpus: Vec<i64>,
    /// 1 where jobs take whole nodes (an exclusive cluster), else 0.
    pub exclusive: Vec<i64>,
}

impl Nodes {
    pub fn len(&self) -> usize {
        self.cluster.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cluster.is_empty()
    }
}

/// A job's shape on a node's class, as the engine resolves it: `count` nodes taking
/// `per_node` each, except the last, which takes `last` when set.
pub type JobShape = NodeShape;

/// One call's view of a topology (see the module documentation).
#[derive(Clone, Debug)]
pub struct TopologyView {
    pub now: Time,
    pub nodes: Nodes,
    /// Cluster names, by cluster index.
    pub clusters: Vec<String>,
    /// The machine's placement: how the engine (and [`Placer::place`]) chooses nodes.
    pub placement: Placement,
    layout: Arc<Layout>,
    eligible: Arc<Vec<Vec<u32>>>,
    requests: Arc<RequestTable>,
    constraints: Arc<ConstraintTable>,
    free: FreeNodes,
    /// Local jobs: the waiting rows, then the running rows.
    jobs: Vec<Job>,
    waiting: usize,
    running: RunningSet,
    allocs: Vec<Option<Alloc>>,
    queue: Queue,
    /// Granted advance reservations not yet over, by start (whole nodes of one class).
    reservations: Vec<NodeReservation>,
}

impl TopologyView {
    /// The per-run part of the view, from the engine's first call and the workload's tables.
    pub(super) fn new(
        view: &NodeView<'_>,
        requests: Arc<RequestTable>,
        constraints: Arc<ConstraintTable>,
    ) -> Self {
        let layout = view.layout;
        let mut nodes = Nodes::default();
        for node in 0..layout.node_count() {
            let class = layout.class_of(node);
            let info = layout.class(class);
            let cap = info.capacity.per_node;
            nodes.cluster.push(i64::from(info.cluster));
            nodes.class.push(i64::from(class));
            nodes.cores.push(cap.0[0] as i64);
            nodes.memory_kb.push(cap.0[1].min(i64::MAX as u64) as i64);
            nodes.gpus.push(cap.0[2] as i64);
            nodes.exclusive.push(i64::from(info.capacity.whole_nodes));
        }
        TopologyView {
            now: view.now,
            nodes,
            clusters: layout
                .topology()
                .clusters
                .iter()
                .map(|c| c.name.clone())
                .collect(),
            placement: view.placement,
            layout: Arc::new(layout.clone()),
            eligible: Arc::new(view.eligible.to_vec()),
            requests,
            constraints,
            free: view.free.clone(),
            jobs: Vec::new(),
            waiting: 0,
            running: RunningSet::default(),
            allocs: Vec::new(),
            queue: Queue::default(),
            reservations: Vec::new(),
        }
    }

    /// Copies the state of the engine's call: the free vectors, the waiting jobs in queue
    /// order, the running jobs with their nodes.
    pub(super) fn fill(&mut self, view: &NodeView<'_>) {
        self.now = view.now;
        self.free.clone_from(view.free);
        let n = &mut self.nodes;
        n.free_cores.clear();
        n.free_memory_kb.clear();
        n.free_gpus.clear();
        for node in 0..view.layout.node_count() {
            let f = view.free.free(node);
            n.free_cores.push(f.0[0] as i64);
            n.free_memory_kb.push(f.0[1].min(i64::MAX as u64) as i64);
            n.free_gpus.push(f.0[2] as i64);
        }
        self.jobs.clear();
        self.allocs.clear();
        for q in view.queue.iter() {
            self.jobs.push(view.jobs[q.job as usize].clone());
            self.allocs.push(None);
        }
        self.waiting = self.jobs.len();
        self.running = RunningSet::default();
        for r in view.running.iter() {
            let local = self.jobs.len() as u32;
            self.jobs.push(view.jobs[r.job as usize].clone());
            self.allocs.push(Some(view.alloc(r.job).clone()));
            self.running.insert(RunningJob { job: local, ..*r });
        }
        self.reservations.clear();
        self.reservations.extend_from_slice(view.reservations);
    }

    /// The node-level rules' view of this snapshot (local job numbers).
    fn node_view(&self) -> NodeView<'_> {
        NodeView {
            now: self.now,
            layout: &self.layout,
            free: &self.free,
            placement: self.placement,
            jobs: &self.jobs,
            requests: &self.requests,
            eligible: &self.eligible,
            queue: &self.queue,
            running: &self.running,
            allocs: &self.allocs,
            completed: &[],
            reservations: &self.reservations,
            reservations_epoch: 0,
            limits: None,
        }
    }

    /// Nodes in all.
    pub fn node_count(&self) -> u32 {
        self.layout.node_count()
    }

    /// Waiting rows in this view.
    pub fn waiting_len(&self) -> usize {
        self.waiting
    }

    /// The shape of waiting row `row` on `node`'s class: `None` when the row or node does not
    /// exist, the class does not satisfy the job's constraint (cluster, properties), or the
    /// request does not fit the class's nodes.
    pub fn shape(&self, row: usize, node: u32) -> Option<JobShape> {
        if row >= self.waiting || node >= self.node_count() {
            return None;
        }
        let class = self.layout.class_of(node);
        let v = self.node_view();
        if !v.classes_of(row as u32).contains(&class) {
            return None;
        }
        v.shape(row as u32, class)
    }

    /// The nodes waiting row `row` may run on (an eligible class its request fits), classes in
    /// the order the placement tries them, nodes by index within each class.
    pub fn eligible_nodes(&self, row: usize) -> Vec<u32> {
        if row >= self.waiting {
            return Vec::new();
        }
        let v = self.node_view();
        v.classes_of(row as u32)
            .iter()
            .filter(|&&c| v.shape(row as u32, c).is_some())
            .flat_map(|&c| self.layout.class(c).nodes.clone())
            .collect()
    }

    /// Granted advance reservations not yet over, by start: each holds `count` whole nodes of
    /// class `class` over `[start, end)` (its `nodes` are pinned on a shared class; on a
    /// whole-node class they are chosen when it starts).
    pub fn reservations(&self) -> &[NodeReservation] {
        &self.reservations
    }

    /// A fresh scratch pad for this call: nothing started yet. With advance reservations it
    /// plans on the committed future (docs/policies.md, "On a topology"), as the built-in
    /// rules do then.
    pub fn placer(&self) -> Placer {
        let mut placer = Placer::default();
        let v = self.node_view();
        placer.pass.begin(&v);
        if !self.reservations.is_empty() {
            let mut planned = Box::<EasyOnTimeline>::default();
            planned.begin(&v);
            placer.planned = Some(planned);
        }
        placer
    }

    /// The cluster name of `node`.
    fn cluster_of(&self, node: u32) -> &str {
        let c = self.layout.class(self.layout.class_of(node)).cluster;
        &self.clusters[c as usize]
    }

    /// Why a start now on `nodes` of `class` for `duration` does not fit beside the advance
    /// reservations, in words: the first reservation of the class it would deprive.
    fn reservation_conflict(&self, class: u32, nodes: &[u32], duration: Time) -> String {
        let end = self.now + duration;
        let whole = self.layout.class(class).capacity.whole_nodes;
        let cluster = &self.clusters[self.layout.class(class).cluster as usize];
        let hit = self.reservations.iter().find(|w| {
            w.class == class
                && w.start < end
                && w.end > self.now
                && (whole || w.nodes.iter().any(|n| nodes.contains(n)))
        });
        match hit {
            Some(w) if whole => format!(
                "an advance reservation holds {} whole nodes of cluster {cluster} over [{}, {}): with these nodes taken until its requested time of {duration} s is up, too few would be idle for it",
                w.count, w.start, w.end
            ),
            Some(w) => format!(
                "an advance reservation holds node {} (cluster {cluster}) over [{}, {}), before its requested time of {duration} s is up",
                w.nodes
                    .iter()
                    .find(|n| nodes.contains(n))
                    .copied()
                    .unwrap_or_default(),
                w.start,
                w.end
            ),
            None => format!(
                "it would deprive an advance reservation on cluster {cluster} before its requested time of {duration} s is up"
            ),
        }
    }

    /// Why `row` may not run on a node of `class` (its constraint), in words.
    fn constraint_text(&self, row: usize) -> String {
        let request = self.requests.get(self.jobs[row].request);
        let c = self.constraints.get(request.constraint);
        let mut parts = Vec::new();
        if let Some(cluster) = &c.cluster {
            parts.push(format!("cluster {cluster}"));
        }
        if !c.properties.is_empty() {
            parts.push(format!("properties {}", c.properties.join(", ")));
        }
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// A policy's scratch pad for one call on a topology: what it has started so far (on which
/// nodes), and the node-level rules' choices from there. Changing it starts nothing; the rows
/// a policy returns do (with the nodes it names, or placed by the engine as here).
#[derive(Clone, Debug, Default)]
pub struct Placer {
    pass: Pass,
    shadow: Shadow,
    started: Vec<Started>,
    started_nodes: Vec<u32>,
    nodes: Vec<u32>,
    /// The shadow time of the last [`Placer::shadow`], if it found one.
    shadow_time: Option<Time>,
    /// What the pad started, in order: (row, range of `placed_nodes`).
    placed: Vec<(usize, u32, u32)>,
    placed_nodes: Vec<u32>,
    /// With advance reservations: the built-in rules' plan on the committed future (running
    /// jobs, reservations, the pad's starts), which then decides every fit, as EASY and FCFS
    /// on nodes decide beside reservations.
    planned: Option<Box<EasyOnTimeline>>,
}

impl Placer {
    /// The class and nodes the machine's placement gives waiting row `row` now, after this
    /// pad's starts (classes in placement order): nothing is recorded. The nodes are in
    /// `self.nodes`.
    fn choose(&mut self, v: &NodeView<'_>, row: usize) -> Option<(u32, NodeShape)> {
        for &class in v.classes_of(row as u32) {
            let Some(shape) = v.shape(row as u32, class) else {
                continue;
            };
            if self.pass.select_any(v, class, &shape, &mut self.nodes) {
                return Some((class, shape));
            }
        }
        None
    }

    /// Notes that the pad started `row` on `self.nodes`.
    fn note(&mut self, row: usize) {
        let from = self.placed_nodes.len() as u32;
        self.placed_nodes.extend_from_slice(&self.nodes);
        self.placed
            .push((row, from, self.placed_nodes.len() as u32));
    }

    /// What the pad started, in the order it did, each on its nodes: the decisions to return
    /// for exactly these starts ([`super::Policy::decide_on_nodes`]).
    pub fn starts(&self) -> Vec<NodeStart> {
        self.placed
            .iter()
            .map(|&(row, a, b)| {
                NodeStart::on(row, self.placed_nodes[a as usize..b as usize].to_vec())
            })
            .collect()
    }

    /// The nodes the pad started waiting row `row` on, if it did.
    pub fn nodes_of(&self, row: usize) -> Option<&[u32]> {
        self.placed
            .iter()
            .find(|p| p.0 == row)
            .map(|&(_, a, b)| &self.placed_nodes[a as usize..b as usize])
    }

    fn record(&mut self, v: &NodeView<'_>, row: usize, class: u32, shape: NodeShape) {
        self.note(row);
        self.pass.take(v, class, &shape, &self.nodes);
        let from = self.started_nodes.len() as u32;
        self.started_nodes.extend_from_slice(&self.nodes);
        self.started.push(Started {
            end: v.now + v.jobs[row].requested_time,
            class,
            shape,
            nodes: (from, self.started_nodes.len() as u32),
        });
    }

    /// Whether waiting row `row` fits now (after this pad's starts) somewhere it may run.
    pub fn fits(&mut self, topo: &TopologyView, row: usize) -> bool {
        if row >= topo.waiting {
            return false;
        }
        let v = topo.node_view();
        match &mut self.planned {
            Some(planned) => {
                let duration = v.jobs[row].requested_time;
                planned.fits_plain(&v, &mut self.pass, row as u32, duration)
            }
            None => self.choose(&v, row).is_some(),
        }
    }

    /// Starts waiting row `row` in the pad on the nodes the machine's placement gives it now —
    /// the nodes the engine gives a row returned without nodes — and returns them; `None` (and
    /// nothing recorded) when it does not fit.
    pub fn place(&mut self, topo: &TopologyView, row: usize) -> Option<&[u32]> {
        if row >= topo.waiting {
            return None;
        }
        let v = topo.node_view();
        if let Some(planned) = &mut self.planned {
            let duration = v.jobs[row].requested_time;
            planned.start_plain(&v, &mut self.pass, row as u32, duration)?;
            self.nodes.clear();
            self.nodes.extend_from_slice(planned.nodes());
            self.note(row);
            return Some(&self.nodes);
        }
        let (class, shape) = self.choose(&v, row)?;
        self.record(&v, row, class, shape);
        Some(&self.nodes)
    }

    /// Starts waiting row `row` in the pad on `nodes` (full nodes first, a last partial node
    /// last, as its shape there), after checking them: `Err` says why not, naming the node,
    /// and records nothing.
    pub fn take(&mut self, topo: &TopologyView, row: usize, nodes: &[u32]) -> Result<(), String> {
        let v = topo.node_view();
        let (class, shape) = self.check(topo, &v, row, nodes)?;
        if let Some(planned) = &mut self.planned {
            let duration = v.jobs[row].requested_time;
            if !planned.take(&v, &mut self.pass, (class, &shape), nodes, duration) {
                return Err(topo.reservation_conflict(class, nodes, duration));
            }
            self.nodes.clear();
            self.nodes.extend_from_slice(nodes);
            self.note(row);
            return Ok(());
        }
        self.nodes.clear();
        self.nodes.extend_from_slice(nodes);
        self.record(&v, row, class, shape);
        Ok(())
    }

    fn check(
        &self,
        topo: &TopologyView,
        v: &NodeView<'_>,
        row: usize,
        nodes: &[u32],
    ) -> Result<(u32, NodeShape), String> {
        let count = topo.node_count();
        let Some(&first) = nodes.first() else {
            return Err("no nodes given".to_string());
        };
        for &node in nodes {
            if node >= count {
                return Err(format!(
                    "node {node} does not exist (the machine has {count} nodes, 0 to {})",
                    count - 1
                ));
            }
        }
        let class = topo.layout.class_of(first);
        if let Some(&other) = nodes.iter().find(|&&n| topo.layout.class_of(n) != class) {
            return Err(format!(
                "nodes {first} ({}) and {other} ({}) are of different node classes: a job runs on nodes of one class",
                topo.cluster_of(first),
                topo.cluster_of(other)
            ));
        }
        if !v.classes_of(row as u32).contains(&class) {
            return Err(format!(
                "node {first} (cluster {}) does not satisfy its constraint ({})",
                topo.cluster_of(first),
                topo.constraint_text(row)
            ));
        }
        let Some(shape) = v.shape(row as u32, class) else {
            return Err(format!(
                "its request does not fit the nodes of node {first}'s class (cluster {})",
                topo.cluster_of(first)
            ));
        };
        if nodes.len() != shape.count as usize {
            return Err(format!(
                "it needs {} nodes on cluster {}, {} were given",
                shape.count,
                topo.cluster_of(first),
                nodes.len()
            ));
        }
        for (i, &node) in nodes.iter().enumerate() {
            if nodes[..i].contains(&node) {
                return Err(format!("node {node} is given twice"));
            }
            let need = shape.amount(i as u32);
            let free = self.pass.free(v, node);
            if !need.fits_in(&free) {
                let what =
                    |r: ResourceVec| format!("{} cores, {} KB, {} GPUs", r.0[0], r.0[1], r.0[2]);
                return Err(format!(
                    "node {node} has {} free after this call's earlier starts; it needs {}{}",
                    what(free),
                    what(need),
                    if shape.whole { " (the whole node)" } else { "" }
                ));
            }
        }
        Ok((class, shape))
    }

    /// EASY's shadow time for waiting row `row` on nodes (docs/semantics.md, "EASY on a
    /// topology"): the first instant at which, with the running jobs — and this pad's starts,
    /// ending at now + requested time — releasing their nodes in order of expected end, it fits
    /// on one of its classes. `None` when it never does. Remembered for [`Placer::backfill`].
    pub fn shadow(&mut self, topo: &TopologyView, row: usize) -> Option<Time> {
        self.shadow_time = None;
        if row >= topo.waiting {
            return None;
        }
        let v = topo.node_view();
        if let Some(planned) = &mut self.planned {
            self.shadow_time = planned.block(&v, row as u32);
            return self.shadow_time;
        }
        let mut started = self.started.clone();
        started.sort_by_key(|s| s.end);
        self.shadow_time =
            self.shadow
                .compute(&v, &self.pass, row as u32, &started, &self.started_nodes);
        self.shadow_time
    }

    /// EASY's backfilling against the last [`Placer::shadow`]: starts waiting row `row` in the
    /// pad now if it fits and either ends (by its requested time) by the shadow time, or leaves
    /// the blocked job able to start then — its nodes chosen to spare that job, as the built-in
    /// EASY chooses them. Returns the nodes; `None` (nothing recorded) if it may not start, or
    /// if no shadow time was found.
    pub fn backfill(&mut self, topo: &TopologyView, row: usize) -> Option<&[u32]> {
        let shadow = self.shadow_time?;
        if row >= topo.waiting {
            return None;
        }
        let v = topo.node_view();
        if let Some(planned) = &mut self.planned {
            let duration = v.jobs[row].requested_time;
            planned.backfill(&v, &mut self.pass, row as u32, duration)?;
            self.nodes.clear();
            self.nodes.extend_from_slice(planned.nodes());
            self.note(row);
            return Some(&self.nodes);
        }
        let ends_by_shadow = v.now + v.jobs[row].requested_time <= shadow;
        for &class in v.classes_of(row as u32) {
            let Some(shape) = v.shape(row as u32, class) else {
                continue;
            };
            if !self.pass.may_fit(&v, class, &shape) {
                continue;
            }
            let ok = if ends_by_shadow {
                self.pass.select_any(&v, class, &shape, &mut self.nodes)
            } else {
                self.shadow
                    .select_long(&v, &mut self.pass, class, &shape, &mut self.nodes)
            };
            if ok {
                self.pass.take(&v, class, &shape, &self.nodes);
                self.note(row);
                return Some(&self.nodes);
            }
        }
        None
    }
}
