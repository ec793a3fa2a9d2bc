//! An availability profile: free capacity as a step function of future time, used by
//! conservative backfilling to hold a reservation for every queued job (and by EASY, FCFS and
//! reservation placement when advance reservations exist).
//!
//! The function is a sequence of breakpoints `(t_i, free_i)`: `free_i` is free from `t_i` until
//! the next breakpoint, and the last value holds forever. Amounts are signed so that a
//! transiently inconsistent profile (a job that overran its request, a reservation left in the
//! past between periodic scheduler calls, an advance reservation granted over planned jobs) is
//! representable; such capacity simply never fits a job. Breakpoints whose value equals their
//! predecessor's are merged away, so the structure holds exactly the steps of the function and
//! its answers never depend on the order of the operations that built it.
//!
//! The profile counts one resource, the allocation unit: it serves the uniform machines (a
//! processor pool, or homogeneous exclusive nodes), on which every demand and capacity has only
//! that component; topologies plan on per-node step functions instead
//! ([`crate::sim::topology::Timeline`]). So a breakpoint is a time and one `i64` and a fit is
//! one comparison (issue 10: three components per breakpoint, compared component-wise, were
//! dead weight on conservative backfilling's hot path; BENCHMARKS.md, "Conservative
//! backfilling on a processor pool").
//!
//! # Layout (issue 10)
//!
//! The breakpoints are kept in order in *chunks* of at most [`CHUNK`] — a B-tree of height two:
//! each chunk carries a pending addition for all its breakpoints and the minimum and maximum
//! over them, brought up to date from the breakpoints an operation touches (a full pass over the
//! chunk only when those held the extreme that moved). Holding or giving back capacity over an
//! interval updates the breakpoints of the (at most two) chunks its ends fall in one by one and
//! the chunks between them through their pending addition: O(chunk + chunks spanned). A move to
//! an earlier slot whose four ends fall in one chunk (most of a compression's moves) is one
//! search and one update of that chunk. Searches walk breakpoints in time order but step over a
//! whole chunk when its summary settles it: all large enough while a candidate window is being
//! checked, all too small while the next fitting step is sought.
//!
//! The committed work is built in one pass over its changes sorted by time
//! ([`Profile::rebuild`]) rather than by one update per running job: a conservative plan made
//! afresh (issue 36, a reordering queue) starts from it at most calls.
//!
//! This replaced a single sorted vector (O(n) insertions and full scans) and, briefly, a treap
//! with lazy additions (O(log n) per operation): on the traces' profiles (hundreds to tens of
//! thousands of steps) the walk that searches do — from a too-small step to the next fitting
//! one, again and again — is what dominates, and it is several times faster over contiguous
//! arrays than from the root of a tree each time (BENCHMARKS.md, "Conservative backfilling").

use crate::sim::job::Time;
use crate::sim::resources::ResourceVec;

/// A free amount: allocation units (processors, or nodes with exclusive node allocation).
type Amount = i64;

/// Most breakpoints per chunk: a chunk that grows past twice this splits in two. The unit
/// tests use tiny chunks so that every path across chunk boundaries is exercised.
const CHUNK: usize = if cfg!(test) { 2 } else { 32 };

/// The amount of allocation units `v` stands for. The machines this profile serves count one
/// resource: any other component is 0 in every capacity and demand (topologies plan on
/// [`crate::sim::topology::Timeline`] instead).
#[inline]
fn units(v: ResourceVec) -> Amount {
    debug_assert!(
        v.0[1..].iter().all(|&x| x == 0),
        "a profile counts allocation units only: {v:?}"
    );
    v.unit_count() as Amount
}

#[derive(Clone, Debug)]
struct Chunk {
    times: Vec<Time>,
    /// Values without `pending`.
    free: Vec<Amount>,
    /// Added to every value of the chunk.
    pending: Amount,
    /// Minimum and maximum of `free` (without `pending`).
    min: Amount,
    max: Amount,
}

/// A chunk holds at most one breakpoint more than twice [`CHUNK`] (it is split then), so its
/// vectors are made that large once: growing them breakpoint by breakpoint reallocated them
/// several times over a chunk's life (issue 36: 5 % of the instructions of a conservative run
/// over a reordering queue, which builds profiles at most calls).
impl Default for Chunk {
    fn default() -> Self {
        Chunk {
            times: Vec::with_capacity(2 * CHUNK + 1),
            free: Vec::with_capacity(2 * CHUNK + 1),
            pending: 0,
            min: 0,
            max: 0,
        }
    }
}

impl Chunk {
    #[inline]
    fn value(&self, i: usize) -> Amount {
        self.free[i] + self.pending
    }

    fn summarise(&mut self) {
        // Two plain folds, which the compiler vectorises.
        self.min = self.free.iter().copied().fold(Amount::MAX, Amount::min);
        self.max = self.free.iter().copied().fold(Amount::MIN, Amount::max);
    }

    /// Every value large enough for `demand`.
    #[inline]
    fn all_fit(&self, demand: Amount) -> bool {
        demand <= self.min + self.pending
    }

    /// Every value too small for `demand`.
    #[inline]
    fn none_fit(&self, demand: Amount) -> bool {
        demand > self.max + self.pending
    }

    /// Adds `delta` to the values in `range`; returns the largest of them afterwards
    /// (`Amount::MIN` for an empty range).
    fn add(&mut self, range: std::ops::Range<usize>, delta: Amount) -> Amount {
        if range.is_empty() {
            return Amount::MIN;
        }
        if range.start == 0 && range.end == self.free.len() {
            self.pending += delta;
            return self.max + self.pending;
        }
        // The summary is brought up to date from the range alone unless the range held the
        // extreme that moved away from the rest (a full pass then): summarising every chunk
        // touched was half the cost of holding or giving back capacity.
        let (mut low, mut high) = (Amount::MAX, Amount::MIN);
        for v in &mut self.free[range] {
            low = low.min(*v);
            high = high.max(*v);
            *v += delta;
        }
        if delta < 0 {
            self.min = self.min.min(low + delta);
            if high == self.max {
                self.max = self.free.iter().copied().fold(Amount::MIN, Amount::max);
            }
        } else {
            self.max = self.max.max(high + delta);
            if low == self.min {
                self.min = self.free.iter().copied().fold(Amount::MAX, Amount::min);
            }
        }
        high + delta + self.pending
    }

