//! Raw manifest types: exactly what the YAML says (STYLE.md item 3). Unknown keys are errors;
//! values that later checks must point at are kept with their location ([`Spanned`]). Nothing
//! downstream of [`super::resolve`] sees these types.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::sim::{Overrun, SchedulerKind};

/// A schedlab experiment manifest (`experiments/*.yaml`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawManifest {
    /// Experiment name: results go to `results/<name>/`. Default: the file name without `.yaml`.
    pub name: Option<String>,
    /// Free text shown in reports.
    pub description: Option<String>,
    /// Base seed of the replicas (default 0).
    pub seed: Option<u64>,
    /// Named workloads (traces and their transforms).
    pub workloads: BTreeMap<String, RawWorkload>,
    /// Named machines. Default: one cluster `trace` sized by each trace's MaxProcs.
    pub clusters: Option<BTreeMap<String, RawCluster>>,
    /// Named scheduler configurations.
    pub schedulers: BTreeMap<String, RawScheduler>,
    /// Metric settings shared by every cell.
    pub metrics: Option<RawMetrics>,
    /// Which combinations to run. Default: every workload × cluster × scheduler.
    pub grid: Option<RawGrid>,
    /// Number of replicas (seeds seed, seed+1, …); exclusive with `seeds`.
    pub replicas: Option<u32>,
    /// Explicit replica seeds; exclusive with `replicas`.
    pub seeds: Option<Vec<u64>>,
    /// Report settings (used by `schedlab report`).
    pub reports: Option<RawReports>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    /// SWF trace file, plain or gzip; relative paths are relative to the manifest's folder.
    #[schemars(with = "String")]
    pub trace: Spanned<String>,
    /// Keep jobs submitted in [start, end) (trace seconds).
    pub window: Option<RawWindow>,
    /// Keep the first N jobs (after the window and user filters).
    #[schemars(with = "Option<u64>")]
    pub first_jobs: Option<Spanned<u64>>,
    /// Keep only these user ids.
    pub users: Option<Vec<i32>>,
    /// Drop these user ids.
    pub exclude_users: Option<Vec<i32>>,
    /// Multiply the offered load by dividing interarrival times by this factor (0.001 to 1000).
    #[schemars(with = "Option<f64>")]
    pub load_scale: Option<Spanned<f64>>,
    /// Skip malformed trace lines (counted) instead of failing.
    pub lenient: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWindow {
    pub start: Option<i64>,
    pub end: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    /// Processors. Exclusive with `from_trace`.
    #[schemars(with = "Option<u32>")]
    pub procs: Option<Spanned<u32>>,
    /// Processors per node: jobs take whole nodes. Must divide `procs`.
    #[schemars(with = "Option<u32>")]
    pub node_size: Option<Spanned<u32>>,
    /// Take the size from each trace's MaxProcs header.
    pub from_trace: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawScheduler {
    /// fcfs, easy or conservative.
    #[schemars(with = "String")]
    pub policy: SchedulerKind,
    /// Seconds between scheduler calls; absent or null: at every event.
    #[schemars(with = "Option<i64>")]
    pub interval: Option<Spanned<i64>>,
    /// kill (default) or continue.
    #[schemars(with = "Option<String>")]
    pub overrun: Option<Overrun>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMetrics {
    /// Bounded-slowdown threshold τ in seconds (default 10).
    #[schemars(with = "Option<i64>")]
    pub bounded_slowdown_tau: Option<Spanned<i64>>,
    /// Leave the first jobs or seconds out of the aggregates.
    pub warmup: Option<RawWarmup>,
    /// Bin width of timeseries.parquet in seconds (default 3600).
    #[schemars(with = "Option<i64>")]
    pub timeseries_step: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWarmup {
    pub jobs: Option<u64>,
    pub seconds: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGrid {
    /// Axis name → values. Name axes: workload, cluster, scheduler (values are names defined
    /// above). Parameter axes override a setting: interval, overrun, procs, node_size,
    /// load_scale, first_jobs, tau.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Vec<serde_json::Value>>")]
    pub axes: BTreeMap<String, Spanned<Vec<Spanned<serde_json::Value>>>>,
    /// Groups of axes varied together (same length) instead of crossed.
    #[serde(default)]
    #[schemars(with = "Vec<Vec<String>>")]
    pub zip: Vec<Spanned<Vec<String>>>,
    /// Extra cells: maps naming a value for every axis.
    #[serde(default)]
    #[schemars(with = "Vec<BTreeMap<String, serde_json::Value>>")]
    pub include: Vec<Spanned<BTreeMap<String, serde_json::Value>>>,
    /// Filters: a cell matching every axis value of one filter is left out.
    #[serde(default)]
    #[schemars(with = "Vec<BTreeMap<String, serde_json::Value>>")]
    pub exclude: Vec<Spanned<BTreeMap<String, serde_json::Value>>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawReports {
    /// Output formats: html and/or md.
    pub formats: Option<Vec<String>>,
    /// A minijinja template replacing the built-in HTML one (relative to the manifest).
    pub template: Option<String>,
    /// The time window of the Gantt-style schedule view.
    pub gantt: Option<RawGantt>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGantt {
    /// Cell id to show (default: the first cell).
    pub cell: Option<String>,
    /// Window start, trace seconds (default: a quarter into the measurement window).
    pub start: Option<i64>,
    /// Window length in hours (default 24).
    pub hours: Option<f64>,
}
