//! Content-addressed node entries: a directory per key holding the node's files and, written
//! last, `entry.json` listing each file with its size and blake3 hash.
//!
//! An entry is staged in `tmp/` and renamed into place in one step, so a reader never sees a
//! half-written entry; a crash leaves only staging debris, swept by the next writer. Reading
//! verifies every listed file against the marker; a corrupt entry counts as absent.

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

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
struct FileDigest {
    bytes: u64,
    blake3: String,
}

#[derive(Clone, Debug)]
pub struct EntryStore {
    entries: PathBuf,
    tmp: PathBuf,
}

impl EntryStore {
    pub fn new(state_dir: &Path) -> Self {
        EntryStore {
            entries: state_dir.join("entries"),
            tmp: state_dir.join("tmp"),
        }
    }

    /// A store that stages new entries in `staging` instead of `tmp/`: a Slurm worker's own
    /// directory, which the sweep of `tmp/` by a later run never touches. `staging` must be on
    /// the file system of `state_dir` (entries are renamed into place).
    pub fn with_staging(state_dir: &Path, staging: &Path) -> Self {
        EntryStore {
            entries: state_dir.join("entries"),
            tmp: staging.to_path_buf(),
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
            let got = digest_file(&dir.join(name))?;
            if &got != want {
                return Err(corrupt(format!("{name} does not match its recorded hash")));
            }
        }
        Ok(dir)
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
        })
    }

    /// Removes staging directories left by crashed writers. Call only while holding the lock.
    pub fn sweep_staging(&self) -> Result<(), CacheError> {
        match fs::remove_dir_all(&self.tmp) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(CacheError::io(&self.tmp, e)),
        }
    }
}

/// An entry being written. Dropped without [`EntryWriter::commit`], it leaves nothing behind.
pub struct EntryWriter {
    key: String,
    staging: tempfile::TempDir,
    target: PathBuf,
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

fn digest_file(path: &Path) -> Result<FileDigest, CacheError> {
    let mut hasher = blake3::Hasher::new();
    let file = fs::File::open(path).map_err(|e| CacheError::io(path, e))?;
    hasher
        .update_reader(file)
        .map_err(|e| CacheError::io(path, e))?;
    let bytes = fs::metadata(path)
        .map_err(|e| CacheError::io(path, e))?
        .len();
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
}
