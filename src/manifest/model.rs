//! Resolved, validated manifest types: what planning and execution work from. Every field is
//! present and checked; paths are resolved; names are replaced by the things they name.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::sim::metrics::{SizeClasses, Warmup};
use crate::sim::scheduler::order::OrderSpec;
use crate::sim::topology::{Cluster, NodeClass, Topology};
use crate::sim::transform::{Transforms, UserFilter};
use crate::sim::{Allocation, Machine, Overrun, Placement, SchedulerKind, Time, TopologyMachine};
use crate::swf::ReadOptions;

use super::window::{RelativeWindow, TraceOrigin};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Manifest {
    /// Experiment name (results go to `results/<name>/`).
    pub name: String,
    pub description: Option<String>,
    /// The manifest path as given.
    pub path: PathBuf,
    /// blake3 of the manifest file's bytes.
    pub hash: String,
    /// The manifest file's text (recorded in the results' metadata).
    #[serde(skip)]
    pub text: String,
    /// Grid axes in canonical order (the summary's parameter columns).
    pub axes: Vec<String>,
    pub cells: Vec<Cell>,
    pub report: ReportSpec,
    pub limits: Limits,
}

/// Bounds on what a manifest may ask for, so that a slip of the keyboard (`replicas: 1000000`
/// on a large grid, a synthetic workload of 100,000 days) gets a clear error instead of
/// exhausting memory. Raised in the manifest's `limits` section (docs/manifest.md, "Limits");
/// they never change results, so they stay out of cache keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Cells of the grid, replicas included.
    pub max_cells: u64,
    /// Jobs of one synthetic workload.
    pub max_jobs: u64,
    /// Bins of one cell's time series.
    pub max_timeseries_bins: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_cells: 1_000_000,
            max_jobs: 10_000_000,
            max_timeseries_bins: 1_000_000,
        }
    }
}

/// One simulation of the grid: fully resolved parameters. The settings are shared (`Arc`)
/// between the cells that have the same ones, so a grid of a million cells holds each distinct
/// setting once; change one through `Arc::make_mut`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// Stable, readable id, e.g. `sdsc-sp2.easy.interval-900`.
    pub id: String,
    /// Axis → rendered value, in canonical axis order.
    pub params: Params,
    pub workload: Arc<WorkloadSpec>,
    pub cluster: Arc<ClusterSpec>,
    pub scheduler: Arc<SchedulerSpec>,
    pub metrics: Arc<MetricsSpec>,
    /// Advance reservations injected into the run (`None`: the `none` scenario).
    pub reservations: Option<Arc<super::reservations::ReservationSpec>>,
    /// Queues, limits and quotas (`None`: the `none` setup, one queue without limits).
    pub queues: Option<Arc<super::queues::QueueSetup>>,
    pub seed: u64,
}

/// A cell's grid parameters: axis → rendered value, in canonical axis order. The axes and their
/// rendered values are held once per grid ([`ParamTable`]); a cell holds one index per axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    table: Arc<ParamTable>,
    indices: Arc<[u32]>,
}

/// The axes of a grid and every value each takes, rendered.
#[derive(Debug, PartialEq, Eq)]
pub struct ParamTable {
    axes: Vec<String>,
    /// Positions of `axes` in name order (for the canonical serialization).
    sorted: Vec<usize>,
    values: Vec<Vec<String>>,
}

impl ParamTable {
    /// `values[i]` are the rendered values of axis `axes[i]`.
    pub fn new(axes: Vec<String>, values: Vec<Vec<String>>) -> ParamTable {
        assert_eq!(axes.len(), values.len(), "values for each axis");
        let mut sorted: Vec<usize> = (0..axes.len()).collect();
        sorted.sort_by_key(|&i| &axes[i]);
        ParamTable {
            axes,
            sorted,
            values,
        }
    }
}

impl Params {
    /// The parameters taking value `indices[i]` of axis `i` of `table`.
    pub fn new(table: Arc<ParamTable>, indices: Arc<[u32]>) -> Params {
        assert_eq!(table.axes.len(), indices.len(), "one value per axis");
        Params { table, indices }
    }

    fn value(&self, axis: usize) -> &str {
        &self.table.values[axis][self.indices[axis] as usize]
    }

    /// (axis, value) pairs in canonical axis order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (0..self.indices.len()).map(|i| (self.table.axes[i].as_str(), self.value(i)))
    }

    pub fn get(&self, axis: &str) -> Option<&str> {
        self.iter().find(|(a, _)| *a == axis).map(|(_, v)| v)
    }
}

impl std::ops::Index<&str> for Params {
    type Output = str;
    fn index(&self, axis: &str) -> &str {
        self.get(axis)
            .unwrap_or_else(|| panic!("no axis `{axis}` in the cell's parameters"))
    }
}

