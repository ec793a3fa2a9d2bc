//! Every schedule in `../shared/fixtures/pyss` (an independent simulator's output) reproduced
//! exactly, for each scheduler its header names — on the pool, and on the pool written as a
//! topology (node-level scheduling).

use std::fs;
use std::path::{Path, PathBuf};

use schedlab::sim::topology::{Cluster, NodeClass, Topology};
use schedlab::sim::{
    Allocation, Machine, Overrun, SchedulerKind, SimConfig, TopologyMachine, Workload, simulate,
};

mod common;

/// The fixtures folder, or `None` (the reason printed) without the shared folder.
fn fixtures_dir() -> Option<PathBuf> {
    common::shared::shared("fixtures/pyss")
}

struct Case {
    name: String,
    max_procs: u32,
    schedulers: Vec<SchedulerKind>,
    workload: Workload,
    expected: Vec<(u64, i64, i64, i64)>,
}

fn load_case(swf: &Path) -> Case {
    let trace = schedlab::swf::read_path(swf, schedlab::swf::Mode::Strict).unwrap();
    assert_eq!(
        trace.anomalies.skipped(),
        0,
        "{}: every fixture job is simulable",
        swf.display()
    );
    let max_procs = trace.header.max_procs.expect("fixtures name MaxProcs");
    // The 4th header line names the schedulers the expected schedule holds for.
    let schedulers: Vec<SchedulerKind> = trace
        .header
        .notes
        .iter()
        .find_map(|n| n.strip_prefix("Expected schedule for:"))
        .map(|v| {
            v.split('(')
                .next()
                .unwrap()
                .split(',')
                .map(|s| s.trim().parse().unwrap())
                .collect()
        })
        .unwrap_or_default();
    let workload = trace.workload;
    let expected_path = swf.with_extension("expected.csv");
    let expected = fs::read_to_string(expected_path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let v: Vec<i64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
            (v[0] as u64, v[1], v[2], v[3])
        })
        .collect();
    Case {
        name: swf.file_name().unwrap().to_string_lossy().into_owned(),
        max_procs,
        schedulers,
        workload,
        expected,
    }
}

#[test]
fn pyss_fixtures_reproduce_exactly() {
    let Some(dir) = fixtures_dir() else {
        return;
    };
    let mut cases: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "swf"))
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 40,
        "expected the whole pyss folder, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in &cases {
        let case = load_case(path);
        assert!(
            !case.schedulers.is_empty(),
            "{}: no schedulers named",
            case.name
        );
        // The pool, and the same pool written as a topology (one shared node; memory is not
        // modelled on a pool, so the topology ignores it too).
        let as_topology = Machine::Topology(TopologyMachine {
            ignore_memory: true,
            ..TopologyMachine::new(Topology::new(vec![Cluster::new(
                "pool",
                Allocation::Shared,
                vec![NodeClass::new("node", 1, case.max_procs, 0)],
            )]))
        });
        for (kind, machine) in case
            .schedulers
            .iter()
            .flat_map(|&k| [(k, Machine::pool(case.max_procs)), (k, as_topology.clone())])
        {
            let on = if machine.as_uniform().is_some() {
                "pool"
            } else {
                "topology"
            };
            let config = SimConfig {
                order: Default::default(),
                machine,
                scheduler: kind,
                interval: None,
                overrun: Overrun::Kill,
                placement: Default::default(),
            };
            let out = simulate(&case.workload, &config).unwrap();
            let mut got: Vec<_> = out
                .jobs
                .iter()
                .map(|o| {
                    let j = &case.workload.jobs[o.job as usize];
                    (j.id, j.submit, o.start, o.end)
                })
                .collect();
            got.sort();
            let mut want = case.expected.clone();
            want.sort();
            checked += 1;
            if got != want {
                let diff: Vec<_> = got
                    .iter()
                    .zip(&want)
                    .filter(|(g, w)| g != w)
                    .take(5)
                    .collect();
                failures.push(format!(
                    "{} under {kind} on the {on}: (got, want) {diff:?}",
                    case.name
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} schedules differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
