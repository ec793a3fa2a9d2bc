//! A simulate node: load (once per run) and transform the workload, simulate one cell, and
//! stream its schedule into the node's cache entry (`schedule.parquet` with the run's
//! [`ScheduleFacts`], `instants.parquet`; `reservations.parquet` only when the cell has
//! reservations). No metric is computed here: the metrics node reads the schedule
//! ([`super::metrics_node`]), so metric settings never cause a simulation. Its source is part of
//! the model version (build.rs).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;

use super::meter::{Meter, Metered};
use crate::analysis::Moments;
use crate::cache::EntryWriter;
use crate::manifest::{Cell, Limits, WorkloadSource, synthetic};
use crate::sim::limits::LimitsOutcome;
use crate::sim::metrics::ReservationCounts;
use crate::sim::reservation::Reservations;
use crate::sim::run::{CustomPolicy, run_into};
use crate::sim::{Infeasible, Machine, SimConfig, Time, Workload};
use crate::store::schedule::ScheduleWriter;
use crate::store::write_reservations;
use crate::swf::{Anomalies, Mode, ReadOptions, Trace};

/// A trace parsed at most once per run (or the error reading it).
type TraceSlot = Arc<OnceLock<Result<Arc<Trace>, String>>>;

/// A trace, as cells read it: its path, whether it is read leniently, and how.
pub type TraceId = (PathBuf, bool, ReadOptions);

/// Traces parsed during this run, shared by every cell that uses them. When the number of
/// nodes reading each trace is known ([`TraceCache::expecting`]), a trace is dropped after its
/// last reader ([`TraceCache::done`]): a run's memory holds the traces being worked on, not
/// every trace it has read.
#[derive(Default)]
pub struct TraceCache {
    traces: Mutex<HashMap<TraceId, TraceSlot>>,
    remaining: Mutex<HashMap<TraceId, usize>>,
}

impl TraceCache {
    /// A cache told which traces the nodes to run will read (one item per node).
    pub fn expecting(reads: impl IntoIterator<Item = TraceId>) -> Self {
        let mut remaining = HashMap::new();
        for read in reads {
            *remaining.entry(read).or_insert(0) += 1;
        }
        TraceCache {
            traces: Mutex::default(),
            remaining: Mutex::new(remaining),
        }
    }

    pub fn get(
        &self,
        path: &Path,
        lenient: bool,
        reading: &ReadOptions,
    ) -> Result<Arc<Trace>, String> {
        let slot = self
            .traces
            .lock()
            .unwrap()
            .entry((path.to_path_buf(), lenient, reading.clone()))
            .or_default()
            .clone();
        slot.get_or_init(|| {
            crate::source::read_path(path, Mode::from_lenient(lenient), reading)
                .map(|mut trace| {
                    // The recorded waits serve `trace stats` and `trace eet`, never a node: 8
                    // bytes a job not held for the rest of the run (issue 16).
                    trace.recorded_waits = Vec::new();
                    Arc::new(trace)
                })
                .map_err(|e| e.to_string())
        })
        .clone()
    }

    /// A node that read (or failed to read) the trace is done with it: the last one expected
    /// drops it.
    pub fn done(&self, path: &Path, lenient: bool, reading: &ReadOptions) {
        let id = (path.to_path_buf(), lenient, reading.clone());
        let mut remaining = self.remaining.lock().unwrap();
        if let Some(n) = remaining.get_mut(&id) {
            *n -= 1;
            if *n == 0 {
                remaining.remove(&id);
                self.traces.lock().unwrap().remove(&id);
            }
        }
    }
}

/// What a simulate entry records of its run besides the schedule (`schedule.parquet`'s
/// metadata): the settings and the workload's facts the summary reports, and what of the
/// outcome is not per simulated job.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct ScheduleFacts {
    pub policy: String,
    pub procs: u64,
    pub node_size: Option<u32>,
    pub interval: Option<i64>,
    pub overrun: String,
    /// The machine's capacity in allocation units.
    pub capacity: u64,
    pub trace_jobs: u64,
    /// Coefficient of variation of the interarrival times of the simulated workload (after
    /// transforms): 1 for a Poisson stream, larger when arrivals come in bursts.
    pub interarrival_cv: Option<f64>,
    pub trace_jobs_skipped: u64,
    pub trace_malformed_lines: u64,
    pub anomalies: Anomalies,
    /// Jobs that can never run on the machine (never simulated).
    pub skipped_too_large: u64,
    /// Jobs that can never run on the machine or that the queue setup refused, by reason
    /// (every infeasibility reason, 0 included).
    pub skipped_by_reason: BTreeMap<String, u64>,
    pub reservations: ReservationCounts,
    /// With queues and limits: each job's queue, what held or killed it, the rejected jobs.
    pub limits: Option<LimitsOutcome>,
    /// The first and last processed instants (none for an empty schedule).
    pub span: Option<(Time, Time)>,
}

