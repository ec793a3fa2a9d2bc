//! `compat: aleang`: AleaNG's `FairshareAggressiveBackfilling` as AleaNG implements it
//! (github.com/aleasimulator/AleaNG; docs/aleang.md states each rule with the AleaNG code it
//! follows). Our aggressive rule over `order: fairshare` is the same policy in principle; this
//! one reproduces what AleaNG's implementation does besides, so that its schedules can be
//! reproduced job for job:
//!
//! - **One start per selection, then a re-sort.** AleaNG's `selectJob` recomputes every user's
//!   fairshare factor, sorts each queue (queues in priority order) by factor, highest first,
//!   then job id, and starts the *first* job that fits on some cluster, then returns; the next
//!   selection follows the start. A start charges its owner at once with CPUs × requested time
//!   (`updateTemporaryUsageAndFFuponJobStart`), so the next selection may prefer another user.
//! - **AleaNG's factor.** FF = 2^(−(U_u/ΣU)/(S_u/ΣS)) over the users (flat: groups do not enter
//!   it), with U_u the sum of the completed usage (CPUs × occupied seconds, rounded; every user
//!   starts at 1), the temporary charge of starts and the running jobs' CPUs × elapsed seconds ×
//!   0.95 (its `PBS_factor`), each term rounded as Java's `Math.round` does. A user's temporary charge is
//!   dropped at the first selection more than one second after it was made, user by user in id
//!   order while the factors are recomputed (so a user's factor may still count a later user's
//!   charge), at every fairshare update (every `reorder` seconds), at each of the user's job
//!   completions and at each decay (× factor, rounded, every `decay.every` seconds).
//! - **Clusters by size.** A job tries the clusters in AleaNG's order — most CPUs first (ties:
//!   the faster first, then file order) — not in the machine file's order.
//! - **Sub-second order within an instant.** AleaNG's starts reach its resources one after
//!   another, a fraction of a second apart, so jobs started at the same second end apart: the
//!   scheduler learns of each end separately and runs a selection chain after each. Here every
//!   start gets a sub-second position (two ticks after the previous selection of its chain) and
//!   the nodes of the jobs that ended at this instant are held back and released one job at a
//!   time in the order of their positions, each release followed by a selection chain; a chain
//!   in progress sees the ends its selections have reached. The ticks only order events within a
//!   second: they never add up to one.
//!
//! The engine keeps each job on its nodes one second longer than its run time under this
//! setting ([`crate::sim::compat::Compat::occupancy`]). CPU quotas are AleaNG's (running jobs
//! only): a candidate must fit its quotas beside the jobs started earlier in the call and the
//! jobs whose end has not been released yet.

use super::pass::Pass;
use super::{Decisions, NodeScheduler, NodeView};
use crate::sim::fairshare::{Decay, FairshareSpec};
use crate::sim::job::{Time, Workload};
use crate::sim::scheduler::order::Reorder;
use crate::sim::topology::NodeShape;

/// AleaNG's `PBS_factor` (Example1's configuration.properties): running jobs count 0.95 of their
/// CPU time in the factor.
const PBS_FACTOR: f64 = 0.95;

/// AleaNG's scheduler starts its periodic events (fairshare updates, decay) this many seconds
/// before the first job arrives: its resources register 10 s into the run, and the job loader is
/// woken 5 s after that (`Scheduler.body`), its first job arriving then.
const PERIODIC_LEAD: Time = 5;

/// Java's `Math.round(double)`: the nearest integer, halves up.
fn java_round(x: f64) -> i64 {
    (x + 0.5).floor() as i64
}

#[derive(Clone, Debug)]
struct User {
    share: f64,
    /// Usage of completed jobs (`cumul_usage`), decayed.
    cumul: i64,
    /// Charges of starts not yet dropped (`temporary_usage`).
    temp: i64,
    /// When `temp` was last set or dropped (`last_temp_timestamp`).
    stamp: Time,
    /// Its running jobs.
    running: Vec<u32>,
}

