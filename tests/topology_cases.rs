//! Hand-worked schedules on small heterogeneous systems (issue 10), mostly the system of
//! Klusáček & Rudová's Examples 3–5 (`papers/klusacek-rudova-multi-resource-fairshare.txt`,
//! §2.3): ten nodes of 8 CPUs / 16 GB (nodes 0–9) and one of 80 CPUs / 512 GB (node 10), one
//! shared cluster. Every expected start below is worked out by hand in the comments.

mod common;

use schedlab::sim::reservation::{Decision, OnConflict, Placement as When, Reservations, Rule};
use schedlab::sim::topology::{
    Cluster, Constraint, ConstraintTable, JobRequest, NodeClass, NodeDemand, Placement, Topology,
};
use schedlab::sim::{
    Allocation, Infeasible, Job, Machine, ResourceVec, SchedulerKind, SimConfig, SimOutcome, Time,
    TopologyMachine, Workload, simulate, simulate_reserving,
};

const GIB: u64 = 1 << 20;

/// A job and what it asks of the topology.
type Asked = (Job, JobRequest);

/// A job asking for `count` nodes of `cores` cores and `gib` GiB, running exactly `runtime`.
fn nodes(id: u64, submit: Time, count: u32, cores: u32, gib: u64, runtime: Time) -> Asked {
    let job = Job {
        id,
        submit,
        runtime,
        requested_time: runtime,
        procs: count * cores,
        ..Job::default()
    };
    let request = JobRequest::nodes(
        count,
        NodeDemand {
            cores,
            memory_kb: gib * GIB,
            gpus: 0,
        },
    );
    (job, request)
}

/// A plain SWF job: a flexible request of its processors.
fn flexible(job: Job) -> Asked {
    (job, JobRequest::default())
}

fn workload(jobs: &[Asked]) -> Workload {
    Workload::of_requests(jobs.iter().cloned(), ConstraintTable::default())
}

fn run(jobs: Vec<Asked>, kind: SchedulerKind) -> SimOutcome {
    simulate(
        &workload(&jobs),
        &SimConfig::new(Machine::topology(Topology::example_3()), kind),
    )
    .unwrap()
}

/// (job id, start, first node) of every simulated job, by id.
fn starts(w: &[Asked], out: &SimOutcome) -> Vec<(u64, Time, u32)> {
    let mut v: Vec<_> = out
        .jobs
        .iter()
        .zip(&out.assignments)
        .map(|(o, a)| (w[o.job as usize].0.id, o.start, a.nodes[0]))
        .collect();
    v.sort();
    v
}

fn sorted(mut jobs: Vec<Asked>) -> Vec<Asked> {
    jobs.sort_by_key(|(j, _)| j.submit);
    jobs
}

#[test]
fn a_one_cpu_512_gb_job_takes_the_big_node_and_blocks_it() {
    let jobs = vec![
        // Example 3's job: 1 CPU and 512 GB fits only node 10, and uses all its memory.
        nodes(1, 0, 1, 1, 512, 100),
        // 1 CPU, 1 GB: first fit → the first small node, 0.
        nodes(2, 1, 1, 1, 1, 10),
        // 2 CPUs, 16 GB: node 0 has 15 GB left → node 1.
        nodes(3, 2, 1, 2, 16, 10),
        // 64 CPUs: only node 10 has them, and its 79 free CPUs are useless without memory: it
        // waits for job 1 to end at 100 — although 79 + 80 of the system's 160 CPUs are idle.
        nodes(4, 3, 1, 64, 1, 10),
    ];
    for kind in SchedulerKind::ALL {
        let out = run(jobs.clone(), kind);
        assert_eq!(
            starts(&jobs, &out),
            [(1, 0, 10), (2, 1, 0), (3, 2, 1), (4, 100, 10)],
            "{kind}"
        );
        assert_eq!(out.jobs[0].held, ResourceVec([1, 512 * GIB, 0]));
    }
}

