//! A *batch*: the nodes one `run` handed to Slurm, recorded in the results directory so that
//! workers on compute nodes can find their work and a later `run` or `status` can pick it up.
//!
//! ```text
//! results/.schedlab/slurm/<batch id>/batch.json   the record below (written before sbatch)
//! results/.schedlab/slurm/<batch id>/tasks/<t>.json  the nodes of task t (written once)
//! results/.schedlab/slurm/<batch id>/logs/        one log per array task (or srun step)
//! results/.schedlab/slurm/<batch id>/staging/<task>/  entries being written by one task
//! ```
//!
//! The plan is made once, on the submitting machine: the record lists each task's nodes with
//! their keys and the content digests of their traces; a worker rebuilds a node's key material
//! from the manifest and refuses to compute it if the key differs (the manifest, a trace or the
//! schedlab build changed since submission).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SlurmError;
use crate::cache::{self, Digest};

/// How a batch's tasks were started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `sbatch --array`: tasks outlive the submitting process.
    Array,
    /// `srun` steps inside the allocation the submitting process runs in.
    Steps,
}

/// A node as a worker computes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskNode {
    pub key: String,
    pub label: String,
    /// Index into [`Batch::manifests`].
    pub manifest: usize,
    /// The id of the cell the node computes.
    pub cell: String,
    /// Content digest of the trace the cell reads, as planned (none for synthetic workloads).
    pub trace: Option<Digest>,
}

/// One `sbatch --array` submission: tasks `first_task .. first_task + count` of the batch, as
/// array indices `0 .. count`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayJob {
    pub job: String,
    pub first_task: usize,
    pub count: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub id: String,
    pub mode: Mode,
    /// Absolute path of the results directory.
    pub results: PathBuf,
    /// Absolute paths of the manifests the nodes come from.
    pub manifests: Vec<PathBuf>,
    /// The nodes of each task, in the order the task computes them. Stored one file per task
    /// (`tasks/<t>.json`), so that a task reads its own few nodes, not the whole batch.
    #[serde(skip)]
    pub tasks: Vec<Vec<TaskNode>>,
    pub task_count: usize,
    /// The arrays submitted (empty for steps, or before submission).
    #[serde(default)]
    pub arrays: Vec<ArrayJob>,
    /// Every task has ended and the outcome was collected by a `run`.
    #[serde(default)]
    pub finished: bool,
}

/// Where batches live: `results/.schedlab/slurm/`.
pub fn batches_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("slurm")
}

impl Batch {
    pub const FILE: &'static str = "batch.json";

    pub fn dir(&self) -> PathBuf {
        batches_dir(&cache::state_dir(&self.results)).join(&self.id)
    }

    pub fn staging_dir(&self) -> PathBuf {
        self.dir().join("staging")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.dir().join("logs")
    }

    /// The log of task `task` (Slurm writes `%A_%a.log` for arrays).
    pub fn log_path(&self, task: usize) -> PathBuf {
        match self.array_of(task) {
            Some((array, index)) => self.logs_dir().join(format!("{}_{index}.log", array.job)),
            None => self.logs_dir().join(format!("step-{task}.log")),
        }
    }

    /// The array holding `task`, and its index in that array.
    pub fn array_of(&self, task: usize) -> Option<(&ArrayJob, u32)> {
        self.arrays
            .iter()
            .find(|a| (a.first_task..a.first_task + a.count).contains(&task))
            .map(|a| (a, (task - a.first_task) as u32))
    }

    /// The batch task of index `index` of array job `job`.
    pub fn task_of(&self, job: &str, index: u32) -> Option<usize> {
        self.arrays
            .iter()
            .find(|a| a.job == job && (index as usize) < a.count)
            .map(|a| a.first_task + index as usize)
    }

    pub fn job_ids(&self) -> Vec<String> {
        self.arrays.iter().map(|a| a.job.clone()).collect()
    }

    pub fn node_count(&self) -> usize {
        self.tasks.iter().map(Vec::len).sum()
    }

