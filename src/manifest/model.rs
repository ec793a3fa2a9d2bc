//! Resolved, validated manifest types: what planning and execution work from. Every field is
//! present and checked; paths are resolved; names are replaced by the things they name.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::sim::metrics::{SizeClasses, Warmup};
use crate::sim::topology::{Cluster, NodeClass, Topology};
use crate::sim::transform::{Transforms, UserFilter};
use crate::sim::{Allocation, Machine, Overrun, Placement, SchedulerKind, Time, TopologyMachine};
use crate::swf::ReadOptions;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Manifest {
    /// Experiment name (results go to `results/<name>/`).
    pub name: String,
    pub description: Option<String>,
    /// The manifest path as given.
    pub path: PathBuf,
    /// blake3 of the manifest file's bytes.
    pub hash: String,
    /// Grid axes in canonical order (the summary's parameter columns).
    pub axes: Vec<String>,
    pub cells: Vec<Cell>,
    pub report: ReportSpec,
}

/// One simulation of the grid: fully resolved parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// Stable, readable id, e.g. `sdsc-sp2.easy.interval-900`.
    pub id: String,
    /// Axis → rendered value, in canonical axis order.
    pub params: BTreeMap<String, String>,
    pub workload: WorkloadSpec,
    pub cluster: ClusterSpec,
    pub scheduler: SchedulerSpec,
    pub metrics: MetricsSpec,
    /// Advance reservations injected into the run (`None`: the `none` scenario).
    pub reservations: Option<super::reservations::ReservationSpec>,
    /// Queues, limits and quotas (`None`: the `none` setup, one queue without limits).
    pub queues: Option<super::queues::QueueSetup>,
    pub seed: u64,
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
    pub window_start: Option<Time>,
    pub window_end: Option<Time>,
    pub users: Option<Vec<i32>>,
    pub exclude_users: Option<Vec<i32>>,
    pub partitions: Option<Vec<i32>>,
    pub first_jobs: Option<u64>,
    pub load_scale: Option<f64>,
}

impl TransformSpec {
    pub fn to_transforms(&self) -> Transforms {
        let window = (self.window_start.is_some() || self.window_end.is_some())
            .then_some((self.window_start, self.window_end));
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SchedulerSpec {
    pub name: String,
    pub policy: SchedulerKind,
    pub interval: Option<Time>,
    pub overrun: Overrun,
    /// Node placement on topologies (ignored by processor pools).
    pub placement: Placement,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MetricsSpec {
    pub tau: Time,
    pub warmup: Warmup,
    pub timeseries_step: Time,
    /// Job-size classes of the per-class aggregates (default: the paper's small/medium/large).
    pub size_classes: SizeClasses,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReportSpec {
    pub formats: Vec<String>,
    pub template: Option<PathBuf>,
    /// Cell of the Gantt view (default: the first cell).
    pub gantt_cell: Option<String>,
    /// Start of the Gantt window (default: a quarter into the measurement window).
    pub gantt_start: Option<Time>,
    /// Length of the Gantt window, seconds.
    pub gantt_seconds: Time,
}
