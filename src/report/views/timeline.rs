//! Time series (utilization and queue length per bin) and per-job distributions (CDFs of wait
//! and bounded slowdown): a panel per workload, a line per configuration told apart by colour
//! (the primary axis) and dash (a second axis); axes beyond those two are held at the first
//! configuration's levels, so every grid gets readable lines. Replicas are averaged bin by bin
//! (series) or pooled (distributions).

use super::{Chart, Context, Family, Section, ViewKind, ViewSpec, slug};
use crate::report::charts::{self, Axis as Scaling, Draw, LineChart, Panel, Point, Series};
use crate::report::metric;
use crate::report::shape::{Config, Level, ResultShape};
use crate::report::text;

pub struct Timeline;

/// Lines per panel beyond which a second (dash) axis is not added.
const MAX_LINES: usize = 8;

/// (value, title, y label, file the value comes from)
const VALUES: [(&str, &str, &str, &str); 4] = [
    (
        "utilization",
        "Utilization over time",
        "fraction of capacity (mean per bin)",
        "timeseries.parquet",
    ),
    (
        "queue",
        "Queue length over time",
        "waiting jobs (mean per bin)",
        "timeseries.parquet",
    ),
    (
        "wait",
        "Distribution of waits",
        "fraction of jobs",
        "jobs.parquet",
    ),
    (
        "bounded_slowdown",
        "Distribution of bounded slowdowns",
        "fraction of jobs",
        "jobs.parquet",
    ),
];

impl Family for Timeline {
    fn name(&self) -> &'static str {
        "timeline"
    }

    fn heading(&self) -> &'static str {
        "Over time and per job"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        let panels = shape.axis("workload").map(|a| a.name.clone());
        VALUES
            .iter()
            .filter(|v| shape.files.contains(v.3))
            .map(|v| {
                // A metric setting that cannot change the value is neither colour, dash nor
                // held: its levels draw the same line (the first configuration's is drawn).
                let candidates: Vec<&crate::report::shape::Axis> = shape
                    .axes
                    .iter()
                    .filter(|a| a.name != "workload" && metric::can_change(&a.name, v.0))
                    .collect();
                let colour = shape
                    .primary()
                    .filter(|p| candidates.contains(p))
                    .or_else(|| candidates.first().copied());
                let colours = colour.map_or(1, |a| a.levels.len());
                let dash = candidates
                    .iter()
                    .copied()
                    .filter(|a| Some(*a) != colour)
                    .find(|a| a.levels.len() <= 4 && colours * a.levels.len() <= MAX_LINES);
                let held: Vec<String> = candidates
                    .iter()
                    .filter(|a| Some(**a) != colour && Some(**a) != dash)
                    .map(|a| a.name.clone())
                    .collect();
                ViewSpec {
                    family: self.name(),
                    kind: ViewKind::Lines {
                        value: v.0,
                        panels: panels.clone(),
                        colour: colour.map(|a| a.name.clone()),
                        dash: dash.map(|a| a.name.clone()),
                        held,
                    },
                }
            })
            .collect()
    }

    fn build(&self, views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section) {
        for v in views {
            if let ViewKind::Lines {
                value,
                panels,
                colour,
                dash,
                held,
            } = &v.kind
            {
                section.charts.extend(lines(
                    ctx,
                    value,
                    panels.as_deref(),
                    colour.as_deref(),
                    dash.as_deref(),
                    held,
                ));
            }
        }
    }
}

/// The empirical CDF of `values` at 200 quantiles, values clamped up to `floor` (so zeros sit
/// at the left edge of a log axis).
fn cdf(mut values: Vec<f64>, floor: f64) -> Vec<Point> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return Vec::new();
    }
    let mut out: Vec<Point> = (0..=200)
        .map(|q| {
            let i = ((q as f64 / 200.0) * (n - 1) as f64).round() as usize;
            // Fraction of jobs at or below this value (ties included).
            let v = values[i];
            let upto = values.partition_point(|x| *x <= v);
            Point::new(v.max(floor), upto as f64 / n as f64)
        })
        .collect();
    out.dedup_by(|a, b| a.x == b.x && a.y == b.y);
    out
}

