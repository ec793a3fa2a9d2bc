//! Expected end times (issue 13; Tóth & Klusáček, "User-Aware Metrics for Measuring Quality of
//! Parallel Job Schedules"): the step-function implementation against a literal transcription
//! of the paper's Algorithm 1 on random inputs, the paper's own examples (Table 1, Fig. 3,
//! Fig. 1) and hand-worked cases.

use std::collections::BTreeMap;

mod common;

use proptest::prelude::*;
use schedlab::sim::Time;
use schedlab::sim::metrics::eet::{
    CapacityRule, EetJob, PerResource, Ratio, Resource, evaluate, heatmap, share,
};

/// Algorithm 1 of the paper (section 3.2), transcribed line by line: the share as one
/// capacity per second, each job walking it second by second from its arrival. `jobs` are
/// (arrival, rescReq, runtime); EETs come back in the given order.
fn algorithm_1(jobs: &[(Time, u128, Time)], expected_capacity: u128) -> Vec<Time> {
    // Lines 1–3: for time = 0 to ScheduleEnd: capacity_time = ExpectedCapacity (the vector
    // grows on demand, every new second holding ExpectedCapacity).
    let mut capacity: Vec<u128> = Vec::new();
    // Line 4: sort arrival(jobs) (stable: ties keep the given order).
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| jobs[i].0);
    let mut eet = vec![0; jobs.len()];
    // Line 5: for j = 0 to JobCount.
    for j in order {
        let (arrival, resc_req, runtime) = jobs[j];
        // Line 6: jobCapacity = rescReq_j · runtime_j (signed: the last step may overshoot).
        let mut job_capacity = resc_req as i128 * runtime as i128;
        // Line 7: time = arrival_j.
        let mut time = arrival;
        // Line 8: while jobCapacity > 0.
        while job_capacity > 0 {
            if time as usize >= capacity.len() {
                capacity.resize(time as usize + 1, expected_capacity);
            }
            // Line 9: consumedCapacity = min(capacity_time, rescReq_j).
            let consumed = capacity[time as usize].min(resc_req);
            // Line 10: capacity_time = capacity_time − consumedCapacity.
            capacity[time as usize] -= consumed;
            // Line 11: jobCapacity = jobCapacity − consumedCapacity.
            job_capacity -= consumed as i128;
            // Line 12: time = time + 1.
            time += 1;
        }
        // Line 14: EET_j = time.
        eet[j] = time;
    }
    eet
}

fn job(id: u64, user: i32, submit: Time, cpus: u64, runtime: Time, start: Time) -> EetJob {
    EetJob {
        id,
        user,
        group: 1,
        submit,
        runtime,
        start: Some(start),
        request: PerResource::new(cpus, 0, 0),
    }
}

fn cpus(n: u64) -> CapacityRule {
    CapacityRule::equal_split(PerResource::new(Some(n), None, None))
}

fn eets(report: &schedlab::sim::metrics::eet::EetReport) -> Vec<Time> {
    report.jobs.iter().map(|j| j.eet).collect()
}

#[test]
fn table_1_one_user_with_capacity_3() {
    // The paper's Table 1 and Fig. 2: ExpectedCapacity = 3 (one user of a 3-CPU system).
    // Job 1 (arrival 0, 2 units, runtime 4): 3 ≥ 2, so it keeps its shape: EET 4, leaving one
    // unit on [0, 4). Job 2 (arrival 1, 2 units, runtime 1): one unit at 1, one at 2: EET 3.
    let jobs = [job(1, 7, 0, 2, 4, 0), job(2, 7, 1, 2, 1, 1)];
    let r = evaluate(&jobs, &cpus(3)).unwrap();
    assert_eq!(eets(&r), vec![4, 3]);
    assert_eq!(r.users[0].capacity[Resource::Cpu], Some(Ratio::integer(3)));
    assert_eq!(algorithm_1(&[(0, 2, 4), (1, 2, 1)], 3), vec![4, 3]);
}

