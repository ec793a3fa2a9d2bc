//! The git commit results are produced from, for their metadata: `git rev-parse HEAD` in the
//! manifest's folder, with `-dirty` when tracked files have uncommitted changes. `None` outside
//! a repository or without git. Also the repository's top folder, which recorded paths are
//! relative to.

use std::path::Path;
use std::process::Command;

pub fn commit_of(dir: &Path) -> Option<String> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let head = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    if !head.status.success() {
        return None;
    }
    let commit = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()?;
    let dirty = status.status.success() && !status.stdout.is_empty();
    Some(if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    })
}

/// The top folder of the git work tree holding `dir`, if any.
pub fn toplevel_of(dir: &Path) -> Option<std::path::PathBuf> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().into())
}
