//! The reservation section (Margo et al., "Impact of Reservations on Production Job
//! Scheduling", section 6), shown when an experiment has reservation scenarios: what differs
//! between our machine and the paper's (node count, the cap and widths set for a larger
//! machine), a paragraph per month and scheduler comparing directions with *both* of the
//! paper's months, tables per scenario (replicas averaged) and per job-size class, expansion
//! factor by scenario and size class, and utilization (reserved capacity counted as used) and
//! queue depth over time. A scenario keeps one look in every chart of the section.

use super::table::number_rows;
use super::{Chart, Context, Family, Finding, Section, Table, ViewKind, ViewSpec};
use crate::report::charts::{
    self, Axis as Scaling, Bar, BarChart, BarSeries, Draw, LineChart, Panel, Point, Series,
};
use crate::report::data::SummaryRow;
use crate::report::metric;
use crate::report::palette::{self, COLORS};
use crate::report::shape::{Level, ResultShape};
use crate::report::svg::Look;
use crate::report::text::{self, number};
use crate::report::units::{WAIT_DECIMALS, WaitUnit};

/// The paper the section compares with, when the manifest says the experiment reproduces it
/// (`reports.reproduces`); any other reservation study gets no paper's words or figures.
pub const MARGO: &str = "margo-impact-of-reservations";

/// The paper's throttle: 256 nodes × 12 hours per sliding 7 days — "all unshared batch nodes in
/// the system for half a day each week".
pub const PAPER_CAP_NODE_HOURS: f64 = 256.0 * 12.0;

/// The paper's figures: (month, baseline, reservations, reservations + throttle) of the
/// expansion factor and of the mean wait in hours (section 6).
const PAPER_EF: [(&str, f64, f64, f64); 2] = [
    ("March 2006", 2.05, 7.35, 1.70),
    ("March 2007", 2.53, 9.35, 5.21),
];
const PAPER_WAIT: [(&str, f64, f64, f64); 2] = [
    ("March 2006", 6.03, 74.0, 4.44),
    ("March 2007", 13.7, 107.0, 44.0),
];

pub struct Reservations;

/// A value read off a time-series bin (start, utilization, queue, reserved).
type BinValue = dyn Fn(&(f64, f64, f64, f64)) -> f64;

impl Family for Reservations {
    fn name(&self) -> &'static str {
        "reservations"
    }

    fn heading(&self) -> &'static str {
        "Reservations"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        if !metric::has_reservations(shape) {
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

/// One scenario of one workload and scheduler, over its replicas.
struct Group<'a> {
    workload: String,
    scheduler: String,
    scenario: String,
    baseline: bool,
    rate: Option<f64>,
    cap: Option<f64>,
    rows: Vec<&'a SummaryRow>,
}

impl Group<'_> {
    fn mean(&self, column: &str) -> Option<f64> {
        crate::report::shape::estimate(&self.rows, column, 1.0).map(|e| e.mean)
    }

    fn ef(&self) -> f64 {
        self.mean("expansion_factor_weighted").unwrap_or(f64::NAN)
    }

    /// Mean wait, seconds.
    fn wait(&self) -> f64 {
        self.mean("wait_mean").unwrap_or(f64::NAN)
    }
}

/// Names and looks of scenarios, shared by every chart of the section.
struct Looks<'a> {
    ctx: &'a Context<'a>,
    /// Reservation scenarios other than `none`, in grid order.
    scenarios: Vec<String>,
}

impl Looks<'_> {
    fn label(&self, g: &Group<'_>) -> String {
        if g.baseline {
            return "baseline".into();
        }
        let mut parts = Vec::new();
        if self.scenarios.len() > 1 {
            parts.push(g.scenario.clone());
        }
        if let Some(r) = g.rate {
            parts.push(format!("{}/wk", crate::report::svg::label(r)));
        }
        parts.push(g.cap.map_or("no cap".to_string(), |c| {
            format!("cap {}", crate::report::svg::label(c))
        }));
        parts.join(", ")
    }

    /// The cap's colour (as in the sweep charts), dashed (or light, in bars) for the second
    /// scenario; black for the baseline.
    fn look(&self, g: &Group<'_>) -> Look {
        if g.baseline {
            return palette::reference(0);
        }
        let shape = &self.ctx.grid.shape;
        let level = g.cap.map_or(Level::None, Level::Number);
        let mut look = match shape.axis("throttle_node_hours") {
            Some(a) if a.index(&level).is_some() => self.ctx.palette.look(a, &level),
            _ => Look {
                color: COLORS[0].to_string(),
                dash: "",
                marker: 0,
            },
        };
        let k = self
            .scenarios
            .iter()
            .position(|s| *s == g.scenario)
            .unwrap_or(0);
        look.dash = crate::report::svg::DASHES[k % crate::report::svg::DASHES.len()];
        look
    }
}

fn groups<'a>(rows: &[&'a SummaryRow]) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for &row in rows {
        let text = |k: &str| row.text.get(k).cloned().unwrap_or_default();
        let num = |k: &str| row.numbers.get(k).copied().flatten();
        let scenario = text("reservations");
        let baseline = scenario == "none";
        let (rate, cap) = if baseline {
            (None, None)
        } else {
            (num("reservation_rate"), num("throttle_node_hours"))
        };
        let (workload, scheduler) = (text("workload"), text("scheduler"));
        match out.iter_mut().find(|g| {
            g.workload == workload
                && g.scheduler == scheduler
                && g.scenario == scenario
                && g.rate == rate
                && g.cap == cap
        }) {
            Some(g) => g.rows.push(row),
            None => out.push(Group {
                workload,
                scheduler,
                scenario,
                baseline,
                rate,
                cap,
                rows: vec![row],
            }),
        }
    }
    out
}

