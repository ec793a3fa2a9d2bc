//! Advance reservations (issue 6; Margo et al.): hand-built schedules around reservations, and
//! property tests that no job ever holds reserved capacity and no throttle cap is exceeded.

mod common;

use common::{job, pool};
use proptest::prelude::*;
use schedlab::sim::metrics::{self, SizeClass, SizeClasses};
use schedlab::sim::reservation::throttle_cap as cap;
use schedlab::sim::reservation::{
    Decision, OnConflict, Placement, ReservationRequest, Reservations, Rule, Throttles,
    brute_force_peak,
};
use schedlab::sim::scheduler::Easy;
use schedlab::sim::timeseries;
use schedlab::sim::{
    Job, Machine, Overrun, SchedulerKind, SimConfig, SimError, SimOutcome, Time, Workload,
    simulate, simulate_reserving, simulate_with,
};

fn request(id: u64, created: Time, start: Time, duration: Time, width: u64) -> ReservationRequest {
    ReservationRequest {
        id,
        owner: "teragrid".into(),
        created,
        start,
        duration,
        width,
        cluster: None,
    }
}

fn reserving(requests: Vec<ReservationRequest>) -> Reservations {
    Reservations {
        requests,
        ..Reservations::default()
    }
}

fn start_of(out: &SimOutcome, job: u32) -> Time {
    out.jobs.iter().find(|o| o.job == job).unwrap().start
}

#[test]
fn a_full_machine_reservation_drains_the_machine_then_work_resumes() {
    // 10 processors, reserved whole over [100, 150). A ends at 80; B (the whole machine for 50 s)
    // cannot end by 100, so it waits for the reservation to end; C (2 procs, 15 s) fits in the
    // hole before it; D (5 procs, 30 s) would run across it and must wait.
    let w = Workload::new(vec![
        job(1, 0, 10, 80, 80),
        job(2, 1, 10, 50, 50),
        job(3, 2, 2, 15, 15),
        job(4, 3, 5, 30, 30),
    ]);
    let r = reserving(vec![request(1, 0, 100, 50, 10)]);
    for kind in SchedulerKind::ALL {
        let out = simulate_reserving(&w, &pool(10, kind), &r).unwrap();
        assert_eq!(out.reservations[0].decision, Decision::Granted, "{kind}");
        assert_eq!(out.reservations[0].window, Some((100, 150)));
        for o in &out.jobs {
            assert!(
                o.end <= 100 || o.start >= 150,
                "{kind}: job {} runs across",
                o.job
            );
        }
        // Work resumes the instant the reservation ends.
        assert_eq!(start_of(&out, 1), 150, "{kind}");
        match kind {
            // Backfilling fills the hole before the reservation with C.
            SchedulerKind::Easy | SchedulerKind::Conservative | SchedulerKind::Aggressive => {
                assert_eq!(start_of(&out, 2), 80, "{kind}");
                assert!(out.jobs[2].backfilled);
            }
            SchedulerKind::Fcfs => assert_eq!(start_of(&out, 2), 200),
        }
        assert!(start_of(&out, 3) >= 150);
        // The engine's steps show the reserved capacity over exactly the window.
        for s in &out.steps {
            let expected = if (100..150).contains(&s.time) { 10 } else { 0 };
            assert_eq!(s.reserved, expected, "{kind} at {}", s.time);
            assert!(s.busy + s.reserved <= 10);
        }
    }
}

