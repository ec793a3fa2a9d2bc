//! The multi-resource penalty section (Klusáček & Rudová §4; docs/fairshare.md), shown when a
//! result set has `job_penalties.parquet` and a `penalty` axis with both `cpu` and `pe_min`:
//! for every pair of configurations that differ only in that axis (fairshare or priority order),
//! the CDF of the penalty increase among the jobs `pe_min` charges more (the paper's Fig. 4
//! left), the shares of jobs, CPU time and users affected beside the paper's, and the waits of
//! affected and unaffected jobs under each penalty (the paper: affected jobs wait about 33
//! minutes longer). Figures from the first replica.

use super::{Chart, Context, Family, Section, Table, ViewKind, ViewSpec};
use crate::report::charts::{self, Axis as Scaling, Draw, LineChart, Panel, Point, Series};
use crate::report::metric;
use crate::report::palette::COLORS;
use crate::report::penalties::{Shares, WaitPair, shares, waits};
use crate::report::shape::{Config, Grid, ResultShape};
use crate::report::svg::{DASHES, Look};
use crate::report::text;
use crate::report::units::WAIT_DECIMALS;

pub struct Penalties;

/// Points per CDF line.
const MAX_POINTS: usize = 200;

impl Family for Penalties {
    fn name(&self) -> &'static str {
        "penalties"
    }

    fn heading(&self) -> &'static str {
        "Multi-resource penalties: pe_min against cpu"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        let both = shape.axis("penalty").is_some_and(|a| {
            let levels: Vec<String> = a.levels.iter().map(|l| a.value(l)).collect();
            levels.iter().any(|l| l == "cpu") && levels.iter().any(|l| l == "pe_min")
        });
        if !both || !shape.files.contains("job_penalties.parquet") {
            return Vec::new();
        }
        vec![ViewSpec {
            family: self.name(),
            kind: ViewKind::Section,
        }]
    }

    fn build(&self, _views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section) {
        build(ctx, section);
    }
}

/// The `cpu` and `pe_min` configurations of one setting, with its label (the other axes).
struct Pair<'g, 'a> {
    label: String,
    /// The setting with its axes named, for the finding's lead ("workload = wagap-2013").
    named: Option<String>,
    cpu: &'g Config<'a>,
    pe_min: &'g Config<'a>,
}

/// What the section's figures are: penalties and waits.
const COLUMNS: [&str; 2] = ["penalty", "wait"];

/// The pairs, once per setting that can change them, and the sentence saying so when metric
/// settings are left out.
fn pairs<'g, 'a>(grid: &'g Grid<'a>) -> (Vec<Pair<'g, 'a>>, Option<String>) {
    let Some(p) = grid.shape.axis_index("penalty") else {
        return (Vec::new(), None);
    };
    let once = metric::once_per_setting(grid, &COLUMNS);
    let mut skip = once.blind.clone();
    skip.push(p);
    let fair = |c: &Config<'_>| matches!(c.text("order").as_str(), "fairshare" | "priority");
    let mut out = Vec::new();
    for cpu in once
        .configs
        .iter()
        .copied()
        .filter(|c| fair(c) && c.text("penalty") == "cpu")
    {
        let Some(pe_min) = grid.configs.iter().find(|c| {
            c.text("penalty") == "pe_min"
                && c.levels
                    .iter()
                    .zip(&cpu.levels)
                    .enumerate()
                    .all(|(i, (a, b))| i == p || a == b)
        }) else {
            continue;
        };
        let label = grid
            .shape
            .settings(&cpu.levels, &skip)
            .unwrap_or_else(|| "this run".to_string());
        let named = grid.shape.named(&cpu.levels, &skip);
        out.push(Pair {
            label,
            named,
            cpu,
            pe_min,
        });
    }
    (out, once.note)
}

fn cell<'c>(config: &'c Config<'_>) -> Option<&'c str> {
    config.rows.first().map(|r| r.cell.as_str())
}

fn pct(f: f64) -> String {
    format!("{} %", text::number(f * 100.0))
}

fn opt_pct(f: Option<f64>) -> String {
    f.map_or("–".into(), pct)
}

