//! The free resources of every node, indexed so that a fit is not a scan of every node.
//!
//! Per node: its free vector (cores, memory KB, GPUs). Per class: the sum of its nodes' free
//! vectors (cheap rejections first), the set of *idle* nodes (wholly free: interchangeable, a
//! whole-node fit is a count) and the set of *partial* nodes (some core free, not idle). Nodes
//! with no free core are in neither set and are skipped by every search for a job that needs a
//! core. Sets are bitsets in node order, so searches visit nodes by increasing index.
//!
//! Per class also: a log of the changes of its nodes' free vectors ([`FreeNodes::changes_since`]),
//! so that a reader keeping its own tally of the nodes' free vectors (node-level EASY's counts
//! of a class's distinct free vectors, `scheduler::node::free_counts`) catches up on what
//! changed since it last read instead of visiting every node. An entry is a *run*: consecutive
//! nodes that all went from one free vector to another ([`Change`]), so that a job on a row of
//! like nodes — a whole-node job on idle nodes, in placement order — is one entry, and a reader
//! moves its count once. A change costs a push, from the first time a reader asks about the
//! class on; when the log reaches half as many entries as the class has nodes its older half
//! is dropped, and a reader that far behind reads every node again (one that read lately, as
//! the shadow's counts do at most calls, still catches up). Nothing here keeps the tally: it pays
//! only where a reader asks for it.
//!
//! [`FreeNodes::take_shape`] and [`FreeNodes::give_shape`] index a job's nodes by the same
//! runs: the core histogram moves by a run's count, the idle and partial sets change a word at
//! a time. Only the free vectors themselves are written node by node.
//!
//! Per class also: how many amounts without a core are held there
//! ([`FreeNodes::coreless_holds`]). Every other amount takes a core, so while a class holds
//! none, a job that takes every core of its nodes is alone on them (node-level EASY's shadow
//! releases such a job by count, `scheduler::node::shadow`).
//!
//! The engine owns one `FreeNodes` and is the only place that changes it; [`FreeNodes::take`]
//! refuses — as an error, never a panic — any amount that would over-allocate a component.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::layout::Layout;
use super::request::NodeShape;
use crate::sim::resources::ResourceVec;

/// The number of the next [`FreeNodes`] made: each numbers its own history of changes.
static HISTORIES: AtomicU64 = AtomicU64::new(1);

/// A place in the change log of one [`FreeNodes`] (its history — a clone continues its
/// original's — and a change number there), as [`FreeNodes::changes_since`] returns it. The
/// default is no place: the first read reads every node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogPosition {
    history: u64,
    change: u64,
}

/// A change in the log of a class: the `count` nodes from `first` on, each of which had `was`
/// free, now have `now` (≠ `was`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    pub first: u32,
    pub count: u32,
    pub was: ResourceVec,
    pub now: ResourceVec,
}

/// `count` consecutive nodes from `first`, each with `was` free, that take or give back
/// `amount` each ([`FreeNodes::runs_of`]).
#[derive(Clone, Copy, Debug)]
struct Run {
    first: u32,
    count: u32,
    was: ResourceVec,
    amount: ResourceVec,
}

/// Whether a reader asked for a class's changes. Readers hold the engine's index by shared
/// reference (a scheduler's view), so the mark is set through one: an atomic, a plain load
/// where the index is written.
#[derive(Debug, Default)]
struct Asked(AtomicBool);

impl Clone for Asked {
    fn clone(&self) -> Self {
        Asked(AtomicBool::new(self.0.load(Ordering::Relaxed)))
    }
}

/// A set of a class's nodes, by offset from the class's first node.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bits {
    words: Vec<u64>,
    len: u32,
}

impl Bits {
    fn new(n: u32, full: bool) -> Self {
        let mut words = vec![if full { u64::MAX } else { 0 }; (n as usize).div_ceil(64)];
        if full && !n.is_multiple_of(64) {
            *words.last_mut().expect("n > 0") = (1u64 << (n % 64)) - 1;
        }
        Bits {
            words,
            len: if full { n } else { 0 },
        }
    }

    #[inline]
    fn set(&mut self, i: u32, on: bool) {
        let (w, b) = ((i / 64) as usize, i % 64);
        let was = self.words[w] >> b & 1 == 1;
        if was != on {
            self.words[w] ^= 1 << b;
            if on {
                self.len += 1;
            } else {
                self.len -= 1;
            }
        }
    }

    /// The words that the `n` nodes from `start` on fall in, each with the mask of those of
    /// its bits.
    fn masks(start: u32, n: u32) -> impl Iterator<Item = (usize, u64)> {
        let end = start + n;
        let words = (start / 64) as usize..end.div_ceil(64) as usize;
        words.map(move |w| {
            let base = w as u32 * 64;
            let (lo, hi) = (start.max(base) - base, end.min(base + 64) - base);
            let mask = if hi - lo == 64 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo)) - 1) << lo
            };
            (w, mask)
        })
    }

    /// Puts the `n` nodes from `start` on in the set (`on`), none of which is in it, or takes
    /// them out, all of which are: the length moves by `n`, with no count of bits.
    fn set_range(&mut self, start: u32, n: u32, on: bool) {
        for (w, mask) in Self::masks(start, n) {
            debug_assert_eq!(self.words[w] & mask, if on { 0 } else { mask });
            self.words[w] ^= mask;
        }
        if on {
            self.len += n;
        } else {
            self.len -= n;
        }
    }

    /// Whether all the `n` nodes from `start` on are in the set.
    fn all(&self, start: u32, n: u32) -> bool {
        Self::masks(start, n).all(|(w, mask)| self.words[w] & mask == mask)
    }

    #[inline]
    fn word(&self, w: usize) -> u64 {
        self.words[w]
    }
}

