//! The sweep views: every headline metric against every numeric axis (a line per level of
//! another axis, small multiples for the rest, replicate confidence bands, settings without a
//! value on the x axis as dashed reference lines), and — when no axis is numeric — grouped bars
//! by the primary axis. Grids too large to show whole are averaged over their largest axes —
//! except a numeric axis with a "without" level (no cap, every event): its levels are not
//! alike enough to average, so the chart shows that level only and the axis gets charts of its
//! own. The chart's title and caption say which: every grid gets charts, none silently
//! averaged.

use super::{Chart, Context, Family, Section, ViewKind, ViewSpec, slug};
use crate::report::charts::{
    self, Axis as Scaling, Bar, BarChart, BarSeries, Draw, LineChart, Panel, Point, Series,
};
use crate::report::metric::{self, Metric};
use crate::report::palette::{self, COLORS};
use crate::report::shape::{Config, Level, ResultShape};
use crate::report::svg::Look;
use crate::report::text;

/// Lines per panel, panels per chart and bar groups per chart that stay readable.
pub const MAX_LINES: usize = 8;
pub const MAX_PANELS: usize = 9;
pub const MAX_GROUPS: usize = 12;

pub struct Sweep;

/// Moves axes from `shown` to `averaged`, the one with most levels first (the primary axis and
/// then the workload last), until `count(shown)` is at most `max`.
fn fold_largest(
    shape: &ResultShape,
    shown: &mut Vec<usize>,
    averaged: &mut Vec<usize>,
    max: usize,
    count: impl Fn(&[usize]) -> usize,
    levels: impl Fn(usize) -> usize,
) {
    while count(shown) > max && !shown.is_empty() {
        let primary = shape.primary().map(|p| p.name.as_str());
        let pick = shown
            .iter()
            .copied()
            .max_by_key(|&i| {
                let name = shape.axes[i].name.as_str();
                (
                    name != "workload",
                    Some(name) != primary,
                    levels(i),
                    std::cmp::Reverse(i),
                )
            })
            .unwrap_or(shown[0]);
        shown.retain(|&i| i != pick);
        averaged.push(pick);
    }
    averaged.sort_unstable();
}

fn names(shape: &ResultShape, idx: &[usize]) -> Vec<String> {
    idx.iter().map(|&i| shape.axes[i].name.clone()).collect()
}

/// Where a chart against one axis puts the others.
struct Arrangement {
    lines: Option<usize>,
    panels: Vec<usize>,
    averaged: Vec<usize>,
    /// Numeric axes shown at their "without" level only.
    without: Vec<usize>,
}

/// Lines, panels and averaged axes of a chart against axis `xi`. Lines go to the primary axis
/// (the comparison the report is about) when the other axes then fit in panels, else to the
/// axis that makes them fit, preferring more levels; when none does, to the primary axis again
/// with the largest remaining axes averaged.
/// Axes in `held` (metric settings that cannot change the metric) are neither lines nor panels.
/// Of the axes that do not fit, a numeric one with a "without" level among the points (no cap)
/// is shown at that level only (`without`) rather than averaged: a mean of runs with and
/// without a cap is no setting anyone ran.
fn arrange(shape: &ResultShape, xi: usize, held: &[usize]) -> Arrangement {
    let present = |c: &[Level]| c[xi].number().is_some() && metric::at_first_levels(shape, held, c);
    let others: Vec<usize> = (0..shape.axes.len())
        .filter(|&i| i != xi && !held.contains(&i) && shape.levels_among(i, present).len() > 1)
        .collect();
    let count = |i: usize| shape.levels_among(i, present).len();
    let primary = shape
        .primary()
        .and_then(|p| shape.axis_index(&p.name))
        .filter(|p| others.contains(p) && count(*p) <= MAX_LINES);
    let mut candidates: Vec<usize> = others
        .iter()
        .copied()
        .filter(|&i| {
            shape.axes[i].name != "workload" && count(i) <= MAX_LINES && Some(i) != primary
        })
        .collect();
    candidates.sort_by_key(|&i| (std::cmp::Reverse(count(i)), shape.axes[i].numeric, i));
    candidates.splice(0..0, primary);
    let panels_for = |lines: Option<usize>| -> Vec<usize> {
        others
            .iter()
            .copied()
            .filter(|i| Some(*i) != lines)
            .collect()
    };
    let panel_count = |p: &[usize]| shape.combos_among(p, present).len();
    let lines = candidates
        .iter()
        .copied()
        .find(|&l| panel_count(&panels_for(Some(l))) <= MAX_PANELS)
        .or(primary)
        .or_else(|| candidates.first().copied());
    let mut panels = panels_for(lines);
    let mut averaged = Vec::new();
    fold_largest(
        shape,
        &mut panels,
        &mut averaged,
        MAX_PANELS,
        panel_count,
        count,
    );
    let (without, averaged) = averaged.into_iter().partition(|&i| {
        shape.axes[i].numeric
            && shape.axes[i].levels.first() == Some(&Level::None)
            && shape.levels_among(i, present).contains(&Level::None)
    });
    Arrangement {
        lines,
        panels,
        averaged,
        without,
    }
}

