//! [`NodeAgent`]: the environment's scheduler on a topology (`machines=`, docs/rl.md, "On a
//! topology"). The decision is the one [`super::agent::Agent`] takes on a pool — start the
//! chosen job if it fits now, else commit to it and backfill around it until it starts — with
//! "fits" the node-level fit of the native rules (enough nodes of a class the job may use, each
//! with the job's per-node cores, memory and GPUs free after this call's starts: [`Pass`]) and
//! EASY the native node-level EASY (the committed job's shadow time on nodes, [`Shadow`], and
//! the same backfilling test). With the first waiting job always chosen it is the native
//! node-level FCFS (`none`) and EASY, start for start. Conservative backfilling is not offered
//! on a topology ([`super::Env::on_machine`] refuses it).
//!
//! A suspended call hands the engine no decision: the call's starts are kept here and handed
//! over when the call ends ([`crate::sim::scheduler::node::NodeScheduler::suspended`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::agent::{Backfill, CallState, Shared, Waiting};
use crate::sim::job::Time;
use crate::sim::resources::ResourceVec;
use crate::sim::scheduler::node::pass::{Failed, Pass};
use crate::sim::scheduler::node::shadow::{Shadow, Started};
use crate::sim::scheduler::node::{Decisions, NodeScheduler, NodeView};
use crate::sim::topology::NodeShape;

/// A start of this call: queue position, class, and its nodes (a range of `started_nodes`).
type Decided = (usize, u32, u32, u32);

/// The environment's scheduler on a topology (one per episode).
pub struct NodeAgent {
    shared: Rc<RefCell<Shared>>,
    backfill: Backfill,
    /// Job slots of the observation: how many waiting jobs get a `fits` flag.
    k: usize,
    pass: Pass,
    shadow: Shadow,
    /// This call's starts, for the shadow time (ends, classes, shapes, nodes)…
    started: Vec<Started>,
    started_nodes: Vec<u32>,
    /// …and as the decisions handed over when the call ends.
    decided: Vec<Decided>,
    sorted: Vec<Started>,
    nodes: Vec<u32>,
    failed: Failed,
    /// When each running job started (the users' usage of the jobs that end).
    start_of: HashMap<u32, Time>,
    /// The machine's cores, memory and GPUs.
    capacity: Option<ResourceVec>,
}

impl NodeAgent {
    pub fn new(shared: Rc<RefCell<Shared>>, backfill: Backfill, k: usize) -> Self {
        NodeAgent {
            shared,
            backfill,
            k,
            pass: Pass::default(),
            shadow: Shadow::default(),
            started: Vec::new(),
            started_nodes: Vec::new(),
            decided: Vec::new(),
            sorted: Vec::new(),
            nodes: Vec::new(),
            failed: Failed::default(),
            start_of: HashMap::new(),
            capacity: None,
        }
    }

    /// The first class (in placement order) on which `job` fits now, with its shape there;
    /// its nodes in `self.nodes`. As the native rules place a job.
    fn place(&mut self, view: &NodeView<'_>, job: u32) -> Option<(u32, NodeShape)> {
        for &class in view.classes_of(job) {
            let Some(shape) = view.shape(job, class) else {
                continue;
            };
            if self.pass.select_any(view, class, &shape, &mut self.nodes) {
                return Some((class, shape));
            }
        }
        None
    }

    /// Records the start of `w` on `self.nodes` of `class` (not yet removed from the call's
    /// waiting jobs); its cores.
    fn record(&mut self, view: &NodeView<'_>, w: &Waiting, class: u32, shape: NodeShape) -> i64 {
        self.pass.take(view, class, &shape, &self.nodes);
        let from = self.started_nodes.len() as u32;
        self.started_nodes.extend_from_slice(&self.nodes);
        let to = self.started_nodes.len() as u32;
        self.started.push(Started {
            end: view.now + w.requested_time,
            class,
            shape,
            nodes: (from, to),
        });
        self.decided.push((w.pos, class, from, to));
        shape.total().unit_count() as i64
    }

    /// Starts the waiting job at `slot` on `self.nodes` of `class`.
    fn start(
        &mut self,
        call: &mut CallState,
        view: &NodeView<'_>,
        slot: usize,
        class: u32,
        shape: NodeShape,
    ) {
        let w = call.waiting[slot];
        let cores = self.record(view, &w, class, shape);
        Self::remove(call, slot, cores);
    }

    /// Removes the job at `slot` from the waiting ones: it holds `cores` from now on (what its
    /// shape takes, for the free cores), and is described among the running jobs by its
    /// processors, as the engine's running set describes the jobs started earlier.
    fn remove(call: &mut CallState, slot: usize, cores: i64) {
        let w = call.waiting.remove(slot);
        call.free -= cores;
        call.ends.push((call.now + w.requested_time, w.units));
        call.started.push(w.pos);
    }

    /// Node-level EASY around the committed job at `slot` (which does not fit now), as
    /// [`crate::sim::scheduler::node::NodeEasy`] backfills around its blocked head: the other
    /// waiting jobs in submission order; how many started.
    fn easy(&mut self, call: &mut CallState, view: &NodeView<'_>, slot: usize) -> u64 {
        let head = call.waiting[slot].job;
        self.sorted.clone_from(&self.started);
        self.sorted.sort_by_key(|s| s.end);
        let Some(shadow) =
            self.shadow
                .compute(view, &self.pass, head, &self.sorted, &self.started_nodes)
        else {
            return 0;
        };
        self.failed.clear();
        let now = call.now;
        let mut chosen: Vec<(usize, i64)> = Vec::new();
        for k in 0..call.waiting.len() {
            if k == slot {
                continue;
            }
            let w = call.waiting[k];
            let ends_by_shadow = now + w.requested_time <= shadow;
            let job = &view.jobs[w.job as usize];
            if self.failed.contains(job, !ends_by_shadow) {
                continue;
            }
            match self.shadow.backfill_class(
                view,
                &mut self.pass,
                w.job,
                ends_by_shadow,
                &mut self.nodes,
            ) {
                Some((class, shape)) => {
                    let cores = self.record(view, &w, class, shape);
                    chosen.push((k, cores));
                }
                None => self.failed.insert(job, !ends_by_shadow),
            }
        }
        for (removed, &(k, cores)) in chosen.iter().enumerate() {
            Self::remove(call, k - removed, cores);
        }
        chosen.len() as u64
    }

