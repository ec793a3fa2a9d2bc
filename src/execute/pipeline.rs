//! A whole run: digests of the inputs, the plan, each node's state against the cache, then —
//! holding the results lock — the entries this run will read verified (damaged ones quarantined
//! and recomputed), the DAG executed, key materials recorded, and every finished experiment's
//! files published to `results/<experiment>/`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::dag::{DagNode, Event, Observer, Outcome};
use super::executor::{Context, ExecuteError, Executor, Local};
use super::interrupt::Interrupt;
use super::meter::Meter;
use super::simulate_node::TraceCache;
use super::{aggregate_node, git, metrics_node, simulate_node};
use crate::cache::publish::{self, is_current};
use crate::cache::{self, CacheError, DigestCache, EntryStore, Materials, Opened, ResultsLock};
use crate::manifest::{Manifest, WorkloadSource};
use crate::plan::{self, Inputs, NodeKind, NodeState, Plan, Reason, reason};

/// The files of an experiment's result set.
pub const RESULT_FILES: [&str; 12] = [
    "summary.parquet",
    "jobs.parquet",
    "timeseries.parquet",
    "reservations.parquet",
    "users.parquet",
    "user_timeseries.parquet",
    "clusters.parquet",
    "cluster_timeseries.parquet",
    "queues.parquet",
    "job_penalties.parquet",
    "eet_heatmap.parquet",
    "eet_usage.parquet",
];

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(
        "two manifests define the experiment `{name}`: {} and {}",
        first.display(),
        second.display()
    )]
    DuplicateExperiment {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error(transparent)]
    Execute(#[from] ExecuteError),
    /// A cell whose machine cannot be sized: its cluster takes the size from a trace without
    /// a MaxProcs header (the run would refuse it; `plan` says so first).
    #[error("{0}")]
    NoMachineSize(String),
    /// A workload whose filters keep no job of its trace, or whose dated window the trace
    /// cannot place (`selection`).
    #[error("{0}")]
    Selection(Box<crate::manifest::ManifestError>),
}

/// Everything known before running: the plan and each node's state.
pub struct Prepared {
    pub manifests: Vec<Manifest>,
    pub plan: Plan,
    pub states: Vec<NodeState>,
    pub commit: Option<String>,
    /// The name the run's records get (`schedlab run --name`), checked by [`check_run_name`].
    pub run_name: Option<String>,
    results: PathBuf,
}

/// Hashes inputs (through the stat cache), plans, and compares with the cache. Reads only.
pub fn prepare(mut manifests: Vec<Manifest>, results: &Path) -> Result<Prepared, PipelineError> {
    let mut names: BTreeMap<&str, &Path> = BTreeMap::new();
    for m in &manifests {
        if let Some(first) = names.insert(&m.name, &m.path) {
            return Err(PipelineError::DuplicateExperiment {
                name: m.name.clone(),
                first: first.to_path_buf(),
                second: m.path.clone(),
            });
        }
    }
    let state_dir = cache::state_dir(results);
    let mut digest_cache = DigestCache::load(&state_dir);
    let mut digests = BTreeMap::new();
    for m in &manifests {
        let mut last: Option<&PathBuf> = None;
        for cell in &m.cells {
            if let Some(trace) = cell.workload.trace()
                && last != Some(trace)
            {
                last = Some(trace);
                if !digests.contains_key(trace) {
                    let d = digest_cache.digest(trace)?;
                    digests.insert(trace.clone(), d);
                }
            }
        }
    }
    check_machine_sizes(&manifests)?;
    super::selection::place_and_check(&mut manifests).map_err(PipelineError::Selection)?;
    // Saving the stat cache is an optimisation: a read-only results dir must not stop a plan.
    let _ = digest_cache.save();
    let first_dir = manifests
        .first()
        .map(|m| m.path.parent().unwrap_or(Path::new(".")).to_path_buf());
    let commit = first_dir.as_deref().and_then(git::commit_of);
    let commands = commands(&manifests, first_dir.as_deref().and_then(git::toplevel_of));
    let plan = plan::build(
        &manifests,
        &Inputs {
            digests: &digests,
            commit: commit.as_deref(),
            commands: &commands,
        },
    );
    let entries = EntryStore::new(&state_dir);
    let states = states(&plan, &manifests, &entries, &Materials::new(&state_dir));
    Ok(Prepared {
        manifests,
        plan,
        states,
        commit,
        run_name: None,
        results: results.to_path_buf(),
    })
}

