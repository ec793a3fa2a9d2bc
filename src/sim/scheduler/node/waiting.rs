//! [`WaitingGroups`]: node-level EASY's index over the waiting jobs in submission order, so that
//! backfilling tries only the jobs the walk would try, without visiting the others (issue 36).
//!
//! EASY's backfilling walk ([`super::NodeEasy`]) tries every job after the head in queue order,
//! passing over a job whose request — its request id and processors, on the same side of the
//! shadow time — already failed in this call ([`super::pass::Failed`]): within a call resources
//! only shrink, so the same request fails again. Under overload nearly every job after the head
//! is passed over so, and the walk over them was 83 % of node-level EASY's instructions on 500
//! nodes of Curie's shape (BENCHMARKS.md, session 26).
//!
//! The index keeps the waiting jobs in *groups* of equal request, processors and requested time:
//! jobs the walk cannot tell apart, all on one side of any shadow time, each group in
//! submission order, and the groups ordered by their first job (kept between calls). A
//! backfilling pass merges the groups by their next job after the head: it takes the earliest,
//! drops the group when its request already failed on its side, else tries the job — and if it
//! starts, offers the group's next job. The walk tries exactly these jobs, in the same order
//! (submission order, the queue's in the default order): every job the merge never reaches is
//! in a group dropped for a failure the walk would have passed it over for. A pass reads each
//! group once in order, and puts on a heap only the groups holding a job started before the
//! head in this call (or the head) and those whose job just started: O(groups + starts × log),
//! not the queue.
//!
//! In another order than submission order ([`WaitingGroups::backfill_in_order`]) the groups
//! keep no sequence of that order: the pass reads the jobs after the head in order, as the walk
//! does, but passes over a job by its group's dense request number in O(1) where the walk
//! hashed its request ([`super::pass::Failed`]), and shares the record of requests with no
//! room carried across calls ([`super::carry`]).
//!
//! The index mirrors the queue between calls as pool EASY's
//! ([`crate::sim::scheduler::easy_index`]) does: jobs arrive at the tail in submission order and
//! leave when the engine starts them ([`WaitingGroups::started`]); anything else — a job
//! inserted before later ones or withdrawn under queue limits — bumps [`Queue::reorders`], and
//! the index is rebuilt from the queue.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::hash::BuildHasherDefault;

use crate::sim::job::{Job, Time};
use crate::sim::mix_hash::MixHasher;
use crate::sim::queue::Queue;
use crate::sim::scheduler::QueuedJob;
use crate::sim::scheduler::order::{NO_OWNER, OrderRuns, Run};
use crate::sim::topology::RequestId;

type Map<K> = HashMap<K, u32, BuildHasherDefault<MixHasher>>;

/// Waiting jobs of one request, processors and requested time.
#[derive(Clone, Debug, Default)]
struct Group {
    /// The (request, processors) the walk remembers failures by, as a dense index.
    request: u32,
    requested_time: Time,
    /// Workload indices, increasing.
    jobs: VecDeque<u32>,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct WaitingGroups {
    groups: Vec<Group>,
    by_key: Map<(RequestId, u32, Time)>,
    requests: Map<(RequestId, u32)>,
    /// Each indexed job's group, by workload index.
    group_of: Vec<u32>,
    /// The groups that have jobs, as (first job, group), in submission order of their first job.
    order: BTreeSet<(u32, u32)>,
    /// Jobs indexed.
    live: usize,
    /// The latest-submitted job indexed (arrivals come after it).
    last: Option<u32>,
    /// [`Queue::reorders`] when the index was last synchronised.
    reorders: u64,
    /// Whether the index mirrors the queue up to the recorded starts.
    valid: bool,
    /// Rebuilds so far: the dense request indices hold between two.
    rebuilds: u64,
    /// Jobs started since the last synchronisation.
    started: Vec<u32>,
    /// A pass's groups off `order`'s sequence: (next job, group, its index in the group).
    heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
    /// Per request, in the pass: bit 0 failed ending by the shadow time, bit 1 failed after.
    failed: Vec<u8>,
    /// Per request: it fit no class now at a try since the last call that freed something, so
    /// it fits none until one does ([`super::carry`]).
    no_room: Vec<bool>,
    /// Per owner of a run of the order ([`Run`]): what its waiting jobs request.
    owners: Vec<OwnerRequests>,
    /// Per dense request, while an owner's requests are read: its place among them.
    slot: Vec<u32>,
}

/// What an owner's waiting jobs request, read from their run in the order: valid while the
/// run's stamp and the index's rebuilds are those it was read at (dense request numbers hold
/// between two rebuilds).
#[derive(Clone, Debug, Default)]
struct OwnerRequests {
    /// The run's stamp and the index's rebuilds when read.
    read: Option<(u64, u64)>,
    /// Each request once, with the least and the most requested time among its jobs: whether
    /// some end by the shadow time and whether some end after.
    requests: Vec<(u32, Time, Time)>,
}

/// A run of the order shorter than this is read job by job: reading what its owner requests
/// would cost about as much.
const RUN_AT_LEAST: usize = 4;

/// What a backfilling try came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tried {
    Started,
    /// The job fits no class now (whatever the side of the shadow time).
    NoRoom,
    /// Refused for the head's sake.
    Refused,
}

