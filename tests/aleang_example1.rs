//! experiments/aleang-example1.yaml (issue 12): AleaNG's Example1 set-up in our manifest — the
//! bundled inputs are AleaNG's own, the manifest resolves to its configuration key by key, and the
//! experiment runs with the priority queue served as a tier above the default one.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use arrow_array::{Array, Int64Array, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use schedlab::sim::fairshare::{Charging, Decay, Hierarchy};
use schedlab::sim::scheduler::order::{OrderKind, Reorder};
use schedlab::sim::{Allocation, SchedulerKind};

mod common;

const LOADS: [&str; 3] = ["50", "75", "100"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_bundled_inputs_are_aleangs_example1() {
    let Some(shared) = common::shared::shared("workloads/aleang-example1") else {
        return;
    };
    let ours = root().join("workloads/aleang-example1");
    for load in LOADS {
        let name = format!("Example1-load_{load}%-urgent_10%-instance_0.swf");
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(fs::File::open(ours.join(format!("{name}.gz"))).unwrap())
            .read_to_end(&mut text)
            .unwrap();
        assert!(text == fs::read(shared.join(&name)).unwrap(), "{name}");
        // The four description files are the same for every load: bundled once.
        for ext in ["queues", "users", "groups", "machines"] {
            assert_eq!(
                fs::read(ours.join(format!("example1.swf.{ext}"))).unwrap(),
                fs::read(shared.join(format!("{name}.{ext}"))).unwrap(),
                "{name}.{ext}"
            );
        }
    }
}

#[test]
fn the_manifest_resolves_to_aleangs_configuration() {
    let m = schedlab::manifest::load(&root().join("experiments/aleang-example1.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.cells.len(), 6, "3 loads × (none, aleang)");
    let cell = m
        .cells
        .iter()
        .find(|c| c.id == "load-100.aleang")
        .unwrap_or_else(|| panic!("{:?}", m.cells.iter().map(|c| &c.id).collect::<Vec<_>>()));
    // algorithms = 1: fairshare order, aggressive backfilling, re-ordered every 60 s.
    let s = &cell.scheduler;
    assert_eq!(s.policy, SchedulerKind::Aggressive);
    assert_eq!(s.order.kind, OrderKind::Fairshare);
    assert_eq!(s.order.reorder, Reorder::Every(60));
    let f = &s.order.fairshare;
    assert_eq!(
        f.decay,
        Decay::Factor {
            factor: 0.75,
            every: 48 * 3600
        }
    );
    assert_eq!(f.charging, Charging::Continuous);
    assert_eq!(f.shares.hierarchy, Hierarchy::Groups);
    let shares: Vec<f64> = f.shares.users.values().copied().collect();
    assert_eq!(shares, [2.0, 2.0, 1.0, 1.0]);
    // Whole nodes of the .machines file: 4 dedicated + 64 normal, each 1 CPU, 4 GPUs.
    let t = cell.cluster.topology.as_ref().unwrap();
    assert!(
        t.clusters
            .iter()
            .all(|c| c.allocation == Allocation::ExclusiveNodes)
    );
    let nodes: u32 = t
        .clusters
        .iter()
        .flat_map(|c| &c.classes)
        .map(|n| n.count)
        .sum();
    assert_eq!(nodes, 68);
    // The .queues: priority_queue (quota 100, priority 50) a tier above default_queue (96, 20);
    // .users quotas 96/96/64/64; .groups 100/96.
    let limits = &cell.queues.as_ref().unwrap().limits;
    let queues: Vec<(&str, i64, Option<u64>)> = limits
        .queues
        .iter()
        .map(|q| (q.name.as_str(), q.priority, q.caps.cpu_quota))
        .collect();
    assert_eq!(
        queues,
        [
            ("priority_queue", 50, Some(100)),
            ("default_queue", 20, Some(96))
        ]
    );
    assert!(limits.has_tiers());
    let quota = |t: &schedlab::sim::limits::AccountTable, id| t.caps(id).cpu_quota;
    assert_eq!(
        [0, 1, 2, 3].map(|u| quota(&limits.users, u)),
        [Some(96), Some(96), Some(64), Some(64)]
    );
    assert_eq!(
        [0, 1].map(|g| quota(&limits.groups, g)),
        [Some(100), Some(96)]
    );
    assert!(
        m.cells
            .iter()
            .any(|c| c.id == "load-50.none" && c.queues.is_none())
    );
}

/// queues.parquet: (cell, queue) → (jobs, held jobs).
fn queues(path: &Path) -> BTreeMap<(String, String), (i64, i64)> {
    let mut out = BTreeMap::new();
    for b in ParquetRecordBatchReaderBuilder::try_new(fs::File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap()
    {
        let b = b.unwrap();
        let col = |name: &str| b.column_by_name(name).unwrap().clone();
        let (cell, queue, jobs, held) = (col("cell"), col("queue"), col("jobs"), col("held_jobs"));
        let cell = cell.as_any().downcast_ref::<StringArray>().unwrap();
        let queue = queue.as_any().downcast_ref::<StringArray>().unwrap();
        let jobs = jobs.as_any().downcast_ref::<Int64Array>().unwrap();
        let held = held.as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.insert(
                (cell.value(i).to_string(), queue.value(i).to_string()),
                (jobs.value(i), held.value(i)),
            );
        }
    }
    out
}

#[test]
fn the_experiment_runs_with_every_job_in_aleangs_queues() {
    let results = tempfile::tempdir().unwrap();
    let out = common::schedlab_in(
        &root(),
        &[
            "run",
            "--quiet",
            "--results",
            results.path().to_str().unwrap(),
            "experiments/aleang-example1.yaml",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let q = queues(&results.path().join("aleang-example1/queues.parquet"));
    for load in LOADS {
        let all = q[&(format!("load-{load}.none"), "all".to_string())].0;
        let get = |queue: &str| q[&(format!("load-{load}.aleang"), queue.to_string())];
        let (urgent, normal) = (get("priority_queue"), get("default_queue"));
        // Every job reaches one of the two queues by its SWF queue field; none is rejected.
        assert_eq!(urgent.0 + normal.0, all, "load {load}");
        assert!(urgent.0 > 0 && normal.0 > 0);
    }
    // At full load the normal users' CPU quota (64 of 68 CPUs) holds jobs back.
    assert!(q[&("load-100.aleang".to_string(), "default_queue".to_string())].1 > 0);
}
