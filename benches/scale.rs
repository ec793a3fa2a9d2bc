//! `make bench`: the scale series of issue 36 — how the simulation's cost grows with the
//! machine's nodes, with an overloaded queue and with a deep queue. Each figure is a ratio of two
//! medians measured in this one run (one process, side by side), so the machine's load cancels
//! out as far as it can; each cell prints its median wall time, its median CPU time (the
//! thread's own, which does not count time spent waiting for a core) and its peak heap (bytes
//! allocated at once, counted by this bench's allocator, above what was held before the run).
//!
//! 1. **A Curie-shaped window on its topology at 500, 5,000 and 50,000 nodes.** CEA Curie (the
//!    machine of the measurement: 5,040 thin nodes of 16 cores and 64 GiB, 360 fat
//!    nodes of 32 cores and 128 GiB) in that proportion at three sizes, with the same jobs at
//!    every size: FCFS, EASY and conservative, node-level, over submission and fairshare order,
//!    and pool EASY (and pool conservative) on the same jobs and cores as the yardsticks. The Curie log itself is not on
//!    this machine (not in `../shared`, no network), so the jobs are a seeded synthetic stream
//!    of Curie's shape ([`curie_jobs`]); no data is read, the series always runs.
//! 2. **EASY and conservative under sustained overload**: HPC2N's first 50,000 / 100,000 /
//!    200,000 jobs at three times the load (`load_scale: 3`, the product's transform) on its 240
//!    processors. HPC2N is read from `../shared/workloads` (or `$SCHEDLAB_SHARED`); without
//!    it these rows are skipped with a note, as `benches/simulate.rs` does.
//! 3. **Conservative with 2,500 / 5,000 / 10,000 queued jobs** (the overload case of
//!    BENCHMARKS.md: one job holds the machine while the others queue behind it), EASY beside.
//!    `BENCH_SCALE_QUEUED=1250,2500` (a comma-separated list of queue lengths, in increasing
//!    order) runs those instead: the 10,000-job cell alone takes minutes.
//!
//! Slow cells are capped, each with its reason printed: a cell whose first run takes more than
//! 5 s is not repeated, and conservative under sustained overload is run only with
//! `BENCH_SCALE_SLOW=1` (minutes per cell). `BENCH_SCALE_JOBS` (default 2,000) sets the Curie
//! window's length in jobs; a filter argument (`curie`, `overload`, `queued`) runs one series.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use schedlab::sim::scheduler::order::{OrderKind, OrderSpec};
use schedlab::sim::topology::{Cluster, JobRequest, NodeClass, Topology};
use schedlab::sim::transform::Transforms;
use schedlab::sim::{
    Allocation, Job, Machine, SchedulerKind, SimConfig, SimOutcome, TopologyMachine, Workload,
    simulate, simulate_with,
};
use schedlab::swf::{Mode, read_path};

#[path = "../tests/common/easy_reference.rs"]
#[allow(dead_code)]
mod easy_reference;

/// Counts the bytes allocated at once and their high-water mark since the last reset.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let now = CURRENT.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The calling thread's CPU time in seconds, where Linux gives it.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// One cell's figures: medians of wall and CPU seconds, the runs made, the peak heap.
#[derive(Clone, Copy, Debug)]
struct Cell {
    secs: f64,
    cpu: Option<f64>,
    reps: usize,
    peak_mb: f64,
}

impl Cell {
    /// What ratios are taken on: CPU time where the system gives it (on the shared machine
    /// the wall clock also measures the other processes), else wall time.
    fn cost(&self) -> f64 {
        self.cpu.unwrap_or(self.secs)
    }
}