/// Every cell whose cluster takes its size from the trace (`from_trace`, or no `procs`) needs
/// a trace with a MaxProcs header: checked here, on the headers only, so that `plan` refuses
/// what `run` would.
fn check_machine_sizes(manifests: &[Manifest]) -> Result<(), PipelineError> {
    let mut checked: BTreeMap<&Path, bool> = BTreeMap::new();
    for m in manifests {
        for cell in &m.cells {
            if cell.cluster.procs.is_some() || cell.cluster.topology.is_some() {
                continue;
            }
            let Some(trace) = cell.workload.trace() else {
                continue;
            };
            // A job table names no machine: the cluster must.
            if let crate::swf::TraceFormat::Table(_) = cell.workload.reading.format {
                return Err(PipelineError::NoMachineSize(format!(
                    "{}: cell {}: cluster `{}` takes its size from the trace, but {} is a job \
                     table, which names no machine size; give the cluster `procs: N` or a \
                     `topology` in the manifest",
                    m.path.display(),
                    cell.id,
                    cell.cluster.name,
                    trace.display()
                )));
            }
            // A Batsim workload is sized by its `nb_res`, checked when the workload is read.
            if cell.workload.reading.format != crate::swf::TraceFormat::Swf {
                continue;
            }
            let sized = *checked.entry(trace.as_path()).or_insert_with(|| {
                // An unreadable trace is reported by hashing it; only a readable one that
                // lacks the header is refused here.
                crate::swf::read_header_path(trace).map_or(true, |h| h.max_procs.is_some())
            });
            if !sized {
                return Err(PipelineError::NoMachineSize(format!(
                    "{}: cell {}: cluster `{}` takes its size from the trace, but {} has no \
                     MaxProcs header; give the cluster `procs: N` in the manifest",
                    m.path.display(),
                    cell.id,
                    cell.cluster.name,
                    trace.display()
                )));
            }
        }
    }
    Ok(())
}

/// The command that reproduces each manifest's results, recorded as their provenance:
/// `schedlab run` and the manifest's path relative to the repository's top folder (as given
/// outside a repository). Options that cannot change results (`-j`, `--quiet`, `--events`) are
/// left out, so results stay byte-identical whatever they were.
fn commands(manifests: &[Manifest], toplevel: Option<PathBuf>) -> Vec<String> {
    let top = toplevel.and_then(|t| t.canonicalize().ok());
    manifests
        .iter()
        .map(|m| {
            let relative = top.as_ref().and_then(|top| {
                let full = m.path.canonicalize().ok()?;
                Some(full.strip_prefix(top).ok()?.to_path_buf())
            });
            match relative {
                Some(rel) => format!("schedlab run {}", rel.to_string_lossy().replace('\\', "/")),
                None => plan::build::default_command(m),
            }
        })
        .collect()
}

