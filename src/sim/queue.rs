//! The waiting queue: jobs in submission order, as schedulers see it, with removal proportional
//! to what starts.
//!
//! Schedulers read it like a slice — `len`, `queue[pos]`, `iter` — and answer with queue
//! positions (0 = the oldest waiting job). Underneath, jobs stay in the slots they arrived in and
//! a started job is only marked gone: one bit per slot, and a Fenwick tree over the counts of
//! whole 64-slot words turns a position into its slot (and back) in O(log n). Removing k started
//! jobs thus costs O(k log n) however long the queue, where shifting a vector costs O(n) per call
//! (63 % of FCFS's time on RICC's 448,000 jobs, issue 10). The slots of gone jobs are reclaimed
//! once they outnumber the waiting ones, so iteration never skips more than it yields (amortised)
//! and memory stays within twice the queue.

use std::ops::Index;

use super::scheduler::QueuedJob;

/// Gone slots are reclaimed when they outnumber the waiting jobs and at least this many.
const RECLAIM_AT: usize = 1024;

#[derive(Clone, Debug, Default)]
pub struct Queue {
    /// Every job that arrived since the last reclaim, in submission order (by workload index).
    slots: Vec<QueuedJob>,
    /// Bit `i % 64` of word `i / 64` is set while slot `i` still waits.
    waiting: Vec<u64>,
    /// Fenwick tree (1-based) over the waiting counts of the *sealed* words (all but the last,
    /// possibly partial, word): prefix sums give a slot's position in O(log n).
    sealed: Vec<u32>,
    len: usize,
    /// Jobs inserted before a later-submitted waiting job ([`Queue::insert`]) so far.
    reorders: u64,
}

impl Queue {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a job that arrived; jobs arrive in submission order.
    pub fn push(&mut self, job: QueuedJob) {
        debug_assert!(self.slots.last().is_none_or(|last| last.job < job.job));
        let slot = self.slots.len();
        if slot.is_multiple_of(64) {
            if slot > 0 {
                // The previous word is now full: it enters the Fenwick tree.
                let word = slot / 64 - 1;
                self.seal(word);
            }
            self.waiting.push(0);
        }
        self.waiting[slot / 64] |= 1 << (slot % 64);
        self.slots.push(job);
        self.len += 1;
    }

    /// The job at queue position `pos` (0 = the oldest waiting job).
    pub fn get(&self, pos: usize) -> Option<&QueuedJob> {
        (pos < self.len).then(|| &self.slots[self.slot_of(pos)])
    }

    pub fn first(&self) -> Option<&QueuedJob> {
        self.get(0)
    }

