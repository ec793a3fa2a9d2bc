//! A simulate node's cache entry: the simulated schedule, from which the metrics node computes
//! every metric without simulating again (docs/cache.md).
//!
//! - `schedule.parquet`: one row per simulated job, in submission order ([`ScheduledJob`]), with
//!   the facts of the run as key-value metadata ([`FACTS_KEY`]);
//! - `instants.parquet`: the state after each processed instant, folded into runs
//!   ([`InstantRun`]).
//!
//! Both are written as the simulation produces them ([`ScheduleWriter`] is the engine's
//! [`ScheduleSink`]) and read back batch by batch ([`read_jobs`], [`read_instants`]): memory stays
//! bounded by a row group whatever the number of jobs or instants.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Int32Builder, Int64Builder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use super::{ParquetSink, StoreError};
use crate::sim::engine::JobOutcome;
use crate::sim::schedule::{Instant, InstantRun, RunLength, ScheduleSink, ScheduledJob};
use crate::sim::{ResourceVec, Time, Workload};

/// The key-value metadata key of `schedule.parquet` holding the run's facts (JSON).
pub const FACTS_KEY: &str = "schedlab.schedule_facts";

/// Rows gathered before they are handed to the Parquet sink.
const BATCH_ROWS: usize = 8192;

fn jobs_schema() -> SchemaRef {
    let column = |name: &str, ty: DataType| Field::new(name, ty, false);
    Arc::new(Schema::new(vec![
        column("job_id", DataType::Int64),
        column("index", DataType::Int64),
        column("user", DataType::Int32),
        column("group", DataType::Int32),
        column("queue", DataType::Int32),
        column("submit", DataType::Int64),
        column("requested_time", DataType::Int64),
        column("procs", DataType::Int64),
        column("start", DataType::Int64),
        column("end", DataType::Int64),
        column("units", DataType::Int64),
        column("cluster", DataType::Int64),
        column("class", DataType::Int64),
        column("nodes", DataType::Int64),
        column("held_cores", DataType::Int64),
        column("held_memory_kb", DataType::Int64),
        column("held_gpus", DataType::Int64),
        column("requested_memory_kb", DataType::Int64),
        column("backfilled", DataType::Boolean),
        column("killed", DataType::Boolean),
    ]))
}

fn instants_schema() -> SchemaRef {
    let mut fields: Vec<Field> = ["time", "period", "count", "queue_len", "busy", "reserved"]
        .iter()
        .map(|n| Field::new(*n, DataType::Int64, false))
        .collect();
    fields.push(Field::new("call", DataType::Int64, true));
    fields.push(Field::new("extra_calls", DataType::Int64, false));
    fields.push(Field::new("extra_call_queue", DataType::Int64, false));
    Arc::new(Schema::new(fields))
}

/// Writes a simulation's schedule into `schedule.parquet` and `instants.parquet` as the engine
/// produces it. I/O errors are kept (the first one) and reported by [`ScheduleWriter::finish`].
pub struct ScheduleWriter<'w> {
    workload: &'w Workload,
    jobs: ParquetSink,
    instants: ParquetSink,
    job_rows: Vec<ScheduledJob>,
    runs: Vec<InstantRun>,
    folding: RunLength,
    span: Option<(Time, Time)>,
    error: Option<StoreError>,
}

impl<'w> ScheduleWriter<'w> {
    /// Starts the two files (`schedule.parquet`, `instants.parquet` of an entry); `workload` is
    /// the simulated one.
    pub fn create(
        schedule: &Path,
        instants: &Path,
        workload: &'w Workload,
    ) -> Result<Self, StoreError> {
        Ok(ScheduleWriter {
            workload,
            jobs: ParquetSink::create(schedule, jobs_schema(), &[])?,
            instants: ParquetSink::create(instants, instants_schema(), &[])?,
            job_rows: Vec::with_capacity(BATCH_ROWS),
            runs: Vec::new(),
            folding: RunLength::default(),
            span: None,
            error: None,
        })
    }

    /// The first and last instants so far.
    pub fn span(&self) -> Option<(Time, Time)> {
        self.span
    }

    fn keep(&mut self, result: Result<(), StoreError>) {
        if let Err(e) = result
            && self.error.is_none()
        {
            self.error = Some(e);
        }
    }

    fn flush_jobs(&mut self) {
        if self.job_rows.is_empty() || self.error.is_some() {
            self.job_rows.clear();
            return;
        }
        let rows = std::mem::take(&mut self.job_rows);
        let result = self.jobs.push_columns(job_columns(&rows));
        self.job_rows = rows;
        self.job_rows.clear();
        self.keep(result);
    }

