//! [`Agent`]: the environment's scheduler. At each engine call it starts the job the agent
//! committed to once it fits, backfills around it while it does not (none, EASY, conservative),
//! and otherwise suspends the call ([`crate::sim::Scheduler::suspended`]) until the driver hands
//! it the agent's next action. Between suspensions it keeps the call's state (the jobs still
//! waiting, the units free, the jobs started so far), which is also what the observation reads.
//!
//! Conservative backfilling keeps its reservations between calls, as the native
//! [`crate::sim::scheduler::Conservative`] does ([`Plan`]): at every call (also one at which
//! nothing can start) each waiting job gives back its reservation and takes the earliest slot
//! again, the chosen jobs first in the order chosen, then the committed job, then the others in
//! submission order; those whose slot is now start. With the first waiting job always chosen,
//! that is the native rule's compression, call for call.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::sim::job::{Job, Time};
use crate::sim::queue::Queue;
use crate::sim::resources::ResourceVec;
use crate::sim::running::RunningSet;
use crate::sim::scheduler::profile::Profile;
use crate::sim::scheduler::{Scheduler, View};

/// What is done around a committed job that does not fit yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backfill {
    /// Nothing starts before it.
    None,
    /// EASY: a later job (in submission order) starts if it fits now and ends by the committed
    /// job's shadow time or uses only the extra units.
    Easy,
    /// Conservative: every waiting job holds a reservation, kept between calls; at each call
    /// the chosen jobs, then the committed one, then every other waiting job (in submission
    /// order) give theirs back and take their earliest fit; those whose earliest fit is now
    /// start (a chosen job whose fit is later is committed to).
    Conservative,
}

impl std::str::FromStr for Backfill {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Backfill::None),
            "easy" => Ok(Backfill::Easy),
            "conservative" => Ok(Backfill::Conservative),
            _ => Err(format!(
                "unknown backfilling {s:?} (expected none, easy or conservative)"
            )),
        }
    }
}

/// A waiting job as the call sees it.
#[derive(Clone, Copy, Debug)]
pub struct Waiting {
    /// Position in the engine's queue (what the call hands back).
    pub pos: usize,
    /// Index of the job in the episode's workload.
    pub job: u32,
    pub units: i64,
    pub requested_time: Time,
    pub submit: Time,
}

/// The state of the current call, shared with the driver.
#[derive(Debug, Default)]
pub struct CallState {
    pub now: Time,
    pub capacity: i64,
    pub free: i64,
    /// The jobs still waiting, in submission order.
    pub waiting: Vec<Waiting>,
    /// (expected end, units) of the running jobs and of this call's starts, unsorted.
    pub ends: Vec<(Time, i64)>,
    /// Per user (dense index): core-seconds used so far (completed jobs, running jobs up to
    /// now).
    pub usage: Vec<f64>,
    pub total_usage: f64,
    /// Queue positions started by this call.
    pub started: Vec<usize>,
    /// On a topology: per slot of the first K waiting jobs, 1 when it fits on the nodes now
    /// (node-level fit: cores, memory, GPUs, properties), after this call's starts.
    pub fits: Vec<u8>,
    /// On a topology: the free memory and GPUs now, as fractions of the machine's (0 when it
    /// has none).
    pub free_memory: f64,
    pub free_gpus: f64,
}

/// What the agent and the driver share.
#[derive(Debug, Default)]
pub struct Shared {
    pub call: CallState,
    /// The agent's next action: a slot of `call.waiting`.
    pub action: Option<usize>,
    /// The job the agent chose that does not fit yet (index in the workload).
    pub committed: Option<u32>,
    /// Jobs backfilled (started by the backfilling rule, not by the agent).
    pub backfilled: u64,
    /// Whether the last engine call was suspended.
    pub suspended: bool,
    /// Whether the observation needs the users' usage (the `user_share` feature).
    pub track_usage: bool,
    /// Each job's user as a dense index (by the episode's job index).
    pub users: Vec<u32>,
    /// Core-seconds of completed jobs per user (ledger across calls), and their sum.
    pub(super) completed_usage: Vec<f64>,
    pub(super) completed_total: f64,
}

/// The environment's scheduler (one per episode).
pub struct Agent {
    pub shared: Rc<RefCell<Shared>>,
    pub backfill: Backfill,
    plan: Plan,
}

impl Agent {
    pub fn new(shared: Rc<RefCell<Shared>>, backfill: Backfill) -> Self {
        Agent {
            shared,
            backfill,
            plan: Plan::default(),
        }
    }
}

/// Conservative backfilling's reservations, kept between calls as the native rule keeps them
/// (its reference formulation, [`crate::sim::scheduler::Conservative::reference`]).
#[derive(Default)]
struct Plan {
    profile: Profile,
    /// Each waiting job's reserved start (by its index in the episode's workload).
    slots: HashMap<u32, Time>,
}

