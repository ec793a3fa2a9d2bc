//! A bundle: several small files of one cache entry stored as one file (`tables.bundle` of a
//! metrics entry holds its small Parquet tables). A cold run of a τ sweep writes one metrics
//! entry per cell; a file per table cost each of them ten file creations, ten hashes at commit
//! and ten opens in the aggregate — most of a small cell's cost. The entry's marker hashes the
//! bundle like any file, so damage to a member is detected (and the entry quarantined) as before.
//!
//! Format (little-endian): the 16-byte magic `SCHEDLAB-BUNDLE1`, the member count (u32), then per
//! member its name's length (u16), the name (UTF-8) and its size (u64), then the members' bytes
//! in the same order. Members keep the order they were added in, so the same members give the
//! same bytes.

use std::path::Path;

use bytes::Bytes;

const MAGIC: &[u8; 16] = b"SCHEDLAB-BUNDLE1";

/// Members gathered in memory, written as one file by [`BundleWriter::write`].
#[derive(Default)]
pub struct BundleWriter {
    members: Vec<(String, Vec<u8>)>,
}

impl BundleWriter {
    /// Adds the member `name` (names are unique: a second `name` is a bug).
    pub fn add(&mut self, name: &str, bytes: Vec<u8>) {
        assert!(
            self.members.iter().all(|(n, _)| n != name),
            "bundle member {name} added twice"
        );
        self.members.push((name.to_string(), bytes));
    }

    /// Writes the bundle to `path` (a new file in an entry's staging directory; the entry
    /// commit is what makes it appear atomically).
    pub fn write(self, path: &Path) -> std::io::Result<()> {
        let index: usize = self.members.iter().map(|(n, _)| 2 + n.len() + 8).sum();
        let body: usize = self.members.iter().map(|(_, b)| b.len()).sum();
        let mut out = Vec::with_capacity(MAGIC.len() + 4 + index + body);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.members.len() as u32).to_le_bytes());
        for (name, bytes) in &self.members {
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        }
        for (_, bytes) in &self.members {
            out.extend_from_slice(bytes);
        }
        std::fs::write(path, out)
    }
}

/// A bundle read into memory; members are slices of it (no copy).
pub struct Bundle {
    members: Vec<(String, Bytes)>,
}

impl Bundle {
    /// Reads and checks the bundle at `path`; errors name the file and what is wrong.
    pub fn read(path: &Path) -> Result<Bundle, String> {
        let data =
            Bytes::from(std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?);
        Self::parse(data).map_err(|why| format!("{}: not a valid bundle: {why}", path.display()))
    }

    fn parse(data: Bytes) -> Result<Bundle, String> {
        let mut at = 0usize;
        let take = |at: &mut usize, n: usize| -> Result<std::ops::Range<usize>, String> {
            let end = at.checked_add(n).filter(|&e| e <= data.len());
            let end = end.ok_or("truncated index")?;
            let range = *at..end;
            *at = end;
            Ok(range)
        };
        if data[take(&mut at, MAGIC.len())?] != MAGIC[..] {
            return Err("bad magic".into());
        }
        let count = u32::from_le_bytes(data[take(&mut at, 4)?].try_into().expect("4 bytes"));
        let mut index = Vec::new();
        for _ in 0..count {
            let len = u16::from_le_bytes(data[take(&mut at, 2)?].try_into().expect("2 bytes"));
            let name = std::str::from_utf8(&data[take(&mut at, len as usize)?])
                .map_err(|_| "a member name is not UTF-8")?
                .to_string();
            let size = u64::from_le_bytes(data[take(&mut at, 8)?].try_into().expect("8 bytes"));
            index.push((name, size));
        }
        let mut members = Vec::with_capacity(index.len());
        for (name, size) in index {
            let size = usize::try_from(size).map_err(|_| "member too large")?;
            let range = take(&mut at, size).map_err(|_| format!("member {name} is truncated"))?;
            members.push((name, data.slice(range)));
        }
        if at != data.len() {
            return Err("bytes after the last member".into());
        }
        Ok(Bundle { members })
    }

    /// The member `name`, if the bundle has one.
    pub fn get(&self, name: &str) -> Option<Bytes> {
        self.members
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.clone())
    }

    /// The members' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(n, _)| n.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_read_back_in_order_with_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bundle");
        let mut w = BundleWriter::default();
        w.add("b.parquet", b"second".to_vec());
        w.add("a.parquet", Vec::new());
        w.add("c", vec![0, 1, 2, 255]);
        w.write(&path).unwrap();
        let b = Bundle::read(&path).unwrap();
        assert_eq!(
            b.names().collect::<Vec<_>>(),
            ["b.parquet", "a.parquet", "c"]
        );
        assert_eq!(b.get("b.parquet").unwrap().as_ref(), b"second");
        assert_eq!(b.get("a.parquet").unwrap().len(), 0);
        assert_eq!(b.get("c").unwrap().as_ref(), &[0, 1, 2, 255]);
        assert!(b.get("d").is_none());
    }

    #[test]
    fn damaged_bundles_are_refused_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bundle");
        let mut w = BundleWriter::default();
        w.add("x", b"0123456789".to_vec());
        w.write(&path).unwrap();
        let whole = std::fs::read(&path).unwrap();
        for (bytes, why) in [
            (whole[..whole.len() - 1].to_vec(), "member x is truncated"),
            (
                [whole.as_slice(), b"!"].concat(),
                "bytes after the last member",
            ),
            (b"SCHEDLAB-BUNDLE2\0\0\0\0".to_vec(), "bad magic"),
            (whole[..18].to_vec(), "truncated index"),
        ] {
            std::fs::write(&path, bytes).unwrap();
            let err = Bundle::read(&path).err().expect("refused");
            assert!(err.contains("t.bundle") && err.contains(why), "{err}");
        }
    }
}
