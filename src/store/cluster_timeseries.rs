//! `cluster_timeseries.parquet` of one cell (columns in docs/outputs.md): each cluster's
//! utilization per bin, written a slice of rows at a time. The table has clusters × bins rows —
//! 48 million for 20,000 clusters over 100 days of hourly bins — so it is never built whole in
//! memory (issue 37: the generic [`super::Table`] held 20 GB for that machine).

use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::columns::{OutputFile, described};
use super::{ParquetSink, StoreError, Target, writer_properties};
use crate::sim::resources::KINDS;

/// Rows per slice handed to the Parquet writer: a few MB of builders at a time.
const SLICE_ROWS: usize = 1 << 16;

/// The table's schema: `cluster`, `time`, then `utilization_<resource>` for each of
/// `resources` (every column nullable, as the small tables of [`super::Table`] are).
fn schema(resources: &[&str]) -> SchemaRef {
    let mut fields = vec![
        Field::new("cluster", DataType::Utf8, true),
        Field::new("time", DataType::Int64, true),
    ];
    fields.extend(
        resources
            .iter()
            .map(|r| Field::new(format!("utilization_{r}"), DataType::Float64, true)),
    );
    described(OutputFile::ClusterTimeseries, &Schema::new(fields))
}

/// Writes a row per cluster of `clusters` (in order) and bin start of `bins`, the cluster's
/// utilization of each resource in that bin given by `utilization(cluster, bin)`. With no row
/// at all the file has no columns either, as an empty [`super::Table`] writes it (cells of a
/// result set concatenate alike).
pub fn write_cluster_timeseries<'a>(
    to: impl Into<Target<'a>>,
    clusters: &[String],
    bins: &[i64],
    resources: &[&str; KINDS],
    utilization: impl Fn(usize, usize) -> [Option<f64>; KINDS],
) -> Result<(), StoreError> {
    let to = to.into();
    if clusters.is_empty() || bins.is_empty() {
        return super::Table::default().write(to, &[], OutputFile::ClusterTimeseries);
    }
    let schema = schema(resources);
    let mut out = Out::open(to, schema.clone())?;
    let mut slice = Slice::default();
    for (c, name) in clusters.iter().enumerate() {
        for (b, &start) in bins.iter().enumerate() {
            slice.cluster.append_value(name);
            slice.time.append_value(start);
            for (k, column) in slice.utilization.iter_mut().enumerate() {
                column.append_option(utilization(c, b)[k]);
            }
            slice.rows += 1;
            if slice.rows == SLICE_ROWS {
                out.push(slice.take(&schema))?;
            }
        }
    }
    if slice.rows > 0 {
        out.push(slice.take(&schema))?;
    }
    out.finish()
}

/// The columns of the rows not yet handed to the writer.
#[derive(Default)]
struct Slice {
    rows: usize,
    cluster: StringBuilder,
    time: Int64Builder,
    utilization: [Float64Builder; KINDS],
}

impl Slice {
    fn take(&mut self, schema: &SchemaRef) -> RecordBatch {
        self.rows = 0;
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.cluster.finish()),
            Arc::new(self.time.finish()),
        ];
        columns.extend(
            self.utilization
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        RecordBatch::try_new(schema.clone(), columns).expect("the builders follow the schema")
    }
}

/// A file (written atomically, a row group at a time) or a Parquet file in memory.
enum Out<'a> {
    File(ParquetSink),
    Memory {
        name: &'a str,
        bytes: &'a mut Vec<u8>,
        writer: parquet::arrow::ArrowWriter<Vec<u8>>,
    },
}

impl<'a> Out<'a> {
    fn open(to: Target<'a>, schema: SchemaRef) -> Result<Out<'a>, StoreError> {
        Ok(match to {
            Target::File(path) => Out::File(ParquetSink::create(path, schema, &[])?),
            Target::Memory { name, bytes } => {
                let writer = parquet::arrow::ArrowWriter::try_new(
                    std::mem::take(bytes),
                    schema,
                    Some(writer_properties(&[])),
                )
                .map_err(|e| super::jobs::parquet_error(std::path::Path::new(name), e))?;
                Out::Memory {
                    name,
                    bytes,
                    writer,
                }
            }
        })
    }

    fn push(&mut self, batch: RecordBatch) -> Result<(), StoreError> {
        match self {
            Out::File(sink) => sink.push(batch),
            Out::Memory { name, writer, .. } => writer
                .write(&batch)
                .map_err(|e| super::jobs::parquet_error(std::path::Path::new(name), e)),
        }
    }

    fn finish(self) -> Result<(), StoreError> {
        match self {
            Out::File(sink) => sink.finish(),
            Out::Memory {
                name,
                bytes,
                writer,
            } => {
                *bytes = writer
                    .into_inner()
                    .map_err(|e| super::jobs::parquet_error(std::path::Path::new(name), e))?;
                Ok(())
            }
        }
    }
}
