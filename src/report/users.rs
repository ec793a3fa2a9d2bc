//! The per-user result files a fairshare report reads (`users.parquet`, `user_timeseries.parquet`;
//! columns in docs/outputs.md), loaded per cell. Both are small: a row per user, and per time
//! bin at most the ten heaviest users and one row for everyone else.

use std::collections::BTreeMap;

/// One user of one cell (a row of users.parquet).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UserRow {
    pub user: i64,
    pub jobs: f64,
    pub measured_jobs: f64,
    pub core_hours: f64,
    /// Σ P(j) × run, undecayed (penalty-seconds).
    pub penalised_usage: f64,
    /// S_u, normalised (Σ over users = 1).
    pub share: f64,
    pub fairshare_factor: f64,
    /// Seconds; `None` without measured jobs.
    pub wait_mean: Option<f64>,
    pub bounded_slowdown_mean: Option<f64>,
}

/// One user (or, with `user` `None`, every other user) in one time bin of
/// user_timeseries.parquet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UserBin {
    /// Start of the bin, trace seconds.
    pub time: f64,
    pub user: Option<i64>,
    pub usage: f64,
    pub fairshare_factor: Option<f64>,
    pub cores: f64,
}

/// Per cell, its users (by user id) and its sampled bins (by time, then user).
#[derive(Clone, Debug, Default)]
pub struct UserData {
    pub users: BTreeMap<String, Vec<UserRow>>,
    pub bins: BTreeMap<String, Vec<UserBin>>,
}
