//! The result files of the user-aware (expected-end-time) section: per cell, each user's
//! VEET_u, WT_u and Σ T_j (users.parquet), the heatmap's non-empty cells
//! (eet_heatmap.parquet) and the usage on the same bins (eet_usage.parquet); columns in
//! docs/outputs.md. Loaded only for experiments whose manifest sets
//! `metrics.expected_capacity`.

use std::collections::BTreeMap;
use std::path::Path;

use arrow_array::{Array, Int64Array, RecordBatch};

use super::data::{number, read, strings};

/// One user of one cell.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EetUser {
    pub user: i64,
    /// Percent; `None` without judged jobs.
    pub veet: Option<f64>,
    /// CPU-seconds.
    pub weighted_tardiness: f64,
    /// Σ T_j, seconds.
    pub tardiness: f64,
}

/// A cell's heatmap: cells `(row, user, bin start, mean violated EETs)`, and per bin of its
/// axis (bin start, CPU fraction, memory fraction).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EetCell {
    pub users: Vec<EetUser>,
    pub cells: Vec<(i64, i64, i64, f64)>,
    pub usage: Vec<(i64, f64, Option<f64>)>,
}

impl EetCell {
    /// The bin width: the step between consecutive bins (60 s with fewer than two).
    pub fn bin_seconds(&self) -> i64 {
        match self.usage.as_slice() {
            [a, b, ..] => (b.0 - a.0).max(1),
            _ => 60,
        }
    }
}

fn int(b: &RecordBatch, name: &str, row: usize) -> Option<i64> {
    let c = b
        .column_by_name(name)?
        .as_any()
        .downcast_ref::<Int64Array>()?;
    (!c.is_null(row)).then(|| c.value(row))
}

/// Per cell id, its EET data (empty when the result set has no EET files).
pub fn load(dir: &Path) -> Result<BTreeMap<String, EetCell>, String> {
    let mut out: BTreeMap<String, EetCell> = BTreeMap::new();
    let files = ["users.parquet", "eet_heatmap.parquet", "eet_usage.parquet"];
    if !files.iter().all(|f| dir.join(f).is_file()) {
        return Ok(out);
    }
    let (users, _) = read(
        &dir.join("users.parquet"),
        Some(&["cell", "user", "veet", "weighted_tardiness", "tardiness"]),
    )?;
    for b in &users {
        let Some(cells) = strings(b, "cell") else {
            continue;
        };
        for row in 0..b.num_rows() {
            out.entry(cells.value(row).to_string())
                .or_default()
                .users
                .push(EetUser {
                    user: int(b, "user", row).unwrap_or(-1),
                    veet: number(b, "veet", row),
                    weighted_tardiness: number(b, "weighted_tardiness", row).unwrap_or(0.0),
                    tardiness: number(b, "tardiness", row).unwrap_or(0.0),
                });
        }
    }
    let (heat, _) = read(
        &dir.join("eet_heatmap.parquet"),
        Some(&["cell", "user", "row", "time", "violated_mean"]),
    )?;
    for b in &heat {
        let Some(cells) = strings(b, "cell") else {
            continue;
        };
        for row in 0..b.num_rows() {
            let user = b
                .column_by_name("user")
                .and_then(|c| c.as_any().downcast_ref::<arrow_array::Int32Array>())
                .map_or(-1, |a| i64::from(a.value(row)));
            out.entry(cells.value(row).to_string())
                .or_default()
                .cells
                .push((
                    int(b, "row", row).unwrap_or(0),
                    user,
                    int(b, "time", row).unwrap_or(0),
                    number(b, "violated_mean", row).unwrap_or(0.0),
                ));
        }
    }
    let (usage, _) = read(
        &dir.join("eet_usage.parquet"),
        Some(&["cell", "time", "cpu_fraction", "memory_fraction"]),
    )?;
    for b in &usage {
        let Some(cells) = strings(b, "cell") else {
            continue;
        };
        for row in 0..b.num_rows() {
            out.entry(cells.value(row).to_string())
                .or_default()
                .usage
                .push((
                    int(b, "time", row).unwrap_or(0),
                    number(b, "cpu_fraction", row).unwrap_or(0.0),
                    number(b, "memory_fraction", row),
                ));
        }
    }
    Ok(out)
}
