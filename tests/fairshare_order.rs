//! Queue orders × backfilling rules (issue 12): hand-built schedules where the fairshare order
//! visibly changes who starts first; with equal usage every order is FCFS; every order × rule
//! runs on a pool, exclusive nodes and a heterogeneous topology, with advance reservations,
//! deterministically; a user's factor never rises while they alone consume without decay.

mod common;

use proptest::prelude::*;
use schedlab::sim::fairshare::{
    Accounts, Charging, Decay, Ledger, PenaltyModel, PenaltySpec, ShareTree, SharesSpec,
};
use schedlab::sim::reservation::{ReservationRequest, Reservations};
use schedlab::sim::scheduler::order::{OrderKind, OrderSpec, Reorder};
use schedlab::sim::topology::{
    Cluster, ConstraintTable, JobRequest, NodeClass, NodeDemand, Topology,
};
use schedlab::sim::{
    Allocation, Job, Machine, SchedulerKind, SimConfig, SimOutcome, Time, Workload, simulate,
    simulate_reserving,
};

const GIB: u64 = 1 << 20;

fn job(user: i32, submit: Time, procs: u32, runtime: Time) -> Job {
    Job {
        id: 0,
        user,
        submit,
        procs,
        runtime,
        requested_time: runtime,
        ..Job::default()
    }
}

fn numbered(mut jobs: Vec<Job>) -> Workload {
    for (i, j) in jobs.iter_mut().enumerate() {
        j.id = i as u64 + 1;
    }
    Workload::new(jobs)
}

fn config(machine: Machine, rule: SchedulerKind, order: OrderSpec) -> SimConfig {
    let mut c = SimConfig::new(machine, rule);
    c.order = order;
    c
}

fn starts(out: &SimOutcome) -> Vec<Time> {
    out.jobs.iter().map(|o| o.start).collect()
}

#[test]
fn fairshare_lets_the_user_who_used_less_go_first() {
    // A 4-processor pool, no backfilling. User 1's a1 runs over [0, 100); at 1 user 1 submits
    // a2 and at 2 user 2 submits b1, each needing the whole machine. At 100, FCFS starts a2;
    // fairshare sees user 1 with 400 processor-seconds and user 2 with none, and starts b1.
    let w = numbered(vec![
        job(1, 0, 4, 100),
        job(1, 1, 4, 100),
        job(2, 2, 4, 100),
    ]);
    for rule in SchedulerKind::ALL {
        let fcfs = simulate(&w, &config(Machine::pool(4), rule, OrderSpec::default())).unwrap();
        assert_eq!(starts(&fcfs), [0, 100, 200], "{rule}");
        let fair = simulate(
            &w,
            &config(Machine::pool(4), rule, OrderSpec::of(OrderKind::Fairshare)),
        )
        .unwrap();
        assert_eq!(starts(&fair), [0, 200, 100], "{rule}");
        // b1 started while the earlier a2 waited: backfilled by the definition.
        assert!(
            fair.jobs[2].backfilled && !fair.jobs[1].backfilled,
            "{rule}"
        );
    }
}

#[test]
fn reorder_start_resorts_after_every_single_start() {
    // Two processors, four one-processor jobs of 100 s submitted at 0: a1, a2 of user 1, then
    // b1, b2 of user 2. Estimate charging (§3.4) charges a start's requested time at once.
    // - Every call (the default): both users have no usage, so the order is submission order
    //   and one call starts a1 and a2; b1 and b2 start at 100.
    // - `reorder: start`: a1 starts alone; user 1 now has 100 processor-seconds, so the
    //   re-sort puts user 2 first and b1 starts at 0. At 100 both users have 100: the tie is
    //   submission order, a2 starts, user 1 has 200, and b2 starts after it, at 100 too.
    let w = numbered(vec![
        job(1, 0, 1, 100),
        job(1, 0, 1, 100),
        job(2, 0, 1, 100),
        job(2, 0, 1, 100),
    ]);
    let machines = [
        Machine::pool(2),
        Machine::exclusive_nodes(2, 1),
        Machine::topology(Topology::new(vec![Cluster::new(
            "c",
            Allocation::ExclusiveNodes,
            vec![NodeClass::new("n", 2, 1, GIB)],
        )])),
    ];
    for machine in machines {
        for rule in SchedulerKind::ALL {
            let mut order = OrderSpec::of(OrderKind::Fairshare);
            order.fairshare.charging = Charging::Estimate;
            let every_call = simulate(&w, &config(machine.clone(), rule, order.clone())).unwrap();
            assert_eq!(starts(&every_call), [0, 0, 100, 100], "{rule}");
            order.reorder = Reorder::Start;
            let per_start = simulate(&w, &config(machine.clone(), rule, order)).unwrap();
            assert_eq!(
                starts(&per_start),
                [0, 100, 0, 100],
                "{rule} on {machine:?}"
            );
        }
    }
}

