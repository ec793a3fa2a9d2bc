//! `users.parquet` (one row per user) and `user_timeseries.parquet` (sampled usage, fairshare
//! factor and cores per user) of one simulation (columns in docs/outputs.md). Written with their
//! columns even when there are no rows.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array};
use arrow_schema::{DataType, Field, Schema};

use super::{StoreError, write_columns};
use crate::sim::fairshare::UserSample;
use crate::sim::metrics::UserRow;
use crate::sim::metrics::eet::{Resource, UserEet};

/// `rows` with each user's expected-end-time figures from `eet` (by user id; null columns for a
/// user without).
pub fn write_users<'a>(
    to: impl Into<super::Target<'a>>,
    rows: &[UserRow],
    eet: &[UserEet],
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    let int = |name: &str| Field::new(name, DataType::Int64, false);
    let float = |name: &str, nullable: bool| Field::new(name, DataType::Float64, nullable);
    let schema = Arc::new(Schema::new(vec![
        int("user"),
        int("group"),
        int("jobs"),
        int("measured_jobs"),
        float("core_hours", false),
        float("penalised_usage", false),
        float("usage", false),
        float("share", false),
        float("fairshare_factor", false),
        float("wait_mean", true),
        float("response_mean", true),
        float("bounded_slowdown_mean", true),
        Field::new("eet_judged", DataType::Int64, true),
        Field::new("eet_violated", DataType::Int64, true),
        float("veet", true),
        Field::new("tardiness", DataType::Int64, true),
        Field::new("weighted_tardiness", DataType::Int64, true),
        Field::new("max_tardiness", DataType::Int64, true),
        float("capacity_cpu", true),
        float("capacity_memory_kb", true),
    ]));
    let ints = |f: fn(&UserRow) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(rows.iter().map(f)))
    };
    let floats = |f: fn(&UserRow) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f)))
    };
    let optional = |f: fn(&UserRow) -> Option<f64>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<Float64Array>())
    };
    let columns = vec![
        ints(|r| i64::from(r.user)),
        ints(|r| i64::from(r.group)),
        ints(|r| r.jobs as i64),
        ints(|r| r.measured_jobs as i64),
        floats(|r| r.core_hours),
        floats(|r| r.penalised_usage),
        floats(|r| r.usage),
        floats(|r| r.share),
        floats(|r| r.fairshare_factor),
        optional(|r| r.wait_mean),
        optional(|r| r.response_mean),
        optional(|r| r.bounded_slowdown_mean),
    ];
    let of = |r: &UserRow| {
        eet.binary_search_by_key(&r.user, |u| u.user)
            .ok()
            .map(|i| &eet[i])
    };
    let eet_ints = |f: fn(&UserEet) -> i64| -> ArrayRef {
        Arc::new(rows.iter().map(|r| of(r).map(f)).collect::<Int64Array>())
    };
    let eet_floats = |f: fn(&UserEet) -> Option<f64>| -> ArrayRef {
        Arc::new(
            rows.iter()
                .map(|r| of(r).and_then(f))
                .collect::<Float64Array>(),
        )
    };
    let mut columns = columns;
    columns.extend([
        eet_ints(|u| u.judged as i64),
        eet_ints(|u| u.violated as i64),
        eet_floats(|u| u.veet),
        eet_ints(|u| u.tardiness),
        eet_ints(|u| u.weighted_tardiness),
        eet_ints(|u| u.max_tardiness),
        eet_floats(|u| u.capacity[Resource::Cpu].map(|c| c.to_f64())),
        eet_floats(|u| u.capacity[Resource::Memory].map(|c| c.to_f64())),
    ]);
    write_columns(to, schema, columns, metadata)
}

pub fn write_user_timeseries<'a>(
    to: impl Into<super::Target<'a>>,
    samples: &[UserSample],
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("time", DataType::Int64, false),
        Field::new("user", DataType::Int64, true),
        Field::new("usage", DataType::Float64, false),
        Field::new("fairshare_factor", DataType::Float64, true),
        Field::new("cores", DataType::Float64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(samples.iter().map(|s| s.time))),
        Arc::new(
            samples
                .iter()
                .map(|s| s.user.map(i64::from))
                .collect::<Int64Array>(),
        ),
        Arc::new(Float64Array::from_iter_values(
            samples.iter().map(|s| s.usage),
        )),
        Arc::new(samples.iter().map(|s| s.factor).collect::<Float64Array>()),
        Arc::new(Float64Array::from_iter_values(
            samples.iter().map(|s| s.cores),
        )),
    ];
    write_columns(to, schema, columns, metadata)
}
