//! Property tests of the engine and the three schedulers on random workloads.

mod common;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use proptest::prelude::*;
use schedlab::sim::scheduler::{Conservative, Easy, Scheduler, View};
use schedlab::sim::{
    Job, Machine, Overrun, ResourceVec, SchedulerKind, SimConfig, SimOutcome, Time, Workload,
    simulate, simulate_with,
};

fn arb_workload(max_procs: u32, exact: bool) -> impl Strategy<Value = Vec<Job>> {
    prop::collection::vec(
        (
            0i64..400,
            1u32..=max_procs + 4,
            1i64..120,
            0i64..3,
            1i64..60,
        ),
        1..60,
    )
    .prop_map(move |raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (submit, procs, runtime, mult, extra))| {
                let requested = if exact {
                    runtime
                } else {
                    (runtime * mult).max(1) + extra
                };
                common::job(i as u64 + 1, submit, procs, runtime, requested)
            })
            .collect()
    })
}

fn arb_machine() -> impl Strategy<Value = Machine> {
    prop_oneof![
        (4u32..40).prop_map(Machine::pool),
        ((2u32..10), (1u32..5)).prop_map(|(n, k)| Machine::exclusive_nodes(n, k)),
    ]
}

/// Recomputes the units in use from the outcomes alone and checks them against capacity.
fn check_no_overallocation(machine: &Machine, out: &SimOutcome) -> Result<(), TestCaseError> {
    let mut events: Vec<(Time, i64)> = Vec::new();
    for o in &out.jobs {
        events.push((o.start, o.units as i64));
        events.push((o.end, -(o.units as i64)));
    }
    // Releases before acquisitions at the same instant.
    events.sort_by_key(|&(t, d)| (t, d));
    let mut used = 0i64;
    for (t, d) in events {
        used += d;
        prop_assert!(
            used <= machine.capacity().unit_count() as i64,
            "over-allocated at t={t}"
        );
    }
    Ok(())
}

fn check_basics(w: &Workload, config: &SimConfig, out: &SimOutcome) -> Result<(), TestCaseError> {
    let feasible = w
        .jobs
        .iter()
        .filter(|j| config.machine.as_uniform().unwrap().demand(j).is_ok())
        .count();
    prop_assert_eq!(out.jobs.len(), feasible, "every feasible job runs and ends");
    prop_assert_eq!(out.jobs.len() + out.skipped.len(), w.len());
    for o in &out.jobs {
        let j = &w.jobs[o.job as usize];
        prop_assert!(
            o.start >= j.submit,
            "job {} starts before it is submitted",
            j.id
        );
        let run = o.end - o.start;
        match config.overrun {
            Overrun::Kill => prop_assert_eq!(run, j.runtime.min(j.requested_time)),
            Overrun::Continue => prop_assert_eq!(run, j.runtime),
        }
        prop_assert_eq!(
            o.killed,
            config.overrun == Overrun::Kill && j.runtime > j.requested_time
        );
    }
    check_no_overallocation(&config.machine, out)
}

/// Wraps a scheduler and records, for each call, the state needed to check a property.
struct Spy<S> {
    inner: S,
    log: Rc<RefCell<HashMap<u32, Time>>>,
    record: fn(&S, &View<'_>, &[usize], &mut HashMap<u32, Time>),
}

impl<S: Scheduler> Scheduler for Spy<S> {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        self.inner.schedule(view, starts);
        (self.record)(&self.inner, view, starts, &mut self.log.borrow_mut());
    }

    fn started(&mut self, now: Time, job: u32) {
        self.inner.started(now, job);
    }
}

/// Records, for each job at the moment it becomes the blocked queue head, EASY's shadow time.
fn record_shadow(_: &Easy, view: &View<'_>, starts: &[usize], log: &mut HashMap<u32, Time>) {
    let Some(head_pos) = (0..view.queue.len()).find(|p| !starts.contains(p)) else {
        return;
    };
    let head = &view.queue[head_pos];
    if log.contains_key(&head.job) {
        return;
    }
    let mut free = view.free;
    let mut started: Vec<(Time, ResourceVec)> = starts
        .iter()
        .map(|&p| {
            free -= view.queue[p].demand;
            (
                view.now + view.queue[p].requested_time,
                view.queue[p].demand,
            )
        })
        .collect();
    started.sort_by_key(|s| s.0);
    if let Some(shadow) = Easy::shadow(view, &started, free, head) {
        log.insert(head.job, shadow.time);
    }
}

