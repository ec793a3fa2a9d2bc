//! What a report shows, loaded from an experiment's stored result set (`results/<name>/`) and
//! its manifest — never by simulating. Trace provenance (and the clock that turns trace
//! seconds into dates) comes from the traces' header comments.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use arrow_array::{Array, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::dates::TraceClock;
use super::fields::Fields;
use super::gantt::{GanttJob, GanttReservation};
use super::gantt_window;
use super::users::{UserBin, UserData, UserRow};
use crate::manifest::synthetic::{SyntheticLength, SyntheticSpec};
use crate::manifest::{Manifest, WorkloadSource};

/// One row of summary.parquet.
#[derive(Clone, Debug, Default)]
pub struct SummaryRow {
    pub cell: String,
    /// Text and flag columns (`""`: null).
    pub text: Fields<String>,
    /// Numeric columns (`None`: null).
    pub numbers: Fields<Option<f64>>,
}

/// `v × scale` with `decimals`, thousands separated (`text::fixed`), or `–`.
pub fn fmt_scaled(v: Option<f64>, scale: f64, decimals: usize) -> String {
    v.map_or("–".to_string(), |v| {
        super::text::fixed(v * scale, decimals)
    })
}

#[derive(Clone, Debug, Default)]
pub struct CellSeries {
    /// (bin start, utilization, mean queue length).
    pub bins: Vec<(f64, f64, f64)>,
    /// Reserved fraction per bin, aligned with `bins` (0 for results without the column).
    pub reserved: Vec<f64>,
    pub waits: Vec<f64>,
    pub bounded_slowdowns: Vec<f64>,
}

impl CellSeries {
    /// (bin start, utilization, mean queue length, reserved fraction).
    pub fn bins_with_reserved(&self) -> Vec<(f64, f64, f64, f64)> {
        self.bins
            .iter()
            .enumerate()
            .map(|(i, b)| (b.0, b.1, b.2, self.reserved.get(i).copied().unwrap_or(0.0)))
            .collect()
    }
}

#[derive(Clone, Debug)]
pub struct Provenance {
    pub workload: String,
    pub file: String,
    /// Header lines naming the machine, installation, providers and conversion.
    pub lines: Vec<String>,
    /// When trace second 0 was (header `UnixStartTime`, `TimeZone`); `None` for synthetic
    /// workloads and headers without it.
    pub clock: Option<TraceClock>,
}

/// A reservation request of reservations.parquet (widths in allocation units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub width: f64,
    /// Granted (at the requested time or shifted).
    pub granted: bool,
}

/// One row of clusters.parquet: a cluster of a cell's machine.
#[derive(Clone, Debug, Default)]
pub struct ClusterRow {
    pub cell: String,
    pub cluster: String,
    pub numbers: BTreeMap<String, Option<f64>>,
}

/// A cluster's utilization over time: (bin start, [cores, memory, GPUs]; `None` where the
/// cluster has none of a resource).
pub type ClusterBins = Vec<(f64, [Option<f64>; 3])>;

#[derive(Clone, Debug, Default)]
pub struct ReportData {
    pub rows: Vec<SummaryRow>,
    pub series: BTreeMap<String, CellSeries>,
    pub metadata: BTreeMap<String, String>,
    pub provenance: Vec<Provenance>,
    /// The manifest's grid axes, in canonical order.
    pub axis_names: Vec<String>,
    /// Cell id → axis → rendered value (the manifest's grid parameters), for axes the summary
    /// has no column of.
    pub cell_params: BTreeMap<String, BTreeMap<String, String>>,
    /// Result files present in the result set.
    pub files: BTreeSet<String>,
    /// Cell id → its reservation requests.
    pub requests: BTreeMap<String, Vec<Request>>,
    /// The Gantt cell, its jobs and granted reservations overlapping the window.
    pub gantt_cell: String,
    pub gantt_jobs: Vec<GanttJob>,
    pub gantt_reservations: Vec<GanttReservation>,
    /// The Gantt window, trace seconds.
    pub gantt_window: (f64, f64),
    /// When the default window (a quarter into the measurement window) was idle or nearly so
    /// and moved on (report::gantt_window): why.
    pub gantt_moved: Option<gantt_window::Moved>,
    /// users.parquet and user_timeseries.parquet, when the result set has them.
    pub users: UserData,
    /// clusters.parquet's rows of topology cells (those whose summary names a placement).
    pub clusters: Vec<ClusterRow>,
    /// Topology cell → its clusters' utilization over time, in topology order: only the
    /// [`DRAWN_CLUSTERS`] busiest of a cell (most jobs, ties in topology order), so that a
    /// machine of thousands of clusters is not read whole (issue 37).
    pub cluster_series: BTreeMap<String, Vec<(String, ClusterBins)>>,
    /// queues.parquet's rows (cells with a queue setup), in file order.
    pub queues: Vec<QueueRow>,
    /// job_penalties.parquet: cell → its jobs (cells ordered by fairshare or priority).
    pub penalties: BTreeMap<String, Vec<super::penalties::PenaltyRow>>,
    /// Per cell, the expected-end-time data of the user-aware section (only when the manifest
    /// sets `metrics.expected_capacity`).
    pub eet: BTreeMap<String, super::user_aware::EetCell>,
}

