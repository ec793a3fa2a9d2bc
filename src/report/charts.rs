//! The report's chart types as SVG strings (pure): line charts in one or more panels (small
//! multiples) with markers, confidence bands and horizontal reference lines, and grouped bar
//! charts with a log scale when values span more than a decade. Layout is computed from the
//! text it has to hold, so titles, legends and labels fit and the plots use the frame.

use std::fmt::Write;

use super::svg::{self, Entry, LABEL_SIZE, Look, Scale, Swatch, TICK_SIZE, WIDTH};

/// The x label of time-series charts over the run: days counted from the chart's first bin (or
/// each panel's, for panels of different traces), never raw trace seconds — a trace keeping
/// Unix times would otherwise read "day 15,720" (docs/reports.md, "One time axis").
pub const DAYS_SINCE_FIRST_BIN: &str = "days since the first bin";

/// Shifts every point's x so that the earliest point of the chart (of each panel when
/// `per_panel`) is 0: x values in days since the first bin ([`DAYS_SINCE_FIRST_BIN`]).
pub fn from_first_bin(panels: &mut [Panel], per_panel: bool) {
    let earliest = |panels: &[Panel]| {
        panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| &s.points)
            .map(|p| p.x)
            .fold(f64::INFINITY, f64::min)
    };
    let shift = |panels: &mut [Panel], origin: f64| {
        if !origin.is_finite() {
            return;
        }
        for point in panels
            .iter_mut()
            .flat_map(|p| &mut p.series)
            .flat_map(|s| &mut s.points)
        {
            point.x -= origin;
        }
    };
    if per_panel {
        for k in 0..panels.len() {
            let origin = earliest(&panels[k..=k]);
            shift(&mut panels[k..=k], origin);
        }
    } else {
        let origin = earliest(panels);
        shift(panels, origin);
    }
}

/// Averages consecutive points so a line has at most `max` points.
pub fn thin(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points;
    }
    let k = points.len().div_ceil(max);
    points
        .chunks(k)
        .map(|c| (c[0].0, c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64))
        .collect()
}

/// A point of a series, with an optional confidence band (low, high) around y.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub band: Option<(f64, f64)>,
}

impl Point {
    pub fn new(x: f64, y: f64) -> Point {
        Point { x, y, band: None }
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Draw {
    /// Points joined by a line, with markers.
    Line,
    /// A line without markers (time series, distributions).
    Plain,
    /// Markers only: points that do not form a trend.
    Scatter,
    /// A horizontal line at the first point's y across the panel (a setting without a value
    /// on the x axis, such as a baseline).
    Reference,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub look: Look,
    pub draw: Draw,
    pub points: Vec<Point>,
}

#[derive(Clone, Debug, Default)]
pub struct Panel {
    pub title: Option<String>,
    pub series: Vec<Series>,
}

/// Linear, logarithmic, or logarithmic when the positive values span `AUTO_LOG_RATIO` or more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    Linear,
    Log,
    Auto,
}

/// Values spanning this ratio or more get a log scale under `Axis::Auto`.
pub const AUTO_LOG_RATIO: f64 = 10.0;

/// Whether `values` call for a log scale under `axis`.
pub fn use_log(axis: Axis, values: impl Iterator<Item = f64>) -> bool {
    match axis {
        Axis::Linear => false,
        Axis::Log => true,
        Axis::Auto => {
            let (mut lo, mut hi, mut any) = (f64::INFINITY, 0.0f64, false);
            for v in values {
                // Zero, negative or NaN: no log scale.
                if v.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    return false;
                }
                any = true;
                lo = lo.min(v);
                hi = hi.max(v);
            }
            any && hi / lo > AUTO_LOG_RATIO
        }
    }
}

pub struct LineChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub panels: Vec<Panel>,
    pub x_axis: Axis,
    pub y_axis: Axis,
    /// Fixed y range (e.g. 0–1 for fractions).
    pub y_range: Option<(f64, f64)>,
    /// Fixed x range.
    pub x_range: Option<(f64, f64)>,
    /// What the legend's colours stand for (e.g. "scheduler").
    pub legend_heading: Option<&'a str>,
    /// Custom x tick labels (value → text), e.g. dates.
    pub x_ticks: Option<Vec<(f64, String)>>,
    /// Each panel spans its own x range (panels of different traces' timelines).
    pub per_panel_x: bool,
}

