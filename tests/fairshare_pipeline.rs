//! Fairshare through `schedlab run`: every order × backfilling rule as grid axes, results
//! byte-identical for any thread count, and per-user outputs consistent with the jobs.

use std::fs;
use std::path::Path;
use std::process::Command;

mod common;

const MANIFEST: &str = "name: fair
workloads:
  kth:
    trace: ../workloads/kth.swf.gz
    first_jobs: 1500
clusters:
  pool: {procs: 100}
schedulers:
  s:
    backfill: easy
    fairshare:
      charging: continuous
      decay: {factor: 0.75, every: 172800}
      shares: {users: {1: 3, 2: 2}}
grid:
  axes:
    order: [fcfs, fairshare, priority, sjf]
    backfill: [none, easy, conservative, aggressive]
";

const FILES: [&str; 6] = [
    "summary.parquet",
    "jobs.parquet",
    "timeseries.parquet",
    "reservations.parquet",
    "users.parquet",
    "user_timeseries.parquet",
];

fn run(threads: &str) -> Vec<Vec<u8>> {
    let dir = common::project_with_kth();
    let manifest = dir.path().join("experiments/fair.yaml");
    fs::write(&manifest, MANIFEST).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(dir.path())
        .args(["run", "--quiet", "-j", threads, "experiments/fair.yaml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = dir.path().join("results/fair");
    FILES
        .iter()
        .map(|f| fs::read(Path::new(&results).join(f)).unwrap())
        .collect()
}

#[test]
fn every_order_and_rule_as_axes_gives_the_same_bytes_on_one_or_two_threads() {
    let one = run("1");
    let two = run("2");
    for (name, (a, b)) in FILES.iter().zip(one.iter().zip(&two)) {
        assert!(a == b, "{name} differs between -j 1 and -j 2");
    }
}
