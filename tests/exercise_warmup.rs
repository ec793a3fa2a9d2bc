//! docs/exercise-results.md, "The initial transient": the figures of the 30-day warm-up on SDSC
//! SP2 under EASY, recomputed by `schedlab simulate` with and without `--warmup-seconds`.

mod common;

use std::path::Path;

fn summary(args: &[&str]) -> serde_json::Value {
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/SDSC-SP2-1998-4.2-cln.swf.gz");
    let mut all = vec![
        "simulate",
        trace.to_str().unwrap(),
        "--scheduler",
        "easy",
        "--format",
        "json",
    ];
    all.extend_from_slice(args);
    let out = common::schedlab_in(Path::new(env!("CARGO_MANIFEST_DIR")), &all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_thirty_day_warmup_moves_sp2_easy_metrics_by_the_documented_percentages() {
    let (all, warm) = (summary(&[]), summary(&["--warmup-seconds", "2592000"]));
    let change = |k: &str| {
        let (a, b) = (all[k].as_f64().unwrap(), warm[k].as_f64().unwrap());
        100.0 * (b - a) / a
    };
    // (metric, documented change in %, to the table's two decimals)
    for (metric, documented) in [
        ("wait_mean", 4.09),
        ("response_mean", 2.95),
        ("slowdown_mean", 4.08),
        ("bounded_slowdown_mean", 4.06),
        ("queue_length_sampled", 3.42),
        ("utilization", 0.96),
        ("backfilled_fraction", 1.56),
        ("measured_jobs", -5.05),
    ] {
        let c = change(metric);
        assert!(
            (c - documented).abs() < 0.005,
            "{metric}: {c:.3} % documented {documented} %"
        );
    }
}
