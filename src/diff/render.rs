//! Rendering a [`Diff`] as an aligned table, Markdown or JSON. Only cells and metrics that
//! changed are listed; identical cells are counted.

use std::fmt::Write;

use super::compare::{Diff, MetricDelta, Side};
use crate::report::units::{duration_text, signed_duration_text};

/// Whether `metric` is in seconds (docs/outputs.md, through `store::columns`): the table and
/// Markdown print it with its unit, as reports do; JSON keeps plain seconds.
fn in_seconds(metric: &str) -> bool {
    crate::store::columns::describe(crate::store::columns::OutputFile::Summary, metric)
        .is_some_and(|c| c.unit.as_deref() == Some("s"))
}

fn side(s: &Option<Side>, seconds: bool) -> String {
    let value = |v: f64| if seconds { duration_text(v) } else { num(v) };
    match s {
        None => "-".into(),
        Some(Side {
            mean,
            ci95: Some(ci),
            n,
            ..
        }) => format!("{} ±{} (n={n})", value(*mean), value(*ci)),
        Some(Side { mean, .. }) => value(*mean),
    }
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

fn rel(m: &MetricDelta) -> String {
    m.rel.map_or("-".into(), |r| format!("{:+.2}%", r * 100.0))
}

fn abs(m: &MetricDelta, seconds: bool) -> String {
    m.abs.map_or("-".into(), |d| {
        if seconds {
            signed_duration_text(d)
        } else if d >= 0.0 {
            format!("+{}", num(d))
        } else {
            num(d)
        }
    })
}

fn noise(m: &MetricDelta) -> &'static str {
    match m.p_value {
        Some(p) if p < 0.05 => "beyond noise",
        Some(_) => "within noise",
        None => "",
    }
}

fn rows(diff: &Diff) -> Vec<[String; 7]> {
    let mut out = Vec::new();
    for cell in diff.cells.iter().filter(|c| c.changed()) {
        for m in cell
            .metrics
            .iter()
            .filter(|m| m.changed || m.p_value.is_some_and(|p| p >= 0.05) && m.abs != Some(0.0))
        {
            let seconds = in_seconds(&m.metric);
            out.push([
                format!("{}/{}", cell.experiment, cell.cell),
                m.metric.clone(),
                side(&m.a, seconds),
                side(&m.b, seconds),
                abs(m, seconds),
                rel(m),
                noise(m).to_string(),
            ]);
        }
    }
    out
}

fn footer(diff: &Diff) -> String {
    let same = diff.cells.iter().filter(|c| !c.changed()).count();
    let mut s = format!(
        "{} cells compared: {} changed, {same} identical",
        diff.cells.len(),
        diff.cells.len() - same
    );
    if !diff.only_a.is_empty() {
        let _ = write!(s, "\nonly in {}: {}", diff.a, diff.only_a.join(", "));
    }
    if !diff.only_b.is_empty() {
        let _ = write!(s, "\nonly in {}: {}", diff.b, diff.only_b.join(", "));
    }
    s
}

const HEADER: [&str; 7] = ["cell", "metric", "A", "B", "change", "relative", "noise"];

pub fn render_table(diff: &Diff) -> String {
    let rows = rows(diff);
    let mut widths = HEADER.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = format!("A: {}\nB: {}\n\n", diff.a, diff.b);
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:w$}"))
            .collect();
        parts.join("  ").trim_end().to_string() + "\n"
    };
    if !rows.is_empty() {
        out += &line(HEADER.to_vec());
        for r in &rows {
            out += &line(r.iter().map(String::as_str).collect());
        }
        out.push('\n');
    }
    out + &footer(diff) + "\n"
}

pub fn render_markdown(diff: &Diff) -> String {
    let rows = rows(diff);
    let mut out = format!("**A**: `{}` · **B**: `{}`\n\n", diff.a, diff.b);
    if !rows.is_empty() {
        out += &format!(
            "| {} |\n|{}\n",
            HEADER.join(" | "),
            "---|".repeat(HEADER.len())
        );
        for r in &rows {
            out += &format!("| {} |\n", r.join(" | "));
        }
        out.push('\n');
    }
    out + &footer(diff).replace('\n', "  \n") + "\n"
}

pub fn render_json(diff: &Diff) -> String {
    serde_json::to_string_pretty(diff).expect("diff serializes") + "\n"
}