impl Family for Sweep {
    fn name(&self) -> &'static str {
        "sweep"
    }

    fn heading(&self) -> &'static str {
        "Metrics across the grid"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        let metrics = metric::headline_metrics(shape);
        let mut out = Vec::new();
        for (xi, x) in shape.axes.iter().enumerate().filter(|(_, a)| a.numeric) {
            // A metric setting is no x axis for the metrics it cannot change.
            for m in metrics
                .iter()
                .filter(|m| metric::can_change(&x.name, m.column))
            {
                let held = metric::blind_axes(shape, &[m.column]);
                let a = arrange(shape, xi, &held);
                out.push(ViewSpec {
                    family: self.name(),
                    kind: ViewKind::Against {
                        metric: m.column,
                        x: x.name.clone(),
                        lines: a.lines.map(|i| shape.axes[i].name.clone()),
                        panels: names(shape, &a.panels),
                        averaged: names(shape, &a.averaged),
                        without: names(shape, &a.without),
                        held: names(shape, &held),
                    },
                });
            }
        }
        if shape.numeric_axes().next().is_none() && shape.configs.len() > 1 {
            let colours = shape
                .primary()
                .and_then(|p| shape.axis_index(&p.name))
                .unwrap_or(0);
            for m in &metrics {
                let held = metric::blind_axes(shape, &[m.column]);
                let mut groups: Vec<usize> = (0..shape.axes.len())
                    .filter(|&i| i != colours && !held.contains(&i))
                    .collect();
                let mut averaged = Vec::new();
                fold_largest(
                    shape,
                    &mut groups,
                    &mut averaged,
                    MAX_GROUPS,
                    |g| shape.combos_among(g, |_| true).len(),
                    |i| shape.axes[i].levels.len(),
                );
                out.push(ViewSpec {
                    family: self.name(),
                    kind: ViewKind::Bars {
                        metric: m.column,
                        colours: Some(shape.axes[colours].name.clone()),
                        groups: names(shape, &groups),
                        averaged: names(shape, &averaged),
                        held: names(shape, &held),
                    },
                });
            }
        }
        out
    }

    fn build(&self, views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section) {
        let shape = &ctx.grid.shape;
        section.intro.extend(metric::blind_note(
            shape,
            &metric::headline_metrics(shape),
            "are not plotted against it",
        ));
        for v in views {
            let chart = match &v.kind {
                ViewKind::Against {
                    metric,
                    x,
                    lines,
                    panels,
                    averaged,
                    without,
                    held,
                } => metric::by_column(metric).and_then(|m| {
                    let layout = Layout {
                        lines: lines.as_deref(),
                        panels,
                        averaged,
                        without,
                        held,
                    };
                    against(ctx, &ctx.grid.shown(m), x, &layout)
                }),
                ViewKind::Bars {
                    metric,
                    colours,
                    groups,
                    averaged,
                    held,
                } => metric::by_column(metric).and_then(|m| {
                    let layout = Layout {
                        lines: colours.as_deref(),
                        panels: groups,
                        averaged,
                        without: &[],
                        held,
                    };
                    bars(ctx, &ctx.grid.shown(m), &layout)
                }),
                _ => None,
            };
            section.charts.extend(chart);
        }
    }
}

/// How a chart lays a metric out: lines (or bar colours), panels (or bar groups), the axes
/// averaged over, those shown at their "without" level only, and the metric settings held at
/// their first level.
struct Layout<'a> {
    lines: Option<&'a str>,
    panels: &'a [String],
    averaged: &'a [String],
    without: &'a [String],
    held: &'a [String],
}

impl Layout<'_> {
    fn held_indexes(&self, ctx: &Context<'_>) -> Vec<usize> {
        self.held.iter().filter_map(|h| index_of(ctx, h)).collect()
    }

    fn without_indexes(&self, ctx: &Context<'_>) -> Vec<usize> {
        self.without
            .iter()
            .filter_map(|h| index_of(ctx, h))
            .collect()
    }
}

