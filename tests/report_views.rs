//! Which views a grid gets (issue 15), pinned as reviewed snapshots — the choice is a pure
//! function of the result set's shape, so it is tested without rendering — and the findings'
//! sentences checked against figures worked out by hand on tiny result sets.

use std::collections::{BTreeMap, BTreeSet};

use schedlab::report::data::{ReportData, SummaryRow};
use schedlab::report::palette::Palette;
use schedlab::report::shape::{Grid, Level};
use schedlab::report::units::WaitUnit;
use schedlab::report::users::{UserBin, UserRow};
use schedlab::report::views::{self, fairshare_findings, findings_for};

/// Name axes are text columns of the summary; parameter axes numbers (null = `None`).
const NAME_AXES: [&str; 5] = ["workload", "cluster", "scheduler", "reservations", "queues"];

/// Every headline metric column (value 1).
const METRICS: [&str; 8] = [
    "jobs",
    "wait_mean",
    "wait_p95",
    "bounded_slowdown_mean",
    "utilization",
    "queue_length_sampled",
    "backfilled_fraction",
    "expansion_factor_weighted",
];

fn row(cell: String, levels: &[(&str, &Level)], metrics: &[(&str, f64)]) -> SummaryRow {
    let mut r = SummaryRow {
        cell,
        ..SummaryRow::default()
    };
    for (axis, level) in levels {
        if NAME_AXES.contains(axis) {
            let text = match level {
                Level::Text(s) => s.clone(),
                _ => String::new(),
            };
            r.text.insert(axis.to_string(), text);
        } else {
            r.numbers.insert(axis.to_string(), level.number());
        }
    }
    for (m, v) in metrics {
        r.numbers.insert(m.to_string(), Some(*v));
    }
    r
}

fn text(values: &[&str]) -> Vec<Level> {
    values.iter().map(|v| Level::Text(v.to_string())).collect()
}

fn numbers(values: &[Option<f64>]) -> Vec<Level> {
    values
        .iter()
        .map(|v| v.map_or(Level::None, Level::Number))
        .collect()
}

/// A result set with every combination of `axes` that `keep` accepts, `replicas` rows each,
/// every metric at 1, and the standard result files.
fn grid_data(
    axes: &[(&str, Vec<Level>)],
    keep: impl Fn(&BTreeMap<&str, &Level>) -> bool,
    replicas: usize,
    extra_columns: &[&str],
) -> ReportData {
    let mut combos: Vec<Vec<(&str, &Level)>> = vec![Vec::new()];
    for (name, levels) in axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                levels.iter().map(move |l| {
                    let mut c = c.clone();
                    c.push((*name, l));
                    c
                })
            })
            .collect();
    }
    let mut metrics: Vec<(&str, f64)> = METRICS.iter().map(|m| (*m, 1.0)).collect();
    metrics.extend(extra_columns.iter().map(|c| (*c, 1.0)));
    let mut rows = Vec::new();
    for (i, combo) in combos.iter().enumerate() {
        let map: BTreeMap<&str, &Level> = combo.iter().copied().collect();
        if !keep(&map) {
            continue;
        }
        for seed in 0..replicas {
            rows.push(row(format!("c{i}.seed-{seed}"), combo, &metrics));
        }
    }
    ReportData {
        rows,
        axis_names: axes.iter().map(|(a, _)| a.to_string()).collect(),
        files: ["summary.parquet", "jobs.parquet", "timeseries.parquet"]
            .iter()
            .map(|f| f.to_string())
            .collect::<BTreeSet<_>>(),
        ..ReportData::default()
    }
}

fn selected(data: &ReportData) -> String {
    let grid = Grid::new(data);
    views::select(&grid.shape)
        .iter()
        .map(|v| format!("{v}\n"))
        .collect()
}

#[test]
fn the_exercise_grid_gets_bars_by_scheduler_on_a_log_scale_and_no_line_charts() {
    // easy-vs-fcfs: 2 workloads × 3 schedulers × interval (every event, 900 s): no numeric
    // axis (one number and `none`), so the metrics are bars by scheduler.
    let data = grid_data(
        &[
            ("workload", text(&["sdsc-sp2", "sdsc-blue"])),
            ("scheduler", text(&["fcfs", "easy", "conservative"])),
            ("interval", numbers(&[None, Some(900.0)])),
        ],
        |_| true,
        1,
        &[],
    );
    assert_eq!(
        selected(&data),
        "findings: compare scheduler | trends –
sweep: wait_mean bars | colours scheduler | groups workload × interval
sweep: bounded_slowdown_mean bars | colours scheduler | groups workload × interval
sweep: utilization bars | colours scheduler | groups workload × interval
sweep: queue_length_sampled bars | colours scheduler | groups workload × interval
sweep: backfilled_fraction bars | colours scheduler | groups workload × interval
timeline: utilization | panels workload | colour scheduler | dash interval
timeline: queue | panels workload | colour scheduler | dash interval
timeline: wait | panels workload | colour scheduler | dash interval
timeline: bounded_slowdown | panels workload | colour scheduler | dash interval
schedule: gantt
table: table by workload × scheduler × interval
"
    );
}

#[test]
fn a_sweep_with_two_numeric_axes_plots_every_metric_against_each_that_can_change_it() {
    // The example: 3 schedulers × 2 τ × 3 load scales on one trace. τ is a metric
    // setting of bounded slowdowns only: the other metrics are neither plotted against it nor
    // split into panels by it (the same schedules), and it dashes only the slowdowns' CDF.
    let data = grid_data(
        &[
            ("scheduler", text(&["fcfs", "easy", "conservative"])),
            ("load_scale", numbers(&[Some(0.8), Some(1.0), Some(1.2)])),
            ("tau", numbers(&[Some(10.0), Some(60.0)])),
        ],
        |_| true,
        1,
        &[],
    );
    let grid = Grid::new(&data);
    assert_eq!(
        grid.shape.to_string(),
        "scheduler: categorical fcfs, easy, conservative
load_scale: numeric 0.8, 1, 1.2
tau: numeric 10 s, 60 s
18 configurations × up to 1 replicas, 18 cells
"
    );
    assert_eq!(
        selected(&data),
        "findings: compare scheduler | trends load_scale × tau
sweep: wait_mean ~ load_scale | lines scheduler | panels – | held tau
sweep: bounded_slowdown_mean ~ load_scale | lines scheduler | panels tau
sweep: utilization ~ load_scale | lines scheduler | panels – | held tau
sweep: queue_length_sampled ~ load_scale | lines scheduler | panels – | held tau
sweep: backfilled_fraction ~ load_scale | lines scheduler | panels – | held tau
sweep: bounded_slowdown_mean ~ tau | lines scheduler | panels load_scale
timeline: utilization | panels – | colour scheduler | dash – | held load_scale
timeline: queue | panels – | colour scheduler | dash – | held load_scale
timeline: wait | panels – | colour scheduler | dash – | held load_scale
timeline: bounded_slowdown | panels – | colour scheduler | dash tau | held load_scale
schedule: gantt
table: table by scheduler × load_scale × tau
"
    );
}

