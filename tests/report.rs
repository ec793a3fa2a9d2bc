//! `schedlab report` as a reader sees it: the Markdown report against a reviewed snapshot (date,
//! commit and hashes masked); the HTML report's structure — self-contained, every chart a
//! well-formed SVG; user text escaped in both formats (issue 15); byte-identical reports from the
//! same results; and the page as a real browser (headless Chromium) parses it.

use std::fs;
use std::path::Path;
use std::process::Command;

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

/// The `<svg>…</svg>` elements of a page.
fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").unwrap() + start + "</svg>".len();
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
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
        let file = &line[line.rfind("](").unwrap() + 2..line.len() - 1];
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
    // Charts: 5 headline bar charts (a categorical grid), utilization and queue over time, two
    // distributions, the schedule.
    let charts = svgs(&html);
    for svg in &charts {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        assert!(
            doc.descendants().any(|n| n.has_tag_name("text")),
            "charts have labels"
        );
    }
    assert_eq!(charts.len(), 5 + 2 + 2 + 1);
    for heading in [
        "What was run",
        "Findings",
        "Metrics across the grid",
        "Over time and per job",
        "Schedule",
        "Configurations",
        "Installation: Swedish Royal Institute of Technology (KTH)",
    ] {
        assert!(html.contains(heading), "{heading}");
    }
    // The Gantt window in dates: KTH's log starts at Unix 843480031 (12:00:31 UTC, 1996-09-23);
    // trace second 1,000,000 is 01:47 UTC on 1996-10-05, 02:47 in the log's UTC+1.
    assert!(
        html.contains(
            "1996-10-05 02:47 – 1996-10-05 14:47 (UTC+1, Europe/Stockholm standard time)"
        ),
        "the chosen Gantt window in dates"
    );
    // The Gantt has a legend naming backfilled jobs.
    assert!(charts.last().unwrap().contains("backfilled job"));
    // A report of an experiment that was never run is a clear input error.
    fs::remove_dir_all(p.path().join("results")).unwrap();
    let out = schedlab(p.path(), &["report"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hint: run `schedlab run"));
}

#[test]
fn user_text_is_escaped_in_html_and_in_markdown() {
    // A description and a trace header that would inject markup, links, emphasis, table cells
    // and headings if they were pasted verbatim.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fs::create_dir_all(d.join("experiments")).unwrap();
    fs::create_dir_all(d.join("workloads")).unwrap();
    fs::write(
        d.join("workloads/evil.swf"),
        "; Computer: <script>alert('trace')</script> *bold* [x](http://e.example)
; MaxProcs: 4
1 0 0 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1
2 10 0 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1
3 20 0 50 4 -1 -1 4 50 -1 1 1 1 -1 1 -1 -1 -1
",
    )
    .unwrap();
    fs::write(
        d.join("experiments/evil.yaml"),
        "name: evil
description: \"<script>alert(1)</script> & a | pipe, *emphasis*, `code` and # no heading\"
workloads:
  t: {trace: ../workloads/evil.swf}
clusters:
  pool: {procs: 4}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
",
    )
    .unwrap();
    assert!(schedlab(d, &["run", "--quiet"]).status.success());
    let out = schedlab(d, &["report", "--date", "2026-01-01"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = fs::read_to_string(d.join("reports/evil.html")).unwrap();
    let md = fs::read_to_string(d.join("reports/evil.md")).unwrap();
    for (format, text) in [("html", &html), ("md", &md)] {
        assert!(!text.contains("<script"), "{format}: script tag verbatim");
        assert!(
            text.contains("&lt;script&gt;alert(1)&lt;"),
            "{format}: description"
        );
        assert!(
            text.contains("&lt;script&gt;alert("),
            "{format}: trace header"
        );
    }
    // Markdown's own syntax is escaped too: no emphasis, link, table cell, code or heading.
    assert!(md.contains(
        "&lt;script&gt;alert(1)&lt;/script&gt; &amp; a \\| pipe, \\*emphasis\\*, \\`code\\` and \\# no heading"
    ));
    assert!(md.contains("\\*bold\\* \\[x\\](http://e.example)"));
    // HTML escaping also covers quotes and slashes.
    assert!(html.contains(
        "&lt;script&gt;alert(&#x27;trace&#x27;)&lt;&#x2f;script&gt; *bold* [x](http:&#x2f;&#x2f;e.example)"
    ));
}

#[test]
fn the_same_results_give_byte_identical_reports() {
    let p = project();
    let read_all = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    assert!(
        schedlab(p.path(), &["report", "--date", "2026-01-01", "--out", "a"])
            .status
            .success()
    );
    assert!(
        schedlab(p.path(), &["report", "--date", "2026-01-01", "--out", "b"])
            .status
            .success()
    );
    let (a, b) = (read_all(&p.path().join("a")), read_all(&p.path().join("b")));
    assert_eq!(a.len(), 1 + 1 + 10, "HTML, Markdown and ten SVG files");
    assert!(
        a == b,
        "reports differ between two renders of the same results"
    );
}

#[test]
fn chromium_renders_every_chart_of_the_page() {
    // The page as a browser parses it (Debian's `chromium`; skipped where it is not installed,
    // `scripts/screenshot-report.sh` makes the screenshots looked at in docs/).
    let Ok(version) = Command::new("chromium").arg("--version").output() else {
        eprintln!("skipped: chromium not installed");
        return;
    };
    if !version.status.success() {
        eprintln!("skipped: chromium does not run");
        return;
    }
    let p = project();
    assert!(schedlab(p.path(), &["report"]).status.success());
    let page = p.path().join("reports/small.html");
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    // Every figure reached the DOM with its chart and caption, and the browser kept the page's
    // sections.
    assert_eq!(dom.matches("<figure").count(), 10, "{dom}");
    assert_eq!(dom.matches("<svg").count(), 10);
    assert_eq!(dom.matches("<figcaption>").count(), 10);
    assert!(dom.contains("<section id=\"findings\">"));
}
