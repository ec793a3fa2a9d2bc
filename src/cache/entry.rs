//! Content-addressed node entries: a directory per key holding the node's files and, written
//! last, `entry.json` listing each file with its size and blake3 hash.
//!
//! An entry is staged in `tmp/` and renamed into place in one step, so a reader never sees a
//! half-written entry; a crash leaves only staging debris, swept by the next writer. Reading
//! verifies every listed file against the marker. An entry found damaged — a file changed or
//! missing, an unreadable marker, a directory without its marker — is moved to `quarantine/`
//! (with a `reason.txt`), so the next writer recomputes it and `gc` removes it. Every executor
//! uses this one format: stage with [`EntryStore::begin`], commit, read with
//! [`EntryStore::open_or_quarantine`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::CacheError;

const MARKER: &str = "entry.json";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Marker {
    key: String,
    files: BTreeMap<String, FileDigest>,
}

/// A file's size and content hash, as an entry's marker records it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileDigest {
    pub bytes: u64,
    pub blake3: String,
}

#[derive(Clone, Debug)]
pub struct EntryStore {
    entries: PathBuf,
    tmp: PathBuf,
    quarantine: PathBuf,
}

/// What [`EntryStore::open_or_quarantine`] found.
#[derive(Debug)]
pub enum Opened {
    /// A complete entry whose files match their recorded hashes.
    Valid(PathBuf),
    /// No entry (or only a directory without marker, now quarantined: see `damage`).
    Absent,
    /// The entry was damaged and has been moved to `to`; it must be recomputed.
    Quarantined { why: String, to: PathBuf },
}

impl EntryStore {
    pub fn new(state_dir: &Path) -> Self {
        EntryStore {
            entries: state_dir.join("entries"),
            tmp: state_dir.join("tmp"),
            quarantine: state_dir.join("quarantine"),
        }
    }

    /// A store that stages new entries in `staging` instead of `tmp/`: a Slurm worker's own
    /// directory, which the sweep of `tmp/` by a later run never touches. `staging` must be on
    /// the file system of `state_dir` (entries are renamed into place).
    pub fn with_staging(state_dir: &Path, staging: &Path) -> Self {
        EntryStore {
            entries: state_dir.join("entries"),
            tmp: staging.to_path_buf(),
            quarantine: state_dir.join("quarantine"),
        }
    }

    /// Where the entry for `key` lives once complete.
    pub fn dir(&self, key: &str) -> PathBuf {
        self.entries.join(&key[..2.min(key.len())]).join(key)
    }

    /// True when a complete entry exists (its marker is there). Cheap: one `stat`.
    pub fn contains(&self, key: &str) -> bool {
        self.dir(key).join(MARKER).is_file()
    }