impl<'a> LineChart<'a> {
    pub fn new(title: &'a str, x_label: &'a str, y_label: &'a str, panels: Vec<Panel>) -> Self {
        LineChart {
            title,
            x_label,
            y_label,
            panels,
            x_axis: Axis::Auto,
            y_axis: Axis::Auto,
            y_range: None,
            x_range: None,
            legend_heading: None,
            x_ticks: None,
            per_panel_x: false,
        }
    }
}

/// Columns of a grid of `n` panels.
fn columns(n: usize) -> usize {
    match n {
        0 | 1 => 1,
        2 | 4 => 2,
        _ => 3,
    }
}

/// Height of a panel's plot area for a grid of `cols` columns.
fn plot_height(cols: usize) -> f64 {
    match cols {
        1 => 260.0,
        2 => 190.0,
        _ => 150.0,
    }
}

/// Unique legend entries of the series: lines in their levels' order (marker index), then
/// reference lines, whichever panel they first appear in.
fn legend_entries(panels: &[Panel]) -> Vec<Entry> {
    let mut series: Vec<&Series> = panels.iter().flat_map(|p| &p.series).collect();
    series.sort_by_key(|s| (s.draw == Draw::Reference, s.look.marker));
    let mut out: Vec<Entry> = Vec::new();
    for s in series {
        if out.iter().any(|e| e.name == s.name && e.look == s.look) {
            continue;
        }
        out.push(Entry {
            look: s.look.clone(),
            swatch: match s.draw {
                Draw::Line => Swatch::Line,
                Draw::Plain | Draw::Reference => Swatch::Plain,
                Draw::Scatter => Swatch::Marker,
            },
            name: s.name.clone(),
        });
    }
    out
}

/// The y range of data values `ys`: from zero when the values are non-negative and their
/// minimum is under a third of the maximum, else tight; widened to round ticks. Values that are
/// all equal (one point, or a flat series) have no spread to show, so the axis runs from zero to
/// just past them — 0…1 when they are all zero (a fraction backfilled where nothing was), 0…6
/// for fives — or, when they are negative, from just below them to zero. A non-negative series
/// never gets a negative axis.
fn y_bounds(ys: &[f64], log: bool) -> (f64, f64) {
    let (lo, hi) = ys
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    if !lo.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        let (a, b) = (lo.log10().floor(), hi.log10().ceil());
        return (10f64.powf(a), 10f64.powf(if b > a { b } else { a + 1.0 }));
    }
    let lo = if lo >= 0.0 && lo <= hi / 3.0 { 0.0 } else { lo };
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        return if hi == 0.0 {
            (0.0, 1.0)
        } else if hi > 0.0 {
            svg::nice_bounds(0.0, hi * 1.1)
        } else {
            svg::nice_bounds(lo * 1.1, 0.0)
        };
    }
    let pad = (hi - lo) * 0.04;
    svg::nice_bounds(if lo == 0.0 { 0.0 } else { lo - pad }, hi + pad)
}

fn x_bounds(xs: &[f64], log: bool) -> (f64, f64) {
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi <= lo {
        // One x: centred in a range that does not cross zero (0.5 in 0.25…0.75, not −0.5…1.5).
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() / 2.0 };
        return if log {
            (lo / 2.0, lo * 2.0)
        } else {
            (lo - pad, lo + pad)
        };
    }
    (lo, hi)
}

/// The width of the widest tick label of a y axis over [lo, hi], to size the margin left of it.
fn widest_tick_label(lo: f64, hi: f64, log: bool) -> f64 {
    let probe = Scale {
        lo,
        hi,
        log,
        from: 0.0,
        to: 1.0,
    };
    svg::tick_labels(&probe.ticks())
        .iter()
        .map(|t| svg::text_width(t, TICK_SIZE))
        .fold(0.0, f64::max)
}

