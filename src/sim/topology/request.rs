//! What a job asks of a topology, and how that request lands on the nodes of one class.
//!
//! A [`JobRequest`] is either
//! - [`Shape::Flexible`] (the default, what a plain SWF job gives): the job's `procs` cores with
//!   `memory_kb` per core (the SWF standard's reading of field 10), placed on **as few nodes as
//!   possible** of one class: each node gets `k = min(cores per node, ⌊node memory / memory per
//!   core⌋)` cores, so ⌊procs / k⌋ nodes take k cores and, when k does not divide procs, one more
//!   node takes the rest. One node when the job fits on one. On a pool (one node of P cores) this
//!   is exactly today's rule: a job takes its processors.
//! - [`Shape::Nodes`]: `count` nodes, each with the same [`NodeDemand`] (cores, memory, GPUs) —
//!   a PBS node spec such as `8:ppn=8` or AleaNG's nodes × per-node RAM and GPUs.
//!
//! Either way the job may require properties or a cluster ([`ConstraintId`]) and may ask for
//! whole nodes to itself (`exclusive`, PBS's `#excl`). On a cluster with exclusive allocation
//! every job takes whole nodes. A job's nodes are all of one class of one cluster.
//!
//! Memory per core versus per node and the unit (KB, bytes) are the reader's business: the
//! simulator sees KB per core in a flexible request and KB per node in a node request.
//! A workload keeps its distinct requests in a side table ([`super::requests::RequestTable`]);
//! a job refers to its request by a small id.

use super::constraint::ConstraintId;
use crate::sim::resources::ResourceVec;

/// Per-node amounts of a node request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeDemand {
    pub cores: u32,
    /// KB per node.
    pub memory_kb: u64,
    pub gpus: u32,
}

impl NodeDemand {
    pub fn vec(&self) -> ResourceVec {
        ResourceVec([u64::from(self.cores), self.memory_kb, u64::from(self.gpus)])
    }
}

/// How a job's amounts are given; see the module documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Shape {
    /// The job's `procs` cores and `memory_kb` per core, on as few nodes as possible.
    #[default]
    Flexible,
    /// `count` nodes with `per_node` each.
    Nodes { count: u32, per_node: NodeDemand },
}

/// What a job asks of a topology. The default (flexible, no memory, unconstrained, shared)
/// leaves a plain SWF job as it is today; on a uniform machine ([`crate::sim::Machine::pool`],
/// [`crate::sim::Machine::exclusive_nodes`]) only `procs` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JobRequest {
    pub shape: Shape,
    /// Memory per core in KB, as the reader gives it (0: none asked): what a flexible request
    /// puts on each core; for a node request, the per-node memory divided by the cores per
    /// node (the node request's own `per_node.memory_kb` is what placement uses).
    pub memory_kb: u64,
    /// Required properties or cluster, in the workload's constraint table.
    pub constraint: ConstraintId,
    /// Whole nodes to itself, even on a shared cluster.
    pub exclusive: bool,
}

impl JobRequest {
    /// `count` nodes of `per_node` each.
    pub fn nodes(count: u32, per_node: NodeDemand) -> Self {
        JobRequest {
            shape: Shape::Nodes { count, per_node },
            ..JobRequest::default()
        }
    }
}

/// Why a request does not fit the nodes of a class, in the order they are checked: a job that
/// fits no class is reported with the furthest reason any class got to (docs/semantics.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Misfit {
    /// A node request for zero nodes.
    NoNodes,
    /// More cores per node than the class's nodes have.
    Cores,
    /// More memory per node (for a flexible request: one core's memory) than a node has.
    Memory,
    /// More GPUs per node than a node has.
    Gpus,
    /// More nodes than the class has.
    Nodes,
}

/// A request resolved on one class: `count` nodes; all take `per_node` except, when `last` is
/// set, the final one, which takes `last` (component-wise at most `per_node`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeShape {
    pub count: u32,
    pub per_node: ResourceVec,
    pub last: Option<ResourceVec>,
    /// Takes whole nodes (the class allocates whole nodes, or the job asked for them): its
    /// nodes must be idle, and `per_node` is their whole capacity.
    pub whole: bool,
}

impl NodeShape {
    /// The amount the `i`-th node (0-based, of [`NodeShape::count`]) takes.
    #[inline]
    pub fn amount(&self, i: u32) -> ResourceVec {
        match self.last {
            Some(last) if i + 1 == self.count => last,
            _ => self.per_node,
        }
    }

