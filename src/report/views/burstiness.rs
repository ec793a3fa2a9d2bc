//! The burstiness section, shown when an experiment has synthetic workloads (issue 5): a row per
//! workload, scheduler and arrival setting (P_login, μ) with replicas averaged, and mean wait and
//! bounded slowdown against the measured interarrival CV — as points, one per setting (marker
//! by μ, colour by scheduler), never joined: settings of different (P_login, μ) are not a
//! trend. A sentence per workload gives each scheduler's wait at the least and most bursty
//! settings and its rank correlation with the CV.

use super::{Chart, Context, Family, Finding, Section, Table, ViewKind, ViewSpec};
use crate::report::charts::{self, Axis as Scaling, Draw, LineChart, Panel, Point, Series};
use crate::report::data::{SummaryRow, fmt_scaled};
use crate::report::palette::COLORS;
use crate::report::shape::{Level, ResultShape};
use crate::report::stats::Estimate;
use crate::report::svg::Look;
use crate::report::text;
use crate::report::units::WAIT_DECIMALS;

pub struct Burstiness;

impl Family for Burstiness {
    fn name(&self) -> &'static str {
        "burstiness"
    }

    fn heading(&self) -> &'static str {
        "Burstiness"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        if !shape.columns.contains("model_interarrival_cv") {
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

struct Group<'a> {
    workload: String,
    scheduler: String,
    p_login: Option<f64>,
    mu: Option<f64>,
    rows: Vec<&'a SummaryRow>,
}

impl Group<'_> {
    fn estimate(&self, column: &str, scale: f64) -> Option<Estimate> {
        crate::report::shape::estimate(&self.rows, column, scale)
    }

    fn mean(&self, column: &str) -> Option<f64> {
        self.estimate(column, 1.0).map(|e| e.mean)
    }
}

/// Spearman's rank correlation of paired values (ties get their average rank).
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len();
    if n < 3 {
        return None;
    }
    let ranks = |values: Vec<f64>| -> Vec<f64> {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut r = vec![0.0; n];
        let mut i = 0;
        while i < n {
            let mut j = i;
            while j + 1 < n && values[order[j + 1]] == values[order[i]] {
                j += 1;
            }
            for k in i..=j {
                r[order[k]] = (i + j) as f64 / 2.0 + 1.0;
            }
            i = j + 1;
        }
        r
    };
    let (x, y) = (
        ranks(pairs.iter().map(|p| p.0).collect()),
        ranks(pairs.iter().map(|p| p.1).collect()),
    );
    let mean = (n as f64 + 1.0) / 2.0;
    let cov: f64 = x.iter().zip(&y).map(|(a, b)| (a - mean) * (b - mean)).sum();
    let var = |v: &[f64]| v.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>();
    let d = (var(&x) * var(&y)).sqrt();
    (d > 0.0).then(|| cov / d)
}