    /// The breakpoint at `t`, given `i`, the step in effect there: inserted with that step's
    /// value if missing. Returns its index.
    fn breakpoint_at(&mut self, i: usize, t: Time) -> usize {
        if self.times[i] == t {
            return i;
        }
        let raw = self.free[i];
        self.times.insert(i + 1, t);
        self.free.insert(i + 1, raw);
        i + 1
    }

    /// Drops the first `n` breakpoints.
    fn drop_first(&mut self, n: usize) {
        let (mut low, mut high) = (Amount::MAX, Amount::MIN);
        for &v in &self.free[..n] {
            low = low.min(v);
            high = high.max(v);
        }
        self.times.drain(..n);
        self.free.drain(..n);
        if low == self.min || high == self.max {
            self.summarise();
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Non-empty chunks in time order.
    chunks: Vec<Chunk>,
    /// The first breakpoint of each chunk, contiguous so that locating a time's chunk is one
    /// cache-friendly binary search.
    firsts: Vec<Time>,
    /// [`Profile::rebuild`]'s changes, kept to reuse their allocation (no part of the function).
    changes: Vec<(Time, Amount)>,
}

impl Profile {
    /// A profile that starts at `now` with `free` capacity.
    pub fn reset(&mut self, now: Time, free: ResourceVec) {
        self.chunks.clear();
        let mut chunk = Chunk::default();
        chunk.times.push(now);
        chunk.free.push(units(free));
        chunk.summarise();
        self.chunks.push(chunk);
        self.firsts.clear();
        self.firsts.push(now);
    }

    /// Resets the profile to start at `now` with `free` capacity, then releases each `(t,
    /// demand)` of `releases` from `t` on and holds each `(from, to, demand)` of `holds` over
    /// `[from, to)` (times before `now` taken as `now`): the step function that [`Profile::reset`]
    /// then [`Profile::release_from`] and [`Profile::reserve`] for each build, made in one pass
    /// over the changes sorted by time, its chunks filled to [`CHUNK`] (issue 36: a conservative
    /// plan made afresh over a reordering queue starts from the committed work, one update of
    /// the profile per running job when made one by one).
    pub fn rebuild(
        &mut self,
        now: Time,
        free: ResourceVec,
        releases: impl IntoIterator<Item = (Time, ResourceVec)>,
        holds: impl IntoIterator<Item = (Time, Time, ResourceVec)>,
    ) {
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        changes.extend(releases.into_iter().map(|(t, v)| (t, units(v))));
        for (from, to, v) in holds {
            // An empty range holds nothing, as `reserve` does.
            if to > from.max(now) {
                changes.extend([(from, -units(v)), (to, units(v))]);
            }
        }
        changes.sort_unstable_by_key(|&(t, _)| t);
        self.chunks.clear();
        self.firsts.clear();
        // The changes up to `now` make the first step; each later time with a net change is a
        // step (equal neighbours merged, as the profile keeps them).
        let mut value = units(free);
        let mut rest = changes.iter().peekable();
        while let Some(&(_, delta)) = rest.next_if(|&&(t, _)| t <= now) {
            value += delta;
        }
        let mut chunk = Chunk::default();
        chunk.times.push(now);
        chunk.free.push(value);
        while let Some(&(t, delta)) = rest.next() {
            let mut next = value + delta;
            while let Some(&(_, more)) = rest.next_if(|&&(u, _)| u == t) {
                next += more;
            }
            if next == value {
                continue;
            }
            value = next;
            if chunk.times.len() == CHUNK {
                self.push_chunk(std::mem::take(&mut chunk));
            }
            chunk.times.push(t);
            chunk.free.push(value);
        }
        self.push_chunk(chunk);
        self.changes = changes;
    }

    /// Appends a non-empty chunk after the others, its summary brought up to date.
    fn push_chunk(&mut self, mut chunk: Chunk) {
        chunk.summarise();
        self.firsts.push(chunk.times[0]);
        self.chunks.push(chunk);
    }

    pub fn start(&self) -> Time {
        self.chunks.first().map_or(0, |c| c.times[0])
    }

    /// Number of breakpoints (steps of the function).
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.times.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Free allocation units at time `t` (t ≥ start).
    #[inline]
    pub fn free_at(&self, t: Time) -> i64 {
        let (c, i) = self.step_at(t);
        self.chunks[c].value(i)
    }

    /// Capacity `demand` becomes free from `t` on (a running job's predicted end).
    pub fn release_from(&mut self, t: Time, demand: ResourceVec) {
        self.add(t, None, units(demand));
    }

    /// Holds `demand` over `[from, to)`.
    pub fn reserve(&mut self, from: Time, to: Time, demand: ResourceVec) {
        self.add(from, Some(to), -units(demand));
    }

    /// Gives back `demand` over `[from, to)`.
    pub fn unreserve(&mut self, from: Time, to: Time, demand: ResourceVec) {
        self.add(from, Some(to), units(demand));
    }

    /// Moves a hold of `demand` for `duration` seconds from `[held, held + duration)` to start at
    /// `start` instead: the same function as giving the old one back and holding the new one,
    /// but where the two overlap only their differences are touched (a move in a compression
    /// is usually a short step earlier, so the breakpoints between them are left alone).
    ///
    /// Returns the largest free amount, afterwards, over the part of the old hold that the new
    /// one does not cover (`i64::MIN` if none): where the move raised capacity.
    #[inline]
    pub fn shift(&mut self, held: Time, start: Time, duration: Time, demand: ResourceVec) -> i64 {
        self.shift_units(held, start, duration, units(demand))
    }

    /// [`Profile::shift`] for `d` allocation units.
    fn shift_units(&mut self, held: Time, start: Time, duration: Time, d: Amount) -> i64 {
        let (old_end, new_end) = (held + duration, start + duration);
        if start == held {
            return Amount::MIN;
        }
        if start < held {
            // Held from `start` to the earlier of the old start and the new end; given back
            // from the later of them to the old end.
            let (hold_to, free_from) = (held.min(new_end), held.max(new_end));
            if let Some(risen) = self.shift_earlier_in_chunk(start, hold_to, free_from, old_end, d)
            {
                return risen;
            }
        }
        if new_end <= held || old_end <= start {
            let risen = self.add(held, Some(old_end), d);
            self.add(start, Some(new_end), -d);
            // The new hold does not overlap the old one: what the old one gave back stands.
            risen
        } else if start < held {
            self.add(start, Some(held), -d);
            self.add(new_end, Some(old_end), d)
        } else {
            let risen = self.add(held, Some(start), d);
            self.add(old_end, Some(new_end), -d);
            risen
        }
    }

    /// [`Profile::shift`] of a hold of `d` units to an earlier start when all its ends fall in
    /// one chunk, as they do for most moves in a compression (93 % on SDSC-BLUE): holds
    /// `[start, hold_to)` and gives back `[free_from, old_end)` (`start < hold_to ≤ free_from <
    /// old_end`), locating the first end with one search and the others by short scans, and
    /// updating the chunk in one go. Returns the largest value over `[free_from, old_end)`
    /// afterwards; `None`, with nothing changed, when the ends span chunks.
    fn shift_earlier_in_chunk(
        &mut self,
        start: Time,
        hold_to: Time,
        free_from: Time,
        old_end: Time,
        d: Amount,
    ) -> Option<Amount> {
        if self.chunks.is_empty() || start < self.start() {
            return None;
        }
        let (c, mut i) = self.step_at(start);
        if self.firsts.get(c + 1).is_some_and(|&next| next <= old_end) {
            return None;
        }
        let chunk = &mut self.chunks[c];
        // The breakpoint at `t`, inserted (with the value in effect there) if missing, found by
        // a scan from `from`, an index whose time is at or before `t`.
        let locate = |chunk: &mut Chunk, from: usize, t: Time| -> usize {
            let later = chunk.times[from + 1..]
                .iter()
                .position(|&x| x > t)
                .unwrap_or(chunk.times.len() - from - 1);
            chunk.breakpoint_at(from + later, t)
        };
        i = locate(chunk, i, start);
        let h = locate(chunk, i, hold_to);
        let n = locate(chunk, h, free_from);
        let o = locate(chunk, n, old_end);
        chunk.add(i..h, -d);
        let risen = chunk.add(n..o, d);
        // Breakpoints equal to the one before them are no steps: the later ends first, so that
        // the earlier indices stand. Only removing the first breakpoint of the chunk can empty
        // it (and `i` is checked last), so `c` stays this chunk until then.
        let middle = (n != h).then_some(h); // when the new hold ends where the old one began
        for k in [Some(o), Some(n), middle, Some(i)].into_iter().flatten() {
            self.merge_if_equal(c, k);
        }
        if self
            .chunks
            .get(c)
            .is_some_and(|chunk| chunk.times.len() > 2 * CHUNK)
        {
            self.split_chunk(c);
        }
        Some(risen)
    }

    /// Moves the start of the profile to `now` (≥ start), forgetting the past: the value in
    /// effect at `now` becomes the first step.
    pub fn advance(&mut self, now: Time) {
        if self.chunks.is_empty() || now <= self.start() {
            return;
        }
        // The step in effect at `now` becomes the first one by moving its time to `now`: no
        // breakpoint is inserted only to drop the ones before it (issue 10: inserting one was
        // half the cost of an advance).
        let (c, i) = self.step_at(now);
        self.chunks.drain(..c);
        self.firsts.drain(..c);
        let chunk = &mut self.chunks[0];
        chunk.times[i] = now;
        if i > 0 {
            chunk.drop_first(i);
        }
        self.firsts[0] = now;
    }

    /// The smallest free amount from the start on: non-negative when the committed work and
    /// reservations fit the machine everywhere (0 for an empty profile).
    pub fn min_free(&self) -> i64 {
        self.chunks
            .iter()
            .map(|c| c.min + c.pending)
            .min()
            .unwrap_or(0)
    }

    /// The largest free amount at any time in `[from, to)` (`from` clamped to the start;
    /// `i64::MIN` when the range is empty). Chunks wholly inside the range answer from their
    /// summary.
    pub fn max_free(&self, from: Time, to: Time) -> i64 {
        let from = from.max(self.start());
        if self.chunks.is_empty() || to <= from {
            return Amount::MIN;
        }
        let (first_chunk, first_index) = if from == self.start() {
            (0, 0)
        } else {
            self.step_at(from)
        };
        let mut best = Amount::MIN;
        for (c, chunk) in self.chunks.iter().enumerate().skip(first_chunk) {
            let from_index = if c == first_chunk { first_index } else { 0 };
            if chunk.times[from_index] >= to {
                break;
            }
            if from_index == 0 && chunk.times[chunk.times.len() - 1] < to {
                best = best.max(chunk.max + chunk.pending);
                continue;
            }
            for (&t, &v) in chunk.times[from_index..]
                .iter()
                .zip(&chunk.free[from_index..])
            {
                if t >= to {
                    return best;
                }
                best = best.max(v + chunk.pending);
            }
        }
        best
    }

    /// The least free amount over `[from, end)` for growing `end`s, read with
    /// [`LeastFree::until`]: one walk forward from `from` (≥ start) however many ends are asked.
    pub fn least_free_from(&self, from: Time) -> LeastFree<'_> {
        let (chunk, index) = if self.chunks.is_empty() || from <= self.start() {
            (0, 0)
        } else {
            self.step_at(from)
        };
        LeastFree {
            profile: self,
            chunk,
            index,
            least: Amount::MAX,
        }
    }

    /// The earliest time ≥ `from` at which `demand` fits for `duration` seconds.
    /// `None` if it never does (it exceeds the capacity left at the end of the profile).
    pub fn earliest_fit(&self, from: Time, duration: Time, demand: ResourceVec) -> Option<Time> {
        self.first_window(from, duration, Time::MAX, Time::MAX, units(demand))
            .map(|(t, _)| t)
    }

    /// [`Profile::earliest_fit`], then holds `demand` over the slot found: the same function
    /// and breakpoints as the two one after the other, but the hold starts from the step the
    /// search ended on rather than locating it again (issue 36: locating it was a sixth of a
    /// hold, and a conservative plan over a reordering queue places jobs at most calls).
    pub fn place(&mut self, from: Time, duration: Time, demand: ResourceVec) -> Option<Time> {
        let d = units(demand);
        let (start, at) = self.first_window(from, duration, Time::MAX, Time::MAX, d)?;
        // What `add` does nothing for: an empty slot or no units.
        if duration > 0 && d != 0 {
            self.add_located(start, at, Some(start + duration), -d);
        }
        Some(start)
    }

    /// Whether `demand` could start anywhere in `[from, before)` and fit until `before` or for
    /// `duration` seconds, whichever ends first. With a non-negative profile this is exactly
    /// whether a job holding `[before, before + duration)` could move earlier: the capacity it
    /// gives back covers the rest of any window that overlaps its own.
    pub fn fits_before(
        &self,
        from: Time,
        before: Time,
        duration: Time,
        demand: ResourceVec,
    ) -> bool {
        self.first_fit_before(from, before, duration, demand)
            .is_some()
    }

    /// The earliest start in `[from, before)` that [`Profile::fits_before`] asks about, if any.
    /// With a non-negative profile it is where a job holding `[before, before + duration)`
    /// starts once it gives its slot back: a window that fits until `before` fits the rest with
    /// the capacity the job gives back, and an earlier full window would fit until `before` too.
    #[inline]
    pub fn first_fit_before(
        &self,
        from: Time,
        before: Time,
        duration: Time,
        demand: ResourceVec,
    ) -> Option<Time> {
        self.fit_before(from, before, duration, units(demand))
    }

    /// [`Profile::first_fit_before`] for `need` allocation units (the hot path takes the
    /// amount, not a vector passed through memory).
    fn fit_before(&self, from: Time, before: Time, duration: Time, need: Amount) -> Option<Time> {
        let from = from.max(self.start());
        if self.chunks.is_empty() || from >= before {
            return None;
        }
        // A window that reaches `before` holds its last second, `before - 1`; any other window
        // is a full one that starts by `before - duration`. So when that second is too small,
        // only full windows starting by then are sought, and none when none can start by then
        // (issue 10: most jobs that cannot move are told so here, or by a shorter search).
        let (c, i) = self.step_at(before - 1);
        if need > self.chunks[c].value(i) {
            return self.full_fit(from, before.saturating_sub(duration), duration, need);
        }
        if duration <= 0 {
            return self
                .first_window(from, duration, before, before, need)
                .map(|(t, _)| t)
                .filter(|&t| t < before);
        }
        // That second fits, so the run of fitting steps that ends at `before` starts a window
        // that fits until `before`; found by walking back from it (issue 10: the walk forward
        // from `from` crossed every step before it). An earlier window cannot overlap the step
        // that ends the run, so it is a whole one that ends by that step's start.
        let Some((blocked_from, run_from)) = self.last_too_small(c, i, need) else {
            return Some(from);
        };
        if run_from <= from {
            return Some(from);
        }
        blocked_from
            .checked_sub(duration)
            .filter(|&last| last >= from)
            .and_then(|last| self.full_fit(from, last, duration, need))
            .or(Some(run_from))
    }

    /// The last step at or before chunk `c`, index `i` whose value is below `need`, as its
    /// start and the start of the step after it; `None` if every step up to there fits.
    fn last_too_small(&self, c: usize, i: usize, need: Amount) -> Option<(Time, Time)> {
        for chunk_index in (0..=c).rev() {
            let chunk = &self.chunks[chunk_index];
            let upto = if chunk_index == c {
                i
            } else {
                if chunk.all_fit(need) {
                    continue;
                }
                chunk.times.len() - 1
            };
            let raw_need = need - chunk.pending;
            if let Some(j) = chunk.free[..=upto].iter().rposition(|&v| v < raw_need) {
                let next = match chunk.times.get(j + 1) {
                    Some(&t) => t,
                    None => self.firsts[chunk_index + 1],
                };
                return Some((chunk.times[j], next));
            }
        }
        None
    }

    /// The earliest start in `[from, last]` of a whole window `[t, t + duration)` that fits
    /// `demand`, if any: what [`Profile::first_fit_before`] seeks when the second before
    /// `before = last + duration` is too small.
    pub fn first_full_fit(
        &self,
        from: Time,
        last: Time,
        duration: Time,
        demand: ResourceVec,
    ) -> Option<Time> {
        self.full_fit(from, last, duration, units(demand))
    }

    /// [`Profile::first_full_fit`] for `need` allocation units.
    fn full_fit(&self, from: Time, last: Time, duration: Time, need: Amount) -> Option<Time> {
        let from = from.max(self.start());
        if self.chunks.is_empty() || last < from {
            return None;
        }
        self.first_window(from, duration, Time::MAX, last + 1, need)
            .map(|(t, _)| t)
    }

    /// The earliest `t ≥ from` where `demand` fits over `[t, min(t + duration, clip))`, with the
    /// chunk and index of the step in effect at `t`, or `None` (also as soon as a candidate
    /// found past `from` reaches `limit`, past which nothing is asked).
    fn first_window(
        &self,
        from: Time,
        duration: Time,
        clip: Time,
        limit: Time,
        d: Amount,
    ) -> Option<(Time, (usize, usize))> {
        if self.chunks.is_empty() {
            return None;
        }
        let mut candidate = from.max(self.start());
        // Most searches start at the profile's start (the scheduler's `now`): its first step,
        // without a search.
        let (first_chunk, first_index) = if candidate == self.start() {
            (0, 0)
        } else {
            self.step_at(candidate)
        };
        // The step in effect at the candidate.
        let mut at = (first_chunk, first_index);
        // While `seeking`, the candidate is not yet a start that fits: look for a fitting step.
        let mut seeking = false;
        for (c, chunk) in self.chunks.iter().enumerate().skip(first_chunk) {
            let from_index = if c == first_chunk { first_index } else { 0 };
            if from_index == 0 {
                // At a chunk boundary its summary may settle the whole chunk.
                if seeking && chunk.none_fit(d) {
                    if chunk.times[0] >= limit {
                        return None;
                    }
                    continue;
                }
                let t = chunk.times[0];
                if !seeking && t > candidate && t >= clip.min(candidate + duration) {
                    return Some((candidate, at));
                }
                if !seeking && chunk.all_fit(d) {
                    continue;
                }
            }
            // A step fits when its value without the pending addition reaches `need`. Each
            // state scans in a loop of its own: the seeking one only reads values.
            let need = d - chunk.pending;
            let (times, free) = (&chunk.times[..], &chunk.free[..]);
            let mut i = from_index;
            while i < times.len() {
                if seeking {
                    let Some(k) = free[i..].iter().position(|&v| v >= need) else {
                        break;
                    };
                    i += k;
                    candidate = times[i];
                    at = (c, i);
                    if candidate >= limit {
                        return None;
                    }
                    seeking = false;
                    i += 1;
                } else {
                    let end = clip.min(candidate + duration);
                    while i < times.len() {
                        let t = times[i];
                        if t > candidate && t >= end {
                            return Some((candidate, at));
                        }
                        i += 1;
                        if free[i - 1] < need {
                            seeking = true;
                            break;
                        }
                    }
                }
            }
        }
        (!seeking).then_some((candidate, at))
    }

    /// Adds `delta` over `[from, to)` (to the end when `to` is `None`), keeping the breakpoints
    /// minimal. Returns the largest value over the range afterwards (`Amount::MIN` if empty).
    fn add(&mut self, from: Time, to: Option<Time>, delta: Amount) -> Amount {
        let from = from.max(self.start());
        if to.is_some_and(|to| to <= from) || self.chunks.is_empty() {
            return Amount::MIN;
        }
        if delta == 0 {
            return self.max_free(from, to.unwrap_or(Time::MAX));
        }
        let at = self.step_at(from);
        self.add_located(from, at, to, delta)
    }

    /// [`Profile::add`] over a non-empty range from `from` (≥ start), given `at`, the step in
    /// effect there, for a non-zero `delta`.
    fn add_located(
        &mut self,
        from: Time,
        at: (usize, usize),
        to: Option<Time>,
        delta: Amount,
    ) -> Amount {
        let (mut fc, mut fi) = self.split_located(from, at);
        let (tc, ti) = match to {
            Some(to) => {
                let chunks = self.chunks.len();
                let at = self.split_after(to, fc, fi);
                if self.chunks.len() != chunks {
                    // The chunk split may have carried `from` into its upper half.
                    (fc, fi) = self.step_at(from);
                }
                at
            }
            None => (
                self.chunks.len() - 1,
                self.chunks[self.chunks.len() - 1].times.len(),
            ),
        };
        let most = if fc == tc {
            self.chunks[fc].add(fi..ti, delta)
        } else {
            let len = self.chunks[fc].times.len();
            let mut most = self.chunks[fc].add(fi..len, delta);
            for chunk in &mut self.chunks[fc + 1..tc] {
                chunk.pending += delta;
                most = most.max(chunk.max + chunk.pending);
            }
            most.max(self.chunks[tc].add(0..ti, delta))
        };
        // A step equal to the one before it is no step (never the first). The later end first:
        // removing it leaves the earlier one where it is (its chunk keeps `from` if it is the
        // same, and only chunks after `from`'s can disappear).
        if to.is_some() {
            self.merge_if_equal(tc, ti);
        }
        self.merge_if_equal(fc, fi);
        most
    }

    /// Removes the breakpoint at chunk `c`, index `i` if its value equals its predecessor's.
    fn merge_if_equal(&mut self, c: usize, i: usize) {
        if c == 0 && i == 0 {
            return;
        }
        let before = if i > 0 {
            self.chunks[c].value(i - 1)
        } else {
            let p = &self.chunks[c - 1];
            p.value(p.times.len() - 1)
        };
        if before == self.chunks[c].value(i) {
            let chunk = &mut self.chunks[c];
            chunk.times.remove(i);
            chunk.free.remove(i);
            if chunk.times.is_empty() {
                self.chunks.remove(c);
                self.firsts.remove(c);
            } else {
                if i == 0 {
                    self.firsts[c] = chunk.times[0];
                    chunk.summarise();
                }
                // Otherwise the value removed equals the one before it in the same chunk, so
                // the chunk's minimum and maximum stand.
            }
        }
    }

    /// The chunk and index of the step in effect at `t` (t ≥ start).
    #[inline]
    fn step_at(&self, t: Time) -> (usize, usize) {
        let c = self.firsts.partition_point(|&x| x <= t).saturating_sub(1);
        let i = self.chunks[c]
            .times
            .partition_point(|&x| x <= t)
            .saturating_sub(1);
        (c, i)
    }

    /// [`Profile::step_at`] for a time at or after the breakpoint at chunk `c`, index `i`: the
    /// end of a range is usually a few breakpoints after its start, in the same chunk, where a
    /// scan from the start finds it without searching the whole profile.
    fn step_after(&self, t: Time, c: usize, i: usize) -> (usize, usize) {
        if self.firsts.get(c + 1).is_some_and(|&next| next <= t) {
            return self.step_at(t);
        }
        let times = &self.chunks[c].times;
        let later = times[i + 1..]
            .iter()
            .position(|&x| x > t)
            .unwrap_or(times.len() - i - 1);
        (c, i + later)
    }

    /// [`Profile::split_located`] for a time at or after the breakpoint at chunk `c`, index `i`.
    fn split_after(&mut self, t: Time, c: usize, i: usize) -> (usize, usize) {
        let at = self.step_after(t, c, i);
        self.split_located(t, at)
    }

    /// Splits chunk `c` (over twice [`CHUNK`] breakpoints) into two halves, the lower one of
    /// [`CHUNK`] when it holds one more than twice that.
    fn split_chunk(&mut self, c: usize) {
        let chunk = &mut self.chunks[c];
        let half = chunk.times.len() / 2;
        let mut upper = Chunk {
            pending: chunk.pending,
            ..Chunk::default()
        };
        upper.times.extend(chunk.times.drain(half..));
        upper.free.extend(chunk.free.drain(half..));
        chunk.summarise();
        upper.summarise();
        self.firsts.insert(c + 1, upper.times[0]);
        self.chunks.insert(c + 1, upper);
    }

    /// Ensures a breakpoint at `t` (≥ start) carrying the value in effect there, given `(c, i)`,
    /// the step in effect at `t`; returns its chunk and index.
    fn split_located(&mut self, t: Time, (c, i): (usize, usize)) -> (usize, usize) {
        let i = self.chunks[c].breakpoint_at(i, t);
        if self.chunks[c].times.len() > 2 * CHUNK {
            self.split_chunk(c);
            return if i >= CHUNK {
                (c + 1, i - CHUNK)
            } else {
                (c, i)
            };
        }
        (c, i)
    }
}

/// A walk forward over a profile from a time on, keeping the least free amount of the steps it
/// passed ([`Profile::least_free_from`]).
pub struct LeastFree<'a> {
    profile: &'a Profile,
    /// The next step to read.
    chunk: usize,
    index: usize,
    least: Amount,
}