#[test]
fn figure_3_two_users_on_six_resources_no_violation_although_job_4_waits() {
    // Two identical users, each with Table 1's jobs, on 6 resources: 6 / 2 users = 3 each,
    // so EETs 4 and 3 per user. Fig. 3's schedule: Job1 (user A) on Resc1–2 over [0, 4),
    // Job2 (A) on Resc3–4 over [1, 2), Job3 (B) on Resc5–6 over [0, 4), Job4 (B) waits for
    // Resc3–4 and runs [2, 3): one unit of waiting, yet it ends at 3 = its EET.
    let jobs = [
        job(1, 1, 0, 2, 4, 0),
        job(2, 1, 1, 2, 1, 1),
        job(3, 2, 0, 2, 4, 0),
        job(4, 2, 1, 2, 1, 2),
    ];
    let r = evaluate(&jobs, &cpus(6)).unwrap();
    assert_eq!(eets(&r), vec![4, 3, 4, 3]);
    assert!(r.jobs.iter().all(|j| j.violated == Some(false)));
    assert_eq!(r.summary.violated_jobs, 0);
    assert_eq!(r.summary.veet.max, Some(0.0));
    // Job 4 waited (start 2 > submit 1) but is not tardy.
    assert_eq!(r.jobs[3].tardiness, Some(0));
}

#[test]
fn figure_1_wait_time_optimal_versus_fair_schedule() {
    // Fig. 1: two users on 2 resources (capacity 1 each), all jobs arrive at 0. Blue has four
    // 1-unit jobs of length 1 (Job1–4), orange two of length 2 (Job5–6): the same amount of
    // work. Blue's EETs are 1, 2, 3, 4; orange's 2 and 4.
    let schedule = |starts: [Time; 6]| {
        let lengths = [1, 1, 1, 1, 2, 2];
        (0..6)
            .map(|i| {
                let user = if i < 4 { 1 } else { 2 };
                job(i as u64 + 1, user, 0, 1, lengths[i], starts[i])
            })
            .collect::<Vec<_>>()
    };
    let mean_wait = |jobs: &[EetJob]| {
        jobs.iter()
            .map(|j| j.start.unwrap() - j.submit)
            .sum::<Time>() as f64
            / 6.0
    };
    // (a) optimised for wait: Resc1 runs Job1, Job2, Job5; Resc2 Job3, Job4, Job6.
    let a = schedule([0, 1, 0, 1, 2, 2]);
    // (b) fair: Resc1 runs Job1–4 in turn, Resc2 Job5 then Job6.
    let b = schedule([0, 1, 2, 3, 0, 2]);
    assert_eq!(mean_wait(&a), 1.0);
    assert_eq!(mean_wait(&b), 4.0 / 3.0);
    let ra = evaluate(&a, &cpus(2)).unwrap();
    let rb = evaluate(&b, &cpus(2)).unwrap();
    assert_eq!(eets(&ra), vec![1, 2, 3, 4, 2, 4]);
    // (a) violates Job5's EET (ends 4 > 2), by 2: orange's VEET is 50 %, WT 1 CPU × 2 s.
    assert_eq!(ra.summary.violated_jobs, 1);
    assert_eq!(ra.jobs[4].tardiness, Some(2));
    let orange = &ra.users[1];
    assert_eq!((orange.veet, orange.weighted_tardiness), (Some(50.0), 2));
    assert_eq!(ra.summary.users_veet_at_most_35, Some(0.5));
    // (b), worse by mean wait, violates nothing.
    assert_eq!(rb.summary.violated_jobs, 0);
    assert_eq!(rb.summary.users_veet_at_most_35, Some(1.0));
}

