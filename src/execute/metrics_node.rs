//! A metrics node: a cell's results computed from the schedule in its simulate node's entry,
//! never by simulating — τ, warm-up, size classes and the time-series step are its settings
//! (docs/cache.md). It reads the cell's workload again (what jobs asked for; the fairshare
//! replay prices requests) and the schedule, and writes every per-cell result file into its own
//! entry: `jobs.parquet` (per-job records, no `cell` column: an entry may serve several cells)
//! carrying the cell's summary as key-value metadata ([`CELL_SUMMARY_KEY`]), and one
//! [`TABLES_FILE`] whose members are the small tables — `timeseries.parquet`, `users.parquet`,
//! `user_timeseries.parquet`, `clusters.parquet`, `cluster_timeseries.parquet`,
//! `queues.parquet`, the EET heatmap (`eet_heatmap.parquet`, `eet_usage.parquet`;
//! `eet_outputs.rs`), `job_penalties.parquet`, and a copy of the schedule's
//! `reservations.parquet` when there is one — so an aggregate reads one entry per cell, and an
//! entry is three files with its marker, not eleven (the file count was most of a small cell's
//! cost). The
//! scheduler-call instants are streamed (run-length folded: memory does not depend on the
//! scheduler's interval). Its source is part of the metrics version (build.rs).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::schedule_jobs::ScheduleJobs;
use super::simulate_node::{ScheduleFacts, TraceCache, cell_machine, with_workload};
use crate::cache::EntryWriter;
use crate::cache::bundle::BundleWriter;
use crate::manifest::{Cell, Limits};
use crate::sim::fairshare::{PenaltyModel, PenaltySpec, Pricing, ReplayJob, Sampling, replay_jobs};
use crate::sim::metrics::eet::{EetJob, EetUsers};
use crate::sim::metrics::usage::{self, Fractions};
use crate::sim::metrics::{
    self, ClassSummary, ClusterSums, JobRecord, MetricsConfig, QueueSums, RunAccumulator,
    RunSummary, UserFairness, UserSums, WindowScan,
};
use crate::sim::scheduler::order::OrderKind;
use crate::sim::timeseries::{Binner, bins_needed};
use crate::sim::{Machine, Workload};
use crate::store::schedule::{read_facts, read_instants};
use crate::store::{
    JobLabels, JobsWriter, OutputFile, Table, Target, Value, write_job_penalties, write_timeseries,
    write_user_timeseries, write_users,
};
use crate::swf::{Anomalies, ReadOptions};

/// The key-value metadata key of `jobs.parquet` in a metrics entry that holds the cell's
/// [`CellSummary`] as JSON.
pub const CELL_SUMMARY_KEY: &str = "schedlab.cell_summary";

/// The run summary of a cell (in its metrics entry's `jobs.parquet` metadata).
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

/// Computes the results of `cell` from the simulate entry in `schedule` into `entry`.
pub fn run(
    cell: &Cell,
    limits: &Limits,
    traces: &TraceCache,
    schedule: &Path,
    entry: &EntryWriter,
) -> Result<(), String> {
    let text = read_facts(schedule).map_err(|e| e.to_string())?;
    let facts: ScheduleFacts = serde_json::from_str(&text)
        .map_err(|e| format!("{}: schedule facts: {e}", schedule.display()))?;
    // Every time series (machine, users, clusters) bins the schedule at the same step.
    check_timeseries_bins(
        facts.span,
        cell.metrics.timeseries_step,
        limits.max_timeseries_bins,
    )?;
    with_workload(cell, limits, traces, |workload, source| {
        if facts.span.is_none() {
            return Err(no_job_ran(cell, &facts, workload.len()));
        }
        let machine = cell_machine(cell, source)?;
        compute(cell, workload, &machine, facts, schedule, entry)
    })
}

/// The error for a cell in which no job ran (its schedule is empty): every job was refused by
/// the queue setup or could never run on the machine. Named by what refused them, so that the
/// set-up to fix is clear (it was an internal Arrow error at the first empty table).
fn no_job_ran(cell: &Cell, facts: &ScheduleFacts, jobs: usize) -> String {
    let reasons: Vec<String> = facts
        .skipped_by_reason
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(reason, n)| format!("{n} {reason}"))
        .collect();
    let queues = match &cell.queues {
        Some(q) => format!(" under queue setup `{}`", q.name),
        None => String::new(),
    };
    format!(
        "no job ran in cell {}{queues}: of the {jobs} jobs simulated, {}; there is nothing to \
         measure — check the queue setup's routing (`queues.<setup>`) or the machine's size",
        cell.id,
        if reasons.is_empty() {
            "none was scheduled".to_string()
        } else {
            reasons.join(", ")
        }
    )
}

