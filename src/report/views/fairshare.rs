//! The fairshare section, shown when a result set has per-user results (users.parquet,
//! user_timeseries.parquet) and at least one configuration orders its queue by fairshare or
//! multifactor priority (issue 12; docs/fairshare.md). Who got the machine and how priority
//! moved: the fairshare factor and the cores held over time by the heaviest users (a panel per
//! fairshare-ordered configuration), a per-user table of each, Jain's indexes across users for
//! every configuration, and findings in words — how the heaviest users waited against the
//! others (and against the same users under the FCFS-ordered configuration of the same
//! setting), how evenly waits and slowdowns are spread, and whose factor ended lowest.
//! Replicas: per-user figures are the first replica's (trace workloads replicate exactly);
//! Jain's indexes are averaged over replicas.

use super::{Chart, Context, Family, Finding, Section, Table, ViewKind, ViewSpec};
use crate::report::charts::{self, Axis as Scaling, Draw, LineChart, Panel, Point, Series};
use crate::report::data::ReportData;
use crate::report::metric;
use crate::report::palette::{COLORS, REFERENCE};
use crate::report::shape::{Config, Grid, ResultShape};
use crate::report::svg::{DASHES, Look, MARKERS};
use crate::report::text;
use crate::report::units::WAIT_DECIMALS;
use crate::report::users::{UserBin, UserRow};

pub struct Fairshare;

/// Orders whose queue follows fairshare factors.
const FAIR_ORDERS: [&str; 2] = ["fairshare", "priority"];

/// Users the per-user tables and the "heaviest users" findings single out (at most half of
/// the users, so that "the others" are never empty).
const HEAVIEST: usize = 10;

/// Users drawn one by one in the charts (the rest are not drawn; "other users" is one line in
/// the cores chart).
const CHART_USERS: usize = 8;

/// Panels (fairshare-ordered configurations) per chart.
const MAX_PANELS: usize = 9;

/// Points per line (bins averaged beyond).
const MAX_POINTS: usize = 150;

impl Family for Fairshare {
    fn name(&self) -> &'static str {
        "fairshare"
    }

    fn heading(&self) -> &'static str {
        "Fairshare"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        let files = ["users.parquet", "user_timeseries.parquet"];
        if !files.iter().all(|f| shape.files.contains(*f))
            || !shape
                .orders
                .iter()
                .any(|o| FAIR_ORDERS.contains(&o.as_str()))
        {
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

/// A configuration as a reader names it: its settings on every varying axis that can change
/// the section's figures, else its scheduler.
fn label(grid: &Grid<'_>, config: &Config<'_>) -> String {
    grid.shape
        .settings(&config.levels, &blind_axes(grid))
        .unwrap_or_else(|| {
            let s = config.text("scheduler");
            if s.is_empty() { "this run".into() } else { s }
        })
}

fn is_fair(config: &Config<'_>) -> bool {
    FAIR_ORDERS.contains(&config.text("order").as_str())
}

/// Metric settings that change none of the section's figures (waits, bounded slowdowns,
/// usage): each fairshare-ordered configuration is shown once, at their first levels.
fn blind_axes(grid: &Grid<'_>) -> Vec<usize> {
    metric::blind_axes(
        &grid.shape,
        &[
            "wait",
            "bounded_slowdown",
            "penalised_usage",
            "fairshare_factor",
        ],
    )
}

/// The fairshare-ordered configurations the section is about, once per setting that can change
/// its figures.
fn fair_configs<'g, 'a>(grid: &'g Grid<'a>) -> Vec<&'g Config<'a>> {
    let blind = blind_axes(grid);
    grid.configs
        .iter()
        .filter(|c| is_fair(c) && metric::at_first_levels(&grid.shape, &blind, &c.levels))
        .collect()
}

/// The FCFS-ordered configuration of the same setting: order `fcfs`, and the same levels on
/// every axis but `order` and `scheduler`.
fn baseline<'g, 'a>(grid: &'g Grid<'a>, config: &Config<'_>) -> Option<&'g Config<'a>> {
    let free: Vec<bool> = grid
        .shape
        .axes
        .iter()
        .map(|a| a.name == "order" || a.name == "scheduler")
        .collect();
    grid.configs.iter().find(|c| {
        c.text("order") == "fcfs"
            && c.levels
                .iter()
                .zip(&config.levels)
                .zip(&free)
                .all(|((a, b), f)| *f || a == b)
    })
}

/// The first replica's cell of a configuration.
fn cell<'c>(config: &'c Config<'_>) -> Option<&'c str> {
    config.rows.first().map(|r| r.cell.as_str())
}

/// Users by penalised usage, heaviest first (ties by user id).
fn by_usage(users: &[UserRow]) -> Vec<&UserRow> {
    let mut v: Vec<&UserRow> = users.iter().collect();
    v.sort_by(|a, b| {
        b.penalised_usage
            .total_cmp(&a.penalised_usage)
            .then(a.user.cmp(&b.user))
    });
    v
}

/// How many users count as "the heaviest" among `n`: ten, at most half.
fn heaviest_count(n: usize) -> usize {
    HEAVIEST.min(n / 2)
}

/// The job-weighted mean of a per-user mean over `users` (users without measured jobs skipped).
fn job_mean<'u>(
    users: impl Iterator<Item = &'u UserRow>,
    value: fn(&UserRow) -> Option<f64>,
) -> Option<f64> {
    let (mut sum, mut jobs) = (0.0, 0.0);
    for u in users {
        if let Some(v) = value(u)
            && u.measured_jobs > 0.0
        {
            sum += v * u.measured_jobs;
            jobs += u.measured_jobs;
        }
    }
    (jobs > 0.0).then(|| sum / jobs)
}