/// The reservation grid of experiments/reservations.yaml: baselines have no rate and no cap;
/// `injected` takes the paper's caps, `scaled` the machine-scaled one; with `six_queued`, as
/// shipped, DataStar's six-queued setup beside the baseline and the paper's rate, unthrottled.
fn reservation_grid(six_queued: bool) -> ReportData {
    let mut axes = vec![
        ("workload", text(&["may-2004", "nov-2004"])),
        ("scheduler", text(&["conservative", "easy"])),
        ("reservations", text(&["none", "injected", "scaled"])),
        (
            "reservation_rate",
            numbers(&[None, Some(5.0), Some(15.0), Some(30.0)]),
        ),
        (
            "throttle_node_hours",
            numbers(&[None, Some(1536.0), Some(2052.0), Some(3072.0), Some(6144.0)]),
        ),
    ];
    if six_queued {
        axes.push(("queues", text(&["none", "six-queued"])));
    }
    grid_data(
        &axes,
        |c| {
            let scenario = match c["reservations"] {
                Level::Text(s) => s.as_str(),
                _ => "",
            };
            let rate = c["reservation_rate"].number();
            let cap = c["throttle_node_hours"].number();
            let six = c.get("queues") == Some(&&Level::Text("six-queued".into()));
            let scenario_ok = match scenario {
                "none" => rate.is_none() && cap.is_none(),
                "injected" => rate.is_some() && cap != Some(2052.0),
                _ => rate.is_some() && matches!(cap, None | Some(2052.0)),
            };
            scenario_ok
                && !(six
                    && (scenario == "scaled" || cap.is_some() || rate.is_some_and(|r| r != 15.0)))
        },
        3,
        &[],
    )
}

/// experiments/reservations.yaml as shipped. The rate charts cannot give the cap lines or
/// panels (16 panels); they used to average runs with and without a cap into points nobody
/// ran. They show the runs without a cap only, and the cap's own charts show its levels.
#[test]
fn a_cap_that_does_not_fit_is_shown_without_a_cap_never_averaged() {
    let data = reservation_grid(true);
    let views = selected(&data);
    let against_rate: Vec<&str> = views
        .lines()
        .filter(|l| l.contains("~ reservation_rate"))
        .collect();
    assert_eq!(against_rate.len(), 6, "{views}");
    for line in &against_rate {
        assert!(
            line.ends_with("| lines scheduler | panels workload × reservations × queues | without throttle_node_hours"),
            "{line}"
        );
    }
    assert!(!views.contains("averaged throttle_node_hours"), "{views}");
    assert_eq!(
        views
            .lines()
            .filter(|l| l.contains("~ throttle_node_hours"))
            .count(),
        6,
        "{views}"
    );
}

#[test]
fn the_reservation_grid_gets_its_section_and_lines_per_cap_and_per_rate() {
    let data = reservation_grid(false);
    assert_eq!(
        selected(&data),
        "findings: compare scheduler | trends reservation_rate × throttle_node_hours
reservations: section
sweep: wait_mean ~ reservation_rate | lines throttle_node_hours | panels workload × scheduler × reservations
sweep: bounded_slowdown_mean ~ reservation_rate | lines throttle_node_hours | panels workload × scheduler × reservations
sweep: utilization ~ reservation_rate | lines throttle_node_hours | panels workload × scheduler × reservations
sweep: queue_length_sampled ~ reservation_rate | lines throttle_node_hours | panels workload × scheduler × reservations
sweep: backfilled_fraction ~ reservation_rate | lines throttle_node_hours | panels workload × scheduler × reservations
sweep: expansion_factor_weighted ~ reservation_rate | lines throttle_node_hours | panels workload × scheduler × reservations
sweep: wait_mean ~ throttle_node_hours | lines reservation_rate | panels workload × scheduler × reservations
sweep: bounded_slowdown_mean ~ throttle_node_hours | lines reservation_rate | panels workload × scheduler × reservations
sweep: utilization ~ throttle_node_hours | lines reservation_rate | panels workload × scheduler × reservations
sweep: queue_length_sampled ~ throttle_node_hours | lines reservation_rate | panels workload × scheduler × reservations
sweep: backfilled_fraction ~ throttle_node_hours | lines reservation_rate | panels workload × scheduler × reservations
sweep: expansion_factor_weighted ~ throttle_node_hours | lines reservation_rate | panels workload × scheduler × reservations
timeline: utilization | panels workload | colour scheduler | dash reservations | held reservation_rate × throttle_node_hours
timeline: queue | panels workload | colour scheduler | dash reservations | held reservation_rate × throttle_node_hours
timeline: wait | panels workload | colour scheduler | dash reservations | held reservation_rate × throttle_node_hours
timeline: bounded_slowdown | panels workload | colour scheduler | dash reservations | held reservation_rate × throttle_node_hours
schedule: gantt
table: table by workload × scheduler × reservations × reservation_rate × throttle_node_hours
"
    );
}

#[test]
fn synthetic_workloads_get_the_burstiness_section_and_lines_per_arrival_setting() {
    let data = grid_data(
        &[
            ("scheduler", text(&["fcfs", "easy"])),
            (
                "mu",
                numbers(&[Some(2.778e-4), Some(2.778e-3), Some(2.778e-2)]),
            ),
            (
                "p_login",
                numbers(&[Some(0.05), Some(0.2), Some(0.5), Some(0.9)]),
            ),
        ],
        |_| true,
        3,
        &["model_interarrival_cv"],
    );
    let views = selected(&data);
    assert!(views.starts_with(
        "findings: compare scheduler | trends mu × p_login
burstiness: section
sweep: wait_mean ~ mu | lines scheduler | panels p_login
"
    ));
    assert!(views.contains("sweep: wait_mean ~ p_login | lines scheduler | panels mu\n"));
    assert!(views.contains(
        "timeline: utilization | panels – | colour scheduler | dash mu | held p_login\n"
    ));
}

#[test]
fn large_grids_are_averaged_not_silenced_and_single_cells_still_get_charts() {
    // 3 workloads × 4 schedulers × 3 intervals × 5 load scales × 3 τ = 540 configurations.
    // Against the load scale, with a line per scheduler, 3 × 3 × 3 = 27 panels are too many
    // (and no other line axis makes them fit), so the largest non-workload panel axis — the
    // interval, first of the two with three levels — is left out: not averaged, since event-
    // driven runs and periodic ones are not alike, but shown at "every event" only (its own
    // charts show the rest). Against the interval, the load scale (five levels) is averaged.
    let data = grid_data(
        &[
            ("workload", text(&["a", "b", "c"])),
            (
                "scheduler",
                text(&["fcfs", "easy", "conservative", "cons-15"]),
            ),
            ("interval", numbers(&[None, Some(300.0), Some(900.0)])),
            (
                "load_scale",
                numbers(&[Some(0.6), Some(0.8), Some(1.0), Some(1.2), Some(1.4)]),
            ),
            ("tau", numbers(&[Some(10.0), Some(30.0), Some(60.0)])),
        ],
        |_| true,
        1,
        &[],
    );
    let views = selected(&data);
    assert!(
        views.contains(
            "sweep: bounded_slowdown_mean ~ load_scale | lines scheduler | panels workload × tau | without interval\n"
        ),
        "{views}"
    );
    assert!(views.contains(
        "sweep: bounded_slowdown_mean ~ interval | lines scheduler | panels workload × tau | averaged load_scale\n"
    ));
    // τ cannot change the mean wait: held, the 3 × 3 panels of workload × interval fit.
    assert!(
        views.contains(
            "sweep: wait_mean ~ load_scale | lines scheduler | panels workload × interval | held tau\n"
        ),
        "{views}"
    );
    // One cell: no comparison to make, but its time series, distributions and schedule.
    let one = grid_data(&[("workload", text(&["kth"]))], |_| true, 1, &[]);
    assert_eq!(
        selected(&one),
        "timeline: utilization | panels – | colour – | dash –
timeline: queue | panels – | colour – | dash –
timeline: wait | panels – | colour – | dash –
timeline: bounded_slowdown | panels – | colour – | dash –
schedule: gantt
table: table by –
"
    );
}

