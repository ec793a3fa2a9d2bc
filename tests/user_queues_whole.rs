//! [`UserQueues`]' whole order (`write_runs`, `write_all_jobs`, `write_all`) against the
//! waiting jobs sorted afresh by (key, workload index) at every call: many users of few keys
//! (most of them tied, as the users who never started a job are at key 0), driven through
//! random arrivals, starts, key changes of a few users or of all, jobs withdrawn (the mirror
//! rebuilt) and lazy passes between writes — the groups of equal keys are merged and kept
//! between writes, brought up to date when a write meets them again, however many calls later.

mod common;

use proptest::prelude::*;
use schedlab::sim::ResourceVec;
use schedlab::sim::queue::Queue;
use schedlab::sim::scheduler::QueuedJob;
use schedlab::sim::scheduler::order::{NO_OWNER, UserQueues, Within};

/// The keys users take: mostly 0, so that most waiting users share one group.
const KEYS: [f64; 6] = [0.0, 0.0, 0.0, 1.0, 2.5, 7.0];

/// How a call reads the order.
#[derive(Clone, Copy, Debug)]
enum Read {
    Runs,
    Jobs,
    Positions,
    /// A lazy pass read this far (not the whole order: the groups kept are not brought up).
    Lazy(usize),
}

/// One call: `arrive` jobs of these users arrive; the order is read; the jobs at `start`
/// (positions modulo the queue) start, their users' keys set to the given ones; `rekey` users
/// change keys; with `all`, every user's key is redrawn (the next call sorts all afresh);
/// `withdraw` withdraws a job without starting it (the queue marked changed: the mirror is
/// rebuilt).
#[derive(Clone, Debug)]
struct Step {
    arrive: Vec<u32>,
    read: Read,
    start: Vec<(usize, usize)>,
    rekey: Vec<(u32, usize)>,
    all: Option<u64>,
    withdraw: Option<usize>,
}

fn arb_step(users: u32) -> impl Strategy<Value = Step> {
    (
        prop::collection::vec(0..users, 0..6),
        prop_oneof![
            3 => Just(Read::Runs),
            1 => Just(Read::Jobs),
            1 => Just(Read::Positions),
            1 => (0..12usize).prop_map(Read::Lazy),
        ],
        prop::collection::vec((0..256usize, 0..KEYS.len()), 0..4),
        prop::collection::vec((0..users, 0..KEYS.len()), 0..3),
        prop::option::weighted(0.05, any::<u64>()),
        prop::option::weighted(0.03, 0..256usize),
    )
        .prop_map(|(arrive, read, start, rekey, all, withdraw)| Step {
            arrive,
            read,
            start,
            rekey,
            all,
            withdraw,
        })
}

proptest! {
    #![proptest_config(common::proptest_cases(300))]

    #[test]
    fn the_whole_order_is_the_waiting_jobs_sorted_by_key_then_index(
        users in 2..40u32,
        steps in prop::collection::vec(arb_step(40), 1..150),
    ) {
        check(users, steps)?;
    }
}

fn check(users: u32, steps: Vec<Step>) -> Result<(), TestCaseError> {
    let mut q = UserQueues::new(users as usize);
    let mut queue = Queue::default();
    let mut owner: Vec<u32> = Vec::new();
    let mut keys = vec![0.0f64; users as usize];
    let mut resort = true;
    let (mut jobs, mut positions) = (Vec::new(), Vec::new());
    for step in steps {
        for &u in &step.arrive {
            let job = owner.len() as u32;
            owner.push(u % users);
            queue.push(QueuedJob {
                job,
                submit: i64::from(job),
                requested_time: 10 + i64::from(job % 7),
                demand: ResourceVec::units(u64::from(1 + job % 3)),
            });
        }
        q.sync(&queue, |job| owner[job as usize]);
        if std::mem::take(&mut resort) {
            q.begin(|u| keys[u as usize]);
        } else {
            q.begin_touched(|u| keys[u as usize]);
        }
        // The brute force: every waiting job by its user's key, then its index.
        let mut want: Vec<QueuedJob> = queue.iter().copied().collect();
        want.sort_by(|a, b| {
            keys[owner[a.job as usize] as usize]
                .total_cmp(&keys[owner[b.job as usize] as usize])
                .then(a.job.cmp(&b.job))
        });
        let want_ids: Vec<u32> = want.iter().map(|w| w.job).collect();
        match step.read {
            Read::Runs => {
                let runs = q.write_runs();
                let got: Vec<u32> = runs.from(0).collect();
                prop_assert_eq!(&got, &want_ids);
                // Each user alone at their key is one run of all their waiting jobs.
                for run in runs.iter() {
                    if run.owner != NO_OWNER {
                        let theirs = queue
                            .iter()
                            .filter(|w| owner[w.job as usize] == run.owner)
                            .count();
                        prop_assert_eq!(run.jobs.len(), theirs);
                        prop_assert!(run.jobs.iter().all(|w| owner[w.job as usize] == run.owner));
                    }
                }
            }
            Read::Jobs => {
                q.write_all_jobs(&mut jobs);
                prop_assert_eq!(&jobs, &want);
            }
            Read::Positions => {
                q.write_all(&mut positions, |job| queue.position_of(job).unwrap());
                let want: Vec<usize> = want_ids
                    .iter()
                    .map(|&job| queue.position_of(job).unwrap())
                    .collect();
                prop_assert_eq!(&positions, &want);
            }
            Read::Lazy(n) => {
                let got: Vec<u32> = std::iter::from_fn(|| q.next_job(Within::ANY))
                    .take(n)
                    .map(|j| j.job)
                    .collect();
                prop_assert_eq!(&got[..], &want_ids[..got.len()]);
            }
        }
        // Starts: each one's user touched, its key maybe changed (a charge).
        let mut starts: Vec<usize> = if queue.is_empty() {
            Vec::new()
        } else {
            step.start.iter().map(|&(i, _)| i % queue.len()).collect()
        };
        starts.sort_unstable();
        starts.dedup();
        for (&pos, &(_, key)) in starts.iter().zip(&step.start) {
            let job = queue[pos].job;
            let u = owner[job as usize];
            q.started(job, u);
            keys[u as usize] = KEYS[key];
            q.touch(u);
        }
        if let Some(i) = step.withdraw {
            common::withdraw_one(&mut queue, &mut starts, i);
        }
        queue.remove_positions(&starts);
        for &(u, key) in &step.rekey {
            let u = u % users;
            keys[u as usize] = KEYS[key];
            q.touch(u);
        }
        if let Some(seed) = step.all {
            for (u, k) in keys.iter_mut().enumerate() {
                *k = KEYS[(seed.rotate_left(u as u32 * 3) % KEYS.len() as u64) as usize];
            }
            resort = true;
        }
    }
    Ok(())
}