/// One row of queues.parquet: a queue of a cell's queue setup.
#[derive(Clone, Debug, Default)]
pub struct QueueRow {
    pub cell: String,
    pub queue: String,
    pub numbers: BTreeMap<String, Option<f64>>,
}

/// queues.parquet, when the result set has it (docs/queues.md).
fn load_queues(dir: &Path, data: &mut ReportData) -> Result<(), String> {
    if !data.files.contains("queues.parquet") {
        return Ok(());
    }
    data.queues = named_rows(&dir.join("queues.parquet"), "queue", |_| true)?
        .into_iter()
        .map(|(cell, queue, numbers)| QueueRow {
            cell,
            queue,
            numbers,
        })
        .collect();
    Ok(())
}

/// A row's numeric columns by name (`None`: null).
type Numbers = BTreeMap<String, Option<f64>>;

/// The rows of a per-cell file that names a part of each cell in `name_column` (a queue, a
/// cluster), for the cells `keep` takes: (cell, name, every numeric column).
fn named_rows(
    path: &Path,
    name_column: &str,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<(String, String, Numbers)>, String> {
    let (batches, _) = read(path, None)?;
    let mut out = Vec::new();
    for b in &batches {
        let (Some(cells), Some(names)) = (strings(b, "cell"), strings(b, name_column)) else {
            continue;
        };
        for row in 0..b.num_rows() {
            if !keep(cells.value(row)) {
                continue;
            }
            let numbers = b
                .schema()
                .fields()
                .iter()
                .map(|f| f.name())
                .filter(|n| !matches!(n.as_str(), "cell" | "experiment") && *n != name_column)
                .map(|n| (n.clone(), number(b, n, row)))
                .collect();
            out.push((
                cells.value(row).to_string(),
                names.value(row).to_string(),
                numbers,
            ));
        }
    }
    Ok(out)
}

/// The rows of a per-cell file, made by `make` from a lookup of each row's numbers, grouped by
/// cell in file order; `columns`: read only these.
fn rows_by_cell<T>(
    path: &Path,
    columns: Option<&[&str]>,
    make: impl Fn(&dyn Fn(&str) -> Option<f64>) -> T,
) -> Result<BTreeMap<String, Vec<T>>, String> {
    rows_of_cells(path, columns, |_| true, make)
}

/// [`rows_by_cell`] of only the cells `keep` accepts. Streamed a batch at a time, so the
/// file's other rows are never held.
fn rows_of_cells<T>(
    path: &Path,
    columns: Option<&[&str]>,
    keep: impl Fn(&str) -> bool,
    make: impl Fn(&dyn Fn(&str) -> Option<f64>) -> T,
) -> Result<BTreeMap<String, Vec<T>>, String> {
    let mut out: BTreeMap<String, Vec<T>> = BTreeMap::new();
    for_each_batch(path, columns, |b| {
        let Some(cells) = strings(&b, "cell") else {
            return;
        };
        for row in 0..b.num_rows() {
            let cell = cells.value(row);
            if !keep(cell) {
                continue;
            }
            let value = |n: &str| number(&b, n, row);
            // Rows come grouped by cell: look the cell up before allocating its name.
            match out.get_mut(cell) {
                Some(rows) => rows.push(make(&value)),
                None => {
                    out.insert(cell.to_string(), vec![make(&value)]);
                }
            }
        }
    })?;
    Ok(out)
}

fn err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("failed to read {}: {e}", path.display())
}