    fn flush_runs(&mut self) {
        if self.runs.is_empty() || self.error.is_some() {
            self.runs.clear();
            return;
        }
        let result = self.instants.push_columns(instant_columns(&self.runs));
        self.runs.clear();
        self.keep(result);
    }

    /// Flushes and closes both files, with `facts` (JSON) as `schedule.parquet`'s metadata.
    pub fn finish(mut self, facts: &str) -> Result<(), StoreError> {
        self.flush_jobs();
        if let Some(run) = self.folding.finish() {
            self.runs.push(run);
        }
        self.flush_runs();
        if let Some(e) = self.error {
            return Err(e);
        }
        self.jobs.append_metadata(FACTS_KEY, facts);
        self.jobs.finish()?;
        self.instants.finish()
    }
}

impl ScheduleSink for ScheduleWriter<'_> {
    fn job(&mut self, outcome: &JobOutcome) {
        self.job_rows.push(ScheduledJob::of(self.workload, outcome));
        if self.job_rows.len() >= BATCH_ROWS {
            self.flush_jobs();
        }
    }

    fn instant(&mut self, instant: &Instant) {
        let first = self.span.map_or(instant.time, |(first, _)| first);
        self.span = Some((first, instant.time));
        if let Some(run) = self.folding.push(instant) {
            self.runs.push(run);
            if self.runs.len() >= BATCH_ROWS {
                self.flush_runs();
            }
        }
    }

    fn instants(&mut self, first: &Instant, period: Time, count: u64) {
        if count == 0 {
            return;
        }
        let last = first.time + (count as Time - 1) * period;
        let start = self.span.map_or(first.time, |(start, _)| start);
        self.span = Some((start, last));
        self.folding.push_many(first, period, count, &mut self.runs);
        if self.runs.len() >= BATCH_ROWS {
            self.flush_runs();
        }
    }
}

fn job_columns(rows: &[ScheduledJob]) -> Vec<ArrayRef> {
    let n = rows.len();
    let i64s = |f: fn(&ScheduledJob) -> i64| -> ArrayRef {
        let mut b = Int64Builder::with_capacity(n);
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let i32s = |f: fn(&ScheduledJob) -> i32| -> ArrayRef {
        let mut b = Int32Builder::with_capacity(n);
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let bools = |f: fn(&ScheduledJob) -> bool| -> ArrayRef {
        let mut b = BooleanBuilder::with_capacity(n);
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    vec![
        i64s(|r| r.job_id as i64),
        i64s(|r| i64::from(r.index)),
        i32s(|r| r.user),
        i32s(|r| r.group),
        i32s(|r| r.queue),
        i64s(|r| r.submit),
        i64s(|r| r.requested_time),
        i64s(|r| i64::from(r.procs)),
        i64s(|r| r.start),
        i64s(|r| r.end),
        i64s(|r| r.units as i64),
        i64s(|r| i64::from(r.cluster)),
        i64s(|r| i64::from(r.class)),
        i64s(|r| i64::from(r.nodes)),
        i64s(|r| r.held.0[0] as i64),
        i64s(|r| r.held.0[1] as i64),
        i64s(|r| r.held.0[2] as i64),
        i64s(|r| r.requested_memory_kb as i64),
        bools(|r| r.backfilled),
        bools(|r| r.killed),
    ]
}

fn instant_columns(runs: &[InstantRun]) -> Vec<ArrayRef> {
    let n = runs.len();
    let i64s = |f: fn(&InstantRun) -> i64| -> ArrayRef {
        let mut b = Int64Builder::with_capacity(n);
        runs.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let mut call = Int64Builder::with_capacity(n);
    runs.iter()
        .for_each(|r| call.append_option(r.call.map(i64::from)));
    vec![
        i64s(|r| r.time),
        i64s(|r| r.period),
        i64s(|r| r.count as i64),
        i64s(|r| i64::from(r.queue_len)),
        i64s(|r| r.busy as i64),
        i64s(|r| r.reserved as i64),
        Arc::new(call.finish()),
        i64s(|r| i64::from(r.extra_calls)),
        i64s(|r| r.extra_call_queue as i64),
    ]
}

fn read_error(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Parquet {
        path: path.to_path_buf(),
        message: format!("reading: {e}"),
    }
}

/// Opens `path` for batches of `BATCH_ROWS`, checking its columns against `expected`.
fn open_batches(path: &Path, expected: &SchemaRef) -> Result<ParquetRecordBatchReader, StoreError> {
    let file = File::open(path).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| read_error(path, e))?
        .with_batch_size(BATCH_ROWS);
    let names: Vec<&String> = builder.schema().fields().iter().map(|f| f.name()).collect();
    let wanted: Vec<&String> = expected.fields().iter().map(|f| f.name()).collect();
    if names != wanted {
        return Err(read_error(
            path,
            "not a schedule file of this schedlab version",
        ));
    }
    builder.build().map_err(|e| read_error(path, e))
}

/// The facts recorded in `dir/schedule.parquet` (JSON).
pub fn read_facts(dir: &Path) -> Result<String, StoreError> {
    let path = dir.join("schedule.parquet");
    let file = File::open(&path).map_err(|source| StoreError::Io {
        path: path.clone(),
        source,
    })?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| read_error(&path, e))?;
    builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == FACTS_KEY))
        .and_then(|k| k.value.clone())
        .ok_or_else(|| read_error(&path, "no schedule facts"))
}

