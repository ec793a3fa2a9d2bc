//! An aggregate node: the experiment's result files, built only from its cells' metrics
//! entries —
//! `summary.parquet` (one row per cell: id, grid parameters, settings, run metrics),
//! `jobs.parquet` (per-job records with their `experiment` and `cell`), `timeseries.parquet` and
//! `reservations.parquet` — written into the node's own entry with the provenance (manifest
//! text and hash, traces, command, schedlab version, git commit) as key-value metadata.
//!
//! Cells stream through: a window of cells is read in parallel, appended to the files, and
//! dropped — summary rows included, a few dozen at a time — and the rows gathered for the next
//! row groups of all files together stay within one budget ([`BUFFER_BYTES`]), so memory does
//! not grow with the number of cells.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::ChunkReader;
use rayon::prelude::*;

use super::metrics_node::{CELL_SUMMARY_KEY, CellSummary, TABLES_FILE};
use crate::cache::bundle::Bundle;
use crate::cache::{EntryStore, EntryWriter};
use crate::manifest::{Cell, Manifest};
use crate::plan::NodeKey;
use crate::store::columns::{described, described_field};
use crate::store::{OutputFile, ParquetSink, Table, Value, reservations_schema};

/// Where the results come from, recorded in every result file's metadata.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// The git commit of the manifests (`-dirty` with uncommitted changes), if any.
    pub commit: Option<String>,
    /// The command that reproduces the results.
    pub command: String,
    /// JSON: each trace (as the manifest names it) → its blake3 and size.
    pub traces: String,
}

/// Key-value metadata of an experiment's result files (docs/outputs.md).
pub fn metadata(manifest: &Manifest, provenance: &Provenance) -> Vec<(String, String)> {
    vec![
        ("schedlab.experiment".into(), manifest.name.clone()),
        ("schedlab.manifest_hash".into(), manifest.hash.clone()),
        ("schedlab.manifest".into(), manifest.text.clone()),
        ("schedlab.traces".into(), provenance.traces.clone()),
        ("schedlab.command".into(), provenance.command.clone()),
        ("schedlab.version".into(), env!("CARGO_PKG_VERSION").into()),
        (
            "schedlab.commit".into(),
            provenance.commit.clone().unwrap_or_else(|| "none".into()),
        ),
        (
            "schedlab.model_version".into(),
            crate::plan::build::MODEL_VERSION.into(),
        ),
    ]
}

/// Summary rows built before they join their file's gathered rows as one batch. The file's
/// schema comes from the first such part; later parts must agree with it (`Table::arrays_as`).
const SUMMARY_ROWS: usize = 64;

/// Memory of the rows gathered for the next row groups of all result files together: when a
/// cell takes them above this, the files holding the most are written out, largest first, until
/// they are back within it. Each sink also writes at its own bounds (`ROW_GROUP_ROWS`,
/// `ROW_GROUP_BYTES`); with a dozen files, per-file bounds alone would let a run of many small
/// cells gather ~100 MB before the last file writes its first row group. Where row groups end
/// follows from the cells' rows alone, so the files are the same whatever the thread count.
pub const BUFFER_BYTES: usize = 16 << 20;

/// One cell's entry, read.
struct CellParts {
    summary: CellSummary,
    jobs: JobsPart,
    timeseries: Vec<RecordBatch>,
    reservations: Vec<RecordBatch>,
    schemas: [SchemaRef; 2],
    /// The [`EXTRA_FILES`] of the cell, in that order.
    extra: Vec<(SchemaRef, ExtraPart)>,
}

/// One of a cell's [`EXTRA_FILES`]: decoded with the rest of the cell when small, else decoded
/// a batch at a time while it is appended — a per-cluster time series of a machine of
/// thousands of clusters has tens of millions of rows (issue 37).
enum ExtraPart {
    Read(Vec<RecordBatch>),
    Streamed(PathBuf, bytes::Bytes),
}