#[test]
fn stretching_a_job_wider_than_the_share_but_never_compressing() {
    // One user of a 2-CPU system. A 4-CPU job of 3 s needs 12 CPU-seconds and may take 2 per
    // second: it is stretched to 6 s, EET 6.
    let r = evaluate(&[job(1, 1, 0, 4, 3, 0)], &cpus(2)).unwrap();
    assert_eq!(eets(&r), vec![6]);
    // Completing at 3 (it ran on 4 real CPUs at once) is well within.
    assert_eq!(r.jobs[0].violated, Some(false));
    // On an 8-CPU share a 2-CPU job of 5 s keeps its length: EET 5, not 5·2/8.
    let r = evaluate(&[job(1, 1, 0, 2, 5, 0)], &cpus(8)).unwrap();
    assert_eq!(eets(&r), vec![5]);
    // Completing one second late is a violation of 1 s, weighted by its 2 CPUs.
    let r = evaluate(&[job(1, 1, 0, 2, 5, 1)], &cpus(8)).unwrap();
    assert_eq!(
        (r.jobs[0].violated, r.jobs[0].tardiness),
        (Some(true), Some(1))
    );
    assert_eq!(r.users[0].weighted_tardiness, 2);
}

#[test]
fn the_last_step_takes_a_full_step() {
    // Capacity 4. A (arrival 0, 3 CPUs, 1 s): takes 3 at second 0, EET 1; 1 left at 0.
    // B (0, 2 CPUs, 2 s) needs 4: second 0 gives 1 (3 to go), second 1 gives 2 (1 to go),
    // second 2 gives min(4, 2) = 2 — one more than needed, as Algorithm 1 line 9 says: EET 3,
    // and 2 (not 3) left at second 2.
    // C (2, 3 CPUs, 1 s) needs 3: second 2 gives 2, second 3 gives 3: EET 4. Had B taken only
    // what it still needed at second 2, C would have found 3 there and ended at 3.
    let jobs = [
        job(1, 1, 0, 3, 1, 0),
        job(2, 1, 0, 2, 2, 0),
        job(3, 1, 2, 3, 1, 2),
    ];
    let r = evaluate(&jobs, &cpus(4)).unwrap();
    assert_eq!(eets(&r), vec![1, 3, 4]);
    assert_eq!(
        algorithm_1(&[(0, 3, 1), (0, 2, 2), (2, 3, 1)], 4),
        vec![1, 3, 4]
    );
}

#[test]
fn an_arrival_while_the_share_is_used_up_waits_for_it() {
    // Capacity 2. A (0, 2 CPUs, 10 s) uses the whole share over [0, 10): EET 10. B arrives at
    // 3 asking for 1 CPU for 2 s: nothing is left until 10, then it takes 1 at 10 and 11:
    // EET 12, latest start 10. Started at 10 it is on time; started at 11 it is 1 s late.
    let on_time = [job(1, 1, 0, 2, 10, 0), job(2, 1, 3, 1, 2, 10)];
    let r = evaluate(&on_time, &cpus(2)).unwrap();
    assert_eq!(eets(&r), vec![10, 12]);
    assert_eq!(r.jobs[1].latest_start, 10);
    assert_eq!(r.jobs[1].violated, Some(false));
    let late = [job(1, 1, 0, 2, 10, 0), job(2, 1, 3, 1, 2, 11)];
    let r = evaluate(&late, &cpus(2)).unwrap();
    assert_eq!(r.jobs[1].tardiness, Some(1));
}

#[test]
fn two_resources_the_scarcer_decides() {
    // System: 8 CPUs and 200 KB for two users: 4 CPUs and 100 KB each.
    // Job 1 (0, 2 CPUs, 80 KB, 5 s): fits both shares, EET 5; left: 2 CPUs, 20 KB on [0, 5).
    // Job 2 (0, 2 CPUs, 60 KB, 5 s): CPU share: 2 left ≥ 2, EET 5. Memory: 300 KB·s needed;
    // 20 per second on [0, 5) gives 100, then 60 per second from 5: ⌈200 / 60⌉ = 4 s → 9.
    // EET = max(5, 9) = 9.
    let mem = |id, user, cpus, kb, start| EetJob {
        id,
        user,
        group: 1,
        submit: 0,
        runtime: 5,
        start: Some(start),
        request: PerResource::new(cpus, kb, 0),
    };
    let jobs = [mem(1, 1, 2, 80, 0), mem(2, 1, 2, 60, 3), mem(3, 2, 1, 1, 0)];
    let rule = CapacityRule::equal_split(PerResource::new(Some(8), Some(200), None));
    let r = evaluate(&jobs, &rule).unwrap();
    assert_eq!(r.jobs[1].by_resource[Resource::Cpu], Some(5));
    assert_eq!(r.jobs[1].by_resource[Resource::Memory], Some(9));
    assert_eq!(r.jobs[1].by_resource[Resource::Gpu], None);
    assert_eq!(eets(&r), vec![5, 9, 5]);
    // Job 2 ran [3, 8): late by the CPU EET, on time by the memory one.
    assert_eq!(r.jobs[1].violated, Some(false));
    // Without memory modelled, the CPU share alone decides: 8 > 5, a violation.
    let r = evaluate(&jobs, &cpus(8)).unwrap();
    assert_eq!((r.jobs[1].eet, r.jobs[1].tardiness), (5, Some(3)));
}