impl WaitingGroups {
    /// Records that the engine started `job`: it leaves the index at the next synchronisation.
    /// Dropped (and the index invalidated) once the record outgrows the queue, so that a run
    /// that seldom needs the index does not keep every start.
    pub fn started(&mut self, job: u32) {
        if !self.valid {
            return;
        }
        self.started.push(job);
        if self.started.len() > 2 * self.live + 1024 {
            self.valid = false;
            self.started.clear();
        }
    }

    /// Brings the index to `queue`: removes the recorded starts, adds the arrivals, or rebuilds
    /// when the queue changed in any other way.
    pub fn sync(&mut self, queue: &Queue, jobs: &[Job]) {
        if self.valid && queue.reorders() == self.reorders {
            let mut consistent = true;
            for i in 0..self.started.len() {
                let job = self.started[i];
                if self.last.is_some_and(|l| job <= l) {
                    consistent &= self.remove(job);
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
                    self.add(q.job, jobs);
                }
                return;
            }
        }
        self.rebuild(queue, jobs);
    }

    fn rebuild(&mut self, queue: &Queue, jobs: &[Job]) {
        self.groups.clear();
        self.by_key.clear();
        self.requests.clear();
        self.order.clear();
        self.no_room.clear();
        self.rebuilds += 1;
        self.live = 0;
        self.last = None;
        self.started.clear();
        self.reorders = queue.reorders();
        self.valid = true;
        for q in queue.iter() {
            self.add(q.job, jobs);
        }
    }

    fn add(&mut self, job: u32, jobs: &[Job]) {
        let j = &jobs[job as usize];
        let next = self.requests.len() as u32;
        let request = *self.requests.entry((j.request, j.procs)).or_insert(next);
        let next = self.groups.len() as u32;
        let g = *self
            .by_key
            .entry((j.request, j.procs, j.requested_time))
            .or_insert(next);
        if g == next {
            self.groups.push(Group {
                request,
                requested_time: j.requested_time,
                jobs: VecDeque::new(),
            });
        }
        let group = &mut self.groups[g as usize];
        if group.jobs.is_empty() {
            self.order.insert((job, g));
        }
        group.jobs.push_back(job);
        if self.group_of.len() <= job as usize {
            self.group_of.resize(jobs.len().max(job as usize + 1), NONE);
        }
        self.group_of[job as usize] = g;
        self.live += 1;
        self.last = Some(job);
    }

    /// Removes an indexed job; false if it was not indexed.
    fn remove(&mut self, job: u32) -> bool {
        let Some(&g) = self.group_of.get(job as usize) else {
            return false;
        };
        let Some(group) = self.groups.get_mut(g as usize) else {
            return false;
        };
        // A started job is nearly always its group's first (jobs start in queue order, and
        // one that fails is followed by the failure of its whole group).
        let Ok(i) = group.jobs.binary_search(&job) else {
            return false;
        };
        group.jobs.remove(i);
        self.live -= 1;
        if i == 0 {
            self.order.remove(&(job, g));
            if let Some(&first) = group.jobs.front() {
                self.order.insert((first, g));
            }
        }
        true
    }

