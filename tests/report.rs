//! `schedlab report` as a reader sees it: the Markdown report against a reviewed snapshot (date,
//! commit and hashes masked), and the HTML report's structure — self-contained, every chart a
//! well-formed SVG, user text escaped.

use std::fs;
use std::path::Path;

mod common;

use common::schedlab_in as schedlab;

fn project() -> tempfile::TempDir {
    let tmp = common::project_with_kth();
    let d = tmp.path();
    fs::write(
        d.join("experiments/small.yaml"),
        "name: small
description: KTH <first> 2000 jobs & \"quotes\" — escaped in HTML
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 2000}
clusters:
  pool: {procs: 100}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
metrics: {timeseries_step: 86400}
reports:
  gantt: {cell: easy, start: 1000000, hours: 12}
",
    )
    .unwrap();
    assert!(schedlab(d, &["run", "--quiet"]).status.success());
    tmp
}

#[test]
fn markdown_report_matches_its_reviewed_snapshot() {
    let p = project();
    let out = schedlab(p.path(), &["report", "--date", "2026-01-01"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = fs::read_to_string(p.path().join("reports/small.md")).unwrap();
    // Mask what depends on the build and the machine, not on the results.
    let masked: String = md
        .lines()
        .map(|l| {
            if let Some(key) = ["manifest", "schedlab", "commit"]
                .iter()
                .find(|k| l.starts_with(&format!("| {k} |")))
            {
                format!("| {key} | (masked) |")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let snapshot = Path::new("tests/fixtures/report/small.md.expected");
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
        fs::write(snapshot, &masked).unwrap();
    }
    assert_eq!(masked, fs::read_to_string(snapshot).unwrap_or_default());
    // Every chart the Markdown names is a sibling SVG file.
    for line in md.lines().filter(|l| l.starts_with("![")) {
        let file = &line[line.find("](").unwrap() + 2..line.len() - 1];
        let svg = fs::read_to_string(p.path().join("reports").join(file)).unwrap();
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

#[test]
fn html_report_is_self_contained_with_wellformed_charts() {
    let p = project();
    assert!(schedlab(p.path(), &["report"]).status.success());
    let html = fs::read_to_string(p.path().join("reports/small.html")).unwrap();
    // Offline: no scripts, no external resources.
    assert!(!html.contains("<script"));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    // User-provided text is escaped.
    assert!(
        html.contains("KTH &lt;first&gt; 2000 jobs &amp; &quot;quotes&quot;"),
        "description not escaped"
    );
    assert!(!html.contains("<first>"));
    // Charts: 5 headline bar charts, 4 per workload (utilization, queue, two CDFs), 1 Gantt.
    let mut svgs = 0;
    let mut rest = html.as_str();
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").unwrap() + start + "</svg>".len();
        let doc = roxmltree::Document::parse(&rest[start..end]).expect("well-formed SVG");
        assert!(
            doc.descendants().any(|n| n.has_tag_name("text")),
            "charts have labels"
        );
        svgs += 1;
        rest = &rest[end..];
    }
    assert_eq!(svgs, 5 + 4 + 1);
    for heading in [
        "What was run",
        "Summary per cell",
        "Charts",
        "Installation: Swedish Royal Institute of Technology (KTH)",
    ] {
        assert!(html.contains(heading), "{heading}");
    }
    assert!(
        html.contains("Schedule of easy, hours 278–290"),
        "the chosen Gantt window"
    );
    // A report of an experiment that was never run is a clear input error.
    fs::remove_dir_all(p.path().join("results")).unwrap();
    let out = schedlab(p.path(), &["report"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hint: run `schedlab run"));
}