    /// Writes `batch.json` atomically (creating the batch's directories), and the task files
    /// the first time (all at once: written aside, then renamed into place).
    pub fn save(&self) -> Result<(), SlurmError> {
        let dir = self.dir();
        for d in [&dir, &self.logs_dir(), &self.staging_dir()] {
            std::fs::create_dir_all(d).map_err(|e| SlurmError::io(d, e))?;
        }
        let tasks_dir = dir.join("tasks");
        if !tasks_dir.is_dir() {
            let aside = dir.join("tasks.tmp");
            let _ = std::fs::remove_dir_all(&aside);
            std::fs::create_dir_all(&aside).map_err(|e| SlurmError::io(&aside, e))?;
            for (t, nodes) in self.tasks.iter().enumerate() {
                let path = aside.join(format!("{t}.json"));
                let text = serde_json::to_string(nodes).expect("task serializes");
                std::fs::write(&path, text).map_err(|e| SlurmError::io(&path, e))?;
            }
            std::fs::rename(&aside, &tasks_dir).map_err(|e| SlurmError::io(&tasks_dir, e))?;
        }
        let text = serde_json::to_string_pretty(self).expect("batch serializes");
        cache::write_atomic(&dir.join(Self::FILE), text.as_bytes()).map_err(SlurmError::Cache)
    }

    /// Reads the record in `dir` without its tasks' nodes. A missing file on a compute node
    /// almost always means the results directory is not on a file system the node sees: the
    /// error's hint says so.
    pub fn load_header(dir: &Path) -> Result<Batch, SlurmError> {
        let path = dir.join(Self::FILE);
        let unreadable = |error: String| SlurmError::BatchUnreadable {
            path: path.clone(),
            error,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| unreadable(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| unreadable(format!("not a batch record: {e}")))
    }

    /// The nodes of task `task` of the batch in `dir`.
    pub fn load_task(dir: &Path, task: usize) -> Result<Vec<TaskNode>, SlurmError> {
        let path = dir.join("tasks").join(format!("{task}.json"));
        let text = std::fs::read_to_string(&path).map_err(|e| SlurmError::BatchUnreadable {
            path: path.clone(),
            error: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| SlurmError::BatchUnreadable {
            path,
            error: format!("not a task record: {e}"),
        })
    }

    /// Reads the whole record in `dir`, every task's nodes included.
    pub fn load(dir: &Path) -> Result<Batch, SlurmError> {
        let mut batch = Batch::load_header(dir)?;
        batch.tasks = (0..batch.task_count)
            .map(|t| Batch::load_task(dir, t))
            .collect::<Result<_, _>>()?;
        Ok(batch)
    }

    /// Every batch recorded in `state_dir`, oldest first (ids sort by submission time).
    pub fn list(state_dir: &Path) -> Vec<Batch> {
        let Ok(dirs) = std::fs::read_dir(batches_dir(state_dir)) else {
            return Vec::new();
        };
        let mut batches: Vec<Batch> = dirs
            .flatten()
            .filter_map(|d| Batch::load(&d.path()).ok())
            .collect();
        batches.sort_by(|a, b| a.id.cmp(&b.id));
        batches
    }

    /// Removes the batch's directory (record, logs, staging debris).
    pub fn remove(&self) -> Result<(), SlurmError> {
        let dir = self.dir();
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(SlurmError::io(&dir, e)),
        }
    }
}

/// A new batch id: the UTC time of submission (`YYYYMMDD-HHMMSS-micros`) and the process id,
/// so ids sort by submission time and read as a date.
pub fn new_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs();
    let (y, m, d) = crate::calendar::civil_from_days((secs / 86_400) as i64);
    let t = secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{:06}-{}",
        t / 3600,
        t / 60 % 60,
        t % 60,
        now.subsec_micros(),
        std::process::id()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_map_to_arrays_and_back() {
        let batch = Batch {
            id: "b".into(),
            mode: Mode::Array,
            results: PathBuf::from("/r"),
            manifests: vec![],
            tasks: vec![vec![]; 5],
            task_count: 5,
            arrays: vec![
                ArrayJob {
                    job: "10".into(),
                    first_task: 0,
                    count: 3,
                },
                ArrayJob {
                    job: "11".into(),
                    first_task: 3,
                    count: 2,
                },
            ],
            finished: false,
        };
        assert_eq!(
            batch.array_of(4).map(|(a, i)| (a.job.as_str(), i)),
            Some(("11", 1))
        );
        assert_eq!(batch.task_of("11", 1), Some(4));
        assert_eq!(batch.task_of("10", 3), None);
        assert!(batch.log_path(4).ends_with("slurm/b/logs/11_1.log"));
    }
}
