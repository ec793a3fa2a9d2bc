//! The EET violation heatmap as a self-contained SVG (Tóth & Klusáček, section 3.3 and Fig. 7):
//! one row per user, one column per time bin, the colour of a cell the number of violated
//! EETs there on a logarithmic scale (empty cells white), and the system's usage plotted
//! underneath on the same time axis. Pure: plain data in, SVG text out.
//!
//! Readable at the paper's size (75 users, five months): rows of 9 px with their user labels,
//! a 1,200 px wide time axis in days, classes bounded by round numbers (1–2–5 steps, or
//! decades when the range is wide) in nine sequential colours, and a legend.

use std::fmt::Write;

use super::dates::TraceClock;
use super::svg::{escape, label};

/// One user's row: `cells` are `(bin, value)` with value > 0, in any order.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatRow {
    pub label: String,
    pub cells: Vec<(usize, f64)>,
}

/// A usage line under the heatmap: one value per bin, as a fraction of capacity (0–1).
#[derive(Clone, Debug, PartialEq)]
pub struct UsageLine {
    pub name: String,
    pub values: Vec<f64>,
}

/// Everything the picture shows.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatmapChart {
    pub title: String,
    /// What a cell's value is, for the legend.
    pub value_label: String,
    /// Bins of `bin_seconds` from `start` (trace seconds).
    pub start: i64,
    /// The trace's clock (its header's start time): the time axis in dates; `None`: in
    /// hours or days since the first bin.
    pub clock: Option<TraceClock>,
    /// The colour classes' range when several heatmaps share one scale (so colours compare
    /// across them), with how many share it; `None`: this heatmap's own values.
    pub shared_scale: Option<SharedScale>,
    pub bin_seconds: i64,
    pub bins: usize,
    /// Top to bottom.
    pub rows: Vec<HeatRow>,
    pub usage: Vec<UsageLine>,
}

/// One colour scale for several heatmaps: the smallest and largest positive cell value over all
/// of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SharedScale {
    pub lo: f64,
    pub hi: f64,
    /// How many heatmaps share it, for the legend.
    pub charts: usize,
}

impl SharedScale {
    /// The scale covering every positive cell of `charts`' rows, or `None` without any.
    pub fn over<'a>(rows: impl IntoIterator<Item = &'a HeatRow>, charts: usize) -> Option<Self> {
        let (lo, hi) = rows
            .into_iter()
            .flat_map(|r| r.cells.iter().map(|c| c.1))
            .filter(|v| *v > 0.0 && v.is_finite())
            .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        (hi > 0.0).then_some(SharedScale { lo, hi, charts })
    }
}

/// Nine sequential colours, light (few) to dark (many): ColorBrewer's YlOrRd.
const PALETTE: [&str; 9] = [
    "#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026",
    "#800026",
];
const USAGE_COLORS: [&str; 3] = ["#1f77b4", "#2ca02c", "#9467bd"];

const PLOT_WIDTH: f64 = 1200.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const USAGE_HEIGHT: f64 = 120.0;
const GAP: f64 = 28.0;
const BOTTOM: f64 = 44.0;

/// Class boundaries on a logarithmic scale covering `[lo, hi]` (0 < lo ≤ hi): round numbers
/// in 1–2–5 steps, or decades (every k-th decade) when that would give more than nine classes.
pub fn log_classes(lo: f64, hi: f64) -> Vec<f64> {
    let tol = 1e-9;
    let covering = |steps: &[f64], stride: i32| -> Vec<f64> {
        let first_exp = (lo.log10().floor() as i32) - stride;
        let mut all = Vec::new();
        let mut exp = first_exp;
        while all.last().is_none_or(|e: &f64| *e < hi * (1.0 - tol)) {
            all.extend(steps.iter().map(|s| s * 10f64.powi(exp)));
            exp += stride;
        }
        let first = all
            .iter()
            .rposition(|e| *e <= lo * (1.0 + tol))
            .unwrap_or(0);
        let last = (first + 1).max(
            first
                + all[first..]
                    .iter()
                    .position(|e| *e >= hi * (1.0 - tol))
                    .unwrap_or(all.len() - 1 - first),
        );
        all[first..=last.min(all.len() - 1)].to_vec()
    };
    let fine = covering(&[1.0, 2.0, 5.0], 1);
    if fine.len() <= PALETTE.len() + 1 {
        return fine;
    }
    let mut stride = 1;
    loop {
        let decades = covering(&[1.0], stride);
        if decades.len() <= PALETTE.len() + 1 {
            return decades;
        }
        stride += 1;
    }
}

