//! A Gantt-style picture of one cell's schedule in a time window (pure): each job a box from
//! start to end, as many unit rows high as it holds, packed first-fit into the machine's rows
//! together with the granted reservations — a picture of the schedule, not the node map.
//! Backfilled jobs and reservations are marked and explained by a legend; the axis gives
//! dates when the trace says when it started.

use std::fmt::Write;

use super::dates::TraceClock;
use super::svg::{self, Entry, LABEL_SIZE, Look, Scale, Swatch, TICK_SIZE, WIDTH};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GanttJob {
    pub start: f64,
    pub end: f64,
    pub units: u64,
    pub backfilled: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GanttReservation {
    pub start: f64,
    pub end: f64,
    pub units: u64,
}

pub struct Gantt<'a> {
    pub title: &'a str,
    pub jobs: &'a [GanttJob],
    pub reservations: &'a [GanttReservation],
    pub capacity: u64,
    /// Trace seconds.
    pub window: (f64, f64),
    /// "nodes" or "processors".
    pub unit: &'a str,
    pub clock: Option<&'a TraceClock>,
    /// The legend's name of the jobs marked `backfilled` (started while an earlier-submitted
    /// job was waiting): "backfilled job" under a first-come queue order; under an order that
    /// reorders the queue (fairshare, priority) most jobs start ahead of earlier ones without
    /// any backfilling, and the name says so.
    pub ahead: &'a str,
}

const JOB: &str = "#6baed6";
const BACKFILLED: &str = "#fd8d3c";
const RESERVATION: &str = "#555555";

/// The window as text: dates when the clock is known, else trace hours.
pub fn window_text(window: (f64, f64), clock: Option<&TraceClock>) -> String {
    match clock {
        Some(c) => format!(
            "{} – {} ({})",
            c.date_time(window.0),
            c.date_time(window.1),
            c.zone_text()
        ),
        None => format!(
            "trace hours {} – {}",
            svg::label((window.0 / 3600.0).floor()),
            svg::label((window.1 / 3600.0).ceil())
        ),
    }
}

/// First-fit packing of boxes (start, end, units) in start order: the rows each one takes.
fn pack(items: &[(f64, f64, u64)], capacity: u64) -> Vec<Vec<usize>> {
    let mut busy_until = vec![f64::NEG_INFINITY; capacity as usize];
    items
        .iter()
        .map(|(start, end, units)| {
            let mut rows = Vec::with_capacity(*units as usize);
            for (u, free_at) in busy_until.iter().enumerate() {
                if rows.len() == *units as usize {
                    break;
                }
                if *free_at <= *start {
                    rows.push(u);
                }
            }
            for &u in &rows {
                busy_until[u] = *end;
            }
            rows
        })
        .collect()
}