/// Each node's state: cached, or to run and why (its material compared with the material it had
/// when it last ran, read one record line at a time).
fn states(
    plan: &Plan,
    manifests: &[Manifest],
    entries: &EntryStore,
    materials: &Materials,
) -> Vec<NodeState> {
    let cached = entries.contains_each(plan.nodes.iter().map(|n| n.key.as_str()));
    let mut states: Vec<NodeState> = cached
        .iter()
        .map(|&cached| {
            if cached {
                NodeState::Cached
            } else {
                NodeState::ToRun(Reason::New)
            }
        })
        .collect();
    // Experiment → label → node, for the nodes to run of experiments with a record.
    let mut to_run: BTreeMap<&str, HashMap<&str, usize>> = BTreeMap::new();
    let mut recorded: BTreeMap<&str, bool> = BTreeMap::new();
    for (i, node) in plan.nodes.iter().enumerate() {
        if matches!(states[i], NodeState::ToRun(_)) {
            let experiment = node.label.split('/').next().unwrap_or_default();
            if *recorded
                .entry(experiment)
                .or_insert_with(|| materials.exists(experiment))
            {
                to_run.entry(experiment).or_default().insert(&node.label, i);
            }
        }
    }
    for (experiment, labels) in to_run {
        materials.for_each(experiment, |label, old| {
            if let Some(&i) = labels.get(label) {
                states[i] = NodeState::ToRun(reason(Some(&old), &plan.material(manifests, i)));
            }
        });
    }
    states
}

/// One line of `results/.schedlab/runs.json`: which aggregate entry holds an experiment's
/// results from a run, at which commit, under which name if the run was given one (read by
/// `schedlab diff`; docs/diff.md). The file keeps each experiment's runs in order, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub experiment: String,
    pub commit: Option<String>,
    pub key: String,
    /// The name given with `schedlab run --name` (one record per experiment holds a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// How many unnamed runs of one experiment `runs.json` remembers (named ones are all kept).
pub const UNNAMED_RUNS_KEPT: usize = 50;

/// Checks a run name (`run --name`): letters, digits, `.`, `_` and `-`, starting with a letter
/// or digit, not `latest` — so that `@<name>` in `diff` is never `@latest` or `@~N`.
pub fn check_run_name(name: &str) -> Result<(), String> {
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && name.len() <= 100
        && name != "latest";
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid run name {name:?}: use letters, digits, '.', '_' and '-', starting with a letter or digit (at most 100 characters; not `latest`, which `diff @latest` means), e.g. --name baseline"
        ))
    }
}