fn build(ctx: &Context<'_>, section: &mut Section) {
    let data = ctx.data;
    let shape = &ctx.grid.shape;
    let synthetic = |r: &SummaryRow| {
        r.numbers
            .get("model_interarrival_cv")
            .copied()
            .flatten()
            .is_some()
    };
    let mut groups: Vec<Group<'_>> = Vec::new();
    for row in data.rows.iter().filter(|r| synthetic(r)) {
        let text = |k: &str| row.text.get(k).cloned().unwrap_or_default();
        let num = |k: &str| row.numbers.get(k).copied().flatten();
        let key = (
            text("workload"),
            text("scheduler"),
            num("p_login"),
            num("mu"),
        );
        match groups
            .iter_mut()
            .find(|g| (g.workload.clone(), g.scheduler.clone(), g.p_login, g.mu) == key)
        {
            Some(g) => g.rows.push(row),
            None => groups.push(Group {
                workload: key.0,
                scheduler: key.1,
                p_login: key.2,
                mu: key.3,
                rows: vec![row],
            }),
        }
    }
    section.intro.push(
        "Synthetic workloads (docs/synthetic.md), replicas averaged. Model CV: the interarrival CV of one user, √(1 + 2δμ/(λ+δ)²); measured CV: of the merged stream of all users.".to_string(),
    );
    let unit = ctx.grid.waits;
    let wait_label = format!("mean wait ({})", unit.symbol());
    // The wait column in the report's wait unit, one count of decimals (text::column).
    let waits = text::column(
        &groups
            .iter()
            .map(|g| g.mean("wait_mean").map(|w| unit.of(w)))
            .collect::<Vec<_>>(),
        WAIT_DECIMALS,
    );
    let slowdowns = text::column(
        &groups
            .iter()
            .map(|g| g.mean("bounded_slowdown_mean"))
            .collect::<Vec<_>>(),
        crate::report::metric::SLOWDOWN_DECIMALS,
    );
    section.tables.push(Table {
        caption: "Arrival settings, replicas averaged.".into(),
        headers: [
            "workload",
            "scheduler",
            "P_login",
            "μ (1/s)",
            "replicas",
            "model CV",
            "measured CV",
            "jobs",
            "utilization",
            &wait_label,
            "mean bsld",
        ]
        .map(String::from)
        .to_vec(),
        rows: groups
            .iter()
            .zip(waits.iter().zip(&slowdowns))
            .map(|(g, (wait, slowdown))| {
                vec![
                    g.workload.clone(),
                    g.scheduler.clone(),
                    fmt_scaled(g.p_login, 1.0, 3),
                    g.mu.map_or("–".into(), |m| format!("{m:.3e}")),
                    text::whole(g.rows.len()),
                    fmt_scaled(g.mean("model_interarrival_cv"), 1.0, 2),
                    fmt_scaled(g.mean("interarrival_cv"), 1.0, 2),
                    fmt_scaled(g.mean("jobs"), 1.0, 0),
                    fmt_scaled(g.mean("utilization"), 1.0, 3),
                    wait.clone(),
                    slowdown.clone(),
                ]
            })
            .collect(),
        text_columns: 2,
        folded: groups.len() > super::table::FOLD_ROWS,
    });
    let mut workloads: Vec<String> = Vec::new();
    let mut schedulers: Vec<String> = Vec::new();
    for g in &groups {
        if !workloads.contains(&g.workload) {
            workloads.push(g.workload.clone());
        }
        if !schedulers.contains(&g.scheduler) {
            schedulers.push(g.scheduler.clone());
        }
    }
    let mut mus: Vec<f64> = groups.iter().filter_map(|g| g.mu).collect();
    mus.sort_by(f64::total_cmp);
    mus.dedup();
    // A scheduler's colour as in every other chart; the marker tells μ apart.
    let look = |scheduler: &str, mu: Option<f64>| -> Look {
        let colour = match shape.axis("scheduler") {
            Some(a) => {
                ctx.palette
                    .look(a, &Level::Text(scheduler.to_string()))
                    .color
            }
            None => COLORS[0].to_string(),
        };
        Look {
            color: colour,
            dash: "",
            marker: mu
                .and_then(|m| mus.iter().position(|x| *x == m))
                .unwrap_or(0),
        }
    };
    for (metric, title, unit, scale, id) in [
        (
            "wait_mean",
            "Mean wait",
            wait_label.as_str(),
            unit.scale(),
            "wait-vs-cv",
        ),
        (
            "bounded_slowdown_mean",
            "Mean bounded slowdown",
            "mean bounded slowdown",
            1.0,
            "bsld-vs-cv",
        ),
    ] {
        let full: Vec<Panel> = workloads
            .iter()
            .map(|w| {
                let mut series = Vec::new();
                for s in &schedulers {
                    for mu in mus
                        .iter()
                        .map(|m| Some(*m))
                        .chain(mus.is_empty().then_some(None))
                    {
                        let points: Vec<Point> = groups
                            .iter()
                            .filter(|g| &g.workload == w && &g.scheduler == s && g.mu == mu)
                            .filter_map(|g| {
                                let y = g.estimate(metric, scale)?;
                                Some(Point {
                                    x: g.mean("interarrival_cv")?,
                                    y: y.mean,
                                    band: y.interval().map(|(lo, hi)| (lo.max(0.0), hi)),
                                })
                            })
                            .collect();
                        if points.is_empty() {
                            continue;
                        }
                        let name = match mu {
                            Some(m) => format!("{s}, μ {}", crate::report::svg::label(m)),
                            None => s.clone(),
                        };
                        series.push(Series {
                            name,
                            look: look(s, mu),
                            draw: Draw::Scatter,
                            points,
                        });
                    }
                }
                Panel {
                    title: (workloads.len() > 1).then(|| w.clone()),
                    series,
                }
            })
            .collect();
        let (panels, enlarged) = with_crowded_end_enlarged(full);
        let chart_title = format!("{title} against the measured interarrival CV");
        let mut chart = LineChart::new(
            &chart_title,
            "interarrival CV of the workload",
            unit,
            panels,
        );
        chart.legend_heading = Some("scheduler, μ (1/s)");
        chart.x_axis = Scaling::Auto;
        chart.per_panel_x = enlarged;
        out_chart(section, id, &chart, title, enlarged);
    }
    for w in &workloads {
        let mut sentence = Vec::new();
        for s in &schedulers {
            let mut p: Vec<(f64, f64)> = groups
                .iter()
                .filter(|g| &g.workload == w && &g.scheduler == s)
                .filter_map(|g| Some((g.mean("interarrival_cv")?, g.mean("wait_mean")?)))
                .collect();
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (Some(first), Some(last)) = (p.first(), p.last()) else {
                continue;
            };
            let rho = spearman(&p).map_or("–".to_string(), |r| format!("{r:.2}"));
            sentence.push(format!(
                "under scheduler = {s} the mean wait went from {} at the least bursty setting (CV {:.2}) to {} at the burstiest (CV {:.2}), rank correlation with the CV {rho}",
                unit.text(first.1),
                first.0,
                unit.text(last.1),
                last.0
            ));
        }
        if !sentence.is_empty() {
            section.findings.push(Finding {
                title: format!("workload = {w}"),
                text: format!(
                    "At the same expected offered load, {}.",
                    sentence.join("; ")
                ),
            });
        }
    }
}