    /// Changes whenever the dense request indices that [`WaitingGroups::backfill`] passes are
    /// dealt afresh.
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// EASY's backfilling pass over the jobs submitted after `head` (the index synchronised to
    /// the queue): offers `try_start(job, request, ends_by_shadow)` the jobs the walk in
    /// submission order would try, in that order, where `request` is a dense index of the job's
    /// request and processors (fixed between two [`WaitingGroups::rebuilds`]) and `try_start`
    /// says what came of the try. With
    /// `carried` (nothing freed since the last pass, [`super::carry`]), a request that fit
    /// nowhere in an earlier pass is passed over as having failed on both sides, as its tries
    /// would; without, that record is dropped.
    pub fn backfill(
        &mut self,
        head: u32,
        now: Time,
        shadow: Time,
        carried: bool,
        mut try_start: impl FnMut(u32, u32, bool) -> Tried,
    ) {
        self.heap.clear();
        self.begin_pass(carried);
        // Groups whose first job is not after the head hold the head or a job started before it
        // in this call: at most one group per such job. Their next job after the head goes on
        // the heap; every other group's is its first, in `order`'s sequence.
        for &(_, g) in self.order.range(..=(head, NONE)) {
            let jobs = &self.groups[g as usize].jobs;
            let i = jobs.partition_point(|&j| j <= head);
            if let Some(&job) = jobs.get(i) {
                self.heap.push(Reverse((job, g, i as u32)));
            }
        }
        let mut firsts = self.order.range((head + 1, 0)..).peekable();
        loop {
            let from_heap = match (self.heap.peek(), firsts.peek()) {
                (Some(Reverse(h)), Some(f)) => h.0 < f.0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return,
            };
            let (job, g, i) = if from_heap {
                self.heap.pop().expect("peeked").0
            } else {
                let &(job, g) = firsts.next().expect("peeked");
                (job, g, 0)
            };
            let group = &self.groups[g as usize];
            let ends_by_shadow = now + group.requested_time <= shadow;
            let (request, side) = (group.request, side(ends_by_shadow));
            if self.failed[request as usize] & side != 0 {
                continue;
            }
            match try_start(job, request, ends_by_shadow) {
                Tried::Started => {
                    if let Some(&next) = group.jobs.get(i as usize + 1) {
                        self.heap.push(Reverse((next, g, i + 1)));
                    }
                }
                failure => record(&mut self.failed, &mut self.no_room, request, side, failure),
            }
        }
    }

    /// EASY's backfilling pass over `jobs`, the waiting jobs after the head in the queue's
    /// order when it is not submission order (the index synchronised to the queue): offers
    /// `try_start` each job the walk over them would try, as [`WaitingGroups::backfill`] does,
    /// passing over those whose request already failed on their side of the shadow time (or fit
    /// nowhere in an earlier pass, with `carried`). The jobs are read one by one — the order
    /// keeps no group in its sequence — but each costs a look-up by dense request where the walk
    /// hashed its request ([`super::pass::Failed`]).
    pub fn backfill_in_order(
        &mut self,
        jobs: impl Iterator<Item = u32>,
        now: Time,
        shadow: Time,
        carried: bool,
        mut try_start: impl FnMut(u32, u32, bool) -> Tried,
    ) {
        self.begin_pass(carried);
        self.try_each(jobs, now, shadow, &mut try_start);
    }

    /// [`WaitingGroups::backfill_in_order`] over the jobs of `order` from the `from`-th on, an
    /// order kept in runs by owner ([`OrderRuns`]): a run whose owner's requests all failed
    /// already on the sides of the shadow time its jobs are on is passed over whole — failures
    /// only grow in a pass, so the walk would pass over each of its jobs — by what its owner
    /// requests, read once while the run's stamp holds ([`WaitingGroups::all_failed`]).
    pub fn backfill_runs(
        &mut self,
        order: OrderRuns<'_>,
        from: usize,
        (now, shadow): (Time, Time),
        carried: bool,
        mut try_start: impl FnMut(u32, u32, bool) -> Tried,
    ) {
        self.begin_pass(carried);
        let mut start = 0;
        for run in order.iter() {
            let end = start + run.jobs.len();
            let lo = start.max(from);
            if lo < end {
                let passed_over = run.owner != NO_OWNER
                    && run.jobs.len() >= RUN_AT_LEAST
                    && self.all_failed(&run, now, shadow);
                if !passed_over {
                    let after = run.jobs[lo - start..].iter().map(|q| q.job);
                    self.try_each(after, now, shadow, &mut try_start);
                }
            }
            start = end;
        }
    }

