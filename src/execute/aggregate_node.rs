//! An aggregate node: the experiment's result files, built only from its cells' cache entries —
//! `summary.parquet` (one row per cell: id, grid parameters, settings, run metrics),
//! `jobs.parquet` (per-job records with their `cell`) and `timeseries.parquet` — written into
//! the node's own entry with the manifest hash, schedlab version and git commit as metadata.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::simulate_node::CellSummary;
use crate::cache::{EntryStore, EntryWriter};
use crate::manifest::Manifest;
use crate::plan::NodeKey;
use crate::store::{AtomicFile, Table, Value, writer_properties};

/// Writes the three result files of `manifest` into `entry`, reading cell `i`'s results from
/// the entry of `cell_keys[i]`.
pub fn run(
    manifest: &Manifest,
    cell_keys: &[NodeKey],
    metadata: &[(String, String)],
    entries: &EntryStore,
    entry: &EntryWriter,
) -> Result<(), String> {
    let dirs: Vec<_> = cell_keys
        .iter()
        .map(|k| entries.open(k.as_str()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;

    let mut summary = Table::default();
    for (cell, dir) in manifest.cells.iter().zip(&dirs) {
        let text = std::fs::read_to_string(dir.join("summary.json")).map_err(|e| e.to_string())?;
        let s: CellSummary = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        summary.row().set("cell", Value::Str(cell.id.clone()));
        // Name axes as their names; parameter axes appear as the typed setting columns below.
        summary
            .set("workload", Value::Str(cell.workload.name.clone()))
            .set("cluster", Value::Str(cell.cluster.name.clone()))
            .set("scheduler", Value::Str(cell.scheduler.name.clone()))
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
            .set("trace_jobs", Value::Int(s.trace_jobs as i64))
            .set(
                "trace_jobs_skipped",
                Value::Int(s.trace_jobs_skipped as i64),
            )
            .set(
                "trace_malformed_lines",
                Value::Int(s.trace_malformed_lines as i64),
            );
        summary.set_fields(&s.summary);
    }
    summary
        .write(&entry.path("summary.parquet"), metadata)
        .map_err(|e| e.to_string())?;

    concat_with_cell(
        manifest,
        &dirs,
        "jobs.parquet",
        &entry.path("jobs.parquet"),
        metadata,
    )?;

    let mut series = Table::default();
    for (cell, dir) in manifest.cells.iter().zip(&dirs) {
        for batch in read_batches(&dir.join("timeseries.parquet"))? {
            let col = |name: &str| batch.column_by_name(name).cloned();
            let (Some(t), Some(u), Some(qm), Some(qx)) = (
                col("time"),
                col("utilization"),
                col("queue_mean"),
                col("queue_max"),
            ) else {
                continue;
            };
            let t = t
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or("timeseries: bad time column")?;
            let u = u
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or("timeseries: bad utilization column")?;
            let qm = qm
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or("timeseries: bad queue_mean column")?;
            let qx = qx
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or("timeseries: bad queue_max column")?;
            for i in 0..batch.num_rows() {
                series
                    .row()
                    .set("cell", Value::Str(cell.id.clone()))
                    .set("time", Value::Int(t.value(i)))
                    .set("utilization", Value::Float(u.value(i)))
                    .set("queue_mean", Value::Float(qm.value(i)))
                    .set("queue_max", Value::Int(qx.value(i)));
            }
        }
    }
    series
        .write(&entry.path("timeseries.parquet"), metadata)
        .map_err(|e| e.to_string())
}

fn read_batches(path: &Path) -> Result<Vec<RecordBatch>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Concatenates each cell's `name` file, led by a `cell` column, into `out`.
fn concat_with_cell(
    manifest: &Manifest,
    dirs: &[std::path::PathBuf],
    name: &str,
    out: &Path,
    metadata: &[(String, String)],
) -> Result<(), String> {
    let file = AtomicFile::create(out).map_err(|e| e.to_string())?;
    let mut writer: Option<(ArrowWriter<File>, Arc<Schema>)> = None;
    for (cell, dir) in manifest.cells.iter().zip(dirs) {
        for batch in read_batches(&dir.join(name))? {
            if writer.is_none() {
                let mut fields = vec![Arc::new(Field::new("cell", DataType::Utf8, false))];
                fields.extend(batch.schema().fields().iter().cloned());
                let schema = Arc::new(Schema::new(fields));
                let w = ArrowWriter::try_new(
                    file.file().map_err(|e| e.to_string())?,
                    schema.clone(),
                    Some(writer_properties(metadata)),
                )
                .map_err(|e| e.to_string())?;
                writer = Some((w, schema));
            }
            let (w, schema) = writer.as_mut().expect("writer exists");
            let ids: ArrayRef =
                Arc::new(StringArray::from(vec![cell.id.as_str(); batch.num_rows()]));
            let mut columns = vec![ids];
            columns.extend(batch.columns().iter().cloned());
            let combined =
                RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())?;
            w.write(&combined).map_err(|e| e.to_string())?;
        }
    }
    match writer {
        Some((mut w, _)) => {
            w.finish().map_err(|e| e.to_string())?;
        }
        None => {
            // No cell simulated any job: an empty file with the documented columns.
            let records: Vec<crate::sim::metrics::JobRecord> = Vec::new();
            drop(file);
            let mut w =
                crate::store::JobsWriter::create(out, metadata, true).map_err(|e| e.to_string())?;
            w.write("", &records).map_err(|e| e.to_string())?;
            return w.finish().map_err(|e| e.to_string());
        }
    }
    file.commit().map_err(|e| e.to_string())
}
