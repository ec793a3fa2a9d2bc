//! Advance reservations on topology clusters from manifests (issue 10; docs/reservations.md,
//! "On topologies"): a hand-built schedule where a reservation of whole nodes visibly moves
//! jobs, worked out by hand; generated requests under a node-hours throttle; located errors
//! where a scenario cannot fit the cluster; and every queue order × backfilling rule on a pool
//! and on a heterogeneous topology, with reservations (issue 12's acceptance).

mod common;

use std::collections::BTreeMap;
use std::fs;

use arrow_array::{Array, BooleanArray, Int64Array, StringArray};

use common::{parquet_batches as batches, schedlab_in as schedlab};

/// Two clusters: `small`, two nodes of 4 cores; `big`, one node of 8 cores (shared nodes).
const SYSTEM: &str = "clusters:
  two:
    topology:
      small: {nodes: [{count: 2, cores: 4, memory: 16 GiB}]}
      big: {nodes: [{count: 1, cores: 8, memory: 16 GiB}]}
";

/// J1 (submit 0, 4 cores, 50 s), J2 (5, 4 cores, 150 s), J3 (10, 8 cores, 100 s),
/// J4 (20, 4 cores, 20 s); exact requested times.
const TRACE: &str = "1 0 0 50 4 -1 -1 4 50 -1 1 1 1 -1 -1 -1 -1 -1
2 5 0 150 4 -1 -1 4 150 -1 1 2 1 -1 -1 -1 -1 -1
3 10 0 100 8 -1 -1 8 100 -1 1 3 1 -1 -1 -1 -1 -1
4 20 0 20 4 -1 -1 4 20 -1 1 4 1 -1 -1 -1 -1 -1
";

/// The manifest `r`: the trace `t` on the two-cluster system, then `rest` (more clusters, or
/// `schedulers:` and what follows).
fn on_system(rest: &str) -> String {
    format!("name: r\nworkloads:\n  t: {{trace: ../t.swf}}\n{SYSTEM}{rest}")
}

/// `schedlab run --quiet` and `extra` in `d`, which must succeed.
fn run_ok(d: &std::path::Path, extra: &[&str]) {
    let mut args = vec!["run", "--quiet"];
    args.extend_from_slice(extra);
    let out = schedlab(d, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn project(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("experiments")).unwrap();
    fs::write(dir.path().join("t.swf"), TRACE).unwrap();
    fs::write(dir.path().join("experiments/r.yaml"), manifest).unwrap();
    dir
}

fn strs<'a>(b: &'a arrow_array::RecordBatch, name: &str) -> &'a StringArray {
    b.column_by_name(name)
        .unwrap()
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap()
}

fn ints<'a>(b: &'a arrow_array::RecordBatch, name: &str) -> &'a Int64Array {
    b.column_by_name(name)
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
}

/// jobs.parquet: cell → [(job id, start, cluster, backfilled)].
fn schedule(dir: &std::path::Path) -> BTreeMap<String, Vec<(i64, i64, String, bool)>> {
    let mut out: BTreeMap<String, Vec<(i64, i64, String, bool)>> = BTreeMap::new();
    for b in batches(&dir.join("results/r/jobs.parquet")) {
        let cell = strs(&b, "cell");
        let cluster = strs(&b, "cluster");
        let (id, start) = (ints(&b, "job_id"), ints(&b, "start"));
        let bf = b.column_by_name("backfilled").unwrap();
        let bf = bf.as_any().downcast_ref::<BooleanArray>().unwrap();
        for i in 0..b.num_rows() {
            out.entry(cell.value(i).to_string()).or_default().push((
                id.value(i),
                start.value(i),
                cluster.value(i).to_string(),
                bf.value(i),
            ));
        }
    }
    out
}

