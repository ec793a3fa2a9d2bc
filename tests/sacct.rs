//! Slurm accounting read as a trace (docs/sources.md, "Slurm accounting"): the shipped mapping
//! `slurm` on the bundled hand-written `sacct --parsable2` dump, every job worked out by hand
//! from its rows (steps, array tasks, heterogeneous components, jobs that never started, time
//! limits in every form, memory old and new, TRES with GPU types); states filtered without their
//! notes; dumps without a header or with a trailing `|`; located errors for bad rows; the
//! documented commands and manifest. The real-Slurm test (slurmdbd, sacct) is in tests/slurm.rs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schedlab::sim::topology::{NodeDemand, Shape};
use schedlab::sim::{Job, Workload};
use schedlab::swf::{ReadOptions, Trace, TraceFormat};
use schedlab::table::mapping::Per;
use schedlab::table::slurm::{
    JobId, is_tres, job_id, parse_clock, parse_memory, state, tres, tres_gpu_type, tres_gpus,
};
use schedlab::table::{Keep, RawMapping, mapping};

mod common;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sample() -> PathBuf {
    root().join("workloads/samples/slurm/sacct.txt")
}

use common::{schedlab_in as schedlab, text};

fn read_with(path: &Path, m: RawMapping, keep: Keep, lenient: bool) -> Result<Trace, String> {
    let reading = m.with_keep(Some(keep)).resolve("slurm").unwrap();
    let options = ReadOptions {
        format: TraceFormat::Table(Arc::new(reading)),
        ..ReadOptions::default()
    };
    schedlab::api::trace::load(path, lenient, &options).map_err(|e| e.to_string())
}

fn read(path: &Path, keep: Keep) -> Result<Trace, String> {
    read_with(path, mapping::shipped("slurm").unwrap(), keep, false)
}

fn job(w: &Workload, id: u64) -> &Job {
    w.jobs
        .iter()
        .find(|j| j.id == id)
        .unwrap_or_else(|| panic!("job {id} kept"))
}

/// (nodes, cores per node, KB per node, GPUs per node) of a node request.
fn shape(w: &Workload, j: &Job) -> (u32, u32, u64, u32) {
    match w.request(j).shape {
        Shape::Nodes {
            count,
            per_node:
                NodeDemand {
                    cores,
                    memory_kb,
                    gpus,
                },
        } => (count, cores, memory_kb, gpus),
        Shape::Flexible => panic!("job {} has a flexible request", j.id),
    }
}

fn gpu_type(w: &Workload, j: &Job) -> Vec<String> {
    w.constraints
        .get(w.request(j).constraint)
        .properties
        .clone()
}

const GIB: u64 = 1024 * 1024;

