//! The results-directory lock: one `schedlab run` (or `gc`) at a time writes to a `results/`.
//!
//! An OS advisory lock (`flock` on Unix, `LockFileEx` on Windows, through `std::fs::File::lock`)
//! on `results/.schedlab/lock`. The OS releases it when its holder exits for any reason,
//! `kill -9` included, so a stale lock never needs a manual unlock.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::CacheError;

/// Held for as long as the value lives.
#[derive(Debug)]
pub struct ResultsLock {
    _file: File,
    path: PathBuf,
}

impl ResultsLock {
    /// Takes the lock, waiting for another holder when `wait` is true, else failing at once.
    pub fn acquire(state_dir: &Path, wait: bool) -> Result<ResultsLock, CacheError> {
        fs::create_dir_all(state_dir).map_err(|e| CacheError::io(state_dir, e))?;
        let path = state_dir.join("lock");
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| CacheError::io(&path, e))?;
        if wait {
            file.lock().map_err(|e| CacheError::io(&path, e))?;
        } else {
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(CacheError::Locked { path });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(CacheError::io(&path, e)),
            }
        }
        // Who holds it, for humans looking at the file; not used for locking.
        let _ = file.set_len(0);
        let _ = writeln!(file, "pid {}", std::process::id());
        Ok(ResultsLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_drops() {
        let dir = tempfile::tempdir().unwrap();
        let first = ResultsLock::acquire(dir.path(), false).unwrap();
        assert!(matches!(
            ResultsLock::acquire(dir.path(), false),
            Err(CacheError::Locked { .. })
        ));
        drop(first);
        ResultsLock::acquire(dir.path(), false).unwrap();
    }
}
