//! Content hashes of input files, with a stat cache: a file whose size, modification time,
//! inode, device and status-change time (ctime) are unchanged since it was last hashed is not
//! read again, so a large unchanged trace costs one `stat` per run. The ctime is what a user
//! cannot set: a file edited in place with its size and modification time restored (`cp -p`,
//! `rsync -t`, `tar`, `unzip`) has a new one. A stamp taken less than [`RACY_NS`] after the
//! file last changed is not trusted (the file may have changed again within the clock's
//! resolution), so the next run hashes it again. Keys hold the content hash, never the path
//! (docs/cache.md, "What the stat cache trusts").

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
    /// Absent in stamps of earlier versions: 0, which matches no file, so they are re-hashed.
    #[serde(default)]
    device: u64,
    #[serde(default)]
    ctime_ns: i128,
    /// Whether the stamp may be trusted: false when the file changed less than [`RACY_NS`]
    /// before it was hashed.
    #[serde(default)]
    settled: bool,
    blake3: String,
}

/// How long before hashing a file must have last changed for its stamp to be trusted.
pub const RACY_NS: i128 = 2_000_000_000;

/// The stat fields a stamp compares: size, mtime, inode, device, ctime.
fn stat_of(meta: &fs::Metadata) -> (u64, i128, u64, u64, i128) {
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    #[cfg(unix)]
    let (inode, device, ctime_ns) = {
        use std::os::unix::fs::MetadataExt;
        (
            meta.ino(),
            meta.dev(),
            i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        )
    };
    #[cfg(not(unix))]
    let (inode, device, ctime_ns) = (0, 0, 0);
    (meta.len(), mtime_ns, inode, device, ctime_ns)
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
        let (bytes, mtime_ns, inode, device, ctime_ns) = stat_of(&meta);
        let name = path.to_string_lossy().into_owned();
        if let Some(s) = self.stamps.get(&name)
            && s.settled
            && (s.bytes, s.mtime_ns, s.inode, s.device, s.ctime_ns)
                == (bytes, mtime_ns, inode, device, ctime_ns)
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
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        let stamp = Stamp {
            bytes,
            mtime_ns,
            inode,
            device,
            ctime_ns,
            settled: now_ns - mtime_ns.max(ctime_ns) >= RACY_NS,
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
        assert!(
            reloaded.dirty,
            "a file changed just before it was hashed is hashed again"
        );
        // A file that changed long enough before it was hashed is trusted (one `stat`).
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
        let mut settled = DigestCache::in_memory();
        settled.digest(&file).unwrap();
        let stamp = settled.stamps.values().next().unwrap().clone();
        // ctime was just changed by set_modified: only a stamp taken 2 s later settles.
        assert!(!stamp.settled);
        let mut later = stamp;
        later.settled = true;
        settled
            .stamps
            .insert(file.to_string_lossy().into_owned(), later);
        settled.dirty = false;
        assert_eq!(settled.digest(&file).unwrap(), a);
        assert!(!settled.dirty, "a settled stamp's file is not hashed again");
        fs::write(&file, "1 0 -1 20 1 more").unwrap();
        let b = reloaded.digest(&file).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            b.blake3,
            blake3::hash(b"1 0 -1 20 1 more").to_hex().to_string()
        );
    }
}