#[test]
fn easy_shadow_and_conservative_profile_account_for_reservations() {
    // A holds 6 of 10 processors until 100; a 6-wide reservation follows over [100, 200).
    // Head B needs 8: without the reservation its shadow time is 100 and C (4 procs, 150 s)
    // cannot be backfilled (it would end at 152 > 100 and exceed the 2 spare processors); with
    // the reservation B's shadow time is 200, so C ends in time and is backfilled at 2.
    let w = Workload::new(vec![
        job(1, 0, 6, 100, 100),
        job(2, 1, 8, 50, 50),
        job(3, 2, 4, 150, 150),
    ]);
    let r = reserving(vec![request(1, 0, 100, 100, 6)]);
    for kind in [SchedulerKind::Easy, SchedulerKind::Conservative] {
        let plain = simulate(&w, &pool(10, kind)).unwrap();
        assert_eq!(
            (start_of(&plain, 1), start_of(&plain, 2)),
            (100, 150),
            "{kind}"
        );
        let out = simulate_reserving(&w, &pool(10, kind), &r).unwrap();
        assert_eq!((start_of(&out, 1), start_of(&out, 2)), (200, 2), "{kind}");
    }
}

#[test]
fn catalina_placement_never_delays_queued_jobs_requested_time_placement_does() {
    // A fills the machine until 100; B (whole machine, 100 s) waits and is planned at [100, 200).
    // A request at t=2 for half the machine over [150, 200) collides with B's plan.
    let w = Workload::new(vec![job(1, 0, 10, 100, 100), job(2, 1, 10, 100, 100)]);
    let requests = vec![request(1, 2, 150, 50, 5)];
    let run = |placement, on_conflict| {
        let r = Reservations {
            requests: requests.clone(),
            placement,
            on_conflict,
            throttles: Throttles::default(),
        };
        simulate_reserving(&w, &pool(10, SchedulerKind::Easy), &r).unwrap()
    };
    let rejected = run(Placement::AfterQueue, OnConflict::Reject);
    assert_eq!(
        rejected.reservations[0].decision,
        Decision::Rejected(Rule::NoRoom)
    );
    assert_eq!(rejected.reservations[0].window, None);
    assert_eq!(start_of(&rejected, 1), 100);

    let shifted = run(Placement::AfterQueue, OnConflict::Shift);
    assert_eq!(shifted.reservations[0].decision, Decision::Shifted);
    assert_eq!(shifted.reservations[0].window, Some((200, 250)));
    assert_eq!(start_of(&shifted, 1), 100);

    let forced = run(Placement::AtRequestedTime, OnConflict::Reject);
    assert_eq!(forced.reservations[0].decision, Decision::Granted);
    assert_eq!(forced.reservations[0].window, Some((150, 200)));
    assert_eq!(
        start_of(&forced, 1),
        200,
        "B is planned around the reservation"
    );
}

#[test]
fn each_rejection_names_its_rule() {
    let w = Workload::new(vec![job(1, 0, 1, 10, 10)]);
    let day = 86_400;
    let r = Reservations {
        requests: vec![
            request(1, 0, 1000, 12 * 3600, 8),
            request(2, 0, 2000, 12 * 3600, 8), // second 8 × 12 h in the same week: over the cap
            request(3, 0, 3000, 600, 8),       // too short
            request(4, 0, 4000, 3600, 20),     // wider than the 16-processor machine
            request(5, 0, 1000 + 7 * day, 12 * 3600, 8), // a week later: fits again
        ],
        throttles: Throttles {
            min_duration: Some(3600),
            unit_seconds: Some(cap(7 * day, 8 * 12 * 3600)),
            ..Throttles::default()
        },
        ..Reservations::default()
    };
    let out = simulate_reserving(&w, &pool(16, SchedulerKind::Easy), &r).unwrap();
    let decisions: Vec<Decision> = out.reservations.iter().map(|o| o.decision).collect();
    assert_eq!(
        decisions,
        vec![
            Decision::Granted,
            Decision::Rejected(Rule::NodeSecondsCap),
            Decision::Rejected(Rule::MinDuration),
            Decision::Rejected(Rule::WiderThanMachine),
            Decision::Granted,
        ]
    );
}

