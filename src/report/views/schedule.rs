//! The schedule view: one cell's jobs (and granted reservations) in a time window as a Gantt
//! picture, with backfilled jobs and reservations marked and the window stated in dates when the
//! trace gives its start (`reports.gantt` in the manifest picks the cell and window).

use super::{Chart, Context, Family, Section, ViewKind, ViewSpec};
use crate::report::dates::TraceClock;
use crate::report::gantt::{self, Gantt};
use crate::report::gantt_window::Moved;
use crate::report::metric;
use crate::report::shape::ResultShape;
use crate::report::{svg, text};

pub struct Schedule;

impl Family for Schedule {
    fn name(&self) -> &'static str {
        "schedule"
    }

    fn heading(&self) -> &'static str {
        "Schedule"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        if !shape.files.contains("jobs.parquet") {
            return Vec::new();
        }
        vec![ViewSpec {
            family: self.name(),
            kind: ViewKind::Gantt,
        }]
    }

    fn build(&self, _views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section) {
        let data = ctx.data;
        let cell = &data.gantt_cell;
        let Some(row) = data.rows.iter().find(|r| &r.cell == cell) else {
            return;
        };
        let num = |k: &str| row.numbers.get(k).copied().flatten();
        let procs = num("procs").unwrap_or(1.0);
        let (capacity, unit) = match num("node_size") {
            Some(k) if k > 0.0 => ((procs / k) as u64, "nodes"),
            _ => (procs as u64, "processors"),
        };
        // Dates only where trace seconds are the trace's own clock (not stretched by load_scale).
        let workload = row.text.get("workload").cloned().unwrap_or_default();
        let scaled = num("load_scale").is_some_and(|s| s != 1.0);
        let clock = data
            .provenance
            .iter()
            .find(|p| p.workload == workload)
            .and_then(|p| p.clock.as_ref())
            .filter(|_| !scaled);
        // What the picture is of: the cell's settings on the varying axes, its workload when
        // that does not vary; metric settings change no schedule, so they are named as such.
        let shape = &ctx.grid.shape;
        let settings_axes = metric::setting_axes(shape);
        let settings = ctx
            .grid
            .configs
            .iter()
            .find(|c| c.rows.iter().any(|r| &r.cell == cell))
            .and_then(|c| shape.settings(&c.levels, &settings_axes));
        let what = match (shape.axis("workload").is_none(), settings) {
            (true, Some(s)) => format!("{workload}, {s}"),
            (false, Some(s)) => s,
            (_, None) => workload.clone(),
        };
        let same_at = metric::settings_named(shape, &settings_axes)
            .map(|s| format!(" It is the same at every level of {s}: a metric setting, which changes no schedule."))
            .unwrap_or_default();
        let title = format!("Schedule — {what}");
        // The jobs.parquet flag: started while an earlier-submitted job was waiting. Under a
        // first-come order only backfilling does that; under an order that reorders the queue
        // nearly every job does it (aleang-example1: 827 of 828), so the legend and caption
        // name it as starting ahead, not as backfilling (issue 35).
        let order = row.text.get("order").map_or("", String::as_str);
        let reordered = !order.is_empty() && order != "fcfs";
        let ahead = if reordered {
            "job started ahead of an earlier one"
        } else {
            "backfilled job"
        };
        let svg = gantt::gantt(&Gantt {
            title: &title,
            jobs: &data.gantt_jobs,
            reservations: &data.gantt_reservations,
            capacity,
            window: data.gantt_window,
            unit,
            clock,
            ahead,
        });
        let backfilled = data.gantt_jobs.iter().filter(|j| j.backfilled).count();
        let marked = if reordered {
            format!(
                "{} started while an earlier-submitted job was waiting: the {order} queue order puts jobs ahead of earlier ones, so this counts the order's choices as well as backfilling",
                text::whole(backfilled)
            )
        } else {
            format!(
                "{} backfilled: started while an earlier-submitted job was waiting",
                text::whole(backfilled)
            )
        };
        let mut caption = format!(
            "Schedule of {what} (cell {cell}), {}: {} jobs ({marked}){} overlapping the window, each a box as many {unit} high as it holds, packed first-fit into rows — a picture of the schedule, not the node map.",
            gantt::window_text(data.gantt_window, clock),
            text::whole(data.gantt_jobs.len()),
            if data.gantt_reservations.is_empty() {
                String::new()
            } else {
                format!(
                    " and {} reservations",
                    text::whole(data.gantt_reservations.len())
                )
            }
        );
        if let Some(m) = data.gantt_moved {
            caption.push_str(&moved_text(&m, unit, clock));
        }
        if data.gantt_jobs.is_empty() && data.gantt_reservations.is_empty() {
            caption.push_str(" No job runs in this window (reports.gantt.start picks another).");
        }
        caption.push_str(&same_at);
        if scaled {
            caption.push_str(" Times are trace seconds after load scaling, so no dates are given.");
        }
        section.charts.push(Chart {
            id: "gantt".into(),
            caption,
            svg,
        });
    }
}

/// Why the window is not a quarter into the measurement window, for the caption.
fn moved_text(m: &Moved, unit: &str, clock: Option<&TraceClock>) -> String {
    let at = match clock {
        Some(c) => c.date_time(m.from),
        None => format!("trace hour {}", svg::label((m.from / 3600.0).floor())),
    };
    let default = match m.idle {
        Some(idle) => format!(
            "falls in a span with no job running, {}",
            span_text(idle, clock)
        ),
        None => format!(
            "shows {} {unit} busy on average",
            text::number(m.default_load)
        ),
    };
    let mean = text::number(m.mean_load);
    if m.load >= m.mean_load / 2.0 {
        format!(
            " The default window, a quarter into the measurement window ({at}), {default}, so this one starts at the first later job start from which the window holds at least half the cell's mean load: {} {unit} busy on average, against {mean} over the measurement window (reports.gantt.start picks another).",
            text::number(m.load)
        )
    } else {
        format!(
            " The default window, a quarter into the measurement window ({at}), {default}, and no later window holds half the cell's mean load ({mean} {unit} busy on average), so this one starts at the next job start (reports.gantt.start picks another)."
        )
    }
}

/// "from 2004-11-10 20:50 to 2004-11-15 09:37" (the caption names the time zone before), or
/// trace hours.
fn span_text(span: (f64, f64), clock: Option<&TraceClock>) -> String {
    match clock {
        Some(c) => format!("from {} to {}", c.date_time(span.0), c.date_time(span.1)),
        None => format!(
            "from trace hour {} to {}",
            svg::label((span.0 / 3600.0).floor()),
            svg::label((span.1 / 3600.0).ceil())
        ),
    }
}
