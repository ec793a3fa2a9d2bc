//! The Slurm executor on a real Slurm: the single-machine cluster of scripts/local-slurm.sh
//! (munge, slurmctld, slurmd). These tests are `#[ignore]`d in a plain `cargo test`;
//! `scripts/slurm-tests.sh` (run by `make test` and `.ci/run`) starts the cluster, runs them with
//! `SLURM_CONF` set, and stops it. They check that results through Slurm are byte-identical to
//! a local run, that a cancelled run resumes without resubmitting finished work, that a failing
//! node is reported with its cause, that `--detach` then `run` completes, and that inside an
//! allocation the tasks are `srun` steps, and that `sacct` of real jobs (with the cluster's
//! slurmdbd) — a few dozen of varied shapes — imports as they were submitted, from
//! `--parsable2` and from `--json` alike.

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
    // Cells of 3,000 jobs, so that the grid's 300 nodes take seconds in the one array task it
    // packs into (`max_parallel: 1`): Ctrl-C then finds nodes finished, running and not begun.
    // With 300-job cells the task could finish before the cancel reached it on a loaded machine
    // (CI, 2026-11-30: "the cancel came too late").
    let p = project("grid", &GRID.replace("{jobs: 300}", "{jobs: 3000}"));
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

/// What `sacct` prints for `ids`, in UTC: `--parsable2` with the recommended format, or
/// `--json`.
fn sacct(ids: &[String], json: bool) -> String {
    let jobs = format!("--jobs={}", ids.join(","));
    let format = format!("--format={SACCT_FORMAT}");
    let args: Vec<&str> = if json {
        vec!["--json", "--allusers", &jobs]
    } else {
        vec!["--parsable2", "--allusers", &jobs, &format]
    };
    let out = Command::new("sacct")
        .env("TZ", "UTC")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "sacct: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A job as submitted, and what its import must give.
struct Submitted {
    id: String,
    procs: u32,
    /// The nodes it ran on.
    nodes: u32,
    /// The time limit in seconds as submitted (Slurm keeps whole minutes, rounding up);
    /// 0: UNLIMITED.
    limit: i64,
    /// The memory asked for on each of its nodes, in KB, where the job names it.
    memory_kb: Option<u64>,
    state: &'static str,
}

/// Every field of every job, with its request and required properties, in order.
fn jobs_shown(t: &schedlab::swf::Trace) -> Vec<String> {
    let w = &t.workload;
    w.jobs
        .iter()
        .map(|j| {
            let r = w.request(j);
            let c = w.constraints.get(r.constraint);
            format!("{j:?} {:?} {:?} {c:?}", r.shape, r.memory_kb)
        })
        .collect()
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
    const MB: u64 = 1024;
    // Jobs of varied shapes on one node of the test cluster (2 CPUs each): time limits in every
    // form sbatch takes, memory per job and per CPU, CPUs per task, a whole node, steps, a
    // failing job, a job cancelled while it runs.
    // (sbatch arguments, CPUs, time limit in seconds, KB asked on the node, final state).
    type JobShape<'a> = (&'a [&'a str], u32, i64, Option<u64>, &'a str);
    let shapes: [JobShape; 14] = [
        (&["-n", "1", "--time=2"], 1, 120, None, "COMPLETED"),
        (
            &["-n", "2", "--time=1:30:00", "--mem-per-cpu=100M"],
            2,
            5400,
            Some(200 * MB),
            "COMPLETED",
        ),
        (&["-n", "1", "--time=UNLIMITED"], 1, 0, None, "COMPLETED"),
        (&["-n", "1", "--time=1-0"], 1, 86_400, None, "COMPLETED"),
        (&["-n", "1", "--time=2-12"], 1, 216_000, None, "COMPLETED"),
        (&["-n", "1", "--time=1-2:30"], 1, 95_400, None, "COMPLETED"),
        // Minutes and seconds: Slurm keeps whole minutes, rounding up (04:00).
        (&["-n", "1", "--time=3:30"], 1, 240, None, "COMPLETED"),
        (
            &["-n", "1", "--time=2", "--mem=1G"],
            1,
            120,
            Some(1024 * MB),
            "COMPLETED",
        ),
        (
            &["-n", "2", "--time=2", "--mem-per-cpu=50M"],
            2,
            120,
            Some(100 * MB),
            "COMPLETED",
        ),
        (
            &["-N", "1", "-n", "2", "--time=2", "--mem=500M"],
            2,
            120,
            Some(500 * MB),
            "COMPLETED",
        ),
        (
            &["-n", "1", "-c", "2", "--time=2"],
            2,
            120,
            None,
            "COMPLETED",
        ),
        // A whole node: both CPUs.
        (
            &["-n", "1", "--exclusive", "--time=2"],
            2,
            120,
            None,
            "COMPLETED",
        ),
        (
            &[
                "-n",
                "1",
                "--time=0-00:05:00",
                "--mem=300M",
                "--wrap",
                "sleep 1; exit 3",
            ],
            1,
            300,
            Some(300 * MB),
            "FAILED",
        ),
        (
            &["-n", "1", "--time=2", "--wrap", "srun sleep 1"],
            1,
            120,
            None,
            "COMPLETED",
        ),
    ];
    let mut submitted: Vec<Submitted> = vec![];
    for (args, procs, limit, memory_kb, state) in shapes {
        let mut args = args.to_vec();
        if !args.contains(&"--wrap") {
            args.extend(["--wrap", "sleep 1"]);
        }
        submitted.push(Submitted {
            id: sbatch(&args),
            procs,
            nodes: 1,
            limit,
            memory_kb,
            state,
        });
    }
    // Jobs of several nodes, on both of the cluster's: (sbatch arguments, nodes, CPUs, KB asked
    // on each node). Four tasks on two nodes of 2 CPUs are two a node.
    let several: [(&[&str], u32, u32, Option<u64>); 3] = [
        (&["-N", "2", "-n", "2", "--time=2"], 2, 2, None),
        (
            &["-N", "2", "--ntasks-per-node=2", "--time=3", "--mem=100M"],
            2,
            4,
            Some(100 * MB),
        ),
        (
            &["-N", "2", "-n", "4", "--time=2", "--mem-per-cpu=50M"],
            2,
            4,
            Some(100 * MB),
        ),
    ];
    for (args, nodes, procs, memory_kb) in several {
        let mut args = args.to_vec();
        args.extend(["--wrap", "srun sleep 1"]);
        submitted.push(Submitted {
            id: sbatch(&args),
            procs,
            nodes,
            limit: if args.contains(&"--time=3") { 180 } else { 120 },
            memory_kb,
            state: "COMPLETED",
        });
    }
    // Arrays: each task a job of its own.
    let arrays = [
        sbatch(&["-n", "1", "--time=3", "--array=0-4", "--wrap", "sleep 1"]),
        sbatch(&["-n", "1", "--time=3", "--array=1,3,5", "--wrap", "sleep 1"]),
        sbatch(&["-n", "1", "--time=3", "--array=0-3%2", "--wrap", "sleep 1"]),
    ];
    // Cancelled while it ran: kept, with the time it ran.
    let running = sbatch(&["-n", "1", "--time=5", "--wrap", "sleep 60"]);
    let started = Instant::now();
    loop {
        let out = Command::new("squeue")
            .args(["--noheader", "--format=%T", &format!("--jobs={running}")])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&out.stdout).trim() == "RUNNING" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "job {running} did not start"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    std::thread::sleep(Duration::from_secs(2));
    let out = Command::new("scancel").arg(&running).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    submitted.push(Submitted {
        id: running.clone(),
        procs: 1,
        nodes: 1,
        limit: 300,
        memory_kb: None,
        state: "CANCELLED",
    });
    // Never started: cancelled while pending (a begin time ahead, a hold) and a heterogeneous
    // job (its two components, the first held so that it cannot start) cancelled while pending.
    let pending = [
        sbatch(&["-n", "1", "--time=2", "--begin=now+3600", "--wrap", "true"]),
        sbatch(&["-n", "1", "--time=2", "--hold", "--wrap", "true"]),
        sbatch(&[
            "-n", "1", "--time=2", "--hold", ":", "-n", "1", "--time=2", "--wrap", "true",
        ]),
    ];
    for id in &pending {
        let out = Command::new("scancel").arg(id).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }

    let mut ids: Vec<String> = submitted.iter().map(|s| s.id.clone()).collect();
    ids.extend(arrays.iter().cloned());
    ids.extend(pending.iter().cloned());
    // 18 jobs, 12 array tasks, 2 cancelled while pending and 2 heterogeneous components.
    let allocations = 18 + 12 + 2 + 2;
    // Finished when every allocation row has an end; slurmdbd records them asynchronously.
    let started = Instant::now();
    let dump = loop {
        let dump = sacct(&ids, false);
        let header: Vec<&str> = dump.lines().next().unwrap_or("").split('|').collect();
        let end = header.iter().position(|c| *c == "End").unwrap();
        let rows: Vec<Vec<&str>> = dump
            .lines()
            .skip(1)
            .map(|l| l.split('|').collect())
            .filter(|r: &Vec<&str>| !r[0].contains('.'))
            .collect();
        // (A held job's `Eligible` stays `Unknown`: only the end tells.)
        let done = rows.len() == allocations
            && rows.iter().all(|r| {
                r[end] != "Unknown" && !r.iter().any(|c| *c == "RUNNING" || *c == "PENDING")
            });
        if done {
            break dump;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "jobs not finished in sacct after 300 s:\n{dump}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let json = sacct(&ids, true);
    let path = dir.path().join("sacct.txt");
    fs::write(&path, &dump).unwrap();
    let json_path = dir.path().join("sacct.json");
    fs::write(&json_path, &json).unwrap();

    // The array's tasks are jobs of their own: their JobIDRaw from the dump's JobID.
    let header: Vec<&str> = dump.lines().next().unwrap().split('|').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = dump
        .lines()
        .skip(1)
        .map(|l| l.split('|').collect())
        .collect();
    for array in &arrays {
        for r in &rows {
            if r[col("JobID")].starts_with(&format!("{array}_")) && !r[col("JobID")].contains('.') {
                submitted.push(Submitted {
                    id: r[col("JobIDRaw")].to_string(),
                    procs: 1,
                    nodes: 1,
                    limit: 180,
                    memory_kb: None,
                    state: "COMPLETED",
                });
            }
        }
    }
    assert_eq!(submitted.len(), 18 + 12, "{dump}");
    // The heterogeneous job's components, as sacct names them.
    let het: Vec<&str> = rows
        .iter()
        .filter(|r| r[col("JobID")].starts_with(&format!("{}+", pending[2])))
        .map(|r| r[col("JobID")])
        .collect();
    assert_eq!(het.len(), 2, "{dump}");
    // Slurm's own record: submit ≤ start ≤ end for every job that ran.
    let at = |t: &str| schedlab::table::time::parse_datetime(t, 0).unwrap_or_else(|| panic!("{t}"));
    for r in &rows {
        if r[col("Start")] == "None"
            || pending
                .iter()
                .any(|p| r[col("JobID")].starts_with(p.as_str()))
        {
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
    assert_eq!(t.anomalies.never_started, 4, "{dump}");
    // Each of the 30 jobs that ran has its batch step; each `srun` made one more.
    assert!(t.anomalies.job_steps >= 34, "{dump}");
    assert_eq!(w.len(), 30, "{dump}");
    let user = String::from_utf8_lossy(&Command::new("id").arg("-un").output().unwrap().stdout)
        .trim()
        .to_string();
    let origin = t.header.unix_start_time.unwrap();
    for s in &submitted {
        let id = &s.id;
        let job = w
            .jobs
            .iter()
            .find(|j| j.id.to_string() == *id)
            .unwrap_or_else(|| panic!("job {id} imported:\n{dump}"));
        let r = rows.iter().find(|r| r[col("JobIDRaw")] == id).unwrap();
        assert_eq!(job.procs, s.procs, "job {id}");
        let runtime = at(r[col("End")]) - at(r[col("Start")]);
        assert!(runtime >= 1.0, "job {id} ran: {r:?}");
        assert_eq!(job.runtime as f64, runtime, "job {id}");
        // UNLIMITED: the run time stands for the request.
        let expected_limit = if s.limit == 0 { job.runtime } else { s.limit };
        assert_eq!(job.requested_time, expected_limit, "job {id}");
        assert_eq!(job.submit + origin, at(r[col("Submit")]) as i64, "job {id}");
        assert_eq!(w.names.users[&job.user], user, "job {id}");
        assert_eq!(w.queue_name(job.queue), Some("debug"), "job {id}");
        assert_eq!(
            schedlab::table::slurm::state(r[col("State")]),
            s.state,
            "job {id}"
        );
        // Every Slurm job is its nodes, each with its share of the CPUs and the memory asked.
        match w.request(job).shape {
            schedlab::sim::topology::Shape::Nodes { count, per_node } => {
                assert_eq!(
                    (count, per_node.cores),
                    (s.nodes, s.procs / s.nodes),
                    "job {id}"
                );
                if let Some(kb) = s.memory_kb {
                    assert_eq!(per_node.memory_kb, kb, "job {id}");
                }
                assert_eq!(per_node.gpus, 0, "job {id}");
            }
            other => panic!("job {id}: {other:?}"),
        }
    }
    for id in &pending {
        assert!(w.jobs.iter().all(|j| j.id.to_string() != *id), "{id}");
    }
    // The same jobs from `sacct --json`: every field, every count. Jobs submitted in the same
    // second keep each dump's order, which differs (`--json` lists array tasks by job id).
    let from_json = schedlab::api::trace::load(&json_path, false, &options)
        .unwrap_or_else(|e| panic!("{e}\n{json}"));
    let sorted = |t: &schedlab::swf::Trace| {
        let mut v = jobs_shown(t);
        v.sort();
        v
    };
    assert_eq!(sorted(&from_json), sorted(&t), "{json}");
    assert_eq!(from_json.anomalies, t.anomalies, "{json}");
    assert_eq!(from_json.records, t.records, "{json}");
    assert_eq!(from_json.workload.names, w.names);
    // The states as Slurm recorded them, notes dropped: the failing job alone FAILED.
    let keep = schedlab::table::Keep {
        status: Some(vec!["FAILED".into()]),
        ..Default::default()
    };
    let reading = schedlab::table::mapping::shipped("slurm")
        .unwrap()
        .with_keep(Some(keep))
        .resolve("slurm")
        .unwrap();
    let failed = schedlab::swf::ReadOptions {
        format: schedlab::swf::TraceFormat::Table(std::sync::Arc::new(reading)),
        ..Default::default()
    };
    let failing = &submitted.iter().find(|s| s.state == "FAILED").unwrap().id;
    for file in [&path, &json_path] {
        let t = schedlab::api::trace::load(file, false, &failed).unwrap();
        let ids: Vec<String> = t.workload.jobs.iter().map(|j| j.id.to_string()).collect();
        assert_eq!(&ids, std::slice::from_ref(failing), "{dump}");
    }
    // And the command line reads both, and imports them to SWF.
    for file in ["sacct.txt", "sacct.json"] {
        let out = schedlab(dir.path(), &["trace", "info", file, "--mapping", "slurm"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let info = String::from_utf8_lossy(&out.stdout);
        assert!(info.contains("jobs kept        30"), "{info}");
    }
    let out = schedlab(
        dir.path(),
        &[
            "trace",
            "import",
            "sacct.json",
            "--mapping",
            "slurm",
            "-o",
            "sacct.swf",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let back = schedlab::api::trace::load(
        &dir.path().join("sacct.swf"),
        false,
        &schedlab::swf::ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(jobs_shown(&back), jobs_shown(&from_json));
}