/// A row of a hand-made result set: its axis levels and metric values.
type HandRow<'a> = (Vec<(&'a str, Level)>, Vec<(&'a str, f64)>);

fn data_of(axes: &[&str], rows: Vec<HandRow<'_>>) -> ReportData {
    ReportData {
        rows: rows
            .iter()
            .enumerate()
            .map(|(i, (levels, metrics))| {
                let levels: Vec<(&str, &Level)> = levels.iter().map(|(a, l)| (*a, l)).collect();
                row(format!("cell{i}"), &levels, metrics)
            })
            .collect(),
        axis_names: axes.iter().map(|a| a.to_string()).collect(),
        ..ReportData::default()
    }
}

fn t(s: &str) -> Level {
    Level::Text(s.to_string())
}

#[test]
fn findings_compare_schedulers_with_replicate_intervals_worked_by_hand() {
    // Scheduler a: waits 10 h and 12 h; b: 4 h and 6 h (two replicas each, one workload).
    // a: mean 11, s² = 2, half-width t(1) · √(2/2) = 12.706 → 11.0 ± 12.7 h; b: 5.00 ± 12.7 h.
    // b − a = −6 h, −54.5 %; Welch: se = √(2/2 + 2/2) = √2, df = 2, t = 4.3027 → −6 ± 6.085:
    // −12.1 to +0.0849 h, which contains zero: within replicate noise.
    // Bounded slowdown: a 20 and 20 (no spread), b 10 and 40: mean 25, s² = 450,
    // half-width 12.706 · √225 = 191; Welch with a's zero variance: df = 1, 5 ± 190.6.
    // Utilization: 0.5 twice against 0.6 twice: +20.0 %, no spread, so no interval.
    let h = 3600.0;
    let rows = vec![
        (
            vec![("workload", t("w")), ("scheduler", t("a"))],
            vec![
                ("wait_mean", 10.0 * h),
                ("bounded_slowdown_mean", 20.0),
                ("utilization", 0.5),
            ],
        ),
        (
            vec![("workload", t("w")), ("scheduler", t("a"))],
            vec![
                ("wait_mean", 12.0 * h),
                ("bounded_slowdown_mean", 20.0),
                ("utilization", 0.5),
            ],
        ),
        (
            vec![("workload", t("w")), ("scheduler", t("b"))],
            vec![
                ("wait_mean", 4.0 * h),
                ("bounded_slowdown_mean", 10.0),
                ("utilization", 0.6),
            ],
        ),
        (
            vec![("workload", t("w")), ("scheduler", t("b"))],
            vec![
                ("wait_mean", 6.0 * h),
                ("bounded_slowdown_mean", 40.0),
                ("utilization", 0.6),
            ],
        ),
    ];
    let data = data_of(&["workload", "scheduler"], rows);
    let grid = Grid::new(&data);
    let f = findings_for(&grid, Some("scheduler"), &[]);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].title, "workload = w");
    assert_eq!(
        f[0].text,
        "Scheduler = b vs a: lowers mean wait from 11.0 ± 12.7 h to 5.00 ± 12.7 h (−54.5 %; within replicate noise: 95 % CI of the difference −12.1 to +0.0849 h), raises mean bounded slowdown from 20.0 to 25.0 ± 191 (+25.0 %; within replicate noise: 95 % CI of the difference −186 to +196) and raises utilization from 0.500 to 0.600 (+20.0 %)."
    );
}

#[test]
fn findings_name_the_axis_of_every_setting_and_level() {
    // Schedulers a and b under reservations none and injected: b halves the wait without
    // reservations (10 → 5 h, −50.0 %) and doubles it with them (4 → 8 h, ×2.0). Every value
    // is said with its axis: no bare "none" or "a" for the reader to place.
    let h = 3600.0;
    let row = |r: &str, s: &str, w: f64| {
        (
            vec![("reservations", t(r)), ("scheduler", t(s))],
            vec![("wait_mean", w * h)],
        )
    };
    let data = data_of(
        &["reservations", "scheduler"],
        vec![
            row("none", "a", 10.0),
            row("none", "b", 5.0),
            row("injected", "a", 4.0),
            row("injected", "b", 8.0),
        ],
    );
    let grid = Grid::new(&data);
    let f = findings_for(&grid, Some("scheduler"), &[]);
    assert_eq!(f.len(), 3, "{f:#?}");
    assert_eq!(f[0].title, "All configurations");
    assert_eq!(
        f[0].text,
        "At reservations = none: scheduler = b vs a: lowers mean wait from 10.0 h to 5.00 h (−50.0 %). At reservations = injected: scheduler = b vs a: raises mean wait from 4.00 h to 8.00 h (×2.0)."
    );
    // The other axis's effect (a: 10 → 4 h, −60.0 %; b: 5 → 8 h, +60.0 %) and both
    // interactions, each named with its axis too.
    assert_eq!(f[1].title, "Reservations = injected vs none");
    assert_eq!(
        f[1].text,
        "Over every setting of the other axes, mean wait: lower in 1 and higher in 1 of 2 (median ±0.0 %, from −60.0 % to +60.0 %). On mean wait the effect reverses with scheduler: −60.0 % at scheduler = a and +60.0 % at scheduler = b."
    );
    assert_eq!(f[2].title, "How the effect of scheduler = b vs a changes");
    assert_eq!(
        f[2].text,
        "On mean wait the effect reverses with reservations: −50.0 % at reservations = none and ×2.0 at reservations = injected."
    );
}

#[test]
fn every_wait_of_a_report_is_in_one_unit_chosen_from_the_median_mean_wait() {
    // Schedulers a, b and c wait 150, 90 and 7,200 s on average: the median, 150 s, is over a
    // minute and under an hour, so every wait is in minutes (docs/reports.md, "Units") — in the
    // findings, the configurations table and the charts alike, c's 2 h as 120 min too.
    // Findings: b vs a 2.50 → 1.50 min (−40.0 %); c vs a 2.50 → 120 min (×48).
    // Table: mean waits 2.50, 1.50, 120 min — one count of decimals a column, enough for three
    // significant digits of 1.50 and 2.50, so 120.00; p95 waits 600, 300 and 36,000 s = 10.0,
    // 5.00 and 600 min, likewise 10.00, 5.00, 600.00.
    let row = |s: &str, w: f64, p95: f64| {
        (
            vec![("workload", t("w")), ("scheduler", t(s))],
            vec![("wait_mean", w), ("wait_p95", p95)],
        )
    };
    let data = data_of(
        &["workload", "scheduler"],
        vec![
            row("a", 150.0, 600.0),
            row("b", 90.0, 300.0),
            row("c", 7200.0, 36_000.0),
        ],
    );
    let grid = Grid::new(&data);
    assert_eq!(grid.waits, WaitUnit::Minutes);
    let f = findings_for(&grid, Some("scheduler"), &[]);
    assert_eq!(
        f[0].text,
        "Scheduler = b vs a: lowers mean wait from 2.50 min to 1.50 min (−40.0 %); scheduler = c vs a: raises mean wait from 2.50 min to 120 min (×48)."
    );
    let palette = Palette::new(&grid.shape);
    let ctx = views::Context {
        grid: &grid,
        data: &data,
        palette: &palette,
        classes: &[],
        reproduces: None,
    };
    let table = views::configurations_table(&ctx);
    assert_eq!(
        table.headers,
        ["scheduler", "mean wait (min)", "p95 wait (min)"]
    );
    assert_eq!(
        table.rows,
        [
            ["a", "2.50", "10.00"],
            ["b", "1.50", "5.00"],
            ["c", "120.00", "600.00"]
        ]
    );
    assert!(
        table.caption.contains("Waits in minutes;"),
        "{}",
        table.caption
    );
    // The charts of the metrics say the same unit on their axis, and no other.
    let sections = views::build(&views::select(&grid.shape), &ctx);
    let charts: Vec<&views::Chart> = sections.iter().flat_map(|s| s.charts.iter()).collect();
    let wait_chart = charts
        .iter()
        .find(|c| c.id.starts_with("wait-mean"))
        .expect("a mean wait chart");
    assert!(
        wait_chart.svg.contains("mean wait (min)"),
        "{}",
        wait_chart.svg
    );
    assert!(charts.iter().all(|c| !c.svg.contains("(h)")));
}

