//! The user-aware section (Tóth & Klusáček, "User-Aware Metrics for Measuring Quality of Parallel
//! Job Schedules"; issue 13), shown when the manifest sets `metrics.expected_capacity`: the
//! classic metrics beside the expected-end-time ones for every configuration (a table), box
//! plots of VEET_u and WT_u across users per scheduler (one pair per expected-capacity level,
//! as the paper's Fig. 6), one heatmap of violated EETs per scheduler with the CPU and memory
//! usage underneath (Fig. 7; at the capacity level nearest ×1), and findings that put the
//! results beside the paper's section 4: which schedulers keep 75 % of users at or below 35 %
//! violated EETs, whether some users stay at 100 % under every one, whether plain backfilling
//! beats FIFO + fairshare by classic metrics but loses by EETs, and whether fairshare +
//! backfilling is best — each checked at every capacity level, so the text says how robust it
//! is. Replicas: the first replica's cell (trace workloads replicate exactly).

use super::{Chart, Context, Family, Finding, Section, Table, ViewKind, ViewSpec};
use crate::report::boxplot::{BoxGroup, Scale, boxplot_svg};
use crate::report::heatmap::{HeatRow, HeatmapChart, SharedScale, UsageLine, heatmap_svg};
use crate::report::metric;
use crate::report::shape::{Config, ResultShape};
use crate::report::text;
use crate::report::units::{WAIT_DECIMALS, WaitUnit};
use crate::report::user_aware::EetCell;

pub struct UserAware;

/// The paper whose findings the section checks (`reports.reproduces`).
pub const TOTH_KLUSACEK: &str = "toth-klusacek-user-aware-metrics-eet";

/// The paper's yardstick: "75% of users have at most 35% violated EETs".
const SHARE_OF_USERS: f64 = 0.75;

impl Family for UserAware {
    fn name(&self) -> &'static str {
        "user-aware"
    }

    fn heading(&self) -> &'static str {
        "User-aware metrics (expected end times)"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        if !shape.user_aware || !shape.columns.contains("veet_median") {
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

/// Summary columns of the EET metrics: a grid axis that cannot change any of them is no
/// setting the section compares.
const EET_COLUMNS: [&str; 3] = [
    "eet_violated_fraction",
    "veet_median",
    "weighted_tardiness_median",
];

/// One configuration as the section sees it.
#[derive(Clone)]
struct Run<'c, 'a> {
    config: &'c Config<'a>,
    /// The scheduler in the paper's words (FIFO, EASY + fairshare, …) plus other varying axes.
    name: String,
    scale: f64,
    cell: &'c EetCell,
}

/// FIFO / EASY / … with `+ fairshare` (or another order) as the paper names its schedulers.
fn scheduler_name(config: &Config<'_>) -> String {
    let policy = config.text("policy");
    let base = match policy.as_str() {
        "fcfs" => "FIFO".to_string(),
        "easy" => "EASY".to_string(),
        "conservative" => "conservative".to_string(),
        "aggressive" => "aggressive".to_string(),
        other => other.to_string(),
    };
    match config.text("order").as_str() {
        "" | "fcfs" => base,
        order => format!("{base} + {order}"),
    }
}

fn number(config: &Config<'_>, column: &str) -> Option<f64> {
    config.estimate(column, 1.0).map(|e| e.mean)
}

fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.1} %"))
}

/// A wait in the report's wait unit with its symbol, or "–".
fn wait_text(x: Option<f64>, unit: WaitUnit) -> String {
    x.map_or("–".into(), |v| unit.text(v))
}

fn scale_text(x: f64) -> String {
    let s = format!("{x:.3}");
    format!("×{}", s.trim_end_matches('0').trim_end_matches('.'))
}

/// Users at VEET_u = 100 %.
fn at_full(cell: &EetCell) -> Vec<i64> {
    cell.users
        .iter()
        .filter(|u| u.veet.is_some_and(|v| v >= 100.0))
        .map(|u| u.user)
        .collect()
}

