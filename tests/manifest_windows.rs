//! Issue 35: windows as users write them. Each form selects the jobs worked out by hand on a
//! four-job trace, the seconds form keeps its cache-key material, and the CLI refuses a window
//! that keeps no job at plan time (the messages themselves are snapshots in
//! `tests/manifest_errors.rs`).
//!
//! The trace (`tests/fixtures/manifests/plan-invalid/small.swf`): UnixStartTime 1078099200
//! (2004-03-01 00:00 UTC); jobs 1–4 submitted at trace seconds 864,000 (day 10, 2004-03-11),
//! 950,400 (day 11), 3,456,000 (day 40, 2004-04-10) and 6,480,000 (day 75).

use std::path::{Path, PathBuf};
use std::process::Command;

use schedlab::manifest::Manifest;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/manifests/plan-invalid")
        .join(name)
}

/// A manifest of one workload on `trace` with `window`, in a temporary folder.
fn manifest(trace: &str, window: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.yaml");
    std::fs::write(
        &path,
        format!(
            "workloads:\n  small:\n    trace: {}\n    window: {window}\nschedulers:\n  easy: {{policy: easy}}\n",
            fixture(trace).display()
        ),
    )
    .unwrap();
    (dir, path)
}

fn placed(trace: &str, window: &str) -> Manifest {
    let (_dir, path) = manifest(trace, window);
    let m = schedlab::manifest::load(&path).unwrap_or_else(|e| panic!("{window}: {e}"));
    let mut ms = [m];
    schedlab::execute::selection::place_and_check(&mut ms)
        .unwrap_or_else(|e| panic!("{window}: {e}"));
    let [m] = ms;
    m
}

/// The ids of the jobs `window` keeps.
fn kept(window: &str) -> Vec<u64> {
    let m = placed("small.swf", window);
    let trace = schedlab::source::read_path(
        &fixture("small.swf"),
        schedlab::swf::Mode::Strict,
        &Default::default(),
    )
    .unwrap();
    let w = m.cells[0]
        .workload
        .transforms
        .to_transforms()
        .apply(&trace.workload);
    w.jobs.iter().map(|j| j.id).collect()
}

#[test]
fn every_window_form_keeps_the_hand_worked_jobs() {
    // Trace seconds, [start, end).
    assert_eq!(kept("{start: 864000, end: 950401}"), [1, 2]);
    assert_eq!(kept("{start: 864000, end: 950400}"), [1]);
    // From the first submission (864,000).
    assert_eq!(kept("{first: 2d}"), [1, 2]); // [864,000, 1,036,800)
    assert_eq!(kept("{first: 24h}"), [1]); // job 2 is exactly 24 h later: the end is open
    assert_eq!(kept("{from: 24h}"), [2, 3, 4]); // ... and the start closed
    assert_eq!(kept("{from: 30d, to: 90d}"), [3, 4]); // [3,456,000, 8,640,000)
    assert_eq!(kept("{from: 1440min, to: 4w}"), [2]);
    assert_eq!(kept("{from: 86400, to: 2592001}"), [2, 3]); // bare numbers: seconds
    // Dates (UTC) through UnixStartTime: 2004-03-11 is trace second 864,000.
    assert_eq!(kept("{from: 2004-03-11, to: 2004-04-10}"), [1, 2]);
    assert_eq!(kept("{to: 2004-04-10T00:00:01}"), [1, 2, 3]);
    assert_eq!(kept("{from: '2004-04-10 00:00'}"), [3, 4]);
    // A date and a duration together: from 2004-03-12 (trace second 950,400) to 40 days after
    // the first submission (4,320,000).
    assert_eq!(kept("{from: 2004-03-12, to: 40d}"), [2, 3]);
    assert_eq!(kept("{from: 2004-03-12, to: 30d}"), [2]);
}

#[test]
fn seconds_windows_keep_their_key_material_and_new_forms_key_their_bounds() {
    let material = |window: &str| {
        let m = placed("small.swf", window);
        schedlab::plan::build::simulate_material(&m.cells[0], None)["workload"]["transforms"]
            .to_string()
    };
    // The material a `{start, end}` window had before issue 35, byte for byte: the keys of
    // existing manifests do not change.
    assert_eq!(
        material("{start: 864000, end: 950401}"),
        r#"{"exclude_users":null,"first_jobs":null,"load_scale":null,"partitions":null,"users":null,"window_end":950401,"window_start":864000}"#
    );
    // A relative window keys what was written (with the trace's digest, that fixes the jobs),
    // never where it was placed.
    assert_eq!(
        material("{from: 30d, to: 2004-05-01}"),
        r#"{"exclude_users":null,"first_jobs":null,"load_scale":null,"partitions":null,"users":null,"window":{"from":{"after_first":2592000},"to":{"unix":1083369600}},"window_end":null,"window_start":null}"#
    );
    assert_ne!(material("{first: 60d}"), material("{first: 61d}"));
    // The unit it was written in is for messages only.
    assert_eq!(material("{first: 2d}"), material("{first: 48h}"));
}

#[test]
fn an_unplaced_relative_window_keeps_no_job_rather_than_the_wrong_ones() {
    let (_dir, path) = manifest("small.swf", "{first: 60d}");
    let m = schedlab::manifest::load(&path).unwrap();
    let trace = schedlab::source::read_path(
        &fixture("small.swf"),
        schedlab::swf::Mode::Strict,
        &Default::default(),
    )
    .unwrap();
    let t = m.cells[0].workload.transforms.to_transforms();
    assert!(t.apply(&trace.workload).jobs.is_empty());
}

#[test]
fn plan_and_run_refuse_an_empty_window_before_running_anything() {
    // The first ten days in trace seconds: the trace's first job comes on day 10.
    let (dir, path) = manifest("small.swf", "{start: 0, end: 864000}");
    let results = dir.path().join("results");
    for command in ["plan", "run"] {
        let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .arg(command)
            .arg(&path)
            .arg("--results")
            .arg(&results)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.contains("failed to plan"), "{stderr}");
        assert!(stderr.contains("at workloads.small.window"), "{stderr}");
        assert!(
            stderr.contains(
                "trace second 864,000 to 6,480,000 (2004-03-11 00:00 UTC to 2004-05-15 00:00 UTC)"
            ),
            "{stderr}"
        );
        assert!(
            stderr.contains("hint: `start`/`end` are trace seconds"),
            "{stderr}"
        );
    }
    // Nothing was written for the experiment.
    assert!(!results.join("w").exists());
    // The same study written as users mean it runs.
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replace("{start: 0, end: 864000}", "{first: 10d}"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", "--quiet"])
        .arg(&path)
        .arg("--results")
        .arg(&results)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let jobs = std::fs::metadata(results.join("w/jobs.parquet")).unwrap();
    assert!(jobs.len() > 0);
}
