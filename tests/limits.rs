//! Queues, limits and quotas (issue 11): hand-built schedules for every limit, and property
//! tests that no limit is ever exceeded, recomputed from the outcomes alone.

mod common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use schedlab::sim::limits::{
    AccountTable, Caps, KillReason, LimitKind, Limits, LimitsOutcome, OverLimit, Queue, Rejection,
    Routing,
};
use schedlab::sim::reservation::Reservations;
use schedlab::sim::topology::{Cluster, NodeClass};
use schedlab::sim::{
    Allocation, Job, Machine, SchedulerKind, SimConfig, SimOutcome, Time, Topology, Workload,
    simulate, simulate_limited,
};

fn job(id: u64, submit: Time, procs: u32, runtime: Time) -> Job {
    Job {
        user: 1,
        group: 1,
        ..common::job(id, submit, procs, runtime, runtime)
    }
}

fn in_queue(queue: i32, j: Job) -> Job {
    Job { queue, ..j }
}

fn queue(name: &str) -> Queue {
    Queue {
        name: name.into(),
        ..Queue::default()
    }
}

/// Queues routed by SWF queue number: queue number i → queue i.
fn by_number(queues: Vec<Queue>) -> Limits {
    let map = (0..queues.len()).map(|i| (i as i32, i as u32)).collect();
    Limits {
        queues,
        routing: Routing::SwfQueue { map, default: None },
        ..Limits::default()
    }
}

fn run(jobs: Vec<Job>, config: &SimConfig, limits: &Limits) -> (SimOutcome, LimitsOutcome) {
    let workload = Workload::new(jobs);
    let out = simulate_limited(&workload, config, &Reservations::default(), limits)
        .expect("the run succeeds");
    let limits = out
        .limits
        .clone()
        .expect("a limited run reports its limits");
    (out, limits)
}

fn start_of(out: &SimOutcome, job: u32) -> Time {
    out.jobs.iter().find(|o| o.job == job).unwrap().start
}

#[test]
fn a_job_waits_exactly_until_a_running_job_of_its_queue_ends() {
    let mut a = queue("a");
    a.caps.max_running = Some(1);
    let limits = by_number(vec![a, queue("b")]);
    let jobs = vec![
        in_queue(0, job(1, 0, 1, 100)),
        in_queue(0, job(2, 5, 1, 50)),
        in_queue(1, job(3, 5, 1, 10)),
    ];
    for kind in SchedulerKind::ALL {
        let (out, l) = run(jobs.clone(), &common::pool(4, kind), &limits);
        assert_eq!(start_of(&out, 0), 0, "{kind}");
        // Free processors all along, but its queue runs one job at a time.
        assert_eq!(start_of(&out, 1), 100, "{kind}");
        assert_eq!(l.held_by[1], Some(LimitKind::QueueMaxRunning));
        assert_eq!(l.held_seconds(1), 95);
        // The other queue is not held.
        assert_eq!(start_of(&out, 2), 5, "{kind}");
        assert_eq!(l.held_by[2], None);
        assert_eq!(l.queue_name(2), Some("b"));
    }
}

#[test]
fn a_users_seventh_job_becomes_eligible_when_one_of_the_six_starts() {
    let limits = Limits {
        users: AccountTable {
            default: Caps {
                max_queued: Some(6),
                ..Caps::default()
            },
            by_id: BTreeMap::new(),
        },
        ..Limits::single("batch")
    };
    // Another user holds the one processor until t=100; user 1 submits seven jobs at t=1.
    let mut jobs = vec![Job {
        user: 2,
        ..job(1, 0, 1, 100)
    }];
    jobs.extend((0..7).map(|i| job(2 + i, 1, 1, 10)));
    for kind in SchedulerKind::ALL {
        let (out, l) = run(jobs.clone(), &common::pool(1, kind), &limits);
        for j in 1..7 {
            assert_eq!(l.held_by[j], None, "{kind}: job {j} is one of the six");
        }
        assert_eq!(l.held_by[7], Some(LimitKind::UserMaxQueued), "{kind}");
        // The first of the six starts at 100: the seventh becomes eligible then, not before.
        assert_eq!(start_of(&out, 1), 100, "{kind}");
        assert_eq!(l.eligible_at[7], 100, "{kind}");
        assert_eq!(start_of(&out, 7), 160, "{kind}");
    }
}

#[test]
fn the_seventh_job_can_start_at_the_instant_it_becomes_eligible() {
    let limits = Limits {
        users: AccountTable {
            default: Caps {
                max_queued: Some(6),
                ..Caps::default()
            },
            by_id: BTreeMap::new(),
        },
        ..Limits::single("batch")
    };
    // Eight processors, seven jobs at once: six eligible, six start, the seventh is admitted
    // by those starts and starts at the same instant.
    let jobs: Vec<Job> = (0..7).map(|i| job(1 + i, 0, 1, 10)).collect();
    let (out, l) = run(jobs, &common::pool(8, SchedulerKind::Easy), &limits);
    assert_eq!(l.held_by[6], Some(LimitKind::UserMaxQueued));
    assert_eq!(l.eligible_at[6], 0);
    assert!(out.jobs.iter().all(|o| o.start == 0));
}

