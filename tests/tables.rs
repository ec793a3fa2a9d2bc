//! Job tables (CSV and Parquet) read through column mappings (docs/sources.md, "Job tables"):
//! each shipped mapping on its bundled sample, with the jobs checked by hand against the
//! sample's rows; filters counted by reason; located errors; the command line and manifests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schedlab::sim::topology::{JobRequest, NodeDemand, Shape};
use schedlab::sim::{Job, Workload};
use schedlab::swf::{ReadOptions, Trace, TraceFormat};
use schedlab::table::{Keep, mapping};

mod common;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sample(path: &str) -> PathBuf {
    root().join("workloads/samples").join(path)
}

use common::{schedlab_in as schedlab, text};

fn options(name: &str, keep: Keep) -> ReadOptions {
    let reading = mapping::shipped(name)
        .unwrap()
        .with_keep(Some(keep))
        .resolve(name)
        .unwrap();
    ReadOptions {
        format: TraceFormat::Table(Arc::new(reading)),
        ..ReadOptions::default()
    }
}

fn read(path: &Path, name: &str, keep: Keep, lenient: bool) -> Result<Trace, String> {
    schedlab::api::trace::load(path, lenient, &options(name, keep)).map_err(|e| e.to_string())
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
    let r: &JobRequest = w.request(j);
    w.constraints.get(r.constraint).properties.clone()
}

#[test]
fn helios_sample_every_field_by_hand() {
    let t = read(
        &sample("helios/cluster_log.csv"),
        "helios",
        Keep::default(),
        false,
    )
    .unwrap();
    let w = &t.workload;
    // 24 rows: 5000014 ran 0 s, 5000022 never started.
    assert_eq!((t.records, w.len()), (24, 22));
    assert_eq!(t.anomalies.zero_runtime, 1);
    assert_eq!(t.anomalies.unknown_runtime, 1);
    // Submit times count from the first row's 2020-06-01 00:00:10 at UTC+8.
    assert_eq!(t.header.unix_start_time, Some(1_590_940_810));
    let j = job(w, 5000001);
    assert_eq!(
        (j.submit, j.runtime, j.requested_time, j.procs),
        (0, 3600, 3600, 4)
    );
    assert_eq!(shape(w, j), (1, 4, 0, 1));
    let j = job(w, 5000002);
    assert_eq!((j.submit, j.runtime, j.procs), (290, 7200, 32));
    assert_eq!(shape(w, j), (1, 32, 0, 8));
    // 2 nodes, 64 CPUs, 16 GPUs: 32 cores and 8 GPUs on each.
    let j = job(w, 5000003);
    assert_eq!((j.submit, j.runtime, j.procs), (590, 5400, 64));
    assert_eq!(shape(w, j), (2, 32, 0, 8));
    let j = job(w, 5000013);
    assert_eq!((j.submit, j.runtime, j.procs), (5390, 7200, 128));
    assert_eq!(shape(w, j), (4, 32, 0, 8));
    // A CPU-only job: no GPUs.
    assert_eq!(shape(w, job(w, 5000004)), (1, 8, 0, 0));
    // Names: users and virtual clusters (queues) numbered in order of appearance.
    assert_eq!(w.names.users[&job(w, 5000001).user], "uAlice");
    assert_eq!(w.names.users[&job(w, 5000013).user], "uFrank");
    assert_eq!(job(w, 5000009).user, job(w, 5000001).user);
    assert_eq!(w.queue_name(job(w, 5000003).queue), Some("vcBlue"));
    assert_eq!(w.queue_name(job(w, 5000007).queue), Some("vcGreen"));

    // Completed jobs only: 7 rows of other states are left out and counted.
    let keep = Keep {
        status: Some(vec!["completed".into()]),
        ..Keep::default()
    };
    let t = read(&sample("helios/cluster_log.csv"), "helios", keep, false).unwrap();
    assert_eq!(t.workload.len(), 17);
    assert_eq!(t.anomalies.filtered_status, 7);
    assert_eq!(t.anomalies.zero_runtime + t.anomalies.unknown_runtime, 0);
    assert_eq!(t.anomalies.skipped(), 7);
}

