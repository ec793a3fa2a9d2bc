//! Raw manifest types: exactly what the YAML says (STYLE.md item 3). Unknown keys are errors;
//! values that later checks must point at are kept with their location ([`Spanned`]). Nothing
//! downstream of [`super::resolve`] sees these types.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::order::{RawFairshare, RawPriority};
use crate::sim::Overrun;
use crate::sim::scheduler::order::OrderKind;

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
    /// Named advance-reservation scenarios (docs/reservations.md); the grid axis
    /// `reservations` picks one per cell, or `none`.
    pub reservations: Option<BTreeMap<String, RawReservations>>,
    /// Named queue setups: queues, limits and quotas (docs/queues.md); the grid axis `queues`
    /// picks one per cell, or `none`.
    pub queues: Option<BTreeMap<String, RawQueueSetup>>,
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
    /// Bounds on the grid and workload sizes (defaults in docs/manifest.md, "Limits").
    pub limits: Option<RawLimits>,
}

/// Raise a bound when an experiment really needs more; they protect against typos.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    /// Most cells the grid may hold, replicas included (default 1,000,000).
    pub max_cells: Option<u64>,
    /// Most jobs one synthetic workload may generate (default 10,000,000).
    pub max_jobs: Option<u64>,
    /// Most bins of one cell's time series (default 1,000,000).
    pub max_timeseries_bins: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    /// SWF trace file, plain or gzip; relative paths are relative to the manifest's folder.
    /// Exclusive with `synthetic` and `batsim`.
    #[schemars(with = "Option<String>")]
    pub trace: Option<Spanned<String>>,
    /// A Batsim JSON workload (docs/sources.md): jobs with `delay` profiles, `nb_res` as the
    /// machine size. Exclusive with `trace` and `synthetic`.
    #[schemars(with = "Option<String>")]
    pub batsim: Option<Spanned<String>>,
    /// A synthetic workload (docs/synthetic.md). Exclusive with `trace` and `batsim`.
    pub synthetic: Option<RawSynthetic>,
    /// A job table, CSV or Parquet (docs/sources.md, "Job tables"), read through `mapping`.
    /// Exclusive with `trace`, `batsim` and `synthetic`.
    #[schemars(with = "Option<String>")]
    pub table: Option<Spanned<String>>,
    /// Slurm accounting as `sacct --parsable2` prints it with the recommended `--format`
    /// (docs/sources.md, "Slurm accounting"): the same as `table:` with `mapping: slurm`.
    /// `keep` filters its rows. Exclusive with `trace`, `batsim`, `table` and `synthetic`.
    #[schemars(with = "Option<String>")]
    pub slurm: Option<Spanned<String>>,
    /// How a job table's columns become job fields: a shipped mapping (`pm100`, `philly`,
    /// `helios`, `alibaba_pai`, `slurm`), a mapping file (`.yaml`, relative to the manifest's
    /// folder), or the mapping itself.
    pub mapping: Option<crate::table::MappingRef>,
    /// Which rows of a job table (or of a `slurm` dump) to keep: `status`, `partitions`,
    /// `since`, `until` (each row left out is counted).
    pub keep: Option<crate::table::Keep>,
    /// Keep jobs submitted in a window: `{start, end}` in trace seconds, `{first: 60d}` or
    /// `{from: 30d, to: 90d}` after the first submission, or dates `{from: 2004-03-01, to:
    /// 2004-05-01}` (UTC; docs/manifest.md, "Windows").
    pub window: Option<RawWindow>,
    /// Keep the first N jobs (after the window and user filters).
    #[schemars(with = "Option<u64>")]
    pub first_jobs: Option<Spanned<u64>>,
    /// Keep only these user ids.
    pub users: Option<Vec<i32>>,
    /// Drop these user ids.
    pub exclude_users: Option<Vec<i32>>,
    /// Keep only jobs of these partitions (SWF field 16), e.g. one machine of a log that
    /// covers several.
    pub partitions: Option<Vec<i32>>,
    /// Multiply the offered load by dividing interarrival times by this factor (0.001 to 1000).
    #[schemars(with = "Option<f64>")]
    pub load_scale: Option<Spanned<f64>>,
    /// Skip malformed trace lines (counted) instead of failing.
    pub lenient: Option<bool>,
    /// Unit and scope of the memory fields: kb_per_proc (the SWF standard, default),
    /// kb_per_node (Alea, AleaNG), bytes_per_node (wagap-2013) or ignore.
    #[schemars(with = "Option<String>")]
    pub memory: Option<crate::swf::MemoryReading>,
    /// When field 10 (requested memory) is unknown, read field 7 (used memory) instead.
    pub used_memory_fallback: Option<bool>,
    /// Dialect of the fields after the 18th: auto (default), alea, aleang or ignore.
    #[schemars(with = "Option<String>")]
    pub extended_fields: Option<crate::swf::Extended>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWindow {
    /// Keep jobs submitted at or after this trace second (exclusive with `from`/`to`/`first`).
    pub start: Option<i64>,
    /// Keep jobs submitted before this trace second.
    pub end: Option<i64>,
    /// Start: a duration after the first submission (`30d`, `12h`, `90min`, `3600s`, `2w`; a
    /// bare number is seconds) or a date (`2004-03-01`, `2004-03-01T12:00`, UTC).
    #[schemars(with = "Option<RawDuration>")]
    pub from: Option<Spanned<RawDuration>>,
    /// End (exclusive), written like `from`.
    #[schemars(with = "Option<RawDuration>")]
    pub to: Option<Spanned<RawDuration>>,
    /// The first span of the trace: `{first: 60d}` is `{from: 0, to: 60d}`.
    #[schemars(with = "Option<RawDuration>")]
    pub first: Option<Spanned<RawDuration>>,
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
    /// An Alea or AleaNG machine file to import (relative to the manifest's folder).
    #[schemars(with = "Option<String>")]
    pub machines: Option<Spanned<String>>,
    /// The clusters of the system, in order: name → node classes (or, with `machines`,
    /// settings amending the imported cluster of that name).
    #[schemars(with = "Option<BTreeMap<String, RawTopologyCluster>>")]
    pub topology: Option<Spanned<Ordered<RawTopologyCluster>>>,
    /// shared (default: jobs share nodes) or exclusive (jobs take whole nodes), for every
    /// cluster that does not say.
    #[schemars(with = "Option<String>")]
    pub allocation: Option<RawAllocation>,
    /// Properties added to every node of the system.
    pub properties: Option<Vec<String>>,
    /// Treat every memory request as 0 (grid axis `ignore_memory`).
    pub ignore_memory: Option<bool>,
    /// A job runs `fastest speed / speed of its nodes` times its trace runtime (grid axis
    /// `scale_runtime`; default false).
    pub scale_runtime: Option<bool>,
}

