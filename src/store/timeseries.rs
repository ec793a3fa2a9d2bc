//! `timeseries.parquet` of one simulation: utilization and queue length per time bin
//! (columns in docs/outputs.md). Written with its columns even when there are no bins.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array};
use arrow_schema::{DataType, Field, Schema};

use super::columns::{OutputFile, described};
use super::{StoreError, write_columns};
use crate::sim::timeseries::Bin;

/// Writes `bins`, then one `queue_mean_<class>` column per entry of `class_queues`, then the
/// named nullable `extra` columns (utilization by resource).
pub fn write_timeseries<'a>(
    to: impl Into<super::Target<'a>>,
    bins: &[Bin],
    class_queues: &[(String, Vec<f64>)],
    extra: &[(String, Vec<Option<f64>>)],
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    let mut fields = vec![
        Field::new("time", DataType::Int64, true),
        Field::new("utilization", DataType::Float64, true),
        Field::new("reserved", DataType::Float64, true),
        Field::new("utilization_with_reserved", DataType::Float64, true),
        Field::new("queue_mean", DataType::Float64, true),
        Field::new("queue_max", DataType::Int64, true),
    ];
    for (name, _) in class_queues {
        fields.push(Field::new(
            format!("queue_mean_{name}"),
            DataType::Float64,
            true,
        ));
    }
    for (name, _) in extra {
        fields.push(Field::new(name, DataType::Float64, true));
    }
    let schema = described(OutputFile::Timeseries, &Schema::new(fields));
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(bins.iter().map(|b| b.start))),
        Arc::new(Float64Array::from_iter_values(
            bins.iter().map(|b| b.utilization),
        )),
        Arc::new(Float64Array::from_iter_values(
            bins.iter().map(|b| b.reserved),
        )),
        Arc::new(Float64Array::from_iter_values(
            bins.iter().map(|b| b.utilization + b.reserved),
        )),
        Arc::new(Float64Array::from_iter_values(
            bins.iter().map(|b| b.queue_mean),
        )),
        Arc::new(Int64Array::from_iter_values(
            bins.iter().map(|b| i64::from(b.queue_max)),
        )),
    ];
    for (_, series) in class_queues {
        columns.push(Arc::new(Float64Array::from_iter_values(
            series.iter().copied(),
        )));
    }
    for (_, series) in extra {
        columns.push(Arc::new(Float64Array::from(series.clone())));
    }
    write_columns(to, schema, columns, metadata)
}