impl Plan {
    /// The committed future at the start of a call: the units free now, the running jobs
    /// releasing theirs at their predicted ends, and every kept reservation held. One that
    /// began in the past (its start was not an instant: the job before it ended early) is
    /// dropped, and its job planned afresh in its turn.
    fn begin(&mut self, c: &CallState) {
        self.profile
            .reset(c.now, ResourceVec::units(c.free.max(0) as u64));
        for &(end, units) in &c.ends {
            self.profile
                .release_from(end, ResourceVec::units(units.max(0) as u64));
        }
        for w in &c.waiting {
            if let Some(&s) = self.slots.get(&w.job) {
                if s >= c.now {
                    self.profile
                        .reserve(s, s + w.requested_time, Self::demand(w));
                } else {
                    self.slots.remove(&w.job);
                }
            }
        }
    }

    fn demand(w: &Waiting) -> ResourceVec {
        ResourceVec::units(w.units.max(0) as u64)
    }

    /// `w` gives back its reservation and takes the earliest slot; that slot (kept unless it
    /// is now: the job starts).
    fn replan(&mut self, now: Time, w: &Waiting) -> Option<Time> {
        let demand = Self::demand(w);
        if let Some(s) = self.slots.remove(&w.job) {
            self.profile.unreserve(s, s + w.requested_time, demand);
        }
        let at = self.profile.earliest_fit(now, w.requested_time, demand)?;
        self.profile.reserve(at, at + w.requested_time, demand);
        if at != now {
            self.slots.insert(w.job, at);
        }
        Some(at)
    }

    /// Replans every waiting job but the one at `except`, in submission order, and starts
    /// those whose slot is now; how many.
    fn replan_others(&mut self, c: &mut CallState, except: Option<usize>) -> u64 {
        let mut now_slots = Vec::new();
        for (k, w) in c.waiting.iter().enumerate() {
            if Some(k) != except && self.replan(c.now, w) == Some(c.now) {
                now_slots.push(k);
            }
        }
        c.start_slots(&now_slots)
    }
}

impl Shared {
    /// Copies into the call what the agent is shown of the jobs, on a pool or on nodes alike:
    /// the waiting jobs, the running jobs' expected ends (`predicted_end` of the view), and,
    /// when the observation needs them, the users' usage at `now`. The caller sets the
    /// machine's figures (`now`, `capacity`, `free`).
    pub(super) fn fill_jobs(
        &mut self,
        now: Time,
        queue: &Queue,
        running: &RunningSet,
        jobs: &[Job],
        predicted_end: impl Fn(Time) -> Time,
    ) {
        let c = &mut self.call;
        c.waiting.clear();
        for (pos, q) in queue.iter().enumerate() {
            c.waiting.push(Waiting {
                pos,
                job: q.job,
                units: q.demand.unit_count() as i64,
                requested_time: q.requested_time,
                submit: q.submit,
            });
        }
        c.ends.clear();
        for r in running.iter() {
            c.ends
                .push((predicted_end(r.expected_end), r.demand.unit_count() as i64));
        }
        if self.track_usage {
            c.usage.clone_from(&self.completed_usage);
            c.total_usage = self.completed_total;
            for r in running.iter() {
                let job = &jobs[r.job as usize];
                let used = (now - r.start).max(0) as f64 * f64::from(job.procs);
                c.usage[self.users[r.job as usize] as usize] += used;
                c.total_usage += used;
            }
        }
        c.started.clear();
    }
    /// A fresh state for an episode; `track_usage` when the observation needs the users'
    /// usage.
    pub fn new(track_usage: bool, users: Vec<u32>, n_users: usize) -> Self {
        Shared {
            track_usage,
            users,
            completed_usage: if track_usage {
                vec![0.0; n_users]
            } else {
                Vec::new()
            },
            ..Shared::default()
        }
    }

    /// Rebuilds the call state from the engine's view; `false` when nothing can start (no
    /// waiting job fits in the free units: the call ends at once). With `always`, the state is
    /// rebuilt even then (conservative backfilling replans at every call).
    fn fill(&mut self, view: &View<'_>, always: bool) -> bool {
        if self.track_usage {
            for (ended, completed) in view.ended.iter().zip(view.completed) {
                let job = &view.jobs[ended.job as usize];
                let used = (completed.end - ended.start).max(0) as f64 * f64::from(job.procs);
                self.completed_usage[self.users[ended.job as usize] as usize] += used;
                self.completed_total += used;
            }
        }
        // As the policy interface does (docs/policies.md, "When it calls"), the call goes on
        // only if some waiting job fits in the free units: otherwise nothing can start, and
        // an action would only commit to a job earlier than a policy could.
        let free = view.free.unit_count();
        let fits = free > 0 && view.queue.iter().any(|q| q.demand.unit_count() <= free);
        if !fits && !always {
            return false;
        }
        let c = &mut self.call;
        c.now = view.now;
        c.capacity = view.capacity.unit_count() as i64;
        c.free = view.free.unit_count() as i64;
        self.fill_jobs(view.now, view.queue, view.running, view.jobs, |end| {
            view.predicted_end(end)
        });
        fits
    }
}

