//! The report's cluster view, shown when an experiment has topology cells (issue 10): capacity
//! and utilization by resource (cores, memory, GPUs) of every cluster, over the measurement
//! window (`clusters.parquet`) and over time (`cluster_timeseries.parquet`), one chart per cell.

use std::collections::BTreeMap;
use std::path::Path;

use super::charts;
use super::data::{ReportData, SectionView, fmt_scaled, number, read, strings};

/// Cells drawn at most (one chart each).
const MAX_CHARTS: usize = 12;
/// Points per line at most.
const MAX_POINTS: usize = 400;
const KB_PER_GIB: f64 = 1_048_576.0;
const RESOURCES: [&str; 3] = ["cores", "memory", "gpus"];

/// The view, or `None` when no cell of the summary has a topology.
pub fn view(dir: &Path, data: &ReportData) -> Result<Option<SectionView>, String> {
    let topology = |cell: &str| {
        data.rows
            .iter()
            .any(|r| r.cell == cell && r.text.get("placement").is_some_and(|p| !p.is_empty()))
    };
    // Result sets written before topologies have no cluster files.
    if !data.rows.iter().any(|r| topology(&r.cell)) || !dir.join("clusters.parquet").is_file() {
        return Ok(None);
    }
    let headers = [
        "cell",
        "cluster",
        "nodes",
        "cores",
        "memory (GiB)",
        "GPUs",
        "jobs",
        "cores used",
        "memory used",
        "GPUs used",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    let (batches, _) = read(&dir.join("clusters.parquet"), None)?;
    for b in &batches {
        let (Some(cells), Some(clusters)) = (strings(b, "cell"), strings(b, "cluster")) else {
            continue;
        };
        for row in 0..b.num_rows() {
            if !topology(cells.value(row)) {
                continue;
            }
            let n = |c: &str| number(b, c, row);
            rows.push(vec![
                cells.value(row).to_string(),
                clusters.value(row).to_string(),
                fmt_scaled(n("nodes"), 1.0, 0),
                fmt_scaled(n("cores"), 1.0, 0),
                fmt_scaled(n("memory_kb"), 1.0 / KB_PER_GIB, 0),
                fmt_scaled(n("gpus"), 1.0, 0),
                fmt_scaled(n("jobs"), 1.0, 0),
                fmt_scaled(n("utilization_cores"), 1.0, 3),
                fmt_scaled(n("utilization_memory"), 1.0, 3),
                fmt_scaled(n("utilization_gpus"), 1.0, 3),
            ]);
        }
    }
    // cell → "cluster resource" → (day, fraction) points.
    let mut series: BTreeMap<String, BTreeMap<String, Vec<(f64, f64)>>> = BTreeMap::new();
    let (batches, _) = read(&dir.join("cluster_timeseries.parquet"), None)?;
    for b in &batches {
        let (Some(cells), Some(clusters)) = (strings(b, "cell"), strings(b, "cluster")) else {
            continue;
        };
        for row in 0..b.num_rows() {
            let cell = cells.value(row);
            if !topology(cell) {
                continue;
            }
            let day = number(b, "time", row).unwrap_or(0.0) / 86_400.0;
            let lines = series.entry(cell.to_string()).or_default();
            for resource in RESOURCES {
                if let Some(v) = number(b, &format!("utilization_{resource}"), row) {
                    lines
                        .entry(format!("{} {resource}", clusters.value(row)))
                        .or_default()
                        .push((day, v));
                }
            }
        }
    }
    let charts = series
        .into_iter()
        .take(MAX_CHARTS)
        .enumerate()
        .map(|(i, (cell, lines))| {
            let lines: Vec<(String, Vec<(f64, f64)>)> = lines
                .into_iter()
                .map(|(name, points)| (name, charts::thin(points, MAX_POINTS)))
                .collect();
            let title = format!("Utilization by cluster and resource — {cell}");
            let svg = charts::lines(
                &title,
                "day (trace time)",
                "fraction of capacity",
                &lines,
                Some((0.0, 1.0)),
            );
            (format!("clusters-{i}"), title, svg)
        })
        .collect();
    Ok(Some(SectionView {
        headers,
        rows,
        charts,
        findings: Vec::new(),
    }))
}
