//! The machine a simulation runs on.
//!
//! - [`Machine::Uniform`] — today's machine and the fast path: a processor pool of P processors
//!   (one node of P processors shared by jobs, [`Allocation::Shared`]) or P/k whole nodes of k
//!   processors ([`Allocation::ExclusiveNodes`]: a job takes ceil(procs / k) nodes, as on SDSC
//!   Blue Horizon or DataStar). Schedulers count allocation units.
//! - [`Machine::Topology`] — heterogeneous clusters of multi-resource nodes
//!   ([`crate::sim::topology`]); jobs carry node-level requests and schedulers place them on
//!   concrete nodes.
//!
//! A pool is also expressible as a topology (one shared node of P cores), and an exclusive
//! machine as one class of k-core nodes: both give the same schedules as the uniform machine
//! (tests/topology_properties.rs runs both); the uniform machine is simply faster.

use std::sync::Arc;

use super::job::Job;
use super::resources::ResourceVec;
use super::topology::Topology;

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Allocation {
    /// Jobs share nodes; on a uniform machine the scheduler counts processors.
    #[default]
    Shared,
    /// Each job gets whole nodes to itself; on a uniform machine the scheduler counts nodes.
    ExclusiveNodes,
}

/// Why a job can never run on a machine. Such jobs are counted and listed
/// ([`crate::sim::SimOutcome::skipped`]), never silently dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Infeasible {
    /// Uniform machine: more processors than the machine has.
    TooManyProcs,
    /// The job names a cluster the topology does not have.
    NoSuchCluster,
    /// No node (of the named cluster, if any) has all the required properties.
    NoNodeWithProperties,
    /// A node request for zero nodes.
    EmptyRequest,
    /// More cores per node than any eligible node has.
    TooManyCoresPerNode,
    /// More memory per node (for a flexible request: one core's memory) than any eligible node
    /// with enough cores has.
    TooMuchMemoryPerNode,
    /// More GPUs per node than any eligible node with enough cores and memory has.
    TooManyGpusPerNode,
    /// Each node would fit, but no eligible class has enough nodes.
    TooManyNodes,
}

impl Infeasible {
    pub const ALL: [Infeasible; 8] = [
        Infeasible::TooManyProcs,
        Infeasible::NoSuchCluster,
        Infeasible::NoNodeWithProperties,
        Infeasible::EmptyRequest,
        Infeasible::TooManyCoresPerNode,
        Infeasible::TooMuchMemoryPerNode,
        Infeasible::TooManyGpusPerNode,
        Infeasible::TooManyNodes,
    ];

    /// The reason as written in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Infeasible::TooManyProcs => "too_many_procs",
            Infeasible::NoSuchCluster => "no_such_cluster",
            Infeasible::NoNodeWithProperties => "no_node_with_properties",
            Infeasible::EmptyRequest => "empty_request",
            Infeasible::TooManyCoresPerNode => "too_many_cores_per_node",
            Infeasible::TooMuchMemoryPerNode => "too_much_memory_per_node",
            Infeasible::TooManyGpusPerNode => "too_many_gpus_per_node",
            Infeasible::TooManyNodes => "too_many_nodes",
        }
    }
}

/// A processor pool or homogeneous exclusive nodes: the fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Uniform {
    /// Number of nodes (1 for a processor pool).
    pub nodes: u32,
    /// Processors per node.
    pub procs_per_node: u32,
    pub allocation: Allocation,
}

impl Uniform {
    /// Total processors.
    pub fn procs(&self) -> u64 {
        u64::from(self.nodes) * u64::from(self.procs_per_node)
    }

    /// Total capacity in allocation units (what schedulers count).
    pub fn capacity(&self) -> ResourceVec {
        match self.allocation {
            Allocation::Shared => ResourceVec::units(self.procs()),
            Allocation::ExclusiveNodes => ResourceVec::units(u64::from(self.nodes)),
        }
    }

    /// Processors represented by one allocation unit (1, or the node size).
    pub fn procs_per_unit(&self) -> u64 {
        match self.allocation {
            Allocation::Shared => 1,
            Allocation::ExclusiveNodes => u64::from(self.procs_per_node),
        }
    }

    /// What `job` takes from the machine, in allocation units, or why it can never run.
    pub fn demand(&self, job: &Job) -> Result<ResourceVec, Infeasible> {
        let procs = u64::from(job.procs);
        if procs > self.procs() {
            return Err(Infeasible::TooManyProcs);
        }
        Ok(match self.allocation {
            Allocation::Shared => ResourceVec::units(procs),
            Allocation::ExclusiveNodes => {
                ResourceVec::units(procs.div_ceil(u64::from(self.procs_per_node)))
            }
        })
    }
}

