//! `jobs.parquet`: one row per simulated job (columns in docs/outputs.md), optionally led by the
//! `cell` it belongs to. Cells are appended one at a time, so a grid's records never need to be
//! in memory together.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;

use super::columns::{OutputFile, described};
use super::{AtomicFile, StoreError, writer_properties};
use crate::sim::metrics::JobRecord;
use crate::sim::metrics::eet::JobEet;

/// Names the jobs' cluster indices and queue ids resolve to.
#[derive(Clone, Copy, Debug)]
pub struct JobLabels<'a> {
    /// Cluster names by index (empty on a uniform machine: the `cluster` column is null).
    pub clusters: &'a [String],
    /// Queue names by id (empty when the trace names no queues).
    pub queue_names: &'a std::collections::BTreeMap<i32, String>,
    /// User and group names by id (empty when the trace names none).
    pub names: &'a crate::sim::Names,
    /// What queues and limits did to each job, in a run with a queue setup.
    pub limits: Option<&'a crate::sim::limits::LimitsOutcome>,
    /// The expected-end-time results, one per record in the order written (the EET columns are
    /// null without them).
    pub eet: Option<&'a [JobEet]>,
    /// The simulated workload, whose jobs (by `JobRecord::index`) give the node properties
    /// they require (`required_properties`: a job table's GPU type); null without it.
    pub workload: Option<&'a crate::sim::Workload>,
}

/// Rows per row group of a `jobs.parquet` written here.
pub const JOBS_ROW_GROUP: usize = 1 << 16;

pub struct JobsWriter {
    file: AtomicFile,
    writer: ArrowWriter<File>,
    schema: SchemaRef,
    with_cell: bool,
}

/// The columns after `cell`: name and Arrow type.
const COLUMNS: [(&str, DataType); 18] = [
    ("job_id", DataType::Int64),
    ("user", DataType::Int32),
    ("group", DataType::Int32),
    ("queue", DataType::Int32),
    ("submit", DataType::Int64),
    ("start", DataType::Int64),
    ("end", DataType::Int64),
    ("wait", DataType::Int64),
    ("response", DataType::Int64),
    ("run", DataType::Int64),
    ("requested_time", DataType::Int64),
    ("procs", DataType::Int64),
    ("units", DataType::Int64),
    ("slowdown", DataType::Float64),
    ("bounded_slowdown", DataType::Float64),
    ("expansion_factor", DataType::Float64),
    ("backfilled", DataType::Boolean),
    ("killed", DataType::Boolean),
];

/// Columns of topologies and named queues, after the others; nullable.
const NAMED_COLUMNS: [(&str, DataType); 10] = [
    ("cluster", DataType::Utf8),
    ("nodes", DataType::Int64),
    ("cores", DataType::Int64),
    ("memory_kb", DataType::Int64),
    ("gpus", DataType::Int64),
    ("requested_memory_kb", DataType::Int64),
    ("queue_name", DataType::Utf8),
    ("user_name", DataType::Utf8),
    ("group_name", DataType::Utf8),
    ("required_properties", DataType::Utf8),
];

/// Columns of queues and limits (docs/queues.md), last; `sim_queue`, `held_by` and `killed_by`
/// nullable.
const LIMIT_COLUMNS: [(&str, DataType); 4] = [
    ("sim_queue", DataType::Utf8),
    ("held_by", DataType::Utf8),
    ("held_seconds", DataType::Int64),
    ("killed_by", DataType::Utf8),
];

/// The expected-end-time columns (docs/metrics.md, "User-aware metrics"), last; nullable.
const EET_COLUMNS: [(&str, DataType); 3] = [
    ("eet", DataType::Int64),
    ("eet_violated", DataType::Boolean),
    ("tardiness", DataType::Int64),
];

impl JobsWriter {
    pub fn create(
        path: &Path,
        metadata: &[(String, String)],
        with_cell: bool,
    ) -> Result<JobsWriter, StoreError> {
        let schema = jobs_schema(with_cell);
        let file = AtomicFile::create(path)?;
        // Row groups of [`JOBS_ROW_GROUP`] rows: the writer holds one encoded row group until
        // it is complete, so a million-row group would cost ~45 MB while a cell streams.
        let properties = writer_properties(metadata)
            .into_builder()
            .set_max_row_group_row_count(Some(JOBS_ROW_GROUP))
            .build();
        let writer = ArrowWriter::try_new(file.file()?, schema.clone(), Some(properties))
            .map_err(|e| parquet_error(path, e))?;
        Ok(JobsWriter {
            file,
            writer,
            schema,
            with_cell,
        })
    }