#[test]
fn multi_resource_penalty_changes_the_order_on_a_topology() {
    // Examples 3–5's system. User 1 ran (1 CPU, 512 GB) on the big node, user 2 ran
    // (8 CPU, 8 GB) on a small node, both for 100 s. By CPUs user 1 used 100 and user 2 800, so
    // `cpu` fairshare favours user 1; by pe_min user 1 used 80 × 100 (the whole big node) and
    // user 2 8 × 100, so `pe_min` favours user 2. Then both submit a job that needs the big
    // node, and only one of them can have it first.
    let node = |cores, gib| {
        JobRequest::nodes(
            1,
            NodeDemand {
                cores,
                memory_kb: gib * GIB,
                gpus: 0,
            },
        )
    };
    let numbered_with = |jobs: Vec<(Job, JobRequest)>| {
        let jobs = jobs.into_iter().enumerate().map(|(i, (j, r))| {
            let id = i as u64 + 1;
            (Job { id, ..j }, r)
        });
        Workload::of_requests(jobs, ConstraintTable::default())
    };
    let w = numbered_with(vec![
        (job(1, 0, 1, 100), node(1, 512)),
        (job(2, 0, 8, 100), node(8, 8)),
        // A third job holds the big node until 150 so both requests wait.
        (job(3, 100, 80, 50), node(80, 1)),
        (job(1, 110, 80, 100), node(80, 100)),
        (job(2, 120, 80, 100), node(80, 100)),
    ]);
    let machine = Machine::topology(Topology::example_3());
    let run = |model| {
        let mut order = OrderSpec::of(OrderKind::Fairshare);
        order.fairshare.penalty = PenaltySpec::of(model);
        simulate(&w, &config(machine.clone(), SchedulerKind::Fcfs, order)).unwrap()
    };
    let cpu = run(PenaltyModel::Cpu);
    assert_eq!(starts(&cpu)[3..], [150, 250], "cpu: user 1 first");
    let pe = run(PenaltyModel::PeMin);
    assert_eq!(starts(&pe)[3..], [250, 150], "pe_min: user 2 first");
}

#[test]
fn shares_decide_between_equal_usage() {
    // Users 1 and 2 each ran one 4-processor job for 100 s; user 2 holds 3 shares to user 1's 1,
    // so at equal usage user 2 is further below its share and goes first.
    let w = numbered(vec![
        job(1, 0, 4, 100),
        job(2, 100, 4, 100),
        job(1, 150, 4, 100),
        job(2, 160, 4, 100),
    ]);
    let mut order = OrderSpec::of(OrderKind::Fairshare);
    order.fairshare.shares = SharesSpec {
        users: [(2, 3.0)].into_iter().collect(),
        ..SharesSpec::default()
    };
    let out = simulate(&w, &config(Machine::pool(4), SchedulerKind::Easy, order)).unwrap();
    assert_eq!(starts(&out), [0, 100, 300, 200]);
}