#[test]
fn sample_every_job_by_hand() {
    let t = read(&sample(), Keep::default()).unwrap();
    let w = &t.workload;
    // 19 rows: 5 steps (100.batch, 100.extern, 100.0, 101.batch, 105_0.batch); 3 jobs that
    // never started (105_[1-3] pending, 109 with Start None, 110 cancelled while pending: start
    // = end); 111 still running; 113 ran 0 s. 9 jobs kept.
    assert_eq!((t.records, w.len()), (19, 9));
    let a = &t.anomalies;
    assert_eq!(
        (
            a.job_steps,
            a.never_started,
            a.unknown_runtime,
            a.zero_runtime
        ),
        (5, 3, 1, 1)
    );
    assert_eq!(a.skipped(), 10);
    // UNLIMITED (103) and Partition_Limit (104): no requested time.
    assert_eq!(a.missing_request, 2);
    assert_eq!(a.runtime_exceeds_request, 0);
    // 2026-10-01T00:00:00 UTC (Python's datetime).
    assert_eq!(t.header.unix_start_time, Some(1_790_812_800));
    let ids: Vec<u64> = w.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [100, 101, 102, 103, 104, 106, 107, 108, 112]);

    let row = |id| {
        let j = job(w, id);
        (j.submit, j.runtime, j.requested_time, j.procs)
    };
    // 1 h run, 02:00:00 limit, 4 CPUs on 1 node, ReqMem 8G (the job's).
    assert_eq!(row(100), (0, 3600, 7200, 4));
    assert_eq!(shape(w, job(w, 100)), (1, 4, 8 * GIB, 0));
    // 1-00:00:30 run, 2-00:00:00 limit, 16 CPUs on 2 nodes, 64G, 4 V100s.
    assert_eq!(row(101), (60, 86_430, 172_800, 16));
    assert_eq!(shape(w, job(w, 101)), (2, 8, 32 * GIB, 2));
    assert_eq!(gpu_type(w, job(w, 101)), ["v100"]);
    // TIMEOUT at its 30 min limit; 1000Mc: 1000 MB per CPU, 2 CPUs on the node.
    assert_eq!(row(102), (120, 1800, 1800, 2));
    assert_eq!(shape(w, job(w, 102)), (1, 2, 2 * 1000 * 1024, 0));
    // CANCELLED by 1001 after 30 s: kept. UNLIMITED: the run time. 4Gn: 4 GB per node.
    assert_eq!(row(103), (240, 30, 30, 8));
    assert_eq!(shape(w, job(w, 103)), (2, 4, 4 * GIB, 0));
    // NODE_FAIL after 2 h, Partition_Limit; 500M.
    assert_eq!(row(104), (360, 7200, 7200, 1));
    assert_eq!(shape(w, job(w, 104)), (1, 1, 500 * 1024, 0));
    // The array task 105_0 is job 106 (JobIDRaw).
    assert_eq!(row(106), (420, 100, 600, 1));
    assert_eq!(shape(w, job(w, 106)), (1, 1, GIB, 0));
    // The heterogeneous job 107: its components 107+0 and 107+1 are jobs 107 and 108.
    assert_eq!(row(107), (600, 600, 1200, 2));
    assert_eq!(shape(w, job(w, 107)), (1, 2, 2 * GIB, 0));
    // gres/gpu:a100=1 without the total.
    assert_eq!(row(108), (600, 600, 1200, 4));
    assert_eq!(shape(w, job(w, 108)), (1, 4, 16 * GIB, 1));
    assert_eq!(gpu_type(w, job(w, 108)), ["a100"]);
    // OUT_OF_MEMORY after 5 s; the limit `10:00` is 10 minutes.
    assert_eq!(row(112), (1080, 5, 600, 1));
    assert_eq!(shape(w, job(w, 112)), (1, 1, 100 * 1024, 0));
    assert!(gpu_type(w, job(w, 100)).is_empty());

    // Users, accounts (groups) and partitions (queues) by name.
    assert_eq!(w.names.users[&job(w, 100).user], "alice");
    assert_eq!(w.names.users[&job(w, 101).user], "bob");
    assert_eq!(job(w, 103).user, job(w, 100).user);
    assert_eq!(w.names.groups[&job(w, 101).group], "chem");
    assert_eq!(w.queue_name(job(w, 101).queue), Some("gpu"));
    assert_eq!(w.queue_name(job(w, 100).queue), Some("cpu"));
}

#[test]
fn states_are_filtered_without_their_notes() {
    let keep = |s: &[&str]| Keep {
        status: Some(s.iter().map(|s| s.to_string()).collect()),
        ..Keep::default()
    };
    // `CANCELLED by 1001` is CANCELLED; the two cancelled before they started stay counted.
    let t = read(&sample(), keep(&["cancelled"])).unwrap();
    let ids: Vec<u64> = t.workload.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [103]);
    assert_eq!(t.anomalies.never_started, 2);
    // 14 allocation rows, 3 cancelled: 11 left out; steps are counted as steps.
    assert_eq!(t.anomalies.filtered_status, 11);
    assert_eq!(t.anomalies.job_steps, 5);
    let t = read(&sample(), keep(&["COMPLETED", "TIMEOUT", "NODE_FAIL"])).unwrap();
    let ids: Vec<u64> = t.workload.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [100, 101, 102, 104, 106, 107, 108]);
}