/// The series of `cell`, made on its first row (its name allocated once, not per row).
fn series_of<'a>(series: &'a mut BTreeMap<String, CellSeries>, cell: &str) -> &'a mut CellSeries {
    if !series.contains_key(cell) {
        series.insert(cell.to_string(), CellSeries::default());
    }
    series.get_mut(cell).expect("inserted above")
}

pub(super) fn read(
    path: &Path,
    columns: Option<&[&str]>,
) -> Result<(Vec<RecordBatch>, BTreeMap<String, String>), String> {
    let mut batches = Vec::new();
    let metadata = for_each_batch(path, columns, |b| batches.push(b))?;
    Ok((batches, metadata))
}

/// Hands the record batches of `path` (only `columns`, when given) to `f` one at a time, and
/// returns the file's key-value metadata: a large file is never decoded whole.
pub(super) fn for_each_batch(
    path: &Path,
    columns: Option<&[&str]>,
    mut f: impl FnMut(RecordBatch),
) -> Result<BTreeMap<String, String>, String> {
    let file = File::open(path).map_err(|e| {
        err(
            path,
            format!("{e} (run the experiment first: schedlab run)"),
        )
    })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| err(path, e))?;
    let metadata = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .filter_map(|k| Some((k.key.clone(), k.value.clone()?)))
                .collect()
        })
        .unwrap_or_default();
    let builder = match columns {
        Some(cols) => {
            let mask = ProjectionMask::columns(builder.parquet_schema(), cols.iter().copied());
            builder.with_projection(mask)
        }
        None => builder,
    };
    for batch in builder.build().map_err(|e| err(path, e))? {
        f(batch.map_err(|e| err(path, e))?);
    }
    Ok(metadata)
}

pub(super) fn strings<'a>(b: &'a RecordBatch, name: &str) -> Option<&'a StringArray> {
    b.column_by_name(name)?
        .as_any()
        .downcast_ref::<StringArray>()
}

fn boolean(b: &RecordBatch, name: &str, row: usize) -> bool {
    b.column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<BooleanArray>())
        .is_some_and(|a| !a.is_null(row) && a.value(row))
}

pub(super) fn number(b: &RecordBatch, name: &str, row: usize) -> Option<f64> {
    number_in(b.column_by_name(name)?.as_ref(), row)
}

/// Row `row` of a Float64 or Int64 column (`None`: null, or another type).
fn number_in(c: &dyn Array, row: usize) -> Option<f64> {
    if c.is_null(row) {
        return None;
    }
    if let Some(a) = c.as_any().downcast_ref::<Float64Array>() {
        return Some(a.value(row));
    }
    c.as_any()
        .downcast_ref::<Int64Array>()
        .map(|a| a.value(row) as f64)
}

/// Clusters whose utilization over time a report draws per cell, at most.
pub const DRAWN_CLUSTERS: usize = 12;

/// The `most` clusters of each cell with the most jobs (ties in file order, which is topology
/// order): cell → their names.
pub fn busiest_clusters(rows: &[ClusterRow], most: usize) -> BTreeMap<String, BTreeSet<String>> {
    let mut by_cell: BTreeMap<&str, Vec<&ClusterRow>> = BTreeMap::new();
    for r in rows {
        by_cell.entry(r.cell.as_str()).or_default().push(r);
    }
    let jobs = |r: &&ClusterRow| r.numbers.get("jobs").copied().flatten().unwrap_or(0.0);
    by_cell
        .into_iter()
        .map(|(cell, clusters)| {
            let names = busiest(&clusters, most, jobs)
                .into_iter()
                .map(|i| clusters[i].cluster.clone());
            (cell.to_string(), names.collect())
        })
        .collect()
}

/// The ranking behind every "busiest clusters" of a report (the clusters drawn over time and
/// those listed and named in the clusters section): the indices of the `most` items with the
/// most `jobs`, ties to the earlier item, in their original order.
pub fn busiest<T>(items: &[T], most: usize, jobs: impl Fn(&T) -> f64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| jobs(&items[b]).total_cmp(&jobs(&items[a])).then(a.cmp(&b)));
    order.truncate(most);
    order.sort_unstable();
    order
}