#[test]
fn decay_lets_old_usage_fade() {
    // User 1 used the machine long ago; user 2 a little more recently. Without decay user 1 has
    // used more and waits; with × 0.1 every 1000 s, user 1's old usage is mostly gone.
    let w = numbered(vec![
        job(1, 0, 4, 1000),   // 4000 at [0, 1000)
        job(2, 1000, 4, 500), // 2000 at [1000, 1500)
        job(3, 1500, 4, 600), // holds the machine until 2100
        job(1, 1600, 4, 10),
        job(2, 1700, 4, 10),
    ]);
    let run = |decay| {
        let mut order = OrderSpec::of(OrderKind::Fairshare);
        order.fairshare.decay = decay;
        simulate(&w, &config(Machine::pool(4), SchedulerKind::Fcfs, order)).unwrap()
    };
    assert_eq!(starts(&run(Decay::None))[3..], [2110, 2100]);
    // At 2100: user 1's 4000 decayed twice (× 0.01 → 40), user 2's 2000 once (→ 200).
    let decayed = run(Decay::Factor {
        factor: 0.1,
        every: 1000,
    });
    assert_eq!(starts(&decayed)[3..], [2100, 2110]);
}

#[test]
fn conservative_replans_in_the_new_order() {
    // A 4-processor pool. User 1's big job holds the machine until 100; user 1's x (4 procs)
    // and then user 2's y (4 procs) arrive at 10 and 20. Under FCFS x holds [100, 200) and y
    // [200, 300). Under fairshare, user 1 has usage and user 2 none, so y is planned first: the
    // plan is rebuilt and x's reservation moves to after y.
    let w = numbered(vec![
        job(1, 0, 4, 100),
        job(1, 10, 4, 100),
        job(2, 20, 4, 100),
    ]);
    let fcfs = simulate(
        &w,
        &config(
            Machine::pool(4),
            SchedulerKind::Conservative,
            OrderSpec::default(),
        ),
    )
    .unwrap();
    assert_eq!(starts(&fcfs), [0, 100, 200]);
    let fair = simulate(
        &w,
        &config(
            Machine::pool(4),
            SchedulerKind::Conservative,
            OrderSpec::of(OrderKind::Fairshare),
        ),
    )
    .unwrap();
    assert_eq!(starts(&fair), [0, 200, 100]);
}

#[test]
fn aggressive_starts_everything_that_fits_in_order() {
    // 4 processors; a (3 procs) runs to 100. b (4 procs) waits; c (1 proc, 1000 s) fits now.
    // EASY would not start c (it would delay b, whose shadow time is 100); aggressive does.
    let w = numbered(vec![
        job(1, 0, 3, 100),
        job(1, 1, 4, 100),
        job(1, 2, 1, 1000),
    ]);
    let easy = simulate(
        &w,
        &config(Machine::pool(4), SchedulerKind::Easy, OrderSpec::default()),
    )
    .unwrap();
    assert_eq!(starts(&easy), [0, 100, 200]);
    let aggressive = simulate(
        &w,
        &config(
            Machine::pool(4),
            SchedulerKind::Aggressive,
            OrderSpec::default(),
        ),
    )
    .unwrap();
    assert_eq!(starts(&aggressive), [0, 1002, 2]);
}

#[test]
fn sjf_and_priority_orders() {
    // 2 processors held until 100 by job 0; then a long and a short job wait.
    let w = numbered(vec![job(1, 0, 2, 100), job(1, 1, 2, 500), job(2, 2, 2, 10)]);
    let out = simulate(
        &w,
        &config(
            Machine::pool(2),
            SchedulerKind::Fcfs,
            OrderSpec::of(OrderKind::Sjf),
        ),
    )
    .unwrap();
    assert_eq!(starts(&out), [0, 110, 100]);
    // Priority with only a size weight favouring small jobs: a 1-processor job goes before a
    // 2-processor one submitted earlier.
    let w = numbered(vec![
        job(1, 0, 2, 100),
        job(1, 1, 2, 100),
        job(2, 2, 1, 100),
    ]);
    let mut order = OrderSpec::of(OrderKind::Priority);
    order.priority.age = 0.0;
    order.priority.fairshare = 0.0;
    order.priority.size = 1.0;
    order.priority.favor_small = true;
    let out = simulate(&w, &config(Machine::pool(2), SchedulerKind::Fcfs, order)).unwrap();
    assert_eq!(starts(&out), [0, 200, 100]);
}

