//! Node-level simulation on the MetaCentrum system of Alea's `mc.swf.machines` (20 clusters,
//! 495 nodes of 4–288 cores and 3–6,144 GB, all shared), with two workloads that carry
//! requests:
//!
//! - METACENTRUM-2009 (103,656 jobs): plain SWF jobs — flexible requests of their processors,
//!   with the trace's used memory (field 7, KB per processor by the SWF standard) as the memory
//!   per core, since the trace records no requested memory.
//! - wagap-2013 (17,900 jobs): Alea's extended SWF with PBS node specs (`8:ppn=8:cl_zegox`,
//!   `1:ppn=64:x86_64:cl_zewura#excl`) and requested memory in bytes per node (field 10). Node
//!   requests; `cl_<cluster>` labels are kept as properties (every mc node carries its
//!   cluster's), other labels (`x86_64`, `brno`, `nfs4`, host names) are dropped, and a
//!   multi-part spec (`a+b`) keeps its first part.
//!
//! Both workloads run on `workloads/mc-2013.swf.machines` (Alea's `mc.swf.machines`, bundled
//! under that name), and wagap-2013 also on its own `workloads/wagap-2013.swf.machines` (2
//! clusters, 68 nodes). Everything is read from `workloads/` (what `make all` uses) but
//! METACENTRUM-2009, which is not bundled: it alone is read from `../shared/workloads`, and
//! left out with a note when that is absent. The machine file goes through the product's importer
//! (`schedlab::machines`, what `schedlab simulate --machines` runs); the two workloads are read
//! by the bench's own minimal readers below (METACENTRUM-2009 with its used memory, wagap-2013
//! keeping only the `cl_` labels of its node specs, so that every job fits the mc nodes).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use schedlab::sim::topology::{
    Constraint, ConstraintTable, JobRequest, Layout, NodeDemand, Topology,
};
use schedlab::sim::{
    Job, Machine, SchedulerKind, SimConfig, SimOutcome, TopologyMachine, Workload, simulate,
};

/// The calling thread's CPU time in seconds, where Linux gives it.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// `../shared/workloads`: only for METACENTRUM-2009, which is not bundled.
fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/workloads")
}

/// `workloads/`, the files `make all` uses.
fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads")
}

fn lines(path: &Path) -> Vec<String> {
    let file = std::fs::File::open(path).expect("input opens");
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    reader
        .lines()
        .map(|l| l.expect("input reads"))
        .filter(|l| !l.trim_start().starts_with(';') && !l.trim().is_empty())
        .collect()
}

/// Alea's machine file read by the product's importer, as `schedlab simulate --machines` reads
/// it (`schedlab::machines::read_path`: one shared cluster of one class per line, every node
/// labelled `cl_<name>`), validated as the command validates it.
fn topology_of(path: &Path) -> Topology {
    let file = schedlab::machines::read_path(path).expect("the machine file imports");
    assert_eq!(file.format, schedlab::machines::MachineFormat::Alea);
    let topology = Topology::new(file.clusters);
    topology.validate().expect("a valid topology");
    topology
}

/// The SWF reader's rules on a whitespace-split line: requested processors = field 8 else 5,
/// requested time = field 9 else the runtime; jobs with no runtime or processors are dropped.
fn swf_job(f: &[&str]) -> Option<Job> {
    let int = |i: usize| f[i].parse::<f64>().map_or(-1, |v| v as i64);
    let runtime = int(3);
    let procs = if int(7) > 0 { int(7) } else { int(4) };
    if runtime <= 0 || procs <= 0 {
        return None;
    }
    let requested = if int(8) > 0 { int(8) } else { runtime };
    Some(Job {
        id: int(0) as u64,
        submit: int(1),
        runtime,
        requested_time: requested,
        procs: procs as u32,
        user: int(11) as i32,
        ..Job::default()
    })
}

pub fn metacentrum_2009() -> Workload {
    let jobs = lines(&shared().join("METACENTRUM-2009-2.swf.gz"))
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let job = swf_job(&f)?;
            let request = JobRequest {
                memory_kb: f[6].parse::<i64>().unwrap_or(0).max(0) as u64,
                ..JobRequest::default()
            };
            Some((job, request))
        })
        .collect::<Vec<_>>();
    Workload::of_requests(jobs, ConstraintTable::default())
}

pub fn wagap_2013() -> Workload {
    let mut table = ConstraintTable::default();
    let mut ids = HashMap::new();
    let jobs = lines(&bundled().join("wagap-2013.swf.gz"))
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let mut job = swf_job(&f)?;
            let (spec, exclusive) = match f[f.len() - 1].split_once('#') {
                Some((s, flag)) => (s, flag == "excl"),
                None => (f[f.len() - 1], false),
            };
            let spec = spec.split('+').next().unwrap_or("");
            let mut parts = spec.split(':');
            let count = parts
                .next()
                .and_then(|n| n.parse::<u32>().ok())
                .unwrap_or(1)
                .max(1);
            let mut ppn = 1;
            let mut props: Vec<String> = Vec::new();
            for p in parts {
                if let Some(n) = p.strip_prefix("ppn=") {
                    ppn = n.parse().unwrap_or(1);
                } else if p.starts_with("cl_") {
                    props.push(p.to_string());
                }
            }
            let bytes = f[9].parse::<i64>().unwrap_or(0).max(0) as u64;
            let constraint = Constraint::properties(props);
            let id = *ids
                .entry(constraint.clone())
                .or_insert_with(|| table.intern(constraint));
            job.procs = count * ppn;
            let request = JobRequest {
                constraint: id,
                exclusive,
                ..JobRequest::nodes(
                    count,
                    NodeDemand {
                        cores: ppn,
                        memory_kb: bytes / 1024,
                        gpus: 0,
                    },
                )
            };
            Some((job, request))
        })
        .collect::<Vec<_>>();
    Workload::of_requests(jobs, table)
}

