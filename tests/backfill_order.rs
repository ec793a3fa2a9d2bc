//! The order of backfill candidates (`backfill_order`, issue 33 "Shortest-job backfilling"):
//! hand-worked schedules where the candidate order changes who backfills under EASY, aggressive
//! and conservative backfilling; the issue's case telling SJBF from `order: sjf`; and a property
//! that the materialised walk of a candidate order equal to the queue order changes nothing.

mod common;

use proptest::prelude::*;
use schedlab::sim::scheduler::order::{CandidateOrder, OrderKind, OrderSpec};
use schedlab::sim::{Job, Machine, SchedulerKind, SimConfig, Time, Workload, simulate};

fn config(procs: u32, rule: SchedulerKind, candidates: CandidateOrder) -> SimConfig {
    let mut config = common::pool(procs, rule);
    config.order.candidates = candidates;
    config
}

fn starts(jobs: &[Job], config: &SimConfig) -> Vec<Time> {
    let out = simulate(&Workload::new(jobs.to_vec()), config).expect("the run succeeds");
    let mut starts = vec![0; jobs.len()];
    for o in &out.jobs {
        starts[o.job as usize] = o.start;
    }
    starts
}

/// All submitted at 0 on 100 processors: A (100 s, 50 p) runs; B (100 s, 100 p) waits for it
/// (shadow 100, no extra); C (90 s, 40 p) and D (60 s, 40 p) both fit beside A and end before
/// the shadow, but only one of them fits at a time.
fn competing_candidates() -> Vec<Job> {
    vec![
        common::job(1, 0, 50, 100, 100),
        common::job(2, 0, 100, 100, 100),
        common::job(3, 0, 40, 90, 90),
        common::job(4, 0, 40, 60, 60),
    ]
}

#[test]
fn easy_offers_the_shortest_candidate_first_and_the_head_keeps_its_reservation() {
    let jobs = competing_candidates();
    use CandidateOrder::*;
    // Queue order: C backfills at 0 (ends 90); D, ending past the shadow once C is done, waits
    // for B (100–200).
    let queue = starts(&jobs, &config(100, SchedulerKind::Easy, Queue));
    assert_eq!(queue, [0, 100, 0, 200]);
    // Shortest first: D backfills at 0 (ends 60); C would end at 150 > 100 after it: after B.
    let sjbf = starts(&jobs, &config(100, SchedulerKind::Easy, Shortest));
    assert_eq!(sjbf, [0, 100, 200, 0]);
    // Area 90×40 against 60×40: the same as shortest here; submission order as the queue's.
    assert_eq!(
        starts(&jobs, &config(100, SchedulerKind::Easy, SmallestArea)),
        sjbf
    );
    assert_eq!(
        starts(&jobs, &config(100, SchedulerKind::Easy, Submission)),
        queue
    );
}

#[test]
fn aggressive_and_conservative_offer_candidates_in_the_same_order() {
    let jobs = competing_candidates();
    use CandidateOrder::*;
    // Aggressive (no reservation): queue order starts C at 0, D when C ends (90) and B when D
    // ends (150); shortest first starts D at 0, C when D ends (60), B when C ends (150).
    assert_eq!(
        starts(&jobs, &config(100, SchedulerKind::Aggressive, Queue)),
        [0, 150, 0, 90]
    );
    assert_eq!(
        starts(&jobs, &config(100, SchedulerKind::Aggressive, Shortest)),
        [0, 150, 60, 0]
    );
    // Conservative: B holds 100–200 either way; the first candidate planned takes the slot now,
    // the other cannot finish before B's reservation and is planned after it.
    assert_eq!(
        starts(&jobs, &config(100, SchedulerKind::Conservative, Queue)),
        [0, 100, 0, 200]
    );
    assert_eq!(
        starts(&jobs, &config(100, SchedulerKind::Conservative, Shortest)),
        [0, 100, 200, 0]
    );
}

#[test]
fn issue_33_sjbf_keeps_the_first_come_head_where_order_sjf_does_not() {
    // 100 processors; (submit, runtime, procs, requested) = (0, 100, 100, 100),
    // (1, 1000, 60, 1000), (2, 10, 60, 60).
    let jobs = vec![
        common::job(1, 0, 100, 100, 100),
        common::job(2, 1, 60, 1000, 1000),
        common::job(3, 2, 60, 10, 60),
    ];
    // SJBF: at 100 the first-come job 2 fits and starts; job 3 then waits for it (1100).
    let sjbf = config(100, SchedulerKind::Easy, CandidateOrder::Shortest);
    assert_eq!(starts(&jobs, &sjbf), [0, 100, 1100]);
    // `order: sjf` sorts the head too: job 3 starts first at 100, job 2 when it ends (110).
    let mut sjf = common::pool(100, SchedulerKind::Easy);
    sjf.order = OrderSpec::of(OrderKind::Sjf);
    assert_eq!(starts(&jobs, &sjf), [0, 110, 100]);
}

#[test]
fn a_candidate_order_on_a_topology_is_refused_not_ignored() {
    use schedlab::sim::topology::{Cluster, NodeClass};
    use schedlab::sim::{Allocation, Topology};
    let mut config = config(4, SchedulerKind::Easy, CandidateOrder::Shortest);
    config.machine = Machine::topology(Topology::new(vec![Cluster::new(
        "c",
        Allocation::Shared,
        vec![NodeClass::new("n", 100, 1, 0)],
    )]));
    let err = simulate(&Workload::new(competing_candidates()), &config).unwrap_err();
    assert!(err.to_string().contains("backfill order shortest"), "{err}");
}

fn arb_workload() -> impl Strategy<Value = Vec<Job>> {
    // Sorted by submission, so that workload indices are positions in this vector.
    prop::collection::vec((0i64..300, 1u32..=24, 1i64..100, 0i64..40), 1..50).prop_map(|mut raw| {
        raw.sort_by_key(|r| r.0);
        raw.into_iter()
            .enumerate()
            .map(|(i, (submit, procs, runtime, extra))| {
                common::job(i as u64 + 1, submit, procs, runtime, runtime + extra)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(200))]

    /// `submission` candidates over submission order walk a materialised copy of the queue
    /// and re-sort it at every blocked job; the schedules are those of the direct walk.
    #[test]
    fn submission_candidates_over_submission_order_change_nothing(jobs in arb_workload()) {
        for rule in [SchedulerKind::Easy, SchedulerKind::Aggressive, SchedulerKind::Conservative] {
            let direct = starts(&jobs, &config(20, rule, CandidateOrder::Queue));
            let resorted = starts(&jobs, &config(20, rule, CandidateOrder::Submission));
            prop_assert_eq!(direct, resorted, "{}", rule);
        }
    }

    /// Under every candidate order and rule, no job starts before its submission and the
    /// processors in use never exceed the machine's.
    #[test]
    fn every_candidate_order_keeps_the_machine_within_capacity(jobs in arb_workload()) {
        for candidates in CandidateOrder::ALL {
            for rule in [SchedulerKind::Easy, SchedulerKind::Aggressive, SchedulerKind::Conservative] {
                let out = simulate(&Workload::new(jobs.clone()), &config(20, rule, candidates))
                    .expect("the run succeeds");
                let mut events: Vec<(Time, i64)> = Vec::new();
                for o in &out.jobs {
                    prop_assert!(o.start >= jobs[o.job as usize].submit);
                    events.push((o.start, o.units as i64));
                    events.push((o.end, -(o.units as i64)));
                }
                events.sort();
                let mut used = 0;
                for (_, d) in events {
                    used += d;
                    prop_assert!(used <= 20);
                }
            }
        }
    }
}