#[test]
fn findings_follow_a_numeric_axis_worked_by_hand() {
    // Load scale 0.5, 1, 2: waits 1, 2, 8 h (×8.0, rising throughout); bounded slowdowns 4,
    // 3, 5 (+25.0 %, not monotone); utilization 0.9, 0.8, 0.7 (−22.2 %, falling throughout).
    let h = 3600.0;
    let point = |x: f64, w: f64, b: f64, u: f64| {
        (
            vec![("load_scale", Level::Number(x))],
            vec![
                ("wait_mean", w * h),
                ("bounded_slowdown_mean", b),
                ("utilization", u),
            ],
        )
    };
    let data = data_of(
        &["load_scale"],
        vec![
            point(0.5, 1.0, 4.0, 0.9),
            point(1.0, 2.0, 3.0, 0.8),
            point(2.0, 8.0, 5.0, 0.7),
        ],
    );
    let grid = Grid::new(&data);
    let f = findings_for(&grid, None, &["load_scale".to_string()]);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].title, "Load scale");
    assert_eq!(
        f[0].text,
        "Mean wait against load scale: from 1.00 h at load scale 0.5 to 8.00 h at 2 (×8.0, rising throughout). Mean bounded slowdown against load scale: from 4.00 at load scale 0.5 to 5.00 at 2 (+25.0 %, not monotone: highest at load scale 2, lowest at 1). Utilization against load scale: from 0.900 at load scale 0.5 to 0.700 at 2 (−22.2 %, falling throughout)."
    );
}

#[test]
fn findings_summarise_many_settings_with_counts_median_and_range() {
    // Schedulers a and b on five clusters: a waits 10 h everywhere; b 5, 8, 10, 12, 30 h.
    // Relative changes −50 %, −20 %, 0, +20 %, +200 %: lower in 2, higher in 2 of 5, median
    // ±0.0 %, from −50.0 % to ×3.0 (a tripling).
    let h = 3600.0;
    let mut rows = Vec::new();
    for (i, b) in [5.0, 8.0, 10.0, 12.0, 30.0].iter().enumerate() {
        let cluster = t(&format!("c{i}"));
        rows.push((
            vec![("cluster", cluster.clone()), ("scheduler", t("a"))],
            vec![("wait_mean", 10.0 * h)],
        ));
        rows.push((
            vec![("cluster", cluster), ("scheduler", t("b"))],
            vec![("wait_mean", b * h)],
        ));
    }
    let data = data_of(&["cluster", "scheduler"], rows);
    let grid = Grid::new(&data);
    let f = findings_for(&grid, Some("scheduler"), &[]);
    assert_eq!(
        f[0].text,
        "Across the 5 settings of cluster, scheduler = b vs a — mean wait: lower in 2 and higher in 2 of 5 (median ±0.0 %, from −50.0 % to ×3.0)."
    );
}

#[test]
fn findings_state_each_numeric_axis_effect_once_listing_its_metrics() {
    // Issue 35: "From the lowest to the highest … in each of the 24 series" was repeated once
    // per metric. Load scale 1 and 2 on five clusters (five series): the wait doubles in each
    // (1 → 2 h: ×2.0), the bounded slowdown halves (4 → 2: −50.0 %), utilization stays 0.5.
    // One sentence for the axis, the three metrics in it.
    let h = 3600.0;
    let mut rows = Vec::new();
    for i in 0..5 {
        for (x, w, b) in [(1.0, 1.0, 4.0), (2.0, 2.0, 2.0)] {
            rows.push((
                vec![
                    ("cluster", t(&format!("c{i}"))),
                    ("load_scale", Level::Number(x)),
                ],
                vec![
                    ("wait_mean", w * h),
                    ("bounded_slowdown_mean", b),
                    ("utilization", 0.5),
                ],
            ));
        }
    }
    let data = data_of(&["cluster", "load_scale"], rows);
    let grid = Grid::new(&data);
    let f = findings_for(&grid, None, &["load_scale".to_string()]);
    let load = f
        .iter()
        .find(|f| f.title == "Load scale")
        .expect("a load-scale finding");
    assert_eq!(
        load.text,
        "From the lowest to the highest load scale in each of the 5 series — mean wait: lower in 0 and higher in 5 of 5 (median ×2.0, from ×2.0 to ×2.0); mean bounded slowdown: lower in 5 and higher in 0 of 5 (median −50.0 %, from −50.0 % to −50.0 %); utilization: the same in all 5."
    );
    let all: String = f.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(
        all.matches("From the lowest to the highest").count(),
        1,
        "{all}"
    );
}

/// A summary row with text columns (axis levels such as `order`) and numbers.
fn text_row(cell: &str, texts: &[(&str, &str)], numbers: &[(&str, f64)]) -> SummaryRow {
    SummaryRow {
        cell: cell.to_string(),
        text: texts
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        numbers: numbers
            .iter()
            .map(|(k, v)| (k.to_string(), Some(*v)))
            .collect(),
    }
}

fn with_user_files(mut data: ReportData) -> ReportData {
    for f in ["users.parquet", "user_timeseries.parquet"] {
        data.files.insert(f.to_string());
    }
    data
}

#[test]
fn fairshare_orders_get_the_fairshare_section_and_fcfs_alone_does_not() {
    // experiments/fairshare-orders.yaml: order × backfill on one trace, users.parquet present.
    let mut rows = Vec::new();
    for order in ["fcfs", "fairshare", "priority"] {
        for backfill in ["none", "easy", "conservative", "aggressive"] {
            let mut numbers: Vec<(&str, f64)> = METRICS.iter().map(|m| (*m, 1.0)).collect();
            numbers.extend([("jain_wait", 1.0), ("jain_bounded_slowdown", 1.0)]);
            rows.push(text_row(
                &format!("sdsc.s.{order}.{backfill}"),
                &[
                    ("workload", "sdsc-sp2"),
                    ("scheduler", "s"),
                    ("order", order),
                    ("backfill", backfill),
                ],
                &numbers,
            ));
        }
    }
    let data = with_user_files(ReportData {
        rows: rows.clone(),
        axis_names: ["workload", "scheduler", "order", "backfill"]
            .iter()
            .map(|a| a.to_string())
            .collect(),
        files: ["summary.parquet", "jobs.parquet", "timeseries.parquet"]
            .iter()
            .map(|f| f.to_string())
            .collect(),
        ..ReportData::default()
    });
    let views = selected(&data);
    assert!(
        views.contains(
            "\nfairshare: section\nsweep: wait_mean bars | colours order | groups backfill\n"
        ),
        "{views}"
    );
    // The same grid with only FCFS order: users.parquet is there (every run writes it), but
    // nothing ordered the queue by it.
    let fcfs = ReportData {
        rows: rows
            .into_iter()
            .filter(|r| r.text["order"] == "fcfs")
            .collect(),
        ..data.clone()
    };
    assert!(
        !selected(&fcfs).contains("fairshare"),
        "{}",
        selected(&fcfs)
    );
    // Fairshare order without the per-user files (an older result set): no section.
    let old = ReportData {
        files: data
            .files
            .iter()
            .filter(|f| !f.starts_with("user"))
            .cloned()
            .collect(),
        ..data
    };
    assert!(!selected(&old).contains("fairshare"));
}

