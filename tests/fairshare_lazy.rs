//! The fairshare order (the waiting jobs kept by user between calls, the users kept sorted),
//! read lazily (`QueueOrder::begin` and `next`) or written whole (`QueueOrder::order`), against
//! the order bucketed and sorted afresh at every call (`common::fairshare_reference`, the
//! implementation before session 24 kept as the reference): on random queues
//! evolving by arrivals, starts, ends, out-of-order insertions and jobs withdrawn without
//! starting, with random usages, shares, charging, decay and re-ordering periods, both give the
//! same positions at every call — also when a pass is abandoned part-way, as FCFS does, and
//! when it hands over only the jobs a `Within` admits, as EASY's backfilling asks: exactly the
//! whole order's admitted jobs, in its order.
//!
//! The lazy order keeps its waiting users sorted between calls and re-places only those whose
//! key or first job changed; a second property runs long histories of many users (two-level
//! shares, decay instants crossed, whole orders asked of the lazy side between passes) where
//! that bookkeeping, if wrong, would leave a user at a stale place; a third asks for the whole
//! order at most calls, as conservative and node-level EASY do (as positions, or as the jobs
//! themselves, `QueueOrder::order_jobs`, which pool conservative reads, or as their indices,
//! `QueueOrder::order_runs`, which node-level EASY reads: runs of each user alone at their
//! key, which it passes over whole by their stamps, read where the order keeps them).

mod common;

use common::fairshare_reference::FairshareReference;
use proptest::prelude::*;
use schedlab::sim::fairshare::{FairshareSpec, FairshareState};
use schedlab::sim::queue::Queue;
use schedlab::sim::scheduler::QueuedJob;
use schedlab::sim::scheduler::order::{
    FairshareOrder, NO_OWNER, OrderRuns, QueueOrder, Reorder, Within,
};
use schedlab::sim::{Job, Machine, ResourceVec, Time, Workload};
use std::collections::HashMap;

/// One step of the run: `arrive` jobs arrive (`out_of_order`: the next is held back, or the
/// one held is inserted at its place), the jobs at
/// the positions picked by `start` (indices modulo the queue) start, `read` limits how far the
/// lazy pass is read before the comparison of that prefix, and `end` running jobs end; `whole`:
/// the lazy side is asked for the whole order this call instead (a rule that writes it whole),
/// as runs when `within` is set (`QueueOrder::order_runs`), as the jobs themselves
/// when `read` is (`QueueOrder::order_jobs`), else as positions.
#[derive(Clone, Debug)]
struct Step {
    whole: bool,
    dt: Time,
    arrive: usize,
    out_of_order: bool,
    start: Vec<usize>,
    withdraw: Option<usize>,
    read: Option<usize>,
    within: Option<Within>,
    end: usize,
}

/// A step; `whole`: how often the whole order is asked of the kept side.
fn arb_step(whole: f64) -> impl Strategy<Value = Step> {
    (
        0..40i64,
        0..5usize,
        prop::bool::weighted(0.1),
        prop::collection::vec(0..64usize, 0..4),
        prop::option::weighted(0.08, 0..64usize),
        prop::option::weighted(0.3, 0..6usize),
        prop::option::weighted(0.4, (0..4u64, 0..30i64, 0..3u64)),
        0..3usize,
        prop::bool::weighted(whole),
    )
        .prop_map(
            |(dt, arrive, out_of_order, start, withdraw, read, within, end, whole)| Step {
                whole,
                dt,
                arrive,
                out_of_order,
                start,
                withdraw,
                read,
                within: within.map(|(units, time, extra)| Within { units, time, extra }),
                end,
            },
        )
}

