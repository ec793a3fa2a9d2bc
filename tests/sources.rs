//! Workload sources beyond SWF and the formats schedules leave in (docs/sources.md): Batsim JSON
//! workloads read as traces — every field, every rule, located errors — in manifests and on the
//! command line, and `export --format batsim` writing Batsim's `jobs.csv`.

use std::path::{Path, PathBuf};

use schedlab::swf::{Mode, ReadOptions, TraceFormat};

mod common;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/batsim").join(name)
}

use common::{schedlab_in as schedlab, text};

/// A Batsim workload given inline: one job with `job` as its fields and a delay profile `p`.
fn one_job(job: &str) -> String {
    format!(
        r#"{{"nb_res": 4, "jobs": [{job}], "profiles": {{"p": {{"type": "delay", "delay": 10}}}}}}"#
    )
}

fn read_error(json: &str) -> String {
    schedlab::batsim::read_bytes(json.as_bytes(), "t.json", Mode::Strict)
        .unwrap_err()
        .to_string()
}

#[test]
fn a_batsim_workload_gives_every_field() {
    let path = fixture("workload.json");
    // The command line's and the Python package's door: `.json` names the format.
    let options = ReadOptions::default().for_path(&path);
    assert_eq!(options.format, TraceFormat::Batsim);
    let trace = schedlab::api::trace::load(&path, false, &ReadOptions::default()).unwrap();
    assert_eq!(trace.header.max_procs, Some(8), "nb_res");
    assert_eq!(
        trace.header.notes,
        ["hand-written for schedlab's tests: every field the Batsim reader reads"]
    );
    assert_eq!(trace.records, 6);
    let a = trace.anomalies;
    assert_eq!(a.zero_runtime, 1, "job 5's delay is 0");
    assert_eq!(a.skipped(), 1);
    assert_eq!(a.missing_request, 1, "job 3 has no walltime");
    assert_eq!(
        a.runtime_exceeds_request, 1,
        "job 4: delay 60 > walltime 20"
    );
    assert_eq!(a.out_of_order, 1, "job 4 is submitted before job 3");
    assert_eq!(a.fractional_times, 1, "job 2");
    assert_eq!(trace.malformed.count, 0);
    // Submission order; (id, submit, runtime, requested, procs, user).
    let jobs: Vec<_> = trace
        .workload
        .jobs
        .iter()
        .map(|j| (j.id, j.submit, j.runtime, j.requested_time, j.procs, j.user))
        .collect();
    assert_eq!(
        jobs,
        [
            (1, 0, 60, 100, 4, -1),
            // 10.4 s → 10; delay 30.5 → 31 and walltime 50.2 → 51 (durations round up).
            (2, 10, 31, 51, 2, 7),
            (4, 15, 60, 20, 1, -1),
            // No walltime: the run time; the user a digit string.
            (3, 20, 60, 60, 8, 12),
            // 6.0 resources is 6.
            (6, 40, 60, 90, 6, -1),
        ]
    );
    for j in &trace.workload.jobs {
        assert_eq!(
            (j.cpu_time, j.group, j.queue, j.partition),
            (-1, -1, -1, -1)
        );
        assert_eq!(trace.workload.request(j).memory_kb, 0);
    }
    assert_eq!(trace.recorded_waits, [-1; 5]);
}

#[test]
fn other_profile_types_fail_located_or_are_skipped_and_counted() {
    let path = fixture("other-profiles.json");
    let err = schedlab::batsim::read_path(&path, Mode::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:11:15: profiles.ph.type: expected \"delay\" (the only profile type with a run \
             time of its own), found \"parallel_homogeneous\" (the profile of jobs[1])",
            path.display()
        )
    );
    assert!(err.hint().unwrap().contains("lenient"), "{:?}", err.hint());
    let trace = schedlab::batsim::read_path(&path, Mode::Lenient).unwrap();
    assert_eq!((trace.records, trace.workload.jobs.len()), (1, 1));
    assert_eq!(trace.malformed.count, 2, "both jobs of the profile");
    assert!(trace.malformed.first[1].to_string().contains("jobs[2]"));
}