/// Runs `f` in `reps` rounds (one only when the first run takes over 5 s), checking every run
/// gives the first run's outcome. A round repeats a short run until it lasts ~0.1 s, and its
/// time is divided by the runs: the thread's CPU clock ticks too coarsely to time a
/// millisecond run alone.
fn measure(reps: usize, mut f: impl FnMut() -> SimOutcome) -> (Cell, SimOutcome) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let (t, c) = (Instant::now(), cpu_seconds());
    let first = f();
    let once = t.elapsed().as_secs_f64();
    let once_cpu = c.zip(cpu_seconds()).map(|(c, now)| now - c);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let inner = ((0.1 / once.max(1e-6)).ceil() as usize).clamp(1, 1000);
    let (mut times, mut cpus) = (Vec::new(), Vec::new());
    if once > 5.0 {
        times.push(once);
        cpus.extend(once_cpu);
    } else {
        for _ in 0..reps {
            let (t, c) = (Instant::now(), cpu_seconds());
            for _ in 0..inner {
                let out = f();
                assert!(out == first, "simulation is deterministic");
            }
            times.push(t.elapsed().as_secs_f64() / inner as f64);
            if let (Some(c), Some(now)) = (c, cpu_seconds()) {
                cpus.push((now - c) / inner as f64);
            }
        }
    }
    let cell = Cell {
        reps: times.len(),
        secs: median(times),
        cpu: (!cpus.is_empty()).then(|| median(cpus)),
        peak_mb: peak as f64 / 1e6,
    };
    (cell, first)
}

/// Whether to run the cells `make bench` leaves out for their cost (`BENCH_SCALE_SLOW=1`).
fn slow() -> bool {
    std::env::var_os("BENCH_SCALE_SLOW").is_some_and(|v| v == "1")
}

fn row(label: &str, jobs: usize, cell: &Cell) {
    println!(
        "| {label} | {jobs} | {} | {:.4} | {} | {:.0} | {:.1} |",
        cell.reps,
        cell.secs,
        cell.cpu.map_or("–".into(), |c| format!("{c:.4}")),
        jobs as f64 / cell.cost(),
        cell.peak_mb
    );
}

const HEADER: &str = "| case | jobs | reps | median s | median CPU s | jobs per CPU s | peak heap MB |\n|---|---:|---:|---:|---:|---:|---:|";

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if wants("curie") {
        curie_series();
    }
    if wants("overload") {
        overload_series();
    }
    if wants("queued") {
        queued_series();
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Curie

/// Curie's thin and fat nodes in Curie's proportion (5,040 : 360 = 14 : 1), `nodes` in all.
fn curie_topology(nodes: u32) -> Topology {
    let fat = nodes / 15;
    let thin = nodes - fat;
    const GIB: u64 = 1024 * 1024;
    let topology = Topology::new(vec![Cluster::new(
        "curie",
        Allocation::Shared,
        vec![
            NodeClass::new("thin", thin, 16, 64 * GIB),
            NodeClass::new("fat", fat, 32, 128 * GIB),
        ],
    )]);
    topology.validate().expect("a valid topology");
    topology
}

/// SplitMix64: a fixed, portable sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-uniform in [lo, hi].
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
}

/// `n` jobs of Curie's shape, seeded: Curie's log (29,520 jobs in the 60-day window, 492
/// a day) arrives every 176 s on average (exponential interarrivals); a third of the jobs fit in
/// one thin node (1–16 cores), the rest ask for a power of two of cores from 32 to 16,384
/// (log-uniform); runtimes are log-uniform over 1 min – 12 h, requested times 1–3× the runtime
/// rounded up to the hour, capped at 24 h; memory per core 0, 1 or 3.5 GiB; 200 users. At 5,000
/// nodes this offers a load near 1 (printed below); at 500 nodes the same jobs overload the
/// machine (and those wider than it are skipped), at 50,000 the machine is mostly idle.
fn curie_jobs(n: usize) -> Workload {
    let mut rng = Rng(0x0C0E_C0E1);
    let mut submit = 0.0f64;
    let jobs = (0..n).map(|i| {
        submit += -176.0 * (1.0 - rng.unit()).ln();
        let procs = if rng.unit() < 1.0 / 3.0 {
            1 + (rng.next() % 16) as u32
        } else {
            1u32 << (5 + (rng.next() % 10) as u32)
        };
        let runtime = rng.log_uniform(60.0, 43_200.0).round() as i64;
        let requested = ((runtime as f64 * (1.0 + 2.0 * rng.unit()) / 3600.0).ceil() as i64 * 3600)
            .min(86_400)
            .max(runtime.min(86_400));
        let memory_kb = [0, 1024 * 1024, 3584 * 1024][(rng.next() % 3) as usize];
        let job = Job {
            id: i as u64 + 1,
            submit: submit as i64,
            runtime,
            requested_time: requested,
            procs,
            user: (rng.next() % 200) as i32,
            ..Job::default()
        };
        (
            job,
            JobRequest {
                memory_kb,
                ..JobRequest::default()
            },
        )
    });
    Workload::of_requests(jobs.collect::<Vec<_>>(), Default::default())
}