fn user(user: i64, usage: f64, measured: f64, wait_h: f64, factor: f64) -> UserRow {
    UserRow {
        user,
        jobs: measured,
        measured_jobs: measured,
        core_hours: usage / 3600.0,
        penalised_usage: usage,
        share: 0.25,
        fairshare_factor: factor,
        wait_mean: Some(wait_h * 3600.0),
        bounded_slowdown_mean: Some(1.0),
    }
}

#[test]
fn fairshare_findings_worked_by_hand() {
    // Four users with equal shares (0.25 each) and penalised usage 600, 300, 60, 40 (total
    // 1000): the heaviest two are users 1 and 2 (k = min(10, 4/2) = 2), 90.0 % of the usage on
    // 50.0 % of the shares.
    // Fairshare order: waits 1 h (2 jobs), 2 h (1 job), 0 (1 job), 1/3 h (3 jobs):
    //   heaviest (2·1 + 1·2)/3 = 1.33 h, others (1·0 + 3·1/3)/4 = 0.250 h.
    // FCFS order: 2 h (2 jobs), 1 h (1), 600 s (1), 0 (3):
    //   heaviest (2·2 + 1·1)/3 = 1.67 h, others (600 s)/4 = 150 s = 0.0417 h.
    // Final factors 2^(−(U/ΣU)/S): user 1 2^(−0.6/0.25) = 2^−2.4 = 0.189 (the lowest),
    // user 2 2^−1.2 = 0.435, user 3 2^−0.24 = 0.847, user 4 2^−0.16 = 0.895.
    let ff = |u: f64| 2f64.powf(-(u / 1000.0) / 0.25);
    let mut data = ReportData {
        rows: vec![
            text_row(
                "w.fcfs",
                &[("workload", "w"), ("order", "fcfs")],
                &[("jain_wait", 0.5), ("jain_bounded_slowdown", 0.4)],
            ),
            text_row(
                "w.fair",
                &[("workload", "w"), ("order", "fairshare")],
                &[("jain_wait", 0.8), ("jain_bounded_slowdown", 0.7)],
            ),
        ],
        axis_names: vec!["workload".into(), "order".into()],
        ..ReportData::default()
    };
    data.users.users.insert(
        "w.fair".into(),
        vec![
            user(1, 600.0, 2.0, 1.0, ff(600.0)),
            user(2, 300.0, 1.0, 2.0, ff(300.0)),
            user(3, 60.0, 1.0, 0.0, ff(60.0)),
            user(4, 40.0, 3.0, 1.0 / 3.0, ff(40.0)),
        ],
    );
    data.users.users.insert(
        "w.fcfs".into(),
        vec![
            user(1, 600.0, 2.0, 2.0, ff(600.0)),
            user(2, 300.0, 1.0, 1.0, ff(300.0)),
            user(3, 60.0, 1.0, 600.0 / 3600.0, ff(60.0)),
            user(4, 40.0, 3.0, 0.0, ff(40.0)),
        ],
    );
    let grid = Grid::new(&data);
    let f = fairshare_findings(&grid, &data);
    assert_eq!(
        f.len(),
        1,
        "one paragraph: only the fairshare-ordered configuration"
    );
    assert_eq!(f[0].title, "order = fairshare");
    assert_eq!(
        f[0].text,
        "The two heaviest users (90.0 % of the penalised usage on 50.0 % of the shares) waited 1.33 h per job on average, the other two users 0.250 h (under order fcfs: 1.67 h and 0.0417 h). Jain's index across users is 0.800 for mean waits and 0.700 for mean bounded slowdowns (order fcfs: 0.500 and 0.400; 1 is perfectly even). The lowest final fairshare factor is user 1's, 0.189, with 60.0 % of the penalised usage on a 25.0 % share."
    );
}

fn queue_row(cell: &str, queue: &str, wait: f64, held: f64) -> schedlab::report::data::QueueRow {
    schedlab::report::data::QueueRow {
        cell: cell.into(),
        queue: queue.into(),
        numbers: [
            ("jobs", 100.0),
            ("held_jobs", held),
            ("killed_by_limit", 1.0),
            ("wait_mean", wait),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), Some(*v)))
        .collect(),
    }
}

