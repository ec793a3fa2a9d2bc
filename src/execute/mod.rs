//! Execution: walking the planned DAG over the cache, in parallel, with progress and failures
//! isolated. Executors are pluggable over the same cache; [`dag::execute`] is the local one.

pub mod dag;
pub mod progress;

pub use dag::{DagNode, Event, Observer, Outcome, execute};