/// How many of `items` from the first on satisfy `ok` (item number, item): a chunk at a time
/// with no branch per item, then item by item in the chunk that has one that does not. The
/// runs of a job's nodes are hundreds of nodes long on large machines.
#[inline]
fn leading<T>(items: &[T], ok: impl Fn(usize, &T) -> bool) -> usize {
    let mut n = 0;
    for chunk in items.chunks(32) {
        let all = chunk
            .iter()
            .enumerate()
            .fold(true, |all, (j, x)| all & ok(n + j, x));
        if !all {
            return n + chunk
                .iter()
                .enumerate()
                .take_while(|&(j, x)| ok(n + j, x))
                .count();
        }
        n += chunk.len();
    }
    n
}

/// Whether each of `nodes` is less than the next (no branch per node).
#[inline]
pub(crate) fn strictly_increasing(nodes: &[u32]) -> bool {
    match nodes {
        [_, rest @ ..] => nodes
            .iter()
            .zip(rest)
            .fold(true, |all, (a, b)| all & (a < b)),
        [] => true,
    }
}

/// How many of `nodes` from the first on are consecutive indices (`first`, `first + 1`, …).
/// When they increase (`increasing`), node `k` is at least `first + k` and stays above once
/// above, so the row's end is found by doubling steps, then bisection between the last two (a
/// few steps for a row of a hundred nodes); otherwise node by node.
#[inline]
fn row_length(nodes: &[u32], increasing: bool) -> usize {
    let first = nodes[0];
    if !increasing {
        return leading(nodes, |k, &n| n == first + k as u32);
    }
    let in_row = |k: usize| nodes[k] == first + k as u32;
    // Nodes before `lo` are in the row, nodes from `hi` on are not.
    let (mut lo, mut hi) = (1, nodes.len());
    let mut step = 1;
    while lo + step <= hi && in_row(lo + step - 1) {
        lo += step;
        step *= 2;
    }
    hi = hi.min(lo + step - 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if in_row(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Per-node free resources and the per-class index.
#[derive(Clone, Debug)]
pub struct FreeNodes {
    free: Vec<ResourceVec>,
    /// Per class: first node, capacity per node.
    first: Vec<u32>,
    capacity: Vec<ResourceVec>,
    class_of: Vec<u32>,
    class_free: Vec<ResourceVec>,
    idle: Vec<Bits>,
    partial: Vec<Bits>,
    /// Per class: how many nodes have each number of free cores (0..=cores), at
    /// `hist_at[class]..`; and the largest free core count of any of its nodes.
    hist: Vec<u32>,
    hist_at: Vec<usize>,
    max_cores: Vec<u64>,
    /// Per class: the changes of its nodes' free vectors, oldest first (a node may repeat),
    /// the first of them change number `log_base[class]` of the class.
    log: Vec<Vec<Change>>,
    log_base: Vec<u64>,
    history: u64,
    /// Per class: whether a reader has asked for its changes; until one does, none is logged
    /// (a reader's first read counts every node anyway).
    asked: Vec<Asked>,
    /// Per class: amounts held there that take no core.
    coreless: Vec<u32>,
    /// Scratch list of a shape's runs while it is taken or given back.
    runs: Vec<Run>,
}

/// An amount a node does not have free: a scheduler bug, reported by the engine as an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotFree {
    pub node: u32,
}

impl FreeNodes {
    /// Every node of `layout` wholly free.
    pub fn new(layout: &Layout) -> Self {
        let classes = layout.classes();
        let mut free = Vec::with_capacity(layout.node_count() as usize);
        let mut class_of = Vec::with_capacity(layout.node_count() as usize);
        for (c, class) in classes.iter().enumerate() {
            free.extend(std::iter::repeat_n(
                class.capacity.per_node,
                class.capacity.nodes as usize,
            ));
            class_of.extend(std::iter::repeat_n(c as u32, class.capacity.nodes as usize));
        }
        let mut hist_at = Vec::with_capacity(classes.len());
        let mut hist = Vec::new();
        for class in classes {
            hist_at.push(hist.len());
            let cores = class.capacity.per_node.0[0] as usize;
            hist.resize(hist.len() + cores + 1, 0);
            *hist.last_mut().expect("cores + 1 > 0") = class.capacity.nodes;
        }
        FreeNodes {
            log: vec![Vec::new(); classes.len()],
            log_base: vec![0; classes.len()],
            history: HISTORIES.fetch_add(1, Ordering::Relaxed),
            asked: (0..classes.len()).map(|_| Asked::default()).collect(),
            coreless: vec![0; classes.len()],
            runs: Vec::new(),
            hist,
            hist_at,
            max_cores: classes.iter().map(|c| c.capacity.per_node.0[0]).collect(),
            free,
            first: classes.iter().map(|c| c.nodes.start).collect(),
            capacity: classes.iter().map(|c| c.capacity.per_node).collect(),
            class_of,
            class_free: classes
                .iter()
                .map(|c| {
                    let n = u64::from(c.capacity.nodes);
                    let p = c.capacity.per_node;
                    ResourceVec([p.0[0] * n, p.0[1] * n, p.0[2] * n])
                })
                .collect(),
            idle: classes
                .iter()
                .map(|c| Bits::new(c.capacity.nodes, true))
                .collect(),
            partial: classes
                .iter()
                .map(|c| Bits::new(c.capacity.nodes, false))
                .collect(),
        }
    }

    /// What `node` has free.
    #[inline]
    pub fn free(&self, node: u32) -> ResourceVec {
        self.free[node as usize]
    }

    /// A node's capacity.
    #[inline]
    pub fn capacity(&self, node: u32) -> ResourceVec {
        self.capacity[self.class_of[node as usize] as usize]
    }

    /// The sum of the free vectors of `class`'s nodes.
    #[inline]
    pub fn class_free(&self, class: u32) -> ResourceVec {
        self.class_free[class as usize]
    }

    /// Wholly free nodes of `class`.
    #[inline]
    pub fn idle_count(&self, class: u32) -> u32 {
        self.idle[class as usize].len
    }

    /// The idle set of `class`, a bit per node from its first node on (bit `i % 64` of word
    /// `i / 64` for the node `i` after the first; none past its last node), and its first node.
    #[inline]
    pub fn idle_words(&self, class: u32) -> (u32, &[u64]) {
        let c = class as usize;
        (self.first[c], &self.idle[c].words)
    }

    /// Whether `node` is wholly free.
    #[inline]
    pub fn is_idle(&self, node: u32) -> bool {
        let c = self.class_of[node as usize];
        self.free[node as usize] == self.capacity[c as usize]
    }

    /// The largest number of free cores any node of `class` has.
    #[inline]
    pub fn max_free_cores(&self, class: u32) -> u64 {
        self.max_cores[class as usize]
    }

    /// Takes `amount` from `node`, or refuses without changing anything.
    pub fn take(&mut self, node: u32, amount: ResourceVec) -> Result<(), NotFree> {
        let old = self.free[node as usize];
        self.free[node as usize] = old.checked_sub(&amount).ok_or(NotFree { node })?;
        let c = self.class_of[node as usize] as usize;
        self.class_free[c] -= amount;
        if amount.0[0] == 0 {
            self.coreless[c] += 1;
        }
        self.reindex(node, old);
        Ok(())
    }

    /// Gives back what [`FreeNodes::take`] took.
    pub fn give(&mut self, node: u32, amount: ResourceVec) {
        let c = self.class_of[node as usize] as usize;
        let old = self.free[node as usize];
        self.free[node as usize] += amount;
        debug_assert!(self.free[node as usize].fits_in(&self.capacity[c]));
        self.class_free[c] += amount;
        if amount.0[0] == 0 {
            self.coreless[c] -= 1;
        }
        self.reindex(node, old);
    }

    /// Takes `shape`'s amounts from `nodes` of `class` (its nodes in the shape's order: full
    /// ones first, the last one last), or refuses without changing anything when one of them
    /// does not have its amount free. The same as a [`FreeNodes::take`] per node, with what
    /// concerns the class done once: a job of a thousand nodes starts in one call, its nodes
    /// tested and moved by runs ([`FreeNodes::runs_of`]).
    pub fn take_shape(
        &mut self,
        class: u32,
        shape: &NodeShape,
        nodes: &[u32],
    ) -> Result<(), NotFree> {
        debug_assert_eq!(nodes.len(), shape.count as usize);
        debug_assert!(nodes.iter().all(|&n| self.class_of[n as usize] == class));
        let c = class as usize;
        if let [node] = *nodes {
            // One node, as most jobs of many traces: no run to look for.
            let amount = shape.amount(0);
            if !amount.fits_in(&self.free[node as usize]) {
                return Err(NotFree { node });
            }
            self.class_free[c] -= shape.total();
            self.coreless[c] += shape.coreless();
            self.move_one(c, node, amount, true);
            return Ok(());
        }
        let runs = self.runs_of(c, shape, nodes, true);
        // Runs follow `nodes`' order and each node of a run has the same free vector and
        // amount: the first run that does not fit starts with the first node that does not.
        if let Some(r) = runs.iter().find(|r| !r.amount.fits_in(&r.was)) {
            let node = r.first;
            self.runs = runs;
            return Err(NotFree { node });
        }
        self.class_free[c] -= shape.total();
        self.coreless[c] += shape.coreless();
        self.move_runs(c, runs, true);
        Ok(())
    }

    /// Gives back what [`FreeNodes::take_shape`] took.
    pub fn give_shape(&mut self, class: u32, shape: &NodeShape, nodes: &[u32]) {
        debug_assert_eq!(nodes.len(), shape.count as usize);
        debug_assert!(nodes.iter().all(|&n| self.class_of[n as usize] == class));
        let c = class as usize;
        self.class_free[c] += shape.total();
        if let [node] = *nodes {
            self.move_one(c, node, shape.amount(0), false);
        } else {
            // Its own amounts without a core are uncounted only after its runs are found:
            // `alone_on_full` counts them among the class's.
            let runs = self.runs_of(c, shape, nodes, false);
            self.move_runs(c, runs, false);
        }
        self.coreless[c] -= shape.coreless();
        debug_assert!(
            nodes
                .iter()
                .all(|&n| self.free[n as usize].fits_in(&self.capacity[c]))
        );
    }

    /// Takes (`take`) or gives back `amount` on `node` of class `c` — its free vector and every
    /// index but the class's totals.
    fn move_one(&mut self, c: usize, node: u32, amount: ResourceVec, take: bool) {
        let limit = self.log_limit(c);
        let was = self.free[node as usize];
        let now = if take { was - amount } else { was + amount };
        self.free[node as usize] = now;
        let cores = self.reindex_run(c, node, 1, was, now, limit);
        self.settle_max_cores(c, cores);
    }

    /// `shape`'s `nodes` of class `c` as runs, in `nodes`' order: consecutive nodes of the
    /// same amount that have the same free vector. A row of consecutive nodes is found by
    /// doubling and bisection when the nodes increase (as the rules list them,
    /// [`row_length`]); its nodes' free vectors are
    /// known without reading them when the row is all idle — a whole-node job starting, in
    /// placement order — or when `shape` is given back (`take` false) by a job alone on its
    /// full nodes ([`FreeNodes::alone_on_full`]); other rows compare the free vectors of
    /// neighbours. The full nodes and the last node are never in one run (they take different
    /// amounts, or may). Returns the index's scratch list, to be handed back (`self.runs`) once
    /// read.
    fn runs_of(&mut self, c: usize, shape: &NodeShape, nodes: &[u32], take: bool) -> Vec<Run> {
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        let increasing = strictly_increasing(nodes);
        let (full, last) = nodes.split_at(shape.full() as usize);
        let alone =
            (!take && self.alone_on_full(c, shape)).then(|| self.capacity[c] - shape.per_node);
        self.push_runs(c, full, shape.per_node, increasing, alone, &mut runs);
        if let Some(amount) = shape.last {
            self.push_runs(c, last, amount, increasing, None, &mut runs);
        }
        runs
    }

    /// Whether the job of `shape` now held on class `c` is alone on each of its full nodes,
    /// each of which then has `capacity − per_node` free: its amount there takes every core
    /// (of a class with cores), and the class holds no amount without a core but the job's
    /// own — every other amount would need a core.
    #[inline]
    fn alone_on_full(&self, c: usize, shape: &NodeShape) -> bool {
        let cores = self.capacity[c].0[0];
        cores > 0 && shape.per_node.0[0] == cores && self.coreless[c] == shape.coreless()
    }

    /// [`FreeNodes::runs_of`] for `nodes` that all take `amount`, appended to `runs`; `known`
    /// is the free vector of each of them, when known.
    fn push_runs(
        &self,
        c: usize,
        nodes: &[u32],
        amount: ResourceVec,
        increasing: bool,
        known: Option<ResourceVec>,
        runs: &mut Vec<Run>,
    ) {
        let mut rest = nodes;
        while let [first, ..] = *rest {
            let row = row_length(rest, increasing);
            let offset = first - self.first[c];
            let was = known.or_else(|| {
                (row > 1 && self.idle[c].all(offset, row as u32)).then_some(self.capacity[c])
            });
            if let Some(was) = was {
                runs.push(Run {
                    first,
                    count: row as u32,
                    was,
                    amount,
                });
            } else {
                let free = &self.free[first as usize..first as usize + row];
                let mut k = 0;
                while k < row {
                    let was = free[k];
                    let count = 1 + leading(&free[k + 1..], |_, &f| f == was);
                    runs.push(Run {
                        first: first + k as u32,
                        count: count as u32,
                        was,
                        amount,
                    });
                    k += count;
                }
            }
            rest = &rest[row..];
        }
    }

    /// Takes (`take`) or gives back each of `runs` of class `c` — the free vectors and every
    /// index but the class's totals — and hands the scratch list back.
    fn move_runs(&mut self, c: usize, runs: Vec<Run>, take: bool) {
        let limit = self.log_limit(c);
        let mut most = 0;
        for r in &runs {
            let now = if take {
                r.was - r.amount
            } else {
                r.was + r.amount
            };
            self.free[r.first as usize..(r.first + r.count) as usize].fill(now);
            most = most.max(self.reindex_run(c, r.first, r.count, r.was, now, limit));
        }
        self.settle_max_cores(c, most);
        self.runs = runs;
    }

    /// How many amounts that take no core `class`'s nodes hold (each take of one counts, each
    /// give of one uncounts). While there are none, a node none of whose cores is free holds
    /// nothing but the amounts that took its cores.
    #[inline]
    pub fn coreless_holds(&self, class: u32) -> u32 {
        self.coreless[class as usize]
    }

    /// The class of `node`.
    #[inline]
    pub fn class_of(&self, node: u32) -> u32 {
        self.class_of[node as usize]
    }

    /// The changes of `class`'s nodes since `seen` (oldest first, a node possibly in several;
    /// some may have changed back), and the position to ask from next time. `None` for the
    /// changes when the log does not reach back to `seen` (it was dropped, or
    /// `seen` is of another `FreeNodes` or none): the reader must read every node.
    #[inline]
    pub fn changes_since(&self, class: u32, seen: LogPosition) -> (Option<&[Change]>, LogPosition) {
        let c = class as usize;
        self.asked[c].0.store(true, Ordering::Relaxed);
        let base = self.log_base[c];
        let log = &self.log[c];
        let next = LogPosition {
            history: self.history,
            change: base + log.len() as u64,
        };
        let nodes = seen
            .change
            .checked_sub(base)
            .filter(|_| seen.history == self.history && seen.change <= next.change)
            .map(|i| &log[i as usize..]);
        (nodes, next)
    }

    fn reindex(&mut self, node: u32, old: ResourceVec) {
        let c = self.class_of[node as usize] as usize;
        let limit = self.log_limit(c);
        let now = self.free[node as usize];
        let cores = self.reindex_run(c, node, 1, old, now, limit);
        self.settle_max_cores(c, cores);
    }

    /// The length at which class `c`'s change log drops its older half: half its nodes (at
    /// least one). A reader catching up on that many runs pays about what counting the class
    /// afresh does.
    #[inline]
    fn log_limit(&self, c: usize) -> usize {
        (self.class_end(c) - self.first[c]).div_ceil(2) as usize
    }

    /// Indexes the change of the `count` nodes of class `c` from `first` on, each from `was`
    /// to `now` free — the log, the core histogram, the idle and partial sets — but the
    /// class's largest free core count, which [`FreeNodes::settle_max_cores`] brings up to
    /// date once for a batch of nodes. Returns the nodes' free cores now.
    #[inline]
    fn reindex_run(
        &mut self,
        c: usize,
        first: u32,
        count: u32,
        was: ResourceVec,
        now: ResourceVec,
        log_limit: usize,
    ) -> u64 {
        if now != was && self.asked[c].0.load(Ordering::Relaxed) {
            let log = &mut self.log[c];
            if log.len() >= log_limit {
                // Dropped whole, the log would send every reader to count the class afresh at
                // its next read, however lately it read before.
                let old = log.len() - log.len() / 2;
                self.log_base[c] += old as u64;
                log.drain(..old);
            }
            log.push(Change {
                first,
                count,
                was,
                now,
            });
        }
        let old_cores = was.0[0];
        let new_cores = now.0[0];
        if new_cores != old_cores {
            let h = &mut self.hist[self.hist_at[c]..];
            h[old_cores as usize] -= count;
            h[new_cores as usize] += count;
        }
        let i = first - self.first[c];
        let idle = now == self.capacity[c];
        let partial = !idle && now.0[0] > 0;
        if count == 1 {
            self.idle[c].set(i, idle);
            self.partial[c].set(i, partial);
        } else {
            // Every node of the run had `was` free, so each was in a set or not alike: a set's
            // words are written only when the run goes in or out of it.
            let was_idle = was == self.capacity[c];
            let was_partial = !was_idle && was.0[0] > 0;
            if idle != was_idle {
                self.idle[c].set_range(i, count, idle);
            }
            if partial != was_partial {
                self.partial[c].set_range(i, count, partial);
            }
        }
        new_cores
    }

    /// Brings class `c`'s largest free core count up to date after changed nodes of which
    /// `most` is the largest free core count now: it is `most` if that is more, else the
    /// previous one or, if no node has that many any more, the next count some node has.
    #[inline]
    fn settle_max_cores(&mut self, c: usize, most: u64) {
        let h = &self.hist[self.hist_at[c]..];
        let max = &mut self.max_cores[c];
        if most > *max {
            *max = most;
        } else {
            while *max > 0 && h[*max as usize] == 0 {
                *max -= 1;
            }
        }
    }

    /// One past the last node of class `c`.
    #[inline]
    fn class_end(&self, c: usize) -> u32 {
        self.first
            .get(c + 1)
            .copied()
            .unwrap_or(self.free.len() as u32)
    }

    /// The nodes of `class` that may hold an amount needing `cores` cores, in increasing
    /// index: idle and partial nodes when `cores > 0` (a node with no free core cannot), every
    /// node otherwise; only idle nodes when `idle_only`. The caller checks each node's free
    /// vector.
    #[inline]
    pub fn candidates(&self, class: u32, cores: u64, idle_only: bool) -> Candidates<'_> {
        let c = class as usize;
        let first = self.first[c];
        let end = self.class_end(c);
        let which = if idle_only {
            Which::Idle
        } else if cores > 0 {
            Which::Usable
        } else {
            Which::All
        };
        let mut it = Candidates {
            idle: &self.idle[c],
            partial: &self.partial[c],
            which,
            first,
            nodes: end - first,
            word: 0,
            bits: 0,
        };
        it.bits = it.load(0);
        it
    }
}

#[derive(Clone, Copy)]
enum Which {
    Idle,
    Usable,
    All,
}

/// Iterator of [`FreeNodes::candidates`].
pub struct Candidates<'a> {
    idle: &'a Bits,
    partial: &'a Bits,
    which: Which,
    first: u32,
    nodes: u32,
    word: usize,
    bits: u64,
}

