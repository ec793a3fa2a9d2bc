//! Policies on topologies (issue 31): a policy of the decision interface on heterogeneous nodes
//! through `NodePolicyScheduler`. Rows-only FCFS and EASY built on the `Placer` reproduce the
//! native node-level schedules job for job (and node for node); explicit node choices are
//! applied exactly; impossible node decisions stop the run naming the job, the node and the
//! reason.

mod common;

use std::path::Path;

use common::node_policies::{Easy, Fcfs};
use schedlab::api::simulate::{Settings, Simulated, simulate};
use schedlab::sim::policy::{NodePolicyScheduler, NodeStart, Policy, PolicyError, PolicyView};
use schedlab::sim::topology::{Cluster, NodeClass, Topology};
use schedlab::sim::{
    Allocation, AnyPolicy, Machine, Placement, SchedulerKind, SimConfig, TopologyMachine,
    simulate_policy,
};
use schedlab::swf::{MemoryReading, Mode, ReadOptions, Trace, read_bytes_with};

/// MetaCentrum's wagap-2013 (17,900 jobs, memory in bytes per node) on its two clusters, with
/// the properties its jobs ask for (as the CLI's example gives them).
fn wagap() -> (Trace, Machine) {
    let options = ReadOptions {
        memory: MemoryReading::BytesPerNode,
        ..ReadOptions::default()
    };
    let trace =
        schedlab::api::trace::load(Path::new("workloads/wagap-2013.swf.gz"), false, &options)
            .unwrap();
    let file =
        schedlab::machines::read_path(Path::new("workloads/wagap-2013.swf.machines")).unwrap();
    let mut clusters = file.clusters;
    for c in &mut clusters {
        let extra: &[&str] = match c.name.as_str() {
            "zewura" => &["nodecpus80"],
            _ => &["nodecpus12", "debian", "linux", "infiniband"],
        };
        for class in &mut c.classes {
            class.properties.extend(
                ["x86_64", "brno", "nfs4"]
                    .iter()
                    .chain(extra)
                    .map(|p| p.to_string()),
            );
            class.properties.sort();
        }
    }
    let machine = Machine::Topology(TopologyMachine::new(Topology::new(clusters)));
    (trace, machine)
}

fn run(
    trace: &mut Trace,
    machine: &Machine,
    placement: Placement,
    policy: Option<Box<dyn Policy>>,
    kind: SchedulerKind,
) -> Simulated {
    let settings = Settings {
        placement,
        ..Settings::new(kind)
    };
    simulate(trace, machine, &settings, policy, true).unwrap()
}

fn assert_same(native: &Simulated, mine: &Simulated, what: &str) {
    assert_eq!(native.records.len(), mine.records.len(), "{what}");
    assert!(native.records.len() > 10_000, "{what}: most jobs run");
    for (a, b) in native.records.iter().zip(&mine.records) {
        assert_eq!(
            (a.index, a.start, a.cluster),
            (b.index, b.start, b.cluster),
            "{what}"
        );
    }
    assert_eq!(
        native.outcome.assignments, mine.outcome.assignments,
        "{what}: the same nodes"
    );
    assert!(mine.policy_calls > 0);
}

#[test]
fn rows_only_fcfs_and_easy_reproduce_the_native_node_schedules() {
    let (mut trace, machine) = wagap();
    for placement in [Placement::FirstFit, Placement::BestFit] {
        let native = run(&mut trace, &machine, placement, None, SchedulerKind::Fcfs);
        let mine = run(
            &mut trace,
            &machine,
            placement,
            Some(Box::new(Fcfs)),
            SchedulerKind::Fcfs,
        );
        assert_same(&native, &mine, &format!("fcfs {placement:?}"));
        let native = run(&mut trace, &machine, placement, None, SchedulerKind::Easy);
        let mine = run(
            &mut trace,
            &machine,
            placement,
            Some(Box::new(Easy)),
            SchedulerKind::Easy,
        );
        assert_same(&native, &mine, &format!("easy {placement:?}"));
        // EASY backfills here, or the comparison would prove little beyond FCFS.
        assert!(mine.records.iter().any(|r| r.backfilled));
    }
}

/// Two clusters of two nodes of 4 cores: `fast` (shared) and `slow` (exclusive whole nodes).
fn small() -> Machine {
    let fast = NodeClass::new("f", 2, 4, 1 << 20).with_properties(["fast"]);
    let slow = NodeClass::new("s", 2, 4, 1 << 20).with_properties(["slow"]);
    Machine::Topology(TopologyMachine::new(Topology::new(vec![
        Cluster::new("fast", Allocation::Shared, vec![fast]),
        Cluster::new("slow", Allocation::ExclusiveNodes, vec![slow]),
    ])))
}