#[test]
fn pm100_parquet_sample_every_field_by_hand() {
    let path = sample("pm100/job_table.parquet");
    let t = read(&path, "pm100", Keep::default(), false).unwrap();
    let w = &t.workload;
    assert_eq!((t.records, w.len()), (12, 11));
    // 106 was cancelled before it started: no run time.
    assert_eq!(t.anomalies.unknown_runtime, 1);
    // 2020-05-04 08:00:00 at UTC+2 (naive timestamps).
    assert_eq!(t.header.unix_start_time, Some(1_588_572_000));
    let j = job(w, 102);
    assert_eq!(
        (j.submit, j.runtime, j.requested_time, j.procs),
        (100, 1800, 3600, 64)
    );
    // 240000 MB per node; 8 GPUs on 2 nodes.
    assert_eq!(shape(w, j), (2, 32, 240_000 * 1024, 4));
    assert_eq!((j.user, j.group), (12, 3));
    assert_eq!(w.queue_name(j.queue), Some("m100_usr_prod"));
    let j = job(w, 103);
    assert_eq!((j.runtime, j.requested_time, j.procs), (600, 1800, 1));
    assert_eq!(shape(w, j), (1, 1, 7600 * 1024, 0));
    // TIMEOUT at its 120-minute limit.
    let j = job(w, 105);
    assert_eq!((j.runtime, j.requested_time), (7200, 7200));
    assert_eq!(shape(w, j), (4, 32, 240_000 * 1024, 4));

    // One partition: 4 rows of others counted; 106 still has no run time.
    let keep = Keep {
        partitions: Some(vec!["m100_usr_prod".into()]),
        ..Keep::default()
    };
    let t = read(&path, "pm100", keep, false).unwrap();
    assert_eq!(t.workload.len(), 7);
    assert_eq!(t.anomalies.filtered_partition, 4);
    assert_eq!(t.anomalies.unknown_runtime, 1);

    // A time window in local time: rows from 08:20 on (108 to 112).
    let keep = Keep {
        since: Some("2020-05-04T08:20:00+02:00".into()),
        until: Some("2020-05-04 09:00:00".into()),
        ..Keep::default()
    };
    let t = read(&path, "pm100", keep, false).unwrap();
    let ids: Vec<u64> = t.workload.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [108, 109, 110, 111, 112]);
    assert_eq!(t.anomalies.filtered_time, 7);
    assert_eq!(t.workload.jobs[0].submit, 0);
}

#[test]
fn alibaba_pai_sample_every_field_by_hand() {
    let t = read(
        &sample("alibaba_pai/pai_task_table.csv"),
        "alibaba_pai",
        Keep::default(),
        false,
    )
    .unwrap();
    let w = &t.workload;
    // 14 tasks: one Running (no end), one Waiting (no launch), one ended as it launched.
    assert_eq!((t.records, w.len()), (14, 11));
    assert_eq!(t.anomalies.unknown_runtime, 1);
    assert_eq!(t.anomalies.unknown_submit, 1);
    assert_eq!(t.anomalies.zero_runtime, 1);
    // Half a GPU, twice: rounded up and counted.
    assert_eq!(t.anomalies.fractional_amounts, 2);
    assert_eq!(t.header.unix_start_time, Some(1_739_162));
    // Headerless rows have no numeric id: the row number is the job number.
    let j = job(w, 1);
    assert_eq!((j.submit, j.runtime, j.procs), (0, 38, 6));
    // 29.296875 GB per instance; 50 % of a GPU holds a whole MISC GPU.
    assert_eq!(shape(w, j), (1, 6, 30_720_000, 1));
    assert_eq!(gpu_type(w, j), ["MISC"]);
    // The parameter server: no GPU, no type.
    let j = job(w, 2);
    assert_eq!(shape(w, j), (1, 4, 10 << 20, 0));
    assert!(gpu_type(w, j).is_empty());
    // 2 instances of 800 % CPU and 100 % GPU: 16 processors, a V100 on each node.
    let j = job(w, 3);
    assert_eq!((j.submit, j.runtime, j.procs), (138, 3600, 16));
    assert_eq!(shape(w, j), (2, 8, 50 << 20, 1));
    assert_eq!(gpu_type(w, j), ["V100"]);
    let j = job(w, 9);
    assert_eq!((j.runtime, j.procs), (900, 32));
    assert_eq!(shape(w, j), (2, 16, 120 << 20, 8));
    assert_eq!(gpu_type(w, job(w, 8)), ["V100M32"]);
    assert_eq!(gpu_type(w, job(w, 14)), ["T4"]);
}