/// The class of `v` among `edges` (0-based, clamped).
fn class_of(v: f64, edges: &[f64]) -> usize {
    let classes = edges.len().saturating_sub(1).max(1);
    edges
        .iter()
        .rposition(|e| *e <= v * (1.0 + 1e-9))
        .unwrap_or(0)
        .min(classes - 1)
}

/// The colour of class `i` of `n`: spread over the palette, darkest for the top class.
fn color_of(i: usize, n: usize) -> &'static str {
    if n <= 1 {
        return PALETTE[5];
    }
    PALETTE[(i * (PALETTE.len() - 1) + (n - 1) / 2) / (n - 1)]
}

/// A round step for time ticks so that `span` seconds get at most about twelve ticks.
fn time_step(span: f64) -> (f64, &'static str, f64) {
    const HOUR: f64 = 3600.0;
    const DAY: f64 = 86_400.0;
    let steps = [
        (HOUR, "h", HOUR),
        (3.0 * HOUR, "h", HOUR),
        (6.0 * HOUR, "h", HOUR),
        (12.0 * HOUR, "h", HOUR),
        (DAY, "d", DAY),
        (2.0 * DAY, "d", DAY),
        (7.0 * DAY, "d", DAY),
        (14.0 * DAY, "d", DAY),
        (28.0 * DAY, "d", DAY),
        (91.0 * DAY, "d", DAY),
        (364.0 * DAY, "d", DAY),
    ];
    steps
        .iter()
        .copied()
        .find(|(step, _, _)| span / step <= 12.0)
        .unwrap_or((span / 12.0, "d", DAY))
}