#[test]
fn queue_setups_get_the_queues_section_with_the_papers_waits_worked_by_hand() {
    // Two setups of LPC's five queues (experiments/lpc-queues.yaml in small).
    let rows = vec![
        text_row(
            "lpc.easy.lpc",
            &[
                ("workload", "lpc"),
                ("scheduler", "easy"),
                ("queues", "lpc"),
            ],
            &[("jobs", 500.0), ("wait_mean", 100.0)],
        ),
        text_row(
            "lpc.easy.open",
            &[
                ("workload", "lpc"),
                ("scheduler", "easy"),
                ("queues", "open"),
            ],
            &[("jobs", 500.0), ("wait_mean", 150.0)],
        ),
    ];
    let waits = [
        ("test", 10.0, 20.0),
        ("short", 50.0, 40.0),
        ("long", 100.0, 100.0),
        ("day", 250.0, 300.0),
        ("infinite", 500.0, 400.0),
    ];
    let mut queues = Vec::new();
    for (q, a, b) in waits {
        queues.push(queue_row("lpc.easy.lpc", q, a, 2.0));
        queues.push(queue_row("lpc.easy.open", q, b, 0.0));
    }
    let data = ReportData {
        rows,
        axis_names: ["workload", "scheduler", "queues"]
            .iter()
            .map(|a| a.to_string())
            .collect(),
        files: ["summary.parquet", "jobs.parquet", "queues.parquet"]
            .iter()
            .map(|f| f.to_string())
            .collect(),
        queues,
        ..ReportData::default()
    };
    assert!(
        selected(&data).contains("\nqueues: section\n"),
        "{}",
        selected(&data)
    );
    let grid = Grid::new(&data);
    // An experiment that does not say it reproduces Medernach's paper gets no comparison
    // with it (issue 35).
    let other = views::queue_section(&grid, &data, None);
    assert!(
        !other
            .tables
            .iter()
            .any(|t| t.headers[1] == "paper (recorded)")
            && !other
                .findings
                .iter()
                .any(|f| f.title.contains("paper") || f.text.contains("paper")),
        "{:#?}",
        other.findings
    );
    let section = views::queue_section(&grid, &data, Some(views::MEDERNACH));
    let text: Vec<String> = section
        .findings
        .iter()
        .map(|f| format!("{}. {}", f.title, f.text))
        .collect();
    // The two setups' mean waits, 100 and 150 s, have a median of 125 s: over a minute, so
    // every wait of the report is in minutes (docs/reports.md, "Units").
    // queue setup = open vs lpc: all jobs 100 → 150 s = 1.67 → 2.50 min (+50.0 %); per queue
    // 10 → 20 s = 0.167 → 0.333 min, 50 → 40 s = 0.833 → 0.667, 100 s = 1.67 both,
    // 250 → 300 s = 4.17 → 5.00, 500 → 400 s = 8.33 → 6.67; lpc-less setup holds nothing, kills
    // one job per queue.
    assert!(
        text.contains(&"queue setup = open vs lpc. the mean wait of all jobs goes from 1.67 min to 2.50 min (+50.0 %), test's from 0.167 min to 0.333 min, short's from 0.833 min to 0.667 min, long's from 1.67 min to 1.67 min, day's from 4.17 min to 5.00 min, infinite's from 8.33 min to 6.67 min; 0 jobs held back by a limit, 5 killed by one.".to_string()),
        "{text:#?}"
    );
    // lpc beside the paper: 33,336/10 = 3,334; 1,250/50 = 25; 535/100 = 5.35; 467/250 = 1.87;
    // 1,754/500 = 3.51 — all below, by 1.87 (day) to 3,334 (test).
    assert!(
        text.contains(&"queue setup = lpc beside the paper. our mean wait is below the recorded one in 5 of 5 queues, by a factor of 1.87 to 3,334 (ours from longest: infinite > day > long > short > test; the paper's: test > infinite > short > long > day).".to_string()),
        "{text:#?}"
    );
    // The comparison table: the paper's column, then one per setup.
    let table = section
        .tables
        .iter()
        .find(|t| t.headers[1] == "paper (recorded)")
        .unwrap();
    assert_eq!(table.headers[2..], ["queue setup lpc", "queue setup open"]);
    assert!(table.caption.starts_with("Mean wait per LPC queue (min)"));
    // Minutes, a column of decimals each (three significant digits of its smallest value): the
    // paper's 33,336 s = 555.6 min beside 1,250 s = 20.8, 535 s = 8.92, 467 s = 7.78 (two
    // decimals) and 1,754 s = 29.2; ours 10 s = 0.167 min and 20 s = 0.333 min (three).
    assert_eq!(table.rows[0], ["test", "555.60", "0.167", "0.333"]);
    assert_eq!(table.rows[3], ["day", "7.78", "4.167", "5.000"]);
    // The per-queue table: waits in the same unit, held times too.
    let per_queue = &section.tables[0];
    assert_eq!(
        per_queue.headers[5..7],
        ["mean wait (min)", "mean held (min)"]
    );
    assert_eq!(per_queue.rows[0][5], "0.167");
    // The paper's test queue in the closing finding, in minutes too.
    assert!(
        text.iter()
            .any(|t| t.contains("Test's recorded 556 min (over nine hours")),
        "{text:#?}"
    );
    // Without a queues axis (one queue `all` in every result set): no section.
    let plain = ReportData {
        axis_names: vec!["workload".into(), "scheduler".into()],
        rows: data.rows[..1].to_vec(),
        ..data.clone()
    };
    assert!(!selected(&plain).contains("queues"), "{}", selected(&plain));
}

/// The same setting has the same colour in every report (issue 35): `easy` beside `fcfs` in
/// one experiment and beside `conservative` and a user's own `my-policy` (with a workload axis
/// taking colours first in neither) in another, `easy` is drawn alike; so is `conservative` in
/// a third where it comes first.
#[test]
fn a_setting_has_the_same_colour_in_every_report() {
    let colour_of = |axes: &[(&str, Vec<Level>)], value: &str| {
        let data = grid_data(axes, |_| true, 1, &[]);
        let grid = Grid::new(&data);
        let palette = Palette::new(&grid.shape);
        let axis = grid.shape.axis("scheduler").unwrap();
        palette
            .look(axis, &Level::Text(value.into()))
            .color
            .to_string()
    };
    let one = [("scheduler", text(&["fcfs", "easy"]))];
    let two = [
        ("workload", text(&["kth", "sdsc"])),
        ("scheduler", text(&["conservative", "my-policy", "easy"])),
    ];
    let three = [("scheduler", text(&["conservative", "aggressive"]))];
    assert_eq!(colour_of(&one, "easy"), colour_of(&two, "easy"));
    assert_eq!(
        colour_of(&two, "conservative"),
        colour_of(&three, "conservative")
    );
    // …and different settings of one report differ.
    assert_ne!(colour_of(&two, "easy"), colour_of(&two, "my-policy"));
    assert_ne!(colour_of(&two, "easy"), colour_of(&two, "conservative"));
}

/// A grid built to have an interaction (issue 35): backfill × order × load, where the
/// fairshare order raises the mean wait by 30 % without backfilling and lowers it by 40 % with
/// EASY, at both loads. The findings count the order's effect over every setting of the other
/// axes and name the reversal with the backfilling rule — not with the load, where the effect
/// is the same (the median of +30 % and −40 % is −5 % at each load).
#[test]
fn findings_name_the_effect_of_every_axis_and_an_interaction_that_reverses_it() {
    let mut rows = Vec::new();
    for backfill in ["none", "easy"] {
        for order in ["fcfs", "fairshare"] {
            for load in [0.8, 1.2] {
                let base = if backfill == "none" { 10.0 } else { 5.0 }
                    * if load > 1.0 { 2.0 } else { 1.0 };
                let factor = match (backfill, order) {
                    (_, "fcfs") => 1.0,
                    ("none", _) => 1.3,
                    _ => 0.6,
                };
                let mut numbers: Vec<(&str, f64)> = METRICS.iter().map(|m| (*m, 1.0)).collect();
                numbers.retain(|(m, _)| *m != "wait_mean");
                numbers.push(("wait_mean", base * factor * 3600.0));
                numbers.push(("load_scale", load));
                rows.push(text_row(
                    &format!("w.{backfill}.{order}.{load}"),
                    &[("workload", "w"), ("backfill", backfill), ("order", order)],
                    &numbers,
                ));
            }
        }
    }
    let data = ReportData {
        rows,
        axis_names: ["workload", "backfill", "order", "load_scale"]
            .iter()
            .map(|a| a.to_string())
            .collect(),
        files: ["summary.parquet"].iter().map(|f| f.to_string()).collect(),
        ..ReportData::default()
    };
    let grid = Grid::new(&data);
    let text: String = findings_for(&grid, Some("backfill"), &["load_scale".to_string()])
        .iter()
        .map(|f| format!("{}. {}\n", f.title, f.text))
        .collect();
    // The order's effect over the four settings of backfill × load: higher in the two without
    // backfilling, lower in the two with EASY.
    assert!(
        text.contains("Order = fairshare vs fcfs. Over every setting of the other axes, mean wait: lower in 2 and higher in 2 of 4"),
        "{text}"
    );
    assert!(
        text.contains("On mean wait the effect reverses with backfill: +30.0 % at backfill = none and −40.0 % at backfill = easy"),
        "{text}"
    );
    assert!(!text.contains("with load"), "{text}");
}

