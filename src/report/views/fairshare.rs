//! The fairshare section, shown when a result set has per-user results (users.parquet,
//! user_timeseries.parquet) and at least one configuration orders its queue by fairshare or
//! multifactor priority (issue 12; docs/fairshare.md). Who got the machine and how priority
//! moved: the fairshare factor and the cores held over time by the heaviest users (a panel per
//! fairshare-ordered configuration), a per-user table of each, Jain's indexes across users for
//! every configuration, and findings in words — how the heaviest users waited against the
//! others (and against the same users under the FCFS-ordered configuration of the same
//! setting), how evenly waits and slowdowns are spread, and whose factor ended lowest. Beyond
//! four fairshare-ordered configurations those figures are one table with one paragraph saying
//! once what they mean, and the per-user tables one table (issue 35: no wall of look-alike
//! paragraphs).
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
const FAIR_ORDERS: [&str; 2] = crate::report::data::USER_ORDERS;

/// Users the per-user tables, the charts and the "heaviest users" findings single out (in the
/// findings at most half of the users, so that "the others" are never empty). The same number
/// everywhere, and the number of users user_timeseries.parquet keeps one by one (the rest are
/// one "other users" row), so that a table's users are the chart's lines (issue 35).
const HEAVIEST: usize = 10;

/// Fairshare-ordered configurations up to which each gets a paragraph of findings; beyond, the
/// paragraphs' figures are one table, what they mean said once above it ([`folded`]).
pub const MAX_PARAGRAPHS: usize = 4;

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

/// What the findings say of one fairshare-ordered configuration, sentence by sentence, so that
/// what is the same in every configuration can be said once.
#[derive(Default)]
struct Said {
    /// "The ten heaviest users".
    heavy: String,
    /// "48.5 % of the penalised usage on 2.34 % of the shares".
    usage: Option<String>,
    /// "waited 524 h per job on average, the other 418 users 20.4 h (under …)".
    waits: Option<String>,
    jain: Option<String>,
    lowest: Option<String>,
}

