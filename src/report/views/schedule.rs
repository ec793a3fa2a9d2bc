//! The schedule view: one cell's jobs (and granted reservations) in a time window as a Gantt
//! picture, with backfilled jobs and reservations marked and the window stated in dates when the
//! trace gives its start (`reports.gantt` in the manifest picks the cell and window).

use super::{Chart, Context, Family, Section, ViewKind, ViewSpec};
use crate::report::gantt::{self, Gantt};
use crate::report::metric;
use crate::report::shape::ResultShape;

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
        let svg = gantt::gantt(&Gantt {
            title: &title,
            jobs: &data.gantt_jobs,
            reservations: &data.gantt_reservations,
            capacity,
            window: data.gantt_window,
            unit,
            clock,
        });
        let backfilled = data.gantt_jobs.iter().filter(|j| j.backfilled).count();
        let mut caption = format!(
            "Schedule of {what} (cell {cell}), {}: {} jobs ({} backfilled: started while an earlier-submitted job was waiting){} overlapping the window, each a box as many {unit} high as it holds, packed first-fit into rows — a picture of the schedule, not the node map.",
            gantt::window_text(data.gantt_window, clock),
            data.gantt_jobs.len(),
            backfilled,
            if data.gantt_reservations.is_empty() {
                String::new()
            } else {
                format!(" and {} reservations", data.gantt_reservations.len())
            }
        );
        if let Some(idle) = data.gantt_skipped {
            caption.push_str(&format!(
                " The trace has no job running over {}, so the window starts at the next job start instead of a quarter into the measurement window (reports.gantt.start picks another).",
                gantt::window_text(idle, clock)
            ));
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
