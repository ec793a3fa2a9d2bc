//! A simulate node: load (once per run) and transform the workload, simulate one cell, compute
//! its metrics and time series, and write them into the node's cache entry: `jobs.parquet`
//! (no `cell` column: an entry may serve several cells), carrying the cell's summary as
//! key-value metadata ([`CELL_SUMMARY_KEY`]), `timeseries.parquet`, `users.parquet`,
//! `user_timeseries.parquet`, `clusters.parquet`, `cluster_timeseries.parquet`, the EET heatmap
//! (`eet_heatmap.parquet`, `eet_usage.parquet`; `eet_outputs.rs`), and
//! `reservations.parquet` only when the cell has reservations. Its source is part of the model
//! version (build.rs).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;

use crate::analysis::Moments;
use crate::cache::EntryWriter;
use crate::manifest::{Cell, Limits, WorkloadSource, synthetic};
use crate::sim::fairshare::{PenaltyModel, PenaltySpec, Pricing, Sampling, replay};
use crate::sim::metrics::usage::{self, Fractions};
use crate::sim::metrics::{self, ClassSummary, MetricsConfig, RunSummary, UserFairness};
use crate::sim::reservation::Reservations;
use crate::sim::scheduler::order::OrderKind;
use crate::sim::{
    Infeasible, Machine, SimConfig, Workload, simulate_limited, simulate_reserving, timeseries,
};
use crate::store::{
    JobLabels, JobsWriter, OutputFile, Table, Value, write_job_penalties, write_reservations,
    write_timeseries, write_user_timeseries, write_users,
};
use crate::swf::{self, Anomalies, Mode, ReadOptions, Trace};

/// Traces parsed during this run, shared by every cell that uses them.
/// A trace parsed at most once per run (or the error reading it).
type TraceSlot = Arc<OnceLock<Result<Arc<Trace>, String>>>;

#[derive(Default)]
pub struct TraceCache {
    traces: Mutex<HashMap<(PathBuf, bool, ReadOptions), TraceSlot>>,
}

