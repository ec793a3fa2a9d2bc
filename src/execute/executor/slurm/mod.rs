//! The Slurm executor (docs/slurm.md): the simulate nodes that must run go to Slurm as job
//! arrays over the shared cache — several nodes packed per array task by estimated cost — or,
//! inside an allocation (`SLURM_JOB_ID` set), as `srun` steps on it. Each task runs the hidden
//! `schedlab worker` command, which writes the same verified entries as a local run. The
//! submitting `run` follows progress from the cache and `squeue` (rate-limited), names what
//! killed a task (time limit, memory, preemption, node failure), then aggregates and publishes
//! locally as always.
//!
//! DAG levels run as waves: Slurm computes the simulate level; the aggregate level runs here
//! once it is in. A batch is recorded before submission (`batch.rs`), so a run with `--detach`
//! can return at once and a later `run` or `status` picks the batch up: nodes of tasks still
//! queued or running are waited for, never submitted twice.

pub mod batch;
pub mod commands;
pub mod config;
mod pack;
mod status;
mod submit;
pub mod task_state;
mod watch;
pub mod worker;

pub use config::SlurmConfig;
pub use status::{BatchStatus, status};
pub use submit::{Detached, describe, detach};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Context, ExecuteError, Executor, Work};
use crate::cache::CacheError;
use crate::execute::dag::{self, DagNode, Event, Observer};
use crate::plan::NodeKind;

/// The Slurm executor.
pub struct Slurm {
    pub config: SlurmConfig,
    /// The schedlab binary tasks run (`std::env::current_exe`); it must be on a file system the
    /// compute nodes see, like the results directory.
    pub exe: PathBuf,
    /// Arguments before `worker` (`-m schedlab` when `exe` is the Python of the schedlab
    /// package: runs started from Python run their tasks there too, docs/policies.md).
    pub exe_args: Vec<String>,
    /// Threads for the nodes that run here (aggregation).
    pub local_threads: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error("cannot run `{program}`: {error}")]
    Missing { program: String, error: String },
    #[error("`{command}` failed (exit status {status:?}): {stderr}")]
    Command {
        command: String,
        status: Option<i32>,
        stderr: String,
    },
    #[error("sbatch refused the submission: {message}")]
    Refused { message: String },
    #[error("{message}")]
    PartlySubmitted { message: String },
    #[error("cannot read the batch record {path}: {error}")]
    BatchUnreadable { path: PathBuf, error: String },
    #[error("batch {batch} has {tasks} tasks; there is no task {task}")]
    NoSuchTask {
        batch: String,
        task: usize,
        tasks: usize,
    },
    #[error("the cache directory {path} does not exist on this node")]
    CacheMissing { path: PathBuf },
    #[error(
        "--detach needs a batch system to hand the work to; inside an allocation (SLURM_JOB_ID is set) tasks are srun steps, which end with this process"
    )]
    DetachInAllocation,
    #[error("interrupted: {done} of {total} nodes done; {cancelled}")]
    Interrupted {
        done: usize,
        total: usize,
        cancelled: String,
    },
    #[error("failed to access {path}: {error}")]
    Io { path: PathBuf, error: String },
    #[error(transparent)]
    Cache(#[from] CacheError),
}

impl SlurmError {
    pub fn io(path: &Path, error: std::io::Error) -> SlurmError {
        SlurmError::Io {
            path: path.to_path_buf(),
            error: error.to_string(),
        }
    }

    pub fn hint(&self) -> Option<String> {
        Some(match self {
            SlurmError::Missing { .. } => {
                "run on a machine with the Slurm client tools (sbatch, squeue, scancel) on PATH, \
                 or use --executor local"
                    .into()
            }
            SlurmError::Refused { message } if message.contains("QOSMaxSubmitJob") => {
                "the QOS limits how many jobs you may have queued: raise `slurm.pack_seconds` or \
                 lower `slurm.max_tasks` so fewer array tasks are submitted"
                    .into()
            }
            SlurmError::Refused { message } if message.contains("array size") => {
                "set `slurm.max_array_size` below the cluster's MaxArraySize (scontrol show \
                 config)"
                    .into()
            }
            SlurmError::Refused { .. } => {
                "check `slurm.partition`, `account`, `qos`, `time` and `mem` in schedlab.yaml \
                 against `sinfo` and your site's limits"
                    .into()
            }
            SlurmError::BatchUnreadable { .. } | SlurmError::CacheMissing { .. } => {
                "the results directory must be on a file system every compute node sees (NFS, \
                 Lustre, GPFS…): pass --results on such a file system (docs/slurm.md)"
                    .into()
            }
            SlurmError::Interrupted { .. } => {
                "run again to resume: finished nodes are cached".into()
            }
            SlurmError::PartlySubmitted { .. } => {
                "a later `schedlab run --executor slurm` waits for what was submitted and \
                 submits the rest"
                    .into()
            }
            _ => return None,
        })
    }
}

/// Rough simulation throughput used to turn cost estimates into seconds for packing (jobs
/// simulated per second, parse and metrics included; BENCHMARKS.md). Packing only: a wrong
/// guess changes how many tasks there are, never a result.
pub const COST_UNITS_PER_SECOND: u64 = 500_000;

/// The node indices Slurm computes: simulate nodes not in the cache.
fn remote_nodes(context: &Context<'_>) -> Vec<usize> {
    context
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            !n.cached
                && matches!(
                    context.prepared.plan.nodes[*i].kind,
                    NodeKind::Simulate { .. }
                )
        })
        .map(|(i, _)| i)
        .collect()
}

/// `SLURM_JOB_ID` is set: this process runs inside an allocation.
pub fn in_allocation() -> bool {
    std::env::var_os("SLURM_JOB_ID").is_some_and(|v| !v.is_empty())
}

impl Executor for Slurm {
    fn execute(
        &self,
        context: &Context<'_>,
        work: &Work<'_>,
        observer: &dyn Observer,
    ) -> Result<Vec<Event>, ExecuteError> {
        let nodes = context.nodes;
        let remote = remote_nodes(context);
        observer.started(nodes.iter().filter(|n| !n.cached).count(), nodes.len());
        let outcomes = watch::compute_remote(self, context, &remote, observer)?;

        // The local wave: remote nodes that finished count as present, failed ones fail again
        // here so that the DAG executor blocks what depends on them.
        let local_nodes: Vec<DagNode> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut n = n.clone();
                if let Some(outcome) = outcomes.get(&i) {
                    n.cached = outcome.is_ok();
                }
                n
            })
            .collect();
        let local_work = |i: usize| match outcomes.get(&i) {
            Some(Err(error)) => Err(error.clone()),
            _ => work(i),
        };
        let forward = LocalWave {
            inner: observer,
            remote_keys: outcomes.keys().map(|&i| nodes[i].key.as_str()).collect(),
        };
        let mut events = dag::execute(&local_nodes, self.local_threads, &local_work, &forward);
        for (i, event) in events.iter_mut().enumerate() {
            if let Some(outcome) = outcomes.get(&i) {
                *event = watch::remote_event(&nodes[i], outcome);
            }
        }
        observer.finished();
        Ok(events)
    }
}

/// Forwards the local wave's events, except those of remote nodes (already reported).
struct LocalWave<'a> {
    inner: &'a dyn Observer,
    remote_keys: BTreeSet<&'a str>,
}

impl Observer for LocalWave<'_> {
    fn event(&self, event: &Event) {
        if !self.remote_keys.contains(event.key.as_str()) {
            self.inner.event(event);
        }
    }
}
