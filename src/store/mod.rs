//! Parquet result files: per-job records and small typed tables (summary, timeseries), written
//! atomically and deterministically. The schema is a documented contract (docs/outputs.md).

mod atomic;
mod cluster_timeseries;
pub mod columns;
mod eet;
mod footer;
mod jobs;
mod penalties;
mod reservations;
pub mod schedule;
mod sink;
mod table;
mod timeseries;
mod users;

pub use atomic::{AtomicFile, readable_temp};
pub use cluster_timeseries::write_cluster_timeseries;
pub use columns::OutputFile;
pub use eet::{write_eet_heatmap, write_eet_jobs, write_eet_usage, write_eet_users};
pub use jobs::{JobLabels, JobsWriter, jobs_batch};
pub use penalties::write_job_penalties;
pub use reservations::{reservations_batch, reservations_schema, write_reservations};
pub use sink::ParquetSink;
pub use table::{Table, Value};
pub use timeseries::write_timeseries;
pub use users::{write_user_timeseries, write_users};

use std::path::PathBuf;

use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("failed to write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to write {path}: {message}")]
    Parquet { path: PathBuf, message: String },
}

/// Fixed writer settings, so that the same rows always give the same bytes. Statistics are
/// kept per column chunk, with no page index: [`ParquetSink`] writes each row group with its
/// own writer, so page indexes would sit between row groups, where arrow-rs readers fetch them
/// as one span from the first to the last (the whole file).
pub fn writer_properties(metadata: &[(String, String)]) -> WriterProperties {
    let kv = metadata
        .iter()
        .map(|(k, v)| KeyValue {
            key: k.clone(),
            value: Some(v.clone()),
        })
        .collect();
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(1 << 20))
        .set_created_by(format!("schedlab {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(kv))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_offset_index_disabled(true)
        .build()
}

/// Where a small result table goes: a file of its own (written atomically), or the bytes of a
/// Parquet file in memory (a member of a cache entry's bundle, `cache::bundle`), `name` naming it
/// in errors.
pub enum Target<'a> {
    File(&'a std::path::Path),
    Memory {
        name: &'a str,
        bytes: &'a mut Vec<u8>,
    },
}

impl<'a> From<&'a std::path::Path> for Target<'a> {
    fn from(path: &'a std::path::Path) -> Self {
        Target::File(path)
    }
}

impl<'a> From<&'a PathBuf> for Target<'a> {
    fn from(path: &'a PathBuf) -> Self {
        Target::File(path)
    }
}

/// Writes one batch of `columns` under `schema` to `to` (a file atomically). Empty columns give
/// a file with the schema and no rows.
pub(crate) fn write_columns<'a>(
    to: impl Into<Target<'a>>,
    schema: arrow_schema::SchemaRef,
    columns: Vec<arrow_array::ArrayRef>,
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    match to.into() {
        Target::File(path) => {
            let mut sink = ParquetSink::create(path, schema, metadata)?;
            sink.push_columns(columns)?;
            sink.finish()
        }
        Target::Memory { name, bytes } => {
            // A small table in one row group, encoded as the file writer would (same
            // properties, so the same schema, metadata and values).
            let err =
                |e: &dyn std::fmt::Display| jobs::parquet_error(std::path::Path::new(name), e);
            let mut writer = parquet::arrow::ArrowWriter::try_new(
                std::mem::take(bytes),
                schema.clone(),
                Some(writer_properties(metadata)),
            )
            .map_err(|e| err(&e))?;
            let batch = arrow_array::RecordBatch::try_new(schema, columns).map_err(|e| err(&e))?;
            if batch.num_rows() > 0 {
                writer.write(&batch).map_err(|e| err(&e))?;
            }
            *bytes = writer.into_inner().map_err(|e| err(&e))?;
            Ok(())
        }
    }
}
