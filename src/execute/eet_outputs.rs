//! The expected-end-time metrics of a cell (Tóth & Klusáček; docs/metrics.md, "User-aware
//! metrics") as the cell's outputs: computed job by job from the schedule (the pure [`EetStream`])
//! under the cell's `metrics.expected_capacity`, then written — the per-job and per-user
//! columns go with jobs.parquet and users.parquet (their writers take the results), the
//! heatmap into `eet_heatmap.parquet` and `eet_usage.parquet`, the spread across users into
//! the summary. Kept apart so that it moves with the other metric settings.

use serde::{Deserialize, Serialize};

use crate::manifest::Cell;
use crate::sim::fairshare::Replay;
use crate::sim::metrics::JobRecord;
use crate::sim::metrics::eet::{
    Axis, EetJob, EetStream, EetSummary, EetUsers, JobEet, ScheduleEet,
};
use crate::store::{Table, Value, write_eet_heatmap, write_eet_usage};

/// What the summary records of a cell's EETs (in its [`super::metrics_node::CellSummary`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CellEet {
    /// The capacity rule in words.
    pub capacity: String,
    /// The scale of the split capacities.
    pub scale: f64,
    /// Bin width of the heatmap, seconds.
    pub bin_seconds: i64,
    pub summary: EetSummary,
}

/// The EET metric of a cell's schedule on a machine of `cores` and `memory_kb`, computed job by
/// job as the schedule streams by ([`EetStream`]; the same numbers as `schedule_eet` on the
/// whole run). `replay` gives the users' fairshare shares (for `split: shares`).
pub struct EetPass {
    stream: EetStream,
    capacity: String,
    scale: f64,
}

impl EetPass {
    /// Ready for the jobs of `users` (gathered by a first pass over the schedule).
    pub fn new(
        cell: &Cell,
        users: &EetUsers,
        cores: u64,
        memory_kb: u64,
        replay: &Replay,
    ) -> Result<EetPass, String> {
        let expected = &cell.metrics.expected_capacity;
        // The shares of the users with a simulated job, by user id (users.parquet's rows).
        let shares: Vec<(i32, f64)> = (0..replay.ids.len())
            .filter(|&u| replay.users[u].jobs > 0)
            .map(|u| (replay.ids[u], replay.users[u].share))
            .collect();
        let rule = expected.rule(cores, memory_kb, &shares);
        let judged = |axis| {
            EetStream::new(&rule, users, axis).map_err(|e| format!("expected end times: {e}"))
        };
        let stream = match users.axis(None) {
            Ok(axis) => judged(axis)?,
            Err(e) => {
                // The capacities' error first, as the whole computation reports it.
                judged(Axis::covering(0, 0, 60).expect("one bin of a minute"))?;
                return Err(format!("expected end times heatmap: {e}"));
            }
        };
        Ok(EetPass {
            stream,
            capacity: expected.describe(),
            scale: expected.scale.to_f64(),
        })
    }

    /// The next job of the schedule, in submission order.
    pub fn job(&mut self, record: &JobRecord) -> Result<JobEet, String> {
        self.stream
            .push(&EetJob::of_record(record))
            .map_err(|e| format!("expected end times: {e}"))
    }

    /// The per-user results and the heatmap (`jobs` and `report.jobs` are empty: the per-job
    /// results went out with each job), and what the summary records.
    pub fn finish(self) -> Result<(ScheduleEet, CellEet), String> {
        let (report, heatmap) = self
            .stream
            .finish()
            .map_err(|e| format!("expected end times heatmap: {e}"))?;
        let summary = CellEet {
            capacity: self.capacity.clone(),
            scale: self.scale,
            bin_seconds: heatmap.axis.width,
            summary: report.summary.clone(),
        };
        let eet = ScheduleEet {
            jobs: Vec::new(),
            report,
            heatmap,
            capacity: self.capacity,
        };
        Ok((eet, summary))
    }
}

/// Adds `eet_heatmap.parquet` and `eet_usage.parquet` of a cell to its entry's `tables`.
pub(super) fn write(
    tables: &mut super::metrics_node::Tables,
    eet: &ScheduleEet,
    cores: u64,
    memory_kb: u64,
) -> Result<(), String> {
    tables.add("eet_heatmap.parquet", |to| {
        write_eet_heatmap(to, &eet.heatmap, &[])
    })?;
    let memory = (memory_kb > 0).then_some(memory_kb);
    tables.add("eet_usage.parquet", |to| {
        write_eet_usage(to, &eet.heatmap, Some(cores), memory, &[])
    })
}

/// The summary columns of a cell's EETs (docs/outputs.md, summary.parquet).
pub fn summary_columns(summary: &mut Table, eet: &CellEet) {
    let opt = |v: Option<f64>| v.map_or(Value::Null, Value::Float);
    let s = &eet.summary;
    summary
        .set("expected_capacity", Value::Str(eet.capacity.clone()))
        .set("capacity_scale", Value::Float(eet.scale))
        .set("eet_users", Value::Int(s.judged_users as i64))
        .set("eet_violated_jobs", Value::Int(s.violated_jobs as i64))
        .set("eet_violated_fraction", opt(s.violated_fraction))
        .set("users_veet_at_most_35", opt(s.users_veet_at_most_35));
    for (name, spread) in [
        ("veet", &s.veet),
        ("weighted_tardiness", &s.weighted_tardiness),
        ("tardiness", &s.tardiness),
    ] {
        for (stat, v) in [
            ("min", spread.min),
            ("q1", spread.q1),
            ("median", spread.median),
            ("q3", spread.q3),
            ("max", spread.max),
            ("mean", spread.mean),
        ] {
            summary.set(&format!("{name}_{stat}"), opt(v));
        }
    }
}
