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
    common::run_and_report(d);
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

/// `reports.markdown_template` replaces the built-in Markdown template as `reports.template`
/// replaces the HTML one (issue 35), under the same trust rule: inside the project, or refused
/// with the key located.
#[test]
fn a_markdown_template_replaces_the_built_in_one_inside_the_project_only() {
    let p = project();
    let d = p.path();
    let manifest = d.join("experiments/small.yaml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        d.join("experiments/brief.md.j2"),
        "# {{ experiment }} in brief\n{% for s in sections %}- {{ s.heading }}\n{% endfor %}",
    )
    .unwrap();
    fs::write(
        &manifest,
        text.replace("reports:\n", "reports:\n  markdown_template: brief.md.j2\n"),
    )
    .unwrap();
    let out = schedlab(d, &["report", "--out", "r"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = fs::read_to_string(d.join("r/small.md")).unwrap();
    assert!(md.starts_with("# small in brief\n- "), "{md}");
    let html = fs::read_to_string(d.join("r/small.html")).unwrap();
    assert!(
        html.contains("<svg"),
        "the HTML report keeps its built-in template"
    );

    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("steal.md.j2");
    fs::write(&outside, "{{ manifest_text }}").unwrap();
    fs::write(
        &manifest,
        text.replace(
            "reports:\n",
            &format!("reports:\n  markdown_template: {}\n", outside.display()),
        ),
    )
    .unwrap();
    let out = schedlab(d, &["report", "--out", "s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("reports.markdown_template") && err.contains("outside the project"),
        "{err}"
    );
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
    let p = project();
    assert!(schedlab(p.path(), &["report"]).status.success());
    let Some(dom) = chromium_dom(&p.path().join("reports/small.html")) else {
        return;
    };
    // Every figure reached the DOM with its chart and caption, and the browser kept the page's
    // sections.
    assert_eq!(dom.matches("<figure").count(), 10, "{dom}");
    assert_eq!(dom.matches("<svg").count(), 10);
    assert_eq!(dom.matches("<figcaption>").count(), 10);
    assert!(dom.contains("<section id=\"findings\">"));
}

/// Runs headless Chromium on `page` and returns the DOM after its scripts ran, or `None` (with
/// the reason printed) where Chromium is not installed.
fn chromium_dom(page: &Path) -> Option<String> {
    let ok = Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|v| v.status.success());
    if !ok {
        eprintln!("skipped: chromium not installed or does not run");
        return None;
    }
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
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Long workload and cluster names, two of each: a sweep whose panels (workload × cluster) have
/// titles far wider than a panel.
const LONG_PANELS: &str = "name: long
workloads:
  kth-first-three-hundred-jobs-of-the-log:
    trace: ../workloads/kth.swf.gz
    first_jobs: 300
  kth-the-same-three-hundred-jobs-again:
    trace: ../workloads/kth.swf.gz
    first_jobs: 300
clusters:
  one-hundred-processor-pool-of-the-machine: {procs: 100}
  one-hundred-twenty-processor-pool-of-it: {procs: 120}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
grid:
  axes:
    workload: [kth-first-three-hundred-jobs-of-the-log, kth-the-same-three-hundred-jobs-again]
    cluster: [one-hundred-processor-pool-of-the-machine, one-hundred-twenty-processor-pool-of-it]
    scheduler: [fcfs, easy]
    load_scale: [0.8, 1.2]
reports:
  formats: [html]
";

#[test]
fn chromium_shows_long_panel_titles_whole_without_overlap() {
    let p = common::project_with_kth();
    let d = p.path();
    fs::write(d.join("experiments/long.yaml"), LONG_PANELS).unwrap();
    common::run_and_report(d);
    let html = fs::read_to_string(d.join("reports/long.html")).unwrap();
    // No chart text is shortened: titles wrap instead.
    for svg in svgs(&html) {
        assert!(!svg.contains('…'), "a chart text was cut short: {svg}");
    }
    // A browser lays the panel titles out: every panel title (bold, label size) lies inside
    // its chart, no two overlap, and together the lines of each title give every setting whole.
    let probe = r#"<script>
const out = [];
for (const svg of document.querySelectorAll('figure svg')) {
  const width = svg.viewBox.baseVal.width;
  const titles = [...svg.querySelectorAll('text[font-weight="bold"][font-size="12"]')];
  const boxes = titles.map(t => t.getBBox());
  boxes.forEach((b, i) => {
    if (b.x < -0.5 || b.x + b.width > width + 0.5) out.push('outside: ' + titles[i].textContent);
    boxes.forEach((c, j) => {
      if (j > i && b.x < c.x + c.width && c.x < b.x + b.width && b.y < c.y + c.height && c.y < b.y + b.height)
        out.push('overlap: ' + titles[i].textContent + ' / ' + titles[j].textContent);
    });
  });
  out.push('lines: ' + titles.map(t => t.textContent).join(' '));
}
const pre = document.createElement('pre');
pre.id = 'layout';
pre.textContent = out.join('\n');
document.body.appendChild(pre);
</script></body>"#;
    let page = d.join("reports/long-probe.html");
    fs::write(&page, html.replacen("</body>", probe, 1)).unwrap();
    let Some(dom) = chromium_dom(&page) else {
        return;
    };
    let layout = dom
        .split("<pre id=\"layout\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .expect("the probe ran");
    assert!(!layout.contains("outside: "), "{layout}");
    assert!(!layout.contains("overlap: "), "{layout}");
    let title =
        "kth-first-three-hundred-jobs-of-the-log, cluster one-hundred-twenty-processor-pool-of-it";
    assert!(
        layout.lines().any(|l| l.contains(title)),
        "no chart names its panel whole: {layout}"
    );
}

/// A trace with an outage: ten jobs in the first hours, nothing for ten days, ten more.
fn trace_with_a_gap() -> String {
    let mut swf = String::from("; a hand-written trace with a ten-day outage\n; MaxProcs: 8\n");
    let mut id = 1;
    for base in [0, 864_000] {
        for k in 0..10 {
            // id submit wait run procs cpu mem req_procs req_time req_mem status user group
            // exe queue partition preceding think
            swf.push_str(&format!(
                "{id} {} -1 1800 2 -1 -1 2 3600 -1 1 1 1 1 1 1 -1 -1\n",
                base + 600 * k
            ));
            id += 1;
        }
    }
    swf
}

#[test]
fn the_default_schedule_window_of_a_cell_with_jobs_shows_jobs() {
    // A quarter into the measurement window falls in the outage: the default window moves to
    // the first job start with a typical load (here the next one) and shows the ten jobs after
    // it, and the caption names the idle span (trace hours: the trace has no start time).
    let p = common::project_with_kth();
    let d = p.path();
    fs::write(d.join("workloads/gap.swf"), trace_with_a_gap()).unwrap();
    fs::write(
        d.join("experiments/gap.yaml"),
        "name: gap
workloads:
  gap: {trace: ../workloads/gap.swf}
clusters:
  pool: {procs: 8}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
reports:
  formats: [md]
",
    )
    .unwrap();
    let caption = schedule_caption_after_a_run(d);
    assert!(caption.contains(": 10 jobs ("), "{caption}");
    assert!(
        caption.contains("falls in a span with no job running, from trace hour 2 to 240,"),
        "{caption}"
    );
    assert!(
        caption.contains("at least half the cell's mean load"),
        "{caption}"
    );
    // A window the manifest sets is kept, even in the outage, and the caption says it is empty.
    let manifest = fs::read_to_string(d.join("experiments/gap.yaml")).unwrap()
        + "  gantt: {start: 200000, hours: 24}\n";
    fs::write(d.join("experiments/gap.yaml"), manifest).unwrap();
    let caption = schedule_caption_after_a_run(d);
    assert!(caption.contains(": 0 jobs ("), "{caption}");
    assert!(caption.contains("No job runs in this window"), "{caption}");
}

/// Runs and reports the project at `d`, and returns the schedule's caption of `reports/gap.md`.
fn schedule_caption_after_a_run(d: &Path) -> String {
    common::run_and_report(d);
    let md = fs::read_to_string(d.join("reports/gap.md")).unwrap();
    md.lines()
        .find(|l| l.starts_with("Schedule of "))
        .expect("a schedule caption")
        .to_string()
}

/// A shipped experiment's description is the first thing its report shows: durations there are
/// in the units the report uses (hours, days), never bare seconds ("mean wait 6,837 s" in
/// python-policies, issue 35).
#[test]
fn shipped_descriptions_give_durations_in_units_a_reader_uses() {
    for path in common::shipped::shipped_manifests() {
        let m = schedlab::manifest::load(&path).unwrap();
        let description = m.description.unwrap_or_default();
        let words: Vec<&str> = description.split_whitespace().collect();
        for pair in words.windows(2) {
            let number = pair[0].trim_start_matches('(');
            let unit = pair[1].trim_end_matches([',', ';', '.', ')']);
            assert!(
                !(unit == "s" && number.starts_with(|c: char| c.is_ascii_digit())),
                "{}: a duration in bare seconds, \"{} {}\"",
                path.display(),
                pair[0],
                pair[1]
            );
        }
    }
}

/// Under a queue order that reorders the queue, jobs.parquet's `backfilled` (started while an
/// earlier-submitted job was waiting) marks the order's choices as well: aleang-example1's
/// schedule read "828 jobs (827 backfilled)". The legend and caption say "started ahead", and
/// keep "backfilled" for a first-come order (issue 35).
#[test]
fn a_reordering_queue_is_not_said_to_backfill_every_job() {
    let p = common::project_with_kth();
    let d = p.path();
    fs::write(
        d.join("experiments/gap.yaml"),
        "name: gap
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 1500}
clusters:
  pool: {procs: 100}
schedulers:
  fair: {backfill: easy, order: fairshare}
  easy: {policy: easy}
reports:
  formats: [md]
  gantt: {cell: fair, start: 1000000, hours: 24}
",
    )
    .unwrap();
    let caption = schedule_caption_after_a_run(d);
    assert!(
        caption.contains(" started while an earlier-submitted job was waiting: the fairshare queue order puts jobs ahead of earlier ones, so this counts the order's choices as well as backfilling"),
        "{caption}"
    );
    assert!(!caption.contains("backfilled:"), "{caption}");
    let svg = fs::read_to_string(d.join("reports/gap-gantt.svg")).unwrap();
    assert!(svg.contains("job started ahead of an earlier one"), "{svg}");
    assert!(!svg.contains("backfilled job"));
    // The first-come EASY cell keeps the word.
    let manifest = fs::read_to_string(d.join("experiments/gap.yaml"))
        .unwrap()
        .replace("cell: fair,", "cell: easy,");
    fs::write(d.join("experiments/gap.yaml"), manifest).unwrap();
    let caption = schedule_caption_after_a_run(d);
    assert!(
        caption.contains(" backfilled: started while an earlier-submitted job was waiting)"),
        "{caption}"
    );
}

/// A user's reservation sweep on a trace that is not DataStar's (KTH here), whose manifest does
/// not say it reproduces Margo et al.: its report has the reservations section but none of the
/// paper's words or figures ("the paper's cap", "Graphs 6–9", "SDSC-DS-2004"); naming the paper
/// in `reports.reproduces` brings them back (issue 35).
#[test]
fn a_reservation_study_that_reproduces_no_paper_gets_no_paper_narrative() {
    let p = common::project_with_kth();
    let d = p.path();
    let manifest = "name: mine
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 1500}
clusters:
  pool: {procs: 100, node_size: 1}
schedulers:
  easy: {policy: easy}
reservations:
  weekly:
    generate:
      per_week: 10
      nodes: {uniform: [5, 40]}
      hours: {uniform: [2, 8]}
      notice_hours: {uniform: [24, 48]}
      owners: 3
    placement: after_queue
    on_conflict: shift
    throttle:
      window_days: 7
grid:
  axes:
    reservations: [none, weekly]
    throttle_node_hours: [null, 200, 800]
  exclude:
    - {reservations: none, throttle_node_hours: 200}
    - {reservations: none, throttle_node_hours: 800}
reports:
  formats: [md]
";
    fs::write(d.join("experiments/mine.yaml"), manifest).unwrap();
    common::run_and_report(d);
    let md = fs::read_to_string(d.join("reports/mine.md")).unwrap();
    assert!(md.contains("\n## Reservations\n"), "{md}");
    for paper in ["paper", "DataStar", "SDSC-DS", "March 2006", "Graphs"] {
        assert!(!md.contains(paper), "{paper}: {md}");
    }
    // Its findings single out the sweep's own lowest and highest caps.
    assert!(md.contains("(the lowest cap)"), "{md}");
    assert!(md.contains("(the highest cap)"), "{md}");
    // The same results, said to reproduce the paper: its comparison is back.
    fs::write(
        d.join("experiments/mine.yaml"),
        format!("{manifest}  reproduces: margo-impact-of-reservations\n"),
    )
    .unwrap();
    let out = schedlab(d, &["report", "--date", "2026-01-01"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = fs::read_to_string(d.join("reports/mine.md")).unwrap();
    assert!(
        md.contains("the paper's cap") || md.contains("The paper's two workloads"),
        "{md}"
    );
}