    /// Nodes that take the full `per_node` amount.
    #[inline]
    pub fn full(&self) -> u32 {
        self.count - u32::from(self.last.is_some())
    }

    /// How many of its amounts take no core.
    #[inline]
    pub fn coreless(&self) -> u32 {
        let full = if self.per_node.0[0] == 0 {
            self.full()
        } else {
            0
        };
        full + u32::from(self.last.is_some_and(|l| l.0[0] == 0))
    }

    /// The whole job's amounts.
    pub fn total(&self) -> ResourceVec {
        let full = u64::from(self.full());
        let mut t = ResourceVec([
            self.per_node.0[0] * full,
            self.per_node.0[1] * full,
            self.per_node.0[2] * full,
        ]);
        if let Some(last) = self.last {
            t += last;
        }
        t
    }
}

/// The class a request is resolved on: its nodes' capacity (cores, memory KB, GPUs), how many
/// there are, and whether jobs take whole nodes there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassCapacity {
    pub per_node: ResourceVec,
    pub nodes: u32,
    pub whole_nodes: bool,
}

impl JobRequest {
    /// Resolves the request of a job with `procs` processors and `memory_kb_per_core` on a class.
    /// `ignore_memory` treats every memory request as 0 (what a memory-blind scheduler sees).
    pub fn on_class(
        &self,
        procs: u32,
        memory_kb_per_core: u64,
        class: &ClassCapacity,
        ignore_memory: bool,
    ) -> Result<NodeShape, Misfit> {
        let cap = class.per_node;
        let whole = class.whole_nodes || self.exclusive;
        let shape = match self.shape {
            Shape::Flexible => {
                let m = if ignore_memory { 0 } else { memory_kb_per_core };
                let cores = cap.0[0];
                // Memory per core 0: only cores limit a node.
                let k = cap.0[1]
                    .checked_div(m)
                    .map_or(cores, |by_memory| cores.min(by_memory));
                if k == 0 {
                    return Err(if cores == 0 {
                        Misfit::Cores
                    } else {
                        Misfit::Memory
                    });
                }
                let procs = u64::from(procs.max(1));
                let (full, rest) = (procs / k, procs % k);
                let nodes = full + u64::from(rest > 0);
                if nodes > u64::from(class.nodes) {
                    return Err(Misfit::Nodes);
                }
                let count = nodes as u32;
                if whole {
                    NodeShape {
                        count,
                        per_node: cap,
                        last: None,
                        whole,
                    }
                } else if full == 0 {
                    NodeShape {
                        count: 1,
                        per_node: ResourceVec([rest, rest * m, 0]),
                        last: None,
                        whole,
                    }
                } else {
                    NodeShape {
                        count,
                        per_node: ResourceVec([k, k * m, 0]),
                        last: (rest > 0).then_some(ResourceVec([rest, rest * m, 0])),
                        whole,
                    }
                }
            }
            Shape::Nodes { count, per_node } => {
                let mut d = per_node.vec();
                if ignore_memory {
                    d.0[1] = 0;
                }
                if count == 0 {
                    return Err(Misfit::NoNodes);
                }
                if d.0[0] > cap.0[0] {
                    return Err(Misfit::Cores);
                }
                if d.0[1] > cap.0[1] {
                    return Err(Misfit::Memory);
                }
                if d.0[2] > cap.0[2] {
                    return Err(Misfit::Gpus);
                }
                if count > class.nodes {
                    return Err(Misfit::Nodes);
                }
                NodeShape {
                    count,
                    per_node: if whole { cap } else { d },
                    last: None,
                    whole,
                }
            }
        };
        Ok(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 20;

    fn class(cores: u64, memory_gib: u64, nodes: u32, whole_nodes: bool) -> ClassCapacity {
        ClassCapacity {
            per_node: ResourceVec([cores, memory_gib * GIB, 0]),
            nodes,
            whole_nodes,
        }
    }

    fn flexible() -> JobRequest {
        JobRequest::default()
    }

    #[test]
    fn flexible_jobs_take_as_few_nodes_as_possible() {
        let small = class(8, 16, 10, false);
        // One node when it fits.
        let s = flexible().on_class(5, GIB, &small, false).unwrap();
        assert_eq!(
            (s.count, s.per_node, s.last),
            (1, ResourceVec([5, 5 * GIB, 0]), None)
        );
        // 20 cores on 8-core nodes: 8 + 8 + 4.
        let s = flexible().on_class(20, 0, &small, false).unwrap();
        assert_eq!(s.count, 3);
        assert_eq!(
            (s.amount(0), s.amount(1)),
            (ResourceVec([8, 0, 0]), ResourceVec([8, 0, 0]))
        );
        assert_eq!(s.amount(2), ResourceVec([4, 0, 0]));
        assert_eq!(s.total(), ResourceVec([20, 0, 0]));
        // Memory limits the cores per node: 4 GiB per core → 4 cores per 16 GiB node.
        let s = flexible().on_class(10, 4 * GIB, &small, false).unwrap();
        assert_eq!(s.count, 3);
        assert_eq!(s.per_node, ResourceVec([4, 16 * GIB, 0]));
        assert_eq!(s.last, Some(ResourceVec([2, 8 * GIB, 0])));
        // One core's memory exceeds a node; more nodes than the class has.
        assert_eq!(
            flexible().on_class(1, 17 * GIB, &small, false),
            Err(Misfit::Memory)
        );
        assert_eq!(
            flexible().on_class(81, 0, &small, false),
            Err(Misfit::Nodes)
        );
        // Ignoring memory.
        let s = flexible().on_class(1, 17 * GIB, &small, true).unwrap();
        assert_eq!(s.per_node, ResourceVec([1, 0, 0]));
    }

    #[test]
    fn a_pool_node_takes_exactly_the_processors() {
        let pool = class(100, 0, 1, false);
        for p in 1..=100 {
            let s = flexible().on_class(p, 0, &pool, false).unwrap();
            assert_eq!((s.count, s.total()), (1, ResourceVec([u64::from(p), 0, 0])));
        }
        assert_eq!(
            flexible().on_class(101, 0, &pool, false),
            Err(Misfit::Nodes)
        );
    }

    #[test]
    fn whole_nodes_round_up_like_the_exclusive_machine() {
        let nodes = class(8, 16, 144, true);
        let s = flexible().on_class(9, 0, &nodes, false).unwrap();
        assert_eq!(
            (s.count, s.per_node, s.last),
            (2, ResourceVec([8, 16 * GIB, 0]), None)
        );
        let s = flexible().on_class(1152, 0, &nodes, false).unwrap();
        assert_eq!(s.count, 144);
        assert_eq!(
            flexible().on_class(1153, 0, &nodes, false),
            Err(Misfit::Nodes)
        );
        // An exclusive job on a shared class takes whole nodes too.
        let excl = JobRequest {
            exclusive: true,
            ..JobRequest::nodes(
                1,
                NodeDemand {
                    cores: 64,
                    memory_kb: 64 * GIB,
                    gpus: 0,
                },
            )
        };
        let zewura = class(80, 504, 20, false);
        let s = excl.on_class(0, 0, &zewura, false).unwrap();
        assert_eq!((s.count, s.per_node), (1, zewura.per_node));
    }

    #[test]
    fn node_requests_check_each_component_in_order() {
        let big = class(80, 512, 1, false);
        let req = |cores, mem_gib, gpus, count| {
            JobRequest::nodes(
                count,
                NodeDemand {
                    cores,
                    memory_kb: mem_gib * GIB,
                    gpus,
                },
            )
        };
        // Example 3's RAM-constrained job: 1 CPU and 512 GB.
        let s = req(1, 512, 0, 1).on_class(0, 0, &big, false).unwrap();
        assert_eq!(s.per_node, ResourceVec([1, 512 * GIB, 0]));
        assert_eq!(
            req(81, 1, 0, 1).on_class(0, 0, &big, false),
            Err(Misfit::Cores)
        );
        assert_eq!(
            req(1, 513, 0, 1).on_class(0, 0, &big, false),
            Err(Misfit::Memory)
        );
        assert_eq!(
            req(1, 1, 1, 1).on_class(0, 0, &big, false),
            Err(Misfit::Gpus)
        );
        assert_eq!(
            req(1, 1, 0, 2).on_class(0, 0, &big, false),
            Err(Misfit::Nodes)
        );
        assert_eq!(
            req(1, 1, 0, 0).on_class(0, 0, &big, false),
            Err(Misfit::NoNodes)
        );
        assert!(req(1, 513, 0, 1).on_class(0, 0, &big, true).is_ok());
    }
}
