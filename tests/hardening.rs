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

mod common;

use common::project::{Project, read_events};

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
    let tour_start = readme
        .find("## Quick tour")
        .expect("README has a quick tour");
    let rest = &readme[tour_start..];
    let block_start = rest.find("```sh\n").expect("the tour is a sh block") + 6;
    let block_len = rest[block_start..].find("```").unwrap();
    let tour = &rest[block_start..block_start + block_len];
    for needed in [
        "pandas.read_parquet",
        "make venv",
        "schedlab run",
        "schedlab export",
    ] {
        assert!(tour.contains(needed), "the tour no longer shows {needed}");
    }

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The shipped experiments only: a user's own studies beside them are not the tour's.
    fs::create_dir_all(d.join("experiments")).unwrap();
    for manifest in common::shipped::shipped_manifests() {
        fs::copy(
            &manifest,
            d.join("experiments").join(manifest.file_name().unwrap()),
        )
        .unwrap();
    }
    fs::copy(repo().join("Makefile"), d.join("Makefile")).unwrap();
    std::os::unix::fs::symlink(repo().join("workloads"), d.join("workloads")).unwrap();
    fs::create_dir_all(d.join("target/release")).unwrap();
    std::os::unix::fs::symlink(EXE, d.join("target/release/schedlab")).unwrap();
    if repo().join(".venv/.schedlab-package").exists() {
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
        "tour/sp2-easy.swf",
        "tour/kth-eet.svg",
        "tour/kth-fit.yaml",
        "tour/users8.swf",
        "tour/blue.parquet",
    ] {
        assert!(d.join(file).is_file(), "the tour did not leave {file}");
    }
    // Nothing else lands in the checkout's root (it would show as untracked in `git status`),
    // and the folder it writes to is one git ignores.
    let mut top: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    let expected = [
        ".venv",
        "Makefile",
        "experiments",
        "reports",
        "results",
        "target",
        "tour",
        "tour.sh",
        "workloads",
    ];
    assert!(
        top.iter().all(|f| expected.contains(&f.as_str())),
        "the tour left files in the root: {top:?}"
    );
    let gitignore = fs::read_to_string(repo().join(".gitignore")).unwrap();
    assert!(gitignore.lines().any(|l| l == "/tour/"), "{gitignore}");
    // pandas printed the summary: one row per cell of the experiment (12).
    let text = stdout(&out);
    assert!(text.contains("easy-vs-fcfs"), "{text}");
    assert!(
        text.contains("[12 rows x"),
        "pandas' summary frame:\n{text}"
    );
}