#[test]
fn a_job_over_the_walltime_limit_is_killed_or_rejected_as_configured() {
    let mut q = queue("short");
    q.max_walltime = Some(50);
    let mut limits = by_number(vec![q]);
    // Requests 100 s, runs 80 s: over the queue's 50 s.
    let jobs = vec![
        in_queue(0, common::job(1, 0, 1, 80, 100)),
        in_queue(0, common::job(2, 0, 1, 30, 40)),
    ];
    limits.over_walltime = OverLimit::Kill;
    let (out, l) = run(jobs.clone(), &common::pool(1, SchedulerKind::Easy), &limits);
    let first = out.jobs[0];
    assert_eq!((first.start, first.end), (0, 50));
    assert!(first.killed);
    assert_eq!(l.killed_by[0], Some(KillReason::MaxWalltime));
    // Planned with the cut request: the second job starts when the first is killed.
    assert_eq!(start_of(&out, 1), 50);
    assert_eq!(l.killed_by[1], None);

    limits.over_walltime = OverLimit::Reject;
    let (out, l) = run(jobs, &common::pool(1, SchedulerKind::Easy), &limits);
    assert_eq!(l.rejected, vec![(0, Rejection::OverWalltime)]);
    assert_eq!(out.jobs.len(), 1);
    assert_eq!(start_of(&out, 1), 0);
}

#[test]
fn a_job_reaching_the_cpu_time_limit_is_killed_then() {
    let mut q = queue("test");
    q.max_cputime = Some(30);
    let limits = by_number(vec![q]);
    // 2 processors × 60 s of CPU each over a 100 s run: 30 s of CPU after 25 s.
    let heavy = Job {
        cpu_time: 60,
        ..in_queue(0, common::job(1, 0, 2, 100, 200))
    };
    // 1 processor × 20 s: under the limit, runs to its end.
    let light = Job {
        cpu_time: 20,
        ..in_queue(0, common::job(2, 0, 1, 100, 200))
    };
    let (out, l) = run(
        vec![heavy, light],
        &common::pool(4, SchedulerKind::Fcfs),
        &limits,
    );
    assert_eq!(out.jobs[0].end, 25);
    assert!(out.jobs[0].killed);
    assert_eq!(l.killed_by[0], Some(KillReason::MaxCputime));
    assert_eq!(out.jobs[1].end, 100);
    assert!(!out.jobs[1].killed);
}

/// Queue priority tiers (docs/queues.md, "Priorities"): on 4 processors, A (queue long) holds
/// the machine 0–100; B (long, 4 procs, 100 s), C (short, 2 procs, 50 s), D (long, 2 procs,
/// 200 s) and E (long, 2 procs, 40 s) arrive at 1–4. With one priority, B starts first at 100.
/// With short above long, C starts at 100 ahead of the earlier B, and B (the head of the long
/// tier) waits for C's processors until 150.
fn tier_jobs() -> Vec<Job> {
    vec![
        in_queue(1, job(1, 0, 4, 100)),
        in_queue(1, job(2, 1, 4, 100)),
        in_queue(0, job(3, 2, 2, 50)),
        in_queue(1, job(4, 3, 2, 200)),
        in_queue(1, job(5, 4, 2, 40)),
    ]
}

fn tiered(short_priority: i64) -> Limits {
    let mut short = queue("short");
    short.priority = short_priority;
    by_number(vec![short, queue("long")])
}

fn starts(out: &SimOutcome) -> Vec<Time> {
    (0..out.jobs.len() as u32)
        .map(|j| start_of(out, j))
        .collect()
}

#[test]
fn a_higher_priority_queue_is_served_first_under_fcfs_easy_and_conservative() {
    // One priority: submission order. FCFS and EASY alike: B 100–200, then C and D together
    // at 200 (2 + 2 processors), E after C at 250 (EASY cannot backfill E before 200: it would
    // need B's processors). Conservative plans the same.
    for kind in [
        SchedulerKind::Fcfs,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
    ] {
        let (out, _) = run(tier_jobs(), &common::pool(4, kind), &tiered(0));
        assert_eq!(
            starts(&out),
            [0, 100, 200, 200, 250],
            "{kind:?}, one priority"
        );
    }
    // Short above long. FCFS: C at 100; B waits for C's processors (150–250); D, then E behind
    // it (FCFS never passes the head): D 250, E 250.
    let (out, l) = run(
        tier_jobs(),
        &common::pool(4, SchedulerKind::Fcfs),
        &tiered(10),
    );
    assert_eq!(starts(&out), [0, 150, 100, 250, 250]);
    assert_eq!(l.queue_name(2), Some("short"));
    // EASY reserves for B — the head of the highest non-empty tier after C starts — at 150, and
    // backfills E (2 procs, ends at 140 ≤ 150) at 100; D (ends at 300) may not, so it runs after
    // B. Conservative plans C, B, D, E in that order: the same schedule.
    for kind in [SchedulerKind::Easy, SchedulerKind::Conservative] {
        let (out, _) = run(tier_jobs(), &common::pool(4, kind), &tiered(10));
        assert_eq!(starts(&out), [0, 150, 100, 250, 100], "{kind:?}, tiers");
    }
    // Long above short reverses it: the long jobs first in submission order — B at 100, D and
    // E together at 200 — and C only when E's processors free at 240.
    let (out, _) = run(
        tier_jobs(),
        &common::pool(4, SchedulerKind::Fcfs),
        &tiered(-10),
    );
    assert_eq!(starts(&out), [0, 100, 240, 200, 200]);
}

