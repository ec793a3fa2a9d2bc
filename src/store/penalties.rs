//! `job_penalties.parquet` of one simulation (columns in docs/outputs.md): every job's fairshare
//! penalty under `cpu` and `pe_min` on the cell's machine, with its wait in the cell — what the
//! report's Klusáček & Rudová §4 comparison reads. Written with its columns even without rows.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array};
use arrow_schema::{DataType, Field, Schema};

use super::{StoreError, write_columns};
use crate::analysis::JobPenalties;
use crate::sim::Time;

/// `jobs` (from [`crate::analysis::job_penalties`]) with `waits[i]`, the wait of workload job
/// `i` in the cell (`None`: it never ran).
pub fn write_job_penalties<'a>(
    to: impl Into<super::Target<'a>>,
    jobs: &[JobPenalties],
    waits: &[Option<Time>],
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    let int = |name: &str, nullable: bool| Field::new(name, DataType::Int64, nullable);
    let float = |name: &str, nullable: bool| Field::new(name, DataType::Float64, nullable);
    let schema = Arc::new(Schema::new(vec![
        int("job_id", false),
        int("user", false),
        float("cores", false),
        int("runtime", false),
        float("cpu", false),
        float("pe_min", true),
        float("increase", true),
        int("wait", true),
    ]));
    let wait = |j: &JobPenalties| waits.get(j.index as usize).copied().flatten();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(
            jobs.iter().map(|j| j.job_id as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            jobs.iter().map(|j| i64::from(j.user)),
        )),
        Arc::new(Float64Array::from_iter_values(jobs.iter().map(|j| j.cores))),
        Arc::new(Int64Array::from_iter_values(jobs.iter().map(|j| j.runtime))),
        Arc::new(Float64Array::from_iter_values(jobs.iter().map(|j| j.cpu))),
        Arc::new(jobs.iter().map(|j| j.pe_min).collect::<Float64Array>()),
        Arc::new(jobs.iter().map(|j| j.increase()).collect::<Float64Array>()),
        Arc::new(jobs.iter().map(wait).collect::<Int64Array>()),
    ];
    write_columns(to, schema, columns, metadata)
}
