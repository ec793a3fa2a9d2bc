//! The configurations table: one row per configuration (replicas averaged) with the axes that
//! vary as columns, then the metrics — what a reader looks values up in.

use super::{Context, Family, Section, Table, ViewKind, ViewSpec};
use crate::report::metric::METRICS;
use crate::report::shape::ResultShape;
use crate::report::text;

pub struct Configurations;

/// Tables longer than this are folded in the HTML report (the Markdown one has them whole).
pub const FOLD_ROWS: usize = 40;

/// Short column headers of the metrics.
fn header(column: &str) -> &'static str {
    match column {
        "jobs" => "jobs",
        "wait_mean" => "mean wait (h)",
        "wait_p95" => "p95 wait (h)",
        "bounded_slowdown_mean" => "mean bsld",
        "utilization" => "utilization",
        "queue_length_sampled" => "queue at calls",
        "backfilled_fraction" => "backfilled",
        "expansion_factor_weighted" => "EF (Eq. 2)",
        _ => "",
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
    headers.extend(metrics.iter().map(|m| header(m.column).to_string()));
    // Each metric column shows one number of decimals: the metric's own, or more where a value
    // would otherwise keep fewer than three significant digits (LPC-EGEE's mean waits of
    // 0.0396 h and 0.0366 h are not both "0.04").
    let means: Vec<Vec<Option<f64>>> = ctx
        .grid
        .configs
        .iter()
        .map(|c| {
            metrics
                .iter()
                .map(|m| c.estimate(m.column, m.scale).map(|e| e.mean))
                .collect()
        })
        .collect();
    let decimals: Vec<usize> = metrics
        .iter()
        .enumerate()
        .map(|(k, m)| {
            means
                .iter()
                .filter_map(|row| row[k])
                .map(significant_decimals)
                .fold(m.decimals, usize::max)
        })
        .collect();
    let rows: Vec<Vec<String>> = ctx
        .grid
        .configs
        .iter()
        .zip(&means)
        .map(|(c, means)| {
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
                row.push(c.rows.len().to_string());
            }
            row.extend(metrics.iter().zip(means).zip(&decimals).map(|((m, v), d)| {
                v.map_or("–".to_string(), |v| {
                    if m.column == "jobs" {
                        text::number(v)
                    } else {
                        format!("{v:.d$}")
                    }
                })
            }));
            row
        })
        .collect();
    let n = rows.len();
    Table {
        caption: format!(
            "{n} configuration{}{}. Waits in hours; utilization and backfilled as fractions; bsld is the bounded slowdown, EF the node-seconds-weighted expansion factor (docs/metrics.md).",
            if n == 1 { "" } else { "s" },
            if shape.replicas > 1 {
                ", means over replicas"
            } else {
                ""
            }
        ),
        headers,
        rows,
        text_columns: shape.axes.len().max(1),
        folded: n > FOLD_ROWS,
    }
}

/// Decimals that keep three significant digits of `v` (none for values from 100 up; at most 6).
fn significant_decimals(v: f64) -> usize {
    if v == 0.0 || !v.is_finite() {
        0
    } else {
        (2 - v.abs().log10().floor() as i64).clamp(0, 6) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::significant_decimals;

    #[test]
    fn decimals_keep_three_significant_digits() {
        assert_eq!(significant_decimals(0.0396), 4);
        assert_eq!(significant_decimals(5.41), 2);
        assert_eq!(significant_decimals(427.3), 0);
        assert_eq!(significant_decimals(0.0), 0);
        assert_eq!(significant_decimals(1e-9), 6);
    }
}