fn pct(fraction: f64) -> String {
    format!("{} %", text::number(fraction * 100.0))
}

/// A fairshare factor: three significant digits, or "< 0.001" (factors of heavy users fall to
/// 2^−100 and below, which digits would write as zero).
fn factor(v: f64) -> String {
    if v < 0.0005 {
        "< 0.001".into()
    } else {
        text::number(v)
    }
}

/// The findings of the section: a paragraph per fairshare-ordered configuration (pure; tested
/// against figures worked by hand).
pub fn fairshare_findings(grid: &Grid<'_>, data: &ReportData) -> Vec<Finding> {
    let mut out = Vec::new();
    for config in fair_configs(grid) {
        let Some(users) = cell(config).and_then(|c| data.users.users.get(c)) else {
            continue;
        };
        let mut sentences = Vec::new();
        let ranked = by_usage(users);
        let total: f64 = users.iter().map(|u| u.penalised_usage).sum();
        let k = heaviest_count(users.len());
        let base = baseline(grid, config);
        let base_users = base
            .and_then(|b| cell(b))
            .and_then(|c| data.users.users.get(c));
        if k > 0 && total > 0.0 {
            let heavy: Vec<i64> = ranked[..k].iter().map(|u| u.user).collect();
            let (h, rest): (Vec<&UserRow>, Vec<&UserRow>) =
                users.iter().partition(|u| heavy.contains(&u.user));
            let usage: f64 = h.iter().map(|u| u.penalised_usage).sum::<f64>() / total;
            let share: f64 = h.iter().map(|u| u.share).sum();
            let wait = |set: &[&UserRow]| job_mean(set.iter().copied(), |u| u.wait_mean);
            let (hw, rw) = (wait(&h), wait(&rest));
            let in_unit = |seconds: f64| grid.waits.text(seconds);
            if let (Some(hw), Some(rw)) = (hw, rw) {
                let mut s = format!(
                    "The {} heaviest users ({} of the penalised usage on {} of the shares) waited {} per job on average, the other {} users {}",
                    text::count(k),
                    pct(usage),
                    pct(share),
                    in_unit(hw),
                    text::count(users.len() - k),
                    in_unit(rw)
                );
                if let (Some(b), Some(bu)) = (base, base_users) {
                    let (bh, brest): (Vec<&UserRow>, Vec<&UserRow>) =
                        bu.iter().partition(|u| heavy.contains(&u.user));
                    if let (Some(bhw), Some(brw)) = (wait(&bh), wait(&brest)) {
                        s += &format!(
                            " (under {}: {} and {})",
                            label(grid, b),
                            in_unit(bhw),
                            in_unit(brw)
                        );
                    }
                }
                sentences.push(s + ".");
            }
        }
        let jain = |c: &Config<'_>, col: &str| c.estimate(col, 1.0).map(|e| e.mean);
        if let (Some(w), Some(b)) = (
            jain(config, "jain_wait"),
            jain(config, "jain_bounded_slowdown"),
        ) {
            let mut s = format!(
                "Jain's index across users is {} for mean waits and {} for mean bounded slowdowns",
                text::number(w),
                text::number(b)
            );
            if let Some(bc) = base
                && let (Some(bw), Some(bb)) =
                    (jain(bc, "jain_wait"), jain(bc, "jain_bounded_slowdown"))
            {
                s += &format!(
                    " ({}: {} and {}; 1 is perfectly even)",
                    label(grid, bc),
                    text::number(bw),
                    text::number(bb)
                );
            } else {
                s += " (1 is perfectly even)";
            }
            sentences.push(s + ".");
        }
        if total > 0.0
            && let Some(low) = users.iter().min_by(|a, b| {
                a.fairshare_factor
                    .total_cmp(&b.fairshare_factor)
                    .then(a.user.cmp(&b.user))
            })
        {
            sentences.push(format!(
                "The lowest final fairshare factor is user {}'s, {}, with {} of the penalised usage on a {} share.",
                low.user,
                factor(low.fairshare_factor),
                pct(low.penalised_usage / total),
                pct(low.share)
            ));
        }
        if !sentences.is_empty() {
            out.push(Finding {
                title: super::finding_label(&grid.shape, config, &blind_axes(grid)),
                text: sentences.join(" "),
            });
        }
    }
    out
}