/// As a map sorted by axis name (canonical, like the `BTreeMap` it replaces in key material).
impl Serialize for Params {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.indices.len()))?;
        for &i in &self.table.sorted {
            map.serialize_entry(&self.table.axes[i], self.value(i))?;
        }
        map.end()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadSpec {
    pub name: String,
    pub source: WorkloadSource,
    pub transforms: TransformSpec,
    pub lenient: bool,
    /// How the trace's memory and extended fields are read (the standard by default).
    pub reading: ReadOptions,
}

/// Where a workload's jobs come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadSource {
    /// Resolved path of an SWF trace file.
    Trace(PathBuf),
    /// Generated from user models, seeded per replica.
    Synthetic(super::synthetic::SyntheticSpec),
}

impl WorkloadSpec {
    /// Whether the trace is read as the SWF standard says (no reading option set).
    pub fn reads_standard(&self) -> bool {
        self.reading == ReadOptions::default()
    }

    /// The trace file, for trace workloads.
    pub fn trace(&self) -> Option<&PathBuf> {
        match &self.source {
            WorkloadSource::Trace(path) => Some(path),
            WorkloadSource::Synthetic(_) => None,
        }
    }
}

/// Workload transforms, in a serializable form (see [`Transforms`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TransformSpec {
    /// `window: {start, end}`, in trace seconds.
    pub window_start: Option<Time>,
    pub window_end: Option<Time>,
    /// A window relative to the first submission or between dates (docs/manifest.md,
    /// "Windows"); absent from key material when not given, so older keys are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<RelativeWindow>,
    /// `window` in trace seconds on the workload's trace, set by [`TransformSpec::place_window`]
    /// once the trace is known (`execute::selection`); never in key material (the trace's
    /// digest and `window` determine it).
    #[serde(skip)]
    pub placed_window: Option<(Option<Time>, Option<Time>)>,
    pub users: Option<Vec<i32>>,
    pub exclude_users: Option<Vec<i32>>,
    pub partitions: Option<Vec<i32>>,
    pub first_jobs: Option<u64>,
    pub load_scale: Option<f64>,
}

impl TransformSpec {
    /// The filters that select jobs, as a manifest writes them (`window: {start: 0, end: 10}`,
    /// `users: [3, 5]`…), for messages; `load_scale` selects none and is left out.
    pub fn filters(&self) -> Vec<String> {
        let list = |v: &[i32]| {
            let items: Vec<String> = v.iter().map(i32::to_string).collect();
            format!("[{}]", items.join(", "))
        };
        let mut out = Vec::new();
        if self.window_start.is_some() || self.window_end.is_some() {
            let bound = |name: &str, t: Option<Time>| t.map(|t| format!("{name}: {t}"));
            let parts: Vec<String> = [
                bound("start", self.window_start),
                bound("end", self.window_end),
            ]
            .into_iter()
            .flatten()
            .collect();
            out.push(format!("window: {{{}}}", parts.join(", ")));
        }
        if let Some(w) = &self.window {
            out.push(format!("window: {}", w.written));
        }
        if let Some(u) = &self.users {
            out.push(format!("users: {}", list(u)));
        }
        if let Some(u) = &self.exclude_users {
            out.push(format!("exclude_users: {}", list(u)));
        }
        if let Some(p) = &self.partitions {
            out.push(format!("partitions: {}", list(p)));
        }
        if let Some(n) = self.first_jobs {
            out.push(format!("first_jobs: {n}"));
        }
        out
    }

    /// Whether a filter may keep no job of a trace: a window, users or partitions
    /// (`first_jobs` keeps at least one of what is left).
    pub fn selects(&self) -> bool {
        self.window.is_some()
            || self.window_start.is_some()
            || self.window_end.is_some()
            || self.users.is_some()
            || self.exclude_users.is_some()
            || self.partitions.is_some()
    }

    /// Places a relative or dated `window` on a trace with `origin`; an error when a date has
    /// no start time to be placed by or the window is empty there.
    pub fn place_window(&mut self, origin: &TraceOrigin) -> Result<(), String> {
        if let Some(w) = &self.window {
            self.placed_window = Some(w.seconds(origin)?);
        }
        Ok(())
    }

    /// The transforms. A relative or dated window that was never placed on its trace
    /// ([`TransformSpec::place_window`], done when a run is prepared) keeps no job, so a path
    /// that forgot to place it fails the cell with the no-job error instead of simulating the
    /// wrong jobs.
    pub fn to_transforms(&self) -> Transforms {
        let window = match &self.window {
            Some(_) => Some(self.placed_window.unwrap_or((Some(Time::MAX), None))),
            None => (self.window_start.is_some() || self.window_end.is_some())
                .then_some((self.window_start, self.window_end)),
        };
        let users = match (&self.users, &self.exclude_users) {
            (Some(only), _) => Some(UserFilter::Only(only.clone())),
            (None, Some(except)) => Some(UserFilter::Except(except.clone())),
            (None, None) => None,
        };
        Transforms {
            window,
            users,
            partitions: self.partitions.clone(),
            first_jobs: self.first_jobs.map(|n| n as usize),
            load_scale: self.load_scale,
        }
    }
}

