//! Where `-o FILE` of the commands that write SWF text (`export`, `generate`) goes: a file that
//! appears only when complete (written under a temporary name, then renamed), or standard
//! output for `-o -`, as Unix tools do, so that a schedule can be piped
//! (`schedlab export … -o - | head`).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::CliError;
use crate::store::AtomicFile;

pub struct TextOutput {
    path: PathBuf,
    file: Option<AtomicFile>,
}

impl TextOutput {
    /// `-` is standard output; anything else a file, created with its folders.
    pub fn create(path: &Path) -> Result<TextOutput, CliError> {
        let file = if path == Path::new("-") {
            None
        } else {
            Some(AtomicFile::create(path).map_err(CliError::failed)?)
        };
        Ok(TextOutput {
            path: path.to_path_buf(),
            file,
        })
    }

    /// A buffered writer to the file or to standard output.
    pub fn writer(&self) -> Result<std::io::BufWriter<Box<dyn Write>>, CliError> {
        let inner: Box<dyn Write> = match &self.file {
            Some(file) => Box::new(file.file().map_err(CliError::failed)?),
            None => Box::new(std::io::stdout().lock()),
        };
        Ok(std::io::BufWriter::new(inner))
    }

    /// What the messages call it: the path, or "standard output".
    pub fn name(&self) -> String {
        match self.file {
            Some(_) => self.path.display().to_string(),
            None => "standard output".to_string(),
        }
    }

    /// The error for a failed write, naming the output.
    pub fn write_error(&self, e: std::io::Error) -> CliError {
        CliError::failed(format!("failed to write {}: {e}", self.name()))
    }

    /// Puts the finished file in place (nothing to do for standard output, flushed by the
    /// writer).
    pub fn commit(self) -> Result<(), CliError> {
        match self.file {
            Some(file) => file.commit().map_err(CliError::failed),
            None => Ok(()),
        }
    }
}