#[test]
fn a_reservation_of_whole_nodes_moves_jobs_as_worked_by_hand() {
    // The scenario `hold` asks at time 0 for both nodes of cluster `small` over [100, 200).
    //
    // Without it (FCFS): J1 at 0 on a small node, J2 at 5 on the other, J3 at 10 on big, J4
    // (behind J3, nothing free) at 50 when J1 ends, on small.
    //
    // With it, granted at 100 (nothing queued, the window is free): J1 at 0 on small (ends at 50,
    // before the window); J2's 150 s would cross the window on either small node, so it takes
    // big at 5 (until 155); J3 needs all 8 cores of big: 155. FCFS: J4 waits behind J3; at 155
    // small is reserved until 200 (155 + 20 crosses 100… 200) and big is full, so 200 on small.
    // EASY: J3's shadow is 155 on big; J4 fits a small node from 20 to 40, before the window and
    // off big: it starts at 20, backfilled.
    let manifest = on_system(
        "schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
reservations:
  hold:
    cluster: small
    requests:
      - {created: 0, start: 100, duration: 100, nodes: 2}
grid:
  axes:
    reservations: [none, hold]
",
    );
    let p = project(&manifest);
    let d = p.path();
    run_ok(d, &[]);
    let s = schedule(d);
    let row = |id, start, cluster: &str, bf| (id, start, cluster.to_string(), bf);
    let free = vec![
        row(1, 0, "small", false),
        row(2, 5, "small", false),
        row(3, 10, "big", false),
        row(4, 50, "small", false),
    ];
    assert_eq!(s["fcfs.none"], free);
    assert_eq!(s["easy.none"], free);
    assert_eq!(
        s["fcfs.hold"],
        vec![
            row(1, 0, "small", false),
            row(2, 5, "big", false),
            row(3, 155, "big", false),
            row(4, 200, "small", false),
        ]
    );
    assert_eq!(
        s["easy.hold"],
        vec![
            row(1, 0, "small", false),
            row(2, 5, "big", false),
            row(3, 155, "big", false),
            row(4, 20, "small", true),
        ]
    );
    // reservations.parquet: granted at the requested time, two nodes wide, in both cells.
    let mut granted = 0;
    for b in batches(&d.join("results/r/reservations.parquet")) {
        let outcome = strs(&b, "outcome");
        let (start, width) = (ints(&b, "start"), ints(&b, "width"));
        for i in 0..b.num_rows() {
            assert_eq!(
                (outcome.value(i), start.value(i), width.value(i)),
                ("granted", 100, 2)
            );
            granted += 1;
        }
    }
    assert_eq!(granted, 2);
}

#[test]
fn generated_requests_on_a_topology_respect_the_node_hours_cap() {
    // 1-node, 1-hour requests, many a week, capped at 3 node-hours in any 1-day window (by
    // start): recomputed from reservations.parquet.
    let manifest = on_system(
        "schedulers:
  easy: {policy: easy}
reservations:
  gen:
    generate: {per_week: 5000, nodes: {fixed: 1}, hours: {fixed: 1}}
    throttle: {window_days: 1, max_node_hours: 3}
",
    );
    let trace: String = (1..=200)
        .map(|i| {
            format!(
                "{i} {} 0 60 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n",
                i * 1800
            )
        })
        .collect();
    let p = project(&manifest);
    let d = p.path();
    fs::write(d.join("t.swf"), trace).unwrap();
    run_ok(d, &[]);
    let mut starts = Vec::new();
    let mut rejected = 0;
    for b in batches(&d.join("results/r/reservations.parquet")) {
        let (outcome, start) = (strs(&b, "outcome"), ints(&b, "start"));
        for i in 0..b.num_rows() {
            match outcome.value(i) {
                "rejected" => rejected += 1,
                _ => starts.push(start.value(i)),
            }
        }
    }
    assert!(!starts.is_empty() && rejected > 0, "{starts:?} {rejected}");
    for &s in &starts {
        let in_window = starts.iter().filter(|&&t| t >= s && t < s + 86_400).count();
        assert!(
            in_window <= 3,
            "{in_window} one-node-hour reservations start in a day from {s}"
        );
    }
}

fn refused(scenario: &str, wants: &[&str]) {
    let manifest = on_system(&format!(
        "schedulers:
  easy: {{policy: easy}}
reservations:
{scenario}"
    ));
    let p = project(&manifest);
    let out = schedlab(p.path(), &["run", "--quiet"]);
    assert!(!out.status.success(), "{scenario} was accepted");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("r.yaml:"), "not located: {err}");
    for w in wants {
        assert!(err.contains(w), "{w:?} not in {err}");
    }
}

#[test]
fn scenarios_that_cannot_fit_the_cluster_get_located_errors() {
    // Three nodes of cluster `small`, whose class has two.
    refused(
        "  wide:\n    requests:\n      - {start: 0, duration: 10, nodes: 3, cluster: small}\n",
        &[
            "reservations.wide.requests[0]",
            "3 whole nodes",
            "of cluster `small` has 2",
        ],
    );
    // Widths in processors mean nothing on nodes of different sizes.
    refused(
        "  p:\n    requests:\n      - {start: 0, duration: 10, procs: 4}\n",
        &["reservations.p.requests[0]", "whole nodes"],
    );
    // A cluster the topology does not have.
    refused(
        "  c:\n    cluster: huge\n    requests:\n      - {start: 0, duration: 10, nodes: 1}\n",
        &["reservations.c.cluster", "no cluster `huge`", "small, big"],
    );
    // Generated widths above the largest class.
    refused(
        "  g:\n    generate: {per_week: 1, nodes: {uniform: [1, 4]}, hours: {fixed: 1}}\n",
        &["reservations.g.generate.nodes", "up to 4", "has 2"],
    );
    // A processor-hours cap.
    refused(
        "  t:\n    requests:\n      - {start: 0, duration: 10, nodes: 1}\n    throttle: {max_proc_hours: 10}\n",
        &["reservations.t.throttle", "nodes"],
    );
}

