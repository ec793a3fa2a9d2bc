//! The complete example in docs/manifest.md loads, and has the cell count the page states.

use std::path::Path;

use schedlab::manifest::Manifest;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first YAML block of the page `docs/<page>` after `marker` (from the top when empty).
fn yaml_example(page: &str, marker: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs").join(page)).unwrap();
    let section = &doc[doc.find(marker).unwrap()..];
    let start = section.find("```yaml\n").unwrap() + "```yaml\n".len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

/// `yaml` loaded as `experiments/<name>.yaml` of a project whose `workloads/` is the
/// repository's (a link); the project lives as long as the returned folder.
fn load_in_project(name: &str, yaml: &str) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("experiments")).unwrap();
    std::os::unix::fs::symlink(root().join("workloads"), dir.path().join("workloads")).unwrap();
    let path = dir.path().join(format!("experiments/{name}.yaml"));
    std::fs::write(&path, yaml).unwrap();
    let m = schedlab::manifest::load(&path).unwrap_or_else(|e| panic!("{e}"));
    (dir, m)
}

#[test]
fn the_documented_example_loads_with_its_stated_cells() {
    let (_dir, m) = load_in_project("sp2-study", &yaml_example("manifest.md", ""));
    assert_eq!(m.name, "sp2-study");
    assert_eq!(m.cells.len(), 14, "the page says 14 cells");
    assert!(
        m.cells
            .iter()
            .any(|c| c.id == "sp2.easy-15min.tau-10.seed-8"),
        "{:?}",
        m.cells.iter().map(|c| &c.id).collect::<Vec<_>>()
    );
}

#[test]
fn the_topology_example_loads_as_documented() {
    use schedlab::sim::Allocation;
    let (_dir, m) = load_in_project("topologies", &yaml_example("manifest.md", "## Topologies"));
    assert_eq!(m.cells.len(), 4, "2 clusters × 2 ignore_memory values");
    let topology = |cluster: &str| {
        m.cells
            .iter()
            .find(|c| c.cluster.name == cluster)
            .and_then(|c| c.cluster.topology.clone())
            .unwrap()
    };
    // Example 3 as the paper gives it: 160 CPUs, 672 GB (binary).
    let e3 = topology("example3");
    assert_eq!((e3.nodes(), e3.cores()), (11, 160));
    assert_eq!(e3.clusters[1].classes[0].memory_kb, 512 << 20);
    assert_eq!(e3.clusters[0].allocation, Allocation::Shared);
    // The imported wagap machines, amended: zegox exclusive with `debian` on top of the
    // system's properties and its `cl_zegox`.
    let wagap = topology("wagap");
    let zegox = &wagap.clusters[1];
    assert_eq!(
        (zegox.name.as_str(), zegox.allocation),
        ("zegox", Allocation::ExclusiveNodes)
    );
    assert_eq!(
        zegox.classes[0].properties,
        ["brno", "cl_zegox", "debian", "nfs4", "x86_64"]
    );
    assert_eq!(wagap.clusters[0].allocation, Allocation::Shared);
    // Best fit and both values of the axis reach the cells.
    assert!(
        m.cells
            .iter()
            .all(|c| c.scheduler.placement.name() == "best_fit")
    );
    assert_eq!(
        m.cells
            .iter()
            .filter(|c| c.cluster.topology.as_ref().unwrap().ignore_memory)
            .count(),
        2
    );
    assert_eq!(m.cells[0].workload.reading.memory.name(), "bytes_per_node");
}

#[test]
fn the_topology_example_key_by_key() {
    // `lab` is not on the grid of the page's example; load it alone to check every key.
    let yaml = "workloads: {w: {trace: ../workloads/KTH-SP2-1996-2.1-cln.swf.gz}}
clusters:
  lab:
    allocation: shared
    properties: [x86_64]
    scale_runtime: true
    topology:
      gpu:
        allocation: exclusive
        properties: [infiniband]
        cost: 2.0
        nodes:
          - {name: gpu-a, count: 4, cores: 32, memory: 256 GiB, gpus: 4, spec: 30.5}
          - {name: gpu-b, count: 2, cores: 64, memory: 1 TiB, gpus: 8, spec: 41.0, properties: [fat]}
      cpu:
        nodes: [{count: 500, cores: 16, memory: 64 GiB, spec: 20.0}]
schedulers: {fcfs: {policy: fcfs}}
";
    let (_dir, m) = load_in_project("lab", yaml);
    let t = m.cells[0].cluster.topology.clone().unwrap();
    assert!(t.scale_runtime && !t.ignore_memory);
    let names: Vec<&str> = t.clusters.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["gpu", "cpu"],
        "clusters keep the order they are written in"
    );
    let b = &t.clusters[0].classes[1];
    assert_eq!(
        (b.name.as_str(), b.memory_kb, b.gpus),
        ("gpu-b", 1 << 30, 8)
    );
    assert_eq!((b.speed, b.spec_per_core, b.cost), (41.0, Some(41.0), 2.0));
    assert_eq!(b.properties, ["fat", "infiniband", "x86_64"]);
    let cpu = &t.clusters[1].classes[0];
    assert_eq!((cpu.name.as_str(), cpu.count, cpu.cost), ("cpu", 500, 1.0));
    assert_eq!(t.clusters[1].allocation, schedlab::sim::Allocation::Shared);
    assert_eq!(t.cores(), 4 * 32 + 2 * 64 + 500 * 16);
}