impl TraceCache {
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
            .entry((path.to_path_buf(), lenient, *reading))
            .or_default()
            .clone();
        slot.get_or_init(|| {
            swf::read_path_with(path, Mode::from_lenient(lenient), reading)
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
    /// The queue order and the fairshare settings users.parquet is computed under.
    #[serde(default)]
    pub order: String,
    #[serde(default)]
    pub penalty: String,
    #[serde(default)]
    pub charging: String,
    /// Jain's indices across users (users.parquet).
    #[serde(default)]
    pub fairness: UserFairness,
    /// How the trace was read (docs/swf.md).
    pub reading: ReadOptions,
    /// Topology settings; `None` on a processor pool.
    pub topology: Option<TopologySettings>,
    /// The machine's nodes, cores, memory (KB) and GPUs.
    pub capacity: Capacity,
    /// Utilization by resource kind over the measurement window (`None`: the machine has none
    /// of that resource).
    pub utilization_by_resource: Fractions,
    /// Jobs that can never run on the machine, by reason (every reason, 0 included).
    pub skipped_by_reason: BTreeMap<String, u64>,
    /// Expected end times: the capacity rule and the spread across users.
    #[serde(default)]
    pub eet: super::eet_outputs::CellEet,
}

/// The settings of a topology cell, as recorded in the summary.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct TopologySettings {
    pub placement: String,
    pub ignore_memory: bool,
    pub scale_runtime: bool,
}

#[derive(Debug, Default, Serialize, serde::Deserialize)]
pub struct Capacity {
    pub nodes: u64,
    pub cores: u64,
    pub memory_kb: u64,
    pub gpus: u64,
}

/// Users whose usage and factor user_timeseries.parquet follows one by one (the rest are summed).
pub const SERIES_USERS: usize = 10;

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
fn cell_machine(cell: &Cell, facts: &SourceFacts) -> Result<Machine, String> {
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
        Some(k) if procs % k == 0 => Ok(Machine::exclusive_nodes(procs / k, k)),
        Some(k) => Err(format!(
            "{procs} processors (MaxProcs) do not divide into nodes of {k}"
        )),
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
    let machine = cell_machine(cell, &facts)?;
    let config = SimConfig {
        order: cell.scheduler.order.clone(),
        machine: machine.clone(),
        scheduler: cell.scheduler.policy,
        interval: cell.scheduler.interval,
        overrun: cell.scheduler.overrun,
        placement: cell.scheduler.placement,
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
    let outcome = match &cell.queues {
        Some(setup) => simulate_limited(&workload, &config, &reservations, &setup.limits),
        None => simulate_reserving(&workload, &config, &reservations),
    }
    .map_err(|e| e.to_string())?;
    // Every time series (machine, users, clusters) bins the schedule at the same step.
    check_timeseries_bins(
        &outcome.steps,
        cell.metrics.timeseries_step,
        limits.max_timeseries_bins,
    )?;
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

    // Per user: the fairshare of the cell's settings replayed over the run (the one the order
    // used, for fairshare and priority orders), with the users' waits and slowdowns.
    let fairshare = &cell.scheduler.order.fairshare;
    let sampling = Sampling {
        origin: workload.jobs.first().map_or(0, |j| j.submit),
        step: cell.metrics.timeseries_step,
        top: SERIES_USERS,
    };
    let users_replay = replay(&workload, &outcome, &machine, fairshare, Some(sampling))
        .map_err(|e| format!("scheduler `{}`: fairshare {e}", cell.scheduler.name))?;
    let user_rows = metrics::user_rows(&records, first, &users_replay);
    // Clusters: a topology's, or the uniform machine as one cluster named after the cell's.
    let (labels, cluster_names): (Vec<String>, Vec<String>) = match &machine {
        Machine::Topology(t) => {
            let names: Vec<String> = t.topology.clusters.iter().map(|c| c.name.clone()).collect();
            (names.clone(), names)
        }
        Machine::Uniform(_) => (Vec::new(), vec![cell.cluster.name.clone()]),
    };
    let capacities = usage::cluster_capacities(&machine);
    let (per_cluster, by_resource) =
        usage::utilization(&records[..], &capacities, (window_start, window_end));
    let total = capacities
        .iter()
        .fold(crate::sim::ResourceVec::ZERO, |a, c| a + *c);
    let (eet, cell_eet) =
        super::eet_outputs::compute(cell, &records, total.0[0], total.0[1], &user_rows)?;
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
        order: cell.scheduler.order.kind.to_string(),
        penalty: fairshare.penalty.model.name().to_string(),
        charging: fairshare.charging.name().to_string(),
        fairness: metrics::fairness(&user_rows),
        reading: cell.workload.reading,
        topology: cell.cluster.topology.as_ref().map(|t| TopologySettings {
            placement: cell.scheduler.placement.name().to_string(),
            ignore_memory: t.ignore_memory,
            scale_runtime: t.scale_runtime,
        }),
        capacity: Capacity {
            nodes: machine.node_count(),
            cores: total.0[0],
            memory_kb: total.0[1],
            gpus: total.0[2],
        },
        utilization_by_resource: by_resource,
        skipped_by_reason,
        eet: cell_eet,
    };
    let text = serde_json::to_string(&cell_summary).map_err(|e| e.to_string())?;
    let mut jobs = JobsWriter::create(
        &entry.path("jobs.parquet"),
        &[(CELL_SUMMARY_KEY.to_string(), text)],
        false,
    )
    .map_err(|e| e.to_string())?;
    let job_labels = JobLabels {
        limits: outcome.limits.as_ref(),
        clusters: &labels,
        queue_names: &workload.queue_names,
        eet: Some(&eet.report.jobs),
    };
    jobs.write("", &records, &job_labels)
        .map_err(|e| e.to_string())?;
    jobs.finish().map_err(|e| e.to_string())?;

    write_queue_summaries(
        &entry.path("queues.parquet"),
        &metrics::summarize_queues(&records, first, outcome.limits.as_ref()),
    )?;

    if cell.reservations.is_some() {
        write_reservations(
            &entry.path("reservations.parquet"),
            &reservations.requests,
            &outcome.reservations,
            &[],
        )
        .map_err(|e| e.to_string())?;
    }

    write_users(
        &entry.path("users.parquet"),
        &user_rows,
        &eet.report.users,
        &[],
    )
    .map_err(|e| e.to_string())?;
    super::eet_outputs::write(entry, &eet, total.0[0], total.0[1])?;
    write_penalties(cell, &workload, &machine, &records, entry)?;
    write_user_timeseries(
        &entry.path("user_timeseries.parquet"),
        &users_replay.samples,
        &[],
    )
    .map_err(|e| e.to_string())?;

    let step = cell.metrics.timeseries_step;
    let bins = timeseries::bin(&outcome.steps, capacity, step);
    let queues: Vec<(String, Vec<f64>)> = classes
        .0
        .iter()
        .map(|c| c.name.clone())
        .zip(timeseries::queue_by_class(&records, classes, &bins, step))
        .collect();
    let origin = bins.first().map_or(0, |b| b.start);
    let (cluster_bins, total_bins) =
        usage::utilization_bins(&records, &capacities, origin, step, bins.len());
    let resources: Vec<(String, Vec<Option<f64>>)> = RESOURCES
        .iter()
        .enumerate()
        .map(|(k, name)| {
            (
                format!("utilization_{name}"),
                total_bins.iter().map(|f| f[k]).collect(),
            )
        })
        .collect();
    write_timeseries(
        &entry.path("timeseries.parquet"),
        &bins,
        &queues,
        &resources,
        &[],
    )
    .map_err(|e| e.to_string())?;

    // Per cluster: capacity, utilization over the window and what its measured jobs saw, and
    // utilization over time.
    let mut clusters = Table::default();
    let jobs_in = |c: usize| records.iter().filter(|r| r.cluster as usize == c).count();
    let measured = metrics::per_cluster(&records[first..], cluster_names.len());
    for (c, name) in cluster_names.iter().enumerate() {
        clusters
            .row()
            .set("cluster", Value::Str(name.clone()))
            .set("nodes", Value::Int(cluster_nodes(&machine, c) as i64))
            .set("cores", Value::Int(capacities[c].0[0] as i64))
            .set("memory_kb", Value::Int(capacities[c].0[1] as i64))
            .set("gpus", Value::Int(capacities[c].0[2] as i64))
            .set("jobs", Value::Int(jobs_in(c) as i64));
        for (k, resource) in RESOURCES.iter().enumerate() {
            clusters.set(
                &format!("utilization_{resource}"),
                per_cluster[c][k].map_or(Value::Null, Value::Float),
            );
        }
        let m = &measured[c];
        let float = |v: Option<f64>| v.map_or(Value::Null, Value::Float);
        clusters
            .set("measured_jobs", Value::Int(m.jobs as i64))
            .set("wait_mean", float(m.wait.mean))
            .set("wait_median", float(m.wait.median))
            .set("wait_p95", float(m.wait.p95))
            .set("bounded_slowdown_mean", float(m.bounded_slowdown_mean))
            .set("backfilled_fraction", float(m.backfilled_fraction));
    }
    clusters
        .write(&entry.path("clusters.parquet"), &[], OutputFile::Clusters)
        .map_err(|e| e.to_string())?;
    let mut series = Table::default();
    for (c, name) in cluster_names.iter().enumerate() {
        for (bin, fractions) in bins.iter().zip(&cluster_bins[c]) {
            series
                .row()
                .set("cluster", Value::Str(name.clone()))
                .set("time", Value::Int(bin.start));
            for (k, resource) in RESOURCES.iter().enumerate() {
                series.set(
                    &format!("utilization_{resource}"),
                    fractions[k].map_or(Value::Null, Value::Float),
                );
            }
        }
    }
    series
        .write(
            &entry.path("cluster_timeseries.parquet"),
            &[],
            OutputFile::ClusterTimeseries,
        )
        .map_err(|e| e.to_string())
}

/// `job_penalties.parquet`: for a cell ordered by fairshare or priority, every job's penalty
/// under `cpu` and `pe_min` on the cell's machine (Klusáček & Rudová §4) and its wait; no rows
/// for other orders (docs/outputs.md).
fn write_penalties(
    cell: &Cell,
    workload: &Workload,
    machine: &Machine,
    records: &[metrics::JobRecord],
    entry: &EntryWriter,
) -> Result<(), String> {
    let path = entry.path("job_penalties.parquet");
    let order = &cell.scheduler.order;
    if !matches!(order.kind, OrderKind::Fairshare | OrderKind::Priority) {
        return write_job_penalties(&path, &[], &[], &[]).map_err(|e| e.to_string());
    }
    // The cell's penalty settings (queue costs, GPUs) under both models.
    let spec = PenaltySpec {
        model: PenaltyModel::PeMin,
        ..order.fairshare.penalty.clone()
    };
    let pricing = Pricing::new(machine, &workload.constraints, &spec)
        .map_err(|e| format!("scheduler `{}`: fairshare {e}", cell.scheduler.name))?;
    let jobs = crate::analysis::job_penalties(workload, &pricing);
    let mut waits = vec![None; workload.jobs.len()];
    for r in records {
        waits[r.index as usize] = Some(r.wait);
    }
    write_job_penalties(&path, &jobs, &waits, &[]).map_err(|e| e.to_string())
}

/// `queues.parquet`: one row per queue (docs/outputs.md).
fn write_queue_summaries(
    path: &std::path::Path,
    rows: &[metrics::QueueSummary],
) -> Result<(), String> {
    let opt = |v: Option<f64>| v.map_or(Value::Null, Value::Float);
    let mut table = Table::default();
    for q in rows {
        table
            .row()
            .set("queue", Value::Str(q.queue.clone()))
            .set("jobs", Value::Int(q.jobs as i64))
            .set("rejected", Value::Int(q.rejected as i64))
            .set("held_jobs", Value::Int(q.held_jobs as i64))
            .set("killed_by_limit", Value::Int(q.killed_by_limit as i64))
            .set("wait_mean", opt(q.wait_mean))
            .set("held_seconds_mean", opt(q.held_seconds_mean))
            .set("bounded_slowdown_mean", opt(q.bounded_slowdown_mean))
            .set("proc_seconds", Value::Float(q.proc_seconds))
            .set("utilization_share", opt(q.utilization_share));
    }
    table
        .write(path, &[], OutputFile::Queues)
        .map_err(|e| e.to_string())
}

/// Resource kinds, in the order of [`crate::sim::ResourceVec`], as they appear in column names.
pub const RESOURCES: [&str; 3] = ["cores", "memory", "gpus"];

/// Nodes of cluster `c` of the machine (a uniform machine is one cluster).
fn cluster_nodes(machine: &Machine, c: usize) -> u64 {
    match machine {
        Machine::Topology(t) => t.topology.clusters[c].nodes(),
        Machine::Uniform(u) => u64::from(u.nodes),
    }
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