#[test]
fn reservations_refuse_jobs_that_may_overrun() {
    let w = Workload::new(vec![job(1, 0, 1, 10, 10)]);
    let mut config = pool(4, SchedulerKind::Easy);
    config.overrun = Overrun::Continue;
    let r = reserving(vec![request(1, 0, 5, 5, 1)]);
    assert_eq!(
        simulate_reserving(&w, &config, &r).unwrap_err(),
        SimError::ReservationsNeedKill
    );
    let bad = reserving(vec![request(7, 10, 5, 5, 1)]);
    assert!(matches!(
        simulate_reserving(&w, &pool(4, SchedulerKind::Easy), &bad),
        Err(SimError::BadReservation { id: 7, .. })
    ));
}

fn arb_jobs() -> impl Strategy<Value = Vec<Job>> {
    prop::collection::vec((0i64..400, 1u32..=24, 1i64..120, 0i64..3, 0i64..60), 1..50).prop_map(
        |raw| {
            raw.into_iter()
                .enumerate()
                .map(|(i, (submit, procs, runtime, mult, extra))| {
                    let requested = (runtime * mult).max(1) + extra;
                    job(i as u64 + 1, submit, procs, runtime, requested.max(1))
                })
                .collect()
        },
    )
}

fn arb_requests() -> impl Strategy<Value = Vec<ReservationRequest>> {
    let ranges = common::RequestRanges {
        created: 0..400,
        notice: 0..200,
        duration: 1..150,
        width: 1..=12,
        most: 12,
    };
    let owner = (0u8..3).prop_map(|owner| (format!("o{owner}"), None));
    common::arb_requests_within(ranges, owner)
}

fn arb_setup() -> impl Strategy<Value = (Placement, OnConflict, Throttles)> {
    (
        prop_oneof![
            Just(Placement::AfterQueue),
            Just(Placement::AtRequestedTime)
        ],
        prop_oneof![Just(OnConflict::Reject), Just(OnConflict::Shift)],
        prop::option::of((10i64..300, 50u64..2000)),
        prop::option::of((10i64..300, 1u64..3)),
    )
        .prop_map(|(p, c, units, owner)| {
            let throttles = Throttles {
                unit_seconds: units.map(|(w, m)| cap(w, m)),
                per_owner: owner.map(|(w, m)| cap(w, m)),
                ..Throttles::default()
            };
            (p, c, throttles)
        })
}

