//! A whole run: digests of the inputs, the plan, each node's state against the cache, then —
//! holding the results lock — the DAG executed, key materials recorded, and every finished
//! experiment's files published to `results/<experiment>/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::dag::{DagNode, Event, Observer, Outcome};
use super::executor::{Context, ExecuteError, Executor, Local};
use super::simulate_node::TraceCache;
use super::{aggregate_node, git, simulate_node};
use crate::cache::{self, CacheError, DigestCache, EntryStore, Materials, ResultsLock};
use crate::manifest::Manifest;
use crate::plan::{self, Inputs, NodeKind, NodeState, Plan, reason};

/// The files of an experiment's result set.
pub const RESULT_FILES: [&str; 7] = [
    "summary.parquet",
    "jobs.parquet",
    "timeseries.parquet",
    "reservations.parquet",
    "clusters.parquet",
    "cluster_timeseries.parquet",
    "queues.parquet",
];

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("two manifests define the experiment `{0}`")]
    DuplicateExperiment(String),
    #[error(transparent)]
    Execute(#[from] ExecuteError),
}

/// Everything known before running: the plan and each node's state.
pub struct Prepared {
    pub manifests: Vec<Manifest>,
    pub plan: Plan,
    pub states: Vec<NodeState>,
    pub commit: Option<String>,
    results: PathBuf,
}

/// Hashes inputs (through the stat cache), plans, and compares with the cache. Reads only.
pub fn prepare(manifests: Vec<Manifest>, results: &Path) -> Result<Prepared, PipelineError> {
    let mut names = std::collections::BTreeSet::new();
    for m in &manifests {
        if !names.insert(m.name.clone()) {
            return Err(PipelineError::DuplicateExperiment(m.name.clone()));
        }
    }
    let state_dir = cache::state_dir(results);
    let mut digest_cache = DigestCache::load(&state_dir);
    let mut digests = BTreeMap::new();
    for cell in manifests.iter().flat_map(|m| &m.cells) {
        if let Some(trace) = cell.workload.trace()
            && !digests.contains_key(trace)
        {
            let d = digest_cache.digest(trace)?;
            digests.insert(trace.clone(), d);
        }
    }
    // Saving the stat cache is an optimisation: a read-only results dir must not stop a plan.
    let _ = digest_cache.save();
    let commit = manifests
        .first()
        .and_then(|m| git::commit_of(m.path.parent().unwrap_or(Path::new("."))));
    let plan = plan::build(
        &manifests,
        &Inputs {
            digests: &digests,
            commit: commit.as_deref(),
        },
    );
    let entries = EntryStore::new(&state_dir);
    let materials = Materials::new(&state_dir);
    let mut previous: BTreeMap<String, BTreeMap<String, serde_json::Value>> = BTreeMap::new();
    let states = plan
        .nodes
        .iter()
        .map(|node| {
            if entries.contains(node.key.as_str()) {
                return NodeState::Cached;
            }
            let experiment = node.label.split('/').next().unwrap_or_default().to_string();
            let record = previous
                .entry(experiment.clone())
                .or_insert_with(|| materials.load(&experiment));
            NodeState::ToRun(reason(record.get(&node.label), &node.material))
        })
        .collect();
    Ok(Prepared {
        manifests,
        plan,
        states,
        commit,
        results: results.to_path_buf(),
    })
}

/// One line of `results/.schedlab/runs.json`: which aggregate entry holds an experiment's
/// results for a commit (read by `schedlab diff`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub experiment: String,
    pub commit: Option<String>,
    pub key: String,
}

pub struct RunReport {
    pub events: Vec<Event>,
}

impl RunReport {
    pub fn failed(&self) -> Vec<&Event> {
        self.events
            .iter()
            .filter(|e| matches!(e.outcome, Outcome::Failed { .. } | Outcome::Blocked { .. }))
            .collect()
    }
}

/// Test aid (docs/cache.md): abort the process, as a crash would, once this many entries have
/// been committed in this run.
const ABORT_AFTER_ENV: &str = "SCHEDLAB_FAILPOINT_ABORT_AFTER";

/// Executes `prepared` with `threads` local threads, holding the results lock.
pub fn run(
    prepared: &Prepared,
    threads: usize,
    wait_for_lock: bool,
    observer: &dyn Observer,
) -> Result<RunReport, PipelineError> {
    run_with(prepared, &Local { threads }, wait_for_lock, observer)
}