/// Python lines in the README and docs/ run in the environment `make venv` creates (pandas and
/// pyarrow in `.venv`), not a system Python that may lack them: docs/metacentrum.md's
/// "Reproduce" used `python3 -c "import pyarrow…"`, which fails on a fresh machine.
#[test]
fn python_lines_in_the_docs_use_the_venv_make_creates() {
    let mut pages = vec![repo().join("README.md")];
    for entry in fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut outside = Vec::new();
    for page in pages {
        let text = fs::read_to_string(&page).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let runs_python = ["python ", "python3 ", "python3.", "pip "]
                .iter()
                .any(|p| line.starts_with(p));
            if runs_python {
                outside.push(format!("{}:{}: {line}", page.display(), n + 1));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "use .venv/bin/python (after `make venv`): {outside:#?}"
    );
}

// ----------------------------------------------------------------------------------------------
// Data safety

/// Published results are copies, not links into the cache: editing one in place (as pandas and
/// pyarrow do) leaves the cache entry alone, the next run restores the file with a warning, and
/// removing `results/<exp>` only republishes.
#[test]
fn published_results_are_independent_of_the_cache() {
    let p = Project::new();
    p.manifest("grid", GRID);
    let (out, _) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let original = p.published("grid");
    let summary = p.path().join("results/grid/summary.parquet");
    let meta = fs::metadata(&summary).unwrap();
    assert_eq!(meta.nlink(), 1, "a published file must not be a hard link");

    // Overwrite in place: same inode, new bytes.
    let inode = meta.ino();
    fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&summary)
        .unwrap();
    fs::write(&summary, b"edited by hand").unwrap();
    assert_eq!(fs::metadata(&summary).unwrap().ino(), inode);
    // Every cache entry still verifies: a later run hits everything.
    let (out, events) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(with_outcome(&events, "ran").is_empty(), "{events:?}");
    assert!(
        stderr(&out).contains("warning:") && stderr(&out).contains("summary.parquet"),
        "the restore is announced: {}",
        stderr(&out)
    );
    assert_eq!(p.published("grid"), original);

    // The report reads the restored file.
    let out = p.schedlab(&["report"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Removing the results folder republishes from the cache, recomputing nothing.
    fs::remove_dir_all(p.path().join("results/grid")).unwrap();
    let (out, events) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(with_outcome(&events, "ran").is_empty(), "{events:?}");
    assert_eq!(p.published("grid"), original);
}

/// A corrupt entry (a changed file) or a half-present one (no `entry.json`) is quarantined with
/// a warning and computed again; the results equal the original ones; `gc` removes the
/// quarantine.
#[test]
fn corrupt_cache_entries_are_quarantined_recomputed_and_removed_by_gc() {
    let p = Project::new();
    p.manifest("grid", GRID);
    let (out, _) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let original = p.published("grid");
    let entries = p.entry_dirs();
    assert_eq!(
        entries.len(),
        9,
        "four cells (schedule and metrics) and the aggregate"
    );
    // The aggregate entry holds summary.parquet; cells' metrics entries hold jobs.parquet.
    let aggregate = entries
        .iter()
        .find(|d| d.join("summary.parquet").exists())
        .unwrap()
        .clone();
    let cells: Vec<&PathBuf> = entries
        .iter()
        .filter(|d| **d != aggregate && d.join("jobs.parquet").exists())
        .collect();
    // Damage: one byte of the aggregate's summary, one byte of a cell's jobs, one byte of
    // another cell's packed small tables (`tables.bundle`), and one cell's marker removed
    // (half-present).
    for file in [
        aggregate.join("summary.parquet"),
        cells[0].join("jobs.parquet"),
        cells[2].join("tables.bundle"),
    ] {
        let mut bytes = fs::read(&file).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x55;
        fs::write(&file, bytes).unwrap();
    }
    fs::remove_file(cells[1].join("entry.json")).unwrap();
    // The published copies are gone too, so the run must read the entries.
    fs::remove_dir_all(p.path().join("results/grid")).unwrap();

    let (out, events) = p.run(&[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.matches("warning: cache entry of").count(),
        4,
        "one warning per damaged entry: {err}"
    );
    assert!(
        err.contains("moved it to") && err.contains("computing it again"),
        "{err}"
    );
    assert_eq!(with_outcome(&events, "ran").len(), 4, "{events:?}");
    assert_eq!(
        p.published("grid"),
        original,
        "recomputed results are the same"
    );
    let quarantine = p.state().join("quarantine");
    let set_aside: Vec<_> = fs::read_dir(&quarantine).unwrap().collect();
    assert_eq!(set_aside.len(), 4);
    for q in set_aside {
        let q = q.unwrap().path();
        assert!(q.join("reason.txt").is_file(), "{} says why", q.display());
    }

    // Runs after that are all hits; gc empties the quarantine.
    let (out, events) = p.run(&[]);
    assert!(out.status.success());
    assert!(with_outcome(&events, "ran").is_empty());
    let out = p.schedlab(&["gc"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("(quarantined)"), "{}", stdout(&out));
    let left = fs::read_dir(&quarantine).map_or(0, |d| d.count());
    assert_eq!(left, 0, "gc removes the quarantine");
}

/// Result files, cache entries and records are created with mode 0666 less the umask.
#[test]
fn result_files_respect_the_umask() {
    for (umask, want) in [("002", 0o664), ("077", 0o600), ("022", 0o644)] {
        let p = Project::new();
        p.manifest("grid", GRID);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" run --quiet"))
            .arg(EXE)
            .current_dir(p.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let mut files: Vec<PathBuf> = fs::read_dir(p.path().join("results/grid"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        for dir in p.entry_dirs() {
            files.extend(fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()));
        }
        files.push(p.state().join("digests.json"));
        assert!(files.len() > 10);
        for f in files {
            let mode = fs::metadata(&f).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, want, "{} under umask {umask}: {mode:o}", f.display());
        }
    }
}

/// Unmounts a tmpfs when dropped.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A full disk: the results live on a small tmpfs (where the test may mount one, as in CI,
/// which runs as root) or, elsewhere, the process may not write files over 64 KiB (an injected
/// write error through RLIMIT_FSIZE). Each failed node shows its own cause, the event log
/// (written elsewhere) is complete, the exit code is 1, no staging is left behind, and once
/// there is room a run computes exactly the failed nodes.
#[test]
fn full_disk_each_failed_node_shows_its_error_and_events_are_still_written() {
    let outside = tempfile::tempdir().unwrap();
    let trace = repo().join("workloads/KTH-SP2-1996-2.1-cln.swf.gz");
    let project = tempfile::tempdir().unwrap();
    let root = project.path().join("disk");
    fs::create_dir_all(&root).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=600k", "tmpfs"])
        .arg(&root)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _unmount = mounted.then(|| Mount(root.clone()));
    fs::create_dir_all(root.join("experiments")).unwrap();
    fs::write(
        root.join("experiments/grid.yaml"),
        GRID.replace("../workloads/kth.swf.gz", trace.to_str().unwrap())
            .replace("[null, 900]", "[null, 900, 1800]"),
    )
    .unwrap();
    let log = outside.path().join("events.jsonl");
    let mut cmd = Command::new(EXE);
    cmd.current_dir(&root)
        .args(["run", "-j", "1", "--events"])
        .arg(&log);
    let cause = if mounted {
        "No space left on device"
    } else {
        // SAFETY: async-signal-safe calls only, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let limit = libc::rlimit {
                    rlim_cur: 64 * 1024,
                    rlim_max: 64 * 1024,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        "File too large"
    };
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let events = read_events(&log);
    assert_eq!(events.len(), 13, "the event log is complete: {events:?}");
    let failed = with_outcome(&events, "failed");
    // Metrics nodes downstream of a failed simulation were blocked: they run on the rerun too.
    let blocked = with_outcome(&events, "blocked");
    assert!(!failed.is_empty(), "{err}");
    for label in &failed {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("failed: {label}: ")))
            .unwrap_or_else(|| panic!("no error line for {label}:\n{err}"));
        assert!(line.contains(cause), "{line}");
    }
    let staging = root.join("results/.schedlab/tmp");
    assert_eq!(fs::read_dir(&staging).map_or(0, |d| d.count()), 0);

    // With room again, only what failed runs.
    if mounted {
        let grown = Command::new("mount")
            .args(["-o", "remount,size=64m"])
            .arg(&root)
            .status()
            .unwrap();
        assert!(grown.success());
    }
    let ran_before = with_outcome(&events, "ran");
    let out = Command::new(EXE)
        .current_dir(&root)
        .args(["run", "--quiet", "--events"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let events = read_events(&log);
    assert_eq!(with_outcome(&events, "hit"), ran_before);
    let mut rerun = with_outcome(&events, "ran");
    rerun.retain(|l| failed.contains(l) || blocked.contains(l) || l == "grid");
    assert_eq!(rerun.len(), with_outcome(&events, "ran").len());
}

// ----------------------------------------------------------------------------------------------
// Bounded resources

/// A grid of 10^6 cells (the default `limits.max_cells`) plans within modest memory — it
/// aborted before — and lists every node.
#[test]
fn a_million_cell_grid_plans_with_modest_memory() {
    let p = Project::new();
    let values: Vec<String> = (1..=1000).map(|v| v.to_string()).collect();
    let values = values.join(", ");
    p.manifest(
        "big",
        &format!(
            "name: big
workloads:
  kth: {{trace: ../workloads/kth.swf.gz}}
clusters:
  pool: {{procs: 100}}
schedulers:
  easy: {{policy: easy}}
grid:
  axes:
    tau: [{values}]
    first_jobs: [{values}]
"
        ),
    );
    let lines = p.path().join("plan.txt");
    let child = p
        .cmd(&["plan"])
        .stdout(fs::File::create(&lines).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (status, peak_kib) = common::wait_with_peak_rss(child);
    assert_eq!(status, 0);
    let planned = BufReader::new(fs::File::open(&lines).unwrap())
        .lines()
        .count();
    assert_eq!(
        planned, 1_001_001,
        "1,000 simulations (the τ axis shares them), every cell's metrics and the aggregate"
    );
    // Measured: about 0.5 GB (BENCHMARKS.md); the bound leaves room for allocator noise.
    assert!(peak_kib < 1024 * 1024, "planning took {peak_kib} KiB");
}

/// The `simulate` command's memory does not depend on the number of scheduler calls (issue 16:
/// SDSC SP2 with `--interval 1` took 2.9 GB, every call kept at ~55 bytes; the engine-level
/// check is tests/memory.rs). A job holds the whole machine for 2·10^6 s while another waits:
/// `--interval 1` calls the scheduler 2,000,001 times, `--interval 3600` 557 times; kept per
/// call, the first run would hold ~110 MB more. A 10^12-second job runs in bounded memory too.
#[test]
fn simulate_command_memory_does_not_depend_on_the_number_of_scheduler_calls() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("calls.swf");
    fs::write(
        &trace,
        "; MaxProcs: 10
1 0 -1 2000000 10 -1 -1 10 2000000 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 1 -1 -1 1 10 -1 1 2 1 -1 1 -1 -1 -1
",
    )
    .unwrap();
    let run = |trace: &Path, interval: Option<&str>| -> (serde_json::Value, i64) {
        let out = dir.path().join("summary.json");
        let mut cmd = Command::new(EXE);
        cmd.arg("simulate")
            .arg(trace)
            .args(["-s", "easy", "--format", "json"]);
        if let Some(i) = interval {
            cmd.args(["--interval", i]);
        }
        let child = cmd
            .stdout(fs::File::create(&out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (status, peak_kib) = common::wait_with_peak_rss(child);
        assert_eq!(status, 0, "simulate {interval:?} succeeds");
        let summary = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
        (summary, peak_kib)
    };
    let (every_second, peak_1) = run(&trace, Some("1"));
    let (hourly, peak_3600) = run(&trace, Some("3600"));
    assert_eq!(every_second["scheduler_calls"], 2_000_001);
    assert_eq!(hourly["scheduler_calls"], 557);
    assert!(
        peak_1 < peak_3600 + 16 * 1024,
        "2,000,001 calls peaked at {peak_1} KiB, 557 calls at {peak_3600} KiB"
    );
    let long = dir.path().join("long.swf");
    fs::write(
        &long,
        "; MaxProcs: 10
1 0 -1 1000000000000 10 -1 -1 10 1000000000000 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 1 -1 -1 1 10 -1 1 2 1 -1 1 -1 -1 -1
",
    )
    .unwrap();
    let (summary, peak) = run(&long, None);
    assert_eq!(summary["jobs"], 2);
    // A spawned child's peak counts the test process's own peak at the moment it execs (Linux
    // records the shared address space's high-water mark then), and other tests in this binary
    // may have raised that: the bound is over a run that does nothing, spawned after this one.
    let idle = Command::new(EXE)
        .arg("--version")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (status, idle_peak) = common::wait_with_peak_rss(idle);
    assert_eq!(status, 0);
    assert!(
        peak < idle_peak + 64 * 1024,
        "a 10^12-second job peaked at {peak} KiB (a run doing nothing: {idle_peak} KiB)"
    );
}

/// Sizes beyond the stated bounds are located errors naming the size and how to raise the
/// bound, never an allocation abort.
#[test]
fn inputs_beyond_the_bounds_get_a_located_error_with_the_size_and_the_way_to_raise_it() {
    for (case, line, size, raise) in [
        (
            "too-many-replicas",
            ":6:",
            "2000000 cells",
            "limits: {max_cells: 2000000}",
        ),
        (
            "too-many-cells",
            ":5:",
            "1001000 cells",
            "limits: {max_cells: 1001000}",
        ),
        (
            "synthetic-too-long",
            ":4:",
            "38398648 jobs",
            "limits: {max_jobs:",
        ),
    ] {
        let path = repo().join(format!("tests/fixtures/manifests/invalid/{case}.yaml"));
        let err = schedlab::manifest::load(&path).unwrap_err().to_string();
        assert!(err.contains(&format!("{case}.yaml{line}")), "{case}: {err}");
        assert!(err.contains(size), "{case}: {err}");
        assert!(err.contains(raise), "{case}: {err}");
    }
}

/// `generate` writes the SWF as it goes instead of building the whole text in memory first
/// (2 M jobs: 263 → 135 MB peak).
#[test]
fn generate_streams_the_swf_instead_of_building_it_in_memory() {
    let p = Project::new();
    p.manifest(
        "syn",
        "name: syn
workloads:
  users:
    synthetic:
      length: {days: 300}
      users:
        - name: user
          count: 100
          arrivals: {lambda: 6.944e-5, delta: 2.778e-4, mu: 2.778e-3}
          runtime: [[1, 0.0], [60, 0.2], [900, 0.5], [3600, 0.7], [14400, 0.9], [86400, 1.0]]
          procs: {log_uniform: [1, 64], power_of_two: 0.75}
clusters:
  pool: {procs: 128}
schedulers:
  easy: {policy: easy}
",
    );
    let child = p
        .cmd(&[
            "generate",
            "experiments/syn.yaml",
            "--workload",
            "users",
            "-o",
            "syn.swf",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (status, peak_kib) = common::wait_with_peak_rss(child);
    assert_eq!(status, 0);
    let written = fs::metadata(p.path().join("syn.swf")).unwrap().len();
    assert!(written > 64 << 20, "a large file: {written} bytes");
    // The jobs themselves are held (they are sorted by submit time): measured 148 MB for this
    // 91 MB file (1.6 bytes of memory per byte of SWF since jobs gained topology fields); the
    // whole text in memory as well would add the file's size again (2.6).
    let peak = peak_kib as u64 * 1024;
    assert!(
        peak < written * 2,
        "peak {peak} bytes for a {written}-byte file"
    );
}

// ----------------------------------------------------------------------------------------------
// Signals, pipes, errors

/// A reader that goes away (`schedlab … | head`) ends the command at once and silently, by
/// SIGPIPE as `cat` does — never a panic (exit 101). `run` ended this way resumes.
#[test]
fn closed_pipe_exits_quietly() {
    let p = Project::new();
    p.manifest("grid", GRID);
    let kth = "workloads/kth.swf.gz";
    for args in [
        vec!["trace", "info", kth],
        vec!["trace", "stats", kth, "--by", "user"],
        vec!["plan"],
        vec!["simulate", kth, "--scheduler", "easy"],
    ] {
        let mut child = p
            .cmd(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before the first line
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGPIPE),
            "{args:?}: {:?} {}",
            out.status,
            stderr(&out)
        );
        assert!(stderr(&out).is_empty(), "{args:?}: {}", stderr(&out));
    }
    // run writes its progress to stderr.
    let mut child = p
        .cmd(&["run", "-j", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
    let (out, _) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    // diff, which the issue names too, once there are results to compare.
    let mut child = p
        .cmd(&["diff", "results", "results"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "diff: {:?}",
        out.status
    );
    assert!(stderr(&out).is_empty(), "diff: {}", stderr(&out));
}

/// Ctrl-C (SIGINT) and SIGTERM stop a run cleanly: it says how far it got and how to resume,
/// empties the staging area and exits with 128 + the signal; running again resumes, computing
/// only what was not done.
#[test]
fn interrupt_says_how_far_it_got_cleans_staging_and_exits_with_the_signal_code() {
    let p = Project::new();
    p.manifest(
        "slow",
        "name: slow
workloads:
  kth: {trace: ../workloads/kth.swf.gz}
clusters:
  pool: {procs: 100}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
  conservative: {policy: conservative}
grid:
  axes:
    scheduler: [fcfs, easy, conservative]
    interval: [null, 60, 300, 900, 1800, 3600]
",
    );
    let mut done_so_far = 0;
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let mut child = p
            .cmd(&["run", "-j", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for the first node this run finishes, then signal.
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = Vec::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            let ran = line.contains("] ran ");
            seen.push(line);
            if ran {
                break;
            }
        }
        // SAFETY: plain kill(2) of our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        seen.extend(lines.map(|l| l.unwrap()));
        let status = child.wait().unwrap();
        let text = seen.join("\n");
        assert_eq!(status.code(), Some(code), "{text}");
        let last = seen.last().unwrap();
        let (done, total) = parse_interrupted(last).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(total, 37, "{text}");
        assert!(done > done_so_far && done < total, "{text}");
        done_so_far = done;
        let staging = p.state().join("tmp");
        assert_eq!(fs::read_dir(&staging).map_or(0, |d| d.count()), 0, "{text}");
    }
    let (out, events) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        with_outcome(&events, "hit").len(),
        done_so_far,
        "{events:?}"
    );
    assert_eq!(with_outcome(&events, "ran").len(), 37 - done_so_far);
}

/// "interrupted: N of M nodes done; run again to resume" (or "terminated: …") → (N, M).
fn parse_interrupted(line: &str) -> Option<(usize, usize)> {
    let rest = line
        .strip_prefix("interrupted: ")
        .or_else(|| line.strip_prefix("terminated: "))?;
    let rest = rest.strip_suffix(" nodes done; run again to resume")?;
    let (done, total) = rest.split_once(" of ")?;
    Some((done.parse().ok()?, total.parse().ok()?))
}

fn load_error(case: &str) -> String {
    let path = format!("tests/fixtures/manifests/invalid/{case}.yaml");
    match schedlab::manifest::load(Path::new(&path)) {
        Ok(_) => panic!("{case} loaded"),
        Err(e) => e.to_string(),
    }
}

/// A key written in flow style (`gantt: {cell: …}`) is located at its line and column.
#[test]
fn errors_on_flow_style_keys_carry_their_line() {
    let err = load_error("flow-style-key");
    assert!(err.contains("flow-style-key.yaml:6:22"), "{err}");
    assert!(err.contains("at reports.gantt.cell"), "{err}");
}

/// A manifest that is not UTF-8 is reported at the line and byte where it stops being text.
#[test]
fn non_utf8_manifest_errors_name_the_line_and_byte() {
    let err = load_error("not-utf8");
    assert!(err.contains("not-utf8.yaml:4:6"), "{err}");
    assert!(err.contains("not valid UTF-8 (byte 0xe9)"), "{err}");
}

/// An unclosed `{` is a YAML syntax error at its place, not an unknown variant.
#[test]
fn an_unclosed_brace_is_a_yaml_syntax_error() {
    for case in ["unclosed-brace-folds-into-value", "yaml-syntax"] {
        let err = load_error(case);
        assert!(err.contains("YAML syntax error"), "{err}");
        assert!(!err.contains("variant"), "{err}");
    }
}

/// Two manifests defining one experiment are both named.
#[test]
fn two_manifests_defining_one_experiment_are_both_named() {
    let p = Project::new();
    p.manifest("first", GRID);
    p.manifest("second", GRID);
    let out = p.schedlab(&["plan"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("first.yaml") && err.contains("second.yaml"),
        "{err}"
    );
    assert!(err.contains("grid"), "{err}");
}

fn swf_jobs(bytes: &[u8]) -> Result<usize, String> {
    schedlab::swf::read_bytes(bytes, "test.swf", schedlab::swf::Mode::Strict)
        .map(|t| t.workload.jobs.len())
        .map_err(|e| e.to_string())
}

const TWO_JOBS: &str = "; MaxProcs: 64\n\
    1 0 5 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1\n\
    2 10 0 50 8 -1 -1 8 100 -1 1 3 1 -1 1 -1 -1 -1\n";

/// A UTF-8 byte order mark at the start of an SWF file is skipped.
#[test]
fn an_swf_with_a_utf8_bom_reads() {
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend_from_slice(TWO_JOBS.as_bytes());
    assert_eq!(swf_jobs(&bytes), Ok(2));
}

/// Lone CR line ends (old Mac files) are line ends: the jobs are read, not 0 jobs with exit 0;
/// and a file without job lines is an error.
#[test]
fn an_swf_with_cr_only_line_ends_reads_its_jobs_and_an_empty_one_is_an_error() {
    assert_eq!(swf_jobs(TWO_JOBS.replace('\n', "\r").as_bytes()), Ok(2));
    let err = swf_jobs(b"; MaxProcs: 64\n; nothing else\n").unwrap_err();
    assert!(err.contains("no job"), "{err}");
    let p = Project::new();
    fs::write(p.path().join("empty.swf"), "; only a comment\n").unwrap();
    let out = p.schedlab(&["trace", "info", "empty.swf"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// An absurd MaxProcs header is an error with its line, not dropped silently.
#[test]
fn an_absurd_maxprocs_header_is_an_error_with_its_line() {
    let text = TWO_JOBS.replace("MaxProcs: 64", "MaxProcs: 99999999999");
    let err = swf_jobs(text.as_bytes()).unwrap_err();
    assert!(err.contains("line 1") || err.contains(":1"), "{err}");
    assert!(err.contains("MaxProcs"), "{err}");
}

/// A damaged gzip file says so and never suggests `--lenient` (which cannot help).
#[test]
fn a_damaged_gzip_says_so_without_suggesting_lenient() {
    let p = Project::new();
    let gz = fs::read(p.path().join("workloads/kth.swf.gz")).unwrap();
    fs::write(p.path().join("cut.swf.gz"), &gz[..gz.len() / 2]).unwrap();
    let mut flipped = gz.clone();
    flipped[gz.len() / 3] ^= 0xff;
    fs::write(p.path().join("flipped.swf.gz"), &flipped).unwrap();
    for file in ["cut.swf.gz", "flipped.swf.gz"] {
        for extra in [&[][..], &["--lenient"][..]] {
            let mut args = vec!["trace", "info", file];
            args.extend_from_slice(extra);
            let out = p.schedlab(&args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{file}: {err}");
            assert!(err.contains("damaged"), "{file}: {err}");
            assert!(!err.contains("--lenient"), "{file}: {err}");
        }
    }
}

/// `reports.template` outside the manifest's project is refused (located, with the way out);
/// `--allow-template-outside-project` renders it.
#[test]
fn report_templates_outside_the_project_are_refused_unless_allowed() {
    let p = Project::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("steal.html.j2");
    fs::write(&outside, "<p>{{ experiment }} from outside</p>").unwrap();
    let inside = p.path().join("experiments/mine.html.j2");
    fs::write(&inside, "<p>{{ experiment }} from inside</p>").unwrap();
    let with = |template: &Path| {
        format!(
            "{GRID}reports:\n  formats: [html]\n  template: {}\n",
            template.display()
        )
    };
    p.manifest("grid", &with(&outside));
    let (out, _) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = p.schedlab(&["report"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("grid.yaml:") && err.contains("reports.template"),
        "{err}"
    );
    assert!(err.contains("outside the project"), "{err}");
    assert!(err.contains("--allow-template-outside-project"), "{err}");
    assert!(!p.path().join("reports/grid.html").exists());

    let out = p.schedlab(&["report", "--allow-template-outside-project"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = fs::read_to_string(p.path().join("reports/grid.html")).unwrap();
    assert!(html.contains("grid from outside"), "{html}");

    p.manifest("grid", &with(&inside));
    let out = p.schedlab(&["report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = fs::read_to_string(p.path().join("reports/grid.html")).unwrap();
    assert!(html.contains("grid from inside"), "{html}");
}

// ----------------------------------------------------------------------------------------------
// Results that analysis tools understand

/// (field → its metadata, file key-value metadata) of a Parquet file, read with the parquet
/// crate's Arrow reader (pyarrow reads the same in tests/check_parquet.py).
type ParquetMeta = (
    BTreeMap<String, BTreeMap<String, String>>,
    BTreeMap<String, String>,
);

fn parquet_meta(path: &Path) -> ParquetMeta {
    let file = fs::File::open(path).unwrap();
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let fields = reader
        .schema()
        .fields()
        .iter()
        .map(|f| {
            let meta = f.metadata().iter();
            let meta = meta.map(|(k, v)| (k.to_string(), v.to_string()));
            (f.name().clone(), meta.collect())
        })
        .collect();
    let kv = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    (fields, kv)
}

/// Units and descriptions are Parquet field metadata, every result file has an `experiment`
/// column, and the key-value metadata holds the provenance: manifest text, trace digests, the
/// command line, schedlab's version and commit.
#[test]
fn result_columns_carry_units_descriptions_and_provenance() {
    let p = Project::new();
    let manifest = p.manifest("grid", GRID);
    let (out, _) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = p.path().join("results/grid");
    let (fields, kv) = parquet_meta(&dir.join("summary.parquet"));
    let wait = &fields["wait_mean"];
    assert_eq!(wait.get("unit").map(String::as_str), Some("s"), "{wait:?}");
    assert!(wait.get("description").is_some_and(|d| d.contains("wait")));
    assert!(fields.contains_key("experiment"));
    assert_eq!(
        kv["schedlab.manifest"],
        fs::read_to_string(&manifest).unwrap()
    );
    assert!(
        kv["schedlab.traces"].contains("kth.swf.gz"),
        "{}",
        kv["schedlab.traces"]
    );
    let digest = blake3::hash(&fs::read(p.path().join("workloads/kth.swf.gz")).unwrap());
    assert!(
        kv["schedlab.traces"].contains(digest.to_hex().as_str()),
        "{}",
        kv["schedlab.traces"]
    );
    assert!(kv["schedlab.command"].starts_with("schedlab run"));
    assert_eq!(kv["schedlab.version"], env!("CARGO_PKG_VERSION"));
    assert!(kv.contains_key("schedlab.commit"));
    for file in ["jobs.parquet", "timeseries.parquet"] {
        let (fields, kv) = parquet_meta(&dir.join(file));
        assert!(fields.contains_key("experiment"), "{file}");
        assert!(kv.contains_key("schedlab.manifest"), "{file}");
        let undescribed: Vec<_> = fields
            .iter()
            .filter(|(_, m)| !m.contains_key("description"))
            .map(|(n, _)| n)
            .collect();
        assert!(undescribed.is_empty(), "{file}: {undescribed:?}");
    }
}

/// The files written from one trace say where they come from as experiment files do: the
/// trace's path and content digest (`schedlab.traces`, the same JSON form) and the command that
/// writes them again — which, run elsewhere with another output path, writes the same bytes.
#[test]
fn trace_command_files_carry_the_trace_digest_and_their_command() {
    let p = Project::new();
    let kth = "workloads/kth.swf.gz";
    let digest = blake3::hash(&fs::read(p.path().join(kth)).unwrap());
    let bytes = fs::metadata(p.path().join(kth)).unwrap().len();
    fs::create_dir(p.path().join("again")).unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["simulate", kth, "-s", "easy", "--format", "json"],
            "--jobs-out",
        ),
        (&["trace", "stats", kth, "--by", "user"], "-o"),
        (&["trace", "eet", kth, "--bin", "3600"], "--users-out"),
    ];
    for (args, option) in cases {
        let mut first = args.to_vec();
        first.extend([option, "first.parquet"]);
        let out = p.schedlab(&first);
        assert!(out.status.success(), "{first:?}: {}", stderr(&out));
        let (_, kv) = parquet_meta(&p.path().join("first.parquet"));
        assert_eq!(kv["schedlab.trace"], kth);
        assert_eq!(kv["schedlab.version"], env!("CARGO_PKG_VERSION"));
        let traces: serde_json::Value = serde_json::from_str(&kv["schedlab.traces"]).unwrap();
        assert_eq!(
            traces,
            serde_json::json!({ kth: {"blake3": digest.to_hex().as_str(), "bytes": bytes} }),
            "{first:?}"
        );
        // The command, without where the output went; run again, it writes the same file.
        let command = &kv["schedlab.command"];
        let without_format: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| *a != "--format" && *a != "json")
            .collect();
        assert_eq!(
            command,
            &format!("schedlab {}", without_format.join(" ")),
            "{first:?}"
        );
        let mut again: Vec<&str> = command.split(' ').skip(1).collect();
        again.extend([option, "again/second.parquet"]);
        let out = p.schedlab(&again);
        assert!(out.status.success(), "{again:?}: {}", stderr(&out));
        assert!(
            fs::read(p.path().join("first.parquet")).unwrap()
                == fs::read(p.path().join("again/second.parquet")).unwrap(),
            "{command}: another file"
        );
    }
}

/// A simulated schedule exports as SWF with the simulated waits in field 3: our reader reads it
/// back with the same jobs, and submit + wait + run of each job are its start and end in
/// jobs.parquet.
#[test]
fn a_simulated_schedule_exports_as_swf_with_its_waits() {
    use arrow_array::{Array, Int64Array};
    let p = Project::new();
    p.manifest("grid", GRID);
    let (out, _) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let jobs = p.path().join("results/grid/jobs.parquet");
    // Several cells: the one to export must be named.
    let out = p.schedlab(&["export", jobs.to_str().unwrap(), "-o", "x.swf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--cell"), "{}", stderr(&out));
    let out = p.schedlab(&[
        "export",
        jobs.to_str().unwrap(),
        "--cell",
        "easy.interval-900",
        "-o",
        "easy.swf",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    let exported =
        schedlab::swf::read_path(&p.path().join("easy.swf"), schedlab::swf::Mode::Strict).unwrap();
    // The stored schedule of that cell.
    let file = fs::File::open(&jobs).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut stored = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let col = |n: &str| batch.column_by_name(n).unwrap().clone();
        let cell = col("cell");
        let cell = cell
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        let int = |n: &str| {
            col(n)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone()
        };
        let (id, submit, wait, run) = (int("job_id"), int("submit"), int("wait"), int("run"));
        for r in 0..batch.num_rows() {
            if cell.value(r) == "easy.interval-900" {
                stored.push((id.value(r), submit.value(r), wait.value(r), run.value(r)));
            }
        }
    }
    assert_eq!(exported.workload.jobs.len(), stored.len());
    assert_eq!(exported.recorded_waits.len(), stored.len());
    assert!(stored.iter().any(|s| s.2 > 0), "some job waited");
    for ((job, wait), s) in exported
        .workload
        .jobs
        .iter()
        .zip(&exported.recorded_waits)
        .zip(&stored)
    {
        assert_eq!(
            (job.id as i64, job.submit, *wait, job.runtime),
            (s.0, s.1, s.2, s.3),
            "job {}",
            s.0
        );
    }
}

/// `-o -` sends `export`'s and `generate`'s SWF to standard output (byte for byte what `-o FILE`
/// writes), so they pipe into other tools; no file named `-` appears, and a reader that goes
/// away ends them quietly. Before, `-o -` wrote a file called `-`.
#[test]
fn export_and_generate_write_to_standard_output_with_a_dash() {
    let p = Project::new();
    p.manifest("grid", GRID);
    let (out, _) = p.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    p.manifest(
        "syn",
        "name: syn
workloads:
  users:
    synthetic:
      length: {days: 2}
      users:
        - name: user
          count: 3
          arrivals: {lambda: 6.944e-5, delta: 2.778e-4, mu: 2.778e-3}
          runtime: [[1, 0.0], [900, 0.5], [3600, 1.0]]
          procs: {log_uniform: [1, 64]}
clusters:
  pool: {procs: 128}
schedulers:
  easy: {policy: easy}
",
    );
    let export = |to: &str| {
        vec![
            "export".to_string(),
            "results/grid/jobs.parquet".into(),
            "--cell".into(),
            "easy.interval-900".into(),
            "-o".into(),
            to.into(),
        ]
    };
    let generate = |to: &str| {
        [
            "generate",
            "experiments/syn.yaml",
            "--workload",
            "users",
            "-o",
            to,
        ]
        .map(String::from)
        .to_vec()
    };
    for command in [export, generate] {
        let args = command("file.swf");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = p.schedlab(&args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let file = fs::read(p.path().join("file.swf")).unwrap();
        assert!(file.len() > 200, "{args:?}");

        let args = command("-");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = p.schedlab(&args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(out.stdout == file, "{args:?}: stdout differs from the file");
        assert!(
            stderr(&out).contains("to standard output"),
            "{}",
            stderr(&out)
        );
        assert!(
            !p.path().join("-").exists(),
            "{args:?} wrote a file named -"
        );

        let mut child = p
            .cmd(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let quiet = out.status.signal() == Some(libc::SIGPIPE) || out.status.success();
        assert!(quiet, "{args:?}: {:?}", out.status);
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
        fs::remove_file(p.path().join("file.swf")).unwrap();
    }
}

/// Every output option names a file in a folder that exists: a mistyped folder is an input error
/// (exit 2) that names the option and the missing folder, found before any work, and nothing is
/// created — before, `-o /nonexist/x.swf` made `/nonexist`. A file in the way of the folder is
/// said to be one. `-o -` (standard output) needs no folder.
#[test]
fn output_options_refuse_a_missing_folder_and_create_none() {
    let p = Project::new();
    fs::write(p.path().join("plain"), "a file, not a folder").unwrap();
    let kth = "workloads/kth.swf.gz";
    let cases: [&[&str]; 11] = [
        &[
            "simulate",
            kth,
            "-s",
            "easy",
            "--jobs-out",
            "missing/deeper/jobs.parquet",
        ],
        &["trace", "stats", kth, "-o", "missing/stats.parquet"],
        &["trace", "eet", kth, "--users-out", "missing/users.parquet"],
        &["trace", "eet", kth, "--svg", "missing/heatmap.svg"],
        &["fit", kth, "-o", "missing/fitted.yaml"],
        &[
            "trace",
            "penalties",
            kth,
            "--machines",
            "m.machines",
            "-o",
            "missing/p.parquet",
        ],
        &[
            "export",
            "results/x/jobs.parquet",
            "--cell",
            "c",
            "-o",
            "missing/x.swf",
        ],
        &[
            "generate",
            "experiments/x.yaml",
            "--workload",
            "w",
            "-o",
            "missing/x.swf",
        ],
        &["trace", "import", kth, "-o", "missing/x.swf"],
        &["run", "--events", "missing/events.jsonl"],
        &[
            "simulate",
            kth,
            "-s",
            "easy",
            "--jobs-out",
            "plain/jobs.parquet",
        ],
    ];
    for args in cases {
        let out = p.schedlab(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let option = args[args.len() - 2];
        let path = args[args.len() - 1];
        let folder = Path::new(path).parent().unwrap().display().to_string();
        let problem = if folder == "plain" {
            "plain is not a folder".to_string()
        } else {
            format!("the folder {folder} does not exist")
        };
        assert!(
            err.contains(&format!("error: {option} {path}: {problem}")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains(&format!("mkdir -p {folder}")),
            "{args:?}: {err}"
        );
        assert!(
            !p.path().join("missing").exists(),
            "{args:?} created a folder"
        );
    }
    // An existing folder is used as it is.
    fs::create_dir(p.path().join("there")).unwrap();
    let out = p.schedlab(&["trace", "stats", kth, "-o", "there/stats.parquet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(p.path().join("there/stats.parquet").is_file());
}

/// The visible leaf commands of the real command tree (`trace info`, `run`, …), so that a
/// command added later is checked too; `help` and the hidden `worker` are left out.
fn leaf_commands() -> Vec<Vec<String>> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let subs: Vec<&clap::Command> = cmd
            .get_subcommands()
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
            .collect();
        if subs.is_empty() {
            out.push(path);
            return;
        }
        for sub in subs {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p, out);
        }
    }
    let mut out = Vec::new();
    walk(&schedlab::cli::Cli::command(), Vec::new(), &mut out);
    out
}

/// Every command's `--help` ends with examples and its exit codes — every command of the real
/// command tree, `trace penalties` included (it had neither).
#[test]
fn every_help_has_examples_and_exit_codes() {
    let commands = leaf_commands();
    assert!(commands.len() >= 15, "{commands:?}");
    for command in &commands {
        let out = Command::new(EXE)
            .args(command)
            .arg("--help")
            .output()
            .unwrap();
        assert!(out.status.success(), "{command:?}");
        let help = stdout(&out);
        let examples = help
            .find("\nExamples:\n")
            .unwrap_or_else(|| panic!("{command:?} has no examples:\n{help}"));
        let example = &help[examples..];
        assert!(
            example.contains(&format!("schedlab {}", command.join(" "))),
            "{command:?}: the example runs the command:\n{help}"
        );
        assert!(help.contains("\nExit codes: 0 "), "{command:?}:\n{help}");
    }
}

/// Every option and argument of every command says what it does in `--help` (`--format` of
/// `trace info`, `trace stats`, `trace penalties` and `fit` had an empty line).
#[test]
fn every_option_has_a_help_line() {
    use clap::CommandFactory;
    let root = schedlab::cli::Cli::command();
    let mut silent = Vec::new();
    for path in leaf_commands() {
        let mut cmd = &root;
        for name in &path {
            cmd = cmd.find_subcommand(name).unwrap();
        }
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if arg.is_hide_set() || id == "help" || id == "version" {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                silent.push(format!("{} {id}", path.join(" ")));
            }
        }
    }
    assert!(silent.is_empty(), "options without help: {silent:?}");
}

/// `schedlab completions SHELL` prints a completion script that knows the subcommands; the
/// bash one parses.
#[test]
fn shell_completions_are_generated_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(EXE)
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let script = stdout(&out);
        for word in [
            "simulate",
            "export",
            "events",
            "allow-template-outside-project",
        ] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
        if shell == "bash" {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("schedlab.bash");
            fs::write(&path, &script).unwrap();
            let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
            assert!(check.status.success(), "{}", stderr(&check));
        }
    }
    let out = Command::new(EXE)
        .args(["completions", "tcsh-not"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

// ----------------------------------------------------------------------------------------------
// Fuzzing, in bounded time

/// Mutations of valid input: flipped, deleted, inserted and duplicated bytes and lines, and
/// extreme numbers, from a fixed seed so that a failure reproduces.
struct Mutator {
    rng: rand_chacha::ChaCha8Rng,
}

impl Mutator {
    fn new(seed: u64) -> Mutator {
        use rand_core::SeedableRng;
        Mutator {
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
        }
    }

    fn below(&mut self, n: usize) -> usize {
        use rand_core::RngCore;
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    fn mutate(&mut self, input: &[u8]) -> Vec<u8> {
        const TOKENS: &[&[u8]] = &[
            b"-1",
            b"0",
            b"99999999999999999999",
            b"1e308",
            b"NaN",
            b"-9223372036854775808",
            b"{",
            b"}",
            b"[",
            b":",
            b"\n",
            b"\r",
            b"\t",
            b"\xef\xbb\xbf",
            b"\xff",
            b"*",
            b"&a",
            b"!!binary",
            b"- ",
            b"  ",
        ];
        let mut out = input.to_vec();
        for _ in 0..1 + self.below(4) {
            let at = self.below(out.len() + 1);
            match self.below(6) {
                0 if !out.is_empty() => {
                    let i = at.min(out.len() - 1);
                    out[i] ^= 1 << self.below(8);
                }
                1 => {
                    let end = (at + self.below(16)).min(out.len());
                    out.drain(at..end);
                }
                2 => {
                    let token = TOKENS[self.below(TOKENS.len())];
                    out.splice(at..at, token.iter().copied());
                }
                3 => {
                    // Replace a number-like run of digits with an extreme token.
                    let start = at.min(out.len());
                    let end = out[start..]
                        .iter()
                        .position(|b| !b.is_ascii_digit())
                        .map_or(out.len(), |e| start + e);
                    let token = TOKENS[self.below(6)];
                    out.splice(start..end, token.iter().copied());
                }
                4 => {
                    // Duplicate a line.
                    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
                    let i = self.below(lines.len());
                    let line = lines[i].to_vec();
                    let mut joined: Vec<u8> = Vec::new();
                    for (k, l) in lines.iter().enumerate() {
                        joined.extend_from_slice(l);
                        joined.push(b'\n');
                        if k == i {
                            joined.extend_from_slice(&line);
                            joined.push(b'\n');
                        }
                    }
                    out = joined;
                }
                _ => out.truncate(at),
            }
        }
        out
    }
}

/// Mutated SWF traces (plain and gzip) and mutated manifests never panic nor abort: each is
/// read or refused with an error. 3,000 traces and 1,500 manifests from fixed seeds.
#[test]
fn fuzzed_traces_and_manifests_are_read_or_refused_never_a_panic() {
    let kth = schedlab::swf::read_path(
        &repo().join("workloads/KTH-SP2-1996-2.1-cln.swf.gz"),
        schedlab::swf::Mode::Strict,
    )
    .unwrap();
    assert!(kth.workload.jobs.len() > 1000);
    // The head of the real trace: its header and a few hundred job lines.
    let text = {
        let mut head = gunzip_head(
            &repo().join("workloads/KTH-SP2-1996-2.1-cln.swf.gz"),
            40_000,
        );
        let end = head.iter().rposition(|&b| b == b'\n').unwrap() + 1;
        head.truncate(end);
        head
    };
    let mut m = Mutator::new(16);
    for round in 0..3000 {
        let input = m.mutate(&text);
        for mode in [schedlab::swf::Mode::Strict, schedlab::swf::Mode::Lenient] {
            let result = std::panic::catch_unwind(|| {
                let _ = schedlab::swf::read_bytes(&input, "fuzz.swf", mode);
            });
            if result.is_err() {
                let path = std::env::temp_dir().join(format!("schedlab-fuzz-{round}.swf"));
                fs::write(&path, &input).unwrap();
                panic!("the reader panicked on {}", path.display());
            }
        }
    }
    // Damaged gzip streams.
    let gz = fs::read(repo().join("workloads/KTH-SP2-1996-2.1-cln.swf.gz")).unwrap();
    let head = &gz[..gz.len().min(20_000)];
    for _ in 0..200 {
        let input = m.mutate(head);
        let _ = schedlab::swf::read_bytes(&input, "fuzz.swf.gz", schedlab::swf::Mode::Lenient);
    }

    // Manifests: every shipped one, mutated, in a project whose traces exist (small copies).
    let p = Project::new();
    let small = p.path().join("workloads/small.swf");
    fs::write(&small, &text).unwrap();
    let mut manifests = Vec::new();
    for path in common::shipped::shipped_manifests() {
        let text = fs::read_to_string(path).unwrap();
        let text = replace_trace_paths(&text);
        manifests.push(text.into_bytes());
    }
    manifests.push(GRID.as_bytes().to_vec());
    let path = p.path().join("experiments/fuzz.yaml");
    for round in 0..1500 {
        let base = &manifests[round % manifests.len()];
        let input = m.mutate(base);
        fs::write(&path, &input).unwrap();
        let result = std::panic::catch_unwind(|| {
            let _ = schedlab::manifest::load(&path);
        });
        if result.is_err() {
            let keep = std::env::temp_dir().join(format!("schedlab-fuzz-{round}.yaml"));
            fs::write(&keep, &input).unwrap();
            panic!("manifest loading panicked on {}", keep.display());
        }
    }
}

/// The first `bytes` of the decompressed text of a gzip trace.
fn gunzip_head(path: &Path, bytes: u64) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(fs::File::open(path).unwrap())
        .take(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// Points every `trace:` of a shipped manifest at the small trace of the fuzz project.
fn replace_trace_paths(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("trace: ") {
            Some(i) => {
                let end = l[i..].find(['}', ',']).map_or(l.len(), |e| i + e);
                format!("{}trace: ../workloads/small.swf{}", &l[..i], &l[end..])
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// On a terminal the progress bar redraws on a timer, so elapsed time and spinner move while a
/// long node runs (it froze for 40 s before): one long simulation plus its metrics and
/// aggregation give many more redraws than finished nodes. Run under a pseudo-terminal by `script` (util-linux).
#[test]
fn the_progress_bar_ticks_while_long_nodes_run() {
    let p = Project::new();
    let blue = repo().join("workloads/SDSC-BLUE-2000-4.2-cln.swf.gz");
    p.manifest(
        "long",
        &format!(
            "name: long
workloads:
  blue: {{trace: {}}}
clusters:
  blue: {{procs: 1152, node_size: 8}}
schedulers:
  conservative: {{policy: conservative}}
",
            blue.display()
        ),
    );
    let out = Command::new("script")
        .args(["-qefc", &format!("{EXE} run -j 1"), "/dev/null"])
        .current_dir(p.path())
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) runs commands on a pseudo-terminal");
    let screen = stdout(&out);
    assert!(out.status.success(), "{screen}");
    // Frames drawn before the first node finished: a bar redrawn only when something changes
    // shows two or three (start, length); the timer adds one every 200 ms of the simulation.
    // Three nodes: simulate, metrics, aggregate.
    let waiting = screen.matches(" 0/3 nodes, about ").count();
    assert!(
        waiting >= 5,
        "{waiting} frames while the node ran:\n{screen}"
    );
    assert!(
        screen.contains(" 2/3 nodes, about ") || screen.contains(" 3/3 nodes, about "),
        "{screen}"
    );
}