#[test]
fn tiers_lead_any_order_and_the_multifactor_order_can_weigh_them_instead() {
    use schedlab::sim::scheduler::order::{OrderKind, OrderSpec, PriorityWeights};
    // Shortest first within tiers, no backfilling: at 100 the order is C (its tier), then the
    // long tier by requested time — E (40 s), B (100 s), D (200 s). C and E start (2 + 2
    // processors); B waits for both (150); D after B (250).
    let mut config = common::pool(4, SchedulerKind::Fcfs);
    config.order = OrderSpec::of(OrderKind::Sjf);
    let (out, _) = run(tier_jobs(), &config, &tiered(10));
    assert_eq!(starts(&out), [0, 150, 100, 250, 100]);
    // `order: priority` with `queue_tiers: false` and only the queue weight: the same tiers,
    // as a weighted factor (short 1, long 0) — the same schedule as FCFS-ordered tiers.
    config.order = OrderSpec {
        kind: OrderKind::Priority,
        priority: PriorityWeights {
            age: 0.0,
            fairshare: 0.0,
            queue: 1.0,
            queue_tiers: false,
            ..PriorityWeights::default()
        },
        ..OrderSpec::default()
    };
    let (out, _) = run(tier_jobs(), &config, &tiered(10));
    assert_eq!(starts(&out), [0, 150, 100, 250, 250]);
    // As a factor, queue priority can be outweighed: age weight 2 with max_age 200 s against a
    // queue weight of 0.001. At 100, B (waited 99 s: 0.99) is above C (98 s: 0.98 + 0.001), so
    // B starts first and C at 200 — submission order wins.
    config.order.priority.age = 2.0;
    config.order.priority.max_age = 200;
    config.order.priority.queue = 0.001;
    let (out, _) = run(tier_jobs(), &config, &tiered(10));
    assert_eq!(starts(&out)[..3], [0, 100, 200]);
    // With tiers (the default), the same weights cannot: C leads its tier.
    config.order.priority.queue_tiers = true;
    let (out, _) = run(tier_jobs(), &config, &tiered(10));
    assert_eq!(starts(&out)[..3], [0, 150, 100]);
    // A zero queue weight with `queue_tiers: false` would drop the priorities: an error.
    config.order.priority.queue = 0.0;
    config.order.priority.queue_tiers = false;
    let w = Workload::new(tier_jobs());
    let err = simulate_limited(&w, &config, &Reservations::default(), &tiered(10)).unwrap_err();
    assert!(err.to_string().contains("queue_tiers"), "{err}");
}

#[test]
fn per_queue_caps_on_each_user_and_group() {
    // Queue `short` allows each user one running job and each group 3 CPUs; `long` has no such
    // caps. On 8 processors: user 1's jobs 0 (short, 0–100) and 1 (short, submitted at 1) —
    // job 1 waits exactly until job 0 ends; user 2's short job 2 starts at once (its own
    // account); user 1's long job 3 starts at once (another queue). Group 7's short jobs 4 (2
    // CPUs) and 5 (2 CPUs, user 3) share a 3-CPU group quota in `short`: 5 waits for 4 to end.
    let mut short = queue("short");
    short.per_user.max_running = Some(1);
    short.per_group.cpu_quota = Some(3);
    let limits = by_number(vec![short, queue("long")]);
    let as_user = |user, group, j: Job| Job { user, group, ..j };
    let jobs = vec![
        in_queue(0, job(1, 0, 1, 100)),
        in_queue(0, job(2, 1, 1, 10)),
        in_queue(0, as_user(2, 1, job(3, 2, 1, 10))),
        in_queue(1, job(4, 3, 1, 10)),
        in_queue(0, as_user(4, 7, job(5, 4, 2, 50))),
        in_queue(0, as_user(3, 7, job(6, 5, 2, 10))),
    ];
    for kind in [
        SchedulerKind::Fcfs,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
    ] {
        let (out, l) = run(jobs.clone(), &common::pool(8, kind), &limits);
        assert_eq!(starts(&out), [0, 100, 2, 3, 4, 54], "{kind:?}");
        assert_eq!(l.held_by[1], Some(LimitKind::QueueUserMaxRunning));
        assert_eq!(l.held_by[5], Some(LimitKind::QueueGroupCpuQuota));
        assert_eq!(l.held_by[3], None);
        assert_eq!(l.eligible_at[1], 100);
    }
    // A job alone over its queue's per-group quota could never start: rejected.
    let (_, l) = run(
        vec![in_queue(0, as_user(4, 7, job(1, 0, 4, 10)))],
        &common::pool(8, SchedulerKind::Easy),
        &limits,
    );
    assert_eq!(l.rejected, [(0, Rejection::OverCpuQuota)]);
}

#[test]
fn cpu_quotas_of_users_and_groups_hold_jobs_and_refuse_those_over_them() {
    let caps = |quota| Caps {
        cpu_quota: Some(quota),
        ..Caps::default()
    };
    let limits = Limits {
        users: AccountTable {
            default: caps(4),
            by_id: BTreeMap::new(),
        },
        ..Limits::single("batch")
    };
    let jobs = vec![
        job(1, 0, 3, 100),
        job(2, 0, 3, 10),
        job(3, 0, 1, 10),
        job(4, 0, 5, 10),
    ];
    let (out, l) = run(
        jobs.clone(),
        &common::pool(16, SchedulerKind::Easy),
        &limits,
    );
    assert_eq!(start_of(&out, 0), 0);
    // 3 + 3 > 4: held until the first ends; 3 + 1 fits beside it.
    assert_eq!(l.held_by[1], Some(LimitKind::UserCpuQuota));
    assert_eq!(start_of(&out, 1), 100);
    assert_eq!(start_of(&out, 2), 0);
    // 5 processors can never fit a quota of 4.
    assert_eq!(l.rejected, vec![(3, Rejection::OverCpuQuota)]);

    // The same as a group quota.
    let limits = Limits {
        groups: AccountTable {
            default: caps(4),
            by_id: BTreeMap::new(),
        },
        ..Limits::single("batch")
    };
    let (out, l) = run(jobs, &common::pool(16, SchedulerKind::Easy), &limits);
    assert_eq!(l.held_by[1], Some(LimitKind::GroupCpuQuota));
    assert_eq!(start_of(&out, 1), 100);
}

