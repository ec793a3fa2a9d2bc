//! A file that appears at its path only when complete: written to a temporary file in the same
//! directory, then renamed into place. Dropped before [`AtomicFile::commit`], it leaves nothing.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::StoreError;

pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl AtomicFile {
    pub fn create(path: &Path) -> Result<AtomicFile, StoreError> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let io = |source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let tmp = readable_temp().tempfile_in(dir).map_err(io)?;
        Ok(AtomicFile {
            tmp,
            path: path.to_path_buf(),
        })
    }

    pub fn file(&self) -> Result<File, StoreError> {
        self.tmp.reopen().map_err(|source| StoreError::Io {
            path: self.path.clone(),
            source,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn commit(self) -> Result<(), StoreError> {
        let path = self.path;
        self.tmp.persist(&path).map_err(|e| StoreError::Io {
            path: path.clone(),
            source: e.error,
        })?;
        Ok(())
    }
}

/// A temporary-file builder whose files get the mode any new file would: `0o666` less the
/// process's umask (temporary files are otherwise owner-only), so a colleague in the group reads
/// results when the umask lets them, and nobody does when it does not.
pub fn readable_temp() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder
}
