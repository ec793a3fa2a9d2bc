//! [`UserQueues`]: the waiting jobs by user, kept between scheduler calls, read in fairshare
//! order — users by key (smallest first), a user's jobs in submission order, the jobs of users
//! with exactly equal keys merged in submission order (a property test compares it with that
//! order bucketed and sorted afresh at every call, `tests/fairshare_lazy.rs`). Rules that read
//! the whole order ([`super::FairshareOrder::order`]) have it written at once
//! ([`UserQueues::write_all`], one walk whatever each job is written as), not read through a
//! pass; a write drops the started jobs of the users it copies, so that each is read once.
//! Node-level EASY reads it uncopied as runs by user ([`UserQueues::write_runs`]), the users
//! whose jobs changed since the last call stamped anew.
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
//! rebuilds it — and the waiting users are kept sorted by key between calls too: a pass
//! re-places only the users touched since the last one (those who came to wait or stopped
//! waiting, and those whose keys changed: the order says which, [`UserQueues::touch`]), by
//! binary search, unless every key may have moved ([`UserQueues::begin`] sorts them all
//! afresh). A call then costs O(arrivals + touched users × log users), plus a move of the
//! sorted users per re-placed one, then per user reached O(1) to pass over it or O(1) per job
//! read (O(log users) in a group of equal keys, which a heap merges).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use super::{NO_OWNER, OrderRuns, Run, Within};
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
    /// front, lazily elsewhere (by a whole-order write, or once they outnumber the waiting
    /// ones), so the front always waits.
    jobs: Vec<VecDeque<QueuedJob>>,
    /// Per user: started jobs still in `jobs`.
    stale: Vec<u32>,
    /// Per user: waiting jobs.
    live: Vec<u32>,
    /// Per user: the least units and the least requested time of their waiting jobs, so that a
    /// pass can pass over a user none of whose jobs a [`Within`] admits (`admits` of the two,
    /// though maybe of two jobs, is false only then: it only grows as either falls); `None`
    /// once a job holding one of them started, recomputed when a pass next asks.
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
    /// The waiting users as (key, user), by key then user, kept between passes; per user, their
    /// key there when placed. Users of equal keys form one group whatever their places in it
    /// (a pass merges a group by the users' first waiting jobs), so a start need not move its
    /// user unless it leaves them no waiting job.
    sorted: Vec<(f64, u32)>,
    placed: Vec<Option<f64>>,
    /// The users whose entry may be stale since the last pass began (each once, flagged in
    /// `is_touched`), and whether every entry is (the mirror was rebuilt).
    touched: Vec<u32>,
    is_touched: Vec<bool>,
    unsorted: bool,
    /// This pass: the next group of equal keys in `sorted`; a user alone in the current group
    /// as (user, the index of its next job in `jobs`), or the current group's users as (their
    /// next job, user, its index in `jobs`).
    next_group: usize,
    alone: Option<(u32, u32)>,
    heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
    /// A whole-order write's group of several users of equal keys, sorted.
    group: Vec<QueuedJob>,
    /// Per user: a stamp given afresh whenever a job of theirs arrives or starts, and the
    /// stamps given so far ([`super::Run::stamp`]).
    stamp: Vec<u64>,
    stamps: u64,
    /// The users stamped anew since the last [`UserQueues::write_runs`] (each once, flagged).
    changed: Vec<u32>,
    is_changed: Vec<bool>,
    /// The last [`UserQueues::write_runs`]'s groups of several users of equal keys, and their
    /// jobs merged.
    merged_groups: Vec<MergedGroup>,
    merged: Vec<QueuedJob>,
}