/// Draws the axes, grid lines and tick labels of a plot area.
fn axes(out: &mut String, x: &Scale, y: &Scale, x_ticks: Option<&[(f64, String)]>) {
    let (left, right) = (x.from.min(x.to) - 8.0, x.from.max(x.to) + 8.0);
    let (top, bottom) = (y.to, y.from);
    let y_ticks = y.ticks();
    for (&t, text) in y_ticks.iter().zip(svg::tick_labels(&y_ticks)) {
        let py = y.map(t);
        let _ = write!(
            out,
            r##"<line x1="{left:.1}" y1="{py:.1}" x2="{right:.1}" y2="{py:.1}" stroke="#e3e3e3"/>"##
        );
        svg::text(out, left - 5.0, py + 4.0, TICK_SIZE, "end", &text);
    }
    let owned: Vec<(f64, String)>;
    let ticks: &[(f64, String)] = match x_ticks {
        Some(t) => t,
        None => {
            let values = x.ticks();
            let texts = svg::tick_labels(&values);
            owned = values.into_iter().zip(texts).collect();
            &owned
        }
    };
    // Leave out tick labels that would overlap the previous one.
    let mut last_end = f64::NEG_INFINITY;
    for (t, text) in ticks {
        let px = x.map(*t);
        if px < left - 0.5 || px > right + 0.5 {
            continue;
        }
        let w = svg::text_width(text, TICK_SIZE);
        let _ = write!(
            out,
            r#"<line x1="{px:.1}" y1="{bottom:.1}" x2="{px:.1}" y2="{:.1}" stroke="black"/>"#,
            bottom + 4.0
        );
        if px - w / 2.0 > last_end + 4.0 {
            svg::text(out, px, bottom + 15.0, TICK_SIZE, "middle", text);
            last_end = px + w / 2.0;
        }
    }
    let _ = write!(
        out,
        r#"<path d="M{left:.1},{top:.1} L{left:.1},{bottom:.1} L{right:.1},{bottom:.1}" fill="none" stroke="black"/>"#
    );
}

fn draw_series(out: &mut String, s: &Series, x: &Scale, y: &Scale) {
    let color = &s.look.color;
    // Bands and error bars stop at the frame.
    let (top, bottom) = (y.from.min(y.to), y.from.max(y.to));
    let band_y = |v: f64| y.map(v).clamp(top, bottom);
    let mut pts: Vec<Point> = s
        .points
        .iter()
        .copied()
        .filter(|p| p.y.is_finite() && p.x.is_finite())
        .collect();
    if s.draw != Draw::Plain {
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    if s.draw == Draw::Reference {
        let Some(p) = pts.first() else { return };
        let (x0, x1) = (x.from.min(x.to) - 8.0, x.from.max(x.to) + 8.0);
        let py = y.map(p.y);
        if let Some((lo, hi)) = p.band {
            let (a, b) = (band_y(hi), band_y(lo));
            let _ = write!(
                out,
                r#"<rect x="{x0:.1}" y="{a:.1}" width="{:.1}" height="{:.1}" fill="{color}" fill-opacity="0.12"/>"#,
                x1 - x0,
                (b - a).max(0.0)
            );
        }
        let _ = write!(
            out,
            r#"<line x1="{x0:.1}" y1="{py:.1}" x2="{x1:.1}" y2="{py:.1}" stroke="{color}" stroke-width="1.6" stroke-dasharray="{}"/>"#,
            if s.look.dash.is_empty() {
                "5 3"
            } else {
                s.look.dash
            }
        );
        return;
    }
    // Confidence band: a polygon for a line, an error bar for lone points and scatters.
    let banded: Vec<&Point> = pts.iter().filter(|p| p.band.is_some()).collect();
    if s.draw == Draw::Line && banded.len() >= 2 && banded.len() == pts.len() {
        let mut d = String::new();
        for (i, p) in banded.iter().enumerate() {
            let (_, hi) = p.band.unwrap_or((p.y, p.y));
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { " L" },
                x.map(p.x),
                band_y(hi)
            );
        }
        for p in banded.iter().rev() {
            let (lo, _) = p.band.unwrap_or((p.y, p.y));
            let _ = write!(d, " L{:.1},{:.1}", x.map(p.x), band_y(lo));
        }
        let _ = write!(
            out,
            r#"<path d="{d} Z" fill="{color}" fill-opacity="0.16" stroke="none"/>"#
        );
    } else {
        for p in &banded {
            let (lo, hi) = p.band.unwrap_or((p.y, p.y));
            let px = x.map(p.x);
            let (a, b) = (band_y(hi), band_y(lo));
            let _ = write!(
                out,
                r#"<path d="M{:.1},{a:.1} L{:.1},{a:.1} M{px:.1},{a:.1} L{px:.1},{b:.1} M{:.1},{b:.1} L{:.1},{b:.1}" stroke="{color}" fill="none"/>"#,
                px - 3.0,
                px + 3.0,
                px - 3.0,
                px + 3.0
            );
        }
    }
    if matches!(s.draw, Draw::Line | Draw::Plain) && pts.len() > 1 {
        let mut d = String::new();
        for (i, p) in pts.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { " L" },
                x.map(p.x),
                y.map(p.y)
            );
        }
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{color}" stroke-width="{}" stroke-dasharray="{}"/>"#,
            if s.draw == Draw::Plain { 1.4 } else { 1.8 },
            s.look.dash
        );
    }
    if matches!(s.draw, Draw::Line | Draw::Scatter) || pts.len() == 1 {
        for p in &pts {
            let mut m = String::new();
            svg::marker(&mut m, s.look.marker, x.map(p.x), y.map(p.y), color);
            // The value on hover.
            let _ = write!(
                out,
                "<g>{m}<title>{}: {}</title></g>",
                svg::escape(&s.name),
                svg::value_label(p.y)
            );
        }
    }
}