impl LeastFree<'_> {
    /// The least free amount over `[from, end)` (`end` > `from`, and not less than an end asked
    /// before): the step in effect at `from` and every later one that begins before `end`. A
    /// chunk wholly before `end` answers from its summary.
    pub fn until(&mut self, end: Time) -> i64 {
        let Profile { chunks, firsts, .. } = self.profile;
        while let Some(chunk) = chunks.get(self.chunk) {
            if self.index == 0 && firsts.get(self.chunk + 1).is_some_and(|&t| t <= end) {
                self.least = self.least.min(chunk.min + chunk.pending);
                self.chunk += 1;
                continue;
            }
            // The step in effect at `from` begins at or before it, so before `end`.
            while let Some(&t) = chunk.times.get(self.index) {
                if t >= end {
                    return self.least;
                }
                self.least = self.least.min(chunk.value(self.index));
                self.index += 1;
            }
            self.chunk += 1;
            self.index = 0;
        }
        self.least
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn u(n: u64) -> ResourceVec {
        ResourceVec::units(n)
    }

    #[test]
    fn earliest_fit_waits_for_releases() {
        let mut p = Profile::default();
        p.reset(0, u(2));
        p.release_from(10, u(6)); // 8 free from 10
        p.release_from(20, u(2)); // 10 free from 20
        assert_eq!(p.earliest_fit(0, 5, u(2)), Some(0));
        assert_eq!(p.earliest_fit(0, 5, u(3)), Some(10));
        assert_eq!(p.earliest_fit(0, 5, u(10)), Some(20));
        assert_eq!(p.earliest_fit(0, 5, u(11)), None);
        assert_eq!(p.earliest_fit(12, 5, u(8)), Some(12));
    }

    #[test]
    fn a_reservation_blocks_only_its_interval() {
        let mut p = Profile::default();
        p.reset(0, u(10));
        p.reserve(5, 15, u(8));
        assert_eq!(p.free_at(4), 10);
        assert_eq!(p.free_at(5), 2);
        assert_eq!(p.free_at(15), 10);
        // A 3-wide job of 5 s fits before the reservation only if it ends by 5.
        assert_eq!(p.earliest_fit(0, 5, u(3)), Some(0));
        assert_eq!(p.earliest_fit(0, 6, u(3)), Some(15));
        assert_eq!(p.earliest_fit(1, 5, u(3)), Some(15));
        assert!(!p.fits_before(1, 15, 5, u(3)));
        assert!(p.fits_before(0, 15, 5, u(3)));
        p.unreserve(5, 15, u(8));
        assert_eq!(p.earliest_fit(1, 5, u(3)), Some(1));
        assert_eq!(
            p.len(),
            1,
            "giving back a reservation leaves no step behind"
        );
    }

    /// A hand-worked walk across chunk boundaries (two breakpoints per chunk in the tests):
    /// runs of fitting and too-small steps, a candidate that passes `limit` part-way, and one
    /// that runs off the profile's last step.
    #[test]
    fn the_walk_crosses_chunks_and_stops_at_its_limit() {
        let mut p = Profile::default();
        p.reset(0, u(1));
        // Free: 4 on [0,2), 1 on [2,3), 4 on [3,5), 1 on [5,6), 4 on [6,10), 1 from 10 on.
        p.unreserve(0, 2, u(3));
        p.unreserve(3, 5, u(3));
        p.unreserve(6, 10, u(3));
        assert!(p.chunks.len() >= 2, "several chunks: {p:?}");
        p.assert_layout();
        // Windows of 2 at width 3: [0,2) fits; of 3: only [6,9).
        assert_eq!(p.earliest_fit(0, 2, u(3)), Some(0));
        assert_eq!(p.earliest_fit(0, 3, u(3)), Some(6));
        assert_eq!(p.earliest_fit(1, 2, u(3)), Some(3));
        // No length needs the first second, as one of 1.
        assert_eq!(p.earliest_fit(2, 0, u(3)), Some(3));
        assert_eq!(p.earliest_fit(2, 0, u(3)), p.earliest_fit(2, 1, u(3)));
        // Never: too wide for the last step, which holds forever.
        assert_eq!(p.earliest_fit(0, 5, u(3)), None);
        assert_eq!(p.earliest_fit(7, 1, u(2)), Some(7));
        assert_eq!(p.earliest_fit(11, 1, u(2)), None);
        // Whole windows of 3 starting by 5: none (the candidate reaches 6 past the limit);
        // by 6: the one at 6.
        assert_eq!(p.first_full_fit(0, 5, 3, u(3)), None);
        assert_eq!(p.first_full_fit(0, 6, 3, u(3)), Some(6));
        // Clipped at `before`: a window that reaches 5 from 3 fits until then.
        assert_eq!(p.first_fit_before(1, 5, 3, u(3)), Some(3));
        assert_eq!(p.first_fit_before(4, 6, 3, u(3)), None);
    }

    /// A job that can move (the second before its slot fits) gets the run of fitting steps that
    /// ends at its slot, unless a whole window fits before the step that ends the run — here
    /// one that ends exactly where that step starts.
    #[test]
    fn a_window_before_the_run_that_reaches_the_slot_comes_first() {
        let mut p = Profile::default();
        p.reset(0, u(3));
        p.reserve(4, 6, u(2)); // 3 free on [0,4), 1 on [4,6), 3 from 6 on
        // Width 3 for 4 s before 10: [0,4) fits whole and ends where [4,6) starts.
        assert_eq!(p.first_fit_before(0, 10, 4, u(3)), Some(0));
        // From 1 no whole window ends by 4: the run from 6 to 10.
        assert_eq!(p.first_fit_before(1, 10, 4, u(3)), Some(6));
        // From 7, inside the run: where the search starts.
        assert_eq!(p.first_fit_before(7, 10, 4, u(3)), Some(7));
        // Width 2 fits everywhere but [4,6): a whole window of 4 from 0.
        assert_eq!(p.first_fit_before(0, 10, 4, u(2)), Some(0));
    }

    /// The profile as a plain sorted vector of breakpoints: the straightforward implementation
    /// the chunked one replaced, kept as the reference the property test compares against.
    #[derive(Clone, Debug, Default)]
    struct Reference {
        points: Vec<(Time, Amount)>,
    }

    impl Reference {
        fn reset(&mut self, now: Time, free: ResourceVec) {
            self.points = vec![(now, units(free))];
        }

        fn segment_of(&self, t: Time) -> usize {
            self.points.partition_point(|p| p.0 <= t).saturating_sub(1)
        }

        fn free_at(&self, t: Time) -> Amount {
            self.points[self.segment_of(t)].1
        }

        fn split_at(&mut self, t: Time) -> usize {
            let i = self.points.partition_point(|p| p.0 < t);
            if i < self.points.len() && self.points[i].0 == t {
                return i;
            }
            let value = self.points[i - 1].1;
            self.points.insert(i, (t, value));
            i
        }

        fn add(&mut self, from: Time, to: Option<Time>, delta: Amount) {
            let from = from.max(self.points[0].0);
            if to.is_some_and(|to| to <= from) {
                return;
            }
            let first = self.split_at(from);
            let last = match to {
                Some(to) => self.split_at(to),
                None => self.points.len(),
            };
            for point in &mut self.points[first..last] {
                point.1 += delta;
            }
        }

        fn advance(&mut self, now: Time) {
            if now > self.points[0].0 {
                let i = self.split_at(now);
                self.points.drain(..i);
            }
        }

        fn earliest_fit(&self, from: Time, duration: Time, demand: ResourceVec) -> Option<Time> {
            let d = units(demand);
            let from = from.max(self.points[0].0);
            let mut candidate = from;
            let mut i = self.segment_of(from);
            while i < self.points.len() {
                let (t, free) = self.points[i];
                if t >= candidate + duration && t > candidate {
                    return Some(candidate);
                }
                if d > free {
                    match self.points.get(i + 1) {
                        Some(&(next, _)) => candidate = next,
                        None => return None,
                    }
                }
                i += 1;
            }
            Some(candidate)
        }

        /// Number of steps once equal neighbours are merged.
        fn steps(&self) -> usize {
            1 + self.points.windows(2).filter(|w| w[0].1 != w[1].1).count()
        }
    }

    impl Profile {
        /// The layout's invariants: chunks that are non-empty and hold at most twice [`CHUNK`]
        /// breakpoints, times strictly increasing across them, `firsts` their first times, and
        /// each summary the exact minimum and maximum of its values.
        fn assert_layout(&self) {
            assert_eq!(self.firsts.len(), self.chunks.len());
            let mut last = Time::MIN;
            for (chunk, &first) in self.chunks.iter().zip(&self.firsts) {
                assert!(!chunk.times.is_empty() && chunk.times.len() <= 2 * CHUNK);
                assert_eq!(chunk.times.len(), chunk.free.len());
                assert_eq!(chunk.times[0], first);
                for &t in &chunk.times {
                    assert!(t > last, "breakpoints out of order: {self:?}");
                    last = t;
                }
                assert_eq!(chunk.min, *chunk.free.iter().min().unwrap());
                assert_eq!(chunk.max, *chunk.free.iter().max().unwrap());
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Release(Time, u64),
        Reserve(Time, Time, u64),
        Unreserve(Time, Time, u64),
        /// Hold `[a, a + d)` then move it to start at `b`.
        Shift(Time, Time, Time, u64),
        /// Place `n` units for `d` seconds from `t`: the earliest fit, held.
        Place(Time, Time, u64),
        Advance(Time),
    }

    fn arb_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0i64..120, 1u64..6).prop_map(|(t, n)| Op::Release(t, n)),
            (0i64..120, 1i64..40, 1u64..6).prop_map(|(t, d, n)| Op::Reserve(t, t + d, n)),
            (0i64..120, 1i64..40, 1u64..6).prop_map(|(t, d, n)| Op::Unreserve(t, t + d, n)),
            (0i64..120, 0i64..120, 1i64..40, 1u64..6)
                .prop_map(|(a, b, d, n)| Op::Shift(a, b, d, n)),
            (0i64..120, 0i64..40, 0u64..8).prop_map(|(t, d, n)| Op::Place(t, d, n)),
            (0i64..60).prop_map(Op::Advance),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        /// Same step function, same earliest fits, and exactly its steps as breakpoints, after
        /// any sequence of operations (negative capacity included).
        #[test]
        fn matches_the_vector_profile(
            free in 0u64..8,
            ops in prop::collection::vec(arb_op(), 0..40),
            queries in prop::collection::vec((0i64..150, 0i64..50, 0u64..12), 1..20),
        ) {
            let mut p = Profile::default();
            let mut r = Reference::default();
            p.reset(0, u(free));
            r.reset(0, u(free));
            for op in ops {
                match op {
                    Op::Release(t, n) => {
                        p.release_from(t, u(n));
                        r.add(t, None, units(u(n)));
                    }
                    Op::Reserve(a, b, n) => {
                        p.reserve(a, b, u(n));
                        r.add(a, Some(b), -units(u(n)));
                    }
                    Op::Unreserve(a, b, n) => {
                        p.unreserve(a, b, u(n));
                        r.add(a, Some(b), units(u(n)));
                    }
                    Op::Shift(a, b, d, n) => {
                        // Both ends at or after the start, as in a compression.
                        let (a, b) = (a.max(p.start()), b.max(p.start()));
                        p.reserve(a, a + d, u(n));
                        p.shift(a, b, d, u(n));
                        r.add(b, Some(b + d), -units(u(n)));
                    }
                    Op::Place(t, d, n) => {
                        // The reference's earliest fit, then its hold there.
                        let fit = r.earliest_fit(t, d, u(n));
                        prop_assert_eq!(p.place(t, d, u(n)), fit);
                        if let Some(s) = fit {
                            r.add(s, Some(s + d), -units(u(n)));
                        }
                    }
                    Op::Advance(t) => {
                        let t = t.max(p.start());
                        p.advance(t);
                        r.advance(t);
                    }
                }
                p.assert_layout();
                prop_assert_eq!(p.start(), r.points[0].0);
                prop_assert_eq!(p.len(), r.steps());
                let min = r.points.iter().map(|p| p.1).min().unwrap_or(0);
                prop_assert_eq!(p.min_free(), min);
            }
            for (t, d, n) in queries {
                prop_assert_eq!(p.free_at(t.max(p.start())), r.free_at(t.max(p.start())));
                prop_assert_eq!(p.earliest_fit(t, d, u(n)), r.earliest_fit(t, d, u(n)));
                // fits_before against a brute force over every start in [from, before).
                let before = t + d;
                let brute = (t.max(p.start())..before).any(|c| {
                    (c..before.min(c + d.max(1))).all(|x| n as i64 <= r.free_at(x))
                });
                prop_assert_eq!(p.fits_before(t, before, d, u(n)), brute, "from {} before {} d {} n {}", t, before, d, n);
                // The first such start, against the same brute force.
                let first = (t.max(p.start())..before).find(|&c| {
                    (c..before.min(c + d.max(1))).all(|x| n as i64 <= r.free_at(x))
                });
                prop_assert_eq!(p.first_fit_before(t, before, d, u(n)), first);
                // Whole windows starting by `before`, against the same brute force.
                let full = (t.max(p.start())..=before).find(|&c| {
                    (c..c + d.max(1)).all(|x| n as i64 <= r.free_at(x))
                });
                prop_assert_eq!(p.first_full_fit(t, before, d, u(n)), full);
                // The largest free amount over [t, before), against every second of it.
                let most = (t.max(p.start())..before).map(|x| r.free_at(x)).max();
                prop_assert_eq!(p.max_free(t, before), most.unwrap_or(Amount::MIN));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        /// A profile built in one pass is the one built change by change: the same step
        /// function with exactly its steps (releases and holds before, at and after the start,
        /// coinciding times, changes that cancel), in a sound layout that later operations keep.
        #[test]
        fn a_rebuild_is_the_profile_built_change_by_change(
            now in 0i64..20,
            free in 0u64..8,
            releases in prop::collection::vec((0i64..60, 0u64..5), 0..30),
            holds in prop::collection::vec((0i64..60, 0i64..30, 0u64..5), 0..30),
            after in prop::collection::vec(arb_op(), 0..10),
        ) {
            let mut p = Profile::default();
            // A previous state, which the rebuild must leave nothing of.
            p.reset(0, u(3));
            p.reserve(5, 50, u(2));
            p.rebuild(
                now,
                u(free),
                releases.iter().map(|&(t, n)| (t, u(n))),
                holds.iter().map(|&(t, d, n)| (t, t + d, u(n))),
            );
            let mut r = Reference::default();
            r.reset(now, u(free));
            for &(t, n) in &releases {
                r.add(t, None, units(u(n)));
            }
            for &(t, d, n) in &holds {
                r.add(t, Some(t + d), -units(u(n)));
            }
            p.assert_layout();
            prop_assert_eq!(p.start(), now);
            prop_assert_eq!(p.len(), r.steps());
            for t in now..100 {
                prop_assert_eq!(p.free_at(t), r.free_at(t), "at {}", t);
            }
            // The layout serves later updates as one built by them.
            for op in after {
                match op {
                    Op::Reserve(a, b, n) => {
                        p.reserve(a, b, u(n));
                        r.add(a, Some(b), -units(u(n)));
                    }
                    Op::Release(t, n) => {
                        p.release_from(t, u(n));
                        r.add(t, None, units(u(n)));
                    }
                    _ => {}
                }
                p.assert_layout();
                prop_assert_eq!(p.len(), r.steps());
            }
            for t in now..100 {
                prop_assert_eq!(p.free_at(t), r.free_at(t), "at {}", t);
            }
        }

        /// Moves among many holds on a short horizon, so that their ends keep landing on
        /// existing breakpoints, on each other (a slot moved to end where the old one starts)
        /// and on chunk boundaries (two breakpoints per chunk here): the same step function,
        /// exactly its steps, and a sound layout after every move.
        #[test]
        fn shifts_match_the_vector_profile(
            free in 0u64..6,
            holds in prop::collection::vec((0i64..24, 1i64..10, 1u64..4), 1..12),
            moves in prop::collection::vec((0usize..12, 0i64..24), 1..30),
        ) {
            let mut p = Profile::default();
            let mut r = Reference::default();
            p.reset(0, u(free));
            r.reset(0, u(free));
            let mut slots: Vec<(Time, Time, u64)> = Vec::new();
            for (t, d, n) in holds {
                p.reserve(t, t + d, u(n));
                r.add(t, Some(t + d), -units(u(n)));
                slots.push((t, d, n));
            }
            for (k, to) in moves {
                let k = k % slots.len();
                let (held, d, n) = slots[k];
                let risen = p.shift(held, to, d, u(n));
                r.add(held, Some(held + d), units(u(n)));
                r.add(to, Some(to + d), -units(u(n)));
                slots[k].0 = to;
                // The largest free amount over the seconds of the old hold the new one leaves.
                let left = (held..held + d)
                    .filter(|&x| held != to && !(to..to + d).contains(&x))
                    .map(|x| r.free_at(x))
                    .max();
                prop_assert_eq!(risen, left.unwrap_or(Amount::MIN), "{} -> {} for {}", held, to, d);
                p.assert_layout();
                prop_assert_eq!(p.len(), r.steps());
                for t in 0..40 {
                    prop_assert_eq!(p.free_at(t), r.free_at(t), "at {}", t);
                }
            }
        }
    }
}
