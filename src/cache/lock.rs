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
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    // Say who holds it and since when, then wait (a silent wait looked hung).
                    let holder = fs::read_to_string(&path).unwrap_or_default();
                    eprintln!(
                        "waiting for the results lock {}: {}",
                        path.display(),
                        describe_holder(&holder, unix_now())
                    );
                    file.lock().map_err(|e| CacheError::io(&path, e))?;
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(CacheError::io(&path, e)),
            }
        } else {
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(CacheError::Locked { path });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(CacheError::io(&path, e)),
            }
        }
        // Who holds it and since when, for the message of a process that waits and for humans
        // looking at the file; not used for locking.
        let _ = file.set_len(0);
        let command: Vec<String> = std::env::args().skip(1).take(2).collect();
        let _ = writeln!(
            file,
            "pid {}\nsince {}\ncommand schedlab {}",
            std::process::id(),
            unix_now(),
            command.join(" ")
        );
        Ok(ResultsLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// "held by pid 123 (schedlab run) since 35 s ago (Unix time 1764358805)", from the lock
/// file's text; what it does not say is left out.
fn describe_holder(text: &str, now: u64) -> String {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
    };
    let mut out = match field("pid ") {
        Some(pid) => format!("held by pid {pid}"),
        None => "held by another schedlab process".to_string(),
    };
    if let Some(command) = field("command ") {
        out.push_str(&format!(" ({command})"));
    }
    if let Some(since) = field("since ").and_then(|s| s.parse::<u64>().ok()) {
        out.push_str(&format!(
            " since {} s ago (Unix time {since})",
            now.saturating_sub(since)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_described_with_its_start() {
        let text = "pid 42\nsince 1764358805\ncommand schedlab run\n";
        assert_eq!(
            describe_holder(text, 1764358840),
            "held by pid 42 (schedlab run) since 35 s ago (Unix time 1764358805)"
        );
        assert_eq!(describe_holder("pid 7\n", 0), "held by pid 7");
    }

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
