//! [`UserQueues`]: the waiting jobs by user, kept between scheduler calls, read lazily in
//! fairshare order — users by key (smallest first), a user's jobs in submission order, the jobs
//! of users with exactly equal keys merged in submission order: the order
//! [`super::FairshareOrder::order`] writes whole (a property test compares the two,
//! `tests/fairshare_lazy.rs`).
//!
//! Writing the whole order costs O(queue) at every call, which a rule that stops early does not
//! need: FCFS reads only up to the first job that does not fit, yet paid for the whole queue at
//! every call (6× FCFS order on 500 nodes of Curie's shape, issue 36). Rules that read most of
//! the queue (EASY, aggressive) keep the whole order: a job read lazily costs its queue position,
//! O(log queue), more than the whole order's linear passes (SDSC-BLUE, EASY: 0.35 → 0.51 CPU s
//! lazily, 30 % of it in `Queue::find`). Here the queue is mirrored
//! between calls the way [`super::super::easy_index::WaitingIndex`] mirrors it — arrivals at the
//! tail, the rule's own starts; anything else bumps [`Queue::reorders`] and rebuilds it — so a
//! call costs O(arrivals + users × log users) to sort the waiting users, then O(log users) per
//! job read (a heap merges users of equal keys) plus the job's queue position (O(log queue)).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::sim::queue::Queue;

/// A user's started jobs still in their deque are dropped once they outnumber the waiting ones
/// and at least this many.
const COMPACT_AT: u32 = 16;

#[derive(Clone, Debug, Default)]
pub struct UserQueues {
    /// Per user: their waiting jobs (workload indices, increasing). Started jobs are dropped at
    /// once from the front, lazily elsewhere, so the front always waits.
    jobs: Vec<VecDeque<u32>>,
    /// Per user: started jobs still in `jobs`.
    stale: Vec<u32>,
    /// Per user: waiting jobs.
    live: Vec<u32>,
    /// Bit per workload job: waiting and mirrored here.
    waiting: Vec<u64>,
    /// The users with waiting jobs, in no particular order, and each one's index there.
    active: Vec<u32>,
    at: Vec<u32>,
    /// Waiting jobs mirrored, the latest one mirrored, and the queue's reorders then.
    tracked: usize,
    last: Option<u32>,
    reorders: u64,
    /// This pass: the waiting users with their keys, sorted; the next group of equal keys; the
    /// current group's users as (their next job, user, its index in `jobs`).
    sorted: Vec<(f64, u32)>,
    next_group: usize,
    heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
}

const NOWHERE: u32 = u32::MAX;

impl UserQueues {
    pub fn new(users: usize) -> Self {
        UserQueues {
            jobs: vec![VecDeque::new(); users],
            stale: vec![0; users],
            live: vec![0; users],
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
            self.add(q.job, user_of(q.job));
        }
    }

    fn clear(&mut self) {
        for &u in &self.active {
            let u = u as usize;
            for &job in &self.jobs[u] {
                self.waiting[job as usize / 64] &= !(1 << (job % 64));
            }
            self.jobs[u].clear();
            self.stale[u] = 0;
            self.live[u] = 0;
            self.at[u] = NOWHERE;
        }
        self.active.clear();
        self.tracked = 0;
        self.last = None;
    }

    fn add(&mut self, job: u32, user: u32) {
        let word = job as usize / 64;
        if word >= self.waiting.len() {
            self.waiting.resize(word + 1, 0);
        }
        self.waiting[word] |= 1 << (job % 64);
        let u = user as usize;
        if self.live[u] == 0 {
            self.at[u] = self.active.len() as u32;
            self.active.push(user);
        }
        self.jobs[u].push_back(job);
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
            let i = std::mem::replace(&mut self.at[u], NOWHERE) as usize;
            self.active.swap_remove(i);
            if let Some(&moved) = self.active.get(i) {
                self.at[moved as usize] = i as u32;
            }
            return;
        }
        self.stale[u] += 1;
        // Keep the front waiting: drop the started jobs it leads with.
        while let Some(&front) = self.jobs[u].front()
            && !self.is_waiting(front)
        {
            self.jobs[u].pop_front();
            self.stale[u] -= 1;
        }
        if self.stale[u] >= COMPACT_AT && self.stale[u] > self.live[u] {
            let mut jobs = std::mem::take(&mut self.jobs[u]);
            jobs.retain(|&j| self.is_waiting(j));
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
                .then(jobs[a.1 as usize][0].cmp(&jobs[b.1 as usize][0]))
        });
        self.next_group = 0;
        self.heap.clear();
    }

    /// The next waiting job of the pass, as a workload index.
    pub fn next_job(&mut self) -> Option<u32> {
        if self.heap.is_empty() {
            // The next group: the users of exactly equal keys (mostly a user alone).
            let start = self.next_group;
            let &(key, _) = self.sorted.get(start)?;
            let end = start
                + 1
                + self.sorted[start + 1..]
                    .iter()
                    .take_while(|&&(k, _)| k == key)
                    .count();
            for &(_, u) in &self.sorted[start..end] {
                self.heap.push(Reverse((self.jobs[u as usize][0], u, 0)));
            }
            self.next_group = end;
        }
        let Reverse((job, u, i)) = self.heap.pop()?;
        let jobs = &self.jobs[u as usize];
        let after = (i as usize + 1..jobs.len()).find(|&k| self.is_waiting(jobs[k]));
        if let Some(k) = after {
            let next = jobs[k];
            self.heap.push(Reverse((next, u, k as u32)));
        }
        Some(job)
    }
}