/// Calls `f` with each batch of scheduled jobs of `dir/schedule.parquet`, in submission order.
pub fn read_jobs(
    dir: &Path,
    mut f: impl FnMut(&[ScheduledJob]) -> Result<(), String>,
) -> Result<(), String> {
    let path: PathBuf = dir.join("schedule.parquet");
    let batches = open_batches(&path, &jobs_schema()).map_err(|e| e.to_string())?;
    let mut rows = Vec::with_capacity(BATCH_ROWS);
    for batch in batches {
        let batch = batch.map_err(|e| read_error(&path, e).to_string())?;
        let i64s = |c: usize| batch.column(c).as_primitive::<Int64Type>();
        let i32s = |c: usize| batch.column(c).as_primitive::<Int32Type>();
        let bools = |c: usize| batch.column(c).as_boolean();
        let (job_id, index, user, group, queue) = (i64s(0), i64s(1), i32s(2), i32s(3), i32s(4));
        let (submit, requested, procs, start, end, units) =
            (i64s(5), i64s(6), i64s(7), i64s(8), i64s(9), i64s(10));
        let (cluster, class, nodes) = (i64s(11), i64s(12), i64s(13));
        let (cores, memory, gpus, requested_memory) = (i64s(14), i64s(15), i64s(16), i64s(17));
        let (backfilled, killed) = (bools(18), bools(19));
        rows.clear();
        for i in 0..batch.num_rows() {
            rows.push(ScheduledJob {
                job_id: job_id.value(i) as u64,
                index: index.value(i) as u32,
                user: user.value(i),
                group: group.value(i),
                queue: queue.value(i),
                submit: submit.value(i),
                requested_time: requested.value(i),
                procs: procs.value(i) as u32,
                start: start.value(i),
                end: end.value(i),
                units: units.value(i) as u64,
                cluster: cluster.value(i) as u32,
                class: class.value(i) as u32,
                nodes: nodes.value(i) as u32,
                held: ResourceVec([
                    cores.value(i) as u64,
                    memory.value(i) as u64,
                    gpus.value(i) as u64,
                ]),
                requested_memory_kb: requested_memory.value(i) as u64,
                backfilled: backfilled.value(i),
                killed: killed.value(i),
            });
        }
        f(&rows)?;
    }
    Ok(())
}

/// Calls `f` with each instant run of `dir/instants.parquet`, in time order.
pub fn read_instants(dir: &Path, mut f: impl FnMut(&InstantRun)) -> Result<(), String> {
    let path: PathBuf = dir.join("instants.parquet");
    let batches = open_batches(&path, &instants_schema()).map_err(|e| e.to_string())?;
    for batch in batches {
        let batch = batch.map_err(|e| read_error(&path, e).to_string())?;
        let i64s = |c: usize| batch.column(c).as_primitive::<Int64Type>();
        let (time, period, count, queue, busy, reserved, call) = (
            i64s(0),
            i64s(1),
            i64s(2),
            i64s(3),
            i64s(4),
            i64s(5),
            i64s(6),
        );
        let (extra_calls, extra_call_queue) = (i64s(7), i64s(8));
        for i in 0..batch.num_rows() {
            f(&InstantRun {
                time: time.value(i),
                period: period.value(i),
                count: count.value(i) as u64,
                queue_len: queue.value(i) as u32,
                busy: busy.value(i) as u64,
                reserved: reserved.value(i) as u64,
                call: (!call.is_null(i)).then(|| call.value(i) as u32),
                extra_calls: extra_calls.value(i) as u32,
                extra_call_queue: extra_call_queue.value(i) as u64,
            });
        }
    }
    Ok(())
}
