//! The Slurm executor on a real Slurm: the single-machine cluster of scripts/local-slurm.sh
//! (munge, slurmctld, slurmd). These tests are `#[ignore]`d in a plain `cargo test`;
//! `scripts/slurm-tests.sh` (run by `make test` and `.ci/run`) starts the cluster, runs them with
//! `SLURM_CONF` set, and stops it. They check that results through Slurm are byte-identical to
//! a local run, that a cancelled run resumes without resubmitting finished work, that a failing
//! node is reported with its cause, that `--detach` then `run` completes, and that inside an
//! allocation the tasks are `srun` steps, and that `sacct` of real jobs (with the cluster's
//! slurmdbd) imports as they were submitted.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

const RESULT_FILES: [&str; 4] = [
    "summary.parquet",
    "jobs.parquet",
    "timeseries.parquet",
    "reservations.parquet",
];

/// Fails (rather than passing vacuously) when no cluster is up.
fn require_cluster() {
    let ok = std::env::var_os("SLURM_CONF").is_some()
        && Command::new("sinfo")
            .arg("--noheader")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    assert!(
        ok,
        "no Slurm cluster answers: run these tests through scripts/slurm-tests.sh"
    );
}

fn schedlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(dir)
        .args(args)
        .env_remove("SLURM_JOB_ID")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every result file of `experiment` under `results`.
fn results(results: &Path, experiment: &str) -> BTreeMap<String, Vec<u8>> {
    RESULT_FILES
        .iter()
        .map(|f| {
            let path = results.join(experiment).join(f);
            (
                f.to_string(),
                fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            )
        })
        .collect()
}

/// A project with the bundled KTH trace, a fast-polling config and the given manifest.
fn project(name: &str, manifest: &str) -> tempfile::TempDir {
    let dir = common::project_with_kth();
    fs::write(
        dir.path().join("experiments").join(format!("{name}.yaml")),
        manifest,
    )
    .unwrap();
    fs::write(
        dir.path().join("schedlab.yaml"),
        "slurm:\n  poll_seconds: 2\n",
    )
    .unwrap();
    dir
}

/// 300 cells of tiny synthetic workloads: 50 replicas × 2 schedulers × 3 intervals.
const GRID: &str = "name: grid
workloads:
  tiny:
    synthetic:
      length: {jobs: 300}
      users:
        - name: u
          count: 4
          arrivals: {lambda: 6.944e-5, delta: 2.778e-4, mu: 2.778e-3}
          runtime: [[1, 0.0], [600, 0.5], [7200, 1.0]]
          procs: {log_uniform: [1, 32]}
clusters:
  pool: {procs: 64}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
replicas: 50
grid:
  axes:
    scheduler: [fcfs, easy]
    interval: [null, 600, 3600]
";

fn entries(results: &Path) -> usize {
    let Ok(shards) = fs::read_dir(results.join(".schedlab/entries")) else {
        return 0;
    };
    shards
        .flatten()
        .map(|s| fs::read_dir(s.path()).map_or(0, |d| d.count()))
        .sum()
}

