//! Pool conservative over a reordering queue (issue 36) keeps its plan between calls: while the
//! order is the plan's it compresses only when a compression can change something, and when the
//! order changes after an unchanged prefix of a fresh plan it keeps that prefix (cut, after an
//! early completion, at the first job the rise may let start earlier) and plans only the rest
//! afresh; the jobs none of which can start at a call are placed only if the next call's order
//! keeps them (their reservations, logged after every call, are read as they will be placed).
//! `Conservative::reference_over` is the straightforward formulation (the
//! whole queue compressed in order at every call, planned afresh when the order changes:
//! docs/semantics.md, "Conservative over a priority order"). Both must decide alike — the same
//! reservations after every call and the same schedule — on random workloads of several users
//! in fairshare, priority and shortest-first order, re-sorted at every call, periodically or
//! after every start, with and without a scheduling interval, early completions, overruns and
//! advance reservations; and the shortcuts must be taken.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use schedlab::sim::reservation::{OnConflict, Placement, ReservationRequest, Reservations};
use schedlab::sim::scheduler::order::{OrderKind, OrderSpec, Reorder};
use schedlab::sim::scheduler::{Conservative, OrderedCalls, Scheduler, View};
use schedlab::sim::{
    Job, Machine, Overrun, SchedulerKind, SimConfig, SimOutcome, Time, Workload,
    simulate_with_reserving,
};

/// After each call: the time, the jobs started in the order given, and every queued job's
/// reservation.
type Plan = Vec<(Time, Vec<u32>, Vec<(u32, Option<Time>)>)>;

/// Shares the scheduler with the test, to read its counters after the run, and logs its plan.
struct Logged {
    inner: Rc<RefCell<Conservative>>,
    log: Rc<RefCell<Plan>>,
}

impl Scheduler for Logged {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let mut inner = self.inner.borrow_mut();
        inner.schedule(view, starts);
        // In the order given: queue limits and `reorder: start` apply a prefix of them.
        let started: Vec<u32> = starts.iter().map(|&p| view.queue[p].job).collect();
        let plan = view
            .queue
            .iter()
            .filter(|q| !started.contains(&q.job))
            .map(|q| (q.job, inner.reservation(q.job)))
            .collect();
        self.log.borrow_mut().push((view.now, started, plan));
    }

    fn started(&mut self, now: Time, job: u32) {
        self.inner.borrow_mut().started(now, job);
    }
}

fn run(
    w: &Workload,
    config: &SimConfig,
    reservations: &Reservations,
    inner: Conservative,
) -> (SimOutcome, Plan, OrderedCalls) {
    let inner = Rc::new(RefCell::new(inner));
    let log = Rc::new(RefCell::new(Vec::new()));
    let scheduler = Logged {
        inner: inner.clone(),
        log: log.clone(),
    };
    let out = simulate_with_reserving(w, config, Box::new(scheduler), reservations).unwrap();
    let plan = log.borrow().clone();
    let calls = inner.borrow().ordered_calls();
    (out, plan, calls)
}

/// Bursts of jobs of seven users (`common::job`), estimates mostly exact (calls with only
/// arrivals and starts, where the plan stays fresh and a new order can keep a prefix), padded
/// (early completions: compressions, planning afresh) or short (overruns with `overrun:
/// continue`); every time multiplied by `scale`.
fn arb_jobs(scale: i64) -> impl Strategy<Value = Vec<Job>> {
    prop::collection::vec(
        (
            0i64..15,
            1u32..=16,
            1i64..80,
            prop_oneof![4 => Just(0i64), 1 => Just(1), 1 => Just(2), 1 => Just(3)],
            0i64..40,
        ),
        1..70,
    )
    .prop_map(move |raw| {
        let mut submit = 0;
        raw.into_iter()
            .enumerate()
            .map(|(i, (gap, procs, runtime, kind, extra))| {
                submit += gap;
                let requested = match kind {
                    0 => runtime,                  // exact
                    1 => runtime + extra,          // padded
                    2 => (runtime * 3).max(1),     // much too long
                    _ => (runtime - extra).max(1), // too short: overruns
                };
                common::job(
                    i as u64 + 1,
                    submit * scale,
                    procs,
                    runtime * scale,
                    requested * scale,
                )
            })
            .collect()
    })
}

fn arb_requests() -> impl Strategy<Value = Vec<ReservationRequest>> {
    common::arb_reservation_requests(6)
}