pub struct RunReport {
    pub events: Vec<Event>,
    /// Steps after the nodes that failed (publishing, records), each with its cause.
    pub problems: Vec<String>,
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

/// The message of a node stopped by an interrupt.
const INTERRUPTED: &str = "interrupted";

/// Executes `prepared` with `threads` local threads, holding the results lock. `interrupt`
/// stops it cleanly between writes.
pub fn run(
    prepared: &Prepared,
    threads: usize,
    wait_for_lock: bool,
    observer: &dyn Observer,
    interrupt: &Interrupt,
) -> Result<RunReport, PipelineError> {
    run_with(
        prepared,
        &Local { threads },
        wait_for_lock,
        observer,
        interrupt,
    )
}

/// Executes `prepared` with `executor`, holding the results lock. `interrupt` stops it cleanly
/// between writes.
pub fn run_with(
    prepared: &Prepared,
    executor: &dyn Executor,
    wait_for_lock: bool,
    observer: &dyn Observer,
    interrupt: &Interrupt,
) -> Result<RunReport, PipelineError> {
    let state_dir = cache::state_dir(&prepared.results);
    let _lock = ResultsLock::acquire(&state_dir, wait_for_lock)?;
    interrupt.set_holds_lock();
    let entries = EntryStore::new(&state_dir);
    entries.sweep_staging()?;
    let plan = &prepared.plan;
    let manifests = &prepared.manifests;
    // Re-check the cache under the lock: another run may have finished nodes meanwhile.
    let mut cached = entries.contains_each(plan.nodes.iter().map(|n| n.key.as_str()));
    verify_what_will_be_read(prepared, &entries, &mut cached, observer)?;
    let nodes = dag_nodes_with(prepared, &cached);
    interrupt.set_total(nodes.len());
    // Simulate and metrics nodes both read their cell's workload.
    let traces = TraceCache::expecting(plan.nodes.iter().zip(&nodes).filter_map(|(n, d)| {
        let (NodeKind::Simulate { cell: (e, c) } | NodeKind::Metrics { cell: (e, c) }) = n.kind
        else {
            return None;
        };
        let workload = &manifests[e].cells[c].workload;
        (!d.cached).then(|| {
            Some((
                workload.trace()?.clone(),
                workload.lenient,
                workload.reading.clone(),
            ))
        })?
    }));
    let committed = AtomicU64::new(0);
    let abort_after: Option<u64> = std::env::var(ABORT_AFTER_ENV)
        .ok()
        .and_then(|v| v.parse().ok());
    let work = |i: usize| -> Result<(), String> {
        let node = &plan.nodes[i];
        let entry = {
            let _writing = interrupt.write_guard().ok_or(INTERRUPTED)?;
            entries
                .begin(node.key.as_str())
                .map_err(|e| e.to_string())?
        };
        match &node.kind {
            NodeKind::Simulate { cell: (e, c) } => {
                let cell = &manifests[*e].cells[*c];
                // The progress display follows the simulation through its meter while it runs.
                let detached = Meter::detached();
                let running = observer
                    .meters()
                    .map(|m| m.start(i, &node.label, nodes[i].cost));
                let meter = running.as_ref().map_or(&detached, |r| &*r.meter);
                let result =
                    simulate_node::run(cell, &manifests[*e].limits, &traces, &entry, meter);
                drop(running);
                if let Some(path) = cell.workload.trace() {
                    traces.done(path, cell.workload.lenient, &cell.workload.reading);
                }
                result?;
            }
            NodeKind::Metrics { cell: (e, c) } => {
                let cell = &manifests[*e].cells[*c];
                let simulation = &plan.nodes[plan.simulation_of(i)].key;
                let result = entries
                    .open(simulation.as_str())
                    .map_err(|e| e.to_string())
                    .and_then(|schedule| {
                        metrics_node::run(cell, &manifests[*e].limits, &traces, &schedule, &entry)
                    });
                if let Some(path) = cell.workload.trace() {
                    traces.done(path, cell.workload.lenient, &cell.workload.reading);
                }
                result?;
            }
            NodeKind::Aggregate { experiment } => {
                let manifest = &manifests[*experiment];
                let keys: Vec<_> = plan.cell_keys(*experiment).cloned().collect();
                let provenance = aggregate_node::Provenance {
                    commit: prepared.commit.clone(),
                    command: plan.command(manifests, *experiment),
                    traces: plan.traces(manifests, *experiment).to_string(),
                };
                aggregate_node::run(manifest, &keys, &provenance, &entries, &entry)?;
            }
        }
        let _writing = interrupt.write_guard().ok_or(INTERRUPTED)?;
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
        interrupt,
    };
    let counting = Counting {
        observer,
        interrupt,
    };
    let events = executor.execute(&context, &work, &counting)?;

    let mut problems = Vec::new();
    // What an interrupted publish left (issue 37): removed before publishing again.
    if let Err(err) = publish::sweep(&prepared.results) {
        problems.push(format!("failed to remove an interrupted publish: {err}"));
    }
    for (e, manifest) in manifests.iter().enumerate() {
        let aggregate = plan.aggregate_of(e);
        if let Some(i) = aggregate
            && matches!(events[i].outcome, Outcome::Ran | Outcome::Hit)
        {
            let Some(_writing) = interrupt.write_guard() else {
                break;
            };
            let key = plan.nodes[i].key.as_str();
            let dir = prepared.results.join(&manifest.name);
            match publish::publish(&entries, key, &RESULT_FILES, &dir) {
                Ok(done) => {
                    for name in done.restored {
                        observer.warning(&format!(
                            "{} was changed or removed since it was published; restored it from the cache (published results are copies: edit a copy elsewhere)",
                            dir.join(name).display()
                        ));
                    }
                }
                Err(err) => problems.push(format!("failed to publish {}: {err}", manifest.name)),
            }
            let run = RunRecord {
                experiment: manifest.name.clone(),
                commit: prepared.commit.clone(),
                key: key.to_string(),
                name: prepared.run_name.clone(),
            };
            if let Err(err) = record_run(&state_dir, run) {
                problems.push(format!(
                    "failed to record the run of {}: {err}",
                    manifest.name
                ));
            }
        }
        // Only a run that computed something changes what "last run" means for its nodes.
        let indices = plan.cell_nodes[e]
            .iter()
            .flat_map(|&m| [plan.simulation_of(m), m])
            .chain(aggregate);
        if indices.clone().all(|i| events[i].outcome == Outcome::Hit) {
            continue;
        }
        let Some(_writing) = interrupt.write_guard() else {
            break;
        };
        let record = manifest
            .cells
            .iter()
            .zip(&plan.cell_nodes[e])
            .flat_map(|(cell, &m)| {
                let label = format!("{}/{}", manifest.name, cell.id);
                [
                    (
                        label.clone(),
                        plan.material(manifests, plan.simulation_of(m)),
                    ),
                    (format!("{label}/metrics"), plan.material(manifests, m)),
                ]
            })
            .chain(aggregate.map(|i| (plan.nodes[i].label.clone(), plan.material(manifests, i))));
        // The record only explains reruns: failing to save it loses nothing computed.
        if let Err(err) = Materials::new(&state_dir).save(&manifest.name, record) {
            observer.warning(&format!(
                "failed to record the key material of {} (`plan` will say `new` for its nodes): {err}",
                manifest.name
            ));
        }
    }
    Ok(RunReport { events, problems })
}

/// The executor's view of the plan: each node with its cache state and cost estimate.
pub fn dag_nodes(prepared: &Prepared, entries: &EntryStore) -> Vec<DagNode> {
    let plan = &prepared.plan;
    let cached = entries.contains_each(plan.nodes.iter().map(|n| n.key.as_str()));
    dag_nodes_with(prepared, &cached)
}

/// [`dag_nodes`] with the cache state given.
fn dag_nodes_with(prepared: &Prepared, cached: &[bool]) -> Vec<DagNode> {
    let plan = &prepared.plan;
    plan.nodes
        .iter()
        .zip(cached)
        .map(|(n, &cached)| DagNode {
            label: n.label.clone(),
            key: n.key.clone(),
            deps: n.deps.clone(),
            cached,
            cost: cost_estimate(plan, &prepared.manifests, n),
        })
        .collect()
}

/// Counts finished nodes for [`Interrupt::progress`] and passes events on.
struct Counting<'a> {
    observer: &'a dyn Observer,
    interrupt: &'a Interrupt,
}