fn queued(j: &Job, job: u32) -> QueuedJob {
    QueuedJob {
        job,
        submit: j.submit,
        requested_time: j.requested_time,
        demand: ResourceVec::units(u64::from(j.procs)),
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(400))]

    #[test]
    fn the_lazy_fairshare_order_is_the_whole_order(
        // Few users, procs and runtimes: equal usages (equal keys) are common.
        jobs in prop::collection::vec((1..=4i32, 1..=2u32, prop::sample::select(vec![10i64, 20])), 1..80),
        (spec, reorder) in common::arb_workload::arb_fairshare(1, 0.2),
        steps in prop::collection::vec(arb_step(0.05), 1..60),
    ) {
        check(&workload(&jobs, None), &spec, reorder, steps)?;
    }

    #[test]
    fn the_users_kept_sorted_are_sorted_afresh(
        // Many users in three groups, few sizes: equal keys are common and most calls touch
        // few of the users.
        jobs in prop::collection::vec((1..=12i32, 1..=2u32, prop::sample::select(vec![10i64, 20])), 1..160),
        (spec, reorder) in common::arb_workload::arb_fairshare(1, 0.2),
        steps in prop::collection::vec(arb_step(0.05), 1..120),
    ) {
        check(&workload(&jobs, Some(3)), &spec, reorder, steps)?;
    }

    #[test]
    fn the_whole_order_from_the_kept_sort_is_the_full_sort(
        // Many users, one or three groups; the whole order at most calls, read lazily between.
        jobs in prop::collection::vec((1..=12i32, 1..=2u32, prop::sample::select(vec![10i64, 20])), 1..160),
        groups in prop::option::of(Just(3)),
        (spec, reorder) in common::arb_workload::arb_fairshare(1, 0.2),
        steps in prop::collection::vec(arb_step(0.8), 1..120),
    ) {
        check(&workload(&jobs, groups), &spec, reorder, steps)?;
    }
}

/// Jobs of (user, processors, runtime), each requesting 5 s more than it runs; with `groups`,
/// user u in group u mod `groups`.
fn workload(jobs: &[(i32, u32, i64)], groups: Option<i32>) -> Workload {
    Workload::new(
        jobs.iter()
            .map(|&(user, procs, runtime)| Job {
                user,
                group: groups.map_or(Job::default().group, |g| user % g),
                procs,
                runtime,
                requested_time: runtime + 5,
                ..Job::default()
            })
            .collect(),
    )
}

/// The runs of an order (`OrderRuns`): their jobs in order are `want`; an owned run holds
/// every waiting job of one user (`owners`: the user each owner was seen as) and nothing else;
/// and a run of an owner with a stamp seen before (`stamped`) holds the same jobs as then.
fn check_runs(
    workload: &Workload,
    queue: &Queue,
    want: &[u32],
    runs: OrderRuns<'_>,
    owners: &mut HashMap<u32, i32>,
    stamped: &mut HashMap<(u32, u64), Vec<u32>>,
) -> Result<(), TestCaseError> {
    let all: Vec<u32> = runs.from(0).collect();
    prop_assert_eq!(&all[..], want);
    // Read from any place, the same jobs on.
    for k in 0..=want.len() {
        let from: Vec<u32> = runs.from(k).collect();
        prop_assert_eq!(&from[..], &want[k..]);
    }
    for run in runs.iter() {
        prop_assert!(!run.jobs.is_empty(), "runs are not empty");
        let jobs: Vec<u32> = run.jobs.iter().map(|q| q.job).collect();
        if run.owner == NO_OWNER {
            continue;
        }
        let user = workload.jobs[jobs[0] as usize].user;
        prop_assert_eq!(*owners.entry(run.owner).or_insert(user), user);
        let waiting: Vec<u32> = queue
            .iter()
            .map(|q| q.job)
            .filter(|&j| workload.jobs[j as usize].user == user)
            .collect();
        prop_assert_eq!(&jobs, &waiting, "a run holds its owner's waiting jobs");
        let then = stamped.entry((run.owner, run.stamp)).or_insert(waiting);
        prop_assert_eq!(&then[..], &jobs[..], "a stamp names one set of jobs");
    }
    Ok(())
}