#[test]
fn jobs_that_fit_no_node_are_reported_with_their_reason() {
    let mut table = ConstraintTable::default();
    let gpu = table.intern(Constraint::properties(["gpu"]));
    let zewura = table.intern(Constraint::cluster("zewura"));
    let with = |(j, r): Asked, f: &dyn Fn(&mut JobRequest)| {
        let mut r = r;
        f(&mut r);
        (j, r)
    };
    let jobs = vec![
        nodes(1, 0, 1, 1, 600, 10),
        // Flexible 200 cores: 25 small nodes or 3 big ones; the system has 10 and 1.
        flexible(Job {
            id: 2,
            procs: 200,
            ..Job::default()
        }),
        with(nodes(3, 0, 1, 1, 1, 10), &|r| {
            *r = JobRequest::nodes(
                1,
                NodeDemand {
                    cores: 1,
                    memory_kb: GIB,
                    gpus: 1,
                },
            )
        }),
        with(nodes(4, 0, 1, 1, 1, 10), &|r| r.constraint = gpu),
        with(nodes(5, 0, 1, 1, 1, 10), &|r| r.constraint = zewura),
        nodes(6, 0, 1, 81, 1, 10),
        nodes(7, 0, 2, 80, 1, 10),
        nodes(8, 0, 0, 1, 1, 10),
        nodes(9, 0, 1, 1, 1, 10),
    ];
    let w = Workload::of_requests(jobs, table);
    let out = simulate(
        &w,
        &SimConfig::new(
            Machine::topology(Topology::example_3()),
            SchedulerKind::Easy,
        ),
    )
    .unwrap();
    let skipped: Vec<(u64, Infeasible)> = out
        .skipped
        .iter()
        .map(|&(j, why)| (w.jobs[j as usize].id, why))
        .collect();
    assert_eq!(
        skipped,
        [
            (1, Infeasible::TooMuchMemoryPerNode),
            (2, Infeasible::TooManyNodes),
            (3, Infeasible::TooManyGpusPerNode),
            (4, Infeasible::NoNodeWithProperties),
            (5, Infeasible::NoSuchCluster),
            (6, Infeasible::TooManyCoresPerNode),
            (7, Infeasible::TooManyNodes),
            (8, Infeasible::EmptyRequest),
        ]
    );
    assert_eq!(out.jobs.len(), 1);
}

#[test]
fn easy_keeps_the_memory_the_head_was_promised() {
    let jobs = vec![
        // A: 300 GB → node 10 (only it has the memory), until 100. 212 GB stay free.
        nodes(1, 0, 1, 1, 300, 100),
        // B, the head: 400 GB, only node 10 → shadow time 100, when A ends and 512 GB are
        // free; the head leaves 112 GB of "extra" memory on node 10 from then on.
        nodes(2, 1, 1, 1, 400, 50),
        // C: 200 GB until 502: fits now (212 GB free) but would still hold 200 GB at the
        // shadow time, leaving 312 < 400 for B: not backfilled.
        nodes(3, 2, 1, 1, 200, 500),
        // D: 100 GB until 503: leaves 412 ≥ 400 for B at the shadow time → backfilled at 3.
        nodes(4, 3, 1, 1, 100, 500),
        // E: 200 GB, ends at 94 (before the shadow time): it may use anything free now, but
        // only 112 GB are → waits.
        nodes(5, 4, 1, 1, 200, 90),
        // F: 100 GB, ends at 100 = the shadow time → backfilled at 5 (112 GB free).
        nodes(6, 5, 1, 1, 100, 95),
    ];
    // At 100 A and F end: 412 GB free, B starts (its shadow time). C is the new head: free at
    // 150 (B ends) → C and then E (412 − 200 = 212 ≥ 200) start at 150, in queue order (E is
    // not backfilled: nothing earlier waits then).
    let out = run(jobs.clone(), SchedulerKind::Easy);
    let w = sorted(jobs);
    assert_eq!(
        starts(&w, &out),
        [
            (1, 0, 10),
            (2, 100, 10),
            (3, 150, 10),
            (4, 3, 10),
            (5, 150, 10),
            (6, 5, 10)
        ]
    );
    let backfilled: Vec<bool> = out.jobs.iter().map(|o| o.backfilled).collect();
    assert_eq!(backfilled, [false, false, false, true, false, true]);
}

