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
        findings.contains("At τ = 600 s: order = fairshare vs fcfs: lowers mean bounded slowdown")
            || findings
                .contains("At τ = 600 s: order = fairshare vs fcfs: raises mean bounded slowdown")
            || findings
                .contains("At τ = 600 s: order = fairshare vs fcfs: leaves mean bounded slowdown"),
        "{findings}"
    );
    assert!(!findings.contains("expected capacity × ="), "{findings}");
    // At τ = 600 s only the slowdown is compared: τ changes no wait or utilization, which were
    // stated once, at τ = 10 s.
    let at_600 = findings
        .split("At τ = 600 s: ")
        .nth(1)
        .map(|s| s.split(". ").next().unwrap_or(s))
        .expect("a sentence at τ = 600 s");
    assert!(!at_600.contains("mean wait"), "{at_600}");
    assert!(!at_600.contains("utilization"), "{at_600}");

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

/// More settings than get a clause each (load scale × τ = 6): a comparison counts each metric
/// over the settings that can change it — waits over the 3 load scales, not 6 "settings" of
/// which half repeat a schedule under another τ — and says τ is a metric setting where it is
/// counted; trends name the axis beside the value ("at load scale 0.8"), not "at 0.8".
#[test]
fn summaries_count_a_metric_over_the_settings_that_can_change_it() {
    let p = common::project_with_kth();
    let d = p.path();
    fs::write(
        d.join("experiments/ms.yaml"),
        "name: ms
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
    load_scale: [0.8, 1.0, 1.2]
    tau: [10, 600]
reports:
  formats: [md]
",
    )
    .unwrap();
    common::run_and_report(d);
    let md = fs::read_to_string(d.join("reports/ms.md")).unwrap();
    let findings = md
        .split("\n## Findings\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a findings section");
    assert!(
        findings.contains(
            "Across the 3 settings of load scale, scheduler = easy vs fcfs — mean wait: "
        ),
        "{findings}"
    );
    assert!(
        findings.contains(
            "mean bounded slowdown over the 6 settings of load scale and τ (τ is a metric setting): "
        ),
        "{findings}"
    );
    assert!(
        !findings.contains("6 settings of load scale and τ,"),
        "{findings}"
    );
    assert!(findings.contains(" at load scale 0.8 to "), "{findings}");
    assert!(!findings.contains(" at 0.8 "), "{findings}");
}
