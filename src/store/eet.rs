//! The Parquet files of `schedlab trace eet` (columns in docs/outputs.md): per-job EETs, per-user
//! VEET_u and WT_u, the heatmap's non-empty cells and the system usage per bin. Fixed schemas,
//! written whole or not at all.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array};
use arrow_schema::{DataType, Field, Schema};

use super::columns::{OutputFile, described};
use super::{StoreError, write_columns};
use crate::sim::metrics::eet::{EetJob, Heatmap, JobEet, Resource, UserEet};

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The schema of `file`, each field with its documented unit and description.
fn schema(file: OutputFile, columns: &[(&str, DataType, bool)]) -> Arc<Schema> {
    let fields = columns
        .iter()
        .map(|(name, ty, nullable)| Field::new(*name, ty.clone(), *nullable))
        .collect::<Vec<_>>();
    described(file, &Schema::new(fields))
}

/// `eet_jobs.parquet`: one row per job, in the order given.
pub fn write_eet_jobs(
    path: &Path,
    jobs: &[EetJob],
    results: &[JobEet],
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    use DataType::{Boolean, Int32, Int64};
    let schema = schema(
        OutputFile::EetJobs,
        &[
            ("job_id", Int64, false),
            ("user", Int32, false),
            ("group", Int32, false),
            ("submit", Int64, false),
            ("start", Int64, true),
            ("end", Int64, true),
            ("runtime", Int64, false),
            ("cpus", Int64, false),
            ("memory_kb", Int64, false),
            ("eet", Int64, false),
            ("eet_cpu", Int64, true),
            ("eet_memory", Int64, true),
            ("latest_start", Int64, false),
            ("violated", Boolean, true),
            ("tardiness", Int64, true),
            ("weighted_tardiness", Int64, true),
        ],
    );
    let ints = |f: &dyn Fn(&EetJob, &JobEet) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(
            jobs.iter().zip(results).map(|(j, r)| f(j, r)),
        ))
    };
    let opt_ints = |f: &dyn Fn(&EetJob, &JobEet) -> Option<i64>| -> ArrayRef {
        Arc::new(Int64Array::from_iter(
            jobs.iter().zip(results).map(|(j, r)| f(j, r)),
        ))
    };
    let columns: Vec<ArrayRef> = vec![
        ints(&|j, _| int(j.id)),
        Arc::new(Int32Array::from_iter_values(jobs.iter().map(|j| j.user))),
        Arc::new(Int32Array::from_iter_values(jobs.iter().map(|j| j.group))),
        ints(&|j, _| j.submit),
        opt_ints(&|j, _| j.start),
        opt_ints(&|_, r| r.completion),
        ints(&|j, _| j.runtime),
        ints(&|j, _| int(j.request[Resource::Cpu])),
        ints(&|j, _| int(j.request[Resource::Memory])),
        ints(&|_, r| r.eet),
        opt_ints(&|_, r| r.by_resource[Resource::Cpu]),
        opt_ints(&|_, r| r.by_resource[Resource::Memory]),
        ints(&|_, r| r.latest_start),
        Arc::new(BooleanArray::from_iter(results.iter().map(|r| r.violated))),
        opt_ints(&|_, r| r.tardiness),
        opt_ints(&|j, r| {
            r.tardiness
                .map(|t| t.saturating_mul(int(j.request[Resource::Cpu])))
        }),
    ];
    write_columns(path, schema, columns, metadata)
}

