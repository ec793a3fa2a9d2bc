//! `make bench`: simulation throughput of FCFS, EASY and conservative on the bundled traces,
//! node-level simulation on the MetaCentrum system (`workloads/mc-2013.swf.machines`: 20 clusters, 495
//! heterogeneous nodes) with METACENTRUM-2009 and wagap-2013 jobs, SWF parse throughput next to
//! `zcat FILE | wc -l`, and a whole `schedlab simulate` of SDSC-BLUE. (The deep-queue case,
//! conservative with 10,000 queued jobs, is in `benches/scale.rs` with the rest of issue 36's
//! scale series.) Each figure is the median
//! of several runs; each run checks its own answer (every feasible job simulated, identical
//! outcome on every repetition; on nodes, no node over-allocated in any component). Figures go
//! to stdout; BENCHMARKS.md's table records them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[path = "simulate/mc.rs"]
mod mc;

use schedlab::sim::{Machine, Overrun, SchedulerKind, SimConfig, simulate};
use schedlab::swf::{Mode, read_path};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed().as_secs_f64());
        last = Some(out);
    }
    (median(times), last.expect("at least one repetition"))
}

fn workloads() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads")
}

/// The shared traces not bundled in `workloads/` (when `../shared` is beside the checkout), with
/// the machine size of those whose header lacks MaxProcs (`../shared/workloads/README.md`).
fn shared_traces() -> Vec<(PathBuf, Option<u32>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/workloads");
    [
        ("CTC-SP2-1996-3.1-cln.swf.gz", None),
        ("HPC2N-2002-2.2-cln.swf.gz", None),
        ("METACENTRUM-2009-2.swf.gz", Some(806)),
        ("RICC-2010-2.swf.gz", Some(8192)),
    ]
    .into_iter()
    .map(|(name, procs)| (dir.join(name), procs))
    .filter(|(path, _)| path.is_file())
    .collect()
}

/// Repetitions: `reps`, but a run longer than 20 s is not repeated (its time is the median).
fn time_capped<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, usize, T) {
    let mut times = Vec::new();
    let mut last = None;
    while times.len() < reps {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed().as_secs_f64());
        if times[times.len() - 1] > 20.0 {
            break;
        }
    }
    let n = times.len();
    (median(times), n, last.expect("at least one repetition"))
}

fn main() {
    // `cargo bench` passes --bench; a filter argument selects traces by name.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let traces = [
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "SDSC-DS-2004-2.1-cln.swf.gz",
        "LPC-EGEE-2004-1.2-cln.swf.gz",
    ];
    println!("## Simulation only (one thread, median)\n");
    println!("| trace | jobs | scheduler | reps | median s | jobs/s |");
    println!("|---|---:|---|---:|---:|---:|");
    for name in traces
        .iter()
        .filter(|n| filter.as_ref().is_none_or(|f| n.contains(f.as_str())))
    {
        let trace = read_path(&workloads().join(name), Mode::Strict).expect("bundled trace reads");
        let procs = trace
            .header
            .max_procs
            .expect("bundled traces have MaxProcs");
        for kind in SchedulerKind::ALL {
            let config = SimConfig {
                order: Default::default(),
                machine: Machine::pool(procs),
                scheduler: kind,
                interval: None,
                overrun: Overrun::Kill,
                placement: Default::default(),
            };
            let reference = simulate(&trace.workload, &config).expect("simulates");
            assert_eq!(
                reference.jobs.len() + reference.skipped.len(),
                trace.workload.len()
            );
            let reps = if kind == SchedulerKind::Conservative {
                3
            } else {
                11
            };
            let (secs, out) = time(reps, || {
                simulate(&trace.workload, &config).expect("simulates")
            });
            assert_eq!(out, reference, "simulation is deterministic");
            let jobs = trace.workload.len();
            println!(
                "| {name} | {jobs} | {kind} | {reps} | {secs:.4} | {:.0} |",
                jobs as f64 / secs
            );
        }
    }

    mc::bench(filter.as_deref());

    if filter
        .as_ref()
        .is_none_or(|f| "LPC-EGEE limits".contains(f.as_str()))
    {
        limits_bench();
    }

    for (path, procs) in shared_traces().into_iter().filter(|(p, _)| {
        filter
            .as_ref()
            .is_none_or(|f| p.to_string_lossy().contains(f.as_str()))
    }) {
        let trace = read_path(&path, Mode::Lenient).expect("shared trace reads");
        let procs = procs
            .or(trace.header.max_procs)
            .expect("shared traces have a known size");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for kind in SchedulerKind::ALL {
            let config = SimConfig {
                order: Default::default(),
                machine: Machine::pool(procs),
                scheduler: kind,
                interval: None,
                overrun: Overrun::Kill,
                placement: Default::default(),
            };
            let reps = if kind == SchedulerKind::Conservative {
                3
            } else {
                5
            };
            let (secs, reps, out) = time_capped(reps, || {
                simulate(&trace.workload, &config).expect("simulates")
            });
            assert_eq!(out.jobs.len() + out.skipped.len(), trace.workload.len());
            let jobs = trace.workload.len();
            println!(
                "| {name} | {jobs} | {kind} | {reps} | {secs:.4} | {:.0} |",
                jobs as f64 / secs
            );
        }
    }

    println!("\n## SWF parsing (median of 5) vs `zcat FILE | wc -l`\n");
    println!(
        "| trace | lines | read_path s | jobs/s | MB/s (decompressed) | zcat \\| wc -l s | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for name in traces
        .iter()
        .filter(|n| filter.as_ref().is_none_or(|f| n.contains(f.as_str())))
    {
        let path = workloads().join(name);
        let (secs, trace) = time(5, || read_path(&path, Mode::Strict).expect("reads"));
        let (zsecs, bytes) = time(5, || {
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("zcat '{}' | wc -lc", path.display()))
                .output()
                .expect("zcat runs");
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            let fields: Vec<u64> = text
                .split_whitespace()
                .filter_map(|t| t.parse().ok())
                .collect();
            fields.get(1).copied().unwrap_or(0)
        });
        let lines = trace.records;
        println!(
            "| {name} | {lines} | {secs:.4} | {:.0} | {:.0} | {zsecs:.4} | {:.2} |",
            lines as f64 / secs,
            bytes as f64 / secs / 1e6,
            secs / zsecs
        );
    }

    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/schedlab");
    let blue = workloads().join("SDSC-BLUE-2000-4.2-cln.swf.gz");
    if exe.is_file()
        && filter
            .as_ref()
            .is_none_or(|f| "SDSC-BLUE".contains(f.as_str()))
    {
        println!("\n## Whole `schedlab simulate SDSC-BLUE --scheduler easy` (median of 5)\n");
        let gnu_time = Path::new("/usr/bin/time").is_file();
        let (secs, rss) = time(5, || {
            let mut cmd = if gnu_time {
                let mut c = Command::new("/usr/bin/time");
                c.args(["-f", "%M"]).arg(&exe);
                c
            } else {
                Command::new(&exe)
            };
            let out = cmd
                .arg("simulate")
                .arg(&blue)
                .args(["--scheduler", "easy", "--format", "json"])
                .output()
                .expect("runs");
            assert!(out.status.success(), "schedlab simulate failed");
            let summary: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("JSON summary");
            assert_eq!(summary["jobs"], 232_536);
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .parse::<u64>()
                .ok()
        });
        let rss = rss.map_or("n/a".to_string(), |kb| {
            format!("{:.0} MB", kb as f64 / 1024.0)
        });
        println!(
            "| command | median s | peak RSS |\n|---|---:|---:|\n| simulate SDSC-BLUE easy | {secs:.3} | {rss} |"
        );
    } else if !exe.is_file() {
        println!(
            "\n(build target/release/schedlab first for the whole-command figure: `make build`)"
        );
    }
}