#[test]
fn dumps_without_a_header_or_with_a_trailing_separator() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(sample()).unwrap();
    let (header, body) = full.split_once('\n').unwrap();
    // `sacct --noheader`: the mapping names the columns.
    let bare = dir.path().join("bare.txt");
    std::fs::write(&bare, body).unwrap();
    let mut m = mapping::shipped("slurm").unwrap();
    m.header = Some(header.split('|').map(str::to_string).collect());
    let t = read_with(&bare, m, Keep::default(), false).unwrap();
    assert_eq!((t.records, t.workload.len()), (19, 9));
    // `sacct --parsable` ends every line with `|`.
    let piped = dir.path().join("piped.txt");
    let text: String = full.lines().map(|l| format!("{l}|\n")).collect();
    std::fs::write(&piped, text).unwrap();
    let t = read(&piped, Keep::default()).unwrap();
    assert_eq!(t.workload.len(), 9);
    assert_eq!(job(&t.workload, 101).runtime, 86_430);
    // A job name with a lone quote does not swallow the lines after it (no CSV quoting).
    let named = dir.path().join("named.txt");
    std::fs::write(
        &named,
        "JobIDRaw|JobName|Submit|Start|End|AllocCPUS|NNodes|State\n\
         1|it\"s|2026-10-01T00:00:00|2026-10-01T00:00:00|2026-10-01T00:01:00|1|1|COMPLETED\n\
         2|b|2026-10-01T00:00:00|2026-10-01T00:00:00|2026-10-01T00:02:00|1|1|COMPLETED\n",
    )
    .unwrap();
    let m = mapping::parse(
        "format: sacct\ncolumns: {id: JobIDRaw, submit: Submit, start: Start, end: End, procs: AllocCPUS, nodes: NNodes, status: State}\n",
        "inline",
    )
    .unwrap();
    let t = read_with(&named, m, Keep::default(), false).unwrap();
    assert_eq!(t.workload.len(), 2);
    assert_eq!(job(&t.workload, 2).runtime, 120);
}

