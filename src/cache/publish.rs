//! Publishing an entry's files where users read them (`results/<experiment>/`): as independent
//! copies — a reflink where the file system shares blocks between files (Btrfs, XFS), else a
//! plain copy — never hard links, so editing a published file in place cannot change the cache.
//!
//! A stamp file (`.key`: the entry's key on its first line, then one `name bytes mtime inode`
//! line per file) records what was published. A publish whose stamp still matches every file is
//! skipped with one `stat` per file; a file that changed, vanished or was replaced is compared
//! with the entry's recorded hash and, if it differs, restored from the cache — so the cache
//! detects and recovers from anything done to published files.
//!
//! A result set is published whole: the files are put together in a new folder beside it
//! (`results/.tmp-*`, with the stamp written last), which then takes the place of
//! `results/<experiment>/` in one rename (Linux `RENAME_EXCHANGE`, else two renames with a
//! moment where the folder is absent — never one where files of two versions sit side by
//! side). What an interrupted publish left (`results/.tmp-*`, `results/<experiment>/.tmp-*`) is
//! removed by the next run and by `gc` ([`sweep`]). `results/<experiment>` as a symbolic link
//! is refused: results never land outside `results/`.

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

/// Puts `files` of entry `key` in place in `dir` as copies, the set as a whole (module
/// documentation); nothing is written when `dir` already holds them as published. The entry
/// should have been verified by the caller ([`EntryStore::open_or_quarantine`]).
pub fn publish(
    entries: &EntryStore,
    key: &str,
    files: &[&str],
    dir: &Path,
) -> Result<Published, CacheError> {
    let mut done = Published::default();
    refuse_symlink(dir)?;
    if is_current(dir, key, files) {
        return Ok(done);
    }
    let same_key = read_stamp(dir).is_some_and(|(k, _)| k == key);
    let source = entries.dir(key);
    let recorded = entries.recorded_files(key)?;
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| CacheError::io(parent, e))?;
    let staging = Staging::create(parent)?;
    let new = staging.0.as_path();
    for &name in files {
        let want = recorded.get(name).ok_or_else(|| CacheError::Corrupt {
            path: source.clone(),
            why: format!("{name} is not in the entry"),
        })?;
        if !matches_digest(&dir.join(name), want) {
            if same_key {
                done.restored.push(name.to_string());
            } else {
                done.written.push(name.to_string());
            }
        }
        copy_file(&source.join(name), &new.join(name))?;
    }
    // Files of the user's beside the results stay: linked into the new set before it replaces
    // the old one (a crash in between leaves them where they were).
    let mut folders = Vec::new();
    for item in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = item.file_name();
        let text = name.to_string_lossy();
        if text == STAMP || text.starts_with(".tmp-") || files.contains(&text.as_ref()) {
            continue;
        }
        match item.file_type() {
            Ok(t) if t.is_dir() => folders.push(name),
            _ => fs::hard_link(item.path(), new.join(&name))
                .map_err(|e| CacheError::io(&item.path(), e))?,
        }
    }
    write_stamp(new, key, files)?;
    let old = replace_dir(new, dir)?;
    staging.keep();
    if let Some(old) = old {
        for name in folders {
            let _ = fs::rename(old.join(&name), dir.join(&name));
        }
        fs::remove_dir_all(&old).map_err(|e| CacheError::io(&old, e))?;
    }
    Ok(done)
}

/// A new folder for a result set being put together, removed if the publish stops early.
struct Staging(std::path::PathBuf);

impl Staging {
    fn create(parent: &Path) -> Result<Staging, CacheError> {
        let path = unique_name(parent);
        // Mode 0777 less the umask, as the folder it becomes was created before.
        fs::create_dir(&path).map_err(|e| CacheError::io(&path, e))?;
        Ok(Staging(path))
    }
}

impl Staging {
    /// The folder has been put in place: nothing to remove.
    fn keep(mut self) {
        self.0 = std::path::PathBuf::new();
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.0.as_os_str().is_empty() {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

/// A `.tmp-publish-*` path in `parent` that does not exist yet.
fn unique_name(parent: &Path) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = parent.join(format!(
            ".tmp-publish-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        if fs::symlink_metadata(&path).is_err() {
            return path;
        }
    }
}

/// `results/<experiment>` must be a real folder (or absent): a symbolic link would put results
/// wherever it points.
fn refuse_symlink(dir: &Path) -> Result<(), CacheError> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(CacheError::io(
            dir,
            io::Error::other(
                "it is a symbolic link; results are published only into a real folder inside \
                 the results folder (remove the link)",
            ),
        )),
        Ok(meta) if !meta.is_dir() => Err(CacheError::io(
            dir,
            io::Error::other("it is not a folder (remove or rename it)"),
        )),
        _ => Ok(()),
    }
}

/// Puts the folder `new` in the place of `dir`; returns where the old `dir` now is (a
/// `.tmp-*` folder beside it, for the caller to remove), if there was one.
fn replace_dir(new: &Path, dir: &Path) -> Result<Option<std::path::PathBuf>, CacheError> {
    if fs::symlink_metadata(dir).is_err() {
        fs::rename(new, dir).map_err(|e| CacheError::io(dir, e))?;
        return Ok(None);
    }
    if exchange(new, dir) {
        return Ok(Some(new.to_path_buf()));
    }
    // No atomic exchange here: the old folder steps aside, then the new one takes its place.
    let aside = unique_name(dir.parent().unwrap_or(Path::new(".")));
    fs::rename(dir, &aside).map_err(|e| CacheError::io(dir, e))?;
    fs::rename(new, dir).map_err(|e| CacheError::io(dir, e))?;
    Ok(Some(aside))
}

/// Swaps two paths atomically (Linux `renameat2(RENAME_EXCHANGE)`); false where unsupported.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (Ok(a), Ok(b)) = (
        std::ffi::CString::new(a.as_os_str().as_bytes()),
        std::ffi::CString::new(b.as_os_str().as_bytes()),
    ) else {
        return false;
    };
    // SAFETY: two valid NUL-terminated paths; renameat2 only renames.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        ) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> bool {
    false
}

/// Removes what interrupted publishes left in `results`: `.tmp-*` entries in it and in each
/// experiment's folder. Call it holding the results lock. Returns the paths removed.
pub fn sweep(results: &Path) -> Result<Vec<std::path::PathBuf>, CacheError> {
    let mut removed = Vec::new();
    let mut sweep_in = |dir: &Path| -> Result<(), CacheError> {
        for item in fs::read_dir(dir).into_iter().flatten().flatten() {
            if !item.file_name().to_string_lossy().starts_with(".tmp-") {
                continue;
            }
            let path = item.path();
            let gone = match item.file_type() {
                Ok(t) if t.is_dir() => fs::remove_dir_all(&path),
                _ => fs::remove_file(&path),
            };
            match gone {
                Ok(()) => removed.push(path),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(CacheError::io(&path, e)),
            }
        }
        Ok(())
    };
    sweep_in(results)?;
    for item in fs::read_dir(results).into_iter().flatten().flatten() {
        let name = item.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        if item.file_type().is_ok_and(|t| t.is_dir()) {
            sweep_in(&item.path())?;
        }
    }
    Ok(removed)
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