/// EASY on LPC-EGEE (bundled) without and with Medernach's five queues (130 running jobs each,
/// routed by the log's queue field) plus 6 eligible jobs per user: what limits cost (issue 11).
fn limits_bench() {
    use schedlab::sim::limits::{AccountTable, Caps, Limits, Queue, Routing};
    use schedlab::sim::reservation::Reservations;
    use schedlab::sim::simulate_limited;
    let trace = read_path(
        &workloads().join("LPC-EGEE-2004-1.2-cln.swf.gz"),
        Mode::Lenient,
    )
    .expect("bundled LPC-EGEE reads");
    let config = SimConfig::new(Machine::pool(140), SchedulerKind::Easy);
    let queue = |name: &str, wall: i64| Queue {
        name: name.into(),
        max_walltime: Some(wall),
        caps: Caps {
            max_running: Some(130),
            ..Caps::default()
        },
        ..Queue::default()
    };
    let limits = Limits {
        queues: vec![
            queue("test", 900),
            queue("short", 5400),
            queue("long", 86_400),
            queue("day", 129_600),
            queue("infinite", 259_200),
        ],
        routing: Routing::SwfQueue {
            map: [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (6, 4)]
                .into_iter()
                .collect(),
            default: None,
        },
        users: AccountTable {
            default: Caps {
                max_queued: Some(6),
                ..Caps::default()
            },
            by_id: Default::default(),
        },
        ..Limits::default()
    };
    println!("\n## Queue limits (issue 11): EASY on LPC-EGEE, 140 processors (median)\n");
    println!("| run | jobs | reps | median s | jobs/s |");
    println!("|---|---:|---:|---:|---:|");
    let jobs = trace.workload.len();
    let (plain, _) = time(11, || {
        simulate(&trace.workload, &config).expect("simulates")
    });
    println!(
        "| EASY | {jobs} | 11 | {plain:.4} | {:.0} |",
        jobs as f64 / plain
    );
    let run = || {
        simulate_limited(&trace.workload, &config, &Reservations::default(), &limits)
            .expect("simulates")
    };
    let reference = run();
    let held = reference
        .limits
        .as_ref()
        .map_or(0, |l| l.held_by.iter().filter(|h| h.is_some()).count());
    assert!(held > 0, "the limits hold jobs back");
    let (limited, out) = time(11, run);
    assert_eq!(out, reference, "simulation is deterministic");
    println!(
        "| EASY + 5 queues × 130 running + 6 eligible per user | {jobs} | 11 | {limited:.4} | {:.0} |",
        jobs as f64 / limited
    );
    println!("\nratio limited / plain: {:.2}", limited / plain);
    // Shorter queues served first (Medernach): queue priority tiers over the submission order.
    let mut tiered = limits.clone();
    for (q, priority) in tiered.queues.iter_mut().zip([50, 40, 30, 20, 10]) {
        q.priority = priority;
    }
    let (with_tiers, _) = time(11, || {
        simulate_limited(&trace.workload, &config, &Reservations::default(), &tiered)
            .expect("simulates")
    });
    println!(
        "| the same + queue priority tiers (shorter queues first) | {jobs} | 11 | {with_tiers:.4} | {:.0} |",
        jobs as f64 / with_tiers
    );
    println!("ratio tiered / plain: {:.2}", with_tiers / plain);
}
