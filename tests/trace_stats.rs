//! `schedlab trace stats` and `schedlab fit` (issue 5): statistics of a hand-made trace worked
//! out by hand, Parquet output, the fitted manifest loading and generating, bad input, and the
//! fit of LPC-EGEE's top users (the paper's own cluster; the bundled trace).

mod common;

use std::path::Path;

/// Four jobs: user 1 submits at 0, 100 and 400 (runtimes 10, 20, 30; recorded waits 5, 15 and
/// unknown), user 2 at 3700 (runtime 60, wait 0).
const TRACE: &str = "; UnixStartTime: 0
; MaxProcs: 8
1 0 5 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1
2 100 15 20 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1
3 400 -1 30 1 -1 -1 1 30 -1 1 1 1 -1 1 -1 -1 -1
4 3700 0 60 2 -1 -1 2 60 -1 1 2 1 -1 1 -1 -1 -1
";

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn stats_by_user_by_hand_and_as_parquet() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.swf"), TRACE).unwrap();
    let out = common::schedlab_in(
        dir.path(),
        &[
            "trace",
            "stats",
            "t.swf",
            "--by",
            "user",
            "--format",
            "json",
            "-o",
            "s.parquet",
        ],
    );
    let v = json(&out);
    let u1 = &v[0];
    assert_eq!(u1["group"], "user 1");
    assert_eq!(u1["jobs"], 3);
    assert_eq!(u1["runtime"]["mean"], 20.0);
    // Waits 5 and 15: mean 10, population sd 5, CV 0.5.
    assert_eq!(u1["wait"]["mean"], 10.0);
    assert_eq!(u1["wait"]["sd"], 5.0);
    // Gaps 100 and 300: mean 200, sd 100.
    assert_eq!(u1["interarrival"]["mean"], 200.0);
    assert_eq!(u1["interarrival"]["cv"], 0.5);
    // ŴT = 10 / (2 jobs × mean runtime 15 of the jobs with a wait).
    let wt = u1["normalized_wait"].as_f64().unwrap();
    assert!((wt - 1.0 / 3.0).abs() < 1e-12);
    // R0(60 s) = (40 + 240) / (400 − 60); the grid's 4th point is 60 s.
    let r0 = u1["r0"][3].as_f64().unwrap();
    assert!((r0 - 280.0 / 340.0).abs() < 1e-12);
    assert_eq!(v[1]["group"], "user 2");
    assert_eq!(v[1]["daily"][1], 1);
    // The Parquet file has one row per user and the documented columns.
    let file = std::fs::File::open(dir.path().join("s.parquet")).unwrap();
    let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
    use parquet::file::reader::FileReader;
    let meta = reader.metadata();
    assert_eq!(meta.file_metadata().num_rows(), 2);
    let names: Vec<String> = meta
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    for c in [
        "group",
        "jobs",
        "wait_cv",
        "normalized_wait",
        "hour_00",
        "hour_23",
        "r0_1s",
        "r0_3600s",
    ] {
        assert!(names.iter().any(|n| n == c), "{c} in {names:?}");
    }
}

#[test]
fn bad_input_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.swf"), TRACE).unwrap();
    for args in [
        vec!["trace", "stats", "missing.swf"],
        vec!["trace", "stats", "t.swf", "--top", "0"],
        vec!["fit", "t.swf", "--top-users", "0"],
        vec!["fit", "missing.swf"],
    ] {
        let out = common::schedlab_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"));
    }
}

/// Fits the top users of a trace, checks the manifest it writes, and returns the fits.
fn fit(dir: &Path, trace: &str, users: &str) -> serde_json::Value {
    let out = common::schedlab_in(
        dir,
        &[
            "fit",
            trace,
            "--top-users",
            users,
            "--format",
            "json",
            "-o",
            "experiments/fit.yaml",
        ],
    );
    json(&out)
}