/// The heatmap of `chart` as SVG.
pub fn heatmap_svg(chart: &HeatmapChart) -> String {
    let bins = chart.bins.max(1);
    let n_rows = chart.rows.len();
    let row_h = if n_rows <= 80 {
        9.0
    } else {
        (720.0 / n_rows as f64).max(1.0)
    };
    // Label every row when there is room, else every k-th.
    let label_every = ((8.0 / row_h).ceil() as usize).max(1);
    let heat_h = row_h * n_rows.max(1) as f64;
    let edges = match chart
        .shared_scale
        .or_else(|| SharedScale::over(&chart.rows, 1))
    {
        Some(scale) => log_classes(scale.lo, scale.hi),
        None => Vec::new(),
    };
    let classes = edges.len().saturating_sub(1);
    // The usage chart starts below the colour legend too, whose notes would otherwise run into
    // the usage legend when few users are drawn.
    let legend_h = 50.0 + 14.0 * classes as f64;
    let usage_top = TOP + heat_h.max(legend_h) + GAP;
    let width = LEFT + PLOT_WIDTH + RIGHT;
    let height = usage_top + USAGE_HEIGHT + BOTTOM;
    let col_w = PLOT_WIDTH / bins as f64;
    let x_of = |bin: f64| LEFT + bin * col_w;

    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height:.0}" width="{width}" height="{height:.0}" font-family="sans-serif" font-size="11" role="img"><title>{t}</title><rect width="100%" height="100%" fill="white"/><text x="{cx}" y="22" text-anchor="middle" font-size="14" font-weight="bold">{t}</text>"#,
        t = escape(&chart.title),
        cx = LEFT + PLOT_WIDTH / 2.0
    );

    // Cells: consecutive bins of one class drawn as one rectangle.
    let _ = write!(out, r#"<g shape-rendering="crispEdges">"#);
    for (r, row) in chart.rows.iter().enumerate() {
        let y = TOP + r as f64 * row_h;
        if r % 5 == 0 {
            let _ = write!(
                out,
                r##"<line x1="{LEFT}" y1="{y:.2}" x2="{:.1}" y2="{y:.2}" stroke="#eee"/>"##,
                LEFT + PLOT_WIDTH
            );
        }
        let mut cells: Vec<(usize, f64)> = row
            .cells
            .iter()
            .copied()
            .filter(|(b, v)| *v > 0.0 && v.is_finite() && *b < bins)
            .collect();
        cells.sort_by_key(|c| c.0);
        let mut i = 0;
        while i < cells.len() {
            let class = class_of(cells[i].1, &edges);
            let mut j = i;
            let mut peak = cells[i].1;
            while j + 1 < cells.len()
                && cells[j + 1].0 == cells[j].0 + 1
                && class_of(cells[j + 1].1, &edges) == class
            {
                j += 1;
                peak = peak.max(cells[j].1);
            }
            let (b0, b1) = (cells[i].0, cells[j].0 + 1);
            let _ = write!(
                out,
                r#"<rect x="{:.2}" y="{y:.2}" width="{:.2}" height="{:.2}" fill="{}"><title>{}: up to {} ({} h from the start)</title></rect>"#,
                x_of(b0 as f64),
                (b1 - b0) as f64 * col_w,
                row_h,
                color_of(class, classes),
                escape(&row.label),
                label((peak * 100.0).round() / 100.0),
                label(((b0 as i64 * chart.bin_seconds) as f64 / 3600.0).round())
            );
            i = j + 1;
        }
    }
    let _ = write!(out, "</g>");
    // Row labels and the frame.
    for (r, row) in chart.rows.iter().enumerate() {
        if r % label_every == 0 {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.2}" text-anchor="end" font-size="{:.0}">{}</text>"#,
                LEFT - 4.0,
                TOP + (r as f64 + 0.5) * row_h + 3.0,
                (row_h.min(9.0) + 0.5).max(7.0),
                escape(&row.label)
            );
        }
    }
    let _ = write!(
        out,
        r#"<rect x="{LEFT}" y="{TOP}" width="{PLOT_WIDTH}" height="{heat_h:.2}" fill="none" stroke="black"/><text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">users (most total tardiness first)</text>"#,
        TOP + heat_h / 2.0
    );

    // Usage panel: fraction of capacity per bin.
    let uy = |v: f64| usage_top + USAGE_HEIGHT - v.clamp(0.0, 1.0) * USAGE_HEIGHT;
    let _ = write!(
        out,
        r#"<rect x="{LEFT}" y="{usage_top:.1}" width="{PLOT_WIDTH}" height="{USAGE_HEIGHT}" fill="none" stroke="black"/>"#
    );
    for tick in [0.0, 0.5, 1.0] {
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{} %</text>"##,
            LEFT + PLOT_WIDTH,
            LEFT - 4.0,
            uy(tick) + 4.0,
            (tick * 100.0) as i64,
            y = uy(tick)
        );
    }
    let _ = write!(
        out,
        r#"<text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">usage</text>"#,
        usage_top + USAGE_HEIGHT / 2.0
    );
    for (k, line) in chart.usage.iter().enumerate() {
        let color = USAGE_COLORS[k % USAGE_COLORS.len()];
        // A step line: each bin's value held across the bin.
        let mut d = String::new();
        for (b, v) in line.values.iter().take(bins).enumerate() {
            let cmd = if b == 0 { "M" } else { "L" };
            let _ = write!(
                d,
                "{cmd}{:.1},{:.1}H{:.1}",
                x_of(b as f64),
                uy(*v),
                x_of(b as f64 + 1.0)
            );
        }
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{color}" stroke-width="1"/>"#
        );
        let ly = usage_top + 14.0 + 16.0 * k as f64;
        let lx = LEFT + PLOT_WIDTH + 12.0;
        let _ = write!(
            out,
            r#"<line x1="{lx}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2"/><text x="{:.1}" y="{ly:.1}">{}</text>"#,
            ly - 4.0,
            lx + 14.0,
            ly - 4.0,
            lx + 18.0,
            escape(&line.name)
        );
    }

    // Time axis, shared by both panels: dates at local midnights (or round hours) when the
    // trace has a start time, else round offsets from the first bin.
    let span = (bins as i64 * chart.bin_seconds) as f64;
    let (step, unit, per) = time_step(span);
    let axis_y = usage_top + USAGE_HEIGHT;
    let ticks: Vec<(f64, String)> = match &chart.clock {
        Some(clock) => {
            let from = chart.start as f64;
            clock
                .ticks(from, from + span, (step / 3600.0).round().max(1.0) as i64)
                .into_iter()
                .map(|t| {
                    let text = if step >= 86_400.0 {
                        clock.date_time(t)[..10].to_string()
                    } else {
                        clock.short(t)
                    };
                    (t - from, text)
                })
                .collect()
        }
        None => {
            let mut out = Vec::new();
            let mut t = 0.0;
            while t <= span + 1e-9 {
                out.push((t, format!("{}{unit}", label((t / per).round()))));
                t += step;
            }
            out
        }
    };
    for (t, text) in &ticks {
        let x = LEFT + t / span.max(1.0) * PLOT_WIDTH;
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#000" stroke-opacity="0.12"/><line x1="{x:.1}" y1="{axis_y:.1}" x2="{x:.1}" y2="{:.1}" stroke="black"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + heat_h,
            axis_y + 4.0,
            axis_y + 16.0,
            escape(text)
        );
    }
    let axis_title = match &chart.clock {
        Some(clock) => format!(
            "date ({}; bins of {})",
            clock.zone_text(),
            duration(chart.bin_seconds)
        ),
        None => format!(
            "{} since the first bin, trace second {} (no start time in the trace; bins of {})",
            if unit == "d" { "days" } else { "hours" },
            chart.start,
            duration(chart.bin_seconds)
        ),
    };
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + PLOT_WIDTH / 2.0,
        height - 10.0,
        escape(&axis_title)
    );

    // Legend: one swatch per class with its range.
    let lx = LEFT + PLOT_WIDTH + 12.0;
    let _ = write!(
        out,
        r#"<text x="{lx}" y="{:.1}" font-weight="bold">{}</text>"#,
        TOP + 8.0,
        escape(&chart.value_label)
    );
    if classes == 0 {
        let _ = write!(out, r#"<text x="{lx}" y="{:.1}">none</text>"#, TOP + 26.0);
    }
    for i in (0..classes).rev() {
        let y = TOP + 16.0 + 14.0 * (classes - 1 - i) as f64;
        let _ = write!(
            out,
            r#"<rect x="{lx}" y="{y:.1}" width="14" height="11" fill="{}" stroke="black" stroke-width="0.3"/><text x="{:.1}" y="{:.1}">{} – {}</text>"#,
            color_of(i, classes),
            lx + 18.0,
            y + 9.5,
            edge_label(edges[i]),
            edge_label(edges[i + 1])
        );
    }
    let _ = write!(
        out,
        r#"<text x="{lx}" y="{:.1}" font-size="10">log scale; white: none</text>"#,
        TOP + 30.0 + 14.0 * classes as f64
    );
    if let Some(shared) = chart.shared_scale.filter(|s| s.charts > 1) {
        let _ = write!(
            out,
            r#"<text x="{lx}" y="{:.1}" font-size="10">one scale for all {} heatmaps</text>"#,
            TOP + 44.0 + 14.0 * classes as f64,
            super::text::whole(shared.charts)
        );
    }
    out.push_str("</svg>");
    out
}

