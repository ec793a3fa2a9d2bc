//! [`WaitingIndex`]: pool-level EASY's index over the waiting jobs, so that backfilling finds
//! the next job that can start without walking every job after the head (issue 36).
//!
//! EASY's backfilling pass starts, in queue order, every job that fits in the units free now and
//! either ends by the shadow time or fits in the extra units. Walked job by job, a call costs
//! the whole queue after the head whenever something is free but little fits, which is every
//! call under sustained overload (2× the jobs cost 3.6× the time on HPC2N with submit times ÷ 3).
//! The index answers "the first waiting job after job `a`, in submission order, whose unit
//! demand is ≤ `f` and whose requested time is ≤ `t`, or whose unit demand is ≤ `g`" from
//! segment trees, one per *demand class* (the bit length of the unit demand: 1, 2–3, 4–7, …).
//! Each tree keeps, per node, the least demand and the least requested time of its live jobs.
//! In a class whose demands are all ≤ `f` the test on those minima is exact; only the class
//! holding `f` can offer a job that turns out not to fit (a demand between `f` and the class's
//! top), and the caller checks every candidate exactly anyway (all resource components, the
//! scheduler's own rule), so the index only ever skips jobs that cannot start.
//!
//! The index mirrors the engine's queue between calls the way conservative's plan does: jobs
//! arrive at the tail in submission order and leave when this scheduler starts them
//! ([`WaitingIndex::started`]); anything else — a job inserted before later ones or withdrawn
//! under queue limits — bumps [`Queue::reorders`], and the index is rebuilt from the queue.

use super::QueuedJob;
use crate::sim::job::Time;
use crate::sim::queue::Queue;

/// Demand classes: the bit length of a `u64` unit demand, 0 to 64.
const CLASSES: usize = 65;

/// The class of a unit demand: its bit length (0 for 0, 1 for 1, 2 for 2–3, …).
fn class_of(units: u64) -> usize {
    (u64::BITS - units.leading_zeros()) as usize
}

/// One class's waiting jobs in submission order over a segment tree of (least demand, least
/// requested time); a started job's leaf is emptied, and the class is compacted once its
/// emptied leaves outnumber its live ones.
#[derive(Clone, Debug, Default)]
struct ClassTree {
    /// Workload index of each entry, increasing.
    jobs: Vec<u32>,
    live: usize,
    /// Leaves (a power of two, or 0); node 1 is the root, leaf i is node `cap + i`.
    cap: usize,
    min_units: Vec<u64>,
    min_req: Vec<Time>,
}

const EMPTY_UNITS: u64 = u64::MAX;
const EMPTY_REQ: Time = Time::MAX;

impl ClassTree {
    fn push(&mut self, job: u32, units: u64, req: Time) {
        let i = self.jobs.len();
        if i == self.cap {
            self.regrow((2 * self.cap).max(16));
        }
        self.jobs.push(job);
        self.live += 1;
        self.set(i, units, req);
    }

    /// Rebuilds the tree with `cap` leaves from the current leaves (entries in `jobs`).
    fn regrow(&mut self, cap: usize) {
        let old_cap = self.cap;
        let mut units = vec![EMPTY_UNITS; 2 * cap];
        let mut req = vec![EMPTY_REQ; 2 * cap];
        let n = self.jobs.len();
        units[cap..cap + n].copy_from_slice(&self.min_units[old_cap..old_cap + n]);
        req[cap..cap + n].copy_from_slice(&self.min_req[old_cap..old_cap + n]);
        for n in (1..cap).rev() {
            units[n] = units[2 * n].min(units[2 * n + 1]);
            req[n] = req[2 * n].min(req[2 * n + 1]);
        }
        self.cap = cap;
        self.min_units = units;
        self.min_req = req;
    }

    fn set(&mut self, i: usize, units: u64, req: Time) {
        let mut n = self.cap + i;
        self.min_units[n] = units;
        self.min_req[n] = req;
        while n > 1 {
            n /= 2;
            self.min_units[n] = self.min_units[2 * n].min(self.min_units[2 * n + 1]);
            self.min_req[n] = self.min_req[2 * n].min(self.min_req[2 * n + 1]);
        }
    }

    /// Empties `job`'s leaf; false when the class does not hold it live.
    fn remove(&mut self, job: u32) -> bool {
        let Ok(i) = self.jobs.binary_search(&job) else {
            return false;
        };
        if self.min_units[self.cap + i] == EMPTY_UNITS {
            return false;
        }
        self.set(i, EMPTY_UNITS, EMPTY_REQ);
        self.live -= 1;
        let dead = self.jobs.len() - self.live;
        if dead > self.live && dead >= 64 {
            self.compact();
        }
        true
    }

    /// Drops the emptied entries (O(class size), amortised over the removals that emptied them).
    fn compact(&mut self) {
        let cap = self.cap;
        let mut kept = 0;
        for i in 0..self.jobs.len() {
            if self.min_units[cap + i] != EMPTY_UNITS {
                self.jobs[kept] = self.jobs[i];
                self.min_units[cap + kept] = self.min_units[cap + i];
                self.min_req[cap + kept] = self.min_req[cap + i];
                kept += 1;
            }
        }
        for i in kept..self.jobs.len() {
            self.min_units[cap + i] = EMPTY_UNITS;
            self.min_req[cap + i] = EMPTY_REQ;
        }
        self.jobs.truncate(kept);
        let new_cap = kept.next_power_of_two().max(16);
        if new_cap < cap {
            self.regrow(new_cap);
        } else {
            for n in (1..cap).rev() {
                self.min_units[n] = self.min_units[2 * n].min(self.min_units[2 * n + 1]);
                self.min_req[n] = self.min_req[2 * n].min(self.min_req[2 * n + 1]);
            }
        }
    }

