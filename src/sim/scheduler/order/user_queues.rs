//! [`UserQueues`]: the waiting jobs by user, kept between scheduler calls, read lazily in
//! fairshare order — users by key (smallest first), a user's jobs in submission order, the jobs
//! of users with exactly equal keys merged in submission order: the order
//! [`super::FairshareOrder::order`] writes whole (a property test compares the two,
//! `tests/fairshare_lazy.rs`).
//!
//! Writing the whole order costs O(queue) at every call, which a rule that stops early does not
//! need: FCFS reads only up to the first job that does not fit, yet paid for the whole queue at
//! every call (6× FCFS order on 500 nodes of Curie's shape, issue 36). EASY reads past its head,
//! but only the jobs backfilling may start: a pass hands over only the jobs a [`Within`]
//! admits, passing over a whole user when the least units and least requested time of its
//! waiting jobs (kept per user) show that none is, and the rule finds the queue positions of
//! the jobs it starts only. Aggressive reads most of the queue and keeps the whole order: a job
//! read through [`super::QueueOrder::next`] costs its queue position, O(log queue), more than
//! the whole order's linear passes (SDSC-BLUE: 0.43 → 0.58 CPU s lazily, session 21). Here the
//! queue is mirrored between calls the way [`super::super::easy_index::WaitingIndex`] mirrors
//! it — arrivals at the tail, the rule's own starts; anything else bumps [`Queue::reorders`] and
//! rebuilds it — so a call costs O(arrivals + users × log users) to sort the waiting users,
//! then per user reached O(1) to pass over it or O(1) per job read (O(log users) in a group of
//! equal keys, which a heap merges).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::Within;
use crate::sim::job::Time;
use crate::sim::queue::Queue;
use crate::sim::scheduler::QueuedJob;

/// A user's started jobs still in their deque are dropped once they outnumber the waiting ones
/// and at least this many.
const COMPACT_AT: u32 = 16;

#[derive(Clone, Debug, Default)]
pub struct UserQueues {
    /// Per user: their waiting jobs (by increasing workload index), copied from the queue so
    /// that a pass reads them without a look-up. Started jobs are dropped at once from the
    /// front, lazily elsewhere, so the front always waits.
    jobs: Vec<VecDeque<QueuedJob>>,
    /// Per user: started jobs still in `jobs`.
    stale: Vec<u32>,
    /// Per user: waiting jobs.
    live: Vec<u32>,
    /// Per user: the least units and the least requested time of their waiting jobs, so that a
    /// pass can pass over a user none of whose jobs a [`Within`] admits; `None` once a job
    /// holding one of them started, recomputed when a pass next asks.
    least: Vec<Option<(u64, Time)>>,
    /// Bit per workload job: waiting and mirrored here.
    waiting: Vec<u64>,
    /// The users with waiting jobs, in no particular order, and each one's index there.
    active: Vec<u32>,
    at: Vec<u32>,
    /// Waiting jobs mirrored, the latest one mirrored, and the queue's reorders then.
    tracked: usize,
    last: Option<u32>,
    reorders: u64,
    /// This pass: the waiting users with their keys, sorted; the next group of equal keys; a
    /// user alone in the current group as (user, the index of its next job in `jobs`), or the
    /// current group's users as (their next job, user, its index in `jobs`).
    sorted: Vec<(f64, u32)>,
    next_group: usize,
    alone: Option<(u32, u32)>,
    heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
}

const NOWHERE: u32 = u32::MAX;

impl UserQueues {
    pub fn new(users: usize) -> Self {
        UserQueues {
            jobs: vec![VecDeque::new(); users],
            stale: vec![0; users],
            live: vec![0; users],
            least: vec![None; users],
            at: vec![NOWHERE; users],
            ..UserQueues::default()
        }
    }

    /// The users with waiting jobs, in no particular order.
    pub fn users(&self) -> &[u32] {
        &self.active
    }

    /// Brings the mirror up to `queue`: adds the arrivals, or rebuilds it when the queue changed
    /// otherwise than by arrivals and the starts reported ([`UserQueues::started`]).
    pub fn sync(&mut self, queue: &Queue, user_of: impl Fn(u32) -> u32) {
        let consistent = queue.reorders() == self.reorders
            && queue.len() >= self.tracked
            && queue
                .get(self.tracked)
                .is_none_or(|q| self.last.is_none_or(|l| q.job > l));
        if !consistent {
            self.clear();
            self.reorders = queue.reorders();
        }
        let from = self.tracked;
        for q in queue.iter_from(from) {
            self.add(*q, user_of(q.job));
        }
    }

    fn clear(&mut self) {
        for &u in &self.active {
            let u = u as usize;
            for q in &self.jobs[u] {
                self.waiting[q.job as usize / 64] &= !(1 << (q.job % 64));
            }
            self.jobs[u].clear();
            self.stale[u] = 0;
            self.live[u] = 0;
            self.least[u] = None;
            self.at[u] = NOWHERE;
        }
        self.active.clear();
        self.tracked = 0;
        self.last = None;
    }

