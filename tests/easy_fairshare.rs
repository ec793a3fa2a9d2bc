//! Pool-level EASY reading the fairshare order job by job (`QueueOrder::next_waiting`, the
//! waiting jobs kept by user between calls, a job's queue position found only when it starts)
//! decides exactly as EASY walking the whole order written at every call:
//! `common::easy_reference::ReferenceEasy` is that rule, and every random workload below —
//! overloaded, few users so that equal fairshare keys are common, random charging, decay,
//! shares and re-ordering periods (one start per pass included) — must give the same outcome
//! (every job's start, end and units, every call) with both; also under queue limits, which
//! insert held jobs out of submission order and withdraw jobs a CPU quota refuses.

mod common;

use common::easy_reference::ReferenceEasy;
use common::easy_runs::{arb_pool_or_nodes, backfilled, easy_config, run_limited};
use proptest::prelude::*;
use schedlab::sim::limits::{AccountTable, Caps, Limits};
use schedlab::sim::scheduler::Easy;
use schedlab::sim::scheduler::order::{OrderKind, OrderSpec};
use schedlab::sim::{Job, Machine, Overrun, Workload, simulate_with};

/// Overloaded workloads of up to 300 jobs from `users` users: widths mixing powers of two with
/// any width up to past the machine, requested times from exact to far too long, some jobs
/// running past their request.
fn arb_jobs(max_procs: u32, users: i32) -> impl Strategy<Value = Vec<Job>> {
    let ranges = common::arb_workload::JobRanges {
        submit: 0..600,
        log_width: 0..7,
        runtime: 1..300,
        extra: 0..100,
        jobs: 1..300,
    };
    common::arb_workload::arb_overloaded_jobs(ranges, max_procs, Some(0..users))
}

/// Fairshare order over users 0–3's shares (`common::arb_workload::arb_fairshare`).
fn arb_order() -> impl Strategy<Value = OrderSpec> {
    common::arb_workload::arb_fairshare(0, 0.0).prop_map(|(fairshare, reorder)| OrderSpec {
        fairshare,
        reorder,
        ..OrderSpec::of(OrderKind::Fairshare)
    })
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(1500))]

    /// The lazy rule gives the reference's outcome on pools and whole-node machines, with and
    /// without periodic calls and overruns.
    #[test]
    fn lazy_fairshare_easy_decides_as_the_reference(
        jobs in arb_jobs(130, 5),
        machine in arb_pool_or_nodes(130, 30),
        order in arb_order(),
        interval in prop::option::of(1i64..50),
        continue_overruns in prop::bool::ANY,
    ) {
        let w = Workload::new(jobs);
        let overrun = if continue_overruns { Overrun::Continue } else { Overrun::Kill };
        let config = easy_config(machine, order, interval, overrun);
        let build = || config.order.build(&w, &config.machine).unwrap();
        let reference = simulate_with(&w, &config, Box::new(ReferenceEasy::new(build()))).unwrap();
        let lazy = simulate_with(&w, &config, Box::new(Easy::new(build()))).unwrap();
        prop_assert_eq!(&lazy, &reference);
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(500))]

    /// Queue limits hold jobs back and let them in out of submission order, and a CPU quota
    /// withdraws decided jobs the engine does not start (the queue counts both as reorders):
    /// the kept users' queues rebuild and the rule still decides as the reference.
    #[test]
    fn lazy_fairshare_easy_follows_the_queue_under_limits(
        jobs in arb_jobs(40, 4),
        pool in 8u32..48,
        order in arb_order(),
        max_running in prop::option::of(1u32..4),
        cpu_quota in prop::option::of(8u64..40),
    ) {
        let w = Workload::new(jobs);
        let config = easy_config(Machine::pool(pool), order, None, Overrun::Kill);
        let limits = Limits {
            users: AccountTable {
                default: Caps { max_running, cpu_quota, ..Caps::default() },
                by_id: Default::default(),
            },
            ..Limits::single("batch")
        };
        let run = |easy| run_limited(&w, &config, &limits, easy);
        let build = || config.order.build(&w, &config.machine).unwrap();
        let reference = run(Box::new(ReferenceEasy::new(build())));
        let lazy = run(Box::new(Easy::new(build())));
        prop_assert_eq!(&lazy, &reference);
    }
}

/// The generator makes the lazy pass work: most cases backfill past users of other keys, with
/// queues long enough to hold several users at once.
#[test]
fn the_workloads_backfill_over_several_waiting_users() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (arb_jobs(130, 5), arb_pool_or_nodes(130, 30), arb_order());
    let (mut with_backfill, mut deep) = (0, 0);
    for _ in 0..200 {
        let (jobs, machine, order) = strategy.new_tree(&mut runner).unwrap().current();
        let w = Workload::new(jobs);
        let config = easy_config(machine, order, None, Overrun::Kill);
        let easy = Easy::new(config.order.build(&w, &config.machine).unwrap());
        let out = simulate_with(&w, &config, Box::new(easy)).unwrap();
        with_backfill += usize::from(backfilled(&out) > 0);
        deep += usize::from(out.invocations.iter().any(|i| i.queue_len >= 30));
    }
    assert!(
        with_backfill >= 100,
        "{with_backfill} of 200 cases backfilled"
    );
    assert!(deep >= 50, "{deep} of 200 cases queued 30 jobs at once");
}
