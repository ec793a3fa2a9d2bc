//! `read_trace`: a trace's jobs as a pyarrow batch, one row per job of the workload in
//! submission order, as the simulator reads them (docs/python.md, "Reading a trace").

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use pyo3::prelude::*;
use schedlab::api;
use schedlab::swf::{ReadOptions, Trace};

use crate::errors;

/// Reads `path` with the CLI's reader and options; with `mapping` (a shipped mapping's name or
/// a mapping file), as a job table or Slurm accounting (docs/sources.md).
pub fn load(path: PathBuf, lenient: bool, memory: &str, mapping: Option<&str>) -> PyResult<Trace> {
    let mut options = ReadOptions {
        memory: memory.parse().map_err(errors::input)?,
        ..ReadOptions::default()
    };
    if let Some(m) = mapping {
        let reading = schedlab::table::mapping::by_name_or_file(m, None).map_err(
            |(message, hint)| match hint {
                Some(h) => errors::input(format!("{message}\nhint: {h}")),
                None => errors::input(message),
            },
        )?;
        options.format = schedlab::swf::TraceFormat::Table(Arc::new(reading));
    }
    api::trace::load(&path, lenient, &options).map_err(errors::to_py)
}

/// The generated workload of `mapping` (a manifest's workload mapping as JSON text), made by
/// the manifest's own generator for `seed` on a machine of `procs` processors (required).
pub fn generated(py: Python<'_>, mapping: &str, procs: Option<u32>, seed: u64) -> PyResult<Trace> {
    let Some(procs) = procs else {
        return Err(errors::input(
            "a generated workload needs the machine size: give procs=N",
        ));
    };
    let mapping: serde_json::Value =
        serde_json::from_str(mapping).map_err(|e| errors::input(e.to_string()))?;
    let source = format!("generated workload (seed {seed})");
    py.detach(|| api::generated::generated(&mapping, procs, seed, &source))
        .map_err(errors::to_py)
}

/// The jobs of `path` as a `pyarrow.RecordBatch` (columns: index, id, submit, runtime,
/// requested_time, procs, user, group, queue, partition, memory_kb), with the trace's header
/// and read counts in the schema metadata. With `mapping`, `path` is a job table or a sacct
/// dump read through that mapping.
#[pyfunction]
#[pyo3(signature = (path, *, lenient = false, memory = "kb_per_proc", mapping = None))]
pub fn read_trace(
    py: Python<'_>,
    path: PathBuf,
    lenient: bool,
    memory: &str,
    mapping: Option<String>,
) -> PyResult<Py<PyAny>> {
    let trace = py.detach(|| load(path, lenient, memory, mapping.as_deref()))?;
    let jobs = &trace.workload.jobs;
    let column = |f: &dyn Fn(usize) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values((0..jobs.len()).map(f)))
    };
    let w = &trace.workload;
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("index", column(&|i| i as i64)),
        ("id", column(&|i| jobs[i].id as i64)),
        ("submit", column(&|i| jobs[i].submit)),
        ("runtime", column(&|i| jobs[i].runtime)),
        ("requested_time", column(&|i| jobs[i].requested_time)),
        ("procs", column(&|i| i64::from(jobs[i].procs))),
        ("user", column(&|i| i64::from(jobs[i].user))),
        ("group", column(&|i| i64::from(jobs[i].group))),
        ("queue", column(&|i| i64::from(jobs[i].queue))),
        ("partition", column(&|i| i64::from(jobs[i].partition))),
        (
            "memory_kb",
            column(&|i| w.memory_kb(&jobs[i]).min(i64::MAX as u64) as i64),
        ),
    ];
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, _)| Field::new(*name, DataType::Int64, false))
        .collect();
    let metadata = [
        ("schedlab.trace", trace.source.clone()),
        (
            "schedlab.max_procs",
            trace
                .header
                .max_procs
                .map_or(String::new(), |p| p.to_string()),
        ),
        ("schedlab.records", trace.records.to_string()),
        ("schedlab.skipped", trace.anomalies.skipped().to_string()),
        ("schedlab.malformed", trace.malformed.count.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect::<std::collections::HashMap<String, String>>();
    let schema = Arc::new(Schema::new(fields).with_metadata(metadata));
    let batch = RecordBatch::try_new(schema, columns.into_iter().map(|c| c.1).collect())
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(crate::arrow::to_pyarrow(py, batch)?.unbind())
}