fn build(ctx: &Context<'_>, section: &mut Section) {
    let grid = ctx.grid;
    let data = ctx.data;
    let fair = fair_configs(grid);
    section.intro.push(format!(
        "Queue order by fairshare (docs/fairshare.md): each user's usage, decayed, against their share gives a factor FF = 2^(−(U/ΣU)/S) that orders the queue. Per-user figures are from users.parquet and user_timeseries.parquet ({}); Jain's indexes (Σx)²/(n·Σx²) are over the users' means, averaged over replicas.",
        if grid.shape.replicas > 1 {
            "the first replica of each configuration"
        } else {
            "one run per configuration"
        }
    ));
    section.findings.extend(fairshare_findings(grid, data));
    section.tables.push(jain_table(grid));
    for (i, config) in fair.iter().enumerate() {
        if let Some(t) = user_table(grid, data, config, i > 0) {
            section.tables.push(t);
        }
    }
    let shown: Vec<&Config<'_>> = fair.iter().copied().take(MAX_PANELS).collect();
    let more = fair.len().saturating_sub(MAX_PANELS);
    section.charts.extend(over_time(grid, data, &shown, more));
}

/// Jain's indexes of every configuration (fairshare-ordered or not), replicas averaged.
fn jain_table(grid: &Grid<'_>) -> Table {
    let shape = &grid.shape;
    let mut headers: Vec<String> = shape.axes.iter().map(|a| a.label()).collect();
    let text_columns = headers.len();
    headers.extend(
        ["users", "Jain wait", "Jain bsld", "Jain usage/share"]
            .iter()
            .map(|h| h.to_string()),
    );
    let rows = grid
        .configs
        .iter()
        .map(|c| {
            let mut row: Vec<String> = shape
                .axes
                .iter()
                .zip(&c.levels)
                .map(|(a, l)| a.bare(l))
                .collect();
            for (col, decimals) in [
                ("users", 0),
                ("jain_wait", 3),
                ("jain_bounded_slowdown", 3),
                ("jain_usage_per_share", 3),
            ] {
                row.push(
                    c.estimate(col, 1.0)
                        .map_or("–".into(), |e| text::fixed(e.mean, decimals)),
                );
            }
            row
        })
        .collect::<Vec<_>>();
    Table {
        caption: "Fairness across users per configuration: Jain's index of the users' mean waits, mean bounded slowdowns and penalised usage per share (1: every user alike; 1/n: one user bears or takes everything).".into(),
        headers,
        folded: rows.len() > 40,
        rows,
        text_columns,
    }
}