#[test]
fn conservative_reserves_concrete_nodes() {
    let jobs = vec![
        // A: all ten small nodes until 100.
        nodes(1, 0, 10, 8, 16, 100),
        // B: 2 × (4 CPUs, 8 GB): two nodes of one class → only small ones → reserved at 100 on
        // nodes 0 and 1 (first fit), half of each.
        nodes(2, 1, 2, 4, 8, 50),
        // C: 1 CPU, 1 GB: the big node is free now.
        nodes(3, 2, 1, 1, 1, 200),
        // D: 6 whole small nodes for 30 s: at 100 nodes 2–9 are free → nodes 2–7.
        nodes(4, 3, 6, 8, 16, 30),
        // E: 3 whole small nodes: at 100 only 8 and 9 are whole; at 130 (D ends) 2–9 → 2, 3, 4.
        nodes(5, 4, 3, 8, 16, 10),
        // F: 2 × (4 CPUs, 8 GB): at 100 nodes 0 and 1 have exactly that left beside B.
        nodes(6, 5, 2, 4, 8, 50),
    ];
    let out = run(jobs.clone(), SchedulerKind::Conservative);
    assert_eq!(
        starts(&jobs, &out),
        [
            (1, 0, 0),
            (2, 100, 0),
            (3, 2, 10),
            (4, 100, 2),
            (5, 130, 2),
            (6, 100, 0)
        ]
    );
    let f = out.assignments.iter().find(|a| a.job == 5).unwrap();
    assert_eq!(f.nodes, [0, 1]);
}

#[test]
fn placement_policies_differ_as_in_example_5() {
    // Example 5: a 1-CPU / 16 GB job can run on a small or on the big node. List the big class
    // first: first fit takes it (wasting 80 CPUs' worth of the big node's memory share), best
    // fit the smallest node that fits.
    let mut t = Topology::example_3();
    t.clusters[0].classes.reverse();
    let job = vec![nodes(1, 0, 1, 1, 16, 10)];
    for (placement, node) in [(Placement::FirstFit, 0), (Placement::BestFit, 1)] {
        let config = SimConfig {
            placement,
            ..SimConfig::new(Machine::topology(t.clone()), SchedulerKind::Fcfs)
        };
        let out = simulate(&workload(&job), &config).unwrap();
        assert_eq!(out.assignments[0].nodes, [node], "{placement}");
    }
}

#[test]
fn flexible_jobs_spread_over_as_few_nodes_as_possible() {
    // A plain SWF job of 20 processors with 2 GB per processor: 8 per small node (16 GB) →
    // 8 + 8 + 4 on nodes 0, 1, 2 — or, first in best fit's order too, the same; a 1-processor
    // job then fits beside the 4 on node 2.
    let two_gib = JobRequest {
        memory_kb: 2 * GIB,
        ..JobRequest::default()
    };
    let jobs = vec![
        (
            Job {
                id: 1,
                procs: 20,
                runtime: 10,
                requested_time: 10,
                ..Job::default()
            },
            two_gib,
        ),
        (
            Job {
                id: 2,
                submit: 1,
                procs: 1,
                runtime: 10,
                requested_time: 10,
                ..Job::default()
            },
            two_gib,
        ),
    ];
    let out = run(jobs, SchedulerKind::Fcfs);
    assert_eq!(out.assignments[0].nodes, [0, 1, 2]);
    assert_eq!(out.jobs[0].held, ResourceVec([20, 40 * GIB, 0]));
    assert_eq!(out.jobs[0].nodes, 3);
    assert_eq!(out.assignments[1].nodes, [2]);
}

#[test]
fn exclusive_jobs_take_whole_nodes_of_a_shared_cluster() {
    let mut excl = nodes(1, 0, 1, 1, 1, 10);
    excl.1.exclusive = true;
    let jobs = vec![excl, nodes(2, 1, 1, 1, 1, 10)];
    let out = run(jobs, SchedulerKind::Fcfs);
    assert_eq!(out.jobs[0].held, ResourceVec([8, 16 * GIB, 0]));
    assert_eq!(
        (out.assignments[0].nodes[0], out.assignments[1].nodes[0]),
        (0, 1)
    );
}