#[derive(Clone, Debug)]
struct Held {
    class: u32,
    shape: NodeShape,
    nodes: Vec<u32>,
}

/// A start decided in the current call, until the engine confirms it.
#[derive(Clone, Copy, Debug)]
struct Tentative {
    job: u32,
    charge: i64,
}

/// Which of AleaNG's particular behaviours a run reproduces: all of them under `compat: aleang`
/// ([`AleangParts::ALL`]); the others exist to measure what each one changes (docs/aleang.md,
/// tests/aleang_example1.rs). The second on the nodes is the engine's
/// ([`crate::sim::compat::Compat::occupancy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AleangParts {
    /// The ends of one instant released one by one in their sub-second order (else all at
    /// once, before the first selection).
    pub sub_second: bool,
    /// Clusters by descending CPUs (else in the machine file's order).
    pub cluster_order: bool,
    /// A start charges its owner CPUs × requested time at once (else only running and
    /// completed jobs count).
    pub charge_at_start: bool,
}

impl AleangParts {
    pub const ALL: AleangParts = AleangParts {
        sub_second: true,
        cluster_order: true,
        charge_at_start: true,
    };
}

pub struct AleangAggressive {
    parts: AleangParts,
    users: Vec<User>,
    /// Per job: its user's index.
    user_of: Vec<u32>,
    /// Per job: its SWF id (AleaNG's tie-break) and CPUs.
    ids: Vec<u64>,
    cpus: Vec<u32>,
    total_shares: f64,
    decay: Option<(f64, Time)>,
    tick: Option<Time>,
    origin: Time,
    /// Periodic events already applied: the next decay's and update's indices.
    next_decay: i64,
    next_tick: i64,
    /// Per job: its start, its sub-second position, its nodes while it runs.
    start: Vec<Time>,
    offset: Vec<u64>,
    held: Vec<Option<Held>>,
    /// Per job: started in the current call.
    in_call: Vec<bool>,
    tentative: Vec<Tentative>,
    confirmed: Vec<u32>,
    /// Per class: its rank in AleaNG's cluster order (computed at the first call).
    rank: Vec<u32>,
    pass: Pass,
    nodes: Vec<u32>,
    ff: Vec<f64>,
    candidates: Vec<(i64, f64, u64, usize)>,
    classes: Vec<u32>,
    /// The ended jobs of this call whose nodes are still held back, and those started.
    pending: Vec<u32>,
    started_now: Vec<u32>,
    last_now: Option<Time>,
    last_offset: u64,
}

impl AleangAggressive {
    /// For a run of `workload` with `spec`'s shares and decay; fairshare updates every `reorder`
    /// seconds (AleaNG's `fairshare_update_interval`).
    pub fn new(workload: &Workload, spec: &FairshareSpec, reorder: Reorder) -> Self {
        AleangAggressive::with_parts(workload, spec, reorder, AleangParts::ALL)
    }

