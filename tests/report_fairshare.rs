//! The Fairshare section of a real report (issue 12): a run of fairshare against FCFS order on
//! 2,000 KTH jobs, rendered; the section, its charts and per-user table are there and agree
//! with users.parquet as read here, and an FCFS-only experiment gets no such section.

mod common;

use std::collections::BTreeMap;
use std::fs;

use arrow_array::{Array, Float64Array, Int64Array, StringArray};

use common::schedlab_in as schedlab;

fn experiment(orders: &str) -> String {
    format!(
        "name: fair
description: fairshare against FCFS order
workloads:
  kth: {{trace: ../workloads/kth.swf.gz, first_jobs: 2000}}
clusters:
  pool: {{procs: 100}}
schedulers:
  s: {{backfill: easy}}
metrics: {{timeseries_step: 86400}}
grid:
  axes:
    order: [{orders}]
"
    )
}

/// `v` rounded to a whole number with a comma every three digits ("12,345"), written here
/// independently of the report's own formatting.
fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < -0.5 { format!("−{out}") } else { out }
}

/// users.parquet: cell → (user, core-hours, mean bounded slowdown), in file order.
fn users(path: &std::path::Path) -> BTreeMap<String, Vec<(i64, f64, Option<f64>)>> {
    let mut out: BTreeMap<String, Vec<(i64, f64, Option<f64>)>> = BTreeMap::new();
    for b in common::parquet_batches(path) {
        let cell = b.column_by_name("cell").unwrap();
        let cell = cell.as_any().downcast_ref::<StringArray>().unwrap();
        let user = b.column_by_name("user").unwrap();
        let user = user.as_any().downcast_ref::<Int64Array>().unwrap();
        let ch = b.column_by_name("core_hours").unwrap();
        let ch = ch.as_any().downcast_ref::<Float64Array>().unwrap();
        let bsld = b.column_by_name("bounded_slowdown_mean").unwrap();
        let bsld = bsld.as_any().downcast_ref::<Float64Array>().unwrap();
        for i in 0..b.num_rows() {
            assert!(!user.is_null(i));
            out.entry(cell.value(i).to_string()).or_default().push((
                user.value(i),
                ch.value(i),
                (!bsld.is_null(i)).then(|| bsld.value(i)),
            ));
        }
    }
    out
}

#[test]
fn a_fairshare_run_gets_the_section_and_its_table_matches_users_parquet() {
    let p = common::project_with_kth();
    let d = p.path();
    fs::write(
        d.join("experiments/fair.yaml"),
        experiment("fcfs, fairshare"),
    )
    .unwrap();
    common::run_and_report(d);
    let md = fs::read_to_string(d.join("reports/fair.md")).unwrap();
    let html = fs::read_to_string(d.join("reports/fair.html")).unwrap();
    assert!(md.contains("\n## Fairshare\n"), "{md}");
    assert!(html.contains("Fairshare factor over time"));
    assert!(d.join("reports/fair-fairshare-factor.svg").exists());
    assert!(d.join("reports/fair-fairshare-cores.svg").exists());
    // One finding paragraph: for the fairshare-ordered configuration only.
    assert_eq!(md.matches("**order = fairshare.**").count(), 1, "{md}");
    assert_eq!(md.matches("**order = fcfs.**").count(), 0);

    // The per-user table lists the heaviest users in order of usage (core-hours here, with
    // the default cpu penalty on a pool), as users.parquet has them: core-hours whole and
    // thousands separated, bounded slowdowns as the configurations table gives them — one count
    // of decimals for the column, at least two (not one fixed decimal).
    let all = users(&d.join("results/fair/users.parquet"));
    let (_, fair) = all
        .iter()
        .find(|(cell, _)| cell.contains("fairshare"))
        .expect("a fairshare cell");
    let mut ranked = fair.clone();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let table = md
        .split("order fairshare: the 10 users with the most penalised usage")
        .nth(1)
        .expect("the per-user table");
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| user"))
        .take(11)
        .map(common::table_cells)
        .collect();
    assert!(
        ranked.iter().take(10).any(|u| u.1 >= 999.5),
        "a heavy user with thousands of core-hours: {ranked:?}"
    );
    let decimals = |s: &str| s.split_once('.').map_or(0, |(_, f)| f.len());
    let bsld_decimals = decimals(rows[0][7]);
    assert!(bsld_decimals >= 2, "{:?}", rows[0]);
    for (row, (user, core_hours, bsld)) in rows.iter().zip(ranked.iter().take(10)) {
        assert_eq!(row[0], user.to_string());
        assert_eq!(row[2], thousands(*core_hours));
        let bsld = bsld.expect("a mean bounded slowdown");
        assert_eq!(decimals(row[7]), bsld_decimals, "{row:?}");
        let shown: f64 = row[7].replace(',', "").parse().unwrap();
        assert!(
            (shown - bsld).abs() <= 0.5 * 10f64.powi(-(bsld_decimals as i32)) + 1e-12,
            "{row:?} against {bsld}"
        );
    }
    assert_eq!(rows[10][0], format!("{} others", fair.len() - 10));
}