fn lines(
    ctx: &Context<'_>,
    value: &str,
    panels: Option<&str>,
    colour: Option<&str>,
    dash: Option<&str>,
    held: &[String],
) -> Option<Chart> {
    let shape = &ctx.grid.shape;
    let (_, title, y_label, _) = *VALUES.iter().find(|v| v.0 == value)?;
    let pi = panels.and_then(|p| shape.axis_index(p));
    let ci = colour.and_then(|c| shape.axis_index(c));
    let di = dash.and_then(|d| shape.axis_index(d));
    let hi: Vec<usize> = held.iter().filter_map(|h| shape.axis_index(h)).collect();
    let panel_levels: Vec<Option<Level>> = match pi {
        Some(i) => shape.axes[i].levels.iter().cloned().map(Some).collect(),
        None => vec![None],
    };
    let mut held_text: Vec<String> = Vec::new();
    let mut out_panels = Vec::new();
    for pl in &panel_levels {
        let in_panel = |c: &Config<'_>| match (pi, pl) {
            (Some(i), Some(l)) => &c.levels[i] == l,
            _ => true,
        };
        // One line per (colour, dash) pair: its first configuration in grid order; held axes
        // are named on the line when the chosen configurations differ on them.
        let mut chosen: Vec<&Config<'_>> = Vec::new();
        for c in ctx.grid.configs.iter().filter(|c| in_panel(c)) {
            let same = |o: &&Config<'_>| {
                ci.is_none_or(|i| o.levels[i] == c.levels[i])
                    && di.is_none_or(|i| o.levels[i] == c.levels[i])
            };
            if !chosen.iter().any(same) {
                chosen.push(c);
            }
        }
        let varying_held: Vec<usize> = hi
            .iter()
            .copied()
            .filter(|&i| chosen.iter().any(|c| c.levels[i] != chosen[0].levels[i]))
            .collect();
        for &i in &hi {
            if varying_held.contains(&i) {
                continue;
            }
            if let Some(c) = chosen.first() {
                let t = shape.axes[i].setting(&c.levels[i]);
                if !held_text.contains(&t) {
                    held_text.push(t);
                }
            }
        }
        let mut series = Vec::new();
        for c in chosen {
            let colour_level = ci.map(|i| (&shape.axes[i], &c.levels[i]));
            let dash_level = di.map(|i| (&shape.axes[i], &c.levels[i]));
            let look = ctx.palette.look_with_dash(colour_level, dash_level);
            let mut name: Vec<String> = Vec::new();
            if let Some((a, l)) = colour_level {
                name.push(a.value(l));
            }
            if let Some((a, l)) = dash_level {
                name.push(a.describe(l));
            }
            for &i in &varying_held {
                name.push(shape.axes[i].setting(&c.levels[i]));
            }
            if name.is_empty() {
                name.push(c.text("workload"));
            }
            let cells: Vec<&str> = c.rows.iter().map(|r| r.cell.as_str()).collect();
            let points = match value {
                "utilization" | "queue" => {
                    let mut sums: Vec<(f64, f64, usize)> = Vec::new();
                    for cell in &cells {
                        let Some(s) = ctx.data.series.get(*cell) else {
                            continue;
                        };
                        for (k, b) in s.bins.iter().enumerate() {
                            let v = if value == "queue" { b.2 } else { b.1 };
                            match sums.get_mut(k) {
                                Some(e) => {
                                    e.1 += v;
                                    e.2 += 1;
                                }
                                None => sums.push((b.0, v, 1)),
                            }
                        }
                    }
                    let pts: Vec<(f64, f64)> = sums
                        .iter()
                        .map(|(t, v, n)| (t / 86_400.0, v / *n as f64))
                        .collect();
                    charts::thin(pts, 150)
                        .into_iter()
                        .map(|(x, y)| Point::new(x, y))
                        .collect()
                }
                _ => {
                    let mut all = Vec::new();
                    for cell in &cells {
                        if let Some(s) = ctx.data.series.get(*cell) {
                            if value == "wait" {
                                all.extend(s.waits.iter().map(|&w| ctx.grid.waits.of(w)));
                            } else {
                                all.extend(s.bounded_slowdowns.iter().copied());
                            }
                        }
                    }
                    cdf(
                        all,
                        if value == "wait" {
                            ctx.grid.waits.of(60.0)
                        } else {
                            1.0
                        },
                    )
                }
            };
            series.push(Series {
                name: name.join(", "),
                look,
                draw: Draw::Plain,
                points,
            });
        }
        out_panels.push(Panel {
            title: match (pi, pl) {
                (Some(i), Some(l)) => Some(shape.axes[i].describe(l)),
                _ => None,
            },
            series,
        });
    }
    let (x_label, x_axis, y_range, note) = match value {
        "utilization" => (
            charts::DAYS_SINCE_FIRST_BIN.to_string(),
            Scaling::Linear,
            Some((0.0, 1.0)),
            "Each bin is a metrics.timeseries_step; lines are thinned to at most 150 points by averaging neighbouring bins.",
        ),
        "queue" => (
            charts::DAYS_SINCE_FIRST_BIN.to_string(),
            Scaling::Linear,
            None,
            "Each bin is a metrics.timeseries_step; lines are thinned to at most 150 points by averaging neighbouring bins.",
        ),
        "wait" => (
            format!("wait ({})", ctx.grid.waits.plural()),
            Scaling::Log,
            Some((0.0, 1.0)),
            "Jobs that waited under a minute sit at the left edge.",
        ),
        _ => (
            "bounded slowdown".to_string(),
            Scaling::Log,
            Some((0.0, 1.0)),
            "Jobs with a bounded slowdown of 1 (no delay that counts) sit at the left edge.",
        ),
    };
    let legend: Vec<String> = ci
        .iter()
        .chain(di.iter())
        .map(|&i| shape.axes[i].short())
        .collect();
    let legend_heading = (!legend.is_empty()).then(|| legend.join(" / "));
    let over_time = value == "utilization" || value == "queue";
    if over_time {
        charts::from_first_bin(&mut out_panels, true);
    }
    let mut chart = LineChart::new(title, &x_label, y_label, out_panels);
    chart.x_axis = x_axis;
    chart.y_axis = Scaling::Linear;
    chart.y_range = y_range;
    chart.per_panel_x = over_time;
    chart.legend_heading = legend_heading.as_deref();
    let mut caption = title.to_string();
    if pi.is_some() {
        caption.push_str(", a panel per workload");
    }
    caption.push_str(". ");
    if shape.replicas > 1 {
        caption.push_str(if matches!(value, "utilization" | "queue") {
            "Replicas averaged bin by bin. "
        } else {
            "Replicas' jobs pooled. "
        });
    }
    caption.push_str(note);
    if !held_text.is_empty() {
        caption.push_str(&format!(
            " Shown for {} only (the grid has more settings than lines can tell apart).",
            text::list(&held_text)
        ));
    }
    // Metric settings that cannot change the value: every level draws the same line.
    let blind: Vec<usize> = (0..shape.axes.len())
        .filter(|&i| !metric::can_change(&shape.axes[i].name, value))
        .collect();
    if let Some(names) = metric::settings_named(shape, &blind) {
        caption.push_str(&format!(
            " The same at every level of {names}: a metric setting, which cannot change it."
        ));
    }
    Some(Chart {
        id: slug(&format!("{value}-lines")),
        caption,
        svg: charts::line_chart(&chart),
    })
}