/// The per-cluster files of the topology cells (`placement` set in the summary); nothing for
/// result sets without topologies or written before them.
fn load_clusters(dir: &Path, data: &mut ReportData) -> Result<(), String> {
    let topology: BTreeSet<String> = data
        .rows
        .iter()
        .filter(|r| r.text.get("placement").is_some_and(|p| !p.is_empty()))
        .map(|r| r.cell.clone())
        .collect();
    if topology.is_empty() || !data.files.contains("clusters.parquet") {
        return Ok(());
    }
    data.clusters = named_rows(&dir.join("clusters.parquet"), "cluster", |cell| {
        topology.contains(cell)
    })?
    .into_iter()
    .map(|(cell, cluster, numbers)| ClusterRow {
        cell,
        cluster,
        numbers,
    })
    .collect();
    if !data.files.contains("cluster_timeseries.parquet") {
        return Ok(());
    }
    let drawn = busiest_clusters(&data.clusters, DRAWN_CLUSTERS);
    for_each_batch(&dir.join("cluster_timeseries.parquet"), None, |batch| {
        let b = &batch;
        let (Some(cells), Some(clusters)) = (strings(b, "cell"), strings(b, "cluster")) else {
            return;
        };
        for row in 0..b.num_rows() {
            let cell = cells.value(row);
            let name = clusters.value(row);
            if !topology.contains(cell) || !drawn.get(cell).is_some_and(|d| d.contains(name)) {
                continue;
            }
            let series = data.cluster_series.entry(cell.to_string()).or_default();
            if series.last().is_none_or(|(n, _)| n != name) {
                series.push((name.to_string(), Vec::new()));
            }
            let point = (
                number(b, "time", row).unwrap_or(0.0),
                ["cores", "memory", "gpus"].map(|r| number(b, &format!("utilization_{r}"), row)),
            );
            if let Some((_, bins)) = series.last_mut() {
                bins.push(point);
            }
        }
    })?;
    Ok(())
}