/// The most rows of a member decoded whole with the rest of its cell (its encoded size says
/// little: a series of zeros compresses a thousandfold).
const EXTRA_READ_WHOLE_ROWS: i64 = 1 << 16;

/// A cell's `jobs.parquet`: decoded with the other files when small (cells are read in
/// parallel), else read batch by batch while it is appended, so that a cell of millions of
/// jobs never lies decoded in memory.
enum JobsPart {
    Read(Vec<RecordBatch>),
    Streamed(PathBuf),
}

/// The most rows of a cell's `jobs.parquet` decoded at once with the rest of the cell.
const JOBS_READ_WHOLE: i64 = 1 << 16;

/// Writes the four result files of `manifest` into `entry`, reading cell `i`'s results from
/// the entry of `cell_keys[i]`.
pub fn run(
    manifest: &Manifest,
    cell_keys: &[NodeKey],
    provenance: &Provenance,
    entries: &EntryStore,
    entry: &EntryWriter,
) -> Result<(), String> {
    let metadata = metadata(manifest, provenance);
    let mut out = Outputs {
        manifest,
        entry,
        metadata: &metadata,
        summary: None,
        pending: Table::default(),
        jobs: None,
        timeseries: None,
        reservations: ParquetSink::create(
            &entry.path("reservations.parquet"),
            with_leading_columns(OutputFile::Reservations, &reservations_schema()),
            &metadata,
        )
        .map_err(|e| e.to_string())?,
        extra: Default::default(),
    };
    let window = (rayon::current_num_threads() * 2).max(4);
    let cells: Vec<(&Cell, &NodeKey)> = manifest.cells.iter().zip(cell_keys).collect();
    for chunk in cells.chunks(window) {
        let parts: Vec<CellParts> = chunk
            .par_iter()
            .map(|(_, key)| read_cell(entries, key))
            .collect::<Result<_, _>>()?;
        for ((cell, _), part) in chunk.iter().zip(parts) {
            out.append(cell, part)?;
            out.keep_within_budget()?;
        }
    }
    out.finish()
}

