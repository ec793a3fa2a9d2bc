//! Execution: walking the planned DAG over the cache, in parallel, with progress and failures
//! isolated. Executors are pluggable over the same cache; [`dag::execute`] is the local one.

mod aggregate_node;
pub mod dag;
mod git;
pub mod interrupt;
pub mod pipeline;
pub mod progress;
mod simulate_node;

pub use dag::{DagNode, Event, Observer, Outcome, execute};
pub use interrupt::Interrupt;
pub use pipeline::{Prepared, RunReport, prepare, run};