/// How jobs share a cluster's nodes.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RawAllocation {
    /// Jobs share a node's cores, memory and GPUs.
    Shared,
    /// Every job takes whole nodes.
    Exclusive,
}

/// One cluster of a topology: its node classes and settings.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTopologyCluster {
    /// Node classes (not with `machines`, whose file defines them).
    #[schemars(with = "Option<Vec<RawNodeClass>>")]
    pub nodes: Option<Vec<Spanned<RawNodeClass>>>,
    /// shared or exclusive (default: the system's `allocation`, else shared).
    #[schemars(with = "Option<String>")]
    pub allocation: Option<RawAllocation>,
    /// Properties added to every node of the cluster.
    pub properties: Option<Vec<String>>,
    /// Relative speed of every class of the cluster.
    #[schemars(with = "Option<f64>")]
    pub speed: Option<Spanned<f64>>,
    /// SPEC rating per core of every class of the cluster.
    #[schemars(with = "Option<f64>")]
    pub spec: Option<Spanned<f64>>,
    /// Cost of every node of the cluster.
    #[schemars(with = "Option<f64>")]
    pub cost: Option<Spanned<f64>>,
}

/// `count` identical nodes.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawNodeClass {
    /// Default: the cluster's name (one class), else `<cluster>-<n>`.
    pub name: Option<String>,
    pub count: u32,
    /// Cores per node.
    pub cores: u32,
    /// Memory per node with a unit: `16 GiB`, `512 GB` (GB = GiB = 2^30 bytes). Default 0:
    /// only jobs asking for no memory fit.
    pub memory: Option<RawSize>,
    /// GPUs per node (default 0).
    pub gpus: Option<u32>,
    /// Relative speed (default: `spec` when given, else 1).
    pub speed: Option<f64>,
    /// SPEC rating per core (Klusáček & Rudová §3.2).
    pub spec: Option<f64>,
    /// Labels jobs may require (`x86_64`, `infiniband`); the cluster's name is one implicitly.
    pub properties: Option<Vec<String>>,
    /// Relative cost of a node (default 1).
    pub cost: Option<f64>,
}