#[test]
fn a_fractional_capacity_is_exact() {
    // 7 CPUs for two users: 3.5 each. A 7-CPU job of 1 s takes 3.5 per second: EET 2.
    let jobs = [job(1, 1, 0, 7, 1, 0), job(2, 2, 0, 1, 1, 0)];
    let r = evaluate(&jobs, &cpus(7)).unwrap();
    assert_eq!(r.users[0].capacity[Resource::Cpu], Ratio::new(7, 2));
    assert_eq!(eets(&r), vec![2, 1]);
    // Scaled ×2 (the capacity sweep): 7 each, EET 1.
    let mut rule = cpus(7);
    rule.scale = Ratio::integer(2);
    assert_eq!(eets(&evaluate(&jobs, &rule).unwrap()), vec![1, 1]);
}

#[test]
fn unknown_starts_take_their_place_but_are_not_judged() {
    // Capacity 2: A (0, 2 CPUs, 10 s) with an unknown start still uses the share, so B gets
    // EET 12 as above; A is not judged.
    let mut a = job(1, 1, 0, 2, 10, 0);
    a.start = None;
    let jobs = [a, job(2, 1, 3, 1, 2, 20)];
    let r = evaluate(&jobs, &cpus(2)).unwrap();
    assert_eq!(eets(&r), vec![10, 12]);
    assert_eq!((r.jobs[0].violated, r.jobs[0].tardiness), (None, None));
    let u = &r.users[0];
    assert_eq!(
        (u.jobs, u.judged, u.violated, u.veet),
        (2, 1, 1, Some(100.0))
    );
    assert_eq!((u.tardiness, u.weighted_tardiness), (10, 10));
}

#[test]
fn the_heatmap_counts_each_violation_from_its_latest_start_for_its_tardiness() {
    // Fig. 4 in minutes: one user of a 1-CPU system, a 1-CPU job arriving at 0 running 10 min
    // has EET 10 min and latest start 0; started 2 min late it is tardy by 2 min, plotted in
    // the cells of minutes 0 and 1. A second job, violated by 1 min, overlaps the first one
    // in minute 1.
    let m = 60;
    let jobs = [
        job(1, 1, 0, 1, 10 * m, 2 * m),
        job(2, 2, m, 1, 5 * m, 2 * m),
        job(3, 3, 0, 1, m, 0),
    ];
    let r = evaluate(&jobs, &cpus(3)).unwrap();
    assert_eq!(eets(&r), vec![10 * m, 6 * m, m]);
    let h = heatmap(&jobs, &r, Some(m)).unwrap();
    assert_eq!((h.axis.start, h.axis.width, h.axis.bins), (0, m, 12));
    // Rows by total tardiness: user 1 (120 s), user 2 (60 s), user 3 (0).
    let users: Vec<i32> = h.rows.iter().map(|row| row.user).collect();
    assert_eq!(users, vec![1, 2, 3]);
    let cells = |i: usize| {
        h.rows[i]
            .cells
            .iter()
            .map(|c| (c.bin, c.mean, c.max))
            .collect::<Vec<_>>()
    };
    assert_eq!(cells(0), vec![(0, 1.0, 1), (1, 1.0, 1)]);
    assert_eq!(cells(1), vec![(1, 1.0, 1)]);
    assert!(h.rows[2].cells.is_empty());
    // Usage: job 1 holds 1 CPU over [2, 12) min, job 2 over [2, 7), job 3 over [0, 1).
    assert_eq!(h.usage[0].cpu, 1.0);
    assert_eq!(h.usage[1].cpu, 0.0);
    assert_eq!(h.usage[3].cpu, 2.0);
    assert_eq!(h.usage[8].cpu, 1.0);
    // Coarser bins: the mean is time-weighted. With 5-minute bins, user 1's two minutes in
    // bin 0 give 2/5, and the row sums to Σ T_j / width.
    let h = heatmap(&jobs, &r, Some(5 * m)).unwrap();
    assert_eq!(h.rows[0].cells.len(), 1);
    assert_eq!(h.rows[0].cells[0].mean, 0.4);
}