/// Executes `prepared` with `executor`, holding the results lock.
pub fn run_with(
    prepared: &Prepared,
    executor: &dyn Executor,
    wait_for_lock: bool,
    observer: &dyn Observer,
) -> Result<RunReport, PipelineError> {
    let state_dir = cache::state_dir(&prepared.results);
    let _lock = ResultsLock::acquire(&state_dir, wait_for_lock)?;
    let entries = EntryStore::new(&state_dir);
    entries.sweep_staging()?;
    let plan = &prepared.plan;
    // Re-check the cache under the lock: another run may have finished nodes meanwhile.
    let nodes = dag_nodes(plan, &entries);
    let traces = TraceCache::default();
    let committed = AtomicU64::new(0);
    let abort_after: Option<u64> = std::env::var(ABORT_AFTER_ENV)
        .ok()
        .and_then(|v| v.parse().ok());
    let work = |i: usize| -> Result<(), String> {
        let node = &plan.nodes[i];
        let entry = entries
            .begin(node.key.as_str())
            .map_err(|e| e.to_string())?;
        match &node.kind {
            NodeKind::Simulate { cells } => {
                let (e, c) = cells[0];
                simulate_node::run(&prepared.manifests[e].cells[c], &traces, &entry)?;
            }
            NodeKind::Aggregate { experiment } => {
                let manifest = &prepared.manifests[*experiment];
                let keys: Vec<_> = manifest_cell_keys(plan, *experiment);
                aggregate_node::run(
                    manifest,
                    &keys,
                    &metadata(manifest, prepared.commit.as_deref()),
                    &entries,
                    &entry,
                )?;
            }
        }
        entry.commit().map_err(|e| e.to_string())?;
        let n = committed.fetch_add(1, Ordering::SeqCst) + 1;
        if abort_after == Some(n) {
            std::process::abort();
        }
        Ok(())
    };
    let context = Context {
        prepared,
        nodes: &nodes,
        state_dir: &state_dir,
    };
    let events = executor.execute(&context, &work, observer)?;

    // (experiment, cell) → index of the simulate node computing it.
    let mut node_of_cell = BTreeMap::new();
    for (i, node) in plan.nodes.iter().enumerate() {
        if let NodeKind::Simulate { cells } = &node.kind {
            node_of_cell.extend(cells.iter().map(|&ec| (ec, i)));
        }
    }
    for (e, manifest) in prepared.manifests.iter().enumerate() {
        let cell_nodes: Vec<(&String, usize)> = manifest
            .cells
            .iter()
            .enumerate()
            .filter_map(|(c, cell)| node_of_cell.get(&(e, c)).map(|&i| (&cell.id, i)))
            .collect();
        let aggregate = aggregate_of(plan, e);
        if let Some((i, node)) = aggregate
            && matches!(events[i].outcome, Outcome::Ran | Outcome::Hit)
        {
            publish(&prepared.results, manifest, &entries, node.key.as_str())?;
            let run = RunRecord {
                experiment: manifest.name.clone(),
                commit: prepared.commit.clone(),
                key: node.key.0.clone(),
            };
            record_run(&state_dir, run)?;
        }
        // Only a run that computed something changes what "last run" means for its nodes.
        let indices = cell_nodes
            .iter()
            .map(|&(_, i)| i)
            .chain(aggregate.map(|(i, _)| i));
        if indices.clone().all(|i| events[i].outcome == Outcome::Hit) {
            continue;
        }
        let mut record: BTreeMap<String, serde_json::Value> = cell_nodes
            .iter()
            .map(|&(id, i)| {
                (
                    format!("{}/{id}", manifest.name),
                    plan.nodes[i].material.clone(),
                )
            })
            .collect();
        if let Some((_, node)) = aggregate {
            record.insert(node.label.clone(), node.material.clone());
        }
        Materials::new(&state_dir).save(&manifest.name, &record)?;
    }
    Ok(RunReport { events })
}

/// The executor's view of the plan: each node with its cache state and cost estimate.
pub fn dag_nodes(plan: &Plan, entries: &EntryStore) -> Vec<DagNode> {
    plan.nodes
        .iter()
        .map(|n| DagNode {
            label: n.label.clone(),
            key: n.key.clone(),
            deps: n.deps.clone(),
            cached: entries.contains(n.key.as_str()),
            cost: cost_estimate(n),
        })
        .collect()
}