fn compute(
    cell: &Cell,
    workload: &Workload,
    machine: &Machine,
    facts: ScheduleFacts,
    schedule: &Path,
    entry: &EntryWriter,
) -> Result<(), String> {
    let spec = &cell.metrics;
    let step = spec.timeseries_step;
    let config = MetricsConfig {
        tau: spec.tau,
        warmup: spec.warmup,
    };
    let classes = &spec.size_classes;

    // The passes below go over the schedule's jobs three times; a small schedule (most cells)
    // is decoded once and held, a large one streamed from the file each time.
    let scheduled = ScheduleJobs::open(schedule)?;

    // Pass 1 over the schedule: the measurement window, the EET's users and span, and the
    // fairshare of the cell's settings replayed over the run (the one the order used, for
    // fairshare and priority orders; the replay reads the schedule once more for its series).
    let fairshare = &cell.scheduler.order.fairshare;
    let mut scan = WindowScan::new(config.warmup);
    let mut eet_users = EetUsers::default();
    let users_replay = {
        let topology = matches!(machine, Machine::Topology(_));
        let mut first_pass = true;
        let source = |f: &mut dyn FnMut(ReplayJob)| {
            scheduled.for_each(|rows| {
                for row in rows {
                    if first_pass {
                        scan.push(row.submit, row.end);
                        eet_users.push(&EetJob::of_record(&JobRecord::of(row, config.tau)));
                    }
                    f(ReplayJob {
                        job: row.index,
                        class: if topology { row.class } else { 0 },
                        start: row.start,
                        end: row.end,
                        cores: row.held.0[0],
                    });
                }
                Ok(())
            })?;
            first_pass = false;
            Ok(())
        };
        let sampling = Sampling {
            origin: workload.jobs.first().map_or(0, |j| j.submit),
            step,
            top: SERIES_USERS,
        };
        replay_jobs(workload, machine, fairshare, Some(sampling), source)?
            .map_err(|e| format!("scheduler `{}`: fairshare {e}", cell.scheduler.name))?
    };
    let limits = facts.limits;
    let window = scan.finish();
    let (window_start, window_end) = (window.start, window.end);

    // Clusters: a topology's, or the uniform machine as one cluster named after the cell's.
    let (labels, cluster_names): (Vec<String>, Vec<String>) = match machine {
        Machine::Topology(t) => {
            let names: Vec<String> = t.topology.clusters.iter().map(|c| c.name.clone()).collect();
            (names.clone(), names)
        }
        Machine::Uniform(_) => (Vec::new(), vec![cell.cluster.name.clone()]),
    };
    let capacities = usage::cluster_capacities(machine);
    let total = capacities
        .iter()
        .fold(crate::sim::ResourceVec::ZERO, |a, c| a + *c);
    let mut eet =
        super::eet_outputs::EetPass::new(cell, &eet_users, total.0[0], total.0[1], &users_replay)?;
    drop(eet_users);

    // Pass 2: every job once, in submission order, into running aggregates and straight on to
    // jobs.parquet (its summary metadata is added once the aggregates are known).
    let mut summary = RunAccumulator::new(config, window, facts.capacity, classes);
    summary.expect_measured(scan.jobs().saturating_sub(window.first) as usize);
    let mut bins = Binner::new(facts.span, step, facts.capacity, classes.0.len());
    let (origin, bin_count) = facts.span.map_or((0, 0), |(first, last)| {
        (
            first.div_euclid(step) * step,
            bins_needed(first, last, step) as usize,
        )
    });
    let mut held = usage::HeldInWindow::new(capacities.len(), (window_start, window_end));
    let mut held_bins = usage::HeldPerBin::new(capacities.len(), origin, step, bin_count);
    let mut user_sums = UserSums::new(&users_replay);
    let mut queue_sums = QueueSums::new(limits.as_ref());
    let mut cluster_sums = ClusterSums::new(cluster_names.len());
    let mut jobs_in = vec![0u64; cluster_names.len()];
    let mut penalty_waits = PenaltyWaits::new(cell, workload.jobs.len());
    let mut jobs =
        JobsWriter::create(&entry.path("jobs.parquet"), &[], false).map_err(|e| e.to_string())?;
    let mut seen: u64 = 0;
    let mut records: Vec<JobRecord> = Vec::new();
    let mut results = Vec::new();
    scheduled.for_each(|rows| {
        records.clear();
        records.extend(rows.iter().map(|row| JobRecord::of(row, config.tau)));
        results.clear();
        for record in &records {
            let measured = seen >= window.first;
            seen += 1;
            summary.job(record);
            bins.waiting(classes.of(record.units), record.submit, record.start);
            if measured {
                user_sums.measured(record);
                cluster_sums.measured(record);
            }
            queue_sums.job(record, measured);
            if let Some(n) = jobs_in.get_mut(record.cluster as usize) {
                *n += 1;
            }
            held.job(record);
            held_bins.job(record);
            penalty_waits.job(record);
            results.push(eet.job(record)?);
        }
        let job_labels = JobLabels {
            limits: limits.as_ref(),
            clusters: &labels,
            queue_names: &workload.queue_names,
            names: &workload.names,
            eet: Some(&results),
            workload: Some(workload),
        };
        jobs.write("", &records, &job_labels)
            .map_err(|e| e.to_string())
    })?;
    drop((records, results, scheduled));
    read_instants(schedule, |run| {
        summary.instants(run);
        bins.instants(run);
    })?;
    let (summary, size_classes) = summary.finish(facts.skipped_too_large, facts.reservations);
    let (bins, class_queues) = bins.finish();
    let user_rows = user_sums.rows(&users_replay);
    let (per_cluster, by_resource) = held.finish(&capacities);
    let (eet, cell_eet) = eet.finish()?;

    let cell_summary = CellSummary {
        policy: facts.policy,
        procs: facts.procs,
        node_size: facts.node_size,
        interval: facts.interval,
        overrun: facts.overrun,
        trace_jobs: facts.trace_jobs,
        interarrival_cv: facts.interarrival_cv,
        trace_jobs_skipped: facts.trace_jobs_skipped,
        trace_malformed_lines: facts.trace_malformed_lines,
        anomalies: facts.anomalies,
        summary,
        size_classes,
        order: cell.scheduler.order.kind.to_string(),
        penalty: fairshare.penalty.model.name().to_string(),
        charging: fairshare.charging.name().to_string(),
        fairness: metrics::fairness(&user_rows),
        reading: cell.workload.reading.clone(),
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
        skipped_by_reason: facts.skipped_by_reason,
        eet: cell_eet,
    };
    let text = serde_json::to_string(&cell_summary).map_err(|e| e.to_string())?;
    jobs.finish_with(&[(CELL_SUMMARY_KEY.to_string(), text)])
        .map_err(|e| e.to_string())?;

    // The small tables go into one file, `tables.bundle` (written last, below).
    let mut tables = Tables::default();
    tables.add("queues.parquet", |to| {
        write_queue_summaries(to, &queue_sums.finish())
    })?;

    let reservations = schedule.join("reservations.parquet");
    if reservations.is_file() {
        let bytes =
            std::fs::read(&reservations).map_err(|e| format!("{}: {e}", reservations.display()))?;
        tables.0.add("reservations.parquet", bytes);
    }

    tables.add("users.parquet", |to| {
        write_users(to, &user_rows, &eet.report.users, &[])
    })?;
    super::eet_outputs::write(&mut tables, &eet, total.0[0], total.0[1])?;
    drop(eet);
    write_penalties(cell, workload, machine, penalty_waits, &mut tables)?;
    tables.add("user_timeseries.parquet", |to| {
        write_user_timeseries(to, &users_replay.samples, &[])
    })?;

    let queues: Vec<(String, Vec<f64>)> = classes
        .0
        .iter()
        .map(|c| c.name.clone())
        .zip(class_queues)
        .collect();
    let binned = held_bins.finish(&capacities);
    let resources: Vec<(String, Vec<Option<f64>>)> = RESOURCES
        .iter()
        .enumerate()
        .map(|(k, name)| {
            (
                format!("utilization_{name}"),
                binned.total.iter().map(|f| f[k]).collect(),
            )
        })
        .collect();
    tables.add("timeseries.parquet", |to| {
        write_timeseries(to, &bins, &queues, &resources, &[])
    })?;

    // Per cluster: capacity, utilization over the window and what its measured jobs saw, and
    // utilization over time.
    let mut clusters = Table::default();
    let whole_run = &cell_summary.summary;
    let measured = cluster_sums.finish(|| metrics::Distribution {
        mean: whole_run.wait_mean,
        median: whole_run.wait_median,
        p95: whole_run.wait_p95,
    });
    for (c, name) in cluster_names.iter().enumerate() {
        clusters
            .row()
            .set("cluster", Value::Str(name.clone()))
            .set("nodes", Value::Int(cluster_nodes(machine, c) as i64))
            .set("cores", Value::Int(capacities[c].0[0] as i64))
            .set("memory_kb", Value::Int(capacities[c].0[1] as i64))
            .set("gpus", Value::Int(capacities[c].0[2] as i64))
            .set("jobs", Value::Int(jobs_in[c] as i64));
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
    tables.add("clusters.parquet", |to| {
        clusters.write(to, &[], OutputFile::Clusters)
    })?;
    // The per-cluster series have `bin_count` bins, as many as the timeseries (same span, same
    // step); `take` keeps the two in step whatever happens to either.
    let bin_starts: Vec<i64> = bins.iter().map(|bin| bin.start).take(bin_count).collect();
    tables.add("cluster_timeseries.parquet", |to| {
        crate::store::write_cluster_timeseries(
            to,
            &cluster_names,
            &bin_starts,
            &RESOURCES,
            |c, b| binned.cluster(c, b),
        )
    })?;
    let path = entry.path(TABLES_FILE);
    tables
        .0
        .write(&path)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The file of a metrics entry that holds its small tables (every result table but
/// `jobs.parquet`), each a Parquet file as a member named like the result file it feeds.
pub const TABLES_FILE: &str = "tables.bundle";

/// The small tables of a metrics entry, gathered in memory for [`TABLES_FILE`].
#[derive(Default)]
pub(super) struct Tables(pub(super) BundleWriter);

impl Tables {
    /// Adds the member `name`, the Parquet file `write` encodes.
    pub(super) fn add(
        &mut self,
        name: &str,
        write: impl FnOnce(Target<'_>) -> Result<(), crate::store::StoreError>,
    ) -> Result<(), String> {
        let mut bytes = Vec::new();
        write(Target::Memory {
            name,
            bytes: &mut bytes,
        })
        .map_err(|e| e.to_string())?;
        self.0.add(name, bytes);
        Ok(())
    }
}

/// Whether a cell writes rows into `job_penalties.parquet`: fairshare and priority orders.
fn has_penalties(cell: &Cell) -> bool {
    matches!(
        cell.scheduler.order.kind,
        OrderKind::Fairshare | OrderKind::Priority
    )
}

/// The waits `job_penalties.parquet` reports, by workload index, gathered while the records
/// stream by — only for a cell that has penalty rows (16 bytes a workload job then).
struct PenaltyWaits(Vec<Option<crate::sim::Time>>);

impl PenaltyWaits {
    fn new(cell: &Cell, jobs: usize) -> PenaltyWaits {
        PenaltyWaits(if has_penalties(cell) {
            vec![None; jobs]
        } else {
            Vec::new()
        })
    }

    fn job(&mut self, r: &JobRecord) {
        if let Some(w) = self.0.get_mut(r.index as usize) {
            *w = Some(r.wait);
        }
    }
}

/// `job_penalties.parquet`: for a cell ordered by fairshare or priority, every job's penalty
/// under `cpu` and `pe_min` on the cell's machine (Klusáček & Rudová §4) and its wait; no rows
/// for other orders (docs/outputs.md).
fn write_penalties(
    cell: &Cell,
    workload: &Workload,
    machine: &Machine,
    waits: PenaltyWaits,
    tables: &mut Tables,
) -> Result<(), String> {
    let name = "job_penalties.parquet";
    let order = &cell.scheduler.order;
    if !has_penalties(cell) {
        return tables.add(name, |to| write_job_penalties(to, &[], &[], &[]));
    }
    // The cell's penalty settings (queue costs, GPUs) under both models.
    let spec = PenaltySpec {
        model: PenaltyModel::PeMin,
        ..order.fairshare.penalty.clone()
    };
    let pricing = Pricing::new(machine, (&workload.constraints, &workload.requests), &spec)
        .map_err(|e| format!("scheduler `{}`: fairshare {e}", cell.scheduler.name))?;
    let jobs = crate::analysis::job_penalties(workload, &pricing);
    tables.add(name, |to| write_job_penalties(to, &jobs, &waits.0, &[]))
}

/// `queues.parquet`: one row per queue (docs/outputs.md).
fn write_queue_summaries(
    to: Target<'_>,
    rows: &[metrics::QueueSummary],
) -> Result<(), crate::store::StoreError> {
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
    table.write(to, &[], OutputFile::Queues)
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
    span: Option<(crate::sim::Time, crate::sim::Time)>,
    step: crate::sim::Time,
    max: u64,
) -> Result<(), String> {
    let Some((first, last)) = span else {
        return Ok(());
    };
    let bins = bins_needed(first, last, step);
    if bins <= max {
        return Ok(());
    }
    Err(format!(
        "the time series would have {bins} bins ({} s of schedule in steps of {step} s), more than `limits.max_timeseries_bins` ({max}); raise `metrics.timeseries_step`, or raise the limit in the manifest's `limits` section",
        last - first
    ))
}
