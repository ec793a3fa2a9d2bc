//! Node-level EASY's index over the waiting jobs (`scheduler::node::waiting`, issue 36) against
//! the walk it replaces: asked at every backfilling pass, it must start the same jobs on the same
//! nodes at the same times as the walk over every job after the head, kept as the reference
//! (`NodeEasy::with_scan_limit(usize::MAX)`, which carries nothing between calls either). The
//! workloads are overloaded and drawn from a few shapes and requested times, so that groups hold
//! many jobs, requests fail on one side of the shadow time and not the other, and a group's jobs
//! start behind its head. The queue is in submission order, or reordered at every call by
//! fairshare (four users, random charging, decay, shares and re-ordering periods) or priority:
//! there the index reads the order past the head, and the last call's shadow and no-room
//! requests are carried across arrivals whatever the order of the jobs behind the head.

mod common;

use proptest::prelude::*;
use schedlab::sim::reservation::Reservations;
use schedlab::sim::scheduler::node::NodeEasy;
use schedlab::sim::scheduler::order::{OrderKind, OrderSpec};
use schedlab::sim::topology::{
    ConstraintTable, JobRequest, NodeClass, NodeDemand, Placement, Shape, Topology,
};
use schedlab::sim::{
    AnyPolicy, Job, Machine, Overrun, SchedulerKind, SimConfig, SimOutcome, Time, Workload,
    simulate_policy,
};

/// One or two clusters of one or two classes: 1–6 nodes of 1, 2, 4 or 8 cores.
fn arb_topology() -> impl Strategy<Value = Topology> {
    prop::collection::vec(
        (
            prop::sample::select(vec![false, false, true]),
            prop::collection::vec(
                (1u32..7, prop::sample::select(vec![1u32, 2, 4, 8]), 0u64..3)
                    .prop_map(|(count, cores, mem)| NodeClass::new("k", count, cores, mem * 16)),
                1..3,
            ),
        ),
        1..3,
    )
    .prop_map(common::numbered_topology)
}

/// 40–160 jobs of users 0–3 submitted close together, each of one of six shapes (flexible or
/// nodes, some asking memory or whole nodes) and one of three requested times, overrunning now
/// and then.
fn arb_jobs() -> impl Strategy<Value = Workload> {
    let shapes = prop::collection::vec(
        (
            any::<bool>(),
            1u32..12,
            0u64..20,
            1u32..4,
            0u32..5,
            any::<bool>(),
        ),
        6,
    );
    let times = prop::collection::vec(1i64..60, 3);
    let jobs = prop::collection::vec(
        (0i64..8, 0usize..6, 0usize..3, 0i64..100, 1i64..70, 0i32..4),
        40..160,
    );
    (shapes, times, jobs).prop_map(|(shapes, times, raw)| {
        let mut submit = 0;
        let jobs = raw
            .into_iter()
            .enumerate()
            .map(|(i, (gap, s, t, overrun, runtime, user))| {
                submit += gap;
                let (flexible, procs, mem, n, cores, exclusive) = shapes[s];
                let requested = times[t];
                let job = Job {
                    id: i as u64 + 1,
                    submit,
                    // Mostly within the request, a few beyond it.
                    runtime: if overrun < 10 {
                        requested + runtime
                    } else {
                        runtime.min(requested)
                    },
                    requested_time: requested,
                    procs: if flexible { procs } else { n * cores.max(1) },
                    cpu_time: -1,
                    user,
                    group: user % 2,
                    ..Job::default()
                };
                let request = JobRequest {
                    shape: if flexible {
                        Shape::Flexible
                    } else {
                        Shape::Nodes {
                            count: n,
                            per_node: NodeDemand {
                                cores,
                                memory_kb: mem,
                                gpus: 0,
                            },
                        }
                    },
                    memory_kb: if flexible { mem } else { 0 },
                    exclusive: exclusive && i % 3 == 0,
                    ..JobRequest::default()
                };
                (job, request)
            })
            .collect::<Vec<_>>();
        Workload::of_requests(jobs, ConstraintTable::default())
    })
}

/// Submission order (half the cases), fairshare order over users 0–3
/// (`common::arb_workload::arb_fairshare`) or priority order.
fn arb_order() -> impl Strategy<Value = OrderSpec> {
    let fairshare =
        common::arb_workload::arb_fairshare(0, 0.2).prop_map(|(fairshare, reorder)| OrderSpec {
            fairshare,
            reorder,
            ..OrderSpec::of(OrderKind::Fairshare)
        });
    prop_oneof![
        2 => Just(OrderSpec::of(OrderKind::Fcfs)),
        1 => fairshare,
        1 => Just(OrderSpec::of(OrderKind::Priority)),
    ]
}

fn run(w: &Workload, config: &SimConfig, scan_limit: usize) -> SimOutcome {
    let order = config.order.build(w, &config.machine).unwrap();
    let easy = NodeEasy::new(order).with_scan_limit(scan_limit);
    simulate_policy(
        w,
        config,
        AnyPolicy::Nodes(Box::new(easy)),
        &Reservations::default(),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(2000))]

    #[test]
    fn the_index_starts_what_the_walk_starts(
        topology in arb_topology(),
        w in arb_jobs(),
        placement in prop::sample::select(Placement::ALL.to_vec()),
        overrun in prop::sample::select(vec![Overrun::Kill, Overrun::Continue]),
        interval in prop::sample::select(vec![None, Some(7 as Time)]),
        order in arb_order(),
    ) {
        let config = SimConfig {
            placement,
            overrun,
            interval,
            order,
            ..SimConfig::new(Machine::topology(topology), SchedulerKind::Easy)
        };
        let walk = run(&w, &config, usize::MAX);
        prop_assert_eq!(&run(&w, &config, 0), &walk);
        // With the limit between: the index kept (and its record of starts) while the walk runs.
        prop_assert_eq!(&run(&w, &config, 6), &walk);
    }
}