    /// The backfilling walk over `jobs`: each job whose request did not fail on its side yet
    /// offered to `try_start`, its failure recorded.
    #[inline(always)]
    fn try_each(
        &mut self,
        jobs: impl Iterator<Item = u32>,
        now: Time,
        shadow: Time,
        try_start: &mut impl FnMut(u32, u32, bool) -> Tried,
    ) {
        for job in jobs {
            let group = &self.groups[self.group_of[job as usize] as usize];
            let ends_by_shadow = now + group.requested_time <= shadow;
            let (request, side) = (group.request, side(ends_by_shadow));
            if self.failed[request as usize] & side != 0 {
                continue;
            }
            match try_start(job, request, ends_by_shadow) {
                Tried::Started => {}
                failure => record(&mut self.failed, &mut self.no_room, request, side, failure),
            }
        }
    }

    /// Whether every request among the jobs of `run`, its owner's waiting jobs, failed in
    /// this pass on each side of the shadow time some of its jobs are on. What the run requests
    /// is read from its jobs when the run's stamp is not the one it was read at.
    fn all_failed(&mut self, run: &Run<'_>, now: Time, shadow: Time) -> bool {
        let owner = run.owner as usize;
        if self.owners.len() <= owner {
            self.owners.resize_with(owner + 1, OwnerRequests::default);
        }
        let known = &self.owners[owner];
        if known.read != Some((run.stamp, self.rebuilds)) {
            self.read_requests(owner, run.stamp, run.jobs);
        }
        // A job ends by the shadow time if its requested time is at most this.
        let by_shadow = shadow - now;
        self.owners[owner]
            .requests
            .iter()
            .all(|&(request, shortest, longest)| {
                let failed = self.failed[request as usize];
                (shortest > by_shadow || failed & side(true) != 0)
                    && (longest <= by_shadow || failed & side(false) != 0)
            })
    }

    /// Reads what `jobs`, the run of `owner`'s waiting jobs at `stamp`, request: each request
    /// once, with the least and the most requested time among its jobs.
    fn read_requests(&mut self, owner: usize, stamp: u64, jobs: &[QueuedJob]) {
        self.slot.resize(self.requests.len(), NONE);
        let mut requests = std::mem::take(&mut self.owners[owner].requests);
        requests.clear();
        for q in jobs {
            let group = &self.groups[self.group_of[q.job as usize] as usize];
            let (request, time) = (group.request, group.requested_time);
            match self.slot[request as usize] {
                NONE => {
                    self.slot[request as usize] = requests.len() as u32;
                    requests.push((request, time, time));
                }
                at => {
                    let (_, shortest, longest) = &mut requests[at as usize];
                    *shortest = (*shortest).min(time);
                    *longest = (*longest).max(time);
                }
            }
        }
        for &(request, ..) in &requests {
            self.slot[request as usize] = NONE;
        }
        self.owners[owner] = OwnerRequests {
            read: Some((stamp, self.rebuilds)),
            requests,
        };
    }

    /// Starts a pass's record of failed requests: those with no room carried when `carried`,
    /// none else.
    fn begin_pass(&mut self, carried: bool) {
        if !carried {
            self.no_room.clear();
        }
        self.no_room.resize(self.requests.len(), false);
        self.failed.clear();
        self.failed
            .extend(self.no_room.iter().map(|&n| if n { 0b11 } else { 0 }));
    }
}

/// The bit of a side of the shadow time in a pass's record of failures: bit 0 ending by it,
/// bit 1 after.
#[inline]
fn side(ends_by_shadow: bool) -> u8 {
    1 << u8::from(!ends_by_shadow)
}

