//! The report's cluster view (issue 10): when it is chosen, and what it says — tables,
//! sentences and charts checked against figures worked out by hand on a tiny result set.

use std::collections::{BTreeMap, BTreeSet};

use schedlab::report::data::{ClusterRow, ReportData, SummaryRow};
use schedlab::report::palette::Palette;
use schedlab::report::shape::Grid;
use schedlab::report::views::{self, Context, Section};

/// A summary row of a topology cell (`placement` set) with `ignore_memory` as the reader loads
/// flags (text) and the given numbers.
fn summary(cell: &str, ignore: &str, numbers: &[(&str, f64)]) -> SummaryRow {
    let mut r = SummaryRow {
        cell: cell.into(),
        ..SummaryRow::default()
    };
    r.text.insert("workload".into(), "w".into());
    r.text.insert("placement".into(), "first_fit".into());
    r.text.insert("ignore_memory".into(), ignore.into());
    r.numbers.insert("jobs".into(), Some(10.0));
    for (k, v) in numbers {
        r.numbers.insert(k.to_string(), Some(*v));
    }
    r
}

fn cluster(cell: &str, name: &str, numbers: &[(&str, Option<f64>)]) -> ClusterRow {
    ClusterRow {
        cell: cell.into(),
        cluster: name.into(),
        numbers: numbers.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

const GIB: f64 = 1_048_576.0;

/// Two configurations (memory counted: two replicas; memory ignored: one) on clusters `small`
/// (2 × 4 cores, 8 GiB) and `big` (1 × 16 cores, 64 GiB).
fn data() -> ReportData {
    let skipped = |mem: f64, cores: f64| {
        vec![
            ("skipped_too_large", mem + cores),
            ("skipped_too_much_memory_per_node", mem),
            ("skipped_too_many_cores_per_node", cores),
            ("skipped_no_such_cluster", 0.0),
        ]
    };
    let rows = vec![
        summary("counted.seed-0", "false", &skipped(1.0, 1.0)),
        summary("counted.seed-1", "false", &skipped(1.0, 1.0)),
        summary("ignored.seed-0", "true", &skipped(0.0, 1.0)),
    ];
    let small = |cell: &str, jobs: f64, cores: f64, wait: f64| {
        cluster(
            cell,
            "small",
            &[
                ("nodes", Some(2.0)),
                ("cores", Some(8.0)),
                ("memory_kb", Some(16.0 * GIB)),
                ("gpus", Some(0.0)),
                ("jobs", Some(jobs)),
                ("utilization_cores", Some(cores)),
                ("utilization_memory", Some(0.125)),
                ("utilization_gpus", None),
                ("wait_mean", Some(wait)),
                ("wait_p95", Some(2.0 * wait)),
                ("bounded_slowdown_mean", Some(1.5)),
                ("backfilled_fraction", Some(0.0)),
            ],
        )
    };
    let big = |cell: &str, jobs: f64| {
        cluster(
            cell,
            "big",
            &[
                ("nodes", Some(1.0)),
                ("cores", Some(16.0)),
                ("memory_kb", Some(64.0 * GIB)),
                ("gpus", Some(0.0)),
                ("jobs", Some(jobs)),
                ("utilization_cores", Some(1.0)),
                ("utilization_memory", Some(1.0)),
                ("utilization_gpus", None),
                ("wait_mean", None),
                ("wait_p95", None),
                ("bounded_slowdown_mean", None),
                ("backfilled_fraction", None),
            ],
        )
    };
    ReportData {
        rows,
        axis_names: vec!["ignore_memory".into(), "seed".into()],
        files: [
            "summary.parquet",
            "clusters.parquet",
            "cluster_timeseries.parquet",
        ]
        .iter()
        .map(|f| f.to_string())
        .collect::<BTreeSet<_>>(),
        clusters: vec![
            small("counted.seed-0", 1.0, 0.25, 3600.0),
            big("counted.seed-0", 3.0),
            small("counted.seed-1", 3.0, 0.75, 10800.0),
            big("counted.seed-1", 1.0),
            small("ignored.seed-0", 3.0, 0.875, 0.0),
            big("ignored.seed-0", 1.0),
        ],
        cluster_series: BTreeMap::from([(
            "counted.seed-0".to_string(),
            vec![
                (
                    "small".to_string(),
                    vec![
                        (0.0, [Some(0.5), Some(0.25), None]),
                        (3600.0, [Some(0.0), Some(0.0), None]),
                    ],
                ),
                (
                    "big".to_string(),
                    vec![
                        (0.0, [Some(1.0), Some(1.0), None]),
                        (3600.0, [Some(1.0), Some(1.0), None]),
                    ],
                ),
            ],
        )]),
        ..ReportData::default()
    }
}

fn clusters_section(data: &ReportData) -> Option<Section> {
    let grid = Grid::new(data);
    let palette = Palette::new(&grid.shape);
    let selected: Vec<_> = views::select(&grid.shape)
        .into_iter()
        .filter(|v| v.family == "clusters")
        .collect();
    let ctx = Context {
        grid: &grid,
        data,
        palette: &palette,
        classes: &[],
        reproduces: None,
    };
    views::build(&selected, &ctx)
        .into_iter()
        .find(|s| s.heading == "Clusters")
}

#[test]
fn chosen_for_topologies_only() {
    let grid_of = |d: &ReportData| {
        let grid = Grid::new(d);
        views::select(&grid.shape)
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
    };
    let topology = data();
    assert!(grid_of(&topology).contains(&"clusters: section".to_string()));
    // A processor pool leaves `placement` null: no cluster view.
    let mut pool = data();
    for r in &mut pool.rows {
        r.text.insert("placement".into(), String::new());
    }
    assert!(!grid_of(&pool).iter().any(|v| v.starts_with("clusters")));
    // A result set written before topologies has no clusters.parquet.
    let mut old = data();
    old.files.remove("clusters.parquet");
    assert!(!grid_of(&old).iter().any(|v| v.starts_with("clusters")));
}

#[test]
fn what_each_cluster_did_by_hand() {
    let section = clusters_section(&data()).expect("a clusters section");
    let table = &section.tables[0];
    assert_eq!(table.headers[0], "configuration");
    // Replicas averaged: small ran (1 + 3) / 2 = 2 jobs, cores (0.25 + 0.75) / 2 = 0.5 used,
    // waits (1 h + 3 h) / 2 = 2 h and p95 (2 h + 6 h) / 2 = 4 h; big has no measured jobs (–).
    assert_eq!(
        table.rows[0],
        [
            "memory counted",
            "small",
            "2",
            "8",
            "16.0",
            "0",
            "2",
            "0.500",
            "0.125",
            "–",
            "2.00",
            "4.00",
            "1.50",
            "0.000"
        ]
    );
    assert_eq!(
        table.rows[1][..7],
        ["memory counted", "big", "1", "16", "64.0", "0", "2"]
    );
    assert_eq!(table.rows[1][10], "–");
    assert_eq!(table.rows[2][..2], ["memory ignored", "small"]);
    assert_eq!(table.rows.len(), 4);

    // Jobs that can never run: a column per reason that occurs (not `no_such_cluster`).
    let never = &section.tables[1];
    assert_eq!(
        never.headers,
        [
            "configuration",
            "never run",
            "too many cores per node",
            "too much memory per node"
        ]
    );
    assert_eq!(never.rows[0], ["memory counted", "2", "1", "1"]);
    assert_eq!(never.rows[1], ["memory ignored", "1", "1", "0"]);

    // In words: shares of the jobs, what was used, waits, and the reasons.
    let counted = &section.findings[0];
    assert_eq!(counted.title, "memory counted");
    assert_eq!(
        counted.text,
        "small ran 2 jobs (50 %) with cores 50.0 %, memory 12.5 % used, mean wait 2.00 h; big ran 2 jobs (50 %) with cores 100.0 %, memory 100.0 % used. 2 jobs can never run (1 too many cores per node, 1 too much memory per node)."
    );
    let ignored = &section.findings[1];
    assert!(
        ignored
            .text
            .ends_with("1 job can never run (1 too many cores per node)."),
        "{}",
        ignored.text
    );

    // One chart per configuration with series; a panel per cluster, a line per resource it
    // has (no GPUs here).
    assert_eq!(section.charts.len(), 1);
    let svg = &section.charts[0].svg;
    assert!(svg.contains(">small<") && svg.contains(">big<"), "{svg}");
    assert!(svg.contains(">cores<") && svg.contains(">memory<") && !svg.contains(">GPUs<"));
}

#[test]
fn every_job_fits_is_said_once() {
    let mut d = data();
    for r in &mut d.rows {
        for k in [
            "skipped_too_large",
            "skipped_too_much_memory_per_node",
            "skipped_too_many_cores_per_node",
        ] {
            r.numbers.insert(k.into(), Some(0.0));
        }
    }
    let section = clusters_section(&d).unwrap();
    assert_eq!(section.tables.len(), 1, "no table of jobs that never run");
    assert!(
        section
            .intro
            .iter()
            .any(|p| p == "Every job of every configuration fits some cluster.")
    );
    assert!(
        section.findings[0]
            .text
            .ends_with("Every job fits a cluster.")
    );
}

#[test]
fn counts_in_the_cluster_sentences_and_tables_are_thousands_separated() {
    // One configuration (memory ignored) scaled up: small ran 12,306 jobs on 1,024 cores and
    // big 5,591 (17,897 in all: 68.76 % and 31.24 %, "69 %" and "31 %"); 1,200 jobs can never
    // run, all for too many cores per node.
    let mut d = data();
    d.rows.retain(|r| r.cell == "ignored.seed-0");
    d.clusters.retain(|c| c.cell == "ignored.seed-0");
    for k in ["skipped_too_large", "skipped_too_many_cores_per_node"] {
        d.rows[0].numbers.insert(k.into(), Some(1200.0));
    }
    for c in &mut d.clusters {
        let (jobs, cores) = if c.cluster == "small" {
            (12_306.0, 1_024.0)
        } else {
            (5_591.0, 16.0)
        };
        c.numbers.insert("jobs".into(), Some(jobs));
        c.numbers.insert("cores".into(), Some(cores));
    }
    let section = clusters_section(&d).unwrap();
    // One configuration: named by its workload, `w`.
    assert_eq!(
        section.tables[0].rows[0][..7],
        ["w", "small", "2", "1,024", "16.0", "0", "12,306"]
    );
    assert_eq!(section.tables[0].rows[1][6], "5,591");
    assert_eq!(section.tables[1].rows[0][..3], ["w", "1,200", "1,200"]);
    let text = &section.findings[0].text;
    assert!(
        text.starts_with("small ran 12,306 jobs (69 %) with cores 87.5 %"),
        "{text}"
    );
    assert!(text.contains("; big ran 5,591 jobs (31 %)"), "{text}");
    assert!(
        text.ends_with(" 1,200 jobs can never run (1,200 too many cores per node)."),
        "{text}"
    );
}

#[test]
fn resources_no_job_held_are_left_out_of_the_charts_and_said_once() {
    // Issue 35: a trace without memory requests drew a memory line flat at 0 in every cluster
    // panel. With every memory bin at 0 the chart has cores only, and the intro says why once.
    let mut d = data();
    for series in d.cluster_series.values_mut() {
        for (_, bins) in series.iter_mut() {
            for (_, v) in bins.iter_mut() {
                v[1] = Some(0.0);
            }
        }
    }
    let section = clusters_section(&d).unwrap();
    let svg = &section.charts[0].svg;
    assert!(svg.contains(">cores<"), "{svg}");
    assert!(!svg.contains(">memory<"), "{svg}");
    let said: Vec<&String> = section
        .intro
        .iter()
        .filter(|p| p.contains("leave out memory"))
        .collect();
    assert_eq!(
        said,
        [
            "The charts leave out memory: no job held any in the configurations charted (the jobs request none, or the cells ignore it), so its line would lie flat at 0."
        ]
    );
    assert!(
        section.charts[0]
            .caption
            .starts_with("Utilization of each cluster's cores over time"),
        "{}",
        section.charts[0].caption
    );
    // Memory that some job held keeps its line, and nothing is said.
    let section = clusters_section(&data()).unwrap();
    assert!(section.charts[0].svg.contains(">memory<"));
    assert!(!section.intro.iter().any(|p| p.contains("leave out")));
}
