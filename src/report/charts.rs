//! The report's charts as SVG strings (pure): grouped bars of a metric across the grid, lines
//! (time series and CDFs), and a Gantt-style view of a time window.

use std::fmt::Write;

use super::svg::{self, Frame};

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

/// Bars of `series` (name → one value per group), grouped by `groups`.
pub fn grouped_bars(
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[(String, Vec<Option<f64>>)],
) -> String {
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten())
        .fold(0.0f64, |m, v| m.max(*v));
    let frame = Frame {
        x0: 0.0,
        x1: 1.0,
        y0: 0.0,
        y1: if max > 0.0 { max * 1.05 } else { 1.0 },
    };
    let mut out = String::new();
    svg::open(&mut out, title, "", y_label, &frame, Some(groups));
    let group_w = frame.plot_width() / groups.len().max(1) as f64;
    let bar_w = group_w * 0.8 / series.len().max(1) as f64;
    for (s, (name, values)) in series.iter().enumerate() {
        let (color, _) = svg::style(s);
        for (g, v) in values.iter().enumerate() {
            let Some(v) = v else { continue };
            let x = frame.x(0.0) + group_w * g as f64 + group_w * 0.1 + bar_w * s as f64;
            let (y, base) = (frame.y(*v), frame.y(0.0));
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{color}"><title>{}: {}</title></rect>"#,
                bar_w.max(1.0),
                (base - y).max(0.0),
                svg::escape(name),
                svg::label(*v)
            );
        }
        svg::legend(&mut out, s, name, true);
    }
    svg::close(&mut out);
    out
}

/// Polylines of `series` (name → points), with optional fixed y range.
pub fn lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    y_range: Option<(f64, f64)>,
) -> String {
    let points = || series.iter().flat_map(|(_, p)| p.iter());
    let (x0, x1) = points().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
        (a.min(p.0), b.max(p.0))
    });
    let (y0, y1) =
        y_range.unwrap_or_else(|| (0.0, points().fold(0.0f64, |m, p| m.max(p.1)) * 1.05));
    let frame = if x0.is_finite() {
        Frame {
            x0,
            x1: if x1 > x0 { x1 } else { x0 + 1.0 },
            y0,
            y1: if y1 > y0 { y1 } else { y0 + 1.0 },
        }
    } else {
        Frame {
            x0: 0.0,
            x1: 1.0,
            y0: 0.0,
            y1: 1.0,
        }
    };
    let mut out = String::new();
    svg::open(&mut out, title, x_label, y_label, &frame, None);
    for (s, (name, pts)) in series.iter().enumerate() {
        let (color, dash) = svg::style(s);
        let mut d = String::new();
        for (i, (x, y)) in pts.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { " L" },
                frame.x(*x),
                frame.y(*y)
            );
        }
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{color}" stroke-width="1.5" stroke-dasharray="{dash}"/>"#
        );
        svg::legend(&mut out, s, name, false);
    }
    svg::close(&mut out);
    out
}

/// Jobs of one cell in a time window: each job a box from start to end, `units` high, packed
/// into the machine's unit rows first-fit (a picture of the schedule, not the node map).
pub fn gantt(
    title: &str,
    jobs: &[(f64, f64, u64)],
    capacity: u64,
    window: (f64, f64),
    unit: &str,
) -> String {
    let frame = Frame {
        x0: window.0 / 3600.0,
        x1: window.1 / 3600.0,
        y0: 0.0,
        y1: capacity as f64,
    };
    let mut out = String::new();
    svg::open(
        &mut out,
        title,
        "time (hours of trace time)",
        unit,
        &frame,
        None,
    );
    // busy_until[u]: when unit row u frees up; jobs in start order take the lowest free rows.
    let mut busy_until = vec![f64::NEG_INFINITY; capacity as usize];
    let mut sorted: Vec<_> = jobs.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (k, (start, end, units)) in sorted.iter().enumerate() {
        let n = *units as usize;
        let mut rows = Vec::with_capacity(n);
        for (u, free_at) in busy_until.iter().enumerate() {
            if *free_at <= *start {
                rows.push(u);
                if rows.len() == n {
                    break;
                }
            }
        }
        for &u in &rows {
            busy_until[u] = *end;
        }
        let (color, _) = svg::style(k);
        let (x0, x1) = (
            frame.x(start.max(window.0) / 3600.0),
            frame.x(end.min(window.1) / 3600.0),
        );
        // Draw contiguous runs of rows as one box each.
        let mut i = 0;
        while i < rows.len() {
            let mut j = i;
            while j + 1 < rows.len() && rows[j + 1] == rows[j] + 1 {
                j += 1;
            }
            let (ya, yb) = (frame.y(rows[j] as f64 + 1.0), frame.y(rows[i] as f64));
            let _ = write!(
                out,
                r#"<rect x="{x0:.1}" y="{ya:.1}" width="{:.1}" height="{:.1}" fill="{color}" fill-opacity="0.75" stroke="white" stroke-width="0.3"/>"#,
                (x1 - x0).max(0.5),
                (yb - ya).max(0.3)
            );
            i = j + 1;
        }
    }
    svg::close(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gantt_packs_jobs_into_rows_without_overlap() {
        // Capacity 4: A (2 units) and B (2 units) run together, C (3 units) after A and B.
        let jobs = [(0.0, 3600.0, 2), (0.0, 7200.0, 2), (7200.0, 10800.0, 3)];
        let svg = gantt("t", &jobs, 4, (0.0, 10800.0), "processors");
        // Rows of one job that are contiguous are drawn as one box: three boxes.
        assert_eq!(svg.matches("<rect x=").count(), 3);
        roxmltree::Document::parse(&svg).unwrap();
    }

    #[test]
    fn bars_and_lines_are_wellformed_even_when_empty() {
        for svg in [
            grouped_bars("t", "y", &["a".into()], &[("s".into(), vec![None])]),
            lines("t", "x", "y", &[], None),
            lines(
                "t <x>",
                "x",
                "y",
                &[("s&t".into(), vec![(0.0, 1.0), (1.0, 2.0)])],
                Some((0.0, 1.0)),
            ),
        ] {
            roxmltree::Document::parse(&svg).unwrap();
        }
    }
}