#[test]
fn fcfs_order_alone_gets_no_fairshare_section() {
    let p = common::project_with_kth();
    let d = p.path();
    fs::write(
        d.join("experiments/fair.yaml"),
        experiment("fcfs").replace("grid:\n  axes:\n    order: [fcfs]\n", ""),
    )
    .unwrap();
    assert!(schedlab(d, &["run", "--quiet"]).status.success());
    assert!(schedlab(d, &["report"]).status.success());
    let md = fs::read_to_string(d.join("reports/fair.md")).unwrap();
    assert!(!md.contains("## Fairshare"));
}

/// An SWF line of the penalty tests: job `id` submitted at `id` × 1,000 s, running 100 s on
/// `cpus` processors with `mem_gib` GiB (the trace's memory field in KiB per node).
fn penalty_job(id: u64, cpus: u32, mem_gib: u64, user: u32) -> String {
    format!(
        "{id} {} 0 100 {cpus} -1 -1 {cpus} 100 {} 1 {user} 1 -1 -1 -1 -1 -1\n",
        id * 1000,
        mem_gib << 20
    )
}

/// Runs `trace` in `d` on the Klusáček–Rudová Examples 3–5 system with fairshare charging `cpu`
/// and `pe_min`, and returns the Markdown report.
fn penalty_report(d: &std::path::Path, trace: &str) -> String {
    fs::create_dir_all(d.join("experiments")).unwrap();
    fs::write(d.join("t.swf"), trace).unwrap();
    fs::write(
        d.join("experiments/pen.yaml"),
        "name: pen
workloads:
  t: {trace: ../t.swf, memory: kb_per_node}
clusters:
  example:
    topology:
      small: {nodes: [{count: 10, cores: 8, memory: 16 GiB}]}
      big: {nodes: [{count: 1, cores: 80, memory: 512 GiB}]}
schedulers:
  fair: {backfill: none, order: fairshare}
grid:
  axes:
    penalty: [cpu, pe_min]
",
    )
    .unwrap();
    common::run_and_report(d);
    fs::read_to_string(d.join("reports/pen.md")).unwrap()
}

