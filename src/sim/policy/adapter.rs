//! [`PolicyScheduler`]: a [`Policy`] as the engine's [`Scheduler`] on a uniform machine (a
//! processor pool or exclusive nodes of one size).
//!
//! At each engine call it charges the jobs that ended to their users; then, only if some
//! waiting job fits in the free units, it fills the view's columns (buffers reused between
//! calls), asks the policy, and checks its decisions before the engine sees them, so that a
//! wrong decision is reported in the policy's terms (the job, the reason) rather than as an
//! engine inconsistency.

use super::availability;
use super::columns::{self, CallColumns, CallState};
use super::view::PolicyView;
use super::{Policy, PolicyError};
use crate::sim::engine::SimError;
use crate::sim::fairshare::FairshareState;
use crate::sim::scheduler::{Scheduler, View};
use crate::sim::topology::RequestTable;

/// Adapts a [`Policy`] to the engine. Build one per run.
pub struct PolicyScheduler<P: Policy> {
    policy: P,
    /// The workload's request table (memory and GPU columns).
    requests: RequestTable,
    procs_per_unit: i64,
    /// The view's columns of the call (waiting, running, held) and each user's usage.
    columns: CallColumns,
    rows: Vec<usize>,
    /// The first failure; the engine stops the run with it after the call.
    failure: Option<SimError>,

    // --- Fairshare. ---
    /// The run's fairshare, charged as the native `order: fairshare` charges it, when the run
    /// configures one: the view's `fairshare_usage` and `fairshare_factor`.
    fairshare: Option<FairshareState>,
}

impl<P: Policy> PolicyScheduler<P> {
    /// `policy` over a workload whose requests are `requests`, on a uniform machine of
    /// `procs_per_unit` processors per unit.
    pub fn new(policy: P, requests: RequestTable, procs_per_unit: u64) -> Self {
        PolicyScheduler {
            policy,
            requests,
            procs_per_unit: procs_per_unit.max(1) as i64,
            columns: CallColumns::default(),
            rows: Vec::new(),
            failure: None,
            fairshare: None,
        }
    }

    /// Shows the policy the decayed fairshare of `state` (built on the run's workload and
    /// machine from the run's fairshare settings) in `fairshare_usage` and `fairshare_factor`.
    pub fn with_fairshare(mut self, state: FairshareState) -> Self {
        self.fairshare = Some(state);
        self
    }

    /// Charges the jobs that ended since the engine's previous call to their users. Done at
    /// every engine call, whether or not the policy is asked then: `user_usage` counts every
    /// completed job in full however sparse the policy's calls are.
    fn account(&mut self, view: &View<'_>) {
        self.columns.usage.ensure(view.jobs);
        if let Some(fairshare) = &mut self.fairshare {
            for c in view.completed {
                fairshare.ended(c.job, c.end);
            }
        }
        // view.ended and view.completed list the same jobs in the same order.
        for (ended, completed) in view.ended.iter().zip(view.completed) {
            let job = &view.jobs[ended.job as usize];
            self.columns
                .usage
                .charge(ended.job, job.procs, completed.end - ended.start);
        }
    }

    /// Whether some waiting job could start now: one whose units fit in the free units. When
    /// none does, any decision but "nothing" is impossible, and the policy is not asked.
    fn may_start(view: &View<'_>) -> bool {
        let free = view.free.unit_count();
        free > 0 && view.queue.iter().any(|q| q.demand.unit_count() <= free)
    }

    /// Builds the view's columns for a call (buffers reused between calls).
    fn fill(&mut self, view: &View<'_>) {
        let state = CallState {
            jobs: view.jobs,
            requests: &self.requests,
            queue: view.queue,
            running: view.running,
            limits: view.limits,
            now: view.now,
        };
        self.columns.fill(state, self.fairshare.as_mut(), |end| {
            view.predicted_end(end)
        });
    }

    /// Checks the rows a policy returned, in its terms; `Ok` leaves them for the engine.
    fn check(&self, view: &PolicyView<'_>, rows: &[usize]) -> Result<(), String> {
        let w = view.waiting;
        let mut seen = vec![false; w.len()];
        let mut plan = (!view.reservations.is_empty()).then(|| availability::plan(view, &[]));
        let mut free = view.free;
        for &row in rows {
            if let Some(error) = columns::held_row_error(view, row) {
                return Err(error);
            }
            if row >= w.len() {
                return Err(format!(
                    "it started row {row}, but only {} jobs are waiting (rows 0 to {})",
                    w.len(),
                    w.len() as i64 - 1
                ));
            }
            let job = format!("job {} (row {row})", w.id[row]);
            if std::mem::replace(&mut seen[row], true) {
                return Err(format!("it started {job} twice"));
            }
            let (units, duration) = (w.units[row], w.requested_time[row]);
            if units > free {
                return Err(format!(
                    "{job} does not fit: it needs {units} units, {free} are free after this call's earlier starts"
                ));
            }
            free -= units;
            if let Some(plan) = &mut plan {
                if !plan.fits_now(units, duration) {
                    return Err(format!(
                        "{job} would hold capacity of an advance reservation before its requested time of {duration} s is up"
                    ));
                }
                plan.reserve(view.now, units, duration);
            }
        }
        Ok(())
    }
}