fn build(ctx: &Context<'_>, section: &mut Section) {
    let grid = ctx.grid;
    let shape = &grid.shape;
    // Metric settings that cannot change the EET metrics (τ) are no setting to judge by: the
    // box plots, heatmaps and findings read their first level; the table shows every one.
    let blind = metric::blind_axes(shape, &EET_COLUMNS);
    // Axes other than the scheduler's parts and the capacity name the configuration too.
    let other_axes: Vec<usize> = shape
        .axes
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            !["order", "backfill", "scheduler", "capacity_scale"].contains(&a.name.as_str())
                && !blind.contains(i)
        })
        .map(|(i, _)| i)
        .collect();
    let runs: Vec<Run> = grid
        .configs
        .iter()
        .filter_map(|config| {
            let cell = ctx.data.eet.get(&config.rows.first()?.cell)?;
            let mut name = scheduler_name(config);
            for &i in &other_axes {
                let axis = &grid.shape.axes[i];
                name.push_str(&format!(", {}", axis.named(&config.levels[i])));
            }
            Some(Run {
                config,
                name,
                scale: number(config, "capacity_scale").unwrap_or(1.0),
                cell,
            })
        })
        .collect();
    if runs.is_empty() {
        return;
    }
    let judged: Vec<Run> = runs
        .iter()
        .filter(|r| metric::at_first_levels(shape, &blind, &r.config.levels))
        .cloned()
        .collect();
    let mut scales: Vec<f64> = runs.iter().map(|r| r.scale).collect();
    scales.sort_by(f64::total_cmp);
    scales.dedup();
    // The rule without its scale (each configuration's scale is in the table).
    let rule = runs[0].config.text("expected_capacity");
    let capacity = rule.split(" ×").next().unwrap_or(&rule).to_string();

    section.intro.push(format!(
        "Each user expects a share of the machine — here the {} of its cores and memory, scaled \
         {} — and each job an \
         expected end time (EET): when it would end if the user's jobs ran in that share in \
         arrival order (Tóth & Klusáček, Algorithm 1). A schedule is judged by the EETs it \
         violates: VEET_u is the percentage of a user's jobs that ended after their EET, WT_u \
         the CPU-weighted sum of how late (docs/metrics.md, \"User-aware metrics\"). The box \
         plots show their spread across users per scheduler; the heatmaps show, per user \
         (most total tardiness at the top) and time, how many of the user's jobs were past \
         their latest feasible start, on a log colour scale, with the machine's CPU and memory \
         usage underneath on the same time axis.",
        capacity,
        scales
            .iter()
            .map(|s| scale_text(*s))
            .collect::<Vec<_>>()
            .join(", ")
    ));

    if !blind.is_empty() {
        let held: Vec<String> = blind
            .iter()
            .map(|&i| shape.axes[i].describe(&shape.axes[i].levels[0]))
            .collect();
        let names: Vec<String> = blind.iter().map(|&i| shape.axes[i].short()).collect();
        section.intro.push(format!(
            "{} cannot change the EET metrics (a metric setting of other metrics, never a schedule): the box plots, heatmaps and findings show {} only; the table shows every setting.",
            text::capitalize(&text::list(&names)),
            text::list(&held)
        ));
    }

    let unit = ctx.grid.waits;
    // The paper's four findings, checked, belong to the experiment that reproduces it.
    if ctx.reproduces(TOTH_KLUSACEK) {
        section.findings.extend(findings(&judged, &scales, unit));
    }

    let mut table = Table {
        caption: "Classic and user-aware metrics per configuration (all users; WT_u in CPU-hours)"
            .into(),
        headers: [
            "scheduler",
            "capacity",
            &format!("mean wait ({})", unit.symbol()),
            &format!("mean response ({})", unit.symbol()),
            "mean bounded slowdown",
            "violated EETs",
            "users ≤ 35 %",
            "VEET_u q1 / median / q3",
            "users at 100 %",
            "median WT_u",
        ]
        .map(String::from)
        .to_vec(),
        text_columns: 2,
        ..Table::default()
    };
    for r in &runs {
        let c = r.config;
        let mut name = r.name.clone();
        for &i in &blind {
            name.push_str(&format!(", {}", shape.axes[i].describe(&c.levels[i])));
        }
        table.rows.push(vec![
            name,
            scale_text(r.scale),
            String::new(),
            String::new(),
            String::new(),
            pct(number(c, "eet_violated_fraction").map(|v| v * 100.0)),
            pct(number(c, "users_veet_at_most_35").map(|v| v * 100.0)),
            format!(
                "{} / {} / {}",
                pct(number(c, "veet_q1")),
                pct(number(c, "veet_median")),
                pct(number(c, "veet_q3"))
            ),
            text::whole(at_full(r.cell).len()),
            String::new(),
        ]);
    }
    // Waits and response times in the report's wait unit, bounded slowdowns, WT_u in CPU-hours:
    // a column of decimals each (text::column).
    for (index, column, scale, decimals) in [
        (2, "wait_mean", unit.scale(), WAIT_DECIMALS),
        (3, "response_mean", unit.scale(), WAIT_DECIMALS),
        (4, "bounded_slowdown_mean", 1.0, metric::SLOWDOWN_DECIMALS),
        (9, "weighted_tardiness_median", 1.0 / 3600.0, 1),
    ] {
        let values: Vec<Option<f64>> = runs
            .iter()
            .map(|r| number(r.config, column).map(|v| v * scale))
            .collect();
        for (row, text) in table.rows.iter_mut().zip(text::column(&values, decimals)) {
            row[index] = text;
        }
    }
    section.tables.push(table);

    for &scale in &scales {
        let at: Vec<&Run> = judged.iter().filter(|r| r.scale == scale).collect();
        let groups = |f: fn(&crate::report::user_aware::EetUser) -> Option<f64>| -> Vec<BoxGroup> {
            at.iter()
                .map(|r| BoxGroup {
                    name: r.name.clone(),
                    values: r.cell.users.iter().filter_map(f).collect(),
                })
                .collect()
        };
        let suffix = format!("expected capacity {}", scale_text(scale));
        section.charts.push(Chart {
            id: format!("eet-veet-{}", super::slug(&scale_text(scale))),
            caption: format!(
                "VEET_u across users per scheduler, {suffix} (box: quartiles and median; whiskers 1.5 IQR; diamond: mean)"
            ),
            svg: boxplot_svg(
                &format!("Violated EETs per user — {suffix}"),
                "VEET_u (%)",
                &groups(|u| u.veet),
                Scale::Linear,
            ),
        });
        section.charts.push(Chart {
            id: format!("eet-wt-{}", super::slug(&scale_text(scale))),
            caption: format!(
                "WT_u across users per scheduler, {suffix} (log axis; zeros at its floor)"
            ),
            svg: boxplot_svg(
                &format!("Weighted tardiness per user — {suffix}"),
                "WT_u (CPU-hours)",
                &groups(|u| Some(u.weighted_tardiness / 3600.0)),
                Scale::Log,
            ),
        });
    }

    // Heatmaps at the level nearest ×1.
    let nearest = scales
        .iter()
        .copied()
        .min_by(|a, b| (a.ln().abs()).total_cmp(&b.ln().abs()))
        .unwrap_or(1.0);
    let clock = ctx.data.provenance.first().and_then(|p| p.clock.clone());
    let maps: Vec<(&Run, HeatmapChart)> = judged
        .iter()
        .filter(|r| r.scale == nearest)
        .map(|r| (r, heatmap_chart(r, clock.as_ref())))
        .collect();
    // One colour scale for every scheduler's heatmap, so colours compare across them.
    let shared = SharedScale::over(maps.iter().flat_map(|(_, c)| &c.rows), maps.len());
    for (r, mut chart) in maps {
        chart.shared_scale = shared;
        let drawn = chart.rows.len();
        let users = r.cell.users.len();
        section.charts.push(Chart {
            id: format!("eet-heatmap-{}", super::slug(&r.name)),
            caption: format!(
                "Violated EETs per user over time — {} at expected capacity {} ({} users with a violated EET, most total tardiness at the top; {} without are not drawn), with CPU and memory usage underneath; one colour scale for every scheduler's heatmap",
                r.name,
                scale_text(nearest),
                text::whole(drawn),
                text::whole(users - drawn)
            ),
            svg: heatmap_svg(&chart),
        });
    }
}