    fn add(&mut self, q: QueuedJob, user: u32) {
        let job = q.job;
        let word = job as usize / 64;
        if word >= self.waiting.len() {
            self.waiting.resize(word + 1, 0);
        }
        self.waiting[word] |= 1 << (job % 64);
        let u = user as usize;
        let units = q.demand.unit_count();
        if self.live[u] == 0 {
            self.at[u] = self.active.len() as u32;
            self.active.push(user);
            self.least[u] = Some((units, q.requested_time));
        } else if let Some((least, time)) = &mut self.least[u] {
            *least = (*least).min(units);
            *time = (*time).min(q.requested_time);
        }
        self.jobs[u].push_back(q);
        self.live[u] += 1;
        self.tracked += 1;
        self.last = Some(job);
    }

    fn is_waiting(&self, job: u32) -> bool {
        self.waiting
            .get(job as usize / 64)
            .is_some_and(|w| w & (1 << (job % 64)) != 0)
    }

    /// Job `job` of `user` started (jobs not mirrored are ignored).
    pub fn started(&mut self, job: u32, user: u32) {
        if !self.is_waiting(job) {
            return;
        }
        self.waiting[job as usize / 64] &= !(1 << (job % 64));
        self.tracked -= 1;
        let u = user as usize;
        self.live[u] -= 1;
        if self.live[u] == 0 {
            self.jobs[u].clear();
            self.stale[u] = 0;
            self.least[u] = None;
            let i = std::mem::replace(&mut self.at[u], NOWHERE) as usize;
            self.active.swap_remove(i);
            if let Some(&moved) = self.active.get(i) {
                self.at[moved as usize] = i as u32;
            }
            return;
        }
        self.stale[u] += 1;
        if let Some((least, time)) = self.least[u]
            && let Ok(i) = self.jobs[u].binary_search_by_key(&job, |q| q.job)
        {
            let q = &self.jobs[u][i];
            if q.demand.unit_count() == least || q.requested_time == time {
                self.least[u] = None;
            }
        }
        // Keep the front waiting: drop the started jobs it leads with.
        while let Some(front) = self.jobs[u].front()
            && !self.is_waiting(front.job)
        {
            self.jobs[u].pop_front();
            self.stale[u] -= 1;
        }
        if self.stale[u] >= COMPACT_AT && self.stale[u] > self.live[u] {
            let mut jobs = std::mem::take(&mut self.jobs[u]);
            jobs.retain(|q| self.is_waiting(q.job));
            self.jobs[u] = jobs;
            self.stale[u] = 0;
        }
    }

    /// Starts a pass in the order of `key` (smaller first): users sorted by key, then by their
    /// first waiting job.
    pub fn begin(&mut self, key: impl Fn(u32) -> f64) {
        self.sorted.clear();
        self.sorted.extend(self.active.iter().map(|&u| (key(u), u)));
        let jobs = &self.jobs;
        self.sorted.sort_unstable_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(jobs[a.1 as usize][0].job.cmp(&jobs[b.1 as usize][0].job))
        });
        self.next_group = 0;
        self.alone = None;
        self.heap.clear();
    }

    /// The next waiting job of the pass that `within` admits (the jobs passed over it does
    /// not admit).
    pub fn next_job(&mut self, within: Within) -> Option<QueuedJob> {
        loop {
            if let Some((u, i)) = self.alone {
                // A user alone in its group: its jobs in order, no heap.
                if let Some(k) = self.admitted(u, i as usize, within) {
                    self.alone = Some((u, k as u32 + 1));
                    return Some(self.jobs[u as usize][k]);
                }
                self.alone = None;
            }
            while let Some(Reverse((_, u, i))) = self.heap.pop() {
                let jobs = &self.jobs[u as usize];
                let i = i as usize;
                let after = (i + 1..jobs.len()).find(|&k| self.is_waiting(jobs[k].job));
                if let Some(k) = after {
                    self.heap.push(Reverse((jobs[k].job, u, k as u32)));
                }
                let q = &jobs[i];
                if within.admits(q.demand.unit_count(), q.requested_time) {
                    return Some(*q);
                }
            }
            // The next group: the users of exactly equal keys (mostly a user alone).
            let start = self.next_group;
            let &(key, u) = self.sorted.get(start)?;
            let end = start
                + 1
                + self.sorted[start + 1..]
                    .iter()
                    .take_while(|&&(k, _)| k == key)
                    .count();
            self.next_group = end;
            if end == start + 1 {
                self.alone = Some((u, 0));
                continue;
            }
            for &(_, u) in &self.sorted[start..end] {
                self.heap
                    .push(Reverse((self.jobs[u as usize][0].job, u, 0)));
            }
        }
    }

    /// The index of `user`'s first waiting job from index `from` on that `within` admits; none
    /// at once when the user's least units and requested time show that it admits none.
    fn admitted(&mut self, user: u32, from: usize, within: Within) -> Option<usize> {
        let u = user as usize;
        let (units, time) = match self.least[u] {
            Some(least) => least,
            None => {
                let least = self.jobs[u].iter().filter(|q| self.is_waiting(q.job)).fold(
                    (u64::MAX, Time::MAX),
                    |(units, time), q| {
                        (units.min(q.demand.unit_count()), time.min(q.requested_time))
                    },
                );
                self.least[u] = Some(least);
                least
            }
        };
        // The least units and the least time, though maybe of two jobs, are admitted whenever
        // some job is: `admits` only grows as either falls.
        if !within.admits(units, time) {
            return None;
        }
        let jobs = &self.jobs[u];
        (from..jobs.len()).find(|&k| {
            let q = &jobs[k];
            self.is_waiting(q.job) && within.admits(q.demand.unit_count(), q.requested_time)
        })
    }
}