#[test]
fn naming_a_cluster_on_a_processor_pool_is_an_error() {
    let manifest = "name: r
workloads:
  t: {trace: ../t.swf}
clusters:
  pool: {procs: 16}
schedulers:
  easy: {policy: easy}
reservations:
  c:
    requests:
      - {start: 0, duration: 10, procs: 4, cluster: small}
";
    let p = project(manifest);
    let out = schedlab(p.path(), &["run", "--quiet"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("names a cluster") && err.contains("processor pool"),
        "{err}"
    );
}

#[test]
fn every_order_and_backfill_runs_on_pools_and_topologies_with_reservations() {
    // 4 orders × 4 rules × (pool, heterogeneous topology) × (none, a reservation): 64 cells,
    // every one completes every job, deterministically (a second run is byte-identical).
    let manifest = on_system(
        "  pool: {procs: 16}
schedulers:
  s: {backfill: none}
reservations:
  hold:
    requests:
      - {created: 0, start: 100, duration: 100, nodes: 1}
  hold-procs:
    requests:
      - {created: 0, start: 100, duration: 100, procs: 4}
grid:
  axes:
    cluster: [two, pool]
    order: [fcfs, fairshare, priority, sjf]
    backfill: [none, easy, conservative, aggressive]
    reservations: [none, hold, hold-procs]
  exclude:
    - {cluster: two, reservations: hold-procs}
    - {cluster: pool, reservations: hold}
",
    );
    let p = project(&manifest);
    let d = p.path();
    run_ok(d, &["--jobs", "2"]);
    let s = schedule(d);
    assert_eq!(s.len(), 2 * 4 * 4 * 2);
    for (cell, jobs) in &s {
        assert_eq!(jobs.len(), 4, "{cell}");
    }
    let granted: usize = batches(&d.join("results/r/reservations.parquet"))
        .iter()
        .map(|b| {
            let o = strs(b, "outcome");
            (0..b.num_rows())
                .filter(|&i| o.value(i) == "granted")
                .count()
        })
        .sum();
    assert_eq!(granted, 2 * 4 * 4, "every reservation granted");
    let first = fs::read(d.join("results/r/jobs.parquet")).unwrap();
    fs::remove_dir_all(d.join("results")).unwrap();
    let again = schedlab(d, &["run", "--quiet", "--jobs", "1"]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(first, fs::read(d.join("results/r/jobs.parquet")).unwrap());
}

#[test]
fn the_documented_topology_example_loads_with_its_clusters() {
    use schedlab::sim::Machine;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join("docs/reservations.md")).unwrap();
    let section = &doc[doc.find("## On topologies").unwrap()..];
    let start = section.find("```yaml\n").unwrap() + "```yaml\n".len();
    let yaml = &section[start..start + section[start..].find("```").unwrap()];
    let p = project(&format!(
        "name: r\nworkloads:\n  t: {{trace: ../t.swf}}\nschedulers:\n  easy: {{policy: easy}}\n{yaml}"
    ));
    let m = schedlab::manifest::load(&p.path().join("experiments/r.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let cell = m
        .cells
        .iter()
        .find(|c| c.reservations.is_some())
        .expect("a cell with the scenario");
    let spec = cell.reservations.as_ref().unwrap();
    let machine: Machine = cell.cluster.topology.as_ref().unwrap().machine();
    let r = spec.to_reservations(&machine, (0, 30 * 86_400), 1).unwrap();
    // The scenario's cluster for the first request and the generated ones, the request's own
    // for the second; widths in nodes; the cap in node-seconds.
    assert_eq!(r.requests[0].cluster.as_deref(), Some("small"));
    assert_eq!(r.requests[0].width, 4);
    assert_eq!(r.requests[1].cluster.as_deref(), Some("big"));
    assert!(r.requests.len() > 2, "generated requests");
    assert!(
        r.requests[2..]
            .iter()
            .all(|q| q.cluster.as_deref() == Some("small") && (1..=4).contains(&q.width))
    );
    assert_eq!(r.throttles.unit_seconds.unwrap().max, 48 * 3600);
}
