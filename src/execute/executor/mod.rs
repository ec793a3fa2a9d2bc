//! Executors: how the planned DAG's nodes get computed. One trait, two implementations over the
//! same cache entry format and the same publish step:
//!
//! - [`Local`] — today's rayon DAG executor ([`crate::execute::dag`]), `-j N` threads;
//! - [`Slurm`] — simulate nodes as Slurm job arrays (or `srun` steps inside an allocation)
//!   over the shared cache; aggregation stays on the submitting machine (docs/slurm.md).
//!
//! An executor receives the nodes (with their cache state), the work of each node for nodes it
//! runs in this process, and an observer; it returns exactly one [`Event`] per node.

mod config;
mod local;
pub mod slurm;

pub use config::{ExecutorKind, RunConfig};
pub use local::Local;
pub use slurm::Slurm;

use std::path::Path;

use super::dag::{DagNode, Event, Observer};
use super::interrupt::Interrupt;
use super::pipeline::Prepared;

/// The work of node `i`, run in this process: compute it and commit its cache entry.
pub type Work<'a> = dyn Fn(usize) -> Result<(), String> + Sync + 'a;

/// What an executor sees of a run.
pub struct Context<'a> {
    pub prepared: &'a Prepared,
    /// One per plan node, in plan order.
    pub nodes: &'a [DagNode],
    /// `results/.schedlab`.
    pub state_dir: &'a Path,
    /// The run's one stop request (Ctrl-C, SIGTERM, SIGHUP): an executor that waits on work
    /// elsewhere checks it and cancels that work.
    pub interrupt: &'a Interrupt,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    #[error(transparent)]
    Slurm(#[from] slurm::SlurmError),
}

impl ExecuteError {
    /// What the user can do about it, when known.
    pub fn hint(&self) -> Option<String> {
        match self {
            ExecuteError::Slurm(e) => e.hint(),
        }
    }
}

pub trait Executor {
    /// Computes the nodes that are not cached; one event per node, in node order.
    fn execute(
        &self,
        context: &Context<'_>,
        work: &Work<'_>,
        observer: &dyn Observer,
    ) -> Result<Vec<Event>, ExecuteError>;
}
