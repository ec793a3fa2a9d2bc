//! Grid expansion of valid manifests: cartesian product, zip groups, include, exclude, replicas;
//! cell ids independent of the order axes are written in; paths relative to the manifest.

use std::fs;

use schedlab::manifest::{Manifest, load};

mod common;

fn project(manifest: &str) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("exp")).unwrap();
    fs::create_dir_all(dir.path().join("data")).unwrap();
    for name in ["a.swf", "b.swf"] {
        fs::write(
            dir.path().join("data").join(name),
            "; MaxProcs: 8\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n",
        )
        .unwrap();
    }
    let path = dir.path().join("exp/m.yaml");
    fs::write(&path, manifest).unwrap();
    let m = load(&path).unwrap_or_else(|e| panic!("{e}"));
    (dir, m)
}

const SECTIONS: &str = "workloads:
  a: {trace: ../data/a.swf}
  b: {trace: ../data/b.swf}
clusters:
  small: {procs: 8}
  big: {procs: 16, node_size: 4}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
  cons: {policy: conservative, overrun: continue}
";

fn ids(m: &Manifest) -> Vec<&str> {
    m.cells.iter().map(|c| c.id.as_str()).collect()
}

#[test]
fn missing_name_axes_cross_everything_defined() {
    let (_d, m) = project(SECTIONS);
    assert_eq!(m.cells.len(), 2 * 2 * 3);
    assert_eq!(m.name, "m", "the file stem names the experiment");
    assert!(ids(&m).contains(&"a.big.cons"), "{:?}", ids(&m));
    let cell = m.cells.iter().find(|c| c.id == "a.big.cons").unwrap();
    assert_eq!(
        (cell.cluster.procs, cell.cluster.node_size),
        (Some(16), Some(4))
    );
    assert_eq!(cell.scheduler.overrun.name(), "continue");
    assert!(
        cell.workload
            .trace()
            .unwrap()
            .ends_with("exp/../data/a.swf"),
        "relative to the manifest's folder"
    );
}

#[test]
fn zip_include_exclude_and_replicas() {
    let (_d, m) = project(&format!(
        "{SECTIONS}grid:
  axes:
    workload: [a, b]
    cluster: [small, big]
    scheduler: [fcfs, easy]
    interval: [null, 900]
  zip: [[workload, cluster]]
  exclude:
    - {{scheduler: fcfs, interval: 900}}
  include:
    - {{workload: a, cluster: big, scheduler: cons, interval: 60}}
replicas: 2
seed: 10
"
    ));
    // (2 zipped) × 2 schedulers × 2 intervals = 8, minus 2 excluded, plus 1 included; × 2 seeds.
    assert_eq!(m.cells.len(), 14);
    let ids = ids(&m);
    assert!(ids.contains(&"a.easy.interval-900.seed-11"), "{ids:?}");
    assert!(ids.contains(&"a.cons.interval-60.seed-10"), "{ids:?}");
    assert!(
        !ids.iter().any(|i| i.contains("fcfs.interval-900")),
        "{ids:?}"
    );
    // The zip partner never shows in ids: `b` always runs on `big`.
    assert!(
        m.cells
            .iter()
            .filter(|c| c.workload.name == "b")
            .all(|c| c.cluster.name == "big")
    );
    let seeds: std::collections::BTreeSet<u64> = m.cells.iter().map(|c| c.seed).collect();
    assert_eq!(seeds.into_iter().collect::<Vec<_>>(), vec![10, 11]);
}

#[test]
fn ids_do_not_depend_on_axis_order_in_the_file() {
    let forward = format!(
        "{SECTIONS}grid:\n  axes:\n    workload: [a, b]\n    scheduler: [fcfs, easy]\n    interval: [null, 900]\n    cluster: [small]\n"
    );
    let backward = format!(
        "{SECTIONS}grid:\n  axes:\n    cluster: [small]\n    interval: [null, 900]\n    scheduler: [fcfs, easy]\n    workload: [a, b]\n"
    );
    let (_d1, m1) = project(&forward);
    let (_d2, m2) = project(&backward);
    assert_eq!(ids(&m1), ids(&m2));
    assert!(
        ids(&m1).contains(&"b.easy.interval-event"),
        "{:?}",
        ids(&m1)
    );
    let params = |m: &Manifest| m.cells.iter().map(|c| c.params.clone()).collect::<Vec<_>>();
    assert_eq!(params(&m1), params(&m2));
}

#[test]
fn parameter_axes_override_settings() {
    let (_d, m) = project(&format!(
        "{SECTIONS}grid:\n  axes:\n    workload: [a]\n    cluster: [small]\n    scheduler: [easy]\n    procs: [8, 32]\n    load_scale: [1.5]\n    tau: [60]\n"
    ));
    assert_eq!(ids(&m), vec!["procs-8", "procs-32"]);
    let c = &m.cells[1];
    assert_eq!(c.cluster.procs, Some(32));
    assert_eq!(c.workload.transforms.load_scale, Some(1.5));
    assert_eq!(c.metrics.tau, 60);
    assert_eq!(&c.params["load_scale"], "1p5");
}

