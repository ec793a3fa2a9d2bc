//! Planning (pure): manifests + input digests → a DAG of content-keyed nodes, and the state of
//! each node against the cache with the reason it must run.

pub mod build;
pub mod key;
pub mod reason;

pub use build::{Inputs, Node, NodeKind, Plan, build};
pub use key::{KEY_SCHEMA, NodeKey};
pub use reason::{Change, NodeState, Reason, reason};