    /// Appends the records of one cell (`cell` is ignored without a cell column).
    pub fn write(
        &mut self,
        cell: &str,
        records: &[JobRecord],
        labels: &JobLabels<'_>,
    ) -> Result<(), StoreError> {
        let cell = self.with_cell.then_some(cell);
        let batch =
            batch(&self.schema, cell, records, labels).map_err(|e| StoreError::Parquet {
                path: self.file.path().to_path_buf(),
                message: e.to_string(),
            })?;
        self.writer
            .write(&batch)
            .map_err(|e| parquet_error(self.file.path(), e))
    }

    /// Writes `batch` (from [`jobs_batch`]) as the whole file at `path`.
    pub fn write_batch(
        path: &Path,
        metadata: &[(String, String)],
        batch: &RecordBatch,
    ) -> Result<(), StoreError> {
        let mut writer = JobsWriter::create(path, metadata, false)?;
        writer
            .writer
            .write(batch)
            .map_err(|e| parquet_error(path, e))?;
        writer.finish()
    }

    /// Finishes the file with `metadata` added to its key-value metadata (known only once the
    /// rows are written) and moves it into place.
    pub fn finish_with(mut self, metadata: &[(String, String)]) -> Result<(), StoreError> {
        for (key, value) in metadata {
            self.writer
                .append_key_value_metadata(parquet::file::metadata::KeyValue {
                    key: key.clone(),
                    value: Some(value.clone()),
                });
        }
        self.finish()
    }

    /// Finishes the file and moves it into place.
    pub fn finish(mut self) -> Result<(), StoreError> {
        self.writer
            .finish()
            .map_err(|e| parquet_error(self.file.path(), e))?;
        self.file.commit()
    }
}

/// The schema of `jobs.parquet` (docs/outputs.md), with a leading `cell` column for an
/// experiment's file.
fn jobs_schema(with_cell: bool) -> SchemaRef {
    let mut fields = Vec::new();
    if with_cell {
        fields.push(Field::new("cell", DataType::Utf8, false));
    }
    fields.extend(
        COLUMNS
            .iter()
            .map(|(name, ty)| Field::new(*name, ty.clone(), false)),
    );
    fields.extend(
        NAMED_COLUMNS
            .iter()
            .chain(&LIMIT_COLUMNS)
            .map(|(name, ty)| Field::new(*name, ty.clone(), *ty == DataType::Utf8)),
    );
    fields.extend(
        EET_COLUMNS
            .iter()
            .map(|(name, ty)| Field::new(*name, ty.clone(), true)),
    );
    described(OutputFile::Jobs, &Schema::new(fields))
}

/// The `jobs.parquet` columns of `records` as one batch (no `cell` column): what
/// `schedlab simulate --jobs-out` writes, for callers that hand it on in memory (the Python
/// package).
pub fn jobs_batch(
    records: &[JobRecord],
    labels: &JobLabels<'_>,
) -> Result<RecordBatch, ArrowError> {
    batch(&jobs_schema(false), None, records, labels)
}

