//! `schedlab status`: the batches recorded in a results directory, their tasks by Slurm state
//! (one `squeue` call) and their nodes done (from the cache). Reads only.

use std::collections::BTreeMap;
use std::path::Path;

use super::SlurmError;
use super::batch::{Batch, Mode};
use super::commands;
use super::worker::NodeFailure;
use crate::cache::EntryStore;

pub struct BatchStatus {
    pub batch: Batch,
    /// Slurm state name (or `ENDED` once Slurm has forgotten the task) → tasks.
    pub tasks: BTreeMap<String, usize>,
    pub nodes_done: usize,
    /// Node failures recorded in the task logs: (label, error).
    pub failures: Vec<(String, String)>,
}

impl BatchStatus {
    /// Some task is still queued or running.
    pub fn active(&self) -> bool {
        self.tasks.contains_key("PENDING") || self.tasks.contains_key("RUNNING")
    }
}

/// The status of every batch in `state_dir`, oldest first.
pub fn status(state_dir: &Path) -> Result<Vec<BatchStatus>, SlurmError> {
    let batches = Batch::list(state_dir);
    let jobs: Vec<String> = batches
        .iter()
        .filter(|b| b.mode == Mode::Array && !b.finished)
        .flat_map(|b| b.job_ids())
        .collect();
    let rows = commands::squeue(&jobs)?;
    let entries = EntryStore::new(state_dir);
    Ok(batches
        .into_iter()
        .map(|batch| {
            let mut state_of = vec!["ENDED".to_string(); batch.tasks.len()];
            for row in &rows {
                for &index in &row.tasks {
                    if let Some(t) = batch.task_of(&row.array_job, index) {
                        state_of[t] = row.state.name().to_string();
                    }
                }
            }
            let mut tasks = BTreeMap::new();
            for s in state_of {
                *tasks.entry(s).or_default() += 1;
            }
            let nodes_done = batch
                .tasks
                .iter()
                .flatten()
                .filter(|n| entries.contains(&n.key))
                .count();
            let failures = (0..batch.tasks.len())
                .filter_map(|t| std::fs::read_to_string(batch.log_path(t)).ok())
                .flat_map(|log| NodeFailure::from_log(&log).into_values())
                .map(|f| (f.label, f.error))
                .collect();
            BatchStatus {
                batch,
                tasks,
                nodes_done,
                failures,
            }
        })
        .collect())
}
