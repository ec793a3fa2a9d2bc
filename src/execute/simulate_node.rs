//! A simulate node: load (once per run) and transform the workload, simulate one cell, compute
//! its metrics and time series, and write them into the node's cache entry: `jobs.parquet`
//! (no `cell` column: an entry may serve several cells), carrying the cell's summary as
//! key-value metadata ([`CELL_SUMMARY_KEY`]), `timeseries.parquet`, and `reservations.parquet`
//! only when the cell has reservations — with the marker, three files per entry. Its source is
//! part of the model version (build.rs).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;

use crate::analysis::Moments;
use crate::cache::EntryWriter;
use crate::manifest::{Cell, Limits, WorkloadSource, synthetic};
use crate::sim::metrics::{self, ClassSummary, MetricsConfig, RunSummary};
use crate::sim::reservation::Reservations;
use crate::sim::{Machine, SimConfig, Workload, simulate_reserving, timeseries};
use crate::store::{JobsWriter, write_reservations, write_timeseries};
use crate::swf::{self, Anomalies, Mode, Trace};

/// Traces parsed during this run, shared by every cell that uses them.
/// A trace parsed at most once per run (or the error reading it).
type TraceSlot = Arc<OnceLock<Result<Arc<Trace>, String>>>;

#[derive(Default)]
pub struct TraceCache {
    traces: Mutex<HashMap<(PathBuf, bool), TraceSlot>>,
}

impl TraceCache {
    pub fn get(&self, path: &Path, lenient: bool) -> Result<Arc<Trace>, String> {
        let slot = self
            .traces
            .lock()
            .unwrap()
            .entry((path.to_path_buf(), lenient))
            .or_default()
            .clone();
        slot.get_or_init(|| {
            swf::read_path(path, Mode::from_lenient(lenient))
                .map(Arc::new)
                .map_err(|e| e.to_string())
        })
        .clone()
    }
}

/// The key-value metadata key of `jobs.parquet` in a simulate entry that holds the cell's
/// [`CellSummary`] as JSON.
pub const CELL_SUMMARY_KEY: &str = "schedlab.cell_summary";

/// The run summary of a simulate entry (in its `jobs.parquet` metadata).
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct CellSummary {
    pub policy: String,
    pub procs: u64,
    pub node_size: Option<u32>,
    pub interval: Option<i64>,
    pub overrun: String,
    pub trace_jobs: u64,
    /// Coefficient of variation of the interarrival times of the simulated workload (after
    /// transforms): 1 for a Poisson stream, larger when arrivals come in bursts.
    pub interarrival_cv: Option<f64>,
    pub trace_jobs_skipped: u64,
    pub trace_malformed_lines: u64,
    pub anomalies: Anomalies,
    pub summary: RunSummary,
    /// Aggregates per job-size class, in the order of the manifest's classes.
    pub size_classes: Vec<ClassSummary>,
}