/// CV of the gaps between consecutive submissions (population standard deviation over mean);
/// `None` with fewer than two gaps or a zero mean.
pub fn interarrival_cv(workload: &Workload) -> Option<f64> {
    let gaps = workload
        .jobs
        .windows(2)
        .map(|w| (w[1].submit - w[0].submit) as f64);
    Moments::of(gaps).filter(|m| m.n >= 2).and_then(|m| m.cv)
}

/// A cell's workload before transforms: a shared parsed trace, or generated for the cell.
pub enum Source {
    Trace(Arc<Trace>),
    Generated(Workload),
}

impl Source {
    pub fn workload(&self) -> &Workload {
        match self {
            Source::Trace(trace) => &trace.workload,
            Source::Generated(workload) => workload,
        }
    }
}

/// What the summary records of a workload's source.
pub struct SourceFacts {
    pub jobs: u64,
    pub skipped: u64,
    pub malformed: u64,
    pub anomalies: Anomalies,
    pub max_procs: Option<u32>,
}

/// The cell's workload before transforms: read (once per run) from its trace, or generated
/// from its synthetic model with the replica seed.
pub fn source_workload(
    cell: &Cell,
    traces: &TraceCache,
    limits: &Limits,
) -> Result<(Source, SourceFacts), String> {
    match &cell.workload.source {
        WorkloadSource::Trace(path) => {
            let trace = traces.get(path, cell.workload.lenient, &cell.workload.reading)?;
            let facts = SourceFacts {
                jobs: trace.records,
                skipped: trace.anomalies.skipped(),
                malformed: trace.malformed.count,
                anomalies: trace.anomalies,
                max_procs: trace.header.max_procs,
            };
            Ok((Source::Trace(trace), facts))
        }
        WorkloadSource::Synthetic(spec) => {
            let workload = synthetic::generate_workload(spec, cell.seed, limits.max_jobs)?;
            let facts = SourceFacts {
                jobs: workload.len() as u64,
                skipped: 0,
                malformed: 0,
                anomalies: Anomalies::default(),
                max_procs: None,
            };
            Ok((Source::Generated(workload), facts))
        }
    }
}

/// The cell's machine: its topology, or a pool (in whole nodes) of its processors or the trace's
/// MaxProcs.
pub fn cell_machine(cell: &Cell, facts: &SourceFacts) -> Result<Machine, String> {
    if let Some(topology) = &cell.cluster.topology {
        return Ok(topology.machine());
    }
    let procs = match cell.cluster.procs.or(facts.max_procs) {
        Some(p) => p,
        None => {
            let what = match cell.workload.trace() {
                Some(path) => format!("{} has no MaxProcs header", path.display()),
                None => format!("workload `{}` gives no machine size", cell.workload.name),
            };
            return Err(format!(
                "{what}; give the cluster `procs: N` in the manifest"
            ));
        }
    };
    match cell.cluster.node_size {
        None => Ok(Machine::pool(procs)),
        Some(k) if u64::from(procs / k) > crate::sim::topology::MAX_NODES => Err(format!(
            "{procs} processors (MaxProcs) in nodes of {k} are {} nodes; at most {} are supported",
            procs / k,
            crate::sim::topology::MAX_NODES
        )),
        Some(k) if procs % k == 0 => Ok(Machine::exclusive_nodes(procs / k, k)),
        Some(k) => Err(format!(
            "{procs} processors (MaxProcs) do not divide into nodes of {k}"
        )),
    }
}

/// The cell's simulated workload (after transforms) and its source's facts; `keep` receives
/// them (the workload may borrow a shared trace).
pub fn with_workload<T>(
    cell: &Cell,
    limits: &Limits,
    traces: &TraceCache,
    keep: impl FnOnce(&Workload, &SourceFacts) -> Result<T, String>,
) -> Result<T, String> {
    let (source, facts) = source_workload(cell, traces, limits)?;
    let workload: Cow<'_, Workload> = cell
        .workload
        .transforms
        .to_transforms()
        .apply_cow(source.workload());
    if workload.jobs.is_empty() {
        return Err(no_job_left(cell, source.workload().len()));
    }
    keep(&workload, &facts)
}

