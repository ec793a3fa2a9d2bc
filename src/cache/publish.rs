//! Publishing an entry's files where users read them (`results/<experiment>/`): as independent
//! copies — a reflink where the file system shares blocks between files (Btrfs, XFS), else a
//! plain copy — never hard links, so editing a published file in place cannot change the cache.
//!
//! A stamp file (`.key`: the entry's key on its first line, then one `name bytes mtime inode`
//! line per file) records what was published. A publish whose stamp still matches every file is
//! skipped with one `stat` per file; a file that changed, vanished or was replaced is compared
//! with the entry's recorded hash and, if it differs, restored from the cache — so the cache
//! detects and recovers from anything done to published files.

use std::fs::{self, File};
use std::io;
use std::path::Path;

use super::entry::{EntryStore, FileDigest};
use super::{CacheError, write_atomic};

const STAMP: &str = ".key";

/// What [`publish`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Published {
    /// Files written because a new entry was published.
    pub written: Vec<String>,
    /// Published files that had been changed or removed since, restored from the entry.
    pub restored: Vec<String>,
}

/// How a published file looked when it was written: enough to notice any change cheaply.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stat {
    bytes: u64,
    mtime_ns: i128,
    inode: u64,
}

impl Stat {
    fn of(path: &Path) -> Option<Stat> {
        let meta = fs::symlink_metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        Some(Stat {
            bytes: meta.len(),
            mtime_ns,
            inode: inode(&meta),
        })
    }
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> u64 {
    0
}

/// The stamp of `dir`: the key published there and each file's stat when written.
fn read_stamp(dir: &Path) -> Option<(String, Vec<(String, Stat)>)> {
    let text = fs::read_to_string(dir.join(STAMP)).ok()?;
    let mut lines = text.lines();
    let key = lines.next()?.trim().to_string();
    let stats = lines
        .filter_map(|l| {
            let mut f = l.split(' ');
            let name = f.next()?.to_string();
            let stat = Stat {
                bytes: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                inode: f.next()?.parse().ok()?,
            };
            Some((name, stat))
        })
        .collect();
    Some((key, stats))
}

fn write_stamp(dir: &Path, key: &str, files: &[&str]) -> Result<(), CacheError> {
    let mut text = format!("{key}\n");
    for name in files {
        if let Some(s) = Stat::of(&dir.join(name)) {
            text.push_str(&format!("{name} {} {} {}\n", s.bytes, s.mtime_ns, s.inode));
        }
    }
    write_atomic(&dir.join(STAMP), text.as_bytes())
}

/// True when `dir` holds `files` exactly as published from entry `key` (by their stamps: one
/// `stat` each, no reading).
pub fn is_current(dir: &Path, key: &str, files: &[&str]) -> bool {
    let Some((stamped, stats)) = read_stamp(dir) else {
        return false;
    };
    stamped == key
        && files.iter().all(|name| {
            stats
                .iter()
                .find(|(n, _)| n == name)
                .is_some_and(|(_, s)| Stat::of(&dir.join(name)).as_ref() == Some(s))
        })
}

/// Puts `files` of entry `key` in place in `dir`, each atomically, as copies; a file already
/// equal to the entry's is left alone. The entry should have been verified by the caller
/// ([`EntryStore::open_or_quarantine`]).
pub fn publish(
    entries: &EntryStore,
    key: &str,
    files: &[&str],
    dir: &Path,
) -> Result<Published, CacheError> {
    let mut done = Published::default();
    if is_current(dir, key, files) {
        return Ok(done);
    }
    let same_key = read_stamp(dir).is_some_and(|(k, _)| k == key);
    let source = entries.dir(key);
    let recorded = entries.recorded_files(key)?;
    fs::create_dir_all(dir).map_err(|e| CacheError::io(dir, e))?;
    for &name in files {
        let target = dir.join(name);
        let want = recorded.get(name).ok_or_else(|| CacheError::Corrupt {
            path: source.clone(),
            why: format!("{name} is not in the entry"),
        })?;
        if matches_digest(&target, want) {
            continue;
        }
        copy_file(&source.join(name), &target)?;
        if same_key {
            done.restored.push(name.to_string());
        } else {
            done.written.push(name.to_string());
        }
    }
    write_stamp(dir, key, files)?;
    Ok(done)
}

/// True when `path` is a regular file of the recorded size and hash.
fn matches_digest(path: &Path, want: &FileDigest) -> bool {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.len() != want.bytes {
        return false;
    }
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(file).is_ok() && hasher.finalize().to_hex().as_str() == want.blake3
}

/// How a published file was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyMethod {
    /// The file system shares the blocks (copy on write): no bytes copied.
    Reflink,
    /// The bytes were copied.
    Copy,
}

/// Copies `source` to `target` through a temporary file in the target's folder (mode from the
/// umask) and a rename, so `target` is never half-written. Tries a reflink first.
pub fn copy_file(source: &Path, target: &Path) -> Result<CopyMethod, CacheError> {
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut from = File::open(source).map_err(|e| CacheError::io(source, e))?;
    let tmp = crate::store::readable_temp()
        .tempfile_in(dir)
        .map_err(|e| CacheError::io(dir, e))?;
    let method = if reflink(&from, tmp.as_file()) {
        CopyMethod::Reflink
    } else {
        io::copy(&mut from, &mut tmp.as_file()).map_err(|e| CacheError::io(target, e))?;
        CopyMethod::Copy
    };
    tmp.persist(target)
        .map_err(|e| CacheError::io(target, e.error))?;
    Ok(method)
}

/// Asks the file system to share `from`'s blocks with the empty file `to` (Linux `FICLONE`).
#[cfg(target_os = "linux")]
fn reflink(from: &File, to: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: both descriptors are open for the duration of the call; FICLONE reads an int.
    unsafe { libc::ioctl(to.as_raw_fd(), libc::FICLONE, from.as_raw_fd()) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn reflink(_: &File, _: &File) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_with(store: &EntryStore, key: &str, files: &[(&str, &str)]) {
        let w = store.begin(key).unwrap();
        for (name, text) in files {
            fs::write(w.path(name), text).unwrap();
        }
        w.commit().unwrap();
    }

    #[test]
    fn published_files_are_copies_and_changes_to_them_are_undone() {
        let dir = tempfile::tempdir().unwrap();
        let store = EntryStore::new(&dir.path().join(".schedlab"));
        entry_with(&store, "k1", &[("a.txt", "alpha"), ("b.txt", "beta")]);
        let out = dir.path().join("exp");
        let files = ["a.txt", "b.txt"];
        let first = publish(&store, "k1", &files, &out).unwrap();
        assert_eq!(first.written, vec!["a.txt", "b.txt"]);
        assert!(is_current(&out, "k1", &files));
        // An in-place edit of a published file leaves the entry intact...
        fs::write(out.join("a.txt"), "edited").unwrap();
        assert!(store.open("k1").is_ok(), "the cache is not a hard link");
        assert!(!is_current(&out, "k1", &files));
        // ...and the next publish restores it; a deleted file comes back too.
        fs::remove_file(out.join("b.txt")).unwrap();
        let again = publish(&store, "k1", &files, &out).unwrap();
        assert_eq!(again.restored, vec!["a.txt", "b.txt"]);
        assert_eq!(fs::read_to_string(out.join("a.txt")).unwrap(), "alpha");
        assert_eq!(fs::read_to_string(out.join("b.txt")).unwrap(), "beta");
        assert_eq!(
            publish(&store, "k1", &files, &out).unwrap(),
            Published::default()
        );
    }
}