    /// Which of `keys` have a complete entry. For many keys, one listing of the entries
    /// directory replaces a `stat` per key (a grid of a million cells plans in seconds).
    pub fn contains_each<'k>(&self, keys: impl ExactSizeIterator<Item = &'k str>) -> Vec<bool> {
        if !self.entries.is_dir() {
            return vec![false; keys.len()];
        }
        if keys.len() < 1024 {
            return keys.map(|k| self.contains(k)).collect();
        }
        let mut present = std::collections::HashSet::new();
        for shard in fs::read_dir(&self.entries).into_iter().flatten().flatten() {
            for entry in fs::read_dir(shard.path()).into_iter().flatten().flatten() {
                present.insert(entry.file_name().to_string_lossy().into_owned());
            }
        }
        keys.map(|k| present.contains(k) && self.contains(k))
            .collect()
    }

    /// Every complete entry's key.
    pub fn keys(&self) -> Result<Vec<String>, CacheError> {
        let mut keys = Vec::new();
        let Ok(shards) = fs::read_dir(&self.entries) else {
            return Ok(keys);
        };
        for shard in shards.flatten() {
            let Ok(entries) = fs::read_dir(shard.path()) else {
                continue;
            };
            for entry in entries.flatten() {
                if entry.path().join(MARKER).is_file() {
                    keys.push(entry.file_name().to_string_lossy().into_owned());
                }
            }
        }
        keys.sort();
        Ok(keys)
    }

    /// Verifies the entry for `key` and returns its directory.
    pub fn open(&self, key: &str) -> Result<PathBuf, CacheError> {
        let dir = self.dir(key);
        let marker_path = dir.join(MARKER);
        let text = fs::read_to_string(&marker_path).map_err(|e| CacheError::io(&marker_path, e))?;
        let corrupt = |why: String| CacheError::Corrupt {
            path: dir.clone(),
            why,
        };
        let marker: Marker = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
        if marker.key != key {
            return Err(corrupt(format!("marker names key {}", marker.key)));
        }
        for (name, want) in &marker.files {
            // What we wrote is a regular file: anything else (a directory, a FIFO, a socket, a
            // symbolic link) put in its place is damage. Checked on the name itself, before
            // anything opens it: reading a FIFO would block forever.
            match fs::symlink_metadata(dir.join(name)) {
                Ok(meta) if !meta.file_type().is_file() => {
                    return Err(corrupt(format!(
                        "{name} is {}, not the file that was written",
                        file_kind(&meta.file_type())
                    )));
                }
                _ => {}
            }
            let got = match digest_file(&dir.join(name)) {
                Ok(got) => got,
                Err(CacheError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    return Err(corrupt(format!("{name} is missing")));
                }
                Err(e) => return Err(e),
            };
            if &got != want {
                return Err(corrupt(format!("{name} does not match its recorded hash")));
            }
        }
        Ok(dir)
    }

    /// The files of the entry for `key` with their recorded sizes and hashes (not verified).
    pub fn recorded_files(&self, key: &str) -> Result<BTreeMap<String, FileDigest>, CacheError> {
        let dir = self.dir(key);
        let marker_path = dir.join(MARKER);
        let text = fs::read_to_string(&marker_path).map_err(|e| CacheError::io(&marker_path, e))?;
        let marker: Marker = serde_json::from_str(&text).map_err(|e| CacheError::Corrupt {
            path: dir.clone(),
            why: e.to_string(),
        })?;
        Ok(marker.files)
    }

    /// True when a directory for `key` exists without its marker: a half-present entry (the
    /// marker was deleted, or the directory was made by hand).
    pub fn is_partial(&self, key: &str) -> bool {
        let dir = self.dir(key);
        dir.exists() && !dir.join(MARKER).is_file()
    }

    /// Verifies the entry for `key`; a damaged or half-present one is moved to quarantine and
    /// reported, so that the caller recomputes it. Errors only when the file system fails.
    pub fn open_or_quarantine(&self, key: &str) -> Result<Opened, CacheError> {
        if self.is_partial(key) {
            let why = format!("{MARKER} is missing");
            let to = self.quarantine(key, &why)?;
            return Ok(Opened::Quarantined { why, to });
        }
        if !self.contains(key) {
            return Ok(Opened::Absent);
        }
        match self.open(key) {
            Ok(dir) => Ok(Opened::Valid(dir)),
            Err(CacheError::Corrupt { why, .. }) => {
                let to = self.quarantine(key, &why)?;
                Ok(Opened::Quarantined { why, to })
            }
            // A marker that vanished between the checks: absent.
            Err(CacheError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Ok(Opened::Absent)
            }
            Err(e) => Err(e),
        }
    }

    /// Moves the entry directory of `key` to `quarantine/<key>.<n>/`, with a `reason.txt`
    /// saying why; returns where it went.
    pub fn quarantine(&self, key: &str, why: &str) -> Result<PathBuf, CacheError> {
        fs::create_dir_all(&self.quarantine).map_err(|e| CacheError::io(&self.quarantine, e))?;
        let holder = tempfile::Builder::new()
            .prefix(&format!("{key}."))
            .tempdir_in(&self.quarantine)
            .map_err(|e| CacheError::io(&self.quarantine, e))?
            .keep();
        let to = holder.join("entry");
        let from = self.dir(key);
        fs::rename(&from, &to).map_err(|e| CacheError::io(&from, e))?;
        let reason = holder.join("reason.txt");
        fs::write(&reason, format!("{why}\n")).map_err(|e| CacheError::io(&reason, e))?;
        Ok(holder)
    }

    /// The quarantined entries (each a directory holding `entry/` and `reason.txt`).
    pub fn quarantined(&self) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = fs::read_dir(&self.quarantine)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        found.sort();
        found
    }

    /// Entry directories without a marker (half-present): their keys.
    pub fn partial_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        for shard in fs::read_dir(&self.entries).into_iter().flatten().flatten() {
            for entry in fs::read_dir(shard.path()).into_iter().flatten().flatten() {
                if !entry.path().join(MARKER).is_file() {
                    keys.push(entry.file_name().to_string_lossy().into_owned());
                }
            }
        }
        keys.sort();
        keys
    }

    /// Removes the entry for `key`, if any.
    pub fn remove(&self, key: &str) -> Result<(), CacheError> {
        let dir = self.dir(key);
        match fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(CacheError::io(&dir, e)),
        }
    }

    /// Starts writing the entry for `key` in a fresh staging directory.
    pub fn begin(&self, key: &str) -> Result<EntryWriter, CacheError> {
        fs::create_dir_all(&self.tmp).map_err(|e| CacheError::io(&self.tmp, e))?;
        let staging = tempfile::Builder::new()
            .prefix(&format!("{key}."))
            .tempdir_in(&self.tmp)
            .map_err(|e| CacheError::io(&self.tmp, e))?;
        Ok(EntryWriter {
            key: key.to_string(),
            staging,
            target: self.dir(key),
            store: self.clone(),
        })
    }

    /// Removes staging directories left by crashed writers. Call only while holding the lock.
    ///
    /// The staging area is renamed away before it is removed: a run being stopped may still
    /// have a simulation writing into its entry's staging directory, and once the area is gone
    /// from its path nothing can be created under it, so the removal cannot race with such a
    /// writer (removing in place could meet a file created meanwhile and leave the area
    /// behind). An area renamed by an earlier sweep that could not finish is removed too.
    pub fn sweep_staging(&self) -> Result<(), CacheError> {
        self.rename_staging_away(0)?;
        self.remove_swept()
    }

    /// [`Self::sweep_staging`] for a run that is being stopped, with an empty file left where
    /// the staging area was: a simulation still winding down in another thread creates its next
    /// file with `create_dir_all`, which would bring its staging directory back under a new
    /// `tmp/`; with a file in the way it fails instead, and the stopped run leaves no staging
    /// directory behind. The next run's sweep removes the file.
    ///
    /// The fence goes up as soon as the area is renamed away, before the removal, and a writer
    /// that brought `tmp/` back in between (CI saw one under load: the fence then met a
    /// directory) has that area renamed away in turn until the fence holds.
    pub fn sweep_staging_and_fence(&self) -> Result<(), CacheError> {
        const ATTEMPTS: u32 = 64;
        for round in 0..ATTEMPTS {
            self.rename_staging_away(round)?;
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&self.tmp)
            {
                Ok(_) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && self.tmp.is_dir() => {}
                // A fence already (an earlier stop's): the area is fenced.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => break,
                Err(e) => return Err(CacheError::io(&self.tmp, e)),
            }
        }
        self.remove_swept()
    }

    /// Renames the staging directory (if any) out of the way, to a name of this process and
    /// `round` (each round of one sweep its own name: a name already taken would refuse it).
    fn rename_staging_away(&self, round: u32) -> Result<(), CacheError> {
        // A stopped run's fence (a file) is renamed away too, for `remove_swept` to remove.
        let swept = self.swept_name(std::process::id(), round);
        match fs::rename(&self.tmp, &swept) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(CacheError::io(&self.tmp, e)),
        }
    }

    /// Removes every area a sweep renamed away (this one's and any an earlier sweep could not
    /// finish), and the fences of stopped runs.
    fn remove_swept(&self) -> Result<(), CacheError> {
        let (Some(parent), Some(prefix)) = (self.tmp.parent(), self.swept_prefix()) else {
            return Ok(());
        };
        let Ok(siblings) = fs::read_dir(parent) else {
            return Ok(());
        };
        for sibling in siblings.flatten() {
            if sibling.file_name().to_string_lossy().starts_with(&prefix) {
                let path = sibling.path();
                // The fence a stopped run leaves (`sweep_staging_and_fence`) is a file.
                let removed = match sibling.file_type() {
                    Ok(t) if !t.is_dir() => fs::remove_file(&path),
                    _ => fs::remove_dir_all(&path),
                };
                match removed {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(CacheError::io(&path, e)),
                }
            }
        }
        Ok(())
    }

    /// `tmp.swept-`: the prefix of staging areas renamed away to be removed.
    fn swept_prefix(&self) -> Option<String> {
        Some(format!(
            "{}.swept-",
            self.tmp.file_name()?.to_string_lossy()
        ))
    }

    fn swept_name(&self, pid: u32, round: u32) -> PathBuf {
        let prefix = self
            .swept_prefix()
            .unwrap_or_else(|| "tmp.swept-".to_string());
        self.tmp.with_file_name(format!("{prefix}{pid}-{round}"))
    }
}

