//! Stopping a run cleanly on request (Ctrl-C, SIGTERM): no node starts after the request, no
//! entry is committed after it, and whoever stops the run can wait until no write to the cache
//! or the results is in flight — then remove the staging area and exit, leaving only complete
//! entries behind. The signal handling itself lives at the edge (`cli/run.rs`): one handler for
//! every executor — the local one stops at once, the Slurm one cancels what it submitted.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Shared between the run and whoever may stop it.
#[derive(Debug, Default)]
pub struct Interrupt {
    requested: AtomicBool,
    /// The signal that asked, when one did (0: none).
    signal: AtomicI32,
    /// Held (shared) around every write into the cache or the results; taken exclusively by
    /// [`Interrupt::quiesce`].
    writes: RwLock<()>,
    done: AtomicUsize,
    total: AtomicUsize,
    holds_lock: AtomicBool,
}

impl Interrupt {
    /// Asks the run to stop: nodes not yet started will not start.
    pub fn request(&self) {
        self.requested.store(true, Ordering::SeqCst);
    }

    /// Asks the run to stop because of `signal` (its number, as `kill -l` lists them).
    pub fn request_for_signal(&self, signal: i32) {
        self.signal.store(signal, Ordering::SeqCst);
        self.request();
    }

    /// The signal that asked the run to stop, if one did.
    pub fn signal(&self) -> Option<i32> {
        Some(self.signal.load(Ordering::SeqCst)).filter(|&s| s != 0)
    }

    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// Held while writing a cache entry or a published file. Returns `None` once a stop was
    /// requested: the write must not begin.
    pub fn write_guard(&self) -> Option<RwLockReadGuard<'_, ()>> {
        let guard = self.writes.read().unwrap_or_else(|e| e.into_inner());
        (!self.requested()).then_some(guard)
    }

    /// Requests a stop and waits until no write is in flight; while the returned guard lives, no
    /// write can begin.
    pub fn quiesce(&self) -> RwLockWriteGuard<'_, ()> {
        self.request();
        self.writes.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that the run holds the results lock (so its staging area is its own).
    pub fn set_holds_lock(&self) {
        self.holds_lock.store(true, Ordering::SeqCst);
    }

    pub fn holds_lock(&self) -> bool {
        self.holds_lock.load(Ordering::SeqCst)
    }

    /// Progress as the run reports it: `done` of `total` nodes finished (ran or cached).
    pub fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::SeqCst);
    }

    pub fn node_done(&self) {
        self.done.fetch_add(1, Ordering::SeqCst);
    }

    /// (nodes done, nodes in the plan).
    pub fn progress(&self) -> (usize, usize) {
        (
            self.done.load(Ordering::SeqCst),
            self.total.load(Ordering::SeqCst),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_write_begins_after_a_request() {
        let i = Interrupt::default();
        assert!(i.write_guard().is_some());
        let quiet = i.quiesce();
        assert!(i.requested());
        drop(quiet);
        assert!(
            i.write_guard().is_none(),
            "a stopped run writes nothing more"
        );
    }
}