/// Runs `cases` random cases (a fixed seed: the same cases on every run, so the counts the
/// tests assert are too) with every time multiplied by `scale`, each compared with the
/// reference after every call; returns the ways of planning taken, summed.
fn decides_as_the_reference(cases: u32, scale: i64) -> OrderedCalls {
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let total = Rc::new(RefCell::new(OrderedCalls::default()));
    let strategy = (
        (
            arb_jobs(scale),
            prop_oneof![
                (8u32..24).prop_map(Machine::pool),
                ((2u32..8), (1u32..4)).prop_map(|(n, k)| Machine::exclusive_nodes(n, k)),
            ],
            prop::sample::select(vec![
                OrderKind::Fairshare,
                OrderKind::Priority,
                OrderKind::Sjf,
            ]),
            prop::sample::select(vec![
                Reorder::Call,
                Reorder::Call,
                Reorder::Every(40 * scale),
                Reorder::Start,
            ]),
        ),
        (
            prop::option::of((1i64..30).prop_map(move |i| i * scale)),
            prop::sample::select(vec![Overrun::Kill, Overrun::Continue]),
            prop::option::weighted(0.3, arb_requests()),
            prop::sample::select(vec![OnConflict::Reject, OnConflict::Shift]),
        ),
    );
    runner
        .run(
            &strategy,
            |((jobs, machine, kind, reorder), (interval, overrun, requests, on_conflict))| {
                let w = Workload::new(jobs);
                // Advance reservations need overrunning jobs killed.
                let overrun = if requests.is_some() {
                    Overrun::Kill
                } else {
                    overrun
                };
                let config = SimConfig {
                    interval,
                    overrun,
                    order: OrderSpec {
                        reorder,
                        ..OrderSpec::of(kind)
                    },
                    ..SimConfig::new(machine.clone(), SchedulerKind::Conservative)
                };
                let reservations = Reservations {
                    requests: requests.unwrap_or_default(),
                    placement: Placement::AfterQueue,
                    on_conflict,
                    ..Reservations::default()
                };
                let build = || config.order.build(&w, &machine).unwrap();
                let (out, plan, calls) =
                    run(&w, &config, &reservations, Conservative::new(build()));
                let (expected, expected_plan, none) = run(
                    &w,
                    &config,
                    &reservations,
                    Conservative::reference_over(build()),
                );
                prop_assert_eq!(none, OrderedCalls::default());
                prop_assert_eq!(plan, expected_plan);
                prop_assert_eq!(out, expected);
                let mut t = total.borrow_mut();
                t.unchanged += calls.unchanged;
                t.kept_prefix += calls.kept_prefix;
                t.kept_jobs += calls.kept_jobs;
                t.kept_after_rise += calls.kept_after_rise;
                t.prefix_rebuilds += calls.prefix_rebuilds;
                t.rise_checks += calls.rise_checks;
                t.afresh += calls.afresh;
                t.deferred_dropped += calls.deferred_dropped;
                t.deferred_placed += calls.deferred_placed;
                t.deferred_by_length += calls.deferred_by_length;
                Ok(())
            },
        )
        .unwrap();
    let t = *total.borrow();
    eprintln!("{t:?}");
    t
}

/// `SCHEDLAB_ORDER_CASES` cases instead of `default`, for a longer run (the counts asserted
/// hold for the defaults).
fn cases(default: u32) -> u32 {
    std::env::var("SCHEDLAB_ORDER_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}

#[test]
fn the_incremental_plan_over_a_reordering_queue_decides_as_the_reference() {
    let t = decides_as_the_reference(cases(600), 1);
    // The cases go through every path, many times: a test that never took a shortcut would
    // compare the reference with itself.
    assert!(
        t.unchanged > 5_000
            && t.kept_prefix > 300
            && t.kept_jobs > t.kept_prefix
            && t.kept_after_rise > 60
            && t.prefix_rebuilds > 1_200
            && t.rise_checks > 1_000
            && t.deferred_dropped > 1_000
            && t.deferred_placed > 1_000,
        "{t:?}"
    );
}

/// The same in minutes: requested times from one minute to four hours, over which the classes
/// of requested time tell that no job can start at a call while some units are free at `now`
/// (`least_demands.rs`).
#[test]
fn jobs_deferred_by_their_length_are_placed_as_the_reference_places_them() {
    let t = decides_as_the_reference(cases(300), 60);
    assert!(
        t.deferred_by_length > 1_000 && t.deferred_dropped > 1_000 && t.deferred_placed > 1_000,
        "{t:?}"
    );
}
