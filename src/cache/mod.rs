//! The on-disk state under `results/.schedlab/`: content-addressed node entries, the lock, the
//! input-digest (stat) cache and the last key material of every node (for rerun reasons).
//!
//! Layout (docs/cache.md):
//! ```text
//! results/.schedlab/lock                     advisory lock (see lock.rs)
//! results/.schedlab/entries/ab/<key>/        one finished node: its files + entry.json last
//! results/.schedlab/tmp/                     staging of entries being written
//! results/.schedlab/quarantine/<key>.<n>/    damaged entries set aside (+ reason.txt)
//! results/.schedlab/digests.json             path → (size, mtime, inode, dev, ctime, blake3)
//! results/.schedlab/keys/<experiment>.jsonl.gz  node label → key material of its last run
//! ```
//!
//! Published result files (`publish.rs`) are copies of entry files, checked against their
//! entry on every run.

pub mod bundle;
mod digests;
mod entry;
mod lock;
mod materials;
pub mod publish;

pub use digests::{Digest, DigestCache, write_atomic};
pub use entry::{EntryStore, EntryWriter, FileDigest, Opened};
pub use lock::ResultsLock;
pub use materials::Materials;

use std::path::{Path, PathBuf};

/// The state directory inside a results directory.
pub fn state_dir(results: &Path) -> PathBuf {
    results.join(".schedlab")
}

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("failed to access {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is locked by another schedlab process")]
    Locked { path: PathBuf },
    #[error("cache entry {path} is corrupt: {why}")]
    Corrupt { path: PathBuf, why: String },
}

impl CacheError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        CacheError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