/// A group of several users of equal keys in a [`UserQueues::write_runs`]: their places in the
/// sorted users and their jobs' in the merged jobs.
#[derive(Clone, Copy, Debug)]
struct MergedGroup {
    users: (u32, u32),
    jobs: (u32, u32),
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
            placed: vec![None; users],
            is_touched: vec![false; users],
            stamp: vec![0; users],
            is_changed: vec![false; users],
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
        self.unsorted = true;
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
            self.touch(user);
        } else if let Some((least, time)) = &mut self.least[u] {
            *least = (*least).min(units);
            *time = (*time).min(q.requested_time);
        }
        self.jobs[u].push_back(q);
        self.restamp(u);
        self.live[u] += 1;
        self.tracked += 1;
        self.last = Some(job);
    }

    /// Gives `user` a new stamp: their waiting jobs changed.
    fn restamp(&mut self, user: usize) {
        self.stamps += 1;
        self.stamp[user] = self.stamps;
        if !self.is_changed[user] {
            self.is_changed[user] = true;
            self.changed.push(user as u32);
        }
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
        self.restamp(u);
        self.live[u] -= 1;
        if self.live[u] == 0 {
            self.touch(user);
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
            self.compact(u);
        }
    }

    /// Marks `user`'s place in the order stale: the next pass re-places them
    /// ([`UserQueues::begin_touched`]). The order touches the users whose keys changed.
    pub fn touch(&mut self, user: u32) {
        let u = user as usize;
        if !self.is_touched[u] {
            self.is_touched[u] = true;
            self.touched.push(user);
        }
    }

    /// The users touched since the last pass began, in no particular order (some may have no
    /// waiting job).
    pub fn touched(&self) -> &[u32] {
        &self.touched
    }

    /// Starts a pass in the order of `key` (smaller first): users sorted by key, the jobs of
    /// users of equal keys merged in submission order — all of them sorted afresh, for when any
    /// key may have changed.
    pub fn begin(&mut self, key: impl Fn(u32) -> f64) {
        for &(_, u) in &self.sorted {
            self.placed[u as usize] = None;
        }
        self.untouch();
        self.sorted.clear();
        self.sorted.extend(self.active.iter().map(|&u| (key(u), u)));
        self.sorted.sort_unstable_by(by_key_then_user);
        for &(k, u) in &self.sorted {
            self.placed[u as usize] = Some(k);
        }
        self.unsorted = false;
        self.restart();
    }

    /// Like [`UserQueues::begin`] when the keys of the users not touched since the last pass
    /// are what they were then: only the touched users are re-placed (O(log users) to find
    /// each place, and a move of the users after it).
    pub fn begin_touched(&mut self, key: impl Fn(u32) -> f64) {
        if self.unsorted {
            return self.begin(key);
        }
        for i in 0..self.touched.len() {
            let u = self.touched[i];
            let new = (self.live[u as usize] > 0).then(|| key(u));
            let old = self.placed[u as usize];
            if old.map(f64::to_bits) == new.map(f64::to_bits) {
                continue;
            }
            if let Some(k) = old {
                let at = self
                    .sorted
                    .binary_search_by(|e| by_key_then_user(e, &(k, u)))
                    .expect("a placed user is in the sorted users");
                self.sorted.remove(at);
            }
            if let Some(k) = new {
                let at = self
                    .sorted
                    .binary_search_by(|e| by_key_then_user(e, &(k, u)))
                    .expect_err("a user is placed once");
                self.sorted.insert(at, (k, u));
            }
            self.placed[u as usize] = new;
        }
        self.untouch();
        self.restart();
    }

    fn untouch(&mut self) {
        for &u in &self.touched {
            self.is_touched[u as usize] = false;
        }
        self.touched.clear();
    }

    fn restart(&mut self) {
        debug_assert_eq!(self.sorted.len(), self.active.len());
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
            if within != Within::ANY {
                self.pass_over_alone(within);
            }
            // The next group: the users of exactly equal keys (mostly a user alone).
            let start = self.next_group;
            let &(_, u) = self.sorted.get(start)?;
            let end = self.group_end(start);
            self.next_group = end;
            if end == start + 1 {
                self.alone = Some((u, 0));
                continue;
            }
            for &(_, u) in &self.sorted[start..end] {
                // Users whose least demand admits none are left out of the merge.
                if self.least[u as usize].is_some_and(|(units, time)| !within.admits(units, time)) {
                    continue;
                }
                self.heap
                    .push(Reverse((self.jobs[u as usize][0].job, u, 0)));
            }
        }
    }

    /// The whole order of the pass just begun, each job written as `position(job)` (its queue
    /// position, which follows its workload index): per group of equal keys, its users' waiting
    /// jobs in submission order ([`UserQueues::write_with`]). For rules that read every job,
    /// this costs O(1) a job where a pass read to its end merges groups through a heap.
    pub fn write_all(&mut self, out: &mut Vec<usize>, position: impl Fn(u32) -> usize) {
        self.write_with(out, |q| position(q.job));
    }

    /// The whole order of the pass just begun as the waiting jobs themselves: what
    /// [`UserQueues::write_all`] writes, each job copied from the mirror instead of written as
    /// its queue position.
    pub fn write_all_jobs(&mut self, out: &mut Vec<QueuedJob>) {
        self.write_with(out, |q| *q);
    }

    /// The whole order of the pass just begun as runs read where the jobs are kept
    /// ([`OrderRuns`]): what [`UserQueues::write_all_jobs`] writes, a user alone at their key as
    /// a run of their jobs, a group of several users of equal keys as one run with no owner,
    /// its jobs merged in submission order here. Nothing is copied but those groups: the users
    /// whose jobs changed since the last call (each stamped anew, [`super::Run::stamp`]) have their
    /// started jobs dropped and their jobs made one slice, and the sorted users are read by the
    /// rule, where a whole-order write copied every job at every call (issue 36).
    pub fn write_runs(&mut self) -> OrderRuns<'_> {
        debug_assert_eq!(self.next_group, 0, "a pass just begun");
        for i in 0..self.changed.len() {
            let u = self.changed[i] as usize;
            self.is_changed[u] = false;
            if self.stale[u] > 0 {
                self.compact(u);
            }
            // One slice to read.
            self.jobs[u].make_contiguous();
        }
        self.changed.clear();
        self.merged.clear();
        self.merged_groups.clear();
        let mut start = 0;
        while start < self.sorted.len() {
            let end = self.group_end(start);
            if end - start > 1 {
                let from = self.merged.len();
                merge_group(&self.jobs, &self.sorted[start..end], &mut self.merged);
                self.merged_groups.push(MergedGroup {
                    users: (start as u32, end as u32),
                    jobs: (from as u32, self.merged.len() as u32),
                });
            }
            start = end;
        }
        OrderRuns::new(self)
    }

    /// The runs of the last [`UserQueues::write_runs`], from the one at `at` (a place in the
    /// sorted users, and the merged group there or next) on.
    pub(super) fn run_at(&self, at: usize, merged: usize) -> Option<(Run<'_>, usize, usize)> {
        let &(_, u) = self.sorted.get(at)?;
        if let Some(group) = self.merged_groups.get(merged)
            && group.users.0 as usize == at
        {
            let (from, to) = group.jobs;
            let run = Run {
                owner: NO_OWNER,
                stamp: 0,
                jobs: &self.merged[from as usize..to as usize],
            };
            return Some((run, group.users.1 as usize, merged + 1));
        }
        let u = u as usize;
        let run = Run {
            owner: u as u32,
            stamp: self.stamp[u],
            jobs: self.jobs[u].as_slices().0,
        };
        Some((run, at + 1, merged))
    }

    /// The whole order of the pass just begun, each job written as `write(job)`: group by group
    /// of equal keys, a user alone in its group as its jobs, the jobs of a group of several
    /// users sorted by workload index (submission order). A user's jobs are copied whole: the
    /// started jobs still among them are dropped first ([`UserQueues::compact`]), once, where
    /// testing every job's waiting bit at every write paid for each started job again at every
    /// call until its user's next compaction (half the jobs read on 500 nodes of Curie's shape
    /// in node-level EASY, jobs backfilled from the middle of their users' queues, issue 36).
    fn write_with<T>(&mut self, out: &mut Vec<T>, write: impl Fn(&QueuedJob) -> T) {
        debug_assert_eq!(self.next_group, 0, "a pass just begun");
        out.clear();
        let mut start = 0;
        while start < self.sorted.len() {
            let end = self.group_end(start);
            for i in start..end {
                let u = self.sorted[i].1 as usize;
                if self.stale[u] > 0 {
                    self.compact(u);
                }
            }
            if end - start == 1 {
                let (front, back) = self.jobs[self.sorted[start].1 as usize].as_slices();
                out.extend(front.iter().map(&write));
                out.extend(back.iter().map(&write));
            } else {
                self.group.clear();
                merge_group(&self.jobs, &self.sorted[start..end], &mut self.group);
                out.extend(self.group.iter().map(&write));
            }
            start = end;
        }
    }

    /// Drops `user`'s started jobs from their jobs kept.
    fn compact(&mut self, user: usize) {
        let mut jobs = std::mem::take(&mut self.jobs[user]);
        jobs.retain(|q| self.is_waiting(q.job));
        self.jobs[user] = jobs;
        self.stale[user] = 0;
    }

    /// The end of the group of equal keys that begins at `start` in the sorted users.
    fn group_end(&self, start: usize) -> usize {
        let key = self.sorted[start].0;
        start
            + 1
            + self.sorted[start + 1..]
                .iter()
                .take_while(|&&(k, _)| k == key)
                .count()
    }

    /// Passes over the next users alone in their groups whose least units and requested time
    /// show that `within` admits none of their jobs: most users, when backfilling on a full
    /// machine, each then costing a look at its neighbour's key and its own least demand.
    fn pass_over_alone(&mut self, within: Within) {
        let sorted = &self.sorted;
        let mut i = self.next_group;
        while let Some(&(key, u)) = sorted.get(i)
            && sorted.get(i + 1).is_none_or(|&(next, _)| next != key)
            && let Some((units, time)) = self.least[u as usize]
            && !within.admits(units, time)
        {
            i += 1;
        }
        self.next_group = i;
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

/// Appends to `out` the jobs of `users`, a group of equal keys, in submission order.
fn merge_group(jobs: &[VecDeque<QueuedJob>], users: &[(f64, u32)], out: &mut Vec<QueuedJob>) {
    let from = out.len();
    for &(_, u) in users {
        out.extend(jobs[u as usize].iter());
    }
    out[from..].sort_unstable_by_key(|q| q.job);
}

/// The order of the sorted users (key, user): key, then user — any total order among equal
/// keys would do, the pass merges them.
fn by_key_then_user(a: &(f64, u32), b: &(f64, u32)) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;

    /// Jobs 0..4 of users 0, 1, 2, 0.
    const USER: [u32; 4] = [0, 1, 2, 0];

    fn queue(jobs: &[u32]) -> Queue {
        jobs.iter()
            .map(|&job| QueuedJob {
                job,
                submit: 0,
                requested_time: 100,
                demand: ResourceVec::units(1),
            })
            .collect()
    }

    fn pass(q: &mut UserQueues) -> Vec<u32> {
        std::iter::from_fn(|| q.next_job(Within::ANY))
            .map(|j| j.job)
            .collect()
    }

    #[test]
    fn touched_users_are_replaced_and_the_others_keep_their_place() {
        let mut queue = queue(&[0, 1, 2, 3]);
        let mut q = UserQueues::new(3);
        q.sync(&queue, |job| USER[job as usize]);
        let mut keys = [5.0, 1.0, 3.0];
        q.begin(|u| keys[u as usize]);
        assert_eq!(pass(&mut q), [1, 2, 0, 3], "users 1, 2, 0 by key");
        // User 0's key falls below the others': only it moves.
        keys[0] = 0.5;
        q.touch(0);
        q.begin_touched(|u| keys[u as usize]);
        assert_eq!(pass(&mut q), [0, 3, 1, 2]);
        // User 2's key equals user 0's: their jobs merge in submission order.
        keys[2] = 0.5;
        q.touch(2);
        q.begin_touched(|u| keys[u as usize]);
        assert_eq!(pass(&mut q), [0, 2, 3, 1]);
        // User 0's first job starts: its first waiting job is now 3, after user 2's job 2 (the
        // group of equal keys is merged by first waiting jobs, whatever the users' places).
        q.started(0, 0);
        queue.remove_positions(&[0]);
        q.sync(&queue, |job| USER[job as usize]);
        q.begin_touched(|u| keys[u as usize]);
        assert_eq!(pass(&mut q), [2, 3, 1]);
        // User 1's only job starts: it leaves the order.
        q.started(1, 1);
        queue.remove_positions(&[0]);
        q.sync(&queue, |job| USER[job as usize]);
        q.begin_touched(|u| keys[u as usize]);
        assert_eq!(pass(&mut q), [2, 3]);
        assert_eq!(q.users().len(), 2);
    }
}
