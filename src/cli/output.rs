//! Where the commands' output files go. Every output option names a file in a folder that
//! exists: a mistyped path is an input error naming the missing folder, found before any work
//! ([`check_folders`]), never a new tree of folders. `-o FILE` of the commands that write SWF
//! text (`export`, `generate`) is a file that appears only when complete (written under a
//! temporary name, then renamed), or standard output for `-o -`, as Unix tools do, so that a
//! schedule can be piped (`schedlab export … -o - | head`).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::CliError;
use crate::store::AtomicFile;

/// Checks, before any work, that the folder of every given output file exists (`-` is standard
/// output). `outputs` pairs each option as the user wrote it (`-o`, `--jobs-out`) with its path.
pub fn check_folders(outputs: &[(&str, Option<&Path>)]) -> Result<(), CliError> {
    for (option, path) in outputs {
        let Some(path) = path.filter(|p| *p != Path::new("-")) else {
            continue;
        };
        let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
            continue;
        };
        let shown = folder.display();
        let problem = match std::fs::metadata(folder) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => format!("{shown} is not a folder"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                format!("the folder {shown} does not exist")
            }
            Err(e) => format!("cannot use the folder {shown}: {e}"),
        };
        return Err(CliError::input(format!(
            "{option} {}: {problem}",
            path.display()
        ))
        .with_hint(format!(
            "schedlab writes files, not folders: create it first (mkdir -p {shown}) or correct the path"
        )));
    }
    Ok(())
}

pub struct TextOutput {
    path: PathBuf,
    file: Option<AtomicFile>,
}

impl TextOutput {
    /// `-` is standard output; anything else a file in an existing folder ([`check_folders`]).
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
