//! `make bench`: peak memory (RSS, from `/usr/bin/time -f %M`) of whole commands, the figures of
//! issue 16 — a simulation's memory against the number of jobs (1 M, 2 M, 5 M jobs of a
//! synthetic trace under EASY, through `schedlab run`: simulate, metrics, aggregate, publish)
//! and against the number of scheduler calls (SDSC SP2 with `interval` 1 s, 60 s and none).
//! Each figure is the median of three cold runs; each run must succeed and publish its summary.
//! Figures go to stdout; BENCHMARKS.md's table records them.

use std::io::Write;
use std::path::{Path, PathBuf};

#[path = "common/timed.rs"]
mod timed;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A synthetic SWF trace of `jobs` jobs on 1,024 processors at a load of about 0.5 (a job every
/// 10 s on average; runtimes 60–540 s, requests twice the runtime; 1–32 processors), from a
/// fixed linear congruential stream: the same file on every machine.
fn write_trace(path: &Path, jobs: u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("bench trace"));
    writeln!(out, "; MaxProcs: 1024").unwrap();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let mut submit = 0u64;
    for id in 1..=jobs {
        submit += next() % 21;
        let runtime = 60 + next() % 481;
        let procs = 1 + next() % 32;
        let user = next() % 100;
        writeln!(
            out,
            "{id} {submit} -1 {runtime} {procs} -1 -1 {procs} {} -1 1 {user} 1 -1 1 -1 -1 -1",
            runtime * 2
        )
        .unwrap();
    }
}

/// Runs `schedlab ARGS` in `dir` under `/usr/bin/time`; (seconds, peak RSS in MB).
fn measure(dir: &Path, args: &[&str]) -> (f64, f64) {
    timed::measure(&root().join("target/release/schedlab"), dir, args)
}

/// A project in `dir` with one experiment: `trace` under `policy` with `interval`.
fn project(dir: &Path, trace: &Path, procs: Option<u32>, interval: &str) {
    let _ = std::fs::remove_dir_all(dir.join("results"));
    std::fs::create_dir_all(dir.join("experiments")).unwrap();
    let procs = procs.map_or(String::new(), |p| {
        format!("\nclusters:\n  c: {{procs: {p}}}")
    });
    std::fs::write(
        dir.join("experiments/bench.yaml"),
        format!(
            "name: bench\nworkloads:\n  w: {{trace: {}}}{procs}\nschedulers:\n  easy: {{policy: easy, interval: {interval}}}\n",
            trace.display()
        ),
    )
    .unwrap();
}

/// Median (seconds, peak MB) of three cold `schedlab run`s of the project in `dir`.
fn cold_runs(dir: &Path) -> (f64, f64) {
    let mut secs = Vec::new();
    let mut mb = Vec::new();
    for _ in 0..3 {
        let _ = std::fs::remove_dir_all(dir.join("results"));
        let (s, m) = measure(
            dir,
            &["run", "--quiet", "-j", "1", "experiments/bench.yaml"],
        );
        assert!(dir.join("results/bench/summary.parquet").is_file());
        secs.push(s);
        mb.push(m);
    }
    (median(secs), median(mb))
}

fn main() {
    if !Path::new("/usr/bin/time").is_file() || !root().join("target/release/schedlab").is_file() {
        println!("(memory figures need /usr/bin/time and `make build`)");
        return;
    }
    let work = root().join("target/bench-memory");
    std::fs::create_dir_all(&work).unwrap();

    println!("## Peak memory of a simulation against the number of jobs (median of 3)\n");
    println!(
        "`schedlab run -j 1` of one EASY cell on a synthetic trace (1,024 processors, load ~0.5)\n"
    );
    println!("| jobs | median s | peak RSS MB | bytes per job |");
    println!("|---:|---:|---:|---:|");
    for millions in [1u64, 2, 5] {
        let jobs = millions * 1_000_000;
        let trace = work.join(format!("synthetic-{millions}m.swf"));
        if !trace.is_file() {
            write_trace(&trace, jobs);
        }
        let dir = work.join(format!("jobs-{millions}m"));
        project(&dir, &trace, None, "null");
        let (secs, mb) = cold_runs(&dir);
        println!(
            "| {jobs} | {secs:.1} | {mb:.0} | {:.0} |",
            mb * 1024.0 * 1024.0 / jobs as f64
        );
    }

    println!("\n## Peak memory against the number of scheduler calls (median of 3)\n");
    println!("`schedlab run -j 1` of SDSC SP2 (59,715 lines) under EASY\n");
    println!("| interval | median s | peak RSS MB |");
    println!("|---|---:|---:|");
    let sp2 = root().join("workloads/SDSC-SP2-1998-4.2-cln.swf.gz");
    for interval in ["null", "60", "1"] {
        let dir = work.join(format!("interval-{interval}"));
        project(&dir, &sp2, None, interval);
        let (secs, mb) = cold_runs(&dir);
        let shown = if interval == "null" {
            "every event"
        } else {
            interval
        };
        println!("| {shown} | {secs:.2} | {mb:.0} |");
    }
}