/// A line chart: one panel, or a grid of panels sharing the legend (small multiples). Panels
/// share the y scale when their ranges are alike (maxima within a factor of 5), else each has
/// its own.
pub fn line_chart(c: &LineChart<'_>) -> String {
    let mut out = String::new();
    let n = c.panels.len().max(1);
    let cols = columns(n);
    let rows = n.div_ceil(cols);
    let panel_w = (WIDTH - 30.0) / cols as f64;
    let ph = plot_height(cols);
    // Panel titles wrap to as many lines as the longest needs: never cut short, so every
    // panel says which setting it holds.
    let title_lines: Vec<Vec<String>> = c
        .panels
        .iter()
        .map(|p| {
            p.title.as_deref().map_or_else(Vec::new, |t| {
                svg::wrap(t, panel_w - 8.0, LABEL_SIZE * svg::BOLD)
            })
        })
        .collect();
    let title_rows = title_lines.iter().map(Vec::len).max().unwrap_or(0);
    let title_h = if title_rows > 0 {
        4.0 + 14.0 * title_rows as f64
    } else {
        0.0
    };
    let panel_h = ph + title_h + 32.0;

    let all_x: Vec<f64> = c
        .panels
        .iter()
        .flat_map(|p| &p.series)
        .filter(|s| s.draw != Draw::Reference)
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .filter(|v| v.is_finite())
        .collect();
    let x_log = use_log(c.x_axis, all_x.iter().copied());
    let (x0, x1) = c.x_range.unwrap_or_else(|| x_bounds(&all_x, x_log));
    // The scale follows the points; bands are clipped at the frame (on a log scale their lower
    // ends do not stretch it: a wide interval would squash the points into the top).
    let point_ys = c
        .panels
        .iter()
        .flat_map(|p| &p.series)
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .filter(|v| v.is_finite());
    let y_log = c.y_range.is_none() && use_log(c.y_axis, point_ys);
    let panel_ys = |p: &Panel| -> Vec<f64> {
        p.series
            .iter()
            .flat_map(|s| {
                s.points.iter().flat_map(|p| {
                    let (lo, hi) = p.band.unwrap_or((p.y, p.y));
                    [p.y, if y_log { p.y } else { lo }, hi]
                })
            })
            .filter(|v| v.is_finite() && (!y_log || *v > 0.0))
            .collect()
    };
    let all_y: Vec<f64> = c.panels.iter().flat_map(panel_ys).collect();
    let maxima: Vec<f64> = c
        .panels
        .iter()
        .map(|p| panel_ys(p).into_iter().fold(f64::NEG_INFINITY, f64::max))
        .filter(|m| m.is_finite() && *m > 0.0)
        .collect();
    let alike = maxima.is_empty()
        || maxima.iter().copied().fold(0.0, f64::max)
            <= 5.0 * maxima.iter().copied().fold(f64::INFINITY, f64::min);
    let shared = c.y_range.or_else(|| alike.then(|| y_bounds(&all_y, y_log)));

    // Header: title and legend, measured first so the SVG's height is known.
    let mut head = String::new();
    let mut h = svg::title(&mut head, c.title);
    h += svg::legend(&mut head, c.legend_heading, &legend_entries(&c.panels), h);
    let top = h + 6.0;
    let height = top + rows as f64 * panel_h + 22.0;
    svg::open(&mut out, c.title, height);
    out.push_str(&head);

    for (i, panel) in c.panels.iter().enumerate() {
        let (col, row) = ((i % cols) as f64, (i / cols) as f64);
        let px0 = 24.0 + col * panel_w;
        let py0 = top + row * panel_h;
        let (ylo, yhi) = shared.unwrap_or_else(|| y_bounds(&panel_ys(panel), y_log));
        let label_w = widest_tick_label(ylo, yhi, y_log);
        for (k, line) in title_lines[i].iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="{LABEL_SIZE}" font-weight="bold" text-anchor="middle">{}</text>"#,
                px0 + panel_w / 2.0,
                py0 + 12.0 + 14.0 * k as f64,
                svg::escape(line)
            );
        }
        let left = px0 + label_w + 16.0;
        let right = px0 + panel_w - 14.0;
        let (x0, x1) = if c.per_panel_x && c.x_range.is_none() {
            let xs: Vec<f64> = panel
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.x))
                .filter(|v| v.is_finite())
                .collect();
            x_bounds(&xs, x_log)
        } else {
            (x0, x1)
        };
        let x = Scale {
            lo: x0,
            hi: x1,
            log: x_log,
            from: left + 8.0,
            to: right - 8.0,
        };
        let y = Scale {
            lo: ylo,
            hi: yhi,
            log: y_log,
            from: py0 + title_h + ph,
            to: py0 + title_h + 4.0,
        };
        axes(&mut out, &x, &y, c.x_ticks.as_deref());
        for s in &panel.series {
            draw_series(&mut out, s, &x, &y);
        }
    }
    // Shared axis labels: y rotated on the left, x under the grid.
    let plot_mid = top + (rows as f64 * panel_h) / 2.0;
    let y_label = svg::fit(c.y_label, rows as f64 * panel_h - 10.0, LABEL_SIZE);
    let _ = write!(
        out,
        r#"<text transform="translate(13 {plot_mid:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        svg::escape(&format!(
            "{y_label}{}",
            if y_log { " (log scale)" } else { "" }
        ))
    );
    svg::text(
        &mut out,
        WIDTH / 2.0,
        height - 6.0,
        LABEL_SIZE,
        "middle",
        &format!("{}{}", c.x_label, if x_log { " (log scale)" } else { "" }),
    );
    svg::close(&mut out);
    out
}