/// A heterogeneous system and how the simulator treats it.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyMachine {
    pub topology: Arc<Topology>,
    /// Treat every memory request as 0: what a scheduler blind to memory would do (the
    /// metacentrum experiment compares both). Off by default.
    pub ignore_memory: bool,
    /// Scale a job's runtime by the speed of its nodes: it runs `ceil(runtime × fastest /
    /// slowest of its nodes)` seconds, for traces whose runtimes were measured on the fastest
    /// class (as AleaNG assumes). The requested time is a wall-clock limit and is not scaled.
    /// Off by default.
    pub scale_runtime: bool,
}

impl TopologyMachine {
    pub fn new(topology: Topology) -> Self {
        TopologyMachine {
            topology: Arc::new(topology),
            ignore_memory: false,
            scale_runtime: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Machine {
    Uniform(Uniform),
    Topology(TopologyMachine),
}

impl Machine {
    /// A single pool of `procs` processors: the model of the exercise and of pyss.
    pub fn pool(procs: u32) -> Self {
        Machine::Uniform(Uniform {
            nodes: 1,
            procs_per_node: procs,
            allocation: Allocation::Shared,
        })
    }

    /// `nodes` nodes of `procs_per_node` processors, allocated exclusively.
    pub fn exclusive_nodes(nodes: u32, procs_per_node: u32) -> Self {
        Machine::Uniform(Uniform {
            nodes,
            procs_per_node,
            allocation: Allocation::ExclusiveNodes,
        })
    }

    /// A heterogeneous topology, memory enforced, runtimes unscaled.
    pub fn topology(topology: Topology) -> Self {
        Machine::Topology(TopologyMachine::new(topology))
    }

    pub fn as_uniform(&self) -> Option<&Uniform> {
        match self {
            Machine::Uniform(u) => Some(u),
            Machine::Topology(_) => None,
        }
    }

    /// Total processors (cores).
    pub fn procs(&self) -> u64 {
        match self {
            Machine::Uniform(u) => u.procs(),
            Machine::Topology(t) => t.topology.cores(),
        }
    }

    /// Nodes in all.
    pub fn node_count(&self) -> u64 {
        match self {
            Machine::Uniform(u) => u64::from(u.nodes),
            Machine::Topology(t) => t.topology.nodes(),
        }
    }

    /// Total capacity in the units utilization and [`crate::sim::Step`] count: processors on a
    /// pool, nodes on exclusive uniform nodes, cores on a topology.
    pub fn capacity(&self) -> ResourceVec {
        match self {
            Machine::Uniform(u) => u.capacity(),
            Machine::Topology(t) => ResourceVec::units(t.topology.cores()),
        }
    }

    /// Processors represented by one allocation unit (cores on a topology: 1).
    pub fn procs_per_unit(&self) -> u64 {
        match self {
            Machine::Uniform(u) => u.procs_per_unit(),
            Machine::Topology(_) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(procs: u32) -> Job {
        Job {
            procs,
            ..Job::default()
        }
    }

    fn uniform(m: Machine) -> Uniform {
        *m.as_uniform().unwrap()
    }

    #[test]
    fn exclusive_nodes_round_up_to_whole_nodes() {
        let m = uniform(Machine::exclusive_nodes(144, 8));
        assert_eq!(m.capacity(), ResourceVec::units(144));
        assert_eq!(m.demand(&job(1)), Ok(ResourceVec::units(1)));
        assert_eq!(m.demand(&job(8)), Ok(ResourceVec::units(1)));
        assert_eq!(m.demand(&job(9)), Ok(ResourceVec::units(2)));
        assert_eq!(m.demand(&job(1152)), Ok(ResourceVec::units(144)));
        assert_eq!(m.demand(&job(1153)), Err(Infeasible::TooManyProcs));
    }

    #[test]
    fn pool_counts_processors() {
        let m = uniform(Machine::pool(100));
        assert_eq!(m.demand(&job(37)), Ok(ResourceVec::units(37)));
        assert_eq!(m.demand(&job(101)), Err(Infeasible::TooManyProcs));
    }

    #[test]
    fn a_topology_counts_cores() {
        let m = Machine::topology(Topology::example_3());
        assert_eq!(m.capacity(), ResourceVec::units(160));
        assert_eq!(
            (m.procs(), m.node_count(), m.procs_per_unit()),
            (160, 11, 1)
        );
    }
}