/// A job may ask for nothing at all per node (no core, memory or GPU). It holds nothing, so
/// its node stays idle: an exclusive job of all ten small nodes starts beside it at once, under
/// every rule (docs/semantics.md, "What a job asks for"). Worked by hand: job 1 takes node 0
/// (first fit) at 0 for 100 s; job 2 arrives at 1 and finds nodes 0–9 idle.
#[test]
fn a_job_asking_nothing_per_node_leaves_its_node_idle() {
    for kind in [
        SchedulerKind::Fcfs,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
    ] {
        let mut nothing = nodes(1, 0, 1, 0, 0, 100);
        nothing.0.procs = 1;
        let mut excl = nodes(2, 1, 10, 8, 16, 10);
        excl.1.exclusive = true;
        let jobs = vec![nothing, excl];
        let out = run(jobs.clone(), kind);
        assert_eq!(starts(&jobs, &out), [(1, 0, 0), (2, 1, 0)], "{kind:?}");
        assert_eq!(out.jobs[0].held, ResourceVec::ZERO, "{kind:?}");
    }
}

#[test]
fn runtimes_scale_with_node_speed_when_asked() {
    let t = Topology::new(vec![
        Cluster::new(
            "fast",
            Allocation::Shared,
            vec![NodeClass::new("n", 1, 4, 0).with_speed(2.0)],
        ),
        Cluster::new(
            "slow",
            Allocation::Shared,
            vec![NodeClass::new("n", 1, 4, 0).with_speed(1.0)],
        ),
    ]);
    // Two 4-core jobs of trace runtime 10 (measured on the fastest class), limit 100: the
    // first gets the fast node, the second the slow one, where it runs 10 × 2 / 1 = 20 s.
    let jobs = vec![
        Job {
            id: 1,
            procs: 4,
            runtime: 10,
            requested_time: 100,
            ..Job::default()
        },
        Job {
            id: 2,
            procs: 4,
            runtime: 10,
            requested_time: 100,
            ..Job::default()
        },
    ];
    let mut machine = TopologyMachine::new(t);
    let w = Workload::new(jobs);
    let plain = SimConfig::new(Machine::Topology(machine.clone()), SchedulerKind::Fcfs);
    let ends: Vec<Time> = simulate(&w, &plain)
        .unwrap()
        .jobs
        .iter()
        .map(|o| o.end)
        .collect();
    assert_eq!(ends, [10, 10]);
    machine.scale_runtime = true;
    let scaled = SimConfig::new(Machine::Topology(machine), SchedulerKind::Fcfs);
    let out = simulate(&w, &scaled).unwrap();
    let ends: Vec<(u32, Time)> = out.jobs.iter().map(|o| (o.cluster, o.end)).collect();
    assert_eq!(ends, [(0, 10), (1, 20)]);
}

#[test]
fn ignoring_memory_packs_memory_bound_jobs_onto_one_node() {
    // Four 1-CPU / 16 GB jobs: with memory, each takes a whole small node's memory (nodes
    // 0–3); ignoring it, all four land on node 0.
    let jobs: Vec<Asked> = (1..=4).map(|i| nodes(i, 0, 1, 1, 16, 10)).collect();
    let mut machine = TopologyMachine::new(Topology::example_3());
    let w = workload(&jobs);
    let first =
        |out: &SimOutcome| -> Vec<u32> { out.assignments.iter().map(|a| a.nodes[0]).collect() };
    let with = simulate(
        &w,
        &SimConfig::new(Machine::Topology(machine.clone()), SchedulerKind::Fcfs),
    )
    .unwrap();
    assert_eq!(first(&with), [0, 1, 2, 3]);
    machine.ignore_memory = true;
    let without = simulate(
        &w,
        &SimConfig::new(Machine::Topology(machine), SchedulerKind::Fcfs),
    )
    .unwrap();
    assert_eq!(first(&without), [0, 0, 0, 0]);
}