fn active_jobs(name_prefix: &str) -> usize {
    let out = Command::new("squeue")
        .args(["--noheader", "--format=%j|%T"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(name_prefix))
        .count()
}

#[test]
#[ignore = "needs a Slurm cluster: scripts/slurm-tests.sh"]
fn shipped_experiments_through_slurm_equal_a_local_run() {
    require_cluster();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("schedlab.yaml");
    fs::write(&config, "slurm:\n  poll_seconds: 2\n").unwrap();
    let slurm_results = tmp.path().join("slurm");
    let local_results = tmp.path().join("local");
    // The shipped experiments by name: a user's own studies in experiments/ are not run here.
    let manifests: Vec<String> = common::shipped::SHIPPED_EXPERIMENTS
        .iter()
        .map(|name| format!("experiments/{name}.yaml"))
        .collect();
    let manifests: Vec<&str> = manifests.iter().map(String::as_str).collect();
    let out = schedlab(
        &repo,
        &[
            &[
                "run",
                "--executor",
                "slurm",
                "--config",
                config.to_str().unwrap(),
                "--results",
                slurm_results.to_str().unwrap(),
            ][..],
            &manifests,
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("slurm: submitted"),
        "{}",
        stderr(&out)
    );
    let out = schedlab(
        &repo,
        &[
            &[
                "run",
                "-q",
                "-j",
                "2",
                "--results",
                local_results.to_str().unwrap(),
            ][..],
            &manifests,
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let mut experiments = 0;
    for name in common::shipped::SHIPPED_EXPERIMENTS {
        assert_eq!(
            results(&slurm_results, name),
            results(&local_results, name),
            "{name}: Slurm and local results differ"
        );
        experiments += 1;
    }
    assert!(experiments >= 3);
}

#[test]
#[ignore = "needs a Slurm cluster: scripts/slurm-tests.sh"]
fn a_cancelled_grid_resumes_without_resubmitting_finished_work_and_equals_a_local_run() {
    require_cluster();
    let p = project("grid", GRID);
    // One task at a time, so that Ctrl-C finds work finished, running and queued.
    fs::write(
        p.path().join("schedlab.yaml"),
        "slurm:\n  poll_seconds: 1\n  max_parallel: 1\n  max_tasks: 30\n",
    )
    .unwrap();
    let results_dir = p.path().join("results");
    let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(p.path())
        .args(["run", "--executor", "slurm"])
        .env_remove("SLURM_JOB_ID")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while entries(&results_dir) < 10 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(entries(&results_dir) >= 10, "no progress through Slurm");
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted:"), "{err}");
    assert!(err.contains("cancelled Slurm job"), "{err}");
    // Cancelled tasks may show as COMPLETING for a moment; none may stay queued or running.
    let start = Instant::now();
    while active_jobs("schedlab-") > 0 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(active_jobs("schedlab-"), 0, "scancel left tasks queued");

    // Entries are whole or absent: a cancelled task leaves no half entry.
    let done = entries(&results_dir);
    assert!(done < 300, "the cancel came too late to test resumption");
    fs::write(
        p.path().join("schedlab.yaml"),
        "slurm:\n  poll_seconds: 1\n",
    )
    .unwrap();
    let log = p.path().join("events.jsonl");
    let out = schedlab(
        p.path(),
        &[
            "run",
            "--executor",
            "slurm",
            "--events",
            log.to_str().unwrap(),
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let hits = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"outcome\":\"hit\""))
        .count();
    assert_eq!(hits, done, "finished nodes are cache hits");
    assert!(
        err.contains(&format!("submitted {} nodes", 300 - done)),
        "only the missing nodes are submitted: {err}"
    );
    let out = schedlab(p.path(), &["run", "-q", "--results", "local"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        results(&results_dir, "grid"),
        results(&p.path().join("local"), "grid")
    );
}

#[test]
#[ignore = "needs a Slurm cluster: scripts/slurm-tests.sh"]
fn a_failing_node_is_reported_with_its_cause_and_only_it_is_resubmitted() {
    require_cluster();
    let p = project(
        "mixed",
        "workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 500}
  nomax: {trace: ../workloads/nomax.swf}
schedulers:
  easy: {policy: easy}
",
    );
    fs::write(
        p.path().join("workloads/nomax.swf"),
        // A malformed job line, found only when the cell reads the trace (`plan` refuses a
        // trace without MaxProcs itself since issue 37).
        "; MaxProcs: 4\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n2 x\n",
    )
    .unwrap();
    let out = schedlab(p.path(), &["run", "--executor", "slurm"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("failed: mixed/nomax"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("nomax.swf:3: expected 18 fields"), "{line}");
    assert!(line.contains("array task"), "{line}");
    assert!(line.contains(".log"), "names the task log: {line}");
    assert!(err.contains("not run: mixed (needs mixed/nomax"), "{err}");
    // `status` shows the failure from the task log.
    let status = schedlab(p.path(), &["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("failed mixed/nomax"), "{text}");
    // The good node is cached; only the failing one is submitted again.
    let out = schedlab(p.path(), &["run", "--executor", "slurm"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("submitted 1 nodes"), "{err}");
}

#[test]
#[ignore = "needs a Slurm cluster: scripts/slurm-tests.sh"]
fn detach_then_run_completes_without_submitting_twice() {
    require_cluster();
    let p = project("grid", GRID);
    fs::write(
        p.path().join("schedlab.yaml"),
        "executor: slurm\nslurm:\n  poll_seconds: 1\n  max_parallel: 1\n  max_tasks: 20\n",
    )
    .unwrap();
    let started = Instant::now();
    let out = schedlab(p.path(), &["run", "--detach"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("300 submitted"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "--detach returns after submitting"
    );
    // While the tasks are queued, a second detached run submits nothing.
    let out = schedlab(p.path(), &["run", "--detach"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("0 submitted"), "{err}");
    let status = schedlab(p.path(), &["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("queued or running on Slurm"), "{text}");
    assert!(
        text.lines().filter(|l| l.starts_with("batch ")).count() == 1,
        "{text}"
    );
    let out = schedlab(p.path(), &["run"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("waiting for batch"), "{err}");
    assert!(
        !err.contains("slurm: submitted"),
        "nothing submitted twice: {err}"
    );
    let out = schedlab(
        p.path(),
        &["run", "-q", "--executor", "local", "--results", "local"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        results(&p.path().join("results"), "grid"),
        results(&p.path().join("local"), "grid")
    );
}

#[test]
#[ignore = "needs a Slurm cluster: scripts/slurm-tests.sh"]
fn inside_an_allocation_tasks_are_srun_steps() {
    require_cluster();
    let p = project(
        "small",
        "workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 1000}
clusters:
  pool: {procs: 100}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
grid:
  axes:
    scheduler: [fcfs, easy]
    interval: [null, 600]
",
    );
    let out = Command::new("salloc")
        .current_dir(p.path())
        .args(["--ntasks=2", "--time=5"])
        .arg(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", "--executor", "slurm"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("srun steps on allocation"), "{err}");
    let detach = Command::new("salloc")
        .current_dir(p.path())
        .args(["--ntasks=1", "--time=5"])
        .arg(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", "--executor", "slurm", "--detach"])
        .output()
        .unwrap();
    assert_eq!(detach.status.code(), Some(1));
    assert!(
        stderr(&detach).contains("inside an allocation"),
        "{}",
        stderr(&detach)
    );
    let out = schedlab(p.path(), &["run", "-q", "--results", "local"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        results(&p.path().join("results"), "small"),
        results(&p.path().join("local"), "small")
    );
}

/// The fields `sacct` is asked for: the format docs/sources.md ("Slurm accounting")
/// recommends.
const SACCT_FORMAT: &str = "JobIDRaw,JobID,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,AllocCPUS,ReqCPUS,NNodes,ReqMem,AllocTRES,State,ExitCode";

fn sbatch(args: &[&str]) -> String {
    let out = Command::new("sbatch")
        .args([
            "--parsable",
            "--output=/dev/null",
            "--job-name=sacct-import",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "sbatch {args:?}: {}", stderr(&out));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // `--parsable` prints `id` or `id;cluster`.
    id.split(';').next().unwrap().to_string()
}

/// What `sacct` prints for `ids`, in UTC.
fn sacct(ids: &[String]) -> String {
    let out = Command::new("sacct")
        .env("TZ", "UTC")
        .args([
            "--parsable2",
            "--allusers",
            &format!("--jobs={}", ids.join(",")),
            &format!("--format={SACCT_FORMAT}"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "sacct: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs a Slurm cluster with accounting: scripts/slurm-tests.sh"]
fn sacct_of_real_jobs_imports_as_they_were_submitted() {
    require_cluster();
    let accounting = Command::new("sacctmgr")
        .args(["-n", "list", "cluster"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        accounting,
        "no slurmdbd answers: run this test through scripts/slurm-tests.sh"
    );
    let dir = tempfile::tempdir().unwrap();
    // (id, processors, time limit in seconds; 0: UNLIMITED) of each job as submitted.
    let mut submitted: Vec<(String, u32, i64)> = vec![];
    let one = sbatch(&["-n", "1", "--time=2", "--wrap", "sleep 2"]);
    submitted.push((one, 1, 120));
    let two = sbatch(&[
        "-n",
        "2",
        "--time=1:30:00",
        "--mem-per-cpu=100M",
        "--wrap",
        "sleep 1",
    ]);
    submitted.push((two.clone(), 2, 5400));
    let failing = sbatch(&[
        "-n",
        "1",
        "--time=0-00:05:00",
        "--mem=300M",
        "--wrap",
        "sleep 1; exit 3",
    ]);
    submitted.push((failing.clone(), 1, 300));
    let steps = sbatch(&["-n", "1", "--time=2", "--wrap", "srun sleep 1"]);
    submitted.push((steps, 1, 120));
    let unlimited = sbatch(&["-n", "1", "--time=UNLIMITED", "--wrap", "sleep 1"]);
    submitted.push((unlimited, 1, 0));
    let array = sbatch(&["-n", "1", "--time=3", "--array=0-2", "--wrap", "sleep 1"]);
    // Cancelled while pending: it never starts.
    let cancelled = sbatch(&["-n", "1", "--time=2", "--begin=now+3600", "--wrap", "true"]);
    let out = Command::new("scancel").arg(&cancelled).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let mut ids: Vec<String> = submitted.iter().map(|s| s.0.clone()).collect();
    ids.push(array.clone());
    ids.push(cancelled.clone());
    // Finished when every allocation row has an end; slurmdbd records them asynchronously.
    let started = Instant::now();
    let dump = loop {
        let dump = sacct(&ids);
        let allocations: Vec<&str> = dump
            .lines()
            .skip(1)
            .filter(|l| !l.split('|').next().unwrap().contains('.'))
            .collect();
        let done = allocations.len() == 5 + 3 + 1
            && allocations.iter().all(|l| {
                !l.contains("|Unknown|") && !l.contains("RUNNING") && !l.contains("PENDING")
            });
        if done {
            break dump;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "jobs not finished in sacct after 120 s:\n{dump}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let path = dir.path().join("sacct.txt");
    fs::write(&path, &dump).unwrap();

    // The array's tasks are jobs of their own: their JobIDRaw from the dump's JobID.
    let header: Vec<&str> = dump.lines().next().unwrap().split('|').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = dump
        .lines()
        .skip(1)
        .map(|l| l.split('|').collect())
        .collect();
    for r in &rows {
        if r[col("JobID")].starts_with(&format!("{array}_")) && !r[col("JobID")].contains('.') {
            submitted.push((r[col("JobIDRaw")].to_string(), 1, 180));
        }
    }
    assert_eq!(submitted.len(), 5 + 3, "{dump}");
    // Slurm's own record: submit ≤ start ≤ end for every job that ran.
    let at = |t: &str| schedlab::table::time::parse_datetime(t, 0).unwrap_or_else(|| panic!("{t}"));
    for r in &rows {
        if r[col("JobIDRaw")] == cancelled {
            continue;
        }
        let (s, b, e) = (at(r[col("Submit")]), at(r[col("Start")]), at(r[col("End")]));
        assert!(s <= b && b <= e, "{r:?}");
    }

    let reading = schedlab::table::mapping::shipped("slurm")
        .unwrap()
        .resolve("slurm")
        .unwrap();
    let options = schedlab::swf::ReadOptions {
        format: schedlab::swf::TraceFormat::Table(std::sync::Arc::new(reading)),
        ..Default::default()
    };
    let t = schedlab::api::trace::load(&path, false, &options)
        .unwrap_or_else(|e| panic!("{e}\n{dump}"));
    let w = &t.workload;
    assert_eq!(t.anomalies.never_started, 1, "{dump}");
    // Each of the 8 jobs that ran has its batch step; `srun` made one more.
    assert!(t.anomalies.job_steps >= 9, "{dump}");
    assert_eq!(w.len(), 8, "{dump}");
    let user = String::from_utf8_lossy(&Command::new("id").arg("-un").output().unwrap().stdout)
        .trim()
        .to_string();
    let origin = t.header.unix_start_time.unwrap();
    for (id, procs, limit) in &submitted {
        let job = w
            .jobs
            .iter()
            .find(|j| j.id.to_string() == *id)
            .unwrap_or_else(|| panic!("job {id} imported:\n{dump}"));
        let r = rows.iter().find(|r| r[col("JobIDRaw")] == id).unwrap();
        assert_eq!(job.procs, *procs, "job {id}");
        let runtime = at(r[col("End")]) - at(r[col("Start")]);
        assert!(runtime >= 1.0, "job {id} ran: {r:?}");
        assert_eq!(job.runtime as f64, runtime, "job {id}");
        // UNLIMITED: the run time stands for the request.
        let expected_limit = if *limit == 0 { job.runtime } else { *limit };
        assert_eq!(job.requested_time, expected_limit, "job {id}");
        assert_eq!(job.submit + origin, at(r[col("Submit")]) as i64, "job {id}");
        assert_eq!(w.names.users[&job.user], user, "job {id}");
    }
    assert!(w.jobs.iter().all(|j| j.id.to_string() != cancelled));
    // 100 MB per CPU on 2 CPUs: 200 MB on the one node.
    let job = w.jobs.iter().find(|j| j.id.to_string() == two).unwrap();
    match w.request(job).shape {
        schedlab::sim::topology::Shape::Nodes { count, per_node } => {
            assert_eq!(
                (count, per_node.cores, per_node.memory_kb),
                (1, 2, 200 * 1024)
            );
        }
        other => panic!("{other:?}"),
    }
    // The states as Slurm recorded them, notes dropped: the failing job alone FAILED, the
    // cancelled one CANCELLED (counted as never started).
    let keep = schedlab::table::Keep {
        status: Some(vec!["FAILED".into()]),
        ..Default::default()
    };
    let reading = schedlab::table::mapping::shipped("slurm")
        .unwrap()
        .with_keep(Some(keep))
        .resolve("slurm")
        .unwrap();
    let options = schedlab::swf::ReadOptions {
        format: schedlab::swf::TraceFormat::Table(std::sync::Arc::new(reading)),
        ..Default::default()
    };
    let t = schedlab::api::trace::load(&path, false, &options).unwrap();
    let ids: Vec<String> = t.workload.jobs.iter().map(|j| j.id.to_string()).collect();
    assert_eq!(ids, [failing], "{dump}");
    // And the command line reads it as well.
    let out = schedlab(
        dir.path(),
        &["trace", "info", "sacct.txt", "--mapping", "slurm"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let info = String::from_utf8_lossy(&out.stdout);
    assert!(info.contains("jobs kept        8"), "{info}");
}
