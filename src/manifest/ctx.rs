//! The resolving context every section resolver shares: which file is being resolved (for
//! located errors), its text (for snippets) and its folder (for relative paths), plus the
//! name rules all sections follow. Section resolvers depend on this file, never on each other.

use std::path::{Path, PathBuf};

use serde_saphyr::{Location, Spanned};

use super::error::ManifestError;

/// What resolving needs to know about the file, for paths and messages.
pub struct Ctx<'a> {
    /// The manifest path as given (used in messages).
    pub file: &'a str,
    pub text: &'a str,
    pub base_dir: &'a Path,
}

impl Ctx<'_> {
    pub fn error(&self, path: &str, message: impl Into<String>, loc: &Location) -> ManifestError {
        self.locate(ManifestError::new(self.file, path, message), loc)
    }

    /// The file a manifest value names (relative to the manifest's folder), which must exist:
    /// else `<what> file not found: <path>` at `path`, located at the value.
    pub fn existing_file(
        &self,
        path: &str,
        what: &str,
        file: &Spanned<String>,
    ) -> Result<PathBuf, ManifestError> {
        let full = self.base_dir.join(&file.value);
        if full.is_file() {
            return Ok(full);
        }
        Err(self
            .error(
                path,
                format!("{what} file not found: {}", full.display()),
                &file.referenced,
            )
            .hint("relative paths are relative to the manifest's folder"))
    }

    pub fn locate(&self, err: ManifestError, loc: &Location) -> ManifestError {
        err.at(loc.line(), loc.column()).with_source(self.text)
    }

    /// An error about a mapping key (keys carry no location; find where the key path is
    /// written, in block or flow style, else the first line defining `key`).
    pub fn key_error(&self, path: &str, key: &str, message: impl Into<String>) -> ManifestError {
        let err = ManifestError::new(self.file, path, message);
        if let Some((line, column)) = super::locate::key_path(self.text, path) {
            return err.at(line, column).with_source(self.text);
        }
        for (i, line) in self.text.lines().enumerate() {
            let t = line.trim_start();
            if t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
            {
                let col = line.len() - t.len() + 1;
                return err.at(i as u64 + 1, col as u64).with_source(self.text);
            }
        }
        err
    }
}

/// Names of entries: they appear in cell ids and paths.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

pub fn check_name(ctx: &Ctx<'_>, section: &str, name: &str) -> Result<(), ManifestError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(ctx
            .key_error(
                &format!("{section}.{name}"),
                name,
                format!("`{name}` is not a valid name"),
            )
            .hint("names may use letters, digits, `-` and `_` (they appear in cell ids and paths)"))
    }
}

/// A positive number of seconds.
pub fn positive(ctx: &Ctx<'_>, path: &str, v: &Spanned<i64>) -> Result<i64, ManifestError> {
    if v.value > 0 {
        Ok(v.value)
    } else {
        Err(ctx.error(
            path,
            format!("expected a positive number of seconds, found {}", v.value),
            &v.referenced,
        ))
    }
}