    /// [`AleangAggressive::new`] reproducing only `parts`.
    pub fn with_parts(
        workload: &Workload,
        spec: &FairshareSpec,
        reorder: Reorder,
        parts: AleangParts,
    ) -> Self {
        // AleaNG's users: those of its .users file (the manifest's shares) and of the trace,
        // present from the start, in id order.
        let mut ids: Vec<i32> = workload.jobs.iter().map(|j| j.user).collect();
        ids.extend(spec.shares.users.keys().copied());
        ids.sort_unstable();
        ids.dedup();
        let users: Vec<User> = ids
            .iter()
            .map(|id| User {
                share: spec.shares.users.get(id).copied().unwrap_or(1.0),
                cumul: 1,
                temp: 0,
                stamp: 0,
                running: Vec::new(),
            })
            .collect();
        let user_of = workload
            .jobs
            .iter()
            .map(|j| ids.binary_search(&j.user).expect("every user is listed") as u32)
            .collect();
        let total_shares = users.iter().map(|u| u.share).sum::<f64>().max(1.0);
        let decay = match spec.decay {
            Decay::Factor { factor, every } if every > 0 => Some((factor, every)),
            _ => None,
        };
        let tick = match reorder {
            Reorder::Every(n) if n > 0 => Some(n),
            _ => None,
        };
        let n = workload.len();
        let origin = workload.jobs.first().map_or(0, |j| j.submit) - PERIODIC_LEAD;
        AleangAggressive {
            parts,
            ff: vec![0.0; users.len()],
            users,
            user_of,
            ids: workload.jobs.iter().map(|j| j.id).collect(),
            cpus: workload.jobs.iter().map(|j| j.procs).collect(),
            total_shares,
            decay,
            tick,
            origin,
            next_decay: 0,
            next_tick: 0,
            start: vec![0; n],
            offset: vec![0; n],
            held: vec![None; n],
            in_call: vec![false; n],
            tentative: Vec::new(),
            confirmed: Vec::new(),
            rank: Vec::new(),
            pass: Pass::default(),
            nodes: Vec::new(),
            candidates: Vec::new(),
            classes: Vec::new(),
            pending: Vec::new(),
            started_now: Vec::new(),
            last_now: None,
            last_offset: 0,
        }
    }

    /// AleaNG's cluster order (`Scheduler.body`): most CPUs first, then the faster, then file
    /// order.
    fn rank_classes(&mut self, view: &NodeView<'_>) {
        let classes = view.layout.classes();
        let mut cluster_cores: Vec<u64> = Vec::new();
        for c in classes {
            let i = c.cluster as usize;
            if cluster_cores.len() <= i {
                cluster_cores.resize(i + 1, 0);
            }
            cluster_cores[i] += u64::from(c.nodes.end - c.nodes.start) * c.capacity.per_node.0[0];
        }
        let mut order: Vec<u32> = (0..classes.len() as u32).collect();
        let by_size = self.parts.cluster_order;
        order.sort_by(|&a, &b| {
            if !by_size {
                return a.cmp(&b);
            }
            let (ca, cb) = (&classes[a as usize], &classes[b as usize]);
            cluster_cores[cb.cluster as usize]
                .cmp(&cluster_cores[ca.cluster as usize])
                .then(cb.speed.total_cmp(&ca.speed))
                .then(a.cmp(&b))
        });
        self.rank = vec![0; classes.len()];
        for (r, &c) in order.iter().enumerate() {
            self.rank[c as usize] = r as u32;
        }
    }