/// `eet_users.parquet`: one row per user, by user id.
pub fn write_eet_users(
    path: &Path,
    users: &[UserEet],
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    use DataType::{Float64, Int32, Int64};
    let schema = schema(
        OutputFile::EetUsers,
        &[
            ("user", Int32, false),
            ("group", Int32, false),
            ("capacity_cpu", Float64, true),
            ("capacity_memory_kb", Float64, true),
            ("jobs", Int64, false),
            ("judged", Int64, false),
            ("violated", Int64, false),
            ("veet", Float64, true),
            ("tardiness", Int64, false),
            ("weighted_tardiness", Int64, false),
            ("max_tardiness", Int64, false),
        ],
    );
    let ints = |f: fn(&UserEet) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(users.iter().map(f)))
    };
    let capacity = |r: Resource| -> ArrayRef {
        Arc::new(Float64Array::from_iter(
            users.iter().map(|u| u.capacity[r].map(|c| c.to_f64())),
        ))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(users.iter().map(|u| u.user))),
        Arc::new(Int32Array::from_iter_values(users.iter().map(|u| u.group))),
        capacity(Resource::Cpu),
        capacity(Resource::Memory),
        ints(|u| int(u.jobs)),
        ints(|u| int(u.judged)),
        ints(|u| int(u.violated)),
        Arc::new(Float64Array::from_iter(users.iter().map(|u| u.veet))),
        ints(|u| u.tardiness),
        ints(|u| u.weighted_tardiness),
        ints(|u| u.max_tardiness),
    ];
    write_columns(path, schema, columns, metadata)
}

/// `eet_heatmap.parquet`: the non-empty cells, row by row (rows by total tardiness), each row
/// in time order.
pub fn write_eet_heatmap<'a>(
    to: impl Into<super::Target<'a>>,
    heatmap: &Heatmap,
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    use DataType::{Float64, Int32, Int64};
    let schema = schema(
        OutputFile::EetHeatmap,
        &[
            ("user", Int32, false),
            ("row", Int64, false),
            ("time", Int64, false),
            ("violated_mean", Float64, false),
            ("violated_max", Int64, false),
        ],
    );
    let cells = || {
        heatmap
            .rows
            .iter()
            .enumerate()
            .flat_map(|(k, row)| row.cells.iter().map(move |c| (k, row.user, c)))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(cells().map(|(_, u, _)| u))),
        Arc::new(Int64Array::from_iter_values(
            cells().map(|(k, _, _)| k as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            cells().map(|(_, _, c)| heatmap.axis.time(c.bin as usize)),
        )),
        Arc::new(Float64Array::from_iter_values(
            cells().map(|(_, _, c)| c.mean),
        )),
        Arc::new(Int64Array::from_iter_values(
            cells().map(|(_, _, c)| int(c.max)),
        )),
    ];
    write_columns(to, schema, columns, metadata)
}

/// `eet_usage.parquet`: one row per bin of the heatmap's axis; fractions of the system's
/// capacity where it is given.
pub fn write_eet_usage<'a>(
    to: impl Into<super::Target<'a>>,
    heatmap: &Heatmap,
    system_cpus: Option<u64>,
    system_memory_kb: Option<u64>,
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    use DataType::{Float64, Int64};
    let schema = schema(
        OutputFile::EetUsage,
        &[
            ("time", Int64, false),
            ("cpu", Float64, false),
            ("memory_kb", Float64, false),
            ("cpu_fraction", Float64, true),
            ("memory_fraction", Float64, true),
        ],
    );
    let fraction = |capacity: Option<u64>,
                    f: fn(&crate::sim::metrics::eet::heatmap::Usage) -> f64|
     -> ArrayRef {
        Arc::new(Float64Array::from_iter(
            heatmap
                .usage
                .iter()
                .map(|u| capacity.map(|c| f(u) / c as f64)),
        ))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(
            (0..heatmap.axis.bins).map(|b| heatmap.axis.time(b)),
        )),
        Arc::new(Float64Array::from_iter_values(
            heatmap.usage.iter().map(|u| u.cpu),
        )),
        Arc::new(Float64Array::from_iter_values(
            heatmap.usage.iter().map(|u| u.memory),
        )),
        fraction(system_cpus, |u| u.cpu),
        fraction(system_memory_kb, |u| u.memory),
    ];
    write_columns(to, schema, columns, metadata)
}