/// `records` as a batch of `schema` (with the `cell` column when `cell` is given).
fn batch(
    schema: &SchemaRef,
    cell: Option<&str>,
    records: &[JobRecord],
    labels: &JobLabels<'_>,
) -> Result<RecordBatch, ArrowError> {
    let n = records.len();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(COLUMNS.len() + 1);
    if let Some(cell) = cell {
        let mut b = StringBuilder::with_capacity(n, n * cell.len());
        records.iter().for_each(|_| b.append_value(cell));
        columns.push(Arc::new(b.finish()));
    }
    let i64s = |f: fn(&JobRecord) -> i64| -> ArrayRef {
        let mut b = Int64Builder::with_capacity(n);
        records.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let i32s = |f: fn(&JobRecord) -> i32| -> ArrayRef {
        let mut b = Int32Builder::with_capacity(n);
        records.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let f64s = |f: fn(&JobRecord) -> f64| -> ArrayRef {
        let mut b = Float64Builder::with_capacity(n);
        records.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let bools = |f: fn(&JobRecord) -> bool| -> ArrayRef {
        let mut b = BooleanBuilder::with_capacity(n);
        records.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    columns.extend([
        i64s(|r| r.job_id as i64),
        i32s(|r| r.user),
        i32s(|r| r.group),
        i32s(|r| r.queue),
        i64s(|r| r.submit),
        i64s(|r| r.start),
        i64s(|r| r.end),
        i64s(|r| r.wait),
        i64s(|r| r.response),
        i64s(|r| r.run),
        i64s(|r| r.requested_time),
        i64s(|r| i64::from(r.procs)),
        i64s(|r| r.units as i64),
        f64s(|r| r.slowdown),
        f64s(|r| r.bounded_slowdown),
        f64s(|r| r.expansion_factor),
        bools(|r| r.backfilled),
        bools(|r| r.killed),
    ]);
    let mut cluster = StringBuilder::with_capacity(n, 8 * n);
    for r in records {
        cluster.append_option(labels.clusters.get(r.cluster as usize));
    }
    let mut queue = StringBuilder::with_capacity(n, 4 * n);
    for r in records {
        queue.append_option(labels.queue_names.get(&r.queue));
    }
    let named = |names: &std::collections::BTreeMap<i32, String>, id: fn(&JobRecord) -> i32| {
        let mut b = StringBuilder::with_capacity(n, if names.is_empty() { 0 } else { 8 * n });
        for r in records {
            b.append_option(names.get(&id(r)));
        }
        Arc::new(b.finish()) as ArrayRef
    };
    columns.extend([
        Arc::new(cluster.finish()) as ArrayRef,
        i64s(|r| i64::from(r.nodes)),
        i64s(|r| r.held.0[0] as i64),
        i64s(|r| r.held.0[1] as i64),
        i64s(|r| r.held.0[2] as i64),
        i64s(|r| r.requested_memory_kb.min(i64::MAX as u64) as i64),
        Arc::new(queue.finish()),
        named(&labels.names.users, |r| r.user),
        named(&labels.names.groups, |r| r.group),
        required_properties(records, labels.workload),
    ]);
    columns.extend(limit_columns(records, labels.limits));
    columns.extend(eet_columns(records.len(), labels.eet));
    RecordBatch::try_new(schema.clone(), columns)
}

/// `required_properties`: the node properties each record's job requires, comma-separated
/// (sorted, as the constraint holds them); null when none or without the workload.
fn required_properties(records: &[JobRecord], workload: Option<&crate::sim::Workload>) -> ArrayRef {
    let mut b = StringBuilder::with_capacity(records.len(), 0);
    for r in records {
        let properties = workload
            .and_then(|w| w.jobs.get(r.index as usize).map(|j| (w, j)))
            .map(|(w, j)| &w.constraints.get(w.request(j).constraint).properties)
            .filter(|p| !p.is_empty());
        match properties {
            Some(p) => b.append_value(p.join(",")),
            None => b.append_null(),
        }
    }
    Arc::new(b.finish())
}

/// `sim_queue`, `held_by`, `held_seconds`, `killed_by`. Without limits a job has no simulated
/// queue and is never held; `killed_by` is `request` for a job stopped at its requested time.
fn limit_columns(
    records: &[JobRecord],
    limits: Option<&crate::sim::limits::LimitsOutcome>,
) -> [ArrayRef; 4] {
    let n = records.len();
    let mut queue = StringBuilder::with_capacity(n, 8 * n);
    let mut held_by = StringBuilder::with_capacity(n, 8 * n);
    let mut held = Int64Builder::with_capacity(n);
    let mut killed_by = StringBuilder::with_capacity(n, 8 * n);
    for r in records {
        let limit_kill = limits.and_then(|l| l.killed_by[r.index as usize]);
        match limits {
            Some(l) => {
                queue.append_option(l.queue_name(r.index));
                held_by.append_option(l.held_by[r.index as usize].map(|k| k.name()));
                held.append_value(l.held_seconds(r.index));
            }
            None => {
                queue.append_null();
                held_by.append_null();
                held.append_value(0);
            }
        }
        match (limit_kill, r.killed) {
            (Some(why), _) => killed_by.append_value(why.name()),
            (None, true) => killed_by.append_value("request"),
            (None, false) => killed_by.append_null(),
        }
    }
    [
        Arc::new(queue.finish()),
        Arc::new(held_by.finish()),
        Arc::new(held.finish()),
        Arc::new(killed_by.finish()),
    ]
}

/// `eet`, `eet_violated`, `tardiness` of `n` records: from `eet` (one per record), else null.
fn eet_columns(n: usize, eet: Option<&[JobEet]>) -> [ArrayRef; 3] {
    let mut end = Int64Builder::with_capacity(n);
    let mut violated = BooleanBuilder::with_capacity(n);
    let mut tardiness = Int64Builder::with_capacity(n);
    match eet.filter(|e| e.len() == n) {
        Some(results) => {
            for r in results {
                end.append_value(r.eet);
                violated.append_option(r.violated);
                tardiness.append_option(r.tardiness);
            }
        }
        None => {
            end.append_nulls(n);
            violated.append_nulls(n);
            tardiness.append_nulls(n);
        }
    }
    [
        Arc::new(end.finish()),
        Arc::new(violated.finish()),
        Arc::new(tardiness.finish()),
    ]
}

pub(super) fn parquet_error(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Parquet {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
