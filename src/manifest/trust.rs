//! What a manifest may make schedlab read (docs/manifest.md, "Trust"). Traces and reservation
//! CSV files are read wherever they are; a report template's text ends up in a report you may
//! share, so it must lie inside the manifest's project — the git work tree that holds the
//! manifest, or the manifest's folder outside a repository — unless the user allows otherwise
//! on the command line (a manifest cannot grant itself that).

use std::path::{Path, PathBuf};

use super::error::ManifestError;
use super::model::Manifest;

/// The folder a manifest's template must lie in: the nearest ancestor of the manifest's
/// folder with a `.git` entry, else that folder. Symbolic links resolved.
pub fn project_root(manifest: &Manifest) -> Option<PathBuf> {
    let dir = manifest
        .path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .canonicalize()
        .ok()?;
    let root = dir
        .ancestors()
        .find(|a| a.join(".git").exists())
        .unwrap_or(&dir);
    Some(root.to_path_buf())
}

/// The HTML report template of `manifest` (`reports.template`), checked: it must exist and,
/// unless `allow_outside`, lie inside the project (after following symbolic links).
pub fn template(
    manifest: &Manifest,
    allow_outside: bool,
) -> Result<Option<PathBuf>, ManifestError> {
    checked(
        manifest,
        "reports.template",
        manifest.report.template.as_deref(),
        allow_outside,
    )
}

/// The Markdown report template of `manifest` (`reports.markdown_template`), checked as
/// [`template`] is.
pub fn markdown_template(
    manifest: &Manifest,
    allow_outside: bool,
) -> Result<Option<PathBuf>, ManifestError> {
    checked(
        manifest,
        "reports.markdown_template",
        manifest.report.markdown_template.as_deref(),
        allow_outside,
    )
}

/// A template named at `key`, checked.
fn checked(
    manifest: &Manifest,
    key: &str,
    path: Option<&Path>,
    allow_outside: bool,
) -> Result<Option<PathBuf>, ManifestError> {
    let Some(path) = path else {
        return Ok(None);
    };
    let error = |message: String| {
        let err = ManifestError::new(&manifest.path.display().to_string(), key, message);
        match super::locate::key_path(&manifest.text, key) {
            Some((line, column)) => err.at(line, column).with_source(&manifest.text),
            None => err,
        }
    };
    let real = path
        .canonicalize()
        .map_err(|e| error(format!("cannot read the template {}: {e}", path.display())))?;
    if allow_outside {
        return Ok(Some(real));
    }
    let root = project_root(manifest).unwrap_or_default();
    if real.starts_with(&root) {
        return Ok(Some(real));
    }
    Err(error(format!(
        "the template {} is outside the project ({}); a manifest may only use templates inside it",
        real.display(),
        root.display()
    ))
    .hint("move the template into the project, or, if you trust this manifest, pass --allow-template-outside-project to `schedlab report`"))
}
