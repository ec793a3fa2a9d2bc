//! Issue 37, memory against the docs: a machine of thousands of clusters costs disk, not
//! memory, in `run` and in `report`. A binary of its own: run beside the cold-run test of
//! tests/memory.rs, its CPU load moved that test's peak (a load dependence noted in
//! BENCHMARKS.md), and the two measure different things.

use std::fs;
use std::process::{Command, Stdio};

mod common;

/// A machine of thousands of clusters (issue 37: 20,000 one-node clusters and 400 jobs over
/// 100 days took 20 GB and 112 s in `run`, 5.5 GB in `report`): the per-cluster time series
/// is written and read a slice at a time, each cluster's series exists only once a job ran
/// there, and the report draws and names the busiest clusters only. Run and report of 5,000
/// clusters peak within a fixed allowance of the same jobs on 50 clusters, and
/// cluster_timeseries.parquet still has a row per cluster and bin.
#[test]
fn thousands_of_clusters_cost_no_memory_per_cluster_and_bin() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("experiments")).unwrap();
    let mut trace = String::from("; MaxProcs: 20000\n");
    // 200 jobs over 33 days: ~800 hourly bins.
    for i in 0..200u64 {
        let runtime = 600 + (i * 37) % 7000;
        trace.push_str(&format!(
            "{} {} -1 {runtime} 4 -1 -1 4 {runtime} -1 1 1 1 -1 1 -1 -1 -1\n",
            i + 1,
            i * 4 * 3600 + 60
        ));
    }
    fs::write(dir.path().join("t.swf"), trace).unwrap();
    let measure = |clusters: usize| -> (i64, i64, i64) {
        let machines: String = (0..clusters).map(|c| format!("{c} c{c} 1 4 1\n")).collect();
        fs::write(dir.path().join("many.swf.machines"), machines).unwrap();
        fs::write(
            dir.path().join("experiments/m.yaml"),
            "name: m
workloads:
  t: {trace: ../t.swf}
clusters:
  big: {machines: ../many.swf.machines}
schedulers:
  easy: {policy: easy}
",
        )
        .unwrap();
        let _ = fs::remove_dir_all(dir.path().join("results"));
        let _ = fs::remove_dir_all(dir.path().join(".schedlab"));
        let peak = |command: &str| {
            let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
                .current_dir(dir.path())
                .args([command, "experiments/m.yaml"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            common::peak_rss(child)
        };
        let (run, report) = (peak("run"), peak("report"));
        let rows =
            common::parquet_batches(&dir.path().join("results/m/cluster_timeseries.parquet"))
                .iter()
                .map(|b| b.num_rows() as i64)
                .sum();
        (run, report, rows)
    };
    let (small_run, small_report, small_rows) = measure(50);
    let (large_run, large_report, large_rows) = measure(5_000);
    assert_eq!(
        large_rows,
        small_rows / 50 * 5_000,
        "a row per cluster and bin"
    );
    assert!(small_rows >= 50 * 790, "{small_rows} rows");
    // Before: the 4 million rows of the large machine cost ~1 GB in `run` and in `report`.
    // What remains per cluster is its clusters.parquet row and machine entry (< 1 KB each).
    let allowance_kib = 64 * 1024;
    for (what, small, large) in [
        ("run", small_run, large_run),
        ("report", small_report, large_report),
    ] {
        assert!(
            large - small < allowance_kib,
            "{what}: peak memory rose by {} KiB from 50 clusters ({small} KiB) to 5,000 ({large} KiB); allowed {allowance_kib} KiB",
            large - small
        );
    }
}