/// CVs below this are "near a Poisson stream's 1", where most settings of a sweep over P_login
/// land (markov-arrivals: 13 of 24 between 1.01 and 1.60 on an axis to 11).
const NEAR_POISSON: f64 = 2.0;

/// The panels, and beside each whose points crowd its low end (at least three below
/// [`NEAR_POISSON`], the largest CV over twice that) the same points below it on their own
/// axis: the crowded end enlarged (issue 35). Whether any panel was added.
fn with_crowded_end_enlarged(panels: Vec<Panel>) -> (Vec<Panel>, bool) {
    let crowded = |p: &Panel| {
        let xs = || p.series.iter().flat_map(|s| s.points.iter().map(|q| q.x));
        xs().filter(|x| *x < NEAR_POISSON).count() >= 3
            && xs().fold(f64::NEG_INFINITY, f64::max) > 2.0 * NEAR_POISSON
    };
    if !panels.iter().any(crowded) {
        return (panels, false);
    }
    let mut out = Vec::new();
    for p in panels {
        let name = p.title.clone();
        let zoom = crowded(&p).then(|| Panel {
            title: Some(match &name {
                Some(w) => format!("{w}, CV below {NEAR_POISSON} enlarged"),
                None => format!("CV below {NEAR_POISSON} enlarged"),
            }),
            series: p
                .series
                .iter()
                .map(|s| Series {
                    name: s.name.clone(),
                    look: s.look.clone(),
                    draw: s.draw,
                    points: s
                        .points
                        .iter()
                        .filter(|q| q.x < NEAR_POISSON)
                        .copied()
                        .collect(),
                })
                .filter(|s| !s.points.is_empty())
                .collect(),
        });
        out.push(Panel {
            title: Some(name.map_or("every setting".into(), |w| format!("{w}, every setting"))),
            series: p.series,
        });
        out.extend(zoom);
    }
    (out, true)
}

fn out_chart(section: &mut Section, id: &str, chart: &LineChart<'_>, title: &str, enlarged: bool) {
    section.charts.push(Chart {
        id: id.to_string(),
        caption: format!(
            "{title} against the measured interarrival CV: one point per arrival setting (P_login, μ), replicas averaged with 95 % intervals; colour by scheduler, marker by μ. Points are not joined: neighbouring CVs come from different settings.{}",
            if enlarged {
                format!(" Most settings give CVs near a Poisson stream's 1: the panel beside shows those below {NEAR_POISSON} on an axis of their own.")
            } else {
                String::new()
            }
        ),
        svg: charts::line_chart(chart),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_by_hand() {
        assert_eq!(
            spearman(&[(1.0, 10.0), (2.0, 20.0), (3.0, 25.0)]),
            Some(1.0)
        );
        assert_eq!(spearman(&[(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)]), Some(-1.0));
        // Ranks x = 1,2,3,4; y = 2,1,4,3: d² sum 4, ρ = 1 − 6·4/(4·15) = 0.6.
        let r = spearman(&[(1.0, 2.0), (2.0, 1.0), (3.0, 4.0), (4.0, 3.0)]).unwrap();
        assert!((r - 0.6).abs() < 1e-12);
        assert_eq!(spearman(&[(1.0, 1.0), (2.0, 2.0)]), None);
    }
}