/// A size with a unit as written (`16 GiB`); a bare number is kept to be rejected with a hint.
#[derive(Clone, Debug, JsonSchema)]
#[schemars(with = "String")]
pub struct RawSize(pub String);

impl<'de> Deserialize<'de> for RawSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RawSize;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a size with a unit, such as `16 GiB`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawSize, E> {
                Ok(RawSize(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawSize, E> {
                Ok(RawSize(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawSize, E> {
                Ok(RawSize(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RawSize, E> {
                Ok(RawSize(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A mapping kept in the order it is written (a topology's clusters are tried in that order).
#[derive(Debug)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a mapping of names")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, T>()? {
                    entries.push((k, v));
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawScheduler {
    /// The backfilling rule: fcfs (no backfilling), easy, conservative or aggressive; or
    /// python, a policy of your own (`path`, `class`, `params`; docs/policies.md).
    #[schemars(with = "Option<String>")]
    pub policy: Option<Spanned<String>>,
    /// With `policy: python`: the file that defines the policy, relative to the manifest.
    #[schemars(with = "Option<String>")]
    pub path: Option<Spanned<String>>,
    /// With `policy: python`: the policy's class in that file.
    #[schemars(with = "Option<String>")]
    pub class: Option<Spanned<String>>,
    /// With `policy: python`: keyword arguments of the class.
    pub params: Option<serde_json::Value>,
    /// With `policy: python`: the source files whose content keys its simulations (default:
    /// the file and the modules beside it that it imports).
    #[schemars(with = "Option<Vec<String>>")]
    pub files: Option<Vec<Spanned<String>>>,
    /// Synonym of `policy` on the `backfill` axis's scale: none, easy, conservative or
    /// aggressive (exclusive with `policy`).
    #[schemars(with = "Option<String>")]
    pub backfill: Option<Spanned<String>>,
    /// Queue order: fcfs (default), fairshare, priority or sjf.
    #[schemars(with = "Option<String>")]
    pub order: Option<OrderKind>,
    /// Seconds between priority recomputations, or `start`: recompute after every single
    /// start (one start per pass); absent: at every scheduler call.
    #[schemars(with = "Option<RawReorder>")]
    pub reorder: Option<Spanned<RawReorder>>,
    /// The order of backfill candidates after the first job that cannot start: queue
    /// (default), submission, shortest (SJBF) or smallest_area.
    #[schemars(with = "Option<String>")]
    pub backfill_order: Option<crate::sim::scheduler::order::CandidateOrder>,
    /// Another simulator's behaviours to reproduce: none (default) or aleang (AleaNG's
    /// fairshare aggressive backfilling as AleaNG implements it; docs/aleang.md).
    #[schemars(with = "Option<String>")]
    pub compat: Option<crate::sim::compat::Compat>,
    /// Fairshare settings of `order: fairshare` and of `priority`'s fairshare factor (also
    /// what users.parquet reports for every order).
    pub fairshare: Option<RawFairshare>,
    /// Weights of `order: priority`.
    pub priority: Option<RawPriority>,
    /// Seconds between scheduler calls; absent or null: at every event.
    #[schemars(with = "Option<i64>")]
    pub interval: Option<Spanned<i64>>,
    /// kill (default) or continue.
    #[schemars(with = "Option<String>")]
    pub overrun: Option<Overrun>,
    /// Which nodes a job takes on a topology: first_fit (default) or best_fit (grid axis
    /// `placement`; no effect on processor pools).
    #[schemars(with = "Option<String>")]
    pub placement: Option<crate::sim::Placement>,
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
    /// Job-size classes, narrowest first; the last has no `up_to` (default: small up to 1,
    /// medium up to 64, large).
    pub size_classes: Option<Vec<RawSizeClass>>,
    /// The users' expected capacity for the expected-end-time metrics (docs/manifest.md,
    /// "Expected capacity"; default: the machine split equally among the users).
    pub expected_capacity: Option<super::expected_capacity::RawExpectedCapacity>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSizeClass {
    pub name: String,
    /// Widest job of the class, in allocation units (nodes with node_size, else processors).
    pub up_to: Option<u64>,
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
    /// A minijinja template replacing the built-in Markdown one (relative to the manifest).
    pub markdown_template: Option<String>,
    /// The paper this experiment reproduces, by the stem of its file under papers/ (one of
    /// `manifest::model::PAPERS`): its report compares the results with that paper's. Without
    /// it, a report says nothing of any paper (docs/reports.md, "Paper comparisons").
    pub reproduces: Option<String>,
    /// The time window of the Gantt-style schedule view.
    pub gantt: Option<RawGantt>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGantt {
    /// Cell id to show (default: the first cell).
    pub cell: Option<String>,
    /// Window start in trace seconds: the clock of the trace's submit times (seconds from the
    /// trace's start; Unix times where the trace keeps them, as wagap-2013 does; from 0 for a
    /// synthetic workload). Any integer is taken as it is, including one before the first job
    /// or after the last (the schedule's caption then counts 0 jobs in the window). Omitted or
    /// null: a quarter into the cell's measurement window, moved on when that window is idle or
    /// holds under a quarter of the cell's mean load, to the first later job start from which
    /// it holds half that mean (docs/reports.md, "Settings").
    pub start: Option<i64>,
    /// Window length in hours (default 24).
    pub hours: Option<f64>,
}

/// One advance-reservation scenario: where requests come from, how they are placed and
/// throttled.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawReservations {
    /// Explicit requests.
    pub requests: Option<Vec<RawRequest>>,
    /// A CSV file of requests (relative to the manifest) with a header row naming the columns
    /// `start`, `duration`, `nodes` or `procs`, and optionally `id`, `owner`, `created`.
    #[schemars(with = "Option<String>")]
    pub csv: Option<Spanned<String>>,
    /// Synthetic requests spread uniformly over the simulated period.
    pub generate: Option<RawGenerate>,
    /// after_queue (default: Catalina's rule) or at_requested_time.
    #[schemars(with = "Option<String>")]
    pub placement: Option<crate::sim::reservation::Placement>,
    /// reject (default) or shift.
    #[schemars(with = "Option<String>")]
    pub on_conflict: Option<crate::sim::reservation::OnConflict>,
    /// Throttling rules; every rule is optional.
    pub throttle: Option<RawThrottle>,
    /// On a topology: the cluster whose nodes every request holds unless it names its own
    /// (default: any cluster). An error on processor pools.
    pub cluster: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRequest {
    /// Default: the position in the list, from 1.
    pub id: Option<u64>,
    /// Default: `owner`.
    pub owner: Option<String>,
    /// When the request is made, trace seconds (default: its start).
    pub created: Option<i64>,
    /// Requested start, trace seconds.
    pub start: i64,
    /// Seconds.
    #[schemars(with = "i64")]
    pub duration: Spanned<i64>,
    /// Width in whole nodes (needs a cluster with node_size)…
    pub nodes: Option<u64>,
    /// …or in processors.
    pub procs: Option<u64>,
    /// On a topology: the cluster whose nodes it holds (default: the scenario's `cluster`, else
    /// any cluster).
    pub cluster: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGenerate {
    /// Requests per week of the simulated period (grid axis `reservation_rate`).
    #[schemars(with = "f64")]
    pub per_week: Spanned<f64>,
    /// Width distribution in nodes…
    pub nodes: Option<RawDistribution>,
    /// …or in processors.
    pub procs: Option<RawDistribution>,
    /// Duration distribution, hours.
    pub hours: RawDistribution,
    /// Advance notice (start − request time) distribution, hours (default 0).
    pub notice_hours: Option<RawDistribution>,
    /// Number of distinct owners, drawn uniformly (default 1).
    pub owners: Option<u32>,
}

/// A distribution: exactly one of these keys.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum RawDistribution {
    Fixed(f64),
    /// Every value of [min, max] equally likely (integers for widths).
    Uniform([f64; 2]),
    /// Logarithm uniform over [min, max].
    LogUniform([f64; 2]),
    /// One of the values, equally likely.
    Choice(Vec<f64>),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawThrottle {
    /// Length of the sliding window of the caps, days (default 7).
    pub window_days: Option<f64>,
    /// Cap on reserved node-hours starting in any window (grid axis `throttle_node_hours`).
    pub max_node_hours: Option<f64>,
    /// Cap on reserved processor-hours starting in any window.
    pub max_proc_hours: Option<f64>,
    /// Cap on one owner's reservations starting in any window.
    pub max_per_owner: Option<u64>,
    pub min_hours: Option<f64>,
    pub max_hours: Option<f64>,
    pub min_nodes: Option<u64>,
    pub max_nodes: Option<u64>,
    pub min_procs: Option<u64>,
    pub max_procs: Option<u64>,
}

/// A synthetic workload: users with Login/Logout arrival models (Medernach) and job models.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSynthetic {
    /// How much to generate: `{days: D}`, `{seconds: S}` or `{jobs: N}`.
    pub length: RawLength,
    /// Scale every user's rates so that the expected offered load on `cluster` is `load`.
    pub target_load: Option<RawTargetLoad>,
    pub users: Vec<RawUser>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLength {
    pub days: Option<f64>,
    pub seconds: Option<i64>,
    pub jobs: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTargetLoad {
    /// A cluster of this manifest with `procs`.
    pub cluster: String,
    /// Offered load: processor-seconds asked per second of capacity (e.g. 0.7).
    pub load: f64,
}

/// One user, or `count` alike users.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawUser {
    pub name: String,
    /// Alike users with independent streams (default 1).
    pub count: Option<u32>,
    /// `{lambda, delta, mu}` (per second) or the hyper-exponential `{p, m1, m2}`.
    pub arrivals: RawArrivals,
    /// 24 relative weights, one per hour of the day, modulating all rates.
    pub daily_cycle: Option<Vec<f64>>,
    /// Runtime CDF points `[seconds, cumulative probability]`, log-uniform in between (Downey).
    pub runtime: Vec<[f64; 2]>,
    /// Requested times from runtimes; absent: exact (requested = runtime).
    pub estimate: Option<RawEstimate>,
    /// Processor counts.
    pub procs: RawProcs,
    /// Requested memory per processor, KB (default 0: unknown).
    pub memory_kb: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawArrivals {
    /// λ, login rate (per second).
    pub lambda: Option<f64>,
    /// δ, logout rate (per second).
    pub delta: Option<f64>,
    /// μ, submission rate while logged in (per second).
    pub mu: Option<f64>,
    /// Hyper-exponential interarrival law: probability of the fast phase…
    pub p: Option<f64>,
    /// …its rate…
    pub m1: Option<f64>,
    /// …and the slow phase's rate (per second).
    pub m2: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEstimate {
    /// Requested = runtime × a factor uniform in [min, max] (min ≥ 1)…
    pub factor: [f64; 2],
    /// …rounded up to the first of these limits (seconds) that is not smaller…
    #[serde(default)]
    pub round_up: Vec<i64>,
    /// …and capped here (seconds); a longer runtime is cut to it (the job is killed).
    pub max: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawProcs {
    /// Weight per processor count…
    pub weights: Option<BTreeMap<u32, f64>>,
    /// …or log-uniform over [min, max]…
    pub log_uniform: Option<[u32; 2]>,
    /// …rounded to a power of two with this probability (default 0.75).
    pub power_of_two: Option<f64>,
}

/// One queue setup: the queues jobs are routed to, and the caps on queues, users and groups.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawQueueSetup {
    /// The queues, in definition order (routing by requested time takes the first that covers
    /// a request). Exclusive with `aleang`.
    #[schemars(with = "Option<Vec<RawQueue>>")]
    pub queues: Option<Spanned<Vec<RawQueue>>>,
    /// An AleaNG workload file (relative to the manifest) whose `.queues`, `.users` and
    /// `.groups` files beside it define the queues (id name CPU_quota priority; routed by SWF
    /// queue number), and users' and groups' CPU quotas (id name shares CPU_quota).
    #[schemars(with = "Option<String>")]
    pub aleang: Option<Spanned<String>>,
    /// How jobs reach a queue: swf_queue (default; each queue's `swf_queue` numbers),
    /// queue_name (each queue's `trace_names`) or requested_time.
    #[schemars(with = "Option<String>")]
    pub routing: Option<Spanned<String>>,
    /// The queue of jobs no rule routes (default: such jobs are rejected).
    #[schemars(with = "Option<String>")]
    pub default_queue: Option<Spanned<String>>,
    /// A job requesting more than its queue's max_walltime: kill (default: cut to the limit and
    /// killed there) or reject (refused at submission).
    #[schemars(with = "Option<String>")]
    pub over_walltime: Option<Spanned<String>>,
    /// Caps on each user: `default` for all, `by_id` per SWF user id.
    pub users: Option<RawAccounts>,
    /// Caps on each group: `default` for all, `by_id` per SWF group id.
    pub groups: Option<RawAccounts>,
}

/// One queue.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawQueue {
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Higher is served first (default 0).
    pub priority: Option<i64>,
    /// Longest run: seconds, or "H:MM" / "H:MM:SS".
    #[schemars(with = "Option<RawDuration>")]
    pub max_walltime: Option<Spanned<RawDuration>>,
    /// Most CPU time a job may use (all processors): seconds, or "H:MM" / "H:MM:SS".
    #[schemars(with = "Option<RawDuration>")]
    pub max_cputime: Option<Spanned<RawDuration>>,
    #[schemars(with = "Option<i64>")]
    pub max_running: Option<Spanned<i64>>,
    /// Eligible (waiting) jobs of the queue at once.
    #[schemars(with = "Option<i64>")]
    pub max_queued: Option<Spanned<i64>>,
    /// Requested processors of its running jobs at once.
    #[schemars(with = "Option<i64>")]
    pub cpu_quota: Option<Spanned<i64>>,
    /// Caps on each user's jobs in this queue: max_running, max_queued, cpu_quota.
    pub per_user: Option<RawCaps>,
    /// Caps on each group's jobs in this queue: max_running, max_queued, cpu_quota.
    pub per_group: Option<RawCaps>,
    /// SWF queue numbers (field 15) routed here (routing: swf_queue).
    pub swf_queue: Option<Vec<i32>>,
    /// Queue names of the trace (Alea's extended SWF) routed here (routing: queue_name).
    pub trace_names: Option<Vec<String>>,
}

/// Seconds, or a text: "H:MM" / "H:MM:SS" for queue limits; a duration with a unit or a date
/// for windows.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawDuration {
    Seconds(i64),
    Text(String),
}

/// When priorities are recomputed: seconds between recomputations, or a word (`start`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawReorder {
    Seconds(i64),
    Word(String),
}

/// Caps on users or groups.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawAccounts {
    pub default: Option<RawCaps>,
    pub by_id: Option<BTreeMap<i32, RawCaps>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCaps {
    /// Running jobs at once.
    #[schemars(with = "Option<i64>")]
    pub max_running: Option<Spanned<i64>>,
    /// Eligible (waiting) jobs at once: DataStar's six per user.
    #[schemars(with = "Option<i64>")]
    pub max_queued: Option<Spanned<i64>>,
    /// Requested processors of running jobs at once.
    #[schemars(with = "Option<i64>")]
    pub cpu_quota: Option<Spanned<i64>>,
}
