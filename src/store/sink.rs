//! A Parquet file written batch by batch with bounded memory: batches are gathered (merged every
//! few dozen, so that many small parts do not each keep their own buffers) until a row group's
//! worth of rows or bytes (or the end), then the row group's columns are encoded in parallel and
//! appended. Row groups fill by a fixed rule, so the same batches always give the same bytes;
//! and a file of many small parts (40,000 cells of 200 jobs) has a few large row groups rather
//! than one per part, whose metadata would otherwise grow with every part until the file closes.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{ArrowRowGroupWriterFactory, compute_leaves};
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;

use super::{AtomicFile, StoreError, writer_properties};

/// Rows gathered before a row group is written.
pub const ROW_GROUP_ROWS: usize = 1 << 17;

/// Bytes of gathered rows after which a row group is written even if it holds fewer rows: a
/// file of many small parts (a few rows per cell) stops growing after this much.
pub const ROW_GROUP_BYTES: usize = 8 << 20;

/// Gathered batches merged into one when there are this many: each batch costs its columns'
/// buffers and headers beside its rows (a kilobyte or more for a one-row batch of 20 columns),
/// which would otherwise grow with every cell until the row group is written.
const MERGE_BATCHES: usize = 64;

pub struct ParquetSink {
    file: AtomicFile,
    writer: SerializedFileWriter<File>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    /// Memory of the gathered batches' arrays.
    pending_bytes: usize,
    row_groups: usize,
    path: PathBuf,
}

impl ParquetSink {
    /// Starts `path` (appearing only on [`ParquetSink::finish`]) with `schema` and key-value
    /// `metadata`.
    pub fn create(
        path: &Path,
        schema: SchemaRef,
        metadata: &[(String, String)],
    ) -> Result<ParquetSink, StoreError> {
        let file = AtomicFile::create(path)?;
        let err = |e: parquet::errors::ParquetError| super::jobs::parquet_error(path, e);
        let writer = ArrowWriter::try_new(
            file.file()?,
            schema.clone(),
            Some(writer_properties(metadata)),
        )
        .map_err(err)?;
        let (writer, factory) = writer.into_serialized_writer().map_err(err)?;
        Ok(ParquetSink {
            file,
            writer,
            factory,
            schema,
            pending: Vec::new(),
            pending_rows: 0,
            pending_bytes: 0,
            row_groups: 0,
            path: path.to_path_buf(),
        })
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Memory of the rows gathered and not yet written.
    pub fn pending_bytes(&self) -> usize {
        self.pending_bytes
    }

    /// Writes the gathered rows now as a row group (a writer of many files keeping their
    /// buffers within one budget: the aggregate node).
    pub fn write_row_group(&mut self) -> Result<(), StoreError> {
        self.flush()
    }

    /// Appends the rows of `columns` (in the order of the schema's fields).
    pub fn push_columns(&mut self, columns: Vec<ArrayRef>) -> Result<(), StoreError> {
        let batch = RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|e| super::jobs::parquet_error(&self.path, e))?;
        self.push(batch)
    }

    /// Appends the rows of `batch`, whose columns follow the sink's schema.
    pub fn push(&mut self, batch: RecordBatch) -> Result<(), StoreError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.pending_rows += batch.num_rows();
        self.pending_bytes += batch.get_array_memory_size();
        self.pending.push(batch);
        if self.pending_rows >= ROW_GROUP_ROWS || self.pending_bytes >= ROW_GROUP_BYTES {
            return self.flush();
        }
        if self.pending.len() >= MERGE_BATCHES {
            let merged = arrow_select::concat::concat_batches(&self.schema, &self.pending)
                .map_err(|e| super::jobs::parquet_error(&self.path, e))?;
            self.pending_bytes = merged.get_array_memory_size();
            self.pending = vec![merged];
        }
        Ok(())
    }

    /// Writes the gathered rows as one row group, its columns encoded in parallel.
    fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let err = |e: &dyn std::fmt::Display| super::jobs::parquet_error(&path, e);
        let batches = std::mem::take(&mut self.pending);
        self.pending_rows = 0;
        self.pending_bytes = 0;
        let width = self.schema.fields().len();
        let columns: Vec<ArrayRef> = (0..width)
            .map(|c| {
                let parts: Vec<&dyn arrow_array::Array> =
                    batches.iter().map(|b| b.column(c).as_ref()).collect();
                arrow_select::concat::concat(&parts)
            })
            .collect::<Result<_, _>>()
            .map_err(|e| err(&e))?;
        drop(batches);
        let writers = self
            .factory
            .create_column_writers(self.row_groups)
            .map_err(|e| err(&e))?;
        self.row_groups += 1;
        let chunks: Vec<_> = writers
            .into_par_iter()
            .zip(columns.par_iter().zip(self.schema.fields().par_iter()))
            .map(|(mut w, (column, field))| {
                for leaf in compute_leaves(field, column)? {
                    w.write(&leaf)?;
                }
                w.close()
            })
            .collect::<Result<_, _>>()
            .map_err(|e| err(&e))?;
        let mut group = self.writer.next_row_group().map_err(|e| err(&e))?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group).map_err(|e| err(&e))?;
        }
        group.close().map_err(|e| err(&e))?;
        Ok(())
    }

    /// Adds a key-value pair to the file's metadata (known only once the rows are written).
    pub fn append_metadata(&mut self, key: &str, value: &str) {
        self.writer
            .append_key_value_metadata(parquet::file::metadata::KeyValue {
                key: key.to_string(),
                value: Some(value.to_string()),
            });
    }

    /// Writes what is left, closes the file and moves it into place.
    pub fn finish(mut self) -> Result<(), StoreError> {
        self.flush()?;
        self.writer
            .close()
            .map_err(|e| super::jobs::parquet_error(&self.path, e))?;
        self.file.commit()
    }
}