impl<P: Policy> Scheduler for PolicyScheduler<P> {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        if self.failure.is_some() {
            return;
        }
        self.account(view);
        // Nothing can start unless some waiting job fits in the free units: the policy is not
        // asked (docs/policies.md, "When it calls").
        if !Self::may_start(view) {
            return;
        }
        self.fill(view);
        let policy_view = PolicyView {
            now: view.now,
            capacity: view.capacity.unit_count() as i64,
            free: view.free.unit_count() as i64,
            procs_per_unit: self.procs_per_unit,
            waiting: &self.columns.waiting,
            running: &self.columns.running,
            reservations: view.reservations,
            held: &self.columns.held,
            topology: None,
        };
        self.rows.clear();
        let fail = |message: String| SimError::Policy {
            time: view.now,
            message,
        };
        match self.policy.decide(&policy_view, &mut self.rows) {
            Err(PolicyError(message)) => {
                self.failure = Some(fail(format!(
                    "policy {} failed:\n{message}",
                    self.policy.name()
                )));
            }
            Ok(()) => match self.check(&policy_view, &self.rows) {
                Err(reason) => {
                    self.failure = Some(fail(format!(
                        "policy {} made an impossible decision: {reason}",
                        self.policy.name()
                    )));
                }
                // Rows are the queue's positions: the view lists the queue in its order.
                Ok(()) => starts.extend_from_slice(&self.rows),
            },
        }
    }

    fn failure(&mut self) -> Option<SimError> {
        self.failure.take()
    }

    // A policy keeps its own state from the views it is shown (running jobs, usage); the
    // fairshare, when the run has one, is charged here as the native order charges it.
    fn started(&mut self, now: crate::sim::job::Time, job: u32) {
        if let Some(fairshare) = &mut self.fairshare {
            fairshare.started(now, job, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::api::simulate::{Settings, machine, simulate};
    use crate::sim::{SchedulerKind, Time};
    use crate::swf::{Mode, read_bytes};

    /// A call as the policy saw it: the time, and each waiting row's (job index, user usage).
    type Call = (Time, Vec<(i64, f64)>);

    /// FCFS without backfilling, recording each call.
    struct Recorder(Rc<RefCell<Vec<Call>>>);

    impl Policy for Recorder {
        fn decide(
            &mut self,
            view: &PolicyView<'_>,
            starts: &mut Vec<usize>,
        ) -> Result<(), PolicyError> {
            let w = view.waiting;
            let rows = (0..w.len())
                .map(|k| (w.index[k], w.user_usage[k]))
                .collect();
            self.0.borrow_mut().push((view.now, rows));
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
            "recorder"
        }
    }

    #[test]
    fn the_policy_is_asked_only_when_a_waiting_job_fits_and_loses_no_usage() {
        // 4 processors. Jobs 0 (3 procs, user 1) and 1 (1 proc, user 2, ends at 30) start at 0;
        // job 2 (4 procs) waits from 10; at 30 one processor frees and at 60 job 3 (2 procs,
        // user 2) arrives — neither instant lets a waiting job fit, so the policy is not asked;
        // at 100 job 0 ends and job 2 starts; at 150 job 3.
        let swf = "; MaxProcs: 4\n\
            1 0 -1 100 3 -1 -1 3 100 -1 1 1 1 -1 1 -1 -1 -1\n\
            2 0 -1 30 1 -1 -1 1 30 -1 1 2 1 -1 1 -1 -1 -1\n\
            3 10 -1 50 4 -1 -1 4 50 -1 1 3 1 -1 1 -1 -1 -1\n\
            4 60 -1 20 2 -1 -1 2 20 -1 1 2 1 -1 1 -1 -1 -1\n";
        let mut trace = read_bytes(swf.as_bytes(), "test.swf", Mode::Strict).unwrap();
        let calls = Rc::new(RefCell::new(Vec::new()));
        let machine = machine(4, None, ["procs", "node_size"]).unwrap();
        let settings = Settings::new(SchedulerKind::Easy);
        let policy = Box::new(Recorder(calls.clone()));
        let run = simulate(&mut trace, &machine, &settings, Some(policy), true).unwrap();
        let starts: Vec<Time> = run.records.iter().map(|r| r.start).collect();
        assert_eq!(starts, [0, 0, 100, 150]);
        let calls = calls.borrow();
        let times: Vec<Time> = calls.iter().map(|c| c.0).collect();
        assert_eq!(
            times,
            [0, 100, 150],
            "no call at 30 or 60: nothing fits then"
        );
        assert_eq!(run.policy_calls, 3);
        // User 2's job 1 ended at 30, at an instant the policy was not asked: its 30
        // core-seconds are in the usage all the same.
        assert_eq!(calls[1].1, [(2, 0.0), (3, 30.0)]);
        assert_eq!(calls[2].1, [(3, 30.0)]);
    }
}