    /// Fairshare updates and decays due by `now` (AleaNG's `FAIRSHARE_UPDATE` and
    /// `FAIRSHARE_WEIGHT_DECAY` events), in time order.
    fn periodic(&mut self, now: Time) {
        loop {
            let tick = self.tick.map(|t| self.origin + self.next_tick * t);
            let decay = self.decay.map(|(_, e)| self.origin + self.next_decay * e);
            let due = |t: Option<Time>| t.filter(|&t| t <= now);
            let tick_first = match (due(tick), due(decay)) {
                (None, None) => break,
                (Some(t), Some(d)) => t < d,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            if tick_first {
                self.drop_charges(tick.expect("a fairshare update is due"));
                self.next_tick += 1;
            } else {
                let d = decay.expect("a decay is due");
                let factor = self.decay.expect("a decay is due").0;
                for u in &mut self.users {
                    u.cumul = java_round(u.cumul as f64 * factor);
                    u.temp = 0;
                    u.stamp = d;
                }
                self.next_decay += 1;
            }
        }
    }

    /// `resetTemporaryUsage` at `now` without the factors: charges over a second old dropped.
    fn drop_charges(&mut self, now: Time) {
        for u in &mut self.users {
            if now > u.stamp + 1 {
                u.temp = 0;
                u.stamp = now;
            }
        }
    }

    /// `resetTemporaryUsageAndUpdateFF` at `now`: users in id order, each one's charge dropped
    /// (if over a second old) before its factor is computed against the total of that moment.
    fn refresh(&mut self, now: Time) {
        let running: Vec<i64> = self
            .users
            .iter()
            .map(|u| {
                u.running
                    .iter()
                    .map(|&j| {
                        let elapsed = (now - self.start[j as usize]) as f64;
                        java_round(f64::from(self.cpus[j as usize]) * elapsed * PBS_FACTOR)
                    })
                    .sum()
            })
            .collect();
        let mut total: i64 = self
            .users
            .iter()
            .zip(&running)
            .map(|(u, r)| u.cumul + u.temp + r)
            .sum();
        for (i, u) in self.users.iter_mut().enumerate() {
            if now > u.stamp + 1 {
                total -= u.temp;
                u.temp = 0;
                u.stamp = now;
            }
            let usage = (u.cumul + u.temp + running[i]) as f64 / (total as f64).max(1e-8);
            let target = u.share / self.total_shares;
            self.ff[i] = 2f64.powf(-(usage / target));
        }
    }

    /// One `selectJob`: the first job, queues in priority order and each by factor then id,
    /// that fits some cluster now and its CPU quotas. `None` when nothing does.
    fn select(&mut self, view: &NodeView<'_>, now: Time) -> Option<(usize, u32)> {
        let free: u64 = (0..view.layout.classes().len() as u32)
            .map(|c| self.pass.free_cores(view, c))
            .sum();
        if free == 0 {
            // AleaNG returns before recomputing anything when no CPU is free.
            return None;
        }
        self.refresh(now);
        self.candidates.clear();
        for (pos, q) in view.queue.iter().enumerate() {
            let j = q.job as usize;
            if self.in_call[j] {
                continue;
            }
            let tier = view.limits.map_or(0, |l| l.order_key(q.job).0);
            let ff = self.ff[self.user_of[j] as usize];
            self.candidates.push((tier, ff, self.ids[j], pos));
        }
        self.candidates.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(b.1.total_cmp(&a.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        for i in 0..self.candidates.len() {
            let pos = self.candidates[i].3;
            let job = view.queue[pos].job;
            self.classes.clear();
            self.classes.extend_from_slice(view.classes_of(job));
            let rank = &self.rank;
            self.classes.sort_by_key(|&c| rank[c as usize]);
            for k in 0..self.classes.len() {
                let class = self.classes[k];
                let Some(shape) = view.shape(job, class) else {
                    continue;
                };
                if !self.pass.select_any(view, class, &shape, &mut self.nodes) {
                    continue;
                }
                // Quotas count the running jobs, the jobs started earlier in this call and the
                // ended jobs whose end AleaNG has not processed yet.
                if let Some(l) = view.limits {
                    let list = self
                        .pending
                        .iter()
                        .chain(&self.started_now)
                        .copied()
                        .chain([job]);
                    let len = self.pending.len() + self.started_now.len() + 1;
                    if l.quota_prefix(list) < len {
                        break;
                    }
                }
                return Some((pos, class));
            }
        }
        None
    }

    /// Starts `job` (queue position `pos`) on `class` at `now`, at sub-second position `offset`.
    fn start(
        &mut self,
        view: &NodeView<'_>,
        decisions: &mut Decisions,
        pos: usize,
        class: u32,
        offset: u64,
    ) {
        let job = view.queue[pos].job;
        let j = job as usize;
        let shape = view.shape(job, class).expect("selected on this class");
        self.pass.take(view, class, &shape, &self.nodes);
        decisions.start(pos, class, &self.nodes);
        self.held[j] = Some(Held {
            class,
            shape,
            nodes: self.nodes.clone(),
        });
        self.start[j] = view.now;
        self.offset[j] = offset;
        self.in_call[j] = true;
        self.started_now.push(job);
        // updateTemporaryUsageAndFFuponJobStart: CPUs × requested time, at once.
        let charge = if self.parts.charge_at_start {
            java_round(f64::from(self.cpus[j]) * view.jobs[j].requested_time as f64)
        } else {
            0
        };
        let u = &mut self.users[self.user_of[j] as usize];
        u.temp += charge;
        u.stamp = view.now;
        u.running.push(job);
        self.tentative.push(Tentative { job, charge });
    }

    /// The end of `job`, ended at `end`, reaches the scheduler: its nodes are released and its
    /// usage settled (`updateUsageAndFFafterCompletion`).
    fn release(&mut self, view: &NodeView<'_>, job: u32, end: Time) {
        let j = job as usize;
        if let Some(h) = self.held[j].take() {
            self.pass.untake(view, h.class, &h.shape, &h.nodes);
        }
        let used = java_round(f64::from(self.cpus[j]) * (end - self.start[j]) as f64);
        let u = &mut self.users[self.user_of[j] as usize];
        u.cumul += used;
        u.temp = 0;
        u.stamp = view.now;
        if let Some(i) = u.running.iter().position(|&r| r == job) {
            u.running.swap_remove(i);
        }
    }

    /// Undoes the starts of the previous call the engine did not make (it makes them all when
    /// every decision keeps the quotas, as [`AleangAggressive::select`] ensures).
    fn settle(&mut self) {
        for t in std::mem::take(&mut self.tentative) {
            if self.confirmed.contains(&t.job) {
                continue;
            }
            let j = t.job as usize;
            self.held[j] = None;
            let u = &mut self.users[self.user_of[j] as usize];
            u.temp -= t.charge;
            if let Some(i) = u.running.iter().position(|&r| r == t.job) {
                u.running.swap_remove(i);
            }
        }
        self.confirmed.clear();
    }
}

impl NodeScheduler for AleangAggressive {
    fn schedule(&mut self, view: &NodeView<'_>, decisions: &mut Decisions) {
        let now = view.now;
        if self.rank.len() != view.layout.classes().len() {
            self.rank_classes(view);
        }
        self.settle();
        for &j in &self.started_now {
            self.in_call[j as usize] = false;
        }
        self.started_now.clear();
        self.periodic(now);
        self.pass.begin(view);
        // The jobs that ended now, in the order their ends reach AleaNG's scheduler: each one's
        // end arrives one tick after its start's sub-second position. Their nodes are held back
        // until then.
        let mut ended: Vec<(u64, u32, Time)> = view
            .completed
            .iter()
            .map(|c| {
                let at = if c.end < now || !self.parts.sub_second {
                    0
                } else {
                    self.offset[c.job as usize] + 1
                };
                (at, c.job, c.end)
            })
            .collect();
        ended.sort_unstable();
        self.pending.clear();
        for &(_, job, _) in &ended {
            if let Some(h) = &self.held[job as usize] {
                self.pass.take(view, h.class, &h.shape, &h.nodes);
            }
            self.pending.push(job);
        }
        let mut at = if self.last_now == Some(now) {
            self.last_offset
        } else {
            0
        };
        let mut next = 0;
        loop {
            while next < ended.len() && ended[next].0 <= at {
                let (_, job, end) = ended[next];
                self.release(view, job, end);
                self.pending.retain(|&p| p != job);
                next += 1;
            }
            if let Some((pos, class)) = self.select(view, now) {
                self.start(view, decisions, pos, class, at + 1);
                at += 2;
                continue;
            }
            match ended.get(next) {
                Some(&(t, _, _)) => at = at.max(t),
                None => break,
            }
        }
        self.last_now = Some(now);
        self.last_offset = at;
    }

    fn started(&mut self, _now: Time, job: u32, _class: u32) {
        self.confirmed.push(job);
    }
}
