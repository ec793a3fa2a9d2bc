//! Which nodes each running job holds. The engine allocates concrete nodes for every start and
//! refuses any decision that would over-allocate one; schedulers only count units.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::machine::{Allocation, Uniform};
use super::resources::ResourceVec;

#[derive(Clone, Debug)]
pub struct NodeTable {
    allocation: Allocation,
    /// Per node: free resources (component 0 = processors).
    free: Vec<ResourceVec>,
    /// Exclusive allocation: wholly free nodes, lowest index first.
    idle: BinaryHeap<Reverse<u32>>,
    procs_per_node: u64,
}

/// An allocation the machine could not honour: a scheduler decided to start a job that does not
/// fit. Always a bug in a scheduler, reported as an error rather than a panic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverAllocation;

impl NodeTable {
    pub fn new(machine: &Uniform) -> Self {
        let per_node = ResourceVec::units(u64::from(machine.procs_per_node));
        NodeTable {
            allocation: machine.allocation,
            free: vec![per_node; machine.nodes as usize],
            idle: (0..machine.nodes).map(Reverse).collect(),
            procs_per_node: u64::from(machine.procs_per_node),
        }
    }

    /// Allocates `demand` (in allocation units) and appends the nodes used to `held`.
    pub fn allocate(
        &mut self,
        demand: ResourceVec,
        held: &mut Vec<u32>,
    ) -> Result<(), OverAllocation> {
        match self.allocation {
            Allocation::Shared => {
                let node = &mut self.free[0];
                *node = node.checked_sub(&demand).ok_or(OverAllocation)?;
                held.push(0);
            }
            Allocation::ExclusiveNodes => {
                let n = demand.unit_count() as usize;
                if n > self.idle.len() {
                    return Err(OverAllocation);
                }
                for _ in 0..n {
                    let Reverse(node) = self.idle.pop().ok_or(OverAllocation)?;
                    let whole = ResourceVec::units(self.procs_per_node);
                    let slot = &mut self.free[node as usize];
                    *slot = slot.checked_sub(&whole).ok_or(OverAllocation)?;
                    held.push(node);
                }
            }
        }
        Ok(())
    }

    /// Gives back what [`NodeTable::allocate`] took for `demand` on `held`.
    pub fn release(&mut self, demand: ResourceVec, held: &[u32]) {
        match self.allocation {
            Allocation::Shared => self.free[0] += demand,
            Allocation::ExclusiveNodes => {
                for &node in held {
                    self.free[node as usize] += ResourceVec::units(self.procs_per_node);
                    self.idle.push(Reverse(node));
                }
            }
        }
    }
}