/// A machine of the grid's `cluster` axis: a processor pool or exclusive nodes of `procs`
/// processors (`None`: the trace's MaxProcs), or a topology.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterSpec {
    pub name: String,
    /// `None`: the trace's MaxProcs (uniform machines only).
    pub procs: Option<u32>,
    pub node_size: Option<u32>,
    /// Clusters of node classes; `procs` and `node_size` are then `None`.
    pub topology: Option<TopologySpec>,
}

/// A heterogeneous system as resolved from the manifest (and its machine file): what the
/// simulator's [`Topology`] is built from, serializable for cache keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopologySpec {
    pub clusters: Vec<TopologyClusterSpec>,
    pub ignore_memory: bool,
    pub scale_runtime: bool,
    /// The imported machine file, as written in the manifest (its content is in `clusters`;
    /// the path does not enter cache keys).
    #[serde(skip)]
    pub machines: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopologyClusterSpec {
    pub name: String,
    pub allocation: Allocation,
    pub classes: Vec<NodeClassSpec>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeClassSpec {
    pub name: String,
    pub count: u32,
    pub cores: u32,
    pub memory_kb: u64,
    pub gpus: u32,
    pub speed: f64,
    pub spec_per_core: Option<f64>,
    pub properties: Vec<String>,
    pub cost: f64,
}

impl TopologySpec {
    pub fn topology(&self) -> Topology {
        Topology::new(
            self.clusters
                .iter()
                .map(|c| {
                    Cluster::new(
                        c.name.clone(),
                        c.allocation,
                        c.classes.iter().map(NodeClassSpec::node_class).collect(),
                    )
                })
                .collect(),
        )
    }

    pub fn machine(&self) -> Machine {
        Machine::Topology(TopologyMachine {
            ignore_memory: self.ignore_memory,
            scale_runtime: self.scale_runtime,
            ..TopologyMachine::new(self.topology())
        })
    }

    pub fn nodes(&self) -> u64 {
        self.classes().map(|c| u64::from(c.count)).sum()
    }

    pub fn cores(&self) -> u64 {
        self.classes()
            .map(|c| u64::from(c.count) * u64::from(c.cores))
            .sum()
    }

    fn classes(&self) -> impl Iterator<Item = &NodeClassSpec> {
        self.clusters.iter().flat_map(|c| c.classes.iter())
    }
}

impl NodeClassSpec {
    fn node_class(&self) -> NodeClass {
        let mut class = NodeClass::new(self.name.clone(), self.count, self.cores, self.memory_kb)
            .with_gpus(self.gpus)
            .with_speed(self.speed)
            .with_properties(self.properties.iter().cloned());
        class.spec_per_core = self.spec_per_core;
        class.cost = self.cost;
        class
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedulerSpec {
    pub name: String,
    /// The backfilling rule.
    pub policy: SchedulerKind,
    /// The queue order the rule walks, with its fairshare and priority settings.
    pub order: OrderSpec,
    pub interval: Option<Time>,
    pub overrun: Overrun,
    /// Node placement on topologies (ignored by processor pools).
    pub placement: Placement,
    /// A policy written in Python instead of the built-in rule (`policy: python`).
    pub python: Option<Arc<super::python_policy::PythonPolicySpec>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MetricsSpec {
    pub tau: Time,
    pub warmup: Warmup,
    pub timeseries_step: Time,
    /// Job-size classes of the per-class aggregates (default: the paper's small/medium/large).
    pub size_classes: SizeClasses,
    /// The users' expected capacity of the expected-end-time metrics.
    pub expected_capacity: crate::sim::metrics::eet::ExpectedCapacity,
}

/// The papers a report can compare an experiment with (`reports.reproduces`), by the stem of
/// their file under papers/: Margo et al.'s reservations (the reservations section), Medernach's
/// LPC queues (the queues section), Tóth and Klusáček's expected end times (the user-aware
/// section).
pub const PAPERS: [&str; 3] = [
    "margo-impact-of-reservations",
    "medernach-grid-workload-markov-arrivals",
    "toth-klusacek-user-aware-metrics-eet",
];

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReportSpec {
    pub formats: Vec<String>,
    pub template: Option<PathBuf>,
    /// The Markdown template replacing the built-in one (absent from the serialized model when
    /// not given, so that earlier manifests keep their hashes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown_template: Option<PathBuf>,
    /// The paper the experiment reproduces (one of [`PAPERS`]): its report compares the
    /// results with it; other reports never mention a paper (issue 35). Absent from the
    /// serialized model when not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduces: Option<String>,
    /// Cell of the Gantt view (default: the first cell).
    pub gantt_cell: Option<String>,
    /// Start of the Gantt window (default: a quarter into the measurement window).
    pub gantt_start: Option<Time>,
    /// Length of the Gantt window, seconds.
    pub gantt_seconds: Time,
}