#[test]
fn fit_writes_a_manifest_that_generates_the_users() {
    // A generated trace with known users, fitted back through the command line.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("experiments")).unwrap();
    std::fs::write(
        dir.path().join("experiments/src.yaml"),
        "workloads:
  two:
    synthetic:
      length: {days: 400}
      users:
        - {name: a, arrivals: {lambda: 2.1e-4, delta: 0.02079, mu: 0.0837}, runtime: [[1, 0], [600, 1]], procs: {weights: {1: 1}}}
        - {name: b, arrivals: {lambda: 1.2e-4, delta: 0.01188, mu: 0.0620}, runtime: [[1, 0], [60, 1]], procs: {weights: {4: 1}}}
clusters:
  c: {procs: 16}
schedulers:
  easy: {policy: easy}
",
    )
    .unwrap();
    let out = common::schedlab_in(
        dir.path(),
        &[
            "generate",
            "experiments/src.yaml",
            "--workload",
            "two",
            "-o",
            "two.swf",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fits = fit(dir.path(), "two.swf", "2");
    assert_eq!(fits.as_array().unwrap().len(), 2);
    for f in fits.as_array().unwrap() {
        assert!(f["error"].as_f64().unwrap() < 0.02, "{f}");
        let (model, trace) = (
            f["model_cv"].as_f64().unwrap(),
            f["observed_cv"].as_f64().unwrap(),
        );
        assert!((model / trace - 1.0).abs() < 0.1, "{f}");
    }
    // The manifest loads, has the two users, and generates a workload.
    let m = schedlab::manifest::load(&dir.path().join("experiments/fit.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let schedlab::manifest::WorkloadSource::Synthetic(spec) = &m.cells[0].workload.source else {
        panic!("synthetic")
    };
    assert_eq!(spec.users.len(), 2);
    let w = schedlab::manifest::synthetic::generate_workload(spec, 0, u64::MAX).unwrap();
    assert!(w.len() > 10_000);
    assert!(w.jobs.iter().all(|j| j.procs == 1 || j.procs == 4));
}

#[test]
fn lpc_egee_top_users_fit_where_they_are_bursty() {
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/LPC-EGEE-2004-1.2-cln.swf.gz");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("experiments")).unwrap();
    let fits = fit(dir.path(), trace.to_str().unwrap(), "5");
    let fits = fits.as_array().unwrap();
    assert_eq!(fits.len(), 5);
    // docs/lpc-egee-fit.md: the users whose R0 the model fits (sup distance < 0.1) get an
    // interarrival CV within 15% of the trace's; the two regular, monitoring-like users do not
    // fit (distance > 0.1), as the paper says of Dteam's hourly jobs.
    let good: Vec<_> = fits
        .iter()
        .filter(|f| f["error"].as_f64().unwrap() < 0.1)
        .collect();
    assert!(good.len() >= 3, "{fits:?}");
    for f in good {
        let (model, trace) = (
            f["model_cv"].as_f64().unwrap(),
            f["observed_cv"].as_f64().unwrap(),
        );
        assert!((model / trace - 1.0).abs() < 0.15, "{f}");
    }
}

/// Issue 35: the table names the unit of each time column, chosen as a report chooses its wait
/// unit (the column's median): runtimes of 20 and 60 s stay in seconds, user 1's interarrival
/// times (mean 200 s, the only one) are given in minutes.
#[test]
fn stats_table_names_its_time_units() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.swf"), TRACE).unwrap();
    let out = common::schedlab_in(dir.path(), &["trace", "stats", "t.swf", "--by", "user"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap();
    for column in ["run mean (s)", "wait mean (s)", "ia mean (min)"] {
        assert!(header.contains(column), "{header}");
    }
    let user1: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("user 1 "))
        .unwrap()
        .split_whitespace()
        .collect();
    // user 1 | jobs, run mean, run cv, wait mean, wait cv, ia mean, ...
    assert_eq!(&user1[2..8], ["3", "20.0", "0.41", "10.0", "0.50", "3.33"]);
}