pub fn gantt(g: &Gantt<'_>) -> String {
    let mut head = String::new();
    let mut h = svg::title(&mut head, g.title);
    svg::text(
        &mut head,
        WIDTH / 2.0,
        h + 6.0,
        LABEL_SIZE,
        "middle",
        &svg::fit(&window_text(g.window, g.clock), WIDTH - 24.0, LABEL_SIZE),
    );
    h += 12.0;
    let look = |color: &str| Look {
        color: color.to_string(),
        dash: "",
        marker: 0,
    };
    let mut entries = vec![
        Entry {
            look: look(JOB),
            swatch: Swatch::Box,
            name: "job".into(),
        },
        Entry {
            look: look(BACKFILLED),
            swatch: Swatch::Box,
            name: g.ahead.into(),
        },
    ];
    if !g.reservations.is_empty() {
        entries.push(Entry {
            look: look(RESERVATION),
            swatch: Swatch::Box,
            name: "advance reservation".into(),
        });
    }
    h += svg::legend(&mut head, None, &entries, h);
    let top = h + 6.0;
    let plot_h = 300.0;
    let bottom = top + plot_h;
    let height = bottom + 44.0;
    let mut out = String::new();
    svg::open(&mut out, g.title, height);
    out.push_str(&head);

    let cap_label = svg::label(g.capacity as f64);
    let left = 30.0 + svg::text_width(&cap_label, TICK_SIZE) + 8.0;
    let right = WIDTH - 14.0;
    let x = Scale {
        lo: g.window.0,
        hi: g.window.1,
        log: false,
        from: left,
        to: right,
    };
    let y = Scale {
        lo: 0.0,
        hi: g.capacity.max(1) as f64,
        log: false,
        from: bottom,
        to: top,
    };
    // Items in start order (reservations first on ties: they were placed before the jobs).
    let mut items: Vec<(f64, f64, u64, Option<bool>)> = g
        .reservations
        .iter()
        .map(|r| (r.start, r.end, r.units, None))
        .chain(
            g.jobs
                .iter()
                .map(|j| (j.start, j.end, j.units, Some(j.backfilled))),
        )
        .collect();
    items.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then_with(|| a.3.is_some().cmp(&b.3.is_some()))
    });
    let boxes: Vec<(f64, f64, u64)> = items.iter().map(|i| (i.0, i.1, i.2)).collect();
    let rows = pack(&boxes, g.capacity);
    for (item, rows) in items.iter().zip(&rows) {
        let (start, end, _, kind) = *item;
        let (color, extra) = match kind {
            None => (
                RESERVATION,
                r#" fill-opacity="0.55" stroke="black" stroke-width="0.6" stroke-dasharray="3 2""#,
            ),
            Some(true) => (BACKFILLED, r#" stroke="white" stroke-width="0.3""#),
            Some(false) => (JOB, r#" stroke="white" stroke-width="0.3""#),
        };
        let (x0, x1) = (x.map(start.max(g.window.0)), x.map(end.min(g.window.1)));
        // Contiguous runs of rows as one box each.
        let mut i = 0;
        while i < rows.len() {
            let mut j = i;
            while j + 1 < rows.len() && rows[j + 1] == rows[j] + 1 {
                j += 1;
            }
            let (ya, yb) = (y.map(rows[j] as f64 + 1.0), y.map(rows[i] as f64));
            let _ = write!(
                out,
                r#"<rect x="{x0:.1}" y="{ya:.1}" width="{:.1}" height="{:.1}" fill="{color}"{extra}/>"#,
                (x1 - x0).max(0.5),
                (yb - ya).max(0.3)
            );
            i = j + 1;
        }
    }
    // Axes over the boxes.
    let _ = write!(
        out,
        r#"<path d="M{left:.1},{top:.1} L{left:.1},{bottom:.1} L{right:.1},{bottom:.1}" fill="none" stroke="black"/>"#
    );
    for t in y.ticks() {
        let py = y.map(t);
        let _ = write!(
            out,
            r#"<line x1="{:.1}" y1="{py:.1}" x2="{left:.1}" y2="{py:.1}" stroke="black"/>"#,
            left - 4.0
        );
        svg::text(
            &mut out,
            left - 6.0,
            py + 4.0,
            TICK_SIZE,
            "end",
            &svg::label(t),
        );
    }
    let hours = (g.window.1 - g.window.0) / 3600.0;
    let step = if hours <= 24.0 {
        3
    } else if hours <= 72.0 {
        12
    } else {
        24
    };
    let ticks: Vec<(f64, String)> = match g.clock {
        Some(c) => c
            .ticks(g.window.0, g.window.1, step)
            .into_iter()
            .map(|t| (t, c.short(t)))
            .collect(),
        None => x
            .ticks()
            .into_iter()
            .map(|t| (t, format!("{} h", svg::label(t / 3600.0))))
            .collect(),
    };
    let mut last_end = f64::NEG_INFINITY;
    for (t, text) in ticks {
        let px = x.map(t);
        let w = svg::text_width(&text, TICK_SIZE);
        let _ = write!(
            out,
            r#"<line x1="{px:.1}" y1="{bottom:.1}" x2="{px:.1}" y2="{:.1}" stroke="black"/>"#,
            bottom + 4.0
        );
        if px - w / 2.0 > last_end + 4.0 && px + w / 2.0 < WIDTH {
            svg::text(&mut out, px, bottom + 16.0, TICK_SIZE, "middle", &text);
            last_end = px + w / 2.0;
        }
    }
    let x_label = match g.clock {
        Some(c) => format!("local date and time ({})", c.zone_text()),
        None => "trace time".to_string(),
    };
    svg::text(
        &mut out,
        (left + right) / 2.0,
        height - 8.0,
        LABEL_SIZE,
        "middle",
        &x_label,
    );
    let _ = write!(
        out,
        r#"<text transform="translate(13 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (top + bottom) / 2.0,
        svg::escape(g.unit)
    );
    svg::close(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(start: f64, end: f64, units: u64, backfilled: bool) -> GanttJob {
        GanttJob {
            start,
            end,
            units,
            backfilled,
        }
    }

    #[test]
    fn jobs_and_reservations_pack_into_rows_without_overlap() {
        // Capacity 4: a reservation of 2 units and job A (2 units) together, then job B (3
        // units, backfilled) after both.
        let jobs = [job(0.0, 3600.0, 2, false), job(7200.0, 10_800.0, 3, true)];
        let res = [GanttReservation {
            start: 0.0,
            end: 7200.0,
            units: 2,
        }];
        let svg = gantt(&Gantt {
            title: "Schedule",
            jobs: &jobs,
            reservations: &res,
            capacity: 4,
            window: (0.0, 10_800.0),
            unit: "nodes",
            clock: None,
            ahead: "backfilled job",
        });
        roxmltree::Document::parse(&svg).unwrap();
        // Three boxes (contiguous rows drawn as one) plus three legend swatches.
        assert_eq!(svg.matches("<rect x=").count(), 3 + 3, "{svg}");
        assert!(svg.contains("backfilled job"));
        assert!(svg.contains("advance reservation"));
        assert!(svg.contains(BACKFILLED) && svg.contains(RESERVATION));
        assert_eq!(
            pack(
                &[(0.0, 7200.0, 2), (0.0, 3600.0, 2), (7200.0, 10_800.0, 3)],
                4
            ),
            vec![vec![0, 1], vec![2, 3], vec![0, 1, 2]]
        );
    }

    #[test]
    fn the_window_is_stated_in_dates_when_the_trace_has_a_start() {
        let clock = TraceClock {
            unix_start: 1_078_605_840,
            utc_offset: -28_800,
            zone: Some("US/Pacific".into()),
            unix_times: false,
        };
        assert_eq!(
            window_text((5_184_000.0, 5_184_000.0 + 72.0 * 3600.0), Some(&clock)),
            "2004-05-05 12:44 – 2004-05-08 12:44 (UTC−8, US/Pacific standard time)"
        );
        assert_eq!(window_text((3600.0, 7200.0), None), "trace hours 1 – 2");
    }
}