fn heatmap_chart(
    r: &Run<'_, '_>,
    clock: Option<&crate::report::dates::TraceClock>,
) -> HeatmapChart {
    let cell = r.cell;
    let width = cell.bin_seconds();
    let start = cell.usage.first().map_or(0, |u| u.0);
    let bins = cell.usage.len().max(1);
    // Rows in the file's order (most Σ T_j first); only users with a violated EET have cells.
    let mut rows: Vec<(i64, HeatRow)> = Vec::new();
    for &(row, user, time, mean) in &cell.cells {
        if rows.last().is_none_or(|(k, _)| *k != row) {
            rows.push((
                row,
                HeatRow {
                    label: format!("user {user}"),
                    cells: Vec::new(),
                },
            ));
        }
        let bin = ((time - start) / width).max(0) as usize;
        rows.last_mut().expect("pushed").1.cells.push((bin, mean));
    }
    let mut usage = vec![UsageLine {
        name: "CPUs in use".into(),
        values: cell.usage.iter().map(|u| u.1).collect(),
    }];
    if cell.usage.iter().any(|u| u.2.is_some()) {
        usage.push(UsageLine {
            name: "memory in use".into(),
            values: cell.usage.iter().map(|u| u.2.unwrap_or(0.0)).collect(),
        });
    }
    HeatmapChart {
        title: format!("Violated EETs per user — {}", r.name),
        value_label: "violated EETs".into(),
        start,
        clock: clock.cloned(),
        shared_scale: None,
        bin_seconds: width,
        bins,
        rows: rows.into_iter().map(|(_, r)| r).collect(),
        usage,
    }
}