/// AleaNG lines (field 21: `NxP` — N nodes of P cores — and required properties, colon-separated).
fn small_trace(lines: &[&str]) -> Trace {
    let text = format!("; MaxProcs: 16\n{}\n", lines.join("\n"));
    read_bytes_with(
        text.as_bytes(),
        "small.swf",
        Mode::Strict,
        &ReadOptions::default(),
    )
    .unwrap()
}

const TWO_JOBS: [&str; 2] = [
    "1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1 0 100 1x2",
    "2 0 -1 100 2 -1 -1 2 100 -1 1 2 1 -1 1 -1 -1 -1 0 100 1x2",
];

/// Starts the given decisions at the first call, then every row placed by the engine.
struct Chooser {
    first: Option<Vec<NodeStart>>,
}

impl Policy for Chooser {
    fn decide(&mut self, _: &PolicyView<'_>, _: &mut Vec<usize>) -> Result<(), PolicyError> {
        unreachable!("decide_on_nodes is called on a topology")
    }

    fn decide_on_nodes(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<NodeStart>,
    ) -> Result<(), PolicyError> {
        let topo = view.topology.expect("on a topology");
        if let Some(first) = self.first.take() {
            starts.extend(first);
            return Ok(());
        }
        let mut placer = topo.placer();
        for row in 0..view.waiting.len() {
            if placer.place(topo, row).is_some() {
                starts.push(NodeStart::placed(row));
            }
        }
        Ok(())
    }

    fn name(&self) -> &str {
        "chooser"
    }
}

fn choose(lines: &[&str], first: Vec<NodeStart>) -> Result<Simulated, String> {
    let mut trace = small_trace(lines);
    let policy = Chooser { first: Some(first) };
    simulate(
        &mut trace,
        &small(),
        &Settings::new(SchedulerKind::Fcfs),
        Some(Box::new(policy)),
        true,
    )
    .map_err(|e| e.to_string())
}

#[test]
fn explicit_nodes_are_the_nodes_the_jobs_get() {
    // Both 1x2 jobs on node 1 (4 cores: room for both), against first fit's node 0.
    let run = choose(
        &TWO_JOBS,
        vec![NodeStart::on(0, vec![1]), NodeStart::on(1, vec![1])],
    )
    .unwrap();
    let nodes: Vec<(u32, Vec<u32>)> = run
        .outcome
        .assignments
        .iter()
        .map(|a| (a.job, a.nodes.clone()))
        .collect();
    assert_eq!(nodes, [(0, vec![1]), (1, vec![1])]);
    // The same jobs placed by the engine go to node 0 (first fit).
    let mut trace = small_trace(&TWO_JOBS);
    let native = simulate(
        &mut trace,
        &small(),
        &Settings::new(SchedulerKind::Fcfs),
        None,
        true,
    )
    .unwrap();
    assert!(native.outcome.assignments.iter().all(|a| a.nodes == [0]));
    // A mix: row 1 on the exclusive cluster's node 3, row 0 placed by the engine.
    let run = choose(
        &TWO_JOBS,
        vec![NodeStart::on(1, vec![3]), NodeStart::placed(0)],
    )
    .unwrap();
    let nodes: Vec<Vec<u32>> = run
        .outcome
        .assignments
        .iter()
        .map(|a| a.nodes.clone())
        .collect();
    assert_eq!(nodes, [vec![0], vec![3]]);
    assert_eq!(run.records[1].cluster, 1);
}

#[test]
fn impossible_node_decisions_name_the_job_the_node_and_the_reason() {
    let fast_job = ["1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1 0 100 fast:1x2"];
    let wide = ["1 0 -1 100 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1 0 100 2x4"];
    let cases: Vec<(&[&str], Vec<NodeStart>, &str)> = vec![
        (
            &TWO_JOBS,
            vec![NodeStart::on(0, vec![9])],
            "job 1 (row 0) cannot start on nodes [9]: node 9 does not exist (the machine has 4 nodes, 0 to 3)",
        ),
        (
            &TWO_JOBS,
            vec![NodeStart::on(0, vec![0, 1])],
            "it needs 1 nodes on cluster fast, 2 were given",
        ),
        (
            &wide,
            vec![NodeStart::on(0, vec![0, 0])],
            "node 0 is given twice",
        ),
        (
            &wide,
            vec![NodeStart::on(0, vec![1, 2])],
            "are of different node classes",
        ),
        (
            &fast_job,
            vec![NodeStart::on(0, vec![2])],
            "node 2 (cluster slow) does not satisfy its constraint (properties fast)",
        ),
        (
            &TWO_JOBS,
            vec![NodeStart::on(0, vec![3]), NodeStart::on(1, vec![3])],
            "job 2 (row 1) cannot start on nodes [3]: node 3 has 0 cores, 0 KB, 0 GPUs free after this call's earlier starts; it needs 4 cores, 1048576 KB, 0 GPUs (the whole node)",
        ),
        (
            &wide,
            vec![NodeStart::on(0, vec![0, 1]), NodeStart::placed(0)],
            "it started job 1 (row 0) twice",
        ),
        (
            &TWO_JOBS,
            vec![NodeStart::placed(2)],
            "it started row 2, but only 2 jobs are waiting",
        ),
    ];
    for (lines, first, expected) in cases {
        let err = choose(lines, first.clone())
            .map(|_| ())
            .expect_err(expected);
        assert!(
            err.contains("policy chooser made an impossible decision"),
            "{err}"
        );
        assert!(err.contains(expected), "{first:?}: {err}");
    }
    // Three 1x2 jobs on node 0 (4 cores): the third finds no cores left there.
    let three = [
        TWO_JOBS[0],
        TWO_JOBS[1],
        "3 0 -1 100 2 -1 -1 2 100 -1 1 3 1 -1 1 -1 -1 -1 0 100 1x2",
    ];
    let err = choose(&three, (0..3).map(|r| NodeStart::on(r, vec![0])).collect())
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.contains("job 3 (row 2) cannot start on nodes [0]: node 0 has 0 cores"),
        "{err}"
    );
}