/// Loads what the report of `manifest` needs from `dir` (= `results/<name>`). The Gantt view
/// shows `gantt_cell` from `gantt_start` (default: a quarter into its measurement window) for
/// `gantt_seconds`.
pub fn load(
    manifest: &Manifest,
    dir: &Path,
    gantt_cell: &str,
    gantt_start: Option<i64>,
    gantt_seconds: i64,
) -> Result<ReportData, String> {
    let mut data = ReportData {
        axis_names: manifest.axes.clone(),
        cell_params: manifest
            .cells
            .iter()
            .map(|c| {
                let params = c.params.iter().map(|(a, v)| (a.to_string(), v.to_string()));
                (c.id.clone(), params.collect())
            })
            .collect(),
        gantt_cell: gantt_cell.to_string(),
        ..ReportData::default()
    };
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".parquet") {
                data.files.insert(name);
            }
        }
    }
    let (batches, metadata) = read(&dir.join("summary.parquet"), None)?;
    data.metadata = metadata;
    for b in &batches {
        let cells = strings(b, "cell")
            .ok_or_else(|| err(&dir.join("summary.parquet"), "no cell column"))?;
        // The batch's columns, sorted by name as a row's fields are kept: flags (`ignore_memory`,
        // categorical levels `true` or `false`) and strings as text, the rest as numbers.
        let mut text_columns: Vec<(&str, usize)> = Vec::new();
        let mut number_columns: Vec<(&str, usize)> = Vec::new();
        for (i, field) in b.schema_ref().fields().iter().enumerate() {
            let column = b.column(i);
            if column.as_any().is::<BooleanArray>() || column.as_any().is::<StringArray>() {
                text_columns.push((field.name(), i));
            } else {
                number_columns.push((field.name(), i));
            }
        }
        text_columns.sort();
        number_columns.sort();
        let names = |columns: &[(&str, usize)]| {
            std::sync::Arc::new(
                columns
                    .iter()
                    .map(|(n, _)| n.to_string())
                    .collect::<Vec<_>>(),
            )
        };
        let (text_names, number_names) = (names(&text_columns), names(&number_columns));
        for row in 0..b.num_rows() {
            let text = text_columns
                .iter()
                .map(|&(_, i)| {
                    let column = b.column(i);
                    if column.is_null(row) {
                        String::new()
                    } else if let Some(f) = column.as_any().downcast_ref::<BooleanArray>() {
                        f.value(row).to_string()
                    } else {
                        column
                            .as_any()
                            .downcast_ref::<StringArray>()
                            .map_or(String::new(), |s| s.value(row).to_string())
                    }
                })
                .collect();
            let numbers = number_columns
                .iter()
                .map(|&(_, i)| number_in(b.column(i).as_ref(), row))
                .collect();
            data.rows.push(SummaryRow {
                cell: cells.value(row).to_string(),
                text: Fields::with_names(text_names.clone(), text),
                numbers: Fields::with_names(number_names.clone(), numbers),
            });
        }
    }
    load_clusters(dir, &mut data)?;
    load_queues(dir, &mut data)?;
    let measured = {
        let row = data.rows.iter().find(|r| r.cell == gantt_cell);
        let get = |k: &str| {
            row.and_then(|r| r.numbers.get(k).copied().flatten())
                .unwrap_or(0.0)
        };
        (get("window_start"), get("window_end"))
    };
    for_each_batch(
        &dir.join("timeseries.parquet"),
        Some(&["cell", "time", "utilization", "queue_mean", "reserved"]),
        |b| {
            let Some(cells) = strings(&b, "cell") else {
                return;
            };
            for row in 0..b.num_rows() {
                let s = series_of(&mut data.series, cells.value(row));
                let v = |n| number(&b, n, row).unwrap_or(0.0);
                s.bins.push((v("time"), v("utilization"), v("queue_mean")));
                s.reserved.push(v("reserved"));
            }
        },
    )?;
    // The Gantt cell's jobs: every one is kept until the window is known (one cell's jobs).
    let mut cell_jobs: Vec<GanttJob> = Vec::new();
    for_each_batch(
        &dir.join("jobs.parquet"),
        Some(&[
            "cell",
            "start",
            "end",
            "wait",
            "units",
            "bounded_slowdown",
            "backfilled",
        ]),
        |b| {
            let Some(cells) = strings(&b, "cell") else {
                return;
            };
            for row in 0..b.num_rows() {
                let cell = cells.value(row);
                let s = series_of(&mut data.series, cell);
                s.waits.push(number(&b, "wait", row).unwrap_or(0.0));
                s.bounded_slowdowns
                    .push(number(&b, "bounded_slowdown", row).unwrap_or(1.0));
                if cell == gantt_cell {
                    cell_jobs.push(GanttJob {
                        start: number(&b, "start", row).unwrap_or(0.0),
                        end: number(&b, "end", row).unwrap_or(0.0),
                        units: number(&b, "units", row).unwrap_or(1.0) as u64,
                        backfilled: boolean(&b, "backfilled", row),
                    });
                }
            }
        },
    )?;
    let (window, moved) =
        gantt_window::choose(&cell_jobs, gantt_start, measured, gantt_seconds as f64);
    data.gantt_window = window;
    data.gantt_moved = moved;
    let gantt_window = window;
    data.gantt_jobs = cell_jobs
        .into_iter()
        .filter(|j| j.end > gantt_window.0 && j.start < gantt_window.1)
        .collect();
    if data.files.contains("reservations.parquet") {
        let (batches, _) = read(
            &dir.join("reservations.parquet"),
            Some(&["cell", "width", "outcome", "start", "end"]),
        )?;
        for b in &batches {
            let (Some(cells), Some(outcomes)) = (strings(b, "cell"), strings(b, "outcome")) else {
                continue;
            };
            for row in 0..b.num_rows() {
                let cell = cells.value(row);
                let width = number(b, "width", row).unwrap_or(0.0);
                let granted = !outcomes.is_null(row) && outcomes.value(row) != "rejected";
                data.requests
                    .entry(cell.to_string())
                    .or_default()
                    .push(Request { width, granted });
                if let (true, Some(start), Some(end)) = (
                    granted && cell == gantt_cell,
                    number(b, "start", row),
                    number(b, "end", row),
                ) && end > gantt_window.0
                    && start < gantt_window.1
                {
                    data.gantt_reservations.push(GanttReservation {
                        start,
                        end,
                        units: width as u64,
                    });
                }
            }
        }
    }
    load_users(dir, &mut data)?;
    load_penalties(dir, &mut data)?;
    if manifest
        .cells
        .iter()
        .any(|c| c.metrics.expected_capacity.configured)
    {
        data.eet = super::user_aware::load(dir)?;
    }
    let mut seen = BTreeMap::new();
    for cell in &manifest.cells {
        seen.entry(cell.workload.name.clone())
            .or_insert_with(|| cell.workload.source.clone());
    }
    for (workload, source) in seen {
        data.provenance.push(match source {
            WorkloadSource::Trace(trace) => {
                let (lines, clock) = header(&trace);
                Provenance {
                    workload,
                    file: trace
                        .file_name()
                        .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
                    lines,
                    clock,
                }
            }
            WorkloadSource::Synthetic(spec) => Provenance {
                workload,
                file: "synthetic".to_string(),
                lines: synthetic_lines(&spec),
                clock: None,
            },
        });
    }
    Ok(data)
}