/// The paper's figure: affected jobs waited about 33 minutes longer under `pe_min` (seconds).
const PAPER_AFFECTED_WAIT_INCREASE: f64 = 33.0 * 60.0;

/// A column of signed differences: `text::column`, with a "+" on those above zero as shown.
fn signed_column(values: &[Option<f64>], decimals: usize) -> Vec<String> {
    values
        .iter()
        .zip(text::column(values, decimals))
        .map(|(v, t)| {
            let shown_nonzero = t.chars().any(|c| c.is_ascii_digit() && c != '0');
            if v.is_some_and(|v| v > 0.0) && shown_nonzero {
                format!("+{t}")
            } else {
                t
            }
        })
        .collect()
}

/// A pair's table label and its finding lead (axes named).
type Names = (String, Option<String>);

fn build(ctx: &Context<'_>, section: &mut Section) {
    let grid = ctx.grid;
    let data = ctx.data;
    let mut computed: Vec<(Names, Shares, [Option<WaitPair>; 3])> = Vec::new();
    let (pairs, note) = pairs(grid);
    for pair in pairs {
        let (Some(a), Some(b)) = (
            cell(pair.cpu).and_then(|c| data.penalties.get(c)),
            cell(pair.pe_min).and_then(|c| data.penalties.get(c)),
        ) else {
            continue;
        };
        computed.push(((pair.label, pair.named), shares(a), waits(a, b)));
    }
    if computed.is_empty() {
        return;
    }
    section.intro.push(
        "Klusáček & Rudová's §4 on our data (docs/fairshare.md): a job is affected when its multi-resource penalty `pe_min` (the cheapest processor equivalent over the node classes able to run it) exceeds `cpu` (its requested cores). Figures from job_penalties.parquet: penalties depend only on the job and the machine; waits are those of the fairshare runs charging `cpu` and `pe_min`.".into(),
    );
    section.intro.extend(note);
    let mut rows: Vec<Vec<String>> = computed
        .iter()
        .map(|((label, _), s, _)| {
            vec![
                label.clone(),
                format!("{} of {}", text::whole(s.affected), text::whole(s.priced)),
                pct(s.job_fraction),
                pct(s.cpu_time_fraction),
                format!(
                    "{} of {} ({})",
                    text::whole(s.affected_users),
                    text::whole(s.users),
                    pct(if s.users > 0 {
                        s.affected_users as f64 / s.users as f64
                    } else {
                        0.0
                    })
                ),
                opt_pct(s.at_least_20pct),
                opt_pct(s.at_least_100pct),
            ]
        })
        .collect();
    rows.push(
        [
            "paper (MetaCentrum 2013)",
            "–",
            "under 2 %",
            "over 5 %",
            "about 40 %",
            "nearly 90 %",
            "about 40 %",
        ]
        .map(String::from)
        .to_vec(),
    );
    section.tables.push(Table {
        caption: "Jobs, CPU time (cores × runtime) and users whose penalty rises under pe_min, and the fraction of those jobs whose penalty rises by 20 % and 100 % or more, beside the paper's. Jobs no node class can run are left out.".into(),
        headers: [
            "setting",
            "affected jobs",
            "jobs",
            "CPU time",
            "users",
            "≥ +20 %",
            "≥ +100 %",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        text_columns: 1,
        folded: false,
    });
    // Waits in the report's wait unit, a column of decimals each (text::column).
    let unit = ctx.grid.waits;
    let mut wait_rows = Vec::new();
    let mut columns: [Vec<Option<f64>>; 3] = Default::default();
    for ((label, _), _, w) in &computed {
        for (name, pair) in ["affected jobs", "other jobs", "all jobs"].iter().zip(w) {
            if let Some(p) = pair {
                wait_rows.push(vec![
                    label.clone(),
                    name.to_string(),
                    text::fixed(p.jobs as f64, 0),
                ]);
                columns[0].push(Some(unit.of(p.cpu)));
                columns[1].push(Some(unit.of(p.pe_min)));
                columns[2].push(Some(unit.of(p.change())));
            }
        }
    }
    wait_rows.push(
        ["paper (MetaCentrum 2013)", "affected jobs", "–"]
            .map(String::from)
            .to_vec(),
    );
    columns[0].push(None);
    columns[1].push(None);
    columns[2].push(Some(unit.of(PAPER_AFFECTED_WAIT_INCREASE)));
    let texts = [
        text::column(&columns[0], WAIT_DECIMALS),
        text::column(&columns[1], WAIT_DECIMALS),
        signed_column(&columns[2], WAIT_DECIMALS),
    ];
    for (k, row) in wait_rows.iter_mut().enumerate() {
        row.extend(texts.iter().map(|t| t[k].clone()));
    }
    let symbol = unit.symbol();
    section.tables.push(Table {
        caption: format!("Mean wait ({symbol}) of the jobs whose penalty rises under pe_min, of the others and of all, in the fairshare run charging cpu and in the one charging pe_min (jobs that ran in both), beside the paper's."),
        headers: [
            "setting",
            "jobs",
            "n",
            &format!("wait (cpu, {symbol})"),
            &format!("wait (pe_min, {symbol})"),
            &format!("change ({symbol})"),
        ]
        .map(String::from)
        .to_vec(),
        rows: wait_rows,
        text_columns: 2,
        folded: false,
    });
    for ((_, named), s, w) in &computed {
        let mut sentences = Vec::new();
        sentences.push(format!(
            "{} of jobs, {} of CPU time and {} of {} users pay more under pe_min (paper: under 2 %, over 5 %, about 40 %)",
            pct(s.job_fraction),
            pct(s.cpu_time_fraction),
            text::whole(s.affected_users),
            text::whole(s.users)
        ));
        if let Some(a) = w[0] {
            sentences.push(format!(
                "the affected jobs wait {} on average under pe_min against {} under cpu ({}; paper: {})",
                unit.text(a.pe_min),
                unit.text(a.cpu),
                unit.signed(a.change()),
                unit.signed(PAPER_AFFECTED_WAIT_INCREASE)
            ));
        }
        if let Some(o) = w[1] {
            sentences.push(format!(
                "the other jobs {} against {}",
                unit.text(o.pe_min),
                unit.text(o.cpu)
            ));
        }
        section.findings.push(super::Finding {
            title: match named {
                Some(n) => format!("penalty = pe_min vs cpu at {n}"),
                None => "penalty = pe_min vs cpu".to_string(),
            },
            text: sentences.join("; ") + ".",
        });
    }
    let series: Vec<Series> = computed
        .iter()
        .enumerate()
        .filter(|(_, (_, s, _))| !s.increases.is_empty())
        .map(|(i, ((label, _), s, _))| {
            let n = s.increases.len();
            let step = n.div_ceil(MAX_POINTS).max(1);
            let mut points: Vec<Point> = (0..n)
                .step_by(step)
                .map(|k| Point::new(s.increases[k] * 100.0, (k + 1) as f64 / n as f64))
                .collect();
            points.push(Point::new(s.increases[n - 1] * 100.0, 1.0));
            Series {
                name: label.clone(),
                look: Look {
                    color: COLORS[i % COLORS.len()].to_string(),
                    dash: DASHES[(i / COLORS.len()) % DASHES.len()],
                    marker: 0,
                },
                draw: Draw::Plain,
                points,
            }
        })
        .collect();
    if series.is_empty() {
        return;
    }
    let mut chart = LineChart::new(
        "CDF of the penalty increase",
        "increase of P(j), pe_min over cpu (%)",
        "fraction of affected jobs",
        vec![Panel {
            title: None,
            series,
        }],
    );
    chart.x_axis = Scaling::Log;
    chart.y_axis = Scaling::Linear;
    chart.y_range = Some((0.0, 1.0));
    chart.legend_heading = Some("setting");
    section.charts.push(Chart {
        id: "penalty-increase-cdf".into(),
        caption: "Among the jobs whose penalty rises under pe_min, the fraction whose increase is at most x (the paper's Fig. 4 left: for nearly 90 % at least +20 %, for 40 % at least +100 %).".into(),
        svg: charts::line_chart(&chart),
    });
}