/// Each call's time and its waiting rows' (job index, user usage).
type Calls = std::rc::Rc<std::cell::RefCell<Vec<(i64, Vec<(i64, f64)>)>>>;

/// FCFS on the placer, recording each call.
struct Recorder(Calls);

impl Policy for Recorder {
    fn decide(
        &mut self,
        view: &PolicyView<'_>,
        starts: &mut Vec<usize>,
    ) -> Result<(), PolicyError> {
        let w = view.waiting;
        let rows = (0..w.len())
            .map(|k| (w.index[k], w.user_usage[k]))
            .collect();
        self.0.borrow_mut().push((view.now, rows));
        Fcfs.decide(view, starts)
    }

    fn name(&self) -> &str {
        "recorder"
    }
}

#[test]
fn the_policy_is_asked_only_when_a_waiting_job_fits_on_nodes_and_loses_no_usage() {
    // Job 1 (2 nodes × 4 cores) fills the fast cluster, job 2 (user 2, 1 × 4, ends at 30) takes
    // a whole slow node; job 3 (user 2, 2 × 4) arrives at 10 and fits nowhere until job 2 ends
    // at 30 — no call at 10 — and starts then on the two slow nodes.
    let lines = [
        "1 0 -1 100 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1 0 100 2x4",
        "2 0 -1 30 4 -1 -1 4 30 -1 1 2 1 -1 1 -1 -1 -1 0 30 1x4",
        "3 10 -1 50 8 -1 -1 8 50 -1 1 2 1 -1 1 -1 -1 -1 0 50 2x4",
    ];
    let mut trace = small_trace(&lines);
    let calls = Calls::default();
    let run = simulate(
        &mut trace,
        &small(),
        &Settings::new(SchedulerKind::Fcfs),
        Some(Box::new(Recorder(calls.clone()))),
        true,
    )
    .unwrap();
    let starts: Vec<i64> = run.records.iter().map(|r| r.start).collect();
    assert_eq!(starts, [0, 0, 30]);
    assert_eq!(run.outcome.assignments[2].nodes, [2, 3]);
    let calls = calls.borrow();
    let times: Vec<i64> = calls.iter().map(|c| c.0).collect();
    assert_eq!(times, [0, 30], "no call at 10: job 3 fits nowhere then");
    assert_eq!(run.policy_calls, 2);
    // Job 2's 30 s × 4 cores count for user 2 at 30, in full.
    assert_eq!(calls[1].1, [(2, 120.0)]);
}

#[test]
fn nodes_an_advance_reservation_needs_are_refused_naming_it() {
    // Both `fast` nodes are reserved over [50, 150) (granted at 0, pinned: a shared class).
    // A 100-s job of 2 cores on `fast` node 0 at 0 would still hold it at 50: refused, naming
    // the node and the reservation. On the whole-node `slow` cluster it may start (no
    // reservation there), and the placer's own choice for it waits until the window is over.
    let trace = small_trace(&["1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1 0 100 fast:1x2"]);
    let reservations =
        common::at_requested_times(vec![common::reserve(0, 50, 100, 2, Some("fast"))]);
    let config = SimConfig::new(small(), SchedulerKind::Fcfs);
    let run = |first: Vec<NodeStart>| {
        let policy = Chooser { first: Some(first) };
        let w = &trace.workload;
        simulate_policy(
            w,
            &config,
            AnyPolicy::Nodes(Box::new(NodePolicyScheduler::new(policy, w))),
            &reservations,
        )
    };
    let error = run(vec![NodeStart::on(0, vec![0])])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "job 1 (row 0) cannot start on nodes [0]: an advance reservation holds node 0 (cluster fast) over [50, 150), before its requested time of 100 s is up"
        ),
        "{error}"
    );
    // Placed by the placer (rows from the second call on), it starts when the window is over.
    let out = run(Vec::new()).unwrap();
    assert_eq!(out.jobs.len(), 1);
    assert_eq!(out.jobs[0].start, 150);
}