/// The error for a workload whose filters leave no job: which filters, and how many jobs they
/// had to choose from.
fn no_job_left(cell: &Cell, before: usize) -> String {
    let filters = cell.workload.transforms.filters();
    let name = &cell.workload.name;
    if filters.is_empty() {
        return format!("workload `{name}` has no job");
    }
    format!(
        "workload `{name}`: no job is left after its filter{} {} (of {before} jobs); a cell \
         needs at least one job — widen the filter in `workloads.{name}`",
        if filters.len() == 1 { "" } else { "s" },
        filters.join(", ")
    )
}

pub fn run(
    cell: &Cell,
    limits: &Limits,
    traces: &TraceCache,
    entry: &EntryWriter,
    meter: &Meter,
) -> Result<(), String> {
    with_workload(cell, limits, traces, |workload, facts| {
        simulate(cell, workload, facts, entry, meter)
    })
}

fn simulate(
    cell: &Cell,
    workload: &Workload,
    facts: &SourceFacts,
    entry: &EntryWriter,
    meter: &Meter,
) -> Result<(), String> {
    let machine = cell_machine(cell, facts)?;
    let config = SimConfig {
        order: cell.scheduler.order.clone(),
        machine: machine.clone(),
        scheduler: cell.scheduler.policy,
        interval: cell.scheduler.interval,
        overrun: cell.scheduler.overrun,
        placement: cell.scheduler.placement,
    };
    let reservations = match &cell.reservations {
        Some(spec) => spec
            .for_run(&machine, workload, cell.seed)
            .map_err(|e| format!("reservations `{}`: {e}", spec.name))?,
        None => Reservations::default(),
    };
    let mut schedule = ScheduleWriter::create(
        &entry.path("schedule.parquet"),
        &entry.path("instants.parquet"),
        workload,
    )
    .map_err(|e| e.to_string())?;
    if let (Some(first), Some(last)) = (workload.jobs.first(), workload.jobs.last()) {
        meter.span(first.submit, last.submit);
    }
    // Progress displays read the simulated time reached through the meter (no I/O here).
    let mut metered = Metered {
        inner: &mut schedule,
        meter,
    };
    let custom = match &cell.scheduler.python {
        Some(python) => Some(CustomPolicy {
            policy: super::custom_policy::build(python)?,
            fairshare: python.fairshare.clone(),
        }),
        None => None,
    };
    // The schedule streams into the entry as it is simulated: nothing per scheduler call stays
    // in memory.
    let outcome = run_into(
        workload,
        &config,
        &reservations,
        cell.queues.as_deref().map(|setup| &setup.limits),
        custom,
        &mut metered,
    )
    .map_err(|e| e.to_string())?;
    let mut skipped_by_reason: BTreeMap<String, u64> = Infeasible::ALL
        .iter()
        .map(|r| (r.name().to_string(), 0))
        .collect();
    for (_, reason) in &outcome.skipped {
        *skipped_by_reason
            .entry(reason.name().to_string())
            .or_default() += 1;
    }
    // Jobs refused by the queue setup (only cells with one count these reasons).
    for (_, why) in outcome.limits.iter().flat_map(|l| &l.rejected) {
        *skipped_by_reason.entry(why.name().to_string()).or_default() += 1;
    }
    let span = schedule.span();
    let facts = ScheduleFacts {
        policy: match &cell.scheduler.python {
            Some(_) => "python".to_string(),
            None => cell.scheduler.policy.to_string(),
        },
        procs: machine.procs(),
        node_size: cell.cluster.node_size,
        interval: cell.scheduler.interval,
        overrun: cell.scheduler.overrun.name().to_string(),
        capacity: machine.capacity().unit_count(),
        trace_jobs: facts.jobs,
        interarrival_cv: interarrival_cv(workload),
        trace_jobs_skipped: facts.skipped,
        trace_malformed_lines: facts.malformed,
        anomalies: facts.anomalies,
        skipped_too_large: outcome.skipped.len() as u64,
        skipped_by_reason,
        reservations: ReservationCounts::of(&outcome),
        limits: outcome.limits,
        span,
    };
    let text = serde_json::to_string(&facts).map_err(|e| e.to_string())?;
    schedule.finish(&text).map_err(|e| e.to_string())?;

    if cell.reservations.is_some() {
        write_reservations(
            &entry.path("reservations.parquet"),
            &reservations.requests,
            &outcome.reservations,
            &[],
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}