/// What a chart shows of the axes it neither draws nor splits into panels, for its title and
/// the first sentence of its caption: " (no cap)", " (averaged over cap)", or nothing.
fn scope(shape: &ResultShape, without: &[usize], averaged: &[String]) -> String {
    let mut parts: Vec<String> = without
        .iter()
        .map(|&i| shape.axes[i].setting(&Level::None))
        .collect();
    let averaged: Vec<String> = averaged
        .iter()
        .filter_map(|a| shape.axis(a))
        .map(|a| a.short())
        .collect();
    if !averaged.is_empty() {
        parts.push(format!("averaged over {}", text::list(&averaged)));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

/// The caption's sentence on axes shown at their "without" level only.
fn without_note(shape: &ResultShape, without: &[usize]) -> String {
    without
        .iter()
        .map(|&i| {
            let a = &shape.axes[i];
            format!(
                " Shown at {} only, not averaged with the {} levels (the grid is too large to show every setting); the charts against {} show them.",
                a.value(&Level::None),
                a.short(),
                a.short()
            )
        })
        .collect()
}

/// A point from configurations: one gives its replicas' mean and 95 % interval; several (an
/// average over axes) give the mean of their means and their range.
pub fn aggregate(configs: &[&Config<'_>], m: &Metric) -> Option<(f64, Option<(f64, f64)>)> {
    let estimates: Vec<_> = configs
        .iter()
        .filter_map(|c| c.estimate(m.column, m.scale))
        .collect();
    match estimates.as_slice() {
        [] => None,
        [one] => Some((one.mean, one.interval().map(|b| m.clip(b)))),
        many => {
            let means: Vec<f64> = many.iter().map(|e| e.mean).collect();
            let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Some((
                means.iter().sum::<f64>() / means.len() as f64,
                Some((lo, hi)),
            ))
        }
    }
}

fn index_of(ctx: &Context<'_>, name: &str) -> Option<usize> {
    ctx.grid.shape.axis_index(name)
}

/// The caption's sentence on replicas and averaging.
pub fn uncertainty_note(shape: &ResultShape, averaged: &[String]) -> String {
    let mut note = if shape.replicas > 1 {
        format!(
            "Points are means of {} replicas; shaded bands and error bars are 95 % confidence intervals (absent where the replicas agree exactly).",
            text::whole(shape.replicas)
        )
    } else {
        "One run per configuration.".to_string()
    };
    if !averaged.is_empty() {
        let axes: Vec<String> = averaged
            .iter()
            .filter_map(|a| shape.axis(a))
            .map(|a| a.short())
            .collect();
        note.push_str(&format!(
            " Averaged over {} (the grid is too large to show every setting); bands show the range across them.",
            text::list(&axes)
        ));
    }
    note
}

/// The caption's sentence on metric settings held: " Expected capacity × does not change
/// mean wait: its levels give the same values (shown once)."
fn held_note(shape: &ResultShape, held: &[usize], m: &Metric) -> String {
    if held.is_empty() {
        return String::new();
    }
    let axes: Vec<String> = held.iter().map(|&i| shape.axes[i].short()).collect();
    format!(
        " {} cannot change {} (metric settings of other metrics): shown once, at {}.",
        text::capitalize(&text::list(&axes)),
        m.name,
        text::list(
            &held
                .iter()
                .map(|&i| shape.axes[i].describe(&shape.axes[i].levels[0]))
                .collect::<Vec<_>>()
        )
    )
}

/// A series' name and look: its level of the axis `axis` that tells the series apart, or, with
/// none, the metric itself in the first colour.
fn series_name_look(
    ctx: &Context<'_>,
    axis: Option<usize>,
    level: &Option<Level>,
    m: &Metric,
) -> (String, Look) {
    let shape = &ctx.grid.shape;
    match (axis, level) {
        (Some(i), Some(l)) => (shape.axes[i].value(l), ctx.palette.look(&shape.axes[i], l)),
        _ => (
            m.title(),
            Look {
                color: COLORS[0].to_string(),
                dash: "",
                marker: 0,
            },
        ),
    }
}

fn against(ctx: &Context<'_>, m: &Metric, x: &str, layout: &Layout<'_>) -> Option<Chart> {
    let shape = &ctx.grid.shape;
    let averaged = layout.averaged;
    let xi = index_of(ctx, x)?;
    let x_axis = &shape.axes[xi];
    let li = layout.lines.and_then(|l| index_of(ctx, l));
    let pis: Vec<usize> = layout
        .panels
        .iter()
        .filter_map(|p| index_of(ctx, p))
        .collect();
    let held = layout.held_indexes(ctx);
    let without = layout.without_indexes(ctx);
    // Held metric settings and "without" axes alike: at their first level (None first).
    let fixed: Vec<usize> = held.iter().chain(&without).copied().collect();
    let at_held = |c: &[Level]| metric::at_first_levels(shape, &fixed, c);
    let present = |c: &[Level]| c[xi].number().is_some() && at_held(c);
    let present_levels: Vec<Vec<Level>> = (0..shape.axes.len())
        .map(|i| shape.levels_among(i, present))
        .collect();
    let mut out_panels = Vec::new();
    let mut reference_names: Vec<String> = Vec::new();
    for combo in shape.combos_among(&pis, present) {
        let in_panel = |c: &[Level]| pis.iter().zip(&combo).all(|(&i, l)| &c[i] == l);
        let title = (!pis.is_empty()).then(|| {
            pis.iter()
                .zip(&combo)
                .map(|(&i, l)| shape.axes[i].setting(l))
                .collect::<Vec<_>>()
                .join(", ")
        });
        let line_levels: Vec<Option<Level>> = match li {
            Some(i) => shape
                .levels_among(i, |c| present(c) && in_panel(c))
                .into_iter()
                .map(Some)
                .collect(),
            None => vec![None],
        };
        let mut series = Vec::new();
        for level in &line_levels {
            let on_line = |c: &[Level]| match (li, level) {
                (Some(i), Some(l)) => &c[i] == l,
                _ => true,
            };
            let mut points = Vec::new();
            for xl in shape.levels_among(xi, |c| present(c) && in_panel(c) && on_line(c)) {
                let configs = ctx
                    .grid
                    .matching(|c| c[xi] == xl && at_held(c) && in_panel(c) && on_line(c));
                if let (Some(xv), Some((y, band))) = (xl.number(), aggregate(&configs, m)) {
                    points.push(Point { x: xv, y, band });
                }
            }
            let (name, look) = series_name_look(ctx, li, level, m);
            series.push(Series {
                name,
                look,
                draw: Draw::Line,
                points,
            });
        }
        // Settings without a value on the x axis that belong to this panel: dashed lines.
        let matches_panel = |c: &[Level]| {
            pis.iter()
                .zip(&combo)
                .all(|(&i, l)| &c[i] == l || !present_levels[i].contains(&c[i]))
        };
        let refs = ctx
            .grid
            .matching(|c| c[xi].number().is_none() && at_held(c) && matches_panel(c));
        let mut groups: Vec<(String, Look, Vec<&Config<'_>>)> = Vec::new();
        for config in refs {
            let distinct: Vec<String> = (0..shape.axes.len())
                .filter(|&i| i != xi && !fixed.contains(&i))
                .filter(|&i| !averaged.contains(&shape.axes[i].name))
                .filter(|&i| !present_levels[i].contains(&config.levels[i]))
                .map(|i| {
                    format!(
                        "{} {}",
                        shape.axes[i].short(),
                        shape.axes[i].value(&config.levels[i])
                    )
                })
                .collect();
            let (name, look) = if distinct.is_empty() {
                match li {
                    Some(i) => {
                        let l = &config.levels[i];
                        let mut look = ctx.palette.look(&shape.axes[i], l);
                        look.dash = "5 3";
                        (
                            format!("{}, {}", shape.axes[i].value(l), x_axis.value(&Level::None)),
                            look,
                        )
                    }
                    None => (x_axis.value(&Level::None), palette::reference(0)),
                }
            } else {
                let k = groups.iter().filter(|g| g.1.dash == "5 3").count();
                (distinct.join(", "), palette::reference(k))
            };
            match groups.iter_mut().find(|g| g.0 == name) {
                Some(g) => g.2.push(config),
                None => groups.push((name, look, vec![config])),
            }
        }
        for (name, look, configs) in groups {
            if let Some((y, band)) = aggregate(&configs, m) {
                if !reference_names.contains(&name) {
                    reference_names.push(name.clone());
                }
                series.push(Series {
                    name,
                    look,
                    draw: Draw::Reference,
                    points: vec![Point { x: 0.0, y, band }],
                });
            }
        }
        out_panels.push(Panel { title, series });
    }
    let xs: Vec<f64> = present_levels[xi]
        .iter()
        .filter_map(Level::number)
        .collect();
    let scope = scope(shape, &without, averaged);
    let title = format!("{} against {}{scope}", m.title(), x_axis.short());
    let (x_label, y_label) = (x_axis.label(), m.label());
    let mut chart = LineChart::new(&title, &x_label, &y_label, out_panels);
    let legend = li.map(|i| shape.axes[i].short());
    chart.legend_heading = legend.as_deref();
    if xs.len() <= 8 {
        let log = charts::use_log(Scaling::Auto, xs.iter().copied());
        // Ticks at the swept values; on a linear scale only when they are evenly readable.
        let texts = crate::report::svg::tick_labels(&xs);
        chart.x_ticks = Some(xs.iter().copied().zip(texts).collect());
        if !log {
            chart.x_axis = Scaling::Linear;
        }
    }
    let mut caption = format!("{} against {}{scope}", m.title(), x_axis.short());
    if let Some(i) = li {
        caption.push_str(&format!(", a line per {}", shape.axes[i].short()));
    }
    if !pis.is_empty() {
        let p: Vec<String> = pis.iter().map(|&i| shape.axes[i].short()).collect();
        caption.push_str(&format!(", a panel per {}", text::list(&p)));
    }
    caption.push_str(". ");
    caption.push_str(&uncertainty_note(shape, averaged));
    caption.push_str(&without_note(shape, &without));
    caption.push_str(&held_note(shape, &held, m));
    if !reference_names.is_empty() {
        caption.push_str(&format!(
            " Dashed: settings with no {} ({}).",
            x_axis.short(),
            reference_names.join("; ")
        ));
    }
    Some(Chart {
        id: slug(&format!("{}-vs-{}", m.column, x)),
        caption,
        svg: charts::line_chart(&chart),
    })
}

fn bars(ctx: &Context<'_>, m: &Metric, layout: &Layout<'_>) -> Option<Chart> {
    let shape = &ctx.grid.shape;
    let ci = layout.lines.and_then(|c| index_of(ctx, c));
    let gis: Vec<usize> = layout
        .panels
        .iter()
        .filter_map(|g| index_of(ctx, g))
        .collect();
    let held = layout.held_indexes(ctx);
    let at_held = |c: &[Level]| metric::at_first_levels(shape, &held, c);
    let combos = shape.combos_among(&gis, at_held);
    let group_labels: Vec<String> = combos
        .iter()
        .map(|combo| {
            let parts: Vec<String> = gis
                .iter()
                .zip(combo)
                .map(|(&i, l)| shape.axes[i].setting(l))
                .collect();
            if parts.is_empty() {
                "all".to_string()
            } else {
                parts.join(", ")
            }
        })
        .collect();
    let colour_levels: Vec<Option<Level>> = match ci {
        Some(i) => shape.axes[i].levels.iter().cloned().map(Some).collect(),
        None => vec![None],
    };
    let series: Vec<BarSeries> = colour_levels
        .iter()
        .map(|level| {
            let values = combos
                .iter()
                .map(|combo| {
                    let configs = ctx.grid.matching(|c| {
                        at_held(c)
                            && gis.iter().zip(combo).all(|(&i, l)| &c[i] == l)
                            && match (ci, level) {
                                (Some(i), Some(l)) => &c[i] == l,
                                _ => true,
                            }
                    });
                    aggregate(&configs, m).map(|(value, band)| Bar { value, band })
                })
                .collect();
            let (name, look) = series_name_look(ctx, ci, level, m);
            BarSeries { name, look, values }
        })
        .collect();
    let colour_name = ci.map(|i| shape.axes[i].short());
    let scope = scope(shape, &[], layout.averaged);
    let title = match &colour_name {
        Some(c) => format!("{} by {c}{scope}", m.title()),
        None => format!("{}{scope}", m.title()),
    };
    let chart = BarChart {
        title: &title,
        y_label: &m.label(),
        groups: group_labels,
        series,
        y_axis: Scaling::Auto,
        legend_heading: colour_name.as_deref(),
    };
    let svg = charts::bar_chart(&chart);
    let mut caption = title.clone();
    if !gis.is_empty() {
        let g: Vec<String> = gis.iter().map(|&i| shape.axes[i].short()).collect();
        caption.push_str(&format!(", grouped by {}", text::list(&g)));
    }
    caption.push_str(". ");
    if svg.contains("(log scale)") {
        caption.push_str("Log scale: the values span more than a decade. ");
    }
    caption.push_str(&uncertainty_note(shape, layout.averaged));
    caption.push_str(&held_note(shape, &held, m));
    Some(Chart {
        id: slug(&format!("{}-bars", m.column)),
        caption,
        svg,
    })
}