/// markov-arrivals' CV charts: most arrival settings give CVs near a Poisson stream's 1 (here
/// 1.0 to 1.5 for P_login ≥ 0.2) and a few reach 11, so on one log axis the first crowd its
/// left edge. A second panel shows the CVs below 2 on an axis of their own, with ticks (issue
/// 35).
#[test]
fn crowded_low_interarrival_cvs_get_an_enlarged_panel_with_ticks() {
    let mut data = grid_data(
        &[
            ("scheduler", text(&["fcfs", "easy"])),
            ("mu", numbers(&[Some(2.778e-4), Some(2.778e-2)])),
            (
                "p_login",
                numbers(&[Some(0.05), Some(0.2), Some(0.5), Some(0.9)]),
            ),
        ],
        |_| true,
        1,
        &["model_interarrival_cv", "interarrival_cv"],
    );
    for r in &mut data.rows {
        let p = r.numbers["p_login"].unwrap();
        let mu = r.numbers["mu"].unwrap();
        let cv = if p < 0.1 {
            4.0 + 1e3 * mu * 2.0
        } else {
            1.0 + 0.5 * (1.0 - p) + mu
        };
        r.numbers.insert("interarrival_cv".into(), Some(cv));
    }
    let grid = Grid::new(&data);
    let palette = Palette::new(&grid.shape);
    let ctx = views::Context {
        grid: &grid,
        data: &data,
        palette: &palette,
        classes: &[],
        reproduces: None,
    };
    let chosen: Vec<_> = views::select(&grid.shape)
        .into_iter()
        .filter(|v| v.family == "burstiness")
        .collect();
    let section = views::build(&chosen, &ctx)
        .into_iter()
        .find(|s| s.heading == "Burstiness")
        .unwrap();
    let chart = section
        .charts
        .iter()
        .find(|c| c.id == "wait-vs-cv")
        .unwrap();
    assert!(chart.svg.contains("CV below 2 enlarged"), "{}", chart.svg);
    assert!(chart.svg.contains(">every setting<"), "{}", chart.svg);
    assert!(
        chart.caption.contains("on an axis of their own"),
        "{}",
        chart.caption
    );
    // The enlarged panel's axis is labelled: 1.2 and 1.4 lie between its CVs 1.05 and 1.5.
    assert!(
        chart.svg.contains(">1.2<") && chart.svg.contains(">1.4<"),
        "{}",
        chart.svg
    );
}

/// The fairshare section of `data`, as a report builds it.
fn fairshare_section(data: &ReportData) -> views::Section {
    let grid = Grid::new(data);
    let palette = Palette::new(&grid.shape);
    let ctx = views::Context {
        grid: &grid,
        data,
        palette: &palette,
        classes: &[],
        reproduces: None,
    };
    let chosen: Vec<_> = views::select(&grid.shape)
        .into_iter()
        .filter(|v| v.family == "fairshare")
        .collect();
    views::build(&chosen, &ctx)
        .into_iter()
        .find(|s| s.heading == "Fairshare")
        .expect("a fairshare section")
}

/// Twelve users under FCFS, fairshare and priority orders: the same jobs, so the same usage in
/// every configuration. What all fairshare-ordered configurations share (the heaviest users'
/// share of the usage, whose factor ended lowest) is said once, not per configuration; a Jain
/// column with one value in every row is said once in the caption; the charts draw the ten
/// users the tables list (not eight), and the grey "other users" line the caption names is
/// there — and with four users, neither is (issue 35).
#[test]
fn fairshare_sections_say_once_what_every_configuration_shares() {
    let build = |users: i64| {
        let mut rows = Vec::new();
        for order in ["fcfs", "fairshare", "priority"] {
            rows.push(text_row(
                &format!("w.{order}"),
                &[("workload", "w"), ("order", order)],
                &[
                    ("jain_wait", if order == "fcfs" { 0.5 } else { 0.7 }),
                    (
                        "jain_bounded_slowdown",
                        if order == "fcfs" { 0.4 } else { 0.6 },
                    ),
                    ("jain_usage_per_share", 0.25),
                    ("users", users as f64),
                ],
            ));
        }
        let mut data = with_user_files(ReportData {
            rows,
            axis_names: vec!["workload".into(), "order".into()],
            files: ["summary.parquet"].iter().map(|f| f.to_string()).collect(),
            ..ReportData::default()
        });
        // Usage 100 × (users − u + 1): user 1 the heaviest; waits differ per order.
        for (order, wait) in [("fcfs", 1.0), ("fairshare", 2.0), ("priority", 3.0)] {
            let cell = format!("w.{order}");
            let all: Vec<UserRow> = (1..=users)
                .map(|u| {
                    let usage = 100.0 * (users - u + 1) as f64;
                    user(u, usage, 2.0, wait * u as f64, 2f64.powf(-usage / 1000.0))
                })
                .collect();
            data.users.users.insert(cell.clone(), all);
            // Bins as user_timeseries.parquet keeps them: the ten heaviest one by one, the rest
            // as one row.
            let mut bins = Vec::new();
            for t in [0.0, 86_400.0] {
                for u in 1..=users.min(10) {
                    bins.push(UserBin {
                        time: t,
                        user: Some(u),
                        usage: 1.0,
                        fairshare_factor: Some(0.5),
                        cores: u as f64,
                    });
                }
                if users > 10 {
                    bins.push(UserBin {
                        time: t,
                        user: None,
                        usage: 1.0,
                        fairshare_factor: None,
                        cores: 3.0,
                    });
                }
            }
            data.users.bins.insert(cell, bins);
        }
        data
    };
    let section = fairshare_section(&build(12));
    let findings: Vec<String> = section
        .findings
        .iter()
        .map(|f| format!("{}. {}", f.title, f.text))
        .collect();
    // Usage shares: 100 × (12 + 11 + … + 7) / 100 × 78 = 57/78 = 73.1 % for the six heaviest
    // (min(10, 12/2)); shares 0.25 each here.
    assert!(
        findings[0].starts_with("Both fairshare-ordered configurations. The six heaviest users hold 73.1 % of the penalised usage"),
        "{findings:#?}"
    );
    assert!(findings[0].contains("The lowest final fairshare factor is user 1's"));
    for f in &findings[1..] {
        assert!(
            !f.contains("hold 73.1 %") && !f.contains("lowest final"),
            "{f}"
        );
        assert!(f.contains("The six heaviest users waited"), "{f}");
    }
    // Jain's usage per share and the users' count are the same in every row: in the caption.
    let jain = &section.tables[0];
    assert_eq!(jain.headers, ["order", "Jain wait", "Jain bsld"]);
    assert!(
        jain.caption.contains(
            "The same in every configuration, so not a column: 12 users and Jain usage/share 0.250."
        ),
        "{}",
        jain.caption
    );
    // The charts: ten users, as the tables list, and the grey line the caption names.
    let cores = section
        .charts
        .iter()
        .find(|c| c.id == "fairshare-cores")
        .unwrap();
    for u in 1..=10 {
        assert!(cores.svg.contains(&format!(">user {u}<")), "user {u}");
    }
    assert!(cores.svg.contains(">other users<"));
    assert!(cores.caption.contains("(grey)"), "{}", cores.caption);
    assert!(
        section.tables[1].caption.contains("the 10 users"),
        "{}",
        section.tables[1].caption
    );
    // Four users: no "other users" line, and no caption naming one.
    let section = fairshare_section(&build(4));
    let cores = section
        .charts
        .iter()
        .find(|c| c.id == "fairshare-cores")
        .unwrap();
    assert!(!cores.svg.contains("other users"));
    assert!(!cores.caption.contains("grey"), "{}", cores.caption);
}

