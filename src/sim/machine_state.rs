//! What the engine knows of the machine while it runs: which nodes every running job and
//! started reservation holds. The engine is the only place that changes it, and it refuses —
//! as an error naming the job, never a panic — any decision that would over-allocate any
//! component of any node.
//!
//! - [`MachineState::Uniform`]: the fast path's [`NodeTable`] (processors of a pool, or whole
//!   nodes lowest index first).
//! - [`MachineState::Topology`]: every node's free vector ([`FreeNodes`]) and each running job's
//!   [`Alloc`]; a start names its class and nodes, and is checked against the job's request.

use super::job::{Job, Time, Workload};
use super::machine::{Infeasible, Machine, Uniform};
use super::nodes::NodeTable;
use super::resources::ResourceVec;
use super::scheduler::node::{Alloc, Completed, NodeReservation};
use super::topology::free::strictly_increasing;
use super::topology::{FreeNodes, JobRequest, Layout, NodeShape, Placement, TopologyError};

pub(crate) enum MachineState {
    Uniform(UniformState),
    Topology(Box<TopologyState>),
}

pub(crate) struct UniformState {
    pub machine: Uniform,
    pub table: NodeTable,
    /// Nodes held by each running job (only running jobs: nothing per job of the workload).
    pub held: std::collections::HashMap<u32, Vec<u32>>,
    /// Jobs completed since the previous scheduler call.
    pub completed: Vec<Completed>,
}

pub(crate) struct TopologyState {
    pub layout: Layout,
    pub free: FreeNodes,
    /// Per constraint id of the workload: eligible classes in placement order (empty: none).
    pub eligible: Vec<Vec<u32>>,
    /// Per constraint id: why no class is eligible, if none is.
    ineligible: Vec<Option<Infeasible>>,
    /// Per job index: its nodes while it runs.
    pub allocs: Vec<Option<Alloc>>,
    /// Jobs completed since the previous scheduler call.
    pub completed: Vec<Completed>,
    /// Granted reservations not yet over, by start (then request index).
    pub reservations: Vec<NodeReservation>,
    /// Request index of each entry of `reservations`.
    pub reservation_requests: Vec<u32>,
    pub epoch: u64,
    /// Per node: the last check that saw it (duplicate detection).
    mark: Vec<u64>,
    check: u64,
}

/// Why the engine refused a start on a topology.
pub(crate) enum Refusal {
    /// The decision is malformed (class, node count, a node twice or of another class).
    Invalid(String),
    /// A node does not have the amount free.
    OverAllocation,
}

impl MachineState {
    pub fn new(
        machine: &Machine,
        workload: &Workload,
        placement: Placement,
    ) -> Result<Self, TopologyError> {
        Ok(match machine {
            Machine::Uniform(u) => MachineState::Uniform(UniformState {
                machine: *u,
                table: NodeTable::new(u),
                held: std::collections::HashMap::new(),
                completed: Vec::new(),
            }),
            Machine::Topology(t) => {
                let layout = Layout::new(t)?;
                let (eligible, ineligible) = layout
                    .eligibility(&workload.constraints, placement)
                    .into_iter()
                    .map(|e| match e {
                        Ok(classes) => (classes, None),
                        Err(why) => (Vec::new(), Some(why)),
                    })
                    .unzip();
                MachineState::Topology(Box::new(TopologyState {
                    free: FreeNodes::new(&layout),
                    mark: vec![0; layout.node_count() as usize],
                    layout,
                    eligible,
                    ineligible,
                    allocs: vec![None; workload.len()],
                    completed: Vec::new(),
                    reservations: Vec::new(),
                    reservation_requests: Vec::new(),
                    epoch: 0,
                    check: 0,
                }))
            }
        })
    }

    /// What `job` counts for in allocation units (processors, nodes; cores on a topology), or
    /// why it can never run.
    pub fn admit(&self, workload: &Workload, job: &Job) -> Result<ResourceVec, Infeasible> {
        match self {
            MachineState::Uniform(u) => u.machine.demand(job),
            MachineState::Topology(t) => {
                let request = workload.request(job);
                let c = request.constraint.0 as usize;
                debug_assert!(c < workload.constraints.len());
                if let Some(why) = t.ineligible[c] {
                    return Err(why);
                }
                t.layout.admit(request, job.procs, &t.eligible[c])?;
                Ok(ResourceVec::units(u64::from(job.procs)))
            }
        }
    }
}

impl TopologyState {
    /// Starts job `index` (of `procs` processors and `request`) on `nodes` of `class` if that is
    /// its shape there and every node has it free. Returns the shape.
    pub fn start(
        &mut self,
        index: u32,
        (procs, request): (u32, &JobRequest),
        class: u32,
        nodes: &[u32],
    ) -> Result<NodeShape, Refusal> {
        let eligible = self
            .eligible
            .get(request.constraint.0 as usize)
            .is_some_and(|c| c.contains(&class));
        if !eligible {
            return Err(Refusal::Invalid(format!("class {class} is not eligible")));
        }
        let shape = self.layout.shape(request, procs, class).map_err(|m| {
            Refusal::Invalid(format!("its request does not fit class {class} ({m:?})"))
        })?;
        if nodes.len() != shape.count as usize {
            return Err(Refusal::Invalid(format!(
                "it needs {} nodes, {} were given",
                shape.count,
                nodes.len()
            )));
        }
        let range = self.layout.class(class).nodes.clone();
        // Nodes in increasing order, as the rules choose them, are distinct, and of the class
        // when the first and last are: no node to mark. Otherwise each is checked, and the
        // first offending one named.
        let increasing = strictly_increasing(nodes);
        let within = nodes.first().is_none_or(|n| range.contains(n))
            && nodes.last().is_none_or(|n| range.contains(n));
        if !(increasing && within) {
            self.check_each(class, nodes)?;
        }
        self.free
            .take_shape(class, &shape, nodes)
            .map_err(|_| Refusal::OverAllocation)?;
        self.allocs[index as usize] = Some(Alloc {
            class,
            shape,
            nodes: nodes.to_vec(),
        });
        Ok(shape)
    }

    /// Refuses `nodes` if one is not of `class` or is given twice.
    fn check_each(&mut self, class: u32, nodes: &[u32]) -> Result<(), Refusal> {
        let range = self.layout.class(class).nodes.clone();
        self.check += 1;
        for &node in nodes {
            if !range.contains(&node) {
                return Err(Refusal::Invalid(format!(
                    "node {node} is not of class {class}"
                )));
            }
            if self.mark[node as usize] == self.check {
                return Err(Refusal::Invalid(format!("node {node} is given twice")));
            }
            self.mark[node as usize] = self.check;
        }
        Ok(())
    }

    /// Gives back what job `index` held; returns its allocation.
    pub fn release(&mut self, index: u32, expected_end: Time, end: Time) -> Option<Alloc> {
        let a = self.allocs[index as usize].take()?;
        self.free.give_shape(a.class, &a.shape, &a.nodes);
        self.completed.push(Completed {
            job: index,
            expected_end,
            end,
        });
        Some(a)
    }
}