/// Reads the entry of one cell: its summary and its three tables.
fn read_cell(entries: &EntryStore, key: &NodeKey) -> Result<CellParts, String> {
    let dir = entries.open(key.as_str()).map_err(|e| e.to_string())?;
    let jobs_path = dir.join("jobs.parquet");
    // One open and footer for the schema, row count and summary, and the rows when few.
    let (builder, kv) = open_parquet(&jobs_path, open(&jobs_path)?)?;
    let jobs_schema = builder.schema().clone();
    let jobs = if builder.metadata().file_metadata().num_rows() <= JOBS_READ_WHOLE {
        JobsPart::Read(collect_batches(&jobs_path, builder)?)
    } else {
        JobsPart::Streamed(jobs_path)
    };
    let text = kv
        .into_iter()
        .find(|(k, _)| k == CELL_SUMMARY_KEY)
        .map(|(_, v)| v)
        .ok_or_else(|| format!("{}: no cell summary in jobs.parquet", dir.display()))?;
    let summary: CellSummary = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    // The other tables are members of one file (metrics_node::TABLES_FILE).
    let tables_path = dir.join(TABLES_FILE);
    let tables = Bundle::read(&tables_path)?;
    let member = |name: &str| {
        let bytes = tables
            .get(name)
            .ok_or_else(|| format!("{}: no {name}", tables_path.display()))?;
        read_batches(&tables_path.join(name), bytes)
    };
    let (ts_schema, timeseries, _) = member("timeseries.parquet")?;
    let extra = EXTRA_FILES
        .iter()
        .map(|(name, _)| {
            let bytes = tables
                .get(name)
                .ok_or_else(|| format!("{}: no {name}", tables_path.display()))?;
            let path = tables_path.join(name);
            let (builder, _) = open_parquet(&path, bytes.clone())?;
            let schema = builder.schema().clone();
            if builder.metadata().file_metadata().num_rows() <= EXTRA_READ_WHOLE_ROWS {
                let batches = collect_batches(&path, builder)?;
                return Ok((schema, ExtraPart::Read(batches)));
            }
            Ok((schema, ExtraPart::Streamed(path, bytes)))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let reservations = match tables.get("reservations.parquet") {
        Some(_) => member("reservations.parquet")?.1,
        None => Vec::new(),
    };
    Ok(CellParts {
        summary,
        jobs,
        timeseries,
        reservations,
        schemas: [jobs_schema, ts_schema],
        extra,
    })
}

/// Result files every cell entry holds besides jobs, timeseries and reservations (written by
/// simulate_node), each concatenated with its cells' rows like the others.
const EXTRA_FILES: [(&str, OutputFile); 8] = [
    ("users.parquet", OutputFile::Users),
    ("user_timeseries.parquet", OutputFile::UserTimeseries),
    ("clusters.parquet", OutputFile::Clusters),
    ("cluster_timeseries.parquet", OutputFile::ClusterTimeseries),
    ("queues.parquet", OutputFile::Queues),
    ("job_penalties.parquet", OutputFile::JobPenalties),
    ("eet_heatmap.parquet", OutputFile::EetHeatmap),
    ("eet_usage.parquet", OutputFile::EetUsage),
];

/// The result files being written.
struct Outputs<'a> {
    manifest: &'a Manifest,
    entry: &'a EntryWriter,
    metadata: &'a [(String, String)],
    /// Created with the first rows (the schema follows from them).
    summary: Option<ParquetSink>,
    pending: Table,
    jobs: Option<ParquetSink>,
    timeseries: Option<ParquetSink>,
    reservations: ParquetSink,
    /// The [`EXTRA_FILES`], created with the first cell (its schemas).
    extra: [Option<ParquetSink>; EXTRA_FILES.len()],
}

impl Outputs<'_> {
    fn append(&mut self, cell: &Cell, part: CellParts) -> Result<(), String> {
        summary_row(&mut self.pending, self.manifest, cell, &part.summary);
        if self.pending.len() >= SUMMARY_ROWS {
            self.flush_summary()?;
        }
        let name = &self.manifest.name;
        let [jobs_schema, ts_schema] = &part.schemas;
        let jobs = sink_for(&mut self.jobs, || {
            ParquetSink::create(
                &self.entry.path("jobs.parquet"),
                with_leading_columns(OutputFile::Jobs, jobs_schema),
                self.metadata,
            )
        })?;
        match part.jobs {
            JobsPart::Read(batches) => push_with_cell(jobs, name, &cell.id, batches)?,
            JobsPart::Streamed(path) => for_batches(&path, |batch| {
                push_with_cell(jobs, name, &cell.id, vec![batch])
            })?,
        }
        let timeseries = sink_for(&mut self.timeseries, || {
            ParquetSink::create(
                &self.entry.path("timeseries.parquet"),
                with_leading_columns(OutputFile::Timeseries, ts_schema),
                self.metadata,
            )
        })?;
        push_with_cell(timeseries, name, &cell.id, part.timeseries)?;
        push_with_cell(&mut self.reservations, name, &cell.id, part.reservations)?;
        for ((slot, (file, kind)), (schema, batches)) in
            self.extra.iter_mut().zip(EXTRA_FILES).zip(part.extra)
        {
            let sink = sink_for(slot, || {
                ParquetSink::create(
                    &self.entry.path(file),
                    with_leading_columns(kind, &schema),
                    self.metadata,
                )
            })?;
            match batches {
                ExtraPart::Read(batches) => push_with_cell(sink, name, &cell.id, batches)?,
                ExtraPart::Streamed(path, bytes) => {
                    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
                    let (builder, _) = open_parquet(&path, bytes)?;
                    for batch in builder.build().map_err(|e| err(&e))? {
                        push_with_cell(sink, name, &cell.id, vec![batch.map_err(|e| err(&e))?])?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes row groups of the files gathering the most until all gather at most
    /// [`BUFFER_BYTES`] together (ties: the first file in [`Outputs::sinks`] order).
    fn keep_within_budget(&mut self) -> Result<(), String> {
        loop {
            let mut sinks = self.sinks();
            let total: usize = sinks.iter().map(|s| s.pending_bytes()).sum();
            if total <= BUFFER_BYTES {
                return Ok(());
            }
            let mut largest = 0;
            for (i, sink) in sinks.iter().enumerate() {
                if sink.pending_bytes() > sinks[largest].pending_bytes() {
                    largest = i;
                }
            }
            sinks[largest]
                .write_row_group()
                .map_err(|e| e.to_string())?;
        }
    }

    /// The files created so far, in a fixed order.
    fn sinks(&mut self) -> Vec<&mut ParquetSink> {
        [
            self.summary.as_mut(),
            self.jobs.as_mut(),
            self.timeseries.as_mut(),
            Some(&mut self.reservations),
        ]
        .into_iter()
        .chain(self.extra.iter_mut().map(Option::as_mut))
        .flatten()
        .collect()
    }

    fn flush_summary(&mut self) -> Result<(), String> {
        let table = std::mem::take(&mut self.pending);
        if table.is_empty() {
            return Ok(());
        }
        let path = self.entry.path("summary.parquet");
        match &mut self.summary {
            None => {
                let (schema, arrays) = table.to_arrays(OutputFile::Summary);
                let mut sink =
                    ParquetSink::create(&path, schema, self.metadata).map_err(|e| e.to_string())?;
                sink.push_columns(arrays).map_err(|e| e.to_string())?;
                self.summary = Some(sink);
            }
            Some(sink) => {
                let arrays = table.arrays_as(sink.schema()).map_err(|e| {
                    format!(
                        "{}: summary rows of later cells differ from the first's: {e}",
                        path.display()
                    )
                })?;
                sink.push_columns(arrays).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<(), String> {
        self.flush_summary()?;
        for sink in [
            self.summary,
            self.jobs,
            self.timeseries,
            Some(self.reservations),
        ]
        .into_iter()
        .chain(self.extra)
        .flatten()
        {
            sink.finish().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

fn sink_for(
    slot: &mut Option<ParquetSink>,
    create: impl FnOnce() -> Result<ParquetSink, crate::store::StoreError>,
) -> Result<&mut ParquetSink, String> {
    if slot.is_none() {
        *slot = Some(create().map_err(|e| e.to_string())?);
    }
    Ok(slot.as_mut().expect("just created"))
}

/// `schema` led by the `experiment` and `cell` columns, every field described.
fn with_leading_columns(file: OutputFile, schema: &Schema) -> SchemaRef {
    let mut fields = vec![
        described_field(file, &Field::new("experiment", DataType::Utf8, false)),
        described_field(file, &Field::new("cell", DataType::Utf8, false)),
    ];
    fields.extend(schema.fields().iter().map(|f| described_field(file, f)));
    described(file, &Schema::new(fields))
}

/// Appends `batches` of a cell to `sink`, led by its experiment and cell columns.
fn push_with_cell(
    sink: &mut ParquetSink,
    experiment: &str,
    cell: &str,
    batches: Vec<RecordBatch>,
) -> Result<(), String> {
    let width = sink.schema().fields().len();
    for batch in batches {
        let rows = batch.num_rows();
        if batch.num_columns() + 2 != width {
            return Err(format!(
                "cell {cell}: {} columns where {} were expected",
                batch.num_columns(),
                width - 2
            ));
        }
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![experiment; rows])),
            Arc::new(StringArray::from(vec![cell; rows])),
        ];
        columns.extend(batch.columns().iter().cloned());
        sink.push_columns(columns).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Adds the summary row of `cell` to `summary`.
fn summary_row(summary: &mut Table, manifest: &Manifest, cell: &Cell, s: &CellSummary) {
    summary
        .row()
        .set("experiment", Value::Str(manifest.name.clone()))
        .set("cell", Value::Str(cell.id.clone()));
    // Name axes as their names; parameter axes appear as the typed setting columns below.
    summary
        .set("workload", Value::Str(cell.workload.name.clone()))
        .set("cluster", Value::Str(cell.cluster.name.clone()))
        .set("scheduler", Value::Str(cell.scheduler.name.clone()))
        .set(
            "reservations",
            Value::Str(
                cell.reservations
                    .as_ref()
                    .map_or("none".to_string(), |r| r.name.clone()),
            ),
        )
        .set(
            "queues",
            Value::Str(
                cell.queues
                    .as_ref()
                    .map_or("none", |q| q.name.as_str())
                    .to_string(),
            ),
        )
        .set("seed", Value::Int(cell.seed as i64))
        .set("policy", Value::Str(s.policy.clone()))
        .set("procs", Value::Int(s.procs as i64))
        .set(
            "node_size",
            s.node_size
                .map_or(Value::NullInt, |k| Value::Int(i64::from(k))),
        )
        .set("interval", s.interval.map_or(Value::NullInt, Value::Int))
        .set("overrun", Value::Str(s.overrun.clone()))
        .set(
            "placement",
            s.topology
                .as_ref()
                .map_or(Value::NullStr, |t| Value::Str(t.placement.clone())),
        )
        .set(
            "ignore_memory",
            s.topology
                .as_ref()
                .map_or(Value::NullBool, |t| Value::Bool(t.ignore_memory)),
        )
        .set(
            "scale_runtime",
            s.topology
                .as_ref()
                .map_or(Value::NullBool, |t| Value::Bool(t.scale_runtime)),
        )
        .set(
            "memory_reading",
            Value::Str(s.reading.memory.name().to_string()),
        )
        .set(
            "used_memory_fallback",
            Value::Bool(s.reading.used_memory_fallback),
        )
        .set(
            "extended_fields",
            Value::Str(s.reading.extended.name().to_string()),
        )
        .set("nodes", Value::Int(s.capacity.nodes as i64))
        .set("cores", Value::Int(s.capacity.cores as i64))
        .set("memory_kb", Value::Int(s.capacity.memory_kb as i64))
        .set("gpus", Value::Int(s.capacity.gpus as i64))
        .set(
            "first_jobs",
            cell.workload
                .transforms
                .first_jobs
                .map_or(Value::NullInt, |n| Value::Int(n as i64)),
        )
        .set(
            "load_scale",
            cell.workload
                .transforms
                .load_scale
                .map_or(Value::Null, Value::Float),
        )
        .set(
            "reservation_rate",
            cell.reservations
                .as_ref()
                .and_then(|r| r.generator.as_ref())
                .map_or(Value::Null, |g| Value::Float(g.per_week)),
        )
        .set(
            "throttle_node_hours",
            cell.reservations
                .as_ref()
                .and_then(|r| r.throttle.max_node_seconds)
                .map_or(Value::Null, |s| Value::Float(s as f64 / 3600.0)),
        )
        .set(
            "p_login",
            synthetic_first_user(cell, |u| u.login_model().p_login()),
        )
        .set("mu", synthetic_first_user(cell, |u| u.mu))
        .set(
            "model_interarrival_cv",
            synthetic_first_user(cell, |u| u.login_model().interarrival_cv2().sqrt()),
        )
        .set(
            "interarrival_cv",
            s.interarrival_cv.map_or(Value::Null, Value::Float),
        )
        .set("trace_jobs", Value::Int(s.trace_jobs as i64))
        .set(
            "trace_jobs_skipped",
            Value::Int(s.trace_jobs_skipped as i64),
        )
        .set(
            "trace_malformed_lines",
            Value::Int(s.trace_malformed_lines as i64),
        );
    summary
        .set("order", Value::Str(s.order.clone()))
        .set("penalty", Value::Str(s.penalty.clone()))
        .set("charging", Value::Str(s.charging.clone()));
    summary.set_fields(&s.summary);
    summary.set_fields(&s.fairness);
    super::eet_outputs::summary_columns(summary, &s.eet);
    let opt = |v: Option<f64>| v.map_or(Value::Null, Value::Float);
    for (k, resource) in super::metrics_node::RESOURCES.iter().enumerate() {
        summary.set(
            &format!("utilization_{resource}"),
            opt(s.utilization_by_resource[k]),
        );
    }
    for (reason, n) in &s.skipped_by_reason {
        summary.set(&format!("skipped_{reason}"), Value::Int(*n as i64));
    }
    // Per size class: `<class>_<metric>` columns, in the manifest's class order.
    for c in &s.size_classes {
        let name = &c.name;
        summary
            .set(&format!("{name}_jobs"), Value::Int(c.jobs as i64))
            .set(&format!("{name}_wait_mean"), opt(c.wait_mean))
            .set(
                &format!("{name}_expansion_factor_weighted"),
                opt(c.expansion_factor_weighted),
            )
            .set(
                &format!("{name}_bounded_slowdown_mean"),
                opt(c.bounded_slowdown_mean),
            )
            .set(&format!("{name}_queue_mean"), opt(c.queue_mean));
    }
}

/// A value of the first user model of a synthetic workload (the one the `p_login` and `mu`
/// axes set for every user); null for trace workloads.
fn synthetic_first_user(
    cell: &crate::manifest::Cell,
    f: impl Fn(&crate::manifest::synthetic::UserSpec) -> f64,
) -> Value {
    match &cell.workload.source {
        crate::manifest::WorkloadSource::Synthetic(spec) => spec
            .users
            .first()
            .map_or(Value::Null, |u| Value::Float(f(u))),
        crate::manifest::WorkloadSource::Trace(_) => Value::Null,
    }
}

/// A Parquet file's key-value metadata.
type KeyValues = Vec<(String, String)>;

/// The schema, record batches and key-value metadata of a Parquet file.
/// All the record batches of the Parquet file in `data` (read from `path`, as errors say).
fn read_batches(
    path: &Path,
    data: impl ChunkReader + 'static,
) -> Result<(SchemaRef, Vec<RecordBatch>, KeyValues), String> {
    let (builder, kv) = open_parquet(path, data)?;
    let schema = builder.schema().clone();
    Ok((schema, collect_batches(path, builder)?, kv))
}

/// Every record batch of an opened Parquet file (`path` for errors).
fn collect_batches<R: ChunkReader + 'static>(
    path: &Path,
    builder: ParquetRecordBatchReaderBuilder<R>,
) -> Result<Vec<RecordBatch>, String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let reader = builder.build().map_err(|e| err(&e))?;
    reader.collect::<Result<Vec<_>, _>>().map_err(|e| err(&e))
}

/// Hands the record batches of a Parquet file to `f` one at a time.
fn for_batches(
    path: &Path,
    mut f: impl FnMut(RecordBatch) -> Result<(), String>,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let (builder, _) = open_parquet(path, open(path)?)?;
    for batch in builder.build().map_err(|e| err(&e))? {
        f(batch.map_err(|e| err(&e))?)?;
    }
    Ok(())
}

/// A reader of a Parquet file and its key-value metadata.
fn open(path: &Path) -> Result<File, String> {
    File::open(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn open_parquet<R: ChunkReader + 'static>(
    path: &Path,
    data: R,
) -> Result<(ParquetRecordBatchReaderBuilder<R>, KeyValues), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let builder = ParquetRecordBatchReaderBuilder::try_new(data).map_err(|e| err(&e))?;
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|k| (k.key.clone(), k.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    Ok((builder, kv))
}