#[test]
fn a_reservation_holds_whole_nodes_and_every_policy_plans_around_it() {
    // Two whole small nodes of the cluster reserved over [50, 150) (granted at 0, pinned to
    // nodes 0 and 1). J1 needs 9 small nodes for 100 s: over [0, 100) only 8 are free of the
    // reservation → it waits until 150. J2 needs 8 small nodes for 40 s: it fits now beside the
    // reservation and ends before J1 could start.
    let reservations =
        common::at_requested_times(vec![common::reserve(0, 50, 100, 2, Some("example"))]);
    let jobs = vec![nodes(1, 0, 9, 8, 16, 100), nodes(2, 1, 8, 8, 16, 40)];
    let expect = [
        // FCFS: J2 waits behind J1, which holds 9 nodes over [150, 250).
        (SchedulerKind::Fcfs, [150, 250]),
        (SchedulerKind::Easy, [150, 1]),
        (SchedulerKind::Conservative, [150, 1]),
    ];
    for (kind, want) in expect {
        let config = SimConfig::new(Machine::topology(Topology::example_3()), kind);
        let out = simulate_reserving(&workload(&jobs), &config, &reservations).unwrap();
        let got: Vec<Time> = out.jobs.iter().map(|o| o.start).collect();
        assert_eq!(got, want, "{kind}");
        assert_eq!(out.reserved_nodes, [(0, vec![0, 1])], "{kind}");
        assert_eq!(out.reservations[0].window, Some((50, 150)));
    }
}

/// J1 holds all ten small nodes over [0, 100); J2, submitted at 1, needs all ten for 50 s.
fn full_then_queued() -> Vec<Asked> {
    vec![nodes(1, 0, 10, 8, 16, 100), nodes(2, 1, 10, 8, 16, 50)]
}

#[test]
fn after_the_queue_a_reservation_on_nodes_waits_for_the_queued_jobs() {
    // At 2, two whole nodes of the cluster for 30 s, as soon as possible. Only the small class
    // has two nodes. After the queue: J2 keeps its slot [100, 150) on all ten small nodes, so
    // the earliest window is [150, 180), pinned by first fit to nodes 0 and 1; J2 starts at
    // 100 under every policy.
    let reservations = Reservations {
        requests: vec![common::reserve(2, 2, 30, 2, Some("example"))],
        placement: When::AfterQueue,
        on_conflict: OnConflict::Shift,
        ..Reservations::default()
    };
    for kind in SchedulerKind::ALL {
        let config = SimConfig::new(Machine::topology(Topology::example_3()), kind);
        let out =
            simulate_reserving(&workload(&full_then_queued()), &config, &reservations).unwrap();
        let got: Vec<Time> = out.jobs.iter().map(|o| o.start).collect();
        assert_eq!(got, [0, 100], "{kind}");
        assert_eq!(out.reservations[0].decision, Decision::Shifted, "{kind}");
        assert_eq!(out.reservations[0].window, Some((150, 180)), "{kind}");
        assert_eq!(out.reserved_nodes, [(0, vec![0, 1])], "{kind}");
    }
}

#[test]
fn at_the_requested_time_a_reservation_on_nodes_goes_before_the_queue_or_is_refused() {
    // The same request placed at its requested time: the earliest two free small nodes are at
    // 100 (J1's requested end), so with `shift` it gets [100, 130) on nodes 0 and 1, and J2,
    // which needs all ten small nodes, waits until 130. With `reject` it is refused (100 is not
    // the requested 2) and J2 starts at 100.
    for (on_conflict, window, j2) in [
        (OnConflict::Shift, Some((100, 130)), 130),
        (OnConflict::Reject, None, 100),
    ] {
        let reservations = Reservations {
            requests: vec![common::reserve(2, 2, 30, 2, Some("example"))],
            placement: When::AtRequestedTime,
            on_conflict,
            ..Reservations::default()
        };
        for kind in SchedulerKind::ALL {
            let config = SimConfig::new(Machine::topology(Topology::example_3()), kind);
            let out =
                simulate_reserving(&workload(&full_then_queued()), &config, &reservations).unwrap();
            let got: Vec<Time> = out.jobs.iter().map(|o| o.start).collect();
            assert_eq!(got, [0, j2], "{kind} {on_conflict:?}");
            assert_eq!(out.reservations[0].window, window, "{kind} {on_conflict:?}");
            let expected: Vec<(u32, Vec<u32>)> = match window {
                Some(_) => vec![(0, vec![0, 1])],
                None => vec![],
            };
            assert_eq!(out.reserved_nodes, expected, "{kind} {on_conflict:?}");
            if window.is_none() {
                assert_eq!(
                    out.reservations[0].decision,
                    Decision::Rejected(Rule::NoRoom)
                );
            }
        }
    }
}

