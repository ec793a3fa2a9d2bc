//! The user-aware section of a real report (issue 13): FIFO, FIFO + fairshare, EASY and EASY +
//! fairshare on 2,000 KTH jobs with the expected capacity swept ×1 / ×2, run and rendered. The
//! section, its box plots (one pair per capacity level) and heatmaps (one per scheduler at ×1)
//! are there; its table's "users at 100 %" agree with users.parquet as read here; the capacity
//! changes the judgement but not the schedules; and an experiment without
//! `metrics.expected_capacity` gets no such section.

mod common;

use std::collections::BTreeMap;
use std::fs;

use arrow_array::{Array, Float64Array, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

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

/// A column of a result file: cell → values, in file order.
fn column(path: &std::path::Path, name: &str) -> BTreeMap<String, Vec<Option<f64>>> {
    let file = fs::File::open(path).unwrap();
    let mut out: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
    for b in ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
    {
        let b = b.unwrap();
        let cell = b.column_by_name("cell").unwrap();
        let cell = cell.as_any().downcast_ref::<StringArray>().unwrap();
        let c = b.column_by_name(name).unwrap();
        let c = c.as_any().downcast_ref::<Float64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.entry(cell.value(i).to_string())
                .or_default()
                .push((!c.is_null(i)).then(|| c.value(i)));
        }
    }
    out
}

#[test]
fn a_swept_capacity_gets_box_plots_heatmaps_and_findings() {
    let p = common::project_with_kth();
    let d = p.path();
    let text = experiment("  expected_capacity: {split: equal}").replace(
        "    backfill: [none, easy]\n",
        "    backfill: [none, easy]\n    capacity_scale: [1, 2]\n",
    );
    fs::write(d.join("experiments/ua.yaml"), text).unwrap();
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

    // The table's users at 100 % per configuration match users.parquet.
    let veet = column(&d.join("results/ua/users.parquet"), "veet");
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
        let line = md
            .lines()
            .find(|l| l.starts_with(&row))
            .unwrap_or_else(|| panic!("no table row {row}"));
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells[8], full.to_string(), "{cell}: {line}");
    }
    // The capacity judges, it does not schedule: the same waits at ×1 and ×2, and a larger
    // expected share violates at least as many EETs.
    let waits = column(&d.join("results/ua/summary.parquet"), "wait_mean");
    let violated = column(
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
    assert!(schedlab(d, &["run", "--quiet"]).status.success());
    let out = schedlab(d, &["report", "--date", "2026-01-01"]);
    assert!(out.status.success());
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
