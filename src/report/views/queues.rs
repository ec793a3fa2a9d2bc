//! The queues section, shown when a result set has queue setups (issue 11; docs/queues.md): per
//! configuration and queue, the jobs, the jobs held back by a limit and killed by one, mean wait,
//! mean held time, mean bounded slowdown and share of the processor time (`queues.parquet`,
//! replicas averaged); in words, what each queue setup changes against the first setup of the
//! same setting. When the queues are Medernach's five at LPC (Test, Short, Long, Day, Infinite —
//! "Local situation", papers/medernach-grid-workload-markov-arrivals.tex.txt), our mean waits
//! stand beside the recorded waits of the paper's table, with why they differ.

use super::replica_means::{NamedMeans, named_means};
use super::{Context, Family, Finding, Section, Table, ViewKind, ViewSpec};
use crate::report::data::{QueueRow, ReportData};
use crate::report::metric;
use crate::report::shape::{Config, Grid, Level, ResultShape};
use crate::report::text::{self, change, number};
use crate::report::units::WAIT_DECIMALS;

pub struct Queues;

/// Medernach's "Local situation" table: each LPC queue's recorded mean wait, seconds.
pub const MEDERNACH_WAITS: [(&str, f64); 5] = [
    ("test", 33_336.0),
    ("short", 1_250.0),
    ("long", 535.0),
    ("day", 467.0),
    ("infinite", 1_754.0),
];

impl Family for Queues {
    fn name(&self) -> &'static str {
        "queues"
    }

    fn heading(&self) -> &'static str {
        "Queues"
    }

    fn select(&self, shape: &ResultShape) -> Vec<ViewSpec> {
        // Every result set has queues.parquet (one queue `all` without a setup): the section is
        // for grids with queue setups.
        let has_setups = shape.axes.iter().any(|a| a.name == "queues")
            || shape
                .fixed
                .iter()
                .any(|(n, v)| n == "queues" && !v.is_empty() && v != "none");
        if !shape.files.contains("queues.parquet") || !has_setups {
            return Vec::new();
        }
        vec![ViewSpec {
            family: self.name(),
            kind: ViewKind::Section,
        }]
    }

    fn build(&self, _views: &[&ViewSpec], ctx: &Context<'_>, section: &mut Section) {
        queues_into(ctx.grid, ctx.data, ctx.reproduces, section);
    }
}

/// What the section is built from (the grid and the loaded results).
struct Inputs<'a> {
    grid: &'a Grid<'a>,
    data: &'a ReportData,
    /// Metric settings that cannot change the section's figures: configurations are taken at
    /// their first level and named without them.
    blind: Vec<usize>,
    /// The sentence saying so, if any.
    note: Option<String>,
    /// The paper the experiment reproduces (`reports.reproduces`): Medernach's recorded waits
    /// stand beside ours, or Margo et al.'s picture of reservations is checked, only then.
    reproduces: Option<&'a str>,
}

/// The paper whose recorded LPC waits the section compares with.
pub const MEDERNACH: &str = "medernach-grid-workload-markov-arrivals";

/// The queues section of a result set, as the report builds it for an experiment reproducing
/// `reproduces` (for tests; empty without queue rows).
pub fn queue_section(grid: &Grid<'_>, data: &ReportData, reproduces: Option<&str>) -> Section {
    let mut section = Section::default();
    queues_into(grid, data, reproduces, &mut section);
    section
}

fn queues_into(
    grid: &Grid<'_>,
    data: &ReportData,
    reproduces: Option<&str>,
    section: &mut Section,
) {
    let once = metric::once_per_setting(grid, &COLUMNS);
    build(
        &Inputs {
            grid,
            data,
            blind: once.blind,
            note: once.note,
            reproduces,
        },
        section,
    );
}

/// The queues of configuration `c` in file order, each column averaged over replicas.
fn queues_of(rows: &[QueueRow], c: &Config<'_>) -> Vec<NamedMeans> {
    named_means(rows, c, |r| (&r.cell, &r.queue, &r.numbers))
}

