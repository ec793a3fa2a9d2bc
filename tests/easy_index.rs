//! Pool-level EASY's index over the waiting jobs (issue 36) decides exactly as the rule did
//! before it: `common::easy_reference::ReferenceEasy` is that rule, kept unchanged, and every
//! random workload below — overloaded, so that queues are long and backfilling has work — must
//! give the same outcome (every job's start, end and units, every call) with both, as must a
//! long deterministic run of bursts and quiet stretches.
//!
//! `Easy::with_scan_limit(n)` makes the rule ask the index whenever more than `n` jobs follow
//! the head (the product's limit is 256, out of reach of workloads this small), so every
//! backfilling pass here goes through the index.

mod common;

use common::easy_reference::ReferenceEasy;
use common::easy_runs::{arb_pool_or_nodes, backfilled, easy_config, run_limited};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use schedlab::sim::limits::{AccountTable, Caps, Limits};
use schedlab::sim::reservation::{ReservationRequest, Reservations};
use schedlab::sim::scheduler::Easy;
use schedlab::sim::scheduler::order::{OrderKind, OrderSpec};
use schedlab::sim::{
    Job, Machine, Overrun, SimConfig, Workload, simulate_with, simulate_with_reserving,
};

/// Overloaded workloads: up to 400 jobs arriving within a short span, sizes mixing powers of
/// two (most of HPC's jobs) with any width up to past the machine, requested times from exact
/// to far too long, and some jobs running past their request (killed, or overrunning).
fn arb_jobs(max_procs: u32) -> impl Strategy<Value = Vec<Job>> {
    let ranges = common::arb_workload::JobRanges {
        submit: 0..600,
        log_width: 0..9,
        runtime: 1..400,
        extra: 0..200,
        jobs: 1..400,
    };
    common::arb_workload::arb_overloaded_jobs(ranges, max_procs, None)
}

fn arb_requests() -> impl Strategy<Value = Vec<ReservationRequest>> {
    let ranges = common::RequestRanges {
        created: 0..600,
        notice: 0..200,
        duration: 1..150,
        width: 1..=8,
        most: 10,
    };
    common::arb_requests_within(ranges, Just(("o".to_string(), None)))
}

/// EASY over submission order.
fn config(machine: Machine, interval: Option<i64>, overrun: Overrun) -> SimConfig {
    easy_config(machine, OrderSpec::default(), interval, overrun)
}

fn overrun() -> impl Strategy<Value = Overrun> {
    prop_oneof![Just(Overrun::Kill), Just(Overrun::Continue)]
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(3000))]

    /// The indexed rule gives the reference's outcome on pools and whole-node machines, with
    /// and without periodic calls and overruns.
    #[test]
    fn indexed_easy_decides_as_the_reference(
        jobs in arb_jobs(300),
        machine in arb_pool_or_nodes(300, 40),
        interval in prop::option::of(1i64..50),
        overrun in overrun(),
        scan_limit in 0usize..4,
    ) {
        let w = Workload::new(jobs);
        let config = config(machine, interval, overrun);
        let reference = simulate_with(&w, &config, Box::new(ReferenceEasy::default())).unwrap();
        let indexed = simulate_with(&w, &config, Box::new(Easy::default().with_scan_limit(scan_limit))).unwrap();
        prop_assert_eq!(&indexed, &reference);
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(600))]

    /// With advance reservations the rule alternates between its profile formulation (while a
    /// reservation is pending) and the indexed walk: the index follows the queue through both.
    #[test]
    fn indexed_easy_follows_the_queue_through_reservations(
        jobs in arb_jobs(40),
        pool in 8u32..48,
        requests in arb_requests(),
        scan_limit in 0usize..4,
    ) {
        let w = Workload::new(jobs);
        let config = config(Machine::pool(pool), None, Overrun::Kill);
        let r = Reservations { requests, ..Reservations::default() };
        let reference = simulate_with_reserving(&w, &config, Box::new(ReferenceEasy::default()), &r).unwrap();
        let indexed = simulate_with_reserving(&w, &config, Box::new(Easy::default().with_scan_limit(scan_limit)), &r).unwrap();
        prop_assert_eq!(&indexed, &reference);
    }

    /// Queue limits hold jobs back and let them in out of submission order (the queue counts a
    /// reorder): the index rebuilds and still decides as the reference.
    #[test]
    fn indexed_easy_follows_the_queue_under_limits(
        jobs in arb_jobs(40),
        pool in 8u32..48,
        max_running in 1u32..4,
        scan_limit in 0usize..4,
    ) {
        let w = Workload::new(jobs);
        let config = config(Machine::pool(pool), None, Overrun::Kill);
        let limits = Limits {
            users: AccountTable {
                default: Caps { max_running: Some(max_running), ..Caps::default() },
                by_id: Default::default(),
            },
            ..Limits::single("batch")
        };
        let run = |easy| run_limited(&w, &config, &limits, easy);
        let reference = run(Box::<ReferenceEasy>::default());
        let indexed = run(Box::new(Easy::default().with_scan_limit(scan_limit)));
        prop_assert_eq!(&indexed, &reference);
    }

    /// Orders that reorder the queue (fairshare, shortest first) keep EASY's walk over the
    /// order's positions: the same outcome as the reference over the same order.
    #[test]
    fn reordering_queues_decide_as_the_reference(
        jobs in arb_jobs(60),
        pool in 4u32..80,
        kind in prop_oneof![Just(OrderKind::Fairshare), Just(OrderKind::Priority), Just(OrderKind::Sjf)],
        scan_limit in 0usize..4,
    ) {
        let w = Workload::new(jobs);
        let config = config(Machine::pool(pool), None, Overrun::Kill);
        let spec = OrderSpec::of(kind);
        let order = || spec.build(&w, &config.machine).unwrap();
        let reference = simulate_with(&w, &config, Box::new(ReferenceEasy::new(order()))).unwrap();
        let indexed = simulate_with(&w, &config, Box::new(Easy::new(order()).with_scan_limit(scan_limit))).unwrap();
        prop_assert_eq!(&indexed, &reference);
    }
}