/// The shipped experiments by name (tests/common/shipped.rs): a user's own manifest or draft in
/// experiments/ is not the suite's to load.
#[test]
fn the_shipped_experiments_load() {
    for path in common::shipped::shipped_manifests() {
        let m = load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!m.cells.is_empty());
    }
}

#[test]
fn reservation_scenarios_are_a_name_axis_with_their_parameters() {
    let (dir, _) = project(&format!("{SECTIONS}grid:\n  axes:\n    workload: [a]\n"));
    fs::write(
        dir.path().join("exp/tg.csv"),
        "# TeraGrid requests\nstart,duration,nodes,owner\n5000,3600,2,carol\n\n6000,7200,1,dave\n",
    )
    .unwrap();
    let path = dir.path().join("exp/r.yaml");
    fs::write(
        &path,
        format!(
            "{SECTIONS}reservations:
  tg:
    requests:
      - {{start: 100, created: 50, duration: 3600, nodes: 4, owner: alice}}
    csv: tg.csv
    generate: {{per_week: 15, nodes: {{uniform: [1, 4]}}, hours: {{uniform: [4, 18]}}}}
    throttle: {{max_node_hours: 100, window_days: 1}}
grid:
  axes:
    workload: [a]
    cluster: [big]
    scheduler: [easy]
    reservations: [none, tg]
    reservation_rate: [5, 30]
    throttle_node_hours: [null, 50]
"
        ),
    )
    .unwrap();
    let m = load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.cells.len(), 8);
    assert_eq!(
        m.cells[0].id,
        "none.reservation_rate-5.throttle_node_hours-none"
    );
    assert!(m.cells[0].reservations.is_none());
    let tg = m
        .cells
        .iter()
        .find(|c| c.id == "tg.reservation_rate-30.throttle_node_hours-50")
        .unwrap();
    let spec = tg.reservations.as_ref().unwrap();
    // The list first, then the CSV rows numbered after it; hours become seconds.
    let requests: Vec<_> = spec
        .requests
        .iter()
        .map(|r| (r.id, r.owner.as_str(), r.created, r.start, r.duration))
        .collect();
    assert_eq!(
        requests,
        vec![
            (1, "alice", 50, 100, 3600),
            (2, "carol", 5000, 5000, 3600),
            (3, "dave", 6000, 6000, 7200)
        ]
    );
    assert_eq!(spec.generator.as_ref().unwrap().per_week, 30.0);
    assert_eq!(spec.throttle.max_node_seconds, Some(50 * 3600));
    assert_eq!(spec.throttle.window, 86_400);
    let uncapped = m
        .cells
        .iter()
        .find(|c| c.id == "tg.reservation_rate-5.throttle_node_hours-none")
        .unwrap();
    assert_eq!(
        uncapped
            .reservations
            .as_ref()
            .unwrap()
            .throttle
            .max_node_seconds,
        None
    );
}

/// `backfill_order` is a parameter axis (and a scheduler key): its default leaves a cell's
/// simulation key as it was before the setting existed; another value enters the key.
#[test]
fn the_backfill_order_axis_sets_the_candidate_order_and_keys_it_only_off_its_default() {
    use schedlab::sim::scheduler::order::CandidateOrder;
    let (_d, m) = project(&format!(
        "{SECTIONS}grid:\n  axes:\n    workload: [a]\n    cluster: [small]\n    scheduler: [easy]\n    backfill_order: [queue, shortest]\n"
    ));
    assert_eq!(
        ids(&m),
        vec!["backfill_order-queue", "backfill_order-shortest"]
    );
    assert_eq!(m.cells[0].scheduler.order.candidates, CandidateOrder::Queue);
    assert_eq!(
        m.cells[1].scheduler.order.candidates,
        CandidateOrder::Shortest
    );
    let mut cache = schedlab::cache::DigestCache::in_memory();
    let digests = m
        .cells
        .iter()
        .filter_map(|c| c.workload.trace())
        .map(|t| (t.to_path_buf(), cache.digest(t).unwrap()))
        .collect();
    let plan = schedlab::plan::build(
        std::slice::from_ref(&m),
        &schedlab::plan::Inputs {
            digests: &digests,
            commit: None,
            commands: &[],
        },
    );
    let simulate: Vec<usize> = (0..plan.nodes.len())
        .filter(|&i| {
            matches!(
                plan.nodes[i].kind,
                schedlab::plan::NodeKind::Simulate { .. }
            )
        })
        .collect();
    assert_eq!(simulate.len(), 2);
    let queue = plan.material(std::slice::from_ref(&m), simulate[0]);
    let shortest = plan.material(std::slice::from_ref(&m), simulate[1]);
    assert!(
        queue["scheduler"].get("order").is_none(),
        "the default keeps the key material of cells without the setting: {queue}"
    );
    assert_eq!(shortest["scheduler"]["order"]["candidates"], "shortest");
}