#[test]
fn the_queue_priorities_example_loads_as_documented() {
    let (_dir, m) = load_in_project("lpc-tiers", &yaml_example("queues.md", "**Priorities.**"));
    assert_eq!(m.cells.len(), 6, "3 schedulers × 2 queue setups");
    let tiered = m
        .cells
        .iter()
        .find(|c| c.queues.is_some() && c.scheduler.name == "weighed")
        .unwrap();
    let limits = &tiered.queues.as_ref().unwrap().limits;
    assert!(limits.has_tiers());
    let priorities: Vec<i64> = limits.queues.iter().map(|q| q.priority).collect();
    assert_eq!(priorities, [20, 10, 0]);
    let weights = &tiered.scheduler.order.priority;
    assert!(!weights.queue_tiers);
    assert_eq!(weights.queue, 2000.0);
    // The other schedulers keep tiers (the default).
    assert!(
        m.cells
            .iter()
            .filter(|c| c.scheduler.name != "weighed")
            .all(|c| c.scheduler.order.priority.queue_tiers)
    );
}

#[test]
fn the_trace_reading_example_loads_as_documented() {
    use schedlab::swf::{Extended, MemoryReading};
    let (_dir, m) = load_in_project("reading", &yaml_example("manifest.md", "## Reading traces"));
    assert_eq!(m.cells.len(), 2, "2 workloads × 1 cluster × 1 scheduler");
    let reading = |name: &str| {
        m.cells
            .iter()
            .find(|c| c.workload.name == name)
            .map(|c| c.workload.reading.clone())
            .unwrap()
    };
    let kth = reading("kth");
    assert_eq!(
        kth.memory,
        MemoryReading::KbPerProc,
        "the standard is the default"
    );
    assert!(!kth.used_memory_fallback);
    assert_eq!(kth.extended, Extended::Auto);
    let wagap = reading("wagap");
    assert_eq!(wagap.memory, MemoryReading::BytesPerNode);
    assert!(wagap.used_memory_fallback);
    assert_eq!(wagap.extended, Extended::Alea);
}

#[test]
fn the_window_examples_load_and_each_keeps_jobs() {
    let (_dir, m) = load_in_project("windows", &yaml_example("manifest.md", "## Windows"));
    assert_eq!(m.cells.len(), 4);
    let mut ms = [m];
    schedlab::execute::selection::place_and_check(&mut ms).unwrap_or_else(|e| panic!("{e}"));
    let [m] = ms;
    let trace = schedlab::source::read_path(
        &root().join("workloads/SDSC-SP2-1998-4.2-cln.swf.gz"),
        schedlab::swf::Mode::Strict,
        &Default::default(),
    )
    .unwrap();
    let first = trace.workload.jobs[0].submit;
    let start = trace.header.unix_start_time.unwrap();
    let window = |name: &str| {
        m.cells
            .iter()
            .find(|c| c.workload.name == name)
            .unwrap()
            .workload
            .transforms
            .to_transforms()
            .window
            .unwrap()
    };
    assert_eq!(window("first-60-days"), (None, Some(first + 60 * 86_400)));
    assert_eq!(
        window("days-30-to-90"),
        (Some(first + 30 * 86_400), Some(first + 90 * 86_400))
    );
    // 1998-05-01 00:00 UTC is Unix time 893,980,800.
    assert_eq!(
        window("spring-1998"),
        (
            Some(893_980_800 - start),
            Some(893_980_800 + 31 * 86_400 - start)
        )
    );
    assert_eq!(window("seconds"), (Some(0), Some(2_592_000)));
}

#[test]
fn the_fairshare_schedulers_example_loads_as_documented() {
    use schedlab::sim::scheduler::order::{OrderKind, Reorder};
    let yaml = format!(
        "name: orders\nworkloads:\n  kth: {{trace: ../workloads/KTH-SP2-1996-2.1-cln.swf.gz}}\n{}",
        yaml_example("fairshare.md", "## A scheduler is")
    );
    let (_dir, m) = load_in_project("orders", &yaml);
    let order_of = |name: &str| {
        &m.cells
            .iter()
            .find(|c| c.scheduler.name == name)
            .unwrap_or_else(|| panic!("no cell runs `{name}`"))
            .scheduler
            .order
    };
    assert_eq!(order_of("fair-none").kind, OrderKind::Fairshare);
    assert_eq!(order_of("fair-easy").reorder, Reorder::Every(300));
    assert_eq!(order_of("fair-per-start").reorder, Reorder::Start);
    assert_eq!(order_of("multifactor").kind, OrderKind::Priority);
}