/// The heaviest users of one fairshare-ordered configuration, and everyone else in one row.
fn user_table(
    grid: &Grid<'_>,
    data: &ReportData,
    config: &Config<'_>,
    folded: bool,
) -> Option<Table> {
    let users = data.users.users.get(cell(config)?)?;
    let total: f64 = users.iter().map(|u| u.penalised_usage).sum();
    let ranked = by_usage(users);
    let k = HEAVIEST.min(users.len());
    let frac = |v: f64| {
        if total > 0.0 {
            format!("{:.1}", v / total * 100.0)
        } else {
            "–".into()
        }
    };
    let mut rows: Vec<Vec<String>> = ranked[..k]
        .iter()
        .map(|u| {
            vec![
                u.user.to_string(),
                text::fixed(u.jobs, 0),
                text::fixed(u.core_hours, 0),
                frac(u.penalised_usage),
                format!("{:.2}", u.share * 100.0),
                factor(u.fairshare_factor),
                String::new(),
                String::new(),
            ]
        })
        .collect();
    let rest = &ranked[k..];
    if !rest.is_empty() {
        rows.push(vec![
            format!("{} others", text::whole(rest.len())),
            text::fixed(rest.iter().map(|u| u.jobs).sum::<f64>(), 0),
            text::fixed(rest.iter().map(|u| u.core_hours).sum::<f64>(), 0),
            frac(rest.iter().map(|u| u.penalised_usage).sum()),
            format!("{:.2}", rest.iter().map(|u| u.share).sum::<f64>() * 100.0),
            "–".into(),
            String::new(),
            String::new(),
        ]);
    }
    // The wait column (index 6) in the report's wait unit and the bounded slowdowns (index 7),
    // one count of decimals each (text::column).
    let unit = grid.waits;
    let column = |f: fn(&UserRow) -> Option<f64>| {
        let mut values: Vec<Option<f64>> = ranked[..k].iter().map(|u| f(u)).collect();
        if !rest.is_empty() {
            values.push(job_mean(rest.iter().copied(), f));
        }
        values
    };
    let waits: Vec<Option<f64>> = column(|u| u.wait_mean)
        .into_iter()
        .map(|w| w.map(|w| unit.of(w)))
        .collect();
    let slowdowns = column(|u| u.bounded_slowdown_mean);
    for ((row, wait), slowdown) in rows
        .iter_mut()
        .zip(text::column(&waits, WAIT_DECIMALS))
        .zip(text::column(&slowdowns, metric::SLOWDOWN_DECIMALS))
    {
        row[6] = wait;
        row[7] = slowdown;
    }
    let wait_header = format!("mean wait ({})", unit.symbol());
    Some(Table {
        caption: format!(
            "{}: the {} users with the most penalised usage, and the others together (their waits and slowdowns job-weighted). Usage and share in % of all users'; FF: final fairshare factor.",
            label(grid, config),
            text::whole(k)
        ),
        headers: [
            "user",
            "jobs",
            "core-h",
            "usage (%)",
            "share (%)",
            "FF",
            &wait_header,
            "mean bsld",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect(),
        rows,
        text_columns: 1,
        folded,
    })
}

fn user_look(rank: usize) -> Look {
    Look {
        color: COLORS[rank % COLORS.len()].to_string(),
        dash: DASHES[(rank / COLORS.len()) % DASHES.len()],
        marker: rank % MARKERS,
    }
}

/// The fairshare factor and the cores held over time: a panel per configuration in `shown`, a
/// line per user among the heaviest over all of them (one colour per user in every panel).
fn over_time(grid: &Grid<'_>, data: &ReportData, shown: &[&Config<'_>], more: usize) -> Vec<Chart> {
    // Users ranked by their penalised usage summed over the shown configurations.
    let mut totals: std::collections::BTreeMap<i64, f64> = Default::default();
    for c in shown {
        for u in cell(c)
            .and_then(|c| data.users.users.get(c))
            .into_iter()
            .flatten()
        {
            *totals.entry(u.user).or_default() += u.penalised_usage;
        }
    }
    let mut ranked: Vec<(i64, f64)> = totals.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let drawn: Vec<i64> = ranked.iter().take(CHART_USERS).map(|u| u.0).collect();
    if drawn.is_empty() {
        return Vec::new();
    }
    let series_of = |bins: &[UserBin], user: Option<i64>, value: fn(&UserBin) -> Option<f64>| {
        let points: Vec<(f64, f64)> = bins
            .iter()
            .filter(|b| b.user == user)
            .filter_map(|b| value(b).map(|v| (b.time / 86400.0, v)))
            .collect();
        charts::thin(points, MAX_POINTS)
            .into_iter()
            .map(|(x, y)| Point::new(x, y))
            .collect::<Vec<_>>()
    };
    let panels = |value: fn(&UserBin) -> Option<f64>, others: bool| -> Vec<Panel> {
        shown
            .iter()
            .map(|c| {
                let bins: &[UserBin] = cell(c)
                    .and_then(|c| data.users.bins.get(c))
                    .map_or(&[], |b| b.as_slice());
                let mut series: Vec<Series> = drawn
                    .iter()
                    .enumerate()
                    .map(|(rank, &u)| Series {
                        name: format!("user {u}"),
                        look: user_look(rank),
                        draw: Draw::Plain,
                        points: series_of(bins, Some(u), value),
                    })
                    .filter(|s| !s.points.is_empty())
                    .collect();
                if others {
                    let points = series_of(bins, None, value);
                    if !points.is_empty() {
                        series.push(Series {
                            name: "other users".into(),
                            look: Look {
                                color: REFERENCE[1].to_string(),
                                dash: "",
                                marker: 0,
                            },
                            draw: Draw::Plain,
                            points,
                        });
                    }
                }
                Panel {
                    title: (shown.len() > 1).then(|| label(grid, c)),
                    series,
                }
            })
            .collect()
    };
    let tail = if more > 0 {
        format!(
            " The first {} fairshare-ordered configurations are shown; {} more are in the tables.",
            text::whole(shown.len()),
            text::whole(more)
        )
    } else {
        String::new()
    };
    let single = if shown.len() == 1 {
        format!(" {}.", label(grid, shown[0]))
    } else {
        " A panel per fairshare-ordered configuration.".into()
    };
    let mut factor_panels = panels(|b| b.fairshare_factor, false);
    charts::from_first_bin(&mut factor_panels, false);
    let mut factor = LineChart::new(
        "Fairshare factor over time",
        charts::DAYS_SINCE_FIRST_BIN,
        "fairshare factor FF (end of bin)",
        factor_panels,
    );
    factor.x_axis = Scaling::Linear;
    factor.y_axis = Scaling::Linear;
    factor.y_range = Some((0.0, 1.0));
    factor.legend_heading = Some("user");
    let mut cores_panels = panels(|b| Some(b.cores), true);
    charts::from_first_bin(&mut cores_panels, false);
    let mut cores = LineChart::new(
        "Who got the machine",
        charts::DAYS_SINCE_FIRST_BIN,
        "cores held (mean per bin)",
        cores_panels,
    );
    cores.x_axis = Scaling::Linear;
    cores.y_axis = Scaling::Linear;
    cores.legend_heading = Some("user");
    vec![
        Chart {
            id: "fairshare-factor".into(),
            caption: format!(
                "The fairshare factor of the {} users with the most penalised usage, at the end of each time bin (1: no usage yet or no usage relative to share; lower: served more than their share; the queue puts higher factors first).{single}{tail}",
                text::whole(drawn.len())
            ),
            svg: charts::line_chart(&factor),
        },
        Chart {
            id: "fairshare-cores".into(),
            caption: format!(
                "Cores held by the same users (time-weighted mean per bin), and by all other users together (grey).{single}{tail}"
            ),
            svg: charts::line_chart(&cores),
        },
    ]
}
