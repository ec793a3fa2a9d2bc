//! Cluster topologies: heterogeneous multi-resource nodes, what jobs ask of them, and where
//! they go (issue 10).
//!
//! - [`cluster`]: the static description — [`Topology`] → [`Cluster`] → [`NodeClass`] (count ×
//!   cores, memory, GPUs, speed, properties, cost).
//! - [`constraint`]: required properties / cluster, interned per workload ([`ConstraintTable`]).
//! - [`request`]: what a job asks for ([`JobRequest`]: flexible cores or nodes × per-node
//!   vector) and how it lands on one class ([`NodeShape`]).
//! - [`requests`]: a workload's distinct requests, which jobs refer to by id ([`RequestTable`]).
//! - [`layout`]: the topology flattened into class and node indices; eligibility, feasibility.
//! - [`placement`]: the named policy choosing classes and nodes among those that fit.
//! - [`free`]: every node's free vector now, indexed per class (the engine's state).
//! - [`steps`], [`timeline`]: availability over time, per node or per whole-node class, for the
//!   policies that plan ahead.
//! - [`rises`]: where each node's capacity last rose, so that a repeated search looks only there.
//! - [`node_groups`]: the nodes of a large shared class grouped by their future, each group
//!   owning its members' one step function, so that a full search visits one function per
//!   distinct future and a change on a whole group changes one.
//!
//! Pure data and arithmetic: nothing here reads files (the Alea/AleaNG machine-file importers
//! live outside `sim`).

pub mod cluster;
pub mod constraint;
pub mod free;
pub mod idle_nodes;
pub mod layout;
pub mod node_groups;
pub mod placement;
pub mod request;
pub mod requests;
pub mod rises;
pub mod steps;
pub mod timeline;

pub use cluster::{
    Cluster, MAX_CLASS_CORES, MAX_CORES_PER_NODE, MAX_NODES, NodeClass, Topology, TopologyError,
};
pub use constraint::{Constraint, ConstraintId, ConstraintTable};
pub use free::{FreeNodes, LogPosition};
pub use layout::{ClassInfo, Layout};
pub use placement::Placement;
pub use request::{JobRequest, Misfit, NodeDemand, NodeShape, Shape};
pub use requests::{RequestId, RequestInterner, RequestTable};
pub use timeline::{RisenWindows, Timeline};

/// A seeded linear congruential generator for this module's randomized tests: each call
/// `rand(n)` gives a number in `0..n`.
#[cfg(test)]
pub(crate) fn test_rand(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    }
}