/// A rough cost of a node for ordering work (never for results): trace size, or the jobs kept
/// by `first_jobs`, weighted by policy; aggregation of an experiment is costed like its cells.
fn cost_estimate(node: &plan::Node) -> u64 {
    let m = &node.material;
    if m["node"] == "aggregate" {
        return m["cells"].as_array().map_or(1, |c| c.len() as u64) * 1_000;
    }
    // About 20 compressed bytes per job line in the archive's gzip traces; a synthetic workload
    // of a job count is that many jobs, one of a time span is guessed at 100,000.
    let synthetic = &m["workload"]["synthetic"]["length"];
    let guess = match m["workload"]["trace"]["bytes"].as_u64() {
        Some(bytes) => bytes / 20,
        None => synthetic["jobs"].as_u64().unwrap_or(100_000),
    };
    let jobs = m["workload"]["transforms"]["first_jobs"]
        .as_u64()
        .map_or(guess, |n| n.min(guess));
    let weight = if m["scheduler"]["policy"] == "conservative" {
        20
    } else {
        1
    };
    jobs.max(1) * weight
}

fn aggregate_of(plan: &Plan, experiment: usize) -> Option<(usize, &plan::Node)> {
    plan.nodes
        .iter()
        .enumerate()
        .find(|(_, n)| n.kind == NodeKind::Aggregate { experiment })
}

/// The simulate-node key of every cell of `experiment`, in cell order.
fn manifest_cell_keys(plan: &Plan, experiment: usize) -> Vec<plan::NodeKey> {
    let Some((_, agg)) = aggregate_of(plan, experiment) else {
        return Vec::new();
    };
    agg.material["cells"]
        .as_array()
        .map(|cells| {
            cells
                .iter()
                .map(|c| plan::NodeKey(c["key"].as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Key-value metadata of an experiment's result files.
fn metadata(manifest: &Manifest, commit: Option<&str>) -> Vec<(String, String)> {
    vec![
        ("schedlab.experiment".into(), manifest.name.clone()),
        ("schedlab.manifest_hash".into(), manifest.hash.clone()),
        ("schedlab.version".into(), env!("CARGO_PKG_VERSION").into()),
        ("schedlab.commit".into(), commit.unwrap_or("none").into()),
        (
            "schedlab.model_version".into(),
            plan::build::MODEL_VERSION.into(),
        ),
    ]
}

/// Copies the experiment's result files from its aggregate entry into `results/<name>/`, each
/// atomically, then records which entry they came from in `.key` (so an interrupted publish is
/// redone next time, and an up-to-date one is skipped).
fn publish(
    results: &Path,
    manifest: &Manifest,
    entries: &EntryStore,
    key: &str,
) -> Result<(), CacheError> {
    let dir = results.join(&manifest.name);
    let stamp = dir.join(".key");
    if std::fs::read_to_string(&stamp).is_ok_and(|k| k.trim() == key)
        && RESULT_FILES.iter().all(|f| dir.join(f).is_file())
    {
        return Ok(());
    }
    let source = entries.open(key)?;
    std::fs::create_dir_all(&dir).map_err(|e| CacheError::io(&dir, e))?;
    for name in RESULT_FILES {
        publish_file(&source.join(name), &dir.join(name))?;
    }
    cache::write_atomic(&stamp, format!("{key}\n").as_bytes())
}

/// Puts `target` in place as a copy of the immutable cache file `source`: a hard link when the
/// file system allows (no bytes copied), else a copy; either way through a temporary name and a
/// rename, so `target` is never half-written. Tools that rewrite a result file replace it, which
/// breaks the link; the cache entry itself is verified against its hashes whenever it is read.
fn publish_file(source: &Path, target: &Path) -> Result<(), CacheError> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".publish-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    if std::fs::hard_link(source, &tmp).is_err() {
        std::fs::copy(source, &tmp).map_err(|e| CacheError::io(target, e))?;
    }
    std::fs::rename(&tmp, target).map_err(|e| CacheError::io(target, e))
}

/// Appends (or updates) the run record of an experiment at a commit in `runs.json`.
fn record_run(state_dir: &Path, record: RunRecord) -> Result<(), CacheError> {
    let path = state_dir.join("runs.json");
    let mut records: Vec<RunRecord> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if records.contains(&record) {
        return Ok(());
    }
    records.retain(|r| !(r.experiment == record.experiment && r.commit == record.commit));
    records.push(record);
    let text = serde_json::to_string_pretty(&records).expect("records serialize");
    cache::write_atomic(&path, text.as_bytes())
}

/// The runs recorded in `results/`, oldest first.
pub fn recorded_runs(results: &Path) -> Vec<RunRecord> {
    let path = cache::state_dir(results).join("runs.json");
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}