/// Records the first reservation conservative gives each job.
fn record_reservation(
    c: &Conservative,
    view: &View<'_>,
    starts: &[usize],
    log: &mut HashMap<u32, Time>,
) {
    for (pos, q) in view.queue.iter().enumerate() {
        let reserved = if starts.contains(&pos) {
            Some(view.now)
        } else {
            c.reservation(q.job)
        };
        if let Some(t) = reserved {
            log.entry(q.job).or_insert(t);
        }
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(300))]

    #[test]
    fn schedules_are_valid(
        jobs in arb_workload(40, false),
        machine in arb_machine(),
        kind in prop::sample::select(SchedulerKind::ALL.to_vec()),
        overrun in prop::sample::select(vec![Overrun::Kill, Overrun::Continue]),
        interval in prop::option::of(1i64..50),
    ) {
        let w = Workload::new(jobs);
        let config = SimConfig { order: Default::default(), machine, scheduler: kind, interval, overrun, placement: Default::default() };
        let out = simulate(&w, &config).unwrap();
        check_basics(&w, &config, &out)?;
        // Determinism: the same input gives the same outcome.
        prop_assert_eq!(&simulate(&w, &config).unwrap(), &out);
    }

    #[test]
    fn fcfs_starts_jobs_in_submission_order(jobs in arb_workload(20, false), machine in arb_machine()) {
        let w = Workload::new(jobs);
        let config = SimConfig { order: Default::default(), machine, scheduler: SchedulerKind::Fcfs, interval: None, overrun: Overrun::Kill, placement: Default::default() };
        let out = simulate(&w, &config).unwrap();
        for pair in out.jobs.windows(2) {
            prop_assert!(pair[0].start <= pair[1].start);
        }
        prop_assert!(out.jobs.iter().all(|o| !o.backfilled));
    }

    #[test]
    fn easy_head_never_starts_after_its_shadow_time(jobs in arb_workload(30, true), machine in arb_machine()) {
        let w = Workload::new(jobs);
        let config = SimConfig { order: Default::default(), machine, scheduler: SchedulerKind::Easy, interval: None, overrun: Overrun::Kill, placement: Default::default() };
        let log = Rc::new(RefCell::new(HashMap::new()));
        let spy = Spy { inner: Easy::default(), log: log.clone(), record: record_shadow };
        let out = simulate_with(&w, &config, Box::new(spy)).unwrap();
        check_basics(&w, &config, &out)?;
        prop_assert_eq!(&out, &simulate(&w, &config).unwrap());
        for o in &out.jobs {
            if let Some(&shadow) = log.borrow().get(&o.job) {
                prop_assert!(o.start <= shadow, "job {} started at {} after shadow {}", o.job, o.start, shadow);
            }
        }
    }

    #[test]
    fn conservative_never_starts_a_job_after_its_reservation(
        jobs in arb_workload(30, false),
        machine in arb_machine(),
    ) {
        let w = Workload::new(jobs);
        let config = SimConfig { order: Default::default(), machine, scheduler: SchedulerKind::Conservative, interval: None, overrun: Overrun::Kill, placement: Default::default() };
        let log = Rc::new(RefCell::new(HashMap::new()));
        let spy = Spy { inner: Conservative::default(), log: log.clone(), record: record_reservation };
        let out = simulate_with(&w, &config, Box::new(spy)).unwrap();
        check_basics(&w, &config, &out)?;
        prop_assert_eq!(&out, &simulate(&w, &config).unwrap());
        for o in &out.jobs {
            let reserved = log.borrow()[&o.job];
            prop_assert!(o.start <= reserved, "job {} started at {} after its reservation {}", o.job, o.start, reserved);
        }
    }
}

/// The starts of a whole-workload episode of the reinforcement-learning environment
/// (`schedlab::gym`, a stepped run) whose agent always picks the first waiting job.
fn gym_first_job_starts(w: &Workload, procs: u32, backfill: schedlab::gym::Backfill) -> Vec<Time> {
    use schedlab::gym::{Env, EnvConfig, Starts};
    let config = EnvConfig {
        k: 8,
        backfill,
        episode_jobs: None,
        starts: Starts::Fixed(vec![0]),
        ..EnvConfig::new()
    };
    let mut env = Env::new(std::sync::Arc::new(w.clone()), procs, config, 0).unwrap();
    let mut done = env.reset(None).unwrap();
    while !done {
        assert!(
            env.valid() >= 1,
            "a decision is asked only when a job waits"
        );
        done = env.step(0).unwrap().done;
    }
    env.jobs().iter().map(|j| j[2]).collect()
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(200))]

    /// A stepped run (the engine suspends each scheduler call for an outside decision) with
    /// the first waiting job always chosen is native EASY (EASY backfilling), native FCFS
    /// (none) and native conservative (conservative: reservations kept between calls), start
    /// for start: suspending and resuming a call changes nothing.
    #[test]
    fn stepped_first_job_runs_are_the_native_schedulers(
        jobs in arb_workload(16, false),
        procs in 4u32..24,
    ) {
        use schedlab::gym::Backfill;
        let w = Workload::new(jobs);
        for (backfill, kind) in [
            (Backfill::Easy, SchedulerKind::Easy),
            (Backfill::None, SchedulerKind::Fcfs),
            (Backfill::Conservative, SchedulerKind::Conservative),
        ] {
            let native = simulate(&w, &SimConfig::new(Machine::pool(procs), kind)).unwrap();
            let starts: Vec<Time> = native.jobs.iter().map(|o| o.start).collect();
            prop_assert_eq!(gym_first_job_starts(&w, procs, backfill), starts, "{:?}", kind);
        }
    }
}