#[test]
fn bad_values_name_file_line_column_path_value_and_expectation() {
    let cases = [
        (
            one_job(r#"{"id": 1, "subtime": -5, "res": 1, "profile": "p"}"#),
            "t.json:1:45: jobs[0].subtime: expected a submission time in seconds, 0 to 10^12, found -5",
        ),
        (
            one_job(r#"{"id": "a7", "subtime": 0, "res": 1, "profile": "p"}"#),
            "t.json:1:31: jobs[0].id: expected a job number (a whole number, or a string of digits), found \"a7\"",
        ),
        (
            one_job(r#"{"id": 1, "subtime": 0, "res": 0, "profile": "p"}"#),
            "t.json:1:55: jobs[0].res: expected a positive whole number of resources, found 0",
        ),
        (
            one_job(r#"{"id": 1, "subtime": 0, "res": 1, "walltime": 0, "profile": "p"}"#),
            "t.json:1:70: jobs[0].walltime: expected a positive number of seconds up to 10^12, or -1 (none), found 0",
        ),
        (
            one_job(r#"{"id": 1, "subtime": 0, "res": 1, "profile": "q"}"#),
            "t.json:1:69: jobs[0].profile: expected the name of a profile in `profiles`, found \"q\"",
        ),
        (
            one_job(r#"{"id": 1, "subtime": 0, "res": 2}"#),
            // A missing key: located at its job.
            "t.json:1:24: jobs[0].profile: expected the name of a profile in `profiles`, found nothing (no such key)",
        ),
        (
            r#"{"nb_res": 0, "jobs": []}"#.to_string(),
            "t.json:1:12: nb_res: expected a number of resources from 1 to 100000000, found 0",
        ),
        (
            r#"{"jobs": [], "profiles": {}}"#.to_string(),
            "t.json:1:10: jobs: expected at least one job, found an empty array",
        ),
        (
            r#"{"jobs": {}}"#.to_string(),
            "t.json:1:10: jobs: expected an array of jobs, found {}",
        ),
        (
            "[1, 2]".to_string(),
            "t.json:1:1: the document: expected a JSON object with `jobs` and `profiles`, found [1,2]",
        ),
        (
            "{\"jobs\": [\n  {\"id\": 1,}\n]}".to_string(),
            "t.json:2:12: not valid JSON: trailing comma",
        ),
    ];
    for (json, expected) in cases {
        assert_eq!(read_error(&json), expected, "{json}");
    }
    // Every job skipped is no workload either.
    let zero = r#"{"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "z"}],
                   "profiles": {"z": {"type": "delay", "delay": 0}}}"#;
    assert_eq!(
        read_error(zero),
        "t.json:1:10: jobs: expected at least one job, found 1 jobs, none that can run (1 skipped, 0 malformed)"
    );
}

#[test]
fn trace_info_and_simulate_read_json_paths_as_batsim() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("workload.json");
    let out = schedlab(
        dir.path(),
        &["trace", "info", path.to_str().unwrap(), "--format", "json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["jobs"], 5);
    assert_eq!(info["skipped"], 1);
    assert_eq!(info["max_procs"], 8);
    assert_eq!(info["anomalies"]["fractional_times"], 1);
    let out = schedlab(dir.path(), &["trace", "info", path.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("times rounded        1"));

    let out = schedlab(
        dir.path(),
        &[
            "simulate",
            path.to_str().unwrap(),
            "-s",
            "easy",
            "--format",
            "json",
            "--jobs-out",
            "jobs.parquet",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["jobs"], 5, "{summary}");

    // SWF reading options say nothing of a Batsim workload.
    let out = schedlab(
        dir.path(),
        &[
            "trace",
            "info",
            path.to_str().unwrap(),
            "--memory",
            "kb_per_node",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("but this is a Batsim workload"),
        "{}",
        text(&out.stderr)
    );

    let bad = fixture("other-profiles.json");
    let out = schedlab(dir.path(), &["trace", "info", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(":11:15: profiles.ph.type"), "{err}");
    assert!(
        err.contains("hint: schedlab simulates no platform"),
        "{err}"
    );
    let out = schedlab(
        dir.path(),
        &["trace", "info", bad.to_str().unwrap(), "--lenient"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("malformed lines  2"));
}

/// A project whose `workloads/batsim/workload.json` is the fixture.
fn batsim_project() -> common::project::Project {
    let project = common::project::Project::new();
    let dir = project.path().join("workloads/batsim");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("workload.json"), dir.join("workload.json")).unwrap();
    project
}

/// The first block of `lang` in docs/sources.md after `marker`.
fn doc_block(marker: &str, lang: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs/sources.md")).unwrap();
    let section = &doc[doc.find(marker).unwrap_or_else(|| panic!("no {marker}"))..];
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).unwrap() + fence.len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

#[test]
fn the_documented_batsim_manifest_runs_and_keys_by_format() {
    let project = batsim_project();
    let yaml = doc_block("## Batsim workloads", "yaml");
    project.manifest("batsim", &yaml);
    let (out, events) = project.run(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!events.is_empty());
    let m = schedlab::manifest::load(&project.path().join("experiments/batsim.yaml")).unwrap();
    let cell = &m.cells[0];
    assert_eq!(cell.workload.reading.format, TraceFormat::Batsim);
    let jobs = parquet_rows(&project.path().join("results/batsim/jobs.parquet"));
    assert_eq!(jobs, 5 * m.cells.len());

    // SWF reading options say nothing of a Batsim workload.
    project.manifest(
        "batsim",
        "workloads:\n  b:\n    batsim: ../workloads/batsim/workload.json\n    memory: kb_per_node\nschedulers:\n  easy: {policy: easy}\n",
    );
    let out = project.schedlab(&["plan"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("workloads.b.memory"), "{err}");
    assert!(err.contains("this workload is a Batsim workload"), "{err}");
}

#[test]
fn the_documented_commands_run_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let sample = dir.path().join("tests/fixtures/batsim");
    std::fs::create_dir_all(&sample).unwrap();
    std::fs::copy(fixture("workload.json"), sample.join("workload.json")).unwrap();
    let block = doc_block("## Batsim workloads", "sh");
    let commands: Vec<&str> = block
        .lines()
        .filter(|l| l.starts_with("schedlab "))
        .collect();
    assert_eq!(commands.len(), 3, "{block}");
    for command in commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = schedlab(dir.path(), &args);
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
    }
    let csv = std::fs::read_to_string(dir.path().join("jobs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 5);
}

fn parquet_rows(path: &Path) -> usize {
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
    use parquet::file::reader::FileReader;
    reader.metadata().file_metadata().num_rows() as usize
}

/// The columns of a CSV file without quoted commas: header → values.
fn csv_columns(text: &str) -> Vec<(String, Vec<String>)> {
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let mut columns: Vec<(String, Vec<String>)> =
        header.into_iter().map(|h| (h, Vec::new())).collect();
    for line in lines {
        let values: Vec<&str> = line.split(',').collect();
        assert_eq!(values.len(), columns.len(), "{line}");
        for (c, v) in columns.iter_mut().zip(values) {
            c.1.push(v.to_string());
        }
    }
    columns
}

#[test]
fn export_writes_batsims_jobs_csv_with_disjoint_resources() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("workload.json");
    let out = schedlab(
        dir.path(),
        &[
            "simulate",
            path.to_str().unwrap(),
            "-s",
            "fcfs",
            "--jobs-out",
            "jobs.parquet",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = schedlab(
        dir.path(),
        &[
            "export",
            "jobs.parquet",
            "--format",
            "batsim",
            "-o",
            "jobs.csv",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = std::fs::read_to_string(dir.path().join("jobs.csv")).unwrap();
    let columns = csv_columns(&csv);
    let names: Vec<&str> = columns.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, schedlab::batsim::jobs_csv::COLUMNS);
    let col = |name: &str| -> &Vec<String> { &columns.iter().find(|c| c.0 == name).unwrap().1 };
    // FCFS on 8 resources, by hand: job 1 (4 × 60 s) at 0; job 2 (2) at 10; job 4 (1, killed
    // at its walltime 20) at 15; job 3 (all 8) when job 1 ends at 60 and job 2 at 41 — 60;
    // job 6 (6) after it, at 120.
    assert_eq!(col("job_id"), &["1", "2", "4", "3", "6"]);
    assert_eq!(col("workload_name"), &["w0"; 5]);
    assert_eq!(col("submission_time"), &["0", "10", "15", "20", "40"]);
    assert_eq!(
        col("requested_number_of_resources"),
        &["4", "2", "1", "8", "6"]
    );
    assert_eq!(col("requested_time"), &["100", "51", "20", "60", "90"]);
    assert_eq!(col("starting_time"), &["0", "10", "15", "60", "120"]);
    assert_eq!(col("execution_time"), &["60", "31", "20", "60", "60"]);
    assert_eq!(col("finish_time"), &["60", "41", "35", "120", "180"]);
    assert_eq!(col("waiting_time"), &["0", "0", "0", "40", "80"]);
    assert_eq!(col("turnaround_time"), &["60", "31", "20", "100", "140"]);
    assert_eq!(col("success"), &["1", "1", "0", "1", "1"]);
    assert_eq!(
        col("final_state"),
        &[
            "COMPLETED_SUCCESSFULLY",
            "COMPLETED_SUCCESSFULLY",
            "COMPLETED_WALLTIME_REACHED",
            "COMPLETED_SUCCESSFULLY",
            "COMPLETED_SUCCESSFULLY"
        ]
    );
    assert_eq!(col("stretch")[3], "1.6666666666666667");
    assert_eq!(
        col("allocated_resources"),
        &["0-3", "4-5", "6", "0-7", "0-5"]
    );
    assert_eq!(col("consumed_energy"), &["-1"; 5]);
    assert_eq!(col("metadata"), &[""; 5]);
}