/// Runs `steps` on the order and the reference built alike, comparing their orders at every
/// call.
fn check(
    workload: &Workload,
    spec: &FairshareSpec,
    reorder: Reorder,
    steps: Vec<Step>,
) -> Result<(), TestCaseError> {
    let machine = Machine::pool(8);
    let state = || FairshareState::new(workload, &machine, spec).unwrap();
    let mut whole = FairshareReference::new(state(), reorder);
    let mut lazy = FairshareOrder::new(state(), reorder);
    let mut queue = Queue::default();
    let mut pending: Vec<u32> = (0..workload.jobs.len() as u32).rev().collect();
    let mut running: Vec<(u32, Time)> = Vec::new();
    let mut held: Option<u32> = None;
    let (mut now, mut expected, mut got) = (0, Vec::new(), Vec::new());
    let mut got_jobs = Vec::new();
    let (mut owners, mut stamped) = (HashMap::new(), HashMap::new());
    for step in steps {
        now += step.dt;
        // Ends, the earliest started first, reported to both before the call.
        for (job, _) in running.drain(..step.end.min(running.len())) {
            whole.ended(job, now);
            lazy.ended(job, now);
        }
        // A job held back on arrival (a queue limit) is made eligible after later ones:
        // inserted at its place.
        if step.out_of_order {
            match held.take() {
                Some(job) => queue.insert(queued(&workload.jobs[job as usize], job)),
                None => held = pending.pop(),
            }
        }
        for _ in 0..step.arrive {
            let Some(job) = pending.pop() else { break };
            queue.push(queued(&workload.jobs[job as usize], job));
        }
        whole.order(now, &queue, &workload.jobs, &mut expected);
        if step.whole && step.within.is_some() {
            // The whole order as runs (`QueueOrder::order_runs`, as
            // node-level EASY asks it).
            let want: Vec<u32> = expected.iter().map(|&pos| queue[pos].job).collect();
            let runs = lazy.order_runs(now, &queue, &workload.jobs);
            prop_assert!(runs.is_some());
            check_runs(
                workload,
                &queue,
                &want,
                runs.unwrap(),
                &mut owners,
                &mut stamped,
            )?;
        } else if step.whole && step.read.is_some() {
            // The whole order written as the jobs themselves (`QueueOrder::order_jobs`, as
            // pool conservative asks it): the jobs at the reference's positions.
            prop_assert!(lazy.order_jobs(now, &queue, &workload.jobs, &mut got_jobs));
            let want: Vec<QueuedJob> = expected.iter().map(|&pos| queue[pos]).collect();
            prop_assert_eq!(&got_jobs, &want);
        } else if step.whole {
            lazy.order(now, &queue, &workload.jobs, &mut got);
            prop_assert_eq!(&got, &expected);
        } else {
            lazy_pass(
                &mut lazy,
                &step,
                &queue,
                &workload.jobs,
                now,
                &mut expected,
                &mut got,
            )?;
        }
        // Starts: the picked positions, reported to both.
        let mut starts: Vec<usize> = if queue.is_empty() {
            Vec::new()
        } else {
            step.start.iter().map(|&i| i % queue.len()).collect()
        };
        starts.sort_unstable();
        starts.dedup();
        for &pos in &starts {
            let job = queue[pos].job;
            whole.started(now, job, 0);
            lazy.started(now, job, 0);
            running.push((job, now));
        }
        // A job withdrawn without starting (a CPU quota): the engine marks the change.
        if let Some(i) = step.withdraw {
            common::withdraw_one(&mut queue, &mut starts, i);
        }
        queue.remove_positions(&starts);
    }
    Ok(())
}

/// One lazy pass of `step` over `queue`, compared with the whole order `expected` (read as far
/// as the step reads, or only the jobs its `Within` admits).
fn lazy_pass(
    lazy: &mut FairshareOrder,
    step: &Step,
    queue: &Queue,
    jobs: &[Job],
    now: Time,
    expected: &mut Vec<usize>,
    got: &mut Vec<usize>,
) -> Result<(), TestCaseError> {
    prop_assert!(lazy.begin(now, queue, jobs));
    got.clear();
    if let Some(within) = step.within {
        // Only the admitted jobs, in the whole order's order.
        while let Some(q) = lazy.next_waiting(within) {
            got.push(queue.position_of(q.job).unwrap());
            prop_assert_eq!(q, queue[*got.last().unwrap()]);
        }
        expected.retain(|&pos| {
            let (units, time) = (queue[pos].demand.unit_count(), queue[pos].requested_time);
            units <= within.units && (time <= within.time || units <= within.extra)
        });
        prop_assert_eq!(&*got, &*expected);
    }
    while step.within.is_none()
        && got.len() < step.read.unwrap_or(usize::MAX)
        && let Some((pos, q)) = lazy.next(queue)
    {
        prop_assert_eq!(q, queue[pos]);
        got.push(pos);
    }
    prop_assert_eq!(&got[..], &expected[..got.len()]);
    if step.read.is_none() && step.within.is_none() {
        prop_assert_eq!(got.len(), queue.len());
    }
    Ok(())
}