impl CallState {
    /// Starts the waiting job at `slot`.
    fn start(&mut self, slot: usize) {
        let w = self.waiting.remove(slot);
        self.free -= w.units;
        self.ends.push((self.now + w.requested_time, w.units));
        self.started.push(w.pos);
    }

    /// EASY around the committed job at `slot` (which does not fit now).
    fn easy(&mut self, slot: usize) -> u64 {
        let units = self.waiting[slot].units;
        self.ends.sort_by_key(|e| e.0);
        let mut available = self.free;
        let mut shadow: Option<Time> = None;
        for &(end, freed) in &self.ends {
            if shadow.is_some_and(|t| end > t) {
                break;
            }
            available += freed;
            if shadow.is_none() && units <= available {
                shadow = Some(end);
            }
        }
        let Some(shadow) = shadow else { return 0 };
        let mut extra = available - units;
        let mut free = self.free;
        let mut chosen = Vec::new();
        for (k, w) in self.waiting.iter().enumerate() {
            if free == 0 {
                break;
            }
            if k == slot || w.units > free {
                continue;
            }
            if self.now + w.requested_time <= shadow {
                free -= w.units;
            } else if w.units <= extra {
                free -= w.units;
                extra -= w.units;
            } else {
                continue;
            }
            chosen.push(k);
        }
        self.start_slots(&chosen)
    }

    /// Starts the waiting jobs at `slots` (increasing); how many.
    fn start_slots(&mut self, slots: &[usize]) -> u64 {
        for (removed, &k) in slots.iter().enumerate() {
            self.start(k - removed);
        }
        slots.len() as u64
    }
}

impl Scheduler for Agent {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let mut shared = self.shared.borrow_mut();
        let shared = &mut *shared;
        let conservative = self.backfill == Backfill::Conservative;
        // A resumed call sees the same view: its state is the one it suspended with.
        if !std::mem::take(&mut shared.suspended) {
            let fits = shared.fill(view, conservative);
            if conservative {
                self.plan.begin(&shared.call);
            }
            if !fits {
                // Nothing can start, but the native conservative rule compresses its
                // reservations at every call: so does the environment (the committed job
                // first, then the others in submission order).
                if conservative && !shared.call.waiting.is_empty() {
                    let call = &mut shared.call;
                    let slot = shared
                        .committed
                        .and_then(|job| call.waiting.iter().position(|w| w.job == job));
                    if let Some(slot) = slot {
                        let w = call.waiting[slot];
                        self.plan.replan(call.now, &w);
                    }
                    self.plan.replan_others(call, slot);
                    debug_assert!(call.started.is_empty(), "nothing fits now");
                }
                return;
            }
        }
        let call = &mut shared.call;
        loop {
            if let Some(job) = shared.committed {
                let Some(slot) = call.waiting.iter().position(|w| w.job == job) else {
                    shared.committed = None;
                    continue;
                };
                let starts_now = if conservative {
                    let w = call.waiting[slot];
                    self.plan.replan(call.now, &w) == Some(call.now)
                } else {
                    call.waiting[slot].units <= call.free
                };
                if starts_now {
                    call.start(slot);
                    shared.committed = None;
                    continue;
                }
                shared.backfilled += match self.backfill {
                    Backfill::None => 0,
                    Backfill::Easy => call.easy(slot),
                    Backfill::Conservative => self.plan.replan_others(call, Some(slot)),
                };
                break;
            }
            if call.waiting.is_empty() {
                break;
            }
            if call.free <= 0 {
                // The jobs not replanned yet at this call are (nothing starts: no unit free).
                if conservative {
                    self.plan.replan_others(call, None);
                }
                break;
            }
            match shared.action.take() {
                Some(slot) => {
                    let w = call.waiting[slot];
                    let starts_now = if conservative {
                        self.plan.replan(call.now, &w) == Some(call.now)
                    } else {
                        w.units <= call.free
                    };
                    if starts_now {
                        call.start(slot);
                    } else {
                        shared.committed = Some(w.job);
                    }
                }
                None => {
                    shared.suspended = true;
                    return;
                }
            }
        }
        starts.extend_from_slice(&call.started);
    }

    // The agent's rule keeps no queue order to charge (no fairshare ledger): nothing to do.
    fn started(&mut self, _now: crate::sim::job::Time, _job: u32) {}

    fn suspended(&mut self) -> bool {
        self.shared.borrow().suspended
    }
}
