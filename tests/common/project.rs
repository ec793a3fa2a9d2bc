//! `Project`: a temporary project folder (`experiments/`, `workloads/kth.swf.gz`, and the
//! `results/` a run makes) driven through the schedlab binary, as tests/pipeline.rs and
//! tests/hardening.rs use it: manifests written into `experiments/`, runs with an event log read
//! back as label → outcome, the published result files and the cache's entry directories.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary project: `experiments/`, `workloads/`, `results/`.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// A fresh project holding the bundled KTH-SP2 trace (`super::project_with_kth`).
    pub fn new() -> Project {
        Project {
            dir: super::project_with_kth(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `experiments/<name>.yaml`; returns its path.
    pub fn manifest(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path().join("experiments").join(format!("{name}.yaml"));
        fs::write(&path, text).unwrap();
        path
    }

    /// The schedlab binary with `args`, in the project, not yet started.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_schedlab"));
        c.current_dir(self.path()).args(args);
        c
    }

    /// Runs schedlab with `args` to the end.
    pub fn schedlab(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// `run --quiet --events` plus `extra`; the output and label → outcome.
    pub fn run(&self, extra: &[&str]) -> (Output, BTreeMap<String, String>) {
        let log = self.path().join("events.jsonl");
        let mut args = vec!["run", "--quiet", "--events", log.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = self.schedlab(&args);
        (out, read_events(&log))
    }

    /// The run state: `results/.schedlab`.
    pub fn state(&self) -> PathBuf {
        self.path().join("results/.schedlab")
    }

    /// Every entry directory of the cache (`entries/<shard>/<entry>`), sorted.
    pub fn entry_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for shard in fs::read_dir(self.state().join("entries")).unwrap() {
            for entry in fs::read_dir(shard.unwrap().path()).unwrap() {
                dirs.push(entry.unwrap().path());
            }
        }
        dirs.sort();
        dirs
    }

    /// The bytes of an experiment's published summary, jobs and time series.
    pub fn published(&self, experiment: &str) -> BTreeMap<String, Vec<u8>> {
        let dir = self.path().join("results").join(experiment);
        ["summary.parquet", "jobs.parquet", "timeseries.parquet"]
            .iter()
            .map(|f| (f.to_string(), fs::read(dir.join(f)).unwrap()))
            .collect()
    }
}

/// An event log (`run --events`) as label → outcome; the log is removed, so that the next run's
/// events are its own.
pub fn read_events(log: &Path) -> BTreeMap<String, String> {
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
