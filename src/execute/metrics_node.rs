//! A metrics node: a cell's metrics computed from the schedule in its simulate node's entry,
//! never by simulating — τ, warm-up, size classes and the time-series step are its settings
//! (docs/cache.md). It streams the schedule twice (the measurement window, then every metric)
//! and writes the cell's results into its own entry: `jobs.parquet` (per-job records, no `cell`
//! column: an entry may serve several cells) carrying the cell's summary as key-value metadata
//! ([`CELL_SUMMARY_KEY`]), `timeseries.parquet`, and a copy of the schedule's
//! `reservations.parquet` when there is one — so an aggregate reads one entry per cell. Memory:
//! a batch of rows, the bins, and three numbers per measured job for the percentiles. Its
//! source is part of the metrics version (build.rs).

use std::path::Path;

use serde::Serialize;

use super::simulate_node::ScheduleFacts;
use crate::cache::EntryWriter;
use crate::manifest::{Cell, Limits};
use crate::sim::metrics::{
    ClassSummary, JobRecord, MetricsConfig, RunAccumulator, RunSummary, WindowScan,
};
use crate::sim::timeseries::{Binner, bins_needed};
use crate::store::schedule::{read_facts, read_instants, read_jobs};
use crate::store::{JobsWriter, write_timeseries};
use crate::swf::Anomalies;

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
}

/// Computes the metrics of `cell` from the simulate entry in `schedule` into `entry`.
pub fn run(
    cell: &Cell,
    limits: &Limits,
    schedule: &Path,
    entry: &EntryWriter,
) -> Result<(), String> {
    let text = read_facts(schedule).map_err(|e| e.to_string())?;
    let facts: ScheduleFacts = serde_json::from_str(&text)
        .map_err(|e| format!("{}: schedule facts: {e}", schedule.display()))?;
    let spec = &cell.metrics;
    let step = spec.timeseries_step;
    check_timeseries_bins(facts.span, step, limits.max_timeseries_bins)?;
    let config = MetricsConfig {
        tau: spec.tau,
        warmup: spec.warmup,
    };

    let mut scan = WindowScan::new(config.warmup);
    read_jobs(schedule, |rows| {
        rows.iter().for_each(|r| scan.push(r.submit, r.end));
        Ok(())
    })?;
    let classes = &spec.size_classes;
    let mut summary = RunAccumulator::new(config, scan.finish(), facts.capacity, classes);
    let mut bins = Binner::new(facts.span, step, facts.capacity, classes.0.len());
    let mut jobs =
        JobsWriter::create(&entry.path("jobs.parquet"), &[], false).map_err(|e| e.to_string())?;
    let mut records = Vec::new();
    read_jobs(schedule, |rows| {
        records.clear();
        for row in rows {
            let record = JobRecord::of(row, config.tau);
            summary.job(&record);
            bins.waiting(classes.of(record.units), record.submit, record.start);
            records.push(record);
        }
        jobs.write("", &records).map_err(|e| e.to_string())
    })?;
    read_instants(schedule, |run| {
        summary.instants(run);
        bins.instants(run);
    })?;
    let (summary, size_classes) = summary.finish(facts.skipped_too_large, facts.reservations);
    let (bins, class_queues) = bins.finish();

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
    };
    let text = serde_json::to_string(&cell_summary).map_err(|e| e.to_string())?;
    jobs.finish_with(&[(CELL_SUMMARY_KEY.to_string(), text)])
        .map_err(|e| e.to_string())?;

    let queues: Vec<(String, Vec<f64>)> = classes
        .0
        .iter()
        .map(|c| c.name.clone())
        .zip(class_queues)
        .collect();
    write_timeseries(&entry.path("timeseries.parquet"), &bins, &queues, &[])
        .map_err(|e| e.to_string())?;

    let reservations = schedule.join("reservations.parquet");
    if reservations.is_file() {
        let to = entry.path("reservations.parquet");
        std::fs::copy(&reservations, &to)
            .map_err(|e| format!("{}: {e}", reservations.display()))?;
    }
    Ok(())
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
