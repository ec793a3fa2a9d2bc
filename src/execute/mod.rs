//! Execution: walking the planned DAG over the cache, in parallel, with progress and failures
//! isolated. Executors are pluggable over the same cache and publish step (`executor/`): local
//! threads ([`dag::execute`]) or Slurm.

mod aggregate_node;
pub mod custom_policy;
pub mod dag;
mod eet_outputs;
pub mod executor;
mod git;
pub mod interrupt;
pub mod meter;
pub mod metrics_node;
pub mod pipeline;
pub mod progress;
mod schedule_jobs;
pub mod selection;
mod simulate_node;

pub use dag::{DagNode, Event, Observer, Outcome, execute};
pub use executor::{Executor, Local, RunConfig, Slurm};
pub use interrupt::Interrupt;
pub use pipeline::{PipelineError, Prepared, RunReport, prepare, run, run_with};