impl Observer for Counting<'_> {
    fn started(&self, to_run: usize, total: usize) {
        self.observer.started(to_run, total);
    }
    fn costs(&self, to_run: u64) {
        self.observer.costs(to_run);
    }
    fn event(&self, event: &Event) {
        if matches!(event.outcome, Outcome::Ran | Outcome::Hit) {
            self.interrupt.node_done();
        }
        if self.interrupt.requested() && event.outcome.is_interrupted() {
            return;
        }
        self.observer.event(event);
    }
    fn warning(&self, message: &str) {
        self.observer.warning(message);
    }
    fn note(&self, text: &str) {
        self.observer.note(text);
    }
    fn finished(&self) {
        self.observer.finished();
    }
    fn meters(&self) -> Option<&super::meter::Meters> {
        self.observer.meters()
    }
}

impl Outcome {
    /// True for a node stopped by an interrupt (not a failure of its own).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, Outcome::Failed { error } if error == INTERRUPTED)
    }
}

/// Verifies, before running, every cached entry this run will read: the entries of the cells
/// of an aggregate that must run, the schedules of the metrics nodes that must run, and the
/// aggregate entries whose published files must be (re)written. A damaged or half-present entry is quarantined with a warning and its node
/// recomputed — and an aggregate to recompute makes its cells' entries needed in turn.
fn verify_what_will_be_read(
    prepared: &Prepared,
    entries: &EntryStore,
    cached: &mut [bool],
    observer: &dyn Observer,
) -> Result<(), CacheError> {
    let plan = &prepared.plan;
    let mut checked = vec![false; plan.nodes.len()];
    let mut check = |i: usize, cached: &mut [bool]| -> Result<(), CacheError> {
        if std::mem::replace(&mut checked[i], true) {
            return Ok(());
        }
        let node = &plan.nodes[i];
        match entries.open_or_quarantine(node.key.as_str())? {
            Opened::Valid(_) | Opened::Absent => {}
            Opened::Quarantined { why, to } => {
                cached[i] = false;
                observer.warning(&format!(
                    "cache entry of {} was damaged ({why}); moved it to {} and computing it again",
                    node.label,
                    to.display()
                ));
            }
        }
        Ok(())
    };
    for (e, manifest) in prepared.manifests.iter().enumerate() {
        let Some(a) = plan.aggregate_of(e) else {
            continue;
        };
        let dir = prepared.results.join(&manifest.name);
        if cached[a] && !is_current(&dir, plan.nodes[a].key.as_str(), &RESULT_FILES) {
            check(a, cached)?;
        }
        if !cached[a] {
            for &c in &plan.nodes[a].deps {
                if cached[c] {
                    check(c, cached)?;
                }
            }
        }
    }
    // A metrics node to run reads its schedule.
    for (i, node) in plan.nodes.iter().enumerate() {
        if !cached[i] && matches!(node.kind, NodeKind::Metrics { .. }) {
            let simulation = plan.simulation_of(i);
            if cached[simulation] {
                check(simulation, cached)?;
            }
        }
    }
    // A directory without its marker would stop the node's commit: set it aside now.
    for (i, node) in plan.nodes.iter().enumerate() {
        if !cached[i] && entries.is_partial(node.key.as_str()) {
            check(i, cached)?;
        }
    }
    Ok(())
}