    /// The first live job after workload index `after` (all when `None`) with (units ≤ `f` and
    /// requested time ≤ `t`) or units ≤ `g`, judged on the tree's minima: a superset of the
    /// jobs that satisfy it, exact at the leaves.
    fn first_after(&self, after: Option<u32>, f: u64, t: Time, g: u64) -> Option<u32> {
        if self.live == 0 {
            return None;
        }
        let start = after.map_or(0, |a| self.jobs.partition_point(|&j| j <= a));
        if start >= self.jobs.len() {
            return None;
        }
        self.find(1, 0, self.cap, start, f, t, g)
            .map(|i| self.jobs[i])
    }

    #[allow(clippy::too_many_arguments)]
    fn find(
        &self,
        node: usize,
        lo: usize,
        hi: usize,
        start: usize,
        f: u64,
        t: Time,
        g: u64,
    ) -> Option<usize> {
        if hi <= start {
            return None;
        }
        let units = self.min_units[node];
        if !(units <= g || (units <= f && self.min_req[node] <= t)) {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = lo + (hi - lo) / 2;
        self.find(2 * node, lo, mid, start, f, t, g)
            .or_else(|| self.find(2 * node + 1, mid, hi, start, f, t, g))
    }
}

/// The waiting jobs by demand class, mirroring the engine's queue (module documentation).
#[derive(Clone, Debug)]
pub struct WaitingIndex {
    classes: Vec<ClassTree>,
    /// Live jobs indexed.
    live: usize,
    /// The latest-submitted job indexed (arrivals come after it).
    last: Option<u32>,
    /// [`Queue::reorders`] when the index was last synchronised.
    reorders: u64,
    /// Whether the index mirrors the queue up to the recorded starts.
    valid: bool,
    /// Jobs started since the last synchronisation, with their unit demand.
    started: Vec<(u32, u64)>,
}

impl Default for WaitingIndex {
    fn default() -> Self {
        WaitingIndex {
            classes: vec![ClassTree::default(); CLASSES],
            live: 0,
            last: None,
            reorders: 0,
            valid: false,
            started: Vec::new(),
        }
    }
}

impl WaitingIndex {
    /// Records that `job` (unit demand `units`) was decided to start: it leaves the index at the
    /// next synchronisation. Dropped (and the index invalidated) once the record outgrows the
    /// queue, so that a run that seldom needs the index does not keep every start.
    pub fn started(&mut self, job: &QueuedJob) {
        if !self.valid {
            return;
        }
        self.started.push((job.job, job.demand.unit_count()));
        if self.started.len() > 2 * self.live + 1024 {
            self.invalidate();
        }
    }

    /// Whether the index mirrors the queue (and so records starts).
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Forgets everything: the next synchronisation rebuilds from the queue.
    pub fn invalidate(&mut self) {
        self.valid = false;
        self.started.clear();
    }

    /// Brings the index to `queue`: removes the recorded starts, adds the arrivals, or rebuilds
    /// when the queue changed in any other way.
    pub fn sync(&mut self, queue: &Queue) {
        if self.valid && queue.reorders() == self.reorders {
            let mut consistent = true;
            for &(job, units) in &self.started {
                if self.last.is_some_and(|l| job <= l) {
                    if self.classes[class_of(units)].remove(job) {
                        self.live -= 1;
                    } else {
                        consistent = false;
                    }
                }
            }
            self.started.clear();
            // Arrivals follow every indexed job, in submission order.
            consistent &= queue.len() >= self.live
                && queue
                    .get(self.live)
                    .is_none_or(|q| self.last.is_none_or(|l| q.job > l));
            if consistent {
                for q in queue.iter_from(self.live) {
                    self.add(q);
                }
                return;
            }
        }
        self.rebuild(queue);
    }

    fn rebuild(&mut self, queue: &Queue) {
        for class in &mut self.classes {
            if class.cap > 0 {
                *class = ClassTree::default();
            }
        }
        self.live = 0;
        self.last = None;
        self.started.clear();
        self.reorders = queue.reorders();
        self.valid = true;
        for q in queue.iter() {
            self.add(q);
        }
    }

    fn add(&mut self, q: &QueuedJob) {
        let units = q.demand.unit_count();
        self.classes[class_of(units)].push(q.job, units, q.requested_time);
        self.live += 1;
        self.last = Some(q.job);
    }

    /// The first waiting job submitted after `after` whose unit demand is ≤ `f` with a
    /// requested time ≤ `t`, or whose unit demand is ≤ `g` — possibly also an earlier job that
    /// only nearly does (a demand above `f` in `f`'s class): the caller checks it exactly.
    pub fn next_candidate(&self, after: u32, f: u64, t: Time, g: u64) -> Option<u32> {
        let top = class_of(f.max(g));
        self.classes[..=top]
            .iter()
            .filter_map(|c| c.first_after(Some(after), f, t, g))
            .min()
    }
}