/// Records in `failed` that `request` failed on `side` in this pass: on both when it fit no
/// class now, as its next tries would, which `no_room` keeps for a pass that carries it.
#[inline(always)]
fn record(failed: &mut [u8], no_room: &mut [bool], request: u32, side: u8, failure: Tried) {
    let r = request as usize;
    match failure {
        Tried::NoRoom => {
            failed[r] = 0b11;
            no_room[r] = true;
        }
        Tried::Refused => failed[r] |= side,
        Tried::Started => unreachable!("a start is no failure"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;
    use crate::sim::scheduler::QueuedJob;

    /// Jobs of request (id, processors) `A` = (0, 4), `B` = (1, 4) (same id, other
    /// processors: another request), `C` = (2, 4), with requested times 10 or 100.
    fn jobs() -> Vec<Job> {
        let spec = [
            (0, 4, 10),  // 0: A short, the head
            (0, 4, 10),  // 1: A short
            (0, 8, 10),  // 2: B short
            (0, 4, 100), // 3: A long
            (0, 8, 10),  // 4: B short
            (2, 4, 10),  // 5: C short
            (0, 4, 10),  // 6: A short
            (0, 8, 100), // 7: B long
            (0, 8, 10),  // 8: B short
        ];
        spec.iter()
            .map(|&(request, procs, requested_time)| Job {
                request: RequestId(request),
                procs,
                requested_time,
                ..Job::default()
            })
            .collect()
    }

    fn queue(jobs: &[Job], of: impl Iterator<Item = u32>) -> Queue {
        let mut q = Queue::default();
        for job in of {
            q.push(QueuedJob {
                job,
                submit: 0,
                requested_time: jobs[job as usize].requested_time,
                demand: ResourceVec::ZERO,
            });
        }
        q
    }

    /// Offers of a pass from head 0 at time 0 with shadow time 50, where the jobs in `starts`
    /// start.
    fn offers(index: &mut WaitingGroups, starts: &[u32]) -> Vec<(u32, bool)> {
        tries(index, false, &|job| {
            if starts.contains(&job) {
                Tried::Started
            } else {
                Tried::Refused
            }
        })
    }

    /// Offers of a pass from head 0 at time 0 with shadow time 50, `carried` or not, where each
    /// try comes to `outcome(job)`.
    fn tries(
        index: &mut WaitingGroups,
        carried: bool,
        outcome: &dyn Fn(u32) -> Tried,
    ) -> Vec<(u32, bool)> {
        let mut offered = Vec::new();
        index.backfill(0, 0, 50, carried, |job, _, short| {
            offered.push((job, short));
            outcome(job)
        });
        offered
    }

    /// Worked by hand: 2 (B ending by the shadow time) fits nowhere, so B is passed over on
    /// both sides — 7, after the shadow time, is not offered — and stays passed over in the
    /// next pass that carries the record, while A, refused for the head's sake (3), is offered
    /// again there; a pass that does not carry it offers B again.
    #[test]
    fn a_request_with_no_room_is_passed_over_while_the_record_is_carried() {
        let jobs = jobs();
        let mut index = WaitingGroups::default();
        index.sync(&queue(&jobs, 0..9), &jobs);
        let outcome = |job: u32| match job {
            2 => Tried::NoRoom,
            _ => Tried::Refused,
        };
        assert_eq!(
            tries(&mut index, false, &outcome),
            [(1, true), (2, true), (3, false), (5, true)]
        );
        assert_eq!(
            tries(&mut index, true, &|_| Tried::Refused),
            [(1, true), (3, false), (5, true)]
        );
        assert_eq!(
            tries(&mut index, false, &|_| Tried::Refused),
            [(1, true), (2, true), (3, false), (5, true), (7, false)]
        );
    }

    /// Worked by hand from the walk's rule: 1 starts; 2 fails, so B fails ending by the shadow
    /// time and 4 and 8 are passed over; 3 fails, so A fails after it; 5 and 6 start (A has not
    /// failed ending by the shadow time); 7 is B after the shadow time, not failed yet.
    #[test]
    fn a_pass_offers_what_the_walk_tries_in_order() {
        let jobs = jobs();
        let mut index = WaitingGroups::default();
        index.sync(&queue(&jobs, 0..9), &jobs);
        assert_eq!(
            offers(&mut index, &[1, 5, 6]),
            [
                (1, true),
                (2, true),
                (3, false),
                (5, true),
                (6, true),
                (7, false)
            ]
        );
        // The engine starts 1, 5 and 6; 9 arrives. Everything after the head starts now.
        for job in [1, 5, 6] {
            index.started(job);
        }
        let mut jobs = jobs;
        jobs.push(Job {
            request: RequestId(2),
            procs: 4,
            requested_time: 10,
            ..Job::default()
        });
        let waiting = [0, 2, 3, 4, 7, 8, 9];
        index.sync(&queue(&jobs, waiting.iter().copied()), &jobs);
        assert_eq!(index.live, 7);
        assert_eq!(
            offers(&mut index, &[2, 3, 4, 7, 8, 9]),
            [
                (2, true),
                (3, false),
                (4, true),
                (7, false),
                (8, true),
                (9, true)
            ]
        );
    }
}
