//! The configurations table: one row per configuration (replicas averaged) with the axes that
//! vary as columns, then the metrics — what a reader looks values up in.

use super::{Context, Family, Section, Table, ViewKind, ViewSpec};
use crate::report::metric::METRICS;
use crate::report::shape::ResultShape;
use crate::report::text;
use crate::report::units::WaitUnit;

pub struct Configurations;

/// Tables longer than this are folded in the HTML report (the Markdown one has them whole).
pub const FOLD_ROWS: usize = 40;

/// Short column headers of the metrics (waits with the report's wait unit).
fn header(column: &str, waits: WaitUnit) -> String {
    match column {
        "jobs" => "jobs".into(),
        "wait_mean" => format!("mean wait ({})", waits.symbol()),
        "wait_p95" => format!("p95 wait ({})", waits.symbol()),
        "bounded_slowdown_mean" => "mean bsld".into(),
        "utilization" => "utilization".into(),
        "queue_length_sampled" => "queue at calls".into(),
        "backfilled_fraction" => "backfilled".into(),
        "expansion_factor_weighted" => "EF (Eq. 2)".into(),
        _ => String::new(),
    }
}

impl Family for Configurations {
    fn name(&self) -> &'static str {
        "table"
    }

    fn heading(&self) -> &'static str {
        "Configurations"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        vec![ViewSpec {
            family: self.name(),
            kind: ViewKind::Table {
                axes: shape.axes.iter().map(|a| a.name.clone()).collect(),
            },
        }]
    }

    fn build(&self, _views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section) {
        section.tables.push(configurations(ctx));
    }
}

/// The table (also given to custom templates as `table`).
pub fn configurations(ctx: &Context<'_>) -> Table {
    let shape = &ctx.grid.shape;
    // Jobs first, then the metrics in their usual order.
    let metrics: Vec<_> = METRICS
        .iter()
        .filter(|m| m.column == "jobs")
        .chain(METRICS.iter().filter(|m| m.column != "jobs"))
        .filter(|m| shape.columns.contains(m.column))
        .collect();
    let mut headers: Vec<String> = shape.axes.iter().map(|a| a.label()).collect();
    if shape.axes.is_empty() {
        headers.push("workload".into());
    }
    if shape.replicas > 1 {
        headers.push("replicas".into());
    }
    headers.extend(metrics.iter().map(|m| header(m.column, ctx.grid.waits)));
    // Each metric column shows one count of decimals: the metric's own, or more where a value
    // would otherwise keep fewer than three significant digits (text::column); jobs are
    // counts, three significant digits each.
    let columns: Vec<Vec<String>> = metrics
        .iter()
        .map(|m| {
            let m = ctx.grid.shown(m);
            let means: Vec<Option<f64>> = ctx
                .grid
                .configs
                .iter()
                .map(|c| c.estimate(m.column, m.scale).map(|e| e.mean))
                .collect();
            if m.column == "jobs" {
                means
                    .iter()
                    .map(|v| v.map_or("–".to_string(), text::number))
                    .collect()
            } else {
                text::column(&means, m.decimals)
            }
        })
        .collect();
    let rows: Vec<Vec<String>> = ctx
        .grid
        .configs
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let mut row: Vec<String> = shape
                .axes
                .iter()
                .zip(&c.levels)
                .map(|(a, l)| a.bare(l))
                .collect();
            if shape.axes.is_empty() {
                row.push(c.text("workload"));
            }
            if shape.replicas > 1 {
                row.push(text::whole(c.rows.len()));
            }
            row.extend(columns.iter().map(|col| col[k].clone()));
            row
        })
        .collect();
    let n = rows.len();
    Table {
        caption: format!(
            "{} configuration{}{}. Waits in {}; utilization and backfilled as fractions; bsld is the bounded slowdown, EF the node-seconds-weighted expansion factor (docs/metrics.md).",
            text::whole(n),
            if n == 1 { "" } else { "s" },
            if shape.replicas > 1 {
                ", means over replicas"
            } else {
                ""
            },
            ctx.grid.waits.plural()
        ),
        headers,
        rows,
        text_columns: shape.axes.len().max(1),
        folded: n > FOLD_ROWS,
    }
}

/// Table rows from each row's leading text cells and its numbers, the numbers formatted column
/// by column (`text::column`: one count of decimals a column, at least `decimals[k]` in the
/// k-th, enough for three significant digits of every value, thousands separated).
pub fn number_rows(
    rows: Vec<(Vec<String>, Vec<Option<f64>>)>,
    decimals: &[usize],
) -> Vec<Vec<String>> {
    let columns: Vec<Vec<String>> = decimals
        .iter()
        .enumerate()
        .map(|(k, &d)| {
            let values: Vec<Option<f64>> = rows
                .iter()
                .map(|(_, v)| v.get(k).copied().flatten())
                .collect();
            text::column(&values, d)
        })
        .collect();
    rows.into_iter()
        .enumerate()
        .map(|(i, (mut cells, _))| {
            cells.extend(columns.iter().map(|c| c[i].clone()));
            cells
        })
        .collect()
}
