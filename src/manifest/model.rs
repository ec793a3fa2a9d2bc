//! Resolved, validated manifest types: what planning and execution work from. Every field is
//! present and checked; paths are resolved; names are replaced by the things they name.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::sim::metrics::{SizeClasses, Warmup};
use crate::sim::scheduler::order::OrderSpec;
use crate::sim::transform::{Transforms, UserFilter};
use crate::sim::{Overrun, SchedulerKind, Time};

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
    pub seed: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadSpec {
    pub name: String,
    pub source: WorkloadSource,
    pub transforms: TransformSpec,
    pub lenient: bool,
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClusterSpec {
    pub name: String,
    /// `None`: the trace's MaxProcs.
    pub procs: Option<u32>,
    pub node_size: Option<u32>,
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
