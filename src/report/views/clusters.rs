//! The clusters section, shown when a result set has topology cells (issue 10): what each
//! cluster of the machine did in each configuration — its capacity, how much of its cores,
//! memory and GPUs jobs held over the measurement window, how long the jobs that ran there
//! waited — the jobs no cluster can ever run, by reason, and utilization by cluster and
//! resource over time. Replicas are averaged in the tables; the charts show a configuration's
//! first replica. Everything comes from `summary.parquet`, `clusters.parquet` and
//! `cluster_timeseries.parquet` (docs/outputs.md).

use super::replica_means::{NamedMeans, named_means};
use super::{
    Chart, Context, Family, Finding, Section, Table, ViewKind, ViewSpec, config_label as label,
};
use crate::report::charts::{self, Axis as Scaling, Draw, LineChart, Panel, Point, Series};
use crate::report::data::{self, ClusterRow, fmt_scaled};
use crate::report::metric;
use crate::report::palette::COLORS;
use crate::report::shape::{Config, ResultShape};
use crate::report::svg::Look;
use crate::report::units::WAIT_DECIMALS;

pub struct Clusters;

/// Configurations drawn at most (one chart each) and described in words at most.
const MAX_CHARTS: usize = 12;
const MAX_FINDINGS: usize = 8;
/// Clusters listed per configuration at most: the busiest (most jobs), in topology order.
const MAX_TABLE_CLUSTERS: usize = 24;
/// Clusters named per configuration in its finding at most (the busiest; the rest summed).
const MAX_NAMED_CLUSTERS: usize = 8;
/// Points per line at most.
const MAX_POINTS: usize = 400;
const KB_PER_GIB: f64 = 1_048_576.0;
/// Resource kinds as in the column names, and as a reader names them.
const RESOURCES: [(&str, &str); 3] = [("cores", "cores"), ("memory", "memory"), ("gpus", "GPUs")];

impl Family for Clusters {
    fn name(&self) -> &'static str {
        "clusters"
    }

    fn heading(&self) -> &'static str {
        "Clusters"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        // Topology cells record their placement; processor pools leave it null.
        if !shape.files.contains("clusters.parquet") || !shape.text_columns.contains("placement") {
            return Vec::new();
        }
        vec![ViewSpec {
            family: self.name(),
            kind: ViewKind::Section,
        }]
    }

    fn build(&self, _views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section) {
        build(ctx, section);
    }
}

/// A reason column (`skipped_too_much_memory_per_node`) in words.
pub fn reason_words(column: &str) -> String {
    let reason = column.strip_prefix("skipped_").unwrap_or(column);
    match reason {
        "too_many_procs" => "more processors than the machine".into(),
        "no_such_cluster" => "no such cluster".into(),
        "no_node_with_properties" => "no node with the properties".into(),
        "empty_request" => "a request for no nodes".into(),
        "too_many_cores_per_node" => "too many cores per node".into(),
        "too_much_memory_per_node" => "too much memory per node".into(),
        "too_many_gpus_per_node" => "too many GPUs per node".into(),
        "too_many_nodes" => "too many nodes".into(),
        other => other.replace('_', " "),
    }
}

/// What the section's figures are: per-cluster utilization, jobs, waits, bounded slowdowns.
const COLUMNS: [&str; 4] = ["utilization", "jobs", "wait", "bounded_slowdown"];

/// The clusters of configuration `c` in topology order, each column averaged over replicas.
fn clusters_of(rows: &[ClusterRow], c: &Config<'_>) -> Vec<NamedMeans> {
    named_means(rows, c, |r| (&r.cell, &r.cluster, &r.numbers))
}

/// The `most` clusters of `clusters` with the most jobs (ties: the first), in their order
/// (the ranking of [`data::busiest`]).
fn busiest(clusters: Vec<NamedMeans>, most: usize) -> Vec<NamedMeans> {
    let kept = data::busiest(&clusters, most, |m| m.get("jobs").unwrap_or(0.0));
    clusters
        .into_iter()
        .enumerate()
        .filter_map(|(i, m)| kept.binary_search(&i).is_ok().then_some(m))
        .collect()
}

