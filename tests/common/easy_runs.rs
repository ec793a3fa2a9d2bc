//! EASY configurations and runs shared by the tests that check a fast EASY path against
//! [`super::easy_reference::ReferenceEasy`] (`easy_index`, `easy_fairshare`).

use proptest::prelude::*;
use schedlab::sim::engine::AnyPolicy;
use schedlab::sim::limits::Limits;
use schedlab::sim::reservation::Reservations;
use schedlab::sim::scheduler::order::OrderSpec;
use schedlab::sim::{
    Machine, Overrun, Scheduler, SchedulerKind, SimConfig, SimOutcome, Workload,
    simulate_limited_policy_into,
};

/// EASY on `machine` over `order`, called at every event or every `interval` seconds.
pub fn easy_config(
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

/// A pool of 1 to `pool` − 1 processors, or 2 to `nodes` − 1 exclusive nodes of 1–8
/// processors.
pub fn arb_pool_or_nodes(pool: u32, nodes: u32) -> impl Strategy<Value = Machine> {
    prop_oneof![
        (1u32..pool).prop_map(Machine::pool),
        ((2u32..nodes), (1u32..9)).prop_map(|(n, k)| Machine::exclusive_nodes(n, k)),
    ]
}

/// Jobs that backfilled, as a count: the cases must exercise backfilling, not only the head.
pub fn backfilled(out: &SimOutcome) -> usize {
    out.jobs.iter().filter(|o| o.backfilled).count()
}

/// `easy` under queue `limits`: the jobs kept and what the run returns.
pub fn run_limited(
    w: &Workload,
    config: &SimConfig,
    limits: &Limits,
    easy: Box<dyn Scheduler>,
) -> (SimOutcome, SimOutcome) {
    let mut kept = SimOutcome::default();
    let rest = simulate_limited_policy_into(
        w,
        config,
        &Reservations::default(),
        limits,
        &mut kept,
        |_| Ok(AnyPolicy::Units(easy)),
    )
    .unwrap();
    (kept, rest)
}