#[test]
fn periodic_reordering_uses_the_priorities_of_the_period() {
    // As in the first test, but priorities are recomputed every 1000 s: at 100 the factors of
    // period 0 (computed at 0, before anything ran) still stand, so a2 goes first as in FCFS.
    let w = numbered(vec![
        job(1, 0, 4, 100),
        job(1, 1, 4, 100),
        job(2, 2, 4, 100),
    ]);
    let mut order = OrderSpec::of(OrderKind::Fairshare);
    order.reorder = Reorder::Every(1000);
    let out = simulate(&w, &config(Machine::pool(4), SchedulerKind::Fcfs, order)).unwrap();
    assert_eq!(starts(&out), [0, 100, 200]);
}

// ---- properties ----

fn arb_jobs(users: i32) -> impl Strategy<Value = Vec<Job>> {
    prop::collection::vec((0i64..400, 1u32..9, 1i64..60, 1i64..3, 0i32..users), 1..30).prop_map(
        |raw| {
            raw.into_iter()
                .map(|(submit, procs, runtime, over, user)| Job {
                    submit,
                    procs,
                    runtime,
                    requested_time: runtime * over,
                    user,
                    ..Job::default()
                })
                .collect()
        },
    )
}

fn heterogeneous() -> Machine {
    Machine::topology(Topology::new(vec![
        Cluster::new(
            "shared",
            Allocation::Shared,
            vec![
                NodeClass::new("small", 2, 4, 16 * GIB),
                NodeClass::new("big", 1, 8, 64 * GIB),
            ],
        ),
        Cluster::new(
            "whole",
            Allocation::ExclusiveNodes,
            vec![NodeClass::new("n", 2, 4, 16 * GIB)],
        ),
    ]))
}

fn machines() -> Vec<Machine> {
    vec![
        Machine::pool(8),
        Machine::exclusive_nodes(4, 2),
        heterogeneous(),
    ]
}

