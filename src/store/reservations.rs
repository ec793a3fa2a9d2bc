//! `reservations.parquet` of one simulation: every reservation request with its outcome, the
//! rule that rejected it and the granted window (columns in docs/outputs.md). Written with its
//! columns even when there are no requests.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

use super::columns::{OutputFile, described};
use super::{StoreError, write_columns};
use crate::sim::reservation::{Decision, ReservationOutcome, ReservationRequest};

/// The (described) schema of `reservations.parquet`.
pub fn reservations_schema() -> SchemaRef {
    let int = |name: &str| Field::new(name, DataType::Int64, true);
    let text = |name: &str| Field::new(name, DataType::Utf8, true);
    let schema = Schema::new(vec![
        int("id"),
        text("owner"),
        int("created"),
        int("requested_start"),
        int("duration"),
        int("width"),
        text("outcome"),
        text("reason"),
        int("start"),
        int("end"),
        int("shift"),
    ]);
    described(OutputFile::Reservations, &schema)
}

pub fn write_reservations(
    path: &Path,
    requests: &[ReservationRequest],
    outcomes: &[ReservationOutcome],
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    write_columns(
        path,
        reservations_schema(),
        columns(requests, outcomes),
        metadata,
    )
}

/// The rows of `reservations.parquet` as an Arrow batch (the Python package's
/// `Result.reservations`).
pub fn reservations_batch(
    requests: &[ReservationRequest],
    outcomes: &[ReservationOutcome],
) -> Result<RecordBatch, ArrowError> {
    RecordBatch::try_new(reservations_schema(), columns(requests, outcomes))
}

/// The columns of `reservations.parquet`, one row per outcome in its order.
fn columns(requests: &[ReservationRequest], outcomes: &[ReservationOutcome]) -> Vec<ArrayRef> {
    let rows: Vec<(&ReservationRequest, &ReservationOutcome)> = outcomes
        .iter()
        .map(|o| (&requests[o.request as usize], o))
        .collect();
    let ints = |f: &dyn Fn(&ReservationRequest, &ReservationOutcome) -> Option<i64>| -> ArrayRef {
        Arc::new(Int64Array::from_iter(rows.iter().map(|(r, o)| f(r, o))))
    };
    vec![
        ints(&|r, _| Some(r.id as i64)),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|(r, _)| r.owner.as_str()),
        )),
        ints(&|r, _| Some(r.created)),
        ints(&|r, _| Some(r.start)),
        ints(&|r, _| Some(r.duration)),
        ints(&|r, _| Some(r.width as i64)),
        Arc::new(StringArray::from_iter_values(rows.iter().map(
            |(_, o)| match o.decision {
                Decision::Granted => "granted",
                Decision::Shifted => "shifted",
                Decision::Rejected(_) => "rejected",
            },
        ))),
        Arc::new(StringArray::from_iter(rows.iter().map(
            |(_, o)| match o.decision {
                Decision::Rejected(rule) => Some(rule.name()),
                _ => None,
            },
        ))),
        ints(&|_, o| o.window.map(|w| w.0)),
        ints(&|_, o| o.window.map(|w| w.1)),
        ints(&|r, o| o.window.map(|w| w.0 - r.start)),
    ]
}