/// What a synthetic workload is, in a line per user model.
fn synthetic_lines(spec: &SyntheticSpec) -> Vec<String> {
    let mut lines = vec![match spec.length {
        SyntheticLength::Seconds(s) => format!("Generated: {:.1} days", s as f64 / 86_400.0),
        SyntheticLength::Jobs(n) => format!("Generated: {} jobs", super::text::whole(n as usize)),
    }];
    if let Some(t) = &spec.target_load {
        lines.push(format!(
            "Rates scaled to an offered load of {} on {} processors",
            t.load,
            super::text::whole(t.procs as usize)
        ));
    }
    for u in &spec.users {
        let m = u.login_model();
        lines.push(format!(
            "{} ×{}: λ={:.3e}, δ={:.3e}, μ={:.3e} /s (P_login {:.3}, {:.1} jobs per login, interarrival CV {:.2})",
            u.name,
            super::text::whole(u.count as usize),
            u.lambda,
            u.delta,
            u.mu,
            m.p_login(),
            m.mean_jobs_per_login(),
            m.interarrival_cv2().sqrt()
        ));
    }
    lines
}

/// The provenance lines of a trace's header and its clock (only the header and the first job
/// line are read: a trace without a start time may keep Unix times, `TraceClock::of_trace`).
fn header(path: &Path) -> (Vec<String>, Option<TraceClock>) {
    let Ok(file) = File::open(path) else {
        return (Vec::new(), None);
    };
    let mut buffered = BufReader::new(file);
    let gzip = buffered
        .fill_buf()
        .map(|b| b.starts_with(&[0x1f, 0x8b]))
        .unwrap_or(false);
    let reader: Box<dyn Read> = if gzip {
        Box::new(flate2::bufread::MultiGzDecoder::new(buffered))
    } else {
        Box::new(buffered)
    };
    let keys = [
        "Computer",
        "Installation",
        "Acknowledge",
        "Information",
        "Conversion",
        "MaxProcs",
        "MaxNodes",
    ];
    let mut lines = Vec::new();
    let (mut start, mut offset, mut zone, mut first_submit) = (None, None, None, None);
    for l in BufReader::new(reader).lines().map_while(Result::ok) {
        if !(l.trim_start().starts_with(';') || l.trim().is_empty()) {
            // The first job line: field 2 is its submit time.
            first_submit = l
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<f64>().ok())
                .map(|v| v as i64);
            break;
        }
        let t = l.trim_start_matches(';').trim().to_string();
        let value = |key: &str| {
            t.strip_prefix(key)
                .and_then(|r| r.trim_start().strip_prefix(':'))
                .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
        };
        if let Some(v) = value("UnixStartTime") {
            start = v.parse::<i64>().ok();
        } else if let Some(v) = value("TimeZoneString") {
            zone = Some(v);
        } else if let Some(v) = value("TimeZone") {
            offset = v.parse::<i64>().ok();
        }
        if lines.len() < 12 && keys.iter().any(|k| t.starts_with(k)) {
            lines.push(t);
        }
    }
    (
        lines,
        TraceClock::of_trace(start, offset, zone, first_submit),
    )
}

