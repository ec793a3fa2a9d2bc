//! The user-aware section of a real report (issue 13): FIFO, FIFO + fairshare, EASY and EASY +
//! fairshare on 2,000 KTH jobs with the expected capacity swept ×1 / ×2, run and rendered. The
//! section, its box plots (one pair per capacity level) and heatmaps (one per scheduler at ×1)
//! are there; its table's "users at 100 %" agree with users.parquet as read here; the capacity
//! changes the judgement but not the schedules; and an experiment without
//! `metrics.expected_capacity` gets no such section.

mod common;

use std::fs;

use common::schedlab_in as schedlab;

fn experiment(metrics: &str) -> String {
    format!(
        "name: ua
workloads:
  kth: {{trace: ../workloads/kth.swf.gz, first_jobs: 2000}}
clusters:
  pool: {{procs: 100}}
schedulers:
  s: {{backfill: easy}}
metrics:
  timeseries_step: 86400
{metrics}
grid:
  axes:
    order: [fcfs, fairshare]
    backfill: [none, easy]
"
    )
}

#[test]
fn a_swept_capacity_gets_box_plots_heatmaps_and_findings() {
    let p = common::project_with_kth();
    let d = p.path();
    let text = experiment("  expected_capacity: {split: equal}").replace(
        "    backfill: [none, easy]\n",
        "    backfill: [none, easy]\n    capacity_scale: [1, 2]\n",
    );
    let reproducing =
        format!("{text}reports: {{reproduces: toth-klusacek-user-aware-metrics-eet}}\n");
    fs::write(d.join("experiments/ua.yaml"), &reproducing).unwrap();
    common::run_and_report(d);
    let md = fs::read_to_string(d.join("reports/ua.md")).unwrap();
    let html = fs::read_to_string(d.join("reports/ua.html")).unwrap();
    assert!(
        md.contains("\n## User-aware metrics (expected end times)\n"),
        "{md}"
    );
    for id in ["eet-veet-1", "eet-wt-1", "eet-veet-2", "eet-wt-2"] {
        assert!(d.join(format!("reports/ua-{id}.svg")).exists(), "{id}");
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    for s in ["fifo", "fifo-fairshare", "easy", "easy-fairshare"] {
        assert!(
            html.contains(&format!("id=\"eet-heatmap-{s}\"")),
            "heatmap {s}"
        );
    }
    // Heatmaps at ×1 only.
    assert_eq!(html.matches("id=\"eet-heatmap-").count(), 4);
    for finding in [
        "75 % of users at ≤ 35 % violated EETs only under fairshare.",
        "EASY against FIFO + fairshare.",
        "EASY + fairshare best by EETs.",
    ] {
        assert!(md.contains(finding), "{finding}");
    }
    // Offline: nothing fetched from elsewhere.
    assert!(!html.contains("<script src") && !html.contains("<link "));
    // The same results reported for a study that does not reproduce the paper: the section
    // is there, the paper's findings are not (issue 35).
    fs::write(d.join("experiments/ua.yaml"), &text).unwrap();
    let out = schedlab(d, &["report", "--date", "2026-01-01"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plain = fs::read_to_string(d.join("reports/ua.md")).unwrap();
    assert!(plain.contains("\n## User-aware metrics (expected end times)\n"));
    assert!(!plain.contains("The paper"), "{plain}");
    fs::write(d.join("experiments/ua.yaml"), &reproducing).unwrap();

    // The table's users at 100 % per configuration match users.parquet.
    let veet = common::cell_column(&d.join("results/ua/users.parquet"), "veet");
    for (cell, values) in &veet {
        let full = values
            .iter()
            .filter(|v| v.is_some_and(|v| v >= 100.0))
            .count();
        let scale = if cell.contains("capacity_scale-2") {
            "×2"
        } else {
            "×1"
        };
        let name = match (
            cell.contains("backfill-easy"),
            cell.contains("order-fairshare"),
        ) {
            (false, false) => "FIFO",
            (false, true) => "FIFO + fairshare",
            (true, false) => "EASY",
            (true, true) => "EASY + fairshare",
        };
        let row = format!("| {name} | {scale} |");
        let cells = common::markdown_row(&md, &row);
        assert_eq!(cells[8], full.to_string(), "{cell}: {cells:?}");
    }
    // The capacity judges, it does not schedule: the same waits at ×1 and ×2, and a larger
    // expected share violates at least as many EETs.
    let waits = common::cell_column(&d.join("results/ua/summary.parquet"), "wait_mean");
    let violated = common::cell_column(
        &d.join("results/ua/summary.parquet"),
        "eet_violated_fraction",
    );
    for (cell, w) in &waits {
        if cell.contains("capacity_scale-1") {
            let twice = cell.replace("capacity_scale-1", "capacity_scale-2");
            assert_eq!(w, &waits[&twice], "{cell}");
            assert!(
                violated[cell][0].unwrap() <= violated[&twice][0].unwrap(),
                "{cell}"
            );
        }
    }
}

#[test]
fn without_an_expected_capacity_there_is_no_section() {
    let p = common::project_with_kth();
    let d = p.path();
    fs::write(d.join("experiments/ua.yaml"), experiment("")).unwrap();
    common::run_and_report(d);
    let md = fs::read_to_string(d.join("reports/ua.md")).unwrap();
    assert!(!md.contains("User-aware metrics"), "{md}");
    // The metrics are still computed for every schedule.
    assert!(d.join("results/ua/eet_heatmap.parquet").exists());
}

#[test]
fn a_bad_expected_capacity_is_a_located_error() {
    let p = common::project_with_kth();
    let d = p.path();
    for (section, needle) in [
        (
            "  expected_capacity: {split: fair}",
            "expected `equal` or `shares`",
        ),
        (
            "  expected_capacity: {scale: -1}",
            "expected a positive number",
        ),
        (
            "  expected_capacity: {users: {alice: {cpu: 4}}}",
            "expected a user id",
        ),
        (
            "  expected_capacity: {users: {\"7\": {}}}",
            "give `cpu`, `memory` or both",
        ),
        (
            "  expected_capacity: {groups: {\"7\": {memory: 12 parsecs}}}",
            "unknown unit",
        ),
    ] {
        fs::write(d.join("experiments/ua.yaml"), experiment(section)).unwrap();
        let out = schedlab(d, &["run", "--quiet"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{section}: {err}");
        assert!(err.contains(needle), "{section}: {err}");
        assert!(
            err.contains("metrics.expected_capacity"),
            "{section}: {err}"
        );
        assert!(err.contains("ua.yaml:"), "{section}: {err}");
    }
}

/// The first 1,500 jobs of MetaCentrum's wagap-2013 on its machines, FIFO against FIFO +
/// fairshare, the expected capacity ×1 and ×2: the trace has no header and keeps Unix times.
const WAGAP: &str = "name: wagap
workloads:
  wagap:
    trace: ../workloads/wagap-2013.swf.gz
    memory: bytes_per_node
    first_jobs: 1500
clusters:
  wagap:
    machines: ../workloads/wagap-2013.swf.machines
    properties: [x86_64, brno, nfs4]
    topology:
      zewura: {properties: [nodecpus80]}
      zegox: {properties: [nodecpus12, debian, linux, infiniband]}
schedulers:
  s: {backfill: none, fairshare: {penalty: cpu}}
metrics:
  timeseries_step: 21600
  expected_capacity: {split: equal}
grid:
  axes:
    order: [fcfs, fairshare]
    capacity_scale: [1, 2]
";

/// A trace in Unix times (no `UnixStartTime`) is dated in UTC, saying so, on the heatmaps and
/// the schedule — before, the heatmap's axis read "trace second 1356991200". The schedule and
/// the time series say which settings they show, and that the expected capacity (a metric
/// setting) changes none of them; the clusters section describes each order once, not once per
/// capacity level with the same words.
#[test]
fn a_trace_in_unix_times_is_dated_and_each_picture_says_what_it_holds() {
    let p = common::project_with_kth();
    let d = p.path();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["wagap-2013.swf.gz", "wagap-2013.swf.machines"] {
        fs::copy(repo.join("workloads").join(f), d.join("workloads").join(f)).unwrap();
    }
    fs::write(d.join("experiments/wagap.yaml"), WAGAP).unwrap();
    common::run_and_report(d);
    let md = fs::read_to_string(d.join("reports/wagap.md")).unwrap();
    let section = |heading: &str| -> String {
        md.split(&format!("\n## {heading}\n"))
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .unwrap_or_else(|| panic!("no section {heading}: {md}"))
            .to_string()
    };

    // Dates on every heatmap's time axis: the jobs start on 2012-12-31 (UTC).
    for s in ["fifo", "fifo-fairshare"] {
        let svg = fs::read_to_string(d.join(format!("reports/wagap-eet-heatmap-{s}.svg"))).unwrap();
        assert!(
            svg.contains("date (UTC, the trace&#39;s times are Unix times")
                || svg.contains("date (UTC, the trace's times are Unix times"),
            "{s}: {svg}"
        );
        assert!(svg.contains(">2013-01-0"), "{s}: no dates");
        assert!(!svg.contains("trace second"), "{s}");
    }

    // The schedule: its settings, its cell, dates, and the metric setting named as such.
    let schedule = section("Schedule");
    assert!(
        schedule.contains("Schedule of wagap, order fcfs (cell "),
        "{schedule}"
    );
    assert!(schedule.contains(", 2013-01-"), "{schedule}");
    assert!(
        schedule.contains("(UTC, the trace's times are Unix times)"),
        "{schedule}"
    );
    assert!(
        schedule.contains(
            "It is the same at every level of the expected-capacity scale: a metric setting, which changes no schedule."
        ),
        "{schedule}"
    );
    assert!(!schedule.contains("trace hours"), "{schedule}");

    // Time series: every capacity level draws the same line, and the caption says so.
    let over_time = section("Over time and per job");
    assert_eq!(
        over_time
            .matches("The same at every level of the expected-capacity scale: a metric setting, which cannot change it.")
            .count(),
        4,
        "{over_time}"
    );

    // Clusters: each order described once, without the capacity, and why.
    let clusters = section("Clusters");
    for order in ["fcfs", "fairshare"] {
        assert_eq!(
            clusters.matches(&format!("**order = {order}.**")).count(),
            1,
            "{clusters}"
        );
    }
    assert!(!clusters.contains("expected capacity"), "{clusters}");
    assert!(
        clusters.contains(
            "Each configuration is described once for every level of the expected-capacity scale"
        ),
        "{clusters}"
    );
}