/// Issue 33: a CPU quota counts running jobs only — a job that does not fit the machine yet
/// uses none of it. 4 processors, user 1's quota 2 CPUs; jobs (submit, runtime, CPUs, user) =
/// (0, 100, 3, 2), (1, 100, 2, 1), (2, 50, 1, 1). By hand: job 0 runs 0–100 and leaves one
/// processor. Job 1 (2 CPUs) fits the quota (nothing of user 1 runs) but not the machine, so it
/// waits; job 2 (1 CPU) fits both at 2 and starts under every backfilling rule (aggressive and
/// EASY: it ends at 52, before job 1's reservation at 100; conservative: the processor is free
/// 2–100). Once it runs, user 1 has 1 CPU left: job 1 is held by the quota from 2 until job 2
/// ends at 52, then waits for processors until 100. Under no backfilling job 1 blocks the queue:
/// it starts at 100, and job 2 (2 + 1 > 2) waits for it to end at 200. Counting eligible jobs
/// too (the rule before issue 33), job 2 was held behind job 1 and started at 200 everywhere.
#[test]
fn issue_33_a_cpu_quota_counts_running_jobs_only() {
    let limits = Limits {
        users: AccountTable {
            default: Caps::default(),
            by_id: BTreeMap::from([(
                1,
                Caps {
                    cpu_quota: Some(2),
                    ..Caps::default()
                },
            )]),
        },
        ..Limits::single("batch")
    };
    let as_user = |user, j: Job| Job { user, ..j };
    let jobs = vec![
        as_user(2, job(1, 0, 3, 100)),
        as_user(1, job(2, 1, 2, 100)),
        as_user(1, job(3, 2, 1, 50)),
    ];
    for kind in SchedulerKind::ALL {
        let (out, l) = run(jobs.clone(), &common::pool(4, kind), &limits);
        if kind == SchedulerKind::Fcfs {
            assert_eq!(starts(&out), [0, 100, 200], "{kind}");
            assert_eq!(l.held_by[2], Some(LimitKind::UserCpuQuota), "{kind}");
            // In the queue behind job 1 from 2, held by the quota from 100 (job 1 starts) to 200.
            assert_eq!(l.held_seconds(2), 100, "{kind}");
            continue;
        }
        assert_eq!(starts(&out), [0, 100, 2], "{kind}");
        assert_eq!(l.held_by[1], Some(LimitKind::UserCpuQuota), "{kind}");
        assert_eq!(l.held_by[2], None, "{kind}");
        // Eligible at 1, held by the quota 2–52, eligible again from 52.
        assert_eq!(l.held_seconds(1), 50, "{kind}");
        assert_eq!(l.eligible_at[1], 52, "{kind}");
        assert_eq!(l.held_seconds(2), 0, "{kind}");
    }
}

/// Several eligible jobs of one user may each fit its quota alone: the jobs one scheduler call
/// starts are checked in the order the policy decided them, counting those started before them
/// (as AleaNG checks each job against the quota as it walks the queue and starts it). Quota 2,
/// 8 processors, jobs at 0 of 1, 2 and 1 CPUs: the first starts, the second (1 + 2 > 2) is held
/// by the quota, the third (1 + 1) starts at once; the second starts when both have ended.
#[test]
fn jobs_started_by_one_call_never_exceed_a_quota_together() {
    let limits = Limits {
        users: AccountTable {
            default: Caps {
                cpu_quota: Some(2),
                ..Caps::default()
            },
            by_id: BTreeMap::new(),
        },
        ..Limits::single("batch")
    };
    let jobs = vec![job(1, 0, 1, 10), job(2, 0, 2, 10), job(3, 0, 1, 20)];
    for kind in SchedulerKind::ALL {
        let (out, l) = run(jobs.clone(), &common::pool(8, kind), &limits);
        // Without backfilling too: a held job is not in the policy's queue, so it blocks none.
        assert_eq!(starts(&out), [0, 20, 0], "{kind}");
        assert_eq!(l.held_by[1], Some(LimitKind::UserCpuQuota), "{kind}");
        assert_eq!(l.held_seconds(1), 20, "{kind}");
    }
}

#[test]
fn running_caps_of_users_groups_and_queue_quotas() {
    let one = Caps {
        max_running: Some(1),
        ..Caps::default()
    };
    // Per user, with an exception for user 2.
    let limits = Limits {
        users: AccountTable {
            default: one,
            by_id: BTreeMap::from([(2, Caps::default())]),
        },
        ..Limits::single("batch")
    };
    let jobs = vec![
        job(1, 0, 1, 50),
        job(2, 0, 1, 50),
        Job {
            user: 2,
            ..job(3, 0, 1, 50)
        },
        Job {
            user: 2,
            ..job(4, 0, 1, 50)
        },
    ];
    let (out, l) = run(
        jobs.clone(),
        &common::pool(8, SchedulerKind::Conservative),
        &limits,
    );
    assert_eq!(l.held_by[1], Some(LimitKind::UserMaxRunning));
    assert_eq!(start_of(&out, 1), 50);
    assert_eq!((start_of(&out, 2), start_of(&out, 3)), (0, 0));

    // Per group.
    let limits = Limits {
        groups: AccountTable {
            default: one,
            by_id: BTreeMap::new(),
        },
        ..Limits::single("batch")
    };
    let (out, l) = run(jobs.clone(), &common::pool(8, SchedulerKind::Fcfs), &limits);
    assert_eq!(l.held_by[1], Some(LimitKind::GroupMaxRunning));
    assert_eq!(
        (start_of(&out, 1), start_of(&out, 2), start_of(&out, 3)),
        (50, 100, 150)
    );

    // A queue's CPU quota (AleaNG).
    let mut q = queue("q");
    q.caps.cpu_quota = Some(2);
    let limits = Limits {
        queues: vec![q],
        ..Limits::default()
    };
    let (out, l) = run(jobs, &common::pool(8, SchedulerKind::Easy), &limits);
    assert_eq!(l.held_by[2], Some(LimitKind::QueueCpuQuota));
    assert_eq!(start_of(&out, 2), 50);
}