/// A class edge: round numbers of any size, `0.0001` as such rather than `0`.
fn edge_label(v: f64) -> String {
    if v >= 1.0 {
        label(v)
    } else {
        let decimals = (-v.log10().floor()).max(0.0) as usize;
        format!("{v:.decimals$}")
    }
}

fn duration(seconds: i64) -> String {
    let n = |v: i64| label(v as f64);
    match seconds {
        s if s % 86_400 == 0 => format!("{} d", n(s / 86_400)),
        s if s % 3600 == 0 => format!("{} h", n(s / 3600)),
        s if s % 60 == 0 => format!("{} min", n(s / 60)),
        s => format!("{} s", n(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_classes_are_round_and_cover_the_range() {
        assert_eq!(log_classes(0.3, 4.0), vec![0.2, 0.5, 1.0, 2.0, 5.0]);
        assert_eq!(log_classes(1.0, 1.0), vec![1.0, 2.0]);
        // 0.01 … 3000: too many 1–2–5 classes, decades instead.
        assert_eq!(
            log_classes(0.01, 3000.0),
            vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10_000.0]
        );
        // Twenty decades: every other one.
        let wide = log_classes(1e-10, 1e9);
        assert!(wide.len() <= 10 && wide[0] <= 1e-10 && *wide.last().unwrap() >= 1e9);
        let edges = log_classes(0.3, 4.0);
        assert_eq!(class_of(0.3, &edges), 0);
        assert_eq!(class_of(1.0, &edges), 2);
        assert_eq!(class_of(4.0, &edges), 3);
        assert_eq!(color_of(0, 4), PALETTE[0]);
        assert_eq!(color_of(3, 4), PALETTE[8]);
        assert_eq!(
            [
                edge_label(0.0001),
                edge_label(0.05),
                edge_label(0.2),
                edge_label(20.0)
            ],
            ["0.0001", "0.05", "0.2", "20"]
        );
        assert_eq!(
            [edge_label(1000.0), edge_label(20_000.0)],
            ["1,000", "20,000"]
        );
        assert_eq!(duration(60_060), "1,001 min");
        assert_eq!(duration(1_234), "1,234 s");
        assert_eq!(duration(7_200), "2 h");
    }

    /// A reader sees thousands separated in the legend and the cells' tooltips, as in the
    /// report's text: "1,000 – 2,000", never "1000 – 2000".
    #[test]
    fn legend_and_tooltips_separate_thousands() {
        let rows = vec![HeatRow {
            label: "user 1".into(),
            cells: vec![(1, 1500.0), (30, 4000.0)],
        }];
        let svg = heatmap_svg(&two_days(rows, vec![]));
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") || n.has_tag_name("title"))
            .filter_map(|n| n.text())
            .collect();
        for want in [
            "1,000 – 2,000",
            "2,000 – 5,000",
            "user 1: up to 1,500 (1 h from the start)",
            "user 1: up to 4,000 (30 h from the start)",
        ] {
            assert!(texts.contains(&want), "{want} in {texts:?}");
        }
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("1000") || t.contains("2000"))
        );
    }

    /// 48 hourly bins from trace second 0, without a clock, of `rows` and `usage`.
    fn two_days(rows: Vec<HeatRow>, usage: Vec<UsageLine>) -> HeatmapChart {
        HeatmapChart {
            title: "fifo <1>".into(),
            value_label: "violated EETs".into(),
            start: 0,
            clock: None,
            shared_scale: None,
            bin_seconds: 3600,
            bins: 48,
            rows,
            usage,
        }
    }

    #[test]
    fn cells_rows_usage_and_legend_are_drawn() {
        let chart = two_days(
            vec![
                HeatRow {
                    label: "user 1".into(),
                    // Bins 3 and 4 share a class: one rectangle; bin 10 another.
                    cells: vec![(4, 1.5), (3, 1.2), (10, 40.0)],
                },
                HeatRow {
                    label: "user 2".into(),
                    cells: vec![],
                },
            ],
            vec![UsageLine {
                name: "CPU".into(),
                values: vec![0.5; 48],
            }],
        );
        let svg = heatmap_svg(&chart);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let cells = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.children().any(|c| c.has_tag_name("title")))
            .count();
        assert_eq!(cells, 2);
        assert!(svg.contains("user 2") && svg.contains("fifo &lt;1&gt;"));
        assert!(svg.contains("log scale"));
        // The usage panel's ticks read as percentages do everywhere else in a report.
        let ticks: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .filter(|t| t.ends_with('%'))
            .collect();
        assert_eq!(ticks, ["0 %", "50 %", "100 %"]);
        // An empty heatmap is still a valid picture.
        let empty = HeatmapChart {
            rows: vec![],
            usage: vec![],
            bins: 0,
            ..chart
        };
        roxmltree::Document::parse(&heatmap_svg(&empty)).unwrap();
    }

    #[test]
    fn heatmaps_share_one_scale_and_date_their_axis() {
        let map = |cells: Vec<(usize, f64)>, clock: Option<TraceClock>| HeatmapChart {
            title: "t".into(),
            value_label: "violated EETs".into(),
            start: 3600,
            clock,
            shared_scale: None,
            bin_seconds: 86_400,
            bins: 10,
            rows: vec![HeatRow {
                label: "user 1".into(),
                cells,
            }],
            usage: Vec::new(),
        };
        // Alone, a heatmap of 1.5 gets classes 1 – 2; beside one of 40, the classes of both.
        let (small, large) = (map(vec![(0, 1.5)], None), map(vec![(1, 40.0)], None));
        assert!(heatmap_svg(&small).contains(">1 – 2<"));
        let shared = SharedScale::over(small.rows.iter().chain(&large.rows), 2).unwrap();
        assert_eq!((shared.lo, shared.hi), (1.5, 40.0));
        let mut a = small.clone();
        let mut b = large.clone();
        a.shared_scale = Some(shared);
        b.shared_scale = Some(shared);
        let (a, b) = (heatmap_svg(&a), heatmap_svg(&b));
        let legend = |svg: &str| svg[svg.find("violated EETs</text>").unwrap()..].to_string();
        assert_eq!(legend(&a), legend(&b));
        assert!(a.contains(">20 – 50<") && a.contains("one scale for all 2 heatmaps"));
        // With one user drawn, the legend's last note still ends above the usage chart.
        let y_before = |svg: &str, marker: &str| -> f64 {
            let at = svg.find(marker).unwrap();
            let y = svg[..at].rfind("y=\"").unwrap() + 3;
            svg[y..y + svg[y..].find('"').unwrap()].parse().unwrap()
        };
        let usage_frame = format!("\" width=\"{PLOT_WIDTH}\" height=\"{USAGE_HEIGHT}\"");
        assert!(y_before(&a, "\">one scale for all") + 4.0 < y_before(&a, &usage_frame));
        // 1.5 alone takes its single class's colour; beside 40, the lightest.
        let cell = |svg: &str, colour: &str| {
            svg.contains(&format!("fill=\"{colour}\"><title>user 1: up to 1.5"))
        };
        assert!(cell(&heatmap_svg(&small), PALETTE[5]));
        assert!(cell(&a, PALETTE[0]));
        // Without a start time: days since the first bin, named as such.
        let plain = heatmap_svg(&small);
        assert!(
            plain.contains("days since the first bin, trace second 3600"),
            "{plain}"
        );
        assert!(plain.contains(">2d<"));
        // With one (MetaCentrum 2013: 2013-01-01 00:00 UTC), dates at midnights.
        let clock = TraceClock {
            unix_start: 1_356_998_400,
            utc_offset: 0,
            zone: None,
            unix_times: false,
        };
        let dated = heatmap_svg(&map(vec![(0, 1.5)], Some(clock)));
        assert!(
            dated.contains(">2013-01-02<") && dated.contains(">2013-01-10<"),
            "{dated}"
        );
        assert!(dated.contains("date (UTC"), "{dated}");
        assert!(!dated.contains("since the first bin"));
    }
}