fn curie_series() {
    let n: usize = std::env::var("BENCH_SCALE_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let w = curie_jobs(n);
    let span = (w.jobs.last().unwrap().submit - w.jobs[0].submit).max(1) as f64;
    let work: f64 = w
        .jobs
        .iter()
        .map(|j| f64::from(j.procs) * j.runtime as f64)
        .sum();
    println!(
        "## 1. A Curie-shaped window ({n} jobs over {:.1} days) on Curie's topology at 500 / 5,000 / 50,000 nodes\n",
        span / 86_400.0
    );
    let sizes = [500u32, 5_000, 50_000];
    // For profiling one cell: `BENCH_SCHEDULER=easy` (a comma-separated list of rules) and
    // `BENCH_SCALE_NODES=5000` (of the sizes) run only those.
    let only = std::env::var("BENCH_SCHEDULER").ok();
    let only_nodes = std::env::var("BENCH_SCALE_NODES").ok();
    let run_kind = |k: SchedulerKind| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|s| s == k.name()))
    };
    let run_size = |n: u32| {
        only_nodes
            .as_deref()
            .is_none_or(|o| o.split(',').any(|s| s == n.to_string()))
    };
    for &nodes in &sizes {
        let cores = f64::from(curie_topology(nodes).cores() as u32);
        println!(
            "- {nodes} nodes ({} thin + {} fat, {cores:.0} cores): offered load {:.2}",
            nodes - nodes / 15,
            nodes / 15,
            work / (cores * span)
        );
    }
    println!();
    println!("{HEADER}");
    let orders = [OrderKind::Fcfs, OrderKind::Fairshare];
    let kinds = [
        SchedulerKind::Fcfs,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
    ];
    // cells[(size, order, kind)]; pool EASY in pool[(size, order)], pool conservative in
    // pool_conservative[(size, order)].
    let mut cells = std::collections::HashMap::new();
    let mut pool = std::collections::HashMap::new();
    let mut pool_conservative = std::collections::HashMap::new();
    for (si, &nodes) in sizes.iter().enumerate() {
        if !run_size(nodes) {
            continue;
        }
        let topology = curie_topology(nodes);
        let machine = Machine::Topology(TopologyMachine::new(topology.clone()));
        for order in orders {
            let mut config =
                SimConfig::new(Machine::pool(topology.cores() as u32), SchedulerKind::Easy);
            config.order = OrderSpec::of(order);
            let (cell, out) = measure(5, || simulate(&w, &config).expect("simulates"));
            assert_eq!(out.jobs.len() + out.skipped.len(), w.len());
            row(
                &format!("{nodes} nodes, pool EASY, {order} order"),
                w.len(),
                &cell,
            );
            pool.insert((si, order), cell);
            // Pool conservative on the same jobs and cores: what conservative backfilling
            // itself costs on this window, whatever the nodes (the yardstick of the
            // node-level conservative ÷ EASY goal).
            if run_kind(SchedulerKind::Conservative) {
                config.scheduler = SchedulerKind::Conservative;
                let (cell, out) = measure(3, || simulate(&w, &config).expect("simulates"));
                assert_eq!(out.jobs.len() + out.skipped.len(), w.len());
                row(
                    &format!("{nodes} nodes, pool conservative, {order} order"),
                    w.len(),
                    &cell,
                );
                pool_conservative.insert((si, order), cell);
            }
            for kind in kinds.into_iter().filter(|&k| run_kind(k)) {
                let mut config = SimConfig::new(machine.clone(), kind);
                config.order = OrderSpec::of(order);
                let reps = if kind == SchedulerKind::Conservative {
                    3
                } else {
                    5
                };
                let (cell, out) = measure(reps, || simulate(&w, &config).expect("simulates"));
                assert_eq!(out.jobs.len() + out.skipped.len(), w.len());
                row(
                    &format!("{nodes} nodes, node-level {kind}, {order} order"),
                    w.len(),
                    &cell,
                );
                cells.insert((si, order, kind), cell);
            }
        }
    }
    println!("\nRatios (CPU time):\n");
    println!("| ratio | 500 nodes | 5,000 nodes | 50,000 nodes |\n|---|---:|---:|---:|");
    // One table row: the label, then the ratio at each size ("–" where a cell did not run).
    let ratio_row = |label: String, ratio: &dyn Fn(usize) -> Option<f64>| {
        let values: Vec<String> = (0..sizes.len())
            .map(|s| ratio(s).map_or("–".to_string(), |v| format!("{v:.2}")))
            .collect();
        println!("| {label} | {} |", values.join(" | "));
    };
    for order in orders {
        ratio_row(
            format!("node-level EASY ÷ pool EASY, {order} order"),
            &|s| {
                Some(
                    cells.get(&(s, order, SchedulerKind::Easy))?.cost()
                        / pool.get(&(s, order))?.cost(),
                )
            },
        );
        ratio_row(
            format!("node-level conservative ÷ EASY, {order} order"),
            &|s| {
                Some(
                    cells.get(&(s, order, SchedulerKind::Conservative))?.cost()
                        / cells.get(&(s, order, SchedulerKind::Easy))?.cost(),
                )
            },
        );
        ratio_row(
            format!("pool conservative ÷ pool EASY, {order} order"),
            &|s| Some(pool_conservative.get(&(s, order))?.cost() / pool.get(&(s, order))?.cost()),
        );
        ratio_row(
            format!("node-level conservative ÷ pool conservative, {order} order"),
            &|s| {
                Some(
                    cells.get(&(s, order, SchedulerKind::Conservative))?.cost()
                        / pool_conservative.get(&(s, order))?.cost(),
                )
            },
        );
    }
    for kind in kinds {
        ratio_row(
            format!("fairshare ÷ fcfs order, node-level {kind}"),
            &|s| {
                Some(
                    cells.get(&(s, OrderKind::Fairshare, kind))?.cost()
                        / cells.get(&(s, OrderKind::Fcfs, kind))?.cost(),
                )
            },
        );
    }
    let fmt = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
    println!("\n| ratio | fcfs order | fairshare order |\n|---|---:|---:|");
    for kind in kinds {
        let r: Vec<_> = orders
            .iter()
            .map(|&o| Some(cells.get(&(2, o, kind))?.cost() / cells.get(&(1, o, kind))?.cost()))
            .collect();
        println!(
            "| 50,000 ÷ 5,000 nodes, node-level {kind} | {} | {} |",
            fmt(r[0]),
            fmt(r[1])
        );
    }
    for (si, &nodes) in sizes.iter().enumerate() {
        if let Some(e) = cells.get(&(si, OrderKind::Fcfs, SchedulerKind::Easy)) {
            println!(
                "\nnode-level EASY at {nodes} nodes, fcfs order: {:.0} jobs per CPU s",
                w.len() as f64 / e.cost()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Overload

fn shared_workloads() -> PathBuf {
    std::env::var_os("SCHEDLAB_SHARED")
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
            PathBuf::from,
        )
        .join("workloads")
}

fn overload_series() {
    let path = shared_workloads().join("HPC2N-2002-2.2-cln.swf.gz");
    println!(
        "\n## 2. Sustained overload: HPC2N (240 processors) at 3× its load, first 50,000 / 100,000 / 200,000 jobs\n"
    );
    if !path.is_file() {
        println!(
            "({} not found: the overload series is skipped)",
            path.display()
        );
        return;
    }
    let trace = read_path(&path, Mode::Lenient).expect("HPC2N reads");
    let procs = trace.header.max_procs.expect("HPC2N has MaxProcs") as u32;
    println!("{HEADER}");
    let sizes = [50_000usize, 100_000, 200_000];
    let mut cost = std::collections::HashMap::new();
    let kinds: &[SchedulerKind] = if slow() {
        &[SchedulerKind::Easy, SchedulerKind::Conservative]
    } else {
        &[SchedulerKind::Easy]
    };
    for &kind in kinds {
        for &n in &sizes {
            let w = Transforms {
                first_jobs: Some(n),
                load_scale: Some(3.0),
                ..Transforms::default()
            }
            .apply(&trace.workload);
            let config = SimConfig::new(Machine::pool(procs), kind);
            let reps = if kind == SchedulerKind::Conservative {
                3
            } else {
                5
            };
            let (cell, out) = measure(reps, || simulate(&w, &config).expect("simulates"));
            assert_eq!(out.jobs.len() + out.skipped.len(), w.len());
            let max_queue = out
                .invocations
                .iter()
                .map(|i| i.queue_len)
                .max()
                .unwrap_or(0);
            row(
                &format!("{kind}, {n} jobs (queue up to {max_queue})"),
                w.len(),
                &cell,
            );
            cost.insert((kind, n), cell.cost());
        }
    }
    // The rule before its index (issue 36), kept in the tests as their reference, at the two
    // smaller sizes (at 200,000 jobs one run takes ~25 s): the ratio says what the index saves.
    let mut reference = Vec::new();
    for &n in &sizes[..2] {
        let w = Transforms {
            first_jobs: Some(n),
            load_scale: Some(3.0),
            ..Transforms::default()
        }
        .apply(&trace.workload);
        let config = SimConfig::new(Machine::pool(procs), SchedulerKind::Easy);
        let (cell, out) = measure(3, || {
            simulate_with(
                &w,
                &config,
                Box::new(easy_reference::ReferenceEasy::default()),
            )
            .expect("simulates")
        });
        assert_eq!(
            out,
            simulate(&w, &config).expect("simulates"),
            "the index decides as the walk"
        );
        row(
            &format!("easy without its index (the tests' reference), {n} jobs"),
            w.len(),
            &cell,
        );
        if let Some(indexed) = cost.get(&(SchedulerKind::Easy, n)) {
            println!(
                "| (without ÷ with the index, {n} jobs: {:.1}) | | | | | | |",
                cell.cost() / indexed
            );
        }
        reference.push(cell.cost());
    }
    if !slow() {
        println!(
            "\nConservative is left out here (`BENCH_SCALE_SLOW=1` runs it): its queue holds thousands of jobs for most of the run (5,500 on average at 50,000 jobs), and at 50,000 jobs one run took over 150 s (74 CPU s) without finishing on 2026-11-29; series 3 measures its growth with the queue."
        );
    }
    println!("\n| ratio (CPU time) | 100 k ÷ 50 k | 200 k ÷ 100 k |\n|---|---:|---:|");
    for kind in [SchedulerKind::Easy, SchedulerKind::Conservative] {
        let r = |a: usize, b: usize| {
            let ratio = cost.get(&(kind, a)).zip(cost.get(&(kind, b)));
            ratio.map_or("–".to_string(), |(x, y)| format!("{:.2}", x / y))
        };
        println!(
            "| {kind} | {} | {} |",
            r(100_000, 50_000),
            r(200_000, 100_000)
        );
    }
    println!(
        "| easy without its index (the tests' reference) | {:.2} | – |",
        reference[1] / reference[0]
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Deep queue

/// The deep-queue workload: a 1,024-processor machine held whole by one job that asks for 10⁶ s
/// and ends at 100 s, while `queued` long jobs (1–512 processors, 1–24 h requested, half of it
/// used) arrive at 1 s and queue behind it. SWF, so that any build's `schedlab simulate` can run
/// it (BENCHMARKS.md, "Reproduce"); the 10,000-job file is written to `target/bench/overload.swf`.
pub fn overload_swf(queued: u64) -> String {
    let mut out = String::from("; MaxProcs: 1024\n");
    let line = |id: u64, submit: i64, run: i64, procs: u64, req: i64| {
        format!("{id} {submit} -1 {run} {procs} -1 -1 {procs} {req} -1 1 1 1 -1 1 -1 -1 -1\n")
    };
    out.push_str(&line(1, 0, 100, 1024, 1_000_000));
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for id in 2..=queued + 1 {
        let z = rng.next();
        let procs = 1 + (z % 512);
        let req = 3600 * (1 + ((z >> 16) % 24) as i64);
        out.push_str(&line(id, 1, req / 2, procs, req));
    }
    out
}

/// The queue lengths of series 3: `BENCH_SCALE_QUEUED` if set, else 2,500 / 5,000 / 10,000.
fn queue_lengths() -> Vec<u64> {
    std::env::var("BENCH_SCALE_QUEUED")
        .ok()
        .map(|v| {
            v.split(',')
                .map(|n| n.trim().parse().expect("BENCH_SCALE_QUEUED: queue lengths"))
                .collect()
        })
        .unwrap_or_else(|| vec![2_500, 5_000, 10_000])
}

fn queued_series() {
    let lengths = queue_lengths();
    let listed: Vec<String> = lengths.iter().map(u64::to_string).collect();
    println!(
        "\n## 3. Conservative with {} queued jobs (1,024 processors)\n",
        listed.join(" / ")
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&dir).expect("target/bench");
    println!("{HEADER}");
    let mut cost = Vec::new();
    for &queued in &lengths {
        let path = dir.join(format!("overload-{queued}.swf"));
        std::fs::write(&path, overload_swf(queued)).expect("writes the overload trace");
        if queued == 10_000 {
            std::fs::copy(&path, dir.join("overload.swf")).expect("copies the overload trace");
        }
        let trace = read_path(&path, Mode::Strict).expect("overload trace reads");
        for kind in [SchedulerKind::Easy, SchedulerKind::Conservative] {
            let config = SimConfig::new(Machine::pool(1024), kind);
            let reps = if kind == SchedulerKind::Conservative {
                3
            } else {
                5
            };
            let (cell, out) = measure(reps, || {
                simulate(&trace.workload, &config).expect("simulates")
            });
            assert_eq!(out.jobs.len() as u64, queued + 1);
            let max_queue = out
                .invocations
                .iter()
                .map(|i| i.queue_len)
                .max()
                .unwrap_or(0);
            assert_eq!(
                u64::from(max_queue),
                queued,
                "every long job queues behind the first"
            );
            row(&format!("{kind}, {queued} queued"), out.jobs.len(), &cell);
            if kind == SchedulerKind::Conservative {
                cost.push(cell.cost());
            }
        }
    }
    let ratios: Vec<String> = lengths
        .windows(2)
        .zip(cost.windows(2))
        .map(|(n, c)| format!("{} ÷ {} = {:.2}", n[1], n[0], c[1] / c[0]))
        .collect();
    println!(
        "\nconservative as the queue grows (CPU time): {}",
        ratios.join(", ")
    );
    if lengths.contains(&10_000) {
        println!(
            "(the 10,000-job trace is in {}; run any build on it with `schedlab simulate`)",
            dir.join("overload.swf").display()
        );
    }
}