    /// Waiting jobs in queue order.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0)
    }

    /// Waiting jobs from queue position `pos` on (`queue[pos..]` of a slice).
    pub fn iter_from(&self, pos: usize) -> Iter<'_> {
        if pos >= self.len {
            return Iter {
                queue: self,
                word: self.waiting.len(),
                bits: 0,
            };
        }
        let slot = self.slot_of(pos);
        let word = slot / 64;
        Iter {
            queue: self,
            word,
            bits: self.waiting[word] & (!0u64 << (slot % 64)),
        }
    }

    /// The queue position of the waiting job with workload index `job`, if it waits.
    pub fn position_of(&self, job: u32) -> Option<usize> {
        self.find(job).map(|(pos, _)| pos)
    }

    /// The waiting job with workload index `job` and its queue position, if it waits:
    /// O(log n), a binary search over the slots and a Fenwick prefix sum.
    pub fn find(&self, job: u32) -> Option<(usize, &QueuedJob)> {
        let slot = self.slots.binary_search_by_key(&job, |q| q.job).ok()?;
        self.is_waiting(slot)
            .then(|| (self.rank(slot), &self.slots[slot]))
    }

    /// Removes the jobs at the given queue positions (strictly increasing, each < `len`).
    pub fn remove_positions(&mut self, positions: &[usize]) {
        debug_assert!(positions.windows(2).all(|w| w[0] < w[1]));
        // Positions refer to the queue before any removal: map them all to slots first.
        let mut slots = Vec::with_capacity(positions.len());
        slots.extend(positions.iter().map(|&pos| self.slot_of(pos)));
        for slot in slots {
            let word = slot / 64;
            self.waiting[word] &= !(1 << (slot % 64));
            if word < self.sealed.len() {
                self.fenwick_sub(word);
            }
        }
        self.len -= positions.len();
        let gone = self.slots.len() - self.len;
        if gone >= RECLAIM_AT && gone > self.len {
            self.reclaim();
        }
    }

    fn is_waiting(&self, slot: usize) -> bool {
        self.waiting[slot / 64] & (1 << (slot % 64)) != 0
    }

    /// The number of waiting jobs in slots before `slot`.
    fn rank(&self, slot: usize) -> usize {
        let word = slot / 64;
        let below = self.waiting[word] & ((1u64 << (slot % 64)) - 1);
        self.words_before(word) + below.count_ones() as usize
    }

    /// Waiting jobs in the words before `word`.
    fn words_before(&self, word: usize) -> usize {
        let sealed = word.min(self.sealed.len());
        let mut total = 0usize;
        let mut i = sealed;
        while i > 0 {
            total += self.sealed[i - 1] as usize;
            i &= i - 1;
        }
        // Only the last word is unsealed, and it is never before another word.
        total
    }

    /// The slot of queue position `pos` (< len).
    fn slot_of(&self, pos: usize) -> usize {
        assert!(
            pos < self.len,
            "queue position {pos} out of range (len {})",
            self.len
        );
        // Descend the Fenwick tree for the last sealed word whose prefix count is ≤ pos.
        let mut word = 0usize;
        let mut left = pos;
        let mut step = self.sealed.len().next_power_of_two();
        while step > 0 {
            let next = word + step;
            if next <= self.sealed.len() && (self.sealed[next - 1] as usize) <= left {
                word = next;
                left -= self.sealed[next - 1] as usize;
            }
            step /= 2;
        }
        // `word` sealed words hold ≤ pos waiting jobs; the job is `left` bits into the rest.
        let mut w = word;
        loop {
            let count = self.waiting[w].count_ones() as usize;
            if left < count {
                return w * 64 + nth_set_bit(self.waiting[w], left);
            }
            left -= count;
            w += 1;
        }
    }

    fn seal(&mut self, word: usize) {
        debug_assert_eq!(word, self.sealed.len());
        // Fenwick append: node `i` (1-based) covers words (i − lowbit(i), i].
        let i = word + 1;
        let low = i & i.wrapping_neg();
        let covered = self.words_before(word) - self.words_before(i - low);
        let value = covered + self.waiting[word].count_ones() as usize;
        self.sealed.push(value as u32);
    }

    fn fenwick_sub(&mut self, word: usize) {
        let mut i = word + 1;
        while i <= self.sealed.len() {
            self.sealed[i - 1] -= 1;
            i += i & i.wrapping_neg();
        }
    }

    /// Drops the slots of gone jobs: O(slots), after at least as many removals.
    fn reclaim(&mut self) {
        let jobs: Vec<QueuedJob> = self.iter().copied().collect();
        let reorders = self.reorders;
        *self = Queue::default();
        self.reorders = reorders;
        for job in jobs {
            self.push(job);
        }
    }

    /// Puts `job` at its place in submission order: appended when it is the latest (O(1)),
    /// else the queue is rebuilt around it (O(queue)) and [`Queue::reorders`] counts it. Only
    /// queue limits insert (a held job made eligible after later-submitted ones).
    pub fn insert(&mut self, job: QueuedJob) {
        if self.slots.last().is_none_or(|last| last.job < job.job) {
            return self.push(job);
        }
        let mut jobs: Vec<QueuedJob> = self.iter().copied().collect();
        let at = jobs.partition_point(|q| q.job < job.job);
        jobs.insert(at, job);
        let reorders = self.reorders + 1;
        *self = Queue::default();
        self.reorders = reorders;
        for j in jobs {
            self.push(j);
        }
    }

    /// Counts a change a plan of the queue cannot follow by arrivals and starts alone — jobs
    /// that left without starting (held again by a CPU quota), or decisions of the last call
    /// not applied — in [`Queue::reorders`].
    pub fn mark_changed(&mut self) {
        self.reorders += 1;
    }

    /// How many jobs were inserted out of arrival order so far: a scheduler that keeps a plan
    /// of the queue's prefix must rebuild it when this changes.
    pub fn reorders(&self) -> u64 {
        self.reorders
    }
}