fn arb_requests() -> impl Strategy<Value = Vec<ReservationRequest>> {
    let ranges = common::RequestRanges {
        created: 0..300,
        notice: 0..60,
        duration: 1..80,
        width: 1..=2,
        most: 3,
    };
    common::arb_requests_within(ranges, Just(("r".to_string(), None)))
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(48))]

    #[test]
    fn with_one_user_fairshare_is_fcfs(jobs in arb_jobs(1), requests in arb_requests()) {
        let w = numbered(jobs);
        let r = Reservations { requests, ..Reservations::default() };
        for machine in machines() {
            for rule in SchedulerKind::ALL {
                let fcfs = simulate_reserving(&w, &config(machine.clone(), rule, OrderSpec::default()), &r).unwrap();
                let fair = simulate_reserving(&w, &config(machine.clone(), rule, OrderSpec::of(OrderKind::Fairshare)), &r).unwrap();
                prop_assert_eq!(&fcfs, &fair, "{}", rule);
                // One start per pass changes nothing when the order cannot change, except under
                // conservative, which compresses its plan at every pass (docs/fairshare.md).
                if rule == SchedulerKind::Conservative {
                    continue;
                }
                let mut per_start = OrderSpec::of(OrderKind::Fairshare);
                per_start.reorder = Reorder::Start;
                let one_by_one = simulate_reserving(&w, &config(machine.clone(), rule, per_start), &r).unwrap();
                prop_assert_eq!(&fcfs.jobs, &one_by_one.jobs, "reorder: start, {}", rule);
            }
        }
    }

    #[test]
    fn with_usage_forgotten_every_second_fairshare_is_fcfs(jobs in arb_jobs(4)) {
        // Continuous charging decayed to nothing at every second: at every (integer) call all
        // users have usage 0, so equal shares and usage → submission order.
        let w = numbered(jobs);
        let mut order = OrderSpec::of(OrderKind::Fairshare);
        order.fairshare.charging = Charging::Continuous;
        order.fairshare.decay = Decay::Factor { factor: 0.0, every: 1 };
        for machine in machines() {
            for rule in SchedulerKind::ALL {
                let fcfs = simulate(&w, &config(machine.clone(), rule, OrderSpec::default())).unwrap();
                let fair = simulate(&w, &config(machine.clone(), rule, order.clone())).unwrap();
                prop_assert_eq!(&fcfs, &fair, "{}", rule);
            }
        }
    }

    #[test]
    fn every_order_and_rule_runs_everywhere_with_reservations(
        jobs in arb_jobs(4),
        requests in arb_requests(),
        periodic in any::<bool>(),
        interval in prop::option::of(1i64..30),
    ) {
        let w = numbered(jobs);
        let r = Reservations { requests, ..Reservations::default() };
        for machine in machines() {
            for kind in OrderKind::ALL {
                for rule in SchedulerKind::ALL {
                    let mut order = OrderSpec::of(kind);
                    order.fairshare.penalty = PenaltySpec::of(PenaltyModel::PeMin);
                    if periodic {
                        order.reorder = Reorder::Every(25);
                    }
                    let mut c = config(machine.clone(), rule, order);
                    c.interval = interval;
                    // The engine refuses over-allocation and jobs in reserved capacity with an
                    // error: a run that completes respected both.
                    let out = simulate_reserving(&w, &c, &r).unwrap();
                    prop_assert_eq!(out.jobs.len() + out.skipped.len(), w.len());
                    let again = simulate_reserving(&w, &c, &r).unwrap();
                    prop_assert_eq!(&out, &again, "{} × {}: deterministic", kind, rule);
                    if rule == SchedulerKind::Fcfs && kind == OrderKind::Fcfs && interval.is_none() && r.requests.is_empty() {
                        // Without backfilling in submission order, starts follow submission.
                        let mut last = Time::MIN;
                        for o in &out.jobs {
                            prop_assert!(o.start >= last);
                            last = o.start;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_factor_never_rises_while_its_user_alone_consumes(
        runs in prop::collection::vec((0i64..50, 1i64..100, 1u32..8, 0i64..3), 1..8),
        others in 0.0f64..1000.0,
    ) {
        // User 0 runs jobs one after another; user 1 holds fixed past usage; nothing decays.
        // Under continuous charging user 0's factor never rises; under §3.4 charging it never
        // rises while a job runs, and at a completion only if the job ended before its request.
        let w = Workload::new(vec![Job { user: 0, ..Job::default() }, Job { user: 1, ..Job::default() }]);
        let accounts = Accounts::of(&w);
        let tree = ShareTree::new(&accounts, &SharesSpec::default()).unwrap();
        for charging in [Charging::Continuous, Charging::Estimate] {
            let mut ledger = Ledger::new(2, charging, Decay::None);
            ledger.start(0, 99, 1, others, 1);
            ledger.complete(1, 99);
            let factor = |l: &Ledger, t: Time| {
                let usage = [l.usage(0, t), l.usage(1, t)];
                tree.factor(0, &usage, &[], usage[0] + usage[1])
            };
            let mut t = 1;
            let mut last = factor(&ledger, t);
            for (k, &(gap, run, cores, slack)) in runs.iter().enumerate() {
                t += gap;
                prop_assert!(factor(&ledger, t) <= last + 1e-12, "idle");
                ledger.start(t, k as u32, 0, f64::from(cores), run + slack);
                let mut f = factor(&ledger, t);
                prop_assert!(f <= last + 1e-12, "at a start");
                last = f;
                for step in 1..=run {
                    f = factor(&ledger, t + step);
                    prop_assert!(f <= last + 1e-12, "while running");
                    last = f;
                }
                t += run;
                ledger.complete(t, k as u32);
                f = factor(&ledger, t);
                if charging == Charging::Continuous || slack == 0 {
                    prop_assert!(f <= last + 1e-12, "at a completion");
                }
                last = f;
            }
        }
    }
}
