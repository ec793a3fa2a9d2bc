//! `make bench` (pipeline part): plan and no-op run of a 10,000-cell manifest, per-node overhead,
//! and the 2-core speed-up of a 40-cell grid. Drives the release binary like a user; each figure
//! is a median and checks its own answer (event counts, identical results across thread counts).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[path = "common/timed.rs"]
mod timed;

fn exe() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/schedlab")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn schedlab(dir: &Path, args: &[&str]) -> f64 {
    let t = Instant::now();
    let out = Command::new(exe())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("schedlab runs");
    let secs = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "schedlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    secs
}

fn events(dir: &Path, outcome: &str) -> usize {
    std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&format!("\"outcome\":\"{outcome}\"")))
        .count()
}

fn main() {
    if !exe().is_file() {
        eprintln!("build target/release/schedlab first (make build)");
        std::process::exit(1);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    // 10,000 cells over a 200-job slice of KTH-SP2: simulation cost is negligible, so the run
    // measures the pipeline's own per-node cost.
    let firsts: Vec<String> = (1..=100).map(|i| (i * 2).to_string()).collect();
    let taus: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    let kth = root.join("workloads/KTH-SP2-1996-2.1-cln.swf.gz");
    std::fs::write(
        d.join("big.yaml"),
        format!(
            "name: big\nworkloads:\n  kth: {{trace: {}}}\nschedulers:\n  easy: {{policy: easy}}\ngrid:\n  axes:\n    first_jobs: [{}]\n    tau: [{}]\n",
            kth.display(),
            firsts.join(", "),
            taus.join(", ")
        ),
    )
    .unwrap();
    println!("## Pipeline overhead (10,000-cell manifest, 200-job cells)\n");
    let cold = schedlab(
        d,
        &[
            "run",
            "--quiet",
            "-j",
            "2",
            "--events",
            "events.jsonl",
            "big.yaml",
        ],
    );
    // One schedule per first_jobs value (tau is a metric-only axis), one metrics node per cell,
    // and the aggregate.
    const NODES: usize = 100 + 10_000 + 1;
    assert_eq!(events(d, "ran"), NODES);
    let plan = median((0..5).map(|_| schedlab(d, &["plan", "big.yaml"])).collect());
    let noop = median(
        (0..5)
            .map(|_| {
                schedlab(
                    d,
                    &["run", "--quiet", "--events", "events.jsonl", "big.yaml"],
                )
            })
            .collect(),
    );
    assert_eq!(events(d, "hit"), NODES, "a no-op run is all hits");
    println!("| measure | median s |\n|---|---:|");
    println!("| cold run, 100 schedules + 10,000 metrics nodes + aggregate, -j 2 | {cold:.2} |");
    println!(
        "| per-node overhead (cold run / nodes) | {:.5} |",
        cold / NODES as f64
    );
    println!("| `schedlab plan` (10,000 cells) | {plan:.3} |");
    println!("| no-op `schedlab run` (10,000 cells, all cached) | {noop:.3} |");
    // The report reads only stored results: its cost grows with the grid, not the simulation.
    let reports: Vec<(f64, f64)> = (0..3)
        .map(|_| timed::measure(&exe(), d, &["report", "big.yaml"]))
        .collect();
    let report_secs = median(reports.iter().map(|r| r.0).collect());
    let report_mb = reports.iter().map(|r| r.1).fold(0.0, f64::max);
    assert!(
        d.join("reports/big.html").is_file(),
        "the report is written"
    );
    println!(
        "| `schedlab report` (10,000 cells; peak of 3: {report_mb:.0} MB) | {report_secs:.3} |"
    );

    // 40-cell grids of real work, cold cache: speed-up from 1 to 2 threads, aggregation of the
    // job rows included. A: 40 alike cells (conservative on 20,000 SDSC-SP2 jobs, 40 scheduling
    // intervals). B: 20 EASY + 20 conservative cells on all of SDSC-SP2 — unequal cells, so the
    // last long cell runs alone.
    let sp2 = root.join("workloads/SDSC-SP2-1998-4.2-cln.swf.gz");
    let forty: Vec<String> = (1..=40).map(|i| (i * 60).to_string()).collect();
    let twenty: Vec<String> = (1..=20).map(|i| (i * 60).to_string()).collect();
    let grids = [
        (
            "A: conservative, 20,000 SDSC-SP2 jobs × 40 intervals",
            format!(
                "name: forty\nworkloads:\n  sp2: {{trace: {}, first_jobs: 20000}}\nschedulers:\n  cons: {{policy: conservative}}\ngrid:\n  axes:\n    interval: [{}]\n",
                sp2.display(),
                forty.join(", ")
            ),
        ),
        (
            "B: EASY and conservative, all of SDSC-SP2 × 20 intervals",
            format!(
                "name: forty\nworkloads:\n  sp2: {{trace: {}}}\nschedulers:\n  easy: {{policy: easy}}\n  cons: {{policy: conservative}}\ngrid:\n  axes:\n    interval: [{}]\n",
                sp2.display(),
                twenty.join(", ")
            ),
        ),
    ];
    println!("\n## 40-cell grids, cold cache, median of 3\n");
    println!("| grid | 1 thread s | 2 threads s | speed-up |\n|---|---:|---:|---:|");
    for (name, text) in grids {
        std::fs::write(d.join("forty.yaml"), text).unwrap();
        let mut times = [Vec::new(), Vec::new()];
        let mut outputs = Vec::new();
        for rep in 0..3 {
            for (k, j) in ["1", "2"].iter().enumerate() {
                let results = format!("r-{rep}-{j}");
                let _ = std::fs::remove_dir_all(d.join(&results));
                times[k].push(schedlab(
                    d,
                    &[
                        "run",
                        "--quiet",
                        "-j",
                        j,
                        "--results",
                        &results,
                        "forty.yaml",
                    ],
                ));
                outputs.push(std::fs::read(d.join(&results).join("forty/jobs.parquet")).unwrap());
            }
        }
        assert!(
            outputs.windows(2).all(|w| w[0] == w[1]),
            "identical results for any thread count"
        );
        let (t1, t2) = (median(times[0].clone()), median(times[1].clone()));
        println!("| {name} | {t1:.2} | {t2:.2} | {:.2} |", t1 / t2);
    }
}
