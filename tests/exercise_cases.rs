//! Hand-built cases in the spirit of the exercise's l_simple, l_full and l_full_bf
//! (`papers/exercise-fcfs-vs-easy-backfilling.txt`, "To help you with testing").

mod common;

use common::{job, pool};
use schedlab::sim::{Job, SchedulerKind, SimOutcome, Workload, simulate};

/// 15 jobs using the whole machine for 20 time units each, arriving 20 apart.
fn l_simple() -> Vec<Job> {
    (0..15)
        .map(|i| job(i + 1, 20 * i as i64, 10, 20, 20))
        .collect()
}

/// 27 jobs on 10 processors that pack perfectly: rounds of (a: 5 procs × 10 s and b: 5 × 5 s
/// at T, c: 5 × 5 s at T+5) alternating with one full-width 10 × 10 s job.
fn l_full() -> Vec<Job> {
    let mut jobs = Vec::new();
    let mut t = 0;
    let mut id = 1;
    for round in 0..13 {
        if round % 2 == 0 {
            jobs.push(job(id, t, 5, 10, 10));
            jobs.push(job(id + 1, t, 5, 5, 5));
            jobs.push(job(id + 2, t + 5, 5, 5, 5));
            id += 3;
        } else {
            jobs.push(job(id, t, 10, 10, 10));
            id += 1;
        }
        t += 10;
    }
    assert_eq!(jobs.len(), 27);
    jobs
}

/// The same 27 jobs, but every full-width job arrives 6 s early — before the small job `c` of
/// the round in front of it — so FCFS blocks `c` behind it while EASY backfills `c`.
fn l_full_bf() -> Vec<Job> {
    l_full()
        .into_iter()
        .map(|mut j| {
            if j.procs == 10 {
                j.submit -= 6;
            }
            j
        })
        .collect()
}

fn run(jobs: &[Job], kind: SchedulerKind) -> (Workload, SimOutcome) {
    let workload = Workload::new(jobs.to_vec());
    let out = simulate(&workload, &pool(10, kind)).unwrap();
    assert_eq!(out.jobs.len(), jobs.len(), "every job runs");
    (workload, out)
}

/// Busy processor-seconds over capacity × [first start, last end]: 1.0 means no idle gap.
fn packing(workload: &Workload, out: &SimOutcome) -> f64 {
    let area: i64 = out
        .jobs
        .iter()
        .map(|o| (o.end - o.start) * workload.jobs[o.job as usize].procs as i64)
        .sum();
    let first = out.jobs.iter().map(|o| o.start).min().unwrap();
    let last = out.jobs.iter().map(|o| o.end).max().unwrap();
    area as f64 / (10.0 * (last - first) as f64)
}

fn total_wait(workload: &Workload, out: &SimOutcome) -> i64 {
    out.jobs
        .iter()
        .map(|o| o.start - workload.jobs[o.job as usize].submit)
        .sum()
}

#[test]
fn l_simple_runs_back_to_back_under_every_scheduler() {
    for kind in SchedulerKind::ALL {
        let (w, out) = run(&l_simple(), kind);
        assert_eq!(packing(&w, &out), 1.0, "{kind}");
        assert_eq!(total_wait(&w, &out), 0, "{kind}");
        assert!(out.jobs.iter().all(|o| !o.backfilled));
    }
}

#[test]
fn l_full_packs_perfectly_under_every_scheduler() {
    for kind in SchedulerKind::ALL {
        let (w, out) = run(&l_full(), kind);
        assert_eq!(packing(&w, &out), 1.0, "{kind}");
        assert_eq!(total_wait(&w, &out), 0, "{kind}");
    }
}

#[test]
fn l_full_bf_out_of_order_easy_beats_fcfs() {
    let (wf, fcfs) = run(&l_full_bf(), SchedulerKind::Fcfs);
    let (we, easy) = run(&l_full_bf(), SchedulerKind::Easy);
    let (wc, cons) = run(&l_full_bf(), SchedulerKind::Conservative);
    // FCFS leaves 5 processors idle while `c` waits behind the early full-width job.
    assert!(packing(&wf, &fcfs) < 1.0);
    assert_eq!(packing(&we, &easy), 1.0);
    assert_eq!(packing(&wc, &cons), 1.0);
    assert!(total_wait(&we, &easy) < total_wait(&wf, &fcfs));
    // Exactly the six `c` jobs that arrive behind an early full-width job are backfilled.
    let backfilled = easy.jobs.iter().filter(|o| o.backfilled).count();
    assert_eq!(backfilled, 6);
    assert!(fcfs.jobs.iter().all(|o| !o.backfilled));
}
