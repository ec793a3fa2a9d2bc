//! Building the charts and rendering the templates (pure given the loaded data).

use std::collections::BTreeMap;

use minijinja::{Environment, context};

use super::burstiness;
use super::charts;
use super::data::{ReportData, fmt_scaled};
use super::reservations;
use crate::manifest::Manifest;

/// A rendered report: the HTML page, the Markdown page and the charts as SVG files.
pub struct Rendered {
    pub html: String,
    pub markdown: String,
    /// (file name, SVG) for the Markdown report.
    pub charts: Vec<(String, String)>,
}

struct Chart {
    id: String,
    caption: String,
    file: String,
    svg: String,
}

/// Headline metrics: (column, chart title, y label, scale).
const HEADLINE: [(&str, &str, &str, f64); 5] = [
    ("wait_mean", "Mean wait", "hours", 1.0 / 3600.0),
    (
        "bounded_slowdown_mean",
        "Mean bounded slowdown",
        "bounded slowdown (τ in summary)",
        1.0,
    ),
    ("utilization", "Utilization", "fraction of capacity", 1.0),
    (
        "queue_length_sampled",
        "Mean queue length at scheduler calls",
        "jobs",
        1.0,
    ),
    (
        "backfilled_fraction",
        "Fraction of jobs backfilled",
        "fraction of jobs",
        1.0,
    ),
];

/// Table columns after cell, workload, scheduler: (column, header, scale, decimals).
const TABLE: [(&str, &str, f64, usize); 8] = [
    ("jobs", "jobs", 1.0, 0),
    ("wait_mean", "mean wait (h)", 1.0 / 3600.0, 2),
    ("wait_p95", "p95 wait (h)", 1.0 / 3600.0, 2),
    ("bounded_slowdown_mean", "mean bsld", 1.0, 2),
    ("utilization", "utilization", 1.0, 4),
    ("queue_length_sampled", "queue at calls", 1.0, 2),
    ("backfilled_fraction", "backfilled", 1.0, 4),
    ("expansion_factor_weighted", "EF (Eq. 2)", 1.0, 3),
];

/// Per-cell charts stop being readable beyond this many series; larger grids get the table
/// (and, with reservations, the grouped reservation views) instead.
const MAX_SERIES: usize = 16;

/// The empirical CDF of `values` at 200 quantiles, x = log10(1 + value).
fn cdf(mut values: Vec<f64>) -> Vec<(f64, f64)> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return Vec::new();
    }
    (0..=200)
        .map(|q| {
            let i = ((q as f64 / 200.0) * (n - 1) as f64).round() as usize;
            (
                (1.0 + values[i].max(0.0)).log10(),
                (i + 1) as f64 / n as f64,
            )
        })
        .collect()
}