#[test]
fn a_one_node_reservation_takes_the_class_free_earliest() {
    // One whole node, any cluster, from 2 for 30 s: the small nodes are busy until 100 but the
    // big node is idle, so the reservation holds node 10 over [2, 32). J3 (submitted at 3) needs
    // 300 GB on one node, which only the big node has: it waits for the reservation's end.
    let reservations = common::at_requested_times(vec![common::reserve(2, 2, 30, 1, None)]);
    let mut jobs = full_then_queued();
    jobs.push(nodes(3, 3, 1, 1, 300, 10));
    for kind in SchedulerKind::ALL {
        let config = SimConfig::new(Machine::topology(Topology::example_3()), kind);
        let out = simulate_reserving(&workload(&jobs), &config, &reservations).unwrap();
        assert_eq!(out.reservations[0].decision, Decision::Granted, "{kind}");
        assert_eq!(out.reservations[0].window, Some((2, 32)), "{kind}");
        assert_eq!(out.reserved_nodes, [(0, vec![10])], "{kind}");
        let s = starts(&jobs, &out);
        // FCFS: J3 waits behind J2 (blocked until 100) although the big node frees at 32.
        let j3 = if kind == SchedulerKind::Fcfs { 100 } else { 32 };
        assert_eq!(s, [(1, 0, 0), (2, 100, 0), (3, j3, 10)], "{kind}");
    }
}

#[test]
fn on_whole_node_clusters_reserved_nodes_are_chosen_when_the_reservation_starts() {
    // Four interchangeable whole nodes of 4 cores. J1 holds node 0 over [0, 100). Two nodes are
    // reserved over [10, 40) (granted at 0). J2 (at 5) needs two nodes for 20 s: with J1 and the
    // reservation only one node is left over [10, 25), so it waits until 40. J3 (at 6) needs one
    // node for 4 s and ends by 10: EASY backfills it (it ends before J2's shadow time, 40) and
    // conservative plans it at 6; FCFS keeps it behind J2. At 10 the reservation takes the idle
    // nodes of lowest index: 1 and 2 (J3 has left node 1 at 10, ends before starts).
    let topology = Topology::new(vec![Cluster::new(
        "x",
        Allocation::ExclusiveNodes,
        vec![NodeClass::new("n", 4, 4, 0)],
    )]);
    let reservations = common::at_requested_times(vec![common::reserve(0, 10, 30, 2, Some("x"))]);
    let jobs = vec![
        nodes(1, 0, 1, 4, 0, 100),
        nodes(2, 5, 2, 4, 0, 20),
        nodes(3, 6, 1, 4, 0, 4),
    ];
    for (kind, j3, j2_nodes) in [
        (SchedulerKind::Fcfs, 40, 1),
        (SchedulerKind::Easy, 6, 1),
        (SchedulerKind::Conservative, 6, 1),
    ] {
        let config = SimConfig::new(Machine::topology(topology.clone()), kind);
        let out = simulate_reserving(&workload(&jobs), &config, &reservations).unwrap();
        assert_eq!(out.reservations[0].window, Some((10, 40)), "{kind}");
        assert_eq!(out.reserved_nodes, [(0, vec![1, 2])], "{kind}");
        let s = starts(&jobs, &out);
        assert_eq!(s[0], (1, 0, 0), "{kind}");
        assert_eq!((s[1].0, s[1].1, s[1].2), (2, 40, j2_nodes), "{kind}");
        assert_eq!((s[2].0, s[2].1), (3, j3), "{kind}");
    }
}