/// An entry being written. Dropped without [`EntryWriter::commit`], it leaves nothing behind.
pub struct EntryWriter {
    key: String,
    staging: tempfile::TempDir,
    target: PathBuf,
    store: EntryStore,
}

impl EntryWriter {
    /// The path at which to write the file `name` of this entry.
    pub fn path(&self, name: &str) -> PathBuf {
        self.staging.path().join(name)
    }

    /// Writes the marker last, then moves the entry into place.
    pub fn commit(self) -> Result<PathBuf, CacheError> {
        let dir = self.staging.path();
        let mut files = BTreeMap::new();
        for item in fs::read_dir(dir).map_err(|e| CacheError::io(dir, e))? {
            let item = item.map_err(|e| CacheError::io(dir, e))?;
            let name = item.file_name().to_string_lossy().into_owned();
            files.insert(name, digest_file(&item.path())?);
        }
        let marker = Marker {
            key: self.key.clone(),
            files,
        };
        let marker_path = dir.join(MARKER);
        let text = serde_json::to_string_pretty(&marker).expect("marker serializes");
        fs::write(&marker_path, text).map_err(|e| CacheError::io(&marker_path, e))?;
        let parent = self.target.parent().expect("entry has a shard directory");
        fs::create_dir_all(parent).map_err(|e| CacheError::io(parent, e))?;
        // A half-present entry in the way (no marker) would make the rename fail forever.
        if self.store.is_partial(&self.key) {
            self.store
                .quarantine(&self.key, &format!("{MARKER} is missing"))?;
        }
        let staged = self.staging.keep();
        match fs::rename(&staged, &self.target) {
            Ok(()) => Ok(self.target),
            // Another writer finished the same key first: same key, same content; keep theirs.
            Err(_) if self.target.join(MARKER).is_file() => {
                let _ = fs::remove_dir_all(&staged);
                Ok(self.target)
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&staged);
                Err(CacheError::io(&self.target, e))
            }
        }
    }
}