pub fn render(
    manifest: &Manifest,
    manifest_text: &str,
    data: &ReportData,
    gantt_cell: &str,
    rendered_at: &str,
    templates: (&str, &str),
) -> Result<Rendered, String> {
    let name = &manifest.name;
    // Cells by workload, and a short series name per cell (its id without the workload part).
    let mut workloads: Vec<String> = Vec::new();
    let mut series_names: Vec<String> = Vec::new();
    let mut by_cell: BTreeMap<&str, (String, String)> = BTreeMap::new();
    for row in &data.rows {
        let w = row.text.get("workload").cloned().unwrap_or_default();
        let short = row
            .cell
            .strip_prefix(&format!("{w}."))
            .filter(|s| !s.is_empty())
            .unwrap_or(&row.cell)
            .to_string();
        let short = if manifest
            .cells
            .iter()
            .map(|c| &c.workload.name)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 1
        {
            short
        } else {
            row.cell.clone()
        };
        if !workloads.contains(&w) {
            workloads.push(w.clone());
        }
        if !series_names.contains(&short) {
            series_names.push(short.clone());
        }
        by_cell.insert(&row.cell, (w, short));
    }

    let mut charts = Vec::new();
    let mut add = |id: &str, caption: String, svg: String| {
        charts.push(Chart {
            id: id.to_string(),
            caption,
            file: format!("{name}-{id}.svg"),
            svg,
        });
    };
    let per_cell_charts = series_names.len() <= MAX_SERIES;
    for (column, title, y_label, scale) in HEADLINE.iter().filter(|_| per_cell_charts) {
        let (column, title, y_label, scale) = (*column, *title, *y_label, *scale);
        let series: Vec<(String, Vec<Option<f64>>)> = series_names
            .iter()
            .map(|s| {
                let values = workloads
                    .iter()
                    .map(|w| {
                        data.rows
                            .iter()
                            .find(|r| by_cell.get(r.cell.as_str()) == Some(&(w.clone(), s.clone())))
                            .and_then(|r| r.numbers.get(column).copied().flatten())
                            .map(|v| v * scale)
                    })
                    .collect();
                (s.clone(), values)
            })
            .collect();
        add(
            column,
            format!("{title} per workload and configuration"),
            charts::grouped_bars(title, y_label, &workloads, &series),
        );
    }
    for w in workloads.iter().filter(|_| per_cell_charts) {
        let cells: Vec<&str> = data
            .rows
            .iter()
            .filter(|r| by_cell[r.cell.as_str()].0 == *w)
            .map(|r| r.cell.as_str())
            .collect();
        let line = |f: fn(&(f64, f64, f64)) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
            cells
                .iter()
                .map(|c| {
                    let bins = data
                        .series
                        .get(*c)
                        .map(|s| s.bins.clone())
                        .unwrap_or_default();
                    let pts = bins.iter().map(|b| (b.0 / 86400.0, f(b))).collect();
                    (by_cell[c].1.clone(), charts::thin(pts, 400))
                })
                .collect()
        };
        add(
            &format!("utilization-{w}"),
            format!("Utilization over time, {w}"),
            charts::lines(
                &format!("Utilization over time — {w}"),
                "time (days of trace time)",
                "fraction of capacity",
                &line(|b| b.1),
                Some((0.0, 1.0)),
            ),
        );
        add(
            &format!("queue-{w}"),
            format!("Queue length over time, {w}"),
            charts::lines(
                &format!("Queue length over time — {w}"),
                "time (days of trace time)",
                "waiting jobs (mean per bin)",
                &line(|b| b.2),
                None,
            ),
        );
        let cdfs = |f: fn(&super::data::CellSeries) -> Vec<f64>| -> Vec<(String, Vec<(f64, f64)>)> {
            cells
                .iter()
                .map(|c| {
                    (
                        by_cell[c].1.clone(),
                        cdf(data.series.get(*c).map(f).unwrap_or_default()),
                    )
                })
                .collect()
        };
        add(
            &format!("wait-cdf-{w}"),
            format!("CDF of wait time, {w}"),
            charts::lines(
                &format!("CDF of wait — {w}"),
                "log10(1 + wait in seconds)",
                "fraction of jobs",
                &cdfs(|s| s.waits.clone()),
                Some((0.0, 1.0)),
            ),
        );
        add(
            &format!("bsld-cdf-{w}"),
            format!("CDF of bounded slowdown, {w}"),
            charts::lines(
                &format!("CDF of bounded slowdown — {w}"),
                "log10(1 + bounded slowdown)",
                "fraction of jobs",
                &cdfs(|s| s.bounded_slowdowns.clone()),
                Some((0.0, 1.0)),
            ),
        );
    }
    let classes: Vec<String> = manifest
        .cells
        .first()
        .map(|c| {
            c.metrics
                .size_classes
                .0
                .iter()
                .map(|k| k.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let reservation_view = reservations::view(data, &classes);
    let burstiness_view = burstiness::view(data);
    if let Some(v) = &burstiness_view {
        for (id, caption, svg) in &v.charts {
            add(id, caption.clone(), svg.clone());
        }
    }
    if let Some(v) = &reservation_view {
        for (id, caption, svg) in &v.charts {
            add(id, caption.clone(), svg.clone());
        }
    }
    if let Some(v) = &data.clusters {
        for (id, caption, svg) in &v.charts {
            add(id, caption.clone(), svg.clone());
        }
    }
    let window = data.gantt_window;
    if let Some(row) = data.rows.iter().find(|r| r.cell == gantt_cell) {
        let procs = row.numbers.get("procs").copied().flatten().unwrap_or(1.0);
        let node = row.numbers.get("node_size").copied().flatten();
        let (capacity, unit) = match node {
            Some(k) if k > 0.0 => ((procs / k) as u64, "nodes"),
            _ => (procs as u64, "processors"),
        };
        let title = format!(
            "Schedule of {gantt_cell}, hours {:.0}–{:.0}",
            window.0 / 3600.0,
            window.1 / 3600.0
        );
        add(
            "gantt",
            title.clone(),
            charts::gantt(&title, &data.gantt_jobs, capacity, window, unit),
        );
    }

    let mut headers = vec![
        "cell".to_string(),
        "workload".to_string(),
        "scheduler".to_string(),
    ];
    headers.extend(TABLE.iter().map(|t| t.1.to_string()));
    let rows: Vec<Vec<String>> = data
        .rows
        .iter()
        .map(|r| {
            let mut out = vec![
                r.cell.clone(),
                r.text.get("workload").cloned().unwrap_or_default(),
                r.text.get("scheduler").cloned().unwrap_or_default(),
            ];
            out.extend(
                TABLE
                    .iter()
                    .map(|(c, _, s, d)| fmt_scaled(r.numbers.get(*c).copied().flatten(), *s, *d)),
            );
            out
        })
        .collect();

    let meta = |k: &str| {
        data.metadata
            .get(k)
            .cloned()
            .unwrap_or_else(|| "unknown".into())
    };
    let ctx = context! {
        experiment => name,
        description => manifest.description.clone(),
        manifest_path => manifest.path.display().to_string(),
        manifest_hash => meta("schedlab.manifest_hash"),
        manifest_text => manifest_text,
        version => meta("schedlab.version"),
        model_version => meta("schedlab.model_version"),
        commit => meta("schedlab.commit"),
        rendered_at => rendered_at,
        provenance => data.provenance.iter().map(|p| context! { workload => p.workload.clone(), file => p.file.clone(), lines => p.lines.clone() }).collect::<Vec<_>>(),
        table => context! { headers => headers, rows => rows },
        per_cell_charts => per_cell_charts,
        burstiness => burstiness_view.as_ref().map(|v| context! {
            headers => v.headers.clone(),
            rows => v.rows.clone(),
            findings => v.findings.iter().map(|(title, text)| context! { title => title.clone(), text => text.clone() }).collect::<Vec<_>>(),
        }),
        clusters => data.clusters.as_ref().map(|v| context! {
            headers => v.headers.clone(),
            rows => v.rows.clone(),
        }),
        reservations => reservation_view.as_ref().map(|v| context! {
            headers => v.headers.clone(),
            rows => v.rows.clone(),
            findings => v.findings.iter().map(|(title, text)| context! { title => title.clone(), text => text.clone() }).collect::<Vec<_>>(),
        }),
        charts => charts.iter().map(|c| context! { id => c.id.clone(), caption => c.caption.clone(), file => c.file.clone(), svg => c.svg.clone() }).collect::<Vec<_>>(),
    };
    let mut env = Environment::new();
    env.add_template("report.html", templates.0)
        .map_err(|e| format!("HTML template: {e}"))?;
    env.add_template("report.md", templates.1)
        .map_err(|e| format!("Markdown template: {e}"))?;
    let html = env
        .get_template("report.html")
        .and_then(|t| t.render(&ctx))
        .map_err(|e| format!("HTML template: {e}"))?;
    let markdown = env
        .get_template("report.md")
        .and_then(|t| t.render(&ctx))
        .map_err(|e| format!("Markdown template: {e}"))?;
    Ok(Rendered {
        html,
        markdown,
        charts: charts.into_iter().map(|c| (c.file, c.svg)).collect(),
    })
}
