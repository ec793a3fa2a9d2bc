//! [`PolicyScheduler`]: a [`Policy`] as the engine's [`Scheduler`] on a uniform machine (a
//! processor pool or exclusive nodes of one size).
//!
//! Each call fills the view's columns (buffers reused between calls), asks the policy, and
//! checks its decisions before the engine sees them, so that a wrong decision is reported in
//! the policy's terms (the job, the reason) rather than as an engine inconsistency.

use std::collections::HashMap;

use super::availability;
use super::view::{PolicyView, Running, Waiting};
use super::{Policy, PolicyError};
use crate::sim::engine::SimError;
use crate::sim::scheduler::{Scheduler, View};
use crate::sim::topology::RequestTable;

/// Adapts a [`Policy`] to the engine. Build one per run.
pub struct PolicyScheduler<P: Policy> {
    policy: P,
    /// The workload's request table (memory and GPU columns).
    requests: RequestTable,
    procs_per_unit: i64,
    waiting: Waiting,
    running: Running,
    rows: Vec<usize>,
    /// Core-seconds of completed jobs per user.
    used: HashMap<i64, f64>,
    /// The first failure; the engine stops the run with it after the call.
    failure: Option<SimError>,
    calls: u64,
}

impl<P: Policy> PolicyScheduler<P> {
    /// `policy` over a workload whose requests are `requests`, on a uniform machine of
    /// `procs_per_unit` processors per unit.
    pub fn new(policy: P, requests: RequestTable, procs_per_unit: u64) -> Self {
        PolicyScheduler {
            policy,
            requests,
            procs_per_unit: procs_per_unit.max(1) as i64,
            waiting: Waiting::default(),
            running: Running::default(),
            rows: Vec::new(),
            used: HashMap::new(),
            failure: None,
            calls: 0,
        }
    }

    /// How many times the policy was called.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    fn fill(&mut self, view: &View<'_>) {
        let now = view.now;
        // Completed jobs (view.ended and view.completed list the same jobs in the same order).
        for (ended, completed) in view.ended.iter().zip(view.completed) {
            let job = &view.jobs[ended.job as usize];
            let seconds = (completed.end - ended.start).max(0) as f64;
            *self.used.entry(i64::from(job.user)).or_default() += seconds * f64::from(job.procs);
        }
        self.running.clear();
        let mut running_use: HashMap<i64, f64> = HashMap::new();
        for r in view.running.iter() {
            let job = &view.jobs[r.job as usize];
            let c = &mut self.running;
            c.index.push(i64::from(r.job));
            c.id.push(job.id as i64);
            c.user.push(i64::from(job.user));
            c.start.push(r.start);
            c.expected_end.push(view.predicted_end(r.expected_end));
            c.procs.push(i64::from(job.procs));
            c.units.push(r.demand.unit_count() as i64);
            *running_use.entry(i64::from(job.user)).or_default() +=
                (now - r.start).max(0) as f64 * f64::from(job.procs);
        }
        self.waiting.clear();
        for queued in view.queue.iter() {
            self.waiting.push(
                view.jobs,
                &self.requests,
                queued.job,
                now,
                queued.demand.unit_count(),
            );
        }
        let w = &mut self.waiting;
        for &user in &w.user {
            let usage = self.used.get(&user).copied().unwrap_or(0.0)
                + running_use.get(&user).copied().unwrap_or(0.0);
            w.user_usage.push(usage);
        }
    }

    /// Checks the rows a policy returned, in its terms; `Ok` leaves them for the engine.
    fn check(&self, view: &PolicyView<'_>, rows: &[usize]) -> Result<(), String> {
        let w = view.waiting;
        let mut seen = vec![false; w.len()];
        let mut plan = (!view.reservations.is_empty()).then(|| availability::plan(view, &[]));
        let mut free = view.free;
        for &row in rows {
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
        self.fill(view);
        // Nothing can start without a waiting job and a free unit: the policy is not asked.
        if self.waiting.is_empty() || view.free.unit_count() == 0 {
            return;
        }
        let policy_view = PolicyView {
            now: view.now,
            capacity: view.capacity.unit_count() as i64,
            free: view.free.unit_count() as i64,
            procs_per_unit: self.procs_per_unit,
            waiting: &self.waiting,
            running: &self.running,
            reservations: view.reservations,
        };
        self.calls += 1;
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

    // A policy keeps its own state from the views it is shown (running jobs, usage): nothing to
    // charge here.
    fn started(&mut self, _now: crate::sim::job::Time, _job: u32) {}
}