/// The capped group whose cap is nearest `target` node-hours, if within 10 % of it.
fn nearest<'a, 'r>(groups: &[&'a Group<'r>], target: f64) -> Option<&'a Group<'r>> {
    let d = |g: &Group<'_>| (g.cap.unwrap_or(0.0) - target).abs();
    groups
        .iter()
        .copied()
        .filter(|g| g.cap.is_some())
        .min_by(|a, b| d(a).total_cmp(&d(b)))
        .filter(|g| d(g) <= 0.1 * target)
}

/// A scenario table's row: its text cells, and its numbers for `table::number_rows` with
/// [`SCENARIO_DECIMALS`].
fn scenario_row(
    looks: &Looks<'_>,
    g: &Group<'_>,
    waits: WaitUnit,
) -> (Vec<String>, Vec<Option<f64>>) {
    (
        vec![
            g.workload.clone(),
            g.scheduler.clone(),
            looks.label(g),
            text::whole(g.rows.len()),
        ],
        vec![
            g.mean("expansion_factor_weighted"),
            g.mean("wait_mean").map(|w| waits.of(w)),
            g.mean("utilization"),
            g.mean("utilization_with_reserved"),
            g.mean("reservations_granted"),
            g.mean("reservations_shifted"),
            g.mean("reservations_rejected"),
        ],
    )
}

/// The least decimals of the scenario tables' number columns: the configurations table's for
/// the expansion factor, wait and utilizations (`metric::METRICS`); counts (replicas' means of
/// granted, shifted and rejected requests) need none of their own.
const SCENARIO_DECIMALS: [usize; 7] = [3, WAIT_DECIMALS, 4, 4, 0, 0, 0];

/// Axes the section tells apart: the rest are held at their first level.
const SECTION_AXES: [&str; 5] = [
    "workload",
    "scheduler",
    "reservations",
    "reservation_rate",
    "throttle_node_hours",
];

/// The rows the section reads: every other varying axis (a queue setup, a cluster) at its first
/// level, so that runs of different settings are never averaged as if they were replicas; and
/// the sentence saying which levels those are.
fn section_rows<'a>(ctx: &Context<'a>) -> (Vec<&'a SummaryRow>, Option<String>) {
    let shape = &ctx.grid.shape;
    let others: Vec<usize> = (0..shape.axes.len())
        .filter(|&i| !SECTION_AXES.contains(&shape.axes[i].name.as_str()))
        .collect();
    let rows = ctx
        .grid
        .configs
        .iter()
        .filter(|c| {
            others
                .iter()
                .all(|&i| c.levels[i] == shape.axes[i].levels[0])
        })
        .flat_map(|c| c.rows.iter().copied())
        .collect();
    let note = (!others.is_empty()).then(|| {
        let held: Vec<String> = others
            .iter()
            .map(|&i| shape.axes[i].named(&shape.axes[i].levels[0]))
            .collect();
        format!(
            "This section's tables, findings and charts are of the runs at {} only; the other levels of {} are compared in their own sections.",
            text::list(&held),
            text::list(&others.iter().map(|&i| shape.axes[i].short()).collect::<Vec<_>>())
        )
    });
    (rows, note)
}

