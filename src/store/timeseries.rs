//! `timeseries.parquet` of one simulation: utilization and queue length per time bin
//! (columns in docs/outputs.md). Written with its columns even when there are no bins.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array};
use arrow_schema::{DataType, Field, Schema};

use super::{StoreError, write_columns};
use crate::sim::timeseries::Bin;

pub fn write_timeseries(
    path: &Path,
    bins: &[Bin],
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("time", DataType::Int64, true),
        Field::new("utilization", DataType::Float64, true),
        Field::new("queue_mean", DataType::Float64, true),
        Field::new("queue_max", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(bins.iter().map(|b| b.start))),
        Arc::new(Float64Array::from_iter_values(
            bins.iter().map(|b| b.utilization),
        )),
        Arc::new(Float64Array::from_iter_values(
            bins.iter().map(|b| b.queue_mean),
        )),
        Arc::new(Int64Array::from_iter_values(
            bins.iter().map(|b| i64::from(b.queue_max)),
        )),
    ];
    write_columns(path, schema, columns, metadata)
}