/// What a directory entry that is not a regular file is, for messages.
fn file_kind(t: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Files up to this size are hashed from one read into memory: blake3's reader zeroes a 64 KiB
/// buffer per call, more work than hashing a metrics entry's small files. Larger files go
/// through the reader (bounded memory).
const DIGEST_READ_WHOLE: u64 = 1 << 20;

fn digest_file(path: &Path) -> Result<FileDigest, CacheError> {
    let mut hasher = blake3::Hasher::new();
    let bytes = fs::metadata(path)
        .map_err(|e| CacheError::io(path, e))?
        .len();
    if bytes <= DIGEST_READ_WHOLE {
        hasher.update(&fs::read(path).map_err(|e| CacheError::io(path, e))?);
    } else {
        let file = fs::File::open(path).map_err(|e| CacheError::io(path, e))?;
        hasher
            .update_reader(file)
            .map_err(|e| CacheError::io(path, e))?;
    }
    Ok(FileDigest {
        bytes,
        blake3: hasher.finalize().to_hex().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_entries_verify_and_tampering_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let store = EntryStore::new(dir.path());
        let key = "abcdef0123";
        assert!(!store.contains(key));
        let w = store.begin(key).unwrap();
        fs::write(w.path("a.txt"), "hello").unwrap();
        w.commit().unwrap();
        assert!(store.contains(key));
        assert_eq!(store.keys().unwrap(), vec![key.to_string()]);
        let entry = store.open(key).unwrap();
        fs::write(entry.join("a.txt"), "HELLO").unwrap();
        assert!(matches!(store.open(key), Err(CacheError::Corrupt { .. })));
    }

    #[test]
    fn an_uncommitted_writer_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = EntryStore::new(dir.path());
        let w = store.begin("k1").unwrap();
        fs::write(w.path("a.txt"), "x").unwrap();
        drop(w);
        assert!(!store.contains("k1"));
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    }

    /// A sweep while a writer is still at work (a run being stopped): the staging area is gone
    /// at once, the writer can create nothing more under it, and an area an earlier sweep
    /// renamed but could not remove goes too. Nothing else in the state directory is touched.
    #[test]
    fn a_sweep_leaves_no_staging_area_even_with_a_writer_at_work() {
        let dir = tempfile::tempdir().unwrap();
        let store = EntryStore::new(dir.path());
        let w = store.begin("k1").unwrap();
        fs::write(w.path("a.txt"), "x").unwrap();
        let earlier = store.swept_name(1, 0);
        fs::create_dir_all(earlier.join("k0.abc")).unwrap();
        fs::write(earlier.join("k0.abc").join("b.txt"), "y").unwrap();
        fs::write(dir.path().join("tmp-note"), "kept").unwrap();
        store.sweep_staging().unwrap();
        assert!(!dir.path().join("tmp").exists());
        assert!(!earlier.exists());
        assert!(
            fs::write(w.path("later.txt"), "z").is_err(),
            "nothing can be created in a swept staging area"
        );
        assert!(!dir.path().join("tmp").exists());
        assert!(dir.path().join("tmp-note").exists());
        drop(w);
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.iter().all(|n| !n.contains("swept")), "{left:?}");
    }

    /// A writer that keeps bringing the staging area back while a stopped run sweeps it (a
    /// simulation winding down makes its folders with `create_dir_all`): whenever the sweep
    /// returns, the fence is in place and no staging directory is left, however the two
    /// interleave (CI saw the directory come back between the sweep and the fence).
    #[test]
    fn the_fence_holds_against_a_writer_that_recreates_the_area() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        for _ in 0..50 {
            let dir = tempfile::tempdir().unwrap();
            let store = EntryStore::new(dir.path());
            let staging = dir.path().join("tmp").join("k1.abc");
            fs::create_dir_all(&staging).unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let writer = {
                let (stop, staging) = (Arc::clone(&stop), staging.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        let _ = fs::create_dir_all(&staging);
                    }
                })
            };
            store.sweep_staging_and_fence().unwrap();
            assert!(dir.path().join("tmp").is_file(), "the fence");
            stop.store(true, Ordering::SeqCst);
            writer.join().unwrap();
            assert!(dir.path().join("tmp").is_file(), "the fence still");
            let left: Vec<_> = fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(left, ["tmp"], "only the fence is left");
        }
    }

    /// A stopped run fences its swept staging area: a writer still at work that creates its
    /// next file as result files are created (`AtomicFile`, which makes missing folders) cannot
    /// bring a staging directory back (CI saw one left by `tests/hardening.rs`'s interrupt test),
    /// and the next run's sweep removes the fence and works as before.
    #[test]
    fn a_stopped_run_fences_its_staging_area_and_the_next_run_removes_the_fence() {
        let dir = tempfile::tempdir().unwrap();
        let store = EntryStore::new(dir.path());
        let w = store.begin("k1").unwrap();
        let before = w.path("jobs.parquet");
        store.sweep_staging_and_fence().unwrap();
        assert!(crate::store::AtomicFile::create(&before).is_err());
        assert!(dir.path().join("tmp").is_file(), "the fence");
        drop(w);
        store.sweep_staging().unwrap();
        assert!(!dir.path().join("tmp").exists());
        let w = store.begin("k2").unwrap();
        fs::write(w.path("a.txt"), "x").unwrap();
        w.commit().unwrap();
        assert!(store.contains("k2"));
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.iter().all(|n| !n.contains("swept")), "{left:?}");
    }
}