/// One bar value with an optional confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    pub value: f64,
    pub band: Option<(f64, f64)>,
}

#[derive(Clone, Debug)]
pub struct BarSeries {
    pub name: String,
    pub look: Look,
    /// One value per group.
    pub values: Vec<Option<Bar>>,
}

pub struct BarChart<'a> {
    pub title: &'a str,
    pub y_label: &'a str,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
    pub y_axis: Axis,
    pub legend_heading: Option<&'a str>,
}

/// Grouped bars: one group per entry of `groups`, one bar per series in each, with the value
/// written on the bar when it fits and the confidence interval as an error bar. A log scale
/// (under `Axis::Auto`) when the values span more than a decade, so small bars stay visible.
pub fn bar_chart(c: &BarChart<'_>) -> String {
    let values: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .flat_map(|b| {
            let (lo, hi) = b.band.unwrap_or((b.value, b.value));
            [b.value, lo, hi]
        })
        .filter(|v| v.is_finite())
        .collect();
    let log = use_log(
        c.y_axis,
        c.series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .map(|b| b.value),
    );
    let values: Vec<f64> = values.into_iter().filter(|v| !log || *v > 0.0).collect();
    let (ylo, yhi) = if log {
        y_bounds(&values, true)
    } else {
        // Bars are lengths: a linear scale starts at zero.
        let mut with_zero = values.clone();
        with_zero.push(0.0);
        y_bounds(&with_zero, false)
    };
    let entries: Vec<Entry> = c
        .series
        .iter()
        .map(|s| Entry {
            look: s.look.clone(),
            swatch: Swatch::Box,
            name: s.name.clone(),
        })
        .collect();
    let mut head = String::new();
    let mut h = svg::title(&mut head, c.title);
    h += svg::legend(&mut head, c.legend_heading, &entries, h);
    let label_w = widest_tick_label(ylo, yhi, log);
    let left = 28.0 + label_w + 10.0;
    let right = WIDTH - 12.0;
    let n_groups = c.groups.len().max(1);
    let group_w = (right - left) / n_groups as f64;
    let group_lines: Vec<Vec<String>> = c
        .groups
        .iter()
        .map(|g| svg::wrap(g, group_w - 6.0, TICK_SIZE))
        .collect();
    let label_rows = group_lines.iter().map(Vec::len).max().unwrap_or(1) as f64;
    let top = h + 8.0;
    let plot_h = 260.0;
    let bottom = top + plot_h;
    let height = bottom + 8.0 + label_rows * 13.0 + 8.0;
    let mut out = String::new();
    svg::open(&mut out, c.title, height);
    out.push_str(&head);
    let y = Scale {
        lo: ylo,
        hi: yhi,
        log,
        from: bottom,
        to: top,
    };
    let x = Scale {
        lo: 0.0,
        hi: 1.0,
        log: false,
        from: left + 8.0,
        to: right - 8.0,
    };
    // Value axis only: the groups are labelled below.
    axes(&mut out, &x, &y, Some(&[]));
    for (g, lines) in group_lines.iter().enumerate() {
        for (k, line) in lines.iter().enumerate() {
            svg::text(
                &mut out,
                left + group_w * (g as f64 + 0.5),
                bottom + 15.0 + 13.0 * k as f64,
                TICK_SIZE,
                "middle",
                line,
            );
        }
    }
    let n_series = c.series.len().max(1);
    let bar_w = (group_w * 0.84 / n_series as f64).min(60.0);
    let base = y.map(ylo);
    for (s, series) in c.series.iter().enumerate() {
        let color = &series.look.color;
        for (g, bar) in series.values.iter().enumerate() {
            let Some(bar) = bar else { continue };
            let cx = left
                + group_w * (g as f64 + 0.5)
                + bar_w * (s as f64 - (n_series as f64 - 1.0) / 2.0);
            let top_y = y.map(bar.value.max(if log { ylo } else { f64::NEG_INFINITY }));
            let light = if series.look.dash.is_empty() {
                String::new()
            } else {
                format!(r#" fill-opacity="0.4" stroke="{color}" stroke-width="1.5""#)
            };
            let _ = write!(
                out,
                r#"<rect x="{:.1}" y="{top_y:.1}" width="{:.1}" height="{:.1}" fill="{color}"{light}><title>{}: {}</title></rect>"#,
                cx - bar_w / 2.0 + 0.5,
                (bar_w - 1.0).max(1.0),
                (base - top_y).max(0.0),
                svg::escape(&series.name),
                svg::value_label(bar.value)
            );
            let mut label_y = top_y - 3.0;
            if let Some((lo, hi)) = bar.band {
                let (a, b) = (
                    y.map(hi).clamp(top, bottom),
                    y.map(lo.max(ylo)).clamp(top, bottom),
                );
                let _ = write!(
                    out,
                    r#"<path d="M{:.1},{a:.1} L{:.1},{a:.1} M{cx:.1},{a:.1} L{cx:.1},{b:.1} M{:.1},{b:.1} L{:.1},{b:.1}" stroke="black" fill="none"/>"#,
                    cx - 3.0,
                    cx + 3.0,
                    cx - 3.0,
                    cx + 3.0
                );
                label_y = label_y.min(a - 3.0);
            }
            let text = svg::value_label(bar.value);
            if svg::text_width(&text, 10.0) <= bar_w + 2.0 {
                svg::text(&mut out, cx, label_y, 10.0, "middle", &text);
            }
        }
    }
    let _ = write!(
        out,
        r#"<text transform="translate(13 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        top + plot_h / 2.0,
        svg::escape(&format!(
            "{}{}",
            svg::fit(c.y_label, plot_h - 10.0, LABEL_SIZE),
            if log { " (log scale)" } else { "" }
        ))
    );
    svg::close(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_axes_count_days_from_the_first_bin_of_the_chart_or_of_each_panel() {
        // A trace keeping Unix times: bins at day 15,720.5 and later, not at day 0.
        let panel = |xs: &[f64]| Panel {
            title: None,
            series: vec![Series {
                name: "s".into(),
                look: look(0),
                draw: Draw::Plain,
                points: xs.iter().map(|&x| Point::new(x, 1.0)).collect(),
            }],
        };
        let xs = |panels: &[Panel]| -> Vec<Vec<f64>> {
            panels
                .iter()
                .map(|p| p.series[0].points.iter().map(|q| q.x).collect())
                .collect()
        };
        let mut chart = vec![panel(&[15_721.0, 15_722.5]), panel(&[15_720.5, 15_721.5])];
        from_first_bin(&mut chart, false);
        assert_eq!(xs(&chart), [vec![0.5, 2.0], vec![0.0, 1.0]]);
        let mut panels = vec![panel(&[15_721.0, 15_722.5]), panel(&[3.0, 4.0])];
        from_first_bin(&mut panels, true);
        assert_eq!(xs(&panels), [vec![0.0, 1.5], vec![0.0, 1.0]]);
        // No points: nothing to shift, no NaN.
        let mut empty = vec![Panel {
            title: None,
            series: Vec::new(),
        }];
        from_first_bin(&mut empty, false);
    }

    fn look(i: usize) -> Look {
        Look {
            color: format!("#00000{i}"),
            dash: "",
            marker: i,
        }
    }

    /// One series ("fcfs") of bars, one per value, in groups "a", "b", …, rendered.
    fn fcfs_bars(title: &str, y_label: &str, values: &[f64]) -> String {
        bar_chart(&BarChart {
            title,
            y_label,
            groups: (b'a'..)
                .take(values.len())
                .map(|c| char::from(c).to_string())
                .collect(),
            series: vec![BarSeries {
                name: "fcfs".into(),
                look: look(0),
                values: values
                    .iter()
                    .map(|&value| Some(Bar { value, band: None }))
                    .collect(),
            }],
            y_axis: Axis::Auto,
            legend_heading: None,
        })
    }

    #[test]
    fn charts_are_wellformed_even_when_empty() {
        let empty = LineChart::new("t", "x", "y", vec![]);
        let one = LineChart::new(
            "t <x>",
            "x",
            "y",
            vec![Panel {
                title: Some("a & b".into()),
                series: vec![Series {
                    name: "s&t".into(),
                    look: look(0),
                    draw: Draw::Line,
                    points: vec![
                        Point {
                            x: 1.0,
                            y: 2.0,
                            band: Some((1.5, 2.5)),
                        },
                        Point::new(2.0, 3.0),
                    ],
                }],
            }],
        );
        let bars = BarChart {
            title: "t",
            y_label: "y",
            groups: vec!["a".into()],
            series: vec![BarSeries {
                name: "s".into(),
                look: look(1),
                values: vec![None],
            }],
            y_axis: Axis::Auto,
            legend_heading: None,
        };
        for svg in [line_chart(&empty), line_chart(&one), bar_chart(&bars)] {
            roxmltree::Document::parse(&svg).unwrap();
        }
    }

    #[test]
    fn bars_spanning_more_than_a_decade_get_a_log_scale() {
        let chart = |a: f64, b: f64| {
            bar_chart(&BarChart {
                title: "wait",
                y_label: "hours",
                groups: vec!["sp2".into()],
                series: vec![
                    BarSeries {
                        name: "fcfs".into(),
                        look: look(0),
                        values: vec![Some(Bar {
                            value: a,
                            band: None,
                        })],
                    },
                    BarSeries {
                        name: "easy".into(),
                        look: look(1),
                        values: vec![Some(Bar {
                            value: b,
                            band: None,
                        })],
                    },
                ],
                y_axis: Axis::Auto,
                legend_heading: Some("scheduler"),
            })
        };
        assert!(chart(427.0, 5.7).contains("hours (log scale)"));
        assert!(!chart(8.0, 5.7).contains("log scale"));
    }

    #[test]
    fn axes_of_degenerate_series_worked_by_hand() {
        // All zero (nothing backfilled): 0…1, not −1…1.
        assert_eq!(y_bounds(&[0.0, 0.0, 0.0], false), (0.0, 1.0));
        // One point, or all equal: from zero to the tick past 1.1 × the value.
        assert_eq!(y_bounds(&[5.0], false), (0.0, 6.0));
        assert_eq!(y_bounds(&[0.5, 0.5], false), (0.0, 0.6));
        // All equal and negative: from the tick below 1.1 × the value up to zero.
        assert_eq!(y_bounds(&[-2.0, -2.0], false), (-2.5, 0.0));
        // Spread non-negative values keep their rules: from zero when the minimum is under a
        // third of the maximum (0…10.4 in steps of 2.5 → 12.5), else tight (0.61…0.83 padded
        // by 0.0088, in steps of 0.05).
        assert_eq!(y_bounds(&[1.0, 10.0], false), (0.0, 12.5));
        assert_eq!(y_bounds(&[0.61, 0.83], false), (0.6, 0.85));
        // Values either side of zero: tight, padded by 4 % of the spread (±2.16, steps of 1).
        assert_eq!(y_bounds(&[-2.0, 2.0], false), (-3.0, 3.0));
        // A lone x is centred in a range that does not cross zero.
        assert_eq!(x_bounds(&[0.5], false), (0.25, 0.75));
        assert_eq!(x_bounds(&[0.0], false), (-1.0, 1.0));
        assert_eq!(x_bounds(&[-4.0], false), (-6.0, -2.0));
        // A bar chart of zeros (bars are lengths from zero) draws a 0…1 axis.
        let zeros = fcfs_bars("fraction backfilled", "fraction", &[0.0, 0.0]);
        assert!(
            !zeros.contains(">−1<") && !zeros.contains(">-1<"),
            "{zeros}"
        );
        assert!(zeros.contains(">1<"), "{zeros}");
    }

    /// Tick labels of a rendered chart from 1,000 up are thousands separated, as the text of
    /// the report writes every number: "2,000", never "2000" (nor "10k").
    #[test]
    fn rendered_ticks_separate_thousands() {
        let line = line_chart(&LineChart::new(
            "queue",
            "interval (s)",
            "jobs waiting",
            vec![Panel {
                title: None,
                series: vec![Series {
                    name: "easy".into(),
                    look: look(0),
                    draw: Draw::Line,
                    points: vec![Point::new(0.0, 0.0), Point::new(9000.0, 4200.0)],
                }],
            }],
        ));
        let bars = fcfs_bars("jobs", "jobs", &[21_000.0, 17_897.0]);
        let (line, bars) = (svg::reading::texts(&line), svg::reading::texts(&bars));
        // y ticks 0…5,000 in steps of 1,000; x ticks 0…8,000 in steps of 2,000.
        for tick in ["1,000", "4,000", "5,000", "2,000", "6,000", "8,000"] {
            assert!(line.iter().any(|t| t == tick), "{tick} in {line:?}");
        }
        // Ticks 0…25,000 in steps of 5,000, and the values on the bars.
        for tick in ["5,000", "25,000", "21,000", "17,897"] {
            assert!(bars.iter().any(|t| t == tick), "{tick} in {bars:?}");
        }
        assert!(
            !line
                .iter()
                .chain(&bars)
                .any(|t| svg::reading::has_four_digits(t)),
            "{line:?} {bars:?}"
        );
    }

    #[test]
    fn a_lone_point_with_a_band_gets_an_error_bar_and_a_marker() {
        let c = LineChart::new(
            "t",
            "x",
            "y",
            vec![Panel {
                title: None,
                series: vec![Series {
                    name: "s".into(),
                    look: look(0),
                    draw: Draw::Line,
                    points: vec![Point {
                        x: 1.0,
                        y: 2.0,
                        band: Some((1.0, 3.0)),
                    }],
                }],
            }],
        );
        let svg = line_chart(&c);
        assert!(svg.contains("<circle"), "marker");
        assert!(
            svg.contains(r##"stroke="#000000" fill="none""##),
            "error bar"
        );
    }
}