fn percent(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{:.1} %", 100.0 * x))
}

fn build(ctx: &Context<'_>, section: &mut Section) {
    let data = ctx.data;
    let shape = &ctx.grid.shape;
    let once = metric::once_per_setting(ctx.grid, &COLUMNS);
    let blind = &once.blind;
    let configs: Vec<&Config<'_>> = once
        .configs
        .into_iter()
        .filter(|c| !c.text("placement").is_empty())
        .collect();
    if configs.is_empty() {
        return;
    }
    section.intro.push(format!(
        "What each cluster did: its capacity, the fraction of its cores, memory and GPUs that jobs held over the measurement window (a job on exclusive nodes holds them whole), and the waits of the measured jobs that ran there{}. Jobs that no cluster can ever run belong to none: they are counted by reason (docs/metrics.md, \"Per cluster\").",
        if shape.replicas > 1 { ", means over replicas" } else { "" }
    ));
    section.intro.extend(once.note);
    let unit = ctx.grid.waits;
    let mut rows = Vec::new();
    let mut most_clusters = 0;
    for c in &configs {
        let name = label(shape, c, blind);
        let clusters = clusters_of(&data.clusters, c);
        most_clusters = most_clusters.max(clusters.len());
        for m in busiest(clusters, MAX_TABLE_CLUSTERS) {
            let n = |col: &str| m.get(col);
            let cells = vec![
                name.clone(),
                m.name.clone(),
                fmt_scaled(n("nodes"), 1.0, 0),
                fmt_scaled(n("cores"), 1.0, 0),
                fmt_scaled(n("memory_kb"), 1.0 / KB_PER_GIB, 1),
                fmt_scaled(n("gpus"), 1.0, 0),
                fmt_scaled(n("jobs"), 1.0, 0),
                fmt_scaled(n("utilization_cores"), 1.0, 3),
                fmt_scaled(n("utilization_memory"), 1.0, 3),
                fmt_scaled(n("utilization_gpus"), 1.0, 3),
            ];
            // Waits in the report's unit; these columns formatted column by column.
            let values = vec![
                n("wait_mean").map(|w| unit.of(w)),
                n("wait_p95").map(|w| unit.of(w)),
                n("bounded_slowdown_mean"),
                n("backfilled_fraction"),
            ];
            rows.push((cells, values));
        }
    }
    let rows = super::table::number_rows(rows, &[WAIT_DECIMALS, WAIT_DECIMALS, 2, 3]);
    let n = rows.len();
    let listed = if most_clusters > MAX_TABLE_CLUSTERS {
        format!(
            " Only the {MAX_TABLE_CLUSTERS} clusters with the most jobs of each configuration are listed (of up to {most_clusters}; clusters.parquet has them all)."
        )
    } else {
        String::new()
    };
    section.tables.push(Table {
        caption: format!("Per configuration and cluster: capacity, utilization by resource (fractions; – where the cluster has none), and the measured jobs that ran there (waits in {}, bsld the bounded slowdown).{listed}", unit.plural()),
        headers: [
            "configuration",
            "cluster",
            "nodes",
            "cores",
            "memory (GiB)",
            "GPUs",
            "jobs",
            "cores used",
            "memory used",
            "GPUs used",
            &format!("mean wait ({})", unit.symbol()),
            &format!("p95 wait ({})", unit.symbol()),
            "mean bsld",
            "backfilled",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        text_columns: 2,
        folded: n > super::table::FOLD_ROWS,
    });
    infeasible(ctx, &configs, blind, section);
    for c in configs.iter().take(MAX_FINDINGS) {
        let clusters = clusters_of(&data.clusters, c);
        let total: f64 = clusters.iter().filter_map(|m| m.get("jobs")).sum();
        let all = clusters.len();
        let named = busiest(clusters, MAX_NAMED_CLUSTERS);
        let rest = all - named.len();
        let mut parts: Vec<String> = named
            .iter()
            .map(|m| {
                let jobs = m.get("jobs").unwrap_or(0.0);
                let share = if total > 0.0 {
                    100.0 * jobs / total
                } else {
                    0.0
                };
                let used: Vec<String> = RESOURCES
                    .iter()
                    .filter_map(|(col, words)| {
                        m.get(&format!("utilization_{col}"))
                            .map(|u| format!("{words} {}", percent(Some(u))))
                    })
                    .collect();
                let wait = m
                    .get("wait_mean")
                    .map_or(String::new(), |w| format!(", mean wait {}", unit.text(w)));
                format!(
                    "{} ran {} job{} ({share:.0} %) with {} used{wait}",
                    m.name,
                    fmt_scaled(Some(jobs), 1.0, 0),
                    if jobs == 1.0 { "" } else { "s" },
                    used.join(", ")
                )
            })
            .collect();
        if rest > 0 {
            let named_jobs: f64 = named.iter().filter_map(|m| m.get("jobs")).sum();
            let jobs = total - named_jobs;
            parts.push(format!(
                "the other {rest} clusters ran {} job{}",
                fmt_scaled(Some(jobs), 1.0, 0),
                if jobs == 1.0 { "" } else { "s" }
            ));
        }
        let never = c.estimate("skipped_too_large", 1.0).map_or(0.0, |e| e.mean);
        let tail = if never > 0.0 {
            let reasons: Vec<String> = reasons(shape)
                .iter()
                .filter_map(|r| {
                    let v = c.estimate(r, 1.0)?.mean;
                    (v > 0.0)
                        .then(|| format!("{} {}", fmt_scaled(Some(v), 1.0, 0), reason_words(r)))
                })
                .collect();
            format!(
                " {} job{} can never run ({}).",
                fmt_scaled(Some(never), 1.0, 0),
                if never == 1.0 { "" } else { "s" },
                reasons.join(", ")
            )
        } else {
            " Every job fits a cluster.".into()
        };
        section.findings.push(Finding {
            title: super::finding_label(shape, c, blind),
            text: format!("{}.{tail}", parts.join("; ")),
        });
    }
    let (drawn, unused) = resource_lines(data, &configs);
    if !unused.is_empty() {
        let names: Vec<String> = unused.iter().map(|&k| RESOURCES[k].1.to_string()).collect();
        section.intro.push(format!(
            "The charts leave out {}: no job held any in the configurations charted (the jobs request none, or the cells ignore it), so {} would lie flat at 0.",
            crate::report::text::list(&names),
            if unused.len() == 1 { "its line" } else { "their lines" }
        ));
    }
    let shown: Vec<String> = drawn.iter().map(|&k| RESOURCES[k].1.to_string()).collect();
    let shown = crate::report::text::list(&shown);
    for (i, c) in configs.iter().take(MAX_CHARTS).enumerate() {
        let Some(cell) = c.rows.first().map(|r| r.cell.as_str()) else {
            continue;
        };
        let Some(series) = data.cluster_series.get(cell) else {
            continue;
        };
        let origin = series
            .iter()
            .filter_map(|(_, s)| s.first().map(|p| p.0))
            .fold(f64::INFINITY, f64::min);
        let panels: Vec<Panel> = series
            .iter()
            .map(|(cluster, bins)| Panel {
                title: Some(cluster.clone()),
                series: RESOURCES
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !unused.contains(k))
                    .filter_map(|(k, (_, words))| {
                        let points: Vec<(f64, f64)> = bins
                            .iter()
                            .filter_map(|(t, v)| Some(((t - origin) / 86_400.0, v[k]?)))
                            .collect();
                        (!points.is_empty()).then(|| Series {
                            name: words.to_string(),
                            look: Look {
                                color: COLORS[k].to_string(),
                                dash: "",
                                marker: k,
                            },
                            draw: Draw::Plain,
                            points: charts::thin(points, MAX_POINTS)
                                .into_iter()
                                .map(|(x, y)| Point::new(x, y))
                                .collect(),
                        })
                    })
                    .collect(),
            })
            .collect();
        let name = label(shape, c, blind);
        let all = clusters_of(&data.clusters, c).len();
        let title = if all > series.len() {
            format!(
                "Utilization of the {} busiest of {all} clusters, by resource — {name}",
                series.len()
            )
        } else {
            format!("Utilization by cluster and resource — {name}")
        };
        let mut chart = LineChart::new(
            &title,
            charts::DAYS_SINCE_FIRST_BIN,
            "fraction of capacity (mean per bin)",
            panels,
        );
        chart.y_range = Some((0.0, 1.0));
        chart.x_axis = Scaling::Linear;
        chart.y_axis = Scaling::Linear;
        chart.legend_heading = Some("resource");
        section.charts.push(Chart {
            id: format!("clusters-{i}"),
            caption: format!(
                "Utilization of each cluster's {shown} over time, {name} (time-weighted mean per bin of cluster_timeseries.parquet{})",
                if c.rows.len() > 1 { ", first replica" } else { "" }
            ),
            svg: charts::line_chart(&chart),
        });
    }
}