    /// Rebuilds the call state from the engine's view; `false` when nothing can start (no
    /// waiting job fits now on a node it may use: the call ends at once, as on a pool).
    fn fill(&mut self, shared: &mut Shared, view: &NodeView<'_>) -> bool {
        if shared.track_usage {
            for c in view.completed {
                let start = self.start_of.remove(&c.job).unwrap_or(c.end);
                let job = &view.jobs[c.job as usize];
                let used = (c.end - start).max(0) as f64 * f64::from(job.procs);
                shared.completed_usage[shared.users[c.job as usize] as usize] += used;
                shared.completed_total += used;
            }
        }
        if view.queue.is_empty() {
            return false;
        }
        self.pass.begin(view);
        self.failed.clear();
        let mut any = false;
        for q in view.queue.iter() {
            let job = &view.jobs[q.job as usize];
            if self.failed.contains(job, false) {
                continue;
            }
            if self.place(view, q.job).is_some() {
                any = true;
                break;
            }
            self.failed.insert(job, false);
        }
        if !any {
            return false;
        }
        let capacity = *self.capacity.get_or_insert_with(|| {
            let mut total = ResourceVec::ZERO;
            for class in view.layout.classes() {
                let n = u64::from(class.capacity.nodes);
                let p = class.capacity.per_node.0;
                total += ResourceVec([p[0] * n, p[1] * n, p[2] * n]);
            }
            total
        });
        let c = &mut shared.call;
        c.now = view.now;
        c.capacity = capacity.unit_count() as i64;
        c.free = (0..view.layout.classes().len() as u32)
            .map(|class| self.pass.free_cores(view, class) as i64)
            .sum();
        shared.fill_jobs(view.now, view.queue, view.running, view.jobs, |end| {
            view.predicted_end(end)
        });
        self.started.clear();
        self.started_nodes.clear();
        self.decided.clear();
        true
    }

    /// What the observation reads on a topology: which of the first K waiting jobs fit now,
    /// and the free memory and GPUs (fractions of the machine's).
    fn observe(&mut self, call: &mut CallState, view: &NodeView<'_>) {
        call.fits.clear();
        self.failed.clear();
        for i in 0..call.waiting.len().min(self.k) {
            let w = call.waiting[i];
            let job = &view.jobs[w.job as usize];
            let fits = !self.failed.contains(job, false) && self.place(view, w.job).is_some();
            if !fits {
                self.failed.insert(job, false);
            }
            call.fits.push(u8::from(fits));
        }
        let mut free = ResourceVec::ZERO;
        for class in 0..view.layout.classes().len() as u32 {
            free += self.pass.class_free(view, class);
        }
        let capacity = self.capacity.unwrap_or(ResourceVec::ZERO).0;
        let fraction = |free: u64, total: u64| {
            if total == 0 {
                0.0
            } else {
                free as f64 / total as f64
            }
        };
        call.free_memory = fraction(free.0[1], capacity[1]);
        call.free_gpus = fraction(free.0[2], capacity[2]);
    }
}

impl NodeScheduler for NodeAgent {
    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        let shared = Rc::clone(&self.shared);
        let mut shared = shared.borrow_mut();
        let shared = &mut *shared;
        // A resumed call sees the same view: its state is the one it suspended with.
        if !std::mem::take(&mut shared.suspended) && !self.fill(shared, view) {
            return;
        }
        loop {
            if let Some(job) = shared.committed {
                let Some(slot) = shared.call.waiting.iter().position(|w| w.job == job) else {
                    shared.committed = None;
                    continue;
                };
                if let Some((class, shape)) = self.place(view, job) {
                    self.start(&mut shared.call, view, slot, class, shape);
                    shared.committed = None;
                    continue;
                }
                shared.backfilled += match self.backfill {
                    Backfill::Easy => self.easy(&mut shared.call, view, slot),
                    Backfill::None | Backfill::Conservative => 0,
                };
                break;
            }
            if shared.call.waiting.is_empty() || shared.call.free <= 0 {
                break;
            }
            match shared.action.take() {
                Some(slot) => {
                    let job = shared.call.waiting[slot].job;
                    match self.place(view, job) {
                        Some((class, shape)) => {
                            self.start(&mut shared.call, view, slot, class, shape)
                        }
                        None => shared.committed = Some(job),
                    }
                }
                None => {
                    self.observe(&mut shared.call, view);
                    shared.suspended = true;
                    return;
                }
            }
        }
        for &(pos, class, from, to) in &self.decided {
            decisions.start(pos, class, &self.started_nodes[from as usize..to as usize]);
        }
    }

    // The usage ledger needs each job's start; the agent keeps no queue order to charge.
    fn started(&mut self, now: Time, job: u32, _class: u32) {
        if self.shared.borrow().track_usage {
            self.start_of.insert(job, now);
        }
    }

    fn suspended(&mut self) -> bool {
        self.shared.borrow().suspended
    }
}
