//! The machine model: homogeneous nodes, each holding a resource vector, and the rule that maps
//! a job's request onto allocation units.
//!
//! A processor pool of P processors is the special case of one node of P processors shared by
//! jobs ([`Allocation::Shared`]). With [`Allocation::ExclusiveNodes`] a job takes
//! ceil(procs / k) whole nodes of k processors, as on SDSC Blue Horizon or DataStar.

use super::job::Job;
use super::resources::ResourceVec;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Allocation {
    /// Jobs share nodes; the scheduler counts processors.
    Shared,
    /// Each job gets whole nodes to itself; the scheduler counts nodes.
    ExclusiveNodes,
}

/// Why a job can never run on a machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Infeasible {
    /// It asks for more processors than the machine has.
    TooManyProcs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Machine {
    /// Number of nodes (1 for a processor pool).
    pub nodes: u32,
    /// Processors per node.
    pub procs_per_node: u32,
    pub allocation: Allocation,
}

impl Machine {
    /// A single pool of `procs` processors: the model of the exercise and of pyss.
    pub fn pool(procs: u32) -> Self {
        Machine {
            nodes: 1,
            procs_per_node: procs,
            allocation: Allocation::Shared,
        }
    }

    /// `nodes` nodes of `procs_per_node` processors, allocated exclusively.
    pub fn exclusive_nodes(nodes: u32, procs_per_node: u32) -> Self {
        Machine {
            nodes,
            procs_per_node,
            allocation: Allocation::ExclusiveNodes,
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn job(procs: u32) -> Job {
        Job {
            id: 1,
            submit: 0,
            runtime: 1,
            requested_time: 1,
            procs,
            memory_kb: 0,
            user: -1,
            group: -1,
            queue: -1,
            partition: -1,
        }
    }

    #[test]
    fn exclusive_nodes_round_up_to_whole_nodes() {
        let m = Machine::exclusive_nodes(144, 8);
        assert_eq!(m.capacity(), ResourceVec::units(144));
        assert_eq!(m.demand(&job(1)), Ok(ResourceVec::units(1)));
        assert_eq!(m.demand(&job(8)), Ok(ResourceVec::units(1)));
        assert_eq!(m.demand(&job(9)), Ok(ResourceVec::units(2)));
        assert_eq!(m.demand(&job(1152)), Ok(ResourceVec::units(144)));
        assert_eq!(m.demand(&job(1153)), Err(Infeasible::TooManyProcs));
    }

    #[test]
    fn pool_counts_processors() {
        let m = Machine::pool(100);
        assert_eq!(m.demand(&job(37)), Ok(ResourceVec::units(37)));
        assert_eq!(m.demand(&job(101)), Err(Infeasible::TooManyProcs));
    }
}