/// The generator makes the index work: most cases backfill, through long queues.
#[test]
fn the_workloads_overload_the_machine_and_backfill() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (arb_jobs(300), arb_pool_or_nodes(300, 40));
    let (mut with_backfill, mut deep) = (0, 0);
    for _ in 0..200 {
        let (jobs, machine) = strategy.new_tree(&mut runner).unwrap().current();
        let w = Workload::new(jobs);
        let out = simulate_with(
            &w,
            &config(machine, None, Overrun::Kill),
            Box::new(Easy::default().with_scan_limit(0)),
        )
        .unwrap();
        with_backfill += usize::from(backfilled(&out) > 0);
        deep += usize::from(out.invocations.iter().any(|i| i.queue_len >= 50));
    }
    assert!(
        with_backfill >= 100,
        "{with_backfill} of 200 cases backfilled"
    );
    assert!(deep >= 50, "{deep} of 200 cases queued 50 jobs at once");
}

/// Long runs alternating quiet stretches (the queue empties, thousands of starts with no
/// backfilling pass: the index drops its record of starts and rebuilds) with bursts (queues of
/// thousands: classes grow, and compact as their jobs start), with the product's limit of 256
/// and with the index asked at every pass.
#[test]
fn quiet_and_overloaded_phases_decide_as_the_reference() {
    let mut x: u64 = 36;
    let mut next = move || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut jobs = Vec::new();
    let mut submit = 0i64;
    for phase in 0..6 {
        // Bursts: 3,000 jobs a second or two apart, up to the whole machine. Quiet stretches:
        // 5,000 one-processor jobs minutes apart, which never block once the backlog is gone.
        let burst = phase % 2 == 1;
        for _ in 0..if burst { 3_000 } else { 5_000 } {
            submit += if burst {
                (next() % 3) as i64
            } else {
                100 + (next() % 100) as i64
            };
            let procs = if !burst {
                1
            } else if next() % 3 == 0 {
                1 + (next() % 128) as u32
            } else {
                1u32 << (next() % 8)
            };
            let runtime = 1 + (next() % 600) as i64;
            let requested = runtime + (next() % 1200) as i64;
            let id = jobs.len() as u64 + 1;
            jobs.push(common::job(id, submit, procs, runtime, requested));
        }
    }
    let w = Workload::new(jobs);
    let config = config(Machine::pool(128), None, Overrun::Kill);
    let reference = simulate_with(&w, &config, Box::new(ReferenceEasy::default())).unwrap();
    let deepest = reference
        .invocations
        .iter()
        .map(|i| i.queue_len)
        .max()
        .unwrap();
    assert!(deepest > 1_000, "the bursts queue {deepest} jobs at most");
    assert!(backfilled(&reference) > 1_000);
    for limit in [0, 256] {
        let indexed = simulate_with(
            &w,
            &config,
            Box::new(Easy::default().with_scan_limit(limit)),
        )
        .unwrap();
        assert!(
            indexed == reference,
            "scan limit {limit}: the schedules differ"
        );
    }
}