/// A rough cost of a node for ordering work and estimating time left (never for results): the
/// jobs it simulates — trace size, or the jobs kept by `first_jobs`, or a synthetic workload's
/// expected count — weighted by policy; computing metrics costs a quarter of simulating FCFS;
/// aggregation of an experiment is costed like its cells.
fn cost_estimate(plan: &Plan, manifests: &[Manifest], node: &plan::Node) -> u64 {
    let ((e, c), simulates) = match node.kind {
        NodeKind::Aggregate { experiment } => {
            return manifests[experiment].cells.len() as u64 * 1_000;
        }
        NodeKind::Simulate { cell } => (cell, true),
        NodeKind::Metrics { cell } => (cell, false),
    };
    let cell = &manifests[e].cells[c];
    // About 20 compressed bytes per job line in the archive's gzip traces.
    let guess = match &cell.workload.source {
        WorkloadSource::Trace(path) => plan.trace_bytes(path) / 20,
        WorkloadSource::Synthetic(spec) => spec.expected_jobs().unwrap_or(100_000.0) as u64,
    };
    let jobs = cell
        .workload
        .transforms
        .first_jobs
        .map_or(guess, |n| n.min(guess))
        .max(1);
    if !simulates {
        return (jobs / 4).max(1);
    }
    let weight = if cell.scheduler.policy == crate::sim::SchedulerKind::Conservative {
        20
    } else {
        1
    };
    jobs.saturating_mul(weight)
}

/// Records a run of an experiment in `runs.json`.
fn record_run(state_dir: &Path, record: RunRecord) -> Result<(), CacheError> {
    let path = state_dir.join("runs.json");
    let records: Vec<RunRecord> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let updated = with_run(records, record);
    let text = serde_json::to_string_pretty(&updated).expect("records serialize");
    cache::write_atomic(&path, text.as_bytes())
}

