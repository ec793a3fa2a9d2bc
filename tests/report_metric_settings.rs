//! Reports on grids that sweep metric settings (τ, the expected-capacity scale): keyed only in
//! the metrics node, they change no schedule, so a metric they cannot change is neither plotted
//! against them, nor split into panels or compared per setting by them, nor followed along them
//! in the findings — and the report says so (docs/reports.md, "Metric settings"). Run and
//! rendered for real on 500 KTH jobs.

mod common;

use std::fs;

const EXPERIMENT: &str = "name: ms
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 500}
clusters:
  pool: {procs: 100}
schedulers:
  s: {backfill: easy, fairshare: {penalty: cpu}}
metrics:
  timeseries_step: 86400
  expected_capacity: {split: equal}
grid:
  axes:
    order: [fcfs, fairshare]
    tau: [10, 600]
    capacity_scale: [0.5, 2]
reports:
  formats: [html, md]
";

#[test]
fn metric_settings_only_sweep_the_metrics_they_change() {
    let p = common::project_with_kth();
    let d = p.path();
    fs::write(d.join("experiments/ms.yaml"), EXPERIMENT).unwrap();
    common::run_and_report(d);
    let md = fs::read_to_string(d.join("reports/ms.md")).unwrap();
    let svgs: Vec<String> = fs::read_dir(d.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".svg"))
        .collect();

    // The capacity changes no headline metric: no chart against it; τ changes the bounded
    // slowdown only: that chart alone against τ.
    let against = |x: &str| -> Vec<&String> {
        svgs.iter()
            .filter(|n| n.contains(&format!("-vs-{}", x.replace('_', "-"))))
            .collect()
    };
    assert_eq!(against("capacity_scale"), Vec::<&String>::new());
    assert_eq!(against("tau"), vec!["ms-bounded-slowdown-mean-vs-tau.svg"]);
    let chart = fs::read_to_string(d.join("reports/ms-bounded-slowdown-mean-vs-tau.svg")).unwrap();
    // Its panels are not split by the capacity (one panel: no panel titles).
    assert!(!chart.contains("expected capacity"), "{chart}");
    // The report says why.
    assert!(
        md.contains("The expected-capacity scale is a metric setting: it changes the expected-end-time (EET) metrics only, never a schedule, so mean wait, mean bounded slowdown and utilization are not followed along it"),
        "{md}"
    );
    assert!(
        md.contains("τ (the bounded-slowdown threshold) is a metric setting: it changes bounded slowdowns only, never a schedule, so mean wait and utilization are not followed along it"),
        "{md}"
    );

    // Findings: nothing followed along the capacity, only the slowdown along τ, and the orders
    // compared per τ (the setting that changes a compared metric), never per capacity.
    let findings = md
        .split("\n## Findings\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a findings section");
    assert!(!findings.contains("**Expected capacity ×.**"), "{findings}");
    assert!(!findings.contains("Expected capacity × 2"), "{findings}");
    assert!(!findings.contains("Mean wait against τ"), "{findings}");
    assert!(
        findings.contains("Mean bounded slowdown against τ"),
        "{findings}"
    );
    // Each setting and each compared level named with its axis.
    assert!(
        findings.contains("At τ = 10 s: order = fairshare vs fcfs: "),
        "{findings}"
    );
    assert!(
        findings.contains("At τ = 600 s: order = fairshare vs fcfs: "),
        "{findings}"
    );
    assert!(!findings.contains("expected capacity × ="), "{findings}");

    // The fairshare section: a paragraph per fairshare-ordered setting that can change its
    // figures (per τ), not one per capacity level repeating the same words.
    let fairshare = md
        .split("\n## Fairshare")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a fairshare section");
    let paragraphs = fairshare
        .lines()
        .filter(|l| l.starts_with("**order = fairshare"))
        .count();
    assert_eq!(paragraphs, 2, "{fairshare}");

    // The user-aware section: τ cannot change the EET metrics, so the schedulers are judged
    // once (its first level), not once per τ; its table still shows every setting.
    let user_aware = md
        .split("\n## User-aware metrics")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a user-aware section");
    assert!(
        user_aware.contains("Τ cannot change the EET metrics")
            || user_aware.contains("τ cannot change the EET metrics"),
        "{user_aware}"
    );
    let heatmaps = svgs.iter().filter(|n| n.contains("eet-heatmap")).count();
    assert_eq!(heatmaps, 2, "{svgs:?}");
    assert!(
        user_aware.contains("Violated EETs per user over time — EASY at expected capacity"),
        "{user_aware}"
    );
    assert!(!user_aware.contains("over time — EASY, τ"), "{user_aware}");
    assert!(
        user_aware.contains("| EASY + fairshare, τ 600 s | ×2 |"),
        "{user_aware}"
    );
}
