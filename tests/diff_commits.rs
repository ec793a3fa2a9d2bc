//! `schedlab diff HEAD~1 HEAD` on a scripted two-commit repository: run at each commit, change a
//! scheduler parameter in between, compare. The output is a reviewed snapshot
//! (`tests/fixtures/diff/*.expected`; `SCHEDLAB_BLESS=1` rewrites them).

use std::fs;
use std::path::Path;
use std::process::Command;

mod common;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.org",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

use common::schedlab_in as schedlab;

fn manifest(interval: u32) -> String {
    format!(
        "name: study
workloads:
  kth: {{trace: ../workloads/kth.swf.gz, first_jobs: 3000}}
clusters:
  pool: {{procs: 100}}
schedulers:
  fcfs: {{policy: fcfs}}
  easy: {{policy: easy, interval: {interval}}}
"
    )
}

/// A project with KTH-SP2 and `experiments/study.yaml` (EASY's interval 60 s) in a git
/// repository of one commit, results ignored.
fn committed_study() -> tempfile::TempDir {
    let tmp = common::project_with_kth();
    let dir = tmp.path();
    fs::write(dir.join(".gitignore"), "/results/\n").unwrap();
    git(dir, &["init", "-q"]);
    fs::write(dir.join("experiments/study.yaml"), manifest(60)).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "first"]);
    tmp
}

fn snapshot(name: &str, got: &str) {
    let path = Path::new("tests/fixtures/diff").join(name);
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        fs::write(&path, got).unwrap();
    }
    assert_eq!(
        got,
        fs::read_to_string(&path).unwrap_or_default(),
        "snapshot {}",
        path.display()
    );
}

#[test]
fn diff_two_commits_after_running_at_each() {
    let tmp = committed_study();
    let dir = tmp.path();
    assert!(schedlab(dir, &["run", "--quiet"]).status.success());
    fs::write(dir.join("experiments/study.yaml"), manifest(600)).unwrap();
    git(dir, &["commit", "-q", "-am", "coarser EASY interval"]);
    assert!(schedlab(dir, &["run", "--quiet"]).status.success());

    let table = schedlab(dir, &["diff", "HEAD~1", "HEAD"]);
    assert_eq!(table.status.code(), Some(0));
    snapshot(
        "two-commits.table.expected",
        &String::from_utf8_lossy(&table.stdout),
    );
    // Times carry their unit, as in reports (issue 35): the mean wait in hours with the exact
    // seconds, counts and ratios bare.
    let text = String::from_utf8_lossy(&table.stdout);
    let wait = text.lines().find(|l| l.contains(" wait_mean ")).unwrap();
    assert!(wait.contains(" h (") && wait.contains(" s)"), "{wait}");
    let ratio = text
        .lines()
        .find(|l| l.contains(" backfilled_fraction "))
        .unwrap();
    assert!(!ratio.contains(" s") && !ratio.contains(" h"), "{ratio}");
    let md = schedlab(dir, &["diff", "HEAD~1", "HEAD", "--format", "markdown"]);
    snapshot(
        "two-commits.md.expected",
        &String::from_utf8_lossy(&md.stdout),
    );

    // The FCFS cell is untouched; EASY waits longer with a 600 s interval.
    let gate = schedlab(
        dir,
        &[
            "diff",
            "HEAD~1",
            "HEAD",
            "--fail-on",
            "wait_mean>5%",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        gate.status.code(),
        Some(1),
        "a crossed threshold fails the command"
    );
    let err = String::from_utf8_lossy(&gate.stderr);
    assert!(
        err.contains("threshold crossed: wait_mean>5% in study/easy"),
        "{err}"
    );
    let json: serde_json::Value = serde_json::from_slice(&gate.stdout).unwrap();
    let fcfs = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cell"] == "fcfs")
        .unwrap();
    assert!(
        fcfs["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["changed"] == false)
    );
    let lenient = schedlab(
        dir,
        &["diff", "HEAD~1", "HEAD", "--fail-on", "wait_mean>100000%"],
    );
    assert_eq!(lenient.status.code(), Some(0));

    // Result directories work as well, and a revision never run is a clear input error.
    let dirs = schedlab(dir, &["diff", "results/study", "results/study"]);
    assert!(
        String::from_utf8_lossy(&dirs.stdout).contains("2 cells compared: 0 changed, 2 identical")
    );
    let unknown = schedlab(dir, &["diff", "nope", "HEAD"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("nope is neither a result directory nor a git revision")
    );
    let bad = schedlab(dir, &["diff", "HEAD~1", "HEAD", "--fail-on", "wait_men>5%"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("did you mean `wait_mean`"));
}

/// docs/diff.md's work-in-progress commands: a named run, an uncommitted edit, a second run;
/// `@baseline`, `@~1` and `@latest` reach both result sets, and `gc` keeps the named one.
#[test]
fn diff_work_in_progress_by_run_name_and_by_runs_back() {
    let tmp = committed_study();
    let dir = tmp.path();
    let ok = |args: &[&str]| {
        let out = schedlab(dir, args);
        assert!(
            out.status.success(),
            "schedlab {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    ok(&["run", "--quiet", "--name", "baseline"]);
    // Nothing changed: the same results again are not a second run.
    ok(&["run", "--quiet"]);
    let none = schedlab(dir, &["diff", "@~1", "@latest"]);
    assert_eq!(none.status.code(), Some(2));
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(
        err.contains(
            "@~1: no experiment in results has 2 recorded runs; the named runs are @baseline"
        ),
        "{err}"
    );
    // An uncommitted edit (recorded under <commit>-dirty), run again.
    fs::write(dir.join("experiments/study.yaml"), manifest(600)).unwrap();
    ok(&["run", "--quiet"]);
    let by_name = ok(&["diff", "@baseline", "@latest", "--format", "json"]);
    let back = ok(&["diff", "@~1", "@latest", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&by_name).unwrap();
    let changed: Vec<&str> = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["changed"] == true)
        })
        .map(|c| c["cell"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["easy"], "only the edited EASY cell changes");
    // The same two result sets, whichever way they are named (labels aside).
    let cells =
        |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap()["cells"].clone();
    assert_eq!(cells(&by_name), cells(&back));
    // The bare revision is the committed run, not the dirty one: the baseline.
    let head = ok(&["diff", "HEAD", "@baseline", "--format", "json"]);
    assert!(
        cells(&head).as_array().unwrap().iter().all(|c| c["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["changed"] == false)),
        "{head}"
    );

    // gc keeps the named run's results (no manifest reaches them now) and drops the others.
    fs::write(dir.join("experiments/study.yaml"), manifest(3600)).unwrap();
    ok(&["run", "--quiet"]);
    ok(&["gc"]);
    ok(&["diff", "@baseline", "@latest"]);
    let gone = schedlab(dir, &["diff", "@~1", "@latest"]);
    assert_ne!(gone.status.code(), Some(0));
    let err = String::from_utf8_lossy(&gone.stderr);
    assert!(err.contains("no longer in the cache"), "{err}");

    for (args, message) in [
        (
            &["diff", "@nightly", "@latest"][..],
            "@nightly: no run named \"nightly\" in results; the named runs are @baseline",
        ),
        (
            &["diff", "@~x", "@latest"][..],
            "@~x: expected @~N with N a whole number of runs back",
        ),
        (
            &["run", "--quiet", "--name", "../up"][..],
            "invalid run name \"../up\"",
        ),
    ] {
        let out = schedlab(dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}