/// A configuration as a reader names it: its settings on the varying axes but the metric
/// settings that cannot change the section's figures, or its workload.
fn label(ctx: &Inputs<'_>, c: &Config<'_>) -> String {
    super::config_label(&ctx.grid.shape, c, &ctx.blind)
}

/// A configuration as a finding's lead names it: every setting with its axis.
fn named(ctx: &Inputs<'_>, c: &Config<'_>) -> String {
    super::finding_label(&ctx.grid.shape, c, &ctx.blind)
}

/// What the section's figures are: per-queue jobs, holds, waits, bounded slowdowns, shares.
const COLUMNS: [&str; 5] = ["jobs", "held", "wait", "bounded_slowdown", "share"];

/// A count: whole numbers without decimals (replicas' means may not be whole).
fn count(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 999.5 {
        format!("{v:.0}")
    } else {
        number(v)
    }
}

fn count_cell(v: Option<f64>) -> String {
    v.map_or("–".into(), count)
}

/// Whether `queues` are Medernach's five LPC queues (names compared without case).
fn is_lpc(queues: &[NamedMeans]) -> bool {
    MEDERNACH_WAITS
        .iter()
        .all(|(name, _)| queues.iter().any(|q| q.name.eq_ignore_ascii_case(name)))
}

fn build(ctx: &Inputs<'_>, section: &mut Section) {
    let configs: Vec<(&Config<'_>, Vec<NamedMeans>)> = ctx
        .grid
        .configs
        .iter()
        .filter(|c| metric::at_first_levels(&ctx.grid.shape, &ctx.blind, &c.levels))
        .map(|c| (c, queues_of(&ctx.data.queues, c)))
        .filter(|(_, q)| !q.is_empty())
        .collect();
    if configs.is_empty() {
        return;
    }
    section.intro.push("Each queue of each queue setup (docs/queues.md): the jobs routed to it, those held back by a limit for at least a second and those a limit killed, their mean wait (from submission, held time included) and mean held time, mean bounded slowdown, and the queue's share of the processor time; replicas averaged. Configurations without a queue setup run one queue without limits (`all`).".to_string());
    section.intro.extend(ctx.note.clone());
    let unit = ctx.grid.waits;
    let all: Vec<(&Config<'_>, &NamedMeans)> = configs
        .iter()
        .flat_map(|(c, queues)| queues.iter().map(move |q| (*c, q)))
        .collect();
    // Waits and held times in the report's wait unit, a column of decimals each (text::column).
    let in_unit = |column: &str| -> Vec<String> {
        let values: Vec<Option<f64>> = all
            .iter()
            .map(|(_, q)| q.get(column).map(|v| unit.of(v)))
            .collect();
        text::column(&values, WAIT_DECIMALS)
    };
    let (waits, helds) = (in_unit("wait_mean"), in_unit("held_seconds_mean"));
    let slowdowns = text::column(
        &all.iter()
            .map(|(_, q)| q.get("bounded_slowdown_mean"))
            .collect::<Vec<_>>(),
        metric::SLOWDOWN_DECIMALS,
    );
    let rows: Vec<Vec<String>> = all
        .iter()
        .zip(waits.into_iter().zip(helds).zip(slowdowns))
        .map(|((c, q), ((wait, held), slowdown))| {
            vec![
                label(ctx, c),
                q.name.clone(),
                count_cell(q.get("jobs")),
                count_cell(q.get("held_jobs")),
                count_cell(q.get("killed_by_limit")),
                wait,
                held,
                slowdown,
                q.get("utilization_share")
                    .map_or("–".into(), |s| format!("{:.1} %", 100.0 * s)),
            ]
        })
        .collect();
    let folded = rows.len() > 40;
    let symbol = unit.symbol();
    section.tables.push(Table {
        caption: format!("Per queue (queues.parquet): jobs, held and killed by a limit, mean wait and held time ({symbol}), mean bounded slowdown, share of processor time."),
        headers: [
            "configuration",
            "queue",
            "jobs",
            "held",
            "killed",
            &format!("mean wait ({symbol})"),
            &format!("mean held ({symbol})"),
            "mean bsld",
            "proc-time share",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        text_columns: 2,
        folded,
    });
    changes(ctx, &configs, section);
    if ctx.reproduces == Some(super::reservations::MARGO) {
        reservations_picture(ctx, section);
    }
    if ctx.reproduces == Some(MEDERNACH) {
        medernach(ctx, &configs, section);
    }
}

/// Axes a reservation scenario's own parameters live on: a baseline has no level there.
const RESERVATION_AXES: [&str; 3] = ["reservations", "reservation_rate", "throttle_node_hours"];

/// With reservation scenarios and a queue setup axis (DataStar's six queued jobs per user in
/// experiments/reservations.yaml): whether reservations change the expansion factor in the same
/// direction with and without the setup — Margo et al. (end of §5) suspected queue stuffing
/// behind their poor expansion factors, which DataStar's limit would prevent.
fn reservations_picture(ctx: &Inputs<'_>, section: &mut Section) {
    let axes = &ctx.grid.shape.axes;
    let position = |name: &str| axes.iter().position(|a| a.name == name);
    let (Some(queues), Some(scenario)) = (position("queues"), position("reservations")) else {
        return;
    };
    let ef = "expansion_factor_weighted";
    let none = Level::Text("none".into());
    let configs = &ctx.grid.configs;
    // Same setting but for the reservation axes and (optionally) the queue setup.
    let same = |a: &Config<'_>, b: &Config<'_>, with_queues: bool| {
        axes.iter().enumerate().all(|(i, axis)| {
            RESERVATION_AXES.contains(&axis.name.as_str())
                || (!with_queues && i == queues)
                || a.levels[i] == b.levels[i]
        })
    };
    let mut lines = Vec::new();
    let (mut same_direction, mut compared) = (0, 0);
    for r in configs.iter().filter(|c| c.levels[scenario] != none) {
        // Only scenarios run under more than one queue setup, once per setup (the first).
        let setups: Vec<&Config<'_>> = configs
            .iter()
            .filter(|o| {
                o.levels[scenario] != none
                    && same(o, r, false)
                    && axes
                        .iter()
                        .enumerate()
                        .filter(|(_, a)| RESERVATION_AXES.contains(&a.name.as_str()))
                        .all(|(i, _)| o.levels[i] == r.levels[i])
            })
            .collect();
        if setups.len() < 2 || !std::ptr::eq(setups[0], r) {
            continue;
        }
        let mut effects = Vec::new();
        for s in &setups {
            let Some(base) = configs
                .iter()
                .find(|b| b.levels[scenario] == none && same(b, s, true))
            else {
                continue;
            };
            if let (Some(b), Some(x)) = (base.estimate(ef, 1.0), s.estimate(ef, 1.0)) {
                effects.push((axes[queues].named(&s.levels[queues]), b.mean, x.mean));
            }
        }
        if effects.len() < 2 {
            continue;
        }
        compared += 1;
        let rises = |(_, b, x): &(String, f64, f64)| x > b;
        if effects.iter().all(rises) || !effects.iter().any(rises) {
            same_direction += 1;
        }
        let held: Vec<String> = axes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != queues)
            .map(|(i, a)| a.named(&r.levels[i]))
            .collect();
        lines.push(format!(
            "{}: {}",
            held.join(", "),
            effects
                .iter()
                .map(|(q, b, x)| format!(
                    "{q} {} → {} (×{})",
                    number(*b),
                    number(*x),
                    number(x / b)
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if compared == 0 {
        return;
    }
    // Small jobs — the queue-stuffing suspects — with each setup against the first setup of the
    // same setting (scenario included).
    let small = "small_expansion_factor_weighted";
    let (mut lower, mut pairs) = (0, 0);
    for c in configs {
        let Some(first) = configs.iter().find(|b| {
            axes.iter()
                .enumerate()
                .all(|(i, _)| i == queues || b.levels[i] == c.levels[i])
        }) else {
            continue;
        };
        if std::ptr::eq(first, c) {
            continue;
        }
        if let (Some(b), Some(x)) = (first.estimate(small, 1.0), c.estimate(small, 1.0)) {
            pairs += 1;
            if x.mean < b.mean {
                lower += 1;
            }
        }
    }
    let verdict = if same_direction == compared {
        "the picture the paper drew holds with the limit"
    } else {
        "the picture the paper drew does not hold everywhere with the limit"
    };
    let [same_direction, compared, lower, pairs] =
        [same_direction, compared, lower, pairs].map(text::whole);
    section.findings.push(Finding {
        title: "Reservations under each queue setup".into(),
        text: format!(
            "{verdict}: against the baseline without reservations, the expansion factor (Eq. 2) moves the same way under every queue setup in {same_direction} of {compared} settings — {}. The limit lowers small jobs' expansion factor in {lower} of {pairs} settings. Margo et al. did not simulate DataStar's six queued jobs per user and suspected their poor expansion factors came from queue stuffing (\"a hundred one-node, 30 minute jobs waiting\") that the limit prevents. Here a held job's wait and expansion factor count from its submission, held time included, as users who submitted a seventh job experience it; counted from when a job became eligible (jobs.parquet: wait − held_seconds), what the scheduler sees is shorter.",
            lines.join("; ")
        ),
    });
}

/// "What the limits change": each configuration against the first one of the same setting that
/// differs only in its queue setup, queue by queue and overall.
fn changes(ctx: &Inputs<'_>, configs: &[(&Config<'_>, Vec<NamedMeans>)], section: &mut Section) {
    let Some(axis) = ctx.grid.shape.axes.iter().position(|a| a.name == "queues") else {
        return;
    };
    let same_setting = |a: &[Level], b: &[Level]| {
        a.iter()
            .zip(b)
            .enumerate()
            .all(|(i, (x, y))| i == axis || x == y)
    };
    for (c, queues) in configs {
        let Some((base, base_queues)) = configs
            .iter()
            .find(|(b, _)| same_setting(&b.levels, &c.levels))
        else {
            continue;
        };
        if std::ptr::eq(*base, *c) {
            continue;
        }
        let unit = ctx.grid.waits;
        let mut parts = Vec::new();
        if let (Some(from), Some(to)) = (
            base.estimate("wait_mean", 1.0),
            c.estimate("wait_mean", 1.0),
        ) {
            parts.push(format!(
                "the mean wait of all jobs goes from {} to {} ({})",
                unit.text(from.mean),
                unit.text(to.mean),
                change(from.mean, to.mean)
            ));
        }
        // With reservations (Margo et al.'s Eq. 2): the expansion factor, and small jobs'.
        for (column, what) in [
            ("expansion_factor_weighted", "the expansion factor"),
            (
                "small_expansion_factor_weighted",
                "small jobs' expansion factor",
            ),
        ] {
            if let (Some(from), Some(to)) = (base.estimate(column, 1.0), c.estimate(column, 1.0))
                // Equal as shown ("from 1.00 to 1.00", a run without reservations): nothing to say.
                && number(from.mean) != number(to.mean)
            {
                parts.push(format!(
                    "{what} from {} to {}",
                    number(from.mean),
                    number(to.mean)
                ));
            }
        }
        for q in queues {
            let Some(b) = base_queues.iter().find(|b| b.name == q.name) else {
                continue;
            };
            if let (Some(from), Some(to)) = (b.get("wait_mean"), q.get("wait_mean")) {
                parts.push(format!(
                    "{}'s from {} to {}",
                    q.name,
                    unit.text(from),
                    unit.text(to)
                ));
            }
        }
        let held: f64 = queues.iter().filter_map(|q| q.get("held_jobs")).sum();
        let killed: f64 = queues.iter().filter_map(|q| q.get("killed_by_limit")).sum();
        if parts.is_empty() {
            continue;
        }
        // The queue setups compared, then the setting they share (if any other axis varies).
        let shape = &ctx.grid.shape;
        let queue_axis = &shape.axes[axis];
        let mut skip = ctx.blind.clone();
        skip.push(axis);
        let title = format!(
            "{} vs {}",
            queue_axis.named(&c.levels[axis]),
            queue_axis.value(&base.levels[axis])
        );
        section.findings.push(Finding {
            title: match shape.named(&c.levels, &skip) {
                Some(at) => format!("{title} at {at}"),
                None => title,
            },
            text: format!(
                "{}; {} jobs held back by a limit, {} killed by one.",
                parts.join(", "),
                count(held),
                count(killed)
            ),
        });
    }
}

/// Our per-queue mean waits beside Medernach's recorded ones, for configurations with LPC's
/// five queues.
fn medernach(ctx: &Inputs<'_>, configs: &[(&Config<'_>, Vec<NamedMeans>)], section: &mut Section) {
    let lpc: Vec<&(&Config<'_>, Vec<NamedMeans>)> =
        configs.iter().filter(|(_, q)| is_lpc(q)).collect();
    if lpc.is_empty() {
        return;
    }
    let wait = |queues: &[NamedMeans], name: &str| {
        queues
            .iter()
            .find(|q| q.name.eq_ignore_ascii_case(name))
            .and_then(|q| q.get("wait_mean"))
    };
    let unit = ctx.grid.waits;
    let mut headers = vec!["queue".to_string(), "paper (recorded)".to_string()];
    headers.extend(lpc.iter().map(|(c, _)| label(ctx, c)));
    // Column by column in the report's wait unit: the paper's, then each configuration's.
    let mut columns = vec![text::column(
        &MEDERNACH_WAITS
            .iter()
            .map(|(_, paper)| Some(unit.of(*paper)))
            .collect::<Vec<_>>(),
        WAIT_DECIMALS,
    )];
    columns.extend(lpc.iter().map(|(_, q)| {
        let ours: Vec<Option<f64>> = MEDERNACH_WAITS
            .iter()
            .map(|(name, _)| wait(q, name).map(|w| unit.of(w)))
            .collect();
        text::column(&ours, WAIT_DECIMALS)
    }));
    let rows = MEDERNACH_WAITS
        .iter()
        .enumerate()
        .map(|(k, (name, _))| {
            let mut row = vec![name.to_string()];
            row.extend(columns.iter().map(|col| col[k].clone()));
            row
        })
        .collect();
    section.tables.push(Table {
        caption: format!("Mean wait per LPC queue ({}): Medernach's table (\"Local situation\": recorded waits of the real system, in seconds there) beside ours.", unit.symbol()),
        headers,
        rows,
        text_columns: 1,
        folded: false,
    });
    for (c, queues) in &lpc {
        let ratios: Vec<(&str, f64)> = MEDERNACH_WAITS
            .iter()
            .filter_map(|(name, paper)| wait(queues, name).map(|w| (*name, paper / w.max(1.0))))
            .collect();
        let below = ratios.iter().filter(|(_, r)| *r > 1.0).count();
        let (lo, hi) = ratios
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), (_, r)| {
                (lo.min(*r), hi.max(*r))
            });
        let order = |waits: Vec<(&str, f64)>| {
            let mut w = waits;
            w.sort_by(|a, b| b.1.total_cmp(&a.1));
            w.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" > ")
        };
        let ours = order(
            MEDERNACH_WAITS
                .iter()
                .filter_map(|(n, _)| wait(queues, n).map(|w| (*n, w)))
                .collect(),
        );
        section.findings.push(Finding {
            title: format!("{} beside the paper", named(ctx, c)),
            text: format!(
                "our mean wait is below the recorded one in {} of {} queues, by a factor of {} to {} (ours from longest: {ours}; the paper's: {}).",
                text::whole(below),
                text::whole(ratios.len()),
                number(lo),
                number(hi),
                order(MEDERNACH_WAITS.to_vec()),
            ),
        });
    }
    section.findings.push(Finding {
        title: "Why the recorded waits are longer".into(),
        text: format!("the paper's waits are those of the real system, which the simulation does not model: grid middleware delays before a job reaches the batch system, MAUI's fairshare, node outages and reserved nodes; and the table gives the configuration when the paper was written, while the log spans a year in which the limits changed (jobs the table's limits kill ran longer in the log). Test's recorded {} (over nine hours for jobs allowed 15 minutes) stands out: nothing in the table's limits explains it, and the simulation, whatever its limits, gives test jobs waits of minutes. Compare directions and the ranking of queues with the paper, not the figures.", unit.text(MEDERNACH_WAITS[0].1)),
    });
}
