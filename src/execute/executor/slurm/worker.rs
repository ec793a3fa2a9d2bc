//! The worker: what an array task (or `srun` step) runs on a compute node, as the hidden
//! `schedlab worker BATCH_DIR` command. It computes the nodes of its task into the shared
//! cache with the same entries and the same commit as a local run, staging them in the batch's
//! own directory (so no sweep of the cache's `tmp/` by a later run can touch them).
//!
//! It writes one line per node to stderr — the task's log — which the submitting process
//! reads: `schedlab-worker: done LABEL`, or `schedlab-worker: failed {"key":…,"label":…,
//! "error":…}`. Exit status: 0 when every node is in the cache, 1 when some node failed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::SlurmError;
use super::batch::{Batch, TaskNode};
use crate::cache::{self, DigestCache, EntryStore};
use crate::execute::meter::Meter;
use crate::execute::simulate_node::{self, TraceCache};
use crate::manifest::{self, Manifest};
use crate::plan::{NodeKey, build::simulate_material};

/// The prefix of every line the worker writes for the submitter to read.
pub const PREFIX: &str = "schedlab-worker:";

/// A node failure as the worker logs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeFailure {
    pub key: String,
    pub label: String,
    pub error: String,
}

impl NodeFailure {
    pub fn log_line(&self) -> String {
        format!(
            "{PREFIX} failed {}",
            serde_json::to_string(self).expect("failure serializes")
        )
    }

    /// The failures a task log records, by key.
    pub fn from_log(log: &str) -> BTreeMap<String, NodeFailure> {
        log.lines()
            .filter_map(|l| l.strip_prefix(PREFIX)?.trim().strip_prefix("failed "))
            .filter_map(|json| serde_json::from_str::<NodeFailure>(json).ok())
            .map(|f| (f.key.clone(), f))
            .collect()
    }
}

/// What a task did.
#[derive(Debug, Default)]
pub struct TaskReport {
    pub computed: usize,
    pub cached: usize,
    pub failed: usize,
}

/// Computes the nodes of task `task` of the batch recorded in `batch_dir`.
pub fn run_task(batch_dir: &Path, task: usize) -> Result<TaskReport, SlurmError> {
    let batch = Batch::load_header(batch_dir)?;
    if task >= batch.task_count {
        return Err(SlurmError::NoSuchTask {
            batch: batch.id.clone(),
            task,
            tasks: batch.task_count,
        });
    }
    let nodes = &Batch::load_task(batch_dir, task)?;
    // The batch lives in `<state dir>/slurm/<id>/`.
    let state_dir = batch_dir
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| cache::state_dir(&batch.results), Path::to_path_buf);
    if !state_dir.is_dir() {
        return Err(SlurmError::CacheMissing { path: state_dir });
    }
    let host = std::env::var("SLURMD_NODENAME")
        .or_else(|_| std::fs::read_to_string("/proc/sys/kernel/hostname"))
        .unwrap_or_default();
    eprintln!(
        "{PREFIX} batch {} task {task} on {}: {} nodes",
        batch.id,
        host.trim(),
        nodes.len()
    );
    let entries = EntryStore::with_staging(
        &state_dir,
        &batch_dir.join("staging").join(task.to_string()),
    );
    let mut manifests: BTreeMap<usize, Result<Manifest, String>> = BTreeMap::new();
    let mut checked_traces = BTreeMap::new();
    let traces = TraceCache::default();
    let mut report = TaskReport::default();
    for node in nodes {
        if entries.contains(&node.key) {
            report.cached += 1;
            eprintln!("{PREFIX} cached {}", node.label);
            continue;
        }
        let started = Instant::now();
        let manifest = manifests.entry(node.manifest).or_insert_with(|| {
            let path = batch
                .manifests
                .get(node.manifest)
                .ok_or("no such manifest")?;
            let mut loaded = [manifest::load(path).map_err(|e| e.to_string())?];
            // Windows are placed on their traces as when the run was planned.
            crate::execute::selection::place_and_check(&mut loaded).map_err(|e| e.to_string())?;
            let [m] = loaded;
            Ok(m)
        });
        let result = compute(
            node,
            manifest.as_ref().map_err(Clone::clone),
            &mut checked_traces,
            &traces,
            &entries,
        );
        match result {
            Ok(()) => {
                report.computed += 1;
                eprintln!(
                    "{PREFIX} done {} ({:.2}s)",
                    node.label,
                    started.elapsed().as_secs_f64()
                );
            }
            Err(error) => {
                report.failed += 1;
                let failure = NodeFailure {
                    key: node.key.clone(),
                    label: node.label.clone(),
                    error,
                };
                eprintln!("{}", failure.log_line());
            }
        }
    }
    Ok(report)
}

/// Rebuilds the node's key material from its manifest and the planned trace digest, refuses a
/// key that differs from the planned one, verifies the trace's content, then computes and
/// commits the entry exactly as a local run does.
fn compute(
    node: &TaskNode,
    manifest: Result<&Manifest, String>,
    checked_traces: &mut BTreeMap<PathBuf, Result<(), String>>,
    traces: &TraceCache,
    entries: &EntryStore,
) -> Result<(), String> {
    let manifest = manifest?;
    let cell = manifest
        .cells
        .iter()
        .find(|c| c.id == node.cell)
        .ok_or_else(|| {
            format!(
                "{} no longer has the cell `{}` it had at submission; run again",
                manifest.path.display(),
                node.cell
            )
        })?;
    let digest = match (cell.workload.trace(), &node.trace) {
        (Some(path), Some(digest)) => {
            checked_traces
                .entry(path.clone())
                .or_insert_with(|| verify_trace(path, digest))
                .clone()?;
            Some(digest)
        }
        (None, None) => None,
        _ => {
            return Err(format!(
                "the workload of cell `{}` in {} changed kind since submission; run again",
                node.cell,
                manifest.path.display()
            ));
        }
    };
    let key = NodeKey::of(&simulate_material(cell, digest));
    if key.as_str() != node.key {
        return Err(format!(
            "the node's key is {} here but was {} when submitted: {} or the schedlab \
             binary changed since; run again",
            key.short(),
            &node.key[..12.min(node.key.len())],
            manifest.path.display()
        ));
    }
    let entry = entries.begin(&node.key).map_err(|e| e.to_string())?;
    simulate_node::run(cell, &manifest.limits, traces, &entry, &Meter::detached())?;
    entry.commit().map_err(|e| e.to_string())?;
    Ok(())
}

fn verify_trace(path: &Path, planned: &cache::Digest) -> Result<(), String> {
    let found = DigestCache::in_memory()
        .digest(path)
        .map_err(|e| e.to_string())?;
    if &found != planned {
        return Err(format!(
            "{} changed since submission (its content hash differs); run again",
            path.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_round_trip_through_the_log() {
        let f = NodeFailure {
            key: "abc".into(),
            label: "exp/cell".into(),
            error: "line one\nline two: \"quoted\"".into(),
        };
        let log = format!("noise\n{}\n{PREFIX} done x\n", f.log_line());
        let found = NodeFailure::from_log(&log);
        assert_eq!(found.get("abc"), Some(&f));
        assert_eq!(found.len(), 1);
    }
}