/// A small random schedule: users 0–3, arrivals, CPU and memory requests, runtimes, starts.
fn schedule_strategy() -> impl Strategy<Value = Vec<EetJob>> {
    proptest::collection::vec(
        (
            0i32..4,
            0i64..40,
            0u64..6,
            0u64..6,
            0i64..8,
            0i64..15,
            any::<bool>(),
        ),
        0..50,
    )
    .prop_map(|rows| {
        rows.into_iter()
            .enumerate()
            .map(
                |(i, (user, submit, cpus, memory, runtime, wait, known))| EetJob {
                    id: i as u64,
                    user,
                    group: user % 2,
                    submit,
                    runtime,
                    start: known.then_some(submit + wait),
                    request: PerResource::new(cpus, memory, 0),
                },
            )
            .collect()
    })
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(1000))]

    /// The O(n log n) share gives exactly Algorithm 1's EETs, whatever the jobs.
    #[test]
    fn the_share_matches_algorithm_1(
        jobs in proptest::collection::vec((0i64..60, 0u128..9, 0i64..12), 0..40),
        capacity in 1u128..10,
    ) {
        prop_assert_eq!(share::expected_end_times(&jobs, capacity).unwrap(), algorithm_1(&jobs, capacity));
    }

    /// Bursts: many jobs at a few arrivals, requests wider than the share (stretching).
    #[test]
    fn the_share_matches_algorithm_1_on_bursts(
        jobs in proptest::collection::vec((0i64..4, 1u128..20, 1i64..6), 0..60),
        capacity in 1u128..6,
    ) {
        let jobs: Vec<_> = jobs.into_iter().map(|(a, r, p)| (a * 7, r, p)).collect();
        prop_assert_eq!(share::expected_end_times(&jobs, capacity).unwrap(), algorithm_1(&jobs, capacity));
    }

    /// The whole metric against Algorithm 1 run per user and resource (amounts scaled to whole
    /// units by the capacity's denominator), the EET as the latest over CPU and memory, and
    /// Formulas 1–3 recomputed from it.
    #[test]
    fn evaluate_matches_algorithm_1_per_user_and_resource(
        jobs in schedule_strategy(),
        system_cpus in 1u64..12,
        system_memory in 1u64..12,
    ) {
        let rule = CapacityRule::equal_split(PerResource::new(Some(system_cpus), Some(system_memory), None));
        let report = evaluate(&jobs, &rule).unwrap();
        let users: BTreeMap<i32, Vec<usize>> = jobs.iter().enumerate().fold(BTreeMap::new(), |mut m, (i, j)| {
            m.entry(j.user).or_insert_with(Vec::new).push(i);
            m
        });
        let n = users.len() as u128;
        // A job asking for nothing keeps its own length (docs/metrics.md).
        let mut expected: Vec<Time> = jobs.iter().map(|j| j.submit + j.runtime).collect();
        for members in users.values() {
            for (resource, system) in [(Resource::Cpu, system_cpus), (Resource::Memory, system_memory)] {
                // Capacity system / n: in units of 1/n, capacity `system` and requests × n.
                let input: Vec<(Time, u128, Time)> = members
                    .iter()
                    .map(|&i| (jobs[i].submit, u128::from(jobs[i].request[resource]) * n, jobs[i].runtime))
                    .collect();
                let got = algorithm_1(&input, u128::from(system));
                for (k, &i) in members.iter().enumerate() {
                    expected[i] = expected[i].max(got[k]);
                }
            }
        }
        prop_assert_eq!(eets(&report), expected.clone());
        for (user, members) in &users {
            let u = report.users.iter().find(|u| u.user == *user).unwrap();
            let judged: Vec<usize> = members.iter().copied().filter(|&i| jobs[i].start.is_some()).collect();
            let tardy = |i: usize| (jobs[i].start.unwrap() + jobs[i].runtime - expected[i]).max(0);
            let violated = judged.iter().filter(|&&i| tardy(i) > 0).count() as u64;
            prop_assert_eq!(u.violated, violated);
            prop_assert_eq!(u.veet, (!judged.is_empty()).then(|| violated as f64 / judged.len() as f64 * 100.0));
            prop_assert_eq!(u.tardiness, judged.iter().map(|&i| tardy(i)).sum::<i64>());
            prop_assert_eq!(
                u.weighted_tardiness,
                judged.iter().map(|&i| tardy(i) * jobs[i].request[Resource::Cpu] as i64).sum::<i64>()
            );
        }
        // Heatmap rows add up to each user's total tardiness (in bin-width units).
        let h = heatmap(&jobs, &report, Some(7)).unwrap();
        for row in &h.rows {
            let total: f64 = row.cells.iter().map(|c| c.mean * 7.0).sum();
            prop_assert!((total - row.tardiness as f64).abs() < 1e-6, "{} vs {}", total, row.tardiness);
        }
    }
}