#[test]
fn philly_sample_every_field_by_hand() {
    let path = sample("philly/cluster_job_log.csv");
    let t = read(&path, "philly", Keep::default(), false).unwrap();
    let w = &t.workload;
    assert_eq!((t.records, w.len()), (16, 15));
    assert_eq!(t.anomalies.unknown_runtime, 1);
    // 2017-10-03 09:00:00 at UTC-7.
    assert_eq!(t.header.unix_start_time, Some(1_507_046_400));
    // Ids are application names: the row number is the job number.
    let j = job(w, 2);
    assert_eq!((j.submit, j.runtime, j.procs), (120, 7200, 1));
    assert_eq!(shape(w, j), (1, 1, 0, 4));
    // 2 machines, 16 GPUs: 8 on each, one processor a machine.
    let j = job(w, 5);
    assert_eq!((j.submit, j.runtime, j.procs), (900, 10800, 2));
    assert_eq!(shape(w, j), (2, 1, 0, 8));
    assert_eq!(w.queue_name(j.queue), Some("vc1f3e"));
    // Successful jobs only: 5 Killed or Failed.
    let keep = Keep {
        status: Some(vec!["Pass".into()]),
        ..Keep::default()
    };
    let t = read(&path, "philly", keep, false).unwrap();
    assert_eq!((t.workload.len(), t.anomalies.filtered_status), (11, 5));
}

/// A CSV table written to a temporary folder.
fn table(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

const HELIOS_HEADER: &str = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";

#[test]
fn bad_values_name_file_line_row_column_value_and_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let bad = table(
        dir.path(),
        "t.csv",
        &format!(
            "{HELIOS_HEADER}1,u,vc,1,1,1,COMPLETED,2020-06-01 00:00:00,2020-06-01 00:00:00,2020-06-01 00:01:00,60,0\n\
             2,u,vc,1,1,1,COMPLETED,yesterday,2020-06-01 00:00:00,2020-06-01 00:01:00,60,0\n\
             3,u,vc,x,1,1,COMPLETED,2020-06-01 00:00:00,2020-06-01 00:00:00,2020-06-01 00:01:00,60,0\n"
        ),
    );
    let err = read(&bad, "helios", Keep::default(), false).unwrap_err();
    assert!(
        err.contains(
            "/t.csv:3: row 2, column `submit_time`: expected a time: epoch seconds (in the column's unit) or a date-time such as 2020-06-09 18:41:01, found \"yesterday\""
        ),
        "{err}"
    );
    // Leniently, both bad rows are skipped and counted.
    let t = read(&bad, "helios", Keep::default(), true).unwrap();
    assert_eq!((t.workload.len(), t.malformed.count), (1, 2));
    assert!(
        t.malformed.first[1].to_string().contains(
            "row 3, column `gpu_num`: expected a number ≥ 0 (in the column's unit), found \"x\""
        ),
        "{}",
        t.malformed.first[1]
    );

    // The wrong mapping: a Parquet mapping on CSV text, and a mapping whose column the table
    // lacks (named with the ones the table has).
    let err = read(&bad, "pm100", Keep::default(), false).unwrap_err();
    assert!(
        err.contains("expected a Parquet file, found not a readable Parquet file"),
        "{err}"
    );
    let err = read(&bad, "philly", Keep::default(), false).unwrap_err();
    assert!(
        err.contains("t.csv: column `jobid`: expected a column of that name (mapping `philly`), found the columns job_id, user, vc,"),
        "{err}"
    );

    // An end before the start.
    let back = table(
        dir.path(),
        "back.csv",
        &format!(
            "{HELIOS_HEADER}1,u,vc,1,1,1,COMPLETED,2020-06-01 00:00:00,2020-06-01 00:10:00,2020-06-01 00:01:00,,0\n"
        ),
    );
    let err = read(&back, "helios", Keep::default(), false).unwrap_err();
    assert!(
        err.contains("row 1, column `end_time`: expected an end at or after the row's start, found \"2020-06-01 00:01:00\""),
        "{err}"
    );

    // A row of another width.
    let short = table(dir.path(), "short.csv", &format!("{HELIOS_HEADER}1,u,vc\n"));
    let err = read(&short, "helios", Keep::default(), false).unwrap_err();
    assert!(
        err.contains(
            "short.csv:2: row 1, column `(row)`: expected 12 fields, as the header has, found 3"
        ),
        "{err}"
    );
}