/// A copy of the sample with one cell of data row `row` (1-based) replaced.
fn with_cell(dir: &Path, row: usize, column: &str, value: &str) -> PathBuf {
    let full = std::fs::read_to_string(sample()).unwrap();
    let mut lines: Vec<String> = full.lines().map(str::to_string).collect();
    let i = lines[0].split('|').position(|c| c == column).unwrap();
    let mut cells: Vec<String> = lines[row].split('|').map(str::to_string).collect();
    cells[i] = value.to_string();
    lines[row] = cells.join("|");
    let path = dir.join("sacct-bad.txt");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn bad_rows_name_file_line_row_column_value_and_expectation() {
    let dir = tempfile::tempdir().unwrap();
    // Data row 5 is line 6 (job 101).
    let cases = [
        (
            "Timelimit",
            "2 hours",
            "expected a duration: a number ≥ 0 in the column's unit, [D-]HH:MM:SS, UNLIMITED or Partition_Limit, found \"2 hours\"",
        ),
        ("Timelimit", "00:61:00", "found \"00:61:00\""),
        (
            "JobIDRaw",
            "job101",
            "expected a Slurm job id: 123, 123_4 (array task), 123+1 (heterogeneous component) or a step such as 123.batch, found \"job101\"",
        ),
        (
            "ReqMem",
            "lots",
            "expected memory as Slurm writes it: a number with a unit K, M, G or T (none is M)",
        ),
        (
            "Submit",
            "yesterday",
            "expected a time: epoch seconds (in the column's unit) or a date-time such as 2020-06-09 18:41:01, found \"yesterday\"",
        ),
        (
            "AllocTRES",
            "cpu=16,gres/gpu=two",
            "expected a TRES list with whole GPU counts (gres/gpu=2), found \"cpu=16,gres/gpu=two\"",
        ),
        (
            "End",
            "2026-09-30T00:00:00",
            "expected an end at or after the row's start",
        ),
    ];
    for (column, value, expected) in cases {
        let path = with_cell(dir.path(), 5, column, value);
        let e = read(&path, Keep::default()).unwrap_err();
        let at = format!("{}:6: row 5, column `{column}`: ", path.display());
        assert!(e.starts_with(&at), "{column}: {e}");
        assert!(e.contains(expected), "{column}: {e}");
        // Leniently the row is skipped and counted as malformed.
        let m = mapping::shipped("slurm").unwrap();
        let t = read_with(&path, m, Keep::default(), true).unwrap();
        assert_eq!((t.malformed.count, t.workload.len()), (1, 8), "{column}");
    }
    // A dump without the columns the mapping names (a default `sacct` format).
    let path = dir.path().join("default.txt");
    std::fs::write(
        &path,
        "JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode\n1|x|debug|root|1|COMPLETED|0:0\n",
    )
    .unwrap();
    let e = read(&path, Keep::default()).unwrap_err();
    assert!(
        e.contains("column `JobIDRaw`: expected a column of that name (mapping `slurm`), found the columns JobID, JobName"),
        "{e}"
    );
    // A sacct mapping without the job id cannot tell steps from jobs.
    let m = mapping::parse(
        "format: sacct\ncolumns: {submit: Submit, start: Start, end: End}\n",
        "inline",
    )
    .unwrap();
    let (key, message) = m.resolve("custom").unwrap_err();
    assert_eq!(key, "columns.id");
    assert!(
        message.contains("to tell jobs from their steps"),
        "{message}"
    );
}

#[test]
fn a_dump_of_only_steps_and_pending_jobs_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(sample()).unwrap();
    let kept: String = full
        .lines()
        .filter(|l| {
            let id = l.split('|').next().unwrap();
            id == "JobIDRaw" || id.contains('.') || ["105", "109", "110", "111"].contains(&id)
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let path = dir.path().join("none.txt");
    std::fs::write(&path, kept).unwrap();
    let e = read(&path, Keep::default()).unwrap_err();
    assert!(e.contains("expected at least one job that can run"), "{e}");
    assert!(e.contains("9 rows, none kept (9 skipped"), "{e}");
}

fn doc_block(marker: &str, lang: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs/sources.md")).unwrap();
    let section = &doc[doc.find(marker).unwrap_or_else(|| panic!("no {marker}"))..];
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).unwrap() + fence.len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

#[test]
fn trace_info_counts_steps_and_jobs_that_never_started() {
    let out = schedlab(
        root(),
        &[
            "trace",
            "info",
            "workloads/samples/slurm/sacct.txt",
            "--mapping",
            "slurm",
        ],
    );
    let info = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for line in [
        "job lines        19",
        "jobs kept        9",
        "jobs skipped     10",
        "  never started        3",
        "  job steps (Slurm)    5",
        "  unknown run time     1",
        "  zero run time        1",
    ] {
        assert!(info.contains(line), "{line}:\n{info}");
    }
}

#[test]
fn the_documented_commands_run_as_written() {
    let commands: Vec<String> = doc_block("## Slurm accounting", "sh")
        .lines()
        .filter(|l| l.starts_with("schedlab "))
        .map(str::to_string)
        .collect();
    assert!(commands.len() >= 2, "{commands:?}");
    for command in commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = schedlab(root(), &args);
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
    }
    let readme = std::fs::read_to_string(root().join("workloads/samples/slurm/README.md")).unwrap();
    assert!(readme.contains("written by us"), "{readme}");
}

#[test]
fn the_documented_manifest_runs() {
    let project = common::project::Project::new();
    let to = project.path().join("workloads/samples/slurm");
    std::fs::create_dir_all(&to).unwrap();
    std::fs::copy(sample(), to.join("sacct.txt")).unwrap();
    project.manifest("ours", &doc_block("## Slurm accounting", "yaml"));
    let (out, _) = project.run(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary = common::parquet_batches(&project.path().join("results/ours/summary.parquet"));
    let rows: usize = summary.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 1);
    let jobs = common::parquet_batches(&project.path().join("results/ours/jobs.parquet"));
    let n: usize = jobs.iter().map(|b| b.num_rows()).sum();
    assert_eq!(n, 9);
    // The GPU types of the dump (`gres/gpu:v100`, `gres/gpu:a100`) in the per-job outputs.
    use arrow_array::Array;
    let mut types = std::collections::BTreeMap::new();
    for b in &jobs {
        let ids = b
            .column_by_name("job_id")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        let props = b
            .column_by_name("required_properties")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        for i in 0..b.num_rows() {
            types.insert(
                ids.value(i),
                props.is_valid(i).then(|| props.value(i).to_string()),
            );
        }
    }
    assert_eq!(types[&101], Some("v100".to_string()));
    assert_eq!(types[&108], Some("a100".to_string()));
    assert_eq!(
        types.values().filter(|t| t.is_some()).count(),
        2,
        "{types:?}"
    );
}

#[test]
fn a_slurm_workload_is_a_table_read_through_the_slurm_mapping() {
    // `slurm: FILE` (issue 34's shorthand) and `table: FILE` with `mapping: slurm` resolve to
    // the same workload: the same source, reading and filters, hence the same cache key.
    let project = common::project::Project::new();
    let to = project.path().join("workloads/samples/slurm");
    std::fs::create_dir_all(&to).unwrap();
    std::fs::copy(sample(), to.join("sacct.txt")).unwrap();
    let body = |source: &str| {
        format!(
            "workloads:
  ours:
    {source}
    keep: {{status: [COMPLETED]}}
clusters:
  ours: {{procs: 64}}
schedulers:
  easy: {{policy: easy}}
"
        )
    };
    project.manifest(
        "short",
        &body("slurm: ../workloads/samples/slurm/sacct.txt"),
    );
    project.manifest(
        "long",
        &body("table: ../workloads/samples/slurm/sacct.txt\n    mapping: slurm"),
    );
    let load = |name: &str| {
        schedlab::manifest::load(&project.path().join(format!("experiments/{name}.yaml")))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (short, long) = (load("short"), load("long"));
    assert_eq!(short.cells.len(), 1);
    assert_eq!(short.cells[0].workload, long.cells[0].workload);
    let TraceFormat::Table(reading) = &short.cells[0].workload.reading.format else {
        panic!("read as a table");
    };
    assert_eq!(reading.name, "slurm");
    assert_eq!(reading.keep_status, Some(vec!["COMPLETED".to_string()]));
    // Each run keeps the 5 COMPLETED jobs of the sample (100, 101, 106, 107, 108).
    let (out, _) = project.run(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for name in ["short", "long"] {
        let path = project.path().join(format!("results/{name}/jobs.parquet"));
        let n: usize = common::parquet_batches(&path)
            .iter()
            .map(|b| b.num_rows())
            .sum();
        assert_eq!(n, 5, "{name}");
    }
}

/// Every field of every job, with its request and required properties, in order.
fn jobs_shown(t: &Trace) -> Vec<String> {
    let w = &t.workload;
    w.jobs
        .iter()
        .map(|j| {
            let r = w.request(j);
            format!(
                "{j:?} {:?} {:?} {:?}",
                r.shape,
                r.memory_kb,
                w.constraints.get(r.constraint)
            )
        })
        .collect()
}

#[test]
fn the_json_form_of_the_sample_gives_the_same_workload() {
    // workloads/samples/slurm/sacct.json: the jobs of sacct.txt as `sacct --json` prints them
    // (its README).
    let json = root().join("workloads/samples/slurm/sacct.json");
    let txt = read(&sample(), Keep::default()).unwrap();
    let js = read(&json, Keep::default()).unwrap();
    assert_eq!(js.workload.len(), 9);
    assert_eq!(jobs_shown(&js), jobs_shown(&txt));
    // The same counts: 19 records (14 allocations, 5 nested steps), the same reasons.
    assert_eq!(js.records, 19);
    assert_eq!(js.anomalies, txt.anomalies);
    assert_eq!(js.header.unix_start_time, Some(1_790_812_800));
    assert_eq!(js.workload.names, txt.workload.names);
    assert_eq!(js.workload.queue_names, txt.workload.queue_names);
    // States from strings and from 23.11's lists filter alike.
    let keep = |s: &str| Keep {
        status: Some(vec![s.to_string()]),
        ..Keep::default()
    };
    for state in ["COMPLETED", "OUT_OF_MEMORY", "CANCELLED"] {
        let a = read(&json, keep(state)).unwrap();
        let b = read(&sample(), keep(state)).unwrap();
        assert_eq!(jobs_shown(&a), jobs_shown(&b), "{state}");
    }
    // The command line and a manifest's `slurm:` take it as they take the text dump.
    let out = schedlab(
        root(),
        &[
            "trace",
            "info",
            "workloads/samples/slurm/sacct.json",
            "--mapping",
            "slurm",
        ],
    );
    let info = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for line in [
        "job lines        19",
        "jobs kept        9",
        "  job steps (Slurm)    5",
    ] {
        assert!(info.contains(line), "{line}:\n{info}");
    }
}

#[test]
fn bad_json_values_name_the_file_line_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let original =
        std::fs::read_to_string(root().join("workloads/samples/slurm/sacct.json")).unwrap();
    let cases = [
        // Job 101's submission as text.
        (
            original.replacen(
                "\"submission\": 1790812860",
                "\"submission\": \"yesterday\"",
                1,
            ),
            "jobs[1].time.submission: expected epoch seconds (0: none), found \"yesterday\"",
        ),
        (
            original.replacen("\"limit\": 2880", "\"limit\": -5", 1),
            "jobs[1].time.limit: expected minutes ≥ 0, found -5",
        ),
        (
            "{\"jobs\": {}}".to_string(),
            "jobs: expected an array of jobs, found {}",
        ),
        ("{\"jobs\": [1,]}".to_string(), "not valid JSON"),
    ];
    for (body, message) in cases {
        let path = dir.path().join("bad.json");
        std::fs::write(&path, &body).unwrap();
        let e = read(&path, Keep::default()).unwrap_err();
        assert!(
            e.contains("bad.json:") && e.contains(message),
            "{message}: {e}"
        );
    }
    // Where it is: job 101's `submission` line.
    let body = original.replacen(
        "\"submission\": 1790812860",
        "\"submission\": \"yesterday\"",
        1,
    );
    let line = 1 + body[..body.find("\"yesterday\"").unwrap()]
        .matches('\n')
        .count();
    std::fs::write(dir.path().join("bad.json"), &body).unwrap();
    let e = read(&dir.path().join("bad.json"), Keep::default()).unwrap_err();
    assert!(e.contains(&format!("bad.json:{line}:")), "{line}: {e}");
    // Read leniently, the job is skipped and counted.
    let path = dir.path().join("bad.json");
    let t = read_with(
        &path,
        mapping::shipped("slurm").unwrap(),
        Keep::default(),
        true,
    )
    .unwrap();
    assert_eq!((t.workload.len(), t.malformed.count), (8, 1));
}

// Slurm's value formats, one cell at a time (src/table/slurm.rs).

#[test]
fn clocks_in_every_form_slurm_prints() {
    assert_eq!(parse_clock("00:00:00"), Some(0.0));
    assert_eq!(parse_clock("01:02:03"), Some(3723.0));
    assert_eq!(parse_clock("02:03"), Some(123.0));
    assert_eq!(parse_clock("1-00:00:00"), Some(86_400.0));
    assert_eq!(parse_clock("2-03:04:05"), Some(2.0 * 86_400.0 + 11_045.0));
    assert_eq!(parse_clock("1-12"), Some(129_600.0));
    assert_eq!(parse_clock("1-12:30"), Some(131_400.0));
    assert_eq!(parse_clock("00:01:30.250"), Some(90.25));
    // Hours past a day only without days (sacct's Elapsed never does it, sbatch may).
    assert_eq!(parse_clock("36:00:00"), Some(129_600.0));
    for bad in [
        "",
        "12",
        "1:2:3:4",
        "00:60:00",
        "1-24:00:00",
        "-1:00",
        "a:b",
        "1-",
        "1.5",
    ] {
        assert_eq!(parse_clock(bad), None, "{bad}");
    }
}

#[test]
fn job_ids_of_jobs_steps_arrays_and_het_components() {
    assert_eq!(job_id("123"), Some(JobId::Number(123)));
    assert_eq!(job_id("123.batch"), Some(JobId::Step));
    assert_eq!(job_id("123.extern"), Some(JobId::Step));
    assert_eq!(job_id("123.0"), Some(JobId::Step));
    assert_eq!(job_id("123_4.0"), Some(JobId::Step));
    assert_eq!(job_id("123_4"), Some(JobId::Named));
    assert_eq!(job_id("123_[5-9]"), Some(JobId::Named));
    assert_eq!(job_id("123+1"), Some(JobId::Named));
    assert_eq!(job_id("abc"), None);
    assert_eq!(job_id("_4"), None);
}

#[test]
fn states_lose_their_notes() {
    assert_eq!(state("CANCELLED by 0"), "CANCELLED");
    assert_eq!(state("CANCELLED+"), "CANCELLED");
    assert_eq!(state("NODE_FAIL"), "NODE_FAIL");
    assert_eq!(state(""), "");
}

#[test]
fn memory_with_units_and_old_scopes() {
    assert_eq!(parse_memory("4000M"), Some((4000.0 * 1024.0, None)));
    assert_eq!(parse_memory("16G"), Some((16.0 * 1048576.0, None)));
    assert_eq!(parse_memory("512K"), Some((512.0, None)));
    assert_eq!(parse_memory("100"), Some((100.0 * 1024.0, None)));
    assert_eq!(
        parse_memory("4000Mc"),
        Some((4000.0 * 1024.0, Some(Per::Core)))
    );
    assert_eq!(
        parse_memory("16Gn"),
        Some((16.0 * 1048576.0, Some(Per::Node)))
    );
    assert_eq!(parse_memory("0n"), Some((0.0, Some(Per::Node))));
    assert_eq!(parse_memory("1.5T"), Some((1.5 * 1073741824.0, None)));
    for bad in ["", "M", "lots", "-1G", "4Gx"] {
        assert_eq!(parse_memory(bad), None, "{bad}");
    }
}

#[test]
fn tres_lists() {
    let t = "billing=8,cpu=8,gres/gpu=2,gres/gpu:v100=2,mem=16G,node=2";
    assert!(is_tres(t));
    assert_eq!(tres(t, "cpu"), Some("8"));
    assert_eq!(tres(t, "node"), Some("2"));
    assert_eq!(tres(t, "mem"), Some("16G"));
    assert_eq!(tres(t, "gres/gpu"), Some("2"));
    assert_eq!(tres_gpus(t), Some(2.0));
    assert_eq!(tres_gpu_type(t), Some("v100"));
    // Types without the total are added up; no GPU at all is 0.
    assert_eq!(tres_gpus("cpu=4,gres/gpu:a100=1,gres/gpu:t4=2"), Some(3.0));
    assert_eq!(tres_gpus("cpu=4,mem=1G,node=1"), Some(0.0));
    assert_eq!(tres_gpu_type("cpu=4,gres/gpu=1"), None);
}

/// The header and a row of the recommended format, with the times given.
fn dump_row(id: u64, submit: &str, start: &str, end: &str) -> String {
    format!(
        "{id}|{id}|alice|physics|cpu|normal|{submit}|{submit}|{start}|{end}|00:00:00|1-00:00:00|1|1|1|1G|billing=1,cpu=1,mem=1G,node=1|COMPLETED|0:0\n"
    )
}

#[test]
fn local_times_of_a_zone_with_daylight_saving() {
    // The zone comes from the system's time-zone database (Debian's `tzdata`), as in use.
    let database = std::env::var_os("TZDIR").unwrap_or_else(|| "/usr/share/zoneinfo".into());
    if !std::path::Path::new(&database)
        .join("Europe/Prague")
        .is_file()
    {
        eprintln!(
            "skipped: no Europe/Prague in the time-zone database at {database:?} (install tzdata)"
        );
        return;
    }
    // Europe/Prague in 2026 (the time-zone database): clocks go forward at 2026-03-29 01:00
    // UTC (02:00 CET → 03:00 CEST) and back at 2026-10-25 01:00 UTC (03:00 CEST → 02:00
    // CET). Every UTC instant below is worked by hand from those two changes.
    let dir = tempfile::tempdir().unwrap();
    let header = std::fs::read_to_string(sample()).unwrap();
    let header = header.lines().next().unwrap();
    let rows = [
        // Across the spring change: 01:59 CET is 00:59 UTC, 03:01 CEST is 01:01 UTC: 2 min
        // (a fixed +01:00 would say 62 min).
        dump_row(
            1,
            "2026-03-29T01:30:00",
            "2026-03-29T01:59:00",
            "2026-03-29T03:01:00",
        ),
        // Across the autumn change: 01:30 CEST is 23:30 UTC the day before, 03:30 CET is
        // 02:30 UTC: 3 h.
        dump_row(
            2,
            "2026-10-25T01:00:00",
            "2026-10-25T01:30:00",
            "2026-10-25T03:30:00",
        ),
        // In the hour lived twice: 02:10 and 02:30 are read as their first occurrence (CEST,
        // 00:10 and 00:30 UTC); 04:00 CET is 03:00 UTC: 2 h 30 min.
        dump_row(
            3,
            "2026-10-25T02:10:00",
            "2026-10-25T02:30:00",
            "2026-10-25T04:00:00",
        ),
        // 02:30 on 2026-03-29 never showed on a clock in Prague.
        dump_row(
            4,
            "2026-03-29T01:00:00",
            "2026-03-29T02:30:00",
            "2026-03-29T04:00:00",
        ),
    ];
    let path = dir.path().join("prague.txt");
    std::fs::write(&path, format!("{header}\n{}", rows.concat())).unwrap();
    let mut m = mapping::shipped("slurm").unwrap();
    m.timezone = Some("Europe/Prague".into());

    let err = read_with(&path, m.clone(), Keep::default(), false).unwrap_err();
    assert!(
        err.contains("prague.txt:5: row 4, column `Start`: expected a local time of Europe/Prague: this one does not exist there (skipped when clocks went forward)"),
        "{err}"
    );
    assert!(err.contains("found \"2026-03-29T02:30:00\""), "{err}");

    let t = read_with(&path, m.clone(), Keep::default(), true).unwrap();
    assert_eq!((t.workload.len(), t.malformed.count), (3, 1));
    // 2026-03-29 00:30:00 UTC, job 1's submission (01:30 CET).
    assert_eq!(t.header.unix_start_time, Some(1_774_744_200));
    assert_eq!(t.header.time_zone, Some(3600));
    assert_eq!(t.header.time_zone_string.as_deref(), Some("Europe/Prague"));
    let w = &t.workload;
    assert_eq!((job(w, 1).submit, job(w, 1).runtime), (0, 120));
    // 2026-10-24 23:00:00 UTC − 2026-03-29 00:30:00 UTC.
    assert_eq!(
        (job(w, 2).submit, job(w, 2).runtime),
        (1_792_882_800 - 1_774_744_200, 10_800)
    );
    assert_eq!(
        (job(w, 3).submit, job(w, 3).runtime),
        (1_792_887_000 - 1_774_744_200, 9_000)
    );

    // A filter's local time is read in the zone too: 2026-10-01 00:00 CEST is
    // 2026-09-30 22:00 UTC, after the submissions of jobs 1 and 4 (left out before their
    // start is read).
    let keep = Keep {
        since: Some("2026-10-01T00:00:00".into()),
        ..Keep::default()
    };
    let t = read_with(&path, m.clone(), keep, false).unwrap();
    assert_eq!((t.workload.len(), t.anomalies.filtered_time), (2, 2));

    // A zone the database does not have is a mapping error.
    m.timezone = Some("Mars/Olympus_Mons".into());
    let (key, err) = m.with_keep(None).resolve("slurm").unwrap_err();
    assert_eq!(key, "timezone");
    assert!(
        err.contains("or a zone of the time-zone database such as `Europe/Prague`, found \"Mars/Olympus_Mons\" (no zone \"Mars/Olympus_Mons\" in the time-zone database"),
        "{err}"
    );
}

#[test]
fn text_dumps_with_crlf_blank_lines_and_a_byte_order_mark() {
    // Read line by line, as the `csv` crate read them: `\r\n` ends a line, blank lines are
    // skipped but counted, a byte-order mark opening the file is no part of the header.
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(sample()).unwrap();
    let mut text = String::from("\u{feff}");
    for (i, line) in full.lines().enumerate() {
        text.push_str(line);
        text.push_str("\r\n");
        if i == 0 {
            text.push_str("\r\n\n");
        }
    }
    let path = dir.path().join("crlf.txt");
    std::fs::write(&path, &text).unwrap();
    let clean = read(&sample(), Keep::default()).unwrap();
    let t = read(&path, Keep::default()).unwrap();
    assert_eq!(jobs_shown(&t), jobs_shown(&clean));
    assert_eq!((t.records, t.anomalies), (clean.records, clean.anomalies));
    // Job 103 is data row 8, on line 11: the header, two blank lines, then rows 1 to 8.
    let bad = text.replacen("|UNLIMITED|", "|2 hours|", 1);
    std::fs::write(&path, bad).unwrap();
    let err = read(&path, Keep::default()).unwrap_err();
    assert!(
        err.contains("crlf.txt:11: row 8, column `Timelimit`: expected a duration"),
        "{err}"
    );
    // Bytes that are not UTF-8 stop the reading at their line.
    let mut bytes = full.into_bytes();
    let at = bytes.iter().position(|b| *b == b'\n').unwrap() + 1 + 4;
    bytes[at] = 0xff;
    std::fs::write(&path, bytes).unwrap();
    let err = read(&path, Keep::default()).unwrap_err();
    assert!(err.contains("text that is not UTF-8"), "{err}");
    assert!(err.contains("at line 2"), "{err}");
}

#[test]
fn json_dumps_are_read_one_job_at_a_time_with_the_same_result() {
    // Keys in another order, keys schedlab does not read, and gzip: the same jobs as the
    // document read whole (a bad value still located; `bad_json_values_…`).
    let dir = tempfile::tempdir().unwrap();
    let json = root().join("workloads/samples/slurm/sacct.json");
    let whole = read(&json, Keep::default()).unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let reordered = format!(
        "{{\"warnings\": [{{\"note\": [1, {{\"jobs\": 2}}]}}], \"jobs\": {}, \"meta\": {}}}",
        doc["jobs"], doc["meta"]
    );
    let path = dir.path().join("reordered.json");
    std::fs::write(&path, &reordered).unwrap();
    let t = read(&path, Keep::default()).unwrap();
    assert_eq!(jobs_shown(&t), jobs_shown(&whole));
    assert_eq!((t.records, t.anomalies), (whole.records, whole.anomalies));
    let gz = dir.path().join("dump.json.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut e, reordered.as_bytes()).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let t = read(&gz, Keep::default()).unwrap();
    assert_eq!(jobs_shown(&t), jobs_shown(&whole));
    // Text after the document is an error even when every job read.
    std::fs::write(&path, format!("{reordered} ]")).unwrap();
    let err = read(&path, Keep::default()).unwrap_err();
    assert!(err.contains("not valid JSON: trailing characters"), "{err}");
}
