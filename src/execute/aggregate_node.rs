//! An aggregate node: the experiment's result files, built only from its cells' cache entries —
//! `summary.parquet` (one row per cell: id, grid parameters, settings, run metrics),
//! `jobs.parquet` (per-job records with their `cell`) and `timeseries.parquet` — written into
//! the node's own entry with the manifest hash, schedlab version and git commit as metadata.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::arrow_writer::compute_leaves;
use rayon::prelude::*;

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
        summary.set_fields(&s.summary);
        let opt = |v: Option<f64>| v.map_or(Value::Null, Value::Float);
        for (k, resource) in super::simulate_node::RESOURCES.iter().enumerate() {
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

    concat_with_cell(
        manifest,
        &dirs,
        "timeseries.parquet",
        &entry.path("timeseries.parquet"),
        metadata,
    )?;

    concat_with_cell(
        manifest,
        &dirs,
        "reservations.parquet",
        &entry.path("reservations.parquet"),
        metadata,
    )?;

    for name in [
        "clusters.parquet",
        "cluster_timeseries.parquet",
        "queues.parquet",
    ] {
        concat_with_cell(manifest, &dirs, name, &entry.path(name), metadata)?;
    }
    Ok(())
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

/// The schema and record batches of a Parquet file.
fn read_batches(path: &Path) -> Result<(SchemaRef, Vec<RecordBatch>), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = File::open(path).map_err(|e| err(&e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| err(&e))?;
    let schema = builder.schema().clone();
    let reader = builder.build().map_err(|e| err(&e))?;
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(|e| err(&e))?;
    Ok((schema, batches))
}

/// Concatenates each cell's `name` file, led by a `cell` column, into `out`: one row group per
/// cell, its columns encoded in parallel (this file is the bulk of an experiment's results, and
/// writing it is the only serial step after the simulations).
fn concat_with_cell(
    manifest: &Manifest,
    dirs: &[std::path::PathBuf],
    name: &str,
    out: &Path,
    metadata: &[(String, String)],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", out.display());
    // Decode every cell's file in parallel, then write them in cell order.
    let cells: Vec<(SchemaRef, Vec<RecordBatch>)> = dirs
        .par_iter()
        .map(|dir| read_batches(&dir.join(name)))
        .collect::<Result<_, _>>()?;
    let Some((cell_schema, _)) = cells.first() else {
        return Err(format!("{}: an experiment without cells", out.display()));
    };
    let width = cell_schema.fields().len();
    let mut fields = vec![Arc::new(Field::new("cell", DataType::Utf8, false))];
    fields.extend(cell_schema.fields().iter().cloned());
    let schema = Arc::new(Schema::new(fields));
    let file = AtomicFile::create(out).map_err(|e| e.to_string())?;
    let writer = ArrowWriter::try_new(
        file.file().map_err(|e| e.to_string())?,
        schema.clone(),
        Some(writer_properties(metadata)),
    )
    .map_err(|e| err(&e))?;
    let (mut writer, factory) = writer.into_serialized_writer().map_err(|e| err(&e))?;
    let mut row_groups = 0;
    for (cell, (_, batches)) in manifest.cells.iter().zip(&cells) {
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        if rows == 0 {
            continue;
        }
        let ids: ArrayRef = Arc::new(StringArray::from(vec![cell.id.as_str(); rows]));
        let mut columns = vec![ids];
        for c in 0..width {
            let parts: Vec<&dyn arrow_array::Array> =
                batches.iter().map(|b| b.column(c).as_ref()).collect();
            columns.push(arrow_select::concat::concat(&parts).map_err(|e| err(&e))?);
        }
        let writers = factory
            .create_column_writers(row_groups)
            .map_err(|e| err(&e))?;
        row_groups += 1;
        let chunks: Vec<_> = writers
            .into_par_iter()
            .zip(columns.par_iter().zip(schema.fields().par_iter()))
            .map(|(mut w, (column, field))| {
                for leaf in compute_leaves(field, column)? {
                    w.write(&leaf)?;
                }
                w.close()
            })
            .collect::<Result<_, _>>()
            .map_err(|e| err(&e))?;
        let mut group = writer.next_row_group().map_err(|e| err(&e))?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group).map_err(|e| err(&e))?;
        }
        group.close().map_err(|e| err(&e))?;
    }
    writer.close().map_err(|e| err(&e))?;
    file.commit().map_err(|e| e.to_string())
}