fn arb_machine() -> impl Strategy<Value = Machine> {
    prop_oneof![
        (12u32..30).prop_map(Machine::pool),
        ((6u32..14), (1u32..4)).prop_map(|(n, k)| Machine::exclusive_nodes(n, k)),
    ]
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(400))]

    /// No job ever overlaps reserved capacity: at every instant the units of running jobs plus
    /// the widths of started reservations stay within the machine; every job runs.
    #[test]
    fn no_job_holds_reserved_capacity(
        jobs in arb_jobs(),
        requests in arb_requests(),
        (placement, on_conflict, throttles) in arb_setup(),
        machine in arb_machine(),
        kind in prop_oneof![Just(SchedulerKind::Fcfs), Just(SchedulerKind::Easy), Just(SchedulerKind::Conservative)],
        interval in prop::option::of(1i64..40),
    ) {
        let w = Workload::new(jobs);
        let config = SimConfig { order: Default::default(), machine: machine.clone(), scheduler: kind, interval, overrun: Overrun::Kill, placement: Default::default() };
        let r = Reservations { requests, placement, on_conflict, throttles: throttles.clone() };
        let out = simulate_reserving(&w, &config, &r).unwrap();
        let capacity = machine.capacity().unit_count() as i64;
        let mut events: Vec<(Time, i64)> = Vec::new();
        for o in &out.jobs {
            events.push((o.start, o.units as i64));
            events.push((o.end, -(o.units as i64)));
        }
        let mut granted = Vec::new();
        for o in &out.reservations {
            let req = &r.requests[o.request as usize];
            match (o.decision, o.window) {
                (Decision::Granted, Some((s, e))) => prop_assert_eq!((s, e), (req.start, req.start + req.duration)),
                (Decision::Shifted, Some((s, e))) => prop_assert!(s > req.start && e - s == req.duration),
                (Decision::Rejected(_), None) => continue,
                other => prop_assert!(false, "inconsistent outcome {:?}", other),
            }
            let (s, e) = o.window.unwrap();
            events.push((s, req.width as i64));
            events.push((e, -(req.width as i64)));
            granted.push((req, s));
        }
        events.sort_by_key(|&(t, d)| (t, d));
        let mut used = 0;
        for (t, d) in events {
            used += d;
            prop_assert!(used <= capacity, "over capacity at t={}", t);
        }
        let feasible = w.jobs.iter().filter(|j| machine.as_uniform().unwrap().demand(j).is_ok()).count();
        prop_assert_eq!(out.jobs.len(), feasible);
        // No throttle cap is ever exceeded in any window.
        if let Some(c) = throttles.unit_seconds {
            let items: Vec<(Time, u64)> = granted.iter().map(|(q, s)| (*s, q.width * q.duration as u64)).collect();
            prop_assert!(brute_force_peak(&items, c.window) <= c.max);
        }
        if let Some(c) = throttles.per_owner {
            for owner in ["o0", "o1", "o2"] {
                let items: Vec<(Time, u64)> = granted.iter().filter(|(q, _)| q.owner == owner).map(|(_, s)| (*s, 1)).collect();
                prop_assert!(brute_force_peak(&items, c.window) <= c.max);
            }
        }
    }

    /// Without reservations, EASY on an availability profile makes exactly the decisions of the
    /// exercise's shadow-time algorithm: the profile path used with reservations is the same rule.
    #[test]
    fn easy_on_a_profile_is_easy(jobs in arb_jobs(), machine in arb_machine(), interval in prop::option::of(1i64..40)) {
        let w = Workload::new(jobs);
        let config = SimConfig { order: Default::default(), machine, scheduler: SchedulerKind::Easy, interval, overrun: Overrun::Kill, placement: Default::default() };
        let classic = simulate(&w, &config).unwrap();
        let profiled = simulate_with(&w, &config, Box::new(Easy::on_profile())).unwrap();
        prop_assert_eq!(classic.jobs, profiled.jobs);
    }

    /// FCFS with reservations still starts jobs in submission order.
    #[test]
    fn fcfs_keeps_submission_order_around_reservations(jobs in arb_jobs(), requests in arb_requests()) {
        let w = Workload::new(jobs);
        let r = reserving(requests);
        let out = simulate_reserving(&w, &pool(24, SchedulerKind::Fcfs), &r).unwrap();
        for pair in out.jobs.windows(2) {
            prop_assert!(pair[0].start <= pair[1].start);
        }
    }

    /// The queue depth of the size classes adds up to the engine's queue length in every bin.
    #[test]
    fn class_queues_add_up_to_the_queue(
        jobs in arb_jobs(),
        requests in arb_requests(),
        interval in prop::option::of(1i64..40),
        step in 1i64..90,
    ) {
        let w = Workload::new(jobs);
        let mut config = pool(24, SchedulerKind::Easy);
        config.interval = interval;
        let out = simulate_reserving(&w, &config, &reserving(requests)).unwrap();
        let records = metrics::job_records(&w, &out, 10);
        let bins = timeseries::bin(&out.steps, 24, step);
        let classes = SizeClasses(vec![
            SizeClass { name: "a".into(), up_to: Some(2) },
            SizeClass { name: "b".into(), up_to: Some(10) },
            SizeClass { name: "c".into(), up_to: None },
        ]);
        let per_class = timeseries::queue_by_class(&records, &classes, &bins, step);
        for (k, b) in bins.iter().enumerate() {
            let sum: f64 = per_class.iter().map(|s| s[k]).sum();
            prop_assert!((sum - b.queue_mean).abs() < 1e-9, "bin {}: {} vs {}", k, sum, b.queue_mean);
        }
    }
}