/// The seed of a cell's generated reservation requests: derived from the replica seed, so
/// replicas draw different requests and no other random stream shares it.
pub fn reservation_seed(seed: u64) -> u64 {
    let hash = blake3::hash(format!("schedlab/reservations/{seed}").as_bytes());
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"))
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
enum Source {
    Trace(Arc<Trace>),
    Generated(Workload),
}

impl Source {
    fn workload(&self) -> &Workload {
        match self {
            Source::Trace(trace) => &trace.workload,
            Source::Generated(workload) => workload,
        }
    }
}

/// What the summary records of a workload's source.
struct SourceFacts {
    jobs: u64,
    skipped: u64,
    malformed: u64,
    anomalies: Anomalies,
    max_procs: Option<u32>,
}

/// The cell's workload before transforms: read (once per run) from its trace, or generated
/// from its synthetic model with the replica seed.
fn source_workload(
    cell: &Cell,
    traces: &TraceCache,
    limits: &Limits,
) -> Result<(Source, SourceFacts), String> {
    match &cell.workload.source {
        WorkloadSource::Trace(path) => {
            let trace = traces.get(path, cell.workload.lenient)?;
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

pub fn run(
    cell: &Cell,
    limits: &Limits,
    traces: &TraceCache,
    entry: &EntryWriter,
) -> Result<(), String> {
    let (source, facts) = source_workload(cell, traces, limits)?;
    let workload = cell
        .workload
        .transforms
        .to_transforms()
        .apply(source.workload());
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
    let machine = match cell.cluster.node_size {
        None => Machine::pool(procs),
        Some(k) if procs % k == 0 => Machine::exclusive_nodes(procs / k, k),
        Some(k) => {
            return Err(format!(
                "{procs} processors (MaxProcs) do not divide into nodes of {k}"
            ));
        }
    };
    let config = SimConfig {
        machine: machine.clone(),
        scheduler: cell.scheduler.policy,
        interval: cell.scheduler.interval,
        overrun: cell.scheduler.overrun,
        placement: Default::default(),
    };
    let reservations = match &cell.reservations {
        Some(spec) => {
            let first = workload.jobs.first().map_or(0, |j| j.submit);
            let last = workload.jobs.last().map_or(first, |j| j.submit);
            spec.to_reservations(&machine, (first, last), reservation_seed(cell.seed))
                .map_err(|e| format!("reservations `{}`: {e}", spec.name))?
        }
        None => Reservations::default(),
    };
    let outcome =
        simulate_reserving(&workload, &config, &reservations).map_err(|e| e.to_string())?;
    let metrics_config = MetricsConfig {
        tau: cell.metrics.tau,
        warmup: cell.metrics.warmup,
    };
    let records = metrics::job_records(&workload, &outcome, metrics_config.tau);
    let capacity = machine.capacity().unit_count();
    let summary: RunSummary = metrics::summarize(&records, &outcome, capacity, &metrics_config);
    let (first, window_start, window_end) = metrics::measurement(&records, metrics_config.warmup);
    let classes = &cell.metrics.size_classes;
    let size_classes = metrics::summarize_classes(
        &records,
        &records[first..],
        classes,
        (window_start, window_end),
    );

    let cell_summary = CellSummary {
        policy: cell.scheduler.policy.to_string(),
        procs: machine.procs(),
        node_size: cell.cluster.node_size,
        interval: cell.scheduler.interval,
        overrun: cell.scheduler.overrun.name().to_string(),
        trace_jobs: facts.jobs,
        interarrival_cv: interarrival_cv(&workload),
        trace_jobs_skipped: facts.skipped,
        trace_malformed_lines: facts.malformed,
        anomalies: facts.anomalies,
        summary,
        size_classes,
    };
    let text = serde_json::to_string(&cell_summary).map_err(|e| e.to_string())?;
    let mut jobs = JobsWriter::create(
        &entry.path("jobs.parquet"),
        &[(CELL_SUMMARY_KEY.to_string(), text)],
        false,
    )
    .map_err(|e| e.to_string())?;
    jobs.write("", &records).map_err(|e| e.to_string())?;
    jobs.finish().map_err(|e| e.to_string())?;

    if cell.reservations.is_some() {
        write_reservations(
            &entry.path("reservations.parquet"),
            &reservations.requests,
            &outcome.reservations,
            &[],
        )
        .map_err(|e| e.to_string())?;
    }

    let step = cell.metrics.timeseries_step;
    check_timeseries_bins(&outcome.steps, step, limits.max_timeseries_bins)?;
    let bins = timeseries::bin(&outcome.steps, capacity, step);
    let queues: Vec<(String, Vec<f64>)> = classes
        .0
        .iter()
        .map(|c| c.name.clone())
        .zip(timeseries::queue_by_class(&records, classes, &bins, step))
        .collect();
    write_timeseries(&entry.path("timeseries.parquet"), &bins, &queues, &[])
        .map_err(|e| e.to_string())
}

/// Refuses a time series of more than `max` bins before allocating it: a long trace with a
/// short `metrics.timeseries_step` (one second over a year is 31 million bins) would otherwise
/// exhaust memory.
fn check_timeseries_bins(
    steps: &[crate::sim::Step],
    step: crate::sim::Time,
    max: u64,
) -> Result<(), String> {
    let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
        return Ok(());
    };
    let origin = first.time.div_euclid(step) * step;
    let bins = ((last.time - origin) / step) as u64 + 1;
    if bins <= max {
        return Ok(());
    }
    Err(format!(
        "the time series would have {bins} bins ({} s of schedule in steps of {step} s), more than `limits.max_timeseries_bins` ({max}); raise `metrics.timeseries_step`, or raise the limit in the manifest's `limits` section",
        last.time - first.time
    ))
}