impl Candidates<'_> {
    #[inline]
    fn load(&self, w: usize) -> u64 {
        if w >= self.idle.words.len() {
            return 0;
        }
        match self.which {
            Which::Idle => self.idle.word(w),
            Which::Usable => self.idle.word(w) | self.partial.word(w),
            Which::All => {
                if (w + 1) * 64 <= self.nodes as usize {
                    u64::MAX
                } else {
                    (1u64 << (self.nodes % 64)) - 1
                }
            }
        }
    }
}

impl Iterator for Candidates<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.bits == 0 {
            self.word += 1;
            if self.word >= self.idle.words.len() {
                return None;
            }
            self.bits = self.load(self.word);
        }
        let b = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some(self.first + self.word as u32 * 64 + b)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::cluster::{Cluster, NodeClass, Topology};
    use super::*;
    use crate::sim::machine::{Allocation, TopologyMachine};

    /// A shared cluster of `small` nodes of 8 cores and 16 memory units and one of 80 and 512
    /// (also the layout of `scheduler::node::free_counts`' tests).
    pub(crate) fn layout(small: u32) -> Layout {
        Layout::new(&TopologyMachine::new(Topology::new(vec![Cluster::new(
            "c",
            Allocation::Shared,
            vec![
                NodeClass::new("small", small, 8, 16),
                NodeClass::new("big", 1, 80, 512),
            ],
        )])))
        .unwrap()
    }

    #[test]
    fn the_index_follows_every_change() {
        let l = layout(70);
        let mut f = FreeNodes::new(&l);
        assert_eq!(f.idle_count(0), 70);
        assert_eq!(f.class_free(0), ResourceVec([560, 1120, 0]));
        f.take(3, ResourceVec([2, 4, 0])).unwrap();
        f.take(65, ResourceVec([8, 1, 0])).unwrap(); // no core left
        assert_eq!(f.idle_count(0), 68);
        assert_eq!(f.class_free(0), ResourceVec([550, 1115, 0]));
        assert_eq!(f.max_free_cores(0), 8);
        for n in 0..70 {
            if n != 65 {
                f.take(n, ResourceVec([if n == 3 { 4 } else { 6 }, 0, 0]))
                    .unwrap();
            }
        }
        assert_eq!(f.max_free_cores(0), 2);
        for n in 0..70 {
            if n != 65 {
                f.give(n, ResourceVec([if n == 3 { 4 } else { 6 }, 0, 0]));
            }
        }
        let with_core: Vec<u32> = f.candidates(0, 1, false).collect();
        assert_eq!(with_core.len(), 69);
        assert!(with_core.contains(&3) && !with_core.contains(&65));
        assert!(with_core.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(f.candidates(0, 0, false).count(), 70);
        assert_eq!(f.candidates(0, 1, true).count(), 68);
        assert_eq!(f.candidates(1, 1, false).collect::<Vec<_>>(), [70]);
        // Refused without change.
        assert_eq!(f.take(3, ResourceVec([7, 0, 0])), Err(NotFree { node: 3 }));
        assert_eq!(f.free(3), ResourceVec([6, 12, 0]));
        f.give(3, ResourceVec([2, 4, 0]));
        f.give(65, ResourceVec([8, 1, 0]));
        assert_eq!(f.idle_count(0), 70);
        assert!(f.is_idle(65));
        assert_eq!(f.max_free_cores(0), 8);
        assert_eq!(f.candidates(0, 1, false).count(), 70);
        assert!(
            f.log.iter().all(Vec::is_empty),
            "no reader asked: nothing logged"
        );
    }
    /// A seeded stream of pseudo-random draws for the index tests: `next(n)` is in `0..n`
    /// (a 64-bit linear congruential generator, its high bits).
    pub(crate) fn seeded(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |n| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        }
    }

    /// A reader asks about class 0 of each: its changes are logged from now on.
    fn asked_from_the_start(f: &[&FreeNodes]) {
        for f in f {
            assert!(f.changes_since(0, LogPosition::default()).0.is_none());
        }
    }

    /// Class 0's change log node by node: each node of each run with its move.
    fn log_by_node(f: &FreeNodes) -> Vec<(u32, ResourceVec, ResourceVec)> {
        f.log[0]
            .iter()
            .flat_map(|c| (c.first..c.first + c.count).map(move |n| (n, c.was, c.now)))
            .collect()
    }

    /// Whether two logs of the same history, node by node, agree where both reach: the logs
    /// are dropped at different moments, so the shorter must end the longer. Returns how many
    /// moves were compared.
    fn same_log_tail(a: &FreeNodes, b: &FreeNodes) -> usize {
        let (a, b) = (log_by_node(a), log_by_node(b));
        let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        assert!(long.ends_with(&short), "{short:?} does not end {long:?}");
        short.len()
    }

    /// Whole shapes taken and given back at once leave the index as a take or give per node
    /// does: free vectors, class totals, idle and partial sets, the largest free core count,
    /// the amounts without a core and the change log.
    #[test]
    fn a_shape_at_once_indexes_as_node_by_node() {
        let l = layout(12);
        let (mut batch, mut single) = (FreeNodes::new(&l), FreeNodes::new(&l));
        asked_from_the_start(&[&batch, &single]);
        let mut held: Vec<(NodeShape, Vec<u32>)> = Vec::new();
        let mut next = seeded(0x2545_F491_u64);
        let (mut refused, mut to_zero) = (0, 0);
        for step in 0..6_000 {
            if held.is_empty() || next(5) > 1 {
                let count = 1 + next(6) as u32;
                let per_node = ResourceVec([next(9), next(5), 0]);
                let last = (next(2) == 0).then(|| ResourceVec([next(9), next(5), 0]));
                let shape = NodeShape {
                    count,
                    per_node,
                    last,
                    whole: false,
                };
                let first = next(12) as u32;
                let nodes: Vec<u32> = (0..count).map(|i| (first + 7 * i) % 12).collect();
                let before = batch.free.clone();
                match batch.take_shape(0, &shape, &nodes) {
                    Ok(()) => {
                        for (i, &node) in nodes.iter().enumerate() {
                            single.take(node, shape.amount(i as u32)).unwrap();
                        }
                        held.push((shape, nodes));
                    }
                    Err(_) => {
                        refused += 1;
                        assert_eq!(batch.free, before, "step {step}: refused without change");
                    }
                }
            } else {
                let (shape, nodes) = held.swap_remove(next(held.len() as u64) as usize);
                batch.give_shape(0, &shape, &nodes);
                for (i, &node) in nodes.iter().enumerate() {
                    single.give(node, shape.amount(i as u32));
                }
            }
            to_zero += usize::from(batch.max_free_cores(0) < 8);
            assert_eq!(batch.free, single.free, "step {step}");
            assert_eq!(batch.class_free(0), single.class_free(0));
            assert_eq!(batch.idle_count(0), single.idle_count(0));
            assert_eq!(
                batch.max_free_cores(0),
                single.max_free_cores(0),
                "step {step}"
            );
            assert_eq!(batch.coreless_holds(0), single.coreless_holds(0));
            assert!(
                batch
                    .candidates(0, 1, false)
                    .eq(single.candidates(0, 1, false))
            );
            assert!(
                batch
                    .candidates(0, 1, true)
                    .eq(single.candidates(0, 1, true))
            );
            same_log_tail(&batch, &single);
        }
        assert!(
            refused > 100 && to_zero > 100,
            "{refused} refused, {to_zero} below 8 cores"
        );
    }

    /// The runs a move of `shape` on `nodes` logs, found as the index did before it looked
    /// for idle rows a word at a time: node by node, a run going on while the next node is
    /// the next index with the same free vector (in `free`, before the move), the full nodes
    /// and the last node apart; runs that change nothing are not logged.
    fn naive_runs(
        free: &[ResourceVec],
        shape: &NodeShape,
        nodes: &[u32],
        take: bool,
    ) -> Vec<Change> {
        let mut runs: Vec<Change> = Vec::new();
        for (i, &node) in nodes.iter().enumerate() {
            let (was, amount) = (free[node as usize], shape.amount(i as u32));
            let now = if take { was - amount } else { was + amount };
            let part = |i: usize| i < shape.full() as usize;
            match runs.last_mut() {
                Some(r)
                    if r.first + r.count == node
                        && r.was == was
                        && r.now == now
                        && part(i - 1) == part(i) =>
                {
                    r.count += 1
                }
                _ => runs.push(Change {
                    first: node,
                    count: 1,
                    was,
                    now,
                }),
            }
        }
        runs.retain(|r| r.was != r.now);
        runs
    }

    /// Whether class 0's log ends with `expected` — or with its end, when the log was dropped
    /// during the move. Returns how many runs were compared.
    fn log_ends_with(f: &FreeNodes, expected: &[Change]) -> usize {
        let n = expected.len().min(f.log[0].len());
        let tail = &expected[expected.len() - n..];
        assert!(
            f.log[0].ends_with(tail),
            "{:?} does not end with {tail:?}",
            f.log[0]
        );
        n
    }

    /// The row found by doubling and bisection is the one found node by node, on increasing
    /// lists of rows of every length from 1 to 300 with gaps between them.
    #[test]
    fn a_row_of_increasing_nodes_is_found_as_node_by_node() {
        let mut next = seeded(0x000A_11CE);
        let mut rows = 0;
        for _ in 0..5_000 {
            let mut nodes = Vec::new();
            let mut node = next(100) as u32;
            for _ in 0..1 + next(6) {
                let most = if next(2) == 0 { 8 } else { 300 };
                let row = 1 + next(most) as u32;
                nodes.extend(node..node + row);
                node += row + 1 + next(3) as u32;
            }
            assert!(strictly_increasing(&nodes));
            let mut rest = &nodes[..];
            while let [first, ..] = *rest {
                let by_node = leading(rest, |k, &n| n == first + k as u32);
                assert_eq!(row_length(rest, true), by_node, "{rest:?}");
                assert_eq!(row_length(rest, false), by_node);
                rest = &rest[by_node..];
                rows += 1;
            }
        }
        assert!(rows > 15_000, "{rows} rows");
        assert!(!strictly_increasing(&[3, 4, 4]) && !strictly_increasing(&[5, 2]));
        assert!(strictly_increasing(&[]) && strictly_increasing(&[7]));
    }

    /// Whether all of a range is in a set, against the set's bits one by one, for ranges
    /// within a word, across words and to the last node.
    #[test]
    fn all_of_a_range_is_in_the_set_word_by_word() {
        let mut next = seeded(0xB175);
        let mut set = Bits::new(150, false);
        let (mut yes, mut no) = (0, 0);
        for _ in 0..20_000 {
            let start = next(150) as u32;
            let n = next(u64::from(150 - start) + 1) as u32;
            if next(3) == 0 {
                // A range goes in or out of the set where none or all of it is.
                let on = !set.all(start, n);
                if on {
                    (start..start + n).for_each(|i| set.set(i, false));
                }
                set.set_range(start, n, on);
            } else {
                set.set(start, next(2) == 0);
            }
            let (start, n) = (next(150) as u32, 1 + next(80) as u32);
            let n = n.min(150 - start);
            let bit = |i: u32| set.words[(i / 64) as usize] >> (i % 64) & 1 == 1;
            let all = (start..start + n).all(bit);
            assert_eq!(set.all(start, n), all, "{start} + {n}");
            yes += usize::from(all && n > 64);
            no += usize::from(!all && n > 64);
        }
        assert!(yes > 100 && no > 100, "{yes} long ranges all in, {no} not");
        // One node short at either end of a row across three words.
        let mut row = Bits::new(150, false);
        row.set_range(10, 130, true);
        assert!(row.all(10, 130) && row.all(64, 76) && row.all(139, 1));
        assert!(!row.all(9, 131) && !row.all(10, 131) && !row.all(140, 10));
    }

    /// Jobs on rows of consecutive nodes — with gaps, wrapping past the class's last node, or
    /// on scattered nodes, on a class of 150 nodes (three words of each set) — index by runs as
    /// a take or give per node does, and as the free vectors say when counted afresh: every
    /// index, the core histogram, the words of the idle and partial sets, and the log's moves.
    #[test]
    fn runs_of_nodes_index_as_node_by_node() {
        let l = layout(150);
        let (mut runs, mut single) = (FreeNodes::new(&l), FreeNodes::new(&l));
        asked_from_the_start(&[&runs, &single]);
        let capacity = ResourceVec([8, 16, 0]);
        let mut held: Vec<(NodeShape, Vec<u32>)> = Vec::new();
        let mut next = seeded(0x5851_F42D_u64);
        let (mut started, mut long_runs, mut compared, mut logged_runs) = (0, 0, 0, 0);
        for step in 0..16_000 {
            if held.is_empty() || next(5) > 1 {
                let most = if next(2) == 0 { 8 } else { 90 };
                let count = 1 + next(most) as u32;
                // Whole nodes mostly (idle to full and back, in rows), else partial amounts.
                let per_node = match next(4) {
                    0 | 1 => capacity,
                    2 => ResourceVec([8, next(17), 0]),
                    _ => ResourceVec([next(9), next(5), 0]),
                };
                let last = (next(3) == 0).then(|| ResourceVec([next(9), next(5), 0]));
                let shape = NodeShape {
                    count,
                    per_node,
                    last,
                    whole: false,
                };
                let first = next(150) as u32;
                let nodes: Vec<u32> = match next(3) {
                    // A row from `first`, wrapping to node 0.
                    0 => (0..count).map(|i| (first + i) % 150).collect(),
                    // Rows with a gap of one node every `gap` nodes.
                    1 => {
                        let gap = 2 + next(20) as u32;
                        (0..count).map(|i| (first + i + i / gap) % 150).collect()
                    }
                    // Scattered.
                    _ => (0..count).map(|i| (first + 7 * i) % 150).collect(),
                };
                let mut distinct = nodes.clone();
                distinct.sort_unstable();
                distinct.dedup();
                if distinct.len() != nodes.len() {
                    continue;
                }
                let before = runs.free.clone();
                let refused = nodes
                    .iter()
                    .enumerate()
                    .find(|&(i, &n)| !shape.amount(i as u32).fits_in(&before[n as usize]))
                    .map(|(_, &node)| NotFree { node });
                let taken = runs.take_shape(0, &shape, &nodes);
                assert_eq!(taken.err(), refused, "step {step}: the first node short");
                match taken {
                    Ok(()) => {
                        started += 1;
                        // Worked out only for a take that fits (a refused one would underflow).
                        let expected = naive_runs(&before, &shape, &nodes, true);
                        logged_runs += log_ends_with(&runs, &expected);
                        for (i, &node) in nodes.iter().enumerate() {
                            single.take(node, shape.amount(i as u32)).unwrap();
                        }
                        held.push((shape, nodes));
                    }
                    Err(_) => assert_eq!(runs.free, before, "step {step}: refused, unchanged"),
                }
            } else {
                let (shape, nodes) = held.swap_remove(next(held.len() as u64) as usize);
                let expected = naive_runs(&runs.free, &shape, &nodes, false);
                runs.give_shape(0, &shape, &nodes);
                logged_runs += log_ends_with(&runs, &expected);
                for (i, &node) in nodes.iter().enumerate() {
                    single.give(node, shape.amount(i as u32));
                }
            }
            long_runs += usize::from(runs.log[0].last().is_some_and(|c| c.count > 64));
            assert_eq!(runs.free, single.free, "step {step}");
            assert_eq!(runs.class_free(0), single.class_free(0));
            assert_eq!(runs.hist, single.hist, "step {step}");
            assert_eq!(runs.max_free_cores(0), single.max_free_cores(0));
            assert_eq!(runs.coreless_holds(0), single.coreless_holds(0));
            assert_eq!(runs.idle[0].words, single.idle[0].words, "step {step}");
            assert_eq!(runs.idle[0].len, single.idle[0].len);
            assert_eq!(
                runs.partial[0].words, single.partial[0].words,
                "step {step}"
            );
            assert_eq!(runs.partial[0].len, single.partial[0].len);
            compared += same_log_tail(&runs, &single);
            // Afresh from the free vectors.
            let free = &runs.free[..150];
            let mut hist = [0u32; 9];
            for f in free {
                hist[f.0[0] as usize] += 1;
            }
            assert_eq!(runs.hist[..9], hist[..], "step {step}");
            let idle: Vec<u32> = (0..150).filter(|&n| free[n as usize] == capacity).collect();
            assert!(runs.candidates(0, 1, true).eq(idle.iter().copied()));
            let usable = (0..150).filter(|&n| free[n as usize].0[0] > 0);
            assert!(runs.candidates(0, 1, false).eq(usable));
            assert_eq!(runs.idle_count(0), idle.len() as u32);
            assert_eq!(
                runs.max_free_cores(0),
                free.iter().map(|f| f.0[0]).max().unwrap()
            );
        }
        assert!(
            started > 4_000 && long_runs > 50 && compared > 300_000 && logged_runs > 20_000,
            "{started} started, {long_runs} runs of more than 64 nodes, {compared} compared, \
             {logged_runs} runs logged"
        );
    }

    /// After random takes and gives, a reader that saved every node's free vector at some
    /// change number finds every node that differs now among the changes since, unless the log
    /// was dropped past it.
    #[test]
    fn the_log_names_every_node_that_changed() {
        let l = layout(70);
        let mut f = FreeNodes::new(&l);
        let mut held: Vec<(u32, ResourceVec)> = Vec::new();
        let mut next = seeded(0x9E37_79B9_u64);
        let snapshot = |f: &FreeNodes| (0..71).map(|n| f.free(n)).collect::<Vec<_>>();
        let position = |f: &FreeNodes| f.changes_since(0, LogPosition::default()).1;
        let mut saved = vec![(position(&f), snapshot(&f))];
        let (mut reached, mut dropped) = (0, 0);
        for step in 0..5_000 {
            if held.is_empty() || next(3) > 0 {
                let node = next(71) as u32;
                let amount = ResourceVec([1 + next(4), next(3) * 2, 0]);
                if f.take(node, amount).is_ok() {
                    held.push((node, amount));
                }
            } else {
                let (node, amount) = held.swap_remove(next(held.len() as u64) as usize);
                f.give(node, amount);
            }
            if step % 13 == 0 {
                saved.push((position(&f), snapshot(&f)));
            }
            if step % 97 == 0 {
                let now = position(&f);
                for (seen, then) in &saved {
                    match f.changes_since(0, *seen) {
                        (Some(changes), next) => {
                            reached += 1;
                            assert_eq!(next, now);
                            assert_eq!(changes.len() as u64, now.change - seen.change);
                            for n in 0..70u32 {
                                if f.free(n) != then[n as usize] {
                                    assert!(
                                        changes
                                            .iter()
                                            .any(|c| (c.first..c.first + c.count).contains(&n)),
                                        "node {n} since {seen:?}"
                                    );
                                }
                            }
                        }
                        (None, _) => dropped += 1,
                    }
                }
            }
        }
        assert!(
            reached > 100 && dropped > 100,
            "{reached} reached, {dropped} dropped"
        );
        // Another FreeNodes' position, or none, reaches nothing.
        assert!(f.changes_since(0, LogPosition::default()).0.is_none());
        let other = FreeNodes::new(&l);
        assert!(f.changes_since(0, position(&other)).0.is_none());
        assert!(f.clone().changes_since(0, position(&f)).0.is_some());
    }
}
