//! Content hashes of input files, with a stat cache: a file whose size, modification time and
//! inode are unchanged since it was last hashed is not read again, so a large unchanged trace
//! costs one `stat` per run. Keys hold the content hash, never the path.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::CacheError;

/// What a node key records of an input file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Digest {
    pub blake3: String,
    pub bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    bytes: u64,
    mtime_ns: i128,
    inode: u64,
    blake3: String,
}

/// The stat cache, loaded from and saved to `digests.json` in the state directory.
#[derive(Debug, Default)]
pub struct DigestCache {
    path: Option<PathBuf>,
    stamps: BTreeMap<String, Stamp>,
    dirty: bool,
}

impl DigestCache {
    /// Loads the cache kept in `state_dir` (an unreadable or corrupt one starts empty).
    pub fn load(state_dir: &Path) -> Self {
        let path = state_dir.join("digests.json");
        let stamps = fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        DigestCache {
            path: Some(path),
            stamps,
            dirty: false,
        }
    }

    /// A cache that is never saved.
    pub fn in_memory() -> Self {
        DigestCache::default()
    }

    /// The digest of `path`, hashing it only when its stamp changed.
    pub fn digest(&mut self, path: &Path) -> Result<Digest, CacheError> {
        let meta = fs::metadata(path).map_err(|e| CacheError::io(path, e))?;
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        let inode = inode(&meta);
        let name = path.to_string_lossy().into_owned();
        if let Some(s) = self.stamps.get(&name)
            && s.bytes == meta.len()
            && s.mtime_ns == mtime_ns
            && s.inode == inode
        {
            return Ok(Digest {
                blake3: s.blake3.clone(),
                bytes: s.bytes,
            });
        }
        let file = fs::File::open(path).map_err(|e| CacheError::io(path, e))?;
        let mut hasher = blake3::Hasher::new();
        hasher
            .update_reader(file)
            .map_err(|e| CacheError::io(path, e))?;
        let blake3 = hasher.finalize().to_hex().to_string();
        let stamp = Stamp {
            bytes: meta.len(),
            mtime_ns,
            inode,
            blake3: blake3.clone(),
        };
        self.stamps.insert(name, stamp);
        self.dirty = true;
        Ok(Digest {
            blake3,
            bytes: meta.len(),
        })
    }

    /// Saves the cache if it changed (atomically: temp file + rename).
    pub fn save(&mut self) -> Result<(), CacheError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if !self.dirty {
            return Ok(());
        }
        let dir = path.parent().expect("digests.json has a parent");
        fs::create_dir_all(dir).map_err(|e| CacheError::io(dir, e))?;
        let text = serde_json::to_string_pretty(&self.stamps).expect("stamps serialize");
        write_atomic(path, text.as_bytes())?;
        self.dirty = false;
        Ok(())
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

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CacheError> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = crate::store::readable_temp()
        .tempfile_in(dir)
        .map_err(|e| CacheError::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| CacheError::io(path, e))?;
    tmp.persist(path)
        .map_err(|e| CacheError::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_files_are_not_rehashed_and_changes_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.swf");
        fs::write(&file, "1 0 -1 10 1").unwrap();
        let mut cache = DigestCache::load(dir.path());
        let a = cache.digest(&file).unwrap();
        cache.save().unwrap();
        let mut reloaded = DigestCache::load(dir.path());
        assert_eq!(reloaded.digest(&file).unwrap(), a);
        assert!(!reloaded.dirty, "a stat hit does not rehash");
        fs::write(&file, "1 0 -1 20 1 more").unwrap();
        let b = reloaded.digest(&file).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            b.blake3,
            blake3::hash(b"1 0 -1 20 1 more").to_hex().to_string()
        );
    }
}