#[test]
fn a_table_that_yields_no_job_is_an_error() {
    let keep = Keep {
        status: Some(vec!["RUNNING".into()]),
        ..Keep::default()
    };
    let err = read(&sample("helios/cluster_log.csv"), "helios", keep, false).unwrap_err();
    assert!(
        err.contains("expected at least one job that can run, found 24 rows, none kept (24 skipped: 24 by the filters; 0 malformed)"),
        "{err}"
    );
}

#[test]
fn trace_info_and_simulate_take_a_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample("helios/cluster_log.csv");
    let p = path.to_str().unwrap();
    let out = schedlab(
        dir.path(),
        &[
            "trace",
            "info",
            p,
            "--mapping",
            "helios",
            "--keep-status",
            "COMPLETED,TIMEOUT",
            "--format",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["jobs"], 18);
    assert_eq!(info["anomalies"]["filtered_status"], 6);
    let out = schedlab(
        dir.path(),
        &[
            "trace",
            "info",
            p,
            "--mapping",
            "helios",
            "--keep-status",
            "COMPLETED",
        ],
    );
    assert!(
        text(&out.stdout).contains("  status not kept      7"),
        "{}",
        text(&out.stdout)
    );

    // A mapping file works as a shipped mapping does.
    let file = dir.path().join("mine.yaml");
    std::fs::write(
        &file,
        "columns:\n  submit: submit_time\n  duration: duration\n  procs: cpu_num\n  gpus: gpu_num\n",
    )
    .unwrap();
    let out = schedlab(
        dir.path(),
        &[
            "trace",
            "info",
            p,
            "--mapping",
            file.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["jobs"], 22);

    // Without a mapping, a table is refused with the way out.
    let out = schedlab(dir.path(), &["trace", "info", p]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("is read through a column mapping, and none was given"),
        "{err}"
    );
    assert!(
        err.contains(
            "hint: pass --mapping NAME|FILE (shipped: pm100, philly, helios, alibaba_pai, slurm"
        ),
        "{err}"
    );
    let out = schedlab(dir.path(), &["trace", "info", p, "--mapping", "venus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no shipped mapping named `venus`"));

    let out = schedlab(
        dir.path(),
        &[
            "simulate",
            p,
            "--mapping",
            "helios",
            "--procs",
            "512",
            "-s",
            "easy",
            "--format",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["jobs"], 22, "{summary}");
}

/// An Int64 column of `jobs.parquet`, by job id, for one cell (every cell when empty).
fn jobs_column(path: &Path, cell: &str, name: &str) -> std::collections::BTreeMap<i64, i64> {
    use arrow_array::{Array, Int64Array, StringArray};
    let mut out = std::collections::BTreeMap::new();
    for b in common::parquet_batches(path) {
        let col = |n: &str| {
            b.column_by_name(n)
                .unwrap_or_else(|| panic!("no column {n}"))
        };
        let cells = col("cell");
        let cells = cells.as_any().downcast_ref::<StringArray>().unwrap();
        let ids = col("job_id");
        let ids = ids.as_any().downcast_ref::<Int64Array>().unwrap();
        let values = col(name);
        let values = values.as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            if (cells.value(i) == cell || cell.is_empty()) && !values.is_null(i) {
                out.insert(ids.value(i), values.value(i));
            }
        }
    }
    out
}

#[test]
fn gpu_requests_and_types_reach_the_simulator() {
    let project = common::project::Project::new();
    std::fs::write(
        project.path().join("workloads/gpus.csv"),
        "id,submit,seconds,gpus,type\n\
         1,1000,100,8,V100\n\
         2,1000,50,1,T4\n\
         3,1000,10,1,V100\n\
         4,1000,10,2,\n",
    )
    .unwrap();
    let manifest = "workloads:
  gpus:
    table: ../workloads/gpus.csv
    mapping:
      columns: {id: id, submit: submit, duration: seconds, gpus: gpus, gpu_type: type}
clusters:
  lab:
    topology:
      lab:
        nodes:
          - {name: v100, count: 1, cores: 8, memory: 64 GiB, gpus: 8, properties: [V100]}
          - {name: t4, count: 1, cores: 8, memory: 64 GiB, gpus: 8, properties: [T4]}
schedulers:
  easy: {policy: easy}
";
    project.manifest("gpus", manifest);
    let (out, _) = project.run(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let jobs = project.path().join("results/gpus/jobs.parquet");
    let waits = jobs_column(&jobs, "", "wait");
    let gpus = jobs_column(&jobs, "", "gpus");
    // Job 1 holds the V100 node's 8 GPUs; job 2 takes a T4. Job 3 asks for a V100: the T4 node
    // has 7 GPUs free, yet it waits for job 1 to end. Job 4 names no type: EASY starts it at
    // once on the T4 node (FCFS would keep it behind job 3).
    assert_eq!(gpus, [(1, 8), (2, 1), (3, 1), (4, 2)].into());
    assert_eq!(waits, [(1, 0), (2, 0), (3, 100), (4, 0)].into());

    // The same jobs without the type column: job 3 starts at once on the T4 node.
    project.manifest("gpus", &manifest.replace(", gpu_type: type", ""));
    let (out, _) = project.run(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let waits = jobs_column(&jobs, "", "wait");
    assert_eq!(waits, [(1, 0), (2, 0), (3, 0), (4, 0)].into());
}

/// The first block of `lang` in docs/sources.md after `marker`.
fn doc_block(marker: &str, lang: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs/sources.md")).unwrap();
    let section = &doc[doc.find(marker).unwrap_or_else(|| panic!("no {marker}"))..];
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).unwrap() + fence.len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

/// Copies the bundled samples into `dir/workloads/samples`.
fn copy_samples(dir: &Path) {
    for name in ["pm100", "philly", "helios", "alibaba_pai"] {
        let to = dir.join("workloads/samples").join(name);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(sample(name)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn the_documented_table_manifest_runs() {
    let project = common::project::Project::new();
    copy_samples(project.path());
    project.manifest("tables", &doc_block("## Job tables", "yaml"));
    let (out, _) = project.run(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let m = schedlab::manifest::load(&project.path().join("experiments/tables.yaml")).unwrap();
    assert_eq!(m.cells.len(), 2);
    // The filter keeps the 17 completed jobs; the inline mapping reads all 22 that ran.
    let ids = jobs_column(
        &project.path().join("results/tables/jobs.parquet"),
        "",
        "gpus",
    );
    assert!(ids.contains_key(&5_000_013));
    let summary = common::parquet_batches(&project.path().join("results/tables/summary.parquet"));
    let rows: usize = summary.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 2);
}

#[test]
fn the_documented_commands_and_sample_readmes_run_as_written() {
    let mut commands: Vec<String> = doc_block("## Job tables", "sh")
        .lines()
        .filter(|l| l.starts_with("schedlab "))
        .map(str::to_string)
        .collect();
    assert_eq!(commands.len(), 3);
    for name in ["pm100", "philly", "helios", "alibaba_pai"] {
        let readme = std::fs::read_to_string(sample(name).join("README.md")).unwrap();
        assert!(
            readme.contains("written by us from the published schema"),
            "{name}"
        );
        let start = readme.find("```sh\n").unwrap() + 6;
        let line = readme[start..].lines().next().unwrap().to_string();
        commands.push(line);
    }
    for command in commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = schedlab(root(), &args);
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
    }
}