/// The resources (indices into [`RESOURCES`]) the charts draw, and those beyond cores (memory,
/// GPUs) that some charted cluster has but no job held in any bin of any charted configuration:
/// lines flat at 0 that say nothing (issue 35: a trace without memory requests drew a zero
/// memory line per cluster in each of 12 charts), left out. A resource no cluster has has no
/// line anyway.
fn resource_lines(data: &data::ReportData, configs: &[&Config<'_>]) -> (Vec<usize>, Vec<usize>) {
    let bins: Vec<&[Option<f64>; 3]> = configs
        .iter()
        .take(MAX_CHARTS)
        .filter_map(|c| data.cluster_series.get(&c.rows.first()?.cell))
        .flatten()
        .flat_map(|(_, bins)| bins.iter().map(|(_, v)| v))
        .collect();
    let present = |k: usize| bins.iter().any(|v| v[k].is_some());
    let unused: Vec<usize> = (1..RESOURCES.len())
        .filter(|&k| present(k) && bins.iter().all(|v| v[k].is_none_or(|u| u == 0.0)))
        .collect();
    let drawn = (0..RESOURCES.len())
        .filter(|&k| present(k) && !unused.contains(&k))
        .collect();
    (drawn, unused)
}

/// The reason columns of the summary (`skipped_<reason>`; not their sum).
fn reasons(shape: &ResultShape) -> Vec<String> {
    shape
        .columns
        .iter()
        .filter(|c| c.starts_with("skipped_") && *c != "skipped_too_large")
        .cloned()
        .collect()
}

/// The table of jobs that can never run, with a column per reason that occurs.
fn infeasible(ctx: &Context<'_>, configs: &[&Config<'_>], blind: &[usize], section: &mut Section) {
    let mean = |c: &Config<'_>, col: &str| c.estimate(col, 1.0).map_or(0.0, |e| e.mean);
    let occurring: Vec<String> = reasons(&ctx.grid.shape)
        .into_iter()
        .filter(|r| configs.iter().any(|c| mean(c, r) > 0.0))
        .collect();
    if occurring.is_empty() {
        section
            .intro
            .push("Every job of every configuration fits some cluster.".into());
        return;
    }
    let mut headers = vec!["configuration".to_string(), "never run".to_string()];
    headers.extend(occurring.iter().map(|r| reason_words(r)));
    let rows: Vec<Vec<String>> = configs
        .iter()
        .map(|c| {
            let mut row = vec![
                label(&ctx.grid.shape, c, blind),
                fmt_scaled(Some(mean(c, "skipped_too_large")), 1.0, 0),
            ];
            row.extend(
                occurring
                    .iter()
                    .map(|r| fmt_scaled(Some(mean(c, r)), 1.0, 0)),
            );
            row
        })
        .collect();
    let n = rows.len();
    section.tables.push(Table {
        caption: "Jobs that no cluster can ever run, by reason (counted, never run; docs/outputs.md, skipped_*).".into(),
        headers,
        rows,
        text_columns: 1,
        folded: n > super::table::FOLD_ROWS,
    });
}