/// The findings of the section (pure; tested against figures worked by hand): a paragraph per
/// fairshare-ordered configuration, and, when there are several, what is the same in all of
/// them (the heaviest users' usage, whose factor ended lowest: a trace replayed under every
/// configuration gives each user the same jobs) said once in a first paragraph instead of in
/// each (issue 35).
pub fn fairshare_findings(grid: &Grid<'_>, data: &ReportData) -> Vec<Finding> {
    let said: Vec<(&Config<'_>, Said)> = fair_configs(grid)
        .into_iter()
        .filter_map(|c| said_of(grid, data, c).map(|s| (c, s)))
        .collect();
    let same = |f: fn(&Said) -> Option<String>| -> Option<String> {
        let first = f(&said.first()?.1)?;
        (said.len() > 1 && said.iter().all(|(_, s)| f(s).as_ref() == Some(&first))).then_some(first)
    };
    let usage_of = |s: &Said| s.usage.as_ref().map(|u| format!("{} hold {u}", s.heavy));
    let common_usage = same(usage_of);
    let common_lowest = same(|s| s.lowest.clone());
    let mut out = Vec::new();
    let mut lead = Vec::new();
    if let Some(u) = &common_usage {
        lead.push(format!("{u}."));
    }
    if let Some(l) = &common_lowest {
        lead.push(l.clone());
    }
    if !lead.is_empty() {
        out.push(Finding {
            title: if said.len() == 2 {
                "Both fairshare-ordered configurations".to_string()
            } else {
                format!(
                    "All {} fairshare-ordered configurations",
                    text::count(said.len())
                )
            },
            text: format!(
                "{} This is so in each of them, so it is said once here.",
                lead.join(" ")
            ),
        });
    }
    for (config, s) in &said {
        let mut sentences = Vec::new();
        if let Some(w) = &s.waits {
            sentences.push(match (&s.usage, &common_usage) {
                (Some(u), None) => format!("{} ({u}) {w}.", s.heavy),
                _ => format!("{} {w}.", s.heavy),
            });
        }
        sentences.extend(s.jain.clone());
        if common_lowest.is_none() {
            sentences.extend(s.lowest.clone());
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

/// The figures one configuration's paragraph gives, for the folded table.
struct Figures {
    /// How many users count as the heaviest, their part of the penalised usage and of the
    /// shares, their mean wait per job and the other users' (seconds, job-weighted).
    heavy: Option<(usize, f64, f64, f64, f64)>,
    /// The same users' and the others' mean waits under the FCFS-ordered configuration.
    base: Option<(f64, f64)>,
    /// Jain's indexes of mean waits, mean bounded slowdowns and usage per share.
    jain: [Option<f64>; 3],
    /// The lowest final fairshare factor and whose.
    lowest: Option<(i64, f64)>,
}

/// The figures of one fairshare-ordered configuration (as `said_of` words them); `None`
/// without its users.
fn figures_of(grid: &Grid<'_>, data: &ReportData, config: &Config<'_>) -> Option<Figures> {
    let users = cell(config).and_then(|c| data.users.users.get(c))?;
    let total: f64 = users.iter().map(|u| u.penalised_usage).sum();
    let k = heaviest_count(users.len());
    let heavy_ids: Vec<i64> = by_usage(users)[..k].iter().map(|u| u.user).collect();
    let wait = |set: &[&UserRow]| job_mean(set.iter().copied(), |u| u.wait_mean);
    let split = |of: &[UserRow]| -> Option<(f64, f64)> {
        let (h, rest): (Vec<&UserRow>, Vec<&UserRow>) =
            of.iter().partition(|u| heavy_ids.contains(&u.user));
        Some((wait(&h)?, wait(&rest)?))
    };
    let heavy = (k > 0 && total > 0.0)
        .then(|| {
            let (hw, rw) = split(users)?;
            let (usage, share) = users
                .iter()
                .filter(|u| heavy_ids.contains(&u.user))
                .fold((0.0, 0.0), |(a, b), u| (a + u.penalised_usage, b + u.share));
            Some((k, usage / total, share, hw, rw))
        })
        .flatten();
    let base = heavy
        .and(baseline(grid, config))
        .and_then(|b| cell(b))
        .and_then(|c| data.users.users.get(c))
        .and_then(|bu| split(bu));
    let jain = ["jain_wait", "jain_bounded_slowdown", "jain_usage_per_share"]
        .map(|col| config.estimate(col, 1.0).map(|e| e.mean));
    let lowest = (total > 0.0)
        .then(|| {
            users.iter().min_by(|a, b| {
                a.fairshare_factor
                    .total_cmp(&b.fairshare_factor)
                    .then(a.user.cmp(&b.user))
            })
        })
        .flatten()
        .map(|u| (u.user, u.fairshare_factor));
    Some(Figures {
        heavy,
        base,
        jain,
        lowest,
    })
}

/// Beyond [`MAX_PARAGRAPHS`] fairshare-ordered configurations, the figures their paragraphs
/// would give as one table — a row per configuration, a column per figure; a column with one
/// value in every row left out and said once in the caption — and one paragraph saying once
/// what the figures mean and which differs most between configurations (issue 35: eighteen
/// look-alike paragraphs are a wall). `None` at or below the limit.
pub fn folded(grid: &Grid<'_>, data: &ReportData) -> Option<(Finding, Table)> {
    let rows: Vec<(&Config<'_>, Figures)> = fair_configs(grid)
        .into_iter()
        .filter_map(|c| figures_of(grid, data, c).map(|f| (c, f)))
        .collect();
    if rows.len() <= MAX_PARAGRAPHS {
        return None;
    }
    let shape = &grid.shape;
    let blind = blind_axes(grid);
    // The axes that tell the rows apart.
    let axes: Vec<usize> = (0..shape.axes.len())
        .filter(|&i| {
            !blind.contains(&i) && rows.iter().any(|(c, _)| c.levels[i] != rows[0].0.levels[i])
        })
        .collect();
    let unit = grid.waits;
    let with_jain = rows.len() == grid.configs.len();
    let pct_of = |v: Option<f64>| v.map(|v| v * 100.0);
    let waits = |v: Option<f64>| v.map(|v| unit.of(v));
    // (header, values, decimals; None: a count or a user id, written whole).
    type Column = (String, Vec<Option<f64>>, Option<usize>);
    let column = |header: String,
                  f: &dyn Fn(&Figures) -> Option<f64>,
                  decimals: Option<usize>|
     -> Column { (header, rows.iter().map(|(_, r)| f(r)).collect(), decimals) };
    let w = unit.symbol();
    let mut columns: Vec<Column> = vec![
        column(
            "heaviest users".into(),
            &|r| r.heavy.map(|h| h.0 as f64),
            None,
        ),
        column(
            "their usage (%)".into(),
            &|r| pct_of(r.heavy.map(|h| h.1)),
            Some(1),
        ),
        column(
            "their share (%)".into(),
            &|r| pct_of(r.heavy.map(|h| h.2)),
            Some(1),
        ),
        column(
            format!("their wait ({w})"),
            &|r| waits(r.heavy.map(|h| h.3)),
            Some(WAIT_DECIMALS),
        ),
        column(
            format!("others' wait ({w})"),
            &|r| waits(r.heavy.map(|h| h.4)),
            Some(WAIT_DECIMALS),
        ),
    ];
    if rows.iter().any(|(_, r)| r.base.is_some()) {
        columns.push(column(
            format!("their wait, FCFS ({w})"),
            &|r| waits(r.base.map(|b| b.0)),
            Some(WAIT_DECIMALS),
        ));
        columns.push(column(
            format!("others' wait, FCFS ({w})"),
            &|r| waits(r.base.map(|b| b.1)),
            Some(WAIT_DECIMALS),
        ));
    }
    if with_jain {
        columns.push(column("Jain wait".into(), &|r| r.jain[0], Some(3)));
        columns.push(column("Jain bsld".into(), &|r| r.jain[1], Some(3)));
        columns.push(column("Jain usage/share".into(), &|r| r.jain[2], Some(3)));
    }
    columns.push(column("lowest FF".into(), &|r| r.lowest.map(|l| l.1), None));
    columns.push(column(
        "lowest FF user".into(),
        &|r| r.lowest.map(|l| l.0 as f64),
        None,
    ));
    // Cells as written: fixed decimals per column (waits alike in a column), factors as
    // `factor` writes them, counts and user ids whole.
    let written: Vec<Vec<String>> = columns
        .iter()
        .map(|(header, values, decimals)| match decimals {
            Some(d) if header.contains("wait (") || header.contains("FCFS (") => {
                text::column(values, *d)
            }
            Some(d) => values
                .iter()
                .map(|v| v.map_or("–".into(), |v| text::fixed(v, *d)))
                .collect(),
            None if header == "lowest FF" => values
                .iter()
                .map(|v| v.map_or("–".into(), factor))
                .collect(),
            None => values
                .iter()
                .map(|v| v.map_or("–".into(), |v| format!("{v:.0}")))
                .collect(),
        })
        .collect();
    let constant = |v: &[String]| v.iter().all(|x| x == &v[0]);
    let mut headers: Vec<String> = axes.iter().map(|&i| shape.axes[i].label()).collect();
    let text_columns = headers.len();
    let mut same = Vec::new();
    let mut kept = Vec::new();
    for (i, ((header, _, _), cells)) in columns.iter().zip(&written).enumerate() {
        if constant(cells) {
            // "2 heaviest users", "their usage 90.0 %", "others' wait 1.02 min".
            same.push(match header.split_once(" (") {
                _ if header == "heaviest users" => format!("{} {header}", cells[0]),
                Some((name, unit)) => format!("{name} {} {}", cells[0], unit.trim_end_matches(')')),
                None => format!("{header} {}", cells[0]),
            });
        } else {
            headers.push(header.clone());
            kept.push(i);
        }
    }
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .enumerate()
        .map(|(r, (c, _))| {
            let mut row: Vec<String> = axes
                .iter()
                .map(|&i| shape.axes[i].bare(&c.levels[i]))
                .collect();
            row.extend(kept.iter().map(|&i| written[i][r].clone()));
            row
        })
        .collect();
    // What differs most: the column (of those kept, counts, user ids and FCFS aside) whose highest
    // value is the largest multiple of its lowest.
    let spread = kept
        .iter()
        // The FCFS columns are the comparison, not the fairshare configurations' own figures.
        .filter(|&&i| {
            (columns[i].2.is_some() || columns[i].0 == "lowest FF")
                && !columns[i].0.contains("FCFS")
        })
        .filter_map(|&i| {
            let values = &columns[i].1;
            let lo = (0..rows.len())
                .filter(|&r| values[r].is_some_and(|v| v > 0.0))
                .min_by(|&a, &b| values[a].unwrap().total_cmp(&values[b].unwrap()))?;
            let hi = (0..rows.len())
                .filter(|&r| values[r].is_some())
                .max_by(|&a, &b| {
                    values[a]
                        .unwrap()
                        .total_cmp(&values[b].unwrap())
                        .then(b.cmp(&a))
                })?;
            Some((values[hi].unwrap() / values[lo].unwrap(), i, lo, hi))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
    let ks: Vec<usize> = rows
        .iter()
        .filter_map(|(_, r)| r.heavy.map(|h| h.0))
        .collect();
    let heaviest = match ks.first() {
        Some(&k) if ks.iter().all(|&x| x == k) => format!("the {} heaviest users", text::count(k)),
        _ => "the heaviest users (ten at most, and at most half of the users)".into(),
    };
    let mut text = format!(
        "The table below gives a row to each of the {} fairshare-ordered configurations, in place of a paragraph each: {heaviest} by penalised usage, their part of that usage and of the shares, and their mean wait per job against the other users' (job-weighted){}; {}and the lowest final fairshare factor (FF) and whose it is (lowest FF user).",
        text::whole(rows.len()),
        if rows.iter().any(|(_, r)| r.base.is_some()) {
            ", also under the FCFS-ordered configuration of the same setting"
        } else {
            ""
        },
        if with_jain {
            "Jain's indexes of the users' mean waits, mean bounded slowdowns and penalised usage per share (1: every user alike; 1/n: one user bears or takes everything); "
        } else {
            ""
        }
    );
    if let Some((_, i, lo, hi)) = spread {
        let at = |r: usize| super::finding_label(shape, rows[r].0, &blind);
        // "others' wait (min)" → "others' wait", and its values with the unit: "1.02 min".
        let header = &columns[i].0;
        let (name, said) = match header.split_once(" (") {
            Some((name, unit)) => {
                let unit = unit.trim_end_matches(')');
                let with = |r: usize| {
                    columns[i].1[r].map_or("–".into(), |v| format!("{} {unit}", text::number(v)))
                };
                (name.to_string(), [with(lo), with(hi)])
            }
            None => (
                header.clone(),
                [written[i][lo].clone(), written[i][hi].clone()],
            ),
        };
        text += &format!(
            " What differs most between them is {name}: from {} at {} to {} at {}.",
            said[0],
            at(lo),
            said[1],
            at(hi)
        );
    }
    let mut caption =
        "The fairshare-ordered configurations' findings in figures: a row per configuration."
            .to_string();
    if !same.is_empty() {
        caption += &format!(
            " The same in every configuration, so not a column: {}.",
            text::list(&same)
        );
    }
    let finding = Finding {
        title: format!(
            "All {} fairshare-ordered configurations",
            text::whole(rows.len())
        ),
        text,
    };
    Some((
        finding,
        Table {
            caption,
            headers,
            folded: table_rows.len() > 40,
            rows: table_rows,
            text_columns,
        },
    ))
}

/// The sentences of one configuration's finding; `None` without its users.
fn said_of(grid: &Grid<'_>, data: &ReportData, config: &Config<'_>) -> Option<Said> {
    let users = cell(config).and_then(|c| data.users.users.get(c))?;
    let mut said = Said::default();
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
            said.heavy = format!("The {} heaviest users", text::count(k));
            said.usage = Some(format!(
                "{} of the penalised usage on {} of the shares",
                pct(usage),
                pct(share)
            ));
            let mut s = format!(
                "waited {} per job on average, the other {} users {}",
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
            said.waits = Some(s);
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
            && let (Some(bw), Some(bb)) = (jain(bc, "jain_wait"), jain(bc, "jain_bounded_slowdown"))
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
        said.jain = Some(s + ".");
    }
    if total > 0.0
        && let Some(low) = users.iter().min_by(|a, b| {
            a.fairshare_factor
                .total_cmp(&b.fairshare_factor)
                .then(a.user.cmp(&b.user))
        })
    {
        said.lowest = Some(format!(
            "The lowest final fairshare factor is user {}'s, {}, with {} of the penalised usage on a {} share.",
            low.user,
            factor(low.fairshare_factor),
            pct(low.penalised_usage / total),
            pct(low.share)
        ));
    }
    Some(said)
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
    match folded(grid, data) {
        Some((finding, table)) => {
            section.findings.push(finding);
            // With every configuration a row of the folded table, its Jain columns are the
            // Jain table's.
            if fair.len() < grid.configs.len() {
                section.tables.push(jain_table(grid));
            }
            section.tables.push(table);
            section.tables.extend(merged_user_tables(grid, data, &fair));
        }
        None => {
            section.findings.extend(fairshare_findings(grid, data));
            section.tables.push(jain_table(grid));
        }
    }
    if fair.len() <= MAX_PARAGRAPHS {
        for (i, config) in fair.iter().enumerate() {
            if let Some(t) = user_table(grid, data, config, i > 0) {
                section.tables.push(t);
            }
        }
    }
    let shown: Vec<&Config<'_>> = fair.iter().copied().take(MAX_PANELS).collect();
    let more = fair.len().saturating_sub(MAX_PANELS);
    section.charts.extend(over_time(grid, data, &shown, more));
}

/// Jain's indexes of every configuration (fairshare-ordered or not), replicas averaged. A
/// column with one value in every row (the users' count, or usage per share where every
/// configuration replays the same jobs) carries no comparison: it is left out and its value
/// said once in the caption (issue 35).
fn jain_table(grid: &Grid<'_>) -> Table {
    let shape = &grid.shape;
    let mut headers: Vec<String> = shape.axes.iter().map(|a| a.label()).collect();
    let text_columns = headers.len();
    let columns = [
        ("users", "users", 0),
        ("Jain wait", "jain_wait", 3),
        ("Jain bsld", "jain_bounded_slowdown", 3),
        ("Jain usage/share", "jain_usage_per_share", 3),
    ];
    let values: Vec<Vec<String>> = columns
        .iter()
        .map(|(_, col, decimals)| {
            grid.configs
                .iter()
                .map(|c| {
                    c.estimate(col, 1.0)
                        .map_or("–".into(), |e| text::fixed(e.mean, *decimals))
                })
                .collect()
        })
        .collect();
    let constant = |v: &[String]| v.len() > 1 && v.iter().all(|x| x == &v[0]);
    let mut same = Vec::new();
    let mut kept = Vec::new();
    for ((header, _, _), v) in columns.iter().zip(&values) {
        if constant(v) {
            same.push(if *header == "users" {
                format!("{} users", v[0])
            } else {
                format!("{header} {}", v[0])
            });
        } else {
            headers.push(header.to_string());
            kept.push(v);
        }
    }
    let rows = grid
        .configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut row: Vec<String> = shape
                .axes
                .iter()
                .zip(&c.levels)
                .map(|(a, l)| a.bare(l))
                .collect();
            row.extend(kept.iter().map(|v| v[i].clone()));
            row
        })
        .collect::<Vec<_>>();
    let mut caption = "Fairness across users per configuration: Jain's index of the users' mean waits, mean bounded slowdowns and penalised usage per share (1: every user alike; 1/n: one user bears or takes everything).".to_string();
    if !same.is_empty() {
        caption += &format!(
            " The same in every configuration, so not a column: {}.",
            text::list(&same)
        );
    }
    Table {
        caption,
        headers,
        folded: rows.len() > 40,
        rows,
        text_columns,
    }
}

/// Beyond [`MAX_PARAGRAPHS`] configurations, their user tables as one: a block of rows per
/// configuration, its settings in the leading columns (one caption and one header instead of
/// one per configuration; collapsed in HTML when long).
fn merged_user_tables(grid: &Grid<'_>, data: &ReportData, fair: &[&Config<'_>]) -> Option<Table> {
    let shape = &grid.shape;
    let blind = blind_axes(grid);
    let first = fair.first()?;
    let axes: Vec<usize> = (0..shape.axes.len())
        .filter(|&i| !blind.contains(&i) && fair.iter().any(|c| c.levels[i] != first.levels[i]))
        .collect();
    let mut merged: Option<Table> = None;
    for config in fair {
        let Some(t) = user_table(grid, data, config, false) else {
            continue;
        };
        let settings: Vec<String> = axes
            .iter()
            .map(|&i| shape.axes[i].bare(&config.levels[i]))
            .collect();
        let table = merged.get_or_insert_with(|| Table {
            caption: String::new(),
            headers: axes
                .iter()
                .map(|&i| shape.axes[i].label())
                .chain(t.headers.iter().cloned())
                .collect(),
            rows: Vec::new(),
            text_columns: axes.len() + t.text_columns,
            folded: false,
        });
        if table.caption.is_empty() {
            // The single table's caption, without its configuration: "the 4 users with …".
            let lead = label(grid, config);
            table.caption = format!(
                "Per fairshare-ordered configuration{}",
                t.caption.strip_prefix(lead.as_str()).unwrap_or(&t.caption)
            );
        }
        for row in t.rows {
            table
                .rows
                .push(settings.iter().cloned().chain(row).collect());
        }
    }
    let mut table = merged?;
    table.folded = table.rows.len() > 40;
    Some(table)
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

/// The line of every user without one of their own, in the cores chart.
const OTHER_USERS: &str = "other users";

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
    // Users with bins of their own, ranked by their penalised usage summed over the shown
    // configurations: the users the tables list, each a line.
    let binned: std::collections::BTreeSet<i64> = shown
        .iter()
        .filter_map(|c| cell(c).and_then(|c| data.users.bins.get(c)))
        .flatten()
        .filter_map(|b| b.user)
        .collect();
    let mut totals: std::collections::BTreeMap<i64, f64> = Default::default();
    for c in shown {
        for u in cell(c)
            .and_then(|c| data.users.users.get(c))
            .into_iter()
            .flatten()
            .filter(|u| binned.contains(&u.user))
        {
            *totals.entry(u.user).or_default() += u.penalised_usage;
        }
    }
    let mut ranked: Vec<(i64, f64)> = totals.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let drawn: Vec<i64> = ranked.iter().take(HEAVIEST).map(|u| u.0).collect();
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
                            name: OTHER_USERS.into(),
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
    // The caption names the grey line only where one is drawn: with no more users than the
    // result files keep one by one, there are no "other users".
    let others_drawn = cores_panels
        .iter()
        .flat_map(|p| &p.series)
        .any(|s| s.name == OTHER_USERS);
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
                "Cores held by the same users (time-weighted mean per bin){}.{single}{tail}",
                if others_drawn {
                    ", and by all other users together (grey)"
                } else {
                    ""
                }
            ),
            svg: charts::line_chart(&cores),
        },
    ]
}