/// job_penalties.parquet, when present.
fn load_penalties(dir: &Path, data: &mut ReportData) -> Result<(), String> {
    if !data.files.contains("job_penalties.parquet") {
        return Ok(());
    }
    data.penalties = rows_by_cell(&dir.join("job_penalties.parquet"), None, |v| {
        super::penalties::PenaltyRow {
            job_id: v("job_id").unwrap_or(-1.0) as i64,
            user: v("user").unwrap_or(-1.0) as i64,
            cores: v("cores").unwrap_or(0.0),
            runtime: v("runtime").unwrap_or(0.0),
            cpu: v("cpu").unwrap_or(0.0),
            pe_min: v("pe_min"),
            increase: v("increase"),
            wait: v("wait"),
        }
    })?;
    Ok(())
}

/// The queue orders that rank users (fairshare and the multifactor priority): the fairshare
/// section reports on their cells.
pub const USER_ORDERS: [&str; 2] = ["fairshare", "priority"];

/// users.parquet and user_timeseries.parquet, when both are present.
fn load_users(dir: &Path, data: &mut ReportData) -> Result<(), String> {
    if !(data.files.contains("users.parquet") && data.files.contains("user_timeseries.parquet")) {
        return Ok(());
    }
    data.users.users = rows_by_cell(
        &dir.join("users.parquet"),
        Some(&[
            "cell",
            "user",
            "jobs",
            "measured_jobs",
            "core_hours",
            "penalised_usage",
            "share",
            "fairshare_factor",
            "wait_mean",
            "bounded_slowdown_mean",
        ]),
        |v| UserRow {
            user: v("user").unwrap_or(-1.0) as i64,
            jobs: v("jobs").unwrap_or(0.0),
            measured_jobs: v("measured_jobs").unwrap_or(0.0),
            core_hours: v("core_hours").unwrap_or(0.0),
            penalised_usage: v("penalised_usage").unwrap_or(0.0),
            share: v("share").unwrap_or(0.0),
            fairshare_factor: v("fairshare_factor").unwrap_or(1.0),
            wait_mean: v("wait_mean"),
            bounded_slowdown_mean: v("bounded_slowdown_mean"),
        },
    )?;
    // Only the fairshare section draws bins, and only of queue-ordered-by-user cells: a grid of
    // other orders would hold every cell's bins for nothing (10,000 cells: over 1 GB).
    let ordered_by_user: BTreeSet<&str> = data
        .rows
        .iter()
        .filter(|r| {
            r.text
                .get("order")
                .is_some_and(|o| USER_ORDERS.contains(&o.as_str()))
        })
        .map(|r| r.cell.as_str())
        .collect();
    data.users.bins = rows_of_cells(
        &dir.join("user_timeseries.parquet"),
        Some(&["cell", "time", "user", "usage", "fairshare_factor", "cores"]),
        |cell| ordered_by_user.contains(cell),
        |v| UserBin {
            time: v("time").unwrap_or(0.0),
            user: v("user").map(|u| u as i64),
            usage: v("usage").unwrap_or(0.0),
            fairshare_factor: v("fairshare_factor"),
            cores: v("cores").unwrap_or(0.0),
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cell: &str, cluster: &str, jobs: f64) -> ClusterRow {
        ClusterRow {
            cell: cell.into(),
            cluster: cluster.into(),
            numbers: [("jobs".to_string(), Some(jobs))].into_iter().collect(),
        }
    }

    #[test]
    fn busiest_keeps_the_most_jobs_ties_to_the_earlier_in_their_order() {
        // Jobs 3, 9, 3, 5, 9: the three busiest are the two 9s and the 5 (the 3s tie below).
        let jobs = [3.0, 9.0, 3.0, 5.0, 9.0];
        assert_eq!(busiest(&jobs, 3, |j| *j), vec![1, 3, 4]);
        // Four: of the tied 3s, the earlier one.
        assert_eq!(busiest(&jobs, 4, |j| *j), vec![0, 1, 3, 4]);
        assert_eq!(busiest(&jobs, 9, |j| *j), vec![0, 1, 2, 3, 4]);
        // Per cell, by name.
        let rows = [
            row("a", "x", 1.0),
            row("a", "y", 4.0),
            row("b", "x", 2.0),
            row("a", "z", 4.0),
        ];
        let kept = busiest_clusters(&rows, 2);
        assert_eq!(
            kept["a"].iter().cloned().collect::<Vec<_>>(),
            vec!["y".to_string(), "z".to_string()]
        );
        assert_eq!(kept["b"].len(), 1);
    }
}
