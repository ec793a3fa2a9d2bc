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
use proptest::prelude::*;
use schedlab::sim::engine::AnyPolicy;
use schedlab::sim::fairshare::{Charging, Decay, FairshareSpec, SharesSpec};
use schedlab::sim::limits::{AccountTable, Caps, Limits};
use schedlab::sim::reservation::Reservations;
use schedlab::sim::scheduler::Easy;
use schedlab::sim::scheduler::order::{OrderKind, OrderSpec, Reorder};
use schedlab::sim::{
    Job, Machine, Overrun, SchedulerKind, SimConfig, SimOutcome, Workload,
    simulate_limited_policy_into, simulate_with,
};

/// Overloaded workloads of up to 300 jobs from `users` users: widths mixing powers of two with
/// any width up to past the machine, requested times from exact to far too long, some jobs
/// running past their request.
fn arb_jobs(max_procs: u32, users: i32) -> impl Strategy<Value = Vec<Job>> {
    prop::collection::vec(
        (
            0i64..600,
            prop_oneof![
                (0u32..7).prop_map(|b| 1u32 << b),
                1u32..=max_procs + 2,
                Just(1u32),
            ],
            1i64..300,
            0i64..4,
            0i64..100,
            0..users,
        ),
        1..300,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (submit, procs, runtime, mult, extra, user))| {
                let requested = (runtime * mult + extra).max(1);
                Job {
                    user,
                    ..common::job(i as u64 + 1, submit, procs, runtime, requested)
                }
            })
            .collect()
    })
}

/// Fairshare settings: charging at the start or as jobs run, decay, shares, and the re-ordering
/// period (every call, one start per pass, every 50 s).
fn arb_order() -> impl Strategy<Value = OrderSpec> {
    (
        prop::bool::ANY,
        0..3u8,
        prop::option::of(prop::collection::vec(1..4u8, 4)),
        0..3u8,
    )
        .prop_map(|(continuous, decay, shares, reorder)| OrderSpec {
            fairshare: FairshareSpec {
                charging: if continuous {
                    Charging::Continuous
                } else {
                    Charging::Estimate
                },
                decay: match decay {
                    0 => Decay::None,
                    1 => Decay::HalfLife { half_life: 100 },
                    _ => Decay::Factor {
                        factor: 0.5,
                        every: 60,
                    },
                },
                shares: SharesSpec {
                    users: shares
                        .map(|s| (0..4).zip(s.into_iter().map(f64::from)).collect())
                        .unwrap_or_default(),
                    ..SharesSpec::default()
                },
                ..FairshareSpec::default()
            },
            reorder: match reorder {
                0 => Reorder::Call,
                1 => Reorder::Start,
                _ => Reorder::Every(50),
            },
            ..OrderSpec::of(OrderKind::Fairshare)
        })
}

fn arb_machine() -> impl Strategy<Value = Machine> {
    prop_oneof![
        (1u32..130).prop_map(Machine::pool),
        ((2u32..30), (1u32..9)).prop_map(|(n, k)| Machine::exclusive_nodes(n, k)),
    ]
}

fn config(
    machine: Machine,
    order: OrderSpec,
    interval: Option<i64>,
    overrun: Overrun,
) -> SimConfig {
    SimConfig {
        order,
        machine,
        scheduler: SchedulerKind::Easy,
        interval,
        overrun,
        placement: Default::default(),
    }
}

/// Jobs that backfilled: the cases must exercise backfilling, not only the head.
fn backfilled(out: &SimOutcome) -> usize {
    out.jobs.iter().filter(|o| o.backfilled).count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// The lazy rule gives the reference's outcome on pools and whole-node machines, with and
    /// without periodic calls and overruns.
    #[test]
    fn lazy_fairshare_easy_decides_as_the_reference(
        jobs in arb_jobs(130, 5),
        machine in arb_machine(),
        order in arb_order(),
        interval in prop::option::of(1i64..50),
        continue_overruns in prop::bool::ANY,
    ) {
        let w = Workload::new(jobs);
        let overrun = if continue_overruns { Overrun::Continue } else { Overrun::Kill };
        let config = config(machine, order, interval, overrun);
        let build = || config.order.build(&w, &config.machine).unwrap();
        let reference = simulate_with(&w, &config, Box::new(ReferenceEasy::new(build()))).unwrap();
        let lazy = simulate_with(&w, &config, Box::new(Easy::new(build()))).unwrap();
        prop_assert_eq!(&lazy, &reference);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

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
        let config = config(Machine::pool(pool), order, None, Overrun::Kill);
        let limits = Limits {
            users: AccountTable {
                default: Caps { max_running, cpu_quota, ..Caps::default() },
                by_id: Default::default(),
            },
            ..Limits::single("batch")
        };
        let run = |easy: Box<dyn schedlab::sim::Scheduler>| {
            let mut kept = SimOutcome::default();
            let rest = simulate_limited_policy_into(&w, &config, &Reservations::default(), &limits, &mut kept, |_| {
                Ok(AnyPolicy::Units(easy))
            })
            .unwrap();
            (kept, rest)
        };
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
    let strategy = (arb_jobs(130, 5), arb_machine(), arb_order());
    let (mut with_backfill, mut deep) = (0, 0);
    for _ in 0..200 {
        let (jobs, machine, order) = strategy.new_tree(&mut runner).unwrap().current();
        let w = Workload::new(jobs);
        let config = config(machine, order, None, Overrun::Kill);
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