#[test]
fn a_job_asking_for_none_of_the_resources_keeps_its_own_length() {
    // Algorithm 1 gives a job with rescReq 0 its arrival as EET (its loop never runs); the EET
    // over resources never goes below arrival + runtime (docs/metrics.md).
    let jobs = [job(1, 1, 5, 0, 10, 5)];
    let r = evaluate(&jobs, &cpus(4)).unwrap();
    assert_eq!(r.jobs[0].by_resource[Resource::Cpu], Some(5));
    assert_eq!((r.jobs[0].eet, r.jobs[0].violated), (15, Some(false)));
}

#[test]
fn a_simulated_schedule_is_judged_through_its_records() {
    // Fig. 1 run by FCFS on 2 processors: blue submits four 1 s jobs, orange two 2 s jobs, all
    // at 0 in that order. FCFS gives exactly Fig. 1(a) (waits 0, 0, 1, 1, 2, 2): orange's first
    // job, EET 2, ends at 4.
    use schedlab::sim::metrics::job_records;
    use schedlab::sim::{Job, SchedulerKind, Workload, simulate};
    let job = |id: u64, runtime: Time, user: i32| Job {
        id,
        submit: 0,
        runtime,
        requested_time: runtime,
        procs: 1,
        user,
        group: 1,
        queue: -1,
        partition: -1,
        ..Job::default()
    };
    let workload = Workload::new(vec![
        job(1, 1, 1),
        job(2, 1, 1),
        job(3, 1, 1),
        job(4, 1, 1),
        job(5, 2, 2),
        job(6, 2, 2),
    ]);
    let outcome = simulate(&workload, &common::pool(2, SchedulerKind::Fcfs)).unwrap();
    let records = job_records(&workload, &outcome, 10);
    let jobs: Vec<EetJob> = records
        .iter()
        .map(|r| EetJob::from_record(r, &workload))
        .collect();
    let report = evaluate(&jobs, &cpus(2)).unwrap();
    assert_eq!(eets(&report), vec![1, 2, 3, 4, 2, 4]);
    assert_eq!(report.summary.violated_jobs, 1);
    assert_eq!(report.jobs[4].tardiness, Some(2));
}