/// The multi-resource penalty section (Klusáček & Rudová §4) from job_penalties.parquet, on the
/// paper's Examples 3–5 system (10 nodes × 8 CPUs / 16 GiB plus one of 80 CPUs / 512 GiB), with
/// four jobs of 100 s on an idle machine, worked by hand:
/// - job 1 (user 1, 1 CPU, 16 GiB): pe_min 2.5 (the big node), cpu 1: +150 %;
/// - job 2 (user 2, 8 CPUs, 1 GiB): pe_min max(8/8, 1/16) × 8 = 8 = cpu;
/// - job 3 (user 3, 1 CPU, 512 GiB): only the big node, pe_min 80: +7,900 %;
/// - job 4 (user 2, 4 CPUs, 2 GiB): pe_min 4 = cpu.
///
/// Affected: 2 of 4 jobs; CPU time (1 + 1) × 100 of (1 + 8 + 1 + 4) × 100 = 14.3 %; users 1 and
/// 3 of 3; both increases ≥ +20 % and ≥ +100 %. Jobs arrive 1,000 s apart: nobody waits.
#[test]
fn the_penalty_section_shows_the_papers_shares_worked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = penalty_job(1, 1, 16, 1)
        + &penalty_job(2, 8, 1, 2)
        + &penalty_job(3, 1, 512, 3)
        + &penalty_job(4, 4, 2, 2);
    let md = penalty_report(d, &trace);
    assert!(md.contains("## Multi-resource penalties"), "{md}");
    assert!(d.join("reports/pen-penalty-increase-cdf.svg").exists());
    let cells = common::markdown_row(&md, "| this run | 2 of 4 |");
    assert_eq!(
        cells,
        [
            "this run",
            "2 of 4",
            "50.0 %",
            "14.3 %",
            "2 of 3 (66.7 %)",
            "100 %",
            "100 %"
        ]
    );
    // Nobody waits: the median mean wait is 0 s, so the report gives waits in seconds — the
    // paper's +33 min too, as 33 × 60 = 1,980 s (docs/reports.md, "Units").
    assert!(
        md.contains("| this run | affected jobs | 2 | 0.00 | 0.00 | 0.00 |"),
        "{md}"
    );
    assert!(
        md.contains("| paper (MetaCentrum 2013) | affected jobs | – | – | – | \\+1,980.00 |"),
        "{md}"
    );
    assert!(
        md.contains("the affected jobs wait 0 s on average under pe\\_min against 0 s under cpu (0 s; paper: +1,980 s)"),
        "{md}"
    );

    // job_penalties.parquet itself: both cells hold the same penalties, worked out above.
    let pe = common::cell_column(&d.join("results/pen/job_penalties.parquet"), "pe_min");
    assert_eq!(pe.len(), 2, "{pe:?}");
    for values in pe.values() {
        assert_eq!(values, &[Some(2.5), Some(8.0), Some(80.0), Some(4.0)]);
    }
}

/// Counts in the penalty section are thousands separated: on the same system, 1,306 jobs like
/// job 1 above (user 1, 1 CPU, 16 GiB: affected) then 1,000 like job 2 (user 2, 8 CPUs, 1 GiB:
/// not), 1,000 s apart. Worked by hand: 1,306 of 2,306 jobs = 56.6 %; CPU time 1,306 × 1 × 100
/// of 1,306 × 100 + 1,000 × 8 × 100 = 130,600 / 930,600 = 14.0 %; user 1 of 2 (50.0 %).
#[test]
fn the_penalty_sections_counts_are_thousands_separated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace: String = (1..=2306u64)
        .map(|id| {
            let (cpus, mem_gib, user) = if id <= 1306 { (1, 16, 1) } else { (8, 1, 2) };
            penalty_job(id, cpus, mem_gib, user)
        })
        .collect();
    let md = penalty_report(d, &trace);
    let cells = common::markdown_row(&md, "| this run | 1,306 of 2,306 |");
    assert_eq!(
        cells,
        [
            "this run",
            "1,306 of 2,306",
            "56.6 %",
            "14.0 %",
            "1 of 2 (50.0 %)",
            "100 %",
            "100 %"
        ]
    );
    assert!(
        md.contains("| this run | affected jobs | 1,306 |")
            && md.contains("| this run | other jobs | 1,000 |")
            && md.contains("| this run | all jobs | 2,306 |"),
        "{md}"
    );
}