/// The index of the `n`-th (0-based) set bit of `word`, which has more than `n`.
fn nth_set_bit(mut word: u64, n: usize) -> usize {
    for _ in 0..n {
        word &= word - 1;
    }
    word.trailing_zeros() as usize
}

impl Index<usize> for Queue {
    type Output = QueuedJob;
    fn index(&self, pos: usize) -> &QueuedJob {
        &self.slots[self.slot_of(pos)]
    }
}

/// Waiting jobs in queue order (see [`Queue::iter`]).
#[derive(Clone)]
pub struct Iter<'a> {
    queue: &'a Queue,
    word: usize,
    /// Waiting slots of `word` not yet yielded.
    bits: u64,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a QueuedJob;

    #[inline]
    fn next(&mut self) -> Option<&'a QueuedJob> {
        while self.bits == 0 {
            self.word += 1;
            if self.word >= self.queue.waiting.len() {
                return None;
            }
            self.bits = self.queue.waiting[self.word];
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(&self.queue.slots[self.word * 64 + bit])
    }
}

/// A queue of jobs that arrived in this order (by increasing workload index).
impl FromIterator<QueuedJob> for Queue {
    fn from_iter<I: IntoIterator<Item = QueuedJob>>(jobs: I) -> Self {
        let mut queue = Queue::default();
        for job in jobs {
            queue.push(job);
        }
        queue
    }
}

impl<'a> IntoIterator for &'a Queue {
    type Item = &'a QueuedJob;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::ResourceVec;
    use proptest::prelude::*;

    fn job(i: u32) -> QueuedJob {
        QueuedJob {
            job: i,
            submit: i64::from(i),
            requested_time: 1,
            demand: ResourceVec::units(1),
        }
    }

    #[test]
    fn positions_skip_removed_jobs() {
        let mut q = Queue::default();
        for i in 0..200 {
            q.push(job(i));
        }
        q.remove_positions(&[0, 5, 64, 130]);
        assert_eq!(q.len(), 196);
        assert_eq!(q[0].job, 1);
        assert_eq!(q[4].job, 6);
        assert_eq!(q[61].job, 63);
        assert_eq!(q[62].job, 65);
        assert_eq!(q.position_of(65), Some(62));
        assert_eq!(q.position_of(64), None);
        assert_eq!(q.iter_from(126).next().map(|j| j.job), Some(129));
        assert_eq!(q.iter_from(127).next().map(|j| j.job), Some(131));
        assert_eq!(q.iter().count(), 196);
    }

    proptest! {
        /// Against a plain vector: pushes and removals in any pattern, reclaims included.
        #[test]
        fn behaves_like_a_vector(
            ops in prop::collection::vec((0usize..40, prop::collection::vec(any::<prop::sample::Index>(), 0..12)), 1..300)
        ) {
            let mut q = Queue::default();
            let mut v: Vec<QueuedJob> = Vec::new();
            let mut next = 0u32;
            for (arrivals, picks) in ops {
                for _ in 0..arrivals {
                    q.push(job(next));
                    v.push(job(next));
                    next += 1;
                }
                if v.is_empty() {
                    continue;
                }
                let mut positions: Vec<usize> = picks.iter().map(|p| p.index(v.len())).collect();
                positions.sort_unstable();
                positions.dedup();
                q.remove_positions(&positions);
                for &p in positions.iter().rev() {
                    v.remove(p);
                }
                prop_assert_eq!(q.len(), v.len());
                prop_assert!(q.iter().copied().eq(v.iter().copied()));
                for (pos, j) in v.iter().enumerate() {
                    prop_assert_eq!(&q[pos], j);
                    prop_assert_eq!(q.position_of(j.job), Some(pos));
                }
                let from = v.len() / 3;
                prop_assert!(q.iter_from(from).copied().eq(v[from..].iter().copied()));
                prop_assert!(q.slots.len() <= 2 * v.len() + RECLAIM_AT + 64);
            }
        }
    }
}
