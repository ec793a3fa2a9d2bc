//! The Slurm executor against a fake Slurm on PATH (tests/fixtures/fake-slurm), for the error
//! paths a real cluster cannot be made to produce on demand: a refused submission, array size
//! limits, a preempted task, a time limit only the log remembers, memory named by accounting.
//! The fake runs each array task's real worker, so what succeeds is checked for real (the
//! results equal a local run). The real-cluster tests are tests/slurm.rs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

struct Fake {
    project: tempfile::TempDir,
    slurm: PathBuf,
    bin: PathBuf,
}

impl Fake {
    fn new() -> Fake {
        let project = common::project_with_kth();
        let slurm = project.path().join("fake-slurm");
        let bin = project.path().join("bin");
        fs::create_dir_all(&slurm).unwrap();
        fs::create_dir_all(&bin).unwrap();
        let fake =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-slurm/fake-slurm");
        for tool in ["sbatch", "squeue", "scancel", "sacct", "scontrol", "sinfo"] {
            std::os::unix::fs::symlink(&fake, bin.join(tool)).unwrap();
        }
        fs::write(
            project.path().join("experiments/grid.yaml"),
            "name: grid
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 300}
clusters:
  pool: {procs: 100}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
grid:
  axes:
    scheduler: [fcfs, easy]
    interval: [null, 60, 300, 900]
",
        )
        .unwrap();
        Fake {
            project,
            slurm,
            bin,
        }
    }

    fn path(&self) -> &Path {
        self.project.path()
    }

    fn set(&self, file: &str, text: &str) {
        fs::write(self.slurm.join(file), text).unwrap();
    }

    fn schedlab(&self, args: &[&str]) -> Output {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .current_dir(self.path())
            .args(args)
            .env("PATH", path)
            .env("FAKE_SLURM_DIR", &self.slurm)
            .env_remove("SLURM_JOB_ID")
            .output()
            .unwrap()
    }

    /// `run --executor slurm` with `extra` arguments (default `--max-parallel 4`); (exit
    /// code, stderr).
    fn run(&self, extra: &[&str]) -> (Option<i32>, String) {
        let mut args = vec!["run", "--executor", "slurm"];
        if extra.is_empty() {
            args.extend(["--max-parallel", "4"]);
        }
        args.extend_from_slice(extra);
        let out = self.schedlab(&args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn calls(&self, tool: &str) -> Vec<String> {
        fs::read_to_string(self.slurm.join("calls"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with(&format!("{tool} ")))
            .map(str::to_string)
            .collect()
    }

    fn batches(&self) -> usize {
        fs::read_dir(self.path().join("results/.schedlab/slurm"))
            .map(|d| d.count())
            .unwrap_or(0)
    }
}

#[test]
fn a_refused_submission_is_reported_with_a_hint_and_leaves_no_batch() {
    let f = Fake::new();
    f.set(
        "refuse-1",
        "sbatch: error: QOSMaxSubmitJobPerUserLimit\nsbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)\n",
    );
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("sbatch refused the submission"), "{err}");
    assert!(err.contains("QOSMaxSubmitJobPerUserLimit"), "{err}");
    assert!(err.contains("hint: the QOS limits how many jobs"), "{err}");
    assert_eq!(
        f.batches(),
        0,
        "a refused batch is not recorded as in flight"
    );
    // Once the limit is lifted, the same run submits and completes.
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_batch_larger_than_max_array_size_spans_several_arrays_with_identical_results() {
    let f = Fake::new();
    f.set("max-array-size", "4"); // indices 0..=2: three tasks per array
    let (code, err) = f.run(&["--max-parallel", "8"]);
    assert_eq!(code, Some(0), "{err}");
    let sbatch = f.calls("sbatch");
    // 8 nodes, 8 slots: 8 tasks → arrays of 3, 3 and 2 tasks.
    let arrays: Vec<&str> = sbatch
        .iter()
        .map(|c| {
            c.split_whitespace()
                .find_map(|a| a.strip_prefix("--array="))
                .unwrap()
        })
        .collect();
    assert_eq!(arrays, vec!["0-2%8", "0-2%8", "0-1%8"], "{sbatch:?}");
    assert!(err.contains("8 array tasks in 3 sbatch calls"), "{err}");
    let local = f.schedlab(&["run", "-q", "--results", "local"]);
    assert!(local.status.success());
    for file in ["summary.parquet", "jobs.parquet", "timeseries.parquet"] {
        assert_eq!(
            fs::read(f.path().join("results/grid").join(file)).unwrap(),
            fs::read(f.path().join("local/grid").join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn a_partly_refused_submission_keeps_what_was_accepted_and_a_rerun_submits_only_the_rest() {
    let f = Fake::new();
    f.set("max-array-size", "5"); // four tasks per array
    f.set(
        "refuse-2",
        "sbatch: error: Slurm temporarily unable to accept job\n",
    );
    let (code, err) = f.run(&["--max-parallel", "8"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("submitted 1 of 2 arrays (job 1001)"), "{err}");
    assert!(err.contains("temporarily unable"), "{err}");
    // The first array's four tasks ran (the fake runs them at once); the rerun submits the rest.
    let (code, err) = f.run(&["--max-parallel", "8"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("submitted 4 nodes"), "{err}");
}

#[test]
fn preemption_is_named_and_a_rerun_resubmits_only_the_preempted_nodes() {
    let f = Fake::new();
    f.set("fate-1-1", "PREEMPTED");
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("preempted by Slurm"), "{err}");
    assert!(err.contains("(PREEMPTED)"), "{err}");
    assert!(err.contains("[state from squeue]"), "{err}");
    assert!(err.contains("not run: grid (needs grid/"), "{err}");
    let failed = err
        .lines()
        .filter(|l| l.starts_with("failed: grid/"))
        .count();
    assert_eq!(failed, 2, "one task of two nodes: {err}");
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("submitted 2 nodes"), "{err}");
}

#[test]
fn a_time_limit_only_the_log_remembers_is_named_from_the_log() {
    let f = Fake::new();
    f.set("fate-1-0", "TIMEOUT_FORGOTTEN");
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("time limit (TIMEOUT)"), "{err}");
    assert!(err.contains("[state from the task log]"), "{err}");
    assert!(err.contains("slurm.time"), "{err}");
}

#[test]
fn out_of_memory_is_named_from_accounting_when_the_cluster_keeps_it() {
    let f = Fake::new();
    f.set("fate-1-2", "OOM_SACCT");
    f.set("sacct", "1001_2|OUT_OF_MEMORY\n");
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("exceeding its memory (OUT_OF_MEMORY)"),
        "{err}"
    );
    assert!(err.contains("[state from sacct]"), "{err}");
    assert!(err.contains("slurm.mem"), "{err}");
}

#[test]
fn a_config_file_sets_sbatch_options_and_bad_settings_are_located() {
    let f = Fake::new();
    fs::write(
        f.path().join("schedlab.yaml"),
        "executor: slurm\nslurm:\n  partition: short\n  account: proj\n  time: \"10:00\"\n  mem: 1G\n  sbatch_args: [\"--constraint=fast\"]\n",
    )
    .unwrap();
    let out = f.schedlab(&["run", "-q"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let call = &f.calls("sbatch")[0];
    for option in [
        "--partition=short",
        "--account=proj",
        "--time=10:00",
        "--mem=1G",
        "--constraint=fast",
        "--ntasks=1",
    ] {
        assert!(call.contains(option), "{option} in {call}");
    }
    fs::write(f.path().join("schedlab.yaml"), "slurm:\n  memory: 1G\n").unwrap();
    let out = f.schedlab(&["run", "-q"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("schedlab.yaml:2"), "{err}");
    assert!(err.contains("memory"), "{err}");
}

#[test]
fn a_task_on_a_node_that_does_not_see_the_results_directory_says_so() {
    let f = Fake::new();
    f.set("fate-1-0", "UNSHARED");
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("failed: grid/"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("could not start its work"), "{line}");
    assert!(
        line.contains("cannot read the batch record /nonexistent/"),
        "{line}"
    );
    assert!(
        line.contains("file system every compute node sees"),
        "{line}"
    );
}

#[test]
fn a_task_cancelled_while_pending_is_named_as_cancelled_not_as_an_unshared_file_system() {
    let f = Fake::new();
    f.set("fate-1-3", "CANCELLED_PENDING");
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(1), "{err}");
    let failed: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("failed: grid/"))
        .collect();
    assert_eq!(failed.len(), 2, "one task of two nodes: {err}");
    for line in failed {
        assert!(line.contains("was cancelled before it started"), "{line}");
        assert!(line.contains("(CANCELLED, from squeue)"), "{line}");
        assert!(!line.contains("file system"), "{line}");
    }
    let (code, err) = f.run(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("submitted 2 nodes"), "{err}");
}

#[test]
fn a_worker_refuses_a_node_whose_manifest_changed_since_submission() {
    let f = Fake::new();
    for i in 0..4 {
        f.set(&format!("fate-1-{i}"), "HOLD");
    }
    let out = f.schedlab(&[
        "run",
        "--executor",
        "slurm",
        "--max-parallel",
        "4",
        "--detach",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Held tasks are in flight: a second detached run submits nothing.
    let out = f.schedlab(&[
        "run",
        "--executor",
        "slurm",
        "--max-parallel",
        "4",
        "--detach",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("8 already queued or running, 0 submitted"),
        "{err}"
    );
    // The user edits the manifest while the tasks wait; then a task starts.
    let manifest = f.path().join("experiments/grid.yaml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace("first_jobs: 300", "first_jobs: 400"),
    )
    .unwrap();
    let batch = fs::read_dir(f.path().join("results/.schedlab/slurm"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let out = f.schedlab(&["worker", batch.to_str().unwrap(), "--task", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("schedlab-worker: failed {"), "{log}");
    assert!(log.contains("when submitted"), "{log}");
    assert!(
        log.contains("grid.yaml or the schedlab binary changed"),
        "{log}"
    );
    assert_eq!(
        fs::read_dir(f.path().join("results/.schedlab/entries"))
            .map(|d| d.count())
            .unwrap_or(0),
        0,
        "nothing computed from the changed manifest"
    );
}

#[test]
fn a_missing_sbatch_is_a_clear_error() {
    let f = Fake::new();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(f.path())
        .args(["run", "--executor", "slurm", "--max-parallel", "2"])
        .env("PATH", "/nonexistent")
        .env_remove("SLURM_JOB_ID")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot run `sbatch`"), "{err}");
    assert!(err.contains("--executor local"), "{err}");
}