#[test]
fn jobs_no_queue_takes_are_rejected() {
    let limits = by_number(vec![queue("only")]);
    let jobs = vec![in_queue(0, job(1, 0, 1, 10)), in_queue(5, job(2, 0, 1, 10))];
    let (out, l) = run(jobs, &common::pool(2, SchedulerKind::Fcfs), &limits);
    assert_eq!(l.rejected, vec![(1, Rejection::NoQueue)]);
    assert_eq!(out.jobs.len(), 1);
    assert_eq!(l.queue_name(1), None);
}

#[test]
fn bad_definitions_are_errors_not_panics() {
    let config = common::pool(2, SchedulerKind::Fcfs);
    let workload = Workload::new(vec![job(1, 0, 1, 10)]);
    let mut zero = queue("z");
    zero.caps.max_running = Some(0);
    for limits in [
        Limits::default(),
        by_number(vec![zero]),
        Limits {
            routing: Routing::SwfQueue {
                map: BTreeMap::new(),
                default: Some(3),
            },
            ..Limits::single("a")
        },
    ] {
        let err = simulate_limited(&workload, &config, &Reservations::default(), &limits);
        assert!(err.is_err(), "{limits:?}");
    }
}

fn topology_machine(nodes: u32, cores: u32) -> Machine {
    Machine::topology(Topology::new(vec![Cluster::new(
        "c",
        Allocation::Shared,
        vec![NodeClass::new("n", nodes, cores, 0)],
    )]))
}

#[test]
fn limits_apply_on_topologies() {
    let mut a = queue("a");
    a.caps.max_running = Some(1);
    let limits = by_number(vec![a]);
    let jobs = vec![
        in_queue(0, job(1, 0, 1, 100)),
        in_queue(0, job(2, 5, 1, 50)),
    ];
    for kind in SchedulerKind::ALL {
        let config = SimConfig::new(topology_machine(2, 4), kind);
        let (out, l) = run(jobs.clone(), &config, &limits);
        assert_eq!(start_of(&out, 1), 100, "{kind}");
        assert_eq!(l.held_by[1], Some(LimitKind::QueueMaxRunning));
    }
}

// ---------------------------------------------------------------------------------------------
// Properties.

fn arb_jobs() -> impl Strategy<Value = Vec<Job>> {
    prop::collection::vec(
        (
            0i64..300,
            1u32..6,
            1i64..80,
            0i64..40,
            0i32..3,
            0i32..4,
            0i32..2,
            0i64..100,
        ),
        1..50,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(
                |(i, (submit, procs, runtime, extra, queue, user, group, cpu))| Job {
                    queue,
                    user,
                    group,
                    cpu_time: cpu,
                    ..common::job(i as u64 + 1, submit, procs, runtime, runtime + extra)
                },
            )
            .collect()
    })
}

fn arb_caps() -> impl Strategy<Value = Caps> {
    (
        prop::option::of(1u32..4),
        prop::option::of(1u32..5),
        prop::option::of(5u64..12),
    )
        .prop_map(|(max_running, max_queued, cpu_quota)| Caps {
            max_running,
            max_queued,
            cpu_quota,
        })
}

