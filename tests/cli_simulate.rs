//! `schedlab simulate` and `schedlab trace info` as a user runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .output()
        .expect("binary runs")
}

mod common;

/// A pyss fixture, or `None` (the reason printed) without the shared folder.
fn fixture(name: &str) -> Option<PathBuf> {
    common::shared::shared(&format!("fixtures/pyss/{name}"))
}

fn kth() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("workloads/KTH-SP2-1996-2.1-cln.swf.gz")
        .display()
        .to_string()
}

#[test]
fn json_summary_states_its_parameters() {
    let out = schedlab(&[
        "simulate",
        &kth(),
        "--scheduler",
        "easy",
        "--format",
        "json",
        "--tau",
        "60",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["scheduler"], "easy");
    assert_eq!(v["procs"], 100);
    assert_eq!(v["tau"], 60);
    assert_eq!(v["overrun"], "kill");
    assert_eq!(v["jobs"], 28_467);
    let util = v["utilization"].as_f64().unwrap();
    assert!(util > 0.5 && util < 1.0, "utilization {util}");
    let bf = v["backfilled_fraction"].as_f64().unwrap();
    assert!(bf > 0.0, "EASY backfills on KTH");
}

#[test]
fn per_job_parquet_is_byte_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.parquet");
    let b = dir.path().join("b.parquet");
    for path in [&a, &b] {
        let out = schedlab(&[
            "simulate",
            &kth(),
            "-s",
            "conservative",
            "--jobs-out",
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(a.len() > 1000);
    assert_eq!(a, b, "two runs give byte-identical Parquet");
}

#[test]
fn node_allocation_takes_whole_nodes() {
    use arrow_array::Int64Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let Some(swf) = fixture("fcfs_input_0.swf") else {
        return;
    };
    let swf = swf.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs.parquet");
    let out = schedlab(&[
        "simulate",
        swf,
        "-s",
        "fcfs",
        "--procs",
        "100",
        "--node-size",
        "10",
        "--jobs-out",
        jobs.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::File::open(&jobs).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = 0;
    for batch in reader {
        let batch = batch.unwrap();
        let col = |name: &str| {
            batch
                .column_by_name(name)
                .unwrap()
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone()
        };
        let (procs, units) = (col("procs"), col("units"));
        for i in 0..batch.num_rows() {
            assert_eq!(units.value(i), (procs.value(i) + 9) / 10, "row {i}");
            rows += 1;
        }
    }
    assert!(rows > 0);
    let bad = schedlab(&[
        "simulate",
        swf,
        "-s",
        "fcfs",
        "--procs",
        "100",
        "--node-size",
        "7",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("100 processors do not divide into nodes of 7"),
        "{err}"
    );
    assert!(err.contains("hint: use --procs 98"), "{err}");
}

#[test]
fn bad_traces_fail_with_location_and_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.swf");
    std::fs::write(
        &path,
        "; MaxProcs: 4\n1 0 -1 12x 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n",
    )
    .unwrap();
    let out = schedlab(&["simulate", path.to_str().unwrap(), "-s", "easy"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"bad.swf:2: field 4 (run time): expected an integer, found "12x""#),
        "{err}"
    );
    assert!(err.contains("hint:") && err.contains("--lenient"), "{err}");
    assert!(!err.contains("panicked"));
    let lenient = schedlab(&[
        "trace",
        "info",
        path.to_str().unwrap(),
        "--lenient",
        "--format",
        "json",
    ]);
    assert!(lenient.status.success());
    let v: serde_json::Value = serde_json::from_slice(&lenient.stdout).unwrap();
    assert_eq!(v["malformed_lines"], 1);

    let headerless = dir.path().join("nomax.swf");
    std::fs::write(
        &headerless,
        "1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n",
    )
    .unwrap();
    let out = schedlab(&["simulate", headerless.to_str().unwrap(), "-s", "easy"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("hint: give the machine size with --procs N")
    );
    let out = schedlab(&[
        "simulate",
        dir.path().join("missing.swf").to_str().unwrap(),
        "-s",
        "easy",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: failed to read "));
}

#[test]
fn trace_info_reports_anomalies_and_load() {
    let out = schedlab(&["trace", "info", &kth(), "--format", "json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"], 28_476);
    assert_eq!(v["max_procs"], 100);
    assert_eq!(
        v["jobs"].as_u64().unwrap() + v["skipped"].as_u64().unwrap(),
        28_476
    );
    let table = schedlab(&["trace", "info", &kth()]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("offered load"), "{text}");
}

#[test]
fn every_command_has_help() {
    for args in [
        &["--help"][..],
        &["simulate", "--help"],
        &["trace", "--help"],
        &["trace", "info", "--help"],
    ] {
        let out = schedlab(args);
        assert!(out.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage"),
            "{args:?}"
        );
    }
}

#[test]
fn the_queue_order_is_a_flag_and_fcfs_is_the_default() {
    let summary = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["simulate", "--scheduler", "easy", "--format", "json"];
        let trace = kth();
        args.push(&trace);
        args.extend_from_slice(extra);
        let out = schedlab(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let default = summary(&[]);
    let fcfs = summary(&["--order", "fcfs"]);
    let fair = summary(&["--order", "fairshare"]);
    assert_eq!(default["order"], "fcfs");
    assert_eq!(default, fcfs, "fcfs is the default order");
    assert_eq!(fair["order"], "fairshare");
    assert_eq!(fair["jobs"], 28_467);
    assert_ne!(
        fair["wait_mean"], fcfs["wait_mean"],
        "the order changes the schedule"
    );
    let bad = schedlab(&["simulate", &kth(), "-s", "easy", "--order", "fairest"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("fairshare"));
}

#[test]
fn the_backfill_candidate_order_is_a_flag_and_the_queue_order_is_its_default() {
    let summary = |extra: &[&str]| -> serde_json::Value {
        let trace = kth();
        let mut args = vec![
            "simulate",
            "--scheduler",
            "easy",
            "--format",
            "json",
            &trace,
        ];
        args.extend_from_slice(extra);
        let out = schedlab(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let default = summary(&[]);
    assert_eq!(default, summary(&["--backfill-order", "queue"]));
    assert!(
        default.get("backfill_order").is_none(),
        "absent at its default"
    );
    let sjbf = summary(&["--backfill-order", "shortest"]);
    assert_eq!(sjbf["backfill_order"], "shortest");
    assert_eq!(sjbf["jobs"], 28_467);
    assert_ne!(
        sjbf["wait_mean"], default["wait_mean"],
        "shortest-first candidates change KTH's EASY schedule"
    );
    let bad = schedlab(&["simulate", &kth(), "-s", "easy", "--backfill-order", "sjf"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("smallest_area"));
}

/// The examples of `simulate --help` that name bundled traces run as written from the
/// repository's root; the topology example places every job the trace's machines can hold.
#[test]
fn the_help_examples_on_bundled_traces_run_as_written() {
    let help = String::from_utf8(schedlab(&["simulate", "--help"]).stdout).unwrap();
    let examples = help.split("Examples:").nth(1).expect("an Examples section");
    let examples = examples.split("Exit codes:").next().unwrap();
    // One command per example: lines ending in `\` continue on the next.
    let mut commands: Vec<String> = Vec::new();
    let mut open = false;
    for line in examples.lines().map(str::trim) {
        if open {
            commands.last_mut().unwrap().push(' ');
            commands
                .last_mut()
                .unwrap()
                .push_str(line.trim_end_matches('\\'));
        } else if line.starts_with("schedlab simulate workloads/") {
            commands.push(line.trim_end_matches('\\').to_string());
        }
        open = (open || line.starts_with("schedlab")) && line.ends_with('\\');
    }
    assert!(commands.len() >= 2, "{commands:?}");
    let mut saw_topology = false;
    for command in &commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .args(&args)
            .args(["--format", "json"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if command.contains("--machines") {
            saw_topology = true;
            // wagap-2013's 17,898 jobs on its own machines: one asks for more memory than
            // any node has (docs/metacentrum.md); no job lacks a property.
            assert_eq!(v["jobs"], 17_897, "{command}");
            assert_eq!(
                v["skipped_by_reason"],
                serde_json::json!({"too_much_memory_per_node": 1}),
                "{command}"
            );
        }
    }
    assert!(
        saw_topology,
        "an example simulates on a machine file: {commands:?}"
    );
}

/// A run that keeps no job is an error (exit 2, the reasons counted), never an empty success:
/// every line skipped by the SWF rules, or every line malformed under `--lenient`.
#[test]
fn a_trace_that_leaves_no_job_to_simulate_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("zero.swf");
    std::fs::write(
        &zero,
        "; MaxProcs: 4\n1 0 -1 0 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n2 5 -1 -1 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n",
    )
    .unwrap();
    let out = schedlab(&["simulate", zero.to_str().unwrap(), "-s", "easy"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no job to simulate"), "{err}");
    assert!(err.contains("1 run time -1, 1 run time 0"), "{err}");
    let bad = dir.path().join("bad.swf");
    std::fs::write(&bad, "; MaxProcs: 4\nnot a job line at all\n").unwrap();
    let out = schedlab(&["simulate", bad.to_str().unwrap(), "-s", "easy", "--lenient"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("1 malformed"), "{err}");
}

/// Issue 35: the table gives times with their unit, as reports do — the unit a report would
/// choose for the value and the exact seconds — and leaves counts and ratios bare; JSON keeps
/// plain seconds.
#[test]
fn table_prints_times_with_their_unit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.swf");
    // Job 2 waits for job 1 (both take the whole machine): 7,200 s.
    std::fs::write(
        &path,
        "; MaxProcs: 4\n1 0 -1 7200 4 -1 -1 4 7200 -1 1 1 1 -1 1 1 -1 -1\n2 0 -1 30 4 -1 -1 4 30 -1 1 1 1 -1 1 1 -1 -1\n",
    )
    .unwrap();
    let out = schedlab(&["simulate", path.to_str().unwrap(), "-s", "fcfs"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |key: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} in\n{text}"))
            .trim_start_matches(key)
            .trim()
            .to_string()
    };
    // Waits 0 and 7,200 s: mean 3,600 s.
    assert_eq!(line("wait_mean"), "1.00 h (3,600 s)");
    assert_eq!(line("wait_p95"), "2.00 h (7,200 s)");
    assert_eq!(line("response_mean"), "2.00 h (7,215 s)");
    assert_eq!(line("tau"), "10 s");
    assert_eq!(line("jobs"), "2");
    let json = schedlab(&[
        "simulate",
        path.to_str().unwrap(),
        "-s",
        "fcfs",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["wait_mean"], 3600.0);
}

/// The `start` column of a `--jobs-out` file, in submission order.
fn starts(jobs: &Path) -> Vec<i64> {
    use arrow_array::Int64Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let file = std::fs::File::open(jobs).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut starts = vec![];
    for batch in reader {
        let batch = batch.unwrap();
        let col = batch.column_by_name("start").unwrap();
        let col = col.as_any().downcast_ref::<Int64Array>().unwrap();
        starts.extend(col.values().iter().copied());
    }
    starts
}

/// `--queues`, `--reservations` and `--fairshare` take a manifest's mappings from YAML files
/// (issue 31), on traces worked by hand.
#[test]
fn manifest_sections_are_files_of_simulate() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    // Fields: id submit wait run procs cpu mem req_procs req_time req_mem status user group
    // exe queue partition preceding think.
    write(
        "limit.swf",
        "; MaxProcs: 4\n\
         1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         3 10 -1 50 1 -1 -1 1 50 -1 1 2 1 -1 1 -1 -1 -1\n",
    );
    // One running job per user: job 2 waits for job 1's end although 3 processors are free.
    write(
        "queues.yaml",
        "queues: [{name: batch, swf_queue: [1]}]\nusers:\n  default: {max_running: 1}\n",
    );
    // Simulates with `extra` arguments: the output and the jobs' start times.
    let run = |extra: &[&str], out: &str| {
        let jobs = path(out);
        let mut args = vec!["simulate", "-s", "easy", "--jobs-out", &jobs];
        args.extend_from_slice(extra);
        let o = schedlab(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (o, starts(dir.path().join(out).as_path()))
    };
    let trace = path("limit.swf");
    assert_eq!(run(&[&trace], "free.parquet").1, [0, 0, 10]);
    assert_eq!(
        run(&[&trace, "--queues", &path("queues.yaml")], "held.parquet").1,
        [0, 100, 10]
    );

    // The whole pool reserved over [50, 150): the 100 s job waits for its end, the 30 s one
    // fits before it.
    write(
        "booked.swf",
        "; MaxProcs: 4\n\
         1 10 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 10 -1 30 2 -1 -1 2 30 -1 1 1 1 -1 1 -1 -1 -1\n",
    );
    write(
        "lab.yaml",
        "requests:\n  - {id: 1, created: 0, start: 50, duration: 100, procs: 4}\n",
    );
    let (o, started) = run(
        &[
            &path("booked.swf"),
            "--reservations",
            &path("lab.yaml"),
            "--reservations-out",
            &path("lab.parquet"),
            "--format",
            "json",
        ],
        "booked.parquet",
    );
    assert_eq!(started, [150, 10]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["reservations_granted"], 1);
    assert!(dir.path().join("lab.parquet").exists());

    // One processor; user 1 ran first, so fairshare runs user 2's job before user 1's second.
    write(
        "fair.swf",
        "; MaxProcs: 1\n\
         1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 1 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n\
         3 2 -1 10 1 -1 -1 1 10 -1 1 2 1 -1 1 -1 -1 -1\n",
    );
    write("fair.yaml", "charging: estimate\npenalty: cpu\n");
    assert_eq!(
        run(
            &[
                &path("fair.swf"),
                "--order",
                "fairshare",
                "--fairshare",
                &path("fair.yaml"),
            ],
            "fair.parquet"
        )
        .1,
        [0, 110, 100]
    );

    // Priority weights of a scheduler, from a file: with the whole weight on the job's size,
    // favouring small jobs, the narrower of the two jobs waiting at 100 goes first (EASY over
    // submission order would start job 2 at 100 and job 3 at 110).
    write(
        "size.swf",
        "; MaxProcs: 2\n\
         1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 1 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n\
         3 2 -1 10 1 -1 -1 1 10 -1 1 2 1 -1 1 -1 -1 -1\n",
    );
    write(
        "size.yaml",
        "{age: 0, fairshare: 0, size: 1000, favor_small: true}\n",
    );
    assert_eq!(run(&[&path("size.swf")], "fifo.parquet").1, [0, 100, 110]);
    assert_eq!(
        run(
            &[
                &path("size.swf"),
                "--order",
                "priority",
                "--priority",
                &path("size.yaml"),
            ],
            "size.parquet"
        )
        .1,
        [0, 110, 100]
    );

    // A mistake names the flag, the file and the key path, exit code 2.
    write("bad.yaml", "queues: [{name: batch, max_runing: 1}]\n");
    let bad = schedlab(&[
        "simulate",
        &trace,
        "-s",
        "easy",
        "--queues",
        &path("bad.yaml"),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains(&format!("--queues {}, at queues[0]", path("bad.yaml"))),
        "{err}"
    );
    assert!(err.contains("max_runing"), "{err}");
}