/// Recomputes every node's use over time from the outcome and panics if any component of any
/// node is ever over its capacity.
fn assert_no_overallocation(w: &Workload, machine: &TopologyMachine, out: &SimOutcome) {
    let layout = Layout::new(machine).expect("valid topology");
    let mut events: Vec<(u32, i64, bool, [u64; 3])> = Vec::new();
    for (a, o) in out.assignments.iter().zip(&out.jobs) {
        assert_eq!(a.job, o.job);
        let shape = layout
            .shape(
                w.request(&w.jobs[a.job as usize]),
                w.jobs[a.job as usize].procs,
                a.class,
            )
            .expect("fits");
        assert_eq!(a.nodes.len(), shape.count as usize);
        for (i, &node) in a.nodes.iter().enumerate() {
            assert_eq!(layout.class_of(node), a.class);
            let v = shape.amount(i as u32).0;
            events.push((node, o.start, true, v));
            events.push((node, o.end, false, v));
        }
    }
    events.sort_by_key(|e| (e.0, e.1, e.2));
    let mut used = [0u64; 3];
    let mut current = u32::MAX;
    for (node, t, take, v) in events {
        if node != current {
            assert_eq!(used, [0; 3], "node {current} ends with something held");
            current = node;
        }
        let cap = layout.capacity_of(node).0;
        for k in 0..3 {
            if take {
                used[k] += v[k];
                assert!(used[k] <= cap[k], "node {node} over-allocated at t={t}");
            } else {
                used[k] -= v[k];
            }
        }
    }
}

pub fn bench(filter: Option<&str>) {
    type Loader = fn() -> Workload;
    // The machine files and wagap-2013 are bundled in `workloads/` (what `make all` uses;
    // `mc-2013.swf.machines` is Alea's `mc.swf.machines`, renamed). Only METACENTRUM-2009 is
    // not: that case alone needs `../shared` and is left out, with a note, without it. Jobs
    // asking for a cluster a machine file does not have are skipped there, as by `schedlab
    // simulate`.
    let bundled = bundled();
    let mut cases: Vec<(&str, Loader, PathBuf)> = Vec::new();
    if shared().join("METACENTRUM-2009-2.swf.gz").is_file() {
        cases.push((
            "METACENTRUM-2009",
            metacentrum_2009,
            bundled.join("mc-2013.swf.machines"),
        ));
    } else {
        println!(
            "\n(../shared/workloads/METACENTRUM-2009-2.swf.gz not found: its node-level figures skipped)"
        );
    }
    cases.push((
        "wagap-2013",
        wagap_2013,
        bundled.join("mc-2013.swf.machines"),
    ));
    cases.push((
        "wagap-2013",
        wagap_2013,
        bundled.join("wagap-2013.swf.machines"),
    ));
    let selected: Vec<_> = cases
        .iter()
        .filter(|(name, _, _)| filter.is_none_or(|f| name.contains(f) || "mc".contains(f)))
        .collect();
    if selected.is_empty() {
        return;
    }
    assert_eq!(
        {
            let t = topology_of(&bundled.join("mc-2013.swf.machines"));
            (t.clusters.len(), t.nodes())
        },
        (20, 495)
    );
    println!("\n## Node-level simulation on Alea machine files (one thread, median)\n");
    println!(
        "| workload | machines | jobs | simulated | scheduler | reps | median s | jobs/s | median CPU s | jobs per CPU s |"
    );
    println!("|---|---|---:|---:|---|---:|---:|---:|---:|---:|");
    // `BENCH_SCHEDULER=conservative` (a comma-separated list) runs only those schedulers: for
    // profiling one policy without the others' runs.
    let only = std::env::var("BENCH_SCHEDULER").ok();
    let mut loaded: Option<(&str, Workload)> = None;
    for (name, load, machines) in selected {
        if loaded.as_ref().is_none_or(|(n, _)| n != name) {
            loaded = Some((name, load()));
        }
        let w = &loaded.as_ref().expect("loaded above").1;
        let topology = topology_of(machines);
        let machines = machines
            .file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned());
        for kind in SchedulerKind::ALL.into_iter().filter(|k| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|s| s == k.name()))
        }) {
            let machine = TopologyMachine::new(topology.clone());
            let config = SimConfig::new(Machine::Topology(machine.clone()), kind);
            let reference = simulate(w, &config).expect("simulates");
            assert_eq!(reference.jobs.len() + reference.skipped.len(), w.len());
            assert_no_overallocation(w, &machine, &reference);
            let reps = if kind == SchedulerKind::Conservative {
                3
            } else {
                11
            };
            // Wall clock and the thread's CPU time: on the shared machine the wall clock also
            // measures the other processes.
            let mut cpu = Vec::new();
            let (secs, out) = crate::time(reps, || {
                let before = cpu_seconds();
                let out = simulate(w, &config).expect("simulates");
                if let (Some(b), Some(a)) = (before, cpu_seconds()) {
                    cpu.push(a - b);
                }
                out
            });
            assert_eq!(out, reference, "simulation is deterministic");
            let cpu = (!cpu.is_empty()).then(|| crate::median(cpu));
            println!(
                "| {name} | {machines} | {} | {} | {kind} | {reps} | {secs:.4} | {:.0} | {} | {} |",
                w.len(),
                out.jobs.len(),
                w.len() as f64 / secs,
                cpu.map_or("–".into(), |c| format!("{c:.4}")),
                cpu.map_or("–".into(), |c| format!("{:.0}", w.len() as f64 / c)),
            );
        }
    }
}