fn arb_limits() -> impl Strategy<Value = Limits> {
    (
        prop::collection::vec(
            (
                arb_caps(),
                0i64..3,
                prop::option::of(20i64..100),
                prop::option::of(10i64..60),
                arb_caps(),
                arb_caps(),
            ),
            3,
        ),
        arb_caps(),
        arb_caps(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(qs, user, group, reject, by_time)| Limits {
            queues: qs
                .into_iter()
                .enumerate()
                .map(
                    |(i, (caps, priority, max_walltime, max_cputime, per_user, per_group))| Queue {
                        name: format!("q{i}"),
                        priority,
                        max_walltime,
                        max_cputime,
                        caps,
                        per_user,
                        per_group,
                    },
                )
                .collect(),
            routing: if by_time {
                Routing::RequestedTime
            } else {
                Routing::SwfQueue {
                    map: (0..3).map(|i| (i, i as u32)).collect(),
                    default: None,
                }
            },
            over_walltime: if reject {
                OverLimit::Reject
            } else {
                OverLimit::Kill
            },
            users: AccountTable {
                default: user,
                by_id: BTreeMap::new(),
            },
            groups: AccountTable {
                default: group,
                by_id: BTreeMap::new(),
            },
        })
}

/// Every cap, recomputed from the outcome alone at every instant something happened: running
/// jobs in [start, end), eligible jobs in [eligible_at, start).
fn check_caps(
    jobs: &[Job],
    limits: &Limits,
    out: &SimOutcome,
    l: &LimitsOutcome,
) -> Result<(), TestCaseError> {
    let workload = Workload::new(jobs.to_vec());
    let jobs = &workload.jobs;
    let mut instants: Vec<Time> = Vec::new();
    for o in &out.jobs {
        instants.extend([o.start, o.end, l.eligible_at[o.job as usize]]);
    }
    instants.sort_unstable();
    instants.dedup();
    for &t in &instants {
        // (kind, queue, id) → (running, running cpus, eligible)
        let mut counts: BTreeMap<(u8, i32, i32), (u32, u64, u32)> = BTreeMap::new();
        for o in &out.jobs {
            let j = &jobs[o.job as usize];
            let running = o.start <= t && t < o.end;
            let eligible = l.eligible_at[o.job as usize] <= t && t < o.start;
            let q = l.queue[o.job as usize] as i32;
            for key in [
                (0, q, 0),
                (1, 0, j.user),
                (2, 0, j.group),
                (3, q, j.user),
                (4, q, j.group),
            ] {
                let c = counts.entry(key).or_default();
                if running {
                    c.0 += 1;
                    c.1 += u64::from(j.procs);
                }
                if eligible {
                    c.2 += 1;
                }
            }
        }
        for (&(kind, q, id), &(running, cpus, eligible)) in &counts {
            let caps = match kind {
                0 => limits.queues[q as usize].caps,
                1 => limits.users.caps(id),
                2 => limits.groups.caps(id),
                3 => limits.queues[q as usize].per_user,
                _ => limits.queues[q as usize].per_group,
            };
            let what = format!("t={t} account {kind}/{q}/{id}");
            if let Some(max) = caps.max_running {
                prop_assert!(running <= max, "{what}: {running} running > {max}");
            }
            if let Some(max) = caps.cpu_quota {
                prop_assert!(cpus <= max, "{what}: {cpus} cpus > {max}");
            }
            if let Some(max) = caps.max_queued {
                prop_assert!(eligible <= max, "{what}: {eligible} eligible > {max}");
            }
        }
    }
    // Walltime and CPU-time limits: no run passes its queue's.
    for o in &out.jobs {
        let q = &limits.queues[l.queue[o.job as usize] as usize];
        if let Some(max) = q.max_walltime {
            prop_assert!(
                o.end - o.start <= max,
                "job {} ran past max_walltime",
                o.job
            );
        }
        if l.killed_by[o.job as usize].is_some() {
            prop_assert!(o.killed);
        }
    }
    // Held jobs become eligible exactly when their cap frees: a job of the same account ends
    // (running caps) or starts (queued caps) at that instant.
    for o in &out.jobs {
        let i = o.job as usize;
        let at = l.eligible_at[i];
        if at == jobs[i].submit {
            continue;
        }
        let Some(limit) = l.held_by[i] else {
            prop_assert!(false, "job {i} became eligible late without a limit");
            unreachable!()
        };
        // The account of the cap that held it last: one of its jobs started (freeing an eligible
        // slot) or ended (freeing a running slot or CPUs) at that very instant.
        let same = |k: usize| match limit {
            LimitKind::QueueMaxRunning | LimitKind::QueueCpuQuota | LimitKind::QueueMaxQueued => {
                l.queue[k] == l.queue[i]
            }
            LimitKind::UserMaxRunning | LimitKind::UserCpuQuota | LimitKind::UserMaxQueued => {
                jobs[k].user == jobs[i].user
            }
            LimitKind::QueueUserMaxRunning
            | LimitKind::QueueUserCpuQuota
            | LimitKind::QueueUserMaxQueued => {
                l.queue[k] == l.queue[i] && jobs[k].user == jobs[i].user
            }
            LimitKind::QueueGroupMaxRunning
            | LimitKind::QueueGroupCpuQuota
            | LimitKind::QueueGroupMaxQueued => {
                l.queue[k] == l.queue[i] && jobs[k].group == jobs[i].group
            }
            _ => jobs[k].group == jobs[i].group,
        };
        let freed = out.jobs.iter().any(|p| {
            let k = p.job as usize;
            k != i && same(k) && (p.start == at || p.end == at)
        });
        prop_assert!(
            freed,
            "job {i} held by {} became eligible at {at} with nothing freed",
            limit.name()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(200))]

    #[test]
    fn no_limit_is_ever_exceeded(jobs in arb_jobs(), limits in arb_limits(), kind in 0usize..4, nodes in any::<bool>()) {
        let kind = SchedulerKind::ALL[kind];
        let machine = if nodes { Machine::exclusive_nodes(4, 2) } else { Machine::pool(8) };
        let config = SimConfig::new(machine, kind);
        let (out, l) = run(jobs.clone(), &config, &limits);
        check_caps(&jobs, &limits, &out, &l)?;
        // Every job is simulated or rejected.
        prop_assert_eq!(out.jobs.len() + l.rejected.len() + out.skipped.len(), jobs.len());
    }

    #[test]
    fn no_limit_is_exceeded_on_a_topology(jobs in arb_jobs(), limits in arb_limits(), kind in 0usize..4) {
        let kind = SchedulerKind::ALL[kind];
        let config = SimConfig::new(topology_machine(2, 4), kind);
        let (out, l) = run(jobs.clone(), &config, &limits);
        check_caps(&jobs, &limits, &out, &l)?;
    }

    #[test]
    fn one_queue_without_caps_is_the_run_without_limits(jobs in arb_jobs(), kind in 0usize..3) {
        let kind = SchedulerKind::ALL[kind];
        let config = common::pool(8, kind);
        let (limited, _) = run(jobs.clone(), &config, &Limits::single("all"));
        let plain = simulate(&Workload::new(jobs), &config).unwrap();
        prop_assert_eq!(&limited.jobs, &plain.jobs);
        prop_assert_eq!(&limited.steps, &plain.steps);
    }
}

fn arb_quota() -> impl Strategy<Value = Caps> {
    prop::option::of(3u64..10).prop_map(|cpu_quota| Caps {
        cpu_quota,
        ..Caps::default()
    })
}

/// CPU quotas only, on every kind of account.
fn arb_quotas() -> impl Strategy<Value = Limits> {
    (
        prop::collection::vec((arb_quota(), arb_quota(), arb_quota()), 3),
        arb_quota(),
        arb_quota(),
    )
        .prop_map(|(qs, user, group)| Limits {
            queues: qs
                .into_iter()
                .enumerate()
                .map(|(i, (caps, per_user, per_group))| Queue {
                    name: format!("q{i}"),
                    caps,
                    per_user,
                    per_group,
                    ..Queue::default()
                })
                .collect(),
            routing: Routing::SwfQueue {
                map: (0..3).map(|i| (i, i as u32)).collect(),
                default: None,
            },
            users: AccountTable {
                default: user,
                by_id: BTreeMap::new(),
            },
            groups: AccountTable {
                default: group,
                by_id: BTreeMap::new(),
            },
            ..Limits::default()
        })
}

/// Every CPU quota recomputed from the outcome under the running-only rule (issue 33), with
/// aggressive backfilling on a pool, which starts every eligible job that fits: at every instant
/// something happened, (1) the requested CPUs of the jobs running per quota holder never exceed
/// its quota, and (2) every job still waiting after that instant's calls either does not fit the
/// free processors or would exceed one of its quotas counting the jobs running then — so a quota
/// held it back only when it really had no room, and a job that does not fit the machine took
/// none of it.
fn check_quotas_running_only(
    jobs: &[Job],
    limits: &Limits,
    procs: u32,
    out: &SimOutcome,
    l: &LimitsOutcome,
) -> Result<(), TestCaseError> {
    let workload = Workload::new(jobs.to_vec());
    let jobs = &workload.jobs;
    let quota_of = |kind: u8, q: i32, id: i32| match kind {
        0 => limits.queues[q as usize].caps.cpu_quota,
        1 => limits.users.caps(id).cpu_quota,
        2 => limits.groups.caps(id).cpu_quota,
        3 => limits.queues[q as usize].per_user.cpu_quota,
        _ => limits.queues[q as usize].per_group.cpu_quota,
    };
    let keys = |i: usize| {
        let (j, q) = (&jobs[i], l.queue[i] as i32);
        [
            (0u8, q, 0),
            (1, 0, j.user),
            (2, 0, j.group),
            (3, q, j.user),
            (4, q, j.group),
        ]
    };
    let mut instants: Vec<Time> = out
        .jobs
        .iter()
        .flat_map(|o| [jobs[o.job as usize].submit, o.start, o.end])
        .collect();
    instants.sort_unstable();
    instants.dedup();
    for &t in &instants {
        let mut used: BTreeMap<(u8, i32, i32), u64> = BTreeMap::new();
        let mut busy = 0u64;
        for o in out.jobs.iter().filter(|o| o.start <= t && t < o.end) {
            busy += o.units;
            for key in keys(o.job as usize) {
                *used.entry(key).or_default() += u64::from(jobs[o.job as usize].procs);
            }
        }
        for (&(kind, q, id), &cpus) in &used {
            if let Some(max) = quota_of(kind, q, id) {
                prop_assert!(
                    cpus <= max,
                    "t={t} account {kind}/{q}/{id}: {cpus} CPUs running > quota {max}"
                );
            }
        }
        for o in out
            .jobs
            .iter()
            .filter(|o| jobs[o.job as usize].submit <= t && t < o.start)
        {
            let i = o.job as usize;
            let procs_i = u64::from(jobs[i].procs);
            let fits_machine = procs_i <= u64::from(procs) - busy;
            let over_quota = keys(i).into_iter().any(|(kind, q, id)| {
                quota_of(kind, q, id).is_some_and(|max| {
                    used.get(&(kind, q, id)).copied().unwrap_or(0) + procs_i > max
                })
            });
            prop_assert!(
                !fits_machine || over_quota,
                "t={t}: job {i} waits although it fits the free processors and every quota"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(300))]

    #[test]
    fn quotas_count_running_jobs_only(jobs in arb_jobs(), limits in arb_quotas()) {
        let config = common::pool(8, SchedulerKind::Aggressive);
        let (out, l) = run(jobs.clone(), &config, &limits);
        check_quotas_running_only(&jobs, &limits, 8, &out, &l)?;
        check_caps(&jobs, &limits, &out, &l)?;
        prop_assert_eq!(out.jobs.len() + l.rejected.len() + out.skipped.len(), jobs.len());
    }
}

/// Issue 16's streamed instants keep every scheduler call: a queue setup decides again at the
/// same instant when a start admits a held job, and each of those calls counts in
/// `scheduler_calls` and `queue_length_sampled` as it did when every call was kept.
#[test]
fn every_scheduler_call_at_an_instant_is_counted_in_the_streamed_instants() {
    let mut a = queue("a");
    a.caps.max_queued = Some(1);
    let limits = by_number(vec![a]);
    let jobs = (1..=3).map(|i| in_queue(0, job(i, 0, 1, 100))).collect();
    let (out, _) = run(jobs, &common::pool(4, SchedulerKind::Easy), &limits);
    // One queued job at a time: each start admits the next held job, decided on at once.
    assert!(out.jobs.iter().all(|o| o.start == 0));
    let at_zero: Vec<u32> = out
        .invocations
        .iter()
        .filter(|c| c.time == 0)
        .map(|c| c.queue_len)
        .collect();
    assert_eq!(at_zero, vec![1, 1, 1]);
    let runs = schedlab::sim::schedule::runs_of(&out);
    let calls: u64 = runs
        .iter()
        .filter(|r| r.call.is_some())
        .map(|r| r.count * (1 + u64::from(r.extra_calls)))
        .sum();
    assert_eq!(calls, out.invocations.len() as u64);
    let seen: u64 = runs
        .iter()
        .filter_map(|r| {
            r.call
                .map(|q| (u64::from(q) + r.extra_call_queue) * r.count)
        })
        .sum();
    let kept: u64 = out.invocations.iter().map(|c| u64::from(c.queue_len)).sum();
    assert_eq!(seen, kept);
}

/// One call as [`Watching`] saw it: the time, the held jobs (index, limit), the rows' queues.
type Call = (Time, Vec<(i64, &'static str)>, Vec<i64>);

/// A policy of the decision interface: FCFS over the rows, recording each call's held jobs as
/// (job index, limit name) and its rows' routed queues; or, with `start_held`, starting the
/// first held job as soon as there is one.
struct Watching {
    calls: std::rc::Rc<std::cell::RefCell<Vec<Call>>>,
    start_held: bool,
}

impl schedlab::sim::policy::Policy for Watching {
    fn decide(
        &mut self,
        view: &schedlab::sim::policy::PolicyView<'_>,
        starts: &mut Vec<usize>,
    ) -> Result<(), schedlab::sim::policy::PolicyError> {
        use schedlab::sim::policy::Held;
        let (w, h) = (view.waiting, view.held);
        let held = (0..h.len())
            .map(|k| (h.index[k], Held::LIMITS[h.limit[k] as usize]))
            .collect();
        self.calls
            .borrow_mut()
            .push((view.now, held, w.routed_queue.clone()));
        if self.start_held && !h.is_empty() {
            starts.push(w.len());
            return Ok(());
        }
        let mut free = view.free;
        for k in 0..w.len() {
            if w.units[k] > free {
                break;
            }
            free -= w.units[k];
            starts.push(k);
        }
        Ok(())
    }

    fn name(&self) -> &str {
        "watching"
    }
}

fn run_policy(
    jobs: Vec<Job>,
    limits: &Limits,
    start_held: bool,
) -> (Result<SimOutcome, schedlab::sim::SimError>, Vec<Call>) {
    use schedlab::sim::policy::PolicyScheduler;
    let workload = Workload::new(jobs);
    let config = common::pool(4, SchedulerKind::Fcfs);
    let calls = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let policy = Watching {
        calls: calls.clone(),
        start_held,
    };
    let mut kept = SimOutcome::default();
    let out = schedlab::sim::simulate_limited_policy_into(
        &workload,
        &config,
        &Reservations::default(),
        limits,
        &mut kept,
        |w| {
            Ok(schedlab::sim::AnyPolicy::Units(Box::new(
                PolicyScheduler::new(policy, w.requests.clone(), 1),
            )))
        },
    )
    .map(|rest| SimOutcome {
        jobs: kept.jobs,
        ..rest
    });
    let calls = calls.borrow().clone();
    (out, calls)
}

#[test]
fn issue_31_a_policy_under_limits_sees_the_eligible_jobs_and_the_held_ones_with_their_limit() {
    let mut a = queue("a");
    a.caps.max_running = Some(1);
    let limits = by_number(vec![a, queue("b")]);
    let jobs = vec![
        in_queue(0, job(1, 0, 1, 100)),
        in_queue(0, job(2, 5, 1, 50)),
        in_queue(1, job(3, 5, 1, 10)),
    ];
    let (out, calls) = run_policy(jobs.clone(), &limits, false);
    let out = out.expect("the run succeeds");
    // The native FCFS's schedule, job for job.
    let (native, _) = run(jobs, &common::pool(4, SchedulerKind::Fcfs), &limits);
    let starts = |o: &SimOutcome| {
        let mut s: Vec<(u32, Time)> = o.jobs.iter().map(|j| (j.job, j.start)).collect();
        s.sort_unstable();
        s
    };
    assert_eq!(starts(&out), starts(&native));
    assert_eq!(starts(&out), [(0, 0), (1, 100), (2, 5)]);
    // At 5 job 1 is held by its queue's running cap and not among the rows; job 2 is, routed to
    // queue 1.
    let at5 = calls.iter().find(|c| c.0 == 5).expect("a call at 5");
    assert_eq!(at5.1, [(1, "queue_max_running")]);
    assert_eq!(at5.2, [1]);
    assert_eq!(
        out.limits.as_ref().unwrap().held_by[1],
        Some(LimitKind::QueueMaxRunning)
    );
}

#[test]
fn issue_31_a_policy_starting_a_held_job_stops_the_run_naming_the_job_and_the_limit() {
    let mut a = queue("a");
    a.caps.max_running = Some(1);
    let limits = by_number(vec![a, queue("b")]);
    // At 6 job 3 (queue b) waits and job 2 is held: the policy returns row 1, held row 0.
    let jobs = vec![
        in_queue(0, job(1, 0, 1, 100)),
        in_queue(0, job(2, 5, 1, 50)),
        in_queue(1, job(3, 6, 1, 10)),
    ];
    let (out, _) = run_policy(jobs, &limits, true);
    let message = out.expect_err("a held job cannot start").to_string();
    assert!(
        message.contains(
            "it started job 2 (row 1, row 0 of the held jobs), which the limits hold: queue_max_running"
        ),
        "{message}"
    );
}
