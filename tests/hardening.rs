//! Regression tests for issue 16 (hardening), one per item, each named after the behaviour it
//! guards: data safety of the cache and the published results, bounded resources, signals and
//! pipes, located errors, results analysis tools understand, and the README's quick tour. The
//! checks that found the problems — mutated inputs, `kill -9`, a full disk — run here in
//! bounded time (kill -9 and concurrent runs: tests/pipeline.rs).

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

const EXE: &str = env!("CARGO_BIN_EXE_schedlab");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A temporary project with `workloads/kth.swf.gz` and one manifest `experiments/<name>.yaml`.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        Project {
            dir: common::project_with_kth(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn manifest(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path().join("experiments").join(format!("{name}.yaml"));
        fs::write(&path, text).unwrap();
        path
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(EXE);
        c.current_dir(self.path()).args(args);
        c
    }

    fn schedlab(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// `run --quiet --events` plus `extra`; the output and label → outcome.
    fn run(&self, extra: &[&str]) -> (Output, BTreeMap<String, String>) {
        let log = self.path().join("events.jsonl");
        let mut args = vec!["run", "--quiet", "--events", log.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = self.schedlab(&args);
        (out, read_events(&log))
    }

    fn state(&self) -> PathBuf {
        self.path().join("results/.schedlab")
    }

    /// Every file of the entry directories, relative to `entries/`.
    fn entry_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for shard in fs::read_dir(self.state().join("entries")).unwrap() {
            for entry in fs::read_dir(shard.unwrap().path()).unwrap() {
                dirs.push(entry.unwrap().path());
            }
        }
        dirs.sort();
        dirs
    }

    fn published(&self, experiment: &str) -> BTreeMap<String, Vec<u8>> {
        let dir = self.path().join("results").join(experiment);
        ["summary.parquet", "jobs.parquet", "timeseries.parquet"]
            .iter()
            .map(|f| (f.to_string(), fs::read(dir.join(f)).unwrap()))
            .collect()
    }
}

fn read_events(log: &Path) -> BTreeMap<String, String> {
    let events = fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["label"].as_str().unwrap().to_string(),
                v["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let _ = fs::remove_file(log);
    events
}

fn with_outcome(events: &BTreeMap<String, String>, outcome: &str) -> Vec<String> {
    events
        .iter()
        .filter(|(_, o)| o.as_str() == outcome)
        .map(|(l, _)| l.clone())
        .collect()
}

/// Four cells of KTH's first 3,000 jobs on 100 processors.
const GRID: &str = "name: grid
workloads:
  kth:
    trace: ../workloads/kth.swf.gz
    first_jobs: 3000
clusters:
  pool: {procs: 100}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
grid:
  axes:
    scheduler: [fcfs, easy]
    interval: [null, 900]
";

// ----------------------------------------------------------------------------------------------
// README

/// The README's quick tour, run as written in a copy of the project (experiments, Makefile,
/// bundled workloads, the built binary). `make test` creates `.venv` first; the tour's
/// `make venv` then finds it up to date. Without it, the tour creates it itself.
#[test]
fn readme_quick_tour_runs_as_written() {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let tour_start = readme.find("## Quick tour").expect("README has a quick tour");
    let rest = &readme[tour_start..];
    let block_start = rest.find("```sh\n").expect("the tour is a sh block") + 6;
    let block_len = rest[block_start..].find("```").unwrap();
    let tour = &rest[block_start..block_start + block_len];
    for needed in ["pandas.read_parquet", "make venv", "schedlab run", "schedlab export"] {
        assert!(tour.contains(needed), "the tour no longer shows {needed}");
    }

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_tree(&repo().join("experiments"), &d.join("experiments"));
    fs::copy(repo().join("Makefile"), d.join("Makefile")).unwrap();
    std::os::unix::fs::symlink(repo().join("workloads"), d.join("workloads")).unwrap();
    fs::create_dir_all(d.join("target/release")).unwrap();
    std::os::unix::fs::symlink(EXE, d.join("target/release/schedlab")).unwrap();
    if repo().join(".venv/.pyarrow-pandas").exists() {
        std::os::unix::fs::symlink(repo().join(".venv"), d.join(".venv")).unwrap();
    }
    fs::write(d.join("tour.sh"), tour).unwrap();
    let out = Command::new("sh")
        .args(["-e", "tour.sh"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the tour failed:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    // What the tour's lines promise exists.
    for file in [
        "results/easy-vs-fcfs/summary.parquet",
        "reports/easy-vs-fcfs.html",
        "sp2-easy.swf",
        "kth-fit.yaml",
        "users8.swf",
        "blue.parquet",
    ] {
        assert!(d.join(file).is_file(), "the tour did not leave {file}");
    }
    // pandas printed the summary: one row per cell of the experiment (12).
    let text = stdout(&out);
    assert!(text.contains("easy-vs-fcfs"), "{text}");
    assert!(text.contains("[12 rows x"), "pandas' summary frame:\n{text}");
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}
