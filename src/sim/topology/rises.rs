//! Where a node's free capacity last rose: the intervals of its few latest rises, each stamped
//! with the [`super::Timeline`]'s clock, so that a search repeated after a failed one can look
//! only at the times capacity came back ([`super::Timeline::earliest_before_since`]).
//!
//! A rise is a hold given back (`[from, to)`), a running job's release (`[at, ∞)`) or a reset
//! (all time). Only the latest [`KEPT`] rises are kept: when a rise after the asked clock may
//! have been forgotten, the answer is all time, which is always safe (it only widens the
//! search).

use crate::sim::job::Time;

/// How many of a node's latest rises are remembered.
const KEPT: usize = 4;

/// A node's latest rises, oldest overwritten first.
#[derive(Clone, Copy, Debug)]
pub struct Rises {
    /// `(clock, from, to)`; a clock of 0 is an empty slot (the clock starts at 1).
    entries: [(u64, Time, Time); KEPT],
    next: u8,
}

impl Default for Rises {
    fn default() -> Self {
        Rises {
            entries: [(0, Time::MAX, Time::MIN); KEPT],
            next: 0,
        }
    }
}

impl Rises {
    /// Records a rise over `[from, to)` at `clock` (greater than every earlier one).
    #[inline]
    pub fn note(&mut self, clock: u64, from: Time, to: Time) {
        self.entries[self.next as usize] = (clock, from, to);
        self.next = ((self.next as usize + 1) % KEPT) as u8;
    }

    /// An interval `[lo, hi)` that covers every rise stamped after `since`; empty (`lo ≥ hi`)
    /// if there was none. When one may have been overwritten, all time.
    #[inline]
    pub fn since(&self, since: u64) -> (Time, Time) {
        let (mut lo, mut hi) = (Time::MAX, Time::MIN);
        // Newest first: an entry at or before `since` means every older one (kept or
        // overwritten) is too.
        for k in 1..=KEPT {
            let (clock, from, to) = self.entries[(self.next as usize + KEPT - k) % KEPT];
            if clock <= since {
                return (lo, hi);
            }
            lo = lo.min(from);
            hi = hi.max(to);
        }
        (Time::MIN, Time::MAX)
    }
}

/// A class's nodes in the order they rose: a log of `(clock, node)`, so that the nodes that
/// rose after a clock are found without visiting the others. Entries superseded by a later
/// rise of the same node are dropped when the log has doubled since it was last compacted,
/// which keeps it within twice the class's size.
#[derive(Clone, Debug, Default)]
pub struct RiseOrder {
    log: Vec<(u64, u32)>,
    /// The length at which the log is next compacted.
    limit: usize,
}

impl RiseOrder {
    pub fn clear(&mut self) {
        self.log.clear();
        self.limit = 0;
    }

    /// Records that `node` rose at `clock` (greater than every earlier one); `latest` is every
    /// node's last rise, `node`'s already this one.
    #[inline]
    pub fn note(&mut self, clock: u64, node: u32, latest: &[u64]) {
        if self.log.len() >= self.limit.max(64) {
            self.log.retain(|&(c, n)| latest[n as usize] == c);
            self.limit = 2 * self.log.len();
        }
        self.log.push((clock, node));
    }

    /// The nodes that rose after `since`, the latest first, each once.
    #[inline]
    pub fn since<'a>(&'a self, since: u64, latest: &'a [u64]) -> impl Iterator<Item = u32> + 'a {
        self.log
            .iter()
            .rev()
            .take_while(move |e| e.0 > since)
            .filter(move |e| latest[e.1 as usize] == e.0)
            .map(|e| e.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_the_rises_after_a_clock_or_all_time_when_one_was_forgotten() {
        let mut r = Rises::default();
        assert!(matches!(r.since(1), (lo, hi) if lo >= hi));
        r.note(3, 10, 20);
        r.note(5, 40, 50);
        assert_eq!(r.since(2), (10, 50));
        assert_eq!(r.since(3), (40, 50));
        assert!(matches!(r.since(5), (lo, hi) if lo >= hi));
        r.note(6, 0, Time::MAX);
        r.note(8, 30, 35);
        // Four kept (3, 5, 6, 8); a fifth overwrites the rise at clock 3.
        r.note(9, 60, 70);
        assert_eq!(r.since(5), (0, Time::MAX));
        assert_eq!(r.since(6), (30, 70));
        // The rise at 3 was overwritten: whether anything rose after 4 besides the kept ones
        // is unknown, so all time.
        assert_eq!(r.since(4), (Time::MIN, Time::MAX));
    }

    #[test]
    fn the_rise_order_lists_each_node_that_rose_after_a_clock_once() {
        let mut latest = vec![0u64; 3];
        let mut order = RiseOrder::default();
        for (clock, node) in (1..).zip([0u32, 1, 0, 2, 0].into_iter().cycle().take(200)) {
            latest[node as usize] = clock;
            order.note(clock, node, &latest);
        }
        // The last five rises: 0 at 196, 1 at 197, 0 at 198, 2 at 199, 0 at 200.
        assert_eq!(order.since(196, &latest).collect::<Vec<_>>(), [0, 2, 1]);
        assert_eq!(order.since(199, &latest).collect::<Vec<_>>(), [0]);
        assert_eq!(order.since(200, &latest).count(), 0);
        assert!(order.log.len() <= 64 + 1);
    }
}
