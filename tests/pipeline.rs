//! The experiment pipeline as a user drives it: `schedlab run`/`plan`/`gc` on a manifest in a
//! temporary project, asserting on the executor's event log (which nodes ran, which hit the
//! cache), resumption after a crash, failure isolation and the lock.

use std::collections::BTreeMap;
use std::fs;
use std::process::{Command, Stdio};

mod common;

use common::project::Project;

fn grid(intervals: &str) -> String {
    format!(
        "name: grid
workloads:
  kth:
    trace: ../workloads/kth.swf.gz
    first_jobs: 3000
clusters:
  pool: {{procs: 100}}
schedulers:
  fcfs: {{policy: fcfs}}
  easy: {{policy: easy}}
grid:
  axes:
    scheduler: [fcfs, easy]
    interval: {intervals}
"
    )
}

fn outcomes(events: &BTreeMap<String, String>, outcome: &str) -> Vec<String> {
    events
        .iter()
        .filter(|(_, o)| o.as_str() == outcome)
        .map(|(l, _)| l.clone())
        .collect()
}

#[test]
fn second_run_is_all_hits_and_thread_count_changes_nothing() {
    let p = Project::new();
    p.manifest("grid", &grid("[null, 900]"));
    let (out, first) = p.run(&["-j", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        first.len(),
        9,
        "4 cells (simulate and metrics) + 1 aggregate: {first:?}"
    );
    assert!(first.values().all(|o| o == "ran"), "{first:?}");
    let results = p.published("grid");
    let (_, second) = p.run(&["-j", "1"]);
    assert!(
        second.values().all(|o| o == "hit"),
        "a different -j re-runs nothing: {second:?}"
    );
    assert_eq!(p.published("grid"), results);
}

#[test]
fn one_changed_value_reruns_exactly_the_affected_cells() {
    let p = Project::new();
    p.manifest("grid", &grid("[null, 900]"));
    assert!(p.run(&[]).0.status.success());
    p.manifest("grid", &grid("[null, 600]"));
    let plan = p.schedlab(&["plan"]);
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(
        text.contains("cached") && text.contains("grid/fcfs.interval-600  (new)"),
        "{text}"
    );
    let (out, events) = p.run(&[]);
    assert!(out.status.success());
    assert_eq!(
        outcomes(&events, "ran"),
        vec![
            "grid",
            "grid/easy.interval-600",
            "grid/easy.interval-600/metrics",
            "grid/fcfs.interval-600",
            "grid/fcfs.interval-600/metrics"
        ],
        "{events:?}"
    );
    assert_eq!(
        outcomes(&events, "hit"),
        vec![
            "grid/easy.interval-event",
            "grid/easy.interval-event/metrics",
            "grid/fcfs.interval-event",
            "grid/fcfs.interval-event/metrics"
        ]
    );
}

#[test]
fn plan_explains_why_a_node_reruns() {
    let p = Project::new();
    p.manifest(
        "one",
        "workloads:\n  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 500}\nschedulers:\n  s: {policy: easy, interval: 60}\n",
    );
    assert!(p.run(&[]).0.status.success());
    p.manifest(
        "one",
        "workloads:\n  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 500}\nschedulers:\n  s: {policy: easy, interval: 120}\n",
    );
    let text = String::from_utf8_lossy(&p.schedlab(&["plan"]).stdout).to_string();
    assert!(
        text.contains("parameter changed: scheduler.interval (60 → 120)"),
        "{text}"
    );
    let explain = p.schedlab(&["plan", "--explain", "one/kth"]);
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(
        text.contains("\"model_version\"") && text.contains("\"blake3\""),
        "{text}"
    );
    assert!(
        !text.contains("kth.swf.gz"),
        "paths never enter a key: {text}"
    );
    // Renaming the scheduler changes no key: the results are reused.
    p.manifest(
        "one",
        "workloads:\n  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 500}\nschedulers:\n  renamed: {policy: easy, interval: 60}\n",
    );
    let (_, events) = p.run(&[]);
    assert_eq!(events["one/kth"], "hit", "{events:?}");
}

#[test]
fn a_crash_mid_run_resumes_with_identical_results() {
    let reference = Project::new();
    reference.manifest("grid", &grid("[null, 900, 3600]"));
    assert!(reference.run(&["-j", "2"]).0.status.success());

    let p = Project::new();
    p.manifest("grid", &grid("[null, 900, 3600]"));
    // The failpoint aborts the process (like kill -9) once 3 entries are committed.
    let crashed = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(p.path())
        .args(["run", "--quiet", "-j", "1"])
        .env("SCHEDLAB_FAILPOINT_ABORT_AFTER", "3")
        .output()
        .unwrap();
    assert!(!crashed.status.success(), "the failpoint aborts the run");
    assert!(!p.path().join("results/grid/summary.parquet").exists());
    let (out, events) = p.run(&["-j", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(outcomes(&events, "hit").len(), 3, "{events:?}");
    assert_eq!(outcomes(&events, "ran").len(), 10, "{events:?}");
    assert_eq!(
        p.published("grid"),
        reference.published("grid"),
        "resumed results equal an uninterrupted run"
    );
}

#[test]
fn sigkill_at_any_moment_then_rerun_completes() {
    let reference = Project::new();
    let text = grid("[null, 60, 120, 300, 600, 900, 1800, 3600]");
    reference.manifest("grid", &text);
    assert!(reference.run(&[]).0.status.success());

    let p = Project::new();
    p.manifest("grid", &text);
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(p.path())
        .args(["run", "--quiet", "-j", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill as soon as the first entry is in place (or the run ends first on a fast machine).
    let entries = p.path().join("results/.schedlab/entries");
    let start = std::time::Instant::now();
    while start.elapsed().as_secs() < 60 {
        let any = fs::read_dir(&entries)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false);
        if any || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill(); // SIGKILL on Unix
    let _ = child.wait();
    let (out, events) = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(events.values().all(|o| o == "ran" || o == "hit"));
    assert_eq!(p.published("grid"), reference.published("grid"));
    // Nothing half-written is left behind.
    let tmp = p.path().join("results/.schedlab/tmp");
    assert!(fs::read_dir(&tmp).map(|d| d.count()).unwrap_or(0) == 0);
}

#[test]
fn a_failing_node_does_not_stop_the_others_and_only_it_is_retried() {
    let p = Project::new();
    // A trace with a malformed job line (found only when the cell reads it; `plan` reads the
    // header alone, and since issue 37 refuses a trace without MaxProcs itself): that cell
    // fails.
    fs::write(
        p.path().join("workloads/nomax.swf"),
        "; MaxProcs: 4\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n2 x\n",
    )
    .unwrap();
    p.manifest(
        "mixed",
        "workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 500}
  nomax: {trace: ../workloads/nomax.swf}
schedulers:
  easy: {policy: easy}
",
    );
    let (out, events) = p.run(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(events["mixed/kth"], "ran");
    assert_eq!(events["mixed/nomax"], "failed");
    assert_eq!(events["mixed/nomax/metrics"], "blocked");
    assert_eq!(events["mixed"], "blocked");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nomax.swf:3: expected 18 fields"), "{err}");
    let (_, again) = p.run(&[]);
    assert_eq!(again["mixed/kth"], "hit");
    assert_eq!(
        again["mixed/nomax"], "failed",
        "failed nodes are never cached"
    );
}

#[test]
fn two_concurrent_runs_do_not_corrupt_results() {
    let p = Project::new();
    p.manifest("grid", &grid("[null, 900]"));
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .current_dir(p.path())
            .args(["run", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(
        a.status.success() && b.status.success(),
        "{}{}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    let (_, events) = p.run(&[]);
    assert!(events.values().all(|o| o == "hit"), "{events:?}");
    let reference = Project::new();
    reference.manifest("grid", &grid("[null, 900]"));
    assert!(reference.run(&[]).0.status.success());
    assert_eq!(p.published("grid"), reference.published("grid"));
}

#[test]
fn gc_removes_what_no_manifest_reaches() {
    let p = Project::new();
    p.manifest("grid", &grid("[null, 900]"));
    assert!(p.run(&[]).0.status.success());
    p.manifest("grid", &grid("[null]"));
    let dry = p.schedlab(&["gc", "--dry-run"]);
    let listed = String::from_utf8_lossy(&dry.stdout)
        .lines()
        .filter(|l| l.starts_with("would remove"))
        .count();
    assert_eq!(
        listed, 5,
        "two 900 s cells (schedule and metrics) and the old aggregate"
    );
    // The count of what stays is of entries present (4: two cells' schedule and metrics), not
    // of the plan's nodes (5 with the new aggregate, which has no entry yet).
    let summary = String::from_utf8_lossy(&dry.stderr).into_owned();
    assert!(summary.contains("5 entries to remove; 4 kept"), "{summary}");
    let gc = p.schedlab(&["gc"]);
    assert!(gc.status.success());
    let summary = String::from_utf8_lossy(&gc.stderr).into_owned();
    assert!(summary.contains("5 entries removed; 4 kept"), "{summary}");
    let (_, events) = p.run(&[]);
    assert_eq!(outcomes(&events, "hit").len(), 4, "{events:?}");
    assert_eq!(
        outcomes(&events, "ran"),
        vec!["grid"],
        "only the new aggregate runs"
    );
}

/// A manifest with a τ axis and the given `metrics` section body.
fn tau_grid(metrics: &str) -> String {
    format!(
        "name: taus
workloads:
  kth: {{trace: ../workloads/kth.swf.gz, first_jobs: 2000}}
clusters:
  pool: {{procs: 100}}
schedulers:
  easy: {{policy: easy}}
metrics: {metrics}
grid:
  axes:
    tau: [10, 600]
"
    )
}

/// The expected capacity (`metrics.expected_capacity`, Tóth & Klusáček §4) is a metric
/// setting like τ: a `capacity_scale` axis of three values plans one simulate node read by three
/// metrics nodes, runs one simulation, and the three cells judge the same schedule differently.
#[test]
fn capacity_scale_axis_reuses_one_schedule() {
    let p = Project::new();
    p.manifest(
        "caps",
        "name: caps
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 2000}
clusters:
  pool: {procs: 100}
schedulers:
  easy: {policy: easy}
metrics:
  expected_capacity: {split: equal}
grid:
  axes:
    capacity_scale: [0.5, 1, 2]
",
    );
    let (out, events) = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ran = outcomes(&events, "ran");
    let metrics: Vec<&String> = ran.iter().filter(|l| l.ends_with("/metrics")).collect();
    let simulations: Vec<&String> = ran
        .iter()
        .filter(|l| l.contains('/') && !l.ends_with("/metrics"))
        .collect();
    assert_eq!(metrics.len(), 3, "a metrics node per scale: {events:?}");
    assert_eq!(
        simulations.len(),
        1,
        "one schedule for the three scales: {events:?}"
    );
    assert_eq!(
        events.len(),
        5,
        "3 metrics + 1 simulate + 1 aggregate: {events:?}"
    );
    // The same schedule judged against three expectations: equal waits, different EET verdicts.
    use arrow_array::{Array, Float64Array, Int64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let file = fs::File::open(p.path().join("results/caps/summary.parquet")).unwrap();
    let mut reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batch = reader.next().unwrap().unwrap();
    let column = |name: &str| batch.column_by_name(name).unwrap().clone();
    let scale = column("capacity_scale");
    let scale = scale.as_any().downcast_ref::<Float64Array>().unwrap();
    let wait = column("wait_mean");
    let wait = wait.as_any().downcast_ref::<Float64Array>().unwrap();
    let violated = column("eet_violated_jobs");
    let violated = violated.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(batch.num_rows(), 3);
    assert_eq!(
        (0..3).map(|i| scale.value(i)).collect::<Vec<_>>(),
        vec![0.5, 1.0, 2.0]
    );
    assert!(
        (0..3).all(|i| wait.value(i) == wait.value(0)),
        "one schedule"
    );
    let verdicts: Vec<i64> = (0..3).map(|i| violated.value(i)).collect();
    assert!(
        verdicts[0] != verdicts[1] && verdicts[1] != verdicts[2],
        "each scale judges differently: {verdicts:?}"
    );
    assert_eq!(violated.null_count(), 0);
}

/// Issue 16, "metrics without re-simulation": τ, warm-up and the time-series step are metric
/// settings — a τ axis simulates once, and changing a metric setting re-runs only metrics nodes,
/// with the reason in `plan`, giving the results a cold run gives.
#[test]
fn metrics_without_re_simulation() {
    let p = Project::new();
    p.manifest("taus", &tau_grid("{warmup: {jobs: 100}}"));
    let (out, events) = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Two cells, one schedule: one simulate node, a metrics node per τ.
    assert_eq!(
        outcomes(&events, "ran"),
        vec![
            "taus",
            "taus/tau-10",
            "taus/tau-10/metrics",
            "taus/tau-600/metrics"
        ],
        "{events:?}"
    );

    // A changed warm-up and step: the schedule is cached, the metrics re-run, and plan says why.
    p.manifest(
        "taus",
        &tau_grid("{warmup: {jobs: 200}, timeseries_step: 600}"),
    );
    let plan = String::from_utf8_lossy(&p.schedlab(&["plan"]).stdout).to_string();
    let line = |label: &str| {
        plan.lines()
            .find(|l| l.ends_with(label) || l.contains(&format!("{label}  (")))
            .unwrap_or_else(|| panic!("no line for {label} in:\n{plan}"))
            .to_string()
    };
    assert!(line("taus/tau-10").starts_with("cached"), "{plan}");
    let metrics = line("taus/tau-600/metrics");
    assert!(
        metrics.starts_with("run")
            && metrics.contains("parameter changed: metrics.warmup.jobs (100 → 200)")
            && metrics.contains("parameter changed: metrics.timeseries_step (3600 → 600)"),
        "{plan}"
    );
    let (out, events) = p.run(&["-j", "2"]);
    assert!(out.status.success());
    assert_eq!(events["taus/tau-10"], "hit", "{events:?}");
    assert_eq!(
        outcomes(&events, "ran"),
        vec!["taus", "taus/tau-10/metrics", "taus/tau-600/metrics"],
        "{events:?}"
    );
    let warm = p.published("taus");

    // The same manifest cold, in a fresh project and with one thread: identical bytes.
    let cold = Project::new();
    cold.manifest(
        "taus",
        &tau_grid("{warmup: {jobs: 200}, timeseries_step: 600}"),
    );
    assert!(cold.run(&["-j", "1"]).0.status.success());
    assert_eq!(
        warm,
        cold.published("taus"),
        "metrics from a cached schedule"
    );

    // A changed scheduler is a new schedule: the metrics re-run as downstream of it.
    p.manifest(
        "taus",
        &tau_grid("{warmup: {jobs: 200}, timeseries_step: 600}")
            .replace("{policy: easy}", "{policy: easy, interval: 60}"),
    );
    let plan = String::from_utf8_lossy(&p.schedlab(&["plan"]).stdout).to_string();
    assert!(
        plan.contains("parameter changed: scheduler.interval (null → 60)")
            && plan.contains("upstream node changed: upstream"),
        "{plan}"
    );
}

/// The files each node kind writes into the cache (docs/cache.md, "Files per node"): a
/// schedule entry 3 (its schedule, instants and marker), a metrics entry 3 (`jobs.parquet`, the
/// small tables packed in `tables.bundle`, the marker; 11 before session 7), the aggregate its
/// 12 result files and marker. A τ sweep of 2 × 2 cells leaves 2 × 3 + 4 × 3 + 13 files — and
/// the bundle holds every small table the aggregate reads, each a whole Parquet file.
#[test]
fn files_per_node_a_metrics_entry_is_three_files() {
    let p = Project::new();
    p.manifest(
        "taus",
        "name: taus
workloads:
  kth: {trace: ../workloads/kth.swf.gz}
clusters:
  pool: {procs: 100}
schedulers:
  easy: {policy: easy}
grid:
  axes:
    first_jobs: [50, 100]
    tau: [10, 600]
",
    );
    let (out, events) = p.run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(outcomes(&events, "ran").len(), 2 + 4 + 1, "{events:?}");
    let entries = p.path().join("results/.schedlab/entries");
    let mut kinds: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut total = 0;
    for shard in fs::read_dir(&entries).unwrap() {
        for entry in fs::read_dir(shard.unwrap().path()).unwrap() {
            let dir = entry.unwrap().path();
            let names: Vec<String> = fs::read_dir(&dir)
                .unwrap()
                .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            total += names.len();
            let kind = if names.iter().any(|n| n == "summary.parquet") {
                "aggregate"
            } else if names.iter().any(|n| n == "schedule.parquet") {
                "schedule"
            } else {
                assert!(
                    names.iter().any(|n| n == "tables.bundle"),
                    "a metrics entry packs its small tables: {names:?}"
                );
                let bundle =
                    schedlab::cache::bundle::Bundle::read(&dir.join("tables.bundle")).unwrap();
                let mut members: Vec<&str> = bundle.names().collect();
                members.sort_unstable();
                assert_eq!(
                    members,
                    [
                        "cluster_timeseries.parquet",
                        "clusters.parquet",
                        "eet_heatmap.parquet",
                        "eet_usage.parquet",
                        "job_penalties.parquet",
                        "queues.parquet",
                        "timeseries.parquet",
                        "user_timeseries.parquet",
                        "users.parquet",
                    ]
                );
                for name in members {
                    // Each member is a whole Parquet file (magic at both ends).
                    let bytes = bundle.get(name).unwrap();
                    assert!(
                        bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
                        "{name}"
                    );
                }
                "metrics"
            };
            kinds.entry(kind).or_default().push(names.len());
        }
    }
    assert_eq!(kinds["schedule"], [3, 3], "{kinds:?}");
    assert_eq!(kinds["metrics"], [3, 3, 3, 3], "{kinds:?}");
    assert_eq!(kinds["aggregate"], [13], "{kinds:?}");
    assert_eq!(total, 2 * 3 + 4 * 3 + 13);
}

/// Issue 35: with stderr to a file, nothing was printed while a long cell ran. A status line
/// comes every `SCHEDLAB_PROGRESS_INTERVAL` seconds (20 by default; shortened here) naming the
/// running cell and the fraction of its submission span simulated, with a time left that is
/// never "0 seconds".
#[test]
fn a_run_with_stderr_to_a_file_says_how_far_a_running_cell_got() {
    let p = Project::new();
    p.manifest(
        "slow",
        "name: slow
workloads:
  kth:
    trace: ../workloads/kth.swf.gz
clusters:
  pool: {procs: 100}
schedulers:
  conservative: {policy: conservative}
",
    );
    let log = p.path().join("stderr.txt");
    let status = p
        .cmd(&["run", "-j", "1"])
        .env("SCHEDLAB_PROGRESS_INTERVAL", "0.01")
        .stderr(Stdio::from(fs::File::create(&log).unwrap()))
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let err = fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{err}");
    let status_lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains(" nodes done; running slow/kth"))
        .collect();
    assert!(
        !status_lines.is_empty(),
        "no status line while the cell ran:\n{err}"
    );
    // The simulation's own progress: "slow/kth 40 % (… of … days simulated)".
    assert!(
        status_lines
            .iter()
            .any(|l| l.contains("running slow/kth ") && l.contains(" days simulated)")),
        "{err}"
    );
    assert!(
        status_lines
            .iter()
            .all(|l| l.starts_with('[') && l.contains("left") && !l.contains("about 0 seconds")),
        "{err}"
    );
    // The per-node lines are still there.
    assert!(err.contains("] ran slow/kth ("), "{err}");
}