/// `records` after a run of `record.experiment`: its record last. The same results again (same
/// key and commit) move to the end rather than repeat, keeping their name unless the run gives
/// one; a name moves to the newest run that takes it; beyond [`UNNAMED_RUNS_KEPT`] unnamed
/// runs of the experiment, the oldest are forgotten.
pub fn with_run(mut records: Vec<RunRecord>, mut record: RunRecord) -> Vec<RunRecord> {
    let same_experiment = |r: &RunRecord| r.experiment == record.experiment;
    if let Some(i) = records
        .iter()
        .position(|r| same_experiment(r) && r.key == record.key && r.commit == record.commit)
    {
        let old = records.remove(i);
        record.name = record.name.or(old.name);
    }
    if let Some(name) = &record.name {
        for r in records.iter_mut() {
            if same_experiment(r) && r.name.as_ref() == Some(name) {
                r.name = None;
            }
        }
    }
    records.push(record);
    let experiment = records.last().expect("just pushed").experiment.clone();
    let unnamed = records
        .iter()
        .filter(|r| r.experiment == experiment && r.name.is_none())
        .count();
    let mut forget = unnamed.saturating_sub(UNNAMED_RUNS_KEPT);
    records.retain(|r| {
        let drop = forget > 0 && r.experiment == experiment && r.name.is_none();
        forget -= usize::from(drop);
        !drop
    });
    records
}

/// The runs recorded in `results/`, oldest first.
pub fn recorded_runs(results: &Path) -> Vec<RunRecord> {
    let path = cache::state_dir(results).join("runs.json");
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(experiment: &str, key: &str, name: Option<&str>) -> RunRecord {
        RunRecord {
            experiment: experiment.into(),
            commit: Some("c".into()),
            key: key.into(),
            name: name.map(Into::into),
        }
    }

    fn keys(records: &[RunRecord]) -> Vec<(&str, &str, Option<&str>)> {
        records
            .iter()
            .map(|r| (r.experiment.as_str(), r.key.as_str(), r.name.as_deref()))
            .collect()
    }

    #[test]
    fn runs_keep_their_order_names_move_and_repeats_do_not_stack() {
        let mut runs = Vec::new();
        runs = with_run(runs, record("a", "k1", Some("base")));
        runs = with_run(runs, record("b", "m1", None));
        runs = with_run(runs, record("a", "k2", None));
        // The same results again: moved to the end, keeping their name.
        runs = with_run(runs, record("a", "k1", None));
        assert_eq!(
            keys(&runs),
            [
                ("b", "m1", None),
                ("a", "k2", None),
                ("a", "k1", Some("base"))
            ]
        );
        // A name moves to the newest run given it (per experiment).
        runs = with_run(runs, record("a", "k3", Some("base")));
        runs = with_run(runs, record("b", "m2", Some("base")));
        assert_eq!(
            keys(&runs),
            [
                ("b", "m1", None),
                ("a", "k2", None),
                ("a", "k1", None),
                ("a", "k3", Some("base")),
                ("b", "m2", Some("base")),
            ]
        );
    }

    #[test]
    fn only_the_latest_unnamed_runs_of_an_experiment_are_remembered() {
        let mut runs = vec![
            record("a", "named", Some("keep")),
            record("b", "other", None),
        ];
        for i in 0..UNNAMED_RUNS_KEPT + 5 {
            runs = with_run(runs, record("a", &format!("k{i}"), None));
        }
        let a: Vec<&str> = runs
            .iter()
            .filter(|r| r.experiment == "a" && r.name.is_none())
            .map(|r| r.key.as_str())
            .collect();
        assert_eq!(a.len(), UNNAMED_RUNS_KEPT);
        assert_eq!(a[0], "k5");
        assert_eq!(*a.last().unwrap(), format!("k{}", UNNAMED_RUNS_KEPT + 4));
        assert!(runs.iter().any(|r| r.name.as_deref() == Some("keep")));
        assert!(runs.iter().any(|r| r.key == "other"));
    }

    #[test]
    fn run_names_are_plain_words() {
        for ok in ["baseline", "v1.2", "before_fix-3"] {
            assert!(check_run_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "~1", "-x", "a/b", "../up", "a b", "latest!", "latest"] {
            assert!(check_run_name(bad).is_err(), "{bad}");
        }
    }
}