fn build(ctx: &Context<'_>, section: &mut Section) {
    let data = ctx.data;
    let classes = ctx.classes;
    let (rows, held_note) = section_rows(ctx);
    let all = groups(&rows);
    let mut scenarios: Vec<String> = Vec::new();
    for g in all.iter().filter(|g| !g.baseline) {
        if !scenarios.contains(&g.scenario) {
            scenarios.push(g.scenario.clone());
        }
    }
    let looks = Looks { ctx, scenarios };
    let mut rates: Vec<f64> = all.iter().filter_map(|g| g.rate).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    let rate = rates.get(rates.len() / 2).copied();
    let rate_text = rate.map_or(String::new(), |r| {
        format!("{} reservations a week", crate::report::svg::label(r))
    });

    let paper = ctx.reproduces(MARGO);
    // What differs from the paper's machine.
    let first = data.rows.first();
    let num = |k: &str| first.and_then(|r| r.numbers.get(k).copied().flatten());
    let nodes = match (num("procs"), num("node_size")) {
        (Some(p), Some(k)) if k > 0.0 => Some(p / k),
        _ => None,
    };
    if let Some(n) = nodes.filter(|_| paper) {
        let share = n * 12.0;
        let mut widths = Vec::new();
        for s in &looks.scenarios {
            let w: Vec<f64> = all
                .iter()
                .filter(|g| &g.scenario == s)
                .flat_map(|g| g.rows.iter())
                .filter_map(|r| data.requests.get(&r.cell))
                .flat_map(|reqs| reqs.iter().map(|q| q.width))
                .collect();
            if let (Some(lo), Some(hi)) = (
                w.iter().copied().reduce(f64::min),
                w.iter().copied().reduce(f64::max),
            ) {
                widths.push(format!(
                    "{s}: {}–{} nodes (up to {:.0} % of the machine; the paper's 8–128 were up to 50 % of its 256)",
                    crate::report::svg::label(lo),
                    crate::report::svg::label(hi),
                    100.0 * hi / n
                ));
            }
        }
        section.intro.push(format!(
            "The machine here has {} nodes (procs / node_size of the results); the paper's cap, 256 nodes × 12 h = {} node-hours per 7 days, was \"all unshared batch nodes in the system for half a day each week\" on a larger DataStar, and its jobs reached 256 nodes. On {} nodes the same share is {} × 12 h = {} node-hours: the paper's absolute cap is {}× as generous here. Requested reservation widths: {}. Scenarios scaled to the machine (widths and cap × {}/256) show what the paper's policy means on this machine; the unscaled ones show the paper's numbers taken literally.",
            number(n),
            number(PAPER_CAP_NODE_HOURS),
            number(n),
            number(n),
            number(share),
            text::number(PAPER_CAP_NODE_HOURS / share),
            if widths.is_empty() {
                "none recorded".to_string()
            } else {
                widths.join("; ")
            },
            number(n)
        ));
    }
    let unit = ctx.grid.waits;
    let months = |i: usize| {
        format!(
            "{}: EF {} → {} → {}, wait {} → {} → {} {}",
            PAPER_EF[i].0,
            number(PAPER_EF[i].1),
            number(PAPER_EF[i].2),
            number(PAPER_EF[i].3),
            number(unit.of(PAPER_WAIT[i].1 * 3600.0)),
            number(unit.of(PAPER_WAIT[i].2 * 3600.0)),
            number(unit.of(PAPER_WAIT[i].3 * 3600.0)),
            unit.symbol()
        )
    };
    if paper {
        section.intro.push(format!(
            "The paper's two workloads (March 2006 and March 2007 on DataStar) are not public; ours are months of the public SDSC-DS-2004 log, so compare directions with the paper, not figures. The paper found that reservations raised the expansion factor and the wait sharply in both months, and that the throttle then made both better than the baseline in March 2006 but only recovered part of the loss in March 2007 (baseline → reservations → reservations with the throttle; {}; {}). By job size, medium jobs suffered most in March 2006, medium and large jobs in March 2007; with reserved capacity counted as used, utilization \"remains high\".",
            months(0),
            months(1)
        ));
    }
    section.intro.extend(held_note);

    let mut pairs: Vec<(String, String)> = Vec::new();
    for g in &all {
        let pair = (g.workload.clone(), g.scheduler.clone());
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    let sort_key = |g: &Group<'_>| {
        (
            !g.baseline,
            looks.scenarios.iter().position(|s| *s == g.scenario),
            g.rate.map(|r| (r * 1000.0) as i64),
            g.cap.map_or(i64::MIN, |c| (c * 1000.0) as i64),
        )
    };
    // Tables: the middle rate (and baselines) in full view, every rate folded.
    let headers: Vec<String> = [
        "workload",
        "scheduler",
        "scenario",
        "replicas",
        "EF (Eq. 2)",
        &format!("mean wait ({})", unit.symbol()),
        "utilization",
        "with reserved",
        "granted",
        "shifted",
        "rejected",
    ]
    .map(String::from)
    .to_vec();
    let mut shown_rows = Vec::new();
    let mut full_rows = Vec::new();
    let mut class_rows = Vec::new();
    let mut ef_charts = Vec::new();
    let mut paragraphs_all: Vec<Finding> = Vec::new();
    for (workload, scheduler) in &pairs {
        let mut mine: Vec<&Group<'_>> = all
            .iter()
            .filter(|g| &g.workload == workload && &g.scheduler == scheduler)
            .collect();
        mine.sort_by_key(|g| sort_key(g));
        let at_rate: Vec<&Group<'_>> = mine
            .iter()
            .copied()
            .filter(|g| g.baseline || g.rate == rate)
            .collect();
        for g in &mine {
            full_rows.push(scenario_row(&looks, g, unit));
        }
        for g in &at_rate {
            shown_rows.push(scenario_row(&looks, g, unit));
            let cells = vec![g.workload.clone(), g.scheduler.clone(), looks.label(g)];
            let mut values: Vec<Option<f64>> = classes
                .iter()
                .map(|c| g.mean(&format!("{c}_expansion_factor_weighted")))
                .collect();
            values.extend(
                classes
                    .iter()
                    .map(|c| g.mean(&format!("{c}_wait_mean")).map(|w| unit.of(w))),
            );
            class_rows.push((cells, values));
        }
        let Some(baseline) = mine.iter().copied().find(|g| g.baseline) else {
            continue;
        };
        let paragraphs = findings(&looks, baseline, &at_rate, classes, nodes, unit, paper);
        let several = paragraphs.len() > 1;
        for (scenario, text) in paragraphs {
            paragraphs_all.push(Finding {
                title: if several {
                    format!(
                        "workload = {workload}, scheduler = {scheduler}, reservations = {scenario}"
                    )
                } else {
                    format!("workload = {workload}, scheduler = {scheduler}")
                },
                text,
            });
        }
        // Expansion factor by scenario and size class.
        let mut categories = vec!["all jobs".to_string()];
        categories.extend(classes.iter().map(|c| format!("{c} jobs")));
        let series: Vec<BarSeries> = at_rate
            .iter()
            .map(|g| {
                let mut values = vec![g.mean("expansion_factor_weighted")];
                values.extend(
                    classes
                        .iter()
                        .map(|c| g.mean(&format!("{c}_expansion_factor_weighted"))),
                );
                BarSeries {
                    name: looks.label(g),
                    look: looks.look(g),
                    values: values
                        .into_iter()
                        .map(|v| v.map(|value| Bar { value, band: None }))
                        .collect(),
                }
            })
            .collect();
        let title = format!("Expansion factor by scenario and job size — {workload}, {scheduler}");
        ef_charts.push(Chart {
            id: super::slug(&format!("ef-by-size-{workload}-{scheduler}")),
            caption: format!(
                "Node-seconds-weighted expansion factor (Eq. 2) by scenario and job-size class, {workload}, {scheduler}, {rate_text}; replicas averaged.{}",
                if paper { " The paper's Graphs 10–11 show the same breakdown." } else { "" }
            ),
            svg: charts::bar_chart(&BarChart {
                title: &title,
                y_label: "expansion factor",
                groups: categories,
                series,
                y_axis: Scaling::Auto,
                legend_heading: Some("scenario"),
            }),
        });
    }
    section.findings.extend(fold_paper_tails(paragraphs_all));
    section.tables.push(Table {
        caption: format!(
            "Scenarios at {rate_text} and the baselines, replicas averaged: EF is the node-seconds-weighted expansion factor (Margo et al., Eq. 2); utilization without and with reserved capacity counted as used; reservation requests granted at the requested time, shifted later, or rejected."
        ),
        headers: headers.clone(),
        rows: number_rows(shown_rows, &SCENARIO_DECIMALS),
        text_columns: 3,
        folded: false,
    });
    let mut class_headers: Vec<String> = ["workload", "scheduler", "scenario"]
        .map(String::from)
        .to_vec();
    class_headers.extend(classes.iter().map(|c| format!("EF {c}")));
    class_headers.extend(
        classes
            .iter()
            .map(|c| format!("wait {c} ({})", unit.symbol())),
    );
    let class_decimals: Vec<usize> = classes
        .iter()
        .map(|_| 3)
        .chain(classes.iter().map(|_| WAIT_DECIMALS))
        .collect();
    section.tables.push(Table {
        caption: format!(
            "By job-size class at {rate_text} (classes of metrics.size_classes, in nodes): expansion factor and mean wait in {}.",
            unit.plural()
        ),
        headers: class_headers,
        rows: number_rows(class_rows, &class_decimals),
        text_columns: 3,
        folded: false,
    });
    if rates.len() > 1 {
        let n = full_rows.len();
        section.tables.push(Table {
            caption: format!(
                "Every scenario at every reservation rate ({} rows)",
                text::whole(n)
            ),
            headers,
            rows: number_rows(full_rows, &SCENARIO_DECIMALS),
            text_columns: 3,
            folded: true,
        });
    }
    section.charts.extend(ef_charts);
    section
        .charts
        .extend(over_time(ctx, &looks, &all, &pairs, rate, nodes, paper));
}