/// Issue 35's wall: three schedulers under two queue setups on three workloads gave four pairs
/// of three metrics per workload. Now one sentence per workload names each metric's lowest and
/// highest scheduler and the spread, and the pair whose effect reverses is still named.
/// Waits (h) at every workload × k (k = 1, 2, 3; ratios unchanged): a 10 under both setups, b 8
/// (−20 %), c 12 under none (+20 %) and 7 under q (−30 %). Relative to each setting's mean
/// (none 10, q 25/3): a 1.0 and 1.2, b 0.8 and 0.96, c 1.2 and 0.84; medians a 1.1, b 0.88,
/// c 1.02 — lowest b, highest a, and a against b is 10/8 = +25.0 % in each setting. c against
/// a: +20.0 % under none, −30.0 % under q: a reversal.
#[test]
fn findings_per_workload_are_one_sentence_with_three_schedulers_and_name_the_interaction() {
    let mut rows = Vec::new();
    for (k, workload) in ["w1", "w2", "w3"].iter().enumerate() {
        for queues in ["none", "q"] {
            for (scheduler, wait) in [
                ("a", 10.0),
                ("b", 8.0),
                ("c", if queues == "none" { 12.0 } else { 7.0 }),
            ] {
                let mut numbers: Vec<(&str, f64)> = METRICS.iter().map(|m| (*m, 1.0)).collect();
                numbers.retain(|(m, _)| *m != "wait_mean");
                numbers.push(("wait_mean", wait * (k + 1) as f64 * 3600.0));
                rows.push(text_row(
                    &format!("{workload}.{queues}.{scheduler}"),
                    &[
                        ("workload", workload),
                        ("queues", queues),
                        ("scheduler", scheduler),
                    ],
                    &numbers,
                ));
            }
        }
    }
    let data = ReportData {
        rows,
        axis_names: ["workload", "queues", "scheduler"]
            .iter()
            .map(|a| a.to_string())
            .collect(),
        files: ["summary.parquet"].iter().map(|f| f.to_string()).collect(),
        ..ReportData::default()
    };
    let grid = Grid::new(&data);
    let f = findings_for(&grid, Some("scheduler"), &[]);
    let per_workload: Vec<_> = f
        .iter()
        .filter(|f| f.title.starts_with("workload = "))
        .collect();
    assert_eq!(per_workload.len(), 3, "{f:#?}");
    for w in &per_workload {
        assert!(
            w.text.starts_with("Of the 3 settings of scheduler, over the 2 settings of queue setup: mean wait lowest at scheduler = b, highest at a (+25.0 % in each setting)"),
            "{}",
            w.text
        );
        // One sentence, no pairs.
        assert_eq!(w.text.matches(". ").count(), 0, "{}", w.text);
        assert!(!w.text.contains(" vs "), "{}", w.text);
    }
    // Pairs only where an effect changes: c against a reverses with the queue setup.
    let text: String = f
        .iter()
        .map(|f| format!("{}. {}\n", f.title, f.text))
        .collect();
    assert!(
        text.contains("How the effect of scheduler = c vs a changes. On mean wait the effect reverses with queue setup: +20.0 % at queue setup = none and −30.0 % at queue setup = q"),
        "{text}"
    );
    assert!(!text.contains("scheduler = b vs a changes"), "{text}");
}

/// Issue 35's other wall: a paragraph per fairshare-ordered configuration (eighteen in
/// aleang-example1). Five schedulers ordering by fairshare, each with the four users of
/// `fairshare_findings_worked_by_hand` (usage 600, 300, 60, 40; jobs 2, 1, 1, 3): the heaviest
/// two hold 90.0 % of the usage on 50.0 % of the shares; under scheduler s_i users 1 and 2 wait
/// i h and 2i h, so the heaviest wait (2·i + 1·2i)/3 = 4i/3 h (1.33 h to 6.67 h: ×5, what differs
/// most), the others (1·0 + 3·1/3)/4 = 0.250 h under every scheduler. One table and one
/// paragraph instead of five paragraphs; the per-user tables one table; four configurations
/// keep their paragraphs.
#[test]
fn many_fairshare_configurations_are_one_table_and_one_paragraph() {
    let build = |schedulers: usize, fcfs: bool| {
        let mut rows = Vec::new();
        let mut data = ReportData::default();
        let ff = |u: f64| 2f64.powf(-(u / 1000.0) / 0.25);
        let mut add = |name: String, order: &str, wait: f64, jain: f64| {
            rows.push(text_row(
                &format!("w.{name}"),
                &[("workload", "w"), ("scheduler", &name), ("order", order)],
                &[
                    ("wait_mean", 3.0 * 3600.0),
                    ("jain_wait", jain),
                    ("jain_bounded_slowdown", 0.7),
                ],
            ));
            data.users.users.insert(
                format!("w.{name}"),
                vec![
                    user(1, 600.0, 2.0, wait, ff(600.0)),
                    user(2, 300.0, 1.0, 2.0 * wait, ff(300.0)),
                    user(3, 60.0, 1.0, 0.0, ff(60.0)),
                    user(4, 40.0, 3.0, 1.0 / 3.0, ff(40.0)),
                ],
            );
        };
        for i in 1..=schedulers {
            add(
                format!("s{i}"),
                "fairshare",
                i as f64,
                0.5 + 0.05 * i as f64,
            );
        }
        if fcfs {
            add("fifo".into(), "fcfs", 1.0, 0.5);
        }
        data.rows = rows;
        data.axis_names = vec!["workload".into(), "scheduler".into()];
        data.files = ["summary.parquet"].iter().map(|f| f.to_string()).collect();
        with_user_files(data)
    };
    // Five fairshare-ordered configurations and a FCFS one: the Jain table (it has the FCFS
    // row), the folded table, the users' table.
    let section = fairshare_section(&build(5, true));
    assert_eq!(section.findings.len(), 1, "{:#?}", section.findings);
    let f = &section.findings[0];
    assert_eq!(f.title, "All 5 fairshare-ordered configurations");
    assert!(
        f.text.ends_with(
            "What differs most between them is their wait: from 1.33 h at scheduler = s1 to 6.67 h at scheduler = s5."
        ),
        "{}",
        f.text
    );
    assert_eq!(section.tables.len(), 3, "{:#?}", section.tables);
    let folded = &section.tables[1];
    // FCFS: the heaviest wait (2·1 + 1·2)/3 = 1.33 h, the others 0.250 h, under every row.
    assert_eq!(folded.headers, ["scheduler", "their wait (h)"]);
    assert_eq!(folded.rows.len(), 5);
    assert_eq!(folded.rows[0], ["s1", "1.33"]);
    assert_eq!(folded.rows[4], ["s5", "6.67"]);
    assert!(
        folded.caption.contains(
            "The same in every configuration, so not a column: 2 heaviest users, their usage 90.0 %, their share 50.0 %, others' wait 0.250 h, their wait, FCFS 1.33 h, others' wait, FCFS 0.250 h, lowest FF 0.189 and lowest FF user 1."
        ),
        "{}",
        folded.caption
    );
    let users = &section.tables[2];
    assert_eq!(users.rows.len(), 5 * 4);
    assert_eq!(users.headers[0], "scheduler");
    assert!(
        users
            .caption
            .starts_with("Per fairshare-ordered configuration: the 4 users"),
        "{}",
        users.caption
    );
    // Every configuration fairshare-ordered: the Jain columns join the table, no Jain table.
    let section = fairshare_section(&build(5, false));
    assert_eq!(section.tables.len(), 2, "{:#?}", section.tables);
    assert_eq!(
        section.tables[0].headers,
        ["scheduler", "their wait (h)", "Jain wait"]
    );
    // Four: a paragraph each (after the one saying what they share), a user table each.
    let section = fairshare_section(&build(4, true));
    assert_eq!(section.findings.len(), 5, "{:#?}", section.findings);
    assert_eq!(section.tables.len(), 1 + 4);
}