/// The paper's four findings of section 4, checked at every capacity level.
fn findings(runs: &[Run<'_, '_>], scales: &[f64], unit: WaitUnit) -> Vec<Finding> {
    let mut out = Vec::new();
    let at = |scale: f64| -> Vec<&Run> { runs.iter().filter(|r| r.scale == scale).collect() };
    let is_fair = |r: &Run| r.config.text("order") == "fairshare";
    let is_easy = |r: &Run| r.config.text("policy") == "easy";
    let within = |r: &Run| number(r.config, "users_veet_at_most_35").unwrap_or(0.0);

    // 1. Only the fairshare variants keep 75 % of users at or below 35 %.
    let mut holds = 0;
    let mut lines = Vec::new();
    for &s in scales {
        let runs = at(s);
        let meeting: Vec<&str> = runs
            .iter()
            .filter(|r| within(r) >= SHARE_OF_USERS)
            .map(|r| r.name.as_str())
            .collect();
        let only_fair = runs
            .iter()
            .all(|r| (within(r) >= SHARE_OF_USERS) == is_fair(r));
        holds += usize::from(only_fair);
        lines.push(format!(
            "at expected capacity {}: {}",
            scale_text(s),
            if meeting.is_empty() {
                "none".to_string()
            } else {
                meeting.join(", ")
            }
        ));
    }
    out.push(Finding {
        title: "75 % of users at ≤ 35 % violated EETs only under fairshare".into(),
        text: format!(
            "The paper found this only for the fairshare variants. Here the schedulers meeting it are {}. The finding holds at {} of {} capacity levels.",
            lines.join("; "),
            text::whole(holds),
            text::whole(scales.len())
        ),
    });

    // 2. Some users at 100 % under every policy.
    let mut lines = Vec::new();
    let mut holds = 0;
    for &s in scales {
        let runs = at(s);
        let counts: Vec<String> = runs
            .iter()
            .map(|r| format!("{} {}", r.name, text::whole(at_full(r.cell).len())))
            .collect();
        let everywhere = runs.iter().all(|r| !at_full(r.cell).is_empty());
        let common: Vec<i64> = runs.first().map_or(Vec::new(), |first| {
            at_full(first.cell)
                .into_iter()
                .filter(|u| runs.iter().all(|r| at_full(r.cell).contains(u)))
                .collect()
        });
        holds += usize::from(everywhere);
        lines.push(format!(
            "at expected capacity {}: {} ({} of them under every scheduler)",
            scale_text(s),
            counts.join(", "),
            text::whole(common.len())
        ));
    }
    out.push(Finding {
        title: "Users with 100 % violated EETs under every scheduler".into(),
        text: format!(
            "The paper: no algorithm eliminated users whose every EET was violated. Users at 100 % — {}. The finding holds at {} of {} capacity levels.",
            lines.join("; "),
            text::whole(holds),
            text::whole(scales.len())
        ),
    });

    // 3. Plain backfilling beats FIFO + fairshare by classic metrics, loses by EETs.
    let mut lines = Vec::new();
    let mut holds = 0;
    let mut compared = 0;
    for &s in scales {
        let runs = at(s);
        let easy = runs.iter().find(|r| is_easy(r) && !is_fair(r));
        let fifo_fair = runs.iter().find(|r| !is_easy(r) && is_fair(r));
        let (Some(easy), Some(fifo_fair)) = (easy, fifo_fair) else {
            continue;
        };
        compared += 1;
        let classic_better = ["wait_mean", "bounded_slowdown_mean"].iter().all(|m| {
            number(easy.config, m).unwrap_or(f64::MAX)
                < number(fifo_fair.config, m).unwrap_or(f64::MAX)
        });
        let eet_worse = within(easy) < within(fifo_fair)
            || number(easy.config, "eet_violated_fraction").unwrap_or(0.0)
                > number(fifo_fair.config, "eet_violated_fraction").unwrap_or(0.0);
        holds += usize::from(classic_better && eet_worse);
        lines.push(format!(
            "at expected capacity {}: mean wait {} vs {}, violated EETs {} vs {}, users ≤ 35 % {} vs {}",
            scale_text(s),
            wait_text(number(easy.config, "wait_mean"), unit),
            wait_text(number(fifo_fair.config, "wait_mean"), unit),
            pct(number(easy.config, "eet_violated_fraction").map(|v| v * 100.0)),
            pct(number(fifo_fair.config, "eet_violated_fraction").map(|v| v * 100.0)),
            pct(Some(within(easy) * 100.0)),
            pct(Some(within(fifo_fair) * 100.0)),
        ));
    }
    if compared > 0 {
        out.push(Finding {
            title: "EASY against FIFO + fairshare".into(),
            text: format!(
                "The paper: plain backfilling looks better than FIFO + fairshare by the classic metrics but worse by EETs. EASY vs FIFO + fairshare {}. The finding holds at {} of {} capacity levels.",
                lines.join("; "),
                text::whole(holds),
                text::whole(compared)
            ),
        });
    }

    // 4. Fairshare + backfilling is best.
    let mut lines = Vec::new();
    let mut holds = 0;
    let mut compared = 0;
    for &s in scales {
        let runs = at(s);
        let Some(best) = runs.iter().find(|r| is_easy(r) && is_fair(r)) else {
            continue;
        };
        compared += 1;
        let violated = |r: &Run| number(r.config, "eet_violated_fraction").unwrap_or(1.0);
        let wins = runs
            .iter()
            .all(|r| within(best) >= within(r) && violated(best) <= violated(r));
        holds += usize::from(wins);
        lines.push(format!(
            "at expected capacity {}: {} violated EETs, {} of users ≤ 35 %{}",
            scale_text(s),
            pct(Some(violated(best) * 100.0)),
            pct(Some(within(best) * 100.0)),
            if wins {
                " (best or tied on both)"
            } else {
                " (not best on both)"
            }
        ));
    }
    if compared > 0 {
        out.push(Finding {
            title: "EASY + fairshare best by EETs".into(),
            text: format!(
                "The paper found fairshare with backfilling best. EASY + fairshare {}. The finding holds at {} of {} capacity levels.",
                lines.join("; "),
                text::whole(holds),
                text::whole(compared)
            ),
        });
    }
    out
}