/// The capped runs a scenario's findings and charts single out: with the paper, the caps
/// nearest the paper's and the same share of this machine; without, the sweep's lowest and
/// highest caps (what the throttle does at either end).
fn chosen_caps<'a, 'r>(
    of: &[&'a Group<'r>],
    nodes: Option<f64>,
    paper: bool,
) -> Vec<(&'a Group<'r>, String)> {
    let mut caps: Vec<(&Group<'_>, String)> = Vec::new();
    let mut add = |g: Option<&'a Group<'r>>, what: String| {
        if let Some(g) = g
            && !caps.iter().any(|(c, _)| std::ptr::eq(*c, g))
        {
            caps.push((g, what));
        }
    };
    if paper {
        add(nearest(of, PAPER_CAP_NODE_HOURS), "the paper's cap".into());
        if let Some(n) = nodes {
            add(
                nearest(of, n * 12.0),
                format!(
                    "the paper's share of this machine, {} nodes × 12 h",
                    number(n)
                ),
            );
        }
    } else {
        let capped = || of.iter().copied().filter(|g| g.cap.is_some());
        let cap = |g: &&Group<'_>| g.cap.unwrap_or(0.0);
        add(
            capped().min_by(|a, b| cap(a).total_cmp(&cap(b))),
            "the lowest cap".into(),
        );
        add(
            capped().max_by(|a, b| cap(a).total_cmp(&cap(b))),
            "the highest cap".into(),
        );
    }
    caps
}

/// Utilization with reserved capacity and queue depth over time: a panel per workload and
/// scheduler, lines for the baseline, each scenario without a cap, the paper's cap and the
/// cap scaled to the machine (first replica, the middle rate).
fn over_time(
    ctx: &Context<'_>,
    looks: &Looks<'_>,
    all: &[Group<'_>],
    pairs: &[(String, String)],
    rate: Option<f64>,
    nodes: Option<f64>,
    paper: bool,
) -> Vec<Chart> {
    let mut util = Vec::new();
    let mut queue = Vec::new();
    for (workload, scheduler) in pairs {
        let mine: Vec<&Group<'_>> = all
            .iter()
            .filter(|g| &g.workload == workload && &g.scheduler == scheduler)
            .filter(|g| g.baseline || g.rate == rate)
            .collect();
        let mut shown: Vec<&Group<'_>> = mine.iter().copied().filter(|g| g.baseline).collect();
        for s in &looks.scenarios {
            let of: Vec<&Group<'_>> = mine.iter().copied().filter(|g| &g.scenario == s).collect();
            shown.extend(of.iter().copied().filter(|g| g.cap.is_none()));
            shown.extend(chosen_caps(&of, nodes, paper).into_iter().map(|(g, _)| g));
        }
        let mut unique: Vec<&Group<'_>> = Vec::new();
        for g in shown {
            if !unique.iter().any(|u| std::ptr::eq(*u, g)) {
                unique.push(g);
            }
        }
        let series = |f: &BinValue| -> Vec<Series> {
            unique
                .iter()
                .map(|g| {
                    let bins = ctx
                        .data
                        .series
                        .get(&g.rows[0].cell)
                        .map(|s| s.bins_with_reserved())
                        .unwrap_or_default();
                    let pts: Vec<(f64, f64)> =
                        bins.iter().map(|b| (b.0 / 86_400.0, f(b))).collect();
                    Series {
                        name: looks.label(g),
                        look: looks.look(g),
                        draw: Draw::Plain,
                        points: charts::thin(pts, 300)
                            .into_iter()
                            .map(|(x, y)| Point::new(x, y))
                            .collect(),
                    }
                })
                .collect()
        };
        let title = Some(format!("{workload}, {scheduler}"));
        util.push(Panel {
            title: title.clone(),
            series: series(&|b| b.1 + b.3),
        });
        queue.push(Panel {
            title,
            series: series(&|b| b.2),
        });
    }
    charts::from_first_bin(&mut util, true);
    charts::from_first_bin(&mut queue, true);
    let mut u = LineChart::new(
        "Utilization with reserved capacity counted as used",
        charts::DAYS_SINCE_FIRST_BIN,
        "fraction of capacity",
        util,
    );
    u.y_range = Some((0.0, 1.0));
    u.x_axis = Scaling::Linear;
    u.per_panel_x = true;
    u.legend_heading = Some("scenario");
    let mut q = LineChart::new(
        "Queue depth",
        charts::DAYS_SINCE_FIRST_BIN,
        "waiting jobs (mean per bin)",
        queue,
    );
    q.x_axis = Scaling::Linear;
    q.y_axis = Scaling::Linear;
    q.per_panel_x = true;
    q.legend_heading = Some("scenario");
    let note = if paper {
        "first replica; the baseline, each scenario without a cap, and the caps nearest the paper's (3,072 node-h) and the same share of this machine. The paper's Graphs 6–9 show the same views."
    } else {
        "first replica; the baseline, each scenario without a cap, and its lowest and highest caps."
    };
    vec![
        Chart {
            id: "utilization-with-reserved".into(),
            caption: format!("Utilization by jobs plus reserved capacity, per bin; {note}"),
            svg: charts::line_chart(&u),
        },
        Chart {
            id: "queue-depth".into(),
            caption: format!("Waiting jobs per bin; {note}"),
            svg: charts::line_chart(&q),
        },
    ]
}

/// How a capped run compares with a baseline and the unthrottled run, in words of its own.
fn throttle_effect(b: (f64, f64), u: (f64, f64), t: (f64, f64)) -> String {
    let recovered = |b: f64, u: f64, t: f64| 100.0 * (u - t) / (u - b);
    if t.0 <= b.0 && t.1 <= b.1 {
        "better than the baseline on both".to_string()
    } else if t.0 < u.0 && t.1 < u.1 && u.0 > b.0 && u.1 > b.1 {
        format!(
            "between the baseline and the unthrottled run, recovering {:.0} % of the EF loss and {:.0} % of the wait loss",
            recovered(b.0, u.0, t.0),
            recovered(b.1, u.1, t.1)
        )
    } else if t.0 <= b.0 || t.1 <= b.1 {
        "better than the baseline on one of the two and not the other".to_string()
    } else {
        "no better than without a throttle".to_string()
    }
}

/// How a capped run compares with a baseline and the unthrottled run, against both months.
fn throttle_verdict(b: (f64, f64), u: (f64, f64), t: (f64, f64), unit: WaitUnit) -> String {
    let recovered = |b: f64, u: f64, t: f64| 100.0 * (u - t) / (u - b);
    let (m6, m7) = (PAPER_EF[0], PAPER_EF[1]);
    let (w6, w7) = (PAPER_WAIT[0], PAPER_WAIT[1]);
    if t.0 <= b.0 && t.1 <= b.1 {
        format!(
            "better than the baseline on both{CAP}, as in {} (EF {} and {} against {} and {}) and unlike {}{END}",
            m6.0,
            number(m6.3),
            unit.text(w6.3 * 3600.0),
            number(m6.1),
            unit.text(w6.1 * 3600.0),
            m7.0
        )
    } else if t.0 < u.0 && t.1 < u.1 && u.0 > b.0 && u.1 > b.1 {
        format!(
            "between the baseline and the unthrottled run, recovering {:.0} % of the EF loss and {:.0} % of the wait loss{CAP} — like {} (which recovered {:.0} % and {:.0} %), unlike {} (where the throttle beat the baseline){END}",
            recovered(b.0, u.0, t.0),
            recovered(b.1, u.1, t.1),
            m7.0,
            recovered(m7.1, m7.2, m7.3),
            recovered(w7.1, w7.2, w7.3),
            m6.0
        )
    } else if t.0 <= b.0 || t.1 <= b.1 {
        format!(
            "better than the baseline on one of the two and not the other{CAP}: neither month's pattern{END}"
        )
    } else {
        format!("no better than without a throttle{CAP}, unlike either of the paper's months{END}")
    }
}

/// Marks around the paper comparison that ends a finding's effect without a throttle ([`DIR`])
/// or with a cap ([`CAP`]), up to [`END`]: the same comparison in every paragraph of the
/// section is said once, in a first paragraph ([`fold_paper_tails`]); the marks are removed
/// before anything is shown.
const DIR: char = '\u{1}';
const CAP: char = '\u{2}';
const END: char = '\u{3}';

/// The marked comparisons of `text`: (mark, comparison without its leading separator).
fn marked(text: &str) -> Vec<(char, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find([DIR, CAP]) {
        let mark = rest[i..].chars().next().unwrap_or(DIR);
        let after = &rest[i + mark.len_utf8()..];
        let end = after.find(END).unwrap_or(after.len());
        out.push((mark, after[..end].to_string()));
        rest = &after[end..];
    }
    out
}

/// The findings' paragraphs with every paper comparison they all share (the same words after
/// the same mark, in each of at least two paragraphs) taken out and said once in a first
/// finding; every mark removed (issue 35: the same closing clause eight times).
fn fold_paper_tails(findings: Vec<Finding>) -> Vec<Finding> {
    let mut shared: Vec<(char, String)> = Vec::new();
    if findings.len() > 1 {
        for m in marked(&findings[0].text) {
            if !shared.contains(&m) && findings.iter().all(|f| marked(&f.text).contains(&m)) {
                shared.push(m);
            }
        }
    }
    let strip = |text: &str| {
        let mut out = text.to_string();
        for (mark, tail) in &shared {
            out = out.replace(&format!("{mark}{tail}{END}"), "");
        }
        out.replace([DIR, CAP, END], "")
    };
    let mut out = Vec::new();
    if !shared.is_empty() {
        let n = if findings.len() == 2 {
            "both".to_string()
        } else {
            format!("all {}", text::count(findings.len()))
        };
        let lead: Vec<String> = shared
            .iter()
            .map(|(mark, tail)| {
                let tail = tail.trim_start_matches([':', ',', ' ', '—']);
                if *mark == DIR {
                    format!("Without a throttle, in {n}: {tail}.")
                } else {
                    format!("With each cap named below, in {n}: {tail}.")
                }
            })
            .collect();
        out.push(Finding {
            title: "Against the paper's two months".into(),
            text: lead.join(" "),
        });
    }
    out.extend(findings.into_iter().map(|f| Finding {
        title: f.title,
        text: strip(&f.text),
    }));
    out
}

/// A paragraph per reservation scenario for one workload and scheduler (Margo et al.,
/// section 6): (scenario, text).
fn findings(
    looks: &Looks<'_>,
    baseline: &Group<'_>,
    at_rate: &[&Group<'_>],
    classes: &[String],
    nodes: Option<f64>,
    unit: WaitUnit,
    paper: bool,
) -> Vec<(String, String)> {
    let (b_ef, b_w) = (baseline.ef(), baseline.wait());
    let mut out = Vec::new();
    for scenario in &looks.scenarios {
        let of: Vec<&Group<'_>> = at_rate
            .iter()
            .copied()
            .filter(|g| !g.baseline && &g.scenario == scenario)
            .collect();
        let Some(open) = of.iter().copied().find(|g| g.cap.is_none()) else {
            continue;
        };
        let (u_ef, u_w) = (open.ef(), open.wait());
        let rate = open.rate.map_or("reservations".to_string(), |r| {
            format!("{} reservations a week", crate::report::svg::label(r))
        });
        let mut text = format!(
            "Without a throttle, {rate} {} the expansion factor from {} to {} ({}) and the mean wait from {} to {} ({}){}. ",
            if u_ef >= b_ef { "raised" } else { "lowered" },
            number(b_ef),
            number(u_ef),
            text::change(b_ef, u_ef),
            unit.text(b_w),
            unit.text(u_w),
            text::change(b_w, u_w),
            match (paper, u_ef > b_ef && u_w > b_w) {
                (false, _) => String::new(),
                (true, true) => format!("{DIR}: the direction the paper found in both months{END}"),
                (true, false) => format!("{DIR}: not the paper's direction{END}"),
            }
        );
        for (t, what) in chosen_caps(&of, nodes, paper) {
            let (b, u, c) = ((b_ef, b_w), (u_ef, u_w), (t.ef(), t.wait()));
            text.push_str(&format!(
                "With a cap of {} node-hours ({what}), EF {} and wait {}: {}. ",
                number(t.cap.unwrap_or(0.0)),
                number(t.ef()),
                unit.text(t.wait()),
                if paper {
                    throttle_verdict(b, u, c, unit)
                } else {
                    throttle_effect(b, u, c)
                }
            ));
        }
        let ratios: Vec<(String, f64)> = classes
            .iter()
            .filter_map(|c| {
                let col = format!("{c}_expansion_factor_weighted");
                Some((c.clone(), open.mean(&col)? / baseline.mean(&col)?))
            })
            .collect();
        if let Some((worst, r)) = ratios.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            let list = ratios
                .iter()
                .map(|(c, r)| format!("{c} {}", text::factor(*r)))
                .collect::<Vec<_>>()
                .join(", ");
            text.push_str(&format!(
                "By job size, unthrottled reservations multiplied the expansion factor by {list}: {worst} jobs suffered most ({}). ",
                text::factor(*r)
            ));
        }
        if let (Some(u0), Some(u1), Some(ur)) = (
            baseline.mean("utilization"),
            open.mean("utilization"),
            open.mean("utilization_with_reserved"),
        ) {
            text.push_str(&format!(
                "Utilization by jobs went from {} to {}, or {} counting reserved capacity as used.",
                number(u0),
                number(u1),
                number(ur)
            ));
        }
        out.push((scenario.clone(), text.trim_end().to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verdict as shown: without the marks of its paper comparison.
    fn plain(v: String) -> String {
        v.replace([DIR, CAP, END], "")
    }
    use crate::report::data::ReportData;
    use crate::report::fields::Fields;
    use crate::report::palette::Palette;
    use crate::report::shape::Grid;

    fn row(cell: &str, scenario: &str, cap: Option<f64>, ef: f64, wait_h: f64) -> SummaryRow {
        let mut text = Fields::default();
        text.insert("workload".to_string(), "month".to_string());
        text.insert("scheduler".to_string(), "easy".to_string());
        text.insert("reservations".to_string(), scenario.to_string());
        let baseline = scenario == "none";
        let mut numbers = Fields::default();
        numbers.insert("procs".to_string(), Some(1368.0));
        numbers.insert("node_size".to_string(), Some(8.0));
        numbers.insert("reservation_rate".to_string(), (!baseline).then_some(15.0));
        numbers.insert("throttle_node_hours".to_string(), cap);
        numbers.insert("expansion_factor_weighted".to_string(), Some(ef));
        numbers.insert("wait_mean".to_string(), Some(wait_h * 3600.0));
        numbers.insert(
            "medium_expansion_factor_weighted".to_string(),
            Some(ef * 2.0),
        );
        SummaryRow {
            cell: cell.to_string(),
            text,
            numbers,
        }
    }

    /// The section built from `data`, with one size class ("medium"), of an experiment
    /// reproducing Margo et al.
    fn section_of(data: &ReportData) -> Section {
        section_reproducing(data, Some(MARGO))
    }

    fn section_reproducing(data: &ReportData, paper: Option<&str>) -> Section {
        let grid = Grid::new(data);
        let palette = Palette::new(&grid.shape);
        let classes = vec!["medium".to_string()];
        let ctx = Context {
            grid: &grid,
            data,
            palette: &palette,
            classes: &classes,
            reproduces: paper,
        };
        let mut section = Section::default();
        build(&ctx, &mut section);
        section
    }
    #[test]
    fn runs_of_another_queue_setup_are_not_averaged_in_as_replicas() {
        // The same scenario under queue setups none and limited: the section reads queue setup
        // none only (one replica each, EF 2 → 8), and says so; before, the limited runs were
        // averaged in as replicas (EF 2 → 13, "2" replicas).
        let with_queues = |mut r: SummaryRow, q: &str| {
            r.text.insert("queues".to_string(), q.to_string());
            r
        };
        let data = ReportData {
            rows: vec![
                with_queues(row("b", "none", None, 2.0, 1.0), "none"),
                with_queues(row("bq", "none", None, 2.0, 1.0), "limited"),
                with_queues(row("r", "tg", None, 8.0, 12.0), "none"),
                with_queues(row("rq", "tg", None, 18.0, 20.0), "limited"),
            ],
            axis_names: vec!["reservations".into(), "queues".into()],
            ..ReportData::default()
        };
        let section = section_of(&data);
        let table = &section.tables[0];
        assert_eq!(table.rows.len(), 2);
        // EF with the configurations table's three decimals, waits (hours: the median mean wait
        // is 6.5 h) with two.
        assert_eq!(table.rows[1][3..6], ["1", "8.000", "12.00"]);
        assert!(
            section
                .intro
                .iter()
                .any(|p| p.contains("of the runs at queue setup = none only")),
            "{:?}",
            section.intro
        );
    }

    #[test]
    fn without_the_paper_the_section_names_the_lowest_and_highest_caps_and_no_paper() {
        // Caps 1,000 and 3,072: without the paper, the lowest and the highest, each in words
        // of its own — 1,000 node-h with EF 5 and wait 6 h recovers (8 − 5)/(8 − 2) = 50 % and
        // (12 − 6)/(12 − 1) = 55 %.
        let data = ReportData {
            rows: vec![
                row("b", "none", None, 2.0, 1.0),
                row("r0", "tg", None, 8.0, 12.0),
                row("t0", "tg", Some(1000.0), 5.0, 6.0),
                row("t1", "tg", Some(3072.0), 3.0, 2.0),
            ],
            axis_names: vec!["reservations".into(), "throttle_node_hours".into()],
            ..ReportData::default()
        };
        let section = section_reproducing(&data, None);
        let all: Vec<String> = section
            .intro
            .iter()
            .cloned()
            .chain(section.findings.iter().map(|f| f.text.clone()))
            .chain(section.charts.iter().map(|c| c.caption.clone()))
            .chain(section.tables.iter().map(|t| t.caption.clone()))
            .collect();
        for text in &all {
            assert!(
                !text.contains("paper") && !text.contains("March 20"),
                "{text}"
            );
        }
        assert!(section.findings[0].text.contains("With a cap of 1,000 node-hours (the lowest cap), EF 5.00 and wait 6.00 h: between the baseline and the unthrottled run, recovering 50 % of the EF loss and 55 % of the wait loss."), "{}", section.findings[0].text);
        assert!(section.findings[0].text.contains("(the highest cap)"));
    }

    #[test]
    fn the_same_comparison_with_the_paper_in_every_paragraph_is_said_once() {
        // Two scenarios, each raising EF and wait without a throttle and recovering part of the
        // loss at the paper's cap: "the direction the paper found in both months" and "like March
        // 2007 …" once, in a first finding, not in each paragraph.
        let data = ReportData {
            rows: vec![
                row("b", "none", None, 2.0, 1.0),
                row("r0", "tg", None, 8.0, 12.0),
                row("t0", "tg", Some(3072.0), 3.0, 2.0),
                row("r1", "scaled", None, 6.0, 10.0),
                row("t1", "scaled", Some(3072.0), 4.0, 3.0),
            ],
            axis_names: vec!["reservations".into(), "throttle_node_hours".into()],
            ..ReportData::default()
        };
        let section = section_of(&data);
        assert_eq!(section.findings.len(), 3, "{:#?}", section.findings);
        assert_eq!(
            section.findings[0].text,
            "Without a throttle, in both: the direction the paper found in both months. With each cap named below, in both: like March 2007 (which recovered 61 % and 68 %), unlike March 2006 (where the throttle beat the baseline)."
        );
        for f in &section.findings[1..] {
            assert!(
                !f.text.contains("paper found") && !f.text.contains("March"),
                "{}",
                f.text
            );
            assert!(!f.text.contains(['\u{1}', '\u{2}', '\u{3}']));
        }
    }

    #[test]
    fn replicas_are_averaged_and_each_effect_compared_with_both_months_by_hand() {
        // Baseline EF 2, wait 1 h; unthrottled replicas EF 7 and 9 (mean 8), waits 10 and 14 h
        // (mean 12); the paper's cap EF 3, wait 2 h. The cap recovers (8 − 3)/(8 − 2) = 83 % of
        // the EF loss and (12 − 2)/(12 − 1) = 91 % of the wait loss: March 2007's pattern.
        // Medium jobs' EF (twice the total here): 16 against 4, ×4.0.
        let data = ReportData {
            rows: vec![
                row("b", "none", None, 2.0, 1.0),
                row("r0", "tg", None, 7.0, 10.0),
                row("r1", "tg", None, 9.0, 14.0),
                row("t0", "tg", Some(3072.0), 3.0, 2.0),
            ],
            axis_names: vec!["reservations".into(), "throttle_node_hours".into()],
            ..ReportData::default()
        };
        let section = section_of(&data);
        let table = &section.tables[0];
        assert_eq!(table.rows.len(), 3);
        assert_eq!(
            table.rows[1][2..6],
            ["15/wk, no cap", "2", "8.000", "12.00"]
        );
        assert!(section.intro[0].starts_with("The machine here has 171 nodes"));
        assert!(section.intro[0].contains("On 171 nodes the same share is 171 × 12 h = 2,052 node-hours: the paper's absolute cap is 1.50× as generous here."));
        assert_eq!(
            section.findings[0].title,
            "workload = month, scheduler = easy"
        );
        assert_eq!(
            section.findings[0].text,
            "Without a throttle, 15 reservations a week raised the expansion factor from 2.00 to 8.00 (×4.0) and the mean wait from 1.00 h to 12.0 h (×12): the direction the paper found in both months. With a cap of 3,072 node-hours (the paper's cap), EF 3.00 and wait 2.00 h: between the baseline and the unthrottled run, recovering 83 % of the EF loss and 91 % of the wait loss — like March 2007 (which recovered 61 % and 68 %), unlike March 2006 (where the throttle beat the baseline). By job size, unthrottled reservations multiplied the expansion factor by medium ×4.0: medium jobs suffered most (×4.0)."
        );
    }

    #[test]
    fn throttle_verdicts_follow_both_months() {
        // Better than the baseline on both: March 2006's pattern.
        assert!(
            plain(throttle_verdict(
                (2.0, 6.0),
                (7.0, 70.0),
                (1.7, 4.0),
                WaitUnit::Hours
            ))
            .starts_with("better than the baseline on both, as in March 2006")
        );
        // Between: March 2007's; recovered (7 − 4.5)/(7 − 2) = 50 % of EF, (70 − 38)/(70 − 6) = 50 % of wait.
        let v = plain(throttle_verdict(
            (2.0, 6.0),
            (7.0, 70.0),
            (4.5, 38.0),
            WaitUnit::Hours,
        ));
        assert!(v.starts_with("between the baseline and the unthrottled run, recovering 50 % of the EF loss and 50 % of the wait loss — like March 2007 (which recovered 61 % and 68 %)"), "{v}");
        assert!(
            plain(throttle_verdict(
                (2.0, 6.0),
                (7.0, 70.0),
                (8.0, 80.0),
                WaitUnit::Hours
            ))
            .starts_with("no better")
        );
    }

    #[test]
    fn the_papers_waits_are_given_in_the_reports_wait_unit() {
        // March 2006: the throttle's 4.44 h = 266.4 min against the baseline's 6.03 h = 361.8 min.
        let v = plain(throttle_verdict(
            (2.0, 6.0),
            (7.0, 70.0),
            (1.7, 4.0),
            WaitUnit::Minutes,
        ));
        assert_eq!(
            v,
            "better than the baseline on both, as in March 2006 (EF 1.70 and 266 min against 2.05 and 362 min) and unlike March 2007"
        );
    }

    #[test]
    fn scenario_tables_keep_three_significant_digits_per_column_in_the_wait_unit() {
        // Mean waits of 90, 180 and 108 s: median 108 s, so the report gives waits in minutes
        // (1.50, 3.00, 1.80). EFs 1.0123, 1,234.5 and 2: 1.0123 needs two decimals for three
        // significant digits, the configurations table's EF three, so every EF shows three, and
        // 1,234.5 is thousands separated. Medium jobs' EF is twice the total, wait as the total.
        let data = ReportData {
            rows: vec![
                row("b", "none", None, 1.0123, 0.025),
                row("r", "tg", None, 1234.5, 0.05),
                row("t", "tg", Some(3072.0), 2.0, 0.03),
            ],
            axis_names: vec!["reservations".into(), "throttle_node_hours".into()],
            ..ReportData::default()
        };
        let section = section_of(&data);
        assert_eq!(section.tables[0].headers[5], "mean wait (min)");
        let numbers: Vec<&[String]> = section.tables[0].rows.iter().map(|r| &r[4..6]).collect();
        assert_eq!(
            numbers,
            [["1.012", "1.50"], ["1,234.500", "3.00"], ["2.000", "1.80"]]
        );
        // By size class: EF medium 2.0246, 2,469 and 4 (three decimals), no medium wait column
        // value (the rows have none).
        let classes = &section.tables[1];
        assert_eq!(classes.headers[3..], ["EF medium", "wait medium (min)"]);
        assert_eq!(classes.rows[1][3..], ["2,469.000", "–"]);
        assert!(
            classes
                .caption
                .ends_with("expansion factor and mean wait in minutes.")
        );
        assert!(
            section.findings[0]
                .text
                .contains("and the mean wait from 1.50 min to 3.00 min (×2.0)"),
            "{}",
            section.findings[0].text
        );
    }
}
